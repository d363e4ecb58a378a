// make_trace.js: writes Bonsai trace files (docs/TRACE_FORMAT.md, format 1)
// for the viewer's browser test, until recorded arena traces take over: a
// population of guards running the guard tree of samples/guard.lua
// (patrol, chase, attack, flee, rest, alert, die), driven by a small seeded
// simulation, with a hot reload of the tree, a tick that raises an error
// and an agent frozen at a breakpoint. Also writes broken variants
// (truncated, corrupted, foreign, empty, unknown format).
//
//   node make_trace.js OUTDIR [--agents=N] [--ticks=N] [--seed=N]
// or, as a module: require('./make_trace').makeTrace({ agents, ticks })
// gives the text of the trace.
'use strict';
const fs = require('fs');
const path = require('path');

// The guard tree: [name, type, children..., params]. Version 2 adds a
// "shout" action to the fight, before the chase.
function guardSpec(version) {
  const fight = ['fight', 'reactive_selector',
    ['retreat', 'filter', ['low_health', 'check', { key: 'hp', op: '<=', value: '$flee_hp' }],
      ['flee', 'action', { leaf: 'flee' }]],
    ['strike', 'filter', ['in_reach', 'condition', { leaf: 'in_reach' }],
      ['attack', 'action', { leaf: 'attack' }]]];
  if (version >= 2) fight.push(['shout', 'action', { leaf: 'shout' }]);
  fight.push(['chase', 'action', { leaf: 'chase' }]);
  return ['', 'priority',
    ['death', 'filter', ['dead', 'check', { key: 'hp', op: '<=', value: 0 }],
      ['die', 'action', { leaf: 'die' }]],
    ['guard', 'selector',
      ['combat', 'guard', ['is_set[1]', 'is_set', { key: 'enemy', abort: 'both' }], fight],
      ['recover', 'guard', ['hurt', 'check', { key: 'hp', op: '<', value: '$max_hp' }],
        ['rest', 'action', { leaf: 'rest' }]],
      ['alert', 'guard', ['is_set[1]', 'is_set', { key: 'alarm', abort: 'both' }],
        ['hold_post', 'action', { leaf: 'hold_post' }]],
      ['patrol', 'action', { leaf: 'patrol' }]]];
}

// Flattens a spec into the pre-order node list of a tree line.
function flatten(spec) {
  const nodes = [];
  function walk(s, parent, parentPath) {
    const [name, type, ...rest] = s;
    const params = rest.length && !Array.isArray(rest[rest.length - 1]) ? rest.pop() : {};
    const hidden = parent === null && type === 'priority';
    const p = hidden ? '' : (parentPath ? parentPath + '/' + name : name);
    const node = { id: nodes.length, name: hidden ? 'priority' : name, type,
      parent, path: p, params };
    if (hidden) node.hidden = true;
    nodes.push(node);
    for (const c of rest) walk(c, node.id, p);
  }
  walk(spec, null, '');
  return nodes;
}

// A seeded generator (a 32-bit xorshift): the same seed, the same file.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

// The running paths of each mode (leaf last), and the conditions the tick
// evaluates on the way, as [path, status].
const MODES = {
  patrol: { run: ['', 'guard', 'guard/patrol'],
    evals: [['death/dead', 'failure'], ['death', 'failure'],
      ['guard/combat/is_set[1]', 'failure'], ['guard/combat', 'failure'],
      ['guard/recover/hurt', 'failure'], ['guard/recover', 'failure'],
      ['guard/alert/is_set[1]', 'failure'], ['guard/alert', 'failure']] },
  chase: { run: ['', 'guard', 'guard/combat', 'guard/combat/fight', 'guard/combat/fight/chase'],
    evals: [['guard/combat/fight/retreat/low_health', 'failure'], ['guard/combat/fight/retreat', 'failure'],
      ['guard/combat/fight/strike/in_reach', 'failure'], ['guard/combat/fight/strike', 'failure']] },
  attack: { run: ['', 'guard', 'guard/combat', 'guard/combat/fight', 'guard/combat/fight/strike',
    'guard/combat/fight/strike/attack'],
  evals: [['guard/combat/fight/retreat/low_health', 'failure'], ['guard/combat/fight/retreat', 'failure'],
    ['guard/combat/fight/strike/in_reach', 'success']] },
  flee: { run: ['', 'guard', 'guard/combat', 'guard/combat/fight', 'guard/combat/fight/retreat',
    'guard/combat/fight/retreat/flee'],
  evals: [['guard/combat/fight/retreat/low_health', 'success']] },
  rest: { run: ['', 'guard', 'guard/recover', 'guard/recover/rest'], evals: [] },
  alert: { run: ['', 'guard', 'guard/alert', 'guard/alert/hold_post'], evals: [] },
  dead: { run: ['', 'death', 'death/die'], evals: [['death/dead', 'success']] },
};
// Conditions evaluated once when a mode is entered (not every tick).
const ENTRY = {
  combat: [['guard/combat/is_set[1]', 'success']],
  rest: [['guard/combat/is_set[1]', 'failure'], ['guard/combat', 'failure'],
    ['guard/recover/hurt', 'success']],
  alert: [['guard/combat/is_set[1]', 'failure'], ['guard/combat', 'failure'],
    ['guard/recover/hurt', 'failure'], ['guard/recover', 'failure'],
    ['guard/alert/is_set[1]', 'success']],
};
const REACTIVE = { chase: true, attack: true, flee: true }; // re-checked every tick

