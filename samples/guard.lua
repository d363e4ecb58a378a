-- guard.lua: the monster of the classic behavior tree articles, event
-- driven. It patrols its beat. Where the articles poll "do I see the
-- player?" every tick, this guard has senses, run by the game before each
-- tick, that write bb.enemy only when it changes; a bt.guard on that key,
-- above the patrol in a selector, aborts the patrol (its abort callback
-- runs) at the next tick and fights: chase, attack in reach, flee when its
-- health is low. When bb.enemy is cleared, the same guard aborts the
-- fight. Out of danger it rests until healed; when the world's alarm rings
-- (a key of the world blackboard, the parent of every guard's), it runs to
-- its post and stands watch. Death sits in the tree's priority section, so
-- it beats everything. Leaves are named (bt.register) lifecycle tables
-- reading the blackboard (bb.hp, bb.enemy...) and moving a.owner, the NPC.
--
-- As a module (the arena uses it): local guard = require "guard" gives
-- guard.tree, guard.build(), guard.definition() (its root node and tree
-- options), guard.leaves, guard.sense(npc) and
-- guard.spawn(world, x, y, opts, tree).
-- As a script: lua5.4 samples/guard.lua [--test] plays scripted situations
-- with one guard and one player and checks the outcome.
--
-- The world is a plain table: { dt = seconds per tick, w, h = size,
-- players = { creature... }, bb = the world blackboard (optional) }. A
-- creature (player or NPC) is a table with x, y and agent; its hit points
-- are agent.bb.hp.

-- Find bonsai and the other samples (setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)

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

-- Senses --------------------------------------------------------------------

-- The guard's eyes, run by the game before each tick (not by the tree):
-- the nearest living player within bb.sight becomes bb.enemy, nil when
-- there is none. The key is written only when it changes, so the combat
-- guard of the tree, which watches it, costs nothing in between.
local function sense(npc)
  local bb = npc.agent.bb
  local best, best_d = nil, bb.sight
  for _, p in ipairs(npc.world.players) do
    if alive(p) then
      local d = dist(npc, p)
      if d <= best_d then best, best_d = p, d end
    end
  end
  if bb.enemy ~= best then bb.enemy = best end
end

-- Leaves --------------------------------------------------------------------
-- Registered by name, so trees (and tree files loaded with bt.load, see
-- hotreload.lua) use them as bt.action "patrol" or bt.condition "in_reach".

local leaves = {}

-- Conditions on blackboard values run in C, without a Lua call; a value
-- "$key" compares with another key of the blackboard.
leaves.dead = bt.named("dead", bt.check("hp", "<=", 0))
leaves.low_health = bt.named("low_health", bt.check("hp", "<=", "$flee_hp"))
leaves.hurt = bt.named("hurt", bt.check("hp", "<", "$max_hp"))

-- The distance changes every tick while fighting, so this one is polled.
bt.register("in_reach", function(a, bb)
  return dist(a.owner, bb.enemy) <= bb.reach
end)

-- Walks the beat: a.owner.route is a list of points, bb.leg the current one.
bt.register("patrol", {
  enter = function(a)
    a.owner.state = "P"
    count(a, "patrol")
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
  abort = function(a) -- cut off: resume this leg later
    count(a, "patrol interrupted")
    a.owner.interrupted_at = a.time
  end,
})

bt.register("chase", {
  enter = function(a)
    a.owner.state = "C"
    count(a, "chase")
  end,
  tick = function(a, bb)
    local t = bb.enemy
    step_toward(a.owner, t.x, t.y, bb.run_speed)
    return bt.RUNNING -- until in reach (attack) or out of sight
  end,
})

-- Swings every bb.swing seconds of agent time after a short wind-up;
-- succeeds when the enemy goes down.
bt.register("attack", {
  enter = function(a, bb)
    a.owner.state = "A"
    count(a, "attack")
    bb.next_swing = a.time + bb.swing / 2
  end,
  tick = function(a, bb)
    if a.time < bb.next_swing then return bt.RUNNING end
    local foe = bb.enemy
    -- The senses ran before this tick: another guard may have felled the
    -- enemy since. Then there is nothing left to do here.
    if not alive(foe) then return bt.SUCCESS end
    hit(foe, bb.damage)
    count(a, "hit")
    bb.next_swing = a.time + bb.swing
    if alive(foe) then return bt.RUNNING end
    count(a, "kill")
    return bt.SUCCESS
  end,
})

-- Runs straight away from the enemy, sliding along the walls. It has no
-- abort callback, so being cut off arrives at exit as bt.ABORTED.
bt.register("flee", {
  enter = function(a)
    a.owner.state = "F"
    count(a, "flee")
  end,
  tick = function(a, bb)
    local me, t, w = a.owner, bb.enemy, a.owner.world
    local dx, dy = me.x - t.x, me.y - t.y
    local d = math.max(math.sqrt(dx * dx + dy * dy), 0.01)
    step_toward(me, clamp(me.x + dx / d * 5, 0, w.w - 1),
                clamp(me.y + dy / d * 5, 0, w.h - 1), bb.run_speed)
    return bt.RUNNING -- until out of sight: the senses clear bb.enemy
  end,
  exit = function(a, bb, args, status)
    if status == bt.ABORTED and bb.hp > 0 then count(a, "escape") end
  end,
})

-- Licks its wounds: bb.regen hit points per second up to bb.max_hp.
bt.register("rest", {
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
})

-- The alarm rang: run to the post and stand watch until it stops.
bt.register("hold_post", {
  enter = function(a)
    a.owner.state = "!"
    count(a, "alert")
  end,
  tick = function(a, bb)
    local post = a.owner.post
    step_toward(a.owner, post.x, post.y, bb.run_speed)
    return bt.RUNNING -- until the alarm stops
  end,
})

bt.register("die", {
  enter = function(a)
    a.owner.state = "X"
    count(a, "die")
  end,
  tick = function() return bt.RUNNING end, -- a corpse stays a corpse
})

-- The tree ------------------------------------------------------------------

-- A selector with memory: each tick it goes on with the branch that runs.
-- Nothing is polled to leave it: the guards watch their keys and abort
-- at the next tick when one changes. The definition (root node and tree
-- options) is what samples/testing/ gives the test kit.
local function definition()
  local L = leaves
  return
    bt.selector { name = "guard",
      -- bb.enemy set: abort the branch running below (patrol, rest, watch)
      -- and fight; cleared: abort the fight. "both" = "self" + "lower".
      bt.guard { name = "combat", bt.is_set("enemy"), abort = "both",
        bt.reactive_selector { name = "fight", -- re-checked every tick
          bt.filter { name = "retreat", conditions = { L.low_health },
                      bt.action "flee" },
          bt.filter { name = "strike", conditions = { bt.condition "in_reach" },
                      bt.action "attack" },
          bt.action "chase",
        },
      },
      -- Checked when reached (abort "none"): a rest is not interrupted by
      -- this guard, only by the combat guard above.
      bt.guard { name = "recover", L.hurt, abort = "none",
                 bt.action "rest" },
      -- bb.alarm is not the guard's own: it is read through from the world
      -- blackboard, and its observers fire for every guard.
      bt.guard { name = "alert", bt.is_set("alarm"), abort = "both",
                 bt.action "hold_post" },
      bt.action "patrol",
    },
    { name = "guard",
      priority = {
        bt.filter { name = "death", conditions = { L.dead },
                    bt.action "die" },
      } }
end

local function build() return bt.tree(definition()) end

local tree = build()

-- Default blackboard of a fresh guard (speeds in cells per second).
local stats = {
  hp = 10, max_hp = 10, flee_hp = 3, regen = 1.5, sight = 5, reach = 1.2,
  damage = 1, swing = 1.0, walk_speed = 1.5, run_speed = 2.5,
}

-- A guard posted at (x, y): its beat is a square of side 2 around the post.
-- Its blackboard's parent is world.bb (if any); opts overrides blackboard
-- values; tree defaults to guard.tree. Returns the NPC table; npc.agent is
-- its agent.
local function spawn(world, x, y, opts, t)
  local npc = { x = x, y = y, world = world, kind = "guard", state = "P",
                did = {}, post = { x = x, y = y } }
  npc.route = { { x = x - 1, y = y - 1 }, { x = x + 1, y = y - 1 },
                { x = x + 1, y = y + 1 }, { x = x - 1, y = y + 1 } }
  local bb = { parent = world.bb, leg = 1 }
  for k, v in pairs(stats) do bb[k] = v end
  for k, v in pairs(opts or {}) do bb[k] = v end
  npc.agent = bt.agent(t or tree, { owner = npc, blackboard = bb })
  return npc
end

local M = { tree = tree, build = build, definition = definition,
            leaves = leaves, spawn = spawn,
            sense = sense, stats = stats, dist = dist,
            step_toward = step_toward, hit = hit, alive = alive }

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

local check = sample.check

local world = { dt = 0.1, w = 40, h = 20, players = {},
                bb = bt.blackboard {} } -- the world's keys: alarm
-- The player is a plain table with an agent-shaped blackboard holder: the
-- guard only reads x, y and agent.bb.hp.
local player = { x = 30, y = 10, agent = { bb = { hp = 3 } } }
world.players[1] = player

local g = spawn(world, 10, 10)
local a = g.agent

local function path() return table.concat(a:running(), " > ") end

-- The game loop: the senses, then the tree.
local function run(ticks, what)
  local status
  for _ = 1, ticks do
    sense(g)
    status = a:tick(world.dt)
  end
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
check(a.bb.enemy == nil, "no enemy")

-- 2. The player steps into sight (5 cells). The senses set bb.enemy; the
-- tree does not poll, so nothing happens until the next tick, where the
-- combat guard aborts the patrol (its abort callback runs) and fights.
player.x, player.y = 14, 10
sense(g)
check(a.bb.enemy == player, "the senses set bb.enemy")
check(same(a:running(), "guard > patrol") and not g.did["patrol interrupted"],
      "still patrolling until the next tick, got %s", path())
local seen_at = a.time
run(1, "2. player in sight")
check(g.did["patrol interrupted"] == 1, "patrol abort callback ran once")
check(g.interrupted_at == seen_at + world.dt,
      "the patrol was aborted at the tick after bb.enemy was set (%.1f), "
      .. "got %s", seen_at + world.dt, g.interrupted_at)
check(same(a:running(), "guard > combat > fight > chase"),
      "chasing, got %s", path())

-- 3. The guard closes in and strikes until the player (3 hp) goes down;
-- then the senses clear bb.enemy and the guard patrols again.
run(40, "3. chase, attack, kill")
check(g.did.attack == 1 and g.did.hit == 3 and g.did.kill == 1,
      "one attack, 3 hits, 1 kill; got %s, %s, %s",
      g.did.attack, g.did.hit, g.did.kill)
check(player.agent.bb.hp == 0, "player down, hp %s", player.agent.bb.hp)
check(a.bb.enemy == nil, "no enemy left")
check(same(a:running(), "guard > patrol"), "back on patrol, got %s", path())
check(g.did["patrol interrupted"] == 1, "the patrol was cut off once")

-- 4. A hurt guard (2 hp) that sees the player flees; out of sight, the
-- senses clear bb.enemy and the combat guard aborts the flight (the
-- escape); then it rests.
player.agent.bb.hp = 10
a.bb.hp = 2
player.x, player.y = g.x + 2, g.y
run(1, "4. hurt, player near")
check(same(a:running(), "guard > combat > fight > retreat > flee"),
      "fleeing, got %s", path())
check(g.did["patrol interrupted"] == 2, "the patrol was cut off again")
run(20, "   ... runs away")
check(g.did.escape == 1, "escaped once")
check(same(a:running(), "guard > recover > rest"), "resting, got %s", path())
check(dist(g, player) > a.bb.sight, "out of sight")
player.x, player.y = 35, 18 -- the player walks off
run(60, "   ... rests until healed")
check(a.bb.hp == a.bb.max_hp, "healed to %s, got %s", a.bb.max_hp, a.bb.hp)
check(g.did.healed == 1, "healed once")
check(same(a:running(), "guard > patrol"), "patrolling again, got %s", path())

-- 5. The alarm rings in the world blackboard. The guard's blackboard does
-- not hold it but reads it through its parent, and its guard watches it:
-- at the next tick the patrol is cut off and the guard runs to its post.
world.bb.alarm = true
check(a.bb.alarm == true, "the alarm reads through")
local rang_at = a.time
run(1, "5. the alarm rings")
check(g.did["patrol interrupted"] == 3 and g.interrupted_at == rang_at +
      world.dt, "the alarm cut off the patrol at the next tick")
check(same(a:running(), "guard > alert > hold_post"), "alert, got %s", path())
run(20, "   ... at the post")
check(g.x == g.post.x and g.y == g.post.y and g.state == "!",
      "standing watch at the post")
world.bb.alarm = nil -- all clear: the alert guard aborts the watch
run(1, "   ... all clear")
check(same(a:running(), "guard > patrol"), "patrolling again, got %s", path())
check(g.did.alert == 1, "one alert")

-- 6. Death beats everything: the priority branch aborts the tree.
player.x, player.y = g.x + 3, g.y
run(1, "6. player seen again")
check(same(a:running(), "guard > combat > fight > chase"), "chase again")
a.bb.hp = 0
local s = run(5, "   ... killed")
check(s == bt.RUNNING and same(a:running(), "death > die"),
      "dying, got %s %s", s, path())
check(g.state == "X" and g.did.die == 1, "dead once")

-- Everything the guard did, in order of the situations above.
local expected = {
  patrol = 7, ["patrol leg"] = 3, ["patrol interrupted"] = 4, chase = 2,
  attack = 1, hit = 3, kill = 1, flee = 1, escape = 1, rest = 1, healed = 1,
  alert = 1, die = 1,
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
