-- agent_spec: agents (fields, clock, status, running path, abort, reset,
-- interrupts), the priority section of bt.tree, tree:dump, and the basic
-- blackboard (fields, get/set/has, parent fallback).
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local mathtype = luaver.mathtype
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

describe("agent fields", function()
  it("has its owner, blackboard and tree", function()
    local npc = { name = "guard" }
    local tree = bt.tree(bt.wait { seconds = 1 })
    local a = bt.agent(tree, { owner = npc })
    assert.equal(npc, a.owner)
    assert.equal(tree, a.tree)
    assert.equal("userdata", type(a.bb))
    assert.matches("^bonsai.blackboard", tostring(a.bb))
    assert.is_nil(bt.agent(tree).owner)
  end)

  it("gives each agent its own blackboard unless one is shared", function()
    local tree = bt.tree(bt.wait { seconds = 1 })
    local a, b = bt.agent(tree), bt.agent(tree)
    a.bb.x = 1
    assert.is_nil(b.bb.x)
    local shared = bt.blackboard { x = 2 }
    local c = bt.agent(tree, { blackboard = shared })
    local d = bt.agent(tree, { blackboard = shared })
    assert.equal(shared, c.bb)
    d.bb.x = 3
    assert.equal(3, c.bb.x)
  end)

  it("copies a plain blackboard table into a new blackboard", function()
    local inventory = { "sword" }
    local init = { hp = 100, name = "orc", alive = true, inventory = inventory }
    local a = bt.agent(bt.tree(bt.wait { seconds = 1 }), { blackboard = init })
    assert.equal("userdata", type(a.bb))
    assert.equal(100, a.bb.hp)
    assert.equal("orc", a.bb.name)
    assert.is_true(a.bb.alive)
    assert.equal(inventory, a.bb.inventory)
    a.bb.hp = 50
    assert.equal(100, init.hp)
  end)

  it("reads parent = in a plain blackboard table as bt.blackboard does",
     function()
    local world = bt.blackboard { alarm = true }
    local a = bt.agent(bt.tree(bt.wait { seconds = 1 }),
                       { blackboard = { parent = world, hp = 1 } })
    assert.equal(1, a.bb.hp)
    assert.is_true(a.bb.alarm)
    assert.is_true(a.bb:has("alarm"))
    world.alarm = false
    assert.is_false(a.bb.alarm)
  end)

  it("keeps its clock in a.time, the sum of dt", function()
    local a = bt.agent(bt.tree(bt.wait { seconds = 100 }))
    assert.equal(0, a.time)
    a:tick(0.25)
    a:tick(0.5)
    a:tick()
    a:tick(2)
    assert.equal(2.75, a.time)
  end)

  it("holds owner, bb and its state; a.time and a.tree come from __index",
     function()
    local tree = bt.tree(bt.wait { seconds = 5 })
    local npc = {}
    local a = bt.agent(tree, { owner = npc })
    a:tick(2)
    local keys = {}
    for k in pairs(a) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    assert.same({ "1", "bb", "owner" }, keys)
    assert.is_nil(rawget(a, "time"))
    assert.is_nil(rawget(a, "tree"))
    assert.equal(2, a.time)
    assert.equal(tree, a.tree)
    assert.is_nil(a.no_such_field)
    assert.equal("function", type(a.tick))
  end)

  it("answers nil when its __index is called by hand on something else",
     function()
    local tree = bt.tree(bt.wait { seconds = 5 })
    local a = bt.agent(tree)
    a:tick(2)
    local index = getmetatable(a).__index
    assert.is_nil(index(a))                     -- no key
    assert.equal(2, index(a, "time", 1, 2, 3))  -- extra arguments
    assert.equal(tree, index(a, "tree", "x"))
    assert.is_nil(index({}, "time"))            -- a table that is no agent
    assert.is_nil(index({ {} }, "tree"))
    assert.is_nil(index(nil, "tree"))
    assert.is_nil(index(5, "time"))
    assert.equal(a.tick, index(42, "tick"))     -- methods are shared
  end)

  it("lets a field set on the agent table shadow time and tree", function()
    local tree = bt.tree(bt.wait { seconds = 5 })
    local a = bt.agent(tree)
    a.time = "mine"
    a:tick(1)
    assert.equal("mine", a.time) -- a plain field now: the clock goes on
    a.time = nil
    assert.equal(1, a.time)
  end)

  it("adds dt to the clock before the tree runs", function()
    local seen = {}
    local a = bt.agent(bt.tree(bt.action(function(agent)
      seen[#seen + 1] = agent.time
      return bt.RUNNING
    end)))
    a:tick(1)
    a:tick(0.5)
    assert.same({ 1, 1.5 }, seen)
  end)

  it("rejects a negative dt", function()
    local a = bt.agent(bt.tree(bt.wait { seconds = 1 }, { name = "T" }))
    local ok, msg = pcall(a.tick, a, -1)
    assert.is_false(ok)
    assert.matches("dt must be a number >= 0, got %-1", msg)
    assert.equal(0, a.time)
  end)

  it("takes dt as a number, nil meaning 0, and refuses other values",
     function()
    local a = bt.agent(bt.tree(bt.wait { seconds = 9 }, { name = "T" }))
    a:tick()
    a:tick(nil)
    a:tick("1.5")
    assert.equal(1.5, a.time)
    local ok, msg = pcall(a.tick, a, "soon")
    assert.is_false(ok)
    assert.matches("dt must be a number >= 0, got soon", msg)
    ok = pcall(a.tick, a, {})
    assert.is_false(ok)
    assert.equal(1.5, a.time)
    assert.equal("running", a:tick(0))
  end)

  it("names the tree in tostring", function()
    local a = bt.agent(bt.tree(bt.wait { seconds = 1 }, { name = "T" }))
    assert.equal("bonsai.agent of 'T' (idle)", tostring(a))
    a:tick(0)
    assert.equal("bonsai.agent of 'T' (running)", tostring(a))
  end)

  it("rejects what is not a tree", function()
    assert.has_error(function() bt.agent({}) end)
    assert.has_error(function() bt.agent(bt.sequence { bt.wait(1) }) end)
  end)
end)

describe("a:status()", function()
  it("is idle before the first tick, then the root's last status",
     function()
    local a = bt.agent(bt.tree(t:action("A", "RSF")))
    assert.equal("idle", a:status())
    assert.equal(bt.IDLE, a:status())
    a:tick(1)
    assert.equal("running", a:status())
    a:tick(1)
    assert.equal("success", a:status())
    a:tick(1)
    assert.equal("failure", a:status())
  end)

  it("is aborted after a:abort() of a running tree", function()
    local a = bt.agent(bt.tree(t:action("A", "R")))
    a:tick(1)
    a:abort()
    assert.equal("aborted", a:status())
  end)
end)

describe("a:running()", function()
  it("lists the running path, outermost first, decorators included",
     function()
    local a = bt.agent(bt.tree(bt.sequence {
      t:action("A", "S"),
      bt.invert { name = "not", bt.repeater { times = 2,
        bt.selector { t:action("B", "F"), t:action("C", "R") } } },
    }))
    a:tick(1)
    assert.same({ "sequence", "not", "repeater[1]", "selector[1]", "C" },
                a:running())
  end)

  it("lists every running path of a parallel in tree order", function()
    local a = bt.agent(bt.tree(bt.parallel {
      t:action("A", "R"), t:action("B", "S"),
      bt.sequence { name = "s", t:action("C", "R") },
    }))
    a:tick(1)
    assert.same({ "parallel", "A", "s", "C" }, a:running())
  end)

  it("is empty when nothing runs", function()
    local a = bt.agent(bt.tree(t:action("A", "RS")))
    assert.same({}, a:running())
    a:tick(1)
    assert.same({ "A" }, a:running())
    a:tick(1)
    assert.same({}, a:running())
  end)
end)

describe("a:abort()", function()
  it("aborts every running node, deepest first", function()
    local a = bt.agent(bt.tree(bt.parallel {
      bt.sequence { t:action("A", "S"), bt.sequence { t:action("B", "R") } },
      bt.invert(t:action("C", "R")),
    }))
    t:step(a, 1)
    a:abort()
    assert.equal("abort B; abort C", t:take())
    local st = trace.statuses(a)
    assert.equal("aborted", st.parallel)
    assert.equal("aborted", st["sequence[1]"])
    assert.equal("aborted", st["invert[2]"])
    assert.equal("success", st.A)
    assert.same({}, a:running())
  end)

  it("calls abort callbacks of leaves, exit(aborted) for leaves without",
     function()
    local a = bt.agent(bt.tree(bt.parallel {
      t:action("A", "R"), t:action("B", "R", { noabort = true }),
      t:action("C", "R"),
    }))
    t:step(a, 1)
    a:abort()
    assert.equal("abort A; exit B aborted; abort C", t:take())
  end)

  it("makes the next tick start from the root", function()
    local a = bt.agent(bt.tree(bt.sequence {
      t:action("A", "S"), t:action("B", "R"),
    }))
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
  end)

  it("does nothing when nothing runs", function()
    local a = bt.agent(bt.tree(t:action("A", "S")))
    a:abort()
    assert.equal("", t:take())
    a:tick(1)
    t:take()
    a:abort()
    assert.equal("", t:take())
  end)

  it("keeps the clock and the blackboard", function()
    local a = bt.agent(bt.tree(t:action("A", "R")),
                       { blackboard = { hp = 3 } })
    a:tick(2)
    a:abort()
    assert.equal(2, a.time)
    assert.equal(3, a.bb.hp)
  end)

  it("may not be called from the agent's own leaf", function()
    local a
    a = bt.agent(bt.tree(bt.action(function()
      a:abort()
      return true
    end), { name = "T" }))
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.matches("^tree 'T' node 'action': .*agent is already ticking$", msg)
  end)
end)

describe("a:reset()", function()
  it("aborts the running nodes and makes the agent idle", function()
    local a = bt.agent(bt.tree(bt.sequence {
      t:action("A", "S"), t:action("B", "R"),
    }))
    t:step(a, 1)
    a:reset()
    assert.equal("abort B", t:take())
    assert.equal("idle", a:status())
    for name, status in pairs(trace.statuses(a)) do
      assert.equal("idle", status, name)
    end
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
  end)

  it("clears counters and timers", function()
    local a = bt.agent(bt.tree(bt.sequence {
      bt.force_success(bt.limit { times = 1, t:action("L", "S") }),
      bt.force_success(bt.cooldown { seconds = 100, t:action("C", "S") }),
      bt.run_once(t:action("O", "S")),
    }))
    assert.equal("success | enter L; tick L; exit L success; "
                 .. "enter C; tick C; exit C success; "
                 .. "enter O; tick O; exit O success", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
    a:reset()
    assert.equal("success | enter L; tick L; exit L success; "
                 .. "enter C; tick C; exit C success; "
                 .. "enter O; tick O; exit O success", t:step(a, 1))
  end)

  it("keeps the blackboard and the clock", function()
    local a = bt.agent(bt.tree(t:action("A", "R")),
                       { blackboard = { hp = 3 } })
    a:tick(1.5)
    a:reset()
    assert.equal(1.5, a.time)
    assert.equal(3, a.bb.hp)
    a:tick(1)
    assert.equal(2.5, a.time)
  end)

  it("restarts a timeout's timer", function()
    local a = bt.agent(bt.tree(bt.timeout { seconds = 2, t:action("A", "R") }))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    a:reset()
    assert.equal("abort A", t:take())
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("failure | abort A", t:step(a, 1))
  end)
end)

describe("interrupts", function()
  it("are called with (agent, bb) at the start of every tick", function()
    local calls = {}
    local a = bt.agent(bt.tree(t:action("A", "R")))
    a:add_interrupt(function(agent, bb)
      calls[#calls + 1] = { agent, bb, t:take() }
      return false
    end)
    a:tick(1)
    a:tick(1)
    assert.equal(2, #calls)
    assert.equal(a, calls[1][1])
    assert.equal(a.bb, calls[1][2])
    assert.equal("", calls[1][3])                  -- before the tree
    assert.equal("enter A; tick A", calls[2][3])   -- the first tick's log
  end)

  it("abort everything and make the tick return aborted", function()
    local fire = false
    local a = bt.agent(bt.tree(bt.sequence {
      t:action("A", "S"), t:action("B", "R"),
    }))
    a:add_interrupt(function() return fire end)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    fire = true
    assert.equal("aborted | abort B", t:step(a, 1))
    assert.equal("aborted", a:status())
    assert.equal(2, a.time)
    assert.equal("aborted |", t:step(a, 1))
    fire = false
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
  end)

  it("are checked in order until one fires", function()
    local calls = {}
    local a = bt.agent(bt.tree(t:action("A", "R")))
    a:add_interrupt(function() calls[#calls + 1] = 1; return false end)
    a:add_interrupt(function() calls[#calls + 1] = 2; return "yes" end)
    a:add_interrupt(function() calls[#calls + 1] = 3; return true end)
    assert.equal("aborted |", t:step(a, 1))
    assert.same({ 1, 2 }, calls)
  end)

  it("are removed by remove_interrupt", function()
    local function always() return true end
    local a = bt.agent(bt.tree(t:action("A", "R")))
    a:add_interrupt(always)
    assert.equal("aborted |", t:step(a, 1))
    assert.is_true(a:remove_interrupt(always))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_false(a:remove_interrupt(always))
  end)

  it("keep the others when one is removed", function()
    local calls = {}
    local function f1() calls[#calls + 1] = 1 end
    local function f2() calls[#calls + 1] = 2 end
    local function f3() calls[#calls + 1] = 3 end
    local a = bt.agent(bt.tree(t:action("A", "R")))
    a:add_interrupt(f1)
    a:add_interrupt(f2)
    a:add_interrupt(f3)
    a:remove_interrupt(f2)
    a:tick(1)
    assert.same({ 1, 3 }, calls)
  end)

  it("must be functions", function()
    local a = bt.agent(bt.tree(t:action("A", "R")))
    assert.has_error(function() a:add_interrupt(true) end)
  end)

  it("raising an error makes the tick raise, after aborting every "
     .. "running node", function()
    local fail = false
    local function alarm() if fail then error("alarm", 0) end end
    local a = bt.agent(bt.tree(bt.parallel {
      bt.sequence { t:action("A", "S"), t:action("B", "R") },
      t:action("C", "R"),
    }, { name = "I" }))
    a:add_interrupt(alarm)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B; "
                 .. "enter C; tick C", t:step(a, 1))
    fail = true
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 'I': alarm", msg)
    assert.equal("abort B; abort C", t:take())
    assert.equal("aborted", a:status())
    assert.same({}, a:running())
    assert.equal(2, a.time)
    -- the agent can be ticked again, from the root
    assert.is_true(a:remove_interrupt(alarm))
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B; "
                 .. "enter C; tick C", t:step(a, 1))
  end)

  it("raising a non-string error makes the tick raise too", function()
    local a = bt.agent(bt.tree(t:action("A", "R"), { name = "I" }))
    a:add_interrupt(function() error({ code = 1 }) end)
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.matches("^tree 'I': ", msg)
    assert.equal("", t:take())
  end)
end)

describe("the priority section", function()
  local function guard_tree()
    return bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") }, {
      name = "P",
      priority = {
        bt.filter { conditions = { t:condition("D", "F") },
                    t:action("Flee", "R") },
        bt.filter { name = "heal", conditions = { t:condition("H", "F") },
                    t:action("Heal", "R") },
      },
    })
  end

  it("checks its filters before the root every tick", function()
    local a = bt.agent(guard_tree())
    assert.equal("running | tick D; tick H; enter A; tick A; exit A success; "
                 .. "enter B; tick B", t:step(a, 1))
    assert.equal("running | tick D; tick H; tick B", t:step(a, 1))
    assert.same({ "sequence", "B" }, a:running())
  end)

  it("runs the first filter whose conditions pass, aborting the root",
     function()
    local a = bt.agent(guard_tree())
    t:step(a, 1)
    t:set("H", "S")
    assert.equal("running | tick D; tick H; enter Heal; tick Heal; abort B",
                 t:step(a, 1))
    assert.same({ "heal", "Heal" }, a:running())
    assert.equal("running | tick D; tick H; tick Heal", t:step(a, 1))
  end)

  it("lets a higher filter interrupt a lower one, never the root",
     function()
    local a = bt.agent(guard_tree())
    t:set("H", "S")
    assert.equal("running | tick D; tick H; enter Heal; tick Heal",
                 t:step(a, 1))
    t:set("D", "S")
    assert.equal("running | tick D; enter Flee; tick Flee; abort Heal",
                 t:step(a, 1))
    assert.same({ "priority[1]", "Flee" }, a:running())
  end)

  it("gives the root back when the filter's conditions fail", function()
    local a = bt.agent(guard_tree())
    t:set("D", "S")
    assert.equal("running | tick D; enter Flee; tick Flee", t:step(a, 1))
    t:set("D", "F")
    assert.equal("running | tick D; abort Flee; tick H; enter A; tick A; "
                 .. "exit A success; enter B; tick B", t:step(a, 1))
  end)

  it("returns the status of the branch that ran", function()
    local a = bt.agent(guard_tree())
    t:set("D", "S")
    t:set("Flee", "S")
    assert.equal("success | tick D; enter Flee; tick Flee; exit Flee success",
                 t:step(a, 1))
    assert.equal("success", a:status())
    t:set("D", "F")
    t:set("A", "F")
    assert.equal("failure | tick D; tick H; enter A; tick A; exit A failure",
                 t:step(a, 1))
  end)

  it("aborts the root when a filter's conditions pass, even if its child "
     .. "fails at once", function()
    local a = bt.agent(guard_tree())
    t:step(a, 1)
    t:set("D", "S")
    t:set("Flee", "F")
    assert.equal("failure | tick D; enter Flee; tick Flee; "
                 .. "exit Flee failure; abort B", t:step(a, 1))
    assert.equal("failure", a:status())
    assert.same({}, a:running())
    -- the root starts over once the filter's conditions fail again
    t:set("D", "F")
    assert.equal("running | tick D; tick H; enter A; tick A; exit A success; "
                 .. "enter B; tick B", t:step(a, 1))
  end)

  it("is left out of node paths", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, {
      name = "P",
      priority = {
        bt.filter { conditions = { t:condition("D", "S") },
                    bt.action(function() error("fled", 0) end) },
      },
    })
    local a = bt.agent(tree)
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 'P' node 'priority[1]/action[2]': fled", msg)
  end)

  it("takes only filters", function()
    assert.error_matches(function()
      bt.tree(t:action("A", "R"), {
        name = "P", priority = { bt.sequence { t:action("B", "S") } },
      })
    end, "a priority branch must be a filter", 1, true)
    assert.error_matches(function()
      bt.tree(t:action("A", "R"), { name = "P", priority = 3 })
    end, "tree 'P': 'priority' must be a list of filters", 1, true)
  end)
end)

describe("tree:dump", function()
  local function sample()
    return bt.tree(bt.sequence {
      t:action("A", "S"),
      bt.repeater { name = "rep", times = 3, t:action("B", "R") },
      bt.parallel { success = "one", bt.wait { seconds = 2 },
        bt.timeout { seconds = 1.5, bt.action(function() end) } },
    }, { name = "D" })
  end

  it("draws the tree, one node a line", function()
    assert.equal(table.concat({
      "sequence",
      "  A (action)",
      "  rep (repeater x3)",
      "    B (action)",
      "  parallel[3] success>=1 failure>=1",
      "    wait[1] 2s",
      "    timeout[2] 1.5s",
      "      action[1]",
      "",
    }, "\n"), sample():dump())
  end)

  it("shows an agent's statuses", function()
    local tree = sample()
    local a = bt.agent(tree)
    a:tick(1)
    assert.equal(table.concat({
      "sequence [running]",
      "  A (action) [success]",
      "  rep (repeater x3) [running]",
      "    B (action) [running]",
      "  parallel[3] success>=1 failure>=1 [idle]",
      "    wait[1] 2s [idle]",
      "    timeout[2] 1.5s [idle]",
      "      action[1] [idle]",
      "",
    }, "\n"), tree:dump(a))
  end)

  it("refuses an agent of another tree", function()
    local a = bt.agent(sample())
    assert.error_matches(function() sample():dump(a) end,
                         "agent of another tree", 1, true)
  end)

  it("has the tree's name and size", function()
    local tree = sample()
    assert.equal("D", tree.name)
    assert.equal(8, tree.size)
    assert.equal("tree", bt.tree(bt.wait(1)).name)
    assert.equal("w", bt.tree(bt.wait { name = "w", seconds = 1 }).name)
  end)
end)

describe("blackboard", function()
  it("stores any Lua value under a key; nil clears it", function()
    local bb = bt.blackboard()
    local tab, fn, co = {}, print, coroutine.create(function() end)
    bb.i = 42
    bb.f = 2.5
    bb.s = "text"
    bb.yes = true
    bb.no = false
    bb.tab = tab
    bb.fn = fn
    bb.co = co
    bb.ud = bb
    assert.equal(42, bb.i)
    assert.equal("integer", mathtype(bb.i))
    assert.equal(2.5, bb.f)
    assert.equal("float", mathtype(bb.f))
    assert.equal("text", bb.s)
    assert.is_true(bb.yes)
    assert.is_false(bb.no)
    assert.equal(tab, bb.tab)
    assert.equal(fn, bb.fn)
    assert.equal(co, bb.co)
    assert.equal(bb, bb.ud)
    bb.tab = nil
    assert.is_nil(bb.tab)
    assert.is_false(bb:has("tab"))
    assert.is_nil(bb.missing)
  end)

  it("replaces a value of one type by another", function()
    local bb = bt.blackboard()
    bb.x = {}
    bb.x = 1
    assert.equal(1, bb.x)
    bb.x = "s"
    assert.equal("s", bb.x)
    local tab = {}
    bb.x = tab
    assert.equal(tab, bb.x)
  end)

  it("has get, set and has", function()
    local bb = bt.blackboard { hp = 10 }
    assert.equal(10, bb:get("hp"))
    assert.equal(10, bb:get("hp", 99))
    assert.equal(99, bb:get("mp", 99))
    assert.is_nil(bb:get("mp"))
    bb:set("mp", 5)
    assert.equal(5, bb.mp)
    assert.is_true(bb:has("mp"))
    assert.is_false(bb:has("sp"))
    bb:set("mp", nil)
    assert.is_false(bb:has("mp"))
    bb.off = false
    assert.is_false(bb:get("off", true))
    assert.is_true(bb:has("off"))
  end)

  it("keeps keys named like its methods apart", function()
    local bb = bt.blackboard()
    bb:set("get", 4)
    assert.equal(4, bb:get("get"))
    assert.equal("function", type(bb.get))
  end)

  it("takes only string keys", function()
    local bb = bt.blackboard()
    assert.has_error(function() bb[1] = 2 end)
    assert.has_error(function() bb:set(1, 2) end)
    assert.is_nil(bb[1])
  end)

  it("falls back to its parent", function()
    local tab = {}
    local parent = bt.blackboard { x = 1, tab = tab }
    local child = bt.blackboard { parent = parent, y = 2 }
    assert.equal(1, child.x)
    assert.equal(2, child.y)
    assert.equal(tab, child.tab)
    assert.is_true(child:has("x"))
    assert.equal(1, child:get("x", 9))
    assert.is_nil(parent.y)
    child.x = 5                      -- shadows the parent's x
    assert.equal(5, child.x)
    assert.equal(1, parent.x)
    child.x = nil                    -- the parent's x shows again
    assert.equal(1, child.x)
    parent.x = 7
    assert.equal(7, child.x)
    parent.x = nil
    assert.is_nil(child.x)
    assert.is_false(child:has("x"))
  end)

  it("is shared by leaves through a.bb", function()
    local bb = bt.blackboard { n = 0 }
    local tree = bt.tree(bt.action(function(_, b)
      b.n = b.n + 1
      return true
    end))
    bt.agent(tree, { blackboard = bb }):tick(1)
    bt.agent(tree, { blackboard = bb }):tick(1)
    assert.equal(2, bb.n)
  end)

  it("can be a child of another agent's blackboard", function()
    local world = bt.blackboard { alarm = false }
    local a = bt.agent(bt.tree(bt.condition(function(_, bb)
      return bb.alarm
    end)), { blackboard = bt.blackboard { parent = world } })
    assert.equal("failure", a:tick(1))
    world.alarm = true
    assert.equal("success", a:tick(1))
  end)
end)
