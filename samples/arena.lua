-- arena.lua: a small deterministic world where a few hundred NPCs run the
-- guard and villager trees of the other samples, plus a handful of heroes
-- roaming about, all ticked together with bt.tick_all at a fixed dt.
-- Guards patrol, chase and attack the heroes, flee when hurt and die;
-- villagers keep their daily schedule and run home when a hero comes near.
-- One world blackboard is the parent of every NPC's blackboard: it holds
-- the hour, which the villagers' schedule checks in C (bt.check reads it
-- through), and the alarm, rung for a few seconds whenever a guard falls:
-- a bt.guard on it sends every patrolling guard to its post at once.
-- A fallen guard also makes a noise: the world sends it, with where it
-- fell, to the sentries (bt.send), who doze (their agents sleep) until an
-- event wakes them, go and look, then come back (bt.guard{ event }). The
-- archers shoot at heroes in range and put their bow away before they
-- flee from one too close, or stop when none is in range: a latent abort
-- (their shoot's abort returns bt.RUNNING for half a second).
--
--   lua5.4 samples/arena.lua            on a terminal: an animated text map,
--                                       then a summary; otherwise the summary
--   lua5.4 samples/arena.lua --test     no map, no timings: checks the exact
--                                       outcome of the default run
-- Other flags: --no-map, --map (draw even when not on a terminal), --fast
-- (no pause between frames), --ticks=N, --seed=N, --record FILE (a trace
-- file of every agent, for the viewer: scripts/view FILE), --live [PORT]
-- (serves the agents live on 127.0.0.1:PORT, default 8642, at real-time
-- speed; open the printed URL: the world starts when the page connects),
-- --coverage FILE (coverage of the three trees by the test kit,
-- bonsai.test: printed as a table and written to FILE as JSON),
-- --coverage-min=P (fails the run when a tree covers less than P percent
-- of its outcomes), --profile (profiles the trees, tree:profile: printed at
-- the end, written into the --record file, sent to the --live page).
--
-- Everything random comes from a tiny generator seeded here (not
-- math.random), and every agent is ticked in the same order, so a run with
-- the same seed always has the same outcome.

-- Find bonsai and the other samples (setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)

local bt = require "bonsai"
local guard = require "guard"
local villager = require "villager"

-- Options -------------------------------------------------------------------

local opt = { ticks = 400, seed = 42, map = nil, fast = false, test = false }
local args, ticks_given = arg or {}, false
local i = 0
while i < #args do
  i = i + 1
  local a = args[i]
  if a == "--record" and args[i + 1] then
    i = i + 1
    opt.record = args[i]
  elseif a:match("^%-%-record=.") then opt.record = a:match("=(.*)")
  elseif a == "--coverage" and args[i + 1] then
    i = i + 1
    opt.coverage = args[i]
  elseif a:match("^%-%-coverage=.") then opt.coverage = a:match("=(.*)")
  elseif a:match("^%-%-coverage%-min=[%d.]+$") then
    opt.coverage_min = tonumber(a:match("=(.*)"))
  elseif a == "--live" then
    opt.live = 8642
    if args[i + 1] and args[i + 1]:match("^%d+$") then
      i = i + 1
      opt.live = tonumber(args[i])
    end
  elseif a:match("^%-%-live=%d+$") then opt.live = tonumber(a:match("%d+"))
  elseif a == "--profile" then opt.profile = true
  elseif a == "--test" then opt.test = true
  elseif a == "--no-map" then opt.map = false
  elseif a == "--map" then opt.map = true
  elseif a == "--fast" then opt.fast = true
  elseif a:match("^%-%-ticks=%d+$") then
    opt.ticks, ticks_given = tonumber(a:match("%d+")), true
  elseif a:match("^%-%-seed=%d+$") then opt.seed = tonumber(a:match("%d+"))
  else
    io.stderr:write("usage: arena.lua [--test] [--no-map | --map] [--fast]",
                    " [--ticks=N] [--seed=N] [--record FILE]",
                    " [--live [PORT]] [--coverage FILE]",
                    " [--coverage-min=P] [--profile]\n")
    os.exit(2)
  end
end
if opt.test then -- the checked outcome is that of the default run
  opt.ticks, opt.seed, opt.map = 400, 42, false
  opt.record, opt.live = nil, nil
end
if opt.live and not ticks_given then opt.ticks = 1000000 end

local on_terminal = sample.on_terminal
local tty = not opt.test and on_terminal()
if opt.live and opt.map == nil then opt.map = false end -- the page shows it
if opt.map == nil then opt.map = tty end

local random, uniform = sample.generator(opt.seed)

-- The world -----------------------------------------------------------------

local W, H = 72, 22     -- cells; the map draws one character per cell
local DT = 0.1          -- seconds per tick
local HOUR = 1.6        -- seconds per hour of the clock: a day is 38.4 s
local START_HOUR = 4    -- the run starts at 04:00, villagers asleep
local N_GUARDS, N_VILLAGERS, N_HEROES = 200, 60, 6
local N_SENTRIES, N_ARCHERS = 8, 6
-- The sentries' and archers' own draws: the others' are those of the
-- runs before they came.
local random2 = sample.generator(opt.seed + 1)
local ALARM = 2         -- seconds the alarm rings after a guard falls

local world = {
  dt = DT, w = W, h = H, time = 0,
  players = {},          -- the heroes: what guards see
  -- The world blackboard, parent of every NPC's blackboard: hour (the
  -- villagers' schedule) and alarm (set while it rings: guards hold their
  -- posts). A key an NPC does not hold itself is read from here.
  bb = bt.blackboard { hour = START_HOUR },
  alarm_ends = 0,        -- world.time when the alarm stops
}
local guards, villagers, heroes, agents = {}, {}, {}, {}
local sentries, archers, sentry_agents = {}, {}, {}
local homes, workshops = {}, {}

