-- reload_spec: hot reload (API.md "Hot reload"). tree:reload(new_root)
-- swaps the tree's version; each agent switches at its next tick, where
-- nodes are matched by their path of names (an unnamed node's default
-- name, like "action[2]", holds its place): a running node that still
-- exists keeps running with its state and the new callbacks, a running node
-- that is gone (or changed type) is aborted. Then tasks across reloads,
-- named leaves, many agents and many reloads, and the file side: bt.load,
-- bt.reload, bt.watch and bt.poll on files under os.tmpname() paths.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tick_error = trace.agent_of, trace.tick_error

-- Files -------------------------------------------------------------------

-- A new empty directory for one spec, removed after it.
local made = {}
local function tmpdir()
  local base = os.tmpname()
  local dir = base .. ".d"
  assert(os.execute("mkdir '" .. dir .. "'"))
  made[#made + 1] = base
  return dir
end

after_each(function()
  for _, base in ipairs(made) do
    os.execute("rm -rf '" .. base .. ".d'")
    os.remove(base)
  end
  made = {}
end)

-- Writes text to path. Every write makes the file longer than the last
-- one, so a rewrite changes the size as well as the modification time.
local writes = 0
local function write(path, text)
  writes = writes + 1
  local f = assert(io.open(path, "w"))
  f:write(text, "\n-- ", ("."):rep(writes), "\n")
  f:close()
end

-- Registers a trace leaf as 'name' (logged under that name), so that tree
-- files can use it as bt.action 'name'.
local function register(name, script, opts)
  bt.register(name, t:leafdef(name, script, opts))
end

describe("tree:reload", function()
  it("returns true; agents switch at their next tick", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_true(tree:reload(bt.sequence { t:action("B", "R") }))
    assert.equal("", t:take())                 -- nothing runs at reload
    assert.same({ "sequence", "A" }, a:running())
    assert.equal("running | abort A; enter B; tick B", t:step(a, 1))
    assert.same({ "sequence", "B" }, a:running())
    assert.equal(tree, a.tree)
  end)

  it("shows the new version in tree:dump and tree.size", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, { name = "T" })
    assert.is_true(tree:reload(bt.selector {
      t:action("A", "F"), t:action("B", "R"),
    }))
    assert.equal("selector\n  A (action)\n  B (action)\n", tree:dump())
    assert.equal(3, tree.size)
    assert.equal("T", tree.name)
  end)

  it("moves agents that never ticked and makes new agents on the new "
     .. "version", function()
    local tree = bt.tree(t:action("A", "R"), { name = "T" })
    local idle = bt.agent(tree)
    assert.is_true(tree:reload(t:action("B", "R")))
    assert.equal("running | enter B; tick B", t:step(idle, 1))
    assert.equal("running | enter B; tick B", t:step(bt.agent(tree), 1))
  end)

  it("moves every agent, whichever version it was on", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, { name = "T" })
    local a, b = bt.agent(tree), bt.agent(tree)
    t:step(a, 1)
    t:step(b, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("A", "R"),
                                             t:action("B", "S") }))
    assert.equal("running | tick A", t:step(a, 1))   -- a is on version 2
    assert.is_true(tree:reload(bt.sequence { t:action("X", "S"),
                                             t:action("A", "R") }))
    assert.equal("running | tick A", t:step(b, 1))   -- 1 -> 3
    assert.equal("running | tick A", t:step(a, 1))   -- 2 -> 3
  end)

  it("keeps the blackboard, the clock and the owner", function()
    local inventory = {}
    local npc = {}
    local tree = bt.tree(t:action("A", "R"), { name = "T" })
    local a = bt.agent(tree, { owner = npc,
                               blackboard = { hp = 7, inv = inventory } })
    local bb = a.bb
    a:tick(1.5)
    bb.target = "door"
    assert.is_true(tree:reload(bt.sequence { t:action("A", "R") }))
    a:tick(1)
    assert.equal(bb, a.bb)
    assert.equal(7, a.bb.hp)
    assert.equal(inventory, a.bb.inv)
    assert.equal("door", a.bb.target)
    assert.equal(2.5, a.time)
    assert.equal(npc, a.owner)
  end)

  it("returns nil and a message on a definition error, leaving the old "
     .. "version running", function()
    local tree = bt.tree(bt.sequence { t:action("A", "RRS") }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    local ok, msg = tree:reload(bt.sequence { bt.repeater {} })
    assert.is_nil(ok)
    assert.equal("tree 'T': sequence/repeater[1]: 'repeater' needs a child",
                 msg)
    ok, msg = tree:reload(bt.sequence { bt.action "reload.not.registered" })
    assert.is_nil(ok)
    assert.equal("tree 'T': sequence/reload.not.registered: no leaf "
                 .. "registered as 'reload.not.registered'", msg)
    ok, msg = tree:reload(42)
    assert.is_nil(ok)
    assert.matches("^tree 'T': ", msg)
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("sequence\n  A (action)\n", tree:dump())
  end)

  it("takes the version of another tree", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    local other = bt.tree(bt.sequence { t:action("B", "S"),
                                        t:action("A", "R") }, { name = "O" })
    assert.is_true(tree:reload(other))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("T", tree.name)
  end)

  it("leaves alone the agents of a tree that shares the replaced version",
     function()
    -- tree takes other's version; then other is reloaded: the version
    -- tree runs is replaced in other only, so tree's agents stay on it
    local other = bt.tree(bt.sequence { t:action("A", "R") }, { name = "O" })
    local tree = bt.tree(bt.sequence { t:action("X", "R") }, { name = "T" })
    assert.is_true(tree:reload(other))
    local a, b = bt.agent(tree), bt.agent(other)
    t:step(a, 1)
    t:step(b, 1)
    t:take()
    assert.is_true(other:reload(bt.sequence { t:action("B", "R") }))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("running | abort A; enter B; tick B", t:step(b, 1))
    assert.equal("sequence\n  A (action)\n", tree:dump())
  end)

  it("does not migrate an agent in the middle of its tick", function()
    local tree
    local a = agent_of(bt.sequence {
      t:action("A", "S"),
      bt.action(function()
        t:add("reload")
        assert(tree:reload(bt.sequence { t:action("A", "S"),
                                         t:action("B", "R") }))
        return bt.RUNNING
      end),
    })
    tree = a.tree
    assert.equal("running | enter A; tick A; exit A success; reload",
                 t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
  end)
end)

describe("holding agents on their versions", function()
  -- Three agents of one tree running B; a function to read each one's
  -- version (through tree:dump's leaf names: A..B is the first version).
  local function three()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") },
                         { name = "T" })
    local list = { bt.agent(tree), bt.agent(tree), bt.agent(tree) }
    for _, a in ipairs(list) do
      assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                   t:step(a, 1))
    end
    return tree, list
  end

  it("tree:hold(true): a reload makes the version, no agent takes it",
     function()
    local tree, list = three()
    assert.is_false(tree:held())
    tree:hold(true)
    assert.is_true(tree:held())
    assert.is_true(tree:reload(bt.sequence { t:action("C", "R"),
                                             t:action("B", "R") }))
    for _ = 1, 2 do -- tick by tick, on either path (bt.tick_all, a:tick)
      assert.is_nil(bt.tick_all(list, 1))
      assert.equal("tick B; tick B; tick B", t:take())
      assert.equal("running | tick B", t:step(list[1], 1))
    end
    local late = bt.agent(tree) -- a new agent starts on the new version
    assert.equal("running | enter C; tick C", t:step(late, 1))
    tree:hold(false)
    assert.is_false(tree:held())
    assert.is_nil(bt.tick_all(list, 1)) -- each switches, B kept
    assert.equal("tick B; tick B; tick B", t:take())
    assert.is_true(tree:reload(bt.sequence { t:action("C", "R") }))
    assert.equal("running | abort B; enter C; tick C", t:step(list[2], 1))
  end)

  it("a:pass(true) lets one agent through, until the hold ends",
     function()
    local tree, list = three()
    tree:hold(true)
    list[2]:pass(true)
    assert.is_true(list[2]:passes())
    assert.is_false(list[1]:passes())
    assert.is_true(tree:reload(bt.sequence { t:action("C", "R") }))
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal("tick B; abort B; enter C; tick C; tick B", t:take())
    tree:hold(false) -- the passes go with the hold
    assert.is_false(list[2]:passes())
    tree:hold(true)
    assert.is_true(tree:reload(bt.sequence { t:action("D", "R") }))
    assert.equal("running | tick C", t:step(list[2], 1))
    assert.equal("running | tick B", t:step(list[1], 1))
    tree:hold(false)
    assert.equal("running | abort B; enter D; tick D", t:step(list[1], 1))
    assert.equal("running | abort C; enter D; tick D", t:step(list[2], 1))
  end)

  it("an agent's own hold and its tree's compose", function()
    local tree, list = three()
    local a = list[1]
    a:hold(true)
    tree:hold(true)
    a:pass(true) -- a pass does not undo the agent's own hold
    assert.is_true(tree:reload(bt.sequence { t:action("C", "R") }))
    assert.equal("running | tick B", t:step(a, 1))
    tree:hold(false)
    assert.equal("running | tick B", t:step(a, 1))
    assert.is_true(a:held())
    tree:hold(true)
    a:hold(false) -- its tree holds it now
    assert.equal("running | tick B", t:step(a, 1))
    a:pass(true)
    assert.equal("running | abort B; enter C; tick C", t:step(a, 1))
    tree:hold(false)
  end)

  it("keeps held agents on the LuaJIT path's stepped ticks", function()
    if not bt.config().ffi then
      pending("the LuaJIT path is off here (not LuaJIT, or BONSAI_FFI=0)")
      return
    end
    local stats = require("bonsai.core")._step.stats
    local function root(leaf) -- (no abort callback: a tree that steps)
      return bt.sequence { bt.condition(function() return true end),
                           bt.action(leaf) }
    end
    local seen = {}
    local function v(n)
      return function() seen[#seen + 1] = n; return "running" end
    end
    local tree = bt.tree(root(v(1)))
    local list = { bt.agent(tree), bt.agent(tree), bt.agent(tree) }
    bt.tick_all(list, 1)
    list[1]:hold(true)
    tree:hold(true)
    list[3]:pass(true)
    assert.is_true(tree:reload(root(v(2))))
    bt.tick_all(list, 1) -- (the switch of 3 is not stepped: it may abort)
    local before = stats()
    seen = {}
    for _ = 1, 3 do bt.tick_all(list, 1) end
    assert.equal(9, stats() - before) -- every tick, the held ones' too
    assert.same({ 1, 1, 2, 1, 1, 2, 1, 1, 2 }, seen)
  end)

  it("refuses a call without its argument, or on another value", function()
    local tree, list = three()
    assert.has_error(function() tree:hold() end)
    assert.has_error(function() list[1]:pass() end)
    assert.has_error(function() list[1]:hold() end) -- (held it, before)
    assert.has_error(function() tree.hold({}, true) end)
    assert.has_error(function() list[1].pass(tree, true) end)
  end)
end)

describe("a running node that still exists", function()
  it("is not entered again and keeps running", function()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("A", "S"),
                                             t:action("B", "R") }))
    assert.equal("running | tick B", t:step(a, 1))
    assert.same({ "sequence", "B" }, a:running())
  end)

  it("uses the new version's callbacks and arguments", function()
    local got
    local function def(version)
      return bt.sequence { bt.named("walk", bt.action({
        enter = function() t:add("enter v" .. version) end,
        tick = function(_, _, args)
          got = args
          t:add("tick v" .. version)
          return version == 1 and bt.RUNNING or bt.SUCCESS
        end,
        exit = function(_, _, _, s) t:add("exit v" .. version .. " " .. s) end,
      }, { speed = version })) }
    end
    local tree = bt.tree(def(1), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter v1; tick v1", t:step(a, 1))
    assert.is_true(tree:reload(def(2)))
    assert.equal("success | tick v2; exit v2 success", t:step(a, 1))
    assert.same({ speed = 2 }, got)
  end)

  it("is aborted with the new version's abort callback", function()
    local tree = bt.tree(bt.sequence { t:action("A1", "R") }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    local new = t:action("A2", "R")
    new.name = "A1"
    assert.is_true(tree:reload(bt.sequence { new }))
    assert.equal("running | tick A2", t:step(a, 1))
    a:abort()
    assert.equal("abort A2", t:take())
  end)

  it("in a sequence is found by name when siblings were inserted before "
     .. "it", function()
    local tree = bt.tree(bt.sequence {
      t:action("A", "S"), t:action("B", "R"), t:action("C", "S"),
    }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.is_true(tree:reload(bt.sequence {
      t:action("X", "S"), t:action("A", "S"), t:action("Y", "S"),
      t:action("B", "RS"), t:action("C", "S"),
    }))
    assert.same({ "sequence", "B" }, a:running())
    t:set("B", "S")
    assert.equal("success | tick B; exit B success; "
                 .. "enter C; tick C; exit C success", t:step(a, 1))
    assert.equal(0, t:count("X"))
    assert.equal(0, t:count("Y"))
  end)

  it("in a selector is found by name when siblings were inserted before "
     .. "it", function()
    local tree = bt.tree(bt.selector {
      t:action("A", "F"), t:action("B", "R"),
    }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.selector {
      t:action("X", "S"), t:action("A", "F"), t:action("B", "RF"),
      t:action("C", "S"),
    }))
    assert.equal("running | tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B failure; "
                 .. "enter C; tick C; exit C success", t:step(a, 1))
  end)

  it("deep in named composites is resumed when the path of names is "
     .. "the same", function()
    local function def(extra)
      local inner = { name = "inner", t:action("A", "S"), t:action("B", "R") }
      if extra then table.insert(inner, 1, t:action("I", "S")) end
      local outer = { name = "outer", bt.sequence(inner) }
      if extra then table.insert(outer, 1, t:action("O", "S")) end
      return bt.sequence { name = "root", bt.selector(outer) }
    end
    local tree = bt.tree(def(false), { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(def(true)))
    assert.equal("running | tick B", t:step(a, 1))
    assert.same({ "root", "outer", "inner", "B" }, a:running())
  end)

  it("unnamed is matched by its default name, which holds its place",
     function()
    local function f(tag, s)
      return bt.action { tick = function()
        t:add("tick " .. tag)
        return s
      end, abort = function() t:add("abort " .. tag) end,
        enter = function() t:add("enter " .. tag) end }
    end
    local tree = bt.tree(bt.sequence { f("a1", true), f("b1", bt.RUNNING) },
                         { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter a1; tick a1; enter b1; tick b1",
                 t:step(a, 1))
    -- same place: "sequence/action[2]" runs on with the new function
    assert.is_true(tree:reload(bt.sequence { f("a2", true),
                                             f("b2", bt.RUNNING) }))
    assert.equal("running | tick b2", t:step(a, 1))
    -- a sibling inserted before: "action[2]" names the place, so the
    -- node now there (a3) is the one kept running, without an enter
    assert.is_true(tree:reload(bt.sequence { f("x3", true), f("a3", true),
                                             f("b3", bt.RUNNING) }))
    assert.equal("running | tick a3; enter b3; tick b3", t:step(a, 1))
    assert.equal(0, t:count("x3"))
    -- the place is gone: the running node is aborted
    assert.is_true(tree:reload(bt.sequence { f("a4", true), f("b4", true) }))
    assert.equal("success | abort b3; enter a4; tick a4; enter b4; tick b4",
                 t:step(a, 1))
  end)

  it("a repeater keeps its count", function()
    local function def()
      return bt.repeater { name = "rep", times = 3, t:action("A", "RSRSRS") }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    assert.is_true(tree:reload(def()))
    t:set("A", "SRS")
    assert.equal("running | tick A; exit A success; enter A; tick A",
                 t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("a timeout keeps its start time and takes the new seconds", function()
    local function def(s)
      return bt.timeout { name = "to", seconds = s, t:action("A", "R") }
    end
    local tree = bt.tree(def(3), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))  -- starts at 1
    assert.equal("running | tick A", t:step(a, 1))
    assert.is_true(tree:reload(def(3)))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("failure | abort A", t:step(a, 1))          -- at 4
    assert.equal("running | enter A; tick A", t:step(a, 1))  -- starts at 5
    assert.is_true(tree:reload(def(1.5)))
    assert.equal("running | tick A", t:step(a, 1))           -- 1 s
    assert.equal("failure | abort A", t:step(a, 1))          -- 2 s >= 1.5
  end)

  it("a wait keeps its start time", function()
    local function def()
      return bt.sequence { bt.wait { name = "w", seconds = 3 },
                           t:action("A", "S") }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running |", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    assert.equal("running |", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("a parallel keeps what its finished children returned", function()
    local function def()
      return bt.parallel { name = "p",
        t:action("A", "S"), t:action("B", "R"), t:action("C", "R") }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B; "
                 .. "enter C; tick C", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    t:set("B", "S")
    assert.equal("running | tick B; exit B success; tick C", t:step(a, 1))
    t:set("C", "S")
    assert.equal("success | tick C; exit C success", t:step(a, 1))
  end)

  it("to the same shape: statuses as in any reload, the tick goes on",
     function()
    -- the same shape moves the state in place; a node added at the end
    -- makes the general move: both give the same statuses and ticks
    local function def(extra)
      local kids = { t:action("A", "S"), bt.parallel { name = "p",
        t:action("B", "S"), t:action("C", "R"), t:action("D", "RS") },
        bt.repeater { times = 3, t:action("E", "R") } }
      if extra then kids[#kids + 1] = t:action("X", "S") end
      return bt.sequence(kids)
    end
    local results = {}
    for _, extra in ipairs { false, true } do
      local tree = bt.tree(def(), { name = "T" })
      local a = bt.agent(tree)
      t:step(a, 1)
      assert.equal("running | tick C; tick D; exit D success", t:step(a, 1))
      assert.is_true(tree:reload(def(extra)))
      local steps = { t:step(a, 1) } -- the agent moves, then ticks
      local st = trace.statuses(a)
      st.X = nil
      t:set("C", "S")
      steps[2] = t:step(a, 1)
      results[#results + 1] = { st, steps }
    end
    assert.same(results[1], results[2])
    local st, steps = results[1][1], results[1][2]
    assert.equal("running", st.p)
    assert.equal("success", st.B)
    assert.equal("running", st.C)
    assert.equal("success", st.D)
    assert.equal("idle", st.A) -- last statuses do not carry over
    assert.equal("running | tick C", steps[1])
    assert.equal("running | tick C; exit C success; enter E; tick E",
                 steps[2])
  end)

  it("a parallel that loses one running child goes on with the others",
     function()
    local tree = bt.tree(bt.parallel { t:action("A", "R"), t:action("B", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.parallel { t:action("A", "R") }))
    assert.equal("running | abort B; tick A", t:step(a, 1))
  end)

  it("under a reactive selector stays running while higher children fail",
     function()
    local function def()
      return bt.reactive_selector { t:condition("C", "F"), t:action("X", "R") }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | tick C; enter X; tick X", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    t:set("C", "F")
    assert.equal("running | tick C; tick X", t:step(a, 1))
    t:set("C", "S")
    assert.equal("success | tick C; abort X", t:step(a, 1))
  end)

  it("idle with data: limit counts and run_once results carry over",
     function()
    local function def()
      return bt.sequence {
        bt.run_once { name = "once", t:action("O", "S") },
        bt.limit { name = "lim", times = 2, t:action("L", "S") },
      }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("success | enter O; tick O; exit O success; "
                 .. "enter L; tick L; exit L success", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    assert.equal("success | enter L; tick L; exit L success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
  end)

  it("idle with data: a cooldown keeps its time, under a running sibling",
     function()
    local function def()
      return bt.reactive_selector {
        bt.cooldown { name = "cd", seconds = 5, t:action("C", "S") },
        t:action("W", "R"),
      }
    end
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("success | enter C; tick C; exit C success", t:step(a, 1))
    assert.equal("running | enter W; tick W", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    -- the cooldown (idle, its time carried) still refuses; W goes on
    assert.equal("running | tick W", t:step(a, 1))
    assert.equal("running | tick W", t:step(a, 2))
    assert.equal("success | enter C; tick C; exit C success; abort W",
                 t:step(a, 1))
  end)
end)

describe("a running node that is gone", function()
  it("is aborted at the next tick, and its parent starts over", function()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("A", "S"),
                                             t:action("C", "R") }))
    assert.equal("", t:take())
    assert.equal("running | abort B; enter A; tick A; exit A success; "
                 .. "enter C; tick C", t:step(a, 1))
  end)

  it("gets exit(..., 'aborted') when it has no abort callback", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R", { noabort = true }) },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("B", "R") }))
    assert.equal("running | exit A aborted; enter B; tick B", t:step(a, 1))
  end)

  it("takes its running subtree down, deepest first", function()
    local tree = bt.tree(bt.selector {
      t:action("F", "F"),
      bt.parallel { name = "both",
        bt.sequence { name = "s", t:action("A", "S"), t:action("B", "R") },
        bt.invert(t:action("C", "R")) },
    }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.selector { t:action("F", "F"),
                                             t:action("D", "R") }))
    assert.equal("running | abort B; abort C; enter F; tick F; "
                 .. "exit F failure; enter D; tick D", t:step(a, 1))
  end)

  it("is aborted and restarted when its type changed", function()
    local tree = bt.tree(bt.sequence {
      bt.sequence { name = "work", t:action("A", "S"), t:action("B", "R") },
    }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence {
      bt.selector { name = "work", t:action("A", "S"), t:action("B", "R") },
    }))
    -- the new selector "work" starts over and succeeds with A
    assert.equal("success | abort B; enter A; tick A; exit A success",
                 t:step(a, 1))
    assert.equal("success", trace.statuses(a).work)
  end)

  it("is aborted when a leaf turns from action into condition", function()
    local tree = bt.tree(bt.selector { t:condition("C", "F"),
                                       t:action("X", "R") }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.selector { t:condition("C", "F"),
                                             t:condition("X", "S") }))
    assert.equal("success | abort X; tick C; tick X", t:step(a, 1))
  end)

  it("when renamed is treated as removed and added", function()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    local renamed = t:action("B2", "R")
    assert.is_true(tree:reload(bt.sequence { t:action("A", "S"), renamed }))
    assert.equal("running | abort B; enter A; tick A; exit A success; "
                 .. "enter B2; tick B2", t:step(a, 1))
  end)

  it("has its parent renamed: the whole branch restarts", function()
    local tree = bt.tree(bt.sequence { bt.sequence { name = "old",
      t:action("A", "R") } }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { bt.sequence { name = "new",
      t:action("A", "R") } }))
    assert.equal("running | abort A; enter A; tick A", t:step(a, 1))
  end)

  it("whose abort callback raises makes the next tick raise, naming the "
     .. "node", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R", { fail = "abort" }) },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("B", "R") }))
    local msg = tick_error(a)
    assert.equal("abort A", t:take())
    -- the sequence still exists: it keeps running, from its first child
    assert.same({ "sequence" }, a:running())
    assert.equal("running", a:status())
    assert.equal("running | enter B; tick B", t:step(a, 1))
    assert.equal("tree 'T' node 'sequence/A': A abort failed", msg)
  end)

  it("is aborted by a:abort() before the next tick too", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("B", "R") }))
    a:abort()
    assert.equal("abort A", t:take())
    assert.equal("running | enter B; tick B", t:step(a, 1))
  end)
end)

