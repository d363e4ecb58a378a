-- guard_spec: bt.guard{ check, abort = mode, child } and the conditions it
-- takes, bt.check and bt.is_set. A guard reached while not running checks
-- its condition in C (false: it fails without starting the child; true: it
-- ticks the child); a running child is continued without a new check.
-- Observer aborts are driven by blackboard changes of the watched keys and
-- take effect at the start of the agent's next tick: "self" aborts the
-- guard's own running child when the condition is false, "lower" aborts a
-- running later sibling under a selector when the condition turns from
-- false to true, "both" does both, "none" nothing. Checked tick by tick
-- through the trace helper; the stories of keys that change over several
-- ticks are test kit scenarios (bonsai.test: the changes as a timeline,
-- the leaves as stand-ins, helpers/story.lua tells the ticks).
local bt = require "bonsai"
local luaver = require "helpers.luaver"
-- integers beyond a double's precision: from Lua 5.3 (pending before)
local it53 = math.type and it or pending
local maxint = math.maxinteger or 2 ^ 53
local mathtype = luaver.mathtype
local T = require "bonsai.test"
local trace = require "helpers.trace"
local story, leaf = require("helpers.story").story, require("helpers.story").leaf

local t
before_each(function() t = trace.new() end)

local function agent_of(root, bb)
  return trace.agent_of(root, { blackboard = bb or {} })
end

local tick_error = trace.tick_error

-- The message of bt.tree(root), which must raise.
local function tree_error(root)
  return trace.tree_error(root, { name = "x" })
end

-- The status of one tick of a tree made of bt.check(key, op, value) alone,
-- on a blackboard holding bb.
local function check_status(bb, key, op, value)
  return agent_of(bt.check(key, op, value), bb):tick(1)
end

-- The classic guard: combat while "enemy" is set, else patrol, under a
-- composite of kind 'parent'.
local function combat_tree(parent, mode, combat, patrol)
  return bt[parent] {
    bt.guard { name = "g", bt.is_set "enemy", abort = mode,
               t:action("combat", combat or "R") },
    t:action("patrol", patrol or "R"),
  }
end

