// edit.js: the viewer's Edit mode (live only; docs/DEBUGGER.md "Editing").
// It edits the selected agent's tree through the game's editing commands
// (bonsai.debug.edit): the tree as an outline (collapse, search), the
// selected node's parameters in typed fields from its kind's row, its
// conditions checked as they are typed, a palette to insert or wrap with,
// move, duplicate, delete, extract a subtree; undo and redo; a preview of
// what the live agents would do; apply, roll back, save. The game checks every change
// as it checks a file (a refused change shows its place and changes
// nothing). Uses viewer.js's $, ui, command and showMessage.
'use strict';

const edit = {
  doc: null,          // the tree as the game sent it (command 'tree')
  palette: null,      // { palette: [...], conditions: [...] }
  selected: null,     // the selected node's path (kept across versions)
  collapsed: new Set(),// paths of folded nodes
  search: '',
  byId: new Map(),    // node id -> { node, parent }
  pending: null,      // the last answer awaited (buttons wait for it)
};

// Sends a command of the editor; a refusal is shown in the editor's own
// status line (with the place the game gave), not as a passing message.
async function editCommand(body) {
  const r = await command(body, true);
  if (!r) return editStatus('The game did not answer "' + body.cmd + '".', 'error');
  if (!r.ok) return editStatus(r.error, 'error');
  return r.result || {};
}

function editStatus(text, kind) {
  const s = $('edit-status');
  s.textContent = text || '';
  s.className = kind || '';
  return null;
}

// The doc the game sent: drawn, the selection kept by path.
function editShow(doc) {
  if (!doc) return;
  edit.doc = doc;
  edit.byId.clear();
  const index = (n, parent) => {
    edit.byId.set(n.id, { node: n, parent });
    for (const c of n.children || []) index(c, n);
  };
  index(doc.root, null);
  $('edit-tree-name').textContent = doc.tree;
  $('edit-file').textContent = doc.file ? doc.file + ' (' + doc.format + ')' : 'not from a file';
  const held = (doc.held || []).length; // agents held on an older version
  $('edit-version').textContent = 'draft ' + doc.version + (doc.applied ? ' · running' : ' · not applied') +
    (held ? ' · ' + held + (held === 1 ? ' agent' : ' agents') + ' on an older version' : '');
  $('edit-undo').disabled = !doc.undo;
  $('edit-redo').disabled = !doc.redo;
  $('edit-rollback').disabled = !doc.rollback;
  $('edit-save').disabled = !doc.file;
  $('edit-apply').disabled = doc.applied && !held; // (it runs already, for everyone)
  document.body.dataset.editVersion = doc.version;
  if (edit.previewed !== doc.version) { // (a preview of another draft is stale)
    $('edit-preview').innerHTML = '<p class="none">Preview shows what each live agent would keep ' +
      'and abort if the draft were applied now.</p>';
  }
  editDraw();
  editInspect();
}

function editFind(path) {
  for (const { node } of edit.byId.values()) if (node.path === path) return node;
  return null;
}

function editSelected() {
  return edit.selected ? editFind(edit.selected) : null;
}

// The outline: one row per node, folded nodes' children hidden, search
// matches marked (and their ancestors unfolded).
function editDraw() {
  const ul = $('edit-tree');
  ul.textContent = '';
  const q = edit.search.toLowerCase();
  const matches = (n) => q && ((n.name || n.label || '').toLowerCase().includes(q) ||
    n.type.toLowerCase().includes(q));
  const hasMatch = (n) => matches(n) || (n.children || []).some(hasMatch);
  const row = (n, depth) => {
    const li = document.createElement('li');
    li.dataset.path = n.path || '';
    li.dataset.id = n.id;
    li.style.paddingLeft = (depth * 18 + 4) + 'px';
    const kids = n.children || [];
    const folded = edit.collapsed.has(n.path) && !(q && kids.some(hasMatch));
    const tog = document.createElement('span');
    tog.className = 'tog';
    tog.textContent = kids.length ? (folded ? '▸' : '▾') : '';
    tog.onclick = (e) => {
      e.stopPropagation();
      if (edit.collapsed.has(n.path)) edit.collapsed.delete(n.path);
      else edit.collapsed.add(n.path);
      editDraw();
    };
    const label = document.createElement('span');
    label.className = 'label';
    label.textContent = n.name || n.label || n.type;
    const type = document.createElement('small');
    type.textContent = n.script !== undefined ? 'script: ' + n.script : n.type +
      (n.params ? ' ' + Object.entries(n.params).map(([k, v]) => k + '=' + JSON.stringify(v)).join(' ') : '');
    li.append(tog, label, type);
    if (n.inline) {
      const f = document.createElement('b');
      f.className = 'inline';
      f.textContent = 'ƒ';
      f.title = 'Holds inline Lua (' + n.inline.join(', ') + '): kept as it is, not editable here';
      li.appendChild(f);
    }
    if (n.path && n.path === edit.selected) li.classList.add('sel');
    if (edit.running && edit.running.has(n.path)) li.classList.add('run');
    if (matches(n)) li.classList.add('match');
    li.onclick = () => { edit.selected = n.path; editDraw(); editInspect(); };
    ul.appendChild(li);
    if (!folded) for (const c of kids) row(c, depth + 1);
  };
  row(edit.doc.root, 0);
}

