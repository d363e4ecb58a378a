-- conditions_spec: pre- and post-conditions on any node (skip_if,
-- success_if, failure_if, run_while; on_success, on_failure, on_halted,
-- post) with BehaviorTree.CPP 4's semantics, and the SKIPPED status in
-- every composite and decorator (API.md "Scripts, expressions, pre- and
-- post-conditions"; docs/SCRIPTS.md, docs/NODES.md), tick by tick, in Lua
-- trees and in imported BehaviorTree.CPP files.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

-- Trace action `name` (script) with fields (conditions) added.
local function act(name, script, fields)
  local n = t:action(name, script)
  for k, v in pairs(fields or {}) do n[k] = v end
  return n
end

local function agent(root, bb)
  return trace.agent_of(root, { blackboard = bb or {} })
end

-- The status of the node named name in a's tree, as its dump shows it.
local function status(a, name)
  return ("\n" .. a.tree:dump(a)):match("\n%s*" .. name .. " [^\n]-%[(%a+)%]")
end

describe("pre-conditions on a leaf", function()
  it("skip_if: the leaf does not run, its sequence goes on", function()
    local a = agent(bt.sequence { act("A", "S", { skip_if = "x == 1" }),
                                  act("B", "S") }, { x = 1 })
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
    assert.equal("skipped", status(a, "A"))
    a.bb.x = 2
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a))
  end)

  it("success_if and failure_if decide without running it; post runs",
     function()
    local a = agent(bt.selector {
      act("A", "S", { failure_if = "n > 1", on_failure = "f := n",
                      post = "p := 'A'" }),
      act("B", "F", { success_if = "n == 2", on_success = "s := n",
                      post = "p := p .. 'B'" }),
    }, { n = 2 })
    assert.equal("success |", t:step(a))
    assert.equal(2, a.bb.f)
    assert.equal(2, a.bb.s)
    assert.equal("AB", a.bb.p)
  end)

  it("are checked in BT.CPP's order: failure_if, success_if, skip_if, " ..
     "run_while", function()
    local a = agent(bt.sequence {
      act("A", "S", { skip_if = "true", success_if = "true",
                      failure_if = "true" }),
    })
    assert.equal("failure |", t:step(a))
    a = agent(bt.sequence { act("A", "S", { skip_if = "true",
                                            success_if = "true" }) })
    assert.equal("success |", t:step(a))
    a = agent(bt.sequence { act("A", "S", { skip_if = "true",
                                            run_while = "false" }) })
    assert.equal("skipped |", t:step(a))
  end)

  it("only when the node starts, not while it runs", function()
    local a = agent(bt.sequence {
      act("A", "RS", { skip_if = "stop", success_if = "stop",
                       failure_if = "stop" }),
    }, { stop = false })
    assert.equal("running | enter A; tick A", t:step(a))
    a.bb.stop = true
    assert.equal("success | tick A; exit A success", t:step(a))
    assert.equal("failure |", t:step(a)) -- failure_if, checked first
  end)

  it("a root that is skipped makes a:tick return skipped", function()
    local a = agent(act("A", "S", { skip_if = "true" }))
    assert.equal(bt.SKIPPED, a:tick(1))
    assert.equal("skipped", a:status())
    local tree = bt.tree(act("B", "S", { skip_if = "true" }), { priority = {
      bt.filter { conditions = { bt.check("alarm", "==", true) },
                  act("C", "S") } } })
    a = bt.agent(tree)
    assert.equal("skipped |", t:step(a)) -- under a priority section too
  end)
end)

