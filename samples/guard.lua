-- guard.lua: the monster of the classic behavior tree articles. It patrols
-- its beat; seeing the player interrupts the patrol (the patrol's abort
-- callback runs) to chase, attack in reach, or flee when its health is low;
-- out of danger it rests until healed. Death sits in the tree's priority
-- section, so it beats everything. Leaves are lifecycle tables
-- (enter/tick/exit/abort) reading the blackboard (bb.hp, bb.target...)
-- and moving a.owner, the NPC table.
--
-- As a module (the arena uses it): local guard = require "guard" gives
-- guard.tree, guard.build(), guard.leaves and guard.spawn(world, x, y).
-- As a script: lua5.4 samples/guard.lua [--test] plays scripted situations
-- with one guard and one player and checks the outcome.
--
-- The world is a plain table: { dt = seconds per tick, w, h = size,
-- players = { creature... } }. A creature (player or NPC) is a table with
-- x, y and agent; its hit points are agent.bb.hp.

-- Find bonsai beside this file (../lua, ../build) unless LUA_PATH or
-- LUA_CPATH say where it is, and the other samples in this directory.
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$") or ""
if here == "" then here = "./" end
local function prepend(field, entry)
  if not package[field]:find(entry, 1, true) then
    package[field] = entry .. ";" .. package[field]
  end
end
if not (os.getenv("LUA_PATH_5_4") or os.getenv("LUA_PATH")) then
  prepend("path", here .. "../lua/?/init.lua")
  prepend("path", here .. "../lua/?.lua")
end
if not (os.getenv("LUA_CPATH_5_4") or os.getenv("LUA_CPATH")) then
  prepend("cpath", here .. "../build/src/?.so")
end
prepend("path", here .. "?.lua")

local bt = require "bonsai"

-- Helpers -------------------------------------------------------------------

local function dist(a, b)
  local dx, dy = b.x - a.x, b.y - a.y
  return math.sqrt(dx * dx + dy * dy)
end

-- Moves the NPC toward (x, y) at speed cells per second for one tick;
-- true once it is there.
local function step_toward(npc, x, y, speed)
  local dx, dy = x - npc.x, y - npc.y
  local d = math.sqrt(dx * dx + dy * dy)
  local step = speed * npc.world.dt
  if d <= step then
    npc.x, npc.y = x, y
    return true
  end
  npc.x, npc.y = npc.x + dx / d * step, npc.y + dy / d * step
  return false
end

local function clamp(v, lo, hi) return math.max(lo, math.min(hi, v)) end

-- Counts what an NPC did: npc.did["chase"] == 3 after three chases.
local function count(a, what)
  local did = a.owner.did
  did[what] = (did[what] or 0) + 1
end

local function hit(creature, damage)
  local bb = creature.agent.bb
  bb.hp = bb.hp - damage
end

local function alive(creature) return creature.agent.bb.hp > 0 end

-- Leaves --------------------------------------------------------------------

local leaves = {}

-- Conditions on blackboard values run in C, without a Lua call; a value
-- "$key" compares with another key of the blackboard.
leaves.dead = bt.named("dead", bt.check("hp", "<=", 0))
leaves.low_health = bt.named("low_health", bt.check("hp", "<=", "$flee_hp"))
leaves.hurt = bt.named("hurt", bt.check("hp", "<", "$max_hp"))

-- Looks for the nearest living player in sight and remembers it.
leaves.sees_player = bt.named("sees_player", bt.condition(function(a, bb)
  local me, best, best_d = a.owner, nil, bb.sight
  for _, p in ipairs(me.world.players) do
    if alive(p) then
      local d = dist(me, p)
      if d <= best_d then best, best_d = p, d end
    end
  end
  bb.target = best
  return best ~= nil
end))

leaves.in_reach = bt.named("in_reach", bt.condition(function(a, bb)
  return dist(a.owner, bb.target) <= bb.reach
end))

-- Walks the beat: a.owner.route is a list of points, bb.leg the current one.
leaves.patrol = bt.action {
  name = "patrol",
  enter = function(a)
    a.owner.state = "P"
  end,
  tick = function(a, bb)
    local p = a.owner.route[bb.leg]
    if step_toward(a.owner, p.x, p.y, bb.walk_speed) then
      return bt.SUCCESS
    end
    return bt.RUNNING
  end,
  exit = function(a, bb, args, status) -- the leg is walked: on to the next
    if status == bt.SUCCESS then
      bb.leg = bb.leg % #a.owner.route + 1
      count(a, "patrol leg")
    end
  end,
  abort = function(a, bb) -- the player showed up: resume this leg later
    count(a, "patrol interrupted")
  end,
}

