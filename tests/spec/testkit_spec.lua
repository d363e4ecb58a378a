-- testkit_spec: the test kit, require "bonsai.test" (docs/TESTING.md).
-- Scenarios with stand-ins by name and by path (inside subtrees and
-- imported files too), their call records, timelines, the expect_*
-- assertions (passing, and failing on purpose with the message checked),
-- golden traces, coverage of trees and random worlds; and the bad input
-- the issue names: a stand-in for a path that is not there, a scenario
-- that never finishes, golden files missing, truncated or from another
-- version of the tree.
local bt = require "bonsai"
local T = require "bonsai.test"
local LUA = require("helpers.luaver").interpreter

-- The message of f(...), which must raise.
local function raises(f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(msg)
end

local function has(text, part)
  assert(text:find(part, 1, true), "expected\n" .. part .. "\nin\n" .. text)
end

-- A small combat tree: the patrol is cut off by a guard on bb.enemy.
bt.register("tk_patrol", function() return bt.RUNNING end)
bt.register("tk_chase", function() return bt.RUNNING end)
bt.register("tk_attack", function() return bt.SUCCESS end)
bt.register("tk_in_reach", function(a, bb) return bb.near == true end)
bt.register("tk_flee", function() return bt.RUNNING end)

local function combat()
  return bt.selector { name = "npc",
    bt.guard { name = "combat", bt.is_set "enemy", abort = "both",
      bt.reactive_selector { name = "fight",
        bt.filter { name = "retreat", conditions = { bt.check("hp", "<", 3) },
                    bt.action "tk_flee" },
        bt.filter { name = "strike", conditions = { bt.condition "tk_in_reach" },
                    bt.action "tk_attack" },
        bt.action "tk_chase",
      } },
    bt.action "tk_patrol",
  }, { name = "npc" }
end

local function scenario(o)
  o.tree = o.tree or combat
  o.blackboard = o.blackboard or { hp = 10 }
  o.coverage = o.coverage or T.new_coverage()
  return T.scenario(o)
end

describe("a scenario", function()
  it("runs the tree tick by tick and reads like the design", function()
    local s = scenario {
      timeline = { { at = 3, set = { enemy = "wolf" } },
                   { at = 6, set = { hp = 2 } },
                   { at = 9, clear = { "enemy" } } },
    }
    s:run(10)
    s:expect_running(2, "npc/tk_patrol")
      :expect_running(3, "combat/fight/tk_chase")
      :expect_aborted("tk_patrol", { at = 3 })
      :expect_running(6, "retreat/tk_flee")
      :expect_aborted("tk_flee", { when = function(bb)
        return bb.enemy == nil end })
      :expect_never_entered("tk_attack")
      :expect_entered("tk_chase", { times = 1, at = 3 })
      :expect_running(10, "tk_patrol")
    assert.equal(10, #s.ticks)
    assert.equal("wolf", s:tick(4).bb.enemy)
    assert.same({ "npc/tk_patrol" }, s:tick(1).running)
    assert.is_true(s:tick(9):aborted("fight"))
    assert.is_true(s:tick(5):is_running("tk_chase"))
  end)

  it("fails with the trace of the ticks around the failure", function()
    local s = scenario { timeline = { { at = 3, set = { enemy = "x" } } } }
    s:run(6)
    local msg = raises(s.expect_running, s, 4, "tk_patrol")
    has(msg, "tree 'npc': at tick 4 the running path is not tk_patrol " ..
             "(running: npc/combat/fight/tk_chase)")
    has(msg, "trace of ticks 2-6:")
    has(msg, "tick 3  time 0.3  -> running   [enemy = \"x\"]")
    has(msg, "npc/tk_patrol")
    has(msg, "aborted")
    msg = raises(s.expect_never_entered, s, "tk_chase")
    has(msg, "tk_chase was entered at tick 3")
    msg = raises(s.expect_aborted, s, "tk_chase")
    has(msg, "tk_chase was never aborted")
    msg = raises(s.expect_aborted, s, "tk_patrol", { at = 5 })
    has(msg, "tk_patrol was aborted at tick 3, but never at tick 5")
    msg = raises(s.expect_aborted, s, "tk_patrol", { at = 3,
      when = function(bb) return bb.enemy == nil end })
    has(msg, "tk_patrol was aborted at tick 3, but never at tick 3 and " ..
             "when the condition held")
    msg = raises(s.expect_status, s, 2, bt.SUCCESS)
    has(msg, "tick 2 returned running, not success")
    msg = raises(s.expect_returned, s, bt.SUCCESS, { within = 5 })
    has(msg, "the tree did not return success within 5 ticks")
    msg = raises(s.expect_running, s, 1, "no_such_node")
    has(msg, "at tick 1 the running path is not no_such_node")
    msg = raises(s.expect_never_entered, s, "no_such_node")
    has(msg, "no node 'no_such_node' in tree 'npc'")
    has(raises(s.tick, s, 7), "tick 7 has not run (6 ticks ran)")
  end)

  it("says within how many ticks the tree returned", function()
    local s = scenario {
      stand_ins = { tk_patrol = T.running(4) },
    }
    s:finish(20)
    local _, n = s:expect_returned(bt.SUCCESS, { within = 20 })
    assert.equal(5, n)
    has(raises(s.expect_returned, s, bt.SUCCESS, { within = 3 }),
        "did not return success within 3 ticks (it did at tick 5)")
  end)

  it("never hangs: a tree that never finishes fails at its bound", function()
    local s = scenario { max_ticks = 50 }
    local msg = raises(s.finish, s)
    has(msg, "never met the condition within 50 ticks")
    assert.equal(50, #s.ticks)
    s = scenario {}
    has(raises(s.run_until, s, bt.SUCCESS, 30),
        "never returned success within 30 ticks")
    assert.equal(30, #s.ticks)
    s = scenario { max_ticks = 5 }
    s:run(5)
    has(raises(s.run, s, 1), "the scenario reached max_ticks (5)")
  end)

  it("takes dt as a number, a list or a function", function()
    local s = scenario { dt = { 0.5, 0.25 } }
    s:run(3)
    assert.equal(1, s:tick(3).time)
    s = scenario { dt = function(n) return n end }
    s:run(3)
    assert.equal(6, s:tick(3).time)
  end)

  it("raises when the tree raises, unless errors are recorded", function()
    bt.register("tk_boom", function() error("boom", 0) end)
    local s = scenario { tree = bt.sequence { bt.action "tk_boom" } }
    has(raises(s.run, s, 1), "the tree raised at tick 1: tree 'scenario" ..
        "~test' node 'sequence/tk_boom': boom")
    s = scenario { tree = bt.sequence { bt.action "tk_boom" },
                   errors = "record" }
    s:run(2)
    s:expect_error("boom", { at = 2 })
    assert.equal("error", s:tick(1).status)
    has(raises(s.expect_error, s, "bang"), "no tick raised an error " ..
        "with 'bang'")
  end)

  it("refuses unknown fields and bad timelines", function()
    has(raises(T.scenario, { tree = combat, blackbord = {} }),
        "T.scenario: unknown field 'blackbord'")
    has(raises(scenario, { timeline = { { set = { a = 1 } } } }),
        "timeline entry 1 needs at = a tick number")
    has(raises(scenario, { timeline = { { at = 1, sett = {} } } }),
        "timeline entry 1: unknown field 'sett'")
  end)
end)

describe("stand-ins", function()
  it("replace a registered leaf everywhere and record their calls", function()
    local s = scenario {
      stand_ins = { tk_chase = T.statuses { "running", "running", "failure" },
                    tk_patrol = T.running() },
      timeline = { { at = 2, set = { enemy = "wolf" } } },
    }
    s:run(5)
    local calls = s:calls_of("tk_chase")
    local kinds = {}
    for i, c in ipairs(calls) do kinds[i] = c.what .. "@" .. c.tick end
    assert.same({ "enter@2", "tick@2", "tick@3", "tick@4", "exit@4" }, kinds)
    assert.equal("npc/combat/fight/tk_chase", calls[1].path)
    assert.equal("wolf", calls[1].bb.enemy)
    assert.equal(bt.FAILURE, calls[5].status)
    assert.equal(1, calls[2].run)
    assert.equal(2, calls[3].step)
    assert.same({ "abort" }, { s:calls_of("tk_patrol", "abort")[1].what })
    assert.equal(2, s:calls_of("tk_patrol", "abort")[1].tick)
    -- the registered leaf is untouched: another tree still runs it
    local a = bt.agent(bt.tree(bt.action "tk_attack"))
    assert.equal(bt.SUCCESS, a:tick(0.1))
  end)

  it("stand in by path, for one place only, keeping the leaf's args",
     function()
    local s = scenario {
      tree = bt.sequence { name = "root",
        bt.action(function() return true end, { n = 1 }),
        bt.action(function() return true end, { n = 2 }),
      },
      stand_ins = { ["root/action[2]"] = T.runs { { "running", "success" },
                                                  { "failure" } } },
    }
    s:run(3)
    local c = s:calls_of("root/action[2]")
    assert.equal(2, c[1].args.n)
    assert.same({ "success", "running", "failure" },
                { s:tick(2).status == "success" and "success" or
                  s:tick(2).status, s:tick(1).status, s:tick(3).status })
    s:expect_running(1, "root/action[2]")
  end)

  it("take a function, a status or T.raise", function()
    local s = scenario {
      stand_ins = {
        tk_in_reach = function(call) return call.bb.near == 1 end,
        tk_attack = true,
        tk_chase = T.raise("no legs"),
      },
      timeline = { { at = 1, set = { enemy = "e" } },
                   { at = 2, set = { near = 1 } } },
    }
    s:run(2)
    s:expect_error("no legs", { at = 1 })
    s:expect_entered("tk_attack", { at = 2 })
    assert.equal("record", s.errors) -- a raising stand-in records errors
  end)

  it("reach into subtrees given by definition", function()
    local inner = function()
      return bt.sequence { name = "body", bt.action "tk_attack",
                           bt.action(function() return true end) },
             { name = "tk_inner" }
    end
    local inner_tree = bt.tree(inner())
    local s = scenario {
      tree = bt.selector { name = "outer", bt.subtree(inner_tree) },
      trees = { tk_inner = inner },
      stand_ins = { ["outer/tk_inner/body/action[2]"] = T.running(),
                    tk_attack = T.statuses { "success" } },
    }
    s:run(2)
    s:expect_running(2, "outer/tk_inner/body/action[2]")
    assert.equal(1, #s:calls_of("tk_attack", "enter"))
    -- the game's tree of that name is still the game's
    local again = bt.tree(bt.subtree("tk_inner"))
    assert.equal(bt.SUCCESS, bt.agent(again):tick(0.1))
  end)

  it("say so when a subtree's definition is missing", function()
    local inner_tree = bt.tree(bt.sequence { name = "body",
      bt.action(function() return true end) }, { name = "tk_inner2" })
    local msg = raises(scenario, {
      tree = bt.selector { name = "outer", bt.subtree(inner_tree) },
      stand_ins = { ["body/action[1]"] = true },
    })
    has(msg, "stand-in 'body/action[1]': outer/tk_inner2/body/action[1] " ..
             "is inside subtree outer/tk_inner2, whose definition the " ..
             "scenario lacks")
  end)

  it("stand in for leaves of an imported file", function()
    local base = os.tmpname()
    local file = base .. ".xml"
    local f = assert(io.open(file, "w"))
    f:write([[<root BTCPP_format="4"><BehaviorTree ID="Main">
      <Sequence name="seq"><Action ID="tk_attack"/><Action ID="tk_chase"/>
      </Sequence></BehaviorTree></root>]])
    f:close()
    local s = scenario { tree = file,
                         stand_ins = { tk_chase = T.running(1) } }
    s:finish(5)
    s:expect_returned(bt.SUCCESS, { within = 2 })
    assert.equal(2, #s:calls_of("tk_chase", "tick"))
    os.remove(file)
    os.remove(base)
  end)

  it("refuse what they cannot replace, with a clear message", function()
    has(raises(scenario, { stand_ins = { ["npc/nowhere"] = true } }),
        "stand-in 'npc/nowhere': no leaf registered by that name and no " ..
        "node at that path in tree 'npc'; its leaves: ")
    has(raises(scenario, { stand_ins = { fight = true } }),
        "npc/combat/fight is a reactive_selector, not a leaf")
    has(raises(scenario, { stand_ins = { ["combat/is_set[1]"] = true } }),
        "is the check of guard npc/combat, which stays in C")
    has(raises(scenario, { tree = bt.tree(combat()),
                           stand_ins = { tk_chase = true } }),
        "stand-ins need the tree's definition")
    has(raises(scenario, { stand_ins = { tk_chase = 42 } }),
        "stand-in 'tk_chase': a status, a function or T.statuses")
    has(raises(scenario, { tree = function() return bt.tree(combat()) end,
                           stand_ins = { tk_chase = true } }),
        "not the compiled tree 'npc'")
    has(raises(scenario, { tree = 42 }), "tree must be a node")
    has(raises(scenario, { stand_ins = { ["tk_chase"] = true,
                                         ["fight/tk_chase"] = false } }),
        "both name npc/combat/fight/tk_chase")
  end)
end)

-- A stand-in replaces the leaf's own behaviour and keeps the rest of its
-- node, so the test passes only where the game does
-- (the repro kit_stand_in_keeps_conditions).
describe("a stand-in keeps the leaf's node", function()
  -- The tree with leaf g (its table: extra fields, and a behaviour that
  -- returns statuses in turn), then h; the same scenario with and without a
  -- stand-in for g that plays the same statuses. Returns, per tick, g's
  -- status, the tree's and the blackboard keys listed, for both.
  local function both(fields, statuses, o)
    local out = {}
    for _, with in ipairs { false, true } do
      local k = 0
      local g = { name = "g", tick = function()
        k = math.min(k + 1, #statuses)
        return statuses[k]
      end }
      for f, v in pairs(fields) do g[f] = v end
      local s = T.scenario {
        tree = (o.parent or function(x) return bt.sequence { name = "s", x,
          bt.action { name = "h", tick = function() return true end } } end)(
          bt.action(g)),
        name = "keep", blackboard = o.blackboard, timeline = o.timeline,
        stand_ins = with and { g = T.statuses(statuses) } or nil,
      }
      local rows = {}
      for i = 1, o.ticks or 2 do
        local t = s:step()
        local row = { tostring(t:status_of("g")), t.status }
        for _, key in ipairs(o.keys or {}) do
          row[#row + 1] = tostring(s.agent.bb[key])
        end
        rows[i] = table.concat(row, " ")
      end
      out[with and "stand_in" or "leaf"] = rows
      out.calls = with and #s:calls_of("g", "tick") or nil
    end
    assert.same(out.leaf, out.stand_in)
    return out.stand_in, out.calls
  end

  it("skip_if: skipped, the stand-in not called", function()
    local rows, calls = both({ skip_if = "skip == 1" }, { "success" },
                             { blackboard = { skip = 1 } })
    assert.same({ "skipped success", "skipped success" }, rows)
    assert.equal(0, calls)
  end)

  it("success_if and failure_if: the status without a call", function()
    local rows, calls = both({ success_if = "win == 1" }, { "failure" },
                             { blackboard = { win = 1 } })
    assert.same({ "success success", "success success" }, rows)
    assert.equal(0, calls)
    rows, calls = both({ failure_if = "lose == 1" }, { "success" },
                       { blackboard = { lose = 1 } })
    assert.same({ "failure failure", "failure failure" }, rows)
    assert.equal(0, calls)
  end)

  it("run_while: a running stand-in is aborted when it turns false, its " ..
     "on_halted runs", function()
    local rows = both({ run_while = "go == 1", on_halted = "halted := 1" },
      { "running" }, { blackboard = { go = 1 }, ticks = 3, keys = { "halted" },
                       timeline = { { at = 2, set = { go = 0 } } } })
    assert.same({ "running running nil", "skipped success 1",
                  "skipped success 1" }, rows)
  end)

  it("on_success, on_failure and post run after the stand-in's status",
     function()
    local rows = both({ on_success = "n := 1", post = "p := 'post'" },
      { "success" }, { keys = { "n", "p" }, ticks = 1 })
    assert.same({ "success success 1 post" }, rows)
    rows = both({ on_failure = "m := 2", post = "p := 'post'" },
      { "failure" }, { keys = { "m", "p" }, ticks = 1 })
    assert.same({ "failure failure 2 post" }, rows)
  end)

  it("on_halted runs when a parent cuts the stand-in off", function()
    local rows = both({ on_halted = "halted := 1" }, { "running" }, {
      parent = function(x)
        return bt.reactive_sequence { name = "s", bt.check("go", "==", 1), x }
      end,
      blackboard = { go = 1 }, keys = { "halted" },
      timeline = { { at = 2, set = { go = 0 } } } })
    assert.same({ "running running nil", "aborted failure 1" }, rows)
  end)

  it("its utility in a utility selector", function()
    local rows = both({ utility = function() return 10 end }, { "success" }, {
      parent = function(x)
        return bt.utility_selector { name = "s",
          bt.action { name = "h", utility = function() return 5 end,
                      tick = function() return true end }, x }
      end, ticks = 1 })
    assert.same({ "success success" }, rows) -- g first: its utility is higher
  end)

  it("its name and args, in place of a registered leaf's or a check's " ..
     "own behaviour", function()
    bt.register("tk_keep", function() return false end)
    local s = T.scenario {
      tree = bt.sequence { name = "s",
        bt.action { name = "r", leaf = "tk_keep", args = { x = 1 },
                    on_success = "n := 1" },
        bt.named("c", bt.check("hp", ">", 5)) },
      blackboard = { hp = 1 },
      stand_ins = { r = true, c = true },
    }
    local t = s:step()
    assert.equal("success", t.status)
    assert.equal(1, s.agent.bb.n)
    assert.equal(1, s:calls_of("r")[1].args.x)
  end)
end)

describe("a timeline", function()
  it("fires interrupts at given ticks", function()
    local s = scenario { timeline = { { at = 3, interrupt = true } } }
    s:run(4)
    s:expect_status(3, bt.ABORTED):expect_aborted("tk_patrol", { at = 3 })
    s:expect_status(4, bt.RUNNING)
    assert.same({ "interrupt" }, s:tick(3).applied)
  end)

  it("wakes sleepers, which are not ticked before", function()
    local s = scenario {
      tree = bt.sequence { name = "nap",
        bt.action { tick = function() return bt.sleep(100) end },
      },
      timeline = { { at = 4, wake = true } },
    }
    s:run(5)
    assert.is_false(s:tick(1).slept)
    assert.is_true(s:tick(2).slept and s:tick(3).slept)
    assert.is_false(s:tick(4).slept)
    assert.equal(0.4, s:tick(4).time)
  end)

  it("calls a function with the scenario", function()
    local seen
    local s = scenario { timeline = { { at = 2, call = function(sc, a, bb)
      seen = sc.agent == a and bb == a.bb
      bb.enemy = "x"
    end } } }
    s:run(2)
    assert.is_true(seen)
    s:expect_running(2, "tk_chase")
  end)
end)

describe("golden traces", function()
  local path = os.tmpname()
  local function run(o)
    local s = scenario(o or { timeline = { { at = 2, set = { enemy = "e" } } },
                              stand_ins = { tk_chase = T.running(2) } })
    s:run(5)
    return s
  end
  before_each(function() os.remove(path) end)
  after_each(function() os.remove(path) end)

  it("are recorded when missing (failing once), then compared", function()
    has(raises(T.golden, run(), path), "missing: recorded it now (5 ticks)")
    T.golden(run(), path)
    local text = io.open(path):read("*a")
    has(text, "bonsai-golden 1\ntree npc\nnode npc selector\n")
    has(text, "  timeline enemy = \"e\"\n")
    has(text, "  call npc/combat/fight/tk_chase enter\n")
    has(text, "  node npc/tk_patrol aborted\n")
    has(text, "end 5\n")
    assert.is_nil(text:find("0x%x+")) -- no addresses
  end)

  it("print the first differing tick and node", function()
    T.golden(run(), path, { update = true })
    local msg = raises(T.golden, run {
      timeline = { { at = 3, set = { enemy = "e" } } },
      stand_ins = { tk_chase = T.running(2) } }, path)
    has(msg, "first difference at tick 2, line 23:")
    has(msg, "expected:   timeline enemy = \"e\"")
    has(msg, "got:        status running")
    has(msg, "this run:\n")
    -- where a node differs, the message names it
    T.golden(run { stand_ins = { tk_chase = T.running(2) } }, path,
             { update = true })
    has(raises(T.golden, run { stand_ins = { tk_chase = T.running(2),
                                             tk_patrol = T.running() } },
               path), "first difference at tick 1, node npc/tk_patrol")
  end)

  it("refuse truncated, foreign and other-version files", function()
    T.golden(run(), path, { update = true })
    local text = io.open(path):read("*a")
    local f = io.open(path, "w")
    f:write(text:sub(1, math.floor(#text / 2)))
    f:close()
    has(raises(T.golden, run(), path), "truncated: it stops at line")
    f = io.open(path, "w")
    f:write("hello\n")
    f:close()
    has(raises(T.golden, run(), path), "not a golden trace of this kit")
    f = io.open(path, "w")
    f:write((text:gsub("node npc/tk_patrol action\n", "node npc/tk_walk " ..
                                                      "action\n")))
    f:close()
    local other = scenario { tree = bt.action "tk_attack", name = "other" }
    other:run(1)
    has(raises(T.golden, other, path), "recorded for tree npc, this is " ..
        "tree other")
    has(raises(T.golden, run(), path), "recorded from another version of " ..
        "the tree (nodes gone: npc/tk_walk action; nodes new: " ..
        "npc/tk_patrol action)")
  end)

  it("are the same on every run", function()
    T.golden(run(), path, { update = true })
    T.golden(run(), path)
    T.golden(run(), path)
  end)
end)

describe("coverage", function()
  it("counts each node's outcomes and names the gaps", function()
    local cov = T.new_coverage()
    local s = scenario { coverage = cov,
      timeline = { { at = 2, set = { enemy = "e" } } } }
    s:run(4)
    local r = cov:report()[1]
    assert.equal("npc", r.tree)
    local by = {}
    for _, n in ipairs(r.nodes) do by[n.path] = n end
    assert.equal(1, by["npc/tk_patrol"].aborted)
    assert.same({ "never ran" }, by["npc/combat/fight/retreat/tk_flee"].gaps)
    assert.same({ "never succeeded" },
                by["npc/combat/fight/retreat/check[1]"].gaps)
    assert.same({ "never aborted its child" }, by["npc/combat"].gaps)
    local text = cov:text()
    has(text, "tree 'npc': ")
    has(text, "never aborted its child")
    has(raises(cov.check, cov, { min = 99 }), "tree 'npc' covers")
    has(raises(cov.check, cov, { min = 99 }), "npc/combat: never aborted " ..
        "its child")
    cov:check { min = 10 }
    has(raises(cov.check, cov, { min = 10, tree = "zzz" }),
        "tree 'zzz' never ran")
  end)

  it("counts the agents of a game loop and writes JSON", function()
    local cov = T.new_coverage()
    local tree = bt.tree(combat())
    local a = bt.agent(tree, { blackboard = { hp = 1 } })
    cov:add(a, "npc")
    a:tick(0.1)
    a.bb.enemy = "e"
    a:tick(0.1)
    local by = {}
    for _, n in ipairs(cov:report()[1].nodes) do by[n.path] = n end
    assert.equal(1, by["npc/combat/fight/retreat/tk_flee"].ticks)
    -- every node a tick visits counts, running composites too
    assert.equal(2, by["npc"].ticks)
    assert.equal(1, by["npc/combat/fight"].ticks)
    cov:remove(a)
    a:tick(0.1)
    assert.equal(2, cov:report()[1].nodes[1].ticks) -- (the root: no more)
    cov:write("/tmp/bonsai_testkit_cov.json")
    local text = io.open("/tmp/bonsai_testkit_cov.json"):read("*a")
    os.remove("/tmp/bonsai_testkit_cov.json")
    has(text, '{"format":"bonsai-coverage","trees":[{"covered":')
    has(text, '"path":"npc/combat/fight/retreat/tk_flee"')
    has(text, '"gaps":["never failed"]')
  end)

  it("counts an agent's ticks after a reload toward the new version",
     function()
    local cov = T.new_coverage()
    local tree = bt.tree(bt.sequence { name = "s", bt.action "tk_patrol" },
                         { name = "walker" })
    local a = bt.agent(tree)
    cov:add(a)
    a:tick(0.1)
    tree:reload(bt.sequence { name = "s", bt.action "tk_chase" })
    a:tick(0.1)
    a:tick(0.1)
    local r = cov:report()
    assert.same({ "walker", "walker (2)" }, { r[1].tree, r[2].tree })
    assert.equal(1, r[1].nodes[2].ticks)
    assert.equal("s/tk_chase", r[2].nodes[2].path)
    assert.equal(2, r[2].nodes[2].ticks)
  end)
end)

-- The lines of a file.
local function lines(path)
  local out = {}
  for l in io.lines(path) do out[#out + 1] = l end
  return out
end

local function count(list, part)
  local n = 0
  for _, l in ipairs(list) do
    if l:find(part, 1, true) then n = n + 1 end
  end
  return n
end

describe("the kit shares an agent with other subscribers", function()
  local path = os.tmpname()
  after_each(function() os.remove(path) end)

  it("a scenario beside bt.record and a game's subscription", function()
    local s = scenario { timeline = { { at = 3, set = { enemy = "wolf" } } } }
    local seen = {}
    s.agent:subscribe(function(_, events) seen[#seen + 1] = #events end)
    local rec = bt.record(path, { s.agent })
    s:run(4)
    rec:close()
    s:expect_aborted("tk_patrol", { at = 3 })
     :expect_running(3, "combat/fight/tk_chase")
    for n = 1, 4 do assert.equal(#s.ticks[n].events, seen[n]) end
    assert.equal(4, count(lines(path), '"t":"tick"'))
  end)

  it("coverage beside bt.record and a game's subscription", function()
    local cov = T.new_coverage()
    local a = bt.agent(bt.tree(combat()), { blackboard = { hp = 10 } })
    local rec = bt.record(path, { a })
    cov:add(a, "npc")
    local failures = 0
    local sub = a:subscribe(function(_, events)
      failures = failures + #events
    end, { status = "failure" })
    for _ = 1, 3 do a:tick(0.1) end
    rec:close()
    a:unsubscribe(sub)
    local counted = 0
    for _, n in ipairs(cov:report()[1].nodes) do
      counted = counted + n.failure
    end
    assert.is_true(failures > 0)
    assert.equal(failures, counted) -- both saw the same events
    assert.equal(3, cov:report()[1].nodes[1].ticks)
    assert.equal(3, count(lines(path), '"t":"tick"'))
  end)

  it("the arena records and measures coverage in one run", function()
    local cov = path .. ".json"
    local ok = os.execute(LUA .. " samples/arena.lua --no-map --ticks=5 " ..
                          "--record " .. path .. " --coverage " .. cov ..
                          " > /dev/null")
    assert.is_true(ok == true or ok == 0)
    local l = lines(path)
    assert.equal(272 * 5 + 8, count(l, '"t":"tick"')) -- (8 sentries sleep)
    local text = io.open(cov):read("*a")
    os.remove(cov)
    has(text, '"tree":"villager"')
  end)
end)

describe("the busted helper bonsai.test.busted", function()
  local dir = os.tmpname()
  local spec, report = dir .. "_spec.lua", dir .. ".json"
  setup(function()
    local f = assert(io.open(spec, "w"))
    f:write([[
local bt = require "bonsai"
local T = require "bonsai.test"
it("runs a tree whose condition never succeeds", function()
  T.scenario { options = { name = "ci_tree" },
    tree = bt.selector { bt.condition(function() return false end),
                         bt.action(function() return bt.SUCCESS end) },
  }:run(2)
end)
]])
    f:close()
  end)
  teardown(function()
    for _, p in ipairs { dir, spec, report } do os.remove(p) end
  end)

  -- busted on the spec above with the helper's options: output, status
  -- (under this Lua, with this build's module: .busted names build/'s).
  local function run(options)
    local p = io.popen("LUA_CPATH='" .. package.cpath .. "' " .. LUA ..
      " \"$(command -v busted)\" --ignore-lua --cpath='" .. package.cpath ..
      "' --helper=bonsai.test.busted -Xhelper " ..
      options .. " " .. spec .. " 2>&1; echo \"status=$?\"")
    local out = p:read("*a")
    p:close()
    return out, tonumber(out:match "status=(%d+)%s*$")
  end

  it("fails the run below the threshold, listing the gaps", function()
    local out, status = run("min=90,quiet")
    assert.equal(1, status, out)
    has(out, "1 success / 0 failures")
    has(out, "tree 'ci_tree' covers 80.0% of its outcomes (4 of 5), " ..
             "below 90%:")
    has(out, "selector/condition[1]: never succeeded")
    assert.falsy(out:find("Coverage of the trees", 1, true), "quiet")
  end)

  it("passes above it, prints the table and writes the report", function()
    local out, status = run("min=80,report=" .. report)
    assert.equal(0, status, out)
    has(out, "tree 'ci_tree': 4 of 5 outcomes covered (80.0%)")
    has(out, "bonsai.test: coverage report written to " .. report)
    has(io.open(report):read("*a"), '"tree":"ci_tree"')
  end)

  it("refuses an option it does not know", function()
    local out, status = run("mni=90")
    assert.equal(1, status, out)
    has(out, "unknown option 'mni=90' (min=P, report=FILE, tree=NAME, " ..
             "quiet)")
  end)
end)

describe("random worlds", function()
  it("draw the same numbers from the same seed on every Lua", function()
    local r = T.random(42)
    local got = {}
    for i = 1, 5 do got[i] = r:next() end
    -- x1 = 43 * 16807 mod (2^31 - 1), and so on (Park and Miller)
    assert.same({ 722701, 1409017472, 1054476435, 1550388001, 1952043756 },
                got)
    local a, b = T.random(7), T.random(7)
    for _ = 1, 100 do assert.equal(a:int(1, 6), b:int(1, 6)) end
  end)

  it("pass when the invariant holds in every history", function()
    local runs = T.property {
      tree = combat, blackboard = { hp = 10 },
      keys = { hp = T.int(0, 10), enemy = T.maybe(T.one_of { "a", "b" }) },
      ticks = 20, runs = 30, coverage = false,
      invariants = {
        ["never flees with hp >= 3"] = function(t)
          return not (t:is_running("tk_flee") and t.before.hp >= 3)
        end,
      },
    }
    assert.equal(30, runs)
  end)

  it("print the seed and the shrunk history of a broken one", function()
    local msg = raises(T.property, {
      tree = combat, blackboard = { hp = 10 },
      keys = { hp = T.int(0, 10), enemy = T.maybe(T.bool()),
               near = T.bool() },
      ticks = 30, runs = 50, seed = 5, coverage = false,
      invariants = {
        ["never attacks when hp < 5"] = function(t)
          return not (t:entered("tk_attack") and t.before.hp < 5)
        end,
      },
    })
    has(msg, "invariant 'never attacks when hp < 5' broken at tick")
    local first = tonumber(msg:match("%(seed (%d+);"))
    assert.is_true(first >= 5 and first < 55) -- one of the 50 runs
    has(msg, "shrunk history (")
    -- shrunk to the smallest hp that still breaks it, all at tick 1 but
    -- the enemy that starts the fight
    has(msg, "shrunk history (3 of")
    has(msg, "  tick 1: hp = 3\n")
    has(msg, "  tick 1: near = true\n")
    assert.truthy(msg:find("  tick %d+: enemy = false\n"))
    has(msg, "trace of ticks")
    local seed = tonumber(msg:match("replay with seed = (%d+)"))
    has(raises(T.property, {
      tree = combat, blackboard = { hp = 10 },
      keys = { hp = T.int(0, 10), enemy = T.maybe(T.bool()),
               near = T.bool() },
      ticks = 30, runs = 1, seed = seed, coverage = false,
      invariants = {
        ["never attacks when hp < 5"] = function(t)
          return not (t:entered("tk_attack") and t.before.hp < 5)
        end,
      },
    }), "(seed " .. seed .. ";")
  end)

  it("refuse keys without generators", function()
    has(raises(T.property, { tree = combat, keys = { hp = 3 },
                             invariants = { x = function() return true end } }),
        "key 'hp' needs a generator")
  end)
end)

describe("the kit's annotations (lua/bonsai/test/meta.lua)", function()
  local prefix = { T = "T.", Scenario = "Scenario:", Tick = "Tick:",
                   Coverage = "Coverage:", Random = "Random:" }
  local function annotated()
    local names = {}
    for line in io.lines("lua/bonsai/test/meta.lua") do
      local t, k = line:match("^function%s+([%a_][%w_]*)[.:]([%a_][%w_]*)%s*%(")
      if not t then t, k = line:match("^([%a_][%w_]*)%.([%a_][%w_]*)%s*=") end
      if t and prefix[t] then names[prefix[t] .. k] = true end
    end
    return names
  end
  local function actual()
    local names = {}
    local function add(pre, t, functions_only)
      for k, v in pairs(t) do
        if type(k) == "string" and k:sub(1, 1) ~= "_" and
           (not functions_only or type(v) == "function") then
          names[pre .. k] = true
        end
      end
    end
    add("T.", T)
    add("Scenario:", T.Scenario, true)
    add("Tick:", T.Tick, true)
    add("Coverage:", getmetatable(T.coverage).__index, true)
    add("Random:", getmetatable(T.random(1)).__index, true)
    return names
  end

  it("annotates every public name of the kit, and only those", function()
    local meta, have, missing, extra = annotated(), actual(), {}, {}
    for k in pairs(have) do
      if not meta[k] then missing[#missing + 1] = k end
    end
    for k in pairs(meta) do
      if not have[k] then extra[#extra + 1] = k end
    end
    table.sort(missing)
    table.sort(extra)
    assert.same({}, missing, "not annotated: " .. table.concat(missing, ", "))
    assert.same({}, extra, "annotated, not in the kit: " ..
                table.concat(extra, ", "))
  end)

  it("is valid Lua that never runs the kit", function()
    local chunk = assert(loadfile("lua/bonsai/test/meta.lua", "t", {}))
    assert.equal("table", type(chunk()))
  end)
end)

