-- composites_spec: sequence, selector, the reactive nodes, parallel, filter
-- and monitor, tick by tick: statuses and the order of enter/tick/exit/abort
-- calls, including every way a composite cuts off a running child.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of = trace.agent_of

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
