// viewer.js: the page of the Bonsai trace viewer. Opens a trace (file
// picker, drag and drop, ?trace=URL) or a live game (GET /live, events on
// /events, commands to POST /command, as docs/TRACE_FORMAT.md says), and
// draws the selected agent at the selected tick: the tree coloured by
// status (nodes the tick did not visit faded; or by how many agents run
// each node), the timeline with node lanes, the events, the blackboard,
// the running nodes; live, breakpoints and watches. trace.js does the
// reading; docs/DEBUGGER.md tells what the page shows. A coverage report
// of the test kit opens the same ways and is drawn by coverage.js.
'use strict';

const $ = (id) => document.getElementById(id);
const AGENTS_SHOWN = 200; // the agent list shows this many matches at most

const ui = {
  trace: null,
  agent: null,           // the selected agent record
  tick: 0,
  mode: 'agent',         // 'agent', 'population', 'profile' or 'edit' (edit.js)
  collapsed: new Set(),  // "tree/path" of collapsed nodes
  treeKey: null,         // "name@version" of the tree drawn
  rows: [],              // by node id: { li, row, count }
  search: '',
  popPath: null,         // population: the node whose agents are listed
  nodePath: null,        // the node the Node panel shows (its name clicked)
  matches: [],
  matchAt: -1,
  live: null,            // { es, paused } in live mode
  breakpoints: new Set(),// "tree\npath\nstatus" (status "" for any event)
  watches: [],           // { key, op, value, agent, text }: break when true
  forces: [],            // { tree, node, status, ticks, agent, who } sent (live)
  faults: new Map(),     // agent id -> { version, list }: its faults, as its last line says
  pending: false,
  followed: null,        // agent, tree version and running node scrolled to
  loads: 0,              // files opened: only the last one read is shown
  lanes: [],             // paths of the nodes whose history the timeline shows
  histories: new Map(),  // "agent\npath" -> { changes, ticks: [[tick, code]] }
  coverage: null,        // coverage.js's state while a coverage report is shown
  step: null,            // { key: "agent@tick", at } while a stepped tick is shown
};

// ---- Messages and loading -------------------------------------------------

// A message over the page; one given 'seconds' goes away by itself then
// (unless another replaced it): news of a command stays news.
let messageTimer = null;
function showMessage(text, kind, seconds) {
  const m = $('message');
  m.hidden = !text;
  m.textContent = text || '';
  m.className = kind || '';
  clearTimeout(messageTimer);
  if (seconds) messageTimer = setTimeout(() => showMessage('', ''), seconds * 1000);
}

async function loadText(text, name) {
  if (ui.live) stopLive(); // a file opened on a live page replaces the game
  const mine = ++ui.loads; // a file opened meanwhile replaces this one
  let report = null;
  try {
    report = readCoverage(text);
  } catch (e) {
    document.body.classList.remove('loaded');
    showMessage(name + ': ' + e.message, 'error');
    return;
  }
  if (report) {
    showMessage('', '');
    return startCoverage(report, name);
  }
  const { trace, problem } = await readTrace(text, (f) => {
    if (mine === ui.loads) showMessage('Reading ' + name + ': ' + Math.round(100 * f) + '%…', 'info');
  });
  if (mine !== ui.loads) return;
  $('source').textContent = name;
  if (problem && problem.fatal) {
    ui.trace = null;
    document.body.classList.remove('loaded');
    showMessage(name + ': ' + problem.message, 'error');
    return;
  }
  showMessage(problem ? problem.message : '', problem ? 'warn' : '');
  start(trace);
}

function start(trace) {
  if (ui.coverage) stopCoverage();
  ui.trace = trace;
  ui.agent = null;
  ui.tick = 0;
  ui.treeKey = null;
  ui.popPath = null;
  document.body.classList.add('loaded');
  const params = new URLSearchParams(location.search);
  const wanted = trace.agents.get(Number(params.get('agent')));
  selectAgent(wanted || trace.agentList.find((a) => a.ticks.length) || trace.agentList[0] || null);
  if (params.has('tick')) setTick(Number(params.get('tick')));
  renderAgents();
}

function loadFile(file) {
  file.text().then((text) => loadText(text, file.name),
    (e) => showMessage('Cannot read ' + file.name + ': ' + e.message, 'error'));
}

// The token of the game that served the page (its URL's ?token=, as the
// game printed it): sent with every request to the game (docs/DEBUGGER.md,
// "Security"), never to another site.
const TOKEN = new URLSearchParams(location.search).get('token') || '';
function tokened(url) {
  if (!TOKEN || new URL(url, location.href).origin !== location.origin) return url;
  return url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(TOKEN);
}

async function loadURL(url) {
  $('source').textContent = url;
  try {
    const r = await fetch(tokened(url), { cache: 'no-store' });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    await loadText(await r.text(), url);
  } catch (e) {
    showMessage('Cannot load ' + url + ': ' + e.message, 'error');
  }
}

// ---- Selection --------------------------------------------------------------

function selectAgent(a) {
  ui.agent = a;
  if (a) {
    const last = a.ticks[a.ticks.length - 1];
    if (!ui.tick || ui.live && !ui.live.paused) ui.tick = last || 0;
    if (ui.live) command({ cmd: 'record', agent: a.id, on: true }, true);
  }
  renderAgents();
  render();
}

function setTick(t) {
  const tr = ui.trace;
  if (!tr || !isFinite(t)) return;
  ui.tick = Math.max(tr.minTick, Math.min(tr.maxTick, Math.round(t)));
  render();
}

// Goes to tick t by the user's hand: in live mode that pauses following.
function jump(t) {
  if (!ui.trace) return;
  if (ui.live && !ui.live.paused) pauseLive(true);
  setTick(t);
}

// Moves by `d` ticks, or to the previous/next mark of the agent (any kind).
function step(d, toMark) {
  if (!ui.trace) return;
  if (!toMark || !ui.agent) return jump(ui.tick + d);
  const ticks = ui.agent.marks.map((m) => m[0]);
  const t = d > 0 ? ticks.find((x) => x > ui.tick) : ticks.filter((x) => x < ui.tick).pop();
  if (t !== undefined) jump(t);
}

// ---- Agent list -------------------------------------------------------------

function renderAgents() {
  const tr = ui.trace;
  const list = $('agent-list');
  list.textContent = '';
  if (!tr) return;
  const q = $('agent-search').value.trim().toLowerCase();
  const hits = q ? tr.agentList.filter((a) => a.label.toLowerCase().includes(q) || String(a.id) === q)
    : tr.agentList;
  $('agent-count').textContent = q ? hits.length + ' of ' + tr.agentList.length : tr.agentList.length;
  for (const a of hits.slice(0, AGENTS_SHOWN)) {
    const li = document.createElement('li');
    li.dataset.agent = a.id;
    li.className = a === ui.agent ? 'sel' : '';
    li.innerHTML = '<span></span><small></small>';
    li.firstChild.textContent = a.label;
    li.lastChild.textContent = a.tree + (a.marks.some((m) => m[1] === 'error') ? ' · error' : '') +
      (a.gone ? ' · gone' : '');
    li.classList.toggle('gone', !!a.gone);
    li.onclick = () => selectAgent(a);
    list.appendChild(li);
  }
  if (hits.length > AGENTS_SHOWN) {
    const li = document.createElement('li');
    li.className = 'more';
    li.textContent = (hits.length - AGENTS_SHOWN) + ' more: narrow the search';
    list.appendChild(li);
  }
}

