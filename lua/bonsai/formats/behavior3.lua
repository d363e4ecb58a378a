-- bonsai.formats.behavior3: behavior3 editor files <-> Bonsai node tables.
-- Two formats: the classic behavior3js / behavior3editor export (a tree, or
-- a project of trees, with `root` naming a node of the `nodes` map and
-- children by id) with behavior3js semantics, and the tree file of the
-- current behavior3 editor (zhandouxiaojiji/behavior3editor: a nested
-- `root` with args, input, output, children, disabled and subtree `path`)
-- with behavior3lua semantics. Built-in nodes map onto Bonsai nodes or
-- compositions of them with the same leaf calls tick by tick (README
-- "Trees from editors"); the others are refused with the reason. Any other
-- name is a leaf registered with bt.register; properties/args are its args.
local cjson = require("cjson").new()
local leaves = require "bonsai.nodes.leaves"
local tointeger = require("bonsai.compat").tointeger
local controls = require "bonsai.nodes.controls"
local paths = require "bonsai.paths"
local kit = require "bonsai.formats.kit"

cjson.decode_max_depth(200)
cjson.decode_invalid_numbers(false)

local M = {}

-- What an importer or bt.script made a node of (kit.provenance).
local sources = kit.provenance "script"

local MAX_NODES, MAX_DEPTH = kit.MAX_NODES, kit.MAX_DEPTH
local MAX_FILES = 32      -- nested subtree files

-- Line and column of byte `pos` in text.
local function linecol(text, pos)
  local line, last = 1, 0
  for nl in text:sub(1, pos - 1):gmatch("()\n") do line, last = line + 1, nl end
  return line, pos - last
end

-- The decoded JSON of text, or an error "FILE:LINE:COL: message".
local function decode(text, file)
  local ok, v = pcall(cjson.decode, text)
  if ok then return v end
  v = tostring(v)
  local pos = tonumber(v:match("character (%d+)"))
  if pos then
    local line, col = linecol(text, pos)
    error(string.format("%s:%d:%d: JSON error: %s", file, line, col, v), 0)
  end
  error(file .. ": JSON error: " .. v, 0)
end

-- A JSON value as args: whole numbers become integers (cjson reads every
-- number as a float), JSON null nil.
local function plain(v)
  if v == cjson.null then return nil end
  if type(v) == "number" then return tointeger(v) or v end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = plain(x) end
  return t
end

-- ctx: file, bt, count, path of the JSON value being read.

local function fail(ctx, path, node, msg)
  kit.fail(kit.at(ctx.file, path), node, msg)
end

-- Counts one more node (and one more level: `leave` when done).
local function count(ctx, path, name)
  ctx.count = ctx.count + 1
  if ctx.count > MAX_NODES then
    fail(ctx, path, name, "the tree expands to more than " .. MAX_NODES ..
         " nodes")
  end
  ctx.level = ctx.level + 1
  if ctx.level > MAX_DEPTH then
    fail(ctx, path, name, "the tree is deeper than " .. MAX_DEPTH ..
         " levels")
  end
end

local function leave(ctx, node)
  ctx.level = ctx.level - 1
  return node
end