describe("tasks across a reload", function()
  local jobs -- what the tasks did, apart from the trace leaves
  before_each(function() jobs = trace.new() end)

  -- A task named 'name' that logs its steps (tagged) and registers a
  -- cleanup (bt.defer).
  local function job(name, tag)
    return bt.named(name, bt.task(function()
      bt.defer(function() jobs:add(tag .. " closed") end)
      jobs:add(tag .. " start")
      coroutine.yield()
      jobs:add(tag .. " step")
      coroutine.yield()
      jobs:add(tag .. " end")
      return true
    end))
  end

  it("go on in their coroutine when their path still exists", function()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), job("job", "v1") },
                         { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.equal("v1 start", jobs:take())
    assert.is_true(tree:reload(bt.sequence {
      t:action("X", "S"), t:action("A", "S"), job("job", "v2"),
    }))
    assert.equal("running", a:tick(1))
    assert.equal("v1 step", jobs:take())
    assert.equal("success", a:tick(1))
    assert.equal("v1 end; v1 closed", jobs:take())
    -- the next run is the new version's
    assert.equal("running", a:tick(1))
    assert.equal("v2 start", jobs:take())
  end)

  it("are closed at the next tick when their path is gone, their "
     .. "cleanups (bt.defer) run", function()
    local tree = bt.tree(bt.sequence { job("job", "v1") }, { name = "T" })
    local a = bt.agent(tree)
    a:tick(1)
    a:tick(1)
    assert.equal("v1 start; v1 step", jobs:take())
    assert.is_true(tree:reload(bt.sequence { bt.action(function()
      jobs:add("other")
      return bt.RUNNING
    end) }))
    assert.equal("", jobs:take())
    assert.equal("running", a:tick(1))
    assert.equal("v1 closed; other", jobs:take())
  end)

  it("are closed when renamed, and the renamed task starts over", function()
    local tree = bt.tree(bt.sequence { job("job", "v1") }, { name = "T" })
    local a = bt.agent(tree)
    a:tick(1)
    assert.is_true(tree:reload(bt.sequence { job("job2", "v2") }))
    assert.equal("running", a:tick(1))
    assert.equal("v1 start; v1 closed; v2 start", jobs:take())
  end)

  it("may reload their own tree from inside the coroutine", function()
    local tree
    local function selfreloading(tag, newdef)
      return bt.named("job", bt.task(function()
        bt.defer(function() jobs:add(tag .. " closed") end)
        jobs:add(tag .. " start")
        assert(tree:reload(newdef()))
        coroutine.yield()
        jobs:add(tag .. " step")
        return true
      end))
    end
    -- the task's path survives: the coroutine goes on
    tree = bt.tree(bt.sequence { selfreloading("v1", function()
      return bt.sequence { t:action("X", "S"), job("job", "v2") }
    end) }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.equal("v1 start", jobs:take())
    assert.equal("success", a:tick(1))
    assert.equal("v1 step; v1 closed", jobs:take())
    assert.equal("", t:take())
    -- the task's path is gone: the coroutine is closed at the next tick
    tree = bt.tree(bt.sequence { selfreloading("w1", function()
      return bt.sequence { t:action("X", "R") }
    end) }, { name = "T" })
    a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.equal("w1 start", jobs:take())
    assert.equal("running", a:tick(1))
    assert.equal("w1 closed", jobs:take())
    assert.equal("enter X; tick X", t:take())
  end)

  it("of several agents each keep their own coroutine", function()
    local tree = bt.tree(bt.sequence { job("job", "v1") }, { name = "T" })
    local a, b = bt.agent(tree), bt.agent(tree)
    a:tick(1)
    a:tick(1)
    b:tick(1)
    assert.equal("v1 start; v1 step; v1 start", jobs:take())
    assert.is_true(tree:reload(bt.sequence { t:action("X", "S"),
                                             job("job", "v2") }))
    assert.equal("success", a:tick(1))
    assert.equal("running", b:tick(1))
    assert.equal("v1 end; v1 closed; v1 step", jobs:take())
  end)
end)

