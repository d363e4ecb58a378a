// test_edit.js: the Edit mode's browser test (docs/DEBUGGER.md, "Editing").
// Starts tests/live/edit_game.lua on a copy of tests/live/trees/guard.lua
// in a temporary folder it watches, opens the page the game prints in
// Debian's Chromium (headless, playwright-core) and edits the running
// tree as a user would: a refused edit (its place shown, nothing changed),
// a guard condition inserted, a parameter changed, a branch moved, a
// preview, apply to the selected agent only (the others held on their
// version, a guard the page was never offered too: the population view
// shows both versions), apply to all; then checks from the game's side (its answers on
// its standard output) that the agents switched at their next tick with
// their running nodes kept (walk and strike not entered again), saves and
// checks the file on disk against the expected text and that the game's
// own watcher did not apply it a second time, undoes, and rolls back.
// Everything waits on conditions (the game's answers, the page's DOM),
// never on time; the game picks a free port. Screenshots of each step go
// to BUILDDIR/browser-screenshots/edit-*.png (docs/DEBUGGER.md shows them,
// copied to docs/).
//
//   node test_edit.js BUILDDIR      (default: ../../build)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const assert = require('assert/strict');
const { chromium } = require('playwright-core');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '../..');
const BUILD = path.resolve(process.argv[2] || path.join(ROOT, 'build'));
const OUT = path.join(BUILD, 'browser-screenshots');
const LUA_ENV = Object.assign({}, process.env, {
  LUA_PATH: ROOT + '/lua/?.lua;' + ROOT + '/lua/?/init.lua;;',
  LUA_CPATH: BUILD + '/src/?.so;;',
});
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// Waits for fn() to return something true (the deadline is only there in
// case it never does: generous, so that a busy machine does not fail it).
async function until(what, fn, ms) {
  const end = Date.now() + (ms || 60000);
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out waiting for ' + what);
}

