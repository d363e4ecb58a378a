-- helpers/real_nodes.lua: the nodes the projects of tests/trees define,
-- as a game using their files would provide them (bt.define for their
-- control nodes and decorators, bt.register for their leaves), with
-- semantics taken from each project's sources, simplified where a node
-- talks to a robot or a game world: that world is the agent's owner table
-- (`world`), whose fields the leaves read and which logs their calls.
-- real_files_spec loads every file of tests/trees with these.
local bt = require "bonsai"
local nav2 = require "custom_nodes.nav2"

local M = {}

local SUCCESS, FAILURE, RUNNING = bt.SUCCESS, bt.FAILURE, bt.RUNNING

-- The blackboard key of a port written "{key}", else nil.
local function key(port) return port and port:match("^{(.-)}$") end

-- Logs a call in the agent's world.
local function note(a, s)
  local log = a.owner.log
  log[#log + 1] = s
end

-- A control node named from args (the file's name attribute).
local function control(args, children, def)
  def.name = args.name
  for i, child in ipairs(children) do def[i] = child end
  return bt.control(def)
end

-- Nav2 (nav2_behavior_tree/plugins). Actions talk to servers: here they
-- succeed at once, but for FollowPath, which drives for world.drive ticks
-- (2 unless set) once the way is free; conditions read the world (a field of their name, else
-- the answer of a robot that is on its way and far from the goal).
local NAV2_CONDITIONS = {
  GoalUpdated = false, GlobalUpdatedGoal = false, IsGoalNearby = false,
  ArePosesNear = false, PathExpiringTimer = false,
  WouldAPlannerRecoveryHelp = true, WouldAControllerRecoveryHelp = true,
  WouldARouteRecoveryHelp = true, IsWithinPathTrackingBounds = true,
}
-- Actions and the output port each one writes (the value written: what
-- the action computed, named after its inputs).
local NAV2_ACTIONS = {
  ClearEntireCostmap = false, Spin = false, Wait = false, BackUp = false,
  DriveOnHeading = false, CancelControl = false, ValidatePath = false,
  RemovePassedGoals = "output_goals", ComputePathToPose = "path",
  ComputePathThroughPoses = "path", ComputeRoute = "path",
  TruncatePath = "output_path", TruncatePathLocal = "output_path",
  SmoothPath = "smoothed_path", GetPoseFromPath = "pose",
  ConcatenatePaths = "output_path", GetNextFewGoals = "output_goals",
  GetCurrentPose = "current_pose", ExtractRouteNodesAsGoals = "goals",
  AppendGoalPoseToGoals = "output_goals",
  ControllerSelector = "selected_controller",
  PlannerSelector = "selected_planner",
  ProgressCheckerSelector = "selected_progress_checker",
  GoalCheckerSelector = "selected_goal_checker",
  PathHandlerSelector = "selected_path_handler",
}

function M.nav2()
  nav2.define(bt)
  for name, answer in pairs(NAV2_CONDITIONS) do
    bt.register(name, bt.condition(function(a)
      local v = a.owner[name]
      if v == nil then v = answer end
      note(a, name)
      return v
    end))
  end
  for name, out in pairs(NAV2_ACTIONS) do
    bt.register(name, function(a, _, args)
      note(a, name)
      if out then args[out] = name end
      return true
    end)
  end
  -- FollowPath fails world.blocked times (the way is blocked) before it
  -- drives
  bt.register("FollowPath", function(a)
    local w = a.owner
    if (w.blocked or 0) > 0 then
      w.blocked = w.blocked - 1
      note(a, "FollowPath blocked")
      return false
    end
    w.driven = (w.driven or 0) + 1
    note(a, "FollowPath")
    return w.driven >= (w.drive or 2) or RUNNING
  end)
  -- DistanceController(distance): its child at first, then while it runs
  -- and each time the robot travelled `distance` (world.travelled) since
  -- the child last succeeded; running in between.
  bt.define("DistanceController", function(args, children)
    local distance = tonumber(args.distance) or 1
    return control(args, children, {
      abort = function(c) c.memory.from = nil end,
      tick = function(c, a)
        local m, at = c.memory, a.owner.travelled or 0
        if m.from and not m.running and at - m.from < distance then
          return RUNNING
        end
        m.from = m.from or at
        local s = c:tick(1)
        m.running = s == RUNNING
        if s == SUCCESS then m.from = at end
        return s
      end,
    })
  end)
  -- SpeedController(min_rate, max_rate, min_speed, max_speed): a rate
  -- controller whose rate follows the robot's speed (world.speed) between
  -- min_rate and max_rate.
  bt.define("SpeedController", function(args, children)
    local lo, hi = tonumber(args.min_rate) or 0.1, tonumber(args.max_rate) or 1
    local vlo, vhi = tonumber(args.min_speed) or 0, tonumber(args.max_speed) or 0.5
    return control(args, children, {
      abort = function(c) c.memory.start = nil end,
      tick = function(c, a)
        local m = c.memory
        local v = math.max(vlo, math.min(vhi, a.owner.speed or vlo))
        local hz = lo + (hi - lo) * (v - vlo) / (vhi - vlo)
        if m.start and not m.running and a.time - m.start < 1 / hz then
          return RUNNING
        end
        m.start = m.start or a.time
        local s = c:tick(1)
        m.running = s == RUNNING
        if s == SUCCESS then m.start = a.time end
        return s
      end,
    })
  end)
  -- GoalUpdater(input_goal, output_goal): the newest goal (world.new_goal,
  -- else input_goal) to output_goal, then its child.
  bt.define("GoalUpdater", function(args, children)
    local from, to = key(args.input_goal), key(args.output_goal)
    return control(args, children, {
      tick = function(c, a, bb)
        bb[to] = a.owner.new_goal or bb[from]
        return c:tick(1)
      end,
    })
  end)
  -- GoalUpdatedController: its child on its first tick, while it runs and
  -- when the goal changed; success otherwise.
  bt.define("GoalUpdatedController", function(args, children)
    return control(args, children, {
      enter = function(c) c.memory.first = true end,
      tick = function(c, _, bb)
        local m = c.memory
        if m.first or m.running or bb.goal ~= m.goal then
          m.first, m.goal = false, bb.goal
          local s = c:tick(1)
          m.running = s == RUNNING
          return s
        end
        return SUCCESS
      end,
    })
  end)
  -- PathLongerOnApproach(path, prox_len, length_factor): its child only when
  -- the new path is much longer near the goal (world.longer), else success.
  bt.define("PathLongerOnApproach", function(args, children)
    return control(args, children, {
      tick = function(c, a)
        if a.owner.longer then return c:tick(1) end
        return SUCCESS
      end,
    })
  end)
end

-- BehaviorTree.CPP's examples (sample_nodes/dummy_nodes.h): the battery
-- and temperature checks (world fields, true unless set), the gripper,
-- and the speaking actions, all logging their call.
function M.btcpp()
  for _, name in ipairs { "CheckBattery", "CheckTemperature" } do
    bt.register(name, bt.condition(function(a)
      note(a, name)
      return a.owner[name] ~= false
    end))
  end
  for _, name in ipairs { "OpenGripper", "CloseGripper", "SayHello" } do
    bt.register(name, function(a) note(a, name) return true end)
  end
  bt.register("SaySomething", function(a, _, args)
    note(a, "SaySomething " .. tostring(args.message))
    return true
  end)
end

-- MoveIt Pro's Behaviors (the objectives of moveit_pro_training_ws's
-- ur_base_config): each talks to a robot, a camera or the web UI; here it
-- logs its ID and succeeds. IsUserAvailable reads world.user;
-- DoTeleoperateAction runs while the operator teleoperates, writing the
-- mode the operator chose (world.mode, a list: one mode per tick of the
-- agent, the last kept) to its current_teleop_mode port; MoveGripperAction logs its
-- position; ForEachString and ForEachCollisionObject (decorators) run
-- their child once per item of their vector_in port (a list on the
-- blackboard, or a literal "a;b"), the item written to their out port,
-- one run after the other while they succeed (BehaviorTree.CPP's LoopNode).
local MOVEIT_ACTIONS = {
  "MoveToWaypoint", "ExecuteMTCTask", "SetupMTCCurrentState",
  "PlanMTCTask", "InitializeMTCTask", "WaitForUserTrajectoryApproval",
  "PublishEmpty", "ResetPlanningSceneObjects", "LoadObjectiveParameters",
  "GetPoseFromUser", "GetPointCloud", "SetupMTCUpdateGroupCollisionRule",
  "GetImage", "GetCameraInfo", "GetApriltagDetectionPose",
  "FindSingularCuboids", "WaitForDuration", "UpdatePlanningSceneService",
  "TransformPoseFrame", "SetupMtcPickFromPose", "SetupMTCMoveToPose",
  "SetupMTCMoveToJointState", "OffsetPose", "MoveToPose",
  "CreateStampedPose", "ClearSnapshot", "SplitMTCSolution",
  "SetupMTCPickCuboid", "SaveCurrentState", "RetrieveJointStateParameter",
  "ModifyObjectInPlanningScene", "GetClosestObjectToPose",
  "CallTriggerService", "UpdatePlanningScene", "TeleoperateTwist",
  "TeleoperateJointJog", "SetupMTCPickObject", "SetupMTCMoveAlongFrameAxis",
  "SetupMTCInterpolateToJointState", "SetupMTCCartesianMoveToJointState",
  "SendPointCloudToUI", "RetrieveWaypoint", "RetrievePoseParameter",
  "IsForceWithinThreshold", "IsConstraintSatisfied", "GetStringFromUser",
  "CheckCuboidSimilarity",
}
function M.moveit_pro()
  for _, name in ipairs(MOVEIT_ACTIONS) do
    bt.register(name, function(a) note(a, name) return true end)
  end
  bt.register("MoveGripperAction", function(a, _, args)
    note(a, string.format("MoveGripperAction %g", args.position))
    return true
  end)
  bt.register("IsUserAvailable", bt.condition(function(a)
    note(a, "IsUserAvailable")
    return a.owner.user == true
  end))
  local ticked = setmetatable({}, { __mode = "k" }) -- agent -> its ticks
  bt.register("DoTeleoperateAction", function(a, _, args)
    local modes = a.owner.mode or {}
    ticked[a] = (ticked[a] or 0) + 1
    args.current_teleop_mode = modes[math.min(ticked[a], #modes)] or 0
    return RUNNING
  end)
  for _, name in ipairs { "ForEachString", "ForEachCollisionObject" } do
    bt.define(name, function(args, children)
      return control(args, children, {
        enter = function(c) c.memory.i = 1 end,
        tick = function(c, _, bb)
          local m, items = c.memory, {}
          local k = key(args.vector_in)
          if k then items = bb[k] or {}
          else
            for item in tostring(args.vector_in):gmatch("[^;]+") do
              items[#items + 1] = item
            end
          end
          while m.i <= #items do
            bb[key(args.out)] = items[m.i]
            local s = c:tick(1)
            if s ~= SUCCESS then return s end
            m.i = m.i + 1
          end
          return SUCCESS
        end })
    end)
  end
end

-- SMBU PolarBear's sentry (pb2025_sentry_behavior): conditions on the
-- referee's and the vision's messages read the world (a field of their
-- name; true unless set), publishers and goals succeed; each logs its ID.
function M.pb2025_sentry()
  for _, name in ipairs { "IsGameStatus", "IsStatusOK", "IsRfidDetected",
                          "IsDetectEnemy", "IsAttacked",
                          "CalculateAttackPose" } do
    bt.register(name, bt.condition(function(a)
      note(a, name)
      return a.owner[name] ~= false
    end))
  end
  for _, name in ipairs { "PublishSpinSpeed", "PublishTwist", "PubNav2Goal",
                          "SendNav2Goal", "PublishGimbalAbsolute",
                          "PublishGimbalVelocity" } do
    bt.register(name, function(a) note(a, name) return true end)
  end
end

-- behavior3lua's and behavior3editor's sample workspaces (behavior3lua's
-- sample/process and the editor's node-config.b3-setting): the hero and
-- monster leaves. The world holds hp and the enemy's distance (none: no
-- enemy); Idle runs.
function M.behavior3()
  bt.register("Log", function(a, _, args)
    note(a, "Log " .. tostring(args.message))
    return true
  end)
  bt.register("GetHp", function(a, bb, args)
    bb[args.output[1]] = a.owner.hp
    return true
  end)
  bt.register("FindEnemy", bt.condition(function(a, bb, args)
    local d = a.owner.enemy
    if d == nil or d > (args.w or math.huge) then return false end
    bb[args.output[1]] = "enemy at " .. d
    return true
  end))
  bt.register("Attack", function(a, bb, args)
    note(a, "Attack " .. tostring(bb[args.input[1]]))
    return true
  end)
  bt.register("MoveToTarget", function(a) note(a, "MoveToTarget") return true end)
  bt.register("MoveToPos", function(a, _, args)
    note(a, "MoveToPos " .. args.x .. "," .. args.y)
    return true
  end)
  bt.register("Idle", function(a) note(a, "Idle") return RUNNING end)
  for _, name in ipairs { "TestB3", "TestOneof" } do
    bt.register(name, function(a) note(a, name) return true end)
  end
end

-- behavior3lua's hero.json listens to treeInterrupted, which the importer
-- refuses (it fires when the tree is interrupted, where no node can tick a
-- child): a game provides its own Listen, which logs the event and
-- succeeds. Defined for the rest of the run: the behavior3editor block,
-- whose test-vars.json Listen maps to the built-in, runs before.
function M.behavior3_listen()
  bt.define("Listen", function(args, children)
    return bt.action(function(a)
      note(a, "Listen " .. args.builtin .. " (" .. #children .. ")")
      return true
    end)
  end)
end

-- behavior3go's examples (examples/share): Log prints its info and
-- succeeds; SetValue stores the whole number value under key; IsValue
-- succeeds when key holds value (an unset key reads 0, as its blackboard's
-- GetInt does). behavior3go's Limiter differs from behavior3js's (which
-- the importer maps): it never resets its count (no OnOpen), counts only
-- the runs that ended, and fails without ticking after maxLoop of them.
function M.behavior3go()
  bt.define("Limiter", function(args, children)
    return control(args, children, { tick = function(c)
      local m = c.memory
      m.runs = m.runs or 0
      if m.runs >= args.maxLoop then return FAILURE end
      local s = c:tick(1)
      if s ~= RUNNING then m.runs = m.runs + 1 end
      return s
    end })
  end)
  bt.register("Log", function(a, _, args)
    note(a, tostring(args.info))
    return true
  end)
  bt.register("SetValue", function(_, bb, args)
    bb[args.key] = args.value
    return true
  end)
  bt.register("IsValue", bt.condition(function(_, bb, args)
    return (bb[args.key] or 0) == args.value
  end))
end

return M
