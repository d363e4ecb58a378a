// test_viewer.js: the viewer's browser test. Records an arena trace
// (samples/arena.lua --record), serves viewer/ and trace files from a small
// HTTP server on 127.0.0.1, drives the page in Debian's Chromium (headless,
// through playwright-core, no browser download) and checks what the page
// shows against a reconstruction of the trace done here, independently of
// the page's code: node statuses, blackboard and changed keys at given
// ticks, population counts; then, on a generated trace (make_trace.js), a
// reload, an error and a breakpoint; bad files; and the live mode against
// a running game loop (tests/live/game.lua, bt.debug.serve); coverage
// reports of the test kit (the arena's, and make_coverage.lua's with nodes
// that never ran) checked against the report's own numbers. Writes a
// screenshot of each view into BUILDDIR/browser-screenshots.
//
//   node test_viewer.js BUILDDIR      (default: ../../build)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const assert = require('assert/strict');
const { chromium } = require('playwright-core');
const { spawn, execFileSync } = require('child_process');
const { makeTrace, brokenVariants } = require('./make_trace');

const ROOT = path.resolve(__dirname, '../..');
const VIEWER = path.join(ROOT, 'viewer');
const BUILD = path.resolve(process.argv[2] || path.join(ROOT, 'build'));
const OUT = path.join(BUILD, 'browser-screenshots');
const LUA_ENV = Object.assign({}, process.env, {
  LUA_PATH: ROOT + '/lua/?.lua;' + ROOT + '/lua/?/init.lua;;',
  LUA_CPATH: BUILD + '/src/?.so;;',
});
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// ---- The reference reconstruction (docs/TRACE_FORMAT.md, "Reconstructing a tick")

function parseTrace(text) {
  const trees = new Map();
  const agents = new Map();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line);
    if (o.t === 'tree') trees.set(o.tree + '@' + o.version, o.nodes);
    if (o.t === 'agent' && !agents.has(o.agent)) {
      agents.set(o.agent, { id: o.agent, tree: o.tree, label: o.label, lines: [] });
    }
    if (o.t === 'tick') agents.get(o.agent).lines.push(o);
  }
  return { trees, agents };
}

// A node on the running path: running, or aborting (a latent abort).
const live = (s) => s === 'running' || s === 'aborting';

// Statuses by path, blackboard, and the line of the agent's last tick <= n.
function reconstruct(ref, agent, n) {
  let status = null;
  let nodes = null;
  const bb = {};
  let last = null;
  for (const l of agent.lines) {
    if (l.tick > n) break;
    nodes = ref.trees.get(agent.tree + '@' + l.version);
    if (l.state) {
      status = nodes.map(() => 'idle');
      for (const [id, s] of l.state) status[id] = s;
    } else {
      for (const [id, s] of l.events) status[id] = s;
    }
    Object.assign(bb, l.bb);
    for (const k of l.unset || []) delete bb[k];
    last = l;
  }
  if (!last) return null;
  const byPath = {};
  nodes.forEach((node, i) => { byPath[node.path] = status[i]; });
  return { byPath, bb, line: last, nodes };
}

// A trace of a tree of hundreds of nodes: a castle of 20 wings of 8 rooms,
// each room a selector of a check and three actions (names that repeat
// 160 times, as default names do): 821 nodes. 20 agents, 60 ticks; agent
// a runs the 'work' of room (a * 7 + floor(t / 10)) mod 160 at tick t.
function bigTrace() {
  const nodes = [];
  const add = (name, type, parent, params) => {
    nodes.push({ id: nodes.length, name, type, parent, params: params || {},
      path: parent === null ? name : nodes[parent].path + '/' + name });
    return nodes.length - 1;
  };
  const rooms = [];
  add('castle', 'selector', null);
  for (let w = 0; w < 20; w++) {
    const wing = add('wing' + w, 'sequence', 0);
    for (let r = 0; r < 8; r++) {
      const room = add('room' + w + '_' + r, 'selector', wing);
      add('locked', 'check', room, { key: 'locked', op: '==', value: true });
      for (const leaf of ['clean', 'guard', 'work']) add(leaf, 'action', room);
      rooms.push(room);
    }
  }
  const roomOf = (a, t) => rooms[(a * 7 + Math.floor(t / 10)) % rooms.length];
  const lines = [{ t: 'header', format: 1, bonsai: '0.2.0', started: 'big' },
    { t: 'tree', tree: 'castle', version: 1, nodes }];
  for (let a = 1; a <= 20; a++) lines.push({ t: 'agent', agent: a, tree: 'castle', version: 1, label: 'knight ' + a });
  for (let t = 1; t <= 60; t++) {
    for (let a = 1; a <= 20; a++) {
      const room = roomOf(a, t);
      const path = [0, nodes[room].parent, room, room + 4];
      lines.push({ t: 'tick', agent: a, tick: t, time: t / 10, version: 1, status: 'running',
        events: path.map((id) => [id, 'running', 1]), state: path.map((id) => [id, 'running']),
        bb: { room: nodes[room].name } });
    }
  }
  lines.push({ t: 'end', ticks: 1200 });
  return { nodes, text: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    running: (a, t) => nodes[roomOf(a, t) + 4].path };
}

function population(ref, tree, n) {
  const counts = {};
  let agents = 0;
  for (const a of ref.agents.values()) {
    if (a.tree !== tree) continue;
    const r = reconstruct(ref, a, n);
    if (!r) continue;
    agents++;
    for (const [p, s] of Object.entries(r.byPath)) if (live(s)) counts[p] = (counts[p] || 0) + 1;
  }
  return { agents, counts };
}

// ---- A static server for viewer/ and the trace files ---------------------------

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.jsonl': 'text/plain' };

function serveFile(res, file) {
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end('not found'); return; }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function staticHandler(traceDir) {
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = decodeURIComponent(url.pathname);
    if (p.startsWith('/traces/')) return serveFile(res, path.join(traceDir, path.basename(p)));
    if (p === '/live') { res.writeHead(404); res.end(); return; } // a plain file server
    return serveFile(res, path.join(VIEWER, path.basename(p === '/' ? 'index.html' : p)));
  };
}

// ---- Page helpers --------------------------------------------------------------

async function shown(page) {
  return page.evaluate(() => {
    const status = {};
    for (const li of document.querySelectorAll('#tree li[data-path]')) status[li.dataset.path] = li.dataset.status;
    const bb = {};
    const changed = [];
    for (const tr of document.querySelectorAll('#bb tr[data-key]')) {
      if (tr.dataset.value !== '') bb[tr.dataset.key] = JSON.parse(tr.dataset.value);
      if (tr.classList.contains('changed')) changed.push(tr.dataset.key);
    }
    const running = [...document.querySelectorAll('#running li[data-path]')].map((li) => li.dataset.path);
    return { tick: Number(document.body.dataset.tick), agent: Number(document.body.dataset.agent),
      status, bb, changed, running, head: document.getElementById('tree-head').textContent };
  });
}

async function pickAgent(page, id) {
  await page.fill('#agent-search', String(id));
  await page.click('#agent-list li[data-agent="' + id + '"]');
  await page.fill('#agent-search', '');
}

async function goTo(page, tick) {
  await page.fill('#tick', String(tick));
  await page.press('#tick', 'Enter');
  await page.click('#tree-head'); // focus leaves the input: the arrow keys step
}

// Checks statuses, blackboard and changed keys against the reference.
async function checkAgentAt(page, ref, id, tick) {
  const s = await shown(page);
  const r = reconstruct(ref, ref.agents.get(id), tick);
  assert.equal(s.tick, tick, 'selected tick');
  assert.equal(s.agent, id, 'selected agent');
  assert.deepEqual(s.status, r.byPath, 'statuses of agent ' + id + ' at tick ' + tick);
  assert.deepEqual(s.bb, r.bb, 'blackboard of agent ' + id + ' at tick ' + tick);
  const changed = r.line.tick === tick ? Object.keys(r.line.bb).concat(r.line.unset || []) : [];
  assert.deepEqual(s.changed.sort(), changed.sort(), 'changed keys of agent ' + id + ' at tick ' + tick);
  const leaves = r.nodes.filter((n) => live(r.byPath[n.path]) &&
    !r.nodes.some((c) => c.parent === n.id && live(r.byPath[c.path]))).map((n) => n.path);
  assert.deepEqual(s.running, leaves, 'running nodes of agent ' + id + ' at tick ' + tick);
  return { s, r };
}

// Checks the coverage view of one report tree against the report: every
// node drawn, marked as never run or with gaps exactly when the report
// says so, with its counts.
async function checkCoverage(page, r) {
  await page.waitForFunction((name) => document.getElementById('tree-head').textContent
    .startsWith('Coverage of tree ' + name + ':'), r.tree);
  const drawn = await page.$$eval('#tree li[data-path]', (l) => l.map((li) => ({
    path: li.dataset.path, never: li.classList.contains('never'), gap: li.classList.contains('gap'),
    ticks: Number(li.dataset.ticks), count: li.querySelector(':scope > .row .count').textContent })));
  assert.deepEqual(drawn.map((d) => d.path), r.nodes.map((n) => n.path), r.tree + ': the nodes');
  for (const n of r.nodes) {
    const d = drawn.find((x) => x.path === n.path);
    assert.equal(d.never, n.ticks === 0, n.path + ': never ran');
    assert.equal(d.gap, n.gaps.length > 0, n.path + ': gaps');
    assert.equal(d.ticks, n.ticks, n.path + ': ticks');
    assert.equal(d.count, n.ticks ? n.ticks + ' ticks · ' + n.success + ' ✓ · ' + n.failure + ' ✗ · ' +
      n.aborted + ' aborted' : 'never ran', n.path + ': counts');
  }
  const gaps = [];
  for (const n of r.nodes) for (const g of n.gaps) gaps.push([n.path, g]);
  assert.deepEqual(await coverageGaps(page), gaps, r.tree + ': the list of what was never taken');
  assert.equal(await page.textContent('#tree-head'), 'Coverage of tree ' + r.tree + ': ' + r.covered + ' of ' +
    r.total + ' outcomes (' + Math.floor(1000 * r.covered / r.total) / 10 + '%). The heat is the ticks each ' +
    'node was visited (log scale, at most ' + Math.max(...r.nodes.map((n) => n.ticks)) + ').');
}