describe("run_while", function()
  it("false at the start skips the node", function()
    local a = agent(bt.sequence { act("A", "S", { run_while = "ok" }),
                                  act("B", "S") }, { ok = false })
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
  end)

  it("false while a subtree runs aborts it (on_halted runs, deepest " ..
     "first), the node is skipped and its parent goes on", function()
    local a = agent(bt.sequence {
      bt.sequence { name = "S", run_while = "ok", on_halted = "h := h .. 'S'",
                    act("A", "S"),
                    act("B", "R", { on_halted = "h := h .. 'B'" }) },
      act("C", "S"),
    }, { ok = true, h = "" })
    assert.equal("running | enter A; tick A; exit A success; enter B; " ..
                 "tick B", t:step(a))
    assert.equal("running | tick B", t:step(a))
    a.bb.ok = false
    assert.equal("success | abort B; enter C; tick C; exit C success",
                 t:step(a))
    assert.equal("BS", a.bb.h)
    assert.equal("skipped", status(a, "S"))
    assert.equal("aborted", status(a, "B"))
  end)

  it("on a running root: the tick returns skipped (BT.CPP's " ..
     "WhileCallsOnHalt)", function()
    local a = agent(act("K", "R", { run_while = "A == 1",
                                    on_halted = "B = 69" }), { A = 1, B = 0 })
    assert.equal("running", a:tick(1))
    assert.equal(0, a.bb.B)
    a.bb.A = 0
    assert.equal("skipped", a:tick(1))
    assert.equal(69, a.bb.B)
  end)

  it("under a parallel, each tick", function()
    local a = agent(bt.parallel { success = "one",
      act("A", "R", { run_while = "go" }), act("B", "RRS") }, { go = true })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a))
    a.bb.go = false
    assert.equal("running | abort A; tick B", t:step(a))
    assert.equal("success | tick B; exit B success", t:step(a))
  end)
end)

describe("on_halted", function()
  it("runs when a node is aborted from outside", function()
    local a = agent(bt.reactive_sequence { bt.check("go", "==", true),
      act("A", "R", { on_halted = "halted := true", post = "post := true" }) },
      { go = true })
    assert.equal("running", a:tick(1))
    a.bb.go = false
    assert.equal("failure", a:tick(1))
    assert.is_true(a.bb.halted)
    assert.is_nil(a.bb.post) -- post: only after success or failure
  end)
end)

describe("on_halted, in BT.CPP's order (haltNode: halt, then _onHalted)",
         function()
  -- A running leaf whose abort callback logs the trail h of on_halted
  -- scripts run so far.
  local function held(name, fields)
    local n = bt.action { name = name, tick = function() return bt.RUNNING end,
      abort = function(_, bb) t:add("abort " .. name .. " h=" .. bb.h) end }
    for k, v in pairs(fields or {}) do n[k] = v end
    return n
  end

  it("runs after the node's abort, its children's (each after its own) "
     .. "before its own", function()
    local a = agent(bt.control { name = "C", on_halted = "h := h .. 'C'",
      abort = function(_, _, bb) t:add("abort C h=" .. bb.h) end,
      tick = function(c) c:tick(1) return c:tick(2) end,
      held("A", { on_halted = "h := h .. 'A'" }),
      bt.sequence { name = "S", on_halted = "h := h .. 'S'",
                    held("B", { on_halted = "h := h .. 'B'" }) } }, { h = "" })
    a:tick(1)
    a:abort()
    assert.equal("abort C h=; abort A h=; abort B h=A", t:take())
    assert.equal("ABSC", a.bb.h)
  end)

  it("runs on every cut-off: a:abort, an interrupt, a timeout, a guard, a "
     .. "priority branch, a reload that drops the node", function()
    local function cut(root, how, opts)
      local tree = bt.tree(root, opts)
      local a = bt.agent(tree, { blackboard = { h = "", go = true } })
      a:tick(1)
      how(a, tree)
      t:take()
      return a.bb.h
    end
    local function leaf() return held("A", { on_halted = "h := 'A'" }) end
    assert.equal("A", cut(leaf(), function(a) a:abort() end))
    assert.equal("A", cut(leaf(), function(a)
      a:add_interrupt(function() return true end)
      a:tick(1)
    end))
    assert.equal("A", cut(bt.timeout { seconds = 0.5, leaf() },
                          function(a) a:tick(1) end))
    assert.equal("A", cut(bt.guard { bt.check("go", "==", true),
      abort = "self", leaf() }, function(a)
      a.bb.go = false
      a:tick(1)
    end))
    assert.equal("A", cut(leaf(), function(a)
      a.bb.go = false
      a:tick(1)
    end, { priority = { bt.filter { conditions = {
      bt.check("go", "==", false) }, act("P", "R") } } }))
    assert.equal("A", cut(bt.sequence { name = "S", leaf() }, function(a, tr)
      assert(tr:reload(bt.sequence { name = "S", act("B", "R") }))
      a:tick(1)
    end))
  end)

  it("does not run for a node that had finished when its parent is cut off",
     function()
    local a = agent(bt.sequence { act("A", "S", { on_halted = "h := 'A'" }),
                                  act("B", "R") }, { h = "" })
    a:tick(1)
    a:abort()
    assert.equal("", a.bb.h)
  end)
end)