// ---- The tree -----------------------------------------------------------------

// A check's right operand: another key ("$key") or a constant.
function refKey(p) {
  return typeof p.value === 'string' && p.value[0] === '$' ? p.value.slice(1) : null;
}

// A script's source on one line, cut to 60 characters.
function sourceText(s) {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? one.slice(0, 59) + '…' : one;
}

// The scripts of a node that is no check: its own, then its conditions'
// ('skip_if "hp > 10"'); '' when it has none.
function scriptText(n) {
  const out = [];
  if (n.script && !isCheck(n)) out.push(sourceText(n.script));
  for (const [k, v] of Object.entries(n.conditions || {})) out.push(k + ' "' + sourceText(v) + '"');
  return out.join(', ');
}

// The values the keys of a node's scripts held as the tick (or the step)
// left them: 'deal 5, stock 0'.
function keysText(n, bb) {
  return (n.keys || []).map((k) => k + ' ' + valueText(bb[k])).join(', ');
}

function paramText(n) {
  const p = n.params;
  const out = [];
  const script = scriptText(n);
  if (script) out.push(script);
  if (p.key !== undefined) {
    out.push(p.key + (p.op ? ' ' + p.op + ' ' + (refKey(p) !== null ? p.value : JSON.stringify(p.value)) : ''));
  }
  if (p.leaf !== undefined && p.leaf !== n.name) out.push(p.leaf);
  for (const k of ['times', 'seconds', 'success', 'failure', 'abort']) {
    if (p[k] !== undefined) out.push(k + ' ' + p[k]);
  }
  return out.join(', ');
}

// Builds the DOM of one tree version; rows keep their collapsed state by path.
function buildTree(t) {
  const box = $('tree');
  box.textContent = '';
  ui.rows = [];
  const make = (id) => {
    const n = t.nodes[id];
    const li = document.createElement('li');
    li.dataset.id = id;
    li.dataset.path = n.path;
    const row = document.createElement('div');
    row.className = 'row';
    row.innerHTML = '<button class="twist"></button><span class="bp" title="Breakpoint"></span>' +
      '<span class="chip"></span><span class="name"></span><span class="type"></span>' +
      '<span class="params"></span><span class="count"></span>';
    row.children[3].textContent = n.hidden ? '(priority section)' : n.name;
    row.children[4].textContent = n.type;
    row.children[5].textContent = paramText(n);
    row.title = n.path || '(the hidden priority wrapper)';
    li.appendChild(row);
    if (n.children.length) {
      li.classList.add('parent');
      row.children[0].onclick = () => toggle(n.path);
      const ul = document.createElement('ul');
      for (const c of n.children) ul.appendChild(make(c));
      li.appendChild(ul);
    }
    row.children[1].title = 'Breakpoint: click for any event of the node, Shift+click for its failures';
    row.children[1].onclick = (e) => toggleBreakpoint(t.name, n.path, e.shiftKey ? 'failure' : '');
    row.children[3].onclick = () => {
      if (ui.coverage) return pickCoverageNode(n.path);
      ui.nodePath = n.path;
      if (ui.mode === 'agent') return toggleLane(n.path);
      ui.popPath = n.path;
      renderPopAgents();
    };
    ui.rows[id] = { li, row, params: row.children[5], count: row.children[6] };
    return li;
  };
  const ul = document.createElement('ul');
  ul.className = 'tree';
  t.nodes.filter((n) => n.parent === null).forEach((n) => ul.appendChild(make(n.id)));
  box.appendChild(ul);
  ui.treeKey = t.name + '@' + t.version;
  ui.tree = t;
  fillForceNodes(t);
  applyCollapsed();
  applySearch();
}

function applyCollapsed() {
  const t = ui.tree;
  t.nodes.forEach((n, id) => ui.rows[id].li.classList.toggle('collapsed',
    ui.collapsed.has(t.name + '\n' + n.path)));
}

function toggle(path) {
  const k = ui.tree.name + '\n' + path;
  if (ui.collapsed.has(k)) ui.collapsed.delete(k); else ui.collapsed.add(k);
  applyCollapsed();
}

// Expands the ancestors of a node, scrolls to it and flashes it.
function reveal(path) {
  const t = ui.tree;
  let id = t.byPath.get(path);
  if (id === undefined) return;
  const target = ui.rows[id].row;
  for (let p = t.nodes[id].parent; p !== null; p = t.nodes[p].parent) {
    ui.collapsed.delete(t.name + '\n' + t.nodes[p].path);
  }
  applyCollapsed();
  target.scrollIntoView({ block: 'center' });
  target.classList.remove('flash');
  void target.offsetWidth; // restart the animation
  target.classList.add('flash');
}

function applySearch() {
  const t = ui.tree;
  if (!t) return;
  const q = ui.search.trim().toLowerCase();
  ui.matches = [];
  t.nodes.forEach((n, id) => {
    const hit = q !== '' && (n.name.toLowerCase().includes(q) || n.type.toLowerCase().includes(q));
    ui.rows[id].row.classList.toggle('match', hit);
    if (hit) ui.matches.push(n.path);
  });
  $('tree').classList.toggle('searching', q !== '');
  const count = ui.matches.length;
  $('node-matches').textContent = q ? count + ' match' + (count === 1 ? '' : 'es') : '';
  if (q) for (const p of ui.matches) {
    for (let i = t.nodes[t.byPath.get(p)].parent; i !== null; i = t.nodes[i].parent) {
      ui.collapsed.delete(t.name + '\n' + t.nodes[i].path);
    }
  }
  applyCollapsed();
}

// Large trees: collapses every subtree whose root the agent does not run
// at the tick (what runs stays open down to its leaves), or none.
function fold(toRunning) {
  const t = ui.tree;
  if (!t) return;
  const view = ui.agent && ui.trace.stateAt(ui.agent, ui.tick);
  for (const n of t.nodes) {
    const k = t.name + '\n' + n.path;
    if (toRunning && n.children.length && !(view && view.status[n.id] === 1)) ui.collapsed.add(k);
    else ui.collapsed.delete(k);
  }
  applyCollapsed();
}

function nextMatch() {
  if (!ui.matches.length) return;
  ui.matchAt = (ui.matchAt + 1) % ui.matches.length;
  reveal(ui.matches[ui.matchAt]);
}

// Heat colour for a share 0..1 of the agents: pale to deep blue (red
// means failure everywhere else).
function heat(f) {
  return 'hsl(205, 85%, ' + Math.round(94 - 32 * f) + '%)';
}

// A value of the blackboard in a check's text ("nil" when unset), cut to
// 40 characters.
function valueText(v) {
  const s = v === undefined ? 'nil' : JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 39) + '…' : s;
}