leaves.chase = bt.action {
  name = "chase",
  enter = function(a)
    a.owner.state = "C"
    count(a, "chase")
  end,
  tick = function(a, bb)
    local t = bb.target
    step_toward(a.owner, t.x, t.y, bb.run_speed)
    return bt.RUNNING -- until in reach (attack) or out of sight
  end,
}

-- Swings every bb.swing seconds of agent time after a short wind-up;
-- succeeds when the target goes down.
leaves.attack = bt.action {
  name = "attack",
  enter = function(a, bb)
    a.owner.state = "A"
    count(a, "attack")
    bb.next_swing = a.time + bb.swing / 2
  end,
  tick = function(a, bb)
    if a.time < bb.next_swing then return bt.RUNNING end
    local foe = bb.target
    hit(foe, bb.damage)
    count(a, "hit")
    bb.next_swing = a.time + bb.swing
    if alive(foe) then return bt.RUNNING end
    count(a, "kill")
    return bt.SUCCESS
  end,
}

-- Runs straight away from the target, sliding along the walls. It has no
-- abort callback, so being cut off arrives at exit as bt.ABORTED.
leaves.flee = bt.action {
  name = "flee",
  enter = function(a)
    a.owner.state = "F"
    count(a, "flee")
  end,
  tick = function(a, bb)
    local me, t, w = a.owner, bb.target, a.owner.world
    local dx, dy = me.x - t.x, me.y - t.y
    local d = math.max(math.sqrt(dx * dx + dy * dy), 0.01)
    step_toward(me, clamp(me.x + dx / d * 5, 0, w.w - 1),
                clamp(me.y + dy / d * 5, 0, w.h - 1), bb.run_speed)
    return bt.RUNNING -- until out of sight, when the threat filter fails
  end,
  exit = function(a, bb, args, status)
    if status == bt.ABORTED and bb.hp > 0 then count(a, "escape") end
  end,
}

-- Licks its wounds: bb.regen hit points per second up to bb.max_hp.
leaves.rest = bt.action {
  name = "rest",
  enter = function(a)
    a.owner.state = "R"
    count(a, "rest")
  end,
  tick = function(a, bb)
    bb.hp = math.min(bb.max_hp, bb.hp + bb.regen * a.owner.world.dt)
    if bb.hp < bb.max_hp then return bt.RUNNING end
    count(a, "healed")
    return bt.SUCCESS
  end,
}

leaves.die = bt.action {
  name = "die",
  enter = function(a)
    a.owner.state = "X"
    count(a, "die")
  end,
  tick = function() return bt.RUNNING end, -- a corpse stays a corpse
}

-- The tree ------------------------------------------------------------------

local function build()
  local L = leaves
  return bt.tree(
    bt.reactive_selector { name = "guard",
      -- Checked every tick: seeing a player aborts whatever runs below.
      bt.filter { name = "threat", conditions = { L.sees_player },
        bt.reactive_selector { name = "fight",
          bt.filter { name = "retreat", conditions = { L.low_health },
                      L.flee },
          bt.filter { name = "strike", conditions = { L.in_reach },
                      L.attack },
          L.chase,
        },
      },
      bt.filter { name = "recover", conditions = { L.hurt }, L.rest },
      L.patrol,
    },
    { name = "guard",
      priority = {
        bt.filter { name = "death", conditions = { L.dead }, L.die },
      } })
end

local tree = build()

-- Default blackboard of a fresh guard (speeds in cells per second).
local stats = {
  hp = 10, max_hp = 10, flee_hp = 3, regen = 1.5, sight = 5, reach = 1.2,
  damage = 1, swing = 1.0, walk_speed = 1.5, run_speed = 2.5,
}

-- A guard posted at (x, y): its beat is a square of side 2 around the post.
-- opts overrides blackboard values. Returns the NPC table; npc.agent is its
-- agent.
local function spawn(world, x, y, opts)
  local npc = { x = x, y = y, world = world, kind = "guard", state = "P",
                did = {} }
  npc.route = { { x = x - 1, y = y - 1 }, { x = x + 1, y = y - 1 },
                { x = x + 1, y = y + 1 }, { x = x - 1, y = y + 1 } }
  local bb = { leg = 1 }
  for k, v in pairs(stats) do bb[k] = v end
  for k, v in pairs(opts or {}) do bb[k] = v end
  npc.agent = bt.agent(tree, { owner = npc, blackboard = bb })
  return npc
end