describe("named leaves across a reload", function()
  it("re-registered during a run keep the run and use the new callbacks",
     function()
    bt.register("reload.walk", t:leafdef("W1", "R"))
    local tree = bt.tree(bt.sequence { bt.action "reload.walk" },
                         { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter W1; tick W1", t:step(a, 1))
    bt.register("reload.walk", t:leafdef("W2", "RRS"))
    assert.equal("running | tick W2", t:step(a, 1))
    assert.is_true(tree:reload(bt.sequence { t:action("X", "S"),
                                             bt.action "reload.walk" }))
    bt.register("reload.walk", t:leafdef("W3", "S"))
    assert.equal("success | tick W3; exit W3 success", t:step(a, 1))
  end)

  it("re-registered from inside their own tick change from the next tick",
     function()
    bt.register("reload.self", {
      enter = function() t:add("enter v1") end,
      tick = function()
        t:add("tick v1")
        bt.register("reload.self", {
          enter = function() t:add("enter v2") end,
          tick = function() t:add("tick v2"); return bt.SUCCESS end,
        })
        return bt.RUNNING
      end,
    })
    local a = agent_of(bt.action "reload.self")
    assert.equal("running | enter v1; tick v1", t:step(a, 1))
    assert.equal("success | tick v2", t:step(a, 1))
    assert.equal("success | enter v2; tick v2", t:step(a, 1))
  end)

  it("re-registered by a leaf file that bt.poll runs again", function()
    local dir = tmpdir()
    local leaves = dir .. "/leaves.lua"
    _G.LOG = function(s) t:add(s) end
    finally(function() _G.LOG = nil end)
    assert.is_true(bt.watch(dir))
    write(leaves, [[
      bt.register("reload.file", {
        enter = function() LOG("enter v1") end,
        tick = function() LOG("tick v1") return bt.RUNNING end,
      })]])
    local reloaded, failed = bt.poll()
    assert.same({ leaves }, reloaded)   -- a new file in the directory runs
    assert.same({}, failed)
    local a = agent_of(bt.action "reload.file")
    assert.equal("running | enter v1; tick v1", t:step(a, 1))
    write(leaves, [[
      bt.register("reload.file", {
        enter = function() LOG("enter v2") end,
        tick = function() LOG("tick v2") return bt.SUCCESS end,
      })]])
    reloaded, failed = bt.poll()
    assert.same({ leaves }, reloaded)
    assert.same({}, failed)
    assert.equal("success | tick v2", t:step(a, 1))
  end)
end)

describe("guards across a reload", function()
  local function def()
    return bt.selector {
      bt.guard { bt.is_set "enemy", abort = "lower", t:action("combat", "F") },
      t:action("patrol", "R"),
    }
  end

  it("keep watching their keys", function()
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    assert.equal("running | tick patrol", t:step(a, 1))
    t:set("combat", "R")
    a.bb.enemy = "orc"
    assert.equal("running | abort patrol; enter combat; tick combat",
                 t:step(a, 1))
  end)

  it("do not wake for keys that did not change", function()
    local tree = bt.tree(def(), { name = "T" })
    local a = bt.agent(tree, { blackboard = { enemy = "orc" } })
    assert.equal("running | enter combat; tick combat; exit combat failure; "
                 .. "enter patrol; tick patrol", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    a.bb.hp = 10 -- another key
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "orc" -- the same value
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = nil
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "troll"
    assert.equal("running | abort patrol; enter combat; tick combat; "
                 .. "exit combat failure; enter patrol; tick patrol",
                 t:step(a, 1))
  end)

  it("added by a reload act on their check's first turn to true", function()
    local tree = bt.tree(bt.selector { t:action("patrol", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter patrol; tick patrol", t:step(a, 1))
    assert.is_true(tree:reload(bt.selector {
      bt.guard { bt.is_set "enemy", abort = "lower", t:action("combat", "R") },
      t:action("patrol", "R"),
    }))
    assert.equal("running | tick patrol", t:step(a, 1))
    a.bb.enemy = "orc"
    local got = t:step(a, 1)
    assert.equal("running | abort patrol; enter combat; tick combat", got)
  end)
end)

describe("the priority section across a reload", function()
  it("can be added without restarting the root's running node", function()
    local tree = bt.tree(bt.sequence { t:action("A", "S"), t:action("B", "R") },
                         { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.is_true(tree:reload(bt.sequence { t:action("A", "S"),
                                             t:action("B", "R") }, {
      priority = { bt.filter { conditions = { t:condition("D", "F") },
                               t:action("Flee", "R") } },
    }))
    local got = t:step(a, 1)
    assert.equal("running | tick D; tick B", got)
  end)

  it("keeps a running priority branch", function()
    local function def()
      return bt.sequence { t:action("A", "R") }, {
        priority = { bt.filter { name = "flee",
          conditions = { t:condition("D", "S") }, t:action("Flee", "R") } },
      }
    end
    local tree = bt.tree(def())
    local a = bt.agent(tree)
    assert.equal("running | tick D; enter Flee; tick Flee", t:step(a, 1))
    assert.is_true(tree:reload(def()))
    assert.equal("running | tick D; tick Flee", t:step(a, 1))
  end)
end)

describe("many agents and many reloads", function()
  local function def(extra)
    local list = {
      t:action("A", "S"),
      bt.repeater { name = "rep", times = 0,
        bt.sequence { name = "loop", t:action("B", "R") } },
    }
    if extra then table.insert(list, 1, bt.wait { name = "w", seconds = 0 }) end
    return bt.sequence(list)
  end

  it("moves 10,000 live agents, which go on ticking", function()
    local tree = bt.tree(def(false), { name = "T" })
    local agents = {}
    for k = 1, 10000 do agents[k] = bt.agent(tree, { owner = k }) end
    assert.is_nil(bt.tick_all(agents, 1))
    assert.equal(10000, t:count("B"))
    assert.is_true(tree:reload(def(true)))
    t:take()
    assert.is_nil(bt.tick_all(agents, 1))
    assert.equal(20000, t:count("B"))
    assert.equal(10000, t:count("A"))         -- not entered again
    assert.equal(("tick B; "):rep(9999) .. "tick B", t:take())
    for k = 1, 10000, 997 do
      assert.same({ "sequence", "rep", "loop", "B" }, agents[k]:running())
      assert.equal(k, agents[k].owner)
    end
    -- and they finish on the new version
    t:set("B", "F")
    assert.is_nil(bt.tick_all(agents, 1))
    for k = 1, 10000, 997 do
      assert.equal("failure", agents[k]:status())
    end
  end)

  it("reloads the same definition 1,000 times without growing", function()
    local tree = bt.tree(def(false), { name = "T" })
    local a = bt.agent(tree)
    local function settle()
      collectgarbage()
      collectgarbage()
      return collectgarbage "count", bt.memory()
    end
    for _ = 1, 10 do
      assert.is_true(tree:reload(def(false)))
      a:tick(1)
    end
    local lua0, core0 = settle()
    for _ = 1, 1000 do
      assert.is_true(tree:reload(def(false)))
      a:tick(1)
    end
    local lua1, core1 = settle()
    assert.is_true(lua1 - lua0 < 16, "Lua memory grew by "
                   .. (lua1 - lua0) .. " KB")
    assert.is_true(core1 - core0 < 1024, "core memory grew by "
                   .. (core1 - core0) .. " bytes")
    assert.same({ "sequence", "rep", "loop", "B" }, a:running())
    assert.equal(1, t:count("A"))
  end)

  it("frees the old versions once no agent runs them", function()
    local core0 = bt.memory()
    do
      local tree = bt.tree(def(false), { name = "T" })
      local agents = {}
      for k = 1, 100 do agents[k] = bt.agent(tree) end
      bt.tick_all(agents, 1)
      for _ = 1, 50 do assert.is_true(tree:reload(def(true))) end
      bt.tick_all(agents, 1)
    end
    collectgarbage()
    collectgarbage()
    assert.is_true(bt.memory() - core0 < 1024,
                   "core memory left: " .. (bt.memory() - core0))
  end)
end)

describe("bt.load", function()
  it("compiles a file that returns a node, naming the tree after the "
     .. "file", function()
    local dir = tmpdir()
    local path = dir .. "/patrol.lua"
    register("reload.step", "R")
    write(path, [[return bt.sequence { bt.action "reload.step" }]])
    local tree = bt.load(path)
    assert.matches("^bonsai.tree 'patrol'", tostring(tree))
    assert.equal("patrol", tree.name)
    local a = bt.agent(tree)
    assert.equal("running | enter reload.step; tick reload.step", t:step(a, 1))
  end)

  it("takes tree options as the file's second return value",
     function()
    local dir = tmpdir()
    local path = dir .. "/opts.lua"
    register("reload.flee", "R")
    write(path, [[
      return bt.action(function() return bt.RUNNING end),
        { name = "named", priority = { bt.filter {
          conditions = { bt.is_set "danger" }, bt.action "reload.flee" } } }]])
    local tree = assert(bt.load(path))
    assert.equal("named", tree.name)
    local a = bt.agent(tree, { blackboard = { danger = true } })
    assert.equal("running | enter reload.flee; tick reload.flee",
                 t:step(a, 1))
  end)

  it("takes a file that returns a tree as it is", function()
    local dir = tmpdir()
    local path = dir .. "/whole.lua"
    write(path, [[return bt.tree(bt.wait(1), { name = "custom" })]])
    local tree = assert(bt.load(path))
    assert.equal("custom", tree.name)
    assert.equal("running", bt.agent(tree):tick(0.5))
  end)

  it("returns nil and a message for a file that cannot load or run, or "
     .. "returns something else", function()
    local dir = tmpdir()
    local path = dir .. "/bad.lua"
    local tree, msg = bt.load(dir .. "/missing.lua")
    assert.is_nil(tree)
    assert.matches("missing%.lua", msg)
    write(path, [[return bt.sequence { ]])
    tree, msg = bt.load(path)
    assert.is_nil(tree)
    assert.matches("^" .. path:gsub("%p", "%%%0") .. ":%d+: ", msg)
    write(path, [[error("no tree today", 0)]])
    tree, msg = bt.load(path)
    assert.is_nil(tree)
    assert.equal("no tree today", msg)
    write(path, [[return 42]])
    tree, msg = bt.load(path)
    assert.is_nil(tree)
    assert.equal(path .. ": the file must return a node or a tree (got "
                 .. "number)", msg)
    write(path, [[return bt.sequence { bt.repeater {} }]])
    tree, msg = bt.load(path)
    assert.is_nil(tree)
    assert.equal("tree 'bad': sequence/repeater[1]: 'repeater' needs a child",
                 msg)
  end)

  it("runs the file with bt in scope and the globals readable",
     function()
    local dir = tmpdir()
    local path = dir .. "/scope.lua"
    write(path, [[
      leaked = true
      return bt.action(function() return math.max(1, 2) == 2 end)]])
    local tree = assert(bt.load(path))
    assert.equal("success", bt.agent(tree):tick(1))
    assert.is_nil(rawget(_G, "leaked"))
  end)
end)

describe("bt.reload", function()
  local function files()
    local dir = tmpdir()
    register("reload.a", "S")
    register("reload.b", "R")
    register("reload.c", "S")
    return dir .. "/guard.lua"
  end

  it("reloads a loaded file into the same tree; agents keep running",
     function()
    local path = files()
    write(path, [[return bt.sequence {
      bt.action "reload.a", bt.action "reload.b" }]])
    local tree = assert(bt.load(path))
    local a = bt.agent(tree, { blackboard = { hp = 3 } })
    assert.equal("running | enter reload.a; tick reload.a; exit reload.a "
                 .. "success; enter reload.b; tick reload.b", t:step(a, 1))
    write(path, [[return bt.sequence { bt.action "reload.c",
      bt.action "reload.a", bt.action "reload.b" }]])
    local r = bt.reload(path)
    assert.is_truthy(r)
    assert.equal(tree, r)
    assert.equal("running | tick reload.b", t:step(a, 1))
    assert.equal(3, a.bb.hp)
    assert.equal("guard", tree.name)
  end)

  it("leaves the old version running on a syntax error", function()
    local path = files()
    write(path, [[return bt.sequence { bt.action "reload.b" }]])
    local tree = assert(bt.load(path))
    local a = bt.agent(tree)
    t:step(a, 1)
    write(path, [[return bt.sequence { bt.action "reload.b" ]])
    local ok, msg = bt.reload(path)
    assert.is_nil(ok)
    assert.matches("guard%.lua:%d+: .*expected", msg)
    assert.equal("running | tick reload.b", t:step(a, 1))
    assert.equal("sequence\n  reload.b (action)\n", tree:dump())
  end)

  it("leaves the old version running on a definition error",
     function()
    local path = files()
    write(path, [[return bt.sequence { bt.action "reload.b" }]])
    local tree = assert(bt.load(path))
    local a = bt.agent(tree)
    t:step(a, 1)
    write(path, [[return bt.sequence { bt.action "reload.missing" }]])
    local ok, msg = bt.reload(path)
    assert.is_nil(ok)
    assert.equal("tree 'guard': sequence/reload.missing: no leaf registered "
                 .. "as 'reload.missing'", msg)
    write(path, [[return bt.sequence { bt.guard { bt.is_set "x",
      abort = "sometimes", bt.action "reload.a" } }]])
    ok, msg = bt.reload(path)
    assert.is_nil(ok)
    assert.matches("^tree 'guard': sequence/guard%[1%]: argument 'abort'", msg)
    write(path, [[error("half saved")]])
    ok, msg = bt.reload(path)
    assert.is_nil(ok)
    assert.matches("half saved", msg)
    assert.equal("running | tick reload.b", t:step(a, 1))
    -- a good version again
    write(path, [[return bt.sequence { bt.action "reload.a",
      bt.action "reload.b" }]])
    assert.is_truthy(bt.reload(path))
    assert.equal("running | tick reload.b", t:step(a, 1))
  end)

  it("of a file that returns a tree takes that tree's version",
     function()
    local path = files()
    write(path, [[return bt.tree(bt.sequence { bt.action "reload.b" },
      { name = "whole" })]])
    local tree = assert(bt.load(path))
    local a = bt.agent(tree)
    t:step(a, 1)
    write(path, [[return bt.tree(bt.sequence { bt.action "reload.a",
      bt.action "reload.b" }, { name = "whole" })]])
    assert.equal(tree, bt.reload(path))
    assert.equal("running | tick reload.b", t:step(a, 1))
  end)

  it("of a file not loaded yet loads it", function()
    local path = files()
    write(path, [[return bt.action "reload.a"]])
    local tree = assert(bt.reload(path))
    assert.equal("guard", tree.name)
    assert.equal(tree, bt.reload(path))
  end)
end)

describe("bt.watch and bt.poll", function()
  it("reload a watched file when it is rewritten", function()
    local dir = tmpdir()
    local path = dir .. "/villager.lua"
    register("reload.a", "S")
    register("reload.b", "R")
    write(path, [[return bt.sequence { bt.action "reload.b" }]])
    local tree = assert(bt.load(path))
    assert.is_true(bt.watch(path))
    local a = bt.agent(tree, { blackboard = { gold = 5 } })
    assert.equal("running | enter reload.b; tick reload.b", t:step(a, 1))
    local reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    assert.same({}, failed)
    write(path, [[return bt.sequence { bt.action "reload.a",
      bt.action "reload.b" }]])
    reloaded, failed = bt.poll()
    assert.same({ path }, reloaded)
    assert.same({}, failed)
    assert.equal("running | tick reload.b", t:step(a, 1))
    assert.equal(5, a.bb.gold)
    reloaded, failed = bt.poll() -- nothing changed since
    assert.same({}, reloaded)
    assert.same({}, failed)
  end)

  it("see two quick rewrites in a row", function()
    local dir = tmpdir()
    local path = dir .. "/quick.lua"
    write(path, [[return bt.wait(1)]])
    local tree = assert(bt.load(path))
    assert.is_true(bt.watch(path))
    for n = 2, 4 do
      write(path, "return bt.wait(" .. n .. ")")
      local reloaded = bt.poll()
      assert.same({ path }, reloaded)
      assert.equal("wait " .. n .. "s\n", tree:dump())
    end
  end)

  it("report failures with the path and the error, and keep the old "
     .. "version", function()
    local dir = tmpdir()
    local path = dir .. "/broken.lua"
    register("reload.b", "R")
    write(path, [[return bt.sequence { bt.action "reload.b" }]])
    local tree = assert(bt.load(path))
    assert.is_true(bt.watch(path))
    local a = bt.agent(tree)
    t:step(a, 1)
    write(path, [[return bt.sequence { bt.action "reload.b" ]])
    local reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    assert.equal(1, #failed)
    assert.equal(path, failed[1].path)
    assert.matches("broken%.lua:%d+: ", failed[1].error)
    write(path, [[return bt.sequence { bt.repeater {} }]])
    reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    assert.same({ { path = path, error = "tree 'broken': sequence/"
                    .. "repeater[1]: 'repeater' needs a child" } }, failed)
    assert.equal("running | tick reload.b", t:step(a, 1))
  end)

  it("on a directory reload its changed tree files and run its new ones",
     function()
    local dir = tmpdir()
    local one, two = dir .. "/one.lua", dir .. "/two.lua"
    register("reload.a", "S")
    register("reload.b", "R")
    write(one, [[return bt.sequence { bt.action "reload.b" }]])
    write(two, [[return bt.action "reload.a"]])
    write(dir .. "/notes.txt", "not Lua")
    local t1, t2 = assert(bt.load(one)), assert(bt.load(two))
    assert.is_true(bt.watch(dir))
    assert.same({}, (bt.poll()))
    write(one, [[return bt.sequence { bt.action "reload.a",
      bt.action "reload.b" }]])
    write(two, [[return bt.invert(bt.action "reload.a")]])
    write(dir .. "/notes.txt", "still not Lua, longer")
    local reloaded, failed = bt.poll()
    assert.same({ one, two }, reloaded)
    assert.same({}, failed)
    assert.equal("failure", bt.agent(t2):tick(1))
    assert.equal(3, t1.size)
    -- a new file: run, as a leaf file would be
    write(dir .. "/three.lua", [[bt.register("reload.new", function()
      return true end)]])
    reloaded, failed = bt.poll()
    assert.same({ dir .. "/three.lua" }, reloaded)
    assert.same({}, failed)
    assert.equal("success", bt.agent(bt.tree(bt.action "reload.new")):tick(1))
  end)

  it("say why a path cannot be watched", function()
    local base = os.tmpname()
    os.remove(base)
    local ok, msg = bt.watch(base .. "/none.lua")
    assert.is_nil(ok)
    assert.matches("none%.lua: No such file or directory", msg)
  end)
end)

describe("ancestors of a running node that is gone", function()
  local t = require("helpers.trace").new()
  it("keep running with their state: timers and limits go on", function()
    local function def(last)
      return bt.limit { times = 2, name = "lim",
        bt.timeout { seconds = 3, name = "to",
          bt.sequence { name = "seq", t:action("A", "S"), t:action(last, "R") } } }
    end
    local tree = bt.tree(def("B"), { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.is_true(tree:reload(def("C")))
    -- B is gone: aborted; the sequence starts again from its first child,
    -- the timeout keeps its start time (t = 1) and the limit its count
    assert.equal("running | abort B; enter A; tick A; exit A success; "
                 .. "enter C; tick C", t:step(a, 1))
    assert.equal("running | tick C", t:step(a, 1))
    assert.equal("failure | abort C", t:step(a, 1)) -- 3 s since t = 1
  end)
end)