local function key(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return "." .. k end
  return "[" .. string.format("%q", k) .. "]"
end

-- A numeric property: a number or a string of one; default when absent
-- (nil: required).
local function number(ctx, path, name, props, prop, default)
  local v = props and props[prop]
  if v == nil or v == cjson.null then
    if default == nil then fail(ctx, path, name, "needs '" .. prop .. "'") end
    return default
  end
  local n = type(v) ~= "boolean" and kit.number(v)
  if not n then
    fail(ctx, path .. ".properties" .. key(prop), name,
         "bad number '" .. tostring(v) .. "' for '" .. prop .. "'")
  end
  return n
end

local function whole(ctx, path, name, props, prop, default)
  local n = number(ctx, path, name, props, prop, default)
  if n ~= math.floor(n) then
    fail(ctx, path, name, "'" .. prop .. "' must be a whole number")
  end
  return tointeger(n)
end

-- Remembers the editor node a composition stands for (for the exporter).
local function from(node, name, props, child)
  leaves.origin[node] = { format = "behavior3", name = name,
                          properties = props, child = child }
  return node
end

-- Node -> the current editor's node it was built from (name, args, input,
-- output, path, children: the nodes built from its children; defined: a
-- node of the game's bt.define, from either format), so the exporters
-- write it back as it was.
M.current = kit.provenance "current"

-- The control node above the root of a tree with Listens -> that root
-- (the exporters write the root).
M.listened = kit.provenance "listened"

local function keep(node, spec, kids, defined)
  if M.current[node] == nil then
    M.current[node] = { name = spec.name, args = spec.args,
                        input = spec.input, output = spec.output,
                        children = kids, defined = defined }
  end
  return node
end

-- Classic behavior3js / behavior3editor ------------------------------------

-- Expressions (behavior3lua's `code` args) through bonsai.script, loaded
-- by the first one: the node of kind "script" or "condition" for code, the
-- `value` of spec's field ("args"; the classic format's "properties").
local FIELDS = { fields = true } -- their expressions are Lua or JavaScript

local function expression(ctx, path, spec, kind, code, field)
  field = field or "args"
  if type(code) ~= "string" then
    fail(ctx, path .. "." .. field, spec.name,
         "needs an expression in 'value'")
  end
  local ok, n = pcall(require("bonsai.compat").require("bonsai.script").node, kind, code, 1, nil,
                      FIELDS)
  if not ok then
    fail(ctx, path .. "." .. field .. ".value", spec.name,
         tostring(n):gsub("^.-%): ", ""))
  end
  return n
end

-- The classic built-ins' importers (their names and kinds: CLASSIC below).
-- Decorators: f(ctx, path, spec, child, again) with child the converted
-- child; actions: f(ctx, path, spec). (Composites take their kind.)
local D = {
  Inverter = function(_, _, _, child) return { type = "invert", child } end,
  -- Limiter resets its count whenever it opens, that is at every run: it
  -- never limits anything in behavior3js.
  Limiter = function(ctx, path, spec, child)
    whole(ctx, path, spec.name, spec.properties, "maxLoop")
    return child
  end,
  MaxTime = function(ctx, path, spec)
    fail(ctx, path, spec.name, "MaxTime ticks its child, then fails if " ..
         "the time is up, and leaves the child open; Bonsai's timeout " ..
         "aborts the child before ticking it (no exact equivalent)")
  end,
  -- Runs the child maxLoop times whatever its results, in the same tick
  -- when it finishes at once, and returns the last run's status.
  Repeater = function(ctx, path, spec, child, again)
    local n = whole(ctx, path, spec.name, spec.properties, "maxLoop", -1)
    local node
    if n == 0 then
      node = leaves.always("success")
    elseif n < 0 then
      node = { type = "repeater", times = 0,
               { type = "force_success", child } }
    elseif n == 1 then
      node = { type = "sequence", child }
    else
      node = { type = "sequence",
        { type = "repeater", times = n - 1,
          { type = "force_success", child } },
        again() }
    end
    return from(node, "Repeater", { maxLoop = n }, child)
  end,
  RepeatUntilFailure = function(ctx, path, spec, child)
    local n = whole(ctx, path, spec.name, spec.properties, "maxLoop", -1)
    if n == 0 then fail(ctx, path, spec.name, "maxLoop 0 returns ERROR") end
    if n < 0 then return { type = "repeat_until_failure", child } end
    return { type = "repeater", times = n, child }
  end,
  RepeatUntilSuccess = function(ctx, path, spec, child)
    local n = whole(ctx, path, spec.name, spec.properties, "maxLoop", -1)
    if n == 0 then fail(ctx, path, spec.name, "maxLoop 0 returns ERROR") end
    return { type = "retry", times = n < 0 and 0 or n, child }
  end,
}

local A = {
  Succeeder = function() return leaves.always("success") end,
  Failer = function() return leaves.always("failure") end,
  Runner = function() return leaves.always("running") end,
  Error = function(ctx, path, spec)
    fail(ctx, path, spec.name, "returns ERROR, which Bonsai does not have")
  end,
  Wait = function(ctx, path, spec)
    local ms = number(ctx, path, spec.name, spec.properties, "milliseconds", 0)
    if ms < 0 then fail(ctx, path, spec.name, "'milliseconds' must be >= 0") end
    return { type = "wait", seconds = ms / 1000 }
  end,
}

-- The name table of rows (kit.names), the kinds no row maps refused by
-- name: every kind a behavior3 file could stand for is in this list, so a
-- kind of the core missing from it fails formats_kinds_spec.
local function names(rows)
  local mapped = {}
  for _, row in ipairs(rows) do
    if row[2] then mapped[row[2]] = true end
  end
  local t = kit.refusals("has no behavior3 equivalent (only registered " ..
                         "leaves can be exported)", { "action", "condition" })
  for kind, why in pairs(kit.refusals("has no behavior3 equivalent", {
    "sequence", "selector", "reactive_sequence", "reactive_selector",
    "invert", "wait", "check", "is_set", "parallel", "filter", "monitor",
    "force_success", "force_failure", "repeater", "retry",
    "repeat_until_failure", "timeout", "time_limit", "limit", "cooldown",
    "run_once", "guard", "priority", "delay", "utility_selector", "subtree",
    "keep_running_until_failure", "control", "if_then_else",
    "while_do_else", "skip_unless_updated", "wait_value_update", "event",
    "wait_event", "event_guard",
    "random_selector",
  })) do
    if not mapped[kind] then t[kind] = why end
  end
  return kit.names("behavior3", rows, t)
end

-- The classic editor's name table: { name, kind, import, export(node,
-- spec) -> the name written (nil: the row's), category } (kit.names).
-- import: composites take the kind; decorators f(ctx, path, spec, child,
-- again); actions f(ctx, path, spec).
local function repeats(max)
  return function(node, spec)
    spec.properties.maxLoop = max(node)
    return "RepeatUntilFailure"
  end
end
local CLASSIC = names {
  -- Sequence and Priority start from the first child at every tick
  { "Sequence", "reactive_sequence", nil, nil, "composite" },
  { "Priority", "reactive_selector", nil, nil, "composite" },
  { "MemSequence", "sequence", nil, nil, "composite" },
  { "MemPriority", "selector", nil, nil, "composite" },
  { "Inverter", "invert", D.Inverter, nil, "decorator" },
  { "RepeatUntilFailure", "repeat_until_failure", D.RepeatUntilFailure,
    repeats(function() return -1 end), "decorator" },
  { nil, "repeater", nil, repeats(function(n)
      return (n.times or 0) > 0 and n.times or -1 end), "decorator" },
  { "RepeatUntilSuccess", "retry", D.RepeatUntilSuccess, function(n, spec)
    local k = n.times or 0
    spec.properties.maxLoop = k == 0 and -1 or k
  end, "decorator" },
  { "Wait", "wait", A.Wait, function(n, spec)
    spec.properties.milliseconds = n.seconds * 1000
  end, "action" },
  { nil, "check" }, -- written as Check, its expression (see export)
  { "Limiter", nil, D.Limiter, nil, "decorator" },
  { "MaxTime", nil, D.MaxTime, nil, "decorator" },
  { "Repeater", nil, D.Repeater, nil, "decorator" },
  { "Succeeder", nil, A.Succeeder, nil, "action" },
  { "Failer", nil, A.Failer, nil, "action" },
  { "Runner", nil, A.Runner, nil, "action" },
  { "Error", nil, A.Error, nil, "action" },
}

-- A leaf registered under name (an action, or a condition when the file's
-- custom node says so), its properties as args.
local function classic_leaf(ctx, here, name, props, category)
  local args
  if props and next(props) ~= nil then
    args = {}
    for k, v in pairs(props) do args[k] = plain(v) end
  end
  local def = ctx.bt._registered[name]
  if category == "condition" and type(def) == "table" and
     def.type == "action" then
    fail(ctx, here, name, "the file's custom node is a condition, but the " ..
         "game registered '" .. name .. "' as an action (a condition is a " ..
         "function or bt.condition: it ends in its tick, true or false)")
  end
  local ok, n = pcall(leaves.leaf, ctx.bt, category == "condition" and
                      "condition" or "action", name, args, nil, nil,
                      CLASSIC.by_name)
  if not ok then fail(ctx, here, name, n) end
  return n
end

-- The title the editor shows for a node of type name, its <property>
-- filled in from props; nil when it is just the type.
local function shown_title(title, name, props)
  if type(title) ~= "string" or title == "" or title == name then
    return nil
  end
  return (title:gsub("<([%w_]+)>", function(k)
    local v = props and props[k]
    if type(v) == "number" and v == math.floor(v) then
      return string.format("%d", v)
    end
    return v ~= nil and tostring(v) or nil
  end))
end

-- The node with id `id` of tree `tree` (a decoded classic tree) at path.
local function classic_node(ctx, tree, tpath, id, path)
  local nodes = tree.nodes
  local spec = nodes[id]
  local here = tpath .. ".nodes" .. key(id)
  if type(spec) ~= "table" then
    fail(ctx, path, nil, "no node with id '" .. tostring(id) .. "'")
  end
  local name = spec.name
  if type(name) ~= "string" then fail(ctx, here, id, "needs a name") end
  if spec.id ~= nil and spec.id ~= id then
    fail(ctx, here, name, "its id '" .. tostring(spec.id) .. "' is not its " ..
         "key '" .. id .. "'")
  end
  if ctx.visiting[spec] then
    fail(ctx, path, name, "cycle through id '" .. id .. "'")
  end
  if ctx.parent[spec] and ctx.parent[spec] ~= path then
    fail(ctx, path, name, "id '" .. id .. "' already has a parent (at " ..
         ctx.parent[spec] .. ")")
  end
  ctx.parent[spec] = path
  count(ctx, here, name)
  ctx.visiting[spec] = true
  local props = spec.properties
  if props ~= nil and type(props) ~= "table" then
    fail(ctx, here, name, "'properties' must be an object")
  end
  local function kid(field)
    local c = spec[field]
    if type(c) ~= "string" then
      fail(ctx, here, name, "needs a '" .. field .. "' id")
    end
    return classic_node(ctx, tree, tpath, c, here .. "." .. field)
  end
  local title = shown_title(spec.title, name, props)
  local node
  local custom = ctx.custom[name]
  local category = custom and custom.category
  local game = leaves.game(ctx.bt, name)
  if game == "define" then -- the game's own type wins
    local kids = {}
    if type(spec.children) == "table" then
      for i, c in ipairs(spec.children) do
        if type(c) ~= "string" then
          fail(ctx, here .. ".children[" .. i .. "]", name, "not an id")
        end
        kids[i] = classic_node(ctx, tree, tpath, c,
                               here .. ".children[" .. i .. "]")
      end
    elseif spec.child ~= nil then
      kids[1] = kid("child")
    end
    local ok, n = pcall(leaves.defined, ctx.bt, name, props, kids, title)
    if not ok then fail(ctx, here, name, n) end
    node = keep(n, { name = name, args = props }, kids, true)
  elseif game == "leaf" then
    node = classic_leaf(ctx, here, name, props, category)
  elseif CLASSIC.by_name[name] and
         CLASSIC.by_name[name][5] == "composite" then
    local list = spec.children
    if type(list) ~= "table" or #list == 0 then
      fail(ctx, here, name, "needs children")
    end
    node = { type = CLASSIC.by_name[name][2] }
    for i, c in ipairs(list) do
      if type(c) ~= "string" then
        fail(ctx, here .. ".children[" .. i .. "]", name, "not an id")
      end
      node[i] = classic_node(ctx, tree, tpath, c,
                             here .. ".children[" .. i .. "]")
    end
  elseif CLASSIC.by_name[name] and
         CLASSIC.by_name[name][5] == "decorator" then
    local child = kid("child")
    node = CLASSIC.by_name[name][3](ctx, here, spec, child, function()
      local visiting, parent = ctx.visiting, ctx.parent -- a second copy
      ctx.visiting, ctx.parent = {}, {}
      local again = classic_node(ctx, tree, tpath, spec.child, here .. ".child")
      ctx.visiting, ctx.parent = visiting, parent
      return again
    end)
  elseif CLASSIC.by_name[name] then
    node = CLASSIC.by_name[name][3](ctx, here, spec)
  elseif ctx.trees[name] then -- another tree of the project as a subtree
    local t = ctx.trees[name]
    if ctx.active[t] then
      fail(ctx, here, name, "subtree recursion: " .. kit.cycle(ctx.chain, t,
        function(x) return ctx.tfile[x] end, ctx.label))
    end
    node = ctx.subtree(name, here)
  elseif category == "composite" or category == "decorator" then
    fail(ctx, here, name, "a custom " .. category .. " of the file: " ..
         "bt.define it (bt.define(\"" .. name .. "\", function(args, " ..
         "children) ... end) gives it the game's behaviour)")
  elseif not custom and (name == "Check" or name == "Calculate") then
    -- the exporter's scripts (behavior3lua's nodes, properties.value); a
    -- name the game defined or registered was taken above
    node = expression(ctx, here, spec, name == "Check" and "condition" or
                      "script", props and props.value, "properties")
  elseif custom then
    node = classic_leaf(ctx, here, name, props, category)
  else
    fail(ctx, here, name, "unknown node type" ..
         leaves.suggest(ctx.bt, name, CLASSIC.by_name) .. " (not a " ..
         "behavior3 node, nor a custom node of the file: " ..
         leaves.provide .. ")")
  end
  -- the title names the node (a defined node had it already)
  if title and game ~= "define" then node.name = title end
  ctx.visiting[spec] = nil
  return leave(ctx, node)
