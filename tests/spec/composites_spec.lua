-- composites_spec: sequence, selector, the reactive nodes, parallel (and
-- parallel with wait = true), filter and monitor, the utility selector,
-- if_then_else and while_do_else (against BehaviorTree.CPP's semantics),
-- tick by tick: statuses and the order of enter/tick/exit/abort calls,
-- including every way a composite cuts off a running child, with dumps,
-- builder forms, reloads and saves where a kind has its own.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of = trace.agent_of
local tick_error, tree_error = trace.tick_error, trace.tree_error

describe("sequence", function()
  it("ticks its children in order and succeeds when all succeed", function()
    local a = agent_of(bt.sequence { t:action("A", "S"), t:action("B", "S") })
    assert.equal("success | enter A; tick A; exit A success; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("fails at the first failing child, without ticking the rest",
     function()
    local a = agent_of(bt.sequence {
      t:action("A", "S"), t:action("B", "F"), t:action("C", "S"),
    })
    assert.equal("failure | enter A; tick A; exit A success; "
                 .. "enter B; tick B; exit B failure", t:step(a, 1))
    assert.equal(0, t:count("C"))
  end)

  it("resumes its running child without ticking the earlier ones",
     function()
    local a = agent_of(bt.sequence {
      t:action("A", "S"), t:action("B", "RRS"), t:action("C", "S"),
    })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("running | tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B success; "
                 .. "enter C; tick C; exit C success", t:step(a, 1))
  end)

  it("starts again from its first child after it finished", function()
    local a = agent_of(bt.sequence { t:action("A", "S"), t:action("B", "RF") })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("failure | tick B; exit B failure", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A success; "
                 .. "enter B; tick B; exit B failure", t:step(a, 1))
  end)

  it("resumes a running leaf deep in nested sequences", function()
    local a = agent_of(bt.sequence {
      t:action("A", "S"),
      bt.sequence { t:action("B", "S"), bt.sequence { t:action("C", "RRS") } },
      t:action("D", "S"),
    })
    assert.equal("running | enter A; tick A; exit A success; "
                 .. "enter B; tick B; exit B success; enter C; tick C",
                 t:step(a, 1))
    assert.equal("running | tick C", t:step(a, 1))
    assert.equal("success | tick C; exit C success; "
                 .. "enter D; tick D; exit D success", t:step(a, 1))
  end)

  it("is aborted deepest first by a:abort()", function()
    local a = agent_of(bt.sequence {
      t:action("A", "S"), bt.sequence { name = "inner", t:action("B", "R") },
    })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
    local st = trace.statuses(a)
    assert.equal("aborted", st.sequence)
    assert.equal("aborted", st.inner)
    assert.equal("aborted", st.B)
    assert.equal("success", st.A)
  end)
end)

describe("selector", function()
  it("succeeds at the first succeeding child", function()
    local a = agent_of(bt.selector {
      t:action("A", "F"), t:action("B", "S"), t:action("C", "S"),
    })
    assert.equal("success | enter A; tick A; exit A failure; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
    assert.equal(0, t:count("C"))
  end)

  it("fails when every child fails", function()
    local a = agent_of(bt.selector { t:action("A", "F"), t:action("B", "F") })
    assert.equal("failure | enter A; tick A; exit A failure; "
                 .. "enter B; tick B; exit B failure", t:step(a, 1))
  end)

  it("resumes its running child without ticking the earlier ones",
     function()
    local a = agent_of(bt.selector {
      t:action("A", "F"), t:action("B", "RRF"), t:action("C", "S"),
    })
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    assert.equal("running | tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B failure; "
                 .. "enter C; tick C; exit C success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A failure; "
                 .. "enter B; tick B; exit B failure; "
                 .. "enter C; tick C; exit C success", t:step(a, 1))
  end)

  it("has the alias bt.fallback", function()
    assert.equal(bt.selector, bt.fallback)
    local a = agent_of(bt.fallback { t:action("A", "F"), t:action("B", "R") })
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    assert.same({ "selector", "B" }, a:running())
  end)

  it("is aborted deepest first by a:abort()", function()
    local a = agent_of(bt.selector {
      t:action("A", "F"), bt.selector { name = "inner", t:action("B", "R") },
    })
    t:step(a, 1)
    a:abort()
    assert.equal("abort B", t:take())
    local st = trace.statuses(a)
    assert.equal("aborted", st.selector)
    assert.equal("aborted", st.inner)
    assert.equal("failure", st.A)
  end)
end)

describe("reactive_sequence", function()
  it("ticks again from its first child every tick", function()
    local a = agent_of(bt.reactive_sequence {
      t:condition("C", "S"), t:action("A", "RRS"),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; tick A", t:step(a, 1))
    assert.equal("success | tick C; tick A; exit A success", t:step(a, 1))
    assert.equal("success | tick C; enter A; tick A; exit A success",
                 t:step(a, 1))
  end)

  it("aborts its running child when an earlier child fails", function()
    local a = agent_of(bt.reactive_sequence {
      t:condition("C", "SF"), t:action("A", "R"),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick C; abort A", t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).A)
    assert.equal("failure", a:status())
  end)

  it("aborts its running child after an earlier child that now runs",
     function()
    local a = agent_of(bt.reactive_sequence {
      t:action("A", "SR"), t:action("B", "R"),
    })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("running | enter A; tick A; abort B", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.same({ "reactive_sequence", "A" }, a:running())
  end)

  it("aborts the running child of an inner sequence", function()
    local a = agent_of(bt.reactive_sequence {
      t:condition("C", "SSF"),
      bt.sequence { name = "work", t:action("A", "S"), t:action("B", "R") },
    })
    assert.equal("running | tick C; enter A; tick A; exit A success; "
                 .. "enter B; tick B", t:step(a, 1))
    assert.equal("running | tick C; tick B", t:step(a, 1))
    assert.equal("failure | tick C; abort B", t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).work)
  end)
end)

describe("reactive_selector", function()
  it("aborts a lower-priority running child after the higher one ran",
     function()
    local a = agent_of(bt.reactive_selector {
      bt.reactive_sequence { t:condition("C", "FFS"), t:action("Hi", "R") },
      t:action("Lo", "R"),
    })
    assert.equal("running | tick C; enter Lo; tick Lo", t:step(a, 1))
    assert.equal("running | tick C; tick Lo", t:step(a, 1))
    assert.equal("running | tick C; enter Hi; tick Hi; abort Lo",
                 t:step(a, 1))
    assert.same({ "reactive_selector", "reactive_sequence[1]", "Hi" },
                a:running())
    local st = trace.statuses(a)
    assert.equal("aborted", st.Lo)
    assert.equal("running", st.Hi)
  end)

  it("aborts a lower-priority running child when a higher one succeeds",
     function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FFS"), t:action("Lo", "R"),
    })
    assert.equal("running | tick C; enter Lo; tick Lo", t:step(a, 1))
    assert.equal("running | tick C; tick Lo", t:step(a, 1))
    assert.equal("success | tick C; abort Lo", t:step(a, 1))
  end)

  it("keeps a running child that is still reached", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "F"), t:action("A", "F"), t:action("B", "RRS"),
    })
    assert.equal("running | tick C; enter A; tick A; exit A failure; "
                 .. "enter B; tick B", t:step(a, 1))
    assert.equal("running | tick C; enter A; tick A; exit A failure; tick B",
                 t:step(a, 1))
    assert.equal("success | tick C; enter A; tick A; exit A failure; "
                 .. "tick B; exit B success", t:step(a, 1))
  end)

  it("fails when every child fails", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "F"), t:action("A", "F"),
    })
    assert.equal("failure | tick C; enter A; tick A; exit A failure",
                 t:step(a, 1))
  end)

  it("moves to the next child when its running child fails", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "F"), t:action("A", "RF"), t:action("B", "S"),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("success | tick C; tick A; exit A failure; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("has the alias bt.active_selector", function()
    assert.equal(bt.reactive_selector, bt.active_selector)
    local a = agent_of(bt.active_selector {
      t:condition("C", "FS"), t:action("Lo", "R"),
    })
    assert.equal("running | tick C; enter Lo; tick Lo", t:step(a, 1))
    assert.equal("success | tick C; abort Lo", t:step(a, 1))
    assert.same({}, a:running())
  end)
