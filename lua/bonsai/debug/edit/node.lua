-- bonsai.debug.edit.node: a definition's node tables as the editor sees
-- them: which values are nodes, its nodes in pre-order, the names and
-- paths the compiled tree gives them, and the definition as data for the
-- page (its nodes numbered in pre-order). A draft's deep copy is bt.copy
-- (a script node's provenance kept).

local M = {}

-- Fields of a node table that are not parameters.
local STRUCT = { type = true, name = true }

-- The plain value a page may see or give: a string, a boolean, a finite
-- number.
M.plain = require("bonsai.debug.session").plain

function M.isnode(v)
  return type(v) == "table" and type(rawget(v, "type")) == "string"
end
local isnode = M.isnode

-- The nodes of a definition in pre-order (def[1], def[1][1], ...), each
-- as { node, parent, index }.
function M.walk(root)
  local list = {}
  local function go(n, parent, i)
    list[#list + 1] = { node = n, parent = parent, index = i }
    for j, c in ipairs(n) do
      if isnode(c) then go(c, n, j) end
    end
  end
  go(root, nil, nil)
  return list
end

-- The parent of node n in root and n's index there (nil for the root).
function M.parentof(root, n)
  for _, e in ipairs(M.walk(root)) do
    if e.node == n then return e.parent, e.index end
  end
end

-- The compiled names and paths of a definition's nodes: a map node table
-- -> { name, path } from the tree compiled from it (hidden nodes skipped;
-- a subtree's inlined nodes are not the definition's).
function M.labels(root, tree)
  local map = {}
  local list = tree:nodes()
  local kids = {}
  for _, nd in ipairs(list) do
    if nd.parent then
      kids[nd.parent] = kids[nd.parent] or {}
      table.insert(kids[nd.parent], nd)
    end
  end
  local function shown(nd) -- through hidden wrappers
    while nd and nd.hidden do nd = (kids[nd.id] or {})[1] end
    return nd
  end
  local function go(n, nd)
    nd = shown(nd)
    if not nd then return end
    map[n] = { name = nd.name, path = nd.path }
    local ks, j = kids[nd.id] or {}, 0
    for _, c in ipairs(n) do
      if isnode(c) then
        j = j + 1
        go(c, ks[j])
      end
    end
  end
  go(root, list[1])
  return map
end

-- One node as data, its children left out: { id, type, name (given),
-- label and path (compiled), params = { k = plain value; a subtree's
-- tree by its name }, script (code of bt.script), inline (fields holding
-- Lua functions) }; bt: the bonsai module (bt.script_of).
local function one(n, id, map, bt)
  local d = { id = id, type = n.type, name = n.name, params = {},
              inline = {} }
  local l = map[n]
  if l then d.label, d.path = l.name, l.path end
  local kind, code = bt.script_of(n)
  if kind then d.script, d.kind = code, kind end
  for k, v in pairs(n) do
    if type(k) == "string" and not STRUCT[k] then
      if M.plain(v) then d.params[k] = v
      elseif k == "tree" and n.type == "subtree" and type(v) == "userdata" then
        d.params.tree = v.name -- a tree of its own (extracted)
      elseif type(v) == "function" and not kind then
        d.inline[#d.inline + 1] = k
      end
    end
  end
  table.sort(d.inline)
  if next(d.params) == nil then d.params = nil end
  if #d.inline == 0 then d.inline = nil end
  return d
end

-- A definition as data for the page: each node as one() makes it, with
-- its children (absent: none), ids in pre-order from 1 (bt: the bonsai
-- module).
function M.data(root, map, bt)
  local id = 0
  local function go(n)
    id = id + 1
    local d = one(n, id, map, bt)
    d.children = {}
    for _, c in ipairs(n) do
      if isnode(c) then d.children[#d.children + 1] = go(c) end
    end
    if #d.children == 0 then d.children = nil end
    return d
  end
  return go(root)
end

-- A message's place: "node 'path'" for a node table of the draft.
function M.place(map, n)
  local l = map[n]
  return l and "node '" .. l.path .. "'" or "the new node"
end

-- A name or value in a message, quoted and cut at 60 characters.
function M.named(x)
  x = tostring(x)
  return "'" .. (#x > 60 and x:sub(1, 60) .. "..." or x) .. "'"
end

return M
