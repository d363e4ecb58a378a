-- bonsai: behavior trees for Lua with a C core.
-- `require "bonsai"` loads the C module bonsai.core (compiler, VM, agents,
-- blackboards) and adds the DSL: constructors that build plain node tables
-- (marked with the bt.Node metatable), aliases, and the fluent builder.
-- Nothing here runs per tick: bt.tree compiles the node tables in C.

local core = require("bonsai.compat").core() -- require "bonsai.core"

-- The class bonsai is annotated in meta.lua, for editors.
---@type bonsai
local bt = {}
for k, v in pairs(core) do
  if k:sub(1, 1) ~= "_" then bt[k] = v end
end
bt._checkopts = core._checkopts -- (t, what, words): refuses an unknown key
bt._nearest = core._nearest     -- (word, words): the word meant, or nil
bt._suggest = core._suggest     -- (word, words): " (did you mean ...?)" or ""

-- The kinds by name (core.KINDS: each with the keys its node tables take).
local kinds = {}
for _, k in ipairs(core.KINDS) do kinds[k.name] = k end

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

-- Events (bonsai_agent_send): bt.event(name [, { key = k }]), a condition
-- on the events delivered to this tick; bt.wait_event(name [, { key = k,
-- timeout = s }]), an action that waits for one. The options' other keys
-- (name...) go to the node table too.
local function eventnode(kind)
  return function(name, opts)
    local n = {}
    if type(opts) == "table" and not isnode(opts) then n = copy(opts) end
    n.type = kind
    n.event = name
    return node(n)
  end
end

bt.event = eventnode "event"
bt.wait_event = eventnode "wait_event"

