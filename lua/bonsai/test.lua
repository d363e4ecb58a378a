-- bonsai.test: a kit for testing behavior trees in busted (or any Lua test
-- runner), built on the public API of `require "bonsai"` only. A scenario
-- runs a tree for one agent tick by tick, with leaves replaced by scripted
-- stand-ins (test/standin.lua) and a timeline of blackboard changes,
-- interrupts and wakes; every tick is kept (its status, its trace events
-- from a subscription, the running leaves, the blackboard before and
-- after) and the
-- expect_* methods read it, raising a message that shows the trace of the
-- ticks around the failure. Golden traces (test/golden.lua), coverage of
-- trees (test/coverage.lua) and random worlds (test/worlds.lua) build on
-- the same scenarios. Every run is bounded: nothing here can hang a test.

local bt = require "bonsai"
local standin = require "bonsai.test.standin"
local coverage = require "bonsai.test.coverage"
local golden = require "bonsai.test.golden"

local T = {}

local DEFAULT_DT = 0.1
local DEFAULT_MAX_TICKS = 1000

-- Stand-ins: scripted leaves -----------------------------------------------
-- A stand-in is a step function: step(call) -> what the leaf returns,
-- where call = { agent, bb, args, path, tick, run, step }: the scenario's
-- tick, the leaf's run (1 for its first) and the tick within that run.

local Script = { __name = "bonsai.test.stand-in" }

local function script(step, what)
  return setmetatable({ step = step, what = what }, Script)
end

