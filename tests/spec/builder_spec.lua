-- builder_spec: the fluent builder (bt.builder()), which makes the same
-- nodes as the DSL: composites open until :back(), decorators that close
-- after their child, :name(), :node() and :build(opts).
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

-- The tree as text, for comparing the builder with the DSL.
local function shape(tree) return tree:dump() end

describe("bt.builder", function()
  it("builds the guard of API.md", function()
    t:set("See", "FFS")
    local function see_enemy()
      t:add("tick See")
      return t:next("See")
    end
    local tree = bt.builder()
      :reactive_selector()
        :sequence():condition(see_enemy):action(t:leafdef("Attack", "R")):back()
        :action(t:leafdef("Patrol", "R"))
      :build { name = "guard" }
    assert.equal("guard", tree.name)
    assert.equal(table.concat({
      "reactive_selector",
      "  sequence[1]",
      "    condition[1]",
      "    action[2]",
      "  action[2]",
      "",
    }, "\n"), tree:dump())
    local a = bt.agent(tree)
    assert.equal("running | tick See; enter Patrol; tick Patrol", t:step(a, 1))
    assert.equal("running | tick See; tick Patrol", t:step(a, 1))
    assert.equal("running | tick See; enter Attack; tick Attack; "
                 .. "abort Patrol", t:step(a, 1))
    assert.same({ "reactive_selector", "sequence[1]", "action[2]" },
                a:running())
  end)

  it("makes the same tree as the DSL", function()
    local f = function() return true end
    local built = bt.builder()
      :selector()
        :sequence():condition(f):action(f):back()
        :parallel { success = "one" }:action(f):wait(2):back()
        :action(f)
      :build()
    local dsl = bt.tree(bt.selector {
      bt.sequence { bt.condition(f), bt.action(f) },
      bt.parallel { success = "one", bt.action(f), bt.wait { seconds = 2 } },
      bt.action(f),
    })
    assert.equal(shape(dsl), shape(built))
  end)

  it("closes a decorator once its child is in place", function()
    local f = function() return true end
    local tree = bt.builder()
      :sequence()
        :invert():action(f)
        :action(f)
        :repeater(3):sequence():action(f):action(f):back()
        :force_success():force_failure():condition(f)
        :timeout(2):wait(5)
      :build()
    assert.equal(table.concat({
      "sequence",
      "  invert[1]",
      "    action[1]",
      "  action[2]",
      "  repeater[3] x3",
      "    sequence[1]",
      "      action[1]",
      "      action[2]",
      "  force_success[4]",
      "    force_failure[1]",
      "      condition[1]",
      "  timeout[5] 2s",
      "    wait[1] 5s",
      "",
    }, "\n"), tree:dump())
  end)

  it("takes a decorator as the root", function()
    local tree = bt.builder():retry(2):action(t:leafdef("A", "FS")):build()
    local a = bt.agent(tree)
    assert.equal("success | enter A; tick A; exit A failure; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("reads a bare number as the decorator's main parameter", function()
    local f = function() return true end
    local tree = bt.builder()
      :sequence()
        :repeater(2):action(f)
        :retry(3):action(f)
        :limit(4):action(f)
        :timeout(1.5):action(f)
        :time_limit(2.5):action(f)
        :cooldown(3):action(f)
      :build()
    assert.equal(table.concat({
      "sequence",
      "  repeater[1] x2",
      "    action[1]",
      "  retry[2] x3",
      "    action[1]",
      "  limit[3] x4",
      "    action[1]",
      "  timeout[4] 1.5s",
      "    action[1]",
      "  time_limit[5] 2.5s",
      "    action[1]",
      "  cooldown[6] 3s",
      "    action[1]",
      "",
    }, "\n"), tree:dump())
  end)

  it("takes option tables and names", function()
    local f = function() return true end
    local tree = bt.builder()
      :sequence "root"
        :repeater { times = 2, name = "twice" }:action(f)
        :parallel { success = 1, failure = "all" }:action(f):action(f):back()
      :build { name = "opts" }
    assert.equal(table.concat({
      "root (sequence)",
      "  twice (repeater x2)",
      "    action[1]",
      "  parallel[2] success>=1 failure>=2",
      "    action[1]",
      "    action[2]",
      "",
    }, "\n"), tree:dump())
  end)

  it("has the DSL's aliases", function()
    local f = function() return true end
    local tree = bt.builder()
      :fallback():active_selector():inverter():action(f)
      :build()
    assert.equal(table.concat({
      "selector",
      "  reactive_selector[1]",
      "    invert[1]",
      "      action[1]",
      "",
    }, "\n"), tree:dump())
  end)

  it(":end() is :back()", function()
    local f = function() return true end
    local b = bt.builder():sequence():selector():action(f)
    b["end"](b)
    assert.equal(table.concat({
      "sequence",
      "  selector[1]",
      "    action[1]",
      "  action[2]",
      "",
    }, "\n"), b:action(f):build():dump())
  end)

  it("names the node just opened, or the last one added", function()
    local f = function() return true end
    local tree = bt.builder()
      :sequence():name("root")
        :action(f):name("first")
        :selector():name("pick")
          :action(f)
        :back():name("last")   -- :back() opens nothing: names the action
        :action(f)
      :build()
    assert.equal(table.concat({
      "root (sequence)",
      "  first (action)",
      "  pick (selector)",
      "    last (action)",
      "  action[3]",
      "",
    }, "\n"), tree:dump())
  end)

  it("names the leaf added last under a decorator", function()
    local f = function() return true end
    local n = bt.builder():sequence():repeater(3):action(f):name("a"):node()
    assert.equal("repeater", n[1].type)
    assert.equal("a", n[1][1].name)
    assert.is_nil(n[1].name)
    -- nested decorators closed by one leaf: the leaf is still the last
    n = bt.builder():sequence():invert():retry(2):action(f):name("b"):node()
    assert.equal("b", n[1][1][1].name)
    assert.is_nil(n[1][1].name)
    assert.is_nil(n[1].name)
    -- a decorator is named when it is opened
    n = bt.builder():sequence():repeater(3):name("rep"):action(f):node()
    assert.equal("rep", n[1].name)
    assert.is_nil(n[1][1].name)
  end)

  it("adds any DSL node with :leaf() and :subtree()", function()
    local sub = bt.sequence { name = "sub", t:action("A", "S") }
    local tree = bt.builder()
      :sequence():leaf(t:action("B", "S")):subtree(sub)
      :build()
    local a = bt.agent(tree)
    assert.equal("success | enter B; tick B; exit B success; "
                 .. "enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("adds tasks, waits, checks and named leaves", function()
    bt.register("builder.hit", function(_, bb, args)
      bb.hits = (bb.hits or 0) + args.n
      return true
    end)
    local tree = bt.builder()
      :sequence()
        :action("builder.hit", { n = 2 })
        :task(function() coroutine.yield(); return true end)
        :wait(1)
      :build()
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal(2, a.bb.hits)
  end)

  it("builds filters and monitors with their conditions", function()
    local tree = bt.builder()
      :sequence()
        :filter { conditions = { t:condition("C", "S") } }
          :action(t:leafdef("A", "R"))
        :back()
      :build()
    local a = bt.agent(tree)
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    t:set("C", "F")
    assert.equal("failure | tick C; abort A", t:step(a, 1))
  end)

  it("closes a filter or a monitor after its one child", function()
    local f = function() return true end
    for _, kind in ipairs { "filter", "monitor" } do
      local b = bt.builder():sequence()
      b = b[kind](b, { conditions = { bt.condition(f) } })
      local n = b:action(f):action(f):node()
      assert.equal(2, #n, kind)
      assert.equal(kind, n[1].type)
      assert.equal(1, #n[1])
      assert.equal("action", n[1][1].type)
      assert.equal(1, #n[1].conditions)
      assert.equal("action", n[2].type)
    end
  end)

  it("runs a monitor built with its conditions", function()
    local tree = bt.builder()
      :sequence()
        :monitor { conditions = { t:condition("C", "SSF") } }
          :action(t:leafdef("A", "R"))
        :action(t:leafdef("B", "S"))
      :build()
    local a = bt.agent(tree)
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; tick A", t:step(a, 1))
    assert.equal("failure | tick C; abort A", t:step(a, 1))
  end)

  it("passes :build options to bt.tree", function()
    local tree = bt.builder()
      :sequence():action(t:leafdef("A", "R"))
      :build { name = "P", priority = {
        bt.filter { conditions = { t:condition("D", "S") },
                    t:action("Flee", "R") },
      } }
    assert.equal("P", tree.name)
    local a = bt.agent(tree)
    assert.equal("running | tick D; enter Flee; tick Flee", t:step(a, 1))
  end)

  it("returns the root node from :node() without compiling", function()
    local f = function() return true end
    local n = bt.builder():sequence():action(f):invert():action(f):node()
    assert.is_true(bt.isnode(n))
    assert.equal("sequence", n.type)
    assert.equal("action", n[1].type)
    assert.equal("invert", n[2].type)
    assert.equal("action", n[2][1].type)
    -- the node can be used in the DSL
    local a = bt.agent(bt.tree(bt.selector { n }))
    assert.equal("failure", a:tick(1))
  end)

  it("reports misuse", function()
    local f = function() return true end
    assert.error_matches(function() bt.builder():back() end,
                         ":back() with nothing open", 1, true)
    assert.error_matches(function() bt.builder():action(f):action(f) end,
                         "a tree has one root", 1, true)
    assert.error_matches(function() bt.builder():build() end,
                         "empty tree", 1, true)
    assert.error_matches(function() bt.builder():name("x") end,
                         ":name() before any node", 1, true)
    assert.error_matches(function()
      bt.builder():sequence():repeater():build { name = "b" }
    end, "tree 'b': sequence/repeater[1]: 'repeater' needs a child", 1, true)
  end)
end)