-- Heroes: roam from place to place and strike any guard in reach, but only
-- for 2 seconds at a time, then break away (hit and run); a hero that goes
-- down comes back a few seconds later. Their tree is defined here.
local hero_stats = { hp = 50, max_hp = 50, reach = 1.5, damage = 4,
                     swing = 0.25, speed = 3 }

local function count(a, what)
  local did = a.owner.did
  did[what] = (did[what] or 0) + 1
end

local function edge_point()
  if random(2) == 1 then
    return uniform(1, W - 2), random(2) == 1 and 0.5 or H - 1.5
  end
  return random(2) == 1 and 0.5 or W - 1.5, uniform(1, H - 2)
end

local guard_in_reach = bt.named("guard_in_reach", bt.condition(
  function(a, bb)
    local me, best, best_d = a.owner, nil, bb.reach
    for _, g in ipairs(guards) do
      if guard.alive(g) then
        local d = guard.dist(me, g)
        if d <= best_d then best, best_d = g, d end
      end
    end
    bb.foe = best
    return best ~= nil
  end))

local strike = bt.action {
  name = "strike",
  enter = function(a, bb) bb.next_swing = a.time end,
  tick = function(a, bb)
    if a.time >= bb.next_swing then
      guard.hit(bb.foe, bb.damage)
      count(a, "strike")
      if not guard.alive(bb.foe) then count(a, "slay") end
      bb.next_swing = a.time + bb.swing
    end
    return bt.RUNNING -- until no guard is left in reach
  end,
}

local roam = bt.action {
  name = "roam",
  enter = function(a, bb)
    bb.goal_x, bb.goal_y = uniform(1, W - 2), uniform(1, H - 2)
  end,
  tick = function(a, bb)
    if guard.step_toward(a.owner, bb.goal_x, bb.goal_y, bb.speed) then
      count(a, "roam")
      return bt.SUCCESS
    end
    return bt.RUNNING
  end,
}

local respawn = bt.task(function(a, bb)
  a.owner.state = "*"
  count(a, "down")
  local back = a.time + 3
  while a.time < back do coroutine.yield() end
  a.owner.x, a.owner.y = edge_point()
  a.owner.state = "@"
  bb.hp = bb.max_hp
  return true
end)

local hero_tree = bt.tree(
  bt.reactive_selector { name = "hero",
    bt.filter { name = "fight", conditions = { guard_in_reach },
      bt.cooldown { name = "break_away", seconds = 2,
        bt.time_limit { seconds = 2, strike } } },
    roam,
  },
  { name = "hero",
    priority = { -- reuses the guard's condition: bt.check("hp", "<=", 0)
      bt.filter { name = "down", conditions = { guard.leaves.dead },
                  bt.named("respawn", respawn) },
    } })