describe("pre-conditions at each new run", function()
  it("are asked again when a repeater or a retry starts the child again in "
     .. "the same tick", function()
    local a = agent(bt.sequence {
      bt.repeater { times = 3, act("A", "S", { skip_if = "n >= 2",
                                               on_success = "n += 1" }) },
      act("B", "S") }, { n = 0 })
    -- A twice, then skipped: the repeater is skipped, the sequence goes on
    assert.equal("success | enter A; tick A; exit A success; enter A; "
                 .. "tick A; exit A success; enter B; tick B; exit B success",
                 t:step(a))
    a = agent(bt.retry { times = 5, act("A", "F", { success_if = "n >= 2",
                                                    on_failure = "n += 1" }) },
              { n = 0 })
    assert.equal("success | enter A; tick A; exit A failure; enter A; "
                 .. "tick A; exit A failure", t:step(a))
  end)

  it("success_if on a composite: its children do not run, its "
     .. "post-conditions do", function()
    local a = agent(bt.sequence { success_if = "true", on_success = "s := 1",
                                  post = "p := 1", act("A", "S") })
    assert.equal("success |", t:step(a))
    assert.equal(1, a.bb.s)
    assert.equal(1, a.bb.p)
  end)
end)

describe("post-conditions on composites and decorators", function()
  it("run when the node ends, child's first", function()
    local a = agent(bt.sequence { on_success = "log := log .. 'seq '",
      bt.invert { on_failure = "log := log .. 'inv '", post = "n += 1",
                  act("A", "S", { on_success = "log := log .. 'A '" }) },
    }, { log = "", n = 0 })
    assert.equal("failure", a:tick(1))
    assert.equal("A inv ", a.bb.log)
    assert.equal(1, a.bb.n)
  end)

  it("a failing script is a tick error naming the node", function()
    local a = agent(bt.sequence { act("A", "S", { on_success = "x = 1" }) })
    assert.matches("A", trace.tick_error(a))
  end)

  it("a script that does not parse is a definition error", function()
    assert.matches("'skip_if': at character 6 of \"a := \": syntax error",
      trace.tree_error(bt.sequence { skip_if = "a := ", act("A", "S") }))
    assert.matches("'post' must be a script",
      trace.tree_error(bt.sequence { post = 3, act("A", "S") }))
  end)
end)

describe("SKIPPED in composites", function()
  local function skipped(name) return act(name, "S", { skip_if = "true" }) end

  for _, kind in ipairs { "sequence", "selector", "reactive_sequence",
                          "reactive_selector", "parallel",
                          "utility_selector" } do
    it(kind .. ": all children skipped is skipped", function()
      local a = agent(bt[kind] { skipped("A"), skipped("B") })
      assert.equal("skipped |", t:step(a))
    end)
  end

  it("sequence and selector pass a skipped child over", function()
    local a = agent(bt.sequence { skipped("A"), act("B", "S") })
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
    a = agent(bt.selector { skipped("A"), act("B", "F") })
    assert.equal("failure | enter B; tick B; exit B failure", t:step(a))
    a = agent(bt.selector { act("B", "F"), skipped("A") })
    assert.equal("failure | enter B; tick B; exit B failure", t:step(a))
  end)

  it("a skipped last child ends the sequence with success", function()
    local a = agent(bt.sequence { act("A", "RS"), skipped("B") })
    assert.equal("running | enter A; tick A", t:step(a))
    assert.equal("success | tick A; exit A success", t:step(a))
  end)

  it("parallel: a skipped child counts for neither policy and is " ..
     "checked again; success 'all' counts it", function()
    local a = agent(bt.parallel { act("A", "RS"),
                                  act("B", "S", { skip_if = "skip" }) },
                    { skip = true })
    assert.equal("running | enter A; tick A", t:step(a))
    assert.equal("success | tick A; exit A success", t:step(a))
    a = agent(bt.parallel { success = 2, act("A", "S"),
                            act("B", "S", { skip_if = "skip" }) },
              { skip = true })
    assert.equal("running | enter A; tick A; exit A success", t:step(a))
    a.bb.skip = false
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
  end)
end)