// A check with what its operands held at the end of the tick:
// 'hp(2) <= flee_hp(3)', 'enemy("wolf") is set'.
function checkText(n, bb) {
  const p = n.params;
  const left = p.key + '(' + valueText(bb[p.key]) + ')';
  if (n.type === 'is_set') return left + ' is set';
  const ref = refKey(p);
  return left + ' ' + p.op + ' ' + (ref !== null ? ref + '(' + valueText(bb[ref]) + ')' : JSON.stringify(p.value));
}

const isCheck = (n) => n.type === 'check' || n.type === 'is_set';

// The version agent a ran at tick N (undefined before its first tick): its
// current one when N is at or after its last tick (live: no replay).
function versionAt(a, tick) {
  const last = a.ticks[a.ticks.length - 1];
  if (last === undefined) return undefined;
  if (last <= tick) return a.cur.version;
  const v = ui.trace.stateAt(a, tick);
  return v ? v.version : undefined;
}

// The versions the agents of a tree run at the tick, when more than one
// (after an apply to some agents first): ' Versions: v2 (5 agents), v3 (1: guard 3).'
function versionsText(name) {
  const by = new Map();
  for (const a of ui.trace.agentList) {
    if (a.tree !== name || a.gone) continue;
    const version = versionAt(a, ui.tick);
    if (version === undefined) continue;
    if (!by.has(version)) by.set(version, []);
    by.get(version).push(a.label);
  }
  if (by.size < 2) return '';
  const parts = [...by.keys()].sort((x, y) => x - y).map((v) => {
    const l = by.get(v);
    return 'v' + v + ' (' + (l.length <= 3 ? l.join(', ') : l.length + ' agents') + ')';
  });
  return ' Versions: ' + parts.join(', ') + '.';
}

function paintTree(view) {
  const t = ui.tree;
  const pop = ui.mode === 'population' ? ui.trace.population(t.name, ui.tick) : null;
  // the nodes this tick visited: the others keep a status from an earlier
  // tick, and look faded so that it does not pass for this tick's
  const events = view && view.tick === ui.tick ? view.line.events || [] : [];
  const shown = view && view.step ? events.slice(0, view.step.at + 1) : events;
  const visited = new Set(shown.map((e) => e[0]));
  const here = view && view.step && view.step.at < events.length ? events[view.step.at][0] : -1;
  const forced = forcedNodes(view);
  t.nodes.forEach((n, id) => {
    const r = ui.rows[id];
    const st = view ? STATUSES[view.status[id]] : 'idle';
    const stale = !pop && ui.mode !== 'profile' && st !== 'idle' && !visited.has(id);
    r.li.dataset.status = st;
    r.li.classList.toggle('stale', stale);
    r.row.classList.toggle('lane-on', ui.lanes.includes(n.path));
    r.row.classList.toggle('forced', forced.has(id));
    r.row.classList.toggle('step-here', id === here);
    r.row.title = (n.path || '(the hidden priority wrapper)') +
      (stale ? ': not visited in this tick (' + st + ' since an earlier tick)' : '');
    if (isCheck(n)) r.params.textContent = view && !pop ? checkText(n, view.bb) : paramText(n);
    else if (n.keys) {
      r.params.textContent = paramText(n) + (view && !pop ? ' — ' + keysText(n, view.bb) : '');
    }
    r.row.classList.toggle('bp-on', ui.breakpoints.has(t.name + '\n' + n.path + '\n') ||
      (view && view.line.frozen === id));
    r.row.classList.toggle('bp-fail', ui.breakpoints.has(t.name + '\n' + n.path + '\nfailure'));
    if (pop) {
      const c = pop.count(n.path);
      r.li.dataset.count = c;
      r.count.textContent = c ? c + (pop.agents ? ' · ' + Math.round(100 * c / pop.agents) + '%' : '') : '';
      r.row.style.setProperty('--heat', c ? heat(c / Math.max(1, pop.agents)) : 'transparent');
    } else {
      delete r.li.dataset.count;
      r.count.textContent = '';
      r.row.style.removeProperty('--heat');
    }
  });
  document.body.classList.toggle('population', !!pop);
  document.body.classList.toggle('profile', ui.mode === 'profile');
  if (ui.mode === 'profile') return paintProfile(t);
  const head = $('tree-head');
  if (pop) {
    head.textContent = 'Population of tree ' + t.name + ' at tick ' + ui.tick + ': ' + pop.agents +
      ' agents; each node shows how many of them run it.' + versionsText(t.name);
    head.dataset.agents = pop.agents;
  } else {
    head.textContent = 'Tree ' + t.name + ', version ' + t.version +
      (ui.trace.versions.get(t.name).length > 1 ? ' of ' + ui.trace.versions.get(t.name).join(', ') : '');
  }
}

// ---- Profile ------------------------------------------------------------------
// The tree's profile (tree:profile: calls and time per node over every agent)
// as a heat over the tree: the deeper the teal, the more of the time.

function micros(secs) {
  const us = secs * 1e6;
  return (us >= 100 ? Math.round(us) : us.toFixed(1)) + ' µs';
}

function profileHeat(f) {
  return 'hsl(175, 65%, ' + Math.round(95 - 40 * f) + '%)';
}

function paintProfile(t) {
  const p = ui.trace.profile(t.name, t.version);
  let max = 0;
  if (p) for (const c of p.byId.values()) max = Math.max(max, c.runtime + c.leaf);
  t.nodes.forEach((n, id) => {
    const r = ui.rows[id];
    const c = p && p.byId.get(id);
    const secs = c ? c.runtime + c.leaf : 0;
    r.li.dataset.calls = c ? c.calls : 0;
    r.count.textContent = c ? c.calls + ' calls · ' + micros(secs) +
      (c.leaf > 0 ? ' (leaf ' + micros(c.leaf) + ')' : '') +
      (p.time > 0 ? ' · ' + Math.round(100 * secs / p.time) + '%' : '') : '';
    r.row.style.setProperty('--heat', secs > 0 ? profileHeat(secs / max) : 'transparent');
  });
  const head = $('tree-head');
  head.dataset.ticks = p ? p.ticks : 0;
  head.textContent = p
    ? 'Profile of tree ' + t.name + ', version ' + t.version + ': ' + p.ticks + ' agent ticks, ' +
      micros(p.ticks ? p.time / p.ticks : 0) + ' a tick' + (p.on ? '' : ' (stopped)') +
      '; each node: calls, time (the leaf\'s own), share of the time.'
    : 'No profile of tree ' + t.name + ', version ' + t.version +
      ' here: the game starts one with tree:profile(true) (docs/DEBUGGER.md).';
}

// ---- Panels -------------------------------------------------------------------

