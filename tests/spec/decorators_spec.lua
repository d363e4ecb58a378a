-- decorators_spec: invert, force_success/failure, repeater, retry,
-- repeat_until_failure, timeout, time_limit, limit, cooldown, run_once
-- (then_skip too), delay, keep_running_until_failure, skip_unless_updated,
-- wait_value_update (against BehaviorTree.CPP's semantics) and decorator
-- names, tick by tick with dt, through the trace helper; the
-- timers' stories, where the dt of each tick is the point, are test kit
-- scenarios (bonsai.test: a list of dts, the leaf a stand-in,
-- helpers/story.lua tells the ticks).
local bt = require "bonsai"
local T = require "bonsai.test"
local trace = require "helpers.trace"
local story, leaf = require("helpers.story").story, require("helpers.story").leaf

local t
before_each(function() t = trace.new() end)

local agent_of = trace.agent_of
local tick_error, tree_error = trace.tick_error, trace.tree_error

describe("invert", function()
  it("turns success into failure and failure into success", function()
    local a = agent_of(bt.invert(t:action("A", "SF")))
    assert.equal("failure | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("passes running", function()
    local a = agent_of(bt.invert(t:action("A", "RS")))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A success", t:step(a, 1))
  end)

  it("has the alias bt.inverter", function()
    assert.equal(bt.invert, bt.inverter)
    local a = agent_of(bt.inverter { t:action("A", "F") })
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("force_success and force_failure", function()
  it("force_success turns a finished child into success", function()
    local a = agent_of(bt.force_success(t:action("A", "FRS")))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("force_failure turns a finished child into failure", function()
    local a = agent_of(bt.force_failure(t:action("A", "SRF")))
    assert.equal("failure | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("repeater", function()
  it("re-ticks a child that finishes at once within the same tick",
     function()
    local a = agent_of(bt.repeater { times = 3, t:action("A", "S") })
    assert.equal("success | enter A; tick A; exit A success; "
                 .. "enter A; tick A; exit A success; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
    assert.equal(3, t:count("A"))
  end)

  it("counts the successes of a running child", function()
    local a = agent_of(bt.repeater { times = 3, t:action("A", "RSRSRS") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("fails when its child fails", function()
    local a = agent_of(bt.repeater { times = 3, t:action("A", "SF") })
    assert.equal("failure | enter A; tick A; exit A success; "
                 .. "enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("counts again from zero in each run", function()
    local a = agent_of(bt.repeater { times = 2, t:action("A", "SFS") })
    assert.equal("failure | enter A; tick A; exit A success; "
                 .. "enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("forever runs a child that finishes at once once per tick", function()
    local a = agent_of(bt.repeater { t:action("A", "S") })
    for _ = 1, 3 do
      assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    end
    assert.same({ "repeater" }, a:running())
  end)

  it("with times = 0 repeats forever", function()
    local a = agent_of(bt.repeater { times = 0, t:action("A", "S") })
    for _ = 1, 3 do
      assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    end
  end)

  it("forever starts the next run at once when a running child ends",
     function()
    local a = agent_of(bt.repeater { t:action("A", "RSRSS") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    -- the run started in the last tick ends; the next one ends at once too
    assert.equal("running | tick A; exit A success; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("forever fails when its child fails", function()
    local a = agent_of(bt.repeater { t:action("A", "SRF") })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)

  it("aborts its running child when aborted", function()
    local a = agent_of(bt.repeater { times = 2, t:action("A", "SR") })
    assert.equal("running | enter A; tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("aborted", trace.statuses(a).repeater)
  end)
end)

describe("retry", function()
  it("tries again at once until the child succeeds", function()
    local a = agent_of(bt.retry { times = 3, t:action("A", "FFS") })
    assert.equal("success | enter A; tick A; exit A failure; "
                 .. "enter A; tick A; exit A failure; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("fails after n failed tries", function()
    local a = agent_of(bt.retry { times = 2, t:action("A", "F") })
    assert.equal("failure | enter A; tick A; exit A failure; "
                 .. "enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("succeeds when its child succeeds the first time", function()
    local a = agent_of(bt.retry { times = 2, t:action("A", "S") })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("counts the failures of a running child", function()
    local a = agent_of(bt.retry { times = 2, t:action("A", "RFRF") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A failure; enter A; tick A",
                 t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)

  it("forever runs a child that fails at once once per tick", function()
    local a = agent_of(bt.retry { t:action("A", "FFS") })
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)
end)

describe("repeat_until_failure", function()
  it("runs its child again and again, once per tick, until it fails",
     function()
    local a = agent_of(bt.repeat_until_failure(t:action("A", "SSF")))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("starts the next run at once when a running child succeeds", function()
    local a = agent_of(bt.repeat_until_failure(t:action("A", "RSRF")))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("timeout", function()
  -- A timeout of 2 s over a stand-in A that runs forever, ticked with dt.
  local function timed(dt)
    return T.scenario { tree = bt.timeout { seconds = 2, leaf "A" }, dt = dt,
                        stand_ins = { A = T.running() }, coverage = false }
  end

  it("aborts its child and fails when its time is up", function()
    local s = timed(1)
    s:run(4)
    assert.same({ "running | enter A; tick A", -- starts at time 1
                  "running | tick A",          -- 1 s passed
                  "failure | abort A",         -- 2 s passed
                  "running | enter A; tick A", -- a new run
                }, story(s))
    assert.equal("aborted", s:tick(3):status_of("A"))
    s:expect_aborted("A", { at = 3 }):expect_entered("A", { times = 2 })
  end)

  it("is checked at the start of each tick with the agent time", function()
    local s = timed { 0.5, 1.25, 0.75 }
    s:run(3)
    assert.same({ "running | enter A; tick A", -- starts at time 0.5
                  "running | tick A",          -- 1.25 s passed
                  "failure | abort A",         -- 2 s passed
                }, story(s))
    assert.equal(2.5, s:tick(3).time)
  end)

  it("passes the status of a child that finishes in time", function()
    local a = agent_of(bt.timeout { seconds = 2, t:action("A", "RSRF") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1)) -- timer restarts
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)

  it("of zero seconds fails without ticking its child", function()
    local a = agent_of(bt.timeout { seconds = 0, t:action("A", "S") })
    assert.equal("failure |", t:step(a, 1))
  end)
end)

describe("time_limit", function()
  it("aborts its child and succeeds when its time is up", function()
    local a = agent_of(bt.time_limit { seconds = 1.5, t:action("A", "R") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | abort A", t:step(a, 1))
  end)

  it("passes the status of a child that finishes in time", function()
    local a = agent_of(bt.time_limit { seconds = 5, t:action("A", "RF") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("limit", function()
  it("lets its child run n times, then fails without ticking it", function()
    local a = agent_of(bt.limit { times = 2, t:action("A", "SF") })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
  end)

  it("counts runs started, not ticks", function()
    local a = agent_of(bt.limit { times = 1, t:action("A", "RRS") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
  end)

  it("counts an aborted run", function()
    local a = agent_of(bt.limit { times = 1, t:action("A", "R") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("failure |", t:step(a, 1))
  end)

  it("counts for each agent apart", function()
    local tree = bt.tree(bt.limit { times = 1, t:action("A", "S") })
    local a, b = bt.agent(tree), bt.agent(tree)
    assert.equal("success", a:tick(1))
    assert.equal("failure", a:tick(1))
    assert.equal("success", b:tick(1))
  end)

  it("with times = 0 never runs its child", function()
    local a = agent_of(bt.limit { times = 0, t:action("A", "S") })
    assert.equal("failure |", t:step(a, 1))
  end)
end)

describe("cooldown", function()
  -- A cooldown of 2 s over a stand-in A, ticked with dt.
  local function cooled(a, dt)
    return T.scenario { tree = bt.cooldown { seconds = 2, leaf "A" },
                        dt = dt, stand_ins = { A = a }, coverage = false }
  end

  it("fails without ticking its child for s seconds after it finished",
     function()
    local s = cooled(true, { 1, 1, 1, 1.5, 0.5 })
    s:run(5)
    assert.same({ "success | enter A; tick A; exit A success", -- time 1
                  "failure |",                                 -- time 2
                  "success | enter A; tick A; exit A success", -- time 3
                  "failure |",                                 -- time 4.5
                  "success | enter A; tick A; exit A success", -- time 5
                }, story(s))
  end)

  it("starts when the child finishes, not when it starts", function()
    local s = cooled(T.runs { { "running", "running", "success" },
                              { "success" } }, 1)
    s:run(5)
    assert.same({ "running | enter A; tick A",                 -- time 1
                  "running | tick A",                          -- time 2
                  "success | tick A; exit A success",          -- time 3
                  "failure |",                                 -- time 4
                  "success | enter A; tick A; exit A success", -- time 5
                }, story(s))
  end)

  it("starts after a failure too", function()
    local a = agent_of(bt.cooldown { seconds = 1, t:action("A", "F") })
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 0.5))
    assert.equal("failure |", t:step(a, 0.5))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 0.5))
  end)

  it("does not start when its child is aborted", function()
    local a = agent_of(bt.cooldown { seconds = 10, t:action("A", "R") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("running | enter A; tick A", t:step(a, 1))
  end)
end)

describe("run_once", function()
  it("returns its child's final status afterwards without ticking it",
     function()
    local a = agent_of(bt.run_once(t:action("A", "RS")))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
  end)

  it("keeps a failure", function()
    local a = agent_of(bt.run_once(t:action("A", "FS")))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
  end)

  it("runs its child again when its run was aborted", function()
    local a = agent_of(bt.run_once(t:action("A", "RS")))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
  end)
end)

describe("decorator names", function()
  it("come from name = in the table form", function()
    local a = agent_of(bt.sequence {
      bt.invert { name = "not_done", t:action("A", "R") },
      bt.repeater { name = "thrice", times = 3, t:action("B", "S") },
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.same({ "sequence", "not_done", "A" }, a:running())
  end)

  it("come from bt.named", function()
    local n = bt.named("guarded", bt.timeout { seconds = 5, t:action("A", "R") })
    assert.equal("guarded", n.name)
    local a = agent_of(bt.sequence { bt.named("once", bt.run_once(n)) })
    a:tick(1)
    assert.same({ "sequence", "once", "guarded", "A" }, a:running())
  end)

  it("default to the type and the place", function()
    local a = agent_of(bt.sequence {
      t:action("X", "S"),
      bt.force_success(bt.cooldown { seconds = 1,
        bt.action(function() return bt.RUNNING end) }),
    })
    a:tick(1)
    assert.same({ "sequence", "force_success[2]", "cooldown[1]", "action[1]" },
                a:running())
  end)

  it("name the root by its type", function()
    local a = agent_of(bt.time_limit { seconds = 3, t:action("A", "R") })
    a:tick(1)
    assert.same({ "time_limit", "A" }, a:running())
  end)

  it("show in errors", function()
    local a = agent_of(bt.sequence {
      bt.invert { name = "inv", bt.action(function() error("oops", 0) end) },
    })
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'sequence/inv/action[1]': oops", msg)
  end)
end)

describe("delay", function()
  it("runs for its seconds without ticking its child, then returns the "
     .. "child's status", function()
    local a = agent_of(bt.delay { seconds = 2, t:action("A", "RSF") })
    assert.equal("running |", t:step(a, 1))     -- starts at time 1
    assert.same({ "delay" }, a:running())
    assert.equal("running |", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.same({ "delay", "A" }, a:running())
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))     -- a new run waits again
    assert.equal("running |", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("with seconds = 0 ticks its child at once", function()
    local a = agent_of(bt.delay { seconds = 0, t:action("A", "S") })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 0))
  end)

  it("aborts nothing below while it waits", function()
    local a = agent_of(bt.delay { seconds = 1, t:action("A", "R") })
    assert.equal("running |", t:step(a, 1))
    a:abort()
    assert.equal("", t:take())
    assert.equal("aborted", a:status())
    assert.equal("running |", t:step(a, 1))     -- waits again
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort A", t:take())
  end)

  it("is cut off by a higher child of a reactive selector", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FFS"),
      bt.delay { seconds = 1, t:action("A", "R") },
    })
    assert.equal("running | tick C", t:step(a, 1))
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("success | tick C; abort A", t:step(a, 1))
  end)

  it("needs seconds and a child", function()
    assert.matches("'delay' needs 'seconds'",
                   tree_error(bt.delay(t:action("A", "S"))))
    assert.matches("'delay' needs a child",
                   tree_error(bt.delay { seconds = 1 }))
    assert.matches("argument 'seconds' must be a number >= 0",
                   tree_error(bt.delay { seconds = -1, t:action("A", "S") }))
  end)

  it("shows its seconds in the dump, with the agent's statuses", function()
    local tree = bt.tree(bt.sequence { bt.delay { seconds = 1.5, name = "d",
                                                  t:action("A", "R") } },
                         { name = "T" })
    local a = bt.agent(tree)
    a:tick(1)
    assert.equal("sequence [running]\n  d (delay 1.5s) [running]\n"
                 .. "    A (action) [idle]\n", tree:dump(a))
  end)

  it("has a builder form with the seconds as a bare number", function()
    local tree = bt.builder():sequence():delay(1):action(
      t:leafdef("A", "S")):back():build { name = "T" }
    local a = bt.agent(tree)
    assert.equal("running |", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("keeps its start time across a reload (and takes the new seconds)",
     function()
    local tree = bt.tree(bt.delay { name = "d", seconds = 3,
                                    t:action("A", "R") }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running |", t:step(a, 1))     -- starts at time 1
    assert.is_true(tree:reload(bt.delay { name = "d", seconds = 2,
                                          t:action("A", "R") }))
    assert.equal("running |", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    -- a running child goes on even if the new seconds are longer
    assert.is_true(tree:reload(bt.delay { name = "d", seconds = 100,
                                          t:action("A", "R") }))
    assert.equal("running | tick A", t:step(a, 1))
  end)
end)

describe("keep_running_until_failure", function()
  it("is running after each success, its child's next run at the next "
     .. "tick, and fails with it", function()
    local a = agent_of(bt.keep_running_until_failure(t:action("A", "SRSF")))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.same({ "keep_running_until_failure" }, a:running())
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("keeps a selector on it until it fails; an abort reaches a running "
     .. "child only", function()
    local a = agent_of(bt.selector {
      bt.keep_running_until_failure(t:action("A", "SSF")),
      t:action("B", "R"),
    })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    a:abort()
    assert.equal("", t:take())
    assert.equal("running | enter A; tick A; exit A failure; enter B; "
                 .. "tick B", t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
  end)

  it("has a builder form, a BehaviorTree.CPP name and survives a reload",
     function()
    local built = bt.builder():keep_running_until_failure()
      :action(t:leafdef("A", "S")):build { name = "B" }
    assert.equal("running | enter A; tick A; exit A success",
                 t:step(bt.agent(built), 1))
    local tree = bt.tree(bt.keep_running_until_failure(t:action("A", "R")),
                         { name = "K" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_true(tree:reload(
      bt.keep_running_until_failure(t:action("A", "S"))))
    assert.equal("running | tick A; exit A success", t:step(a, 1))
    bt.register("Patrol", function() return bt.SUCCESS end)
    local named = bt.tree(bt.keep_running_until_failure(bt.action "Patrol"),
                          { name = "P" })
    local xml = named:export("btcpp")
    assert.truthy(xml:find("<KeepRunningUntilFailure>", 1, true))
    local back = bt.tree(bt.import(xml, "btcpp"), { name = "P2" })
    assert.equal("keep_running_until_failure", back:nodes()[1].type)
  end)
end)

describe("skip_unless_updated", function()
  it("is skipped until its key changes, then ticks its child, whose run "
     .. "goes on whatever the key does", function()
    local a = agent_of(bt.sequence {
      bt.skip_unless_updated { key = "goal", t:action("A", "RS") },
      t:action("B", "S"),
    })
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    a.bb.goal = "north"
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success; enter B; tick B; " ..
                 "exit B success", t:step(a, 1))
    a.bb.goal = "north" -- the same value: no change
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    a.bb.goal = "south"
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    local alone = agent_of(bt.skip_unless_updated { key = "goal",
                                                    t:action("A", "S") })
    assert.equal("skipped |", t:step(alone, 1)) -- at the root: the tick
  end)

  it("keeps what it saw across a reload and a save", function()
    local function root()
      return bt.skip_unless_updated { name = "s", key = "goal",
                                      t:action("A", "S") }
    end
    local tree = bt.tree(root(), { name = "S" })
    local a = bt.agent(tree, { blackboard = { goal = 1 } })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.is_true(tree:reload(root()))
    assert.equal("skipped |", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.equal("skipped |", t:step(b, 1))
    b.bb.goal = 2
    assert.equal("success | enter A; tick A; exit A success", t:step(b, 1))
    a.bb.goal = 3 -- not seen yet when saved
    b = bt.agent(tree, { restore = a:save() })
    assert.equal("success | enter A; tick A; exit A success", t:step(b, 1))
  end)

  it("saved while its child runs, the restored agent goes on with it",
     function()
    local tree = bt.tree(bt.skip_unless_updated { name = "s", key = "goal",
                                                  t:action("A", "R") },
                         { name = "SR" })
    local a = bt.agent(tree, { blackboard = { goal = 1 } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "s", "A" }, b:running())
    assert.equal("running | tick A", t:step(b, 1))
  end)

  it("has a builder form", function()
    local tree = bt.builder():sequence()
      :skip_unless_updated { key = "goal" }:action(t:leafdef("A", "S"))
      :wait_value_update { key = "goal" }:action(t:leafdef("B", "S"))
      :build { name = "SB" }
    local a = bt.agent(tree, { blackboard = { goal = 1 } })
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
  end)

  it("reads the caller's key inside a remapping subtree", function()
    local inner = bt.tree(bt.skip_unless_updated { key = "target",
                                                   t:action("A", "S") },
                          { name = "btcpp_kinds.inner" })
    local a = agent_of(bt.subtree(inner, { remap = { target = "enemy" } }))
    a.bb.target = "ignored"
    assert.equal("skipped |", t:step(a, 1))
    a.bb.enemy = "wolf"
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("needs its key, and shows it", function()
    assert.matches("'skip_unless_updated' needs 'key'",
                   tree_error(bt.skip_unless_updated(t:action("A", "S"))),
                   1, true)
    local tree = bt.tree(bt.skip_unless_updated { key = "goal",
                                                  t:action("A", "S") })
    assert.equal("skip_unless_updated goal", tree:dump():match("^[^\n]*"))
    assert.same({ key = "goal" }, tree:nodes()[1].params)
  end)
end)

describe("wait_value_update", function()
  it("is running without its child until its key changes, then ends with "
     .. "its child", function()
    local a = agent_of(bt.wait_value_update { key = "goal",
                                              t:action("A", "RS") })
    assert.equal("running |", t:step(a, 1))
    assert.same({ "wait_value_update" }, a:running())
    a.bb.goal = "north"
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("running |", t:step(a, 1)) -- the next run waits again
    a.bb.goal = "south"
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("goes on waiting across a reload and a save", function()
    local function root()
      return bt.sequence { bt.wait_value_update { name = "w", key = "goal",
                                                  t:action("A", "S") } }
    end
    local tree = bt.tree(root(), { name = "WV" })
    local a = bt.agent(tree, { blackboard = { goal = 1 } })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    assert.is_true(tree:reload(root()))
    assert.equal("running |", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "sequence", "w" }, b:running())
    assert.equal("running |", t:step(b, 1))
    b.bb.goal = 2
    assert.equal("success | enter A; tick A; exit A success", t:step(b, 1))
  end)
end)

describe("run_once with then_skip", function()
  it("with then_skip is skipped after its child's run", function()
    local a = agent_of(bt.sequence {
      bt.run_once { name = "once", then_skip = true, t:action("A", "RF") },
      t:action("B", "S"),
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    assert.equal("skipped", a:node_statuses()[1]) -- the run_once
  end)

  it("without it (bt.run_once(child) too) keeps returning the status",
     function()
    for _, n in ipairs { bt.run_once(t:action("A", "S")),
                         bt.run_once { then_skip = false,
                                       t:action("A", "S") } } do
      local a = agent_of(n)
      assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
      assert.equal("success |", t:step(a, 1))
    end
  end)

  it("remembers its run across a reload and a save, and shows then_skip",
     function()
    local function root()
      return bt.sequence { bt.run_once { name = "once", then_skip = true,
                                         t:action("A", "S") },
                           t:action("B", "S") }
    end
    local tree = bt.tree(root(), { name = "RO" })
    local a = bt.agent(tree)
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    assert.is_true(tree:reload(root()))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.equal("success | enter B; tick B; exit B success", t:step(b, 1))
    assert.equal("  once (run_once then_skip)", tree:dump():match("\n([^\n]*)"))
    assert.same({ then_skip = true }, tree:nodes()[2].params)
  end)
end)
