-- oom_scenario.lua: the scenario of the allocation-failure sweep
-- (test_oom_sweep.c). setup() runs with every allocation granted and makes
-- the books; run() is where the host refuses allocations: trees, agents,
-- ticks, reloads, observers, interrupts, tasks, a bt.control (its memory,
-- two children running, one aborted), sleep,
-- tick_all (and the sleep cache of a list of sleepers), events (a:send,
-- bt.send, table payloads, an event guard, bt.event, bt.wait_event, a
-- bounded queue), latent aborts (leaf B's abort answers bt.RUNNING at
-- every other call, cut off after 2 s), save and restore,
-- the scripts of conditions compiled as trees are made, and agents of a
-- tree the LuaJIT path steps (on LuaJIT: its dispatch made, its loops run),
-- each step under pcall; check() runs with allocations granted again and
-- verifies that every object made still works (tick, abort, reset,
-- reload), that the books agree with the library, and that bt.memory() is
-- back to its value after setup once everything is dropped.
local bt = require "bonsai"

local S = {}
local O           -- objects made by run(), and the books
local IDS = { "A", "B", "C", "D", "T" }
local MAXAGENTS = 6
local SLEEPY = 4 -- the agent whose leaf B sleeps

-- Books: books[agent slot][leaf id] = true while entered. Every slot is
-- made in setup, so writing the books never allocates.
local function leaf(id)
  return bt.action {
    name = id,
    enter = function(a) O.books[a.owner.slot][id] = true end,
    tick = function(a, bb)
      bb.n = (bb.n or 0) + 1
      if (a.owner.slot + bb.n) % 3 == 0 then return bt.SUCCESS end
      if a.owner.slot == SLEEPY and id == "B" then return bt.sleep(0.5) end
      return bt.RUNNING
    end,
    exit = function(a) O.books[a.owner.slot][id] = false end,
    abort = function(a)
      O.books[a.owner.slot][id] = false
      if id == "B" then -- latent every other call (a restart ends it)
        local n = O.aborts[a.owner.slot] + 1
        O.aborts[a.owner.slot] = n
        if n % 2 == 1 then return bt.RUNNING end
      end
    end,
    abort_timeout = id == "B" and 2 or nil,
  }
end

-- A task's body: its cleanup a to-be-closed variable on 5.4, bt.defer on
-- the Luas without them (its text is loaded only where it parses).
local body
if _VERSION == "Lua 5.4" then
  body = assert(load([[
    local books = ...
    return function(a, id)
      local b = books().books[a.owner.slot]
      b[id] = true
      local guard <close> = books().closers[a.owner.slot]
      coroutine.yield()
      coroutine.yield()
      return true
    end]]))(function() return O end)
else
  body = function(a, id)
    local b = O.books[a.owner.slot]
    b[id] = true
    bt.defer(O.defers[a.owner.slot]) -- (made in setup: nothing to allocate)
    coroutine.yield()
    coroutine.yield()
    return true
  end
end

local function task(id)
  return bt.named(id, bt.task(function(a) return body(a, id) end))
end

-- A tree the LuaJIT path steps: leaves without exit or abort callbacks, a
-- control node without abort, a check; no books (nothing tells an abort).
local function stepleaf(id, enter)
  return bt.action { name = id,
    enter = enter and function(a) a.owner.enters = a.owner.enters + 1 end,
    tick = function(a, bb)
      bb.m = (bb.m or 0) + 1
      return bb.m % 3 == 0 and bt.SUCCESS or bt.RUNNING
    end }
end

local function steproot(v)
  return bt.reactive_selector { name = "root",
    bt.sequence { name = "s",
      bt.condition { name = "q", fn = function(_, bb)
        return (bb.m or 0) % 2 == v % 2 end },
      stepleaf("E", true) },
    bt.control { name = "c",
      tick = function(c)
        local s = c:tick(1)
        if s == bt.RUNNING then c:tick(2) end
        return s
      end,
      stepleaf "F", bt.sequence { name = "t", bt.check("m", ">", 1),
                                  stepleaf "G" } },
  }
end

