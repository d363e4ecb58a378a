-- villager.lua: a daily schedule driven by a clock. The world's blackboard
-- holds the hour; each villager's blackboard has it as parent, so
-- bt.check("hour", ...) reads it in C. The villager gets up, eats, goes to
-- work, works with breaks, goes home, eats and sleeps. Danger (bb.danger,
-- set by the game) beats the schedule: the villager runs home and hides,
-- and when the danger is gone the branch for the current hour takes over
-- again. Shows named leaves (bt.register), a coroutine leaf (bt.task),
-- bt.wait, bt.timeout and bt.cooldown.
--
-- As a module (the arena uses it): local villager = require "villager"
-- gives villager.tree, villager.build() and villager.spawn(world, home, work).
-- As a script: lua5.4 samples/villager.lua [--test] walks two villagers
-- through a scripted day and checks what they did.
--
-- The world is a plain table: { dt = seconds per tick, bb = a blackboard
-- holding hour (0 <= hour < 24) }.

-- Find bonsai and the other samples (setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)

local bt = require "bonsai"

-- Helpers -------------------------------------------------------------------

-- Moves the NPC toward place (a table with x, y) for one tick; true once
-- it is there.
local function step_toward(npc, place, speed)
  local dx, dy = place.x - npc.x, place.y - npc.y
  local d = math.sqrt(dx * dx + dy * dy)
  local step = speed * npc.world.dt
  if d <= step then
    npc.x, npc.y = place.x, place.y
    return true
  end
  npc.x, npc.y = npc.x + dx / d * step, npc.y + dy / d * step
  return false
end

local function count(a, what)
  local did = a.owner.did
  did[what] = (did[what] or 0) + 1
end

-- A leaf that shows the letter on the map and runs until something above
-- it moves on (the clock, or danger).
local function activity(letter, what)
  return {
    enter = function(a)
      a.owner.state = letter
      count(a, what)
    end,
    tick = function() return bt.RUNNING end,
  }
end

-- Named leaves --------------------------------------------------------------
-- Registered once; trees use them as bt.action "name" or
-- bt.action("name", args). Re-registering a name changes every tree.

-- args.place: "home" or "work" (a.owner.home, a.owner.work); args.run: hurry
bt.register("walk_to", {
  enter = function(a, bb, args)
    a.owner.state = args.run and "r" or "g"
  end,
  tick = function(a, bb, args)
    local speed = args.run and bb.run_speed or bb.walk_speed
    if step_toward(a.owner, a.owner[args.place], speed) then
      return bt.SUCCESS
    end
    return bt.RUNNING
  end,
  exit = function(a, bb, args, status)
    if status == bt.SUCCESS then count(a, "reach " .. args.place) end
  end,
})

bt.register("sleep", {
  enter = function(a, bb)
    a.owner.state = "z"
    bb.in_bed = true
    bb.hungry = true -- one wakes up hungry
    count(a, "sleep")
  end,
  tick = function() return bt.RUNNING end, -- until the morning
})

-- A coroutine reads like a little script; each yield is one tick.
local function linger(a, seconds)
  local until_t = a.time + seconds
  while a.time < until_t do coroutine.yield() end
end

bt.register("get_up", bt.task(function(a, bb)
  a.owner.state = "u"
  linger(a, 1.0) -- stretch and yawn
  bb.in_bed = nil
  linger(a, 0.5) -- get dressed
  count(a, "get up")
  return true
end))

-- A meal takes bb.meal_time seconds; the tree puts a timeout on it.
bt.register("eat", {
  enter = function(a, bb)
    a.owner.state = "e"
    bb.done_eating = a.time + bb.meal_time
  end,
  tick = function(a, bb)
    return a.time >= bb.done_eating and bt.SUCCESS or bt.RUNNING
  end,
  exit = function(a, bb, args, status)
    if status == bt.SUCCESS then
      bb.hungry = nil
      count(a, "eat")
    end
  end,
  abort = function(a) count(a, "meal cut short") end,
})

-- One stint of work of args.seconds; it makes the worker hungry.
bt.register("work", {
  enter = function(a, bb, args)
    a.owner.state = "w"
    bb.stint_end = a.time + args.seconds
  end,
  tick = function(a, bb)
    return a.time >= bb.stint_end and bt.SUCCESS or bt.RUNNING
  end,
  exit = function(a, bb, args, status)
    if status == bt.SUCCESS then
      bb.goods = (bb.goods or 0) + 1
      bb.hungry = true
      count(a, "work")
    end
  end,
})