// One guard: its simulated state and the node statuses after its last tick.
class Guard {
  constructor(id, rand, nodes) {
    this.id = id; this.rand = rand; this.tick = 0; this.time = 0;
    this.mode = 'patrol'; this.legLeft = 8 + Math.floor(rand() * 10);
    this.bb = { hp: 10, max_hp: 10, flee_hp: 3, regen: 1.5, sight: 5, reach: 1.2,
      damage: 1, swing: 1, walk_speed: 1.5, run_speed: 2.5, leg: 1 };
    this.setNodes(nodes);
    this.status = new Array(nodes.length).fill('idle');
  }
  setNodes(nodes) {
    this.nodes = nodes;
    this.byPath = new Map(nodes.map((n) => [n.path, n.id]));
  }
}

// Builds the events of one tick that takes agent g into `mode`: aborts
// (deepest first) of what no longer runs, the conditions evaluated, then
// the running path top-down ("again" when it was running already).
function tickEvents(g, mode, entry, finish) {
  const ev = [];
  const set = (id, st, again) => { ev.push([id, st, again]); g.status[id] = st; };
  const want = new Set(MODES[mode].run.map((p) => g.byPath.get(p)));
  const running = g.status.map((s, i) => (s === 'running' ? i : -1)).filter((i) => i >= 0);
  for (const id of running.reverse()) if (!want.has(id)) set(id, 'aborted', 0);
  const evals = (entry ? ENTRY[entry] || [] : []).concat(
    entry || REACTIVE[mode] || mode === 'dead' ? MODES[mode].evals : []);
  for (const [p, st] of evals) set(g.byPath.get(p), st, 0);
  for (const p of MODES[mode].run) {
    const id = g.byPath.get(p);
    set(id, 'running', g.status[id] === 'running' ? 1 : 0);
  }
  if (finish) { // the leaf finished: success up to the root
    for (const p of MODES[mode].run.slice().reverse()) set(g.byPath.get(p), finish, 0);
  }
  return ev;
}