function renderInfo(view) {
  const a = ui.agent;
  const box = $('tick-info');
  if (!view) {
    box.innerHTML = '<b></b><p>No tick of this agent at or before tick ' + ui.tick + '.</p>';
    box.firstChild.textContent = a.label;
    $('frozen').hidden = true;
    delete $('frozen').dataset.key;
    return;
  }
  const l = view.line;
  box.innerHTML = '<b class="who"></b><div class="facts"></div>';
  box.firstChild.textContent = a.label + (a.label === 'agent ' + a.id ? '' : ' (agent ' + a.id + ')');
  const facts = [
    ['tick', view.tick + (view.tick !== ui.tick ? ' (its last tick at or before ' + ui.tick + ')' : '')],
    ['time', l.time + ' s'],
    ['tree', a.tree + ' v' + view.version],
    ['tick returned', l.status],
  ];
  if (l.reload) facts.push(['reload', 'version ' + l.reload.from + ' → ' + l.reload.to]);
  if (l.interrupt) facts.push(['interrupt', 'an interrupt aborted this tick']);
  const aborting = view.tree.nodes.filter((n) => view.status[n.id] === 6 &&
    !n.children.some((c) => view.status[c] === 6));
  if (aborting.length) {
    facts.push(['aborting', aborting.map((n) => n.name).join(', ') + ': what cut it off waits']);
  }
  for (const [k, v] of facts) {
    const d = document.createElement('div');
    d.innerHTML = '<span></span><span></span>';
    d.firstChild.textContent = k;
    d.lastChild.textContent = v;
    if (k === 'tick returned') d.lastChild.className = 'st-' + v;
    box.lastChild.appendChild(d);
  }
  if (l.error) {
    const e = document.createElement('p');
    e.className = 'tick-error';
    e.textContent = 'Error: ' + l.error;
    box.appendChild(e);
  }
  renderFreeze(view);
}

// The frozen box: why the agent stands still, and Unfreeze / Step buttons
// on a live page; on the latest tick of an agent that runs, a Freeze
// button (the page's own freeze, told back by a 'frozen' line, reads -1).
function renderFreeze(view) {
  const a = ui.agent;
  const l = view.line;
  const fz = $('frozen');
  const latest = view.tick === a.ticks[a.ticks.length - 1];
  const live = !!(ui.live && latest && !a.gone);
  const frozen = l.frozen !== undefined ? l.frozen : latest && a.frozenAt === view.tick ? -1 : undefined;
  fz.hidden = frozen === undefined && !live;
  if (fz.hidden) {
    delete fz.dataset.key;
    return;
  }
  const n = frozen !== undefined && view.tree.nodes[frozen];
  // built again only when it changes: a live game re-renders many times
  // a second, and a button replaced under the pointer cannot be clicked
  const key = [a.id, frozen === undefined ? 'running' : n ? n.path : l.watch || '', live].join('\n');
  if (fz.dataset.key === key) return;
  fz.dataset.key = key;
  fz.classList.toggle('running', frozen === undefined);
  fz.innerHTML = '<p></p>';
  fz.firstChild.textContent = frozen === undefined
    ? 'Freeze this agent to stop it here and step through its ticks; the others go on.'
    : (n ? 'Frozen at the breakpoint on ' + n.path : l.watch ? 'Frozen: ' + l.watch + ' became true' : 'Frozen') +
      ': the agent is not ticked until unfrozen or stepped.';
  if (!live) return;
  const buttons = frozen === undefined ? [['Freeze', 'agent-freeze', { cmd: 'freeze' }]]
    : [['Unfreeze', 'agent-resume', { cmd: 'resume' }],
      ['Step one tick', 'agent-step', { cmd: 'step' }],
      ['Step into the tick', 'agent-step-in', { cmd: 'step', nodes: true }]];
  for (const [label, id, body] of buttons) {
    const b = document.createElement('button');
    b.textContent = label;
    b.id = id;
    b.onclick = () => {
      // a step is to be seen: a paused page follows the game again
      if (body.cmd === 'step' && ui.live.paused) pauseLive(false);
      command(Object.assign({ agent: a.id }, body));
    };
    fz.appendChild(b);
  }
}

// The events sent to the agent (a:send, bt.send) that were delivered to
// this tick, each with its payload.
function renderDelivered(view) {
  const ol = $('delivered');
  ol.textContent = '';
  const list = view && view.tick === ui.tick && Array.isArray(view.line.delivered) ? view.line.delivered : [];
  for (const d of list) {
    const li = document.createElement('li');
    li.className = 'delivered';
    li.innerHTML = '<span class="chip"></span><span class="name"></span><code class="what"></code>';
    li.children[1].textContent = String(d.name);
    li.children[2].textContent = d.payload === undefined ? '' : JSON.stringify(d.payload);
    ol.appendChild(li);
  }
  if (!list.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'No event was delivered to this tick.';
    ol.appendChild(li);
  }
}

function renderEvents(view) {
  const ol = $('events');
  ol.textContent = '';
  if (!view || view.tick !== ui.tick) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'No tick line at tick ' + ui.tick + ' for this agent.';
    ol.appendChild(li);
    return;
  }
  const t = view.tree;
  (view.line.events || []).forEach(([id, st, again, forced], k) => {
    const n = t.nodes[id];
    const li = document.createElement('li');
    li.className = 'st-' + st + (forced === 1 ? ' forced' : '') +
      (view.step && k === view.step.at ? ' here' : view.step && k > view.step.at ? ' later' : '');
    li.innerHTML = '<span class="chip"></span><span class="name"></span><span class="what"></span>';
    li.children[1].textContent = n.hidden ? '(priority section)' : n.label;
    li.children[1].title = n.path;
    li.children[2].textContent = again ? st + ' again' : st;
    if (isCheck(n) && forced !== 1 && (st === 'success' || st === 'failure')) { // (forced: not checked)
      const d = document.createElement('small');
      d.className = 'detail';
      d.textContent = checkText(n, view.bb) + ': ' + (st === 'success');
      li.appendChild(d);
    }
    li.onclick = () => reveal(n.path);
    ol.appendChild(li);
  });
  if (!ol.children.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = view.line.state ? 'State given whole (first tick or reload).' : 'No status changed.';
    ol.appendChild(li);
  }
}

// The Node panel: the node last clicked, its scripts (and a check's
// comparison) and the values their keys held at this tick.
function renderNode(view) {
  const box = $('node-info');
  box.textContent = '';
  const t = ui.tree;
  const n = t && ui.nodePath !== null ? t.nodes.find((x) => x.path === ui.nodePath) : null;
  if (!n) {
    box.innerHTML = '<p class="none">Click a node\'s name for its scripts and the values they read.</p>';
    return;
  }
  const add = (label, text, cls) => {
    const row = document.createElement('div');
    row.className = 'node-line' + (cls ? ' ' + cls : '');
    const b = document.createElement('b');
    b.textContent = label + ' ';
    const code = document.createElement(cls === 'code' ? 'code' : 'span');
    code.textContent = text;
    row.append(b, code);
    box.appendChild(row);
  };
  const st = view ? STATUSES[view.status[n.id]] : 'idle';
  add(n.path || '(priority section)', n.type + ', ' + st);
  if (isCheck(n)) add('check', n.script || paramText(n), 'code');
  else if (n.script) add('script', n.script, 'code');
  for (const [k, v] of Object.entries(n.conditions || {})) add(k, v, 'code');
  if (n.keys && view) {
    add('read at tick ' + view.tick + (view.step ? ' (this step)' : ''), keysText(n, view.bb));
  }
}

