// test_viewer.js: the viewer's browser test. Serves viewer/ and trace files
// from a small HTTP server on 127.0.0.1, drives the page in Debian's
// Chromium (headless, through playwright-core, no browser download) and
// checks what the page shows against a reconstruction of the trace done
// here, independently of the page's code: node statuses, blackboard and
// changed keys at given ticks, population counts, the reload, the error,
// the breakpoint, bad files, and the live mode against a fake game that
// speaks the live protocol of docs/TRACE_FORMAT.md. Writes a screenshot of
// each view into OUTDIR.
//
//   node test_viewer.js [OUTDIR]      (default: ../../build/browser-screenshots)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const assert = require('assert/strict');
const { chromium } = require('playwright-core');
const { makeTrace, brokenVariants } = require('./make_trace');

const ROOT = path.resolve(__dirname, '../..');
const VIEWER = path.join(ROOT, 'viewer');
const OUT = path.resolve(process.argv[2] || path.join(ROOT, 'build/browser-screenshots'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// ---- The reference reconstruction (docs/TRACE_FORMAT.md, "Reconstructing a tick")

function parseTrace(text) {
  const trees = new Map();
  const agents = new Map();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line);
    if (o.t === 'tree') trees.set(o.tree + '@' + o.version, o.nodes);
    if (o.t === 'agent') agents.set(o.agent, { id: o.agent, tree: o.tree, label: o.label, lines: [] });
    if (o.t === 'tick') agents.get(o.agent).lines.push(o);
  }
  return { trees, agents };
}

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

function population(ref, tree, n) {
  const counts = {};
  let agents = 0;
  for (const a of ref.agents.values()) {
    if (a.tree !== tree) continue;
    const r = reconstruct(ref, a, n);
    if (!r) continue;
    agents++;
    for (const [p, s] of Object.entries(r.byPath)) if (s === 'running') counts[p] = (counts[p] || 0) + 1;
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

// ---- A fake game for the live mode ------------------------------------------------
// Replays the generated trace frame by frame (one frame every 30 ms) as the
// live protocol says: a new client first gets the header, the trees, the
// agents and each agent's last tick line (with state, and the whole
// blackboard in bb), then every new line.
// Commands are recorded; "set" writes the key into the agent's next tick line.

function fakeGame(text) {
  const lines = text.trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.t !== 'end');
  const game = { commands: [], sent: [], clients: new Set(), known: [], last: new Map(), pending: [], at: 0,
    frozen: new Map(), held: new Map() };
  const send = (o) => {
    const s = JSON.stringify(o);
    for (const c of game.clients) c.write('data: ' + s + '\n\n');
  };
  // a tick line goes out: pending "set" commands of its agent land in it
  const tick = (o) => {
    for (const c of game.pending.filter((x) => x.agent === o.agent)) {
      if (c.value === null) (o.unset = o.unset || []).push(c.key); else o.bb[c.key] = c.value;
    }
    game.pending = game.pending.filter((x) => x.agent !== o.agent);
    // what a new client gets for this agent: the line with the whole state
    const prev = game.last.get(o.agent);
    const bb = Object.assign({}, prev && prev.bb, o.bb);
    for (const k of o.unset || []) delete bb[k];
    const status = prev && !o.state ? prev.status.slice() : [];
    if (o.state) for (const [id, s] of o.state) status[id] = s;
    else for (const [id, s] of o.events) status[id] = s;
    const state = [];
    status.forEach((s, id) => { if (s && s !== 'idle') state.push([id, s]); });
    game.last.set(o.agent, { line: Object.assign({}, o, { bb, state, unset: undefined }), bb, status });
    game.sent.push(o);
    send(o);
  };
  game.timer = setInterval(() => {
    // one frame: the lines up to the next tick of agent 1
    let seenFirst = false;
    while (game.at < lines.length) {
      const o = lines[game.at];
      if (o.t === 'tick' && o.agent === 1) {
        if (seenFirst) break;
        seenFirst = true;
      }
      game.at++;
      if (o.t !== 'tick') {
        game.known.push(o);
        send(o);
      } else if (game.frozen.has(o.agent)) {
        game.held.get(o.agent).push(o); // frozen: not ticked
      } else {
        tick(o);
        if (o.frozen !== undefined) { game.frozen.set(o.agent, o.frozen); game.held.set(o.agent, []); }
      }
    }
  }, 30);
  // resume: the agent runs again; step: one tick, then frozen again
  const release = (c) => {
    const held = game.held.get(c.agent) || [];
    if (c.cmd === 'resume') {
      game.frozen.delete(c.agent);
      held.splice(0).forEach(tick);
    } else if (held.length) {
      const o = held.shift();
      o.frozen = game.frozen.get(c.agent);
      tick(o);
    }
  };
  game.handler = (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/live') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"live":true}');
    } else if (url.pathname === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      for (const o of game.known) res.write('data: ' + JSON.stringify(o) + '\n\n');
      for (const l of game.last.values()) res.write('data: ' + JSON.stringify(l.line) + '\n\n');
      game.clients.add(res);
      req.on('close', () => game.clients.delete(res));
    } else if (url.pathname === '/command' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        const c = JSON.parse(body);
        game.commands.push(c);
        if (c.cmd === 'set') game.pending.push(c);
        if (c.cmd === 'resume' || c.cmd === 'step') release(c);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      });
    } else {
      serveFile(res, path.join(VIEWER, path.basename(url.pathname === '/' ? 'index.html' : url.pathname)));
    }
  };
  game.stop = () => {
    clearInterval(game.timer);
    for (const c of game.clients) c.end();
  };
  return game;
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
  const leaves = r.nodes.filter((n) => r.byPath[n.path] === 'running' &&
    !r.nodes.some((c) => c.parent === n.id && r.byPath[c.path] === 'running')).map((n) => n.path);
  assert.deepEqual(s.running, leaves, 'running nodes of agent ' + id + ' at tick ' + tick);
  return { s, r };
}