describe("a guard reached while not running", function()
  it("fails without starting its child when the check is false",
     function()
    local a = agent_of(bt.sequence {
      bt.guard { bt.check("hp", ">", 10), t:action("A", "S") },
      t:action("B", "S"),
    }, { hp = 5 })
    assert.equal("failure |", t:step(a, 1))
    assert.equal(0, t:count("A"))
    local st = trace.statuses(a)
    assert.equal("failure", st["guard[1]"])
    assert.equal("failure", st["check[1]"])
    assert.equal("idle", st.A)
  end)

  it("ticks its child when the check is true and returns its status",
     function()
    local a = agent_of(bt.guard { bt.check("hp", ">", 10),
                                  t:action("A", "RSF") }, { hp = 50 })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.same({ "guard", "A" }, a:running())
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("checks again at the start of each new run of its child", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "enemy", t:action("combat", "S") },
      t:action("patrol", "S"),
    })
    assert.equal("success | enter patrol; tick patrol; exit patrol success",
                 t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("success | enter combat; tick combat; exit combat success",
                 t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("success | enter patrol; tick patrol; exit patrol success",
                 t:step(a, 1))
  end)

  it("continues a running child without checking again", function()
    local a = agent_of(bt.reactive_selector {
      bt.guard { bt.is_set "enemy", abort = "none",
                 t:action("combat", "RRS") },
      t:action("patrol", "R"),
    }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
    assert.equal("success | tick combat; exit combat success", t:step(a, 1))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
  end)

  it("is drawn by tree:dump with its check and child", function()
    local tree = bt.tree(bt.selector {
      bt.guard { name = "g", bt.check("hp", "<", 20), abort = "both",
                 t:action("flee", "R") },
      bt.guard { bt.is_set "enemy", t:action("fight", "R") },
    })
    local lines = {}
    for line in tree:dump():gmatch "[^\n]+" do
      lines[#lines + 1] = line:match "^%s*(%S+)"
    end
    assert.same({ "selector", "g", "check[1]", "flee", "guard[2]",
                  "is_set[1]", "fight" }, lines)
  end)
end)

describe("abort = 'none'", function()
  it("under a selector lets the lower branch run on when the key turns "
     .. "the check true", function()
    local a = agent_of(combat_tree("selector", "none", "R", "RRS"))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | tick patrol", t:step(a, 1))
    assert.equal("success | tick patrol; exit patrol success", t:step(a, 1))
    -- the next run of the selector reaches the guard first
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
  end)

  it("under a selector keeps its child running when the key turns the "
     .. "check false", function()
    local a = agent_of(combat_tree("selector", "none", "RRS"),
                       { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
    assert.equal("success | tick combat; exit combat success", t:step(a, 1))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
  end)

  it("under a sequence keeps its child running", function()
    local a = agent_of(bt.sequence {
      t:action("prep", "S"),
      bt.guard { bt.is_set "enemy", abort = "none", t:action("combat", "R") },
      t:action("loot", "S"),
    }, { enemy = "orc" })
    assert.equal("running | enter prep; tick prep; exit prep success; "
                 .. "enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("under a reactive selector: the lower branch is aborted only "
     .. "after the guard's child ran, as for any reactive child", function()
    local a = agent_of(combat_tree("reactive_selector", "none"))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | enter combat; tick combat; abort patrol",
                 t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("is the default mode", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "enemy", t:action("combat", "R") },
      t:action("patrol", "R"),
    }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
  end)
end)

describe("abort = 'self'", function()
  it("under a selector aborts its running child when the check turns "
     .. "false, and the selector goes on in that tick", function()
    local a = agent_of(combat_tree("selector", "self"), { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    assert.equal("running | tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("", t:take()) -- nothing happens before the next tick
    assert.equal("running | abort combat; enter patrol; tick patrol",
                 t:step(a, 1))
    assert.same({ "selector", "patrol" }, a:running())
    local st = trace.statuses(a)
    assert.equal("failure", st.g)
    assert.equal("aborted", st.combat)
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("under a sequence makes the sequence fail", function()
    local a = agent_of(bt.sequence {
      t:action("prep", "S"),
      bt.guard { bt.is_set "enemy", abort = "self", t:action("combat", "R") },
      t:action("loot", "S"),
    }, { enemy = "orc" })
    assert.equal("running | enter prep; tick prep; exit prep success; "
                 .. "enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("failure | abort combat", t:step(a, 1))
    assert.equal(0, t:count("loot"))
    assert.same({}, a:running())
    assert.equal("failure | enter prep; tick prep; exit prep success",
                 t:step(a, 1))
  end)

  it("under a reactive selector aborts its child before the others run",
     function()
    local a = agent_of(combat_tree("reactive_selector", "self"),
                       { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | abort combat; enter patrol; tick patrol",
                 t:step(a, 1))
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("does nothing while the condition stays true", function()
    local s = T.scenario {
      tree = bt.selector {
        bt.guard { bt.check("hp", ">", 20), abort = "self", leaf "fight" },
        leaf "flee",
      },
      blackboard = { hp = 100 }, coverage = false,
      stand_ins = { fight = T.running(), flee = T.running() },
      timeline = { { at = 2, set = { hp = 50 } }, { at = 3, set = { hp = 21 } },
                   { at = 4, set = { hp = 20 } } },
    }
    s:run(4)
    assert.same({ "running | enter fight; tick fight",
                  "running | tick fight",                           -- hp 50
                  "running | tick fight",                           -- hp 21
                  "running | abort fight; enter flee; tick flee" }, -- hp 20
                story(s))
    s:expect_aborted("fight", { at = 4, when = function(bb)
      return bb.hp == 20
    end })
  end)

  it("looks at the condition at the next tick only", function()
    local a = agent_of(combat_tree("selector", "self"), { enemy = "orc" })
    t:step(a, 1)
    a.bb.enemy = nil
    a.bb.enemy = "goblin"  -- false, then true again before the tick
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("does not abort a lower branch when the check turns true", function()
    local a = agent_of(combat_tree("selector", "self"))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("does nothing when its child is not running", function()
    local a = agent_of(combat_tree("selector", "self", "S", "R"),
                       { enemy = "orc" })
    assert.equal("success | enter combat; tick combat; exit combat success",
                 t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    a:tick(1)
    t:take()
    a:abort()
    assert.equal("abort patrol", t:take())
    a.bb.enemy = nil
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
  end)

  it("as the root makes the tick fail", function()
    local a = agent_of(bt.guard { bt.is_set "enemy", abort = "self",
                                  t:action("combat", "R") }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("failure | abort combat", t:step(a, 1))
    assert.equal("failure", a:status())
    assert.equal("failure |", t:step(a, 1))
  end)

  it("under a parallel makes it fail when its failure policy is met",
     function()
    local a = agent_of(bt.parallel {
      bt.guard { bt.is_set "enemy", abort = "self", t:action("combat", "R") },
      t:action("shout", "R"),
    }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat; enter shout; "
                 .. "tick shout", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("failure | abort combat; abort shout", t:step(a, 1))
  end)

  it("keeps the running ancestors' state: a timeout's start time",
     function()
    local a = agent_of(bt.timeout { seconds = 3,
      combat_tree("selector", "self") }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | abort combat; enter patrol; tick patrol",
                 t:step(a, 1))
    assert.equal("running | tick patrol", t:step(a, 1))
    assert.equal("failure | abort patrol", t:step(a, 1)) -- 3 s after start
  end)

  it("keeps the running ancestors' state: a repeater's count", function()
    local a = agent_of(bt.repeater { times = 3,
      combat_tree("selector", "self", "SR", "S") }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat; exit combat success; "
                 .. "enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("success | abort combat; "
                 .. "enter patrol; tick patrol; exit patrol success; "
                 .. "enter patrol; tick patrol; exit patrol success",
                 t:step(a, 1))
  end)

  it("aborts a whole running subtree, deepest first", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "enemy", abort = "self", bt.parallel {
        bt.sequence { t:action("aim", "S"), t:action("shoot", "R") },
        t:action("shout", "R"),
      } },
      t:action("patrol", "R"),
    }, { enemy = "orc" })
    t:step(a, 1)
    a.bb.enemy = nil
    assert.equal("running | abort shoot; abort shout; enter patrol; "
                 .. "tick patrol", t:step(a, 1))
  end)
end)

describe("abort = 'lower'", function()
  it("aborts the running lower branch of a selector when the check turns "
     .. "true (the example of the issue)", function()
    local combat = t:action("combat", "R")
    local patrol = t:action("patrol", "R")
    local tree = bt.tree(bt.selector {
      bt.guard { bt.is_set("enemy"), abort = "lower", combat },
      patrol,
    })
    local a = bt.agent(tree)
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("", t:take()) -- nothing happens before the next tick
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
    assert.same({ "selector", "guard[1]", "combat" }, a:running())
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("under a reactive selector aborts the lower branch before the guard's "
     .. "child starts", function()
    local a = agent_of(combat_tree("reactive_selector", "lower"))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("under a sequence does nothing: a later child is not lower priority",
     function()
    local a = agent_of(bt.sequence {
      bt.guard { bt.check("enemy", "~=", "orc"), abort = "lower",
                 t:action("scout", "S") },
      t:action("patrol", "R"),
    })
    assert.equal("running | enter scout; tick scout; exit scout success; "
                 .. "enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "goblin"
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("does not abort its own running child when the check turns false",
     function()
    local a = agent_of(combat_tree("selector", "lower"), { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("aborts whichever later child runs, past ones that failed", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "enemy", abort = "lower", t:action("combat", "R") },
      t:action("rest", "F"),
      bt.sequence { name = "work", t:action("walk", "S"),
                    t:action("chop", "R") },
    })
    assert.equal("running | enter rest; tick rest; exit rest failure; "
                 .. "enter walk; tick walk; exit walk success; "
                 .. "enter chop; tick chop", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | abort chop; enter combat; tick combat",
                 t:step(a, 1))
    assert.equal("aborted", trace.statuses(a).work)
  end)

  it("leaves a higher-priority running branch alone", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "danger", abort = "none", t:action("flee", "R") },
      bt.guard { bt.is_set "enemy", abort = "lower", t:action("combat", "R") },
      t:action("patrol", "R"),
    }, { danger = true })
    assert.equal("running | enter flee; tick flee", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | tick flee", t:step(a, 1))
  end)

  it("lets the selector go on when the guard's child fails at once",
     function()
    local a = agent_of(combat_tree("selector", "lower", "F"))
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat; "
                 .. "exit combat failure; enter patrol; tick patrol",
                 t:step(a, 1))
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("acts only on its own parent, not on a grandparent", function()
    local a = agent_of(bt.selector {
      bt.sequence { name = "s",
        bt.guard { bt.is_set "enemy", abort = "lower",
                   t:action("combat", "R") } },
      t:action("patrol", "R"),
    })
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it("wakes the first of several guards on the same key", function()
    local s = T.scenario {
      tree = bt.selector {
        bt.guard { bt.check("hp", "<", 20), abort = "lower", leaf "flee" },
        bt.guard { bt.check("hp", "<", 60), abort = "lower", leaf "heal" },
        leaf "patrol",
      },
      blackboard = { hp = 100 }, coverage = false,
      stand_ins = { flee = T.running(), heal = T.running(),
                    patrol = T.running() },
      timeline = { { at = 2, set = { hp = 50 } }, { at = 3, set = { hp = 10 } },
                   { at = 4, set = { hp = 40 } } },
    }
    s:run(4)
    assert.same({ "running | enter patrol; tick patrol",
                  "running | abort patrol; enter heal; tick heal",  -- hp 50
                  "running | abort heal; enter flee; tick flee",    -- hp 10
                  -- hp 40: 'lower' never gives the lower branches back
                  "running | tick flee" }, story(s))
  end)

  it("does nothing while the parent does not run", function()
    local a = agent_of(combat_tree("selector", "lower", "R", "S"))
    assert.equal("success | enter patrol; tick patrol; exit patrol success",
                 t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
  end)
end)

describe("abort = 'both'", function()
  for _, parent in ipairs { "selector", "reactive_selector" } do
    it("aborts in both directions under a " .. parent, function()
      local s = T.scenario {
        tree = bt[parent] {
          bt.guard { name = "g", bt.is_set "enemy", abort = "both",
                     leaf "combat" },
          leaf "patrol",
        },
        coverage = false,
        stand_ins = { combat = T.running(), patrol = T.running() },
        timeline = { { at = 2, set = { enemy = "orc" } },
                     { at = 4, clear = { "enemy" } },
                     { at = 5, set = { enemy = "goblin" } } },
      }
      s:run(5)
      assert.same({
        "running | enter patrol; tick patrol",
        "running | abort patrol; enter combat; tick combat", -- orc
        "running | tick combat",
        "running | abort combat; enter patrol; tick patrol", -- gone
        "running | abort patrol; enter combat; tick combat", -- goblin
      }, story(s))
    end)
  end

  it("under a sequence aborts only its own child", function()
    local s = T.scenario {
      tree = bt.sequence {
        bt.guard { bt.is_set "enemy", abort = "both", leaf "combat" },
        leaf "loot",
      },
      blackboard = { enemy = "orc" }, coverage = false,
      stand_ins = {
        combat = T.runs { { "running", "success" }, { "running" } },
        loot = T.statuses { "running", "running", "running", "failure" },
      },
      timeline = { { at = 3, set = { enemy = "goblin" } },
                   { at = 4, clear = { "enemy" } },
                   { at = 5, set = { enemy = "troll" } },
                   { at = 7, clear = { "enemy" } } },
    }
    s:run(7)
    assert.same({
      "running | enter combat; tick combat",
      "running | tick combat; exit combat success; enter loot; tick loot",
      "running | tick loot",                    -- goblin: loot is not lower
      "running | tick loot",                    -- gone: nor is it its child
      "failure | tick loot; exit loot failure", -- troll
      "running | enter combat; tick combat",
      "failure | abort combat",                 -- gone: its own child
    }, story(s))
  end)
end)

describe("what wakes a guard", function()
  it("is not writing the same value again", function()
    local tab = {}
    local cases = { "orc", 3, 2.5, true, tab }
    for _, v in ipairs(cases) do
      t = trace.new()
      -- combat fails at once, so patrol runs with the check true
      local a = agent_of(combat_tree("selector", "lower", "F"), { enemy = v })
      assert.equal("running | enter combat; tick combat; exit combat failure; "
                   .. "enter patrol; tick patrol", t:step(a, 1))
      a.bb.enemy = v
      a.bb:set("enemy", v)
      assert.equal("running | tick patrol", t:step(a, 1), tostring(v))
    end
  end)

  it("is not an integer written over an equal float (stored as written)",
     function()
    local a = agent_of(combat_tree("selector", "lower", "F"), { enemy = 3.0 })
    t:step(a, 1)
    a.bb.enemy = 3
    assert.equal("integer", mathtype(a.bb.enemy))
    assert.equal("running | tick patrol", t:step(a, 1))
  end)

  it53("is an integer that differs from the float in the key beyond double "
     .. "precision", function()
    local big = math.tointeger(2 ^ 53) + 1
    local a = agent_of(bt.selector {
      bt.guard { bt.check("n", ">", 2.0 ^ 53), abort = "lower",
                 t:action("count", "R") },
      t:action("idle", "R"),
    }, { n = 2.0 ^ 53 })
    assert.equal("running | enter idle; tick idle", t:step(a, 1))
    a.bb.n = big
    assert.equal("integer", mathtype(a.bb.n))
    assert.equal(big, a.bb.n)
    assert.equal("running | abort idle; enter count; tick count",
                 t:step(a, 1))
  end)

  it("for 'lower', is a change that turns the check from false to true, "
     .. "not one that keeps it true", function()
    local a = agent_of(combat_tree("selector", "lower", "FR"),
                       { enemy = "orc" })
    assert.equal("running | enter combat; tick combat; exit combat failure; "
                 .. "enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "goblin"   -- still set
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = {}         -- a table: still set
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "troll"    -- false, then true
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
  end)

  it("for 'self', is a change that makes the check false", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.check("enemy", "~=", "friend"), abort = "self",
                 t:action("combat", "R") },
      t:action("patrol", "R"),
    }, { enemy = "orc" })
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
    a.bb.enemy = {}
    assert.equal("running | tick combat", t:step(a, 1))
    a.bb.enemy = "friend"
    assert.equal("running | abort combat; enter patrol; tick patrol",
                 t:step(a, 1))
  end)

  it("is a change of the key a '$key' value names", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.check("hp", "<", "$flee_at"), abort = "both",
                 t:action("flee", "R") },
      t:action("fight", "R"),
    }, { hp = 30, flee_at = 20 })
    assert.equal("running | enter fight; tick fight", t:step(a, 1))
    a.bb.flee_at = 40
    assert.equal("running | abort fight; enter flee; tick flee",
                 t:step(a, 1))
    a.bb.flee_at = 10
    assert.equal("running | abort flee; enter fight; tick fight",
                 t:step(a, 1))
    a.bb.hp = 5
    assert.equal("running | abort fight; enter flee; tick flee",
                 t:step(a, 1))
  end)

  it("is not a change of another key", function()
    local a = agent_of(combat_tree("selector", "self"), { enemy = "orc" })
    t:step(a, 1)
    a.bb.hp = 3
    a.bb.enemies = nil
    assert.equal("running | tick combat", t:step(a, 1))
  end)

  it("is a change in a parent blackboard the agent reads through",
     function()
    local world = bt.blackboard {}
    local a = agent_of(combat_tree("selector", "both"), { parent = world })
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    world.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
    world.enemy = nil
    assert.equal("running | abort combat; enter patrol; tick patrol",
                 t:step(a, 1))
    local b = bt.agent(a.tree, { blackboard = bt.blackboard {
      parent = bt.blackboard { parent = world } } })
    t:step(b, 1)
    world.enemy = "troll" -- two levels up
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(b, 1))
  end)

  it("is not a change in a parent blackboard of a key the agent shadows",
     function()
    local world = bt.blackboard { enemy = "orc" }
    local a = agent_of(combat_tree("selector", "lower", "FR"),
                       { parent = world, enemy = "troll" })
    assert.equal("running | enter combat; tick combat; exit combat failure; "
                 .. "enter patrol; tick patrol", t:step(a, 1))
    world.enemy = "goblin" -- a.bb.enemy is still "troll"
    assert.equal("running | tick patrol", t:step(a, 1))
    world.enemy = nil
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = nil       -- now unset here and in the world
    assert.equal("running | tick patrol", t:step(a, 1))
    world.enemy = "orc"    -- read through: the check turns true
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
  end)

  it("is a change in a blackboard shared by several agents, for each",
     function()
    local shared = bt.blackboard {}
    local tree = bt.tree(combat_tree("selector", "lower"))
    local a = bt.agent(tree, { blackboard = shared })
    local b = bt.agent(tree, { blackboard = shared })
    local c = bt.agent(tree)
    for _, x in ipairs { a, b, c } do
      assert.equal("running | enter patrol; tick patrol", t:step(x, 1))
    end
    shared.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(b, 1))
    assert.equal("running | tick patrol", t:step(c, 1))
  end)

  it("is a write by a leaf, at the next tick", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "enemy", abort = "lower", t:action("combat", "R") },
      bt.sequence {
        t:action("patrol", "S"),
        bt.action(function(_, bb) bb.enemy = "orc"; return bt.RUNNING end),
      },
    })
    assert.equal("running | enter patrol; tick patrol; exit patrol success",
                 t:step(a, 1))
    assert.equal("running | enter combat; tick combat", t:step(a, 1))
  end)

  it("is seen after several ticks without a change", function()
    local a = agent_of(combat_tree("selector", "lower"))
    for _ = 1, 5 do t:step(a, 1) end
    t:take()
    a.bb.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
  end)

  it("works through bt.tick_all", function()
    local tree = bt.tree(combat_tree("selector", "both"))
    local agents = {}
    for k = 1, 3 do agents[k] = bt.agent(tree) end
    assert.is_nil(bt.tick_all(agents, 1))
    t:take()
    agents[2].bb.enemy = "orc"
    assert.is_nil(bt.tick_all(agents, 1))
    assert.equal("tick patrol; abort patrol; enter combat; tick combat; "
                 .. "tick patrol", t:take())
  end)

  it("raises an error naming the check when it cannot compare, after "
     .. "aborting the running nodes", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.check("hp", "<", 20), abort = "self",
                 t:action("fight", "R") },
      t:action("flee", "R"),
    }, { hp = 5 })
    assert.equal("running | enter fight; tick fight", t:step(a, 1))
    a.bb.hp = "full"
    local msg = tick_error(a)
    assert.equal("tree 'T' node 'selector/guard[1]/check[1]': 'hp' is "
                 .. "a string, compared with a number", msg)
    assert.equal("abort fight", t:take())
    assert.equal("aborted", a:status())
    a.bb.hp = 50
    assert.equal("running | enter flee; tick flee", t:step(a, 1))
  end)
end)

describe("bt.check", function()
  local ops = {
    --  op     5 vs 3   5 vs 5   5 vs 7
    { "==", "failure", "success", "failure" },
    { "~=", "success", "failure", "success" },
    { "<", "failure", "failure", "success" },
    { "<=", "failure", "success", "success" },
    { ">", "success", "failure", "failure" },
    { ">=", "success", "success", "failure" },
  }
  for _, case in ipairs(ops) do
    local op = case[1]
    it("compares numbers with " .. op, function()
      assert.equal(case[2], check_status({ x = 5 }, "x", op, 3))
      assert.equal(case[3], check_status({ x = 5 }, "x", op, 5))
      assert.equal(case[4], check_status({ x = 5 }, "x", op, 7))
      assert.equal(case[2], check_status({ x = 5.5 }, "x", op, 3.25))
      assert.equal(case[3], check_status({ x = 5.0 }, "x", op, 5))
      assert.equal(case[4], check_status({ x = -1e300 }, "x", op, 1e300))
    end)

    it("compares strings with " .. op, function()
      assert.equal(case[2], check_status({ x = "m" }, "x", op, "b"))
      assert.equal(case[3], check_status({ x = "m" }, "x", op, "m"))
      assert.equal(case[4], check_status({ x = "m" }, "x", op, "z"))
      assert.equal(case[2], check_status({ x = "ab" }, "x", op, "a"))
      assert.equal(case[4], check_status({ x = "a" }, "x", op, "ab"))
      assert.equal(case[2], check_status({ x = "a\0" }, "x", op, "a"))
    end)

    it("compares with another key through '$key' with " .. op, function()
      assert.equal(case[2], check_status({ x = 5, y = 3 }, "x", op, "$y"))
      assert.equal(case[3], check_status({ x = 5, y = 5 }, "x", op, "$y"))
      assert.equal(case[4], check_status({ x = 5, y = 7 }, "x", op, "$y"))
      assert.equal(case[3], check_status({ x = "s", y = "s" }, "x", op, "$y"))
    end)
  end

  it("compares as Lua does: integers and floats, no string coercion",
     function()
    assert.equal("success", check_status({ x = 1 }, "x", "==", 1.0))
    assert.equal("success", check_status({ x = 1 }, "x", "<", 1.5))
    assert.equal("success", check_status({ x = maxint - 1 }, "x", "<",
                                         maxint))
    assert.equal("failure", check_status({ x = 5 }, "x", "==", "5"))
    assert.equal("success", check_status({ x = 5 }, "x", "~=", "5"))
    assert.equal("success", check_status({ x = true }, "x", "==", true))
    assert.equal("failure", check_status({ x = true }, "x", "==", 1))
    assert.equal("success", check_status({ x = false }, "x", "==", false))
    assert.equal("failure", check_status({}, "x", "==", false))
    assert.equal("failure", check_status({ x = 1 }, "x", "==", "$y"))
    assert.equal("success", check_status({ x = math.huge }, "x", ">", 1e308))
  end)

  it("with no value compares with nil", function()
    assert.equal("success", check_status({}, "x", "==", nil))
    assert.equal("failure", check_status({ x = 0 }, "x", "==", nil))
    assert.equal("success", check_status({ x = false }, "x", "~=", nil))
    assert.equal("success", check_status({}, "x", "==", "$y"))
  end)

  it("reads '$key' values through a parent blackboard", function()
    local world = bt.blackboard { limit = 10 }
    assert.equal("success",
                 check_status({ parent = world, x = 3 }, "x", "<", "$limit"))
  end)

  it("reads a value string without '$' as a plain string", function()
    assert.equal("success", check_status({ x = "y" }, "x", "==", "y"))
    assert.equal("failure", check_status({ x = 5, y = 5 }, "x", "==", "y"))
  end)

  for _, op in ipairs { "<", "<=", ">", ">=" } do
    it("raises a type error naming the node and key for a number and a string "
       .. "under " .. op, function()
      local a = agent_of(bt.sequence { bt.check("x", op, 3) }, { x = "3" })
      assert.equal("tree 'T' node 'sequence/check[1]': 'x' is a string, "
                   .. "compared with a number", tick_error(a))
      local b = agent_of(bt.sequence {
        bt.named("low", bt.check("x", op, "a")),
      }, { x = 2.5 })
      assert.equal("tree 'T' node 'sequence/low': 'x' is a number, "
                   .. "compared with a string", tick_error(b))
      local c = agent_of(bt.check("x", op, "$y"), { x = 1, y = "1" })
      assert.equal("tree 'T' node 'check': 'y' is a string, compared with "
                   .. "a number", tick_error(c))
      local d = agent_of(bt.check("x", op, 1), {})
      assert.equal("tree 'T' node 'check': key 'x' is not set", tick_error(d))
      local e = agent_of(bt.check("stok", op, 3), { stock = 4, hp = 1 })
      assert.equal("tree 'T' node 'check': key 'stok' is not set (did you "
                   .. "mean 'stock'?)", tick_error(e))
      local f = agent_of(bt.check("x", op, "$y"), { x = 1, hp = 1 })
      assert.equal("tree 'T' node 'check': key 'y' is not set", tick_error(f))
    end)
  end

  it("after an error lets the agent tick again", function()
    local a = agent_of(bt.sequence { t:action("A", "R"),
                                     bt.check("x", "<", 3) }, { x = "s" })
    t:set("A", "SR")
    assert.matches("'x' is a string, compared with a number", tick_error(a))
    assert.equal("enter A; tick A; exit A success", t:take())
    a.bb.x = 1
    assert.equal("running | enter A; tick A", t:step(a, 1))
  end)

  it("is a condition of any composite, and works in a filter", function()
    local a = agent_of(bt.filter { conditions = { bt.check("hp", ">", 0) },
                                   t:action("live", "R") }, { hp = 2 })
    assert.equal("running | enter live; tick live", t:step(a, 1))
    a.bb.hp = 0
    assert.equal("failure | abort live", t:step(a, 1))
  end)

  it("compares NaN as Lua does", function()
    local nan = 0 / 0
    local got = {}
    for _, op in ipairs { "==", "<", "<=", ">", ">=" } do
      got[#got + 1] = check_status({ x = 1 }, "x", op, nan)
    end
    got[#got + 1] = check_status({ x = 1 }, "x", "~=", nan)
    assert.same({ "failure", "failure", "failure", "failure", "failure",
                  "success" }, got)
    for _, op in ipairs { "<", "<=", ">", ">=" } do
      assert.equal("failure", check_status({ x = nan }, "x", op, 1), op)
      assert.equal("failure", check_status({ x = nan }, "x", op, 1.5), op)
      assert.equal("failure", check_status({ x = nan, y = nan }, "x", op,
                                           "$y"), op)
    end
    assert.equal("failure", check_status({ x = nan }, "x", "==", nan))
  end)

  it53("compares an integer and a float exactly, as Lua does", function()
    local big = math.tointeger(2 ^ 53) + 1 -- 2^53 + 1 has no exact float
    local f = 2.0 ^ 53
    assert.is_true(big > f and big ~= f)
    assert.equal("success", check_status({ x = big }, "x", ">", f))
    assert.equal("failure", check_status({ x = big }, "x", "==", f))
    assert.equal("success", check_status({ x = f }, "x", "<", big))
    assert.equal("success", check_status({ x = f, y = big }, "x", "<", "$y"))
    assert.equal("success", check_status({ x = 1 }, "x", "<", 1.5))
    assert.equal("success", check_status({ x = -1 }, "x", ">", -1.5))
    assert.equal("success", check_status({ x = 2 }, "x", ">", 1.5))
    assert.equal("success", check_status({ x = math.maxinteger }, "x", "<",
                                         2.0 ^ 63))
    assert.equal("success", check_status({ x = math.mininteger }, "x", "==",
                                         -2.0 ^ 63))
    assert.equal("success", check_status({ x = math.mininteger }, "x", ">",
                                         -math.huge))
  end)

  it("refuses value strings with embedded zeros (keys are C strings)", function()
    assert.has_error(function() bt.tree(bt.check("x", "==", "a\0z"), { name = "T" }) end,
      "tree 'T': check: argument 'value' must be a string without NUL bytes")
  end)

  it("finds the same table in both keys equal with '$key'", function()
    local tab = {}
    local got = check_status({ x = tab, y = tab }, "x", "==", "$y")
    assert.equal("failure", check_status({ x = tab, y = {} }, "x", "==", "$y"))
    assert.equal("success", got)
  end)
end)

describe("bt.is_set", function()
  it("succeeds when the key holds any value, false included", function()
    local function is_set(bb) return agent_of(bt.is_set "k", bb):tick(1) end
    assert.equal("failure", is_set {})
    assert.equal("success", is_set { k = 0 })
    assert.equal("success", is_set { k = "" })
    assert.equal("success", is_set { k = false })
    assert.equal("success", is_set { k = {} })
    assert.equal("success", is_set { parent = bt.blackboard { k = 1 } })
  end)

  it("follows changes of the key", function()
    local a = agent_of(bt.is_set "k")
    assert.equal("failure", a:tick(1))
    a.bb.k = 1
    assert.equal("success", a:tick(1))
    a.bb.k = nil
    assert.equal("failure", a:tick(1))
  end)
end)

describe("definition errors", function()
  it("a guard without a check", function()
    assert.equal("tree 'x': sequence/guard[1]: 'guard' needs a check "
                 .. "(bt.check or bt.is_set) and a child",
                 tree_error(bt.sequence {
                   bt.guard { abort = "self", t:action("A", "S") },
                 }))
  end)

  it("a guard without a child", function()
    assert.equal("tree 'x': sequence/guard[1]: 'guard' needs a check "
                 .. "(bt.check or bt.is_set) and a child",
                 tree_error(bt.sequence { bt.guard { bt.is_set "k" } }))
  end)

  it("a guard whose first child is not bt.check or bt.is_set", function()
    for _, first in ipairs {
      bt.condition(function() return true end), t:action("A", "S"),
      bt.invert(bt.is_set "k"), bt.sequence { bt.is_set "k" },
    } do
      assert.equal("tree 'x': sequence/guard[1]: 'guard' needs a check "
                   .. "(bt.check or bt.is_set) and a child",
                   tree_error(bt.sequence {
                     bt.guard { first, t:action("B", "S") },
                   }))
    end
  end)

  it("a guard with more than one child", function()
    assert.equal("tree 'x': guard: 'guard' needs a check (bt.check or "
                 .. "bt.is_set) and a child",
                 tree_error(bt.guard { bt.is_set "k", t:action("A", "S"),
                                       t:action("B", "S") }))
  end)

  it("an unknown abort mode", function()
    for _, mode in ipairs { "sometimes", "Self", "", 1, true } do
      assert.equal("tree 'x': guard: argument 'abort' must be \"none\", "
                   .. "\"self\", \"lower\" or \"both\"",
                   tree_error(bt.guard { bt.is_set "k", abort = mode,
                                         t:action("A", "S") }))
    end
  end)

  it("an argument a guard does not take", function()
    assert.equal("tree 'x': guard: 'guard' has no option 'times' "
                 .. "(it takes: type name utility failure_if success_if "
                 .. "skip_if run_while on_halted on_failure on_success post "
                 .. "abort)",
                 tree_error(bt.guard { bt.is_set "k", times = 2,
                                       t:action("A", "S") }))
  end)

  it("bt.check with a bad operator", function()
    for _, op in ipairs { "=", "!=", "=<", "<>", "lt", "" } do
      assert.equal("tree 'x': sequence/check[1]: argument 'op' must be one "
                   .. "of == ~= < <= > >=",
                   tree_error(bt.sequence { bt.check("k", op, 1) }))
    end
  end)

  it("bt.check without a key or an operator", function()
    assert.equal("tree 'x': check: 'check' needs a key and an operator",
                 tree_error(bt.check("k")))
    assert.equal("tree 'x': check: 'check' needs a key and an operator",
                 tree_error(bt.check(nil, "==", 1)))
  end)

  it("bt.check with a value that is not a number, string, boolean or nil",
     function()
    assert.equal("tree 'x': check: argument 'value' must be a number, "
                 .. "string, boolean or nil",
                 tree_error(bt.check("k", "==", {})))
  end)

  it("bt.check ordering a boolean", function()
    assert.equal("tree 'x': check: 'check' can order only numbers and "
                 .. "strings", tree_error(bt.check("k", "<", true)))
  end)

  it("bt.is_set without a key", function()
    assert.equal("tree 'x': is_set: 'is_set' needs a key",
                 tree_error(bt.is_set()))
  end)
end)

describe("the builder", function()
  it("builds a guard from :guard(check, mode), closed after its child",
     function()
    local tree = bt.builder()
      :selector()
        :guard(bt.is_set "enemy", "lower"):action(t:leafdef("combat", "R"))
        :action(t:leafdef("patrol", "R"))
      :build()
    local a = bt.agent(tree)
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
  end)
end)