-- A bt.control with two children running at once: its memory counts runs
-- and ticks; when the first ends, the second is aborted.
local function control()
  return bt.control { name = "c",
    enter = function(c) c.memory.runs = (c.memory.runs or 0) + 1 end,
    tick = function(c)
      local m = c.memory
      m.ticks = (m.ticks or 0) + 1
      local s = c:tick(1)
      if s ~= bt.RUNNING then
        c:abort(2)
        return s
      end
      c:tick(2)
      O.both = O.both + 1
      return bt.RUNNING
    end,
    abort = function(c) c.memory.cut = (c.memory.cut or 0) + 1 end,
    bt.repeater { name = "r", times = 2, leaf "C" }, leaf "D" }
end

local function root(v)
  return bt.reactive_selector { name = "root",
    bt.guard { name = "g", bt.check("alarm", "==", true), abort = "lower",
               leaf "A" },
    bt.guard { name = "eg", event = "alarm", abort = "lower",
      bt.sequence { name = "es", bt.event("alarm", { key = "where" }),
                    bt.wait_event("calm", { name = "we", timeout = 1 }) } },
    bt.parallel { name = "p", success = "all",
      bt.sequence { name = "s", leaf "B",
                    bt.wait { seconds = v, run_while = "n > 0",
                              post = "waited := true" } },
      bt.timeout { name = "to", seconds = 5, task "T" },
      control() },
  }
end