let checks = 0;
async function check(name, fn) {
  const t0 = Date.now();
  await fn();
  checks++;
  console.log('ok ' + checks + ' - ' + name + ' (' + (Date.now() - t0) + ' ms)');
}

// ---- The test -------------------------------------------------------------------

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-viewer-'));
  const text = makeTrace({ agents: 400, ticks: 200 });
  fs.writeFileSync(path.join(tmp, 'arena.jsonl'), text);
  for (const [name, t] of Object.entries(brokenVariants(text))) fs.writeFileSync(path.join(tmp, name), t);
  const ref = parseTrace(text);

  // the agents and ticks of the story: a guard whose patrol a sighting
  // aborts, the agent that reloads, the error and the breakpoint
  const ids = (fn) => [...ref.agents.values()].filter((a) => a.lines.some(fn));
  const errorAgent = ids((l) => l.error)[0];
  const errorTick = errorAgent.lines.find((l) => l.error).tick;
  const frozenAgent = ids((l) => l.frozen !== undefined)[0];
  const frozenTick = frozenAgent.lines.find((l) => l.frozen !== undefined).tick;
  const patrolId = ref.trees.get('guard@1').find((n) => n.path === 'guard/patrol').id;
  const sighted = (l) => l.version === 1 && l.bb.enemy && l.events.some(([id, s]) => id === patrolId && s === 'aborted');
  const story = ids(sighted)[0];
  const storyTick = story.lines.find(sighted).tick;
  const reloadTick = story.lines.find((l) => l.reload).tick;

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
  let liveServer = null;
  try {
    const page = context.pages()[0] || await context.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await check('a served trace (?trace=URL) loads', async () => {
      const t0 = Date.now();
      await page.goto(base + 'index.html?trace=traces/arena.jsonl');
      await page.waitForSelector('body.loaded #tree li[data-path]');
      console.log('# 400 agents x 200 ticks indexed and drawn in ' + (Date.now() - t0) + ' ms');
      assert.equal(await page.isVisible('#message'), false, 'no message for a good trace');
      assert.equal(await page.textContent('#agent-count'), '400');
    });

    await check('agent ' + story.id + ' stepped to tick ' + storyTick + ' (the patrol aborted)', async () => {
      await pickAgent(page, story.id);
      await goTo(page, storyTick - 2);
      await checkAgentAt(page, ref, story.id, storyTick - 2);
      await page.keyboard.press('ArrowRight');
      await checkAgentAt(page, ref, story.id, storyTick - 1);
      await page.keyboard.press('ArrowRight');
      const { s, r } = await checkAgentAt(page, ref, story.id, storyTick);
      assert.equal(s.status['guard/patrol'], 'aborted');
      assert.ok(s.changed.includes('enemy'), 'enemy highlighted as changed');
      assert.ok(r.line.bb.enemy);
      const events = await page.$$eval('#events li', (l) => l.map((x) => x.textContent));
      assert.ok(events.some((e) => e.startsWith('patrol') && e.endsWith('aborted')), 'the patrol abort is listed');
      await page.screenshot({ path: path.join(OUT, 'agent.png') });
      await page.keyboard.press('ArrowLeft');
      await checkAgentAt(page, ref, story.id, storyTick - 1);
    });

    await check('every tick of one agent matches the reconstruction (keyframes)', async () => {
      for (const t of [1, 2, 15, 16, 17, 33, 64, 100, 150, 199, 200]) {
        await goTo(page, t);
        await checkAgentAt(page, ref, story.id, t);
      }
    });

    await check('the reload switches the tree version at tick ' + reloadTick, async () => {
      await goTo(page, reloadTick - 1);
      let s = await shown(page);
      assert.match(s.head, /version 1 of 1, 2/);
      assert.equal(s.status['guard/combat/fight/shout'], undefined);
      await page.keyboard.press('ArrowRight');
      s = await checkAgentAt(page, ref, story.id, reloadTick).then((x) => x.s);
      assert.match(s.head, /version 2 of 1, 2/);
      assert.ok('guard/combat/fight/shout' in s.status, 'version 2 has the shout node');
      assert.match(await page.textContent('#tick-info'), /version 1 → 2/);
    });

    await check('the error of agent ' + errorAgent.id + ' at tick ' + errorTick, async () => {
      await pickAgent(page, errorAgent.id);
      await goTo(page, errorTick);
      await checkAgentAt(page, ref, errorAgent.id, errorTick);
      const err = await page.textContent('.tick-error');
      assert.ok(err.includes(errorAgent.lines.find((l) => l.error).error), 'the error message is shown');
    });

    await check('the breakpoint of agent ' + frozenAgent.id + ' at tick ' + frozenTick, async () => {
      await pickAgent(page, frozenAgent.id);
      await goTo(page, frozenTick);
      await checkAgentAt(page, ref, frozenAgent.id, frozenTick);
      assert.match(await page.textContent('#frozen'), /Frozen at the breakpoint on guard\/combat\/fight\/strike\/attack/);
      assert.equal(await page.getAttribute('li[data-path="guard/combat/fight/strike/attack"] > .row', 'class'),
        'row bp-on');
      // frozen, it was not ticked: its next tick (its own count) is the
      // first after the resume, and it is no longer frozen
      await page.keyboard.press('ArrowRight');
      await checkAgentAt(page, ref, frozenAgent.id, frozenTick + 1);
      assert.equal(await page.isVisible('#frozen'), false);
      await goTo(page, frozenTick);
      await page.screenshot({ path: path.join(OUT, 'breakpoint.png') });
    });

    await check('running list, node search and collapsing', async () => {
      await pickAgent(page, story.id);
      await goTo(page, storyTick);
      const leaf = await page.textContent('#running li[data-path] small');
      await page.click('#running li[data-path]');
      assert.ok(await page.isVisible('li[data-path="' + leaf + '"] > .row.flash'));
      await page.fill('#node-search', 'attack');
      assert.equal(await page.textContent('#node-matches'), '1 match');
      await page.fill('#node-search', 'action');
      const actions = reconstruct(ref, story, storyTick).nodes.filter((n) => n.type === 'action').length;
      assert.equal(await page.textContent('#node-matches'), actions + ' matches');
      await page.fill('#node-search', '');
      await page.click('li[data-path="guard/combat"] > .row .twist');
      assert.equal(await page.isVisible('li[data-path="guard/combat/fight"]'), false);
      await page.click('li[data-path="guard/combat"] > .row .twist');
      assert.equal(await page.isVisible('li[data-path="guard/combat/fight"]'), true);
      // a running node inside a collapsed subtree: one click opens it
      await page.click('li[data-path="guard"] > .row .twist');
      await page.click('#running li[data-path]');
      assert.equal(await page.isVisible('li[data-path="' + leaf + '"]'), true);
      // the agent picker narrows thousands of names
      await page.fill('#agent-search', 'guard 39');
      assert.equal(await page.$$eval('#agent-list li[data-agent]', (l) => l.length), 11);
      await page.fill('#agent-search', '');
      assert.equal(await page.$$eval('#agent-list li[data-agent]', (l) => l.length), 200);
    });

    await check('population counts equal the ones computed from the file', async () => {
      await page.click('#mode-pop');
      for (const t of [1, 50, storyTick, reloadTick, 150, 200]) {
        await goTo(page, t);
        const want = population(ref, 'guard', t);
        const got = await page.evaluate(() => {
          const c = {};
          for (const li of document.querySelectorAll('#tree li[data-path]')) {
            if (Number(li.dataset.count)) c[li.dataset.path] = Number(li.dataset.count);
          }
          return { counts: c, agents: Number(document.getElementById('tree-head').dataset.agents) };
        });
        const shownPaths = await page.$$eval('#tree li[data-path]', (l) => l.map((x) => x.dataset.path));
        const expected = {};
        for (const p of shownPaths) if (want.counts[p]) expected[p] = want.counts[p];
        assert.equal(got.agents, want.agents, 'agents at tick ' + t);
        assert.deepEqual(got.counts, expected, 'population at tick ' + t);
      }
      await goTo(page, 70);
      await page.screenshot({ path: path.join(OUT, 'population.png') });
      await page.click('#mode-agent');
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
        await page.waitForSelector('#message:not([hidden])');
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

    await check('file:// page: the file picker and drag and drop', async () => {
      await page.goto('file://' + path.join(VIEWER, 'index.html'));
      assert.equal(await page.isVisible('#welcome'), true);
      await page.setInputFiles('#file', path.join(tmp, 'arena.jsonl'));
      await page.waitForSelector('body.loaded #tree li[data-path]');
      await pickAgent(page, story.id);
      await goTo(page, storyTick);
      await checkAgentAt(page, ref, story.id, storyTick);
      await page.evaluate((content) => {
        const dt = new DataTransfer();
        dt.items.add(new File([content], 'dropped.jsonl'));
        document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, fs.readFileSync(path.join(tmp, 'foreign.jsonl'), 'utf8'));
      await page.waitForSelector('#message.error');
      assert.match(await page.textContent('#message'), /dropped.jsonl: .*not a Bonsai trace/);
    });

    await check('live: follows the game, pauses, scrubs back, resumes, sends commands', async () => {
      game = fakeGame(makeTrace({ agents: 30, ticks: 400, seed: 11 }));
      liveServer = await listen(game.handler);
      await page.goto('http://127.0.0.1:' + liveServer.address().port + '/');
      await page.waitForSelector('body.loaded.is-live #tree li[data-path]');
      assert.equal(await page.textContent('#live-state'), 'live');
      const tickNow = () => page.evaluate(() => Number(document.body.dataset.tick));
      const t1 = await tickNow();
      await page.waitForFunction((t) => Number(document.body.dataset.tick) >= t + 5, t1);
      // pause: the page stays at its tick while the game goes on
      await page.click('#live-pause');
      const paused = await tickNow();
      await page.waitForTimeout(300);
      assert.equal(await tickNow(), paused, 'paused');
      await page.click('#tree-head');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await tickNow(), paused - 2, 'scrubbed back');
      // what the page shows is what the game sent
      const sent = parseTrace(game.known.concat(game.sent).map((o) => JSON.stringify(o)).join('\n'));
      await checkAgentAt(page, sent, 1, paused - 2);
      await page.click('#live-pause');
      await page.waitForFunction((t) => Number(document.body.dataset.tick) > t, paused);
      // edit a blackboard value: it reaches the game and comes back in a tick
      await page.click('#bb tr[data-key="hp"] td');
      await page.fill('#bb tr[data-key="hp"] input', '7.25');
      await page.press('#bb tr[data-key="hp"] input', 'Enter');
      const landed = () => game.sent.find((o) => o.agent === 1 && o.bb.hp === 7.25);
      for (let i = 0; i < 100 && !landed(); i++) await page.waitForTimeout(50);
      assert.ok(landed(), 'the game wrote the value into a tick');
      await page.click('#live-pause');
      await goTo(page, landed().tick);
      assert.equal(await page.getAttribute('#bb tr[data-key="hp"]', 'data-value'), '7.25');
      assert.equal(await page.getAttribute('#bb tr[data-key="hp"]', 'class'), 'changed');
      await page.click('#live-pause');
      const set = game.commands.find((c) => c.cmd === 'set');
      assert.deepEqual(set, { cmd: 'set', agent: 1, key: 'hp', value: 7.25 });
      // a breakpoint on a node
      await page.click('li[data-path="guard/combat/fight/chase"] > .row .bp');
      assert.deepEqual(game.commands.find((c) => c.cmd === 'break'),
        { cmd: 'break', tree: 'guard', node: 'guard/combat/fight/chase', on: true });
      await page.screenshot({ path: path.join(OUT, 'live.png') });
    });

    await check('live: a frozen agent is resumed and stepped from the page', async () => {
      // agent 2 of the fake game freezes at a breakpoint (make_trace)
      await pickAgent(page, 2);
      await page.waitForSelector('#agent-resume', { timeout: 15000 });
      await page.click('#agent-step');
      await page.click('#agent-resume');
      assert.ok(game.commands.some((c) => c.cmd === 'step' && c.agent === 2));
      assert.ok(game.commands.some((c) => c.cmd === 'resume' && c.agent === 2));
      assert.ok(game.commands.some((c) => c.cmd === 'record' && c.agent === 2 && c.on === true));
    });

    assert.deepEqual(pageErrors, [], 'no script errors in the page');
  } finally {
    if (game) game.stop();
    if (liveServer) liveServer.close();
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log('1..' + checks + ': all passed; screenshots in ' + OUT);
}

main().catch((e) => {
  console.error('not ok - ' + (e && e.stack || e));
  process.exit(1);
});