bt.register("take_break", function(a)
  a.owner.state = "b"
  count(a, "break")
  return true
end)

bt.register("idle", activity("i", "idle"))

bt.register("hide", {
  enter = function(a)
    a.owner.state = "h"
    count(a, "hide")
  end,
  tick = function() return bt.RUNNING end,
  abort = function(a) count(a, "come out") end, -- the danger is gone
})

-- The tree ------------------------------------------------------------------

-- The hours [from, to) of a schedule branch, checked in C every tick.
local function hours(from, to)
  return { bt.check("hour", ">=", from), bt.check("hour", "<", to) }
end

-- Runs child if bb[key] is set at the moment it is reached; succeeds
-- either way. (A bt.filter would check bb[key] again every tick while the
-- child runs, and abort it when the key is cleared.)
local function if_set(key, child)
  return bt.force_success(bt.sequence { bt.is_set(key), child })
end

local function build()
  -- A subtree may be used in several places: breakfast and supper.
  local meal = if_set("hungry", bt.timeout { seconds = 2, bt.action "eat" })
  return bt.tree(
    bt.reactive_selector { name = "villager",
      -- Above the schedule, so it is checked first every tick.
      bt.filter { name = "danger", conditions = { bt.is_set("danger") },
        bt.sequence { name = "run_home",
          bt.action("walk_to", { place = "home", run = true }),
          bt.action "hide",
        },
      },
      bt.filter { name = "morning", conditions = hours(6, 8),
        bt.sequence { name = "breakfast",
          if_set("in_bed", bt.action "get_up"),
          meal,
          bt.action "idle",
        },
      },
      bt.filter { name = "workday", conditions = hours(8, 17),
        bt.sequence { name = "job",
          bt.action("walk_to", { place = "work" }),
          bt.repeater { name = "shift", -- forever, until 17:00
            bt.sequence { name = "stint",
              bt.action("work", { seconds = 2 }),
              -- at most one break every 5 seconds; no break is fine too
              bt.force_success(bt.cooldown { name = "break", seconds = 5,
                bt.sequence { bt.action "take_break", bt.wait { seconds = 1 } },
              }),
            },
          },
        },
      },
      bt.filter { name = "evening", conditions = hours(17, 22),
        bt.sequence { name = "supper",
          bt.action("walk_to", { place = "home" }),
          meal,
          bt.action "idle",
        },
      },
      bt.sequence { name = "night",
        bt.action("walk_to", { place = "home" }),
        bt.action "sleep",
      },
    },
    { name = "villager" })
end

local tree = build()

local stats = { walk_speed = 1.5, run_speed = 3, meal_time = 1.5 }

-- A villager in bed at home. home and work are tables with x, y; opts
-- overrides blackboard values.
local function spawn(world, home, work, opts)
  local npc = { x = home.x, y = home.y, home = home, work = work,
                world = world, kind = "villager", state = "z", did = {} }
  local bb = bt.blackboard { parent = world.bb, in_bed = true }
  for k, v in pairs(stats) do bb[k] = v end
  for k, v in pairs(opts or {}) do bb[k] = v end
  npc.agent = bt.agent(tree, { owner = npc, blackboard = bb })
  return npc
end

local M = { tree = tree, build = build, spawn = spawn, stats = stats }

if not (arg and arg[0] and arg[0]:match("villager%.lua$")) then
  return M -- required as a module
end

-- Script: a scripted day ----------------------------------------------------

local quiet = false
for _, a in ipairs(arg) do
  if a == "--test" then quiet = true end
end

local function say(...)
  if not quiet then print(...) end
end

local check = sample.check

local world = { dt = 0.1, bb = bt.blackboard { hour = 5 } }
-- Ann eats quickly; Bob's meals take longer than the 2 s timeout.
local ann = spawn(world, { x = 2, y = 2 }, { x = 14, y = 2 })
local bob = spawn(world, { x = 2, y = 6 }, { x = 14, y = 6 },
                  { meal_time = 3 })
local folks = { ann.agent, bob.agent }

local function path(npc) return table.concat(npc.agent:running(), " > ") end

local function run(ticks, what)
  local errors = bt.tick_all(folks, world.dt)
  check(errors == nil, "tick_all: %s", errors and errors[1].error)
  for _ = 2, ticks do bt.tick_all(folks, world.dt) end
  say(string.format("%02d:00 %-10s ann: %s\n%16s bob: %s", world.bb.hour,
                    what, path(ann), "", path(bob)))