-- T.statuses{ s1, s2, ... }: each run returns s1, s2, ... tick by tick,
-- the last one again and again after that.
function T.statuses(list)
  assert(type(list) == "table" and #list > 0,
         "T.statuses takes a non-empty list of statuses")
  return script(function(call)
    return list[math.min(call.step, #list)]
  end, "statuses")
end

-- T.runs{ list1, list2, ... }: run i plays list i (the last list for the
-- runs after), as T.statuses does.
function T.runs(lists)
  assert(type(lists) == "table" and #lists > 0,
         "T.runs takes a non-empty list of lists of statuses")
  return script(function(call)
    local list = lists[math.min(call.run, #lists)]
    return list[math.min(call.step, #list)]
  end, "runs")
end

-- T.running(n, status): running for n ticks of each run, then status
-- (default success); T.running() runs forever.
function T.running(n, status)
  return script(function(call)
    if n == nil or call.step <= n then return bt.RUNNING end
    if status == nil then return bt.SUCCESS end
    return status
  end, "running")
end

-- T.raise(message): raises message each time it is ticked.
function T.raise(message)
  return script(function(call)
    error(message or ("stand-in " .. call.path .. " raised"), 0)
  end, "raise")
end

-- What the scenario table may give as a stand-in: a script above, a
-- function(call), or a status (true, false, "success", ...) every tick.
local function toscript(key, v)
  if getmetatable(v) == Script then return v end
  if type(v) == "function" then return script(v, "function") end
  if v == true or v == false or v == bt.SUCCESS or v == bt.FAILURE or
     v == bt.RUNNING then
    return script(function() return v end, "constant")
  end
  error(string.format("bonsai.test: stand-in '%s': a status, a function " ..
    "or T.statuses/T.runs/T.running/T.raise expected, got %s%s", key,
    tostring(v), type(v) == "string" and
    bt._suggest(v, "success failure running") or ""), 0)
end

-- Blackboards ---------------------------------------------------------------

-- A shallow copy of what the blackboard holds now.
local function snapshot(bb)
  local s = {}
  for k, v in bb:pairs() do s[k] = v end
  return s
end
T.snapshot = snapshot

-- Values as the traces print them (bonsai.test.golden)
local show = golden.show
T.show = show

-- Ticks ---------------------------------------------------------------------
-- A tick record: n, dt, time, status (or "error"), error, events (the
-- agent's subscription: node, status, again, event), running (the running
-- leaves' paths), before and bb (blackboard snapshots), slept, applied
-- (what the timeline did before it).

local Tick = {}
Tick.__index = Tick

-- Does one of the paths who names satisfy f(path)?
local function any_path(t, who, f)
  for p in pairs(t.scenario:paths(who)) do
    if f(p) then return true end
  end
  return false
end

-- t:is_running(who): a node who names is running at the end of the tick.
function Tick:is_running(who)
  return any_path(self, who, function(p) return self.statuses[p] ==
                                                bt.RUNNING end)
end

-- t:status_of(who): the status of the node who names (the first one).
function Tick:status_of(who)
  for p in pairs(self.scenario:paths(who)) do return self.statuses[p] end
end

-- t:entered(who): a node who names started a run in this tick.
function Tick:entered(who)
  return any_path(self, who, function(p) return self.started[p] end)
end

-- t:took(who, status): a node who names took status in this tick.
function Tick:took(who, status)
  return any_path(self, who, function(p)
    for _, e in ipairs(self.events) do
      if e.node == p and e.status == status and not e.again then
        return true
      end
    end
    return false
  end)
end

function Tick:aborted(who) return self:took(who, bt.ABORTED) end

-- Scenarios -----------------------------------------------------------------

local Scenario = {}
Scenario.__index = Scenario

local OPTIONS = { tree = true, options = true, name = true, trees = true,
                  blackboard = true, owner = true, dt = true,
                  stand_ins = true, timeline = true, max_ticks = true,
                  errors = true, coverage = true }

-- The timeline as a list sorted by tick (stable), checked.
local function timeline_of(list)
  local out = {}
  for i, e in ipairs(list or {}) do
    if type(e) ~= "table" or type(e.at) ~= "number" or e.at < 1 or
       e.at ~= math.floor(e.at) then
      error("bonsai.test: timeline entry " .. i .. " needs at = a tick " ..
            "number (1 for the first tick)", 0)
    end
    for k in pairs(e) do
      if k ~= "at" and k ~= "set" and k ~= "clear" and k ~= "interrupt" and
         k ~= "wake" and k ~= "call" then
        error("bonsai.test: timeline entry " .. i .. ": unknown field '" ..
              tostring(k) .. "'" .. (type(k) == "string" and
              bt._suggest(k, "at set clear interrupt wake call") or "") ..
              " (at, set, clear, interrupt, wake, call)", 0)
      end
    end
    out[#out + 1] = { e = e, i = i }
  end
  table.sort(out, function(x, y)
    if x.e.at ~= y.e.at then return x.e.at < y.e.at end
    return x.i < y.i
  end)
  for i, x in ipairs(out) do out[i] = x.e end
  return out
end

-- The keys every node's table takes (its name, utility, pre- and
-- post-conditions; not its type): what a stand-in keeps of the leaf it
-- replaces, with its args. The rest (its callbacks, a registered name, a
-- built-in leaf's parameters) is the leaf's own behaviour: replaced.
local KEPT = {}
do
  local count, nkinds = {}, 0
  for _, k in ipairs(bt.KINDS) do
    nkinds = nkinds + 1
    for w in k.keys:gmatch("%S+") do count[w] = (count[w] or 0) + 1 end
  end
  for w, n in pairs(count) do
    if n == nkinds and w ~= "type" then KEPT[#KEPT + 1] = w end
  end
  KEPT[#KEPT + 1] = "args"
end

-- The stand-in node for a compiled node: a condition for conditions, else
-- an action with every callback, with the rest of the leaf's node table
-- (KEPT: so its conditions still run around it); each call is recorded in
-- s.
local function standin_node(s, node, key, def, sc)
  local path = node.path
  local function record(what, a, bb, args, extra)
    local st = s.state[path]
    local c = { what = what, path = path, tick = s.now, time = a.time,
                run = st.run, step = st.step, args = args,
                bb = snapshot(bb), agent = a }
    if extra then c.status = extra end
    table.insert(s.calls[key], c)
    s.log[#s.log + 1] = c
    return c
  end
  local function step(a, bb, args)
    local st = s.state[path]
    st.step = st.step + 1
    local c = record("tick", a, bb, args)
    c.bb_view = bb
    local r = sc.step(c)
    c.bb_view = nil
    c.status = r
    return r
  end
  s.state[path] = { run = 0, step = 0 }
  local n = {}
  for _, k in ipairs(KEPT) do n[k] = def[k] end
  n.name = node.name -- (the compiled name: every path stays)
  if standin.CONDITIONS[node.type] then
    if sc.what == "running" then -- refused now, not at its first tick
      error(string.format("bonsai.test: stand-in '%s': T.running stands " ..
        "in for an action, but '%s' is a %s, which ends in its tick (a " ..
        "status, a function or T.statuses)", key, path, node.type), 0)
    end
    s.state[path].run = 1 -- a condition's calls are the steps of one run
    n.fn = step
    return bt.condition(n)
  end
  n.enter = function(a, bb, a2)
    local st = s.state[path]
    st.run, st.step = st.run + 1, 0
    record("enter", a, bb, a2)
  end
  n.tick = step
  n.exit = function(a, bb, a2, status) record("exit", a, bb, a2, status) end
  n.abort = function(a, bb, a2) record("abort", a, bb, a2) end
  return bt.action(n)
end

-- T.scenario{ tree = ..., blackboard = ..., stand_ins = ..., ... }: see
-- docs/TESTING.md for every field.
function T.scenario(o)
  if type(o) ~= "table" then error("bonsai.test: T.scenario takes a table", 2) end
  for k in pairs(o) do
    if not OPTIONS[k] then
      error("bonsai.test: T.scenario: unknown field '" .. tostring(k) .. "'" ..
            (type(k) == "string" and bt._suggest(k, OPTIONS) or ""), 2)
    end
  end
  local s = setmetatable({ ticks = {}, calls = {}, log = {} }, Scenario)
  s.name = o.name or (bt.istree(o.tree) and o.tree.name) or
           (o.options and o.options.name)
  s.max_ticks = o.max_ticks or DEFAULT_MAX_TICKS
  s.dt = o.dt or DEFAULT_DT
  s.timeline = timeline_of(o.timeline)
  s.next_event = 1
  local raises = false
  local scripts = {}
  for k, v in pairs(o.stand_ins or {}) do
    scripts[k] = toscript(k, v)
    if scripts[k].what == "raise" then raises = true end
    s.calls[k] = {}
  end
  s.errors = o.errors or (raises and "record" or "raise")
  s.state = {} -- path -> { run, step } of each stand-in
  local function make(node, key, def)
    return standin_node(s, node, key, def, scripts[key])
  end
  local tree, paths = standin.build(o.tree, o.options, o.trees, o.stand_ins,
                                    make, s.name)
  if s.name == nil then
    s.name = tree.name:gsub(standin.SUFFIX .. "$", "")
  end
  s.tree, s.standin_paths = tree, paths
  s.nodes = tree:nodes()
  s.kids = {}
  for _, n in ipairs(s.nodes) do
    s.kids[n.id] = s.kids[n.id] or {}
    if n.parent then
      s.kids[n.parent] = s.kids[n.parent] or {}
      table.insert(s.kids[n.parent], n)
    end
  end
  local bb = o.blackboard
  if type(bb) == "function" then bb = bb() end
  local init = {}
  for k, v in pairs(bb or {}) do init[k] = v end
  s.agent = bt.agent(tree, { owner = o.owner, blackboard = init })
  -- the tick's events, as a subscriber (so bt.record, bt.debug and the
  -- game's own subscriptions may watch the same agent); read-only tables
  s.subscription = s.agent:subscribe(function(_, events)
    s.tick_events = events
  end)
  s.agent:add_interrupt(function() return s.interrupt_now == true end)
  if o.coverage ~= false then
    s.coverage = o.coverage or T.coverage
    s.coverage:tree(s.name, s.nodes)
  end
  return s
end

-- The dt of tick n.
local function dt_of(s, n)
  local dt = s.dt
  if type(dt) == "number" then return dt end
  if type(dt) == "function" then return dt(n) end
  return dt[math.min(n, #dt)]
end

-- Applies the timeline's entries for tick n (before it runs); returns the
-- list of what was done, as text.
local function apply(s, n)
  local done, a = {}, s.agent
  while s.timeline[s.next_event] and s.timeline[s.next_event].at <= n do
    local e = s.timeline[s.next_event]
    s.next_event = s.next_event + 1
    local keys = {}
    for k in pairs(e.set or {}) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      a.bb[k] = e.set[k]
      done[#done + 1] = k .. " = " .. show(e.set[k])
    end
    for _, k in ipairs(e.clear or {}) do
      a.bb[k] = nil
      done[#done + 1] = k .. " = nil"
    end
    if e.interrupt then
      s.interrupt_now = true
      done[#done + 1] = "interrupt"
    end
    if e.wake then
      a:wake()
      done[#done + 1] = "wake"
    end
    if e.call then
      e.call(s, a, a.bb)
      done[#done + 1] = "call"
    end
  end
  return done
end

-- Fills rec.statuses (path -> status at the end of the tick), rec.running
-- (running leaves, outermost first in tree order) and rec.started (the
-- nodes that began a run in this tick).
local function readstate(s, rec)
  rec.statuses, rec.running, rec.started = {}, {}, {}
  local now = s.agent:node_statuses() -- node id -> status
  for _, n in ipairs(s.nodes) do
    rec.statuses[n.path] = now[n.id] or bt.IDLE
    if now[n.id] == bt.RUNNING then
      local leaf = true
      for _, c in ipairs(s.kids[n.id]) do
        if now[c.id] == bt.RUNNING then leaf = false end
      end
      if leaf then rec.running[#rec.running + 1] = n.path end
    end
  end
  local prev = s.ticks[rec.n - 1]
  local was = {}
  if prev then for p, st in pairs(prev.statuses) do was[p] = st end end
  for _, e in ipairs(rec.events) do
    if e.node and e.status and not e.again then
      if was[e.node] ~= bt.RUNNING then rec.started[e.node] = true end
      was[e.node] = e.status
    end
  end
end

-- Runs one more tick; returns its record.
function Scenario:step()
  local a = self.agent
  local n = #self.ticks + 1
  self.now = n
  local applied = apply(self, n)
  local dt = dt_of(self, n)
  local rec = setmetatable({ n = n, dt = dt, applied = applied,
                             before = snapshot(a.bb), scenario = self,
                             slept = a:sleeping() ~= nil }, Tick)
  self.tick_events = nil -- (a sleeping agent is not ticked: no events)
  local errs = bt.tick_all({ a }, dt)
  self.interrupt_now = nil
  rec.time = a.time
  rec.events = self.tick_events or {}
  if errs then
    rec.status, rec.error = "error", errs[1].error
  else
    rec.status = a:status()
  end
  rec.slept = rec.slept and #rec.events == 0
  rec.bb = snapshot(a.bb)
  readstate(self, rec)
  self.ticks[n] = rec
  if self.coverage then self.coverage:feed(self.name, self.nodes, rec) end
  if rec.error and self.errors == "raise" then
    self:fail(n, "the tree raised at tick " .. n .. ": " .. rec.error)
  end
  return rec
end

-- s:run(n): n more ticks (bounded by max_ticks in all).
function Scenario:run(n)
  n = n or 1
  for _ = 1, n do
    if #self.ticks >= self.max_ticks then
      self:fail(#self.ticks, "the scenario reached max_ticks (" ..
                self.max_ticks .. ")")
    end
    self:step()
  end
  return self
end

-- s:run_until(what, limit): ticks until what holds for a tick: a status
-- the tick returns, or a function(tick) -> true. Fails when limit ticks
-- (default max_ticks) go by without it.
function Scenario:run_until(what, limit)
  limit = limit or self.max_ticks
  local test = what
  if type(what) ~= "function" then
    local ok = false
    for _, st in ipairs { bt.SUCCESS, bt.FAILURE, bt.RUNNING, bt.ABORTED,
                          bt.IDLE, bt.SKIPPED } do
      ok = ok or what == st
    end
    if not ok then
      error("bonsai.test: s:run_until: " .. tostring(what) .. " is no " ..
            "status" .. (type(what) == "string" and bt._suggest(what,
            "success failure running aborted idle skipped") or "") ..
            " (a status or a function(tick))", 2)
    end
    test = function(t) return t.status == what end
  end
  for _ = 1, limit do
    if #self.ticks >= self.max_ticks then break end
    local t = self:step()
    if test(t) then return self, t end
  end
  self:fail(#self.ticks, "never " .. (type(what) == "function" and
    "met the condition" or ("returned " .. tostring(what))) .. " within " ..
    limit .. " ticks")
end

-- s:finish(limit): ticks until the tree returns success or failure.
function Scenario:finish(limit)
  return self:run_until(function(t)
    return t.status == bt.SUCCESS or t.status == bt.FAILURE
  end, limit)
end

-- s:tick(n): the record of tick n (it must have run).
function Scenario:tick(n)
  local t = self.ticks[n]
  if not t then
    self:fail(#self.ticks, "tick " .. tostring(n) .. " has not run (" ..
              #self.ticks .. " ticks ran)")
  end
  return t
end

-- The paths who names: a stand-in's key, a registered leaf's name, a
-- path, the end of a path ("fight/chase"), or a node's name. Raises when
-- it names nothing.
function Scenario:paths(who)
  self.names = self.names or {}
  if self.names[who] then return self.names[who] end
  local set, found = {}, false
  for p, key in pairs(self.standin_paths) do
    if key == who then set[p], found = true, true end
  end
  for _, n in ipairs(self.nodes) do
    if n.path == who or n.name == who or
       (n.params and n.params.leaf == who) or
       n.path:sub(-#who - 1) == "/" .. who then
      set[n.path], found = true, true
    end
  end
  if not found then
    local names = {}
    for p, key in pairs(self.standin_paths) do names[key], names[p] = true, true end
    for _, n in ipairs(self.nodes) do
      names[n.name], names[n.path] = true, true
      if n.params and n.params.leaf then names[n.params.leaf] = true end
    end
    error(string.format("bonsai.test: no node '%s' in tree '%s'%s", who,
                        self.name, bt._suggest(tostring(who), names)), 3)
  end
  self.names[who] = set
  return set
end

-- Failures ------------------------------------------------------------------

-- The trace of ticks from..to, as text.
function Scenario:trace_text(from, to)
  local out = {}
  from, to = math.max(1, from), math.min(#self.ticks, to)
  for n = from, to do
    local t = self.ticks[n]
    local head = string.format("  tick %d  time %s  -> %s", n, show(t.time),
                               t.status)
    if #t.applied > 0 then
      head = head .. "   [" .. table.concat(t.applied, ", ") .. "]"
    end
    if t.slept then head = head .. "   (asleep: not ticked)" end
    out[#out + 1] = head
    for _, e in ipairs(t.events) do
      if e.event or e.node == "" then
        out[#out + 1] = "      " .. (e.event or ("(priority) " ..
                        e.status)) .. (e.message and
                        (": " .. e.message) or "")
      else
        out[#out + 1] = string.format("      %-40s %s%s", e.node, e.status,
                                      e.again and " (again)" or "")
      end
    end
    out[#out + 1] = "      running: " .. (#t.running > 0 and
                    table.concat(t.running, ", ") or "nothing")
  end
  return table.concat(out, "\n")
end

-- Raises message with the trace of the ticks around tick n.
function Scenario:fail(n, message)
  local text = "bonsai.test: tree '" .. tostring(self.name) .. "': " ..
               message
  if #self.ticks > 0 then
    n = math.max(1, math.min(n or #self.ticks, #self.ticks))
    text = text .. "\ntrace of ticks " .. math.max(1, n - 2) .. "-" ..
           math.min(#self.ticks, n + 2) .. ":\n" ..
           self:trace_text(n - 2, n + 2)
  end
  error(text, 0)
end

-- Assertions ----------------------------------------------------------------
-- Each returns the scenario (to chain) or raises with the trace.

-- s:expect_running(n, path): at tick n a running leaf's path is path or
-- ends with "/" .. path.
function Scenario:expect_running(n, path)
  local t = self:tick(n)
  for _, p in ipairs(t.running) do
    if p == path or p:sub(-#path - 1) == "/" .. path then return self end
  end
  self:fail(n, string.format("at tick %d the running path is not %s " ..
    "(running: %s)", n, path, #t.running > 0 and
    table.concat(t.running, ", ") or "nothing"))
end

-- s:expect_status(n, status): tick n returned status.
function Scenario:expect_status(n, status)
  local t = self:tick(n)
  if t.status ~= status then
    self:fail(n, string.format("tick %d returned %s, not %s", n, t.status,
                               status))
  end
  return self
end

-- s:expect_returned(status, { within = k }): a tick among the first k
-- (default: every tick run) returned status.
function Scenario:expect_returned(status, o)
  bt._checkopts(o, "s:expect_returned", "within")
  local k = math.min((o and o.within) or #self.ticks, #self.ticks)
  for n = 1, k do
    if self.ticks[n].status == status then return self, n end
  end
  local more = ""
  for n = k + 1, #self.ticks do
    if self.ticks[n].status == status then
      more = " (it did at tick " .. n .. ")"
      break
    end
  end
  self:fail(k, string.format("the tree did not return %s within %d " ..
    "ticks%s", status, k, more))
end

-- The ticks in which pred(tick) holds.
function Scenario:ticks_where(pred)
  local list = {}
  for _, t in ipairs(self.ticks) do
    if pred(t) then list[#list + 1] = t end
  end
  return list
end

local function numbers(ticks)
  local l = {}
  for i, t in ipairs(ticks) do l[i] = tostring(t.n) end
  return table.concat(l, ", ")
end

-- s:expect_entered(who, { times = n, at = tick }): who started a run (at
-- that tick; n times in all).
function Scenario:expect_entered(who, o)
  bt._checkopts(o, "s:expect_entered", "times at")
  o = o or {}
  local hits = self:ticks_where(function(t)
    return t:entered(who) and (o.at == nil or t.n == o.at)
  end)
  if #hits == 0 then
    self:fail(o.at or #self.ticks, who .. " was never entered" ..
              (o.at and (" at tick " .. o.at) or ""))
  end
  if o.times and #hits ~= o.times then
    self:fail(hits[1].n, string.format("%s was entered %d times (ticks " ..
      "%s), not %d", who, #hits, numbers(hits), o.times))
  end
  return self
end

-- s:expect_never_entered(who)
function Scenario:expect_never_entered(who)
  local hits = self:ticks_where(function(t) return t:entered(who) end)
  if #hits > 0 then
    self:fail(hits[1].n, string.format("%s was entered at tick %s", who,
                                       numbers(hits)))
  end
  return self
end

-- s:expect_aborted(who, { when = fn(bb), at = tick }): who was aborted
-- (at that tick; in a tick whose blackboard, as the tree saw it, makes
-- when(bb) true).
function Scenario:expect_aborted(who, o)
  bt._checkopts(o, "s:expect_aborted", "when at")
  o = o or {}
  local hits = self:ticks_where(function(t) return t:aborted(who) end)
  if #hits == 0 then self:fail(#self.ticks, who .. " was never aborted") end
  for _, t in ipairs(hits) do
    if (o.at == nil or t.n == o.at) and
       (o.when == nil or o.when(t.before)) then
      return self, t.n
    end
  end
  local wanted = {}
  if o.at then wanted[#wanted + 1] = "at tick " .. o.at end
  if o.when then wanted[#wanted + 1] = "when the condition held" end
  self:fail(hits[1].n, string.format("%s was aborted at tick %s, but " ..
    "never %s", who, numbers(hits), table.concat(wanted, " and ")))
end

-- s:expect_never_aborted(who)
function Scenario:expect_never_aborted(who)
  local hits = self:ticks_where(function(t) return t:aborted(who) end)
  if #hits > 0 then
    self:fail(hits[1].n, who .. " was aborted at tick " .. numbers(hits))
  end
  return self
end

-- s:expect_error(pattern, { at = tick }): a tick raised an error whose
-- message matches pattern (plain text).
function Scenario:expect_error(pattern, o)
  bt._checkopts(o, "s:expect_error", "at")
  o = o or {}
  for _, t in ipairs(self.ticks) do
    if t.error and (o.at == nil or t.n == o.at) and
       t.error:find(pattern, 1, true) then
      return self, t.n
    end
  end
  self:fail(o.at or #self.ticks, "no tick raised an error with '" ..
            pattern .. "'" .. (o.at and (" at tick " .. o.at) or ""))
end

-- s:calls_of(key, what): the stand-in's recorded calls (of that kind:
-- "enter", "tick", "exit", "abort"), oldest first.
function Scenario:calls_of(key, what)
  local list = self.calls[key]
  if not list then
    error("bonsai.test: no stand-in '" .. tostring(key) .. "'" ..
          bt._suggest(tostring(key), self.calls), 2)
  end
  if not what then return list end
  local out = {}
  for _, c in ipairs(list) do
    if c.what == what then out[#out + 1] = c end
  end
  return out
end

-- The rest of the kit -------------------------------------------------------

T.coverage = coverage.new()
T.new_coverage = coverage.new

function T.golden(s, path, o)
  return golden.check(s, path, o)
end

local worlds = require "bonsai.test.worlds"
T.random = worlds.random
T.int, T.number, T.bool = worlds.int, worlds.number, worlds.bool
T.one_of, T.maybe = worlds.one_of, worlds.maybe
function T.property(o) return worlds.property(T, o) end

T.Scenario, T.Tick = Scenario, Tick

return T