// Advances the simulation of one guard by a tick and returns its tick line.
function step(g, ctx) {
  const r = g.rand;
  g.tick += 1;
  g.time = Math.round(g.tick * 10) / 100;
  const bbBefore = Object.assign({}, g.bb);
  const line = { t: 'tick', agent: g.id, tick: g.tick, time: g.time, version: ctx.version };
  let entry = null;
  let finish = null;
  const from = g.mode;
  const enemyAppears = () => {
    g.bb.enemy = 'hero ' + (1 + Math.floor(r() * 6));
    g.mode = 'chase'; g.reachIn = 3 + Math.floor(r() * 6); entry = 'combat';
  };
  if (g.mode === 'dead') {
    // a corpse stays a corpse
  } else if (g.mode === 'patrol' || g.mode === 'rest' || g.mode === 'alert') {
    if (r() < 0.03) enemyAppears();
    else if (g.mode !== 'alert' && ctx.alarm) { g.mode = 'alert'; entry = 'alert'; }
    else if (g.mode === 'alert' && !ctx.alarm) { g.mode = 'patrol'; entry = 'patrol'; }
    else if (g.mode === 'rest') {
      g.bb.hp = Math.min(10, Math.round((g.bb.hp + 0.15) * 100) / 100);
      if (g.bb.hp >= 10) finish = 'success';
    } else if (g.mode === 'patrol' && --g.legLeft <= 0) {
      finish = 'success'; g.legLeft = 13; g.bb.leg = g.bb.leg % 4 + 1;
    }
  } else {
    if (g.mode === 'chase' && --g.reachIn <= 0) { g.mode = 'attack'; g.bb.next_swing = g.time + 0.5; }
    if (g.mode === 'attack') {
      if (g.time >= g.bb.next_swing) g.bb.next_swing = Math.round((g.time + 1) * 100) / 100;
      if (r() < 0.15) g.bb.hp = Math.max(0, g.bb.hp - 1 - Math.floor(r() * 2));
    }
    if (g.mode === 'flee') g.fleeLeft -= 1;
    if (g.bb.hp <= 0) { g.mode = 'dead'; entry = 'dead'; }
    else if (g.mode === 'flee' && g.fleeLeft <= 0) delete g.bb.enemy;
    else if (g.mode !== 'flee' && g.bb.hp <= g.bb.flee_hp) { g.mode = 'flee'; g.fleeLeft = 6 + Math.floor(r() * 6); }
    else if (g.mode === 'attack' && r() < 0.04) delete g.bb.enemy; // the enemy fell
    if (g.mode !== 'dead' && g.bb.enemy === undefined) {
      if (g.bb.hp < g.bb.max_hp) { g.mode = 'rest'; entry = 'rest'; } else { g.mode = 'patrol'; entry = 'patrol'; }
      delete g.bb.next_swing;
    }
  }
  if ((g.mode !== from || g.tick === 1) && !entry) entry = g.mode;
  if (g.version !== ctx.version) {
    // the reload: the agent switches version in this tick; the state is
    // carried over by path
    const old = g.status.slice();
    const oldNodes = g.nodes;
    g.setNodes(ctx.nodes);
    g.status = ctx.nodes.map((n) => {
      const o = oldNodes.find((m) => m.path === n.path);
      return o ? old[o.id] : 'idle';
    });
    line.reload = { from: g.version, to: ctx.version };
  }
  g.version = ctx.version;
  if (ctx.error === g.id && g.mode === 'attack') {
    // the attack leaf raises: the running nodes are aborted deepest first
    line.events = [];
    for (let i = g.status.length - 1; i >= 0; i--) {
      if (g.status[i] === 'running') { line.events.push([i, 'aborted', 0]); g.status[i] = 'aborted'; }
    }
    line.status = 'failure';
    line.error = "tree 'guard' node 'guard/combat/fight/strike/attack': samples/guard.lua:156: attempt to index a nil value (field 'enemy')";
    ctx.error = -1;
    delete g.bb.enemy; delete g.bb.next_swing;
    g.mode = g.bb.hp < g.bb.max_hp ? 'rest' : 'patrol';
  } else {
    line.events = tickEvents(g, g.mode, entry, finish);
    line.status = finish || 'running';
  }
  if (ctx.breakAt === g.id && g.mode === 'attack' && !ctx.frozenDone) {
    line.frozen = g.byPath.get('guard/combat/fight/strike/attack');
    ctx.frozenDone = true;
    g.frozenFor = 25; // frozen: no ticks until the viewer resumes it
  }
  if (finish && g.mode === 'rest') { g.mode = 'patrol'; } // healed
  const changed = {};
  const unset = [];
  for (const k of Object.keys(g.bb)) if (g.tick === g.firstTick || bbBefore[k] !== g.bb[k]) changed[k] = g.bb[k];
  for (const k of Object.keys(bbBefore)) if (!(k in g.bb)) unset.push(k);
  if (ctx.alarmChanged || g.tick === g.firstTick) {
    if (ctx.alarm) changed.alarm = true; else if (g.tick !== g.firstTick) unset.push('alarm');
  }
  line.bb = changed;
  if (unset.length) line.unset = unset;
  if (g.tick === g.firstTick || line.reload) {
    line.state = [];
    g.status.forEach((s, i) => { if (s !== 'idle') line.state.push([i, s]); });
  }
  return line;
}

// A sentry: a parallel whose two branches run side by side (watch keeps
// running; hum succeeds every 7 ticks and starts again).
const SENTRY = flatten(['sentry', 'parallel', ['watch', 'action', { leaf: 'watch' }],
  ['hum', 'action', { leaf: 'hum' }], { success: 'all', failure: 'one' }]);

