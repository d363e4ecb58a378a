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

describe("parallel with wait = true", function()
  it("aborts no child when a policy is met and finishes when all have "
     .. "finished", function()
    local a = agent_of(bt.parallel { wait = true,
      t:action("A", "RS"), t:action("B", "F"), t:action("C", "RRS") })
    assert.equal("running | enter A; tick A; enter B; tick B; "
                 .. "exit B failure; enter C; tick C", t:step(a, 1))
    assert.same({ "parallel", "A", "C" }, a:running())
    assert.equal("running | tick A; exit A success; tick C", t:step(a, 1))
    assert.equal("failure | tick C; exit C success", t:step(a, 1))
  end)

  it("checks the success policy first once all have finished", function()
    local a = agent_of(bt.parallel { wait = true, success = "one",
                                     failure = "one",
      t:action("A", "F"), t:action("B", "RS") })
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)

  it("fails when all have finished and neither policy is met", function()
    local a = agent_of(bt.parallel { wait = true, success = 2,
                                     failure = "all",
      t:action("A", "F"), t:action("B", "S"), t:action("C", "F") })
    assert.equal("failure | enter A; tick A; exit A failure; enter B; "
                 .. "tick B; exit B success; enter C; tick C; exit C failure",
                 t:step(a, 1))
  end)

  it("aborts its running children when cut off from above", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.parallel { wait = true, t:action("A", "R"), t:action("B", "F"),
                    t:action("D", "R") },
    })
    assert.equal("running | tick C; enter A; tick A; enter B; tick B; "
                 .. "exit B failure; enter D; tick D", t:step(a, 1))
    assert.equal("success | tick C; abort A; abort D", t:step(a, 1))
  end)

  it("wants a boolean", function()
    assert.matches("argument 'wait' must be a boolean",
                   tree_error(bt.parallel { wait = 1, t:action("A", "S") }))
    assert.matches("'sequence' takes no argument 'wait'",
                   tree_error(bt.sequence { wait = true, t:action("A", "S") }))
  end)

  it("shows wait in the dump and works from the builder", function()
    local tree = bt.builder():parallel { wait = true, success = "one" }
      :action(t:leafdef("A", "S")):action(t:leafdef("B", "RF"))
      :build { name = "T" }
    assert.equal("parallel success>=1 failure>=1 wait\n"
                 .. "  action[1]\n  action[2]\n", tree:dump())
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B failure", t:step(a, 1))
  end)

  it("keeps its finished children's results across a reload", function()
    local function root(bscript, extra)
      return bt.parallel { name = "p", wait = true, success = "all",
        t:action("A", "S"), t:action("B", bscript), extra }
    end
    local tree = bt.tree(root("R"), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.is_true(tree:reload(root("RS", t:action("C", "S"))))
    -- A is not ticked again; the new C starts
    assert.equal("running | tick B; enter C; tick C; exit C success",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)
end)