function renderBlackboard(view) {
  const table = $('bb');
  // a value being typed is not redrawn under the user's fingers
  if (table.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
  if (!view) {
    table.textContent = '';
    return;
  }
  const editable = ui.live && !ui.agent.gone; // (a gone agent's are its last)
  const changed = new Set(view.step ? view.step.changed : view.tick === ui.tick ? Object.keys(view.line.bb || {}) : []);
  const unset = view.step ? view.step.changed.filter((k) => !(k in view.bb))
    : view.tick === ui.tick ? view.line.unset || [] : [];
  const keys = Object.keys(view.bb).concat(unset.filter((k) => !(k in view.bb))).sort();
  // rows are kept and updated in place, not made again: a live game redraws
  // many times a second, and a cell replaced under the pointer takes no click
  const rows = new Map([...table.querySelectorAll('tr[data-key]')].map((tr) => [tr.dataset.key, tr]));
  let at = table.firstChild;
  for (const k of keys) {
    let tr = rows.get(k);
    rows.delete(k);
    if (!tr) {
      tr = document.createElement('tr');
      tr.dataset.key = k;
      tr.innerHTML = '<th><span></span><button class="unset" title="Unset this key">×</button></th><td></td>';
      tr.firstChild.firstChild.textContent = k;
      tr.querySelector('button.unset').onclick = () => sendSet(k, null);
    }
    const isUnset = !(k in view.bb);
    const v = view.bb[k];
    const text = isUnset ? '(unset)' : typeof v === 'string' ? '"' + v + '"' : JSON.stringify(v);
    tr.className = changed.has(k) || isUnset ? 'changed' : '';
    if (tr.lastChild.querySelector('input') || tr.lastChild.textContent !== text) {
      tr.lastChild.textContent = text; // an edit left behind, or a new value
    }
    tr.dataset.value = isUnset ? '' : JSON.stringify(v);
    tr.dataset.type = isUnset ? '' : v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v;
    tr.lastChild.title = tr.dataset.type; // (the type a value typed keeps)
    tr.querySelector('button.unset').hidden = !editable || isUnset;
    tr.lastChild.onclick = editable && !isUnset ? () => editValue(tr, k, v) : null;
    if (tr === at) at = at.nextSibling;
    else table.insertBefore(tr, at);
  }
  for (const tr of rows.values()) tr.remove();
  let add = table.querySelector('tr.add');
  if (editable && !add) {
    add = document.createElement('tr');
    add.className = 'add';
    add.innerHTML = '<th><input id="bb-new-key" placeholder="key"></th>' +
      '<td><input id="bb-new-value" placeholder=\'5, true, "text", null (Enter)\'></td>';
    add.querySelector('#bb-new-value').onkeydown = (e) => {
      if (e.key !== 'Enter') return;
      const key = add.querySelector('#bb-new-key');
      sendSet(key.value, parseValue(e.target.value, undefined));
      key.value = e.target.value = ''; // (sent: the row of the key shows it)
      e.target.blur();
    };
  }
  if (add && !editable) add.remove();
  else if (add && table.lastChild !== add) table.appendChild(add);
}

// "50" stays a number when the old value was one; true/false are booleans;
// "null" clears the key; anything else is a string.
function parseValue(text, old) {
  const s = text.trim();
  if (s === 'null') return null;
  if (s === 'true' || s === 'false') return s === 'true';
  if (typeof old !== 'string' && s !== '' && isFinite(Number(s))) return Number(s);
  return s.replace(/^"(.*)"$/, '$1');
}

function editValue(tr, key, old) {
  const td = tr.lastChild;
  if (td.querySelector('input')) return;
  const input = document.createElement('input');
  input.className = 'edit';
  input.value = typeof old === 'string' ? old : JSON.stringify(old);
  td.textContent = '';
  td.appendChild(input);
  input.focus();
  input.select();
  input.onkeydown = (e) => {
    if (e.key === 'Enter') sendSet(key, parseValue(input.value, old));
    if (e.key === 'Enter' || e.key === 'Escape') input.blur();
  };
  input.onblur = () => setTimeout(render, 0);
}

function sendSet(key, value) {
  if (!key) return;
  command({ cmd: 'set', agent: ui.agent.id, key, value }).then((r) => {
    if (!r || !r.ok) return;
    showMessage('Set ' + key + ' = ' + JSON.stringify(value) + ' for ' + ui.agent.label +
      ': its next tick sees it.', 'info', 5);
  });
}

function renderRunning(view) {
  const ul = $('running');
  ul.textContent = '';
  if (!view) return;
  const t = view.tree;
  // every running (or aborting) node none of whose children runs: one per
  // parallel branch
  const live = (id) => view.status[id] === 1 || view.status[id] === 6;
  const leaves = t.nodes.filter((n) => live(n.id) && !n.children.some(live));
  for (const n of leaves) {
    const li = document.createElement('li');
    li.dataset.path = n.path;
    if (view.status[n.id] === 6) li.className = 'st-aborting';
    li.innerHTML = '<span class="chip"></span><span></span><small></small>';
    li.children[1].textContent = n.name + (view.status[n.id] === 6 ? ' (aborting)' : '');
    li.children[2].textContent = n.path;
    li.onclick = () => reveal(n.path);
    ul.appendChild(li);
  }
  if (!leaves.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'Nothing is running.';
    ul.appendChild(li);
  }
}

// Scrolls the tree to the agent's running node when it is out of sight,
// once each time the agent or its running node changes (so the user may
// scroll away meanwhile); a node the user collapsed away stays hidden.
function followRunning(view) {
  if (!view || ui.mode !== 'agent') return;
  const t = view.tree;
  const leaf = t.nodes.find((n) => view.status[n.id] === 1 && !n.children.some((c) => view.status[c] === 1));
  if (!leaf) return;
  const key = [ui.agent.id, t.name, t.version, leaf.path].join('\n');
  if (key === ui.followed) return;
  ui.followed = key;
  const row = ui.rows[leaf.id].row;
  if (!row.offsetParent) return; // in a collapsed subtree
  const box = $('center').getBoundingClientRect();
  const r = row.getBoundingClientRect();
  if (r.top < box.top || r.bottom > box.bottom || r.left < box.left || r.left > box.right - 40) {
    row.scrollIntoView({ block: 'center', inline: 'nearest' });
  }
}

// Population: the agents of the tree that run the clicked node at the tick.
function renderPopAgents() {
  const ul = $('pop-agents');
  ul.textContent = '';
  const t = ui.tree;
  if (ui.mode !== 'population' || !t || ui.popPath === null || !t.byPath.has(ui.popPath)) {
    $('pop-title').textContent = 'Click a node to list its agents';
    return;
  }
  const hits = [];
  for (const a of ui.trace.agentList) {
    if (a.tree !== t.name) continue;
    const v = ui.trace.stateAt(a, ui.tick);
    const id = v && v.tree.byPath.get(ui.popPath);
    if (id !== undefined && v.status[id] === 1) hits.push(a);
  }
  const n = t.nodes[t.byPath.get(ui.popPath)];
  $('pop-title').textContent = hits.length + ' agents running ' +
    (n.hidden ? 'the priority section' : n.name);
  for (const a of hits.slice(0, AGENTS_SHOWN)) {
    const li = document.createElement('li');
    li.dataset.agent = a.id;
    li.textContent = a.label + ' · v' + versionAt(a, ui.tick);
    li.className = a === ui.agent ? 'sel' : '';
    li.onclick = () => selectAgent(a);
    ul.appendChild(li);
  }
  if (hits.length > AGENTS_SHOWN) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = (hits.length - AGENTS_SHOWN) + ' more';
    ul.appendChild(li);
  }
}

