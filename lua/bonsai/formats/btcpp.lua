-- bonsai.formats.btcpp: BehaviorTree.CPP 4 XML, as Groot2 saves it.
-- parse(text, opts) turns the main tree of a file into Bonsai node tables:
-- an ID the game defined (bt.define) or registered (bt.register) is the
-- game's node; else built-in controls and decorators map onto Bonsai nodes
-- (README "Trees from editors"), other IDs are refused; a registered
-- leaf's ports are its args ("{key}" reads blackboard key `key`); SubTree
-- elements are expanded in place, their port remapping applied to the keys
-- their leaves use. export(root, opts) writes a node table back as XML.
local xml = require "bonsai.formats.xml"
local leaves = require "bonsai.nodes.leaves"
local compat = require "bonsai.compat"
local isinteger, tointeger = compat.isinteger, compat.tointeger
local controls = require "bonsai.nodes.controls"
local paths = require "bonsai.paths"
local kit = require "bonsai.formats.kit"

local M = {}

-- What an importer or bt.script made a node of (kit.provenance): the
-- script's source, its kind and whether a subtree renamed its keys.
local sources = kit.provenance "script"

-- Node -> { id, element (the SubTree), tree (its root element) } for each
-- SubTree expanded, so the exporter writes it back as a SubTree.
M.expanded = kit.provenance "expanded"

local MAX_NODES, MAX_DEPTH = kit.MAX_NODES, kit.MAX_DEPTH
local MAX_INCLUDES = 32  -- include depth
local MAX_INCLUDED = 8 * 1024 * 1024 -- bytes of all included files

-- Attributes every node may carry that change nothing here.
local harmless = { name = true, ID = true, _description = true, _uid = true,
                   _fullpath = true }

-- BT.CPP's pre- and post-condition attributes: Bonsai's fields, on any node.
local scripted = { _failureIf = "failure_if", _successIf = "success_if",
                   _skipIf = "skip_if", _while = "run_while",
                   _onHalted = "on_halted", _onFailure = "on_failure",
                   _onSuccess = "on_success", _post = "post" }

-- Context of one parse: ctx.file, ctx.bt, ctx.trees (ID -> element),
-- ctx.models (ID -> { kind =, ports = set }), ctx.count, ctx.active.

local function where(ctx, e, msg)
  kit.fail(kit.at(e.file or ctx.file, e.line, e.col), e.attrs.ID or e.tag,
           msg, e.attrs.name)
end

-- Resolves blackboard key `key` seen inside scope to a key of the caller's
-- blackboard, or to a literal: returns "key", k or "value", v.
local function resolve(scope, key)
  if key:sub(1, 1) == "@" then return "key", key:sub(2) end -- root key
  while scope do
    local m = scope.map[key]
    if m then
      if m.value ~= nil then return "value", m.value end
      key, scope = m.key, scope.parent
    elseif scope.auto then
      scope = scope.parent
    else
      return "key", scope.prefix .. key
    end
  end
  return "key", key
end

-- The key a port's text "{k}" names ("{=}": the port's own name; "{}":
-- ""), or nil for a literal. Ports, SubTree ports and the SubTrees of
-- trees outside the file read their keys here.
local function portref(name, text)
  local ref = text:match("^{(.*)}$")
  if ref == "=" then return name end
  return ref
end

-- A port's text: "key", k for "{k}" (seen through the scope), else
-- "value", v.
local function port(scope, name, text)
  local ref = portref(name, text)
  if ref then
    if ref == "" then return "value", text end
    return resolve(scope, ref)
  end
  return "value", leaves.value(text)
end

-- The node's parameter `name` as a number; `default` when absent (nil:
-- required).
local function number(ctx, e, name, default)
  local text = e.attrs[name]
  if text == nil then
    if default == nil then where(ctx, e, "needs port '" .. name .. "'") end
    return default
  end
  if text:match("^{.*}$") then
    where(ctx, e, "port '" .. name .. "' reads the blackboard; Bonsai's " ..
          "parameters are fixed numbers")
  end
  local n = kit.number(text)
  if not n then
    where(ctx, e, "bad number '" .. text .. "' for port '" .. name .. "'")
  end
  return n
end

local function whole(ctx, e, name, default)
  local n = number(ctx, e, name, default)
  if n ~= math.floor(n) then
    where(ctx, e, "port '" .. name .. "' must be a whole number")
  end
  return tointeger(n)
end

-- Ports BehaviorTree.CPP 3 named otherwise, for the message of a file of
-- format 3 read as format 4.
local renamed = { failure_threshold = "failure_count",
                  success_threshold = "success_count" }

-- Checks that a built-in has only the ports it takes and the right number
-- of children.
local function shape(ctx, e, ports, nchildren)
  for _, k in ipairs(e.order) do
    if not harmless[k] and not ports[k] then
      local now = renamed[k] and ports[renamed[k]] and renamed[k]
      where(ctx, e, "unknown port '" .. k .. "'" .. (now and
            " (BehaviorTree.CPP 3's name: format 4 calls it '" .. now .. "')"
            or ctx.bt._suggest(k, ports)))
    end
  end
  if nchildren == "many" then
    if #e == 0 then where(ctx, e, "needs at least one child") end
  elseif #e ~= nchildren then
    where(ctx, e, nchildren == 0 and "takes no children" or
          nchildren == 1 and "needs exactly one child" or "bad children")
  end
end

local convert, build, build_node -- function(ctx, e, scope) -> node

-- The node of the script in attribute attr of e (kind "script" or
-- "condition"; wrap: a format for the code, "!(%s)"), its keys seen
-- through the subtree scope. bonsai.script (LPeg) is loaded by the first
-- script of a file.
local function scripted_node(ctx, e, scope, kind, attr, wrap)
  local code = e.attrs[attr]
  if code == nil then where(ctx, e, "needs port '" .. attr .. "'") end
  if wrap then code = string.format(wrap, code) end
  local ok, n = pcall(require("bonsai.compat").require("bonsai.script").node, kind, code, 1,
    function(key) return resolve(scope, key) end)
  if not ok then
    where(ctx, e, "'" .. attr .. "': " .. tostring(n):gsub("^.-%): ", ""))
  end
  return n
end

