-- custom_nodes_spec: the control nodes of samples/custom_nodes, written
-- with bt.control, tick by tick against their reference: Nav2's
-- RecoveryNode, PipelineSequence, RoundRobin and RateController (the
-- sequences of Nav2's own tests, nav2_behavior_tree/test/plugins), and the
-- weighted random selector's seeded, replayable stream; and Nav2's own
-- navigation tree (tests/trees/nav2) loaded and run with them.
package.path = "samples/?.lua;" .. package.path
local bt = require "bonsai"
local trace = require "helpers.trace"
local nav2 = require "custom_nodes.nav2"
local weighted = require "custom_nodes.weighted"

local t
before_each(function() t = trace.new() end)

-- An agent on the node builder(args, children) over trace actions named
-- by the letters of `names`, each with the script scripts[name].
local function agent_of(builder, args, scripts)
  local kids = {}
  for i, s in ipairs(scripts) do kids[i] = t:action(s[1], s[2]) end
  return bt.agent(bt.tree(builder(args or {}, kids), { name = "T" }))
end

describe("Nav2's RecoveryNode", function()
  it("succeeds at once when its first child does", function()
    local a = agent_of(nav2.RecoveryNode, {}, { { "A", "S" }, { "R", "S" } })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("recovers, then ticks the first child again in the same tick",
     function()
    local a = agent_of(nav2.RecoveryNode, { number_of_retries = "1" },
                       { { "A", "FS" }, { "R", "S" } })
    assert.equal("success | enter A; tick A; exit A failure; enter R; " ..
                 "tick R; exit R success; enter A; tick A; exit A success",
                 t:step(a, 1))
  end)

  it("fails when the retries are spent, or when the recovery fails",
     function()
    local a = agent_of(nav2.RecoveryNode, { number_of_retries = "2" },
                       { { "A", "F" }, { "R", "S" } })
    assert.equal("failure | enter A; tick A; exit A failure; enter R; " ..
                 "tick R; exit R success; enter A; tick A; exit A failure; " ..
                 "enter R; tick R; exit R success; enter A; tick A; " ..
                 "exit A failure", t:step(a, 1))
    local b = agent_of(nav2.RecoveryNode, {}, { { "B", "F" }, { "X", "F" } })
    assert.equal("failure | enter B; tick B; exit B failure; enter X; " ..
                 "tick X; exit X failure", t:step(b, 1))
  end)

  it("resumes a running child, and starts over after a run", function()
    local a = agent_of(nav2.RecoveryNode, {},
                       { { "A", "FRS" }, { "R", "RS" } })
    assert.equal("running | enter A; tick A; exit A failure; enter R; tick R",
                 t:step(a, 1))
    assert.equal("running | tick R; exit R success; enter A; tick A",
                 t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    -- a new run: retries counted from 0 again
    t:set("A", "FS")
    assert.equal("success | enter A; tick A; exit A failure; enter R; " ..
                 "tick R; exit R success; enter A; tick A; exit A success",
                 t:step(a, 1))
  end)
end)

describe("Nav2's PipelineSequence", function()
  it("keeps ticking the earlier children while a later one runs",
     function()
    -- Nav2's test_behavior: A runs, then succeeds while B runs, ...
    local a = agent_of(nav2.PipelineSequence, {},
                       { { "A", "RSSS" }, { "B", "RSS" }, { "C", "RS" } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success; tick B; " ..
                 "exit B success; enter C; tick C", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success; tick C; exit C success",
                 t:step(a, 1))
  end)

  it("stops at a running child it had not reached before", function()
    local a = agent_of(nav2.PipelineSequence, {},
                       { { "A", "SR" }, { "B", "R" } })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    -- A runs again, but B was reached: B is ticked too
    assert.equal("running | enter A; tick A; tick B", t:step(a, 1))
  end)

  it("fails at a failure, aborting the children that run", function()
    local a = agent_of(nav2.PipelineSequence, {},
                       { { "A", "SF" }, { "B", "R" } })
    t:step(a, 1)
    assert.equal("failure | enter A; tick A; exit A failure; abort B",
                 t:step(a, 1))
  end)
end)

describe("Nav2's RoundRobin", function()
  it("goes round its children as Nav2's test_behavior does", function()
    local a = agent_of(nav2.RoundRobin, {},
                       { { "A", "RFRF" }, { "B", "RSS" }, { "C", "RF" } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
    -- the next run starts at the child after the one that succeeded
    assert.equal("running | enter C; tick C", t:step(a, 1))
    assert.equal("running | tick C; exit C failure; enter A; tick A",
                 t:step(a, 1))
    -- the failures are counted across ticks: C and A, then B succeeds
    assert.equal("success | tick A; exit A failure; enter B; tick B; " ..
                 "exit B success", t:step(a, 1))
  end)

  it("fails when every child failed in a row, and starts over", function()
    local a = agent_of(nav2.RoundRobin, {},
                       { { "A", "F" }, { "B", "FR" }, { "C", "F" } })
    assert.equal("failure | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B failure; enter C; tick C; exit C failure",
                 t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
  end)

  it("starts from its first child after it was cut off", function()
    local a = agent_of(nav2.RoundRobin, {}, { { "A", "FS" }, { "B", "R" } })
    assert.equal("running | enter A; tick A; exit A failure; enter B; tick B",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort B", t:take())
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)
end)

describe("Nav2's RateController", function()
  it("ticks its child at hz, and every tick while it runs", function()
    local a = agent_of(nav2.RateController, { hz = "2" },
                       { { "P", "SSRS" } })
    assert.equal("success | enter P; tick P; exit P success", t:step(a, 0.1))
    assert.equal("running |", t:step(a, 0.2)) -- 0.2 s of the 0.5 s period
    assert.equal("success | enter P; tick P; exit P success", t:step(a, 0.3))
    assert.equal("running |", t:step(a, 0.25))
    assert.equal("running | enter P; tick P", t:step(a, 0.25))
    assert.equal("success | tick P; exit P success", t:step(a, 0.01))
  end)

  it("starts a new period after it was cut off", function()
    local a = agent_of(nav2.RateController, { hz = "1" }, { { "P", "S" } })
    t:step(a, 1)
    assert.equal("running |", t:step(a, 0.1))
    a:abort()
    assert.equal("success | enter P; tick P; exit P success", t:step(a, 0.1))
  end)

  it("loads from BehaviorTree.CPP XML once defined", function()
    nav2.define(bt)
    t:register { Plan = "S", Go = "R" }
    local root = bt.import([[
<root BTCPP_format="4"><BehaviorTree ID="Nav">
  <PipelineSequence><RateController hz="1.0"><Plan/></RateController><Go/>
  </PipelineSequence></BehaviorTree></root>]], "btcpp", { file = "n.xml" })
    local a = bt.agent(bt.tree(root, { name = "nav" }))
    assert.equal("running | enter Plan; tick Plan; exit Plan success; " ..
                 "enter Go; tick Go", t:step(a, 0.5))
    assert.equal("running | tick Go", t:step(a, 0.5))
    -- the rate controller waits (running), the pipeline goes on to Go
    assert.same({ "PipelineSequence", "RateController", "Go" }, a:running())
  end)
end)

describe("a weighted random selector", function()
  local said
  local function agent(seed, n)
    said = {}
    local kids = {}
    for i = 1, n or 3 do
      kids[i] = bt.action(function() said[#said + 1] = i return true end)
    end
    return bt.agent(bt.tree(weighted.WeightedRandom(
      { weights = "3,1,1", seed = seed }, kids)))
  end

  local function picks(a, k)
    for _ = 1, k do a:tick(1) end
    return table.concat(said, "")
  end

  it("replays its choices from the same seed, and after a reset", function()
    local first = picks(agent(42), 30)
    assert.equal(first, picks(agent(42), 30))
    local a = agent(42)
    picks(a, 10)
    a:reset()
    said = {}
    assert.equal(first:sub(1, 10), picks(a, 10))
    assert.are_not.equal(first, picks(agent(7), 30))
  end)

  it("picks by weight", function()
    local s = picks(agent(1), 3000)
    local ones = select(2, s:gsub("1", ""))
    assert.is_true(ones > 1600 and ones < 2000, "child 1: " .. ones)
  end)

  it("tries the others in its order when a child fails", function()
    local a = bt.agent(bt.tree(weighted.WeightedRandom({ weights = { 1, 0 } },
      { t:action("A", "F"), t:action("B", "S") })))
    assert.equal("success | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
  end)

  it("takes its seed from the agent's blackboard", function()
    local kids = {}
    local out = {}
    for i = 1, 4 do
      kids[i] = bt.action(function(ag) out[ag] = (out[ag] or "") .. i
                                       return true end)
    end
    local tree = bt.tree(weighted.WeightedRandom({ seed_key = "seed" }, kids))
    local a = bt.agent(tree, { blackboard = { seed = 5 } })
    local b = bt.agent(tree, { blackboard = { seed = 5 } })
    local c = bt.agent(tree, { blackboard = { seed = 6 } })
    for _ = 1, 20 do a:tick(1); b:tick(1); c:tick(1) end
    assert.equal(out[a], out[b])
    assert.are_not.equal(out[a], out[c])
  end)
end)

describe("Nav2's own navigation tree", function()
  it("loads and runs with these control nodes and leaves of the game's",
     function()
    nav2.define(bt)
    local log, x, blocked = {}, 0, true
    local function note(s) log[#log + 1] = s end
    bt.register("GoalUpdated", function() return false end)
    bt.register("ComputePathToPose", function(_, _, args)
      note("plan")
      args.path = { to = args.goal }
      return true
    end)
    bt.register("FollowPath", function(_, _, args)
      if blocked and x == 2 then note("blocked") return false end
      x = x + 1
      return x >= args.path.to or bt.RUNNING
    end)
    for _, name in ipairs { "ClearEntireCostmap", "Spin", "Wait", "BackUp" } do
      bt.register(name, function(_, _, args)
        note(name .. (args.service_name and " " .. args.service_name or ""))
        if name == "Spin" then blocked = false end
        return true
      end)
    end
    local tree = assert(bt.load(
      "tests/trees/nav2/navigate_to_pose_w_replanning_and_recovery.xml"))
    assert.equal("MainTree", tree.name)
    local a = bt.agent(tree, { blackboard = { goal = 5 } })
    local s, ticks = bt.RUNNING, 0
    while s == bt.RUNNING and ticks < 30 do
      s, ticks = a:tick(0.25), ticks + 1
    end
    assert.equal(bt.SUCCESS, s)
    assert.equal(5, x)
    -- blocked: FollowPath's own recovery clears the local costmap and
    -- fails again; the pipeline fails (aborting the waiting rate
    -- controller, so the next attempt plans at once); the round robin's
    -- first recovery clears both costmaps, the second (Spin) frees the way
    local L = "ClearEntireCostmap local_costmap/clear_entirely_local_costmap"
    local G = "ClearEntireCostmap global_costmap/clear_entirely_global_costmap"
    assert.equal(table.concat({ "plan", "blocked", L, "blocked", L, G, "plan",
                                "blocked", L, "blocked", "Spin", "plan" }, ", "),
                 table.concat(log, ", "))
  end)
end)
