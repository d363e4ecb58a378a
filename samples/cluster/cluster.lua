-- cluster.lua: runs the cluster sample and checks it, as a Tarantool
-- script (the driver is itself a Tarantool process, for net.box):
--   tarantool cluster.lua [--npcs N] [--seconds S] [--kills K] [--port P]
--                         [--dir D] [--live 1] [--view PORT]
-- Starts the three instances (instance.lua) on 127.0.0.1:P+1..P+3 with
-- their databases in D (a new temporary directory by default), spawns N
-- NPCs spread over them, lets them live S seconds during which it kills
-- an instance with SIGKILL K times (each restarted one second later; each
-- kill waits, with the victim's hand-overs held, until hand-overs are in
-- flight from it and to it, so that it is both a killed sender and a
-- killed receiver), edits the tree file once, then pauses the ticking,
-- lets the hand-overs in flight finish, sends bad input (probes.lua) and
-- checks: every NPC exists exactly once, on the instance that owns its
-- zone, no travel was entered twice (entered - trips is 0 or 1: the NPCs
-- resumed what they were doing), every instance reloaded the edited tree,
-- listens on loopback only, and refused the bad input. Prints the figures;
-- exits 1 on a broken invariant. Every loop is bounded; the instances are
-- stopped at the end whatever happens. --live 1: each instance serves its
-- NPCs to the live debugger (P+11..P+13). --view PORT: the one view of the
-- world (view.lua, world.html) on http://127.0.0.1:PORT/.
local fiber = require "fiber"
local clock = require "clock"
local netbox = require "net.box"

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
if here == "" then here = "./" end
here = require("fio").abspath(here) .. "/" -- box.cfg's work_dir moves the cwd
local root = here .. "../../"
package.path = here .. "?.lua;" .. root .. "lua/?.lua;" .. root
  .. "lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BONSAI_CPATH") or root .. "build-luajit/src/?.so")
  .. ";" .. package.cpath
local W = require "world"
local probes = require "probes"
io.stdout:setvbuf("line") -- its lines as they come (the browser test reads them)

local opt = { npcs = 300, seconds = 8, kills = 1, port = 3400, live = 0, view = 0 }
local i = 1
while arg[i] do
  local k, v = arg[i]:match("^%-%-(%w+)$"), arg[i + 1]
  if k == "dir" then opt.dir = v
  elseif k and opt[k] ~= nil and tonumber(v) then opt[k] = tonumber(v)
  else io.stderr:write("cluster.lua: bad argument ", arg[i], "\n") os.exit(2) end
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

-- The NPCs of every instance: id -> { name, npc } (all of them, or one).
local function census_ids(only)
  local where, dup = {}, {}
  for _, name in ipairs(W.INSTANCES) do
    for _, n in ipairs(call(name, "npcs_here", { only })) do
      if where[n.id] then
        dup[#dup + 1] = ("npc %d on %s and %s"):format(n.id, where[n.id].on, name)
      end
      where[n.id] = { on = name, npc = n }
    end
  end
  return where, dup
end

-- An instance's figures added up over its lives (a restart starts its
-- counts again): sums added, the peak kept.
local SUMS = { "ticks", "wall", "tick_ms_sum", "up", "saved", "saved_bytes",
  "migrated_out", "migrated_in", "duplicates", "refused", "restarted" }
local past = {}
local function lives(name, f)
  local p = past[name] or {}
  local all = {}
  for k, v in pairs(f) do all[k] = v end
  for _, k in ipairs(SUMS) do all[k] = (p[k] or 0) + f[k] end
  all.tick_ms_max = math.max(p.tick_ms_max or 0, f.tick_ms_max)
  return all
end