// ---- Timeline ----------------------------------------------------------------

const LANES = 4; // node lanes at most; a fifth replaces the oldest
const STATUS_COLOURS = ['#c4c9d2', '#f0a020', '#2f9e55', '#d64545', '#8a5cc2'];

// Adds the node's lane to the timeline, or takes it away.
function toggleLane(path) {
  const i = ui.lanes.indexOf(path);
  if (i >= 0) ui.lanes.splice(i, 1);
  else {
    ui.lanes.push(path);
    if (ui.lanes.length > LANES) ui.lanes.shift();
  }
  render();
}

// The selected agent's history of a node (cached until the trace grows).
function nodeHistory(path) {
  const a = ui.agent;
  const key = a.id + '\n' + path;
  let h = ui.histories.get(key);
  if (!h || h.changes !== ui.trace.changes) {
    h = { changes: ui.trace.changes, ticks: ui.trace.historyOf(a, path) };
    ui.histories.set(key, h);
  }
  return h.ticks;
}

// To the previous (d < 0) or next tick at which the last lane's node ran,
// or ended with a failure (failed).
function laneStep(d, failed) {
  const path = ui.lanes[ui.lanes.length - 1];
  if (!ui.trace || !ui.agent || path === undefined) return;
  const ticks = nodeHistory(path).filter(([, s]) => !failed || s === 3).map(([t]) => t);
  const t = d > 0 ? ticks.find((x) => x > ui.tick) : ticks.filter((x) => x < ui.tick).pop();
  if (t !== undefined) jump(t);
}

function renderLaneNav() {
  const path = ui.lanes[ui.lanes.length - 1];
  const t = ui.tree;
  $('lane-nav').hidden = path === undefined;
  if (path === undefined) return;
  const id = t && t.byPath.get(path);
  $('lane-name').textContent = id !== undefined ? t.nodes[id].label : path;
  $('lane-name').title = path;
}

const MARK_COLOURS = { change: '#3a78d8', reload: '#8a4fd0', error: '#d43c3c', frozen: '#0aa3b5', event: '#e07b00' };

function drawTimeline() {
  const tr = ui.trace;
  const c = $('strip');
  c.style.height = 44 + 16 * ui.lanes.length + 'px'; // the strip, then the lanes
  const w = c.clientWidth;
  const h = c.clientHeight;
  const dpr = window.devicePixelRatio || 1;
  c.width = w * dpr;
  c.height = h * dpr;
  const g = c.getContext('2d');
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  const lo = tr.minTick;
  const hi = Math.max(tr.maxTick, lo + 1);
  const pad = 10;
  const x = (t) => pad + (t - lo) / (hi - lo) * (w - 2 * pad);
  g.fillStyle = '#e6e9ef';
  g.fillRect(pad, 18, w - 2 * pad, 10);
  const a = ui.agent;
  for (const kind of Object.keys(MARK_COLOURS)) { // the marks, for tests and tools
    c.dataset[kind] = a ? tr.marksOf(a, kind).join(',') : '';
  }
  if (a && a.ticks.length) {
    g.fillStyle = '#c9d2e3';
    g.fillRect(x(a.ticks[0]), 18, x(a.ticks[a.ticks.length - 1]) - x(a.ticks[0]) + 1, 10);
    for (const [t, kind] of a.marks) {
      g.fillStyle = MARK_COLOURS[kind];
      if (kind === 'change') g.fillRect(x(t) - 0.5, 16, 1.5, 14);
      else g.fillRect(x(t) - 1.5, 6, 3, 32);
      if (kind === 'reload') {
        g.font = '10px sans-serif';
        g.fillText('reload', x(t) + 3, 12);
      }
    }
  }
  // one lane per selected node: a bar where a tick visited it, in the
  // colour of the status it ended that tick with
  ui.lanes.forEach((path, k) => {
    const y = 46 + 16 * k;
    const ticks = a ? nodeHistory(path) : [];
    c.dataset['lane' + k] = path + '|' + ticks.map(([t, s]) => t + ':' + STATUSES[s]).join(',');
    g.fillStyle = '#f1f3f7';
    g.fillRect(pad, y, w - 2 * pad, 12);
    for (const [t, s] of ticks) {
      g.fillStyle = STATUS_COLOURS[s];
      g.fillRect(x(t) - 1, y, Math.max(2, (w - 2 * pad) / (hi - lo)), 12);
    }
    const id = ui.tree && ui.tree.byPath.get(path);
    g.font = '10px sans-serif';
    g.fillStyle = '#1d2330';
    g.fillText(id !== undefined ? ui.tree.nodes[id].label : path, pad + 2, y + 10);
  });
  for (let k = ui.lanes.length; 'lane' + k in c.dataset; k++) delete c.dataset['lane' + k];
  g.fillStyle = '#111';
  g.fillRect(x(ui.tick) - 1, 2, 2, h - 4);
  g.font = '11px sans-serif';
  g.fillStyle = '#555';
  g.fillText(String(lo), pad, 41);
  const end = String(tr.maxTick);
  g.fillText(end, w - pad - g.measureText(end).width, 41);
  c.onpointerdown = (e) => {
    const pick = (ev) => {
      const r = c.getBoundingClientRect();
      jump(lo + (ev.clientX - r.left - pad) / (w - 2 * pad) * (hi - lo));
    };
    pick(e);
    c.onpointermove = (ev) => { if (ev.buttons) pick(ev); };
  };
}

// ---- Render -------------------------------------------------------------------

function render() {
  ui.pending = false;
  const tr = ui.trace;
  if (!tr || !ui.agent) return;
  if (ui.live && !ui.live.paused) ui.tick = ui.agent.ticks[ui.agent.ticks.length - 1] || ui.tick;
  const view = stepView(tr.stateAt(ui.agent, ui.tick));
  const t = view ? view.tree : tr.tree(ui.agent.tree, ui.agent.cur.version);
  if (ui.treeKey !== t.name + '@' + t.version) buildTree(t);
  paintTree(view);
  followRunning(view);
  renderLaneNav();
  renderInfo(view);
  renderStepBar(view);
  renderEvents(view);
  renderDelivered(view);
  renderBlackboard(view);
  renderNode(view);
  renderRunning(view);
  if (ui.popPath !== null) renderPopAgents();
  if (document.activeElement !== $('tick')) $('tick').value = ui.tick; // not while typed in
  $('tick').min = tr.minTick;
  $('tick').max = tr.maxTick;
  drawTimeline();
  document.body.dataset.tick = ui.tick;
  document.body.dataset.agent = ui.agent.id;
  if (ui.mode === 'edit') editPaint(view); // (edit.js: the running nodes)
  syncURL();
}