describe("SKIPPED in a bt.control", function()
  it("c:tick returns it for a skipped child; conditions on the node",
     function()
    local seen
    local a = agent(bt.control { name = "C", skip_if = "off",
      on_success = "done := true",
      tick = function(c)
        seen = c:tick(1)
        return c:tick(2)
      end,
      act("A", "S", { skip_if = "true" }), act("B", "S") }, { off = false })
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
    assert.equal("skipped", seen)
    assert.is_true(a.bb.done)
    a.bb.off = true
    assert.equal("skipped |", t:step(a))
  end)
end)

describe("SKIPPED from a bt.control's tick", function()
  it("skips the node: a pass-through passes its child's skip on, a "
     .. "composite all of whose children were skipped is skipped", function()
    local a = agent(bt.sequence {
      bt.control { name = "D", tick = function(c) return c:tick(1) end,
                   act("A", "RS", { run_while = "go" }) },
      act("B", "S") }, { go = true })
    assert.equal("running | enter A; tick A", t:step(a))
    a.bb.go = false
    assert.equal("success | abort A; enter B; tick B; exit B success",
                 t:step(a))
    assert.equal("skipped", status(a, "D"))
    local all = agent(bt.control { name = "C",
      tick = function(c)
        local skipped = 0
        for i = 1, c.n do
          local s = c:tick(i)
          if s == bt.SKIPPED then skipped = skipped + 1
          elseif s ~= bt.SUCCESS then return s end
        end
        return skipped == c.n and bt.SKIPPED or bt.SUCCESS
      end,
      act("A", "S", { skip_if = "true" }), act("B", "S", { skip_if = "k" }) },
      { k = true })
    assert.equal("skipped |", t:step(all))
    all.bb.k = false
    assert.equal("success | enter B; tick B; exit B success", t:step(all))
  end)

  it("is an error in a tree without conditions, where no node is skipped",
     function()
    local a = agent(bt.control { name = "C",
                                 tick = function() return bt.SKIPPED end })
    assert.matches("tree 'T' node 'C': tick returned skipped in a tree "
                   .. "without conditions", trace.tick_error(a))
  end)
end)

describe("SKIPPED in decorators", function()
  local function skipped() return act("A", "S", { skip_if = "true" }) end

  for _, kind in ipairs { "invert", "force_success", "force_failure",
                          "repeat_until_failure", "subtree_free",
                          "run_once", "cooldown", "limit", "timeout",
                          "time_limit" } do
    if kind ~= "subtree_free" then
      it(kind .. " passes it", function()
        local n = bt[kind] { skipped() }
        if kind == "cooldown" or kind == "timeout" or kind == "time_limit" then
          n.seconds = 5
        elseif kind == "limit" then
          n.times = 3
        end
        local a = agent(n)
        assert.equal("skipped", a:tick(1))
        assert.equal("skipped", a:tick(1)) -- run_once, cooldown: not kept
      end)
    end
  end

  it("repeater and retry pass it and start over", function()
    local a = agent(bt.repeater { times = 3, skipped() })
    assert.equal("skipped", a:tick(1))
    a = agent(bt.retry { times = 3, skipped() })
    assert.equal("skipped", a:tick(1))
  end)

  it("keep_running_until_failure runs on", function()
    local a = agent(bt.keep_running_until_failure { skipped() })
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
  end)
end)

