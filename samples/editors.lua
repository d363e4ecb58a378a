-- editors.lua: NPCs driven by trees drawn in editors. Two guards run a
-- BehaviorTree.CPP 4 file as Groot2 saves it (trees/guard.xml: a reactive
-- fallback and a subtree with port remapping), two villagers a behavior3
-- editor file (trees/villager.json). The files are copied to a temporary
-- directory and watched; each frame the game calls bt.poll(). Mid-run the
-- "designer" saves edits:
--   1. guard.xml: patrols go twice as fast (speed="2"); every guard
--      switches at its next tick, a running patrol goes on;
--   2. villager.json with a typo (truncated JSON), then with an unknown
--      node: bt.poll() reports where, and the old version keeps running;
--   3. villager.json fixed: the villagers chop two logs at a time.
--
--   lua5.4 samples/editors.lua          prints what happens
--   lua5.4 samples/editors.lua --test   checks the outcome

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)
local check = sample.check

local bt = require "bonsai"

local test = arg and arg[1] == "--test"
local function say(...)
  if not test then print(...) end
end

-- The game: a line of positions, an enemy that shows up, hungry villagers.
local world = { enemy = nil, wood = 0, meals = 0, hits = 0 }

bt.register("SeeEnemy", function(a, _, args)
  if world.enemy and math.abs(world.enemy.x - a.owner.x) <= 5 then
    args.target = world.enemy.name -- output port {enemy}
    return true
  end
  return false
end)
bt.register("Attack", function(a, _, args)
  world.hits = world.hits + 1
  say(a.owner.name .. " hits " .. args.target) -- input port {foe}
  world.enemy.hp = world.enemy.hp - 1
  if world.enemy.hp > 0 then return bt.RUNNING end
  say(args.target .. " is gone")
  world.enemy = nil
  return bt.SUCCESS
end)
bt.register("Patrol", function(a, _, args)
  a.owner.x = a.owner.x + args.speed * a.owner.dir
  if math.abs(a.owner.x - a.owner.home) >= 6 then a.owner.dir = -a.owner.dir end
  return bt.RUNNING
end)
bt.register("IsHungry", function(a, _, args)
  return a.owner.food < args.below
end)
bt.register("Eat", function(a, _, args)
  say(a.owner.name .. " eats " .. args.food)
  world.meals = world.meals + 1
  a.owner.food = 100
  return bt.SUCCESS
end)
bt.register("ChopWood", function(a, _, args)
  world.wood = world.wood + args.logs
  a.owner.food = a.owner.food - 15
  return bt.SUCCESS
end)

-- The tree files, copied where the designer edits them.
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir '" .. dir .. "'"))
local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
end
local GUARD, VILLAGER = read(here .. "trees/guard.xml"),
                        read(here .. "trees/villager.json")
write("guard.xml", GUARD)
write("villager.json", VILLAGER)

local guards = assert(bt.load(dir .. "/guard.xml"))
local villagers = assert(bt.load(dir .. "/villager.json"))
assert(bt.watch(dir))

local agents = {}
for i = 1, 2 do
  agents[#agents + 1] = bt.agent(guards, { owner = { name = "guard" .. i,
    x = i * 20, home = i * 20, dir = 1 } })
  agents[#agents + 1] = bt.agent(villagers, { owner = { name = "villager" .. i,
    food = 40 + 10 * i } })
end

-- Designer's edits, by frame; each one is saved, then seen at the next poll.
local bump = 0
local function save(name, text)
  bump = bump + 1 -- a different size, so the change shows even within
  write(name, text .. (" "):rep(bump)) -- one tick of the file clock
end
local edits = {
  [10] = function()
    say("-- designer: patrols twice as fast")
    save("guard.xml", (GUARD:gsub('speed="1"', 'speed="2"')))
  end,
  [14] = function()
    say("-- designer: saves villager.json half-written")
    save("villager.json", VILLAGER:sub(1, 300))
  end,
  [16] = function()
    say("-- designer: saves villager.json with a typo in a node name")
    save("villager.json", (VILLAGER:gsub('"ChopWood"', '"ChopWod"')))
  end,
  [18] = function()
    say("-- designer: villagers chop two logs at a time")
    save("villager.json", (VILLAGER:gsub('"logs": 1', '"logs": 2')))
  end,
}

local failures, reloads, wood_before, step = {}, 0, nil, {}
for frame = 1, 30 do
  if edits[frame] then edits[frame]() end
  local reloaded, failed = bt.poll()
  reloads = reloads + #reloaded
  for _, f in ipairs(failed) do
    failures[#failures + 1] = f.error
    say("   reload refused: " .. f.error)
  end
  if frame == 5 then
    world.enemy = { name = "wolf", x = 22, hp = 4 }
    say("-- a wolf comes near guard1")
  end
  if frame == 18 then wood_before = world.wood end
  local x = agents[3].owner.x
  local errors = bt.tick_all(agents, 0.5)
  if errors then error(errors[1].error) end
  step[frame] = math.abs(agents[3].owner.x - x) -- guard2 patrols throughout
end

local g1, g2 = agents[1], agents[3]
say(string.format("hits %d, meals %d, wood %d, reloads %d; guards at %g, %g",
                  world.hits, world.meals, world.wood, reloads,
                  g1.owner.x, g2.owner.x))

-- What the run must show.
check(world.enemy == nil and world.hits == 4, "the wolf took %d hits",
      world.hits)
check(reloads == 2, "%d reloads (expected guard.xml and villager.json)",
      reloads)
check(#failures == 2, "%d refused edits", #failures)
check(failures[1]:match("villager%.json:%d+:%d+: JSON error"),
      "the truncated file: %s", failures[1])
check(failures[2]:match("villager%.json: %$%.root%.children%[2%]%.children" ..
                        "%[1%]: node 'ChopWod': no leaf registered as " ..
                        "'ChopWod'"), "the typo: %s", failures[2])
check(world.meals >= 2, "%d meals", world.meals)
-- after the fix each chop brings two logs
check((world.wood - wood_before) % 2 == 0 and world.wood - wood_before >= 4,
      "wood %d -> %d", wood_before, world.wood)
check(step[9] == 1 and step[11] == 2, "guard2's steps: %g then %g",
      step[9], step[11])
check(g1.owner.x ~= g1.owner.home or g2.owner.x ~= g2.owner.home,
      "the guards patrol")
check(g1:running()[2] == "patrol", "guard1 runs %s",
      table.concat(g1:running(), " > "))
os.execute("rm -rf '" .. dir .. "'")
say("ok")