-- The script `code` (element e's attribute attr, or a text made from it)
-- for the node field `field` (skip_if, on_success...), keys seen through
-- the scope, checked here; also whether a subtree renamed a key. The node
-- gets a text, compiled when the tree is built as Lua's skip_if = "hp < 3"
-- is (one comparison of a key: a check in C): the code itself, or with
-- renamed keys the comparison it became; else (a renamed script of more
-- than one comparison) the function compiled here.
local function compiled(ctx, e, scope, attr, field, code)
  local script = require("bonsai.compat").require("bonsai.script")
  code = code or e.attrs[attr]
  local f, changed, key, op, value, keys = script.condition(code, field,
    function(k) return resolve(scope, k) end)
  if not f then where(ctx, e, "'" .. attr .. "': " .. tostring(changed)) end
  if not changed then return code, false end
  local text = key and script.check_code { key = key, op = op, value = value }
  if text then return text, true end
  script.source[f] = { kind = "condition", code = code, renamed = changed,
                       keys = keys }
  return f, true
end

-- Node -> { [field] = the code its file wrote } for its pre- and
-- post-conditions whose keys a subtree renamed: the node holds the
-- comparison the code became (bonsai.script's `written`: dumps and traces
-- show the code written; the exporter cannot write it back).
local as_written = kit.provenance "written"

local function children(ctx, e, scope)
  local list = {}
  for i, c in ipairs(e) do list[i] = convert(ctx, c, scope) end
  return list
end

local function composite(kind)
  return function(ctx, e, scope)
    shape(ctx, e, {}, "many")
    local n = children(ctx, e, scope)
    n.type = kind
    return n
  end
end

local function decorator(kind)
  return function(ctx, e, scope)
    shape(ctx, e, {}, 1)
    return { type = kind, convert(ctx, e[1], scope) }
  end
end

-- A count of children, negative counting from the end (-1: all).
local function threshold(ctx, e, name, v, n)
  if v < 0 then v = math.max(n + v + 1, 0) end
  if v == 0 then where(ctx, e, "'" .. name .. "' must not be 0") end
  if v > n then
    where(ctx, e, "'" .. name .. "' is larger than the number of children")
  end
  return v
end

-- A built-in written with bt.control (nodes/controls.lua), remembered
-- for the exporter as the element it stands for.
local function written(e, node, kids, attrs)
  leaves.origin[node] = { format = "btcpp", name = e.attrs.ID or e.tag,
                          children = kids, attrs = attrs }
  return node
end

-- LoopInt, LoopDouble, LoopString, LoopBool: queue (a list written
-- "1;2;3", or "{key}": a Lua list on the blackboard), value ("{key}": where
-- each item goes), if_empty (SUCCESS or FAILURE); items converted by conv.
local function queueloop(conv)
  return function(ctx, e, scope)
    shape(ctx, e, { queue = true, value = true, if_empty = true }, 1)
    local q, v = e.attrs.queue, e.attrs.value
    if not q or not v then where(ctx, e, "needs ports 'queue' and 'value'") end
    local empty = e.attrs.if_empty or "SUCCESS"
    if empty ~= "SUCCESS" and empty ~= "FAILURE" then
      where(ctx, e, "if_empty=\"" .. empty .. "\": Bonsai's loops end with " ..
            "SUCCESS or FAILURE")
    end
    local what, vkey = port(scope, "value", v)
    if what ~= "key" then where(ctx, e, "port 'value' must be a {key}") end
    local static, queue
    local qwhat, qkey = port(scope, "queue", q)
    if qwhat == "key" then
      queue = function(bb) return bb[qkey] end
    else
      static = {}
      for item in q:gmatch("[^;]+") do
        local x = conv(item:match("^%s*(.-)%s*$"))
        if x == nil then
          where(ctx, e, "bad item '" .. item .. "' in port 'queue'")
        end
        static[#static + 1] = x
      end
    end
    local kids = children(ctx, e, scope)
    return written(e, controls.queue_loop(ctx.bt, kids, static, queue,
      function(bb, x) bb[vkey] = x end, empty:lower()), kids,
      { queue = q, value = v, if_empty = e.attrs.if_empty })
  end
end

local function tobool(s)
  if s == "true" or s == "1" then return true end
  if s == "false" or s == "0" then return false end
end

-- IfThenElse and WhileDoElse: the Bonsai kind, two or three children.
local function branches(kind)
  local make = composite(kind)
  return function(ctx, e, scope)
    if #e ~= 2 and #e ~= 3 then where(ctx, e, "needs 2 or 3 children") end
    return make(ctx, e, scope)
  end
end

-- SkipUnlessUpdated and WaitValueUpdate: the Bonsai kind on the key of
-- port 'entry' (written "{key}" or bare, as BehaviorTree.CPP reads both).
local function updated(kind)
  return function(ctx, e, scope)
    shape(ctx, e, { entry = true }, 1)
    local entry = e.attrs.entry
    if entry == nil or entry == "" then where(ctx, e, "needs port 'entry'") end
    if not entry:match("^{.*}$") then entry = "{" .. entry .. "}" end
    local what, key = port(scope, "entry", entry)
    if what ~= "key" then where(ctx, e, "port 'entry' must name a key") end
    return { type = kind, key = key, convert(ctx, e[1], scope) }
  end
end

-- SwitchN: N cases, then the default child; variable and case_k are
-- ports (a case written "{key}" reads the blackboard too).
local function switch(n)
  return function(ctx, e, scope)
    local ports, cases, attrs = { variable = true }, {}, {}
    for k = 1, n do ports["case_" .. k] = true end
    shape(ctx, e, ports, n + 1)
    local function reader(name)
      local text = e.attrs[name]
      if text == nil then return function() return nil end end
      attrs[name] = text
      local what, v = port(scope, name, text)
      if what == "key" then return function(bb) return bb[v] end end
      return function() return v end
    end
    local get = reader("variable")
    local readers = {}
    for k = 1, n do readers[k] = reader("case_" .. k) end
    local kids = children(ctx, e, scope)
    local node = controls.switch(ctx.bt, kids, get, setmetatable({}, {
      __index = function(_, k) return readers[k] and readers[k]() end }))
    return written(e, node, kids, attrs)
  end
end

-- The shortest text that reads back as the same number.
local function text(v)
  if type(v) ~= "number" then return tostring(v) end
  if isinteger(v) then return string.format("%d", v) end
  if v == math.floor(v) and math.abs(v) < 2^53 then
    return tostring(tointeger(v))
  end
  for digits = 1, 17 do
    local s = string.format("%." .. digits .. "g", v)
    if tonumber(s) == v then return s end
  end
end

local function ms(s) return text(s * 1000) end

-- A leaf's argument as text that reads back as the same value, of the
-- same type: a whole float keeps its ".0" (position="0.0" stays a float
-- where Lua tells floats from integers).
local function argtext(v)
  if type(v) == "number" and not isinteger(v) and v == math.floor(v) and
     math.abs(v) < 2^53 then
    return string.format("%.1f", v)
  end
  return text(v)
end

-- The count a parallel policy stands for.
local function count(p, n)
  if p == nil or p == "all" then return n end
  if p == "one" then return 1 end
  return p
end

-- The child when "if" holds when it starts (not checked again while the
-- child runs), else the status "else" names: a sequence of the condition
-- and the child, a selector of the condition's negation and the child, a
-- sequence of the child skipped unless "if" holds, or a control node
-- running without the child until "if" holds.
local function precondition(ctx, e, scope)
  shape(ctx, e, { ["if"] = true, ["else"] = true }, 1)
  local otherwise = e.attrs["else"] or "FAILURE"
  if otherwise ~= "FAILURE" and otherwise ~= "SUCCESS" and
     otherwise ~= "RUNNING" and otherwise ~= "SKIPPED" then
    where(ctx, e, "else=\"" .. otherwise .. "\": a status (SUCCESS, " ..
          "FAILURE, RUNNING or SKIPPED)")
  end
  local n, made, child
  if otherwise == "SKIPPED" then -- asked when the child starts, as skip_if
    if e.attrs["if"] == nil then where(ctx, e, "needs port 'if'") end
    local code = "!(" .. e.attrs["if"] .. ")"
    local changed
    made = {}
    made.skip_if, changed = compiled(ctx, e, scope, "if", "skip_if", code)
    child = convert(ctx, e[1], scope)
    n = { type = "sequence", skip_if = made.skip_if, child }
    if changed and type(made.skip_if) == "string" then
      as_written[n] = { skip_if = code }
    end
  else
    local cond = scripted_node(ctx, e, scope, "condition", "if",
      otherwise == "SUCCESS" and "!(%s)" or nil)
    child = convert(ctx, e[1], scope)
    if otherwise == "FAILURE" then
      n = { type = "sequence", cond, child }
    elseif otherwise == "SUCCESS" then
      n = { type = "selector", cond, child }
    else
      n = controls.precondition_running(ctx.bt, { cond, child })
    end
  end
  leaves.origin[n] = { format = "btcpp", name = "Precondition", child = child,
    attrs = { ["if"] = e.attrs["if"], ["else"] = e.attrs["else"] },
    made = made }
  return n
end

local function memory_sequence(ctx, e, scope)
  shape(ctx, e, {}, "many")
  local kids = children(ctx, e, scope)
  return written(e, controls.sequence_with_memory(ctx.bt, kids), kids)
end

-- A name BehaviorTree.CPP has that Bonsai refuses, with the reason.
local function refuse(reason)
  return function(ctx, e) where(ctx, e, reason) end
end

-- Repeat and RetryUntilSuccessful: the kind, its count in port `port`
-- (-1: forever; 0: the child is checked, not run: the status `zero`);
-- written back from the kind's times (0, forever: -1).
local function counted(kind, port, zero)
  return function(ctx, e, scope)
    shape(ctx, e, { [port] = true }, 1)
    local k = whole(ctx, e, port)
    if k == 0 then
      convert(ctx, e[1], scope) -- still checked
      return leaves.always(zero)
    end
    return { type = kind, times = k < 0 and 0 or k, convert(ctx, e[1], scope) }
  end, function(n, attrs)
    local k = n.times or 0
    attrs[port] = text(k == 0 and -1 or k)
  end
end

local function updated_export(n, attrs) attrs.entry = "{" .. n.key .. "}" end

-- The name table: each row { name in the file, Bonsai kind (nil: a node
-- made of other kinds), import(ctx, e, scope), export(n, attrs, fail) ->
-- the name written (nil: the row's) }; a kind without a row is refused
-- with its reason. The exporter writes a kind by its first row.
local NAMES = kit.names("BehaviorTree.CPP", {
  { "Sequence", "sequence", composite "sequence" },
  { "ReactiveSequence", "reactive_sequence", composite "reactive_sequence" },
  { "Fallback", "selector", composite "selector" },
  { "ReactiveFallback", "reactive_selector", composite "reactive_selector" },
  { "Inverter", "invert", decorator "invert" },
  { "ForceSuccess", "force_success", decorator "force_success" },
  { "ForceFailure", "force_failure", decorator "force_failure" },
  { "KeepRunningUntilFailure", "keep_running_until_failure",
    decorator "keep_running_until_failure" },
  { "IfThenElse", "if_then_else", branches "if_then_else" },
  { "WhileDoElse", "while_do_else", branches "while_do_else" },

  -- Fails as soon as success is out of reach: failure count capped at
  -- N - success + 1. Written back as ParallelAll when its policies are
  -- ParallelAll's.
  { "Parallel", "parallel", function(ctx, e, scope)
    shape(ctx, e, { success_count = true, failure_count = true }, "many")
    local n = children(ctx, e, scope)
    local s = threshold(ctx, e, "success_count",
                        whole(ctx, e, "success_count", -1), #n)
    local f = threshold(ctx, e, "failure_count",
                        whole(ctx, e, "failure_count", 1), #n)
    n.type, n.success, n.failure = "parallel", s, math.min(f, #n - s + 1)
    return n
  end, function(n, attrs, fail)
    local c, s, f = #n, count(n.success, #n), count(n.failure, #n)
    if n.wait and s + f == c + 1 then
      attrs.max_failures = text(f)
      return "ParallelAll"
    elseif not n.wait and s == c and f == c then
      attrs.max_failures = "1"
      return "ParallelAll"
    elseif not n.wait and f <= c - s + 1 then
      attrs.success_count, attrs.failure_count = text(s), text(f)
    else
      fail("this parallel's policies have no BehaviorTree.CPP equivalent")
    end
  end },

  -- Every child runs to its end; fails when max_failures of them failed.
  { "ParallelAll", "parallel", function(ctx, e, scope)
    shape(ctx, e, { max_failures = true }, "many")
    local n = children(ctx, e, scope)
    local f = whole(ctx, e, "max_failures", 1)
    if f < 0 then f = math.max(#n + f + 1, 0) end
    if f > #n then
      where(ctx, e, "'max_failures' is larger than the number of children")
    end
    n.type = "parallel"
    if f <= 1 then
      n.success, n.failure = "all", "all"
      if f == 0 then return { type = "force_failure", n } end
      return n
    end
    n.success, n.failure, n.wait = #n - f + 1, f, true
    return n
  end },

  { "Repeat", "repeater", counted("repeater", "num_cycles", "success") },
  -- the same: a failure ends both
  { nil, "repeat_until_failure", nil, function(_, attrs)
    attrs.num_cycles = "-1"
    return "Repeat"
  end },

  { "RetryUntilSuccessful", "retry", counted("retry", "num_attempts",
                                             "failure") },

  { "Timeout", "timeout", function(ctx, e, scope)
    shape(ctx, e, { msec = true }, 1)
    local ms = number(ctx, e, "msec")
    if ms < 0 then where(ctx, e, "'msec' must be >= 0") end
    local child = convert(ctx, e[1], scope)
    if ms == 0 then return child end -- BehaviorTree.CPP sets no timer
    return { type = "timeout", seconds = ms / 1000, child }
  end, function(n, attrs) attrs.msec = ms(n.seconds) end },

  { "Delay", "delay", function(ctx, e, scope)
    shape(ctx, e, { delay_msec = true }, 1)
    local ms = number(ctx, e, "delay_msec")
    if ms <= 0 then -- BehaviorTree.CPP's first tick always waits
      where(ctx, e, "'delay_msec' must be > 0")
    end
    return { type = "delay", seconds = ms / 1000, convert(ctx, e[1], scope) }
  end, function(n, attrs) attrs.delay_msec = ms(n.seconds) end },

  { "RunOnce", "run_once", function(ctx, e, scope)
    shape(ctx, e, { then_skip = true }, 1)
    local skip = e.attrs.then_skip
    if skip ~= nil and tobool(skip) == nil then
      where(ctx, e, "bad boolean '" .. skip .. "' for port 'then_skip'")
    end
    return { type = "run_once", then_skip = skip == nil or tobool(skip),
             convert(ctx, e[1], scope) } -- BehaviorTree.CPP's default: true
  end, function(n, attrs)
    attrs.then_skip = n.then_skip and "true" or "false"
  end },
  { "SkipUnlessUpdated", "skip_unless_updated",
    updated "skip_unless_updated", updated_export },
  { "WaitValueUpdate", "wait_value_update", updated "wait_value_update",
    updated_export },

  { "Sleep", "wait", function(ctx, e)
    shape(ctx, e, { msec = true }, 0)
    local ms = number(ctx, e, "msec")
    if ms < 0 then where(ctx, e, "'msec' must be >= 0") end
    return { type = "wait", seconds = ms / 1000 }
  end, function(n, attrs) attrs.msec = ms(n.seconds) end },

  { "ScriptCondition", "check", function(ctx, e, scope)
    shape(ctx, e, { code = true }, 0)
    return scripted_node(ctx, e, scope, "condition", "code")
  end, function(n, attrs, fail)
    attrs.code = require("bonsai.compat").require("bonsai.script").check_code(n)
    if not attrs.code then fail("this check has no script equivalent") end
  end },

  -- a tree by name (bt.subtree), its keys the caller's; or a tree of its
  -- own (the live page's extract): written in the file (emit queues it)
  { "SubTree", "subtree", nil, function(n, attrs, fail)
    local own = type(n.tree) == "userdata" and n.tree:_source() and
                n.tree.name
    if (type(n.tree) ~= "string" and not own) or n.args then
      fail("'subtree' has no BehaviorTree.CPP equivalent")
    end
    attrs.ID, attrs._autoremap = own or n.tree, "true"
    for inner, outer in pairs(n.remap or {}) do
      attrs[inner] = "{" .. outer .. "}"
    end
  end },

  -- Nodes made of Bonsai kinds (remembered as the element they stand for).
  { "SequenceWithMemory", nil, memory_sequence },
  { "AsyncSequence", nil, function(ctx, e, scope)
    shape(ctx, e, {}, "many")
    local kids = children(ctx, e, scope)
    return written(e, controls.async(ctx.bt, kids, "success"), kids)
  end },
  { "AsyncFallback", nil, function(ctx, e, scope)
    shape(ctx, e, {}, "many")
    local kids = children(ctx, e, scope)
    return written(e, controls.async(ctx.bt, kids, "failure"), kids)
  end },
  { "LoopInt", nil, queueloop(function(s)
    local n = tonumber(s)
    return n and n == math.floor(n) and n or nil
  end) },
  { "LoopDouble", nil, queueloop(tonumber) },
  { "LoopString", nil, queueloop(function(s) return s end) },
  { "LoopBool", nil, queueloop(tobool) },
  -- catch_on_halt ticks the catch child while the node is halted, which a
  -- Bonsai abort callback cannot do
  { "TryCatch", nil, function(ctx, e, scope)
    shape(ctx, e, { catch_on_halt = true }, "many")
    if #e < 2 then where(ctx, e, "needs at least 2 children") end
    local on_halt = e.attrs.catch_on_halt
    if on_halt == "true" then
      where(ctx, e, "catch_on_halt=\"true\" ticks the catch child while " ..
            "the node is halted, which Bonsai cannot do")
    elseif on_halt ~= nil and on_halt ~= "false" then
      where(ctx, e, "bad boolean '" .. on_halt .. "' for port 'catch_on_halt'")
    end
    local kids = children(ctx, e, scope)
    return written(e, controls.try_catch(ctx.bt, kids), kids,
                   { catch_on_halt = on_halt })
  end },
  { "Switch2", nil, switch(2) }, { "Switch3", nil, switch(3) },
  { "Switch4", nil, switch(4) }, { "Switch5", nil, switch(5) },
  { "Switch6", nil, switch(6) },

  -- Writes value (a text as numbers and booleans are read, or "{key}":
  -- that key's value) to the key output_key names; success.
  { "SetBlackboard", nil, function(ctx, e, scope)
    shape(ctx, e, { value = true, output_key = true }, 0)
    local out, text = e.attrs.output_key, e.attrs.value
    if not out or not text then
      where(ctx, e, "needs ports 'value' and 'output_key'")
    end
    local _, key = port(scope, "output_key", "{" .. (out:match("^{(.*)}$") or
                                                     out) .. "}")
    local what, v = port(scope, "value", text)
    local node = { type = "action", fn = what == "key" and
      function(_, bb) bb[key] = bb[v] return true end or
      function(_, bb) bb[key] = v return true end }
    return written(e, node, {}, { value = text, output_key = out })
  end },
  -- Clears the key `key` names; success.
  { "UnsetBlackboard", nil, function(ctx, e, scope)
    shape(ctx, e, { key = true }, 0)
    local k = e.attrs.key
    if not k then where(ctx, e, "needs port 'key'") end
    local _, key = port(scope, "key", "{" .. (k:match("^{(.*)}$") or k) .. "}")
    return written(e, { type = "action",
                        fn = function(_, bb) bb[key] = nil return true end },
                   {}, { key = k })
  end },
  { "AlwaysSuccess", nil, function(ctx, e)
    shape(ctx, e, {}, 0)
    return leaves.always("success")
  end },
  { "AlwaysFailure", nil, function(ctx, e)
    shape(ctx, e, {}, 0)
    return leaves.always("failure")
  end },
  { "Script", nil, function(ctx, e, scope)
    shape(ctx, e, { code = true }, 0)
    return scripted_node(ctx, e, scope, "script", "code")
  end },
  { "Precondition", nil, precondition },
  -- format 3's name, which format 4 keeps reading
  { "SequenceStar", nil, memory_sequence },
  { "ManualSelector", nil, refuse "needs a user interface" },
  { "WasEntryUpdated", nil, refuse "has no Bonsai equivalent" },
  { "SubTreePlus", nil,
    refuse "is BehaviorTree.CPP 3 (use SubTree with _autoremap)" },
}, kit.refusals("has no BehaviorTree.CPP equivalent", {
  "is_set", "filter", "monitor", "time_limit", "limit", "cooldown", "guard",
  "priority", "utility_selector", "control", "event", "wait_event",
  "event_guard",
  "random_selector",
}, kit.refusals("has no BehaviorTree.CPP equivalent (only registered " ..
  "leaves can be exported)", { "action", "condition" })))

M.names = { NAMES } -- what each kind is in the file (formats_kinds_spec)

-- An attribute of a SubTree that starts with '_' and is none of
-- BehaviorTree.CPP's: an editor's own (MoveIt Pro's _collapsed, Groot2's),
-- which BehaviorTree.CPP ignores, as it ignores a SubTree attribute that
-- names no port; kept for the export (the SubTree is written back as
-- read). One spelled like an attribute of BehaviorTree.CPP is refused with
-- the name meant.
local function editor(ctx, e, k)
  local near = ctx.bt._nearest(k, "_autoremap _description _uid _fullpath " ..
    "_skipIf _failureIf _successIf _while _onHalted _onFailure _onSuccess " ..
    "_post")
  if near then
    where(ctx, e, "unknown attribute '" .. k .. "' (did you mean '" .. near ..
          "'?)")
  end
end

-- A SubTree of a tree that is not in the file: bt.subtree by name (a tree
-- made by bt.tree or bt.load), its {key} ports as the remap. Its other keys
-- are the caller's, so it needs _autoremap, and the caller's keys must be
-- the agent's own (a SubTree of the main tree).
local function external(ctx, e, scope, id)
  local auto = e.attrs._autoremap
  if auto ~= "true" and auto ~= "1" then
    where(ctx, e, "no BehaviorTree with ID '" .. id .. "' in the file; a " ..
          "tree outside it (bt.subtree by name) shares the caller's keys: " ..
          "write _autoremap=\"true\"")
  end
  if scope then
    where(ctx, e, "a tree outside the file can be used only from the main " ..
          "tree")
  end
  local remap
  for _, k in ipairs(e.order) do
    if k:sub(1, 1) == "_" and not harmless[k] and k ~= "_autoremap" then
      editor(ctx, e, k)
    elseif not harmless[k] and k ~= "_autoremap" then
      local ref = portref(k, e.attrs[k])
      if not ref or ref == "" or ref:sub(1, 1) == "@" then
        where(ctx, e, "port '" .. k .. "' of a tree outside the file must " ..
              "be a {key}")
      end
      remap = remap or {}
      remap[k] = ref
    end
  end
  return { type = "subtree", tree = id, name = e.attrs.name, remap = remap }
end

-- A SubTree element: the subtree's root, expanded here with a scope that
-- maps its blackboard keys (ports, _autoremap) onto the caller's.
local function subtree(ctx, e, scope)
  local id = e.attrs.ID
  if #e > 0 then where(ctx, e, "a SubTree takes no children") end
  local def = ctx.trees[id]
  if not def and ctx.bt.subtree then return external(ctx, e, scope, id) end
  if not def then where(ctx, e, "no BehaviorTree with ID '" .. id .. "'") end
  if ctx.active[id] then
    where(ctx, e, "subtree recursion: " .. kit.cycle(ctx.chain, id,
      function(x) return ctx.trees[x].file or ctx.file end))
  end
  local auto = e.attrs._autoremap
  if auto ~= nil and auto ~= "true" and auto ~= "false" and auto ~= "1" and
     auto ~= "0" then
    where(ctx, e, "bad boolean '" .. auto .. "' for _autoremap")
  end
  ctx.instances = ctx.instances + 1
  local inner = { map = {}, auto = auto == "true" or auto == "1",
                  parent = scope,
                  prefix = id .. "#" .. ctx.instances .. "." }
  local function port(k, text)
    local ref = portref(k, text)
    if ref and ref ~= "" then
      inner.map[k] = { key = ref }
    else
      inner.map[k] = { value = leaves.value(text) }
    end
  end
  for _, k in ipairs(e.order) do
    if not harmless[k] and k ~= "_autoremap" then
      if k:sub(1, 1) == "_" then editor(ctx, e, k) else port(k, e.attrs[k]) end
    end
  end
  -- the ports the file's model gives a default and this SubTree does not
  -- remap (BehaviorTree.CPP 4.4's SubTree model)
  local model = ctx.models[id]
  for k, text in pairs(model and model.kind == "SubTree" and
                       model.defaults or {}) do
    if e.attrs[k] == nil then port(k, text) end
  end
  ctx.active[id] = true
  ctx.chain[#ctx.chain + 1] = id
  local n = convert(ctx, def, inner)
  ctx.chain[#ctx.chain] = nil
  ctx.active[id] = nil
  -- named as Groot2 shows it: the SubTree's name, its root's, else (a
  -- root with children; a leaf keeps its own) its ID
  local own = n.name
  n.name = e.attrs.name or def.attrs.name or (n[1] and id) or n.name
  M.expanded[n] = { id = id, element = e, tree = def, own = own,
                    model = model and model.kind == "SubTree" and model or nil }
  return n
end

-- A node of a type the game defined (bt.define): its attributes as the
-- file writes them (ID aside) are its args, its children built first; its
-- `name` attribute (else its ID, as BehaviorTree.CPP names nodes) names it
-- unless the builder did.
local function defined(ctx, e, scope, id)
  local args = {}
  for _, k in ipairs(e.order) do
    if k ~= "ID" then args[k] = e.attrs[k] end
  end
  local kids = children(ctx, e, scope)
  local ok, node = pcall(leaves.defined, ctx.bt, id, args, kids, id)
  if not ok then where(ctx, e, node) end
  if leaves.origin[node] == nil then -- else the builder returned a node made
    local attrs = {}                  -- elsewhere: that node is written
    for k, v in pairs(args) do attrs[k] = v end
    attrs.name = nil
    leaves.origin[node] = { format = "btcpp", name = id, children = kids,
                            attrs = attrs, defined = true }
  end
  return node
end

-- A leaf: an ID registered with bt.register; its ports are its args.
local function leaf(ctx, e, scope, id)
  local model = ctx.models[id]
  if #e > 0 or (model and (model.kind == "Control" or
                           model.kind == "Decorator")) then
    where(ctx, e, "unknown " .. (#e > 1 and "control" or "decorator") ..
          " node" .. leaves.suggest(ctx.bt, id, NAMES.by_name) ..
          " (a control or decorator of the game's own: bt.define it)")
  end
  local kind = "action"
  local def = ctx.bt._registered[id]
  if e.tag == "Condition" or (e.tag ~= "Action" and model and
                              model.kind == "Condition") or
     (e.tag ~= "Action" and not model and type(def) == "table" and
      def.type == "condition") then -- the game registered a condition
    kind = "condition"
  end
  local args, refs = nil, {}
  for _, k in ipairs(e.order) do
    if not harmless[k] then
      if k:sub(1, 1) == "_" then
        where(ctx, e, "unknown attribute '" .. k .. "'")
      end
      if model and model.ports and not model.ports[k] then
        where(ctx, e, "port '" .. k .. "' is not declared in TreeNodesModel")
      end
      local what, v = port(scope, k, e.attrs[k])
      if what == "key" then refs[k] = v
      else args = args or {}; args[k] = v end
    end
  end
  local ok, node = pcall(leaves.leaf, ctx.bt, kind, id, args, refs,
                         e.attrs.name, NAMES.by_name)
  if not ok then where(ctx, e, node) end
  return node
end

function convert(ctx, e, scope)
  ctx.count = ctx.count + 1
  if ctx.count > MAX_NODES then
    where(ctx, e, "the tree expands to more than " .. MAX_NODES .. " nodes")
  end
  ctx.depth = ctx.depth + 1
  if ctx.depth > MAX_DEPTH then
    where(ctx, e, "the tree is deeper than " .. MAX_DEPTH .. " levels " ..
          "once its subtrees are expanded")
  end
  local n = build(ctx, e, scope)
  ctx.depth = ctx.depth - 1
  return n
end

-- The pre- and post-conditions of element e, compiled (keys seen through
-- the subtree scope) into the node table n; returns e without their
-- attributes (a copy), or e when it has none.
local function conditions(ctx, e, scope)
  local found, conds, renamed = false, {}, {}
  for _, k in ipairs(e.order) do found = found or scripted[k] ~= nil end
  if not found then return e, conds, renamed end
  local c = {}
  for k, v in pairs(e) do c[k] = v end
  c.attrs, c.order = {}, {}
  for _, k in ipairs(e.order) do
    local field = scripted[k]
    if field then
      local v, changed = compiled(ctx, e, scope, k, field)
      conds[field] = v
      renamed[field] = changed and type(v) == "string" and e.attrs[k] or nil
    else
      c.attrs[k] = e.attrs[k]
      c.order[#c.order + 1] = k
    end
  end
  return c, conds, renamed
end

-- The node of element e (convert's body), with the element's conditions.
-- When what the element built carries conditions of its own (a SubTree's
-- root, a bt.define builder's node), the element's go on a sequence of one
-- child above it (which passes every status on), as BehaviorTree.CPP keeps
-- a SubTree's apart from its root's; a SubTree is written back with them.
function build(ctx, e, scope)
  local conds, renamed, whole = nil, nil, e
  e, conds, renamed = conditions(ctx, e, scope)
  local n = build_node(ctx, e, scope)
  if next(conds) == nil then return n end
  local x = M.expanded[n]
  if x then x.element = whole end
  local own = false
  for _, field in pairs(scripted) do own = own or n[field] ~= nil end
  if own then
    local inner = n
    n = { type = "sequence", name = inner.name, inner }
    leaves.origin[n], leaves.origin[inner] = leaves.origin[inner], nil
    if x then
      M.expanded[n], M.expanded[inner] = x, nil
      inner.name = x.own
    end
  end
  for field, f in pairs(conds) do n[field] = f end
  if next(renamed) then as_written[n] = renamed end
  return n
end

-- The node of element e, its conditions left out.
function build_node(ctx, e, scope)
  local id = e.tag
  if e.tag == "Action" or e.tag == "Condition" or e.tag == "Control" or
     e.tag == "Decorator" or e.tag == "SubTree" then
    id = e.attrs.ID
    if not id or id == "" then where(ctx, e, "needs an ID") end
  end
  if e.tag == "SubTree" then return subtree(ctx, e, scope) end
  local game = leaves.game(ctx.bt, id) -- the game's own names win
  if game == "define" then return defined(ctx, e, scope, id) end
  if game == "leaf" then return leaf(ctx, e, scope, id) end
  local n
  local row = NAMES.by_name[id]
  if row and row[3] then
    n = row[3](ctx, e, scope)
    if e.attrs.name and n.name == nil then n.name = e.attrs.name end
  else
    n = leaf(ctx, e, scope, id)
  end
  return n
end

-- Reads TreeNodesModel: ID -> { kind, ports = set, defaults = { port ->
-- text } (a SubTree's defaults, format 4.4: a literal or a {key}), dirs =
-- { port -> "input_port" | "output_port" | "inout_port" } }.
local function models(ctx, m)
  for _, e in ipairs(m) do
    local id = e.attrs.ID
    if not id then where(ctx, e, "a model needs an ID") end
    local ports, defaults, dirs = {}, {}, {}
    for _, p in ipairs(e) do
      if p.attrs.name then
        ports[p.attrs.name] = true
        defaults[p.attrs.name] = p.attrs.default
        dirs[p.attrs.name] = p.tag
      end
    end
    ctx.models[id] = { kind = e.tag, ports = ports, defaults = defaults,
                       dirs = dirs }
  end
end

local CONVERT = "convert with convert_v3_to_v4.py (BehaviorTree.CPP's " ..
                "converter, in its repository's root) first"

-- Refuses, in a file that gives no BTCPP_format, what only format 3 wrote:
-- SubTreePlus and a SubTree's __shared_blackboard (names the game defined
-- or registered win, as everywhere). SequenceStar, which format 4 still
-- reads as SequenceWithMemory, loads.
local function version3(ctx, e)
  local id = e.tag == "SubTreePlus" and e.tag or e.attrs.ID or e.tag
  local v3 = id == "SubTreePlus" and id or
             e.attrs.__shared_blackboard and "__shared_blackboard"
  if v3 and not leaves.game(ctx.bt, id) then
    where(ctx, e, "format 3 (" .. v3 .. "): " .. CONVERT)
  end
  for _, child in ipairs(e) do version3(ctx, child) end
end

-- Reads the file an <include> names (relative to the including file),
-- refusing one outside the allowed directories (bonsai.paths: as written,
-- then as the disk resolves it), a cycle, includes nested too deep or too
-- large in total; returns its path and text, or nothing for a file this
-- load has already included (its trees are there: a file included by two
-- others is read and collected once).
local function included(ctx, e, file, depth)
  if e.attrs.ros_pkg then
    where(ctx, e, "ros_pkg includes are not supported")
  end
  local path = e.attrs.path
  if not path then where(ctx, e, "an include needs a path") end
  local full = paths.resolve(path, paths.dir(file), ctx.include_dirs)
  if not full then
    where(ctx, e, "include '" .. e.attrs.path .. "' is outside the " ..
          "directories allowed (" .. table.concat(ctx.include_dirs, ", ") ..
          "; bt.load's include_dirs option adds others)")
  end
  if ctx.including[full] then
    where(ctx, e, "include recursion: " .. kit.cycle(ctx.stack, full))
  end
  if ctx.collected[full] then return nil end
  if depth >= MAX_INCLUDES then
    where(ctx, e, "includes nested more than " .. MAX_INCLUDES .. " deep")
  end
  if not ctx.read then where(ctx, e, "includes need a file to read") end
  local text, err = ctx.read(full, ctx.include_dirs)
  if not text then where(ctx, e, "cannot include: " .. tostring(err)) end
  ctx.included = ctx.included + #text
  if ctx.included > MAX_INCLUDED then
    where(ctx, e, "the included files are larger than " .. MAX_INCLUDED ..
          " bytes in all")
  end
  ctx.deps[#ctx.deps + 1] = full
  ctx.collected[full] = true
  return full, text
end

-- Collects the BehaviorTree and TreeNodesModel elements of a document and
-- of the files it includes.
local function collect(ctx, root, file, depth)
  if root.tag ~= "root" then
    error(string.format("%s:%d:%d: the root element must be <root>, not <%s>",
                        file, root.line, root.col, root.tag), 0)
  end
  local fmt = root.attrs.BTCPP_format
  if fmt == "3" then
    error(string.format("%s:%d:%d: format 3: %s", file, root.line, root.col,
                        CONVERT), 0)
  elseif fmt and fmt ~= "4" then
    error(string.format("%s:%d:%d: BTCPP_format %s is not supported " ..
                        "(format 4 only)", file, root.line, root.col, fmt), 0)
  elseif not fmt then
    version3(ctx, root)
  end
  for _, e in ipairs(root) do
    if e.tag == "BehaviorTree" then
      local id = e.attrs.ID
      if not id or id == "" then -- named as BehaviorTree.CPP 4 names it
        id = "BehaviorTree_" .. ctx.unnamed
        ctx.unnamed = ctx.unnamed + 1
        ctx.anonymous[id] = true
      end
      if ctx.trees[id] then
        where(ctx, e, "duplicate BehaviorTree ID '" .. id .. "'")
      end
      if #e ~= 1 then
        where(ctx, e, "a BehaviorTree needs exactly one child")
      end
      ctx.trees[id] = e[1]
      ctx.order[#ctx.order + 1] = id
    elseif e.tag == "TreeNodesModel" then
      models(ctx, e)
    elseif e.tag == "include" then
      local full, text = included(ctx, e, file, depth)
      if full then
        ctx.including[full] = true
        ctx.stack[#ctx.stack + 1] = full
        collect(ctx, xml.parse(text, full), full, depth + 1)
        ctx.stack[#ctx.stack] = nil
        ctx.including[full] = nil
      end
    else
      -- Groot2 keeps its layout and other data in elements of its own
    end
  end
end

-- The files of opts.library (a path or a list of paths, relative to the
-- file's directory; a folder stands for the .xml files directly in it, in
-- name order, its subfolders not), collected as if the file included each:
-- their trees and models are the file's, under the same confinement
-- (include_dirs), bounds and dependencies (bt.poll reloads on a change to
-- any, and on a file added to or removed from a folder), each file once
-- (the loaded file, or one it includes, is not read again).
local function library(ctx, root, file, list)
  local entries, folders = paths.library(list, paths.dir(file),
    ctx.include_dirs, { [".xml"] = true }, file)
  for _, dir in ipairs(folders) do ctx.folders[#ctx.folders + 1] = dir end
  for _, entry in ipairs(entries) do
    if not (entry.full and ctx.collected[entry.full]) then -- read once
      local e = { tag = "library", attrs = { path = entry.path },
                  line = root.line, col = root.col, file = file }
      local ok, err = true, nil
      if entry.folder then -- a link in a folder leads nowhere else
        ok, err = paths.check(entry.full, { entry.folder },
                              "its folder " .. entry.folder)
      end
      if not ok then where(ctx, e, "cannot include: " .. err) end
      local full, text = included(ctx, e, file, 0) -- refuses one outside
      if full then
        ctx.including[full] = true
        ctx.stack[#ctx.stack + 1] = full
        collect(ctx, xml.parse(text, full), full, 1)
        ctx.stack[#ctx.stack] = nil
        ctx.including[full] = nil
      end
    end
  end
end

-- parse(text, opts): the main tree's root node and { name = its ID } (a
-- BehaviorTree without an ID is called BehaviorTree_0, _1... as
-- BehaviorTree.CPP 4 calls it, and gives no name).
-- opts: file (for messages), bt, read(path) for includes, deps (a list
-- the included paths are added to), main (the ID of the tree to load
-- instead of main_tree_to_execute), include_dirs (the directories
-- includes may read from; default: the file's own directory tree),
-- library (files whose trees the file may use by ID, as if it included
-- them: BehaviorTree.CPP's registerBehaviorTreeFromFile of each).
function M.parse(text, opts)
  local file = opts.file or "xml"
  local ctx = { file = file, bt = opts.bt, trees = {}, order = {},
                models = {}, count = 0, depth = 0, instances = 0, active = {},
                including = {}, read = opts.read, deps = opts.deps or {},
                unnamed = 0, anonymous = {}, included = 0,
                collected = {}, stack = { paths.normal(file) },
                chain = {}, folders = opts.folders or {} }
  ctx.include_dirs = paths.dirs(opts.include_dirs or { paths.dir(file) },
                                file)
  local root = xml.parse(text, file)
  ctx.including[paths.normal(file)] = true
  ctx.collected[paths.normal(file)] = true
  collect(ctx, root, file, 0)
  local own = #ctx.order -- the file's own trees (a library's are not main)
  library(ctx, root, file, opts.library)
  local main = opts.main or root.attrs.main_tree_to_execute
  local function ids()
    return table.concat(ctx.order, ", ")
  end
  if not main then
    if own ~= 1 then
      local others = {} -- the library's trees, which main may choose too
      for i = own + 1, #ctx.order do others[#others + 1] = ctx.order[i] end
      error(file .. ": " .. (own == 0 and "no BehaviorTree element" or
            "several BehaviorTree elements (" ..
            table.concat(ctx.order, ", ", 1, own) .. ") and no " ..
            "main_tree_to_execute: choose one with bt.load(path, " ..
            "{ main = ID })") .. (#others > 0 and " (its library has " ..
            table.concat(others, ", ") .. ")" or ""), 0)
    end
    main = ctx.order[1]
  end
  if type(main) ~= "string" or not ctx.trees[main] then
    error(file .. ": main tree '" .. tostring(main) .. "' not found (the " ..
          "file has " .. (#ctx.order > 0 and ids() or "none") .. ")", 0)
  end
  ctx.active[main], ctx.chain[1] = true, main
  -- a tree without an ID is named after the file by bt.load
  return convert(ctx, ctx.trees[main], nil),
         { name = not ctx.anonymous[main] and main or nil }
end

-- Export -------------------------------------------------------------------

-- Writes element tag's line into out at indent ind, attributes keys (in
-- their order) of attrs; with children (n of them), the element is left
-- open for them: true.
local function open(out, ind, tag, keys, attrs, n)
  local line = { ind, "<", tag }
  for _, k in ipairs(keys) do
    line[#line + 1] = string.format(' %s="%s"', k, xml.escape(attrs[k]))
  end
  out[#out + 1] = table.concat(line) .. (n == 0 and "/>" or ">")
  return n > 0
end

-- An element as the file wrote it (its attributes in their order).
local function raw(e, out, depth)
  local ind = ("  "):rep(depth)
  if not open(out, ind, e.tag, e.order, e.attrs, #e) then return end
  for _, c in ipairs(e) do raw(c, out, depth + 1) end
  out[#out + 1] = ind .. "</" .. e.tag .. ">"
end

-- The model entry of a node type of the game's (kind: Action, Condition,
-- Control, Decorator), its ports added.
local function declare(model, id, kind, ports)
  local m = model[id]
  if not m then
    m = { kind = kind, ports = {} }
    model[id] = m
    model[#model + 1] = id
  elseif kind == "Control" then -- one use with several children says so
    m.kind = kind
  end
  for k in pairs(ports) do m.ports[k] = true end
end

-- The model entries of the leaves and defined nodes under n (a subtree
-- written as the file gave it), and the subtrees it expands, queued.
local function declare_all(n, model, queue)
  if type(n) ~= "table" then return end
  local x = M.expanded[n]
  if x and not queue[x.id] then
    queue[x.id] = x.tree
    queue[#queue + 1] = x.id
  end
  if x and x.model and not model[x.id] then -- its ports and defaults
    model[x.id] = { kind = "SubTree", ports = x.model.ports,
                    defaults = x.model.defaults, dirs = x.model.dirs }
    model[#model + 1] = x.id
  end
  local o = leaves.origin[n]
  local kind, leaf, args, refs = leaves.named(n)
  if leaf then
    local ports = {}
    for k in pairs(args or {}) do ports[k] = true end
    for k in pairs(refs or {}) do ports[k] = true end
    declare(model, leaf, kind == "condition" and "Condition" or "Action",
            ports)
  elseif o and o.defined then
    local c = #o.children
    declare(model, o.name, c == 0 and "Action" or c == 1 and "Decorator" or
            "Control", o.attrs)
  end
  for _, c in ipairs(n) do declare_all(c, model, queue) end
end

-- Writes node n (path: its place, for errors) into out at depth; a
-- subtree the importer expanded is written as its SubTree, its tree queued.
local function emit(n, out, depth, model, path, queue)
  local ind = ("  "):rep(depth)
  local function fail(msg)
    error("export btcpp: " .. path .. ": " .. msg, 0)
  end
  if type(n) ~= "table" or type(n.type) ~= "string" then fail("not a node") end
  local x = M.expanded[n]
  if x then
    raw(x.element, out, depth)
    declare_all(n, model, queue)
    return
  end
  local kids = {}
  for i, c in ipairs(n) do kids[i] = c end
  local attrs = {}
  local id
  local o = leaves.origin[n]
  local kind, leaf, args, refs = leaves.named(n)
  local src = sources[n]
  if o and o.format == "btcpp" then -- a composition standing for one node
    id, kids = o.name, o.children or { o.child }
    for k, v in pairs(o.attrs or {}) do attrs[k] = v end
    if o.defined then
      declare(model, id, #kids == 0 and "Action" or #kids == 1 and
              "Decorator" or "Control", o.attrs)
    end
  elseif src then
    if src.renamed then
      fail("a script whose keys a subtree remaps cannot be written back")
    end
    id = src.kind == "script" and "Script" or "ScriptCondition"
    attrs.code = src.code
  elseif leaf then
    id = leaf
    for k, v in pairs(args or {}) do
      local ty = type(v)
      if ty == "table" or ty == "function" or ty == "userdata" then
        fail("argument '" .. k .. "' of leaf '" .. leaf .. "' is a " .. type(v))
      end
      attrs[k] = argtext(v)
    end
    for k, key in pairs(refs or {}) do attrs[k] = "{" .. key .. "}" end
    local m = model[leaf]
    if not m then
      m = { kind = kind == "condition" and "Condition" or "Action",
            ports = {} }
      model[leaf] = m
      model[#model + 1] = leaf
    end
    for k in pairs(attrs) do m.ports[k] = true end
  elseif n.type == "action" and leaves.constant.success == n.fn then
    id = "AlwaysSuccess"
  elseif n.type == "action" and leaves.constant.failure == n.fn then
    id = "AlwaysFailure"
  else
    local row = NAMES.by_kind[n.type]
    if not row then
      fail("'" .. n.type .. "' " .. (NAMES.refused[n.type] or
           "has no BehaviorTree.CPP equivalent"))
    end
    id = row[4] and row[4](n, attrs, fail) or row[1]
    if n.type == "subtree" and type(n.tree) == "userdata" and
       not queue[attrs.ID] then -- its tree, written after the main one
      queue[attrs.ID] = { root = n.tree:_source().root }
      queue[#queue + 1] = attrs.ID
    end
  end
  for attr, field in pairs(scripted) do -- pre- and post-conditions
    local v = n[field]
    if o and o.made and o.made[field] == v then
      v = nil -- the composition's own (Precondition's else="SKIPPED")
    elseif as_written[n] and as_written[n][field] then
      fail("'" .. field .. "' cannot be written back (a subtree remaps " ..
           "its keys)")
    elseif type(v) == "function" then
      local s = sources[v]
      if not s or s.renamed then
        fail("'" .. field .. "' cannot be written back (" .. (s and
          "a subtree remaps its keys" or "a function, not a script") .. ")")
      end
      v = s.code
    end
    if v ~= nil then attrs[attr] = v end
  end
  if n.name and n.name ~= id then attrs.name = n.name end
  local keys = {}
  for k in pairs(attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  if not open(out, ind, id, keys, attrs, #kids) then return end
  for i, c in ipairs(kids) do
    emit(c, out, depth + 1, model,
         path .. "/" .. (c.name or c.type .. "[" .. i .. "]"), queue)
  end
  out[#out + 1] = ind .. "</" .. id .. ">"
end

-- export(root, opts): XML text of a tree (opts.name: its ID), its
-- expanded SubTrees written back as SubTrees of their trees, with a
-- TreeNodesModel of the game's nodes it uses (leaves as Action or
-- Condition with their ports as inout ports; nodes of bt.define as Action,
-- Decorator or Control by their children, their attributes as input ports).
function M.export(root, opts)
  local name = opts and opts.name or "MainTree"
  local out = { '<?xml version="1.0" encoding="UTF-8"?>',
    '<root BTCPP_format="4" main_tree_to_execute="' .. xml.escape(name) .. '">',
    '  <BehaviorTree ID="' .. xml.escape(name) .. '">' }
  local model, queue = {}, {}
  emit(root, out, 2, model, root.name or root.type, queue)
  out[#out + 1] = "  </BehaviorTree>"
  local i = 1
  while queue[i] do -- each subtree's tree once, as the file wrote it
    local id = queue[i]
    if id ~= name then
      out[#out + 1] = '  <BehaviorTree ID="' .. xml.escape(id) .. '">'
      if queue[id].root then -- a tree of the game's (emitted)
        emit(queue[id].root, out, 2, model, id, queue)
      else -- as the file wrote it
        raw(queue[id], out, 2)
      end
      out[#out + 1] = "  </BehaviorTree>"
    end
    i = i + 1
  end
  out[#out + 1] = "  <TreeNodesModel>"
  for _, leaf in ipairs(model) do
    local m = model[leaf]
    local ports = {}
    for k in pairs(m.ports) do ports[#ports + 1] = k end
    table.sort(ports)
    if #ports == 0 then
      out[#out + 1] = string.format('    <%s ID="%s"/>', m.kind,
                                    xml.escape(leaf))
    else
      out[#out + 1] = string.format('    <%s ID="%s">', m.kind,
                                    xml.escape(leaf))
      local dir = (m.kind == "Action" or m.kind == "Condition") and
                  "inout_port" or "input_port"
      for _, p in ipairs(ports) do
        local default = m.defaults and m.defaults[p]
        out[#out + 1] = string.format('      <%s name="%s"%s/>',
          m.dirs and m.dirs[p] or dir,
          xml.escape(p), default and ' default="' .. xml.escape(default) ..
          '"' or "")
      end
      out[#out + 1] = "    </" .. m.kind .. ">"
    end
  end
  out[#out + 1] = "  </TreeNodesModel>"
  out[#out + 1] = "</root>"
  return table.concat(out, "\n") .. "\n"
end

return M