-- Kills victim (kill -9) with hand-overs in flight from it and to it
-- (held: bounded), restarts it a second later, and measures the agent time
-- its NPCs lost. Returns the counts in flight and the time lost.
local function kill(victim, t0)
  call(victim, "hold", { 8 })
  local out_n, in_n = 0, 0
  local deadline = clock.monotonic() + 6
  repeat
    fiber.sleep(0.1)
    out_n, in_n = call(victim, "figures").leaving, 0
    for _, name in ipairs(W.INSTANCES) do
      if name ~= victim then in_n = in_n + (call(name, "figures").leaving_to[victim] or 0) end
    end
  until (out_n > 0 and in_n > 0) or clock.monotonic() > deadline
  past[victim] = lives(victim, call(victim, "figures"))
  local before, active = {}, 0
  for _, n in ipairs(call(victim, "npcs_here")) do
    if n.state == "active" then before[n.id], active = n.time, active + 1 end
  end
  os.execute("kill -9 " .. pids[victim])
  print(("cluster: killed %s at %.1f s: %d NPCs active there, "
    .. "hand-overs in flight: %d from it, %d to it")
    :format(victim, clock.monotonic() - t0, active, out_n, in_n))
  fiber.sleep(1)
  start(victim)
  for idx, name in ipairs(W.INSTANCES) do
    if name == victim then connect(name, idx) end
  end
  call(victim, "pause", { true }) -- read the resumed clocks first
  local lost = 0
  for _, n in ipairs(call(victim, "npcs_here")) do
    if n.state == "active" and before[n.id] then lost = math.max(lost, before[n.id] - n.time) end
  end
  call(victim, "pause", { false })
  print(("cluster: restarted %s, %d NPCs resumed; agent time lost at most %.2f s")
    :format(victim, call(victim, "figures").restored, lost))
  return out_n, in_n, lost
end

-- The address of this machine other than loopback, if it has one.
local function outside_address()
  local p = io.popen("hostname -I 2>/dev/null")
  local a = p:read("*l")
  p:close()
  return a and a:match("^(%d+%.%d+%.%d+%.%d+)")
end