function startGame(dir) {
  return new Promise((resolve, reject) => {
    const child = spawn('lua5.4', [path.join(ROOT, 'tests/live/edit_game.lua'), dir, '--stdin'],
      { env: LUA_ENV, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const game = { child, out: '', err: '', url: null };
    child.stderr.on('data', (d) => { game.err += d; });
    child.stdout.on('data', (d) => {
      game.out += d;
      const m = game.out.match(/live: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/);
      if (m && !game.url) {
        game.url = m[1];
        resolve(game);
      }
    });
    child.on('exit', (code) => reject(new Error('edit_game.lua exited (' + code + '): ' + game.err)));
  });
}

// The game's state, asked on its input after it ran n more frames (so the
// agents ticked since whatever the page did was answered).
async function stateAfter(game, n) {
  let from = game.out.length;
  game.child.stdin.write('frames ' + n + '\n');
  await until('the game ran ' + n + ' frames', () => game.out.slice(from).includes('done frames ' + n + '\n'));
  from = game.out.length;
  game.child.stdin.write('state\n');
  const line = await until('the game\'s state', () => {
    const l = game.out.slice(from).split('\n').find((x) => x.startsWith('{'));
    return l && game.out.slice(from).includes(l + '\n') ? l : null;
  });
  return JSON.parse(line);
}

let checks = 0;
async function check(name, fn) {
  const t0 = Date.now();
  await fn();
  checks++;
  console.log('ok ' + checks + ' - ' + name + ' (' + (Date.now() - t0) + ' ms)');
}

// The outline's rows as "depth:label".
function outline(page) {
  return page.$$eval('#edit-tree li', (l) => l.map((li) =>
    (parseInt(li.style.paddingLeft, 10) - 4) / 18 + ':' + li.querySelector('.label').textContent));
}

async function select(page, p) {
  await page.click('#edit-tree li[data-path="' + p + '"]');
  await page.waitForSelector('#edit-tree li.sel[data-path="' + p + '"]');
}

// Waits until the draft reaches version v (each accepted change is one).
async function draft(page, v) {
  await page.waitForFunction((x) => document.body.dataset.editVersion === String(x), v);
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-edit-'));
  const file = path.join(dir, 'guard.lua');
  fs.copyFileSync(path.join(ROOT, 'tests/live/trees/guard.lua'), file);
  const game = await startGame(dir);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 860 },
  });
  const shot = (page, name) => page.screenshot({ path: path.join(OUT, 'edit-' + name + '.png') });
  try {
    const page = context.pages()[0] || await context.newPage();
    page.setDefaultTimeout(60000); // (a deadline for what never comes, not a wait)
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    let before;

    await check('Edit mode opens on the selected agent\'s tree', async () => {
      await page.goto(game.url);
      await page.waitForSelector('body.loaded #agent-list li');
      await page.click('#agent-list li >> text=guard 3');
      await page.click('#mode-edit');
      await page.waitForSelector('#edit-tree li[data-path="guard/patrol/walk"]');
      assert.deepEqual(await outline(page), ['0:guard', '1:chase', '2:is_set[1]', '2:strike',
        '1:patrol', '2:look', '2:walk']);
      assert.match(await page.textContent('#edit-file'), /guard\.lua \(lua\)$/);
      before = await stateAfter(game, 2);
      assert.deepEqual(before.agents[0].running, ['guard', 'chase', 'strike']);
      assert.deepEqual(before.agents[2].running, ['guard', 'patrol', 'walk']);
      await shot(page, '1-open');
    });

    await check('a broken edit is refused with its place; nothing changes', async () => {
      await select(page, 'guard/chase/is_set[1]');
      const key = page.locator('#edit-node tr:has(th:text-is("key")) input');
      await key.fill('');
      await key.press('Enter');
      await page.waitForSelector('#edit-status.error');
      assert.match(await page.textContent('#edit-status'), /guard\/chase\/is_set\[1\]/);
      assert.equal(await page.evaluate(() => document.body.dataset.editVersion), '1');
      // a condition's parse error, at its place, as it is typed
      await page.click('#edit-conditions summary');
      const skip = page.locator('#edit-node tr:has(th:text-is("skip_if")) input');
      await skip.fill('hp <');
      await page.waitForFunction(() => [...document.querySelectorAll('#edit-node .parse')]
        .some((e) => /\^ at character 5/.test(e.textContent)));
      await shot(page, '2-refused');
      await skip.fill('');
      await page.click('#edit-reload');
      await page.waitForSelector('#edit-tree li[data-path="guard/chase/is_set[1]"]');
    });

    await check('a guard condition inserted, a parameter changed, a branch moved', async () => {
      // insert: check hp > 150 as the chase's first child
      await select(page, 'guard/chase');
      await page.selectOption('#edit-kind', 'check');
      await page.fill('#edit-kind-params [data-param="key"]', 'hp');
      await page.selectOption('#edit-kind-params [data-param="op"]', '>');
      const value = page.locator('#edit-kind-params [data-param="value"]');
      await value.fill('150');
      await value.press('Enter');
      await page.fill('#edit-new-name', 'brave');
      await page.click('#edit-ins-first');
      await draft(page, 2);
      // the parameter: brave when hp > 100 (guard 1 has 100: it stops striking)
      await select(page, 'guard/chase/brave');
      const v = page.locator('#edit-node tr:has(th:text-is("value")) input');
      await v.fill('100');
      await v.press('Enter');
      await draft(page, 3);
      // the branch: look moves below walk
      await select(page, 'guard/patrol/look');
      await page.click('#edit-down');
      await draft(page, 4);
      assert.deepEqual(await outline(page), ['0:guard', '1:chase', '2:brave', '2:is_set[1]',
        '2:strike', '1:patrol', '2:walk', '2:look']);
      await shot(page, '3-edited');
    });

    await check('the preview says what the live agents would do', async () => {
      await page.click('#edit-preview-go');
      await page.waitForSelector('#edit-summary');
      // every running node is still there (same path, same type, its
      // parent kept): all are kept
      assert.equal(await page.textContent('#edit-summary'),
        'If applied now: 4 agents keep guard/patrol/walk, 2 agents keep guard/chase/strike.');
      await shot(page, '4-preview');
    });

    await check('apply to the selected agent: only it switches, the others keep their version', async () => {
      // guard 3 (selected in the list when Edit mode opened) walks
      await page.click('#edit-apply-one');
      await page.waitForSelector('#edit-status.ok >> text=Applied to guard 3 only');
      assert.match(await page.textContent('#edit-status'),
        /\(1 agent keeps guard\/patrol\/walk\).*5 other agents stay/);
      const s = await stateAfter(game, 2);
      s.agents.forEach((a, i) => {
        assert.equal(a.paths.includes('guard/chase/brave'), i === 2, 'guard ' + (i + 1) + '\'s version');
        assert.equal(a.held, i !== 2, 'guard ' + (i + 1) + ' held');
      });
      // the stray, never offered to the page, is held too (its tree is)
      assert.equal(s.stray.held, true, 'the stray held');
      assert.ok(!s.stray.paths.includes('guard/chase/brave'), 'the stray\'s version');
      assert.deepEqual(s.stray.running, ['guard', 'patrol', 'walk']);
      // guard 3 walks on, not entered again; the others run as before
      assert.deepEqual(s.agents[2].running, ['guard', 'patrol', 'walk']);
      assert.deepEqual(s.agents[2].enters, before.agents[2].enters);
      assert.deepEqual(s.agents[0].running, ['guard', 'chase', 'strike']);
      // the population view tells the versions apart
      await page.click('#mode-pop');
      await page.waitForFunction(() => /Versions: v1 \(5 agents\), v2 \(guard 3\)\./
        .test(document.getElementById('tree-head').textContent));
      await page.click('#tree li[data-path="guard/patrol/walk"] > .row .name');
      await page.waitForSelector('#pop-agents li >> text=guard 3 · v2');
      await shot(page, '5-applied-one');
      await page.click('#mode-edit');
      await page.waitForSelector('#edit-tree li[data-path="guard/chase/brave"]');
    });

    await check('apply to all: the held agents switch at their next tick, running nodes kept', async () => {
      await page.click('#edit-apply');
      await page.waitForSelector('#edit-status.ok >> text=Applied: every agent');
      const s = await stateAfter(game, 2);
      for (const a of s.agents) assert.ok(a.paths.includes('guard/chase/brave'), 'new version');
      for (const a of s.agents) assert.equal(a.held, false);
      // the stray switched too, its walk kept (entered once, never aborted)
      assert.equal(s.stray.held, false, 'the stray released');
      assert.ok(s.stray.paths.includes('guard/chase/brave'), 'the stray on the new version');
      assert.deepEqual(s.stray.running, ['guard', 'patrol', 'walk']);
      assert.equal(s.stray.enters.walk, 1);
      assert.equal(s.stray.aborts.walk, undefined);
      // the chasers strike on: strike is kept (same path and type, its
      // sequence keeps its place at it), not entered again, not aborted;
      // brave is checked when the chase starts over
      for (const i of [0, 1]) {
        assert.deepEqual(s.agents[i].running, ['guard', 'chase', 'strike']);
        assert.equal(s.agents[i].enters.strike, 1);
        assert.equal(s.agents[i].aborts.strike, undefined);
      }
      // the walkers keep walking: walk not entered again, look not run again
      for (const i of [2, 3, 4, 5]) {
        assert.deepEqual(s.agents[i].running, ['guard', 'patrol', 'walk']);
        assert.deepEqual(s.agents[i].enters, before.agents[i].enters);
      }
      await shot(page, '5-applied');
    });

    await check('save: the file on disk is the expected text, applied once', async () => {
      await page.click('#edit-save');
      await page.waitForSelector('#edit-status.ok >> text=Saved');
      const want = fs.readFileSync(path.join(ROOT, 'tests/live/trees/guard.saved.lua'), 'utf8');
      const got = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(path.join(OUT, 'edit-saved.lua'), got); // (to compare by hand)
      assert.equal(got, want);
      const s = await stateAfter(game, 3);
      assert.equal(s.reloads, 0, 'the game\'s watcher saw the save as loaded already');
      assert.deepEqual(s.agents[1].running, ['guard', 'chase', 'strike']);
      assert.equal(s.agents[1].enters.strike, 1);
      // a second page's stale save is refused: the file changed behind it
      fs.appendFileSync(file, '-- an editor\'s change\n');
      await select(page, 'guard/patrol/look');
      await page.click('#edit-dup');
      await draft(page, 6);
      await page.click('#edit-save');
      await page.waitForSelector('#edit-status.error >> text=stale save');
      assert.equal(fs.readFileSync(file, 'utf8'), want + '-- an editor\'s change\n');
      await shot(page, '6-stale');
    });

    await check('undo, then roll back to the version before', async () => {
      await page.click('#edit-undo');
      await draft(page, 7);
      assert.deepEqual(await outline(page), ['0:guard', '1:chase', '2:brave', '2:is_set[1]',
        '2:strike', '1:patrol', '2:walk', '2:look']);
      await page.click('#edit-rollback');
      await page.waitForSelector('#edit-status.ok >> text=Rolled back');
      const s = await stateAfter(game, 2);
      // the version before the save: brave is still there (the save ran
      // the same tree); one more rollback goes to the original
      assert.ok(s.agents[0].paths.includes('guard/chase/brave'));
      await page.click('#edit-rollback');
      await page.waitForSelector('#edit-status.ok >> text=Rolled back');
      await until('the original tree runs again', async () => {
        const t = await stateAfter(game, 1);
        return !t.agents[0].paths.includes('guard/chase/brave') &&
          t.agents[0].paths.join() === before.agents[0].paths.join();
      });
      const t = await stateAfter(game, 2);
      assert.deepEqual(t.agents[0].running, ['guard', 'chase', 'strike']); // (not brave needed)
      assert.deepEqual(t.agents[3].enters, before.agents[3].enters); // walk kept throughout
      assert.deepEqual(await outline(page), ['0:guard', '1:chase', '2:is_set[1]', '2:strike',
        '1:patrol', '2:look', '2:walk']);
      await shot(page, '7-rolled-back');
    });

    await check('extract a subtree: patrol becomes a tree of its own, a subtree in its place', async () => {
      await select(page, 'guard/patrol');
      await page.fill('#edit-extract-id', 'patrolling');
      await page.click('#edit-extract');
      await page.waitForSelector('#edit-tree li[data-path="guard/patrol"] >> text=subtree tree="patrolling"');
      assert.deepEqual(await outline(page), ['0:guard', '1:chase', '2:is_set[1]', '2:strike',
        '1:patrol']);
      await page.click('#edit-preview-go');
      // the walkers' running nodes inside the extracted part gain a level
      // (guard/patrol/patrol/walk): aborted; the chasers keep striking
      await page.waitForFunction(() => /4 agents abort guard\/patrol\/walk, 2 agents keep guard\/chase\/strike/
        .test((document.getElementById('edit-summary') || {}).textContent));
      await page.click('#edit-apply');
      await page.waitForSelector('#edit-status.ok >> text=Applied: every agent');
      const s = await stateAfter(game, 2);
      for (const i of [2, 3, 4, 5]) {
        assert.deepEqual(s.agents[i].running, ['guard', 'patrol', 'patrol', 'walk']);
        assert.equal(s.agents[i].enters.walk, before.agents[i].enters.walk + 1, 'walk entered again');
      }
      for (const i of [0, 1]) {
        assert.deepEqual(s.agents[i].running, ['guard', 'chase', 'strike']);
        assert.equal(s.agents[i].enters.strike, 1, 'strike kept');
      }
      await shot(page, '9-extracted');
    });

    await check('the blackboard: a key unset and a typed value set from the page', async () => {
      await page.click('#mode-agent');
      await page.click('#agent-list li >> text=guard 1');
      await page.waitForSelector('#bb tr[data-key="enemy"][data-type="string"]');
      await page.hover('#bb tr[data-key="enemy"]');
      await page.click('#bb tr[data-key="enemy"] button.unset');
      await page.waitForSelector('#bb tr[data-key="enemy"]', { state: 'detached' });
      await page.fill('#bb-new-key', 'hp');
      await page.fill('#bb-new-value', '42');
      await page.press('#bb-new-value', 'Enter');
      await page.waitForSelector('#bb tr[data-key="hp"][data-value="42"][data-type="number"]');
      const s = await stateAfter(game, 2);
      assert.deepEqual(s.agents[0].bb, { hp: 42 }); // (enemy unset, hp a number)
      await page.screenshot({ path: path.join(OUT, 'edit-8-blackboard.png') });
    });

    assert.deepEqual(pageErrors, [], 'no error in the page');
    assert.equal(game.err, '', 'no error in the game');
  } finally {
    await context.close();
    game.child.stdin.end();
    game.child.kill();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log('1..' + checks);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
