-- bonsai.nodes.leaves: the leaves an editor file names. A leaf is looked
-- up by its registered name (bt.register); its properties or ports become
-- its args. A BehaviorTree.CPP port written "{key}" reads (and, written by
-- the leaf, sets) blackboard key `key`: such a leaf is wrapped so that the
-- registered leaf sees an args table whose port fields read the agent's
-- blackboard at each access. Also the constant leaves of the formats
-- (AlwaysSuccess, Failer, Runner...) and the note that lets an exporter
-- find what an editor node was imported as.
local core = require "bonsai.core"

local M = {}

local SUCCESS, FAILURE, RUNNING = "success", "failure", "running"

-- One shared function per constant, so that exporters recognise them.
M.constant = {
  success = function() return SUCCESS end,
  failure = function() return FAILURE end,
  running = function() return RUNNING end,
}

function M.always(status, name)
  return { type = "action", fn = M.constant[status], name = name }
end

-- node -> { kind, leaf, args } (the leaf behind a wrapper) or
-- { format = ..., ... } (the editor node a composition stands for).
M.origin = require("bonsai.formats.kit").provenance "origin"

-- The callbacks of a registered leaf definition: tick, enter, exit, abort,
-- task.
local function callbacks(def)
  if type(def) == "function" then return def end
  if type(def) ~= "table" then return nil end
  return def.fn or def.tick, def.enter, def.exit, def.abort, def.task
end

-- An args table for one blackboard: port fields (refs: port -> key) read
-- and write the blackboard, the others come from args.
local function binder(args, refs)
  -- proxy -> blackboard, both weak: proxies[bb] holds the proxy as long
  -- as bb lives, and bbs must not hold bb (on Lua 5.1 and LuaJIT, whose weak
  -- tables are no ephemerons, the two would keep each other for ever)
  local bbs = setmetatable({}, { __mode = "kv" })
  local proxies = setmetatable({}, { __mode = "k" }) -- blackboard -> proxy
  local mt = {
    __index = function(p, k)
      local key = refs[k]
      if key ~= nil then return bbs[p][key] end
      return args[k]
    end,
    __newindex = function(p, k, v)
      local key = refs[k]
      if key == nil then
        error("port '" .. tostring(k) .. "' is not a blackboard port", 2)
      end
      bbs[p][key] = v
    end,
    __pairs = function(p)
      local all = {}
      for k, v in pairs(args) do all[k] = v end
      for k, key in pairs(refs) do all[k] = bbs[p][key] end
      return next, all, nil
    end,
  }
  return function(bb)
    local p = proxies[bb]
    if not p then
      p = setmetatable({}, mt)
      proxies[bb], bbs[p] = p, bb
    end
    return p
  end
end

-- The node of a leaf registered as `leaf` (kind "action" or "condition"),
-- with static args and port refs (port -> blackboard key, or nil); known:
-- the format's own node names (a set), for the message of a name that is
-- nothing. The
-- leaf must be registered already (with refs, from Lua); its callbacks are
-- looked up at each call, so bt.register still changes it.
function M.leaf(bt, kind, leaf, args, refs, name, known)
  if not core._isleaf(leaf) then
    error("no leaf registered as '" .. leaf .. "'" ..
          M.suggest(bt, leaf, known) .. " (" .. M.provide .. ")", 0)
  end
  if not refs or next(refs) == nil then
    return { type = kind, leaf = leaf, args = args, name = name }
  end
  local def = bt._registered[leaf]
  if def == nil then
    error("no leaf registered from Lua as '" .. leaf .. "' (a leaf with " ..
          "blackboard ports must be)", 0)
  end
  local bind = binder(args or {}, refs)
  local reg = bt._registered
  local node
  if kind == "condition" then
    node = { type = "condition", name = name or leaf, fn = function(a, bb)
      return (callbacks(reg[leaf]))(a, bb, bind(bb))
    end }
  elseif select(5, callbacks(def)) then
    node = { type = "action", name = name or leaf, task = function(a, bb)
      local task = select(5, callbacks(reg[leaf]))
      return task(a, bb, bind(bb))
    end }
  else
    node = { type = "action", name = name or leaf,
      enter = function(a, bb)
        local _, enter = callbacks(reg[leaf])
        if enter then enter(a, bb, bind(bb)) end
      end,
      tick = function(a, bb)
        return (callbacks(reg[leaf]))(a, bb, bind(bb))
      end,
      exit = function(a, bb, _, status)
        local _, _, exit = callbacks(reg[leaf])
        if exit then exit(a, bb, bind(bb), status) end
      end,
      abort = function(a, bb)
        local _, _, exit, abort = callbacks(reg[leaf])
        if abort then abort(a, bb, bind(bb))
        elseif exit then exit(a, bb, bind(bb), "aborted") end
      end }
  end
  M.origin[node] = { kind = kind, leaf = leaf, args = args, refs = refs }
  return node
end

-- What the game provides under an editor file's node name, before the
-- format's own table is looked at: "define" (bt.define), "leaf"
-- (bt.register), or nil.
function M.game(bt, name)
  if bt._defined[name] then return "define" end
  if core._isleaf(name) then return "leaf" end
end

-- The node of type `name` defined with bt.define, from the file's
-- attributes or properties (args, copied; `label`, the name the file gives
-- the node, as args.name unless args has one) and the children already
-- built (marked as nodes, so that bt.invert(child) and the like know them
-- from option tables). Raises the builder's error.
function M.defined(bt, name, args, kids, label)
  for _, k in ipairs(kids) do
    if getmetatable(k) == nil then setmetatable(k, bt.Node) end
  end
  local a = {}
  for k, v in pairs(args or {}) do a[k] = v end
  if a.name == nil and type(label) == "string" and label ~= "" then
    a.name = label
  end
  return bt.node(name, a, kids)
end

-- " (did you mean 'X'?)" for a node name of a file that names nothing: the
-- nearest of the game's registered leaves and defined types and the
-- format's own names (known: a set, or nil); "" when none is near. Each
-- set is sorted: names equally near come in the same order every run.
local function sorted(set)
  local list = {}
  for k in pairs(set) do list[#list + 1] = k end
  table.sort(list)
  return table.concat(list, " ")
end

function M.suggest(bt, name, known)
  return core._suggest(name, table.concat({ core._leafnames(),
    sorted(bt._defined), sorted(known or {}) }, " "))
end

-- How to provide a node name the format does not know, for refusals.
M.provide = "bt.define it, or bt.register a leaf under that name"

-- The leaf a node calls: kind, registered name, args and port refs; or nil
-- when the node is not a named leaf.
function M.named(node)
  local o = M.origin[node]
  if o and o.leaf then return o.kind, o.leaf, o.args, o.refs end
  if (node.type == "action" or node.type == "condition") and
     type(node.leaf) == "string" then
    return node.type, node.leaf, node.args
  end
end

-- Converts a property written in a file: numbers and booleans written as
-- text become numbers and booleans.
function M.value(s)
  if s == "true" then return true end
  if s == "false" then return false end
  local n = tonumber(s)
  if n and s:match("^%s*[-+]?[%d.]") and n == n and n ~= math.huge and
     n ~= -math.huge then
    return n
  end
  return s
end

return M