// The nodes the selected agent runs now, marked in the outline (by path:
// the draft's nodes that the running version has at the same place).
function editPaint(view) {
  const running = new Set();
  if (view) for (const n of view.tree.nodes) if (view.status[n.id] === 1) running.add(n.path);
  edit.running = running;
  for (const li of document.querySelectorAll('#edit-tree li[data-path]')) {
    li.classList.toggle('run', running.has(li.dataset.path));
  }
}

// The palette row of a node's type (kinds and the game's own types).
function editRow(type) {
  return (edit.palette.palette || []).find((p) => p.type === type);
}

// A typed field for a parameter: number, boolean, a choice, or text.
function editField(param, value, onchange) {
  let input;
  if (param.type === 'boolean') {
    input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = value === true;
    input.onchange = () => onchange(input.checked);
    return input;
  }
  if (param.type.startsWith('enum:')) {
    input = document.createElement('select');
    for (const o of [''].concat(param.type.slice(5).split(','))) {
      const opt = document.createElement('option');
      opt.value = opt.textContent = o;
      input.appendChild(opt);
    }
    input.value = value === undefined ? '' : String(value);
    input.onchange = () => onchange(input.value === '' ? null : input.value);
    return input;
  }
  input = document.createElement('input');
  if (param.type === 'number') input.type = 'number';
  input.value = value === undefined ? '' : String(value);
  input.onkeydown = (e) => { if (e.key === 'Enter') input.blur(); };
  input.onchange = () => {
    const s = input.value.trim();
    if (s === '') return onchange(null);
    if (param.type === 'number') return onchange(Number(s));
    if (param.type === 'value') return onchange(parseValue(s, undefined));
    onchange(s);
  };
  return input;
}

// A script or condition field: checked by the game as it is typed (the
// place of a parse error shown under it), sent on Enter or leaving it.
function editScriptField(value, onchange) {
  const wrap = document.createElement('div');
  wrap.className = 'script';
  const input = document.createElement('input');
  input.value = value || '';
  input.spellcheck = false;
  const err = document.createElement('div');
  err.className = 'parse';
  let seq = 0;
  input.oninput = async () => {
    const mine = ++seq;
    if (input.value.trim() === '') { err.textContent = ''; return; }
    const r = await command({ cmd: 'script', text: input.value }, true);
    if (mine !== seq || !r || !r.ok) return;
    const res = r.result;
    err.textContent = res.error ? input.value + '\n' + ' '.repeat(Math.max(0, (res.at || 1) - 1)) +
      '^ ' + res.error : '';
    input.classList.toggle('bad', !!res.error);
  };
  input.onkeydown = (e) => { if (e.key === 'Enter') input.blur(); };
  input.onchange = () => onchange(input.value.trim() === '' ? null : input.value);
  wrap.append(input, err);
  return wrap;
}

function editOp(ops) {
  return editCommand({ cmd: 'edit', tree: edit.doc.tree, version: edit.doc.version, ops })
    .then((doc) => {
      if (doc) {
        editStatus('Checked by the game: draft ' + doc.version + '.', 'ok');
        editShow(doc);
      }
      return doc;
    });
}