// The "never taken" list: [path, what] per entry.
function coverageGaps(page) {
  return page.$$eval('#cov-gaps li[data-path]', (l) => l.map((li) => [li.dataset.path,
    li.querySelector('span').textContent]));
}

let checks = 0;
async function check(name, fn) {
  const t0 = Date.now();
  await fn();
  checks++;
  console.log('ok ' + checks + ' - ' + name + ' (' + (Date.now() - t0) + ' ms)');
}

// ---- The live game ------------------------------------------------------------------
// tests/live/game.lua serves three guards on a free port, driven by what
// this test writes on its input (--stdin: nothing happens by the clock)
// until that input closes; a reader of its /events stream here collects
// every line it sends, the reference for what the page shows.

function startGame(script, args) {
  return new Promise((resolve, reject) => {
    const child = spawn('lua5.4', [path.join(ROOT, script)].concat(args, ['--stdin']),
      { env: LUA_ENV, cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    const game = { child, out: '', url: null };
    child.stdout.on('data', (d) => {
      game.out += d;
      const m = game.out.match(/live: (http:\/\/127\.0\.0\.1:\d+\/)\?token=([0-9a-f]+)/);
      if (m && !game.url) {
        Object.assign(game, { url: m[0].slice(6), base: m[1], token: m[2] });
        resolve(game);
      }
    });
    child.on('exit', (code) => reject(new Error(script + ' exited (' + code + '): ' + game.out)));
  });
}

// Tells the game to do something ("hurt 1", "wolf 2", "reload") and waits
// for its answer.
async function tell(game, what) {
  const from = game.out.length;
  game.child.stdin.write(what + '\n');
  await until('the game did "' + what + '"', () => game.out.slice(from).includes('done ' + what + '\n'));
}

function stopGame(game) {
  game.child.stdin.end(); // its input closed: it stops
  game.child.kill();
}

function readStream(game) {
  const stream = { lines: [], req: null };
  stream.req = http.get(game.base + 'events?token=' + game.token, (res) => {
    let buf = '';
    res.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
        if (data.length) stream.lines.push(JSON.parse(data.join('\n')));
      }
    });
  });
  stream.req.on('error', () => {});
  return stream;
}

// Waits for fn() to return something true (the deadline is only there in
// case it never does: generous, so that a busy machine does not fail it).
async function until(what, fn, ms) {
  const end = Date.now() + (ms || 60000);
  while (Date.now() < end) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out waiting for ' + what);
}

// Waits until agent id has ticked n more times in the stream: the game
// went on (instead of waiting some time and hoping it did).
async function ticksGoOn(stream, id, n) {
  const from = g2Ticks(stream, id);
  await until('agent ' + id + ' ticks ' + n + ' times', () => g2Ticks(stream, id) >= from + n);
}

// The commands the page sent, answered by the game.
async function commandsDone(page) {
  await page.evaluate(() => commandQueue);
}

