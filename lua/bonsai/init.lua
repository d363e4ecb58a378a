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

-- Named leaves: bt.register("name", fn | {enter, tick, exit, abort} |
-- bt.task(fn) | bt.action(fn)) is core.register, copied above.

-- Hot reload -------------------------------------------------------------

local loaded = {}    -- path -> tree loaded from it
local watched = {}   -- file path -> "mtime:size" when last seen
local watchdirs = {} -- directory -> true

-- Runs a tree or leaf file with bt in scope; returns true and what the file
-- returned, or nil and a message.
local function runfile(path)
  local env = setmetatable({ bt = bt }, { __index = _G })
  local chunk, err = loadfile(path, "t", env)
  if not chunk then return nil, err end
  local ok, res, opts = pcall(chunk)
  if not ok then return nil, tostring(res) end
  return true, res, opts
end

local function basename(path)
  return (path:match("([^/]+)$") or path):gsub("%.lua$", "")
end

-- "mtime:size" of a file, or nil and a message.
local function stamp(path)
  local m, size = core._mtime(path)
  if not m then return nil, size end
  return string.format("%.9f", m) .. ":" .. size
end

-- bt.load(path): runs a file that returns a node (named after the file)
-- or a tree; returns the tree, or nil and a message.
function bt.load(path)
  if type(path) ~= "string" then
    error("bad argument #1 to 'load' (string expected, got " .. type(path) ..
          ")", 2)
  end
  local ok, res, opts = runfile(path)
  if not ok then return nil, res end
  local tree
  if bt.istree(res) then
    tree = res
  elseif isnode(res) then
    local o = {}
    for k, v in pairs(opts or {}) do o[k] = v end
    o.name = o.name or basename(path)
    local good, t = pcall(bt.tree, res, o)
    if not good then return nil, t end
    tree = t
  else
    return nil, path .. ": the file must return a node or a tree (got " ..
           (type(res) == "userdata" and "a userdata that is no tree" or
            type(res)) .. ")"
  end
  loaded[path] = tree
  if watched[path] ~= nil then watched[path] = stamp(path) end -- seen now
  return tree
end

-- bt.reload(path): compiles the file again; the tree loaded from it (and
-- every agent running it, at its next tick) switches to the new version.
-- Returns the tree, or nil and a message with the old version left running.
function bt.reload(path)
  if type(path) ~= "string" then
    error("bad argument #1 to 'reload' (string expected, got " ..
          type(path) .. ")", 2)
  end
  local tree = loaded[path]
  if not tree then return bt.load(path) end
  local ok, res, opts = runfile(path)
  if not ok then return nil, res end
  if not isnode(res) and not bt.istree(res) then
    return nil, path .. ": the file must return a node or a tree (got " ..
           (type(res) == "userdata" and "a userdata that is no tree" or
            type(res)) .. ")"
  end
  local good, err = tree:reload(res, opts)
  if not good then return nil, err end
  if watched[path] ~= nil then watched[path] = stamp(path) end -- seen now
  return tree
end

-- bt.watch(file_or_dir): bt.poll() will reload the file, or the .lua files
-- of the directory (new ones included), when they change on disk.
function bt.watch(path)
  local names = core._dir(path)
  if names then
    watchdirs[path] = true
    for _, name in ipairs(names) do
      if name:match("%.lua$") then
        local f = path .. "/" .. name
        watched[f] = stamp(f)
      end
    end
  else
    local st, err = stamp(path)
    if not st then return nil, err end
    watched[path] = st
  end
  return true
end

-- bt.poll(): checks the watched files' modification times; reloads the
-- trees whose files changed and runs changed leaf files again (their
-- bt.register calls take effect at the next tick). Returns the list of
-- paths reloaded and the list of { path =, error = } that failed.
function bt.poll()
  for dir in pairs(watchdirs) do
    for _, name in ipairs(core._dir(dir) or {}) do
      local f = dir .. "/" .. name
      if name:match("%.lua$") and watched[f] == nil then watched[f] = false end
    end
  end
  local changed = {}
  for f, old in pairs(watched) do
    local now = stamp(f)
    if now and now ~= old then changed[#changed + 1] = f; watched[f] = now end
  end
  table.sort(changed)
  local reloaded, failed = {}, {}
  for _, f in ipairs(changed) do
    local ok, err
    if loaded[f] then
      ok, err = bt.reload(f)
    else
      ok, err = runfile(f)
    end
    if ok then reloaded[#reloaded + 1] = f
    else failed[#failed + 1] = { path = f, error = err } end
  end
  return reloaded, failed
end

bt.builder = function(...)
  return require("bonsai.builder").new(bt, ...)
end

return bt
