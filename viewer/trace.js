// trace.js: reads a Bonsai trace (docs/TRACE_FORMAT.md, format 1) line by
// line into an index the viewer can query fast: per agent its tick lines
// (kept as text) and a keyframe of its statuses and blackboard every K
// lines, so a tick is rebuilt by replaying at most K lines; per tree the
// changes of the number of agents running each node, so the population at
// a tick is a prefix sum; a node's history is read from the agent's lines
// when asked. Lines are added one at a time, from a file or a live stream
// alike. No DOM here: viewer.js draws.
'use strict';

const STATUSES = ['idle', 'running', 'success', 'failure', 'aborted', 'skipped', 'aborting'];
const STATUS_CODE = { idle: 0, running: 1, success: 2, failure: 3, aborted: 4, skipped: 5, aborting: 6 };
// A node on the running path: running, or aborting (a latent abort under way).
const LIVE = (code) => code === 1 || code === 6;
const KEYFRAME_EVERY = 16;

// A problem with one line of the file; `line` is 1-based.
class TraceError extends Error {
  constructor(line, message) {
    super(message);
    this.line = line;
  }
}

class Trace {
  constructor() {
    this.header = null;
    this.trees = new Map();    // "name@version" -> tree version
    this.versions = new Map(); // tree name -> [versions, ascending]
    this.agents = new Map();   // id -> agent record
    this.agentList = [];
    this.maxTick = 0;
    this.minTick = Infinity;
    this.ended = false;
    this.lines = 0;
    this.changes = 0;          // bumped by every line: caches compare it
    this.pop = new Map();      // tree name -> population record
    this.profiles = new Map(); // "name@version" -> the last profile line's counts
  }

  // Adds one line of text (its 1-based number for messages); throws a
  // TraceError when the line is not what the format says.
  addLine(text, lineNo) {
    if (text.trim() === '') return;
    let o;
    try {
      o = JSON.parse(text);
    } catch (e) {
      if (!this.header) {
        throw new TraceError(lineNo, 'this is not a Bonsai trace: its first line is not JSON');
      }
      throw new TraceError(lineNo, 'not valid JSON (' + e.message + ')');
    }
    if (!this.header) {
      if (o === null || typeof o !== 'object' || o.t !== 'header') {
        throw new TraceError(lineNo,
          'this is not a Bonsai trace: its first line is not a Bonsai trace header');
      }
      if (o.format !== 1) {
        throw new TraceError(lineNo, 'this trace is in format ' + JSON.stringify(o.format) +
          '; this viewer reads format 1');
      }
    }
    if (o === null || typeof o !== 'object' || typeof o.t !== 'string') {
      throw new TraceError(lineNo, 'not a trace line (no field "t")');
    }
    this.lines++;
    this.changes++;
    if (o.t === 'header') this.header = o;
    else if (o.t === 'tree') this.addTree(o, lineNo);
    else if (o.t === 'agent') this.addAgent(o, lineNo);
    else if (o.t === 'tick') this.addTick(o, text, lineNo);
    else if (o.t === 'end') this.ended = true;
    else if (o.t === 'gone' && this.agents.has(o.agent)) this.agents.get(o.agent).gone = true;
    else if (o.t === 'frozen' && this.agents.has(o.agent)) this.frozeAfter(this.agents.get(o.agent));
    else if (o.t === 'profile') this.addProfile(o, lineNo);
    // other kinds of lines: a newer writer; ignored as the format says
  }

  addTree(o, lineNo) {
    if (typeof o.tree !== 'string' || !Array.isArray(o.nodes)) {
      throw new TraceError(lineNo, 'a tree line needs "tree" and "nodes"');
    }
    const key = o.tree + '@' + o.version;
    const strings = (l) => (Array.isArray(l) ? l.filter((k) => typeof k === 'string') : undefined);
    const texts = (c) => {
      if (!c || typeof c !== 'object' || Array.isArray(c)) return undefined;
      const out = {};
      for (const [k, v] of Object.entries(c)) if (typeof v === 'string') out[k] = v;
      return out;
    };
    const nodes = o.nodes.map((n, i) => ({
      id: i, name: String(n.name), type: String(n.type), parent: n.parent,
      path: String(n.path), params: n.params || {}, hidden: !!n.hidden, children: [],
      // its scripts' sources and the keys they read or write (format 1's
      // optional fields; a trace of an older version has none)
      script: typeof n.script === 'string' ? n.script : undefined,
      conditions: texts(n.conditions), keys: strings(n.keys),
    }));
    for (const n of nodes) if (n.parent !== null && nodes[n.parent]) nodes[n.parent].children.push(n.id);
    labelNodes(nodes);
    const byPath = new Map(nodes.map((n) => [n.path, n.id]));
    this.trees.set(key, { name: o.tree, version: o.version, nodes, byPath });
    const vs = this.versions.get(o.tree) || [];
    if (!vs.includes(o.version)) vs.push(o.version);
    vs.sort((a, b) => a - b);
    this.versions.set(o.tree, vs);
  }

