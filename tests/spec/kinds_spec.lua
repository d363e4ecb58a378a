-- kinds_spec: the node kinds of the second round (API.md "Subtrees and
-- more nodes", and bt.delay): delay, parallel with wait = true, the
-- utility selector and subtrees, tick by tick through the trace helper,
-- with their dumps, builder forms and hot reloads.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tick_error, tree_error =
  trace.agent_of, trace.tick_error, trace.tree_error

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
    assert.matches("'delay' needs a child", tree_error(bt.delay { seconds = 1 }))
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
