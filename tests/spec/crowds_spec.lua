-- crowds_spec.lua: many agents: sleeping agents (bt.sleep, a:wake,
-- a:sleeping, and what wakes them) and tick budgets (bt.tick_all with
-- { budget = n }), tick by tick.
local bt = require "bonsai"
local trace = require "helpers.trace"

-- An agent whose leaf "nap" sleeps s seconds each time it is ticked,
-- logging its ticks; returns the agent and the log.
local function napper(s, opts)
  local log = {}
  local T = bt.tree(bt.sequence { name = "root",
    bt.action { name = "nap", tick = function(a)
      log[#log + 1] = a.time
      return bt.sleep(s)
    end, abort = function() log[#log + 1] = "abort" end } },
    { name = "t" })
  return bt.agent(T, opts), log
end

describe("bt.sleep", function()
  it("makes bt.tick_all skip the agent for that much of its time, while " ..
     "its clock goes on", function()
    local a, log = napper(2)
    assert.is_nil(bt.tick_all({ a }, 1))
    assert.same({ 1 }, log)
    assert.equal(2, a:sleeping())
    assert.equal("running", a:status())
    bt.tick_all({ a }, 1) -- time 2: asleep until 3
    assert.same({ 1 }, log)
    assert.equal(2, a.time)
    assert.equal(1, a:sleeping())
    bt.tick_all({ a }, 1) -- time 3: ticked, sleeps again until 5
    assert.same({ 1, 3 }, log)
    assert.equal(2, a:sleeping())
  end)

  it("is ended by a:tick, which ticks the tree", function()
    local a, log = napper(10)
    a:tick(1)
    assert.equal(10, a:sleeping())
    a:tick(1)
    assert.same({ 1, 2 }, log)
    assert.equal(10, a:sleeping())
  end)

  it("is ended by a:wake, a:abort, a:reset and an error", function()
    local a, log = napper(10)
    a:tick(1)
    a:wake()
    assert.is_nil(a:sleeping())
    bt.tick_all({ a }, 1)
    assert.same({ 1, 2 }, log)
    a:abort()
    assert.is_nil(a:sleeping())
    a:tick(1)
    a:reset()
    assert.is_nil(a:sleeping())
    local b = bt.agent(bt.tree(bt.action(function()
      bt.sleep(5)
      error("after sleeping", 0)
    end), { name = "e" }))
    assert.equal("tree 'e' node 'action': after sleeping", trace.tick_error(b))
    assert.is_nil(b:sleeping())
  end)

  it("is ended when a key one of its guards watches changes", function()
    local log = {}
    local T = bt.tree(bt.selector { name = "root",
      bt.guard { name = "g", bt.check("alarm", "==", true), abort = "lower",
        bt.action { name = "fight", tick = function()
          log[#log + 1] = "fight"; return bt.RUNNING end } },
      bt.action { name = "idle", tick = function()
        log[#log + 1] = "idle"; return bt.sleep(100) end } },
      { name = "t" })
    local a = bt.agent(T, { blackboard = { alarm = false } })
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    a.bb.other = 1 -- not watched: it sleeps on
    bt.tick_all({ a }, 1)
    assert.same({ "idle" }, log)
    a.bb.alarm = true
    bt.tick_all({ a }, 1)
    assert.same({ "idle", "fight" }, log)
    assert.is_nil(a:sleeping())
  end)

  it("still asks the agent's interrupts; one that fires wakes and " ..
     "aborts it", function()
    local a, log = napper(100)
    local asked = 0
    a:add_interrupt(function(ag)
      asked = asked + 1
      return ag.time >= 4
    end)
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    assert.same({ 1 }, log)
    assert.equal(3, asked)
    assert.equal("running", a:status())
    local errs = bt.tick_all({ a }, 1)
    assert.is_nil(errs)
    assert.same({ 1, "abort" }, log)
    assert.equal("aborted", a:status())
    assert.is_nil(a:sleeping())
  end)

  it("works from a task's yield", function()
    local log = {}
    local a = bt.agent(bt.tree(bt.task(function(ag)
      for _ = 1, 2 do
        log[#log + 1] = ag.time
        coroutine.yield(bt.sleep(3))
      end
      return true
    end), { name = "t" }))
    for _ = 1, 6 do bt.tick_all({ a }, 1) end
    assert.same({ 1, 4 }, log)
    assert.equal("running", a:status())
    bt.tick_all({ a }, 1)
    assert.same({ 1, 4 }, log)
    assert.equal("success", a:status())
  end)

  it("needs a ticking agent and a number >= 0", function()
    assert.has_error(function() bt.sleep(1) end, "bt.sleep: no agent is ticking")
    assert.has_error(function() bt.sleep(-1) end)
    assert.has_error(function() bt.sleep(0 / 0) end)
  end)

  it("lets a reloaded tree's agent switch when it wakes", function()
    local a, log = napper(2)
    bt.tick_all({ a }, 1)
    assert(a.tree:reload(bt.sequence { name = "root",
      bt.action { name = "other", tick = function()
        log[#log + 1] = "other"; return bt.RUNNING end } }))
    bt.tick_all({ a }, 1) -- asleep: not switched yet
    assert.same({ 1 }, log)
    bt.tick_all({ a }, 1)
    assert.same({ 1, "abort", "other" }, log)
  end)
end)

describe("bt.tick_all with a budget", function()
  local function counters(n)
    local T = bt.tree(bt.action(function(a)
      a.owner.ticks[#a.owner.ticks + 1] = a.time
      return bt.RUNNING
    end), { name = "t" })
    local list = {}
    for i = 1, n do
      list[i] = bt.agent(T, { owner = { id = i, ticks = {} } })
    end
    return list
  end

  it("ticks at most n agents a call, taking up where the last call " ..
     "stopped, each with the dt it missed", function()
    local list = counters(5)
    bt.tick_all(list, 1, { budget = 2 }) -- 1, 2 (list clock 1)
    bt.tick_all(list, 1, { budget = 2 }) -- 3, 4 (clock 2)
    bt.tick_all(list, 1, { budget = 2 }) -- 5, 1 (clock 3)
    local t = {}
    for i, a in ipairs(list) do t[i] = a.time end
    assert.same({ 3, 1, 2, 2, 3 }, t)
    assert.same({ 1, 3 }, list[1].owner.ticks)
    assert.same({ 3 }, list[5].owner.ticks)
  end)

  it("counts only awake agents", function()
    local list = counters(3)
    local sleeper = bt.agent(bt.tree(bt.action(function(a)
      a.owner.n = a.owner.n + 1
      return bt.sleep(100)
    end), { name = "s" }), { owner = { n = 0 } })
    table.insert(list, 1, sleeper)
    bt.tick_all(list, 1, { budget = 1 }) -- the sleeper, asleep after
    bt.tick_all(list, 1, { budget = 1 }) -- list[2]
    bt.tick_all(list, 1, { budget = 1 }) -- list[3]
    bt.tick_all(list, 1, { budget = 1 }) -- list[4]
    bt.tick_all(list, 1, { budget = 1 }) -- the sleeper skipped, list[2]
    assert.equal(1, sleeper.owner.n)
    assert.equal(5, sleeper.time)
    assert.same({ 2, 5 }, list[2].owner.ticks)
  end)

  it("reports errors and refuses a bad budget", function()
    local T = bt.tree(bt.action(function() error("x", 0) end), { name = "e" })
    local list = { bt.agent(T), 42, bt.agent(T) }
    local errs = bt.tick_all(list, 1, { budget = 10 })
    assert.equal(3, #errs)
    assert.equal("element 2 is not an agent", errs[2].error)
    assert.has_error(function() bt.tick_all(list, 1, { budget = -1 }) end)
    assert.has_error(function() bt.tick_all(list, 1, { budget = 1.5 }) end)
  end)
end)