describe("SKIPPED in traces, saves and dumps", function()
  it("is an event, restores, and shows in dumps", function()
    local tree = bt.tree(bt.sequence { act("A", "S", { skip_if = "true" }),
                                       act("B", "R") }, { name = "T" })
    local a = bt.agent(tree)
    a:trace(16)
    a:tick(1)
    local seen = false
    for _, e in ipairs(a:events()) do
      if e.status == "skipped" then seen = true end
    end
    assert.is_true(seen)
    assert.equal("skipped", status(a, "A"))
    assert.matches("A %(action%) skip_if \"true\" %[skipped%]", tree:dump(a))
    local b = bt.agent(tree, { restore = a:save() })
    assert.equal("running", status(b, "B")) -- (finished ones restore idle)
    local root = bt.tree(act("C", "S", { skip_if = "true" }))
    local c = bt.agent(root)
    assert.equal("skipped", c:tick(1))
    assert.equal("skipped", bt.agent(root, { restore = c:save() }):status())
  end)
end)

describe("a pre-condition that compares a key", function()
  it("is a check in C: no Lua call, so the tree can be shared", function()
    local function tree(cond)
      return bt.tree(bt.sequence { bt.check("a", "==", 1),
        bt.action { leaf = "Step", skip_if = cond } })
    end
    bt.register("Step", function(_, bb) bb.ran = true return true end)
    local shared = tree("x == 'one'")
    assert.is_string(shared:share())
    local a = bt.agent(shared, { blackboard = { a = 1, x = "one" } })
    assert.equal("success", a:tick(1))
    assert.is_nil(a.bb.ran) -- skipped
    a.bb.x = "two"
    a:tick(1)
    assert.is_true(a.bb.ran)
    assert.is_string(tree("hp >= max_hp"):share())
    assert.matches("cannot share", select(2, pcall(function()
      return tree("x + 1 == 2"):share() end)))
  end)

  it("decides as the script does, errors included", function()
    local a = agent(bt.sequence { act("A", "S", { skip_if = "hp < 10" }),
                                  act("B", "S", { failure_if = "'x' == k" }) },
                    { hp = 5, k = "y" })
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
    a.bb.k = "x"
    a.bb.hp = 10
    assert.equal("failure | enter A; tick A; exit A success", t:step(a))
    a.bb.hp = "ten"
    assert.matches("A.*'hp' is a string, compared with a number",
                   trace.tick_error(a))
  end)
end)

describe("reload", function()
  it("a run_while added to a running node is checked from the next tick",
     function()
    local function root(cond)
      return bt.sequence { name = "S", run_while = cond,
        bt.sequence { name = "T", act("A", "R") } }
    end
    local tree = bt.tree(root(nil), { name = "T" })
    local a = bt.agent(tree, { blackboard = { ok = true } })
    assert.equal("running | enter A; tick A", t:step(a))
    assert(tree:reload(root("ok")))
    assert.equal("running | tick A", t:step(a))
    a.bb.ok = false
    assert.equal("skipped | abort A", t:step(a))
  end)
end)