// Two animation frames of the page: what it was told to draw is drawn.
async function frames(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

// ---- The test -------------------------------------------------------------------

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-viewer-'));
  // a recorded arena (the first 300 ticks of the default run, seed 42)
  execFileSync('lua5.4', [path.join(ROOT, 'samples/arena.lua'), '--record', path.join(tmp, 'arena.jsonl'),
    '--no-map', '--fast', '--ticks=300'], { env: LUA_ENV, cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const arenaText = fs.readFileSync(path.join(tmp, 'arena.jsonl'), 'utf8');
  const arena = parseTrace(arenaText);
  // a generated trace with a reload, an error and a breakpoint, and broken files
  const text = makeTrace({ agents: 400, ticks: 200 });
  fs.writeFileSync(path.join(tmp, 'generated.jsonl'), text);
  for (const [name, t] of Object.entries(brokenVariants(text))) fs.writeFileSync(path.join(tmp, name), t);
  const gen = parseTrace(text);
  // coverage reports of the test kit: the arena's default run (seed 42,
  // 400 ticks), and a small one with nodes that never ran
  execFileSync('lua5.4', [path.join(ROOT, 'samples/arena.lua'), '--coverage', path.join(tmp, 'arena-coverage.json'),
    '--no-map', '--fast'], { env: LUA_ENV, cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('lua5.4', [path.join(__dirname, 'make_coverage.lua'), path.join(tmp, 'gaps-coverage.json')],
    { env: LUA_ENV, cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const arenaCoverage = JSON.parse(fs.readFileSync(path.join(tmp, 'arena-coverage.json'), 'utf8'));
  const gapsCoverage = JSON.parse(fs.readFileSync(path.join(tmp, 'gaps-coverage.json'), 'utf8'));
  fs.writeFileSync(path.join(tmp, 'future-coverage.json'),
    JSON.stringify(Object.assign({}, gapsCoverage, { version: 9 })));

  // The story of the README: the first guard whose patrol a sighting
  // aborts after tick 60 (the arena is deterministic)
  const patrolOf = (ref) => ref.trees.get('guard@1').find((n) => n.path === 'guard/patrol').id;
  const sighted = (ref) => (l) => l.tick >= 60 && l.bb.enemy !== undefined &&
    l.events.some(([id, s]) => id === patrolOf(ref) && s === 'aborted');
  const ids = (ref, fn) => [...ref.agents.values()].filter((a) => a.lines.some(fn));
  const story = ids(arena, sighted(arena))[0];
  const storyTick = story.lines.find(sighted(arena)).tick;
  console.log('# the story: ' + story.label + ' stops patrolling at tick ' + storyTick);
  // the README's walk-through tells this story with these numbers
  assert.equal(story.id + '@' + storyTick, '2@78', 'README walk-through: agent 2 at tick 78');
  const readmePop = population(arena, 'guard', 78);
  assert.deepEqual([readmePop.agents, readmePop.counts['guard/combat/fight/chase'],
    readmePop.counts['guard/combat/fight/strike/attack'], readmePop.counts['guard/combat/fight/retreat/flee'],
    readmePop.counts['guard/patrol']], [200, 13, 16, 13, 142], 'README walk-through: the population at tick 78');
  const errorAgent = ids(gen, (l) => l.error)[0];
  const errorTick = errorAgent.lines.find((l) => l.error).tick;
  const frozenAgent = ids(gen, (l) => l.frozen !== undefined)[0];
  const frozenTick = frozenAgent.lines.find((l) => l.frozen !== undefined).tick;
  const reloader = gen.agents.get(1);
  const reloadTick = reloader.lines.find((l) => l.reload).tick;

  const server = await listen(staticHandler(tmp));
  const base = 'http://127.0.0.1:' + server.address().port + '/';
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 860 },
  });
  let game = null;
  let stream = null;
  try {
    const page = context.pages()[0] || await context.newPage();
    page.setDefaultTimeout(60000); // (a deadline for what never comes, not a wait)
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await check('a recorded arena trace loads (?trace=URL)', async () => {
      const t0 = Date.now();
      await page.goto(base + 'index.html?trace=traces/arena.jsonl');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      console.log('# ' + arena.agents.size + ' agents x 300 ticks indexed and drawn in ' + (Date.now() - t0) + ' ms');
      assert.equal(await page.isVisible('#message'), false, 'no message for a good trace');
      assert.equal(await page.textContent('#agent-count'), String(arena.agents.size));
    });

    await check(story.label + ' stepped to tick ' + storyTick + ': why it stopped patrolling', async () => {
      await pickAgent(page, story.id);
      await goTo(page, storyTick - 2);
      await checkAgentAt(page, arena, story.id, storyTick - 2);
      await page.keyboard.press('ArrowRight');
      let s = (await checkAgentAt(page, arena, story.id, storyTick - 1)).s;
      assert.equal(s.status['guard/patrol'], 'running');
      await page.keyboard.press('ArrowRight');
      s = (await checkAgentAt(page, arena, story.id, storyTick)).s;
      assert.equal(s.status['guard/patrol'], 'aborted');
      assert.ok(s.changed.includes('enemy'), 'enemy highlighted as changed');
      const events = await page.$$eval('#events li', (l) => l.map((x) =>
        x.querySelector('.name').textContent + ' ' + x.querySelector('.what').textContent));
      assert.ok(events.some((e) => e.startsWith('patrol') && e.endsWith('aborted')), 'the patrol abort is listed');
      assert.ok(events.some((e) => /^(.*\/)?is_set\[1\] success$/.test(e)), 'the guard condition is listed');
      await page.screenshot({ path: path.join(OUT, 'agent.png') });
      await page.keyboard.press('ArrowLeft');
      await checkAgentAt(page, arena, story.id, storyTick - 1);
      // Shift+arrow: to the previous change of the running path
      const running = (t) => Object.entries(reconstruct(arena, story, t).byPath)
        .filter(([, st]) => st === 'running').map(([p]) => p).join();
      let prev = storyTick - 2;
      while (prev > 1 && running(prev) === running(prev - 1)) prev--;
      await page.keyboard.press('Shift+ArrowLeft');
      assert.equal((await shown(page)).tick, prev, 'the previous change');
      await checkAgentAt(page, arena, story.id, prev);
      // the address keeps the agent and the tick: a reload shows the same
      await page.waitForFunction((t) => location.search.includes('tick=' + t), prev);
      await page.reload();
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await checkAgentAt(page, arena, story.id, prev);
      await page.click('#tree-head');
      await page.keyboard.press('End');
      assert.equal((await shown(page)).tick, 300);
      await page.keyboard.press('Home');
      assert.equal((await shown(page)).tick, 1);
    });

    await check('the timeline marks where the running path changed, and scrubs', async () => {
      const running = (t) => Object.entries(reconstruct(arena, story, t).byPath)
        .filter(([, st]) => st === 'running').map(([p]) => p).join();
      const changes = story.lines.filter((l, i) => i === 0 || running(l.tick) !== running(story.lines[i - 1].tick))
        .map((l) => l.tick);
      assert.equal(await page.getAttribute('#strip', 'data-change'), changes.join(','));
      const box = await page.locator('#strip').boundingBox();
      const x = (t) => box.x + 10 + (t - 1) / (300 - 1) * (box.width - 20);
      await page.mouse.click(x(150), box.y + box.height / 2);
      assert.ok(Math.abs((await shown(page)).tick - 150) <= 1, 'a click on the strip picks its tick');
    });

    await check('ticks across keyframes match the reconstruction', async () => {
      for (const t of [1, 2, 15, 16, 17, 33, 64, 100, 150, 299, 300]) {
        await goTo(page, t);
        await checkAgentAt(page, arena, story.id, t);
      }
      const villager = [...arena.agents.values()].find((a) => a.tree === 'villager');
      await pickAgent(page, villager.id);
      for (const t of [1, 120, 250]) {
        await goTo(page, t);
        await checkAgentAt(page, arena, villager.id, t);
      }
    });

    await check('a sentry hears a noise: the event and its payload at the tick it was delivered', async () => {
      const sentry = [...arena.agents.values()].find((a) => a.tree === 'sentry' &&
        a.lines.some((l) => l.delivered));
      const line = sentry.lines.find((l) => l.delivered);
      await pickAgent(page, sentry.id);
      await goTo(page, line.tick);
      await checkAgentAt(page, arena, sentry.id, line.tick);
      const delivered = await page.$$eval('#delivered li:not(.none)', (l) => l.map((x) =>
        [x.querySelector('.name').textContent, x.querySelector('.what').textContent]));
      assert.deepEqual(delivered, line.delivered.map((d) => [d.name, JSON.stringify(d.payload)]));
      assert.equal((await page.getAttribute('#strip', 'data-event')).split(',')[0], String(line.tick),
        'the timeline marks the tick of the event');
      assert.ok((await shown(page)).changed.includes('noise'), 'bt.event wrote the payload to bb.noise');
      await page.screenshot({ path: path.join(OUT, 'event.png') });
      await goTo(page, line.tick + 1);
      assert.equal(await page.textContent('#delivered li'), 'No event was delivered to this tick.');
    });

    await check('an archer holsters before it flees: aborting while its abort takes its time', async () => {
      const aborting = (l) => l.events.some(([, st]) => st === 'aborting');
      const archer = [...arena.agents.values()].find((a) => a.tree === 'archer' && a.lines.some(aborting));
      const line = archer.lines.find(aborting);
      await pickAgent(page, archer.id);
      await goTo(page, line.tick);
      const { s } = await checkAgentAt(page, arena, archer.id, line.tick);
      assert.equal(s.status['archer/in_range/shoot'], 'aborting');
      assert.ok(s.running.includes('archer/in_range/shoot'), 'listed among the running nodes');
      assert.ok((await page.textContent('#running')).includes('shoot (aborting)'));
      assert.ok((await page.textContent('#tick-info')).includes('aborting'));
      await page.screenshot({ path: path.join(OUT, 'aborting.png') });
      const end = archer.lines.find((l) => l.tick > line.tick && !aborting(l) &&
        l.events.some(([, st]) => st === 'aborted'));
      await goTo(page, end.tick);
      const after = await checkAgentAt(page, arena, archer.id, end.tick);
      assert.equal(after.s.status['archer/in_range/shoot'], 'aborted');
    });

    await check('running list, node search, collapsing, agent search', async () => {
      await pickAgent(page, story.id);
      await goTo(page, storyTick);
      const leaf = await page.textContent('#running li[data-path] small');
      await page.click('#running li[data-path]');
      assert.ok(await page.isVisible('li[data-path="' + leaf + '"] > .row.flash'));
      const nodes = reconstruct(arena, story, storyTick).nodes;
      await page.fill('#node-search', 'attack');
      assert.equal(await page.textContent('#node-matches'),
        nodes.filter((n) => n.name.includes('attack')).length + ' match');
      await page.fill('#node-search', 'action');
      const actions = nodes.filter((n) => n.type.includes('action') || n.name.includes('action')).length;
      assert.equal(await page.textContent('#node-matches'), actions + ' matches');
      await page.fill('#node-search', '');
      await page.click('li[data-path="guard/combat"] > .row .twist');
      assert.equal(await page.isVisible('li[data-path="guard/combat/fight"]'), false);
      await page.click('li[data-path="guard/combat"] > .row .twist');
      assert.equal(await page.isVisible('li[data-path="guard/combat/fight"]'), true);
      // a running node inside a collapsed subtree: one click opens it
      await page.click('li[data-path="guard"] > .row .twist');
      assert.equal(await page.isVisible('#tree li[data-path="' + leaf + '"]'), false);
      await page.click('#running li[data-path]');
      assert.equal(await page.isVisible('#tree li[data-path="' + leaf + '"]'), true);
      // fold to the running path: only what runs stays open
      await page.click('#fold-running');
      const open = await page.$$eval('#tree li[data-path]', (l) => l.filter((li) => li.offsetParent !== null)
        .map((li) => li.dataset.path));
      const r = reconstruct(arena, story, storyTick);
      const parentOf = (p) => r.nodes.find((n) => n.id === r.nodes.find((m) => m.path === p).parent);
      assert.deepEqual(open, r.nodes.filter((n) => n.parent === null ||
        r.byPath[parentOf(n.path).path] === 'running' && open.includes(parentOf(n.path).path)).map((n) => n.path));
      assert.ok(open.length < r.nodes.length, 'something was folded');
      await page.click('#unfold-all');
      assert.equal(await page.$$eval('#tree li[data-path]', (l) => l.filter((li) => li.offsetParent !== null).length),
        r.nodes.length);
      // the agent picker narrows the list
      const q = 'guard 1';
      const hits = [...arena.agents.values()].filter((a) => a.label.toLowerCase().includes(q)).length;
      await page.fill('#agent-search', q);
      assert.equal(await page.$$eval('#agent-list li[data-agent]', (l) => l.length), Math.min(200, hits));
      assert.equal(await page.textContent('#agent-count'), hits + ' of ' + arena.agents.size);
      await page.fill('#agent-search', '');
    });

    await check('population counts equal the ones computed from the file', async () => {
      await page.click('#mode-pop');
      const trees = [...new Set([...arena.agents.values()].map((a) => a.tree))];
      for (const tree of trees) {
        await pickAgent(page, [...arena.agents.values()].find((a) => a.tree === tree).id);
        for (const t of [1, 50, storyTick, 200, 300]) {
          await goTo(page, t);
          const want = population(arena, tree, t);
          const got = await page.evaluate(() => {
            const c = {};
            for (const li of document.querySelectorAll('#tree li[data-path]')) {
              if (Number(li.dataset.count)) c[li.dataset.path] = Number(li.dataset.count);
            }
            return { counts: c, agents: Number(document.getElementById('tree-head').dataset.agents) };
          });
          assert.equal(got.agents, want.agents, tree + ': agents at tick ' + t);
          assert.deepEqual(got.counts, want.counts, tree + ': population at tick ' + t);
        }
      }
      // blue for "many" (red means failure everywhere else)
      const heats = await page.$$eval('#tree li[data-count] > .row', (l) => l.map((r) => r.style.getPropertyValue('--heat'))
        .filter((h) => h !== 'transparent'));
      assert.ok(heats.length > 0 && heats.every((h) => /^hsl\(205,/.test(h)), 'blue heat: ' + heats.slice(0, 3));
      await pickAgent(page, story.id);
      await goTo(page, storyTick);
      // a click on a node lists the agents that run it
      const flee = 'guard/combat/fight/retreat/flee';
      await page.click('#tree li[data-path="' + flee + '"] > .row .name');
      const fleeing = [...arena.agents.values()].filter((a) => a.tree === 'guard' &&
        (reconstruct(arena, a, storyTick) || { byPath: {} }).byPath[flee] === 'running').map((a) => a.id);
      assert.ok(fleeing.length > 0);
      assert.deepEqual(await page.$$eval('#pop-agents li[data-agent]', (l) => l.map((x) => Number(x.dataset.agent))),
        fleeing);
      assert.equal(await page.textContent('#pop-title'), fleeing.length + ' agents running flee');
      await page.screenshot({ path: path.join(OUT, 'population.png') });
      await page.click('#mode-agent');
    });

    // a villager in the afternoon: at work, far down its tree
    const villager = [...arena.agents.values()].find((a) => a.tree === 'villager');
    const afternoon = 120;

    await check('nodes this tick did not visit look different from those it did', async () => {
      await page.goto(base + 'index.html?trace=traces/arena.jsonl&agent=' + villager.id + '&tick=' + afternoon);
      await page.waitForSelector('body.loaded #tree li[data-path]');
      const r = reconstruct(arena, villager, afternoon);
      assert.equal(r.line.tick, afternoon);
      const visited = new Set(r.line.events.map((e) => r.nodes[e[0]].path));
      const shownStale = await page.$$eval('#tree li[data-path]', (l) => l.filter((li) => li.classList.contains('stale'))
        .map((li) => li.dataset.path));
      const want = r.nodes.filter((n) => r.byPath[n.path] !== 'idle' && !visited.has(n.path)).map((n) => n.path);
      assert.ok(want.length > 0, 'the villager has nodes left from earlier ticks');
      assert.deepEqual(shownStale, want, 'stale nodes');
      // they look different: a dashed border and a white background
      const look = await page.evaluate((ps) => ps.map((p) => {
        const st = getComputedStyle(document.querySelector('li[data-path="' + p + '"] > .row'));
        return st.borderTopStyle + ' ' + st.backgroundColor;
      }), [want[0], r.line.events.map((e) => r.nodes[e[0]].path).find((p) => r.byPath[p] !== 'idle')]);
      assert.equal(look[0], 'dashed rgb(255, 255, 255)', 'a stale row');
      assert.notEqual(look[1].split(' ')[0], 'dashed', 'a visited row');
      await page.screenshot({ path: path.join(OUT, 'stale.png') });
    });

    await check('the tree scrolls to the running node', async () => {
      // the villager's running leaf lies below the fold: selecting the
      // agent brings it into sight
      const r = reconstruct(arena, villager, afternoon);
      const leaf = r.nodes.filter((n) => r.byPath[n.path] === 'running' &&
        !r.nodes.some((c) => c.parent === n.id && r.byPath[c.path] === 'running'))[0].path;
      const place = () => page.evaluate((p) => {
        const c = document.getElementById('center').getBoundingClientRect();
        const b = document.querySelector('li[data-path="' + p + '"] > .row').getBoundingClientRect();
        return { inside: b.top >= c.top && b.bottom <= c.bottom, below: b.top - c.top > c.height };
      }, leaf);
      await pickAgent(page, story.id); // another tree
      await pickAgent(page, villager.id);
      await page.evaluate(() => { document.getElementById('center').scrollTop = 0; });
      assert.equal((await place()).below, true, leaf + ' is below the fold at the top of the tree');
      await pickAgent(page, story.id);
      await pickAgent(page, villager.id);
      assert.equal((await place()).inside, true, leaf + ' scrolled into sight');
      await page.screenshot({ path: path.join(OUT, 'follow.png') });
    });

    await check('events tell repeated names apart, and show what a check compared', async () => {
      const r = reconstruct(arena, villager, afternoon);
      const rows = await page.$$eval('#events li', (l) => l.map((li) => ({
        name: li.querySelector('.name').textContent, path: li.querySelector('.name').title,
        detail: li.querySelector('.detail') ? li.querySelector('.detail').textContent : null })));
      assert.equal(rows.length, r.line.events.length);
      const byLabel = new Map();
      for (const x of rows) {
        assert.ok(x.path === x.name || x.path.endsWith('/' + x.name), x.name + ' is the end of ' + x.path);
        assert.ok(!byLabel.has(x.name) || byLabel.get(x.name) === x.path, x.name + ' names one node only');
        byLabel.set(x.name, x.path);
      }
      assert.ok(rows.some((x) => x.name.includes('/')), 'a repeated name shows its parent');
      const val = (v) => v === undefined ? 'nil' : JSON.stringify(v);
      let checks = 0;
      r.line.events.forEach(([id, st], i) => {
        const n = r.nodes[id];
        if (n.type !== 'check' || st === 'running') return;
        const p = n.params;
        const right = String(p.value).startsWith('$') ? p.value.slice(1) + '(' + val(r.bb[p.value.slice(1)]) + ')'
          : JSON.stringify(p.value);
        assert.equal(rows[i].detail, p.key + '(' + val(r.bb[p.key]) + ') ' + p.op + ' ' + right + ': ' +
          (st === 'success'));
        checks++;
      });
      assert.ok(checks > 0, 'the villager checked its hour');
      await page.screenshot({ path: path.join(OUT, 'events.png') });
    });

    await check('node lanes in the timeline: when a node ran, how it ended; jumps to its runs and failures', async () => {
      // the reference: the ticks whose events name the node, with its last status in each
      const historyOf = (a, p) => a.lines.map((l) => {
        const id = arena.trees.get(a.tree + '@' + l.version).findIndex((n) => n.path === p);
        const mine = l.events.filter((e) => e[0] === id);
        return mine.length ? l.tick + ':' + mine[mine.length - 1][1] : null;
      }).filter((x) => x);
      const nodes = arena.trees.get('guard@1');
      const failing = nodes.find((n) => historyOf(story, n.path).some((x) => x.endsWith(':failure'))).path;
      await page.goto(base + 'index.html?trace=traces/arena.jsonl&agent=' + story.id + '&tick=1');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await page.click('li[data-path="guard/patrol"] > .row .name');
      await page.click('li[data-path="' + failing + '"] > .row .name');
      assert.equal(await page.getAttribute('#strip', 'data-lane0'), 'guard/patrol|' + historyOf(story, 'guard/patrol').join(','));
      const lane = historyOf(story, failing);
      assert.equal(await page.getAttribute('#strip', 'data-lane1'), failing + '|' + lane.join(','));
      assert.equal((await page.locator('#strip').boundingBox()).height, 44 + 2 * 16, 'two lanes under the strip');
      const ticks = lane.map((x) => Number(x.split(':')[0]));
      const fails = lane.filter((x) => x.endsWith(':failure')).map((x) => Number(x.split(':')[0]));
      await page.click('#lane-next-ran');
      assert.equal((await shown(page)).tick, ticks.find((t) => t > 1), 'the next tick it ran');
      await page.click('#lane-next-failed');
      const firstFail = fails.find((t) => t > ticks.find((x) => x > 1));
      assert.equal((await shown(page)).tick, firstFail, 'the next tick it failed');
      await page.click('#lane-next-ran');
      await page.click('#lane-prev-failed');
      assert.equal((await shown(page)).tick, fails.filter((t) => t < ticks.find((x) => x > firstFail)).pop());
      await page.click('#lane-prev-ran');
      assert.equal((await shown(page)).tick, ticks.filter((t) => t < firstFail).pop() || firstFail);
      await page.screenshot({ path: path.join(OUT, 'lanes.png') });
      // a second click on the name takes the lane away
      await page.click('li[data-path="guard/patrol"] > .row .name');
      await page.click('li[data-path="' + failing + '"] > .row .name');
      assert.equal(await page.getAttribute('#strip', 'data-lane0'), null);
      assert.equal(await page.isVisible('#lane-nav'), false);
    });

    await check('agents carry their owner\'s name', async () => {
      assert.equal(await page.textContent('#agent-list li[data-agent="1"] span'), 'guard 1');
      await pickAgent(page, villager.id); // (beyond the 200 listed without a search)
      assert.equal(await page.textContent('#tick-info .who'), villager.label + ' (agent ' + villager.id + ')');
      assert.match(villager.label, /^villager \d+$/);
    });

    await check('at 1024 px the tree is not clipped under the side panel', async () => {
      await page.setViewportSize({ width: 1024, height: 768 });
      await frames(page);
      const box = await page.evaluate(() => {
        const c = document.getElementById('center');
        return { center: c.getBoundingClientRect().right, right: document.getElementById('right').getBoundingClientRect().left,
          scrolls: c.scrollWidth > c.clientWidth || c.scrollHeight > c.clientHeight };
      });
      assert.ok(box.center <= box.right + 1, 'the tree column ends where the panel begins: ' + JSON.stringify(box));
      await page.screenshot({ path: path.join(OUT, 'narrow.png') });
      await page.setViewportSize({ width: 1400, height: 860 });
    });

    await check('a reload switches the tree version (generated trace, tick ' + reloadTick + ')', async () => {
      await page.goto(base + 'index.html?trace=traces/generated.jsonl&agent=1&tick=' + (reloadTick - 1));
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await page.click('#tree-head');
      let s = (await checkAgentAt(page, gen, 1, reloadTick - 1)).s;
      assert.match(s.head, /version 1 of 1, 2/);
      assert.equal(s.status['guard/combat/fight/shout'], undefined);
      await page.keyboard.press('ArrowRight');
      s = (await checkAgentAt(page, gen, 1, reloadTick)).s;
      assert.match(s.head, /version 2 of 1, 2/);
      assert.ok('guard/combat/fight/shout' in s.status, 'version 2 has the shout node');
      assert.match(await page.textContent('#tick-info'), /version 1 → 2/);
      assert.equal(await page.getAttribute('#strip', 'data-reload'), String(reloadTick));
    });

    await check('a parallel: both running branches listed, each one click away', async () => {
      const sentry = [...gen.agents.values()].find((a) => a.tree === 'sentry');
      await pickAgent(page, sentry.id);
      await goTo(page, 30);
      const { s } = await checkAgentAt(page, gen, sentry.id, 30);
      assert.deepEqual(s.running, ['sentry/watch', 'sentry/hum']);
      await page.click('#tree li[data-path="sentry"] > .row .twist');
      await page.click('#running li[data-path="sentry/hum"]');
      assert.equal(await page.isVisible('#tree li[data-path="sentry/hum"] > .row.flash'), true);
      await goTo(page, 35);
      assert.deepEqual((await checkAgentAt(page, gen, sentry.id, 35)).s.running, ['sentry/watch']);
    });

    await check('the error of agent ' + errorAgent.id + ' at tick ' + errorTick, async () => {
      await pickAgent(page, errorAgent.id);
      await goTo(page, errorTick);
      await checkAgentAt(page, gen, errorAgent.id, errorTick);
      const err = await page.textContent('.tick-error');
      assert.ok(err.includes(errorAgent.lines.find((l) => l.error).error), 'the error message is shown');
      assert.equal(await page.getAttribute('#strip', 'data-error'), String(errorTick));
    });

    await check('the breakpoint of agent ' + frozenAgent.id + ' at tick ' + frozenTick, async () => {
      await pickAgent(page, frozenAgent.id);
      await goTo(page, frozenTick);
      await checkAgentAt(page, gen, frozenAgent.id, frozenTick);
      assert.match(await page.textContent('#frozen'), /Frozen at the breakpoint on guard\/combat\/fight\/strike\/attack/);
      assert.equal(await page.getAttribute('li[data-path="guard/combat/fight/strike/attack"] > .row', 'class'),
        'row bp-on');
      assert.equal(await page.getAttribute('#strip', 'data-frozen'), String(frozenTick));
      await page.screenshot({ path: path.join(OUT, 'breakpoint.png') });
      // frozen, it was not ticked: its next tick (its own count) is the
      // first after the resume, and it is no longer frozen
      await page.keyboard.press('ArrowRight');
      await checkAgentAt(page, gen, frozenAgent.id, frozenTick + 1);
      assert.equal(await page.isVisible('#frozen'), false);
    });

    await check('bad files give a clear message, never a blank page', async () => {
      const cases = [
        ['foreign.jsonl', /not a Bonsai trace/, true],
        ['future.jsonl', /format 7; this viewer reads format 1/, true],
        ['empty.jsonl', /empty/, true],
        ['truncated.jsonl', /cut off in the middle of line \d+/, false],
        ['corrupted.jsonl', /Line \d+ is corrupted: not valid JSON/, false],
        ['missing.jsonl', /Cannot load traces\/missing.jsonl: HTTP 404/, true],
      ];
      for (const [file, re, fatal] of cases) {
        await page.goto(base + 'index.html?trace=traces/' + file);
        await page.waitForFunction(() => { // (not the progress of a large file)
          const m = document.getElementById('message');
          return !m.hidden && !/^Reading /.test(m.textContent);
        });
        assert.match(await page.textContent('#message'), re, file);
        assert.equal(await page.isVisible('#welcome'), fatal, file + ': welcome text');
        assert.equal(await page.isVisible('#tree'), !fatal, file + ': tree');
        if (file === 'corrupted.jsonl') await page.screenshot({ path: path.join(OUT, 'corrupted.png') });
        if (file === 'foreign.jsonl') await page.screenshot({ path: path.join(OUT, 'foreign.png') });
      }
      // what a cut-off file shows is right as far as it goes
      const cut = parseTrace(fs.readFileSync(path.join(tmp, 'truncated.jsonl'), 'utf8').replace(/\n[^\n]*$/, '\n'));
      await page.goto(base + 'index.html?trace=traces/truncated.jsonl&agent=5&tick=30');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await checkAgentAt(page, cut, 5, 30);
    });

    await check('names and values are text, never markup', async () => {
      const evil = '<img src=x onerror="window.pwned=1">';
      const lines = [
        { t: 'header', format: 1, bonsai: '0.2.0', started: 'now' },
        { t: 'tree', tree: evil, version: 1, nodes: [
          { id: 0, name: evil, type: 'sequence', parent: null, path: evil, params: {} },
          { id: 1, name: '<b>x</b>', type: 'check', parent: 0, path: evil + '/<b>x</b>',
            params: { key: '<i>k</i>', op: '<', value: '<script>window.pwned=2</script>' } }] },
        { t: 'agent', agent: 1, tree: evil, version: 1, label: '<u>evil</u>' },
        { t: 'tick', agent: 1, tick: 1, time: 0.1, version: 1, status: 'running',
          events: [[0, 'running', 0], [1, 'failure', 0]],
          bb: { '<i>k</i>': '<img src=y onerror="window.pwned=3">' }, error: '<svg onload="window.pwned=4">' },
        { t: 'end', ticks: 1 }];
      fs.writeFileSync(path.join(tmp, 'hostile.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      await page.goto(base + 'index.html?trace=traces/hostile.jsonl');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await frames(page);
      assert.equal(await page.evaluate(() => window.pwned), undefined, 'no script ran');
      assert.equal(await page.evaluate(() => document.querySelectorAll(
        '#tree img, #tree b, #events img, #events b, #bb img, #bb i, #agent-list u, #tick-info svg').length), 0);
      assert.equal(await page.textContent('#agent-list li[data-agent="1"] span'), '<u>evil</u>');
      assert.equal(await page.textContent('li[data-id="0"] > .row .name'), evil);
      assert.equal(await page.textContent('#bb tr td'), '"<img src=y onerror="window.pwned=3">"');
      assert.ok((await page.textContent('.tick-error')).includes('<svg onload'));
      await page.screenshot({ path: path.join(OUT, 'hostile.png') });
    });

    await check('a tree of hundreds of nodes: find, fold to the running path, unfold; each in a moment', async () => {
      const big = bigTrace();
      fs.writeFileSync(path.join(tmp, 'big.jsonl'), big.text);
      let t0 = Date.now();
      await page.goto(base + 'index.html?trace=traces/big.jsonl&agent=3&tick=25');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      const opened = Date.now() - t0;
      assert.equal(await page.$$eval('#tree li[data-path]', (l) => l.length), big.nodes.length);
      assert.ok(big.nodes.length > 800, big.nodes.length + ' nodes');
      const visible = () => page.$$eval('#tree li[data-path]', (l) => l.filter((li) => li.offsetParent !== null)
        .map((li) => li.dataset.path));
      // the running leaf is brought into sight
      const leaf = big.running(3, 25);
      await page.waitForFunction((p) => {
        const r = document.querySelector('#tree li[data-path="' + p + '"] > .row').getBoundingClientRect();
        const box = document.getElementById('center').getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom;
      }, leaf);
      // one name among hundreds: its subtree opens, it is marked
      t0 = Date.now();
      await page.fill('#node-search', 'room13_5');
      assert.equal(await page.textContent('#node-matches'), '1 match');
      const searched = Date.now() - t0;
      assert.deepEqual(await page.$$eval('#tree .row.match', (l) => l.map((r) => r.parentNode.dataset.path)),
        ['castle/wing13/room13_5']);
      // a default name repeated 160 times; Enter goes from one to the next
      await page.fill('#node-search', 'work');
      assert.equal(await page.textContent('#node-matches'), '160 matches');
      await page.press('#node-search', 'Enter');
      await page.press('#node-search', 'Enter');
      await page.waitForSelector('li[data-path="castle/wing0/room0_1/work"] > .row.flash');
      await page.fill('#node-search', '');
      // fold: only what runs stays open, down to the running leaf
      t0 = Date.now();
      await page.click('#fold-running');
      const folded = Date.now() - t0;
      const room = leaf.replace(/\/work$/, '');
      const wing = room.replace(/\/[^/]*$/, '');
      const want = big.nodes.filter((n) => n.parent === null || n.parent === 0 ||
        [wing, room].includes(big.nodes[n.parent].path)).map((n) => n.path);
      assert.deepEqual(await visible(), want);
      await page.screenshot({ path: path.join(OUT, 'big-tree.png') });
      t0 = Date.now();
      await page.click('#unfold-all');
      const unfolded = Date.now() - t0;
      assert.equal((await visible()).length, big.nodes.length);
      // stepping through ticks redraws every node
      t0 = Date.now();
      for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => document.body.dataset.tick === '35');
      const stepped = (Date.now() - t0) / 10;
      await checkAgentAt(page, parseTrace(big.text), 3, 35);
      console.log('# ' + big.nodes.length + ' nodes: opened in ' + opened + ' ms; search ' + searched +
        ' ms; fold ' + folded + ' ms; unfold ' + unfolded + ' ms; a tick step ' + stepped.toFixed(0) + ' ms');
      for (const ms of [searched, folded, unfolded, stepped]) assert.ok(ms < 1500, ms + ' ms');
    });

    await check('the profile of a recorded arena as a heat over the tree', async () => {
      execFileSync('lua5.4', [path.join(ROOT, 'samples/arena.lua'), '--record', path.join(tmp, 'profiled.jsonl'),
        '--no-map', '--fast', '--ticks=120', '--profile'], { env: LUA_ENV, cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
      const lines = fs.readFileSync(path.join(tmp, 'profiled.jsonl'), 'utf8').split('\n').filter((l) => l)
        .map((l) => JSON.parse(l));
      const prof = lines.find((l) => l.t === 'profile' && l.tree === 'guard');
      assert.ok(prof && prof.ticks === 200 * 120, 'the guard tree profiled over 200 agents x 120 ticks');
      const nodes = lines.find((l) => l.t === 'tree' && l.tree === 'guard').nodes;
      const want = {};
      for (const [id, calls] of prof.nodes) want[nodes[id].path] = calls;
      await page.goto(base + 'index.html?trace=traces/profiled.jsonl');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await pickAgent(page, 2);
      await page.click('#mode-prof');
      await page.waitForSelector('body.profile');
      const got = await page.evaluate(() => {
        const c = {};
        for (const li of document.querySelectorAll('#tree li[data-path]')) {
          if (Number(li.dataset.calls)) c[li.dataset.path] = Number(li.dataset.calls);
        }
        return c;
      });
      assert.deepEqual(got, want, 'calls per node as the profile line says');
      assert.match(await page.textContent('#tree-head'), /^Profile of tree guard, version 1: 24000 agent ticks, /);
      const heats = await page.$$eval('#tree li[data-calls] > .row', (l) => l.map((r) => r.style.getPropertyValue('--heat'))
        .filter((h) => h !== 'transparent'));
      assert.ok(heats.length > 0 && heats.every((h) => /^hsl\(175,/.test(h)), 'teal heat: ' + heats.slice(0, 3));
      // the leaf that takes the most time is the deepest teal
      const top = prof.nodes.reduce((m, n) => (n[2] + n[3] > m[2] + m[3] ? n : m));
      const topRow = '#tree li[data-path="' + nodes[top[0]].path + '"] > .row';
      const light = (h) => Number(/(\d+)%\)$/.exec(h)[1]);
      assert.equal(light(await page.$eval(topRow, (r) => r.style.getPropertyValue('--heat'))),
        Math.min(...heats.map(light)));
      assert.match(await page.textContent(topRow + ' .count'), /^\d+ calls · [\d.]+ µs( \(leaf [\d.]+ µs\))? · \d+%$/);
      await page.screenshot({ path: path.join(OUT, 'profile.png') });
      // a trace without a profile says how to get one
      await page.goto(base + 'index.html?trace=traces/arena.jsonl');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await page.click('#mode-prof');
      assert.match(await page.textContent('#tree-head'), /^No profile of tree \w+, version 1 here: .*tree:profile\(true\)/);
      await page.click('#mode-agent');
    });

    await check('?coverage=URL: the arena\'s coverage as a heat, with what it never took', async () => {
      await page.goto(base + 'index.html?coverage=traces/arena-coverage.json');
      await page.waitForSelector('body.loaded.coverage #tree li[data-path]');
      assert.equal(await page.isVisible('#message'), false, 'no message for a good report: ' + await page.textContent('#message'));
      assert.equal(await page.isVisible('#timeline'), false, 'no timeline: a report has no ticks');
      assert.deepEqual(await page.$$eval('#cov-trees li', (l) => l.map((x) => x.dataset.tree)),
        arenaCoverage.trees.map((t) => t.tree));
      for (const r of arenaCoverage.trees) {
        await page.click('#cov-trees li[data-tree="' + r.tree + '"]');
        await checkCoverage(page, r);
      }
      // what docs/TESTING.md says the arena never exercises
      const villager = arenaCoverage.trees.find((t) => t.tree === 'villager');
      await page.click('#cov-trees li[data-tree="villager"]');
      const listed = await coverageGaps(page);
      assert.deepEqual(listed, [
        ['villager/morning/breakfast/force_success[1]/sequence[1]/is_set[1]', 'never failed'],
        ['villager/morning/breakfast/force_success[2]/sequence[1]/timeout[2]', 'never timed out']]);
      assert.equal(villager.covered + '/' + villager.total, '67/69');
      // the heat: the root, visited every tick, is deeper than the meal's timeout
      const light = (p) => page.$eval('li[data-path="' + p + '"] > .row', (row) =>
        Number(/(\d+)%\)$/.exec(row.style.getPropertyValue('--heat'))[1]));
      assert.ok(await light('villager') < await light(listed[1][0]), 'the root is the hottest');
      await page.screenshot({ path: path.join(OUT, 'coverage.png') });
      // a gap clicked: the node's counts, from the report
      await page.click('#cov-gaps li[data-path="' + listed[1][0] + '"]');
      const facts = await page.$$eval('#cov-node .facts div', (l) => l.map((d) => d.textContent));
      const node = villager.nodes.find((n) => n.path === listed[1][0]);
      assert.ok(facts.includes('ticks visited' + node.ticks), facts.join());
      assert.ok(facts.includes('never taken' + 'never timed out'), facts.join());
    });

    await check('coverage: nodes that never ran look apart and are listed; a bad report; back to a trace', async () => {
      await page.goto('file://' + path.join(VIEWER, 'index.html'));
      await page.setInputFiles('#file', path.join(tmp, 'gaps-coverage.json'));
      await page.waitForSelector('body.loaded.coverage #tree li[data-path]');
      const r = gapsCoverage.trees[0];
      await checkCoverage(page, r);
      const never = await page.$$eval('#tree li.never', (l) => l.map((li) => li.dataset.path));
      assert.deepEqual(never, ['npc/combat/fight/retreat/flee', 'npc/combat/fight/strike/attack']);
      assert.deepEqual(await coverageGaps(page), [
        ['npc/combat', 'never aborted its child'],
        ['npc/combat/fight/retreat/check[1]', 'never succeeded'],
        ['npc/combat/fight/retreat/flee', 'never ran'],
        ['npc/combat/fight/strike/in_reach', 'never succeeded'],
        ['npc/combat/fight/strike/attack', 'never ran']]);
      // a look apart: hatched and dashed, not the heat of a node that ran
      const look = (p) => page.$eval('li[data-path="' + p + '"] > .row', (row) => {
        const cs = getComputedStyle(row);
        return cs.borderTopStyle + ' ' + cs.backgroundImage.slice(0, 25);
      });
      assert.match(await look('npc/combat/fight/strike/attack'), /^dashed repeating-linear-grad/);
      assert.match(await look('npc/combat'), /^dashed none/);
      assert.match(await look('npc/patrol'), /^solid none/);
      await page.screenshot({ path: path.join(OUT, 'coverage-gaps.png') });
      await page.setInputFiles('#file', path.join(tmp, 'future-coverage.json'));
      await page.waitForSelector('#message.error');
      assert.match(await page.textContent('#message'), /coverage report of version 9 \(this page reads version 1\)/);
      await page.setInputFiles('#file', path.join(tmp, 'arena.jsonl'));
      await page.waitForSelector('body.loaded:not(.coverage) #tree li[data-path]');
      assert.equal(await page.isVisible('#agent-list'), true);
      assert.equal(await page.isVisible('#cov-gaps'), false);
    });

    await check('file:// page: the file picker and drag and drop', async () => {
      await page.goto('file://' + path.join(VIEWER, 'index.html'));
      assert.equal(await page.isVisible('#welcome'), true);
      await page.setInputFiles('#file', path.join(tmp, 'arena.jsonl'));
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await pickAgent(page, story.id);
      await goTo(page, storyTick);
      await checkAgentAt(page, arena, story.id, storyTick);
      await page.evaluate((content) => {
        const dt = new DataTransfer();
        dt.items.add(new File([content], 'dropped.jsonl'));
        document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, fs.readFileSync(path.join(tmp, 'foreign.jsonl'), 'utf8'));
      await page.waitForSelector('#message.error');
      assert.match(await page.textContent('#message'), /dropped.jsonl: .*not a Bonsai trace/);
    });

    await check('a trace served by bt.debug.serve{ file = ... } (scripts/view)', async () => {
      const view = spawn('lua5.4', ['-', path.join(tmp, 'arena.jsonl')],
        { env: LUA_ENV, cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
      try {
        view.stdin.end('local bt = require "bonsai"\n' +
          'local socket = require "socket"\n' +
          'local _, url = bt.debug.serve { port = 0, file = arg[1] }\n' +
          'print(url) io.stdout:flush()\n' +
          'while true do bt.debug.poll() socket.sleep(0.01) end\n');
        const url = await new Promise((resolve) => {
          let out = '';
          view.stdout.on('data', (d) => {
            out += d;
            if (out.includes('\n')) resolve(out.trim());
          });
        });
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?trace=arena\.jsonl&token=[0-9a-f]{32}$/);
        await page.goto(url + '&agent=' + story.id + '&tick=' + storyTick);
        await page.waitForSelector('body.loaded #tree li[data-path]');
        assert.equal(await page.isVisible('#live'), false, 'not live');
        assert.equal(await page.isVisible('#message'), false, 'the whole file');
        await checkAgentAt(page, arena, story.id, storyTick);
      } finally {
        view.kill();
      }
    });

    await check('live: follows tests/live/game.lua, pauses, scrubs back, resumes, edits the blackboard', async () => {
      game = await startGame('tests/live/game.lua', ['0']); // stopped when done
      stream = readStream(game);
      await page.goto(game.url);
      await page.waitForSelector('body.loaded.is-live #tree li[data-path]');
      assert.equal(await page.textContent('#live-state'), 'live');
      // a table on the blackboard (a function inside) reads as JSON
      const gear = await page.textContent('#bb tr[data-key="gear"] td');
      assert.ok(gear.startsWith('{') && gear.includes('"sword":2') && gear.includes('"charm":"function: 0x'),
        'gear: ' + gear);
      const tickNow = () => page.evaluate(() => Number(document.body.dataset.tick));
      const t1 = await tickNow();
      await page.waitForFunction((t) => Number(document.body.dataset.tick) >= t + 5, t1);
      // pause: the page stays at its tick while the game goes on
      await page.click('#live-pause');
      const paused = await tickNow();
      const shownAgent = Number(await page.evaluate(() => document.body.dataset.agent));
      await ticksGoOn(stream, shownAgent, 10);
      assert.equal(await tickNow(), paused, 'paused');
      await page.click('#tree-head');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await tickNow(), paused - 2, 'scrubbed back');
      // what the page shows is what the game streamed
      const sent = parseTrace(stream.lines.map((o) => JSON.stringify(o)).join('\n'));
      const agent = Number(await page.evaluate(() => document.body.dataset.agent));
      await checkAgentAt(page, sent, agent, paused - 2);
      await page.click('#live-pause');
      await page.waitForFunction((t) => Number(document.body.dataset.tick) > t, paused);
      // edit a blackboard value: it reaches the game and comes back in a tick
      const from = stream.lines.length;
      await page.click('#bb tr[data-key="hp"] td');
      await page.fill('#bb tr[data-key="hp"] input', '77');
      await page.press('#bb tr[data-key="hp"] input', 'Enter');
      const landed = await until('hp = 77 in the stream', () => stream.lines.slice(from)
        .find((o) => o.t === 'tick' && o.agent === agent && o.bb && o.bb.hp === 77));
      await page.click('#live-pause');
      await goTo(page, landed.tick);
      assert.equal(await page.getAttribute('#bb tr[data-key="hp"]', 'data-value'), '77');
      assert.equal(await page.getAttribute('#bb tr[data-key="hp"]', 'class'), 'changed');
      await page.click('#live-pause');
      // new keys: a string and a boolean; then null clears the string
      const typed = async (key, value) => {
        await page.fill('#bb-new-key', key);
        await page.fill('#bb-new-value', value);
        await page.press('#bb-new-value', 'Enter');
      };
      const mark = stream.lines.length;
      await typed('mood', 'calm');
      await typed('on_watch', 'true');
      const agentLines = () => stream.lines.slice(mark).filter((o) => o.t === 'tick' && o.agent === agent);
      await until('mood and on_watch in the stream', () => agentLines().some((o) => o.bb.mood === 'calm') &&
        agentLines().some((o) => o.bb.on_watch === true));
      await page.waitForSelector('#bb tr[data-key="on_watch"][data-value="true"]');
      await page.waitForSelector('#bb tr[data-key="mood"][data-value=\'"calm"\']');
      await page.click('#bb tr[data-key="mood"] td');
      await page.fill('#bb tr[data-key="mood"] input', 'null');
      await page.press('#bb tr[data-key="mood"] input', 'Enter');
      await until('mood cleared', () => agentLines().some((o) => (o.unset || []).includes('mood')));
      await page.waitForSelector('#bb tr[data-key="mood"]', { state: 'detached' });
      // what was sent is not left in the boxes, and its news goes away
      assert.deepEqual(await page.$$eval('#bb tr.add input', (l) => l.map((i) => i.value)), ['', '']);
      assert.match(await page.textContent('#message'), /^Set mood = null for guard \d: its next tick sees it\.$/);
      await page.waitForSelector('#message', { state: 'hidden', timeout: 8000 });
    });

    await check('live: a breakpoint freezes an agent; step and resume from the page; a reload', async () => {
      // guard 2 sees a wolf (the game is told so) and attacks it
      await page.click('li[data-path="guard/alert/attack"] > .row .bp');
      const g2 = [...sent(stream).agents.values()].find((a) => a.label === 'guard 2');
      const g1 = [...sent(stream).agents.values()].find((a) => a.label === 'guard 1');
      await pickAgent(page, g2.id);
      await commandsDone(page);
      await tell(game, 'wolf 2');
      await page.waitForSelector('#agent-resume', { timeout: 60000 });
      const frozen = await until('a frozen line', () => stream.lines.find((o) => o.agent === g2.id && o.frozen !== undefined));
      const attack = sent(stream).trees.get('guard@' + frozen.version).find((n) => n.path === 'guard/alert/attack');
      assert.equal(frozen.frozen, attack.id, 'frozen at the attack');
      assert.match(await page.textContent('#frozen'), /Frozen at the breakpoint on guard\/alert\/attack/);
      await page.screenshot({ path: path.join(OUT, 'live.png') });
      const before = g2Ticks(stream, g2.id);
      await ticksGoOn(stream, g1.id, 5);
      assert.equal(g2Ticks(stream, g2.id), before, 'frozen: not ticked');
      await page.click('#agent-step');
      await until('one step', () => g2Ticks(stream, g2.id) === before + 1);
      await ticksGoOn(stream, g1.id, 5);
      assert.equal(g2Ticks(stream, g2.id), before + 1, 'stepped exactly one tick');
      await page.waitForSelector('#agent-resume');
      // step into the next tick: its events one by one, the tree as they
      // left it, the blackboard as each node left it
      await page.click('#live-pause'); // paused, a step still shows
      await page.click('#agent-step-in');
      assert.equal(await page.textContent('#live-pause'), 'Pause', 'following the game again');
      const into = await until('a stepped tick', () => stream.lines.find((o) => o.t === 'tick' && o.agent === g2.id && o.steps));
      assert.equal(g2Ticks(stream, g2.id), before + 2, 'one more tick, no more');
      await page.waitForSelector('#step-bar:not([hidden])');
      const ref = sent(stream);
      const start = reconstruct(ref, ref.agents.get(g2.id), into.tick - 1);
      const nodes = ref.trees.get('guard@' + into.version);
      const status = Object.assign({}, start.byPath);
      const bb = Object.assign({}, start.bb);
      let attacked = false;
      assert.ok(into.events.length >= 3, 'the tick visits the path to the attack: ' + JSON.stringify(into.events));
      for (let k = 0; k < into.events.length; k++) {
        const [id, st, again] = into.events[k];
        status[nodes[id].path] = st;
        for (const [at, set, unset] of into.steps) {
          if (at !== k) continue;
          Object.assign(bb, set);
          for (const key of unset || []) delete bb[key];
        }
        assert.equal(await page.textContent('#step-text'), 'Node ' + (k + 1) + ' of ' + into.events.length + ': ' +
          nodes[id].name + ' ' + (again ? 'running again' : st));
        assert.deepEqual(await page.$$eval('#tree .row.step-here', (l) => l.map((r) => r.parentNode.dataset.path)),
          [nodes[id].path], 'the node of event ' + k + ' is outlined');
        const s = await shown(page);
        assert.deepEqual(s.status, status, 'statuses after event ' + k);
        assert.deepEqual(s.bb, bb, 'blackboard after event ' + k);
        assert.equal(await page.$$eval('#events li.later', (l) => l.length), into.events.length - k - 1);
        if (nodes[id].path === 'guard/alert/attack') {
          assert.ok(into.steps.some(([at]) => at === k), 'the attack wrote enemy_hp');
          assert.ok(s.changed.includes('enemy_hp'), 'what the attack wrote is highlighted');
          await page.screenshot({ path: path.join(OUT, 'step.png') });
          attacked = true;
        }
        if (k + 1 < into.events.length) await page.click('#step-next');
      }
      assert.ok(attacked, 'the stepped tick ran the attack');
      await page.click('#step-next');
      assert.equal(await page.textContent('#step-text'), 'The whole tick (' + into.events.length + ' events)');
      await checkAgentAt(page, sent(stream), g2.id, into.tick);
      await page.click('#step-prev');
      assert.match(await page.textContent('#step-text'), new RegExp('^Node ' + into.events.length + ' of'));
      await page.click('li[data-path="guard/alert/attack"] > .row .bp'); // breakpoint off
      await page.click('#agent-resume');
      await until('ticks again', () => g2Ticks(stream, g2.id) > before + 3);
      await page.waitForSelector('#agent-freeze');
      // the game reloads its tree: the page follows
      await tell(game, 'reload');
      await page.waitForFunction(() => /version 2/.test(document.getElementById('tree-head').textContent),
        null, { timeout: 60000 });
    });

    await check('live: break when a blackboard condition becomes true, or when a node fails', async () => {
      // guard 1 is hurt (hp = 10: the game is told so) and heals by running
      const g1 = [...sent(stream).agents.values()].find((a) => a.label === 'guard 1');
      await pickAgent(page, g1.id);
      await page.fill('#watch-input', 'hp < 25');
      await page.press('#watch-input', 'Enter');
      await page.waitForSelector('#watch-list li');
      assert.equal(await page.textContent('#watch-list li span'), 'hp < 25 (guard 1)');
      await commandsDone(page);
      await tell(game, 'hurt 1');
      await page.waitForSelector('#agent-resume', { timeout: 60000 });
      assert.match(await page.textContent('#frozen'), /Frozen: hp < 25 became true/);
      const line = await until('the watch line', () => stream.lines.find((o) => o.agent === g1.id && o.watch));
      assert.equal(line.watch, 'hp < 25');
      assert.ok(line.bb.hp < 25 || line.bb.hp === undefined, 'hp is low in that tick');
      assert.equal(line.frozen, -1);
      await page.screenshot({ path: path.join(OUT, 'watch.png') });
      await page.click('#watch-list li button'); // the watch goes
      assert.equal(await page.$$eval('#watch-list li', (l) => l.length), 0);
      await page.click('#agent-resume');
      await page.waitForSelector('#agent-freeze');
      // Shift+click: break when the flee check fails (it does while hp >= 25)
      const check = 'guard/flee/check[1]';
      const from = stream.lines.length;
      await page.click('li[data-path="' + check + '"] > .row .bp', { modifiers: ['Shift'] });
      assert.match(await page.getAttribute('li[data-path="' + check + '"] > .row', 'class'), /bp-fail/);
      const failed = await until('a failure breakpoint', () => stream.lines.slice(from)
        .find((o) => o.t === 'tick' && o.frozen !== undefined && o.frozen >= 0));
      const nodes = sent(stream).trees.get('guard@' + failed.version);
      assert.equal(nodes[failed.frozen].path, check);
      assert.ok(failed.events.some(([id, st]) => id === failed.frozen && st === 'failure'), 'it failed in that tick');
      await page.click('li[data-path="' + check + '"] > .row .bp', { modifiers: ['Shift'] });
      // every agent whose check failed while the breakpoint was there froze
      // (guard 1 too, when the machine is slow enough that its hp came back
      // to 25 first): all are let go, so what follows finds them ticking
      await commandsDone(page);
      await page.evaluate((ids) => Promise.all(ids.map((id) => command({ cmd: 'resume', agent: id }))),
        [...sent(stream).agents.values()].map((a) => a.id));
    });

    await check('live: force a node from the page, and take it away (fault injection)', async () => {
      if (await page.textContent('#live-pause') !== 'Pause') await page.click('#live-pause'); // follow
      const g3 = [...sent(stream).agents.values()].find((a) => a.label === 'guard 3');
      await pickAgent(page, g3.id);
      // (the failure breakpoint before may have frozen it)
      if (await page.isVisible('#agent-resume')) await page.click('#agent-resume');
      const check = 'guard/flee/check[1]';
      await page.selectOption('#force-node', check);
      await page.selectOption('#force-status', 'success');
      await page.fill('#force-ticks', '0');
      const from = stream.lines.length;
      await page.click('#force-go');
      await page.waitForSelector('#force-list li');
      assert.equal(await page.textContent('#force-list li span'), check + ' → success (guard 3)');
      const line = await until('a forced tick of guard 3', () => stream.lines.slice(from).find((o) =>
        o.t === 'tick' && o.agent === g3.id && (o.events || []).some((e) => e[3] === 1)));
      const ev = line.events.find((e) => e[3] === 1);
      assert.equal(sent(stream).trees.get('guard@' + line.version)[ev[0]].path, check);
      assert.equal(ev[1], 'success');
      await page.waitForSelector('li[data-path="' + check + '"] > .row.forced');
      await page.waitForSelector('#events li.forced');
      assert.match(await page.textContent('#events li.forced .name'), /check\[1\]$/);
      assert.equal(await page.textContent('#events li.forced .what'), 'success');
      assert.equal(await page.$$eval('#events li.forced .detail', (l) => l.length), 0, 'a forced check was not checked');
      await page.screenshot({ path: path.join(OUT, 'force.png') });
      await page.click('#force-list li button');
      assert.equal(await page.$$eval('#force-list li', (l) => l.length), 0);
      const gone = stream.lines.length;
      await until('guard 3 unforced', () => {
        const ls = stream.lines.slice(gone).filter((o) => o.t === 'tick' && o.agent === g3.id);
        return ls.length >= 3 && ls.slice(1).every((o) => !(o.events || []).some((e) => e[3] === 1));
      });
      // a node of another version is refused with a message
      await page.evaluate(() => {
        const o = document.createElement('option');
        o.value = o.textContent = 'guard/nowhere';
        document.getElementById('force-node').appendChild(o);
      });
      await page.selectOption('#force-node', 'guard/nowhere');
      await page.click('#force-go');
      await page.waitForFunction(() => /refused "force"/.test(document.getElementById('message').textContent));
      assert.match(await page.textContent('#message'), /The game refused "force": no node 'guard\/nowhere' in tree 'guard' of agent \d+/);
      assert.equal(await page.$$eval('#force-list li', (l) => l.length), 0);
      // a fault for some ticks: listed with the ticks it has left, as the
      // game says, and gone from the list when they run out
      await page.selectOption('#force-node', 'guard/patrol');
      await page.selectOption('#force-status', 'failure');
      await page.fill('#force-ticks', '20');
      const mark = stream.lines.length;
      await page.click('#force-go');
      await page.waitForFunction(() => / × \d+ left \(guard 3\)$/.test(document.querySelector('#force-list li span')
        ? document.querySelector('#force-list li span').textContent : ''));
      const lefts = () => stream.lines.slice(mark).filter((o) => o.t === 'tick' && o.agent === g3.id && o.faults);
      await until('the fault runs out', () => lefts().some((o) => o.faults.length === 0));
      const counts = lefts().map((o) => o.faults.length ? o.faults[0][2] : 0);
      assert.deepEqual(counts.slice(0, 3), [19, 18, 17], 'ticks left, tick by tick: ' + counts);
      assert.equal(lefts().slice(-1)[0].faults.length, 0);
      await page.waitForFunction(() => document.querySelectorAll('#force-list li').length === 0);
    });

    await check('live: freeze any agent from the page, step into its tick, unfreeze', async () => {
      if (await page.textContent('#live-pause') !== 'Pause') await page.click('#live-pause'); // follow
      const agents = [...sent(stream).agents.values()];
      const g3 = agents.find((a) => a.label === 'guard 3');
      const g1 = agents.find((a) => a.label === 'guard 1');
      await pickAgent(page, g3.id);
      await page.waitForSelector('#agent-freeze');
      await page.screenshot({ path: path.join(OUT, 'freeze-button.png') });
      const from = stream.lines.length;
      await page.click('#agent-freeze');
      await until('the frozen line', () => stream.lines.slice(from).find((o) => o.t === 'frozen' && o.agent === g3.id));
      await page.waitForSelector('#agent-resume');
      assert.match(await page.textContent('#frozen p'), /^Frozen: the agent is not ticked until unfrozen or stepped\.$/);
      assert.equal(await page.isVisible('#agent-freeze'), false);
      // it stands still while the others go on
      const before = g2Ticks(stream, g3.id);
      await ticksGoOn(stream, g1.id, 5);
      assert.equal(g2Ticks(stream, g3.id), before, 'frozen: not ticked');
      // step into its next tick, node by node: it patrols, so the tick runs
      // the patrol, a bt.control node (the game's own Lua), and its child
      await page.click('#agent-step-in');
      const into = await until('a stepped tick', () => stream.lines.slice(from).find((o) =>
        o.t === 'tick' && o.agent === g3.id && o.steps));
      assert.equal(into.frozen, -1, 'frozen again after the step');
      await page.waitForSelector('#step-bar:not([hidden])');
      const nodes = sent(stream).trees.get('guard@' + into.version);
      const patrol = nodes.find((n) => n.path === 'guard/patrol');
      assert.equal(patrol.type, 'control');
      const inside = into.events.filter(([id]) => nodes[id].parent === patrol.id);
      assert.ok(into.events.some(([id]) => id === patrol.id) && inside.length > 0,
        'the stepped tick runs the control node and a child of it: ' + JSON.stringify(into.events));
      const ref = sent(stream);
      const start = reconstruct(ref, ref.agents.get(g3.id), into.tick - 1);
      const status = Object.assign({}, start.byPath);
      const bb = Object.assign({}, start.bb);
      let shot = false;
      for (let k = 0; k < into.events.length; k++) {
        const [id, st, again] = into.events[k];
        status[nodes[id].path] = st;
        for (const [at, set, unset] of into.steps) {
          if (at !== k) continue;
          Object.assign(bb, set);
          for (const key of unset || []) delete bb[key];
        }
        assert.equal(await page.textContent('#step-text'), 'Node ' + (k + 1) + ' of ' + into.events.length + ': ' +
          nodes[id].name + ' ' + (again ? 'running again' : st));
        assert.deepEqual(await page.$$eval('#tree .row.step-here', (l) => l.map((r) => r.parentNode.dataset.path)),
          [nodes[id].path], 'the node of event ' + k + ' is outlined');
        const s = await shown(page);
        assert.deepEqual(s.status, status, 'statuses after event ' + k);
        assert.deepEqual(s.bb, bb, 'blackboard after event ' + k);
        if (k === 1) await page.screenshot({ path: path.join(OUT, 'freeze.png') });
        if (!shot && nodes[id].parent === patrol.id) {
          await page.screenshot({ path: path.join(OUT, 'step-control.png') });
          shot = true;
        }
        await page.click('#step-next');
      }
      assert.equal(await page.textContent('#step-text'), 'The whole tick (' + into.events.length + ' events)');
      await page.waitForSelector('#agent-resume');
      await ticksGoOn(stream, g1.id, 5);
      assert.equal(g2Ticks(stream, g3.id), before + 1, 'stepped exactly one tick');
      await page.click('#agent-resume');
      await until('ticks again', () => g2Ticks(stream, g3.id) > before + 3);
      await page.waitForSelector('#agent-freeze');
      // the patrol's other families: its report is skipped (skip_if) until
      // guard 3 looked three times (look's on_success counts them in seen),
      // then its script counts the rounds; the page shows each as sent
      const report = (o) => sent(stream).trees.get('guard@' + o.version).find((n) => n.path === 'guard/patrol/report').id;
      const skipped = await until('a skipped report', () => stream.lines.find((o) => o.t === 'tick' &&
        o.agent === g3.id && (o.events || []).some(([id, st]) => id === report(o) && st === 'skipped')));
      const counted = await until('a round counted by the script', () => stream.lines.find((o) => o.t === 'tick' &&
        o.agent === g3.id && o.bb && o.bb.rounds >= 1));
      await page.click('#live-pause');
      for (const line of [skipped, counted]) {
        await goTo(page, line.tick);
        await checkAgentAt(page, sent(stream), g3.id, line.tick);
      }
      const shown3 = await shown(page);
      assert.ok(shown3.bb.seen >= 3, 'look\'s on_success counted: ' + JSON.stringify(shown3.bb));
      await goTo(page, skipped.tick);
      assert.equal((await shown(page)).status['guard/patrol/report'], 'skipped');
      // the scripts are visible: the report's skip_if in its row and in the
      // Node panel, with what its key held at this tick, as sent
      const reportNode = sent(stream).trees.get('guard@' + skipped.version).find((n) => n.path === 'guard/patrol/report');
      assert.equal(reportNode.conditions.skip_if, 'looks < 3', 'the trace carries the skip_if source');
      assert.deepEqual(reportNode.keys, ['looks']);
      const looks = reconstruct(sent(stream), sent(stream).agents.get(g3.id), skipped.tick).bb.looks;
      const row = await page.textContent('#tree li[data-path="guard/patrol/report"] > .row .params');
      assert.equal(row, 'skip_if "looks < 3" — looks ' + (looks === undefined ? 'nil' : JSON.stringify(looks)));
      await page.click('#tree li[data-path="guard/patrol/report"] > .row .name');
      const info = await page.textContent('#node-info');
      assert.match(info, /guard\/patrol\/report sequence, skipped/);
      assert.match(info, /skip_if looks < 3/);
      assert.ok(info.includes('read at tick ' + skipped.tick + ' looks ' + (looks === undefined ? 'nil' : JSON.stringify(looks))), info);
      await page.click('#tree li[data-path="guard/patrol/report"] > .row .name'); // its lane off again
      await page.screenshot({ path: path.join(OUT, 'skipped.png') });
      await page.click('#live-pause');
    });

    await check('live: agents and trees join, agents leave or are collected, a reload (churn_game.lua)', async () => {
      stream.req.destroy();
      stopGame(game);
      game = await startGame('tests/browser/churn_game.lua', []);
      stream = readStream(game);
      await page.goto(game.url);
      await page.waitForSelector('body.loaded.is-live #tree li[data-path]');
      assert.equal(await page.textContent('#agent-count'), '2');
      await tell(game, 'go'); // the game goes past frame 20: three agents join
      await page.waitForFunction(() => document.getElementById('agent-count').textContent === '5');
      const scout = await until('scout 1', () => [...sent(stream).agents.values()].find((a) => a.label === 'scout 1'));
      await pickAgent(page, scout.id);
      assert.match(await page.textContent('#tree-head'), /^Tree scout, version 1/);
      await page.waitForFunction(() => /^Tree scout, version 2 of 1, 2/.test(document.getElementById('tree-head').textContent),
        null, { timeout: 60000 });
      // the new shape is drawn: 'look' where 'count' was
      assert.deepEqual(await page.$$eval('#tree li[data-path]', (l) => l.map((li) => li.dataset.path)),
        ['scout', 'scout/walk', 'scout/look']);
      // the page agrees with the stream, across the join and the reload
      await page.click('#live-pause');
      const ref = sent(stream);
      const last = ref.agents.get(scout.id).lines.slice(-1)[0].tick;
      for (const t of [1, 2, Math.floor(last / 2), last]) {
        await goTo(page, t);
        await checkAgentAt(page, ref, scout.id, t);
      }
      // guard 1 was withdrawn: it stays in the list with the ticks it had
      const g1 = [...ref.agents.values()].find((a) => a.label === 'guard 1');
      await pickAgent(page, g1.id);
      const g1Last = g1.lines.slice(-1)[0].tick;
      await ticksGoOn(stream, scout.id, 5);
      assert.equal(sent(stream).agents.get(g1.id).lines.slice(-1)[0].tick, g1Last, 'guard 1 left');
      assert.ok(stream.lines.some((o) => o.t === 'gone' && o.agent === g1.id), 'the stream says so');
      assert.equal(await page.textContent('#agent-list li[data-agent="' + g1.id + '"] small'), 'guard · gone');
      await goTo(page, g1Last);
      await checkAgentAt(page, ref, g1.id, g1Last);
      // scout 2 and the sentry (its tree's only agent) were dropped by the
      // game without a word to the debugger: collected, they are gone too
      for (const label of ['scout 2', 'sentry']) {
        const a = [...ref.agents.values()].find((x) => x.label === label);
        assert.ok(stream.lines.some((o) => o.t === 'gone' && o.agent === a.id), label + ': the stream says so');
        assert.equal(await page.textContent('#agent-list li[data-agent="' + a.id + '"] small'), a.tree + ' · gone');
        const last = a.lines.slice(-1)[0].tick;
        await pickAgent(page, a.id);
        await goTo(page, last);
        await checkAgentAt(page, ref, a.id, last);
        assert.equal(await page.$$eval('#bb tr.add', (l) => l.length), 0, 'a gone agent is not edited');
      }
      await page.screenshot({ path: path.join(OUT, 'churn.png') });
    });

    await check('live: the arena waits for the page before its first tick', async () => {
      stream.req.destroy();
      stream = null;
      stopGame(game);
      game = null;
      const arenaGame = spawn('lua5.4', [path.join(ROOT, 'samples/arena.lua'), '--live=0', '--ticks=400'],
        { env: LUA_ENV, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        const url = await new Promise((resolve) => {
          let out = '';
          arenaGame.stdout.on('data', (d) => {
            out += d;
            const m = out.match(/live at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/);
            if (m) resolve(m[1]);
          });
        });
        // a person finding the URL: the game answers 20 requests meanwhile,
        // each in a frame of its loop (a loop that ticked would be 20 ticks
        // on by now)
        for (let i = 0; i < 20; i++) {
          const code = await new Promise((resolve, reject) => {
            http.get(url.replace('/?', '/live?'), (res) => { res.resume(); resolve(res.statusCode); })
              .on('error', reject);
          });
          assert.equal(code, 200);
        }
        await page.goto(url);
        await page.waitForSelector('body.loaded.is-live #tree li[data-path]');
        await page.waitForFunction(() => Number(document.body.dataset.tick) >= 5);
        await page.click('#live-pause');
        await page.click('#tree-head');
        await page.keyboard.press('Home');
        assert.equal(await page.evaluate(() => document.body.dataset.tick), '1', 'the page saw the first tick');
        assert.equal(await page.textContent('#agent-list li[data-agent="1"] span'), 'guard 1');
        await page.screenshot({ path: path.join(OUT, 'arena-live.png') });
      } finally {
        arenaGame.kill();
      }
    });

    assert.deepEqual(pageErrors, [], 'no script errors in the page');
  } finally {
    if (stream) stream.req.destroy();
    if (game) stopGame(game);
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log('1..' + checks + ': all passed; screenshots in ' + OUT);
}

function sent(stream) {
  return parseTrace(stream.lines.map((o) => JSON.stringify(o)).join('\n'));
}

function g2Ticks(stream, id) {
  return stream.lines.filter((o) => o.t === 'tick' && o.agent === id).length;
}

main().catch((e) => {
  console.error('not ok - ' + (e && e.stack || e));
  process.exit(1);
});
