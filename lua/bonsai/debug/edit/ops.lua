-- bonsai.debug.edit.ops: the tree operations the page sends (insert,
-- wrap, move, delete, duplicate, extract, set), run on a copy of a draft: the new
-- definition, or the first refusal with its place. Whether the result
-- holds as a tree is the caller's check (bt.tree).
local cjson = require "cjson.safe"
local node = require "bonsai.debug.edit.node"
local make = require "bonsai.debug.edit.make"

local isnode, walk, parentof = node.isnode, node.walk, node.parentof
local named, plain = node.named, node.plain

local M = {}

-- The operations, each f(ctx, op, where) on the copy: ctx = { bt, root,
-- byid (the page's ids -> its node tables), map (node -> its label), tree
-- and name (the tree edited, its name), made (id -> tree: the trees
-- extract made) }; one that returns a node makes it the new root.
local OPS = {}
M.OPS = OPS

local function target(op, byid, field, where)
  local n = byid[op[field or "node"]]
  if not n then
    error(where .. ": no node " .. tostring(op[field or "node"]) ..
          " in this version of the draft", 0)
  end
  return n
end

-- The index op gives among parent's children (default: after the last).
local function position(parent, i, where)
  local count = 0
  for _, c in ipairs(parent) do if isnode(c) then count = count + 1 end end
  if i == nil or i == cjson.null then return count + 1 end
  if type(i) ~= "number" or i ~= math.floor(i) or i < 1 or i > count + 1 then
    error(where .. ": index must be 1.." .. (count + 1), 0)
  end
  return i
end

function OPS.insert(ctx, op, where)
  local parent = target(op, ctx.byid, "parent", where)
  local i = position(parent, op.index, where)
  local n = make.node(ctx.bt, op.node, where)
  table.insert(parent, i, n)
  make.settle(parent, n, ctx.map, ctx.bt)
end

function OPS.wrap(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local w = make.node(ctx.bt, op.with, where)
  local parent, i = parentof(ctx.root, n)
  w[#w + 1] = n
  if not parent then return w end -- the new root
  parent[i] = w
  make.settle(parent, w, ctx.map, ctx.bt)
end

function OPS.move(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local to = target(op, ctx.byid, "parent", where)
  for _, e in ipairs(walk(n)) do
    if e.node == to then error(where .. ": a node cannot move into itself", 0) end
  end
  local parent, i = parentof(ctx.root, n)
  if not parent then error(where .. ": the root cannot move", 0) end
  if n.name == nil and ctx.map[n] then n.name = ctx.map[n].name end
  -- (it keeps its name: its path moves, no more)
  make.settle(parent, n, ctx.map, ctx.bt)
  table.remove(parent, i)
  local at = position(to, op.index, where)
  table.insert(to, at, n)
  make.settle(to, n, ctx.map, ctx.bt)
end

function OPS.delete(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local parent, i = parentof(ctx.root, n)
  if not parent then error(where .. ": the root cannot be deleted", 0) end
  make.settle(parent, n, ctx.map, ctx.bt)
  table.remove(parent, i)
end

function OPS.duplicate(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local parent, i = parentof(ctx.root, n)
  if not parent then error(where .. ": the root cannot be duplicated", 0) end
  local c = ctx.bt.copy(n)
  c.name = nil
  table.insert(parent, i + 1, c)
  make.settle(parent, c, ctx.map, ctx.bt)
end

-- Node n replaced by node r (n's name kept): wherever the draft holds it
-- (or as the root), among the page's ids and in the labels.
local function replace(ctx, n, r)
  r.name = n.name
  for _, e in ipairs(walk(ctx.root)) do
    if e.node == n and e.parent then e.parent[e.index] = r end
  end
  if ctx.root == n then ctx.root = r end
  for id, x in pairs(ctx.byid) do
    if x == n then ctx.byid[id] = r end
  end
  ctx.map[r] = ctx.map[n]
end

function OPS.set(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local k, v = op.key, op.value
  if v == cjson.null then v = nil end
  if type(k) ~= "string" or k == "" or k == "type" then
    error(where .. ": key must be a parameter's name", 0)
  end
  if v ~= nil and not plain(v) then
    error(where .. ": value must be a number, string, boolean or null", 0)
  end
  if k == "code" and ctx.bt.script_of(n) then -- a script's text
    local ok, res = pcall(ctx.bt.script, v)
    if not ok then error(where .. ": " .. tostring(res), 0) end
    replace(ctx, n, res)
    return
  end
  if type(n[k]) == "function" then
    error(where .. ": " .. named(k) .. " is an inline Lua function; " ..
          "the page cannot change it", 0)
  end
  n[k] = v
end

-- Whether a tree named id exists in the game, but one extract made (so
-- an extraction undone can be made again): a subtree by that name
-- compiles (the probe is compiled under the tree's own name, as each
-- edit's check is).
local function taken(ctx, id)
  if ctx.made[id] then return false end
  local ok = pcall(ctx.bt.tree, { type = "subtree", tree = id },
                   { name = ctx.name })
  ctx.tree:_register() -- (the probe took the tree's name)
  return ok
end

-- extract { node, id }: the node and its children become a tree of their
-- own named id (bt.tree), and a subtree of it takes their place, named as
-- the node was (docs/DEBUGGER.md, "Extract a subtree").
function OPS.extract(ctx, op, where)
  local n = target(op, ctx.byid, nil, where)
  local parent, i = parentof(ctx.root, n)
  if not parent then
    error(where .. ": the root cannot be extracted (it is the tree)", 0)
  end
  local id = op.id
  if type(id) ~= "string" or #id > 100 or not id:match("^[%a_][%w_.%-]*$") then
    error(where .. ": id must be a tree's name (a letter or _, then " ..
          "letters, digits, _ . -)", 0)
  end
  if taken(ctx, id) then
    error(where .. ": a tree named " .. named(id) .. " exists", 0)
  end
  if n.name == nil and ctx.map[n] then n.name = ctx.map[n].name end
  make.settle(parent, n, ctx.map, ctx.bt)
  local ok, tree = pcall(ctx.bt.tree, n, { name = id })
  if not ok then error(where .. ": " .. tostring(tree), 0) end
  ctx.made[id] = tree
  parent[i] = { type = "subtree", tree = tree, name = n.name }
end

-- run(bt, root, map, ops, tree, made): ops on a copy of the definition
-- root (map: its labels; tree: the tree edited; made: the trees extract
-- made, id -> tree): the new root, or nil and the refusal ("op N (kind,
-- node 'path'): ...").
function M.run(bt, root, map, ops, tree, made)
  local seen = {}
  local ctx = { bt = bt, root = bt.copy(root, seen), map = {}, byid = {},
                tree = tree, name = tree.name, made = made }
  for i, e in ipairs(walk(root)) do
    ctx.byid[i] = seen[e.node]
    ctx.map[seen[e.node]] = map[e.node]
  end
  for i, op in ipairs(ops) do
    local f = type(op) == "table" and OPS[op.op]
    if not f then
      return nil, "op " .. i .. ": op must be insert, wrap, move, " ..
                  "delete, duplicate, extract or set"
    end
    local n = ctx.byid[op.node] or ctx.byid[op.parent]
    local where = "op " .. i .. " (" .. op.op ..
                  (n and ", " .. node.place(ctx.map, n) or "") .. ")"
    local ok, res = pcall(f, ctx, op, where)
    if not ok then return nil, tostring(res) end
    if res then ctx.root = res end
  end
  return ctx.root
end

return M