end

-- The trees and custom nodes of a decoded classic tree or project (of
-- file) into ctx: trees by id and by title (the editor's ids are UUIDs),
-- each tree's JSON path (tpath) and file (tfile); the list of its trees.
local function classic_trees(ctx, data, file)
  local project = data.data or data
  local trees, tpath
  if type(project.trees) == "table" then
    trees = project.trees
    tpath = (data.data and "$.data" or "$") .. ".trees"
  else
    trees = { data }
  end
  local function customs(list, path)
    if list == nil then return end
    if type(list) ~= "table" then
      kit.fail(kit.at(file, path), nil, "must be a list")
    end
    for i, c in ipairs(list) do
      if type(c) ~= "table" or type(c.name) ~= "string" then
        kit.fail(kit.at(file, path .. "[" .. i .. "]"), nil,
                 "a custom node needs a name")
      end
      ctx.custom[c.name] = c
    end
  end
  customs(project.custom_nodes, (data.data and "$.data" or "$") ..
          ".custom_nodes")
  for i, t in ipairs(trees) do
    local p = tpath and (tpath .. "[" .. i .. "]") or "$"
    local function bad(msg) kit.fail(kit.at(file, p), nil, msg) end
    if type(t) ~= "table" then bad("a tree must be an object") end
    if type(t.nodes) ~= "table" then bad("needs 'nodes'") end
    if type(t.root) ~= "string" then bad("needs a 'root' id") end
    customs(t.custom_nodes, p .. ".custom_nodes")
    local id = t.id or t.title or tostring(i)
    if ctx.trees[id] then
      bad("duplicate tree id '" .. id .. "'" .. (ctx.tfile[ctx.trees[id]] ~=
          file and " (also in " .. ctx.tfile[ctx.trees[id]] .. ")" or ""))
    end
    ctx.trees[id], ctx.tpath[t], ctx.tfile[t] = t, p, file
    if t.title and t.title ~= id and not ctx.trees[t.title] then
      ctx.trees[t.title] = t
    end
  end
  return trees, project
end

-- A classic tree or project, and the classic files of its library (docs:
-- { full =, data = }): the root node of the tree select names (an id or a
-- title of any of them), else of the project's selected tree, else of its
-- first.
local function parse_classic(ctx, data, select, docs)
  ctx.custom, ctx.trees, ctx.active, ctx.chain = {}, {}, {}, {}
  ctx.tpath, ctx.tfile = {}, {}
  local trees, project = classic_trees(ctx, data, ctx.file)
  for _, d in ipairs(docs) do classic_trees(ctx, d.data, d.full) end
  function ctx.label(t)
    return type(t.title) == "string" and t.title ~= "" and t.title or t.id
  end
  ctx.visiting, ctx.parent = {}, {}
  function ctx.subtree(id, _)
    local t = ctx.trees[id]
    ctx.active[t], ctx.chain[#ctx.chain + 1] = true, t
    -- each use of a subtree is a copy: its nodes may have other parents
    local visiting, parent, file = ctx.visiting, ctx.parent, ctx.file
    ctx.visiting, ctx.parent, ctx.file = {}, {}, ctx.tfile[t]
    local p = ctx.tpath[t]
    local n = classic_node(ctx, t, p, t.root, p .. ".root")
    ctx.visiting, ctx.parent, ctx.file = visiting, parent, file
    ctx.active[t], ctx.chain[#ctx.chain] = nil, nil
    return n
  end
  local main = select or project.selectedTree or (trees[1] and (trees[1].id or
                                                  trees[1].title or "1"))
  if not ctx.trees[main] then
    fail(ctx, "$", nil, "no tree '" .. tostring(main) .. "'" ..
         (ctx.library and " in the file nor its library" or ""))
  end
  -- named by its title: the editor gives each tree a UUID as its id
  local title = ctx.trees[main].title
  return ctx.subtree(main),
         { name = type(title) == "string" and title ~= "" and title or main }
end

-- Current behavior3 editor, behavior3lua semantics ----------------------

local current = {}
local maxloop, bounded -- (below the built-ins)

-- f(ctx, path, spec, kids) -> node; kids: converted children.
current.builtin = {
  -- without children: behavior3lua's loops end at once, with success for a
  -- Sequence and failure for a Selector
  Sequence = function(_, _, _, kids)
    if #kids == 0 then return leaves.always("success") end
    kids.type = "sequence"
    return kids
  end,
  Selector = function(_, _, _, kids)
    if #kids == 0 then return leaves.always("failure") end
    kids.type = "selector"
    return kids
  end,
  -- Succeeds once every child has finished, whatever their results.
  Parallel = function(_, _, _, kids)
    if #kids == 0 then return leaves.always("success") end
    kids.type, kids.success, kids.failure = "parallel", "all", "all"
    return from({ type = "force_success", kids }, "Parallel")
  end,
  AlwaysSuccess = function(_, _, _, kids)
    if #kids == 0 then return leaves.always("success") end
    return { type = "force_success", kids[1] }
  end,
  AlwaysFail = function(_, _, _, kids)
    if #kids == 0 then return leaves.always("failure") end
    return { type = "force_failure", kids[1] }
  end,
  -- Runs its child once: success when that run ends, failure afterwards.
  Once = function(_, _, _, kids)
    local child = kids[1] or leaves.always("success")
    return from({ type = "limit", times = 1,
                  { type = "force_success", child } }, "Once", nil, child)
  end,
  -- One run per tick; success when the child fails. With maxLoop (or
  -- the variable its input names): behavior3lua's count of runs, the node
  -- failing at the tick after the last run (a bt.control, as behavior3-ts's
  -- RetryUntilFailure).
  RepeatUntilFailure = function(ctx, path, spec, kids)
    if maxloop(spec) then
      return bounded(ctx, path, spec, kids, "failure")
    end
    return from({ type = "invert", { type = "repeat_until_failure", kids[1] } },
                "RepeatUntilFailure", nil, kids[1])
  end,
  RepeatUntilSuccess = function(ctx, path, spec, kids)
    if maxloop(spec) then
      return bounded(ctx, path, spec, kids, "success")
    end
    return { type = "retry", times = 0, kids[1] }
  end,
  Repeat = function(ctx, path, spec, kids)
    local n = whole(ctx, path .. ".args", spec.name, spec.args, "count")
    if n <= 0 then return leaves.always("success") end
    return { type = "repeater", times = n, kids[1] }
  end,
  Timeout = function(ctx, path, spec, kids)
    local s = number(ctx, path .. ".args", spec.name, spec.args, "time")
    if s <= 0 then fail(ctx, path, spec.name, "'time' must be > 0") end
    return { type = "timeout", seconds = s, kids[1] }
  end,
  Wait = function(ctx, path, spec)
    local s = number(ctx, path .. ".args", spec.name, spec.args, "time")
    if s <= 0 then
      fail(ctx, path, spec.name, "'time' must be > 0 (behavior3lua's Wait " ..
           "runs for one tick at least)")
    end
    return { type = "wait", seconds = s }
  end,
}
current.builtin.Invert = function(_, _, _, kids)
  return { type = "invert", kids[1] }
end
-- Every unfinished child each tick: success when one succeeds (the others
-- aborted), failure when all failed: a parallel.
current.builtin.Race = function(_, _, _, kids)
  kids.type, kids.success, kids.failure = "parallel", 1, "all"
  return kids
end
-- For each item of the list its input names, the item in the variable its
-- output names, then its children in turn (bt.control).
current.builtin.Foreach = function(ctx, path, spec, kids)
  local list = type(spec.input) == "table" and spec.input[1]
  local item = type(spec.output) == "table" and spec.output[1]
  if type(list) ~= "string" or list == "" or type(item) ~= "string" or
     item == "" then
    fail(ctx, path, spec.name, "needs the list's variable (input) and the " ..
         "item's (output)")
  end
  return controls.foreach(ctx.bt, kids, list, item)
end
current.builtin.ForEach = current.builtin.Foreach
-- A Case is its condition and its action, for the Switch around it.
local cases = setmetatable({}, { __mode = "k" })
current.builtin.Case = function(ctx, path, spec, kids)
  if #kids ~= 2 then
    fail(ctx, path, spec.name, "needs a condition and an action")
  end
  local node = { type = "sequence", kids[1], kids[2] }
  cases[node] = true
  return node
end
-- The cases in order: the first whose condition succeeds runs its action
-- (bt.control).
current.builtin.Switch = function(ctx, path, spec, kids)
  local flat = {}
  for i, k in ipairs(kids) do
    if not cases[k] then
      fail(ctx, path .. ".children[" .. i .. "]", spec.name,
           "a Switch takes only Case nodes")
    end
    flat[#flat + 1], flat[#flat + 2] = k[1], k[2]
  end
  return controls.cases(ctx.bt, flat)
end
current.builtin.Filter = function(ctx, path, spec, kids)
  local list = type(spec.input) == "table" and spec.input[1]
  local out = type(spec.output) == "table" and spec.output or {}
  for i = 1, 3 do
    local v = select(i, list, out[1], out[2])
    if type(v) ~= "string" or v == "" then
      fail(ctx, path, spec.name, "needs the list's variable (input), the " ..
           "item's and the new list's (output)")
    end
  end
  return controls.filter(ctx.bt, kids, list, out[1], out[2])
end
current.builtin.Assert = function(ctx, path, spec, kids)
  local message = spec.args and spec.args.message
  if type(message) ~= "string" then
    fail(ctx, path, spec.name, "needs a 'message'")
  end
  return controls.assert(ctx.bt, kids, message)
end
-- The first child decides (it may run) whether the second or the third
-- runs, to its end (no third: failure): Bonsai's if_then_else.
current.builtin.IfElse = function(ctx, path, spec, kids)
  if #kids ~= 2 and #kids ~= 3 then
    fail(ctx, path, spec.name, "needs 2 or 3 children")
  end
  kids.type = "if_then_else"
  return kids
end
-- Its children in turn, count times (args.count, or the variable its
-- input names), their results ignored; success (with bt.control).
current.builtin.Loop = function(ctx, path, spec, kids)
  local var = type(spec.input) == "table" and spec.input[1] or nil
  if var ~= nil and type(var) ~= "string" then
    fail(ctx, path, spec.name, "'input' must name a variable")
  end
  local n
  if var == nil or var == "" then
    n = whole(ctx, path .. ".args", spec.name, spec.args, "count")
  end
  return controls.loop(ctx.bt, kids, function(bb)
    return n or tonumber(bb[var]) or 0
  end)
end
-- Listen on one of the tree's own events (args.event, behavior3-ts's, or
-- args.builtin, the editor's), in any of behavior3's spellings: an action
-- that starts listening; its child runs when the event fires, under the
-- control node parse puts above the root (controls.listen).
local EVENTS = {
  beforeRun = "before", beforeRunTree = "before", treeBeforeTicked = "before",
  afterRun = "after", afterRunTree = "after", treeAfterTicked = "after",
  afterRunSuccess = "success", afterRunTreeSuccess = "success",
  treeTickedSuccess = "success", afterRunFailure = "failure",
  afterRunTreeFailure = "failure", treeTickedFailure = "failure",
}
local UNHEARD = "fires when the tree is interrupted or cleared (a:abort, " ..
  "a:reset), where no node can tick a child"
local UNHEARD_EVENTS = { interrupted = UNHEARD, treeInterrupted = UNHEARD,
  cleaned = UNHEARD, treeCleaned = UNHEARD }
current.builtin.Listen = function(ctx, path, spec, kids)
  local args = spec.args or {}
  local event = args.event ~= nil and args.event or args.builtin
  if type(event) ~= "string" then
    fail(ctx, path .. ".args", spec.name, "needs an 'event'")
  elseif UNHEARD_EVENTS[event] then
    fail(ctx, path .. ".args", spec.name, "event '" .. event .. "' " ..
         UNHEARD_EVENTS[event] .. " (a game may provide Listen with " ..
         "bt.define)")
  end
  local out = type(spec.output) == "table" and spec.output[1] or nil
  if out ~= nil and (type(out) ~= "string" or out == "") then
    out = nil
  end
  if EVENTS[event] and out then
    fail(ctx, path .. ".output", spec.name, "writes the event's target " ..
         "(behavior3's tree object), which Bonsai has not")
  end
  ctx.listen = ctx.listen or controls.listening()
  local state = ctx.listen
  local k = #state.events + 1
  if EVENTS[event] then
    state.events[k], state.children[k] = EVENTS[event], kids[1]
  else
    -- the game's own event (behavior3-ts's context.dispatch): Bonsai's
    -- events (a:send), heard at the agent's next tick; the payload is the
    -- event's target, written to the output variable
    state.events[k] = "game"
    state.children[k] = { type = "sequence",
      ctx.bt.event(event, { key = out }),
      kids[1] or leaves.always("success") }
  end
  return controls.listener(state, k)
end
-- behavior3-ts's WaitForEvent: running until the game's event args.event
-- is dispatched, then success (behavior3-ts's node has no timeout: it only
-- logs every 5 s that it still waits, and writes nothing): bt.wait_event,
-- the agent's event (a:send) heard at its next tick.
current.builtin.WaitForEvent = function(ctx, path, spec)
  local event = type(spec.args) == "table" and spec.args.event or nil
  if type(event) ~= "string" or event == "" then
    fail(ctx, path .. ".args", spec.name, "needs an 'event' (the name of " ..
         "the event it waits for)")
  end
  return ctx.bt.wait_event(event)
end
-- behavior3-ts's actions that succeed, fail.
current.builtin.JustSuccess = function() return leaves.always("success") end
current.builtin.JustFailure = function() return leaves.always("failure") end
-- behavior3-ts's Watchdog: a test every tick guarding a running child, a
-- handler when the test fails (bt.control).
current.builtin.Watchdog = function(ctx, _, _, kids)
  return controls.watchdog(ctx.bt, kids)
end
-- behavior3-ts's retries (bt.control): count tries at most (args.count,
-- or the variable its input names; neither: no limit).
local function retry(stop)
  return function(ctx, path, spec, kids)
    local var = type(spec.input) == "table" and spec.input[1] or nil
    if var ~= nil and type(var) ~= "string" then
      fail(ctx, path, spec.name, "'input' must name a variable")
    end
    local n
    if (var == nil or var == "") and spec.args and spec.args.count ~= nil then
      n = whole(ctx, path .. ".args", spec.name, spec.args, "count")
    end
    return controls.retry_until(ctx.bt, kids, stop, function(bb)
      if n then return n end
      return var and var ~= "" and tonumber(bb[var]) or nil
    end)
  end
end
current.builtin.RetryUntilSuccess = retry("success")
current.builtin.RetryUntilFailure = retry("failure")
current.builtin.AlwaysRunning = function(ctx, _, _, kids)
  return controls.always_running(ctx.bt, kids)
end
current.builtin.Not = current.builtin.Invert
current.builtin.Inverter = current.builtin.Invert
current.builtin.AlwaysFailure = current.builtin.AlwaysFail

-- Whether behavior3lua's RepeatUntilSuccess/Failure spec counts its runs
-- (args.maxLoop, or a variable its input names).
function maxloop(spec)
  return spec.args and spec.args.maxLoop ~= nil or
    type(spec.input) == "table" and type(spec.input[1]) == "string" and
    spec.input[1] ~= ""
end

-- behavior3lua's RepeatUntilSuccess/Failure counting maxLoop runs (its
-- input's variable wins, as behavior3lua's run(node, env, max_loop) takes
-- it first): runs until one ends with stop (success), failing at the tick
-- after the last run.
function bounded(ctx, path, spec, kids, stop)
  local var = type(spec.input) == "table" and spec.input[1] or nil
  if var ~= nil and type(var) ~= "string" then
    fail(ctx, path, spec.name, "'input' must name a variable")
  end
  local n
  if spec.args and spec.args.maxLoop ~= nil then
    n = whole(ctx, path .. ".args", spec.name, spec.args, "maxLoop")
  end
  return controls.retry_until(ctx.bt, kids, stop, function(bb)
    local v = var and var ~= "" and tonumber(bb[var])
    return v or n
  end)
end

-- How many children each built-in takes (nil: one or more).
current.children = { AlwaysSuccess = "0-1", AlwaysFail = "0-1",
  AlwaysFailure = "0-1", Once = "0-1", Invert = 1, Not = 1, Inverter = 1,
  RepeatUntilFailure = 1, RepeatUntilSuccess = 1, Repeat = 1, Timeout = 1,
  Wait = 0 }

-- The one output variable of spec (a key name); nil when it has none and
-- optional.
local function output(ctx, path, spec, optional)
  local out = type(spec.output) == "table" and spec.output[1]
  if (out == nil or out == "") and optional then return nil end
  if type(out) ~= "string" or not out:match("^[%a_][%w_]*$") then
    fail(ctx, path .. ".output", spec.name, "needs an output variable name")
  end
  return out
end

-- The one input variable of spec (a key name).
local function input(ctx, path, spec)
  local var = type(spec.input) == "table" and spec.input[1]
  if type(var) ~= "string" or not var:match("^[%a_][%w_]*$") then
    fail(ctx, path .. ".input", spec.name, "needs an input variable name")
  end
  return var
end

-- Success when the expression is true.
current.builtin.Check = function(ctx, path, spec)
  return expression(ctx, path, spec, "condition", spec.args and spec.args.value)
end
-- Stores the expression's value in the output variable; success. With no
-- output variable the expression is a script run for its assignments (as
-- the exporter writes a bt.script).
current.builtin.Calculate = function(ctx, path, spec)
  local value = spec.args and spec.args.value
  local out = output(ctx, path, spec, true)
  if type(value) ~= "string" or not out then
    return expression(ctx, path, spec, "script", value)
  end
  return expression(ctx, path, spec, "script", out .. " := (" .. value .. ")")
end
-- Stores a constant (args.value) or an input variable in the output
-- variable; success.
current.builtin.Let = function(ctx, path, spec)
  local out = output(ctx, path, spec)
  local input = type(spec.input) == "table" and spec.input[1]
  local v = spec.args and spec.args.value
  if type(input) == "string" and input ~= "" then
    return expression(ctx, path, spec, "script", out .. " := " .. input)
  elseif type(v) == "number" or type(v) == "boolean" then
    return expression(ctx, path, spec, "script", out .. " := " .. tostring(v))
  elseif type(v) == "string" and not v:find("'") then
    return expression(ctx, path, spec, "script", out .. " := '" .. v .. "'")
  end
  fail(ctx, path .. ".args", spec.name, "'value' must be a number, a " ..
       "boolean or a string without quotes (tables and null are not kept " ..
       "on the blackboard by a script)")
end
-- Compares the input variable with the first of gt, ge, eq, lt, le: a
-- bt.check.
-- The value compared: the input variable, else (behavior3lua's other
-- form) the expression in args.value, compiled as a script condition.
current.builtin.Cmp = function(ctx, path, spec)
  local args = spec.args or {}
  local given = type(spec.input) == "table" and spec.input[1] or nil
  local code = (given == nil or given == "") and type(args.value) == "string"
               and args.value
  local var = not code and input(ctx, path, spec)
  for _, c in ipairs { { "gt", ">" }, { "ge", ">=" }, { "eq", "==" },
                       { "lt", "<" }, { "le", "<=" } } do
    local n = args[c[1]]
    if type(n) == "number" then
      if code then -- (errors at the places of the file's expression)
        local ok, err = require("bonsai.compat").require("bonsai.script").compile(code, nil, FIELDS)
        if not ok then fail(ctx, path .. ".args.value", spec.name, err) end
        return expression(ctx, path, spec, "condition",
                          "(" .. code .. ") " .. c[2] .. " " ..
                          string.format("%.17g", n))
      end
      return { type = "check", key = var, op = c[2], value = n }
    end
  end
  fail(ctx, path .. ".args", spec.name, "needs one of gt, ge, eq, lt, le")
end
-- Whether the input variable holds nothing, something: bt.is_set.
current.builtin.IsNull = function(ctx, path, spec)
  return { type = "invert", { type = "is_set", key = input(ctx, path, spec) } }
end
current.builtin.NotNull = function(ctx, path, spec)
  return { type = "is_set", key = input(ctx, path, spec) }
end
-- Clears the output variable; success.
current.builtin.Clear = function(ctx, path, spec)
  local out = output(ctx, path, spec)
  return { type = "action", fn = function(_, bb)
    bb[out] = nil
    return true
  end }
end
current.children.Check, current.children.Calculate = 0, 0
current.children.Let, current.children.Cmp = 0, 0
current.children.Assert = 1
current.children.Listen = "0-1"
current.children.JustSuccess, current.children.JustFailure = 0, 0
current.children.Watchdog = 3
current.children.RetryUntilSuccess, current.children.RetryUntilFailure = 1, 1
current.children.AlwaysRunning = 1
current.children.IsNull, current.children.NotNull = 0, 0
current.children.Clear = 0
current.children.WaitForEvent = 0

current.refused = {
  Delay = "runs its child later, outside the tree, and succeeds at once " ..
          "(Bonsai has no equivalent)",
  Math = "computes with functions (abs, floor, sin, random, min, max, " ..
         "sum...), which Bonsai's scripts do not call (a game may provide " ..
         "it with bt.define or bt.register)",
}
-- behavior3's leaves over the game's own values: the game provides them.
for _, name in ipairs { "Includes", "Push",
  "Concat", "GetField", "SetField", "Index", "Now", "Random", "RandomIndex",
  "WaitForCount", "Log" } do
  current.refused[name] = "is a leaf of behavior3's runtime over the " ..
    "game's own values (printing, the clock, random draws, tables and " ..
    "lists), which the game provides (bt.register or bt.define)"
end

-- The current editor's name table (kit.names): rows { name, kind,
-- import, export(node, spec, fail) -> the children written (nil: the
-- node's), children = how many it takes, refused = why a name is }; the
-- built-ins not named with a kind below are nodes made of kinds.
local CURRENT = names((function()
  local B = current.builtin
  local function time(node, spec)
    spec.args = { time = node.seconds }
    return { node[1] }
  end
  local rows = {
    { nil, "check" }, -- written as Check, its expression (see export)
    { "Sequence", "sequence", B.Sequence },
    { "Selector", "selector", B.Selector },
    { "Invert", "invert", B.Invert },
    { "AlwaysSuccess", "force_success", B.AlwaysSuccess },
    { "AlwaysFail", "force_failure", B.AlwaysFail },
    { "IfElse", "if_then_else", B.IfElse },
    { "Wait", "wait", B.Wait, time },
    { "Timeout", "timeout", B.Timeout, time },
    { "Repeat", "repeater", B.Repeat, function(node, spec, fail)
      if (node.times or 0) <= 0 then
        fail("'repeater' has no behavior3 equivalent")
      end
      spec.args = { count = node.times }
      return { node[1] }
    end },
    { "RepeatUntilSuccess", "retry", B.RepeatUntilSuccess,
      function(node, _, fail)
        if (node.times or 0) ~= 0 then
          fail("'retry' has no behavior3 equivalent")
        end
        return { node[1] }
      end },
  }
  local named = {}
  for _, row in ipairs(rows) do
    if row[1] then named[row[1]] = true end
  end
  local others = {}
  for name in pairs(B) do
    if not named[name] then others[#others + 1] = name end
  end
  for name in pairs(current.refused) do others[#others + 1] = name end
  table.sort(others)
  for _, name in ipairs(others) do
    rows[#rows + 1] = { name, nil, B[name], refused = current.refused[name] }
  end
  for _, row in ipairs(rows) do row.children = current.children[row[1]] end
  return rows
end)())
current = nil -- read through CURRENT from here

-- The names the current editor's built-ins answer to (refused ones aside),
-- for the did-you-mean of a name that is none of them.
local CURRENT_BUILTINS = {}
for name, row in pairs(CURRENT.by_name) do
  if row[3] then CURRENT_BUILTINS[name] = true end
end

-- what each kind is in each file (formats_kinds_spec)
M.names = { CLASSIC, CURRENT }

local current_node

-- The subtree file `path` names, read relative to the file that names it,
-- or to opts.dir (the editor's workspace directory) when given; refused
-- outside the allowed directories (bonsai.paths: include_dirs, else the
-- workspace or the loaded file's directory and those below).
local function subfile(ctx, jpath, spec)
  local p = spec.path
  if type(p) ~= "string" then fail(ctx, jpath, spec.name, "bad 'path'") end
  local full = paths.resolve(p, ctx.dir or paths.dir(ctx.file), ctx.dirs)
  if not full then
    fail(ctx, jpath, spec.name, "subtree path '" .. p .. "' is outside " ..
         "the directories allowed (" .. table.concat(ctx.dirs, ", ") ..
         "; bt.load's include_dirs option adds others)")
  end
  if ctx.files[full] then
    fail(ctx, jpath, spec.name, "subtree recursion: " ..
         kit.cycle(ctx.chain, full))
  end
  if ctx.depth >= MAX_FILES then
    fail(ctx, jpath, spec.name, "subtree files nested too deep")
  end
  if not ctx.read then
    fail(ctx, jpath, spec.name, "no file to read '" .. p .. "'")
  end
  local data = ctx.used[full] -- a file used twice is read and decoded once
  if not data then
    local text, err = ctx.read(full, ctx.dirs)
    if not text then fail(ctx, jpath, spec.name, tostring(err)) end
    data = decode(text, full)
    ctx.used[full] = data
    ctx.deps[#ctx.deps + 1] = full
  end
  if type(data) ~= "table" or type(data.root) ~= "table" then
    error(full .. ": $: not a behavior3 tree file (no 'root' node)", 0)
  end
  local file, depth, ids = ctx.file, ctx.depth, ctx.ids
  ctx.file, ctx.depth, ctx.files[full], ctx.ids = full, depth + 1, true, {}
  ctx.chain[#ctx.chain + 1] = full
  local node = current_node(ctx, data.root, "$.root")
  ctx.chain[#ctx.chain] = nil
  ctx.file, ctx.depth, ctx.files[full], ctx.ids = file, depth, nil, ids
  return node
end

function current_node(ctx, spec, path)
  if type(spec) ~= "table" then
    fail(ctx, path, nil, "a node must be an object")
  end
  local name = spec.name
  if type(name) ~= "string" then fail(ctx, path, spec.id, "needs a name") end
  count(ctx, path, name)
  if spec.id ~= nil and spec.id ~= cjson.null then
    if ctx.ids[spec.id] then
      fail(ctx, path, name, "duplicate id " .. tostring(spec.id) ..
           " (also at " .. ctx.ids[spec.id] .. ")")
    end
    ctx.ids[spec.id] = path
  end
  if type(spec.path) == "string" and spec.path ~= "" then
    local node = subfile(ctx, path, spec)
    M.current[node] = { name = name, path = spec.path } -- written as a path
    return leave(ctx, node)
  end
  local args = spec.args
  if args ~= nil and type(args) ~= "table" then
    fail(ctx, path, name, "'args' must be an object")
  end
  local kids = {}
  if spec.children ~= nil then
    if type(spec.children) ~= "table" then
      fail(ctx, path, name, "'children' must be a list")
    end
    for i, c in ipairs(spec.children) do
      if type(c) == "table" and c.disabled ~= true then
        kids[#kids + 1] = current_node(ctx, c, path .. ".children[" .. i .. "]")
      elseif type(c) ~= "table" then
        fail(ctx, path .. ".children[" .. i .. "]", name, "not a node")
      end
    end
  end
  local game = leaves.game(ctx.bt, name)
  if game == "define" then -- the game's own type wins
    local a = {}
    for k, v in pairs(args or {}) do a[k] = plain(v) end
    for _, field in ipairs { "input", "output" } do
      if type(spec[field]) == "table" and #spec[field] > 0 then
        a[field] = {}
        for i, v in ipairs(spec[field]) do a[field][i] = v end
      end
    end
    local ok, node = pcall(leaves.defined, ctx.bt, name, a, kids, spec.desc)
    if not ok then fail(ctx, path, name, node) end
    return leave(ctx, keep(node, spec, kids, true))
  end
  local row = game ~= "leaf" and CURRENT.by_name[name]
  if row and row.refused then fail(ctx, path, name, row.refused) end
  local b = row and row[3]
  if b then
    local want = row.children
    if want == "0-1" and #kids > 1 or type(want) == "number" and
       #kids ~= want then
      fail(ctx, path, name, want == 0 and "takes no children" or
           want == 1 and "needs exactly one child" or
           "needs exactly " .. want .. " children")
    elseif want == nil and #kids == 0 and name ~= "Parallel" and
           name ~= "Sequence" and name ~= "Selector" then
      fail(ctx, path, name, "needs children")
    end
    local node = b(ctx, path, spec, kids)
    if type(spec.desc) == "string" and spec.desc ~= "" and node.name == nil then
      node.name = spec.desc
    elseif node.type == "control" and node.name == nil then
      node.name = name -- paths say 'Assert', not 'control[2]'
    end
    return leave(ctx, keep(node, spec, kids))
  end
  if #kids > 0 then
    fail(ctx, path, name, "unknown node type with children" ..
         leaves.suggest(ctx.bt, name, CURRENT_BUILTINS) .. " (a composite " ..
         "or decorator of the game's own: bt.define it)")
  end
  local a
  for k, v in pairs(args or {}) do
    a = a or {}
    a[k] = plain(v)
  end
  for _, field in ipairs { "input", "output" } do
    local list = spec[field]
    if type(list) == "table" and #list > 0 then
      a = a or {}
      a[field] = {}
      for i, v in ipairs(list) do a[field][i] = v end
    end
  end
  local ok, node = pcall(leaves.leaf, ctx.bt, "action", name, a, nil, nil,
                         CURRENT_BUILTINS)
  if not ok then fail(ctx, path, name, node) end
  return leave(ctx, keep(node, spec, kids))
end

-- The files of opts.library (bonsai.paths.library: files and folders of
-- .json and .b3 files, relative to the workspace directory dir, else to
-- the loaded file's), read and decoded: a list of { full =, data = },
-- without the loaded file; each a dependency, its folders listed for
-- bt.poll.
local function library(ctx, list)
  local entries, folders = paths.library(list, ctx.dir or
    paths.dir(ctx.file), ctx.dirs, { [".json"] = true, [".b3"] = true },
    ctx.file)
  for _, dir in ipairs(folders) do ctx.folders[#ctx.folders + 1] = dir end
  local docs, seen = {}, { [paths.normal(ctx.file)] = true }
  for _, entry in ipairs(entries) do
    local full = entry.full
    if not full then
      error(ctx.file .. ": library: '" .. entry.path .. "' is outside the " ..
            "directories allowed (" .. table.concat(ctx.dirs, ", ") ..
            "; bt.load's include_dirs option adds others)", 0)
    end
    if not seen[full] then
      seen[full] = true
      if entry.folder then -- a link in a folder leads nowhere else
        local ok, err = paths.check(full, { entry.folder },
                                    "its folder " .. entry.folder)
        if not ok then error(ctx.file .. ": library: " .. err, 0) end
      end
      local text, err = ctx.read(full, ctx.dirs)
      if not text then error(ctx.file .. ": library: " .. tostring(err), 0) end
      local data = decode(text, full)
      if type(data) ~= "table" or data[1] ~= nil then
        error(full .. ": $: not a behavior3 file (a JSON object expected)", 0)
      end
      ctx.deps[#ctx.deps + 1] = full
      docs[#docs + 1] = { full = full, path = entry.path, data = data }
    end
  end
  return docs
end

-- The current editor's file of the library that tree names: its path
-- relative to the workspace as the editor writes it ("workdir/hero.json"),
-- or its name when one file has it; the loaded file's own data, or the
-- doc chosen; refused when none or several have it.
local function chosen(ctx, data, docs, tree)
  local base = ctx.dir or paths.dir(ctx.file)
  local function rel(full)
    local b = paths.normal(base)
    return b ~= "" and full:sub(1, #b + 1) == b .. "/" and
           full:sub(#b + 2) or full
  end
  local all = { { full = paths.normal(ctx.file), data = data } }
  for _, d in ipairs(docs) do all[#all + 1] = d end
  local found, names = {}, {}
  for _, d in ipairs(all) do
    local r = rel(d.full)
    names[#names + 1] = r
    if r == tree or paths.normal(tree) == r or
       r:gsub("%.[^./]*$", "") == tree or d.data.name == tree then
      found[#found + 1] = d
    end
  end
  if #found == 1 then return found[1] end
  if #found == 0 then
    error(ctx.file .. ": no tree '" .. tree .. "' in the file nor its " ..
          "library (" .. table.concat(names, ", ") .. ")", 0)
  end
  local list = {}
  for i, d in ipairs(found) do list[i] = rel(d.full) end
  error(ctx.file .. ": several trees are named '" .. tree .. "' (" ..
        table.concat(list, ", ") .. "): choose one by its path", 0)
end

-- parse(text, opts): the root node. opts: file, bt, read, deps; tree (the
-- id or title of a project's tree to load instead of the selected one; a
-- current editor file's name or workspace path); library (files and
-- folders whose trees the file may use and tree may choose); dir (the
-- workspace directory subtree paths are relative to); include_dirs (the
-- directories subtree files may come from; default: dir, else the file's
-- own directory, and those below).
function M.parse(text, opts)
  local file = opts.file or "json"
  local data = decode(text, file)
  if opts.dir ~= nil and type(opts.dir) ~= "string" then
    error(file .. ": dir must be a directory (got " .. type(opts.dir) ..
          ")", 0)
  end
  local ctx = { file = file, bt = opts.bt, count = 0, level = 0,
                read = opts.read,
                deps = opts.deps or {}, files = {}, depth = 0, ids = {},
                dir = opts.dir, used = {}, chain = {},
                folders = opts.folders or {},
                dirs = paths.dirs(opts.include_dirs or
                                  { opts.dir or paths.dir(file) }, file) }
  if type(data) ~= "table" or data[1] ~= nil then
    error(file .. ": $: not a behavior3 file (a JSON object expected)", 0)
  end
  local docs = library(ctx, opts.library)
  ctx.library = opts.library ~= nil
  local current = type(data.root) == "table"
  for _, d in ipairs(docs) do
    if (type(d.data.root) == "table") ~= current then
      error(d.full .. ": $: " .. (current and "a classic behavior3 file " ..
            "in the library of a current editor's file" or "a current " ..
            "behavior3 editor's file in the library of a classic file") ..
            " (a library holds files of one format)", 0)
    end
  end
  if current then
    local doc = { full = paths.normal(file), data = data }
    if opts.tree ~= nil then
      if type(opts.tree) ~= "string" then
        error(file .. ": tree must be a name (got " .. type(opts.tree) ..
              ")", 0)
      end
      doc = chosen(ctx, data, docs, opts.tree)
    end
    for _, d in ipairs(docs) do ctx.used[d.full] = d.data end
    ctx.file = doc.data == data and file or doc.full
    ctx.files[doc.full] = true
    ctx.chain[1] = doc.full
    local node = current_node(ctx, doc.data.root, "$.root")
    if ctx.listen then -- the tree's events, for its Listens
      local root = node
      node = controls.listen(ctx.bt, root, ctx.listen)
      M.listened[node] = root
    end
    local name = doc.data.name
    return node, { name = type(name) == "string" and name or nil }
  end
  local function classic(x) -- a classic tree or project
    return type(x.root) == "string" or type(x.nodes) == "table" or
           type(x.trees) == "table" or type(x.data) == "table"
  end
  if classic(data) then
    for _, d in ipairs(docs) do
      if not classic(d.data) then
        error(d.full .. ": $: not a behavior3 file (no 'root' or 'trees')", 0)
      end
    end
    return parse_classic(ctx, data, opts.tree, docs)
  end
  error(file .. ": $: not a behavior3 file (no 'root' or 'trees')", 0)
end

-- Export (classic behavior3editor tree) -----------------------------------

-- The name in names (status -> name) of node when it is one of the formats'
-- constant leaves (leaves.always), else nil.
local CLASSIC_CONSTANTS = { success = "Succeeder", failure = "Failer",
                            running = "Runner" }
local CURRENT_CONSTANTS = { success = "AlwaysSuccess", failure = "AlwaysFail" }
local function constant(node, names)
  if node.type ~= "action" then return nil end
  for status, name in pairs(names) do
    if node.fn == leaves.constant[status] then return name end
  end
end

-- Lays the exported nodes out left to right as the classic editor's
-- auto-organize does: a column per depth, a row per leaf, a parent level
-- with the middle of its children; sets each node's display, returns the
-- root's y (the tree's root block sits left of it).
local COLUMN, ROW = 250, 100

local function layout(nodes, rootid)
  local row = 0
  local function place(id, depth)
    local spec = nodes[id]
    local kids = spec.children or (spec.child and { spec.child }) or {}
    local y
    if #kids == 0 then
      y, row = row * ROW, row + 1
    else
      local first, last
      for i, k in ipairs(kids) do
        local ky = place(k, depth + 1)
        if i == 1 then first = ky end
        last = ky
      end
      y = (first + last) / 2
    end
    spec.display = { x = (depth + 1) * COLUMN, y = y }
    return y
  end
  return place(rootid, 0)
end

-- A classic behavior3editor tree (JSON), with custom_nodes for the leaves
-- it uses, laid out.
local function export_classic(root, opts)
  local nodes, custom, seen, n = {}, {}, {}, 0
  local function add(node, path)
    if type(node) ~= "table" or type(node.type) ~= "string" then
      error("export behavior3: " .. path .. ": not a node", 0)
    end
    n = n + 1
    local id = string.format("n%d", n)
    local spec = { id = id, properties = {} }
    nodes[id] = spec
    local o = leaves.origin[node]
    local kind, leaf, args, refs = leaves.named(node)
    local src = sources[node]
    local function child(c, i)
      return add(c, path .. "/" .. (c.name or c.type .. "[" .. i .. "]"))
    end
    local def = M.current[node]
    def = def and def.defined and def
    if o and o.format == "behavior3" and o.name == "Repeater" then
      spec.name, spec.properties.maxLoop = "Repeater", o.properties.maxLoop
      spec.child = child(o.child, 1)
    elseif def then -- a node of the game's bt.define, as the file had it
      spec.name = def.name
      for k, v in pairs(def.args or {}) do spec.properties[k] = v end
      spec.properties.input, spec.properties.output = def.input, def.output
      local kids = def.children
      if #kids == 1 then spec.child = child(kids[1], 1)
      elseif #kids > 1 then
        spec.children = {}
        for i, c in ipairs(kids) do spec.children[i] = child(c, i) end
      end
      if not seen[def.name] then
        seen[def.name] = true
        custom[#custom + 1] = { name = def.name, category = #kids == 0 and
          "action" or #kids == 1 and "decorator" or "composite",
          title = def.name, description = "", properties = {} }
      end
    elseif leaf then
      if refs and next(refs) then
        error("export behavior3: " .. path .. ": blackboard ports have no " ..
              "behavior3 equivalent", 0)
      end
      spec.name = leaf
      for k, v in pairs(args or {}) do spec.properties[k] = v end
      if not seen[leaf] then
        seen[leaf] = true
        custom[#custom + 1] = { name = leaf, category = kind, title = leaf,
                                description = "", properties = {} }
      end
    elseif src or node.type == "check" then -- behavior3lua's nodes
      local code = src and not src.renamed and src.code or
        node.type == "check" and require("bonsai.compat").require("bonsai.script").check_code(node)
      if not code then
        error("export behavior3: " .. path .. ": this " .. (src and
              "script's keys are remapped" or "check has no expression"), 0)
      end
      spec.name = (src and src.kind == "script") and "Calculate" or "Check"
      spec.properties.value = code
    elseif constant(node, CLASSIC_CONSTANTS) then
      spec.name = constant(node, CLASSIC_CONSTANTS)
    else
      local row = CLASSIC.by_kind[node.type]
      if not row then
        error("export behavior3: " .. path .. ": '" .. node.type .. "' " ..
              (CLASSIC.refused[node.type] or "has no behavior3 equivalent"),
              0)
      end
      spec.name = row[4] and row[4](node, spec) or row[1]
      if row[5] == "decorator" then
        spec.child = child(node[1], 1)
      elseif row[5] == "composite" then
        spec.children = {}
        for i, c in ipairs(node) do spec.children[i] = child(c, i) end
      end
    end
    spec.title = node.name or spec.name
    spec.description = ""
    return id
  end
  local name = opts and opts.name or "tree"
  local rootid = add(root, root.name or root.type)
  local y = layout(nodes, rootid)
  return cjson.encode({ version = "0.3.0", scope = "tree", id = name,
    title = name, description = "", root = rootid, properties = {},
    display = { camera_x = 0, camera_y = 0, camera_z = 1, x = 0, y = y },
    nodes = nodes, custom_nodes = #custom > 0 and custom or nil })
end

-- Export (current behavior3 editor tree file) ------------------------------

-- The node the current editor reads for node (nested; ids in preorder,
-- from *id): as the importer read it when it did, else mapped from its type.
local function current_spec(node, path, id)
  local function fail(msg)
    error("export behavior3-current: " .. path .. ": " .. msg, 0)
  end
  if type(node) ~= "table" or type(node.type) ~= "string" then
    fail("not a node")
  end
  if M.listened[node] then return current_spec(M.listened[node], path, id) end
  id[1] = id[1] + 1
  local spec, kids = { id = id[1] }, {}
  local o = M.current[node]
  local kind, leaf, args, refs = leaves.named(node)
  local src = sources[node]
  if o then
    spec.name, spec.args, spec.path = o.name, o.args, o.path
    spec.input, spec.output = o.input, o.output
    kids = o.children or kids
  elseif leaf then
    if refs and next(refs) then fail("blackboard ports have no behavior3 " ..
                                     "equivalent (input and output lists)") end
    spec.name = leaf
    for k, v in pairs(args or {}) do
      if k == "input" or k == "output" then spec[k] = v
      else spec.args = spec.args or {}; spec.args[k] = v end
    end
  elseif src or node.type == "check" then
    local code = src and not src.renamed and src.code or
      node.type == "check" and require("bonsai.compat").require("bonsai.script").check_code(node)
    if not code then fail("this " .. (src and "script's keys are remapped" or
                          "check has no expression")) end
    spec.name = (src and src.kind == "script") and "Calculate" or "Check"
    spec.args = { value = code }
  elseif constant(node, CURRENT_CONSTANTS) then
    spec.name = constant(node, CURRENT_CONSTANTS)
  else
    local row = CURRENT.by_kind[node.type]
    if not row then
      fail("'" .. node.type .. "' " .. (CURRENT.refused[node.type] or
           "has no behavior3 equivalent"))
    end
    spec.name = row[1]
    kids = row[4] and row[4](node, spec, fail) or kids
    if not row[4] then
      for i, c in ipairs(node) do kids[i] = c end
    end
  end
  if node.name and node.name ~= spec.name then spec.desc = node.name end
  if #kids > 0 then
    spec.children = {}
    for i, c in ipairs(kids) do
      spec.children[i] = current_spec(c, path .. "/" ..
        (c.name or c.type .. "[" .. i .. "]"), id)
    end
  end
  return spec
end

-- export(root, opts) with opts.current: a tree file of the current behavior3
-- editor (zhandouxiaojiji/behavior3editor, read by behavior3lua), which
-- lays the tree out itself; else a classic behavior3editor tree.
function M.export(root, opts)
  if not (opts and opts.current) then return export_classic(root, opts) end
  local name = opts.name or "tree"
  local tree = current_spec(root, root.name or root.type, { 0 })
  -- written by hand: cjson writes an empty list as {}
  return '{"version":"1.8.0","name":' .. cjson.encode(name) ..
         ',"desc":"","export":true,"firstid":1,"group":[],"import":[],' ..
         '"vars":[],"root":' .. cjson.encode(tree) .. "}"
end

return M