// ---- Stepping through a tick ---------------------------------------------------
// A tick the live debugger stepped into ('Step into the tick': its line has
// 'steps') is shown node by node, from its first event: the tree as the
// events so far left it, the node of the current event outlined, the
// blackboard as that node left it. "node ▶" past the last event shows the
// whole tick, as any other.

// The view of the tick shown: the step's when the tick was stepped into.
function stepView(view) {
  if (!view || view.tick !== ui.tick || !Array.isArray(view.line.steps)) return view;
  const key = ui.agent.id + '@' + view.tick;
  if (!ui.step || ui.step.key !== key) ui.step = { key, at: 0 };
  const count = (view.line.events || []).length;
  if (ui.step.at >= count) return view;
  return ui.trace.stepAt(ui.agent, view.tick, ui.step.at) || view;
}

function stepBy(d) {
  if (!ui.step) return;
  const view = ui.trace.stateAt(ui.agent, ui.tick);
  const count = view ? (view.line.events || []).length : 0;
  ui.step.at = Math.max(0, Math.min(count, ui.step.at + d));
  render();
}

function renderStepBar(view) {
  const bar = $('step-bar');
  const stepped = view && view.tick === ui.tick && Array.isArray(view.line.steps);
  bar.hidden = !stepped;
  if (!stepped) return;
  const events = view.line.events || [];
  const at = view.step ? view.step.at : events.length;
  const text = $('step-text');
  if (at < events.length) {
    const [id, st, again] = events[at];
    const n = view.tree.nodes[id];
    text.textContent = 'Node ' + (at + 1) + ' of ' + events.length + ': ' +
      (n.hidden ? '(priority section)' : n.label) + ' ' + (again ? 'running again' : st);
  } else {
    text.textContent = 'The whole tick (' + events.length + ' events)';
  }
  $('step-prev').disabled = at === 0;
  $('step-next').disabled = at >= events.length;
  $('step-end').disabled = at >= events.length;
}

// A page loaded with ?trace=URL keeps &agent= and &tick= in its address,
// so a reload or a shared link shows the same thing.
let urlTimer = null;
function syncURL() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    const params = new URLSearchParams(location.search);
    if (!params.has('trace') || !ui.agent) return;
    params.set('agent', ui.agent.id);
    params.set('tick', ui.tick);
    history.replaceState(null, '', '?' + params.toString());
  }, 300);
}

function scheduleRender() {
  if (ui.pending) return;
  ui.pending = true;
  setTimeout(render, 50);
}

// ---- Live -------------------------------------------------------------------

// Commands go one at a time, each after the game answered the one before,
// so the game applies them in the order the user gave them (a breakpoint
// cleared, then a resume: not the other way round).
let commandQueue = Promise.resolve();
function command(body, quiet) {
  const sent = commandQueue.then(() => send(body, quiet));
  commandQueue = sent.catch(() => {});
  return sent;
}

async function send(body, quiet) {
  try {
    const r = await fetch('command', { method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Bonsai-Token': TOKEN },
      body: JSON.stringify(body) });
    const j = await r.json();
    if (!j.ok && !quiet) showMessage('The game refused "' + body.cmd + '": ' + j.error, 'warn');
    return j;
  } catch (e) {
    if (!quiet) showMessage('Command "' + body.cmd + '" not sent: ' + e.message, 'warn');
    return null;
  }
}

// A breakpoint on a node: on any event of it (status ""), or on its
// failures only ("failure"); for every agent of the tree.
function toggleBreakpoint(tree, path, status) {
  if (!ui.live) return;
  const k = tree + '\n' + path + '\n' + status;
  const on = !ui.breakpoints.has(k);
  if (on) ui.breakpoints.add(k); else ui.breakpoints.delete(k);
  command(Object.assign({ cmd: 'break', tree, node: path, on }, status ? { status } : {}));
  render();
}

// "hp < 5", "enemy == \"wolf\"", "alarm == true": a watch's condition.
function parseWatch(text) {
  const m = /^\s*([^\s=<>!~]+)\s*(==|~=|!=|<=|>=|<|>)\s*(.+?)\s*$/.exec(text);
  if (!m) return null;
  return { key: m[1], op: m[2] === '!=' ? '~=' : m[2], value: parseValue(m[3], undefined) };
}

// Adds a watch from the input: the agent (or any agent, with the box
// checked) freezes when its condition becomes true.
function addWatch() {
  const input = $('watch-input');
  const w = parseWatch(input.value);
  if (!w || w.value === null) {
    showMessage('A watch reads "key op value", op one of == ~= < <= > >=, e.g. "hp < 5".', 'warn');
    return;
  }
  if (!$('watch-any').checked) w.agent = ui.agent.id;
  w.text = input.value.trim() + (w.agent !== undefined ? ' (' + ui.agent.label + ')' : ' (any agent)');
  command(Object.assign({ cmd: 'watch', on: true }, w, { text: undefined })).then((r) => {
    if (!r || !r.ok) return;
    ui.watches.push(w);
    input.value = '';
    renderWatches();
  });
}

function renderWatches() {
  const ul = $('watch-list');
  ul.textContent = '';
  for (const w of ui.watches) {
    const li = document.createElement('li');
    li.innerHTML = '<span></span><button title="Remove">×</button>';
    li.firstChild.textContent = w.text;
    li.lastChild.onclick = () => {
      command(Object.assign({ cmd: 'watch', on: false }, w, { text: undefined }));
      ui.watches.splice(ui.watches.indexOf(w), 1);
      renderWatches();
    };
    ul.appendChild(li);
  }
}

// ---- Fault injection (live) -------------------------------------------------------
// Forces a node of the selected agent (or of every agent of its tree) to
// return a status for some ticks or until removed (a:force); the nodes a
// tick forced are marked in the tree and the events.

// The ids of the nodes whose status this tick was forced.
function forcedNodes(view) {
  const ids = new Set();
  if (view && view.tick === ui.tick) {
    for (const e of view.line.events || []) if (e[3] === 1) ids.add(e[0]);
  }
  return ids;
}

function fillForceNodes(t) {
  const sel = $('force-node');
  const was = sel.value;
  sel.textContent = '';
  for (const n of t.nodes) {
    if (!n || n.hidden) continue; // (a coverage report's nodes may have holes)
    const o = document.createElement('option');
    o.value = o.textContent = n.path;
    sel.appendChild(o);
  }
  if (t.nodes.some((n) => n && n.path === was)) sel.value = was;
}

function addForce() {
  const f = { tree: ui.tree.name, node: $('force-node').value, status: $('force-status').value,
    ticks: Math.max(0, Math.floor(Number($('force-ticks').value) || 0)) };
  if (!$('force-any').checked) f.agent = ui.agent.id;
  command(Object.assign({ cmd: 'force', on: true }, f)).then((r) => {
    if (!r || !r.ok) return;
    f.who = f.agent !== undefined ? ui.agent.label : 'all';
    ui.forces.push(f);
    renderForces();
  });
}