local M = { tree = tree, build = build, leaves = leaves, spawn = spawn,
            stats = stats, dist = dist, step_toward = step_toward,
            hit = hit, alive = alive }

if not (arg and arg[0] and arg[0]:match("guard%.lua$")) then
  return M -- required as a module
end

-- Script: scripted situations -----------------------------------------------

local quiet = false
for _, a in ipairs(arg) do
  if a == "--test" then quiet = true end
end

local function say(...)
  if not quiet then print(...) end
end

local function check(cond, ...)
  if not cond then error(string.format(...), 2) end
end

local world = { dt = 0.1, w = 40, h = 20, players = {} }
-- The player is a plain table with an agent-shaped blackboard holder: the
-- guard only reads x, y and agent.bb.hp.
local player = { x = 30, y = 10, agent = { bb = { hp = 3 } } }
world.players[1] = player

local g = spawn(world, 10, 10)
local a = g.agent

local function path() return table.concat(a:running(), " > ") end

local function run(ticks, what)
  local status
  for _ = 1, ticks do status = a:tick(world.dt) end
  say(string.format("%-40s %-8s %s  at (%.1f, %.1f) hp %.1f", what, status,
                    path(), g.x, g.y, a.bb.hp))
  return status
end

local function same(list, expected)
  return table.concat(list, " > ") == expected
end

-- 1. Nobody around: the guard walks its beat (2 cells per leg at 1.5/s).
run(30, "1. patrol (3 s)")
check(same(a:running(), "guard > patrol"), "patrolling, got %s", path())
check(g.did["patrol leg"] == 2, "2 legs walked, got %s", g.did["patrol leg"])
check(g.state == "P", "state P, got %s", g.state)

-- 2. The player steps into sight (5 cells): the patrol is interrupted.
player.x, player.y = 14, 10
run(1, "2. player in sight")
check(g.did["patrol interrupted"] == 1, "patrol abort callback ran once")
check(same(a:running(), "guard > threat > fight > chase"),
      "chasing, got %s", path())
check(a.bb.target == player, "target is the player")

-- 3. The guard closes in and strikes until the player (3 hp) goes down.
run(40, "3. chase, attack, kill")
check(g.did.attack == 1 and g.did.hit == 3 and g.did.kill == 1,
      "one attack, 3 hits, 1 kill; got %s, %s, %s",
      g.did.attack, g.did.hit, g.did.kill)
check(player.agent.bb.hp == 0, "player down, hp %s", player.agent.bb.hp)
check(same(a:running(), "guard > patrol"), "back on patrol, got %s", path())

-- 4. A hurt guard (2 hp) that sees the player flees, escapes, then rests.
player.agent.bb.hp = 10
a.bb.hp = 2
player.x, player.y = g.x + 2, g.y
run(1, "4. hurt, player near")
check(same(a:running(), "guard > threat > fight > retreat > flee"),
      "fleeing, got %s", path())
run(20, "   ... runs away")
check(g.did.escape == 1, "escaped once")
check(same(a:running(), "guard > recover > rest"), "resting, got %s", path())
check(dist(g, player) > a.bb.sight, "out of sight")
player.x, player.y = 35, 18 -- the player walks off
run(60, "   ... rests until healed")
check(a.bb.hp == a.bb.max_hp, "healed to %s, got %s", a.bb.max_hp, a.bb.hp)
check(g.did.healed == 1, "healed once")
check(same(a:running(), "guard > patrol"), "patrolling again, got %s", path())

-- 5. Death beats everything: the priority branch aborts the tree.
player.x, player.y = g.x + 3, g.y
run(1, "5. player seen again")
check(same(a:running(), "guard > threat > fight > chase"), "chase again")
a.bb.hp = 0
local s = run(5, "   ... killed")
check(s == bt.RUNNING and same(a:running(), "death > die"),
      "dying, got %s %s", s, path())
check(g.state == "X" and g.did.die == 1, "dead once")

-- Everything the guard did, in order of the situations above.
local expected = {
  ["patrol leg"] = 3, ["patrol interrupted"] = 3, chase = 2, attack = 1,
  hit = 3, kill = 1, flee = 1, escape = 1, rest = 1, healed = 1, die = 1,
}
for k, n in pairs(expected) do
  check(g.did[k] == n, "did[%q]: expected %d, got %s", k, n, g.did[k])
end
for k in pairs(g.did) do
  check(expected[k], "did[%q] was not expected", k)
end

say("\n" .. tree:dump(a))
say("did:")
local names = {}
for k in pairs(g.did) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do say(string.format("  %-20s %d", k, g.did[k])) end
print("guard: ok")