function sentryTick(id, tick) {
  const line = { t: 'tick', agent: id, tick, time: Math.round(tick * 10) / 100, version: 1, status: 'running' };
  const done = tick % 7 === 0;
  if (tick === 1) line.events = [[0, 'running', 0], [1, 'running', 0], [2, 'running', 0]];
  else if (done) line.events = [[1, 'running', 1], [2, 'success', 0]];
  else line.events = [[1, 'running', 1], [2, 'running', (tick - 1) % 7 === 0 ? 0 : 1]];
  line.bb = tick === 1 ? { beat: 0, post: 'gate ' + id } : done ? { beat: tick / 7 } : {};
  if (tick === 1) line.state = [[0, 'running'], [1, 'running'], [2, 'running']];
  return line;
}

// The whole trace as text: `agents` guards ticked `ticks` frames at 0.1 s,
// a reload at 60% of the run, an error, a breakpoint and an alarm; and
// three sentries running a parallel.
function makeTrace(opts = {}) {
  const nAgents = opts.agents || 300;
  const ticks = opts.ticks || 200;
  const seed = opts.seed || 7;
  const out = [];
  const emit = (o) => out.push(JSON.stringify(o));
  emit({ t: 'header', format: 1, bonsai: '0.2.0', started: '2026-11-24T13:30:00Z' });
  const v1 = flatten(guardSpec(1));
  const v2 = flatten(guardSpec(2));
  emit({ t: 'tree', tree: 'guard', version: 1, nodes: v1 });
  emit({ t: 'tree', tree: 'sentry', version: 1, nodes: SENTRY });
  const guards = [];
  const ctx = { version: 1, nodes: v1, error: 3, breakAt: 2, alarm: false };
  const reloadAt = Math.floor(ticks * 0.6);
  for (let f = 1; f <= ticks; f++) {
    // agents join over the first frames: thousands of agents do not all
    // start together
    // nine in ten agents start at once, the others join at frame 20
    const joining = f === 1 ? Math.ceil(nAgents * 0.9) : f === 20 ? nAgents : 0;
    while (guards.length < joining) {
      const g = new Guard(guards.length + 1, rng(seed * 1000 + guards.length * 7919), ctx.nodes);
      g.firstTick = 1; g.version = ctx.version;
      emit({ t: 'agent', agent: g.id, tree: 'guard', version: ctx.version, label: 'guard ' + g.id });
      guards.push(g);
    }
    if (f === reloadAt) {
      ctx.version = 2; ctx.nodes = v2;
      emit({ t: 'tree', tree: 'guard', version: 2, nodes: v2 });
    }
    const alarm = f >= Math.floor(ticks * 0.3) && f < Math.floor(ticks * 0.3) + 15;
    ctx.alarmChanged = alarm !== ctx.alarm;
    ctx.alarm = alarm;
    for (const g of guards) {
      if (g.frozenFor > 0) { g.frozenFor -= 1; continue; }
      emit(step(g, ctx));
    }
    for (let i = 1; i <= 3; i++) {
      const id = nAgents + i;
      if (f === 1) emit({ t: 'agent', agent: id, tree: 'sentry', version: 1, label: 'sentry ' + i });
      emit(sentryTick(id, f));
    }
  }
  emit({ t: 'end', ticks });
  return out.join('\n') + '\n';
}

// The broken variants of a trace text, by file name.
function brokenVariants(text) {
  const lines = text.split('\n');
  const cut = text.slice(0, Math.floor(text.length * 0.7));
  const corrupted = lines.slice();
  corrupted[Math.floor(lines.length / 2)] = '{"t":"tick","agent":1,"tick":' + '\u0000\u00ff garbage';
  return {
    'truncated.jsonl': cut.slice(0, cut.lastIndexOf('\n') + 40),
    'corrupted.jsonl': corrupted.join('\n'),
    'foreign.jsonl': '{"name":"my-app","version":"1.0.0","dependencies":{}}\n',
    'future.jsonl': '{"t":"header","format":7,"bonsai":"9.0"}\n',
    'empty.jsonl': '',
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--')) || '.';
  const num = (name, d) => {
    const a = args.find((x) => x.startsWith('--' + name + '='));
    return a ? Number(a.split('=')[1]) : d;
  };
  fs.mkdirSync(dir, { recursive: true });
  const text = makeTrace({ agents: num('agents', 300), ticks: num('ticks', 200), seed: num('seed', 7) });
  fs.writeFileSync(path.join(dir, 'arena.jsonl'), text);
  for (const [name, t] of Object.entries(brokenVariants(text))) fs.writeFileSync(path.join(dir, name), t);
  console.log('wrote', dir);
}

module.exports = { makeTrace, brokenVariants, flatten, guardSpec };
