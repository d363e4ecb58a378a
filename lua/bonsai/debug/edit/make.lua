-- bonsai.debug.edit.make: the node tables the page creates: a node made
-- from the page's description (a kind, a bt.define'd type, a registered
-- leaf or a script), and the names that keep paths stable (a new node
-- gets one no sibling has; its unnamed siblings keep the names they had).
local cjson = require "cjson.safe"
local node = require "bonsai.debug.edit.node"

local isnode, named, plain = node.isnode, node.named, node.plain

local M = {}

-- Whether name is a kind of the core's table (bt.KINDS).
local function kind(bt, name)
  for _, row in ipairs(bt.KINDS) do
    if row.name == name then return true end
  end
  return false
end

-- The node table of a description's type (its params given), or raises.
local function typed(bt, spec, ps, where)
  if spec.type == "script" then
    if type(spec.code) ~= "string" then
      error(where .. ": a script node needs its code", 0)
    end
    local ok, res = pcall(bt.script, spec.code)
    if not ok then error(where .. ": " .. tostring(res), 0) end
    return res
  elseif kind(bt, spec.type) then
    local n = { type = spec.type }
    for k, v in pairs(ps or {}) do n[k] = v end
    return n
  elseif bt._registered and bt._registered[spec.type] then
    return { type = "action", leaf = spec.type }
  elseif bt._defined and bt._defined[spec.type] then
    local ok, res = pcall(bt.node, spec.type, bt.copy(ps or {}), {})
    if not ok then error(where .. ": " .. tostring(res), 0) end
    return bt.copy(res)
  end
  error(where .. ": no node type " .. named(spec.type) ..
        " (a kind, a bt.define'd type or a registered leaf)", 0)
end

-- A node table made from a page's description: { type, name, params =
-- { k = v }, code (a script), children = { descriptions } }; raises with
-- where.
function M.node(bt, spec, where)
  if type(spec) ~= "table" or type(spec.type) ~= "string" then
    error(where .. ": the node must be an object with a type", 0)
  end
  local ps = spec.params
  if ps ~= nil and type(ps) ~= "table" then
    error(where .. ": params must be an object", 0)
  end
  for k, v in pairs(ps or {}) do
    if type(k) ~= "string" or not plain(v) then
      error(where .. ": parameter " .. named(k) .. " must be a number, " ..
            "string or boolean", 0)
    end
  end
  local n = typed(bt, spec, ps, where)
  if spec.name ~= nil and spec.name ~= cjson.null then
    if type(spec.name) ~= "string" or spec.name == "" then
      error(where .. ": name must be a non-empty string", 0)
    end
    n.name = spec.name
  end
  if spec.children ~= nil then
    if type(spec.children) ~= "table" then
      error(where .. ": children must be a list", 0)
    end
    for i, c in ipairs(spec.children) do
      n[#n + 1] = M.node(bt, c, where .. ", child " .. i)
    end
  end
  return n
end

-- Stable identity: a node the page creates gets a name (its type and a
-- number no sibling has), and its unnamed siblings get the names they
-- had (their default names count places), so no path shifts (bt: the
-- bonsai module, which tells a script node).
function M.settle(parent, n, map, bt)
  for _, c in ipairs(parent) do
    if isnode(c) and c ~= n and c.name == nil and map[c] and
       not bt.script_of(c) then
      c.name = map[c].name
    end
  end
  if n.name == nil then
    local taken = {}
    for _, c in ipairs(parent) do
      if isnode(c) and c.name then taken[c.name] = true end
    end
    local base = bt.script_of(n) and "script" or
                 (n.leaf and tostring(n.leaf)) or n.type
    local k = 1
    while taken[base .. "_" .. k] do k = k + 1 end
    n.name = base .. "_" .. k
  end
end

return M