// The inspector: the selected node's name, parameters, conditions and
// what can be done to it.
function editInspect() {
  const box = $('edit-node');
  box.textContent = '';
  const n = editSelected();
  if (!n) {
    box.innerHTML = '<p class="none">Click a node to edit it.</p>';
    return;
  }
  const h = document.createElement('h3');
  h.textContent = (n.name || n.label) + ' ';
  const small = document.createElement('small');
  small.textContent = n.path;
  h.appendChild(small);
  box.appendChild(h);
  const table = document.createElement('table');
  table.className = 'fields';
  const line = (label, field) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.textContent = label;
    const td = document.createElement('td');
    td.appendChild(field);
    tr.append(th, td);
    table.appendChild(tr);
  };
  const set = (key) => (value) => editOp([{ op: 'set', node: n.id, key, value }]);
  line('name', editField({ type: 'string' }, n.name, set('name')));
  const row = editRow(n.type);
  const params = n.params || {};
  if (n.script !== undefined) {
    line('code', editScriptField(n.script, set('code')));
  } else if (row) {
    for (const p of row.params) line(p.name, editField(p, params[p.name], set(p.name)));
  }
  for (const k of Object.keys(params)) {
    if (row && row.params.some((p) => p.name === k)) continue;
    if ((edit.palette.conditions || []).includes(k)) continue;
    line(k, editField({ type: 'value' }, params[k], set(k)));
  }
  box.appendChild(table);
  // the conditions (scripts), folded unless one is set
  const conds = document.createElement('details');
  const sum = document.createElement('summary');
  const used = (edit.palette.conditions || []).filter((k) => params[k] !== undefined);
  sum.textContent = 'Conditions' + (used.length ? ' (' + used.join(', ') + ')' : '');
  conds.appendChild(sum);
  conds.open = used.length > 0;
  conds.id = 'edit-conditions';
  const ctable = document.createElement('table');
  ctable.className = 'fields';
  conds.appendChild(ctable);
  for (const k of edit.palette.conditions || []) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.textContent = k;
    const td = document.createElement('td');
    td.appendChild(editScriptField(params[k], set(k)));
    tr.append(th, td);
    ctable.appendChild(tr);
  }
  box.appendChild(conds);
  if (n.inline) {
    const p = document.createElement('p');
    p.className = 'inline-note';
    p.textContent = 'Inline Lua in ' + n.inline.join(', ') + ': the page keeps it as it is; ' +
      'saving to a .lua file is refused while a node holds one (save as .xml/.json, or name ' +
      'the leaf with bt.register).';
    box.appendChild(p);
  }
  const acts = document.createElement('div');
  acts.className = 'acts';
  const entry = edit.byId.get(n.id);
  const parent = entry.parent;
  const at = parent ? parent.children.indexOf(n) + 1 : 0;
  const btn = (text, id, f, off) => {
    const b = document.createElement('button');
    b.textContent = text;
    b.id = id;
    b.disabled = !!off;
    b.onclick = f;
    acts.appendChild(b);
  };
  btn('↑ Move up', 'edit-up', () => editOp([{ op: 'move', node: n.id, parent: parent.id, index: at - 1 }]),
    !parent || at <= 1);
  btn('↓ Move down', 'edit-down', () => editOp([{ op: 'move', node: n.id, parent: parent.id, index: at + 1 }]),
    !parent || at >= parent.children.length);
  btn('Duplicate', 'edit-dup', () => editOp([{ op: 'duplicate', node: n.id }]), !parent);
  btn('Delete', 'edit-del', () => {
    const up = parent && parent.path;
    editOp([{ op: 'delete', node: n.id }]).then((d) => { if (d) { edit.selected = up; editDraw(); editInspect(); } });
  }, !parent);
  box.appendChild(acts);
  // move into another composite
  const into = document.createElement('div');
  into.className = 'acts';
  const sel = document.createElement('select');
  sel.id = 'edit-into';
  for (const { node: m } of edit.byId.values()) {
    const r = editRow(m.type);
    if (!r || (r.class !== 'composite' && r.class !== 'decorator') || m === n) continue;
    const opt = document.createElement('option');
    opt.value = m.id;
    opt.textContent = m.path;
    sel.appendChild(opt);
  }
  const go = document.createElement('button');
  go.textContent = 'Move into (last)';
  go.id = 'edit-into-go';
  go.disabled = !parent;
  go.onclick = () => editOp([{ op: 'move', node: n.id, parent: Number(sel.value) }]);
  into.append(sel, go);
  box.appendChild(into);
  box.appendChild(editExtractRow(n, parent));
}

