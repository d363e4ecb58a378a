-- leaves_spec: bt.condition, bt.action (functions and lifecycle tables),
-- bt.task coroutines, named leaves (bt.register) and bt.wait, checked tick
-- by tick through the trace helper.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
-- What an invalid status message ends with: the valid ones.
local VALID = ': a leaf returns "success", "failure", "running", true or '
  .. "false"
local trace = require "helpers.trace"

local agent_of, tick_error = trace.agent_of, trace.tick_error

-- The status of one tick of a tree whose leaf returns v.
local function action_status(v)
  return agent_of(bt.action(function() return v end)):tick(1)
end

local function condition_status(v)
  return agent_of(bt.condition(function() return v end)):tick(1)
end


describe("leaf return values", function()
  it("true and bt.SUCCESS are success", function()
    assert.equal("success", action_status(true))
    assert.equal("success", action_status(bt.SUCCESS))
    assert.equal("success", action_status("success"))
    assert.equal("success", condition_status(true))
    assert.equal("success", condition_status(bt.SUCCESS))
  end)

  it("false, nil and bt.FAILURE are failure", function()
    assert.equal("failure", action_status(false))
    assert.equal("failure", action_status(nil))
    assert.equal("failure", action_status(bt.FAILURE))
    assert.equal("failure", condition_status(false))
    assert.equal("failure", condition_status(nil))
    assert.equal("failure", condition_status(bt.FAILURE))
  end)

  it("a function that returns nothing fails", function()
    assert.equal("failure", agent_of(bt.action(function() end)):tick(1))
    assert.equal("failure", agent_of(bt.condition(function() end)):tick(1))
  end)

  it("bt.RUNNING is running for an action", function()
    assert.equal("running", action_status(bt.RUNNING))
  end)

  it("accepts a status string built at run time", function()
    local part = "suc"
    assert.equal("success", action_status(part .. "cess"))
    assert.equal("running", action_status(("RUNNING"):lower()))
  end)

  it("uses only the first return value", function()
    local a = agent_of(bt.action(function() return true, "junk", 42 end))
    assert.equal("success", a:tick(1))
  end)

  local valid = ': a leaf returns "success", "failure", "running", true or '
                .. 'false'
  local invalid = {
    { 42, "invalid status (a number value)" .. valid },
    { 0, "invalid status (a number value)" .. valid },
    { "succes", "invalid status 'succes' (did you mean \"success\"?)" .. valid },
    { "SUCCESS", "invalid status 'SUCCESS' (did you mean \"success\"?)"
                 .. valid },
    { bt.ABORTED, "invalid status 'aborted'" .. valid },
    { bt.IDLE, "invalid status 'idle'" .. valid },
    { {}, "invalid status (a table value)" .. valid },
    { print, "invalid status (a function value)" .. valid },
  }
  for _, case in ipairs(invalid) do
    it("any other value is an error naming the node: " .. case[2], function()
      local a = bt.agent(bt.tree(bt.sequence {
        bt.action(function() return true end),
        bt.action(function() return case[1] end),
      }, { name = "T" }))
      assert.equal("tree 'T' node 'sequence/action[2]': " .. case[2],
                   tick_error(a))
      local c = bt.agent(bt.tree(bt.selector {
        bt.condition(function() return case[1] end),
      }, { name = "T" }))
      assert.equal("tree 'T' node 'selector/condition[1]': " .. case[2],
                   tick_error(c))
    end)
  end

  it("a condition that returns running is an error", function()
    local a = agent_of(bt.sequence {
      bt.condition(function() return bt.RUNNING end),
    })
    assert.equal(
      "tree 'T' node 'sequence/condition[1]': a condition cannot return running",
      tick_error(a))
    assert.equal("aborted", a:status())
  end)

  it("a lifecycle tick is held to the same rules", function()
    local results = { true, nil, false, bt.RUNNING, bt.FAILURE, 7 }
    local k = 0
    local a = agent_of(bt.action {
      tick = function()
        k = k + 1
        return results[k]
      end,
    })
    assert.equal("success", a:tick(1))
    assert.equal("failure", a:tick(1))
    assert.equal("failure", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("failure", a:tick(1))
    assert.equal("tree 'T' node 'action': invalid status (a number value)"
                 .. VALID, tick_error(a))
  end)
end)

describe("leaf callbacks", function()
  it("get the agent, its blackboard and the static args", function()
    local args = { speed = 3 }
    local seen = {}
    local a
    a = bt.agent(bt.tree(bt.sequence {
      bt.condition(function(...)
        seen.condition = table.pack(...)
        return true
      end, args),
      bt.action(function(...)
        seen.action = table.pack(...)
        return true
      end, args),
      bt.action(function(...)
        seen.noargs = table.pack(...)
        return true
      end),
    }))
    assert.equal("success", a:tick(1))
    for _, k in ipairs { "condition", "action" } do
      assert.equal(3, seen[k].n)
      assert.equal(a, seen[k][1])
      assert.equal(a.bb, seen[k][2])
      assert.equal(args, seen[k][3])
    end
    assert.equal(a, seen.noargs[1])
    assert.equal(a.bb, seen.noargs[2])
    assert.is_nil(seen.noargs[3])
  end)

  it("pass the same args table on every tick and to every event", function()
    local args = {}
    local got = {}
    local n = 0
    local a = agent_of(bt.action({
      enter = function(_, _, x) got[#got + 1] = x end,
      tick = function(_, _, x)
        got[#got + 1] = x
        n = n + 1
        return n < 2 and bt.RUNNING or bt.SUCCESS
      end,
      exit = function(_, _, x) got[#got + 1] = x end,
    }, args))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal(4, #got)
    for k = 1, 4 do assert.equal(args, got[k]) end
  end)

  it("exit gets the final status as a 4th argument", function()
    local exits = {}
    local results = { bt.SUCCESS, bt.FAILURE }
    local k = 0
    local a = agent_of(bt.action {
      tick = function()
        k = k + 1
        return results[k]
      end,
      exit = function(...)
        exits[#exits + 1] = table.pack(...)
      end,
    })
    assert.equal("success", a:tick(1))
    assert.equal("failure", a:tick(1))
    assert.equal(2, #exits)
    assert.equal(4, exits[1].n)
    assert.equal(a, exits[1][1])
    assert.equal(a.bb, exits[1][2])
    assert.equal("success", exits[1][4])
    assert.equal("failure", exits[2][4])
  end)

  it("see blackboard writes made by earlier leaves in the same tick",
     function()
    local a = agent_of(bt.sequence {
      bt.action(function(_, bb) bb.target = "door"; return true end),
      bt.condition(function(_, bb) return bb.target == "door" end),
    })
    assert.equal("success", a:tick(1))
    assert.equal("door", a.bb.target)
  end)
end)

describe("lifecycle leaves", function()
  local t
  before_each(function() t = trace.new() end)

  it("call enter once, tick every tick and exit once per run", function()
    local a = agent_of(t:action("A", "RRS"))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("enter again for each new run", function()
    local a = agent_of(t:action("A", "SRF"))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("call abort, not exit, when a running leaf is cut off", function()
    local a = agent_of(t:action("A", "R"))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("aborted", a:status())
    assert.equal("running | enter A; tick A", t:step(a, 1))
  end)

  it("give a leaf without abort exit(..., 'aborted')", function()
    local a = agent_of(t:action("A", "R", { noabort = true }))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("exit A aborted", t:take())
    assert.equal(bt.ABORTED, a:status())
  end)

  it("call nothing on abort for a leaf with neither abort nor exit",
     function()
    local a = agent_of(t:action("A", "R", { noabort = true, noexit = true }))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("", t:take())
    assert.equal("aborted", a:status())
  end)

  it("do not call abort on a leaf that is not running", function()
    local a = agent_of(bt.sequence { t:action("A", "S"), t:action("B", "R") })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
    a:abort() -- nothing runs any more
    assert.equal("", t:take())
  end)

  it("work with a tick function alone", function()
    local n = 0
    local a = agent_of(bt.action {
      tick = function()
        n = n + 1
        return n >= 2
      end,
    })
    assert.equal("failure", a:tick(1))
    assert.equal("success", a:tick(1))
  end)

  it("a condition is only ticked, never entered or exited", function()
    local a = agent_of(bt.sequence { t:condition("C", "SF") })
    assert.equal("success | tick C", t:step(a, 1))
    assert.equal("failure | tick C", t:step(a, 1))
  end)
end)

describe("tasks", function()
  local jobs -- what the tasks did, apart from the trace leaves
  before_each(function() jobs = trace.new() end)

  -- A task that logs its steps and registers a cleanup (bt.defer).
  local function stepper(result)
    return bt.task(function(agent, bb, args)
      jobs:add("start " .. tostring(args and args.id))
      bt.defer(function(err) jobs:add("closed " .. tostring(err)) end)
      coroutine.yield()
      jobs:add("step 1")
      coroutine.yield()
      jobs:add("step 2")
      return result
    end, { id = 7 })
  end

  it("yield means running and the return value is the status", function()
    local a = agent_of(stepper(true))
    assert.equal("running", a:tick(1))
    assert.equal("start 7", jobs:take())
    assert.equal("running", a:tick(1))
    assert.equal("step 1", jobs:take())
    assert.equal("success", a:tick(1))
    assert.equal("step 2; closed nil", jobs:take())
  end)

  it("maps its return value like a leaf's", function()
    local cases = {
      { true, "success" }, { bt.SUCCESS, "success" }, { false, "failure" },
      { nil, "failure" }, { bt.FAILURE, "failure" },
    }
    for _, c in ipairs(cases) do
      local a = agent_of(bt.task(function()
        coroutine.yield()
        return c[1]
      end))
      assert.equal("running", a:tick(1))
      assert.equal(c[2], a:tick(1))
    end
  end)

  it("finishes in its first tick when it does not yield", function()
    assert.equal("success", agent_of(bt.task(function() return true end))
      :tick(1))
  end)

  it("ignores the values it yields", function()
    local a = agent_of(bt.task(function()
      coroutine.yield(bt.FAILURE)
      coroutine.yield(42)
      return true
    end))
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
  end)

  it("gets (agent, bb, args) when it starts", function()
    local args = { 1 }
    local got
    local a
    a = agent_of(bt.task(function(...)
      got = table.pack(...)
      return true
    end, args))
    a:tick(1)
    assert.equal(3, got.n)
    assert.equal(a, got[1])
    assert.equal(a.bb, got[2])
    assert.equal(args, got[3])
  end)

  it("starts a new coroutine for each run", function()
    local a = agent_of(stepper(false))
    for _ = 1, 2 do
      assert.equal("running", a:tick(1))
      assert.equal("running", a:tick(1))
      assert.equal("failure", a:tick(1))
    end
    assert.equal("start 7; step 1; step 2; closed nil; "
                 .. "start 7; step 1; step 2; closed nil", jobs:take())
  end)

  it("runs its cleanups (bt.defer) when it is aborted",
     function()
    local a = agent_of(stepper(true))
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("start 7; step 1", jobs:take())
    a:abort()
    assert.equal("closed nil", jobs:take())
    assert.equal("aborted", a:status())
    -- the next tick starts the task over
    assert.equal("running", a:tick(1))
    assert.equal("start 7", jobs:take())
  end)

  it("is closed when a reactive node aborts it", function()
    local go = false
    local a = agent_of(bt.reactive_selector {
      bt.condition(function() return go end),
      stepper(true),
    })
    assert.equal("running", a:tick(1))
    assert.equal("start 7", jobs:take())
    go = true
    assert.equal("success", a:tick(1))
    assert.equal("closed nil", jobs:take())
  end)

  it("raises its error, naming the node, after closing the coroutine",
     function()
    local a = bt.agent(bt.tree(bt.sequence {
      bt.task(function()
        bt.defer(function(err) jobs:add("closed " .. tostring(err)) end)
        coroutine.yield()
        error("bad task", 0)
      end),
    }, { name = "T" }))
    assert.equal("running", a:tick(1))
    assert.equal("tree 'T' node 'sequence/action[1]': bad task",
                 tick_error(a))
    assert.equal("closed bad task", jobs:take())
    assert.equal("aborted", a:status())
    -- the agent runs again, with a new coroutine
    assert.equal("running", a:tick(1))
  end)

  it("may not return running", function()
    local a = agent_of(bt.task(function() return bt.RUNNING end))
    assert.equal("tree 'T' node 'action': "
                 .. "a task returned running (yield to keep running)",
                 tick_error(a))
  end)

  it("may not return an invalid status", function()
    local a = agent_of(bt.task(function() return 3 end))
    assert.equal("tree 'T' node 'action': invalid status (a number value)"
                 .. VALID, tick_error(a))
  end)

  it("runs one coroutine per agent", function()
    local tree = bt.tree(bt.task(function(agent)
      jobs:add("start " .. agent.owner)
      coroutine.yield()
      jobs:add("end " .. agent.owner)
      return true
    end))
    local a = bt.agent(tree, { owner = "a" })
    local b = bt.agent(tree, { owner = "b" })
    assert.equal("running", a:tick(1))
    assert.equal("running", b:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal("success", b:tick(1))
    assert.equal("start a; start b; end a; end b", jobs:take())
  end)

  it("allocates nothing while it runs, ticked by a:tick or bt.tick_all",
     function()
    luaver.nojit(finally)
    local tree = bt.tree(bt.sequence { bt.task(function()
      while true do coroutine.yield() end
    end) })
    local list = {}
    for k = 1, 20 do list[k] = bt.agent(tree) end
    bt.tick_all(list, 1) -- the coroutines start
    for k = 1, #list do list[k]:tick(1) end -- each path taken once
    local tick_all, errs = bt.tick_all, nil
    collectgarbage("collect")
    collectgarbage("stop")
    local heap, core = collectgarbage("count"), bt.memory()
    for _ = 1, 50 do
      errs = errs or tick_all(list, 1)
      for k = 1, #list do list[k]:tick(1) end
    end
    local heap2, core2 = collectgarbage("count"), bt.memory()
    collectgarbage("restart")
    assert.is_nil(errs)
    assert.equal("running", list[1]:status())
    assert.same({ heap, core }, { heap2, core2 })
  end)

  it("a task's failure raised from a:tick leaves the Lua state sound, "
     .. "however often (LuaJIT: lua_resume's current thread)", function()
    -- the raise through a caller that returns its message, the heap worked
    -- by compiled code in between: LuaJIT without lcompat.h's call after
    -- lua_resume corrupts its heap here within a few hundred runs
    local function message(f, ...)
      local ok, msg = pcall(f, ...)
      return not ok and tostring(msg)
    end
    for _ = 1, 2000 do
      local a = bt.agent(bt.tree(bt.task(function() return "bogus" end)))
      assert.matches("invalid status 'bogus'", message(a.tick, a, 1), 1, true)
      local t = {}
      for j = 1, 100 do t[j] = { j } end
    end
  end)
end)

describe("named leaves", function()
  local t
  before_each(function() t = trace.new() end)

  it("are registered functions used by name, with args", function()
    local got = {}
    bt.register("leaves.hit", function(agent, bb, args)
      got[#got + 1] = args and args.damage or "none"
      return true
    end)
    local a = agent_of(bt.sequence {
      bt.action("leaves.hit", { damage = 3 }),
      bt.action "leaves.hit",
      bt.condition("leaves.hit", { damage = 5 }),
    })
    assert.equal("success", a:tick(1))
    assert.same({ 3, "none", 5 }, got)
  end)

  it("are named by their registered name", function()
    bt.register("leaves.run", function() return bt.RUNNING end)
    local tree = bt.tree(bt.parallel {
      bt.action "leaves.run", bt.action "leaves.run",
      bt.action("leaves.run", { 1 }),
    }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.same({ "parallel", "leaves.run", "leaves.run#2", "leaves.run#3" },
                a:running())
  end)

  it("can be lifecycle tables", function()
    bt.register("leaves.walk", t:leafdef("W", "RS"))
    local a = agent_of(bt.action "leaves.walk")
    assert.equal("running | enter W; tick W", t:step(a, 1))
    assert.equal("success | tick W; exit W success", t:step(a, 1))
  end)

  it("can be tasks", function()
    local steps = {}
    bt.register("leaves.task", bt.task(function(_, _, args)
      steps[#steps + 1] = args.n
      coroutine.yield()
      steps[#steps + 1] = -args.n
      return true
    end))
    local a = agent_of(bt.action("leaves.task", { n = 4 }))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.same({ 4, -4 }, steps)
  end)

  it("can be a node made by bt.action(fn)", function()
    bt.register("leaves.node", bt.action(function() return bt.FAILURE end))
    assert.equal("failure", agent_of(bt.action "leaves.node"):tick(1))
  end)

  it("change in every tree from the next tick when re-registered",
     function()
    local version = {}
    bt.register("leaves.v", function(agent)
      version[agent.owner] = 1
      return true
    end)
    local t1 = bt.tree(bt.sequence { bt.action "leaves.v" })
    local t2 = bt.tree(bt.selector { bt.condition "leaves.v" })
    local a = bt.agent(t1, { owner = "a" })
    local b = bt.agent(t2, { owner = "b" })
    assert.equal("success", a:tick(1))
    assert.equal("success", b:tick(1))
    assert.same({ a = 1, b = 1 }, version)
    bt.register("leaves.v", function(agent)
      version[agent.owner] = 2
      return false
    end)
    assert.equal("failure", a:tick(1))
    assert.equal("failure", b:tick(1))
    assert.same({ a = 2, b = 2 }, version)
  end)

  it("re-registered while running keep running, without a new enter",
     function()
    bt.register("leaves.move", t:leafdef("M1", "R"))
    local a = agent_of(bt.sequence { bt.action "leaves.move" })
    assert.equal("running | enter M1; tick M1", t:step(a, 1))
    bt.register("leaves.move", t:leafdef("M2", "RS"))
    assert.equal("running | tick M2", t:step(a, 1))
    assert.equal("success | tick M2; exit M2 success", t:step(a, 1))
    assert.equal("success | enter M2; tick M2; exit M2 success", t:step(a, 1))
  end)

  it("re-registered while running are aborted with the new callbacks",
     function()
    bt.register("leaves.stop", t:leafdef("S1", "R"))
    local a = agent_of(bt.action "leaves.stop")
    assert.equal("running | enter S1; tick S1", t:step(a, 1))
    bt.register("leaves.stop", t:leafdef("S2", "R"))
    a:abort()
    assert.equal("abort S2", t:take())
  end)

  it("re-registered as a task after a running task was replaced start "
     .. "the new task", function()
    local steps = {}
    bt.register("leaves.swap", bt.task(function()
      steps[#steps + 1] = "old start"
      coroutine.yield()
      steps[#steps + 1] = "old end"
      return true
    end))
    local a = agent_of(bt.action "leaves.swap")
    assert.equal("running", a:tick(1))
    bt.register("leaves.swap", function()
      steps[#steps + 1] = "fn"
      return true
    end)
    assert.equal("success", a:tick(1))
    bt.register("leaves.swap", bt.task(function()
      steps[#steps + 1] = "new start"
      coroutine.yield()
      steps[#steps + 1] = "new end"
      return true
    end))
    assert.equal("running", a:tick(1))
    assert.same({ "old start", "fn", "new start" }, steps)
    assert.equal("success", a:tick(1))
    assert.same({ "old start", "fn", "new start", "new end" }, steps)
  end)

  it("close the stale coroutine of a replaced task when the task starts "
     .. "again", function()
    local log = {}
    bt.register("leaves.stale", bt.task(function()
      bt.defer(function() log[#log + 1] = "closed old" end)
      log[#log + 1] = "old start"
      coroutine.yield()
      log[#log + 1] = "old end"
      return true
    end))
    local a = agent_of(bt.action "leaves.stale")
    assert.equal("running", a:tick(1))
    bt.register("leaves.stale", function() return true end)
    assert.equal("success", a:tick(1))
    bt.register("leaves.stale", bt.task(function()
      log[#log + 1] = "new start"
      return true
    end))
    assert.equal("success", a:tick(1))
    assert.same({ "old start", "closed old", "new start" }, log)
  end)

  it("may be registered after the leaf's previous tree was built",
     function()
    bt.register("leaves.late", function() return true end)
    local tree = bt.tree(bt.action "leaves.late")
    bt.register("leaves.late", function() return false end)
    assert.equal("failure", bt.agent(tree):tick(1))
  end)

  it("reject bad registrations", function()
    assert.error_matches(function() bt.register("leaves.bad", 42) end,
      "bad argument #2 to 'register' %(a function or a leaf table expected%)")
    assert.error_matches(function() bt.register("", print) end,
      "bad argument #1 to 'register' %(empty leaf name%)")
    assert.error_matches(function() bt.register("leaves.bad", { tick = 4 }) end,
      "bt.register 'leaves.bad': leaf field 'tick' must be a function "
      .. "%(got number%)")
    assert.error_matches(function()
      bt.register("leaves.bad", { enter = print })
    end, "bt.register 'leaves.bad': a leaf needs a function (fn, tick or "
      .. "task)", 1, true)
    assert.error_matches(function()
      bt.register("leaves.bad", bt.action "leaves.hit")
    end, "bt.register 'leaves.bad': a leaf needs a function (fn, tick or "
      .. "task)", 1, true)
  end)
end)

describe("bt.wait", function()
  it("runs until its seconds of agent time have passed", function()
    local a = agent_of(bt.wait { seconds = 2 })
    assert.equal("running", a:tick(0.5)) -- starts at 0.5
    assert.equal("running", a:tick(1))   -- 1.0 passed
    assert.equal("running", a:tick(0.5)) -- 1.5 passed
    assert.equal("success", a:tick(1))   -- 2.5 passed
    assert.equal(3, a.time)
  end)

  it("succeeds when exactly its seconds have passed", function()
    local a = agent_of(bt.wait { seconds = 2 })
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
  end)

  it("of zero seconds succeeds at once", function()
    assert.equal("success", agent_of(bt.wait { seconds = 0 }):tick(0))
  end)

  it("does not move with ticks of dt 0", function()
    local a = agent_of(bt.wait { seconds = 1 })
    for _ = 1, 5 do assert.equal("running", a:tick(0)) end
    assert.equal("success", a:tick(1))
  end)

  it("starts over in each run", function()
    local t = trace.new()
    local a = agent_of(bt.sequence { bt.wait { seconds = 1 }, t:action("A", "S") })
    assert.equal("running |", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("starts over after an abort", function()
    local a = agent_of(bt.wait { seconds = 2 })
    assert.equal("running", a:tick(1))
    a:abort()
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
  end)

  it("accepts a number of seconds", function()
    local a = agent_of(bt.wait(1))
    assert.equal("running", a:tick(0.5))
    assert.equal("success", a:tick(1))
  end)
end)