function S.setup()
  O = { trees = {}, agents = {}, bbs = {}, handles = {}, fired = 0, both = 0,
        books = {}, closers = {}, defers = {}, owners = {}, aborts = {},
        stepped = {}, steppers = {} }
  for i = 1, 3 do O.steppers[i] = { enters = 0 } end
  for i = 1, MAXAGENTS do
    O.aborts[i] = 0
    local b = {}
    for _, id in ipairs(IDS) do b[id] = false end
    O.books[i] = b
    O.owners[i] = { slot = i }
    O.closers[i] = setmetatable({}, { __close = function()
      O.books[i].T = false
    end })
    O.defers[i] = function() O.books[i].T = false end
  end
  -- a list of sleepers, asleep: the run's calls give it its sleep cache
  local nap = bt.tree(bt.action { name = "nap", tick = function(a)
    a.owner.naps = a.owner.naps + 1
    return bt.sleep(100)
  end }, { name = "oom.nap" })
  O.nappers = {}
  for i = 1, 3 do O.nappers[i] = bt.agent(nap, { owner = { naps = 0 } }) end
  bt.tick_all(O.nappers, 1)
  -- a control node's child stepped once: the environment keeps the records
  -- of a stepped tick two levels deep for the next (the LuaJIT path's)
  local once = bt.agent(bt.tree(bt.control { name = "c",
    tick = function(c) return c:tick(1) end,
    bt.action { name = "x", tick = function() return true end } },
    { name = "oom.once" }))
  once:tick(1)
  once = nil
  -- intern the keys and the leaf name the scenario uses
  local bb = bt.blackboard { alarm = false, n = 0, x = 1, where = 1 }
  bt.register("oom.leaf", function() return true end)
  bb = nil
  collectgarbage()
  collectgarbage()
  O.base = bt.memory()
  O.nsteps, O.steps, O.lines = 0, {}, {}
  for i = 1, 200 do O.steps[i], O.lines[i] = 0, 0 end
end

-- Runs one step; remembers where the first error came from (for messages).
local function try(f, ...)
  local ok, err = pcall(f, ...)
  if TRACE then -- no allocation: slots made in setup
    O.nsteps = O.nsteps + 1
    O.steps[O.nsteps] = ALLOCS()
    O.lines[O.nsteps] = debug.getinfo(2, "l").currentline
  end
  if not ok and not O.first then
    O.first = debug.traceback(tostring(err), 1):gsub("\n", " | ")
  end
  return ok, err
end

function S.run()
  local t
  for _ = 1, 4 do try(bt.tick_all, O.nappers, 1) end
  try(function()
    t = bt.tree(root(1), { name = "oom" })
    O.trees[#O.trees + 1] = t
  end)
  try(function() O.bbs[1] = bt.blackboard { x = 1 } end)
  try(function()
    O.handles[#O.handles + 1] = { bb = O.bbs[1],
      h = O.bbs[1]:observe("x", function() O.fired = O.fired + 1 end) }
  end)
  for i = 1, 3 do
    try(function()
      local a = bt.agent(t, { owner = O.owners[i], events = i == 2 and 1 or nil,
        blackboard = i == 3 and O.bbs[1] or { alarm = false } })
      O.agents[#O.agents + 1] = a
    end)
  end
  for _, a in ipairs(O.agents) do
    try(a.add_interrupt, a, function(ag) return ag.bb.x == 99 end)
  end
  for k = 1, 3 do
    for _, a in ipairs(O.agents) do try(a.tick, a, 0.5) end
  end
  try(function() O.bbs[1].x = 2 end)
  try(function() O.agents[2]:send("alarm", { x = 1, y = { 2 } }) end)
  try(function() O.agents[2]:send("calm") end) -- (its queue holds one)
  try(bt.send, O.agents, "alarm", { at = "gate" })
  try(bt.tick_all, O.agents, 0.5)
  try(bt.send, O.agents, "calm", "ok")
  try(bt.tick_all, O.agents, 0.5)
  try(function() O.agents[1].bb.alarm = true end)
  try(bt.tick_all, O.agents, 0.5)
  if not WITHOUT_RELOAD then
    try(function() t:reload(root(2), { name = "oom" }) end)
  end
  try(bt.tick_all, O.agents, 0.5)
  try(function()
    local t2 = bt.tree(bt.sequence { name = "root", bt.action "oom.leaf",
                                     leaf "B" }, { name = "oom2" })
    O.trees[#O.trees + 1] = t2
    O.agents[#O.agents + 1] = bt.agent(t2, { owner = O.owners[4] })
  end)
  for _, a in ipairs(O.agents) do try(a.tick, a, 1) end
  try(function() O.agents[2]:abort() end)
  try(function() O.agents[3]:reset() end)
  if not WITHOUT_RELOAD then
    try(function() t:reload(root(3)) end)
  end
  try(function() O.bbs[1].x = 99 end) -- the interrupt fires
  for _, a in ipairs(O.agents) do try(a.tick, a, 1) end
  try(function() O.bbs[1].x = 3 end)
  for _, a in ipairs(O.agents) do try(a.tick, a, 1) end
  try(function() bt.register("oom.leaf", function() return false end) end)
  try(function() O.agents[1]:send("alarm", { queued = true }) end)
  try(function() -- save agent 1, restore it as agent 5
    local s = O.agents[1]:save()
    local n = bt.agent(O.agents[1].tree, { owner = O.owners[5], restore = s })
    for _, name in ipairs(n:running()) do -- restored leaves go on
      if name ~= "T" and O.books[5][name] ~= nil then
        O.books[5][name] = true
      end
    end
    O.agents[#O.agents + 1] = n
  end)
  try(function() -- __pairs from 5.2 on; bb:pairs() on every Lua
    if _VERSION == "Lua 5.1" then
      for _ in O.bbs[1]:pairs() do end
    else
      for _ in pairs(O.bbs[1]) do end
    end
  end)
  -- agents the LuaJIT path steps, by bt.tick_all and a:tick, and a reload
  local st
  try(function()
    st = bt.tree(steproot(1), { name = "oom3" })
    O.steptree = st
  end)
  for i = 1, 3 do
    try(function()
      O.stepped[#O.stepped + 1] = bt.agent(st, { owner = O.steppers[i] })
    end)
  end
  for _ = 1, 3 do try(bt.tick_all, O.stepped, 1) end
  for _, a in ipairs(O.stepped) do try(a.tick, a, 1) end
  if not WITHOUT_RELOAD and st then
    try(function() st:reload(steproot(2)) end)
  end
  for _ = 1, 2 do try(bt.tick_all, O.stepped, 1) end
  for _, a in ipairs(O.stepped) do try(a.tick, a, 1) end
end

local function fail(fmt, ...)
  error(string.format(fmt, ...) .. " [first error of the run: " ..
        tostring(O.first) .. "]", 2)
end

-- The leaves a:running() lists against the books.
local function agree(a, when)
  local run = {}
  for _, n in ipairs(a:running()) do
    if O.books[a.owner.slot][n] ~= nil then run[n] = true end
  end
  for _, id in ipairs(IDS) do
    if id == "T" and a.owner.slot == 5 and run[id] and
       not O.books[5][id] then
      run[id] = nil -- restored: its body starts again at the next tick
    end
    if (run[id] or false) ~= O.books[a.owner.slot][id] then
      fail("%s: agent %d, leaf %s: running %s, entered %s", when,
           a.owner.slot, id, tostring(run[id] or false),
           tostring(O.books[a.owner.slot][id]))
    end
  end
end

function S.check()
  if TRACE then
    for i = 1, O.nsteps do print("step", i, "line", O.lines[i], "allocs",
                                 O.steps[i]) end
  end
  if REFUSED == 0 and (#O.agents ~= 5 or #O.trees ~= 2 or #O.handles ~= 1 or
                       O.fired < 2) then
    fail("the run without refusals made %d agents, %d trees, %d observers "
         .. "(called %d times)", #O.agents, #O.trees, #O.handles, O.fired)
  end
  if REFUSED == 0 and O.both == 0 then
    fail("the control node never had its two children running")
  end
  for _, a in ipairs(O.agents) do agree(a, "after the run") end
  for _, t in ipairs(O.trees) do
    local ok, err = t:reload(root(4))
    if not ok then fail("reload after the run: %s", err) end
  end
  local before = O.fired
  if O.bbs[1] then
    O.bbs[1].x = 1000
    if #O.handles > 0 and O.fired ~= before + 1 then
      fail("observer not called after the run")
    end
  end
  for _, hd in ipairs(O.handles) do
    if hd.bb:unobserve(hd.h) ~= true then fail("unobserve failed") end
  end
  for _, a in ipairs(O.agents) do
    for _ = 1, 3 do
      local s = a:tick(1)
      if s ~= "running" and s ~= "success" and s ~= "failure" and
         s ~= "aborted" then
        fail("tick returned %s", tostring(s))
      end
      agree(a, "after a tick")
    end
    a:abort()
    agree(a, "after abort")
    if #a:running() ~= 0 then fail("running after abort") end
    a:reset()
    if a:status() ~= "idle" then fail("status %s after reset", a:status()) end
    a:tick(1)
    agree(a, "after reset and tick")
  end
  local errs = bt.tick_all(O.agents, 1)
  if errs then fail("tick_all: %s", errs[1].error) end
  if O.steptree then
    local ok, err = O.steptree:reload(steproot(4))
    if not ok then fail("reload of the stepped tree after the run: %s", err) end
  end
  for k = 1, 3 do
    errs = bt.tick_all(O.stepped, 1)
    if errs then fail("tick_all of the stepped: %s", errs[1].error) end
    for _, a in ipairs(O.stepped) do
      local s = a:tick(1)
      if s ~= "running" and s ~= "success" and s ~= "failure" then
        fail("a stepped agent's tick %d returned %s", k, tostring(s))
      end
    end
  end
  if REFUSED == 0 and O.steppers[1].enters == 0 then
    fail("the stepped tree's leaf E was never entered")
  end
  for _, a in ipairs(O.stepped) do a:abort() end
  -- the sleepers: skipped by every call now, cache or not, clocks moving
  local was = {}
  for i, a in ipairs(O.nappers) do was[i] = a.time end
  for _ = 1, 3 do
    errs = bt.tick_all(O.nappers, 1)
    if errs then fail("tick_all of the sleepers: %s", errs[1].error) end
  end
  for i, a in ipairs(O.nappers) do
    if a.time ~= was[i] + 3 or a.owner.naps ~= 1 or not a:sleeping() then
      fail("sleeper %d: time %s (was %s), %d naps, sleeping %s", i,
           tostring(a.time), tostring(was[i]), a.owner.naps,
           tostring(a:sleeping()))
    end
  end
  O.nappers[2]:wake()
  errs = bt.tick_all(O.nappers, 1)
  if errs or O.nappers[2].owner.naps ~= 2 or O.nappers[1].owner.naps ~= 1 then
    fail("a woken sleeper was not ticked once, or another was")
  end
  for _, a in ipairs(O.agents) do a:abort() end
  local n = #O.agents
  if jit then jit.flush() end -- (a compiled trace may keep an object alive)
  O.agents, O.trees, O.bbs, O.handles = nil, nil, nil, nil
  O.stepped, O.steptree = nil, nil
  collectgarbage()
  collectgarbage()
  if bt.memory() ~= O.base then
    fail("bt.memory() is %d after the run (%d agents), %d before",
         bt.memory(), n, O.base)
  end
end

return S