// Extract a subtree: the node and its children become a tree of their own
// (named in the field, the node's name by default) and a subtree of it
// takes their place.
function editExtractRow(n, parent) {
  const row = document.createElement('div');
  row.className = 'acts';
  const name = document.createElement('input');
  name.id = 'edit-extract-id';
  name.placeholder = 'new tree\'s name';
  name.value = (n.name || n.label || '').replace(/[^\w.-]/g, '_');
  name.disabled = !parent;
  const go = document.createElement('button');
  go.textContent = 'Extract subtree';
  go.id = 'edit-extract';
  go.title = 'Move this node and its children into a tree of their own, a subtree of it in their place';
  go.disabled = !parent;
  go.onclick = () => editOp([{ op: 'extract', node: n.id, id: name.value }]);
  row.append(name, go);
  return row;
}

// The palette: a type, its parameters in typed fields, and where the new
// node goes (a child of the selected node, before it, or around it).
function editPalette() {
  const sel = $('edit-kind');
  sel.textContent = '';
  const groups = new Map();
  for (const p of edit.palette.palette) {
    const g = { kind: p.class, define: 'bt.define', leaf: 'registered leaves', script: 'script' }[p.from] || p.class;
    if (!groups.has(g)) {
      const og = document.createElement('optgroup');
      og.label = g;
      groups.set(g, og);
      sel.appendChild(og);
    }
    const opt = document.createElement('option');
    opt.value = p.type;
    opt.textContent = p.type + (p.params.length ? ' (' + p.params.map((x) => x.name).join(', ') + ')' : '');
    groups.get(g).appendChild(opt);
  }
  sel.onchange = editPaletteFields;
  editPaletteFields();
}

function editPaletteFields() {
  const box = $('edit-kind-params');
  box.textContent = '';
  const p = editRow($('edit-kind').value);
  edit.newParams = {};
  if (!p) return;
  for (const param of p.params) {
    const label = document.createElement('label');
    label.textContent = param.name + ' ';
    const f = param.type === 'script' ? editScriptField('', (v) => { edit.newParams[param.name] = v; })
      : editField(param, undefined, (v) => { edit.newParams[param.name] = v; });
    f.dataset.param = param.name;
    label.appendChild(f);
    box.appendChild(label);
  }
}

// The node the palette describes.
function editNewNode() {
  const type = $('edit-kind').value;
  const params = {};
  let code;
  for (const [k, v] of Object.entries(edit.newParams || {})) {
    if (v === null || v === undefined) continue;
    if (type === 'script' && k === 'code') code = v;
    else params[k] = v;
  }
  const name = $('edit-new-name').value.trim();
  return Object.assign({ type, params }, code !== undefined ? { code } : {}, name ? { name } : {});
}

function editInsert(where) {
  const n = editSelected();
  if (!n) return editStatus('Select a node first.', 'error');
  const entry = edit.byId.get(n.id);
  const node = editNewNode();
  if (where === 'wrap') return editOp([{ op: 'wrap', node: n.id, with: node }]);
  if (where === 'before') {
    if (!entry.parent) return editStatus('The root has no siblings.', 'error');
    return editOp([{ op: 'insert', parent: entry.parent.id,
      index: entry.parent.children.indexOf(n) + 1, node }]);
  }
  return editOp([{ op: 'insert', parent: n.id, index: where === 'first' ? 1 : null, node }]);
}