-- Sentries: doze at their post (bt.sleep: the agent is not ticked) until a
-- noise is sent to them (bt.send wakes them); the guard of the event then
-- takes over the doze in the tick it is delivered, bt.event writes where
-- the noise was, and the sentry goes to look, looks around, comes back.
local go_look = bt.action {
  name = "go_look",
  enter = function(a) a.owner.state = "?"; count(a, "investigate") end,
  tick = function(a, bb)
    if guard.step_toward(a.owner, bb.noise.x, bb.noise.y, 2.5) then
      return bt.SUCCESS
    end
    return bt.RUNNING
  end,
}

local go_back = bt.action {
  name = "go_back",
  tick = function(a, bb)
    if guard.step_toward(a.owner, bb.post_x, bb.post_y, 2) then
      count(a, "back at post")
      return bt.SUCCESS
    end
    return bt.RUNNING
  end,
}

local doze = bt.action {
  name = "doze",
  tick = function(a)
    a.owner.state = "s"
    count(a, "doze")
    return bt.sleep(60) -- until the next noise
  end,
}

local sentry_tree = bt.tree(
  bt.selector { name = "sentry",
    bt.guard { name = "hear", event = "noise", abort = "lower",
      bt.sequence { name = "investigate",
        bt.event("noise", { key = "noise" }), go_look,
        bt.wait { name = "look_around", seconds = 1.5 }, go_back } },
    doze,
  }, { name = "sentry" })

-- Archers: shoot at the nearest hero within 12 cells; one within 4 makes
-- them flee. Both are guards on keys the world writes (target, threat):
-- the shooting is cut off when its target goes or a threat comes, and its
-- abort puts the bow away first (half a second: bt.RUNNING meanwhile, with
-- abort_timeout as a bound); the selector goes on only then.
local shoot = bt.action {
  name = "shoot",
  abort_timeout = 2,
  enter = function(a, bb)
    a.owner.state = "b"
    count(a, "draw bow")
    bb.next_arrow = a.time
  end,
  tick = function(a, bb)
    if a.time >= bb.next_arrow then
      count(a, "arrow")
      bb.next_arrow = a.time + 0.6
    end
    return bt.RUNNING
  end,
  abort = function(a, bb)
    if not bb.holster_until then
      bb.holster_until = a.time + 0.5
      a.owner.state = "H"
      count(a, "holster")
    end
    if a.time < bb.holster_until then return bt.RUNNING end
    bb.holster_until = nil
  end,
}

local flee_hero = bt.action {
  name = "flee",
  enter = function(a) a.owner.state = "f"; count(a, "flee") end,
  tick = function(a, bb)
    local me, h = a.owner, heroes[bb.threat]
    local x = math.max(1, math.min(W - 2, me.x + (me.x - h.x)))
    local y = math.max(1, math.min(H - 2, me.y + (me.y - h.y)))
    guard.step_toward(me, x, y, 3)
    return bt.RUNNING
  end,
}

local watch = bt.action {
  name = "watch",
  tick = function(a) a.owner.state = "a"; return bt.RUNNING end,
}

local archer_tree = bt.tree(
  bt.selector { name = "archer",
    bt.guard { name = "threatened", bt.is_set "threat", abort = "both",
               flee_hero },
    bt.guard { name = "in_range", bt.is_set "target", abort = "both", shoot },
    watch,
  }, { name = "archer" })

-- Setting up ----------------------------------------------------------------

