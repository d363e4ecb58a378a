-- cluster.lua: runs the cluster sample and checks it, as a Tarantool
-- script (the driver is itself a Tarantool process, for net.box):
--   tarantool cluster.lua [--npcs N] [--seconds S] [--kills K] [--port P]
--                         [--dir D] [--live 1]
-- Starts the three instances (instance.lua) on 127.0.0.1:P+1..P+3 with
-- their databases in D (a new temporary directory by default), spawns N
-- NPCs spread over them, lets them live S seconds during which it kills
-- an instance with SIGKILL K times (each restarted one second later),
-- then pauses the ticking, lets the hand-overs in flight finish and
-- checks: every NPC exists exactly once, on the instance that owns its
-- zone, and no travel was entered twice (entered - trips is 0 or 1: the
-- NPCs resumed what they were doing). Prints the figures; exits 1 on a
-- broken invariant. Every loop is bounded; the instances are stopped at
-- the end whatever happens. --live 1: each instance serves its NPCs to the
-- live debugger (P+11..P+13) and the driver prints the address of
-- world.html, the three pages side by side.
local fiber = require "fiber"
local clock = require "clock"
local netbox = require "net.box"
local uuid = require "uuid"

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
if here == "" then here = "./" end
here = require("fio").abspath(here) .. "/" -- box.cfg's work_dir moves the cwd
package.path = here .. "?.lua;" .. package.path
local W = require "world"

local opt = { npcs = 300, seconds = 8, kills = 1, port = 3400, live = 0 }
local i = 1
while arg[i] do
  local k, v = arg[i]:match("^%-%-(%w+)$"), arg[i + 1]
  if k == "dir" then opt.dir = v
  elseif k and opt[k] ~= nil then opt[k] = tonumber(v)
  else io.stderr:write("cluster.lua: unknown argument ", arg[i], "\n") os.exit(2) end
  i = i + 2
end
if not opt.dir then
  local p = io.popen("mktemp -d")
  opt.dir = p:read("*l")
  p:close()
end

local pids, conns = {}, {}

-- The instances' tree file, a copy the driver edits mid-run (a designer's
-- save: every instance must reload it).
local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end
local tree_text = assert(io.open(here .. "npc_tree.lua")):read("*a")
write(opt.dir .. "/npc_tree.lua", tree_text)

local function start(name)
  local p = io.popen(("tarantool %sinstance.lua %s %s %d %s >%s/%s.out 2>&1 & echo $!")
    :format(here, name, opt.dir, opt.port, opt.live == 1 and "live" or "",
      opt.dir, name))
  pids[name] = p:read("*l")
  p:close()
end

local function connect(name, idx)
  local deadline = clock.monotonic() + 15
  while clock.monotonic() < deadline do
    local c = netbox.connect("127.0.0.1:" .. (opt.port + idx),
      { wait_connected = 1 })
    if c:is_connected() and pcall(c.call, c, "figures", {}, { timeout = 2 }) then
      conns[name] = c
      return c
    end
    c:close()
    fiber.sleep(0.1)
  end
  error("instance " .. name .. " did not start (see " .. opt.dir .. "/" .. name .. ".log)")
end

local function stop_all()
  for _, pid in pairs(pids) do os.execute("kill -9 " .. pid .. " 2>/dev/null") end
end

local function call(name, fn, args)
  return conns[name]:call(fn, args or {}, { timeout = 10 })
end

