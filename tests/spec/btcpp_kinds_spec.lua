-- btcpp_kinds_spec: BehaviorTree.CPP 4's nodes that are Bonsai kinds of
-- their own (if_then_else, while_do_else, skip_unless_updated,
-- wait_value_update, run_once with then_skip), tick by tick through the
-- trace helper against BT.CPP's semantics (src/controls/*_node.cpp,
-- src/decorators/updated_decorator.cpp, run_once_node.h), with their
-- dumps, builder forms, reloads and saves of a running agent inside them,
-- and the refusal of a wrong number of children.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tree_error = trace.agent_of, trace.tree_error

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

describe("run_once", function()
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