-- Scripts (BehaviorTree.CPP's script language), compiled once, here: a
-- comparison of a key becomes a bt.check. bonsai.script needs LPeg: it is
-- loaded by the first script.
local lazy = require("bonsai.compat").require -- modules used on first use
local function scripts() return lazy "bonsai.script" end

-- A script that does not compile is refused by bt.tree, naming the node's
-- path (the node holds its code in `script`, and no function).
local DEFER = { defer = true }

function bt.script(code)
  return node(scripts().node("script", code, 2, nil, DEFER))
end

function bt.script_condition(code)
  return node(scripts().node("condition", code, 2, nil, DEFER))
end

function bt.enums(t)
  scripts().add_enums(t)
end

-- bt.script_of(node): the kind ("script" or "condition") and the code of
-- the script a node table was made from (bt.script, bt.script_condition,
-- a file's script node), or nil (no script made it).
function bt.script_of(n)
  local s = package.loaded["bonsai.script"] -- (no script made yet: none)
  local src = s and type(n) == "table" and s.source[n]
  if not src then return nil end
  return src.kind, src.code
end

-- bt.parse_script(code): true when code parses as a script, else nil and
-- the message ("at character N: ..."), as an editor checks it while typed.
function bt.parse_script(code)
  local ok, err = scripts().parse(code)
  if ok then return true end
  return nil, err
end

-- bt.copy(node [, seen]): a definition's deep copy: node tables and their
-- inner tables copied (metatables kept), functions, userdata (trees) and
-- other values shared, a script node's provenance kept (the copy is the
-- same script to bt.script_of and to the exporters); seen, given, is
-- filled with original table -> its copy.
local function deepcopy(t, seen)
  if type(t) ~= "table" then return t end
  if seen[t] then return seen[t] end
  local c = {}
  seen[t] = c
  for k, v in pairs(t) do c[k] = deepcopy(v, seen) end
  local s = package.loaded["bonsai.script"]
  if s and s.source[t] then s.source[c] = s.source[t] end
  return setmetatable(c, getmetatable(t))
end

function bt.copy(n, seen)
  if seen ~= nil and type(seen) ~= "table" then
    error("bt.copy: seen must be a table, got " .. type(seen), 2)
  end
  return deepcopy(n, seen or {})
end

-- The scripts of pre- and post-conditions (skip_if, run_while, on_success...
-- on any node), compiled when bt.tree walks the node tables: fn, or fn and
-- the check (key, op, value) that a comparison of a key is, run in C; then
-- the keys it reads or writes (space-separated). Inside a remapping
-- subtree (map: its inner key -> the caller's) the keys are renamed as the
-- script compiles, as an importer's subtree scope renames them: the
-- function reads the caller's keys, a comparison stays a check in C. With field "script":
-- the keys of node's own script (its field `script`), or nil and why it
-- is refused. Given a function (a condition a format compiled), its
-- source and keys when a script made it, else nil. Given node, a string's
-- last result is the code its file wrote when the node holds another
-- (bonsai.script's `written`), for dumps and traces.
core._script(function(code, field, node, map)
  if field == "script" then return scripts().node_keys(node, code, map) end
  if type(code) == "function" then -- a condition a file's script made
    local s = package.loaded["bonsai.script"]
    local src = s and s.source[code]
    if not src or type(src.code) ~= "string" then return nil end
    return src.code, table.concat(src.keys or {}, " ")
  end
  local rename = type(map) == "table" and function(k)
    local outer = map[k]
    return "key", type(outer) == "string" and outer or k
  end or nil
  local f, err, key, op, value, list = scripts().condition(code, field, rename)
  if not f then return nil, err end
  local written = node and scripts().written[node]
  return f, key, op, value, table.concat(list, " "),
         written and written[field]
end)

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

-- One constructor per kind of the core's table (core.KINDS); bt.subtree
-- and the leaves have their own, above and below.
for _, k in ipairs(core.KINDS) do
  if k.class == "composite" then
    bt[k.name] = composite(k.name)
  elseif k.class == "decorator" and k.name ~= "subtree" then
    bt[k.name] = decorator(k.name)
  end
end

-- bt.guard{ event = "heard", abort = "none" | "lower", child }: the guard
-- of an event, an event_guard node.
local check_guard = bt.guard
function bt.guard(t)
  if type(t) == "table" and not isnode(t) and t.event ~= nil then
    t.type = "event_guard"
    return node(t)
  end
  return check_guard(t)
end

bt.fallback = bt.selector                -- alias
bt.active_selector = bt.reactive_selector -- alias
bt.inverter = bt.invert                  -- alias

function bt.named(name, n)
  if isnode(name) and type(n) == "string" then
    error("bt.named takes the name first: bt.named(\"" .. n .. "\", node)", 2)
  end
  if type(name) ~= "string" or type(n) ~= "table" then
    error("bt.named(name, node): a string and a node (got " .. type(name) ..
          " and " .. type(n) .. ")", 2)
  end
  n.name = name
  return n
end

-- bt.utility(fn, node): node with utility = fn, for a utility_selector
function bt.utility(fn, n)
  n.utility = fn
  return n
end

-- Subtrees ------------------------------------------------------------------

-- bt.subtree(tree_or_name, { name =, args =, remap = { inner = "outer" } }):
-- the tree's root, inlined as a child when bt.tree compiles (a name is
-- looked up among the trees bt.tree and bt.load made).
function bt.subtree(tree, opts)
  local ok, err = pcall(core._checkopts, opts, "bt.subtree",
                        "name args remap utility")
  if not ok then error(err, 2) end
  local n = { type = "subtree", tree = tree }
  for k, v in pairs(opts or {}) do
    if k ~= "type" and k ~= "tree" then n[k] = v end
  end
  return node(n)
end

-- The blackboard a Lua leaf inside a remapping subtree receives: bb seen
-- through map (inner key -> caller's key). Reads and writes go to bb under
-- the caller's key; the methods take inner keys; observers get bb and the
-- caller's key; pairs lists inner names (a caller's key hidden by a remap
-- is left out). Made by the C core once per agent and map.
local function view(bb, remap)
  local map, inv = {}, {} -- (a copy: the agent keeps the view by remap, a
  -- weak key that the view must not refer to, as on Lua 5.1 and LuaJIT a
  -- reload's old remap would never go)
  for inner, outer in pairs(remap) do map[inner], inv[outer] = outer, inner end
  local function key(k) return map[k] or k end
  local methods = {
    get = function(_, k, default) return bb:get(key(k), default) end,
    set = function(_, k, v) return bb:set(key(k), v) end,
    has = function(_, k) return bb:has(key(k)) end,
    observe = function(_, k, fn) return bb:observe(key(k), fn) end,
    unobserve = function(_, h) return bb:unobserve(h) end,
  }
  local function iter()
    local it = bb:pairs()
    return function()
      while true do
        local k, v = it()
        if k == nil then return nil end
        local inner = inv[k]
        if inner then return inner, v end
        if map[k] == nil then return k, v end -- else hidden by a remap
      end
    end
  end
  methods.pairs = function() return iter() end
  return setmetatable({}, {
    __name = "bonsai.blackboard view",
    __index = function(_, k)
      local m = methods[k]
      if m then return m end
      return bb[key(k)]
    end,
    __newindex = function(_, k, v) bb[key(k)] = v end,
    __pairs = function() return iter() end,
    blackboard = bb, -- the blackboard seen
  })
end
core._view(view)

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

-- Node types of the game's own: bt.define, bt.node -------------------------

local defined = {} -- type name -> builder(args, children)
bt._defined = defined -- the importers look names up here first

-- bt.define("Name", builder): builder(args, children) returns a node; a
-- later bt.define changes later definitions, not built trees.
function bt.define(name, builder)
  if type(name) ~= "string" or name == "" then
    error("bt.define: the type name must be a non-empty string", 2)
  end
  if type(builder) ~= "function" then
    error("bt.define '" .. name .. "': the builder must be a function", 2)
  end
  defined[name] = builder
end

-- bt.node("Name", args, children): the node the builder of Name returns;
-- args.name names it unless the builder did (a copy of the node table, so
-- a builder that returns one table each time is not renamed everywhere).
function bt.node(name, args, children)
  local builder = type(name) == "string" and defined[name]
  if not builder then
    error("bt.node: no node type defined as '" .. tostring(name) .. "'" ..
          (type(name) == "string" and core._suggest(name, defined) or "") ..
          " (bt.define it)", 2)
  end
  if args ~= nil and type(args) ~= "table" then
    error("bt.node '" .. name .. "': args must be a table", 2)
  end
  if children ~= nil and type(children) ~= "table" then
    error("bt.node '" .. name .. "': children must be a list", 2)
  end
  local n = builder(args or {}, children or {})
  if type(n) ~= "table" or type(rawget(n, "type")) ~= "string" then
    error("bt.define '" .. name .. "': the builder returned " ..
          (type(n) == "table" and "a table that is no node" or type(n)) ..
          " (a node expected)", 2)
  end
  local label = args and args.name
  if n.name == nil and type(label) == "string" and label ~= "" then
    n = node(copy(n))
    n.name = label
  end
  return n
end

function bt.tree(root, opts)
  local ok, t = pcall(core.tree, root, opts)
  if not ok then error(t, 0) end
  return t
end

-- Files: loaders, bt.load/bt.reload/bt.import, bt.watch/bt.poll ----------

local loaders = require "bonsai.loaders"
loaders.bind(bt)
bt.loaders = loaders.registry
bt.import, bt.load, bt.reload = loaders.import, loaders.load, loaders.reload
local watch = require "bonsai.watch"
bt.watch, bt.poll = watch.watch, watch.poll
-- (bonsai.debug.edit: which file a tree came from, which files are watched)
bt._files = { loaded = loaders.loaded, watching = watch.watching }
-- bt.readfile(path [, max]): a regular file's bytes, bounded (bonsai.paths;
-- docs/FORMATS.md, "Which files a tree file may read")
bt.readfile = require("bonsai.paths").read

-- The methods of the C types (core._metatables: tree, agent, blackboard,
-- control), to which the methods written in Lua are added below.
local tree_methods = core._metatables.tree.methods
local agent_methods = core._metatables.agent.methods

-- tree:export(format): from the definition the tree keeps (tree:_source)
function tree_methods.export(tree, fmt)
  return loaders.export(tree, fmt, tree:_source())
end

bt.builder = function(...)
  return lazy("bonsai.builder").new(bt, ...)
end

-- Seeing the AI think ----------------------------------------------------

-- bt.record(path, agents): a recorder writing the trace file (lua-cjson is
-- loaded on first use only)
function bt.record(path, agents)
  return lazy("bonsai.record").record(bt, path, agents)
end

-- a:subscribe, a:unsubscribe, a:on_tick, bt.subscribe, bt.unsubscribe: any
-- number of consumers of an agent's ticks (bonsai.subscribe), added to the
-- agent methods of bonsai.core
do
  local sub = require "bonsai.subscribe"
  agent_methods.subscribe = sub.subscribe
  agent_methods.unsubscribe = sub.unsubscribe_agent
  agent_methods.on_tick = sub.on_tick
  bt.subscribe, bt.unsubscribe = sub.subscribe_all, sub.unsubscribe
end

-- tree:dot(a), tree:mermaid(a): added to the tree methods of bonsai.core
function tree_methods.dot(tree, agent)
  return lazy("bonsai.export").dot(tree, agent)
end
function tree_methods.mermaid(tree, agent)
  return lazy("bonsai.export").mermaid(tree, agent)
end

-- tree:profile([on]): the per-node profile (bonsai.profile)
function tree_methods.profile(tree, on)
  return lazy("bonsai.profile").profile(tree, on)
end

-- bt.debug: the live server (bonsai.debug and lua-socket are loaded on
-- first use; poll() before serve() loads nothing)
do
  local impl
  local debug_ = {}
  for _, k in ipairs { "serve", "poll", "add", "remove", "command", "close",
                       "clients" } do
    debug_[k] = function(...)
      if impl == nil then
        if k == "poll" then return 0 end
        if k == "clients" then return 0, 0 end
        if k == "close" then return end
        impl = lazy("bonsai.debug").new(bt)
      end
      return impl[k](...)
    end
  end
  local serve, close = debug_.serve, debug_.close
  function debug_.serve(...) -- bt.debug.port and .url: where it listens
    local port, url = serve(...)
    debug_.port, debug_.url = port, url
    return port, url
  end
  function debug_.close()
    debug_.port, debug_.url = nil, nil
    return close()
  end
  bt.debug = debug_
end

-- The LuaJIT path (bonsai.luajit): on LuaJIT with its compiler and the FFI,
-- bt.tick_all, a:tick and c:tick step the C core's ticks from Lua and call
-- the leaves there; BONSAI_FFI=0 in the environment, or
-- bt.config{ ffi = false }, keeps the lua_call path.
local luajit = require "bonsai.luajit"
if os.getenv("BONSAI_FFI") ~= "0" then luajit.install(core) end

-- bt.config([opts]): sets what opts gives ({ ffi = bool }: the LuaJIT
-- path, where this Lua can take it); returns the settings now.
function bt.config(opts)
  if opts ~= nil then
    if type(opts) ~= "table" then
      error("bt.config: a table of options expected, got " .. type(opts), 2)
    end
    core._checkopts(opts, "bt.config", "ffi")
    if opts.ffi ~= nil and type(opts.ffi) ~= "boolean" then
      error("bt.config: 'ffi' must be a boolean, got " .. type(opts.ffi), 2)
    end
    if opts.ffi == true then luajit.install(core)
    elseif opts.ffi == false then luajit.remove() end
  end
  return { ffi = luajit.on() }
end

-- A name bonsai does not have: a misspelt constructor ("sequnce"), another
-- runtime's ("fallback_star", "Sequence") or a misspelt constant
-- ("SUCESS") is refused with the name meant: an ALL-CAPS name among the
-- module's constants, any other among its functions and tables. A name
-- near none of them reads nil, so that `bt.NAME == nil` tests for a name
-- of a later version (rawget(bt, name) always does).
setmetatable(bt, { __index = function(t, k)
  if type(k) ~= "string" then return nil end
  local caps = k:match("^[%u_][%u%d_]*$") ~= nil
  local names = {}
  for name, v in pairs(t) do
    if type(name) == "string" and name:sub(1, 1) ~= "_" and
       (caps and name:match("^[%u_][%u%d_]*$") or not caps and
        (type(v) == "function" or type(v) == "table")) then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  local near = core._nearest(k, table.concat(names, " "))
  if near then
    error("bonsai has no '" .. k .. "': did you mean bt." .. near .. "?", 2)
  end
  return nil
end })

return bt