end

-- Checks the running path of npc, or only its start when it ends in "...".
local function doing(npc, expected)
  local p, prefix = path(npc), expected:match("^(.-) %.%.%.$")
  check(p == expected or (prefix and p:sub(1, #prefix) == prefix),
        "%s: expected %s, got %s", npc == ann and "ann" or "bob", expected, p)
end

-- 05:00: asleep at home.
run(5, "night")
doing(ann, "villager > night > sleep")
check(ann.did.sleep == 1 and ann.state == "z", "ann sleeps")

-- 06:00: get up (1.5 s), eat, then potter about the house.
world.bb.hour = 6
run(50, "morning")
doing(ann, "villager > morning > breakfast > idle")
doing(bob, "villager > morning > breakfast > idle")
check(ann.did["get up"] == 1 and ann.did.eat == 1, "ann got up and ate")
check(bob.did["meal cut short"] == 1 and not bob.did.eat,
      "bob's meal was cut short by the timeout")
check(not ann.agent.bb.hungry and bob.agent.bb.hungry, "only bob is hungry")

-- 08:00: walk to work (12 cells at 1.5/s: 8 s), then 2 s stints of work,
-- each followed by a 1 s break unless the last break ended less than 5 s
-- ago. In the 22 s left: work, break, work, work, work, break, work...
world.bb.hour = 8
run(300, "workday")
doing(ann, "villager > workday > job > shift > stint > work")
check(ann.x == 14 and ann.did["reach work"] == 1, "ann is at work")
check(ann.did.work == 9 and ann.did["break"] == 3,
      "ann: 9 stints, 3 breaks; got %s, %s", ann.did.work, ann.did["break"])

-- Danger: run home (12 cells at 3/s: 4 s) and hide.
ann.agent.bb.danger = true
run(20, "danger!")
doing(ann, "villager > danger > run_home > walk_to")
doing(bob, "villager > workday > job > shift ...") -- bob is not in danger
run(30, "danger!")
doing(ann, "villager > danger > run_home > hide")
check(ann.x == 2 and ann.state == "h", "ann hides at home")

-- The danger is gone: the schedule takes over again, back to work.
ann.agent.bb.danger = nil
run(1, "all clear")
doing(ann, "villager > workday > job > walk_to")
check(ann.did["come out"] == 1, "hide's abort callback ran")
run(100, "workday")
doing(ann, "villager > workday > job > shift ...")
check(ann.did["reach work"] == 2, "ann is back at work")

-- 17:00: home, supper (work made them hungry), then idle.
world.bb.hour = 17
run(120, "evening")
doing(ann, "villager > evening > supper > idle")
doing(bob, "villager > evening > supper > idle")
check(ann.did.eat == 2 and ann.did["reach home"] == 3,
      "ann ate twice and reached home 3 times (night, danger, evening)")

-- 22:00: to bed.
world.bb.hour = 22
run(5, "night")
doing(ann, "villager > night > sleep")
doing(bob, "villager > night > sleep")
check(ann.did.sleep == 2 and ann.agent.bb.in_bed, "ann is in bed again")

-- Everything they did over the day.
local expected = {
  ann = { sleep = 2, ["get up"] = 1, eat = 2, idle = 2, ["reach work"] = 2,
          work = 10, ["break"] = 4, ["reach home"] = 4, hide = 1,
          ["come out"] = 1 },
  bob = { sleep = 2, ["get up"] = 1, ["meal cut short"] = 2, idle = 2,
          ["reach work"] = 1, work = 16, ["break"] = 6, ["reach home"] = 3 },
}
for _, who in ipairs { { "ann", ann }, { "bob", bob } } do
  local name, did, want = who[1], who[2].did, expected[who[1]]
  local names = {}
  for k in pairs(did) do names[#names + 1] = k end
  table.sort(names)
  local line = {}
  for _, k in ipairs(names) do line[#line + 1] = k .. "=" .. did[k] end
  say(name .. " did: " .. table.concat(line, ", "))
  for k, n in pairs(want) do
    check(did[k] == n, "%s did[%q]: expected %d, got %s", name, k, n, did[k])
  end
  for k in pairs(did) do
    check(want[k], "%s did[%q] was not expected", name, k)
  end
end
print("villager: ok")