local function main()
  for _, name in ipairs(W.INSTANCES) do start(name) end
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
    print(("cluster: live debuggers on http://127.0.0.1:%d/, :%d/, :%d/")
      :format(opt.port + 11, opt.port + 12, opt.port + 13))
  end
  if opt.view > 0 then
    require("view").serve(opt.view, W,
      function(name) return conns[name]:call("census", {}, { timeout = 2 }) end,
      function(name, id)
        return conns[name]:call("npcs_here", { id }, { timeout = 2 })[1]
      end, here .. "world.html")
    print(("cluster: one view of the world on http://127.0.0.1:%d/"):format(opt.view))
  end

  local bad = {}
  local t0 = clock.monotonic()
  local killed, lost_time, edited = 0, 0, false
  local fresh = {} -- instances started after the edit (they load it as is)
  local kill_every = opt.seconds / (opt.kills + 1)
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
      local victim = W.INSTANCES[killed % #W.INSTANCES + 1] -- b, c, a, ...
      local out_n, in_n, lost = kill(victim, t0)
      if out_n == 0 or in_n == 0 then
        bad[#bad + 1] = ("the kill of %s found no hand-over in flight %s it")
          :format(victim, out_n == 0 and "from" or "to")
      end
      fresh[victim] = edited
      lost_time = math.max(lost_time, lost)
    end
  end
  local elapsed = clock.monotonic() - t0

  -- Settle: no ticking, hand-overs in flight finish (bounded).
  for _, name in ipairs(W.INSTANCES) do call(name, "pause", { true }) end
  local settle = clock.monotonic()
  local leaving
  repeat
    leaving = 0
    for _, name in ipairs(W.INSTANCES) do leaving = leaving + call(name, "figures").leaving end
    if leaving > 0 then fiber.sleep(0.1) end
  until leaving == 0 or clock.monotonic() - settle >= 30
  settle = clock.monotonic() - settle
  if leaving > 0 then
    bad[#bad + 1] = ("%d hand-overs still in flight after %.0f s"):format(leaving, settle)
  end

  -- Bad input; then every NPC (and the probes') exactly once.
  local bt = require "bonsai"
  W.register()
  for _, p in ipairs(probes.run(call, bt, W, bt.load(here .. "npc_tree.lua"))) do
    bad[#bad + 1] = p
  end

  local totals = { migrated = 0, duplicates = 0, refused = 0, saved = 0, kb = 0 }
  local outside = outside_address()
  for idx, name in ipairs(W.INSTANCES) do
    local f = lives(name, call(name, "figures"))
    local rate, mean = (f.ticks - 1) / f.wall, f.tick_ms_sum / f.ticks
    print(("  %s: %5d NPCs, %.1f Hz, tick %.2f ms (max %.1f), out %d, in %d, duplicates %d, refused %d, reloads %d, saves %.0f/s (%.0f KB/s), Lua %.0f KB, arena %.1f MB")
      :format(name, f.active, rate, mean, f.tick_ms_max, f.migrated_out,
        f.migrated_in, f.duplicates, f.refused, f.reloads, f.saved / f.up,
        f.saved_bytes / f.up / 1024, f.lua_kb, f.arena_mb))
    totals.migrated = totals.migrated + f.migrated_out
    totals.duplicates = totals.duplicates + f.duplicates
    totals.saved = totals.saved + f.saved / f.up
    totals.kb = totals.kb + f.saved_bytes / f.up / 1024
    if f.reloads < 1 and not fresh[name] then
      bad[#bad + 1] = name .. " did not reload the edited tree"
    end
    if f.listen ~= "127.0.0.1:" .. (opt.port + idx) then
      bad[#bad + 1] = name .. " listens on " .. tostring(f.listen)
    end
    if outside then -- nothing answers on the machine's other address
      local c = netbox.connect(outside .. ":" .. (opt.port + idx),
        { wait_connected = 1, connect_timeout = 1 })
      if c:is_connected() then bad[#bad + 1] = name .. " answers on " .. outside end
      c:close()
    end
  end

  local where, dups = census_ids()
  for _, d in ipairs(dups) do bad[#bad + 1] = d end
  for id, w in pairs(where) do
    local n = w.npc
    if n.state ~= "active" then
      bad[#bad + 1] = ("npc %d still %s on %s"):format(id, n.state, w.on)
    elseif W.owner_of(n.x) ~= w.on then
      bad[#bad + 1] = ("npc %d at x=%.0f is on %s, not on the zone's owner"):format(id, n.x, w.on)
    elseif n.entered - n.trips ~= 0 and n.entered - n.trips ~= 1 then
      bad[#bad + 1] = ("npc %d entered travel %d times for %d trips (%s)")
        :format(id, n.entered, n.trips, n.running)
    end
  end
  local lost, expected = 0, {}
  for id = 1, opt.npcs do expected[#expected + 1] = id end
  for _, id in ipairs(probes.EXTRA) do expected[#expected + 1] = id end
  for _, id in ipairs(expected) do
    if not where[id] then lost = lost + 1 bad[#bad + 1] = ("npc %d lost"):format(id) end
  end
  print(("cluster: persistence: every NPC saved every %.1f s (%.0f rows/s, %.0f KB/s in all); agent time lost at a kill <= %.2f s")
    :format(W.SAVE_EVERY, totals.saved, totals.kb, lost_time))
  print(("cluster: %d NPCs, %d instances, tick %.0f Hz, migrations %.1f/s, lost %d, duplicated %d, kills %d, settled in %.1f s")
    :format(opt.npcs, #W.INSTANCES, 1 / W.TICK, totals.migrated / elapsed, lost,
      #dups, killed, settle))
  for k = 1, math.min(#bad, 20) do print("  BROKEN: " .. bad[k]) end
  return #bad == 0
end

local ok, res = pcall(main)
stop_all()
if not ok then print("cluster: error: " .. tostring(res)) end
os.exit(ok and res and 0 or 1)