describe("BehaviorTree.CPP files", function()
  local function doc(body)
    return '<root BTCPP_format="4"><BehaviorTree ID="T">' .. body ..
           "</BehaviorTree></root>"
  end

  it("read _skipIf, _onSuccess... on any element (BT.CPP's Issue533)",
     function()
    t:register { TestA = "S", TestB = "S", TestC = "S" }
    local root = bt.import(doc([[<Sequence>
      <TestA _skipIf="A!=1"/>
      <TestB _skipIf="A!=2" _onSuccess="A=1"/>
      <TestC _skipIf="A!=3" _onSuccess="A=2"/></Sequence>]]), "btcpp")
    local a = agent(root, { A = 3 })
    a:tick(1)
    assert.same({ 0, 0, 1 }, { t:count("TestA"), t:count("TestB"),
                               t:count("TestC") })
    a:tick(1)
    assert.same({ 0, 1, 1 }, { t:count("TestA"), t:count("TestB"),
                               t:count("TestC") })
    a:tick(1)
    assert.same({ 1, 1, 1 }, { t:count("TestA"), t:count("TestB"),
                               t:count("TestC") })
  end)

  it("SkippedSequence, and the exporter writes them back", function()
    t:register { A = "S" }
    local text = doc('<Sequence><A _skipIf="skip"/></Sequence>')
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "T" })
    local a = bt.agent(tree, { blackboard = { skip = true } })
    assert.equal("skipped", a:tick(1))
    a.bb.skip = false
    assert.equal("success", a:tick(1))
    local out = tree:export("btcpp")
    assert.matches('_skipIf="skip"', out)
    local b = bt.agent(bt.tree(bt.import(out, "btcpp")),
                       { blackboard = { skip = true } })
    assert.equal("skipped", b:tick(1))
  end)

  it("on a SubTree are its own, apart from its root's (BT.CPP's SubTree "
     .. "is a node), and written back", function()
    t:register { A = "R", B = "S" }
    local text = [[<root BTCPP_format="4" main_tree_to_execute="M">
  <BehaviorTree ID="M"><Sequence>
    <SubTree ID="S" go="{alive}" out="{res}" _onHalted="halted := true"
             _skipIf="skip"/>
    <B/></Sequence></BehaviorTree>
  <BehaviorTree ID="S">
    <Sequence _while="go" _onHalted="out := 'cut'"><A/></Sequence>
  </BehaviorTree></root>]]
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "M" })
    local a = bt.agent(tree, { blackboard = { alive = true, skip = false } })
    assert.equal("running | enter A; tick A", t:step(a))
    a.bb.alive = false
    -- the root's _while halts it (its _onHalted writes out, the caller's
    -- res) and skips it: the SubTree passes the skip on, not halted itself
    assert.equal("success | abort A; enter B; tick B; exit B success",
                 t:step(a))
    assert.equal("cut", a.bb.res)
    assert.is_nil(a.bb.halted)
    a.bb.skip = true
    assert.equal("success | enter B; tick B; exit B success", t:step(a))
    local out = tree:export("btcpp")
    assert.matches('<SubTree ID="S" go="{alive}" out="{res}" '
                   .. '_onHalted="halted := true" _skipIf="skip"/>', out)
    assert.matches('<Sequence _while="go" _onHalted="out := \'cut\'">', out)
    -- a root without conditions of its own takes the SubTree's: no level
    local plain = bt.tree(bt.import([[<root BTCPP_format="4"
      main_tree_to_execute="M"><BehaviorTree ID="M"><Sequence>
      <SubTree ID="S" _skipIf="skip"/><B/></Sequence></BehaviorTree>
      <BehaviorTree ID="S"><Sequence><A/></Sequence></BehaviorTree></root>]],
      "btcpp"), { name = "P" })
    local b = bt.agent(plain, { blackboard = { skip = false } })
    b:tick(1)
    assert.same({ "sequence", "S", "A" }, b:running())
    assert.matches('<SubTree ID="S" _skipIf="skip"/>', plain:export("btcpp"))
  end)

  it("on a node of the game's own add to the conditions its builder gave",
     function()
    t:register { A = "S" }
    bt.define("Counted", function(_, children)
      return bt.sequence { on_success = "own := 1", children[1] }
    end)
    local a = agent(bt.import(doc('<Counted _onSuccess="file := 1"><A/>'
                                  .. '</Counted>'), "btcpp"))
    assert.equal("success", a:tick(1))
    assert.equal(1, a.bb.own)
    assert.equal(1, a.bb.file)
    assert.matches('<Counted _onSuccess="file := 1">', a.tree:export("btcpp"))
    bt._defined.Counted = nil
  end)

  it("SequenceWithMemory, AsyncSequence and AsyncFallback pass a skipped "
     .. "child over, and are skipped when all were", function()
    t:register { A = "S", B = "S" }
    for _, id in ipairs { "SequenceWithMemory", "AsyncSequence",
                          "AsyncFallback" } do
      local a = agent(bt.import(doc("<" .. id .. '><A _skipIf="true"/><B/></'
                                    .. id .. ">"), "btcpp"))
      assert.equal("success | enter B; tick B; exit B success", t:step(a), id)
      a = agent(bt.import(doc("<" .. id .. '><A _skipIf="true"/>'
                              .. '<B _skipIf="true"/></' .. id .. ">"),
                          "btcpp"))
      assert.equal("skipped |", t:step(a), id)
    end
  end)

  it("refuse a condition that does not parse, with its place", function()
    t:register { A = "S" }
    local ok, msg = pcall(bt.import, doc('<A _while="x :="/>'), "btcpp",
                          { file = "t.xml" })
    assert.is_false(ok)
    assert.matches("t.xml:1:45: node 'A': '_while': at character", msg)
  end)
end)