local function setup()
  -- The village: homes on the left, workshops a short walk away.
  for i = 1, N_VILLAGERS do
    local home = { x = random(9) + 0.5, y = random(H - 2) + 0.5 }
    local work = { x = random(6) + 10.5, y = random(H - 2) + 0.5 }
    homes[#homes + 1], workshops[#workshops + 1] = home, work
    villagers[i] = villager.spawn(world, home, work, {
      walk_speed = 3, run_speed = 5, meal_time = uniform(1, 2.6),
    })
    villagers[i].name = "villager " .. i -- the agent's label in traces
  end
  -- Guards posted all over the rest of the map.
  for i = 1, N_GUARDS do
    guards[i] = guard.spawn(world, random(W - 22) + 18.5, random(H - 4) + 1.5,
                            { leg = random(4) })
    guards[i].name = "guard " .. i
  end
  for i = 1, N_HEROES do
    local h = { world = world, kind = "hero", state = "@", did = {},
                name = "hero " .. i }
    h.x, h.y = edge_point()
    local bb = { parent = world.bb }
    for k, v in pairs(hero_stats) do bb[k] = v end
    h.agent = bt.agent(hero_tree, { owner = h, blackboard = bb })
    heroes[i], world.players[i] = h, h
  end
  for i = 1, N_SENTRIES do
    local x, y = random2(W - 22) + 18.5, random2(H - 4) + 1.5
    local npc = { world = world, kind = "sentry", state = "s", did = {},
                  name = "sentry " .. i, x = x, y = y }
    npc.agent = bt.agent(sentry_tree, { owner = npc, blackboard = {
      parent = world.bb, post_x = x, post_y = y } })
    sentries[i], sentry_agents[i] = npc, npc.agent
  end
  for i = 1, N_ARCHERS do
    local npc = { world = world, kind = "archer", state = "a", did = {},
                  name = "archer " .. i, x = W - 3.5 - random2(6),
                  y = random2(H - 4) + 1.5 }
    npc.agent = bt.agent(archer_tree, { owner = npc, blackboard = {
      parent = world.bb } })
    archers[i] = npc
  end
  for _, list in ipairs { guards, villagers, heroes, sentries, archers } do
    for _, npc in ipairs(list) do agents[#agents + 1] = npc.agent end
  end
  -- A guard that falls rings the alarm: an observer of its hit points
  -- (called after each change) sets the world's key, and every guard's
  -- alert guard sees it through its parent at its next tick.
  for _, g in ipairs(guards) do
    g.agent.bb:observe("hp", function(bb, key, new, old)
      if new <= 0 and old > 0 then
        world.bb.alarm = true
        world.alarm_ends = world.time + ALARM
        bt.send(sentry_agents, "noise", { x = g.x, y = g.y }) -- who hears it
      end
    end)
  end
end

-- Villagers are told of danger by the world: a hero within 6 cells.
local function sense_danger()
  for _, v in ipairs(villagers) do
    local near = false
    for _, h in ipairs(heroes) do
      if guard.alive(h) and guard.dist(v, h) < 6 then
        near = true
        break
      end
    end
    if near ~= v.scared then
      v.scared = near
      v.agent.bb.danger = near or nil
    end
  end
end

-- Archers see the nearest hero: a target within 12 cells, a threat within
-- 4 (the keys their guards watch, written only when they change: the
-- hero's number).
local function sense_archers()
  for _, r in ipairs(archers) do
    local best, best_d = nil, math.huge -- (the hero's number)
    for i, h in ipairs(heroes) do
      if guard.alive(h) then
        local d = guard.dist(r, h)
        if d < best_d then best, best_d = i, d end
      end
    end
    local bb = r.agent.bb
    local target = best_d < 12 and best or nil
    local threat = best_d < 4 and best or nil
    if bb.target ~= target then bb.target = target end
    if bb.threat ~= threat then bb.threat = threat end
  end
end

-- Guards see the nearest hero in sight (they write bb.enemy on change).
local function sense_heroes()
  for _, g in ipairs(guards) do
    if guard.alive(g) then guard.sense(g) end
  end
end

-- One tick of the world: the clock, the alarm, the senses, then every
-- agent.
local tick_seconds = 0 -- os.clock time spent in bt.tick_all
local step_seconds = 0 -- and in whole steps
local function step(n)
  local start = os.clock()
  world.time = n * DT
  world.bb.hour = (START_HOUR + world.time / HOUR) % 24
  if world.bb.alarm and world.time >= world.alarm_ends then
    world.bb.alarm = nil -- all clear: guards go back to their patrols
  end
  sense_danger()
  sense_heroes()
  sense_archers()
  local t0 = os.clock()
  local errors = bt.tick_all(agents, DT)
  tick_seconds = tick_seconds + (os.clock() - t0)
  step_seconds = step_seconds + (os.clock() - start)
  if errors then
    for _, e in ipairs(errors) do io.stderr:write(e.error, "\n") end
    error(#errors .. " agent(s) failed at tick " .. n)
  end
end

-- The map -------------------------------------------------------------------

-- When several NPCs share a cell, the one with the highest rank shows.
local rank = { ["@"] = 9, A = 8, C = 7, F = 6, r = 5, h = 5, ["!"] = 5,
               H = 5, f = 5, b = 5, ["?"] = 5, R = 4, a = 4, s = 4,
               ["*"] = 3, P = 2, X = 1 }
local colour = {
  P = "32", C = "33", A = "1;31", F = "36", R = "34", X = "90",
  ["!"] = "1;33",
  ["@"] = "1;35", ["*"] = "35", r = "1;37", h = "1;37",
  s = "2;36", ["?"] = "1;36", a = "32", b = "1;32", H = "1;33", f = "1;36",
  ["#"] = "2;33", ["="] = "2;32",
}

local function clock_text()
  local hours = START_HOUR + world.time / HOUR
  local h = math.floor(hours)
  return string.format("day %d %02d:%02d", math.floor(h / 24) + 1, h % 24,
                       math.floor((hours - h) * 60))
end

local function draw(n)
  local grid, level = {}, {}
  for y = 1, H do
    grid[y], level[y] = {}, {}
    for x = 1, W do grid[y][x], level[y][x] = " ", -1 end
  end
  local function put(x, y, ch, r)
    local cx = math.max(1, math.min(W, math.floor(x) + 1))
    local cy = math.max(1, math.min(H, math.floor(y) + 1))
    if r > level[cy][cx] then grid[cy][cx], level[cy][cx] = ch, r end
  end
  for _, p in ipairs(homes) do put(p.x, p.y, "#", -0.5) end
  for _, p in ipairs(workshops) do put(p.x, p.y, "=", -0.5) end
  for _, list in ipairs { guards, villagers, heroes, sentries, archers } do
    for _, npc in ipairs(list) do put(npc.x, npc.y, npc.state,
                                      rank[npc.state] or 0) end
  end
  local out = { tty and "\27[H" or "",
                string.format("Bonsai arena   tick %d/%d   %s   %d agents"
                              .. "   %-7s\n", n, opt.ticks, clock_text(),
                              #agents, world.bb.alarm and "ALARM!" or ""),
                "+" .. string.rep("-", W) .. "+\n" }
  for y = 1, H do
    out[#out + 1] = "|"
    for x = 1, W do
      local ch = grid[y][x]
      local c = tty and colour[ch]
      out[#out + 1] = c and ("\27[" .. c .. "m" .. ch .. "\27[0m") or ch
    end
    out[#out + 1] = "|\n"
  end
  out[#out + 1] = "+" .. string.rep("-", W) .. "+\n"
  out[#out + 1] = "guards    P patrol  C chase  A attack  F flee  R rest  "
                  .. "! alarm: at post  X dead\n"
  out[#out + 1] = "villagers z sleep  u get up  e eat  i idle  g walk  w work  "
                  .. "b break\n"
  out[#out + 1] = "          r run home  h hide  # home  = workshop     "
                  .. "heroes @  * down\n"
  out[#out + 1] = "sentries  s doze  ? go and look     archers a watch  b shoot  "
                  .. "H holster  f flee\n"
  io.write(table.concat(out))
  io.flush()
end

-- The summary ---------------------------------------------------------------

-- What a run did, per kind of NPC: the sum of the did tables, the number
-- of NPCs per state letter, and the number of agents per final status of
-- their tree (a:status()).
local PARTS = { "did", "states", "statuses" }

local function tally(list)
  local t = { did = {}, states = {}, statuses = {} }
  for _, npc in ipairs(list) do
    for k, n in pairs(npc.did) do t.did[k] = (t.did[k] or 0) + n end
    t.states[npc.state] = (t.states[npc.state] or 0) + 1
    local status = npc.agent:status()
    t.statuses[status] = (t.statuses[status] or 0) + 1
  end
  return t
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function line(t)
  local parts = {}
  for _, k in ipairs(sorted_keys(t)) do
    parts[#parts + 1] = string.format("%s %d", k, t[k])
  end
  return table.concat(parts, ", ")
end

-- Wraps a long line at 78 columns under a 12-column label.
local function wrapped(label, text)
  local out, cur = {}, string.format("  %-10s", label)
  for word in text:gmatch("[^,]+,?") do
    word = word:gsub("^ ", "")
    if #cur + 1 + #word > 78 then
      out[#out + 1] = cur
      cur = string.rep(" ", 12) .. word
    else
      cur = cur .. (cur:match("%S$") and " " or "") .. word
    end
  end
  out[#out + 1] = cur
  return table.concat(out, "\n")
end

local function summary()
  local kinds = { { "guards", guards }, { "villagers", villagers },
                  { "heroes", heroes }, { "sentries", sentries },
                  { "archers", archers } }
  local result = {}
  print(string.format("\nBonsai arena: %d agents (%d guards, %d villagers, "
                      .. "%d heroes, %d sentries, %d archers)\n%d ticks of "
                      .. "%g s (seed %d): day 1 %02d:00 to %s", #agents,
                      #guards, #villagers, #heroes, #sentries, #archers,
                      opt.ticks, DT, opt.seed, START_HOUR, clock_text()))
  print("What they did (times each action ran or happened, all NPCs):")
  for _, k in ipairs(kinds) do
    result[k[1]] = tally(k[2])
    print(wrapped(k[1], line(result[k[1]].did)))
  end
  print("How they ended (NPCs per state letter on the map):")
  for _, k in ipairs(kinds) do
    print(wrapped(k[1], line(result[k[1]].states)))
  end
  print("Final status of their trees:")
  for _, k in ipairs(kinds) do
    print(wrapped(k[1], line(result[k[1]].statuses)))
  end
  return result
end

-- The outcome of the default run (seed 42, 400 ticks), checked by --test.
local expected = {
  guards = {
    did = { alert = 1040, attack = 614, chase = 652, die = 15, escape = 172,
      flee = 191, healed = 94, hit = 522, kill = 10, patrol = 2799,
      ["patrol interrupted"] = 1022, ["patrol leg"] = 1777, rest = 216 },
    states = { ["!"] = 147, A = 10, C = 6, F = 11, R = 11, X = 15 },
    statuses = { running = 200 },
  },
  villagers = {
    did = { ["break"] = 55, ["come out"] = 163, eat = 45, ["get up"] = 56,
      hide = 192, idle = 79, ["meal cut short"] = 61, ["reach home"] = 412,
      ["reach work"] = 62, sleep = 158, work = 90 },
    states = { h = 29, z = 31 },
    statuses = { running = 60 },
  },
  heroes = {
    did = { down = 10, roam = 7, slay = 15, strike = 286 },
    states = { ["@"] = 6 },
    statuses = { running = 6 },
  },
  sentries = {
    did = { ["back at post"] = 8, doze = 16, investigate = 16 },
    states = { ["?"] = 8 },
    statuses = { running = 8 },
  },
  archers = {
    did = { arrow = 231, ["draw bow"] = 51, flee = 38, holster = 50 },
    states = { a = 3, b = 1, f = 2 },
    statuses = { running = 6 },
  },
}

-- Everything that must have happened at least once.
local required = {
  guards = { "patrol", "patrol leg", "patrol interrupted", "chase", "attack",
             "hit", "kill", "flee", "escape", "rest", "healed", "alert",
             "die" },
  villagers = { "sleep", "get up", "eat", "meal cut short", "idle",
                "reach work", "work", "break", "reach home", "hide",
                "come out" },
  heroes = { "roam", "strike", "slay", "down" },
  sentries = { "doze", "investigate", "back at post" },
  archers = { "draw bow", "arrow", "holster", "flee" },
}

local keywords = { ["and"] = true, ["break"] = true, ["do"] = true,
                   ["end"] = true, ["for"] = true, ["if"] = true,
                   ["in"] = true, ["not"] = true, ["or"] = true,
                   ["repeat"] = true, ["until"] = true, ["while"] = true }

-- The result as a Lua table constructor, to paste into 'expected'.
local function as_lua(result)
  local out = { "local expected = {" }
  for _, kind in ipairs { "guards", "villagers", "heroes", "sentries",
                          "archers" } do
    out[#out + 1] = "  " .. kind .. " = {"
    for _, part in ipairs(PARTS) do
      local items = {}
      for _, k in ipairs(sorted_keys(result[kind][part])) do
        local key = (k:match("^[%a_][%w_]*$") and not keywords[k]) and k
                    or string.format("[%q]", k)
        items[#items + 1] = key .. " = " .. result[kind][part][k]
      end
      local cur = "    " .. part .. " = {"
      for i, item in ipairs(items) do
        item = item .. (i < #items and "," or " },")
        if #cur + 1 + #item > 78 then
          out[#out + 1] = cur
          cur = "      " .. item
        else
          cur = cur .. " " .. item
        end
      end
      out[#out + 1] = cur
    end
    out[#out + 1] = "  },"
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n")
end

local function check(result)
  local failures = {}
  local function fail(...) failures[#failures + 1] = string.format(...) end
  for _, kind in ipairs(sorted_keys(required)) do
    for _, k in ipairs(required[kind]) do
      if not result[kind].did[k] then fail("%s never did %q", kind, k) end
    end
  end
  for _, kind in ipairs(sorted_keys(expected)) do
    for _, part in ipairs(PARTS) do
      local want, got = expected[kind][part] or {}, result[kind][part]
      for _, k in ipairs(sorted_keys(want)) do
        if got[k] ~= want[k] then
          fail("%s %s[%q]: expected %d, got %s", kind, part, k, want[k],
               got[k])
        end
      end
      for _, k in ipairs(sorted_keys(got)) do
        if not want[k] then fail("%s %s[%q] = %d unexpected", kind, part,
                                 k, got[k]) end
      end
    end
  end
  if #failures > 0 then
    io.stderr:write("arena: the outcome changed:\n  ",
                    table.concat(failures, "\n  "), "\n",
                    "If the change is intended, the new outcome is:\n",
                    as_lua(result), "\n")
    os.exit(1)
  end
  print("arena: ok")
end

-- Run -----------------------------------------------------------------------

local every, pause = 4, 0.04 -- draw every 4th tick, then wait a little

local live, socket -- bt.debug and lua-socket while serving live
local coverage -- the test kit's collector, with --coverage
local function run()
  for n = 1, opt.ticks do
    step(n)
    if live then
      live.poll()
      socket.sleep(DT) -- real time, so a person can follow
    end
    if opt.map and (n % every == 0 or n == opt.ticks) then
      draw(n)
      if tty and not opt.fast and n < opt.ticks then
        local _, how = os.execute("sleep " .. pause)
        if how == "signal" then error("interrupted", 0) end -- Ctrl-C
      end
    end
  end
end

setup()
local profiled = {} -- with --profile, the trees (each once)
if opt.profile then
  for _, a in ipairs(agents) do
    if not profiled[a.tree] then
      profiled[a.tree] = true
      profiled[#profiled + 1] = a.tree
      a.tree:profile(true)
    end
  end
end
local recorder
if opt.record then
  recorder = bt.record(opt.record, agents)
  print("arena: recording every agent to " .. opt.record)
end
if opt.coverage then
  coverage = require("bonsai.test").new_coverage()
  for _, a in ipairs(agents) do coverage:add(a) end
end
if opt.live then
  live, socket = bt.debug, require "socket"
  local _, url = live.serve { port = opt.live, agents = agents }
  print("arena: live at " .. url .. " (Ctrl-C stops); the first tick " ..
        "waits for the page")
  io.stdout:flush()
  repeat -- the page sees the world from its first tick
    live.poll()
    socket.sleep(0.02)
  until select(2, live.clients()) > 0
end
if opt.map and tty then io.write("\27[2J\27[?25l") end -- clear, hide cursor
local ok, err = pcall(run)
if opt.map and tty then io.write("\27[?25h") end -- show the cursor again
if recorder then recorder:close() end
if live then live.close() end
if not ok then
  io.stderr:write("arena: ", tostring(err), "\n")
  os.exit(1)
end

local result = summary()
for _, tree in ipairs(profiled) do
  print("\nProfile of tree " .. tree.name .. ":\n" .. tostring(tree:profile()))
end
if coverage then
  print("\nCoverage of the trees (bonsai.test):\n" .. coverage:text())
  coverage:write(opt.coverage)
  print("arena: coverage written to " .. opt.coverage)
  if opt.coverage_min then coverage:check { min = opt.coverage_min } end
end
if opt.test then
  check(result)
else
  local agent_ticks = #agents * opt.ticks
  print(string.format("Speed (os.clock): bt.tick_all took %.3f s for %d "
                      .. "ticks: %.0f ticks/s,\n  %.0f ns per agent-tick "
                      .. "(%.0f with the clock and senses)", tick_seconds,
                      opt.ticks, opt.ticks / tick_seconds,
                      tick_seconds / agent_ticks * 1e9,
                      step_seconds / agent_ticks * 1e9))
end