async function editPreview() {
  const r = await editCommand({ cmd: 'preview', tree: edit.doc.tree });
  const box = $('edit-preview');
  box.textContent = '';
  if (!r) return;
  edit.previewed = r.version;
  const p = document.createElement('p');
  p.id = 'edit-summary';
  p.textContent = r.agents.length ? 'If applied now: ' + r.summary + '.' : 'No agent runs this tree.';
  box.appendChild(p);
  const ul = document.createElement('ul');
  ul.className = 'list';
  for (const a of r.agents.slice(0, 50)) {
    const li = document.createElement('li');
    li.textContent = 'agent ' + a.agent + ': ' +
      (a.abort.length ? 'aborts ' + a.abort.join(', ') : 'aborts nothing') +
      (a.keep.length ? '; keeps ' + a.keep[a.keep.length - 1] : '');
    if (a.abort.length) li.className = 'aborts';
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

async function editApply() {
  const doc = await editCommand({ cmd: 'apply', tree: edit.doc.tree, version: edit.doc.version });
  if (doc) {
    editStatus('Applied: every agent of ' + doc.tree + ' switches at its next tick' +
      ' (those held on an older version too).', 'ok');
    editShow(doc);
  }
}

// Apply to the agent selected in the list only: its preview first (what it
// keeps and aborts), then the apply; the other agents of the tree stay on
// the version they run (held) until Apply to all.
async function editApplyOne() {
  const a = ui.agent;
  if (!a || a.tree !== edit.doc.tree) {
    return editStatus('Select an agent of ' + edit.doc.tree + ' in the list first.', 'error');
  }
  const p = await editCommand({ cmd: 'preview', tree: edit.doc.tree, agents: [a.id] });
  if (!p) return;
  const doc = await editCommand({ cmd: 'apply', tree: edit.doc.tree, version: edit.doc.version,
    agents: [a.id] });
  if (doc) {
    const n = (doc.held || []).length;
    editStatus('Applied to ' + a.label + ' only (' + p.summary + '): it switches at its next tick; ' +
      n + (n === 1 ? ' other agent stays' : ' other agents stay') +
      ' on the version it runs until Apply to all. Compare them in Population.', 'ok');
    editShow(doc);
  }
}

async function editSimple(cmd, done) {
  const doc = await editCommand({ cmd, tree: edit.doc.tree, version: edit.doc.version,
    stamp: edit.doc.stamp });
  if (doc) {
    editStatus(done(doc), 'ok');
    editShow(doc);
  }
}

// Opens the editor on the selected agent's tree.
async function openEditor() {
  if (!ui.live || !ui.agent) return editStatus('Edit needs a live game and an agent.', 'error');
  if (!edit.palette) edit.palette = await editCommand({ cmd: 'palette' });
  if (!edit.palette) return;
  for (const p of edit.palette.palette) { // (an empty Lua table comes as {})
    if (!Array.isArray(p.params)) p.params = [];
  }
  editPalette();
  const doc = await editCommand({ cmd: 'tree', tree: ui.agent.tree });
  if (doc) {
    editStatus('Editing ' + doc.tree + ' of agent ' + ui.agent.label + '.', '');
    editShow(doc);
  }
}

function wireEditor() {
  $('mode-edit').onclick = () => setMode('edit');
  $('edit-undo').onclick = () => editSimple('undo', (d) => 'Undone: draft ' + d.version + '.');
  $('edit-redo').onclick = () => editSimple('redo', (d) => 'Redone: draft ' + d.version + '.');
  $('edit-preview-go').onclick = editPreview;
  $('edit-apply').onclick = editApply;
  $('edit-apply-one').onclick = editApplyOne;
  $('edit-rollback').onclick = () => editSimple('rollback',
    (d) => 'Rolled back: ' + d.tree + ' runs the version before the last apply.');
  $('edit-save').onclick = () => editSimple('save', (d) => 'Saved to ' + d.file + ' and running.');
  $('edit-reload').onclick = openEditor;
  $('edit-search').oninput = (e) => { edit.search = e.target.value; editDraw(); };
  $('edit-ins-first').onclick = () => editInsert('first');
  $('edit-ins-last').onclick = () => editInsert('last');
  $('edit-ins-before').onclick = () => editInsert('before');
  $('edit-wrap').onclick = () => editInsert('wrap');
  document.addEventListener('keydown', (e) => {
    if (ui.mode !== 'edit' || e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if ((e.ctrlKey || e.metaKey) && e.key === 'z') { $('edit-undo').click(); e.preventDefault(); }
    if ((e.ctrlKey || e.metaKey) && e.key === 'y') { $('edit-redo').click(); e.preventDefault(); }
  });
}

wireEditor();