// The faults the page set, as the game reports them (the 'faults' of its
// tick lines): an entry stays until the game has listed it and then no
// longer does (its ticks ran out, a reload dropped it), or its agent is
// gone; an entry for one agent shows the ticks it has left.
function pruneForces() {
  const tr = ui.trace;
  if (!tr) return;
  const before = ui.forces.map((f) => f.left).join();
  const count = ui.forces.length;
  ui.forces = ui.forces.filter((f) => {
    const one = f.agent !== undefined ? tr.agents.get(f.agent) : null;
    if (one && one.gone) return false;
    let held = false;
    for (const [id, r] of ui.faults) {
      const a = tr.agents.get(id);
      if (!a || a.tree !== f.tree || (one && a !== one)) continue;
      const t = tr.tree(a.tree, r.version);
      const got = t && r.list.find(([node, st]) => t.nodes[node] && t.nodes[node].path === f.node && st === f.status);
      if (got) {
        held = true;
        f.left = one ? got[2] : 0;
      }
    }
    if (held) f.seen = true;
    return held || !f.seen;
  });
  if (ui.forces.length !== count || ui.forces.map((f) => f.left).join() !== before) renderForces();
}

function renderForces() {
  const ul = $('force-list');
  ul.textContent = '';
  for (const f of ui.forces) {
    const li = document.createElement('li');
    li.innerHTML = '<span></span><button title="Remove">×</button>';
    const ticks = f.seen ? f.left : f.ticks;
    li.firstChild.textContent = f.node + ' → ' + f.status + (ticks ? ' × ' + ticks + (f.seen ? ' left' : '') : '') +
      ' (' + f.who + ')';
    li.lastChild.onclick = () => {
      command({ cmd: 'force', on: false, tree: f.tree, node: f.node, agent: f.agent });
      ui.forces.splice(ui.forces.indexOf(f), 1);
      renderForces();
    };
    ul.appendChild(li);
  }
}

function pauseLive(paused) {
  ui.live.paused = paused;
  $('live-pause').textContent = paused ? 'Resume live' : 'Pause';
  $('live-state').textContent = paused ? 'paused' : 'live';
  $('live').classList.toggle('paused', paused);
  if (!paused) render();
}

function stopLive() {
  ui.live.es.close();
  ui.live = null;
  document.body.classList.remove('is-live');
  $('live').hidden = true;
}

function startLive() {
  document.body.classList.add('is-live');
  $('live').hidden = false;
  $('source').textContent = location.host;
  ui.live = { paused: false, es: null };
  let trace = new Trace();
  let listed = 0;
  showMessage('Connected to the game at ' + location.host + ': waiting for its first tick…', 'info');
  const es = new EventSource(tokened('events'));
  ui.live.es = es;
  es.onopen = () => $('live').classList.remove('lost');
  es.onerror = () => $('live').classList.add('lost');
  es.onmessage = (e) => {
    let o;
    try {
      o = JSON.parse(e.data);
      if (o.t === 'header' && trace.header && o.started !== trace.header.started) {
        trace = new Trace(); // another game: start over
        ui.trace = null;
        ui.faults.clear();
        ui.forces = [];
        renderForces();
      }
      trace.addLine(e.data, trace.lines + 1);
    } catch (err) {
      showMessage('Live stream: ' + err.message, 'warn');
      return;
    }
    if (!ui.trace && trace.agentList.some((a) => a.ticks.length)) {
      showMessage('', '');
      start(trace);
    }
    if (o.t === 'tick' && Array.isArray(o.faults)) ui.faults.set(o.agent, { version: o.version, list: o.faults });
    if (o.t === 'gone') ui.faults.delete(o.agent);
    if (o.t === 'gone' || (o.t === 'tick' && o.faults)) pruneForces();
    if (ui.trace && (trace.agentList.length !== listed || o.t === 'gone')) {
      listed = trace.agentList.length;
      renderAgents();
    }
    scheduleRender();
  };
}

// ---- Wiring -------------------------------------------------------------------

function wire() {
  $('file').onchange = (e) => { if (e.target.files[0]) loadFile(e.target.files[0]); };
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]);
  });
  $('agent-search').oninput = renderAgents;
  $('node-search').oninput = (e) => { ui.search = e.target.value; ui.matchAt = -1; applySearch(); };
  $('node-search').onkeydown = (e) => { if (e.key === 'Enter') nextMatch(); };
  $('prev').onclick = () => step(-1);
  $('next').onclick = () => step(1);
  $('prev-change').onclick = () => step(-1, true);
  $('next-change').onclick = () => step(1, true);
  $('lane-prev-ran').onclick = () => laneStep(-1, false);
  $('lane-next-ran').onclick = () => laneStep(1, false);
  $('lane-prev-failed').onclick = () => laneStep(-1, true);
  $('lane-next-failed').onclick = () => laneStep(1, true);
  $('tick').onchange = (e) => jump(Number(e.target.value));
  $('mode-agent').onclick = () => setMode('agent');
  $('mode-pop').onclick = () => setMode('population');
  $('mode-prof').onclick = () => setMode('profile');
  $('live-pause').onclick = () => pauseLive(!ui.live.paused);
  $('fold-running').onclick = () => fold(true);
  $('unfold-all').onclick = () => fold(false);
  $('watch-input').onkeydown = (e) => { if (e.key === 'Enter') addWatch(); };
  $('force-go').onclick = addForce;
  $('step-prev').onclick = () => stepBy(-1);
  $('step-next').onclick = () => stepBy(1);
  $('step-end').onclick = () => stepBy(Infinity);
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'TEXTAREA') return;
    if (e.key === 'ArrowLeft') { step(-1, e.shiftKey); e.preventDefault(); }
    if (e.key === 'ArrowRight') { step(1, e.shiftKey); e.preventDefault(); }
    if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && !$('step-bar').hidden) {
      stepBy(e.key === 'ArrowDown' ? 1 : -1);
      e.preventDefault();
    }
    if (e.key === 'Home' && ui.trace) { jump(ui.trace.minTick); e.preventDefault(); }
    if (e.key === 'End' && ui.trace) { jump(ui.trace.maxTick); e.preventDefault(); }
  });
  window.addEventListener('resize', () => render());
}

function setMode(mode) {
  ui.mode = mode;
  $('mode-agent').classList.toggle('on', mode === 'agent');
  $('mode-pop').classList.toggle('on', mode === 'population');
  $('mode-prof').classList.toggle('on', mode === 'profile');
  $('mode-edit').classList.toggle('on', mode === 'edit');
  document.body.classList.toggle('editing', mode === 'edit');
  if (mode === 'edit') openEditor(); // (edit.js)
  else render();
}

async function main() {
  wire();
  const params = new URLSearchParams(location.search);
  if (location.protocol.startsWith('http')) {
    if (params.has('trace')) return loadURL(params.get('trace'));
    if (params.has('coverage')) return loadURL(params.get('coverage'));
    try {
      const r = await fetch(tokened('live'), { cache: 'no-store' });
      const j = r.status === 200 || r.status === 403 ? await r.json() : null;
      if (j && j.live === true) startLive();
      else if (r.status === 403 && j) {
        showMessage('The game refused this page: ' + j.error + '. Open the URL the game printed ' +
          '(http://127.0.0.1:PORT/?token=...).', 'error');
      }
    } catch (e) {
      // not live: the page waits for a file
    }
  }
}

main();
