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

describe("utility_selector", function()
  -- a utility function reading u[name], logging its call
  local u
  before_each(function() u = {} end)
  local function util(name)
    return function(agent, bb)
      assert.is_table(agent)
      assert.is_not_nil(bb)
      t:add("utility " .. name)
      return u[name]
    end
  end

  it("tries its children highest utility first (ties: child order; none: "
     .. "0), asking for every utility first", function()
    u.A, u.B, u.C = 1, 3, 1
    local a = agent_of(bt.utility_selector {
      bt.utility(util "A", t:action("A", "F")),
      bt.utility(util "B", t:action("B", "F")),
      bt.utility(util "C", t:action("C", "F")),
      t:action("D", "S"),
    })
    assert.equal("success | utility A; utility B; utility C; enter B; tick B; "
                 .. "exit B failure; enter A; tick A; exit A failure; "
                 .. "enter C; tick C; exit C failure; enter D; tick D; "
                 .. "exit D success", t:step(a, 1))
    u.A, u.B, u.C = -1, -0.5, 0.5
    assert.equal("success | utility A; utility B; utility C; enter C; tick C; "
                 .. "exit C failure; enter D; tick D; exit D success",
                 t:step(a, 1))
  end)

  it("aborts a running child when a child of higher utility runs or "
     .. "succeeds, after ticking it", function()
    u.A, u.B, u.C = 1, 2, 0
    local root = bt.utility_selector {
      bt.utility(util "A", t:action("A", "R")),
      bt.sequence { name = "S", utility = util "B", t:action("B", "R") },
      bt.utility(util "C", t:action("C", "FFS")),
    }
    local a = agent_of(root)
    assert.equal("running | utility A; utility B; utility C; enter B; tick B",
                 t:step(a, 1))
    assert.same({ "utility_selector", "S", "B" }, a:running())
    u.A = 5
    assert.equal("running | utility A; utility B; utility C; enter A; tick A; "
                 .. "abort B", t:step(a, 1))
    u.A = 1
    assert.equal("running | utility A; utility B; utility C; enter B; tick B; "
                 .. "abort A", t:step(a, 1))
    u.C = 9 -- higher, but fails: B goes on
    assert.equal("running | utility A; utility B; utility C; enter C; tick C; "
                 .. "exit C failure; tick B", t:step(a, 1))
    assert.equal("running | utility A; utility B; utility C; enter C; tick C; "
                 .. "exit C failure; tick B", t:step(a, 1))
    assert.equal("success | utility A; utility B; utility C; enter C; tick C; "
                 .. "exit C success; abort B", t:step(a, 1))
  end)

  it("reports a utility that raises or returns a non-number, naming the "
     .. "child, after aborting the running nodes deepest first", function()
    u.A, u.B = 0, 1
    local a = agent_of(bt.utility_selector {
      bt.utility(util "A", t:action("A", "R")),
      bt.sequence { name = "S", utility = util "B",
                    bt.parallel { t:action("B", "R"), t:action("C", "R") } },
    })
    assert.equal("running | utility A; utility B; enter B; tick B; enter C; "
                 .. "tick C", t:step(a, 1))
    u.A = "high"
    assert.equal("tree 'T' node 'utility_selector/A': utility returned "
                 .. "string (a number expected)", tick_error(a))
    assert.equal("utility A; abort B; abort C", t:take())
    assert.equal("aborted", a:status())
    assert.same({}, a:running())
    u.A = 0
    assert.equal("running | utility A; utility B; enter B; tick B; enter C; "
                 .. "tick C", t:step(a, 1))
    u.B = nil
    assert.equal("tree 'T' node 'utility_selector/S': utility returned nil "
                 .. "(a number expected)", tick_error(a))
    assert.equal("utility A; utility B; abort B; abort C", t:take())
    u.B = 0 / 0
    assert.equal("tree 'T' node 'utility_selector/S': utility is NaN",
                 tick_error(a))
    t:take()
    local b = agent_of(bt.utility_selector {
      bt.utility(function() error("no idea", 0) end, t:action("A", "S")),
    })
    assert.equal("tree 'T' node 'utility_selector/A': no idea", tick_error(b))
  end)

  it("refuses utilities elsewhere and non-functions", function()
    assert.matches("sequence/A: a utility applies only to a child of a "
                   .. "'utility_selector'",
                   tree_error(bt.sequence { bt.utility(util "A",
                                                       t:action("A", "S")) }))
    assert.matches("child 1: 'utility' must be a function %(got number%)",
                   tree_error(bt.utility_selector {
                     bt.utility(3, t:action("A", "S")) }))
    assert.matches("'utility_selector' needs children",
                   tree_error(bt.utility_selector {}))
  end)

  it("works from the builder, in dumps and across reloads", function()
    u.A, u.B = 1, 2
    local tree = bt.builder():utility_selector { name = "pick" }
      :action(t:leafdef("A", "R")):name("A"):utility(util "A")
      :action(t:leafdef("B", "R")):name("B"):utility(util "B")
      :build { name = "T" }
    assert.equal("pick (utility_selector)\n  A (action)\n  B (action)\n",
                 tree:dump())
    local a = bt.agent(tree)
    assert.equal("running | utility A; utility B; enter B; tick B",
                 t:step(a, 1))
    -- reloaded with a child inserted before: B keeps running, and is
    -- aborted when the new child runs with a higher utility
    u.N = 0
    assert.is_true(tree:reload(bt.utility_selector { name = "pick",
      bt.utility(util "N", t:action("N", "R")),
      bt.utility(util "A", t:action("A", "R")),
      bt.utility(util "B", t:action("B", "R")) }))
    assert.equal("running | utility N; utility A; utility B; tick B",
                 t:step(a, 1))
    u.N = 3
    assert.equal("running | utility N; utility A; utility B; enter N; tick N; "
                 .. "abort B", t:step(a, 1))
  end)
end)
