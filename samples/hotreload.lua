-- hotreload.lua: editing a tree while the game runs. A small arena of
-- guards (the named leaves of guard.lua) whose tree is not in this file:
-- it is loaded with bt.load from guard.lua in a temporary directory,
-- written at start from the text below, and watched with bt.watch. Each
-- frame the game calls bt.poll(). Mid-run the "designer" saves edits:
--   1. the guards turn cowards: they flee from a hero they see instead of
--      chasing it; every guard switches at its next tick, and a node that
--      still exists keeps running (a patrol goes on, an attack too);
--   2. an edit with a syntax error, then 3. one with a definition error (a
--      retry without a child): bt.poll() reports them and the old version
--      keeps running;
--   4. the first version again: the guards chase once more.
--
--   lua5.4 samples/hotreload.lua           on a terminal: an animated map,
--                                          then the counts per phase
--   lua5.4 samples/hotreload.lua --test    no map: checks the outcome
-- Other flags: --no-map, --map (draw even when not on a terminal), --fast.

-- Find bonsai and the other samples (setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
local sample = assert(loadfile(here .. "setup.lua"))(here)

local bt = require "bonsai"
local guard = require "guard" -- registers patrol, chase, attack, flee...

-- Options -------------------------------------------------------------------

local opt = { map = nil, fast = false, test = false }
for _, a in ipairs(arg or {}) do
  if a == "--test" then opt.test = true
  elseif a == "--no-map" then opt.map = false
  elseif a == "--map" then opt.map = true
  elseif a == "--fast" then opt.fast = true
  else
    io.stderr:write("usage: hotreload.lua [--test] [--no-map | --map]",
                    " [--fast]\n")
    os.exit(2)
  end
end
if opt.test then opt.map = false end

local function on_terminal()
  local term = os.getenv("TERM")
  if not term or term == "" or term == "dumb" then return false end
  return os.execute("test -t 1") == true
end
local tty = not opt.test and on_terminal()
if opt.map == nil then opt.map = tty end

local function say(...)
  if not opt.test then print(...) end
end

-- The tree file and its edits -----------------------------------------------

-- The first version, as a designer would keep it in trees/guard.lua. The
-- file returns a node; bt.load makes it a tree named after the file. Name
-- the nodes: a reload matches old and new nodes by their path of names.
local GUARD_TREE = [[
-- guard.lua: what a guard does. Leaves are registered by samples/guard.lua.
return bt.selector { name = "guard",
  bt.guard { name = "combat", bt.is_set("enemy"), abort = "both",
    bt.reactive_selector { name = "fight",
      bt.filter { name = "strike", conditions = { bt.condition "in_reach" },
                  bt.action "attack" },
      bt.action "chase",
    },
  },
  bt.action "patrol",
}
]]

-- The edits the designer saves, made by find-and-replace on a version.
local function edited(version, find, put)
  local i, j = version:find(find, 1, true)
  assert(i, "edit: text not found: " .. find)
  return version:sub(1, i - 1) .. put .. version:sub(j + 1)
end
-- The guards flee from a hero they see instead of chasing it (they still
-- strike one in reach).
local COWARDS = edited(GUARD_TREE, 'bt.action "chase",', 'bt.action "flee",')
-- Broken: a comma forgotten after the strike filter.
local SYNTAX_ERROR = edited(COWARDS, 'bt.action "attack" },',
                            'bt.action "attack" }')
-- Broken: flee wrapped in a retry, but the child was left out.
local DEFINITION_ERROR = edited(COWARDS, 'bt.action "flee",',
  'bt.retry { name = "keep_fleeing", times = 3 },')

local EDITS = {
  { at = 150, what = "cowards: flee instead of chasing", text = COWARDS },
  { at = 300, what = "a syntax error (a comma forgotten)",
    text = SYNTAX_ERROR },
  { at = 350, what = "a definition error (a retry without a child)",
    text = DEFINITION_ERROR },
  { at = 390, what = "back to the first version", text = GUARD_TREE },
}
local TICKS = 500

-- Phases: the ticks between edits, for the counts.
local PHASES = {
  { from = 1, to = 149, what = "chasers (the first version)" },
  { from = 150, to = 299, what = "cowards (reloaded)" },
  { from = 300, to = 349, what = "syntax error: still cowards" },
  { from = 350, to = 389, what = "definition error: still cowards" },
  { from = 390, to = TICKS, what = "chasers again (reloaded)" },
}

-- A temporary directory for the tree file (os.tmpname makes a file; a
-- directory of that name replaces it).
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -m 700 '" .. dir .. "'"), "cannot create " .. dir)
local TREE_FILE = dir .. "/guard.lua"

local last_size = nil

-- Saves the tree file. bt.poll notices a change by the file's modification
-- time (in nanoseconds) and size; the clock behind the time may be coarse
-- (a few milliseconds), so an edit saved right after another must change
-- the size: a newline is added when it does not.
local function save(new_text)
  if #new_text == last_size then new_text = new_text .. "\n" end
  local f = assert(io.open(TREE_FILE, "w"))
  f:write(new_text)
  f:close()
  last_size = #new_text
end

-- The world -----------------------------------------------------------------

local W, H, DT = 48, 14, 0.1
local N_GUARDS, N_HEROES = 40, 3

local world = { dt = DT, w = W, h = H, players = {},
                bb = bt.blackboard {} }
local guards, heroes, agents = {}, {}, {}

local random, uniform = sample.generator(7)

-- Heroes walk from place to place, faster than guards run, and stop for
-- a while at each; the guards barely scratch them (hp 10^6).
local HERO_SPEED, HERO_STOP = 4, 2

local function new_goal(h)
  h.gx, h.gy = uniform(1, W - 2), uniform(1, H - 2)
end

local function walk(h)
  if h.stop > 0 then
    h.stop = h.stop - DT
  elseif guard.step_toward(h, h.gx, h.gy, HERO_SPEED) then
    h.stop = HERO_STOP
    new_goal(h)
  end
end

local tree -- loaded from TREE_FILE

local function setup()
  save(GUARD_TREE)
  local err
  tree, err = bt.load(TREE_FILE)
  assert(tree, err)
  assert(bt.watch(TREE_FILE))
  for i = 1, N_GUARDS do
    guards[i] = guard.spawn(world, random(W - 6) + 2.5, random(H - 4) + 1.5,
                            { leg = random(4), sight = 4 }, tree)
    agents[i] = guards[i].agent
  end
  for i = 1, N_HEROES do
    local h = { world = world, x = 0.5 + (i - 1) * (W - 1) / (N_HEROES - 1),
                y = i % 2 == 0 and 0.5 or H - 1.5, state = "@", stop = 0,
                agent = { bb = { hp = 1e6 } } }
    new_goal(h)
    heroes[i], world.players[i] = h, h
  end
end

-- One frame: the designer may have saved an edit, the game polls the
-- watched files, the guards look around, and every guard is ticked.
local log = {} -- what bt.poll said: { tick, reloaded, failed }

local function step(n, edit)
  if edit then save(edit.text) end
  local reloaded, failed = bt.poll()
  if #reloaded > 0 or #failed > 0 then
    log[#log + 1] = { tick = n, reloaded = reloaded, failed = failed }
  end
  for _, h in ipairs(heroes) do walk(h) end
  for _, g in ipairs(guards) do guard.sense(g) end
  local errors = bt.tick_all(agents, DT)
  if errors then error(errors[1].error, 0) end
end

-- The map -------------------------------------------------------------------

local rank = { ["@"] = 9, A = 8, C = 7, F = 6, P = 2 }
local colour = { P = "32", C = "33", A = "1;31", F = "36", ["@"] = "1;35" }

-- The frame: the map, a legend, and under it the last thing bt.poll said
-- (lines cleared to their end on a terminal).
local function draw(n, banner, news)
  local grid = {}
  for y = 1, H do
    grid[y] = {}
    for x = 1, W do grid[y][x] = { " ", -1 } end
  end
  local function put(npc)
    local cx = math.max(1, math.min(W, math.floor(npc.x) + 1))
    local cy = math.max(1, math.min(H, math.floor(npc.y) + 1))
    local r = rank[npc.state] or 0
    if r > grid[cy][cx][2] then grid[cy][cx] = { npc.state, r } end
  end
  for _, g in ipairs(guards) do put(g) end
  for _, h in ipairs(heroes) do put(h) end
  local out = { tty and "\27[H" or "",
                string.format("Bonsai hot reload   tick %3d/%d   %-40s\n", n,
                              TICKS, banner),
                "+" .. string.rep("-", W) .. "+\n" }
  for y = 1, H do
    out[#out + 1] = "|"
    for x = 1, W do
      local ch = grid[y][x][1]
      local c = tty and colour[ch]
      out[#out + 1] = c and ("\27[" .. c .. "m" .. ch .. "\27[0m") or ch
    end
    out[#out + 1] = "|\n"
  end
  out[#out + 1] = "+" .. string.rep("-", W) .. "+\n"
  out[#out + 1] = "P patrol  C chase  A attack  F flee  @ hero\n"
  for l in (news or ""):gmatch("[^\n]+") do
    out[#out + 1] = l .. (tty and "\27[K\n" or "\n")
  end
  if tty then out[#out + 1] = "\27[J" end -- clear what an older frame left
  io.write(table.concat(out))
  io.flush()
end

-- Counting ------------------------------------------------------------------

-- Each leaf counts its runs in npc.did under its own name (at enter).
local LEAVES = { "patrol", "chase", "attack", "flee" }

local function totals()
  local t = {}
  for _, k in ipairs(LEAVES) do t[k] = 0 end
  for _, g in ipairs(guards) do
    for _, k in ipairs(LEAVES) do t[k] = t[k] + (g.did[k] or 0) end
  end
  return t
end

local function path(g) return table.concat(g.agent:running(), " > ") end

-- What every guard runs and has done, and whom it sees, before a tick.
local function snapshot()
  local s = {}
  for i, g in ipairs(guards) do
    local did = {}
    for k, v in pairs(g.did) do did[k] = v end
    local running = g.agent:running()
    s[i] = { path = path(g), leaf = running[#running], did = did,
             enemy = g.agent.bb.enemy }
  end
  return s
end

-- After the tick that picked up an edit: the guards whose enemy did not
-- change, grouped by the leaf they ran before and what became of it. A
-- leaf entered again shows in its count (did[leaf] grew).
local function compare(before)
  local r = { kept = {}, reentered = {}, switched = {} }
  for i, g in ipairs(guards) do
    local b = before[i]
    if b.enemy == g.agent.bb.enemy and b.leaf then
      local leaf = b.leaf
      local entered = (g.did[leaf] or 0) - (b.did[leaf] or 0)
      local now = g.agent:running()
      local key = leaf .. " > " .. (now[#now] or "-")
      if entered > 0 then
        r.reentered[leaf] = (r.reentered[leaf] or 0) + 1
      elseif now[#now] == leaf and path(g) == b.path then
        r.kept[leaf] = (r.kept[leaf] or 0) + 1
      else
        r.switched[key] = (r.switched[key] or 0) + 1
      end
    end
  end
  return r
end

local function line(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. " " .. t[k] end
  return #keys > 0 and table.concat(keys, ", ") or "none"
end

-- Run -----------------------------------------------------------------------

local check = sample.check

local result = { phases = {}, edits = {} }
local reports = {} -- what happened at each edit, as text

local function run()
  setup()
  check(tree.name == "guard", "the tree is named after its file")
  local banner, news = PHASES[1].what, nil
  local phase, start = 1, totals()
  local dump = tree:dump()
  for n = 1, TICKS do
    local e -- the edit saved at this tick, if any
    for _, x in ipairs(EDITS) do if x.at == n then e = x end end
    local before = e and snapshot()
    step(n, e)
    if e then
      local entry = log[#log]
      check(entry and entry.tick == n, "tick %d: bt.poll saw the edit", n)
      local r = { what = e.what, reloaded = #entry.reloaded,
                  failed = entry.failed, changes = compare(before),
                  dump_changed = tree:dump() ~= dump }
      result.edits[#result.edits + 1] = r
      dump = tree:dump()
      banner = PHASES[phase].what
      local t = { string.format("tick %d: saved %s", n, e.what) }
      for _, p in ipairs(entry.reloaded) do
        t[#t + 1] = "  bt.poll: reloaded " .. p
      end
      for _, f in ipairs(entry.failed) do
        t[#t + 1] = "  bt.poll: failed " .. f.path .. "\n    " .. f.error
      end
      t[#t + 1] = "  at the next tick: kept running: " .. line(r.changes.kept)
                  .. "\n    switched: " .. line(r.changes.switched)
                  .. "\n    entered again: " .. line(r.changes.reentered)
      news = table.concat(t, "\n")
      reports[#reports + 1] = news
      if not opt.map then say("\n" .. news) end
    end
    if n == PHASES[phase].to then
      local now = totals()
      local p = { what = PHASES[phase].what, ticks = n - PHASES[phase].from + 1,
                  did = {}, states = {} }
      for _, k in ipairs(LEAVES) do p.did[k] = now[k] - start[k] end
      for _, g in ipairs(guards) do
        p.states[g.state] = (p.states[g.state] or 0) + 1
      end
      result.phases[phase] = p
      phase, start = phase + 1, now
    end
    if opt.map and (n % 4 == 0 or n == TICKS) then
      draw(n, banner, news)
      if tty and not opt.fast and n < TICKS then
        local _, how = os.execute("sleep 0.04")
        if how == "signal" then error("interrupted", 0) end
      end
    end
  end
end

if opt.map and tty then io.write("\27[2J\27[?25l") end
local ok, err = pcall(run)
if opt.map and tty then io.write("\27[?25h") end
os.remove(TREE_FILE)
os.remove(dir)
if not ok then
  io.stderr:write("hotreload: ", tostring(err), "\n")
  os.exit(1)
end

if opt.map then say("\n" .. table.concat(reports, "\n\n")) end

-- What the guards did per phase (runs started of each leaf, all guards),
-- and what they were doing at its end (guards per state letter).
say(string.format("\n%-34s %5s  %6s %5s %6s %5s   %s", "phase", "ticks",
                  "patrol", "chase", "attack", "flee", "at its end"))
for _, p in ipairs(result.phases) do
  say(string.format("%-34s %5d  %6d %5d %6d %5d   %s", p.what, p.ticks,
                    p.did.patrol, p.did.chase, p.did.attack, p.did.flee,
                    line(p.states)))
end

if not opt.test then return end

-- Checks --------------------------------------------------------------------

local P, E = result.phases, result.edits

-- Behaviour per phase: the first version chases, the cowards never do; the
-- failed edits change nothing; the restored version chases again.
check(P[1].did.chase > 0 and P[1].did.attack > 0 and P[1].did.flee == 0,
      "phase 1 chases and attacks, never flees: %s", line(P[1].did))
for i = 2, 4 do
  check(P[i].did.chase == 0 and P[i].did.flee > 0,
        "phase %d flees, never chases: %s", i, line(P[i].did))
end
check(P[5].did.chase > 0 and P[5].did.flee == 0,
      "phase 5 chases again, never flees: %s", line(P[5].did))

-- Edit 1 (reload): the running nodes that still exist kept running, none
-- was entered again; the chasers (chase is gone) switched to flee.
local c1 = E[1].changes
check(E[1].reloaded == 1 and #E[1].failed == 0 and E[1].dump_changed,
      "edit 1 reloaded")
check(next(c1.reentered) == nil, "edit 1: entered again: %s",
      line(c1.reentered))
check((c1.kept.patrol or 0) > 0 and (c1.kept.attack or 0) > 0,
      "edit 1: patrols and attacks kept running: %s", line(c1.kept))
check((c1.switched["chase > flee"] or 0) > 0 and not c1.kept.chase,
      "edit 1: chasers now flee: %s", line(c1.switched))
for k in pairs(c1.switched) do -- chase is gone: nobody starts it
  check(not k:match("> chase$"), "edit 1: unexpected switch %s", k)
end

-- Edits 2 and 3 fail: reported with the file and the reason, the tree is
-- unchanged, and every guard went on with what it ran.
local reasons = { "'}' expected", "keep_fleeing: 'retry' needs a child" }
for i, pattern in ipairs(reasons) do
  local e = E[i + 1]
  check(e.reloaded == 0 and #e.failed == 1, "edit %d failed", i + 1)
  check(e.failed[1].path == TREE_FILE, "edit %d: the path", i + 1)
  check(e.failed[1].error:find(pattern, 1, true),
        "edit %d: the message names the problem, got %s", i + 1,
        e.failed[1].error)
  check(not e.dump_changed and (e.changes.kept.flee or 0) > 0,
        "edit %d: the old tree runs, fleeing guards keep fleeing", i + 1)
  check(next(e.changes.reentered) == nil, "edit %d: entered again: %s",
        i + 1, line(e.changes.reentered))
  check(not e.changes.switched["flee > chase"], "edit %d: no chase", i + 1)
end

-- Edit 4 restores the first version: flee is gone from the fight again.
local c4 = E[4].changes
check(E[4].reloaded == 1 and #E[4].failed == 0 and E[4].dump_changed,
      "edit 4 reloaded")
check(next(c4.reentered) == nil and (c4.kept.patrol or 0) > 0,
      "edit 4: patrols kept running: %s", line(c4.kept))
check((c4.switched["flee > chase"] or 0) > 0 and not c4.kept.flee,
      "edit 4: the fleeing guards chase again: %s", line(c4.switched))
for _, g in ipairs(guards) do
  check(g.agent.tree == tree, "every agent runs the loaded tree")
end
check(#log == #EDITS, "bt.poll reported only the edits, got %d", #log)

-- The exact outcome of this deterministic run: runs started per phase,
-- and at each edit's tick what the guards kept running or switched to.
local function outcome()
  local o = { phases = {}, edits = {} }
  for i, p in ipairs(P) do
    o.phases[i] = string.format("patrol %d, chase %d, attack %d, flee %d",
                                p.did.patrol, p.did.chase, p.did.attack,
                                p.did.flee)
  end
  for i, e in ipairs(E) do
    o.edits[i] = { kept = line(e.changes.kept),
                   switched = line(e.changes.switched) }
  end
  return o
end

local expected = {
  phases = {
    "patrol 255, chase 122, attack 76, flee 0",
    "patrol 418, chase 0, attack 2, flee 175",
    "patrol 174, chase 0, attack 0, flee 76",
    "patrol 176, chase 0, attack 0, flee 107",
    "patrol 190, chase 85, attack 54, flee 0",
  },
  edits = {
    { kept = "attack 7, patrol 18",
      switched = "chase > attack 1, chase > flee 8, patrol > - 4" },
    { kept = "flee 3, patrol 32", switched = "none" },
    { kept = "flee 6, patrol 32", switched = "patrol > - 1" },
    { kept = "patrol 26", switched = "flee > chase 7" },
  },
}

local got, failures = outcome(), {}
local function differ(what, want, have)
  if want ~= have then
    failures[#failures + 1] = string.format("%s: expected %q, got %q", what,
                                            tostring(want), tostring(have))
  end
end
for i = 1, math.max(#got.phases, #expected.phases) do
  differ("phase " .. i, expected.phases[i], got.phases[i])
end
for i = 1, math.max(#got.edits, #expected.edits) do
  local want, have = expected.edits[i] or {}, got.edits[i] or {}
  differ("edit " .. i .. " kept", want.kept, have.kept)
  differ("edit " .. i .. " switched", want.switched, have.switched)
end
if #failures > 0 then
  local lua = { "local expected = {", "  phases = {" }
  for _, v in ipairs(got.phases) do
    lua[#lua + 1] = string.format("    %q,", v)
  end
  lua[#lua + 1] = "  },\n  edits = {"
  for _, e in ipairs(got.edits) do
    lua[#lua + 1] = string.format("    { kept = %q,\n      switched = %q },",
                                  e.kept, e.switched)
  end
  lua[#lua + 1] = "  },\n}"
  io.stderr:write("hotreload: the outcome changed:\n  ",
                  table.concat(failures, "\n  "),
                  "\nIf the change is intended, the new outcome is:\n",
                  table.concat(lua, "\n"), "\n")
  os.exit(1)
end
print("hotreload: ok")
