// coverage.js: the viewer's coverage mode. Opens the JSON report of the
// test kit (cov:write, format in docs/TESTING.md, "Coverage of trees") the
// way traces open (file picker, drag and drop, ?coverage=URL) and draws
// each tree as a heat of the ticks its nodes were visited, with each
// node's outcomes; nodes never run and outcomes never taken ("never
// aborted its child") are marked in the tree and listed on the right.
// Uses viewer.js's tree drawing (buildTree, reveal) and its `ui`.
'use strict';

// The report in text, or null when the text is not one (a trace); throws
// with a message when it is a report this page cannot read.
function readCoverage(text) {
  let o;
  try {
    o = JSON.parse(text);
  } catch (e) {
    return null; // a JSON Lines trace is not one JSON value
  }
  if (!o || o.format !== 'bonsai-coverage') return null;
  if (o.version !== 1) throw new Error('a coverage report of version ' + o.version + ' (this page reads version 1)');
  if (!Array.isArray(o.trees)) throw new Error('a coverage report without its "trees" list');
  for (const t of o.trees) {
    if (typeof t.tree !== 'string' || !Array.isArray(t.nodes)) {
      throw new Error('a coverage report with a tree that has no name or no nodes');
    }
  }
  return o;
}

// One report tree as viewer.js draws trees: nodes by id (the ids of
// tree:nodes(); the hidden priority node is not in the report, so a node
// whose parent is missing is a root), children, byPath.
function coverageTree(r) {
  const nodes = [];
  for (const n of r.nodes) {
    nodes[n.id] = { id: n.id, path: n.path, name: n.name, type: n.type, params: {}, children: [],
      parent: null, hidden: false, label: n.name, cov: n };
  }
  for (const n of r.nodes) {
    if (n.parent !== undefined && n.parent !== null && nodes[n.parent]) {
      nodes[n.id].parent = n.parent;
      nodes[n.parent].children.push(n.id);
    }
  }
  return { name: r.tree, version: 'coverage', nodes, byPath: new Map(r.nodes.map((n) => [n.path, n.id])),
    report: r };
}

function percentOf(r) {
  return r.total ? Math.floor(1000 * r.covered / r.total) / 10 : 100;
}

function startCoverage(report, name) {
  ui.trace = null;
  ui.agent = null;
  ui.treeKey = null;
  ui.coverage = { report, trees: report.trees.map(coverageTree), at: 0, node: null };
  $('source').textContent = name;
  document.body.classList.add('loaded', 'coverage');
  document.body.classList.remove('population');
  const wanted = new URLSearchParams(location.search).get('tree');
  const i = ui.coverage.trees.findIndex((t) => t.name === wanted);
  if (i >= 0) ui.coverage.at = i;
  renderCoverage();
}

// Leaves coverage mode (a trace was opened).
function stopCoverage() {
  ui.coverage = null;
  document.body.classList.remove('coverage');
}

// The list of trees on the left, with the share of outcomes each covers.
function renderCoverageTrees() {
  const ul = $('cov-trees');
  ul.textContent = '';
  ui.coverage.trees.forEach((t, i) => {
    const r = t.report;
    const li = document.createElement('li');
    li.dataset.tree = t.name;
    li.className = i === ui.coverage.at ? 'sel' : '';
    li.innerHTML = '<span></span><small></small>';
    li.firstChild.textContent = t.name;
    li.lastChild.textContent = r.covered + '/' + r.total + ' · ' + percentOf(r) + '%';
    li.onclick = () => {
      ui.coverage.at = i;
      ui.coverage.node = null;
      renderCoverage();
    };
    ul.appendChild(li);
  });
}

// Heat of a node visited `ticks` times in a tree whose busiest node was
// visited `max` times: on a log scale, as a root runs thousands of times
// more often than a rare branch; pale to deep blue, deeper than the
// population's heat (the shares here are closer to each other).
function tickHeat(ticks, max) {
  const f = Math.log(1 + ticks) / Math.log(1 + Math.max(1, max));
  return ticks ? 'hsl(205, 85%, ' + Math.round(97 - 38 * f) + '%)' : 'transparent';
}

function countsText(c) {
  return c.ticks + ' ticks · ' + c.success + ' ✓ · ' + c.failure + ' ✗ · ' + c.aborted + ' aborted';
}

function renderCoverage() {
  const cv = ui.coverage;
  const t = cv.trees[cv.at];
  if (!t) {
    $('tree-head').textContent = 'This coverage report has no tree.';
    $('tree').textContent = '';
    return;
  }
  if (ui.treeKey !== t.name + '@' + t.version) buildTree(t);
  const max = Math.max(0, ...t.report.nodes.map((n) => n.ticks));
  t.nodes.forEach((n, id) => {
    const c = n.cov;
    const r = ui.rows[id];
    const never = c.ticks === 0;
    r.li.classList.toggle('never', never);
    r.li.classList.toggle('gap', c.gaps.length > 0);
    r.li.dataset.ticks = c.ticks;
    r.row.style.setProperty('--heat', tickHeat(c.ticks, max));
    r.count.textContent = never ? 'never ran' : countsText(c);
    r.params.textContent = never ? '' : c.gaps.join('; ');
    r.row.title = n.path + ': ' + countsText(c) + (c.gaps.length ? '\n' + c.gaps.join('\n') : '');
    r.row.classList.toggle('picked', cv.node === n.path);
  });
  const r = t.report;
  $('tree-head').textContent = 'Coverage of tree ' + t.name + ': ' + r.covered + ' of ' + r.total +
    ' outcomes (' + percentOf(r) + '%). The heat is the ticks each node was visited (log scale, at most ' +
    max + ').';
  renderCoverageTrees();
  renderGaps(t);
}

// "Never taken": every gap of the tree, in tree order; a click shows the node.
function renderGaps(t) {
  const ul = $('cov-gaps');
  ul.textContent = '';
  for (const c of t.report.nodes) {
    for (const g of c.gaps) {
      const li = document.createElement('li');
      li.dataset.path = c.path;
      li.className = g === 'never ran' ? 'never' : '';
      li.innerHTML = '<b></b> <span></span><small></small>';
      li.children[0].textContent = c.name;
      li.children[1].textContent = g;
      li.children[2].textContent = c.path;
      li.onclick = () => pickCoverageNode(c.path);
      ul.appendChild(li);
    }
  }
  if (!ul.children.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = 'Every outcome was taken.';
    ul.appendChild(li);
  }
  $('cov-gap-count').textContent = ul.querySelector('li[data-path]') ? ul.children.length : '';
}

// Shows a node: scrolled to and flashed, its counts on the right.
function pickCoverageNode(path) {
  const t = ui.coverage.trees[ui.coverage.at];
  const id = t.byPath.get(path);
  if (id === undefined) return;
  ui.coverage.node = path;
  const c = t.nodes[id].cov;
  const box = $('cov-node');
  box.innerHTML = '<b></b><div class="facts"></div>';
  box.firstChild.textContent = c.path;
  const facts = [['type', c.type], ['ticks visited', c.ticks], ['runs', c.runs], ['successes', c.success],
    ['failures', c.failure], ['aborts', c.aborted], ['never taken', c.gaps.join('; ') || 'nothing']];
  for (const [k, v] of facts) {
    const d = document.createElement('div');
    d.innerHTML = '<span></span><span></span>';
    d.firstChild.textContent = k;
    d.lastChild.textContent = v;
    box.lastChild.appendChild(d);
  }
  renderCoverage();
  reveal(path);
}
