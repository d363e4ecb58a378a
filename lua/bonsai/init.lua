-- bonsai: behavior trees for Lua with a C core.
-- `require "bonsai"` loads the C module bonsai.core (compiler, VM, agents,
-- blackboards) and adds the DSL: constructors that build plain node tables
-- (marked with the bt.Node metatable), aliases, and the fluent builder.
-- Nothing here runs per tick: bt.tree compiles the node tables in C.

local core = require "bonsai.core"

-- The class bonsai is annotated in meta.lua, for editors.
---@type bonsai
local bt = {}
for k, v in pairs(core) do
  if k:sub(1, 1) ~= "_" then bt[k] = v end
end

local Node = { __name = "bonsai.node" }
bt.Node = Node

local function isnode(x) return getmetatable(x) == Node end
bt.isnode = isnode

local function node(t) return setmetatable(t, Node) end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- Leaves ------------------------------------------------------------------

-- bt.action(fn | name | {enter, tick, exit, abort}, args)
local function leaf(kind)
  return function(def, args)
    local n
    if type(def) == "string" then
      n = { leaf = def }
    elseif type(def) == "table" and not isnode(def) then
      n = copy(def)
    else
      n = { fn = def }  -- bt.tree reports anything that is not a function
    end
    n.type = kind
    if args ~= nil then n.args = args end
    return node(n)
  end
end

bt.action = leaf "action"
bt.condition = leaf "condition"

-- bt.task(fn, args): fn runs as a coroutine; each yield means running
function bt.task(fn, args)
  return node { type = "action", task = fn, args = args }
end

function bt.wait(t)
  if type(t) == "number" then t = { seconds = t } end
  local n = copy(t)
  n.type = "wait"
  return node(n)
end

-- Conditions on the blackboard, evaluated in C.
function bt.check(key, op, value)
  return node { type = "check", key = key, op = op, value = value }
end

function bt.is_set(key)
  return node { type = "is_set", key = key }
end

-- Composites and decorators -----------------------------------------------

-- A table form { children..., name = ..., params... } becomes a node.
local function composite(kind)
  return function(t)
    if type(t) ~= "table" or isnode(t) then
      error("bt." .. kind .. " takes a table of children", 2)
    end
    t.type = kind
    return node(t)
  end
end

-- bt.invert(child) or bt.invert{ child, name = ... }
local function decorator(kind)
  return function(t)
    if isnode(t) then return node { type = kind, t } end
    if type(t) ~= "table" then
      error("bt." .. kind .. " takes a node or a table", 2)
    end
    t.type = kind
    return node(t)
  end
end

for _, k in ipairs { "sequence", "selector", "reactive_sequence",
                     "reactive_selector", "parallel", "filter", "monitor",
                     "guard" } do
  bt[k] = composite(k)
end
for _, k in ipairs { "invert", "force_success", "force_failure", "repeater",
                     "retry", "repeat_until_failure", "timeout", "time_limit",
                     "limit", "cooldown", "run_once" } do
  bt[k] = decorator(k)
end

bt.fallback = bt.selector                -- alias
bt.active_selector = bt.reactive_selector -- alias
bt.inverter = bt.invert                  -- alias

function bt.named(name, n)
  n.name = name
  return n
end

-- Named leaves, as registered from Lua (the importers' {key} ports call
-- them through a wrapper), and the definition of every tree, for
-- tree:export. ---------------------------------------------------------

local registered = {} -- leaf name -> leafdef given to bt.register
bt._registered = registered

-- bt.register("name", fn | {enter, tick, exit, abort} | bt.task(fn) |
-- bt.action(fn))
function bt.register(name, def)
  local r = core.register(name, def)
  if type(name) == "string" then registered[name] = def end
  return r
end

local defs = setmetatable({}, { __mode = "k" }) -- tree -> { root, opts }

function bt.tree(root, opts)
  local ok, t = pcall(core.tree, root, opts)
  if not ok then error(t, 0) end
  defs[t] = type(root) == "table" and { root = root, opts = opts } or nil
  return t
end

-- Files: loaders, bt.load/bt.reload/bt.import, bt.watch/bt.poll ----------

local files = require("bonsai.loaders")(bt)

local methods = getmetatable(core.tree(bt.action(function() end))).methods
local reload = methods.reload
function methods.reload(tree, root, opts)
  local ok, err = reload(tree, root, opts)
  if ok then
    if type(root) == "userdata" then defs[tree] = defs[root]
    else defs[tree] = { root = root, opts = opts } end
  end
  return ok, err
end

function methods.export(tree, fmt)
  return files.export(tree, fmt, defs[tree])
end

bt.builder = function(...)
  return require("bonsai.builder").new(bt, ...)
end

return bt
