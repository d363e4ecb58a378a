-- kinds_spec: the node kinds of the second round (API.md "Subtrees and
-- more nodes", bt.delay and bt.keep_running_until_failure): delay,
-- keep_running_until_failure, parallel with wait = true, the
-- utility selector and subtrees, tick by tick through the trace helper,
-- with their dumps, builder forms and hot reloads.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local bbpairs = luaver.bbpairs
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

-- Trees used by name only: the registry of names is weak, so a spec keeps
-- them here while it runs.
local keep = {}
after_each(function() keep = {} end)

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
    assert.matches("'delay' needs a child",
                   tree_error(bt.delay { seconds = 1 }))
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

describe("keep_running_until_failure", function()
  it("is running after each success, its child's next run at the next "
     .. "tick, and fails with it", function()
    local a = agent_of(bt.keep_running_until_failure(t:action("A", "SRSF")))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.same({ "keep_running_until_failure" }, a:running())
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("keeps a selector on it until it fails; an abort reaches a running "
     .. "child only", function()
    local a = agent_of(bt.selector {
      bt.keep_running_until_failure(t:action("A", "SSF")),
      t:action("B", "R"),
    })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    a:abort()
    assert.equal("", t:take())
    assert.equal("running | enter A; tick A; exit A failure; enter B; "
                 .. "tick B", t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
  end)

  it("has a builder form, a BehaviorTree.CPP name and survives a reload",
     function()
    local built = bt.builder():keep_running_until_failure()
      :action(t:leafdef("A", "S")):build { name = "B" }
    assert.equal("running | enter A; tick A; exit A success",
                 t:step(bt.agent(built), 1))
    local tree = bt.tree(bt.keep_running_until_failure(t:action("A", "R")),
                         { name = "K" })
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_true(tree:reload(
      bt.keep_running_until_failure(t:action("A", "S"))))
    assert.equal("running | tick A; exit A success", t:step(a, 1))
    bt.register("Patrol", function() return bt.SUCCESS end)
    local named = bt.tree(bt.keep_running_until_failure(bt.action "Patrol"),
                          { name = "P" })
    local xml = named:export("btcpp")
    assert.truthy(xml:find("<KeepRunningUntilFailure>", 1, true))
    local back = bt.tree(bt.import(xml, "btcpp"), { name = "P2" })
    assert.equal("keep_running_until_failure", back:nodes()[1].type)
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

describe("subtree", function()
  local n = 0
  local function fresh(prefix) -- tree names unique to one spec
    n = n + 1
    return prefix .. n
  end

  it("runs another tree's root as a child, found by tree or by name",
     function()
    local name = fresh "patrol"
    local inner = bt.tree(bt.sequence { t:action("A", "RS"),
                                        t:action("B", "F") }, { name = name })
    for _, ref in ipairs { inner, name } do
      local a = agent_of(bt.selector { bt.subtree(ref), t:action("C", "S") })
      assert.equal("running | enter A; tick A", t:step(a, 1))
      assert.same({ "selector", name, "sequence[1]", "A" }, a:running())
      assert.equal("success | tick A; exit A success; enter B; tick B; "
                   .. "exit B failure; enter C; tick C; exit C success",
                   t:step(a, 1))
      t:set("A", "RS")
    end
    -- agents of the inner tree itself are not affected
    local b = bt.agent(inner)
    assert.equal("running | enter A; tick A", t:step(b, 1))
  end)

  it("is named after its tree unless named, and shows in dumps", function()
    local name = fresh "inner"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    local tree = bt.tree(bt.sequence { bt.subtree(name),
                                       bt.subtree(name, { name = "again" }) },
                         { name = "T" })
    assert.equal("sequence\n  " .. name .. " (subtree)\n    A (action)\n"
                 .. "  again (subtree)\n    A (action)\n", tree:dump())
  end)

  it("reports unknown names, bad trees and recursion as definition errors",
     function()
    assert.equal("tree 'T': sequence/subtree[2]: no tree named 'nope.tree'",
                 tree_error(bt.sequence { t:action("A", "S"),
                                          bt.subtree "nope.tree" },
                            { name = "T" }))
    assert.matches("'tree' must be a tree or the name of one %(got number%)",
                   tree_error(bt.subtree(3)))
    local an, bn = fresh "a", fresh "b"
    local ta = bt.tree(t:action("A", "S"), { name = an })
    local tb = bt.tree(bt.sequence { bt.subtree(an) }, { name = bn })
    local ok, msg = ta:reload(bt.subtree(an))
    assert.is_nil(ok)
    assert.equal("tree '" .. an .. "': subtree: subtree '" .. an
                 .. "' contains itself", msg)
    ok, msg = ta:reload(bt.selector { bt.subtree(bn) })
    assert.is_nil(ok)
    assert.equal("tree '" .. an .. "': selector/" .. bn .. "/sequence[1]/subtree[1]: "
                 .. "subtree '" .. an .. "' contains itself", msg)
    -- both still run their old versions
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(tb), 1))
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(ta), 1))
  end)

  it("gives its args to the leaves inside; a leaf's own args come first, "
     .. "missing fields read from the subtree's", function()
    local seen = {}
    local function show(tag)
      return function(_, _, args)
        seen[#seen + 1] = tag .. ":" .. tostring(args and args.speed) .. ","
                          .. tostring(args and args.mode)
        return true
      end
    end
    local name = fresh "walk"
    keep[#keep + 1] = bt.tree(bt.sequence { bt.action(show "plain"),
                          bt.action(show "own", { mode = "sneak" }),
                          bt.action(show "both", { speed = 1 }) },
            { name = name })
    local a = agent_of(bt.sequence {
      bt.subtree(name, { args = { speed = 5, mode = "run" } }),
      bt.subtree(name),
    })
    assert.equal("success", a:tick(1))
    assert.same({ "plain:5,run", "own:5,sneak", "both:1,run",
                  "plain:nil,nil", "own:nil,sneak", "both:1,nil" }, seen)
  end)

  it("passes args down through a nested subtree without args of its own",
     function()
    local got
    local leafn, midn = fresh "leaf", fresh "mid"
    keep[#keep + 1] = bt.tree(bt.action(function(_, _, args) got = args.v return true end),
            { name = leafn })
    keep[#keep + 1] = bt.tree(bt.sequence { bt.subtree(leafn) }, { name = midn })
    local a = agent_of(bt.subtree(midn, { args = { v = 42 } }))
    assert.equal("success", a:tick(1))
    assert.equal(42, got)
  end)

  it("remaps checks, is_set and guards onto the caller's keys", function()
    local name = fresh "hunt"
    keep[#keep + 1] = bt.tree(bt.sequence {
      bt.is_set "target",
      bt.check("target", "==", "$prey"),
      bt.guard { bt.check("hp", ">", 10), abort = "self",
                 t:action("A", "R") },
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy",
                                                    prey = "wanted" } }),
                       { blackboard = { enemy = "wolf", wanted = "wolf",
                                        hp = 20, target = "ignored" } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.hp = 5 -- not remapped: the caller's hp; the guard aborts A
    assert.equal("failure | abort A", t:step(a, 1))
    a.bb.hp = 20
    a.bb.wanted = "bear"
    assert.equal("failure |", t:step(a, 1))
    a.bb.enemy = nil
    a.bb.wanted = nil
    assert.equal("failure |", t:step(a, 1))
  end)

  it("wants remap to map key names to key names", function()
    local name = fresh "r"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    assert.equal("tree 'T': sequence/" .. name .. ": 'remap' must map key "
                 .. "names to key names",
                 tree_error(bt.sequence { bt.subtree(name,
                   { remap = { target = 3 } }) }, { name = "T" }))
    assert.equal("tree 'T': sequence/" .. name .. ": 'remap' must be a "
                 .. "table of key names",
                 tree_error(bt.sequence { bt.subtree(name,
                   { remap = "target" }) }, { name = "T" }))
  end)

  it("composes the remaps of nested subtrees", function()
    local innern, midn = fresh "inner", fresh "mid"
    keep[#keep + 1] = bt.tree(bt.check("x", "==", 1), { name = innern })
    keep[#keep + 1] = bt.tree(bt.subtree(innern, { remap = { x = "y" } }), { name = midn })
    local a = agent_of(bt.subtree(midn, { remap = { y = "z" } }),
                       { blackboard = { z = 1, y = 2, x = 3 } })
    assert.equal("success", a:tick(1))
    a.bb.z = 2
    assert.equal("failure", a:tick(1))
  end)

  it("gives Lua leaves inside a blackboard on which the remapped keys read "
     .. "and write the caller's", function()
    local name = fresh "view"
    local log = {}
    keep[#keep + 1] = bt.tree(bt.action(function(_, bb)
      log[#log + 1] = tostring(bb.target) .. "/" .. tostring(bb:get("target"))
                      .. "/" .. tostring(bb:has("target")) .. "/"
                      .. tostring(bb.other)
      bb.target = "hit " .. bb.target
      bb:set("count", (bb:get("count", 0)) + 1)
      bb.other = "mine"
      local keys = {}
      for k in bbpairs(bb) do keys[#keys + 1] = k end
      table.sort(keys)
      log[#log + 1] = table.concat(keys, ",")
      return true
    end), { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy",
                                                    count = "n" } }),
                       { blackboard = { enemy = "wolf", target = "x" } })
    assert.equal("success", a:tick(1))
    assert.equal("hit wolf", a.bb.enemy)
    assert.equal("x", a.bb.target)   -- the caller's own 'target' is untouched
    assert.equal(1, a.bb.n)
    assert.equal("mine", a.bb.other) -- keys not remapped are the caller's
    assert.same({ "wolf/wolf/true/nil", "count,other,target" }, log)
    -- the caller's observers see the writes under their own names
    local changes = {}
    a.bb:observe("enemy", function(_, k, new)
      changes[#changes + 1] = k .. "=" .. new
    end)
    assert.equal("success", a:tick(1))
    assert.same({ "enemy=hit hit wolf" }, changes)
  end)

  it("gives utility functions inside the view too", function()
    local name = fresh "pick"
    keep[#keep + 1] = bt.tree(bt.utility_selector {
      bt.utility(function(_, bb) return bb.danger end, t:action("F", "R")),
      bt.utility(function() return 1 end, t:action("P", "R")),
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { danger = "threat" } }),
                       { blackboard = { threat = 0, danger = 9 } })
    assert.equal("running | enter P; tick P", t:step(a, 1))
    a.bb.threat = 5
    assert.equal("running | enter F; tick F; abort P", t:step(a, 1))
  end)

  it("gives remapped views to registered leaves, tasks and lifecycle "
     .. "callbacks, with their events as registered", function()
    local name = fresh "named"
    local seen = {}
    bt.register("kinds.view.exitonly", {
      tick = function(_, bb) seen[#seen + 1] = "tick " .. bb.target
                              return bt.RUNNING end,
      exit = function(_, bb, _, st) seen[#seen + 1] = "exit " .. st .. " "
                                      .. bb.target end,
    })
    bt.register("kinds.view.cond",
                function(_, bb) return bb.target == "wolf" end)
    keep[#keep + 1] = bt.tree(bt.sequence {
      bt.condition "kinds.view.cond",
      bt.task(function(_, bb)
        seen[#seen + 1] = "task " .. bb.target
        coroutine.yield()
        seen[#seen + 1] = "task again " .. bb.target
        return true
      end),
      bt.action "kinds.view.exitonly",
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy" } }),
                       { blackboard = { enemy = "wolf" } })
    assert.equal("running", a:tick(1))
    a.bb.enemy = "wolf" -- the same value: no change
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    a:abort()
    assert.same({ "task wolf", "task again wolf", "tick wolf", "tick wolf",
                  "exit aborted wolf" }, seen)
  end)
end)

describe("subtree reloads", function()
  local n = 0
  local function fresh(prefix)
    n = n + 1
    return "reload." .. prefix .. n
  end

  it("reloading the subtree's tree reloads every tree that uses it; "
     .. "running nodes are kept by path", function()
    local name = fresh "inner"
    local inner = bt.tree(bt.sequence { t:action("A", "RRS") },
                          { name = name })
    local outer = bt.tree(bt.sequence { name = "root", bt.subtree(name) },
                          { name = "T" })
    local a = bt.agent(outer)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_true(inner:reload(bt.sequence { t:action("B", "S"),
                                              t:action("A", "RS") }))
    assert.equal(5, outer.size)
    -- the running A is kept (its place among siblings changed: the
    -- sequence keeps its running child, found by name)
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success; enter A; tick A; "
                 .. "exit A success", t:step(a, 1))
  end)

  it("reloads users of users, and takes another tree's version", function()
    local cn, bn = fresh "c", fresh "b"
    local c = bt.tree(t:action("A", "S"), { name = cn })
    keep[#keep + 1] = bt.tree(bt.sequence { bt.subtree(cn) }, { name = bn })
    local top = bt.tree(bt.selector { bt.subtree(bn) }, { name = "T" })
    local a = bt.agent(top)
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.is_true(c:reload(t:action("B", "F")))
    assert.equal("failure | enter B; tick B; exit B failure", t:step(a, 1))
    assert.is_true(c:reload(bt.tree(t:action("C", "S"))))
    assert.equal("success | enter C; tick C; exit C success", t:step(a, 1))
  end)

  it("leaves every tree unchanged when a user would not compile", function()
    local innern, outern = fresh "inner", fresh "outer"
    local inner = bt.tree(t:action("A", "S"), { name = innern })
    local outer = bt.tree(bt.sequence { bt.subtree(innern) },
                          { name = outern })
    local ok, msg = inner:reload(bt.sequence { bt.subtree(outern) })
    assert.is_nil(ok)
    assert.equal("tree '" .. innern .. "': sequence/" .. outern
                 .. "/sequence[1]/subtree[1]: subtree '" .. innern
                 .. "' contains itself", msg)
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(outer), 1))
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(inner), 1))
    -- nor may it take outer's version (which inlines it)
    ok, msg = inner:reload(outer)
    assert.is_nil(ok)
    assert.equal("tree '" .. innern .. "': subtree '" .. innern
                 .. "' contains itself", msg)
    -- once outer no longer uses inner, inner may use outer
    assert.is_true(outer:reload(t:action("B", "S")))
    assert.is_true(inner:reload(bt.sequence { bt.subtree(outern) }))
    assert.equal("success | enter B; tick B; exit B success",
                 t:step(bt.agent(inner), 1))
  end)

  it("follows bt.reload of the subtree's file", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir '" .. dir .. "'"))
    local path = dir .. "/kinds_sub.lua"
    local function write(text)
      local f = assert(io.open(path, "w"))
      f:write(text)
      f:close()
    end
    bt.register("kinds.file.a", t:leafdef("A", "R"))
    bt.register("kinds.file.b", t:leafdef("B", "S"))
    write("return bt.sequence { bt.action 'kinds.file.a' }\n")
    assert(bt.load(path))
    local outer = bt.tree(bt.sequence { bt.subtree "kinds_sub",
                                        bt.action "kinds.file.b" },
                          { name = "T" })
    local a = bt.agent(outer)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("return bt.sequence { bt.action 'kinds.file.b' }\n-- longer\n")
    assert(bt.reload(path))
    assert.equal("success | abort A; enter B; tick B; exit B success; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("works from the builder, with a utility in a utility selector",
     function()
    local name = fresh "b"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    local tree = bt.builder():utility_selector()
      :action(t:leafdef("B", "S")):name("B")
      :subtree(name, { name = "sub" }):utility(function() return 1 end)
      :build { name = "T" }
    local a = bt.agent(tree)
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)
end)

describe("the new kinds in traces", function()
  local function events(a)
    local out = {}
    for _, e in ipairs(a:events()) do
      out[#out + 1] = e.tick .. ":" .. e.node .. ":" .. e.status
    end
    return table.concat(out, " ")
  end

  it("record their status changes like any node", function()
    local a = agent_of(bt.delay { name = "d", seconds = 1,
                                  t:action("A", "S") })
    a:trace()
    a:tick(1)
    a:tick(1)
    assert.equal("1:d:running 2:d:running 2:d/A:running 2:d/A:success " ..
                 "2:d:success", events(a))
    local u = 0
    local b = agent_of(bt.utility_selector { name = "u",
      bt.utility(function() return u end, t:action("X", "R")),
      bt.utility(function() return 1 end, t:action("Y", "R")) })
    b:trace()
    b:tick(1)
    u = 2
    b:tick(1)
    assert.equal("1:u:running 1:u/Y:running 2:u:running 2:u/X:running " ..
                 "2:u/Y:aborted", events(b))
    local inner = bt.tree(t:action("I", "S"), { name = "kinds.trace.inner" })
    local c = agent_of(bt.subtree(inner))
    c:trace()
    c:tick(1)
    assert.equal("1:kinds.trace.inner:running 1:kinds.trace.inner/I:running "
                 .. "1:kinds.trace.inner/I:success "
                 .. "1:kinds.trace.inner:success", events(c))
  end)
end)