  tree(name, version) {
    return this.trees.get(name + '@' + version);
  }

  // A profile line (tree:profile): counts since the profile started, so
  // the last line of a tree version is the one kept.
  addProfile(o, lineNo) {
    if (typeof o.tree !== 'string' || !Array.isArray(o.nodes)) {
      throw new TraceError(lineNo, 'a profile line needs "tree" and "nodes"');
    }
    const byId = new Map();
    for (const n of o.nodes) {
      if (Array.isArray(n)) {
        byId.set(n[0], { calls: Number(n[1]) || 0, runtime: Number(n[2]) || 0, leaf: Number(n[3]) || 0 });
      }
    }
    this.profiles.set(o.tree + '@' + o.version,
      { ticks: Number(o.ticks) || 0, time: Number(o.time) || 0, on: !!o.on, byId });
  }

  profile(name, version) {
    return this.profiles.get(name + '@' + version) || null;
  }

  addAgent(o, lineNo) {
    if (this.agents.has(o.agent)) {
      this.agents.get(o.agent).label = o.label || this.agents.get(o.agent).label;
      this.agents.get(o.agent).gone = false;
      return; // a live client sees the agents again after a reconnect
    }
    if (!this.tree(o.tree, o.version)) {
      throw new TraceError(lineNo, 'agent ' + o.agent + ' uses tree ' + o.tree + ' version ' +
        o.version + ', which no earlier line describes');
    }
    const a = {
      id: o.agent, tree: o.tree, label: String(o.label || 'agent ' + o.agent),
      ticks: [], lines: [], keys: [],
      cur: { version: o.version, status: null, bb: {} },
      running: [],          // paths running (or aborting) after the last tick
      marks: [],            // [tick, kind]: change, reload, error, frozen, event
    };
    this.agents.set(o.agent, a);
    this.agentList.push(a);
  }

  // A live page froze the agent (a 'frozen' line): it writes no tick line
  // until stepped or resumed, so its last tick is the one it stands on.
  frozeAfter(a) {
    a.frozenAt = a.ticks.length ? a.ticks[a.ticks.length - 1] : null;
  }

  addTick(o, text, lineNo) {
    const a = this.agents.get(o.agent);
    if (!a) throw new TraceError(lineNo, 'a tick of agent ' + o.agent + ', which no agent line announced');
    if (typeof o.tick !== 'number') throw new TraceError(lineNo, 'a tick line without a tick number');
    const last = a.ticks.length ? a.ticks[a.ticks.length - 1] : -Infinity;
    if (o.tick <= last) return; // seen already (a live client after a reconnect)
    const cur = a.cur;
    this.apply(cur, o, a.tree, lineNo);
    const t = this.tree(a.tree, cur.version);
    // the running path, to mark where it changed and count the population
    const running = [];
    for (let i = 0; i < cur.status.length; i++) if (LIVE(cur.status[i])) running.push(t.nodes[i].path);
    const changed = running.join('\n') !== a.running.join('\n');
    if (o.reload) a.marks.push([o.tick, 'reload']);
    if (o.error) a.marks.push([o.tick, 'error']);
    if (o.frozen !== undefined) a.marks.push([o.tick, 'frozen']);
    if (Array.isArray(o.delivered) && o.delivered.length) a.marks.push([o.tick, 'event']);
    if (changed && !o.reload && !o.error) a.marks.push([o.tick, 'change']);
    this.countPopulation(a, o.tick, a.running, running, !a.ticks.length);
    a.running = running;
    a.ticks.push(o.tick);
    a.lines.push(text);
    if ((a.ticks.length - 1) % KEYFRAME_EVERY === 0) {
      a.keys.push({ version: cur.version, status: cur.status.slice(), bb: Object.assign({}, cur.bb) });
    }
    if (o.tick > this.maxTick) this.maxTick = o.tick;
    if (o.tick < this.minTick) this.minTick = o.tick;
  }