end)

describe("parallel", function()
  it("by default succeeds when all children succeed", function()
    local a = agent_of(bt.parallel { t:action("A", "RS"), t:action("B", "RRS") })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.equal("running | tick A; exit A success; tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)

  it("by default fails at the first failure, aborting running children",
     function()
    local a = agent_of(bt.parallel { t:action("A", "RF"), t:action("B", "R") })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure; abort B", t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).B)
  end)

  it("stops as soon as a policy is met, before ticking the rest",
     function()
    local a = agent_of(bt.parallel { t:action("A", "F"), t:action("B", "R") })
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal(0, t:count("B"))
  end)

  it("with success = 'one' succeeds at the first success", function()
    local a = agent_of(bt.parallel {
      success = "one", t:action("A", "R"), t:action("B", "RS"),
      t:action("C", "R"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B; "
                 .. "enter C; tick C", t:step(a, 1))
    assert.equal("success | tick A; tick B; exit B success; abort A; abort C",
                 t:step(a, 1))
  end)

  it("with success = 'one' and failure = 'all' fails when all fail",
     function()
    local a = agent_of(bt.parallel {
      success = "one", failure = "all",
      t:action("A", "F"), t:action("B", "RF"),
    })
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    assert.equal("failure | tick B; exit B failure", t:step(a, 1))
  end)

  it("takes counts", function()
    local a = agent_of(bt.parallel {
      success = 2, t:action("A", "RS"), t:action("B", "R"),
      t:action("C", "RS"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B; "
                 .. "enter C; tick C", t:step(a, 1))
    assert.equal("success | tick A; exit A success; tick B; "
                 .. "tick C; exit C success; abort B", t:step(a, 1))
  end)

  it("takes a failure count", function()
    local a = agent_of(bt.parallel {
      failure = 2, t:action("A", "F"), t:action("B", "RF"),
      t:action("C", "R"),
    })
    assert.equal("running | enter A; tick A; exit A failure; "
                 .. "enter B; tick B; enter C; tick C", t:step(a, 1))
    assert.equal("failure | tick B; exit B failure; abort C", t:step(a, 1))
  end)

  it("with both policies 'one' ends with the first child to finish",
     function()
    local a = agent_of(bt.parallel {
      success = "one", failure = "one", t:action("A", "RS"),
      t:action("B", "RRF"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.equal("success | tick A; exit A success; abort B", t:step(a, 1))
    t:set("A", "R")
    t:set("B", "RF")
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.equal("failure | tick A; tick B; exit B failure; abort A",
                 t:step(a, 1))
  end)

  it("fails when all children finished without meeting a policy",
     function()
    local a = agent_of(bt.parallel {
      success = "all", failure = "all", t:action("A", "S"),
      t:action("B", "RF"),
    })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("failure | tick B; exit B failure", t:step(a, 1))
  end)

  it("does not tick again children that finished between running ones",
     function()
    local a = agent_of(bt.parallel {
      t:action("A", "R"), t:action("B", "RS"), t:action("C", "R"),
      t:action("D", "S"), t:action("E", "RRS"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B; enter C; "
                 .. "tick C; enter D; tick D; exit D success; enter E; tick E",
                 t:step(a, 1))
    assert.equal("running | tick A; tick B; exit B success; tick C; tick E",
                 t:step(a, 1))
    assert.equal("running | tick A; tick C; tick E; exit E success",
                 t:step(a, 1))
    t:set("A", "S")
    assert.equal("running | tick A; exit A success; tick C", t:step(a, 1))
    t:set("C", "S")
    assert.equal("success | tick C; exit C success", t:step(a, 1))
  end)

  it("runs every child again in its next run", function()
    local a = agent_of(bt.parallel { t:action("A", "S"), t:action("B", "RS") })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("is aborted branch by branch, in child order, deepest first",
     function()
    local a = agent_of(bt.parallel {
      bt.sequence { name = "left", t:action("A", "S"), t:action("B", "R") },
      t:action("C", "R"),
      bt.selector { name = "right", t:action("D", "R") },
    })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B; "
                 .. "enter C; tick C; enter D; tick D", t:step(a, 1))
    assert.same({ "parallel", "left", "B", "C", "right", "D" }, a:running())
    a:abort()
    assert.equal("abort B; abort C; abort D", t:take())
    local st = trace.statuses(a)
    for _, k in ipairs { "parallel", "left", "B", "C", "right", "D" } do
      assert.equal("aborted", st[k], k)
    end
    assert.same({}, a:running())
  end)

  it("aborts whole running branches when a policy is met", function()
    local a = agent_of(bt.parallel {
      success = "one",
      bt.sequence { name = "left", t:action("A", "R") },
      t:action("B", "RS"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.equal("success | tick A; tick B; exit B success; abort A",
                 t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).left)
  end)
end)

describe("filter", function()
  it("ticks its conditions every tick before its child", function()
    local a = agent_of(bt.filter {
      conditions = { t:condition("C1", "S"), t:condition("C2", "S") },
      t:action("A", "RS"),
    })
    assert.equal("running | tick C1; tick C2; enter A; tick A", t:step(a, 1))
    assert.equal("success | tick C1; tick C2; tick A; exit A success",
                 t:step(a, 1))
  end)

  it("fails without ticking its child when a condition fails", function()
    local a = agent_of(bt.filter {
      conditions = { t:condition("C1", "F"), t:condition("C2", "S") },
      t:action("A", "S"),
    })
    assert.equal("failure | tick C1", t:step(a, 1))
    assert.equal(0, t:count("A"))
  end)

  it("aborts its running child and fails when a condition fails",
     function()
    local a = agent_of(bt.filter {
      conditions = { t:condition("C1", "S"), t:condition("C2", "SSF") },
      t:action("A", "R"),
    })
    assert.equal("running | tick C1; tick C2; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C1; tick C2; tick A", t:step(a, 1))
    assert.equal("failure | tick C1; tick C2; abort A", t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).A)
  end)

  it("passes its child's failure", function()
    local a = agent_of(bt.filter {
      conditions = { t:condition("C", "S") }, t:action("A", "F"),
    })
    assert.equal("failure | tick C; enter A; tick A; exit A failure",
                 t:step(a, 1))
  end)

  it("without conditions passes its child's status", function()
    local a = agent_of(bt.filter { t:action("A", "RS") })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("is ticked from above inside a sequence with memory", function()
    local a = agent_of(bt.sequence {
      t:action("X", "S"),
      bt.filter { conditions = { t:condition("C", "SF") }, t:action("A", "R") },
    })
    assert.equal("running | enter X; tick X; exit X success; "
                 .. "tick C; enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick C; abort A", t:step(a, 1))
  end)
end)

describe("monitor", function()
  it("re-ticks its conditions every tick while its child runs", function()
    local a = agent_of(bt.monitor {
      conditions = { t:condition("C", "S") }, t:action("A", "RRS"),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; tick A", t:step(a, 1))
    assert.equal("success | tick C; tick A; exit A success", t:step(a, 1))
  end)

  it("fails, aborting its child, when a condition fails", function()
    local a = agent_of(bt.monitor {
      conditions = { t:condition("C1", "S"), t:condition("C2", "SF") },
      t:action("A", "R"),
    })
    assert.equal("running | tick C1; tick C2; enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick C1; tick C2; abort A", t:step(a, 1))
  end)

  it("does not start its child when a condition fails", function()
    local a = agent_of(bt.monitor {
      conditions = { t:condition("C", "F") }, t:action("A", "S"),
    })
    assert.equal("failure | tick C", t:step(a, 1))
  end)

  it("passes its child's failure", function()
    local a = agent_of(bt.monitor {
      conditions = { t:condition("C", "S") }, t:action("A", "RF"),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick C; tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("composite names", function()
  it("name unnamed children by type and place, and repeat with #2",
     function()
    local a = agent_of(bt.parallel {
      bt.sequence { t:action("A", "R") },
      bt.action(function() return bt.RUNNING end),
      bt.action(function() return bt.RUNNING end),
      bt.selector { name = "pick", t:action("A", "R") },
      bt.selector { name = "pick", bt.wait { seconds = 5 } },
    })
    a:tick(1)
    assert.same({ "parallel", "sequence[1]", "A", "action[2]", "action[3]",
                  "pick", "A", "pick#2", "wait[1]" }, a:running())
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
    assert.matches("'sequence' has no option 'wait'",
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
    assert.matches("utility_selector/A: 'utility' must be a function %(got number%)",
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
    assert.equal("pick (utility_selector)\n  A (action) utility\n"
                 .. "  B (action) utility\n", tree:dump())
    local a = bt.agent(tree)
    assert.equal("pick (utility_selector) [idle]\n  A (action) utility [idle]\n"
                 .. "  B (action) utility [idle]\n", tree:dump(a))
    assert.equal("running | utility A; utility B; enter B; tick B",
                 t:step(a, 1))
    assert.equal("pick (utility_selector) [running]\n"
                 .. "  A (action) utility=1 [idle]\n"
                 .. "  B (action) utility=2 [running]\n", tree:dump(a))
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

describe("if_then_else", function()
  it("ticks its condition once (it may run), then the branch it chose",
     function()
    local a = agent_of(bt.if_then_else {
      t:action("C", "RSF"), t:action("T", "RS"), t:action("E", "F"),
    })
    assert.equal("running | enter C; tick C", t:step(a, 1))
    assert.equal("running | tick C; exit C success; enter T; tick T",
                 t:step(a, 1))
    assert.same({ "if_then_else", "T" }, a:running())
    assert.equal("success | tick T; exit T success", t:step(a, 1))
    assert.equal("failure | enter C; tick C; exit C failure; enter E; " ..
                 "tick E; exit E failure", t:step(a, 1))
  end)

  it("without an else fails when its condition fails", function()
    local a = agent_of(bt.if_then_else {
      t:condition("C", "FS"), t:action("T", "S"),
    })
    assert.equal("failure | tick C", t:step(a, 1))
    assert.equal("success | tick C; enter T; tick T; exit T success",
                 t:step(a, 1))
  end)

  it("under a reactive parent goes on with its running branch, and aborts "
     .. "it when cut off", function()
    local a = agent_of(bt.reactive_sequence {
      t:condition("P", "SSF"),
      bt.if_then_else { t:condition("C", "S"), t:action("T", "R") },
    })
    assert.equal("running | tick P; tick C; enter T; tick T", t:step(a, 1))
    assert.equal("running | tick P; tick T", t:step(a, 1))
    assert.equal("failure | tick P; abort T", t:step(a, 1))
  end)

  it("keeps its running branch across a reload and a save", function()
    local function root(extra)
      return bt.if_then_else { name = "ite", t:condition("C", "S"),
                               t:action("T", "R"), extra }
    end
    local tree = bt.tree(root(), { name = "ITE" })
    local a = bt.agent(tree)
    assert.equal("running | tick C; enter T; tick T", t:step(a, 1))
    assert.is_true(tree:reload(root(t:action("E", "S"))))
    assert.equal("running | tick T", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "ite", "T" }, b:running())
    assert.equal("running | tick T", t:step(b, 1))
  end)

  it("refuses one child or four, naming the node", function()
    local one = bt.if_then_else { name = "pick", t:action("A", "S") }
    assert.matches("sequence/pick: 'if_then_else' takes 2 to 3 children, "
                   .. "not 1", tree_error(bt.sequence { one }), 1, true)
    assert.matches("'if_then_else' takes 2 to 3 children, not 4",
                   tree_error(bt.if_then_else {
                     t:action("A", "S"), t:action("B", "S"),
                     t:action("C", "S"), t:action("D", "S") }), 1, true)
  end)

  it("has a builder form and a dump line per child", function()
    local tree = bt.builder():if_then_else("pick")
      :condition(function() return true end):action(t:leafdef("A", "S"))
      :back():build { name = "B" }
    assert.equal("pick (if_then_else)\n  condition[1]\n  action[2]\n",
                 tree:dump())
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(tree), 1))
  end)
end)

describe("while_do_else", function()
  it("ticks its condition at every tick and switches branches, aborting "
     .. "the one left", function()
    local a = agent_of(bt.while_do_else {
      t:condition("C", "SFS"), t:action("D", "R"), t:action("E", "R"),
    })
    assert.equal("running | tick C; enter D; tick D", t:step(a, 1))
    assert.equal("running | tick C; abort D; enter E; tick E", t:step(a, 1))
    assert.equal("running | tick C; abort E; enter D; tick D", t:step(a, 1))
    t:set("D", "S")
    assert.equal("success | tick C; tick D; exit D success", t:step(a, 1))
  end)

  it("without an else aborts its branch and fails when the condition "
     .. "fails", function()
    local a = agent_of(bt.while_do_else {
      t:condition("C", "SF"), t:action("D", "R"),
    })
    assert.equal("running | tick C; enter D; tick D", t:step(a, 1))
    assert.equal("failure | tick C; abort D", t:step(a, 1))
  end)

  it("keeps its running branch across a reload and a save", function()
    local function root(extra)
      return bt.while_do_else { name = "w", t:condition("C", "S"),
                                t:action("D", "R"), extra }
    end
    local tree = bt.tree(root(), { name = "W" })
    local a = bt.agent(tree)
    assert.equal("running | tick C; enter D; tick D", t:step(a, 1))
    assert.is_true(tree:reload(root(t:action("E", "S"))))
    assert.equal("running | tick C; tick D", t:step(a, 1))
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "w", "D" }, b:running())
    t:set("C", "F")
    assert.equal("success | tick C; abort D; enter E; tick E; " ..
                 "exit E success", t:step(b, 1))
  end)

  it("refuses one child, naming the node", function()
    assert.matches("sequence/w: 'while_do_else' takes 2 to 3 children, "
                   .. "not 1", tree_error(bt.sequence {
                     bt.while_do_else { name = "w", t:action("A", "S") } }),
                   1, true)
  end)
end)

describe("random_selector", function()
  -- The order in which a run tried the children of a random selector of
  -- n failing children (their letters), and its status.
  local function run_order(a, log)
    for k in pairs(log) do log[k] = nil end
    local s = a:tick(1)
    return table.concat(log), s
  end
  local function failing(n, log)
    local kids = {}
    for k = 1, n do
      local name = string.char(64 + k)
      kids[k] = bt.action(function() log[#log + 1] = name return "failure" end)
    end
    return kids
  end
  local function seeded(kids)
    kids.key = "seed"
    return bt.random_selector(kids)
  end
  local function permutation(order, n)
    if #order ~= n then return false end
    for k = 1, n do
      if not order:find(string.char(64 + k), 1, true) then return false end
    end
    return true
  end

  it("tries every child once, in a shuffled order, and fails when all fail",
     function()
    local log, orders = {}, {}
    local tree = bt.tree(seeded(failing(5, log)))
    for seed = 1, 30 do
      local a = bt.agent(tree)
      a.bb.seed = seed
      local order, s = run_order(a, log)
      assert.equal("failure", s)
      assert.is_true(permutation(order, 5), order)
      orders[order] = true
    end
    local distinct = 0
    for _ in pairs(orders) do distinct = distinct + 1 end
    assert.is_true(distinct >= 5, "only " .. distinct .. " orders")
  end)

  it("draws the same orders for the same seed and ticks (replayable)",
     function()
    local log = {}
    local tree = bt.tree(seeded(failing(4, log)))
    local a, b = bt.agent(tree), bt.agent(tree)
    a.bb.seed, b.bb.seed = 77, 77
    local seen = {}
    for _ = 1, 10 do
      local oa = run_order(a, log)
      local ob = run_order(b, log)
      assert.equal(oa, ob)
      seen[oa] = true
    end
    assert.is_truthy(next(seen, next(seen)), "every run drew one order")
  end)

  it("resumes its running child, succeeds at the first success", function()
    local calls = {}
    local function leaf(name, script)
      local k = 0
      return bt.action(function()
        k = k + 1
        calls[#calls + 1] = name
        local c = script:sub(k, k)
        return c == "R" and "running" or c == "S" and "success" or "failure"
      end)
    end
    local a = agent_of(bt.random_selector { key = "seed",
      leaf("A", "RRS"), leaf("B", "RRS"), leaf("C", "RRS") })
    a.bb.seed = 5
    assert.equal("running", a:tick(1))
    local first = calls[1]
    assert.equal(1, #calls)
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.same({ first, first, first }, calls)
  end)

  it("passes the whole order when its seed is not a number", function()
    local log = {}
    local a = agent_of(seeded(failing(3, log)))
    a.bb.seed = "text"
    local order, s = run_order(a, log)
    assert.equal("failure", s)
    assert.is_true(permutation(order, 3), order)
  end)

  it("needs its key", function()
    assert.has_error(function()
      bt.tree(bt.random_selector { bt.action(function() end) })
    end)
  end)
end)
