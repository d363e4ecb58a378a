-- real_files_spec: every tree file of tests/trees taken from a public
-- project (Nav2, BehaviorTree.CPP, behavior3lua, behavior3editor,
-- behavior3go, behavior3-ts, MoveIt Pro, a RoboMaster sentry; sources in each folder's README) loads and ticks with the
-- nodes the project defines (helpers/real_nodes.lua), to the outcome its
-- semantics give; a file still refused is listed with the exact reason and
-- shows as pending.
-- Registered names last for the process and win in every importer (Nav2's
-- Wait action would hide behavior3's Wait), so the blocks run in order,
-- each registering its project's nodes first.
package.path = "samples/?.lua;" .. package.path
local bt = require "bonsai"
local real = require "helpers.real_nodes"

-- Ticks a tree by dt until it stops running (at most `max` ticks), on a
-- blackboard holding a copy of bb (optional); the status, the ticks and the
-- world's log.
local function ticks(tree, world, dt, max, bb)
  world.log = {}
  local vars = {}
  for k, v in pairs(bb or {}) do vars[k] = v end
  local a = bt.agent(tree, { owner = world, blackboard = vars })
  local s, n = bt.RUNNING, 0
  while s == bt.RUNNING and n < max do
    s, n = a:tick(dt), n + 1
  end
  return s, n, world.log
end

local function run(path, opts, world, dt, max, bb)
  return ticks(assert(bt.load(path, opts)), world, dt, max, bb)
end

-- Checks each row {file, status, ticks, first calls..., opts = , world = ,
-- bb = } under dir; rows with refused = "reason" must be refused with it.
-- The public files this spec loads: path -> "ticks" or "refused" (the
-- README's count is checked against it at the end).
local counted = {}

local function check(dir, rows, dt)
  for _, row in ipairs(rows) do
    local path = dir .. row[1]
    counted[path] = row.refused and "refused" or "ticks"
    if row.refused then
      it(path .. " is refused: " .. row.refused, function()
        local tree, err = bt.load(path, row.opts)
        assert.is_nil(tree)
        assert.equal(row.refused, err)
      end)
      pending(path .. ": still refused (" .. row.refused .. ")")
    else
      it(path .. " loads and ticks to " .. tostring(row[2]), function()
        local s, n, log = run(path, row.opts, row.world or {}, dt, 20, row.bb)
        assert.equal(row[2], s)
        assert.equal(row[3], n)
        for i = 4, #row do assert.equal(row[i], log[i - 3]) end
      end)
      if path:match("%.json$") then
        it(path .. " exports to the current behavior3 editor and back, " ..
           "ticking the same", function()
          local text = assert(bt.load(path, row.opts))
                         :export("behavior3-current")
          local s, n, log = run(path, row.opts, row.world or {}, dt, 20,
                                row.bb)
          local o = { file = path } -- its subtree paths read from the same place
          for k, v in pairs(row.opts or {}) do o[k] = v end
          local copy = bt.tree(bt.import(text, "behavior3", o))
          local s2, n2, log2 = ticks(copy, row.world or {}, dt, 20, row.bb)
          assert.same({ s, n, log }, { s2, n2, log2 })
        end)
      end
      if path:match("%.xml$") then
        it(path .. " exports to BehaviorTree.CPP and back, ticking the same",
           function()
          local text = assert(bt.load(path, row.opts)):export("btcpp")
          local s, n, log = run(path, row.opts, row.world or {}, dt, 20)
          local copy = bt.tree(bt.import(text, "btcpp",
                                         { file = path .. " (exported)" }))
          local s2, n2, log2 = ticks(copy, row.world or {}, dt, 20)
          assert.same({ s, n, log }, { s2, n2, log2 })
        end)
      end
    end
  end
end

local B3 = "tests/trees/behavior3editor/sample/"
local near = { hp = 80, enemy = 50 }
describe("behavior3editor's sample workspace", function()
  setup(real.behavior3)
  local ws = { dir = B3 } -- the editor's paths are the workspace's
  check(B3, {
    { "vars/declare-core.json", bt.SUCCESS, 3 },
    { "vars/declare-vars.json", bt.SUCCESS, 1 }, -- an empty Sequence
    { "vars/test-subtree.json", bt.SUCCESS, 1, "Log hello", opts = ws },
    -- its Check reads target[0].x: the field x of the table at index 0 of
    -- the table on key target (behavior3lua's Lua indexing); its Listen
    -- (afterRunFailure) has no child to run
    { "vars/test-vars.json", bt.SUCCESS, 1, "Log hello", "Attack enemy at 50",
      "MoveToTarget", "TestB3", "TestB3", "TestOneof", opts = ws,
      world = near, bb = { target = { [0] = { x = 3 } } } },
    { "workdir/hero.json", bt.RUNNING, 20, "Attack enemy at 50",
      opts = ws, world = near },
    -- behavior3lua's Cmp raises 'args error' without a comparison too
    { "workdir/monster.json", opts = ws, refused = B3 .. "workdir/subtree2" ..
      ".json: $.root.children[1].args: node 'Cmp': needs one of gt, ge, " ..
      "eq, lt, le" },
    { "workdir/subtree1.json", bt.SUCCESS, 3, "Log hello", opts = ws },
    { "workdir/subtree2.json", opts = ws, refused = B3 .. "workdir/" ..
      "subtree2.json: $.root.children[1].args: node 'Cmp': needs one of " ..
      "gt, ge, eq, lt, le" },
    { "workdir/sub/subtree1.json", bt.SUCCESS, 3, "Log d", opts = ws },
    { "workdir/sub/subtree2.json", opts = ws, refused = B3 .. "workdir/sub/" ..
      "subtree2.json: $.root.children[1].args: node 'Cmp': needs one of " ..
      "gt, ge, eq, lt, le" },
  }, 0.5)
end)

describe("behavior3editor's sample workspace as a library", function()
  setup(real.behavior3)
  local hero = B3 .. "workdir/hero.json"
  local function log(tree) -- its status and log once it stops running
    local s, _, calls = ticks(tree, {}, 0.5, 20)
    return s, calls
  end

  it("creates any tree of its folders by name or workspace path", function()
    local o = { dir = B3, library = "workdir", tree = "subtree1" }
    local tree = assert(bt.load(hero, o))
    assert.equal("subtree1", tree.name)
    assert.same({ bt.SUCCESS, { "Log hello" } }, { log(tree) })
    o.library, o.tree = { "workdir", "workdir/sub" }, "workdir/sub/subtree1.json"
    assert.same({ bt.SUCCESS, { "Log d" } }, { log(assert(bt.load(hero, o))) })
    -- the loaded file itself, by its name
    o.tree = "hero"
    assert.equal("hero", assert(bt.load(hero, o)).name)
    -- its test-vars uses test-subtree by path: resolved in the workspace
    o.library, o.tree = "vars/", "test-vars"
    local _, calls = log(assert(bt.load(hero, o)))
    assert.equal("Log hello", calls[1])
  end)

  it("refuses a name two files have, and one none has, listing them",
     function()
    local _, err = bt.load(hero, { dir = B3, library = { "workdir",
                                   "workdir/sub" }, tree = "subtree1" })
    assert.equal(hero .. ": several trees are named 'subtree1' " ..
      "(workdir/subtree1.json, workdir/sub/subtree1.json): choose one by " ..
      "its path", err)
    _, err = bt.load(hero, { dir = B3, library = "workdir", tree = "boss" })
    assert.equal(hero .. ": no tree 'boss' in the file nor its library " ..
      "(workdir/hero.json, workdir/monster.json, workdir/subtree1.json, " ..
      "workdir/subtree2.json)", err)
  end)
end)

describe("behavior3-ts's examples, with the events its test dispatches",
         function()
  setup(real.behavior3)
  local TS = "tests/trees/behavior3ts/example/"
  -- ticks the tree three times, sending hello (payload "world") and
  -- testOff before the second tick, as behavior3-ts's test/main.ts
  -- dispatches them between ticks; the statuses, the log and bb.args
  local function run3(tree)
    local world = { log = {} }
    local a = bt.agent(tree, { owner = world })
    local s = { a:tick(1) }
    a:send("hello", "world")
    a:send("testOff")
    s[2], s[3] = a:tick(1), a:tick(1)
    return s, world.log, a.bb.args
  end
  local function both(file, statuses, log, args)
    local path = TS .. file
    it(path .. " ticks as behavior3-ts runs it, and exports to the " ..
       "current editor and back, ticking the same", function()
      local tree = assert(bt.load(path))
      assert.same({ statuses, log, args }, { run3(tree) })
      local copy = bt.tree(bt.import(tree:export("behavior3-current"),
                                     "behavior3", { file = path }))
      assert.same({ statuses, log, args }, { run3(copy) })
    end)
  end
  -- its Listens start in the first run (afterRunTree fires after it); in
  -- the second tick, hello and testOff run their children first
  local listen = { "Log -------------> Listen", "Log <------------- Listen",
                   "Log after run" }
  local log = { listen[1], listen[2], listen[3], "Log hello!!!",
                "Log off test!" }
  for _ = 1, 2 do
    for _, l in ipairs(listen) do log[#log + 1] = l end
  end
  both("test-listen.json", { bt.SUCCESS, bt.SUCCESS, bt.SUCCESS }, log,
       "world")
  counted[TS .. "test-listen.json"] = "ticks" -- the other is not public
  -- WaitForEvent: running until hello, then the last Log; a new run
  both("test-wait-for-event.json", { bt.RUNNING, bt.SUCCESS, bt.RUNNING },
       { "Log -------------> WaitForEvent", "Log <------------- WaitForEvent",
         "Log -------------> WaitForEvent" }, nil)
end)

describe("behavior3lua's sample workspace", function()
  setup(function()
    real.behavior3()
    real.behavior3_listen()
  end)
  check("tests/trees/behavior3lua/", {
    { "hero.json", bt.RUNNING, 20, "Listen beforeRunTree (1)",
      "Listen afterRunTree (1)", "Listen treeInterrupted (1)",
      "Attack enemy at 50", world = near },
    { "monster.json", bt.SUCCESS, 11, "Log Attack!", "Log if true",
      world = near },
  }, 0.5)
end)

local GO = "tests/trees/behavior3go/examples/"
local unpack = table.unpack or unpack
describe("behavior3go's examples", function()
  setup(real.behavior3go)
  -- Repeat 2x Log 11, Log 22, Limit 2 activations Log 333 (Log call child
  -- in the subtree): the Limiter fails from its third activation on
  local once = { "log...11", "log...11", "log...22", "log...333" }
  local rows = {}
  for _, f in ipairs { "load_from_tree/tree.json",
                       "load_from_project/project.json",
                       "load_from_rawproject/example.b3" } do
    rows[#rows + 1] = { f, bt.SUCCESS, 1, unpack(once) }
  end
  rows[#rows + 1] = { "subtree/example.b3", bt.SUCCESS, 1, "log...11",
                      "log...11", "log...22", "call child!!", "log...333" }
  -- the Go program ticks the project's first tree, not the selected one:
  -- a Priority of (IsValue key == 1, Log break, the subtree) and the
  -- subtree, whose MemSequence logs, waits and sets key
  rows[#rows + 1] = { "memsubtree/memsubtree.b3", bt.RUNNING, 20, "sub0",
                      "set 1", "sub1", "break", "sub0", "break",
                      opts = { tree = "A behavior tree" } }
  rows[#rows + 1] = { "testwork/testwork.b3", bt.SUCCESS, 6, "job 0-0",
                      "job 0-1", "job 0-2" }
  check(GO, rows, 0.25)

  -- a library of the examples' projects (include_dirs: the folder above
  -- each): any tree of them created by its title or id
  it("create any tree of a library of projects by title or id, refusing " ..
     "a tree id two files give", function()
    local o = { include_dirs = { GO }, library = { "../subtree/example.b3" },
                tree = "child" }
    local child = assert(bt.load(GO .. "memsubtree/memsubtree.b3", o))
    assert.equal("child", child.name)
    local world = { log = {} }
    assert.equal(bt.SUCCESS, bt.agent(child, { owner = world }):tick(0.25))
    assert.same({ "call child!!" }, world.log)
    o.tree = "e11044d9-5f06-4785-ae99-aaf710bc2469"
    assert.equal("child", assert(bt.load(GO .. "memsubtree/memsubtree.b3",
                                         o)).name)
    -- the project's own selected tree stays the main one without `tree`
    o.tree = nil
    assert.equal("submem", assert(bt.load(GO .. "memsubtree/memsubtree.b3",
                                          o)).name)
    local _, err = bt.load(GO .. "subtree/example.b3", { include_dirs = { GO },
      library = { "../load_from_project" } })
    assert.equal(GO .. "load_from_project/project.json: $.trees[1]: " ..
      "duplicate tree id '67e3047e-0942-4d55-8443-9f28dc50b660' (also in " ..
      GO .. "subtree/example.b3)", err)
  end)

  local function logs(file, n)
    local world = { log = {} }
    local a = bt.agent(assert(bt.load(GO .. file)), { owner = world })
    local statuses = {}
    for i = 1, n do statuses[i] = a:tick(0.25) end
    return statuses, world.log
  end

  it("limit an activation count for the agent's life (behavior3go's " ..
     "Limiter), tick by tick", function()
    local statuses, log = logs("load_from_tree/tree.json", 4)
    assert.same({ bt.SUCCESS, bt.SUCCESS, bt.FAILURE, bt.FAILURE }, statuses)
    assert.same({ "log...11", "log...11", "log...22", "log...333",
                  "log...11", "log...11", "log...22", "log...333",
                  "log...11", "log...11", "log...22",
                  "log...11", "log...11", "log...22" }, log)
  end)

  it("name a defined node by its title, filled in, and export it to the " ..
     "classic editor as the game's node", function()
    local t = assert(bt.load(GO .. "load_from_tree/tree.json"))
    local text = t:export("behavior3")
    assert.matches('"name":"Limiter"', text, 1, true)
    assert.matches('"category":"decorator"', text, 1, true)
    local copy = bt.tree(bt.import(text, "behavior3"))
    local world = { log = {} }
    local a = bt.agent(copy, { owner = world })
    local statuses = {}
    for i = 1, 3 do statuses[i] = a:tick(0.25) end
    assert.same({ bt.SUCCESS, bt.SUCCESS, bt.FAILURE }, statuses)
    assert.matches('"title":"Limit 2 Activations"', text, 1, true)
  end)

  it("switch jobs as the fixed testwork log shows (issue 17 of " ..
     "behavior3go: a MemSequence cut off starts over)", function()
    -- the README's log after the fix: 0-0, 0-1, 0-2, then 1-0, not 1-2
    local _, log = logs("testwork/testwork.b3", 40)
    assert.same({ "job 0-0", "job 0-1", "job 0-2", "job 1-0", "job 1-1",
                  "job 1-2", "job 0-0", "job 0-1", "job 0-2", "job 1-0",
                  "job 1-1" }, { unpack(log, 1, 11) })
  end)
end)

local CPP = "tests/trees/btcpp/"
describe("BehaviorTree.CPP's examples and test trees", function()
  setup(real.btcpp)
  check(CPP .. "examples/test_files/", {
    { "Check.xml", bt.SUCCESS, 1, "CheckBattery", "CheckTemperature" },
    -- two Sleep msec="300" in a row, ticked every 250 ms
    { "log_test.xml", bt.SUCCESS, 5, opts = { main = "Main" } },
    -- BehaviorTree.CPP 4 refuses it too: a tree used as a node type
    { "subtree_test.xml", opts = { main = "BehaviorTree" }, refused =
      CPP .. "examples/test_files/subtree_test.xml:8:13: node " ..
      "'CheckStatus': no leaf registered as 'CheckStatus' (bt.define it, " ..
      "or bt.register a leaf under that name)" },
    { "subtrees/Talk.xml", bt.SUCCESS, 1, "SaySomething Hello World",
      "SayHello" },
  }, 0.25)
  -- the tutorials' trees (their C++ raw strings, unchanged): scripts with
  -- a bare '&&' in an attribute, read as BehaviorTree.CPP's tinyxml2 does
  bt.enums { RED = 1, BLUE = 2, GREEN = 3, THE_ANSWER = 42 } -- t09's
  check(CPP .. "tutorials/", {
    -- "Robot says: 42.000000, 3.140000, hello world, 1.000000"
    { "t09_scripting.xml", bt.SUCCESS, 1, "SaySomething 42",
      "SaySomething 3.14", "SaySomething hello world", "SaySomething 1" },
    -- the subtree of t14 alone, given what its model's defaults and the
    -- main tree give it (the main tree is in another text: see the README)
    { "t14_subtree_model.subtree.xml", bt.SUCCESS, 1, opts = { main = "MySub" },
      bb = { sub_in_value = 42, sub_in_name = "john" } },
    { "t14_subtree_model.subtree.xml", bt.FAILURE, 1, opts = { main = "MySub" },
      bb = { sub_in_value = 42, sub_in_name = "jane" } },
    -- BehaviorTree.CPP registers both texts, then creates MainTree: a
    -- library of two files; the ports the SubTree does not give take the
    -- model's defaults (sub_in_value 42, sub_out_result {out_result})
    { "t14_subtree_model.main.xml", bt.SUCCESS, 1,
      opts = { library = { "t14_subtree_model.subtree.xml" } } },
  }, 0.25)
  -- the fuzzer's seed corpus: one valid tree, three that BehaviorTree.CPP
  -- refuses as well (a port it does not have, a decorator without child)
  local corpus = CPP .. "fuzzing/corpus/bt_corpus/"
  check(corpus, {
    { "corpus1.xml", bt.SUCCESS, 1 },
    { "corpus2.xml", refused = corpus .. "corpus2.xml:5:21: node 'Timeout' " ..
      "('timeout_node'): unknown port 'timeout_ms'" },
    { "corpus3.xml", refused = corpus .. "corpus3.xml:4:17: node " ..
      "'SetBlackboard': unknown port 'key'" },
    { "corpus4.xml", refused = corpus .. "corpus4.xml:5:17: node " ..
      "'ForceSuccess': needs exactly one child" },
  }, 0.25)
  -- the include tests (gtest_tree.cpp's): every one ends in AlwaysSuccess
  local rows = {}
  for _, f in ipairs { "parent_no_include", "parent_include_child",
                       "parent_include_child_include_child",
                       "parent_include_child_include_parent",
                       "parent_include_child_include_sibling",
                       "child/child_no_include", "child/child_include_child",
                       "child/child_include_parent",
                       "child/child_include_sibling",
                       "child/child/child_child_no_include" } do
    rows[#rows + 1] = { f .. ".xml", bt.SUCCESS, 1 }
  end
  -- it includes ../parent_no_include.xml: outside its own directory, so
  -- the game allows the folder above (formats_btcpp_spec has the refusal)
  rows[8].opts = { include_dirs = { CPP .. "tests/trees" } }
  check(CPP .. "tests/trees/", rows, 0.25)
end)

-- MoveIt Pro's objectives: one tree a file, SubTrees referring across
-- files by ID with literal and {key} ports; the folder is the library,
-- as MoveIt Pro registers every objective file of its config package
local MP = "tests/trees/moveit_pro/objectives/"
describe("MoveIt Pro's objectives, their folder as the library", function()
  setup(real.moveit_pro)
  local lib = { library = "." }
  local rows = {}
  for _, r in ipairs {
    { "clear_snapshot", 1 }, { "close_gripper", 1 },
    -- MoveToWaypoint twice, again and again (KeepRunningUntilFailure)
    { "cycle_between_waypoints", 20, bt.RUNNING },
    { "find_cuboids", 1 }, { "inspect_surface", 1 },
    { "interpolate_to_joint_state", 1 },
    -- picks and places until a failure: none here
    { "looping_pick_and_place_object", 20, bt.RUNNING },
    { "move_to_joint_state", 1 }, { "move_to_named_pose", 1 },
    { "move_to_pose", 1 }, { "open_gripper", 1 }, { "pick_object", 1 },
    { "pick_place_object", 1 }, { "push_button", 1 },
    { "reactivate_gripper", 1 },
    { "request_teleoperation", 20, bt.RUNNING },
    { "solution_detect_april_tag_pose", 1 },
    { "solution_detect_april_tag_pose_and_pick_object", 1 },
    { "solution_pick_apriltag_annotated_object", 1 },
    { "solution_pick_apriltag_annotated_object_subtree", 1 },
    { "solution_pick_from_pose_with_mtc", 1 },
    { "solution_pick_object_using_pose", 1 }, { "take_snapshot", 1 },
    { "teleoperate", 20, bt.RUNNING },
    { "wait_for_trajectory_approval_if_user_available", 1 },
  } do
    rows[#rows + 1] = { r[1] .. ".xml", r[3] or bt.SUCCESS, r[2], opts = lib }
  end
  check(MP, rows, 0.25)

  it("teleoperate through four files, as the operator switches modes",
     function()
    -- Teleoperate -> Request Teleoperation (its literal ports) -> Close
    -- Gripper, Open Gripper, Move to Joint State, each in its own file
    local world = { log = {}, mode = { 7, 6, 3, 0 } }
    local a = bt.agent(assert(bt.load(MP .. "teleoperate.xml", lib)),
                       { owner = world })
    local function tick()
      world.log = {}
      local s = a:tick(0.25)
      return s, table.concat(world.log, ", ")
    end
    assert.same({ bt.RUNNING, "MoveGripperAction 0.7929" }, { tick() })
    assert.same({ bt.RUNNING, "MoveGripperAction 0" }, { tick() })
    assert.same({ bt.RUNNING, "RetrieveJointStateParameter, " ..
      "InitializeMTCTask, SetupMTCCurrentState, SetupMTCMoveToJointState, " ..
      "PlanMTCTask, ExecuteMTCTask, PublishEmpty" }, { tick() })
    assert.same({ bt.RUNNING, "" }, { tick() })
  end)

  it("refuse a tree without its library, naming the tree it misses",
     function()
    local _, err = bt.load(MP .. "teleoperate.xml")
    assert.equal(MP .. "teleoperate.xml:5:5: node 'Request Teleoperation': " ..
      "no BehaviorTree with ID 'Request Teleoperation' in the file; a tree " ..
      "outside it (bt.subtree by name) shares the caller's keys: write " ..
      "_autoremap=\"true\"", err)
  end)
end)

-- SMBU PolarBear's RoboMaster sentry: the action server registers every
-- file of behavior_trees/ (models.xml holds Groot2's models only) and runs
-- the tree a goal names: a folder as the library, main any tree of it
local PB = "tests/trees/pb2025_sentry/behavior_trees/"
describe("a RoboMaster sentry's trees, their folder as the library",
         function()
  setup(real.pb2025_sentry)
  local rows = {}
  for _, r in ipairs {
    -- its match tree spins and heads for its goal, again and again
    { "rmul_2025.xml", "rmul_2025", bt.RUNNING, 20 },
    { "rmul_2025.xml", "check_robot_status", bt.SUCCESS, 1 },
    -- from the other file of the folder
    { "rmul_2025.xml", "test_go_to_supply", bt.RUNNING, 20 },
    { "dev_rm.xml", "rmul_supply", bt.SUCCESS, 1 },
    { "dev_rm.xml", "test_attack_pose", bt.RUNNING, 20 },
    { "dev_rm.xml", "test_attacked_feedback", bt.RUNNING, 20 },
    { "dev_rm.xml", "test_gimbal_absolute", bt.SUCCESS, 1 },
    { "dev_rm.xml", "test_gimbal_velocity", bt.SUCCESS, 1 },
    { "dev_rm.xml", "test_is_detect_enemy", bt.SUCCESS, 1 },
    { "dev_rm.xml", "check_game_start", bt.SUCCESS, 1 },
  } do
    rows[#rows + 1] = { r[1], r[3], r[4],
                        opts = { library = ".", main = r[2] } }
  end
  check(PB, rows, 0.25)

  it("refuse to guess the tree to run, listing the file's and the " ..
     "library's", function()
    local _, err = bt.load(PB .. "rmul_2025.xml", { library = "." })
    assert.equal(PB .. "rmul_2025.xml: several BehaviorTree elements " ..
      "(check_game_start, check_robot_status, rmul_2025) and no " ..
      "main_tree_to_execute: choose one with bt.load(path, { main = ID }) " ..
      "(its library has rmul_supply, test_attack_pose, " ..
      "test_attacked_feedback, test_gimbal_absolute, test_gimbal_velocity, " ..
      "test_go_to_supply, test_is_detect_enemy)", err)
  end)
end)

describe("Nav2's navigation trees", function()
  setup(real.nav2)
  local rows = {}
  -- FollowPath drives two ticks to the goal: each navigation tree plans,
  -- then follows, and succeeds at the second tick
  for _, f in ipairs {
    "nav_to_pose_with_consistent_replanning_and_if_path_becomes_invalid",
    "navigate_on_route_graph_w_recovery",
    "navigate_through_poses_w_replanning_and_recovery",
    "navigate_to_pose_w_bounds_check",
    "navigate_to_pose_w_replanning_and_recovery",
    "navigate_to_pose_w_replanning_goal_patience_and_recovery",
    "navigate_w_recovery_and_replanning_only_if_path_becomes_invalid",
    "navigate_w_replanning_distance",
    "navigate_w_replanning_only_if_goal_is_updated",
    "navigate_w_replanning_only_if_path_becomes_invalid",
    "navigate_w_replanning_speed", "navigate_w_replanning_time",
    "navigate_w_routing_global_planning_and_control_w_recovery",
  } do
    rows[#rows + 1] = { f .. ".xml", bt.SUCCESS, 2 }
  end
  -- following a moving point never ends (KeepRunningUntilFailure)
  rows[#rows + 1] = { "follow_point.xml", bt.RUNNING, 20 }
  -- a square, three times: four drives and four turns each, in one tick
  rows[#rows + 1] = { "odometry_calibration.xml", bt.SUCCESS, 1,
                      "DriveOnHeading", "Spin", "DriveOnHeading", "Spin" }
  check("tests/trees/nav2/", rows, 0.25)

  it("export their conditions as the game registered them", function()
    local text = assert(bt.load("tests/trees/nav2/" ..
      "navigate_to_pose_w_replanning_and_recovery.xml")):export("btcpp")
    assert.matches('<Condition ID="GoalUpdated"/>', text, 1, true)
    assert.matches('<Action ID="ComputePathToPose">', text, 1, true)
    assert.matches('<Control ID="RecoveryNode">', text, 1, true)
    assert.matches('<Decorator ID="RateController">', text, 1, true)
  end)

  it("recover when the way is blocked: costmaps cleared, then on their way",
     function()
    -- FollowPath fails twice: the controller's own recovery clears the
    -- local costmap; the second failure goes to the outer recovery, whose
    -- round robin clears both costmaps; the next try plans and drives
    local function blocked(file)
      local world = { blocked = 2 }
      local s, n, log = run("tests/trees/nav2/" .. file .. ".xml", nil, world,
                            0.25, 40)
      local calls = {}
      for _, c in ipairs(log) do
        if not c:match("Selector$") then calls[#calls + 1] = c end
      end
      return s, n, table.concat(calls, ", ")
    end
    local s, n, calls = blocked(
      "navigate_to_pose_w_replanning_goal_patience_and_recovery")
    assert.equal(bt.SUCCESS, s)
    assert.equal(6, n)
    assert.equal("GlobalUpdatedGoal, IsGoalNearby, ComputePathToPose, " ..
      "FollowPath blocked, ClearEntireCostmap, FollowPath blocked, " ..
      "GoalUpdated, ClearEntireCostmap, ClearEntireCostmap, " ..
      "GlobalUpdatedGoal, IsGoalNearby, ComputePathToPose, FollowPath, " ..
      "FollowPath", calls)
    s, n, calls = blocked("navigate_on_route_graph_w_recovery")
    assert.equal(bt.SUCCESS, s)
    assert.equal("GlobalUpdatedGoal, ValidatePath, FollowPath blocked, " ..
      "WouldAControllerRecoveryHelp, ClearEntireCostmap, FollowPath " ..
      "blocked, WouldAControllerRecoveryHelp, GoalUpdated, " ..
      "ClearEntireCostmap, ClearEntireCostmap, GlobalUpdatedGoal, " ..
      "ValidatePath, FollowPath, FollowPath", calls)
  end)

end)

describe("the README's count of public tree files", function()
  it("is the count of this spec's run", function()
    local total, ticking = 0, 0
    for _, what in pairs(counted) do
      total = total + 1
      if what == "ticks" then ticking = ticking + 1 end
    end
    local f = assert(io.open("README.md"))
    local readme = f:read("*a"):gsub("%s+", " ")
    f:close()
    local n, k, r = readme:match("Of (%d+) tree files from public " ..
      "projects %b() ?,? ?(%d+) load and tick; the other (%d+) are refused")
    assert.same({ total, ticking, total - ticking },
                { tonumber(n), tonumber(k), tonumber(r) })
  end)
end)