  // Applies tick line `o` to a state { version, status, bb }: `state` as
  // the whole truth, else the events in order; then the blackboard.
  apply(st, o, treeName, lineNo) {
    const version = o.version !== undefined ? o.version : st.version;
    const t = this.tree(treeName, version);
    if (!t) {
      throw new TraceError(lineNo, 'tree ' + treeName + ' version ' + version +
        ' is not described before its use');
    }
    const n = t.nodes.length;
    const check = (id) => {
      if (!(id >= 0 && id < n)) {
        throw new TraceError(lineNo, 'node ' + id + ' is not in tree ' + treeName + ' version ' + version);
      }
    };
    if (Array.isArray(o.state) || !st.status || version !== st.version) {
      st.status = new Uint8Array(n);
      for (const [id, s] of o.state || []) { check(id); st.status[id] = STATUS_CODE[s] || 0; }
      st.version = version;
      if (!Array.isArray(o.state)) this.applyEvents(st, o, check);
    } else {
      this.applyEvents(st, o, check);
    }
    if (o.bb) for (const k of Object.keys(o.bb)) st.bb[k] = o.bb[k];
    if (o.unset) for (const k of o.unset) delete st.bb[k];
  }

  applyEvents(st, o, check) {
    for (const e of o.events || []) {
      check(e[0]);
      st.status[e[0]] = STATUS_CODE[e[1]] || 0;
    }
  }

  // Population: per tree, for each tick, the +1/-1 changes of the number
  // of agents running each node path (column); column 0 counts agents.
  countPopulation(a, tick, before, after, first) {
    let p = this.pop.get(a.tree);
    if (!p) {
      p = { cols: new Map([['#agents', 0]]), deltas: new Map(), cache: null };
      this.pop.set(a.tree, p);
    }
    let d = p.deltas.get(tick);
    if (!d) { d = []; p.deltas.set(tick, d); }
    const col = (path) => {
      if (!p.cols.has(path)) p.cols.set(path, p.cols.size);
      return p.cols.get(path);
    };
    if (first) d.push(0, 1);
    const was = new Set(before);
    const is = new Set(after);
    for (const path of before) if (!is.has(path)) d.push(col(path), -1);
    for (const path of after) if (!was.has(path)) d.push(col(path), 1);
  }

  // How many agents of tree `name` run each node path at tick N (each agent
  // as its last tick at or before N left it): { agents, count(path) }.
  population(name, tick) {
    const p = this.pop.get(name);
    if (!p) return { agents: 0, count: () => 0 };
    if (!p.cache || p.cache.changes !== this.changes) {
      const ticks = [...p.deltas.keys()].sort((x, y) => x - y);
      p.cache = { changes: this.changes, ticks, sums: [] };
      let sum = new Int32Array(p.cols.size);
      for (const t of ticks) {
        sum = sum.slice();
        const d = p.deltas.get(t);
        for (let i = 0; i < d.length; i += 2) sum[d[i]] += d[i + 1];
        p.cache.sums.push(sum);
      }
    }
    const c = p.cache;
    const i = lastAtOrBefore(c.ticks, tick);
    const sum = i < 0 ? new Int32Array(p.cols.size) : c.sums[i];
    return {
      agents: sum[0],
      count: (path) => (p.cols.has(path) && p.cols.get(path) < sum.length ? sum[p.cols.get(path)] : 0),
    };
  }

  // The agent as its last tick at or before N left it: { tick, line (the
  // parsed tick line), version, tree, status (codes by node id), bb }, or
  // null before its first tick.
  stateAt(a, tick) {
    const i = lastAtOrBefore(a.ticks, tick);
    if (i < 0) return null;
    const k = Math.floor(i / KEYFRAME_EVERY);
    const key = a.keys[k];
    const st = { version: key.version, status: key.status.slice(), bb: Object.assign({}, key.bb) };
    let line = null;
    for (let j = k * KEYFRAME_EVERY; j <= i; j++) {
      line = JSON.parse(a.lines[j]);
      if (j > k * KEYFRAME_EVERY) this.apply(st, line, a.tree, 0);
    }
    return { tick: a.ticks[i], line, version: st.version, tree: this.tree(a.tree, st.version),
      status: st.status, bb: st.bb };
  }

