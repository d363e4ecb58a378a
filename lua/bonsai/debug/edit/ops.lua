-- bonsai.debug.edit.ops: the tree operations the page sends (insert,
-- wrap, move, delete, duplicate, set), run on a copy of a draft: the new
-- definition, or the first refusal with its place. Whether the result
-- holds as a tree is the caller's check (bt.tree).
local cjson = require "cjson.safe"
local script = require "bonsai.script"
local node = require "bonsai.debug.edit.node"
local make = require "bonsai.debug.edit.make"

local isnode, copy, walk, parentof = node.isnode, node.copy, node.walk,
                                     node.parentof
local settle, named, plain = make.settle, node.named, node.plain

local M = {}

-- The operations, each f(bt, root, op, byid, map, where) on the copy
-- (byid: the page's ids -> its node tables; map: node -> its label);
-- one that returns a node makes it the new root.
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
M.target = target

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

function OPS.insert(bt, root, op, byid, map, where)
  local parent = target(op, byid, "parent", where)
  local i = position(parent, op.index, where)
  local n = make.node(bt, op.node, where)
  table.insert(parent, i, n)
  settle(parent, n, map)
end

function OPS.wrap(bt, root, op, byid, map, where)
  local n = target(op, byid, nil, where)
  local w = make.node(bt, op.with, where)
  local parent, i = parentof(root, n)
  w[#w + 1] = n
  if not parent then return w end -- the new root
  parent[i] = w
  settle(parent, w, map)
end

function OPS.move(bt, root, op, byid, map, where)
  local n = target(op, byid, nil, where)
  local to = target(op, byid, "parent", where)
  for _, e in ipairs(walk(n)) do
    if e.node == to then error(where .. ": a node cannot move into itself", 0) end
  end
  local parent, i = parentof(root, n)
  if not parent then error(where .. ": the root cannot move", 0) end
  settle(parent, n, map)
  if n.name == nil and map[n] then n.name = map[n].name end
  table.remove(parent, i)
  local at = position(to, op.index, where)
  table.insert(to, at, n)
  settle(to, n, map)
end

function OPS.delete(bt, root, op, byid, map, where)
  local n = target(op, byid, nil, where)
  local parent, i = parentof(root, n)
  if not parent then error(where .. ": the root cannot be deleted", 0) end
  settle(parent, n, map)
  table.remove(parent, i)
end

function OPS.duplicate(bt, root, op, byid, map, where)
  local n = target(op, byid, nil, where)
  local parent, i = parentof(root, n)
  if not parent then error(where .. ": the root cannot be duplicated", 0) end
  local c = copy(n)
  c.name = nil
  table.insert(parent, i + 1, c)
  settle(parent, c, map)
end

function OPS.set(bt, root, op, byid, map, where)
  local n = target(op, byid, nil, where)
  local k, v = op.key, op.value
  if v == cjson.null then v = nil end
  if type(k) ~= "string" or k == "" or k == "type" then
    error(where .. ": key must be a parameter's name", 0)
  end
  if v ~= nil and not plain(v) then
    error(where .. ": value must be a number, string, boolean or null", 0)
  end
  if k == "code" and script.source[n] then -- a script's text
    local ok, res = pcall(bt.script, v)
    if not ok then error(where .. ": " .. tostring(res), 0) end
    for key in pairs(n) do if key ~= "name" then n[key] = nil end end
    for key, x in pairs(res) do n[key] = x end
    script.source[n] = script.source[res]
    return
  end
  if type(n[k]) == "function" then
    error(where .. ": " .. named(k) .. " is an inline Lua function; " ..
          "the page cannot change it", 0)
  end
  n[k] = v
end

-- run(bt, root, map, ops): ops on a copy of the definition root (map: its
-- labels): the new root and the labels of its nodes that were root's, or
-- nil and the refusal ("op N (kind, node 'path'): ...").
function M.run(bt, root, map, ops)
  local seen = {}
  local new = copy(root, seen)
  local labels, byid = {}, {}
  for i, e in ipairs(walk(root)) do
    byid[i] = seen[e.node]
    labels[seen[e.node]] = map[e.node]
  end
  for i, op in ipairs(ops) do
    local f = type(op) == "table" and OPS[op.op]
    if not f then
      return nil, "op " .. i .. ": op must be insert, wrap, move, " ..
                  "delete, duplicate or set"
    end
    local n = byid[op.node] or byid[op.parent]
    local where = "op " .. i .. " (" .. op.op ..
                  (n and ", " .. node.place(labels, n) or "") .. ")"
    local ok, res = pcall(f, bt, new, op, byid, labels, where)
    if not ok then return nil, tostring(res) end
    if res then new = res end
  end
  return new, labels
end

return M
