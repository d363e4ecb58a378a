-- custom_nodes.lua: a robot navigating with a tree shaped like Nav2's
-- "navigate with replanning and recovery", its control nodes of Nav2's own
-- written with bt.control (custom_nodes/nav2.lua) and defined by name, so
-- the BehaviorTree.CPP XML below loads as Nav2 would run it: the path is
-- recomputed at 1 Hz of agent time while the robot follows it (a pipeline),
-- and when following fails (the way is blocked) the recoveries take turns
-- (a round robin) before navigation is tried again. A weighted random
-- selector (custom_nodes/weighted.lua) picks the robot's idle chatter from
-- a seeded stream: the same words every run.
--
--   lua5.4 samples/custom_nodes.lua          prints what happens
--   lua5.4 samples/custom_nodes.lua --test   checks the outcome

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)
local check = sample.check

local bt = require "bonsai"
require("custom_nodes.nav2").define(bt)
require("custom_nodes.weighted").define(bt)

local test = arg and arg[1] == "--test"
local function say(...)
  if not test then print(...) end
end

local XML = [[
<root BTCPP_format="4" main_tree_to_execute="NavigateWithRecovery">
  <BehaviorTree ID="NavigateWithRecovery">
    <RecoveryNode number_of_retries="6" name="NavigateRecovery">
      <PipelineSequence name="NavigateWithReplanning">
        <RateController hz="1.0">
          <ComputePathToPose goal="{goal}" path="{path}"/>
        </RateController>
        <FollowPath path="{path}"/>
      </PipelineSequence>
      <RoundRobin name="RecoveryActions">
        <ClearCostmap/>
        <Spin spin_dist="1.57"/>
        <BackUp backup_dist="0.3"/>
      </RoundRobin>
    </RecoveryNode>
  </BehaviorTree>
</root>]]

-- The world: a corridor; the robot at x, the goal at 10; a crate blocks
-- x = 4 until the third recovery (BackUp) moves the robot round it.
local world = { x = 0, blocked = true, plans = 0, recoveries = {} }

bt.register("ComputePathToPose", function(_, _, args)
  world.plans = world.plans + 1
  args.path = { from = world.x, to = args.goal }
  return true
end)
bt.register("FollowPath", function(_, _, args)
  if not args.path then return false end
  if world.blocked and world.x >= 4 then return false end
  world.x = world.x + 1
  return world.x >= args.path.to or bt.RUNNING
end)
for _, name in ipairs { "ClearCostmap", "Spin", "BackUp" } do
  bt.register(name, function()
    world.recoveries[#world.recoveries + 1] = name
    if name == "BackUp" then world.blocked = false end
    return true
  end)
end

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir '" .. dir .. "'"))
local path = dir .. "/navigate.xml"
local f = assert(io.open(path, "w"))
f:write(XML)
f:close()

local tree = assert(bt.load(path))
local robot = bt.agent(tree, { blackboard = { goal = 10 } })
local status, ticks = bt.RUNNING, 0
while status == bt.RUNNING and ticks < 50 do
  ticks = ticks + 1
  status = robot:tick(0.5)
  say(string.format("t=%4.1f x=%2d %-8s %s", robot.time, world.x, status,
                    table.concat(robot:running(), " > ")))
end
os.execute("rm -rf '" .. dir .. "'")
say("recoveries: " .. table.concat(world.recoveries, ", "))

-- Idle chatter: three lines drawn with weights 3:1:1 from seed 42.
local said = {}
local function line(words)
  return bt.action(function() said[#said + 1] = words return true end)
end
local chatter = bt.tree(bt.node("WeightedRandom", { weights = "3,1,1",
                                                    seed = 42 },
  { line "Nice day.", line "Any news?", line "Hmm." }), { name = "chatter" })
local npc = bt.agent(chatter)
for _ = 1, 6 do npc:tick(1) end
local first = table.concat(said, " ")
npc:reset()
said = {}
for _ = 1, 6 do npc:tick(1) end
say("chatter: " .. first)

if test then
  check(status == bt.SUCCESS and world.x == 10,
        "the robot reaches the goal (%s at x=%d)", status, world.x)
  check(table.concat(world.recoveries, ",") == "ClearCostmap,Spin,BackUp",
        "the recoveries take turns: %s", table.concat(world.recoveries, ","))
  check(world.plans >= 3 and world.plans < ticks,
        "the path is replanned at 1 Hz, not every tick (%d plans in %d "
        .. "ticks)", world.plans, ticks)
  check(table.concat(said, " ") == first,
        "the chatter replays from its seed after a reset")
  print("custom_nodes: ok")
end