local function main()
  for idx, name in ipairs(W.INSTANCES) do start(name) end
  for idx, name in ipairs(W.INSTANCES) do connect(name, idx) end
  local per = math.ceil(opt.npcs / #W.INSTANCES)
  for idx, name in ipairs(W.INSTANCES) do
    local first = (idx - 1) * per + 1
    local n = math.min(per, opt.npcs - first + 1)
    if n > 0 then call(name, "spawn", { first, n }) end
  end
  print(("cluster: %d NPCs on %d instances, %.1f s, %d kill(s), databases in %s")
    :format(opt.npcs, #W.INSTANCES, opt.seconds, opt.kills, opt.dir))
  if opt.live == 1 then
    print(("cluster: one view of the world: file://%sworld.html?ports=%d,%d,%d")
      :format(here, opt.port + 11, opt.port + 12, opt.port + 13))
  end

  local t0 = clock.monotonic()
  local killed, lost_time, edited = 0, 0, false
  local fresh = {} -- instances started after the edit (they load it as is)
  local kill_every = opt.seconds / (opt.kills + 1)
  local last_seen = {} -- id -> agent time last read, for what a kill loses
  while clock.monotonic() - t0 < opt.seconds do
    fiber.sleep(0.25)
    if not edited and clock.monotonic() - t0 >= opt.seconds * 0.4 then
      edited = true -- the NPCs rest a moment after work from now on
      write(opt.dir .. "/npc_tree.lua", (tree_text:gsub('bt.action "work",',
        'bt.action "work",\n    bt.wait { name = "rest", seconds = 0.2 },')))
      print(("cluster: tree edited at %.1f s"):format(clock.monotonic() - t0))
    end
    if killed < opt.kills and clock.monotonic() - t0 >= kill_every * (killed + 1) then
      killed = killed + 1
      local victim = W.INSTANCES[(killed - 1) % #W.INSTANCES + 2] or "a"
      local before = {}
      for _, n in ipairs(call(victim, "npcs_here")) do
        if n.state == "active" then before[n.id] = n.time end
      end
      os.execute("kill -9 " .. pids[victim])
      print(("cluster: killed %s (%d NPCs active there) at %.1f s")
        :format(victim, (function() local k = 0 for _ in pairs(before) do k = k + 1 end return k end)(),
          clock.monotonic() - t0))
      fiber.sleep(1)
      start(victim)
      fresh[victim] = edited
      for idx, name in ipairs(W.INSTANCES) do
        if name == victim then connect(name, idx) end
      end
      call(victim, "pause", { true }) -- read the resumed clocks first
      for _, n in ipairs(call(victim, "npcs_here")) do
        if n.state == "active" and before[n.id] then
          lost_time = math.max(lost_time, before[n.id] - n.time)
        end
      end
      call(victim, "pause", { false })
      print(("cluster: restarted %s, %d NPCs resumed; agent time lost at most %.2f s")
        :format(victim, call(victim, "figures").restored, lost_time))
    end
  end

  -- Settle: no ticking, hand-overs in flight finish (bounded).
  for _, name in ipairs(W.INSTANCES) do call(name, "pause", { true }) end
  local deadline = clock.monotonic() + 10 + opt.npcs / 1000
  local leaving
  repeat
    leaving = 0
    for _, name in ipairs(W.INSTANCES) do leaving = leaving + call(name, "figures").leaving end
    if leaving > 0 then fiber.sleep(0.1) end
  until leaving == 0 or clock.monotonic() >= deadline
  if leaving > 0 then -- the counts below are then read while NPCs move
    print(("cluster: %d hand-overs still in flight after %.0f s"):format(
      leaving, 10 + opt.npcs / 1000))
  end

  -- Hostile hand-overs to a: each refused (a replay answered "duplicate"),
  -- and nothing changes.
  local bad_probes = {}
  local function count_all()
    local k = 0
    for _, name in ipairs(W.INSTANCES) do k = k + #call(name, "npcs_here") end
    return k
  end
  local before = count_all()
  local probes = {
    { "not a message", "x" },
    { "unknown sender", { from = "zz", token = uuid.str(), id = 1, save = "x",
      owner = { x = 10 } } },
    { "truncated", { from = "b", token = uuid.str(), id = 1 } },
    { "a save that does not restore", { from = "b", token = uuid.str(),
      id = 999999, save = "bonsai save, cut", owner = { x = 10 } } },
  }
  for _, p in ipairs(probes) do
    local r = call("a", "accept", { p[2] })
    if r.ok then bad_probes[#bad_probes + 1] = p[1] .. " was accepted" end
  end
  local replay = call("a", "any_token")
  if replay then
    local r = call("a", "accept", { { from = "b", token = replay[1], id = replay[2],
      save = "x", owner = { x = 10 } } })
    if not (r.ok and r.duplicate) then bad_probes[#bad_probes + 1] = "a replay was not a duplicate" end
  end
  if count_all() ~= before then bad_probes[#bad_probes + 1] = "hostile messages changed the NPCs" end
  print(("cluster: %d hostile hand-overs refused, %s replay answered duplicate")
    :format(#probes, replay and "a" or "no"))

  local where, bad, dup = {}, bad_probes, 0
  local totals = { migrated = 0, duplicates = 0, refused = 0 }
  for _, name in ipairs(W.INSTANCES) do
    local f = call(name, "figures")
    print(("  %s: %4d NPCs, tick %.2f ms (max %.1f), out %d, in %d, duplicates %d, refused %d, reloads %d, Lua %.0f KB, arena %.1f MB")
      :format(name, f.active, f.tick_ms, f.tick_ms_max, f.migrated_out,
        f.migrated_in, f.duplicates, f.refused, f.reloads, f.lua_kb, f.arena_mb))
    totals.migrated = totals.migrated + f.migrated_out
    if f.reloads < 1 and not fresh[name] then
      bad[#bad + 1] = name .. " did not reload the edited tree"
    end
    totals.duplicates = totals.duplicates + f.duplicates
    totals.refused = totals.refused + f.refused
    for _, n in ipairs(call(name, "npcs_here")) do
      if where[n.id] then
        dup = dup + 1
        bad[#bad + 1] = ("npc %d on %s and %s"):format(n.id, where[n.id], name)
      end
      where[n.id] = name
      if n.state ~= "active" then
        bad[#bad + 1] = ("npc %d still %s on %s"):format(n.id, n.state, name)
      elseif W.owner_of(n.x) ~= name then
        bad[#bad + 1] = ("npc %d at x=%.0f is on %s, not on the zone's owner")
          :format(n.id, n.x, name)
      elseif n.entered - n.trips ~= 0 and n.entered - n.trips ~= 1 then
        bad[#bad + 1] = ("npc %d entered travel %d times for %d trips (%s)")
          :format(n.id, n.entered, n.trips, n.running)
      end
    end
  end
  local lost = 0
  for id = 1, opt.npcs do
    if not where[id] then lost = lost + 1 bad[#bad + 1] = ("npc %d lost"):format(id) end
  end
  local elapsed = clock.monotonic() - t0
  print(("cluster: %d NPCs, %d instances, tick %.0f Hz, migrations %.1f/s, lost %d, duplicated %d, kills %d, time lost at a kill <= %.2f s")
    :format(opt.npcs, #W.INSTANCES, 1 / W.TICK, totals.migrated / elapsed, lost,
      dup, killed, lost_time))
  for k = 1, math.min(#bad, 20) do print("  BROKEN: " .. bad[k]) end
  return #bad == 0
end

local ok, res = pcall(main)
stop_all()
if not ok then print("cluster: error: " .. tostring(res)) end
os.exit(ok and res and 0 or 1)