  // A tick stepped through on the live page (a tick line with 'steps',
  // docs/TRACE_FORMAT.md) as its first at + 1 events left it: the statuses
  // after the tick before, with those events applied; the blackboard as
  // the steps say it was at event `at`; `step.changed`, the keys changed at
  // that very event. Null when the agent has no such line at that tick.
  stepAt(a, tick, at) {
    const end = this.stateAt(a, tick);
    if (!end || end.tick !== tick || !Array.isArray(end.line.steps)) return null;
    const i = lastAtOrBefore(a.ticks, tick);
    const before = i > 0 ? this.stateAt(a, a.ticks[i - 1]) : null;
    const events = end.line.events || [];
    const status = before && before.version === end.version ? before.status.slice()
      : new Uint8Array(end.tree.nodes.length);
    for (let k = 0; k <= at && k < events.length; k++) status[events[k][0]] = STATUS_CODE[events[k][1]] || 0;
    const bb = Object.assign({}, before ? before.bb : {});
    let changed = [];
    for (const [k, set, unset] of end.line.steps) {
      if (k > at) break;
      Object.assign(bb, set);
      for (const key of unset || []) delete bb[key];
      changed = k === at ? Object.keys(set).concat(unset || []) : [];
    }
    return { tick, line: end.line, version: end.version, tree: end.tree, status, bb,
      step: { at, count: events.length, changed } };
  }

  // The history of the node at `path` in agent `a`'s ticks: [tick, status
  // code] for each tick that visited it, with the status it had at the end
  // of that tick, ascending (a node of that path in each version).
  historyOf(a, path) {
    const out = [];
    let version = null;
    let id;
    for (const text of a.lines) {
      const o = JSON.parse(text);
      if (o.version !== version) {
        version = o.version;
        const t = this.tree(a.tree, version);
        id = t ? t.byPath.get(path) : undefined;
      }
      let st = -1;
      for (const e of o.events || []) if (e[0] === id) st = STATUS_CODE[e[1]] || 0;
      if (st >= 0) out.push([o.tick, st]);
    }
    return out;
  }

  // The ticks of an agent's marks of one kind, ascending.
  marksOf(a, kind) {
    return a.marks.filter((m) => m[1] === kind).map((m) => m[0]);
  }
}

// Gives each node a label for lists that show nodes out of the tree: its
// name, or for a name that repeats in the tree (default names do:
// is_set[1] under two filters), the shortest end of its path that no other
// node of that name shares ("danger/is_set[1]").
function labelNodes(nodes) {
  const byName = new Map();
  for (const n of nodes) {
    if (!byName.has(n.name)) byName.set(n.name, []);
    byName.get(n.name).push(n);
  }
  for (const same of byName.values()) {
    for (const n of same) {
      const parts = n.path.split('/');
      let label = n.name;
      for (let k = 2; same.length > 1 && k <= parts.length; k++) {
        label = parts.slice(-k).join('/');
        const clash = same.some((o) => o !== n && (o.path === label || o.path.endsWith('/' + label)));
        if (!clash) break;
      }
      n.label = label;
    }
  }
}

// Index of the last element of ascending `arr` that is <= x, or -1.
function lastAtOrBefore(arr, x) {
  let lo = 0;
  let hi = arr.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] <= x) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

// Reads a whole file's text, in slices of about 50 ms so that the page
// stays responsive on a large file; progress(fraction read) after each
// slice. Resolves to { trace, problem } where problem is null or { fatal,
// message } for the page to show: a file that is not a trace is fatal; a
// cut-off or corrupted line stops the reading there and the page shows
// what came before it.
async function readTrace(text, progress) {
  const trace = new Trace();
  const fail = (fatal, message) => ({ trace, problem: { fatal, message } });
  if (text.length === 0) return fail(true, 'The file is empty: there is no trace in it.');
  const lines = text.split('\n');
  const complete = text.endsWith('\n');
  let slice = Date.now();
  for (let i = 0; i < lines.length; i++) {
    if ((i & 1023) === 0 && Date.now() - slice > 50) {
      if (progress) progress(i / lines.length);
      await new Promise((resolve) => setTimeout(resolve, 0));
      slice = Date.now();
    }
    try {
      trace.addLine(lines[i], i + 1);
    } catch (e) {
      if (!(e instanceof TraceError)) throw e;
      if (!trace.header) {
        return fail(true, 'Cannot open this file: ' + e.message + '.');
      }
      const cut = i === lines.length - 1 && !complete;
      const message = cut
        ? 'The file is cut off in the middle of line ' + (i + 1) + ' (a recording that was ' +
          'stopped or is still being written). Showing the ' + i + ' complete lines before it.'
        : 'Line ' + (i + 1) + ' is corrupted: ' + e.message + '. Showing the ' + i +
          ' lines before it; the rest of the file is not read.';
      return fail(trace.agentList.length === 0, message);
    }
  }
  if (trace.agentList.length === 0) {
    return fail(true, 'This trace records no agent: there is nothing to show.');
  }
  if (!trace.ended) {
    return fail(false, 'The trace has no end line: the recording was cut off or is still ' +
      'running. Showing what it has.');
  }
  return { trace, problem: null };
}
