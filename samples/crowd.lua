-- crowd.lua: a herd of deer run the way a game runs thousands of NPCs.
-- Deer graze, then sleep (bt.sleep) until they graze again: a sleeping deer
-- costs bt.tick_all almost nothing. Deer near the player are in a list
-- ticked every frame; far ones in a list ticked with a budget (a few per
-- frame, round the list, each getting the time it missed): level of detail.
-- When a wolf shows up the world blackboard says so; the guard that watches
-- that key wakes every sleeping deer and they flee. One deer moves to
-- another herd (as an entity moves between server services): saved with
-- a:save() and restored into a new agent, it goes on where it was.
--
--   lua5.4 samples/crowd.lua [--test]

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)

local bt = require "bonsai"

local test = arg and arg[1] == "--test"
local N, NEAR, BUDGET, DT = 2000, 200, 60, 0.1

local calls = 0 -- leaf calls this frame

local tree = bt.tree(bt.selector { name = "deer",
  bt.guard { name = "alarm", bt.is_set "wolf", abort = "lower",
    bt.action { name = "flee", tick = function(a)
      calls = calls + 1
      a.owner.x = a.owner.x + (a.owner.x >= 0 and 1 or -1) * DT
      a.owner.fled = true
      return bt.RUNNING
    end } },
  bt.sequence { name = "daily",
    bt.action { name = "graze", tick = function(a)
      calls = calls + 1
      a.owner.grazed = a.owner.grazed + 1
      return true
    end },
    bt.action { name = "rest", tick = function(a)
      calls = calls + 1
      if a.owner.rested then a.owner.rested = nil; return true end
      a.owner.rested = true
      return bt.sleep(a.owner.nap) -- wakes 'nap' seconds later
    end } } }, { name = "deer" })

local world = bt.blackboard {}
local near, far, herd = {}, {}, {}
for i = 1, N do
  local deer = { id = i, x = (i % 2 == 0 and 1 or -1) * i, grazed = 0,
                 nap = 5 + i % 7 }
  local a = bt.agent(tree, { owner = deer,
                             blackboard = { parent = world } })
  herd[i] = a
  if i <= NEAR then near[#near + 1] = a else far[#far + 1] = a end
end

local function frame()
  calls = 0
  assert(bt.tick_all(near, DT) == nil)
  assert(bt.tick_all(far, DT, { budget = BUDGET }) == nil)
  return calls
end

-- A calm minute: deer graze and sleep; most are asleep at any time.
local busiest, sleeping = 0, 0
for _ = 1, 600 do busiest = math.max(busiest, frame()) end
for _, a in ipairs(herd) do sleeping = sleeping + (a:sleeping() and 1 or 0) end
local clock_near, clock_far = near[1].time, far[#far].time
print(string.format("calm: %d deer, %d asleep now; at most %d leaf calls " ..
                    "in a frame", N, sleeping, busiest))

-- One deer moves to another herd: saved, restored into a new agent.
local mover = far[1]
local copy = bt.agent(tree, { owner = mover.owner, restore = mover:save(),
                              blackboard = { parent = world } })
far[1] = copy
print(string.format("moved deer %d (asleep %.1f s more)", copy.owner.id,
                    copy:sleeping() or 0))

-- A wolf: every guard watching "wolf" wakes its deer, asleep or not.
world.wolf = true
local woke = frame()
for _ = 1, 40 do frame() end
local fled = 0
for _, a in ipairs(herd) do fled = fled + (a.owner.fled and 1 or 0) end
print(string.format("wolf: %d leaf calls in its first frame; %d deer fled",
                    woke, fled))

if test then
  sample.check(sleeping > N * 0.8, "most deer should sleep (%d)", sleeping)
  sample.check(busiest < N / 2, "sleeping deer cost leaf calls (%d)", busiest)
  sample.check(math.abs(clock_near - 60) < 1e-6, "near clock %g", clock_near)
  -- far deer are ticked BUDGET a frame: their clocks lag by less than a
  -- trip round the list
  local lag = (#far / BUDGET) * DT
  sample.check(clock_far <= 60 + 1e-6 and clock_far > 60 - lag - 1e-6,
               "far clock %g", clock_far)
  sample.check(copy.owner.grazed > 0 and copy.time >= mover.time,
               "the moved deer goes on")
  sample.check(woke >= NEAR, "the wolf should wake the near deer (%d)", woke)
  sample.check(fled == N, "every deer should flee (%d of %d)", fled, N)
  print("crowd: ok")
end
