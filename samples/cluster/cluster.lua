-- cluster.lua: runs the cluster sample and checks it, as a Tarantool
-- script (the driver is itself a Tarantool process, for net.box):
--   tarantool cluster.lua [--npcs N] [--seconds S] [--sets K] [--replicas R]
--       [--kills K] [--replica-kills K] [--breaks K] [--stops K] [--stop-seconds T]
--       [--join J] [--leave L] [--rebalance S] [--ballast 1]
--       [--memory MB] [--replica-memory MB] [--wal write|fsync]
--       [--checkpoint S] [--fail-after S]
--       [--report S] [--dir D] [--keep 1] [--live 1] [--view PORT]
--       [--foreign PORT]
-- Starts K replica sets (default 3), each a master and R replicas
-- (default 1) on ports the system picks (coordinator.lua), spawns N NPCs
-- over them and lets them live S seconds, during which, spread over the
-- run and one after the other: the tree file is edited (every instance
-- must reload it); K masters are killed with SIGKILL during a burst of
-- hand-overs (each kill waits, with the victim's hand-overs held, until
-- hand-overs are in flight from it and to it) and their replicas promoted;
-- replicas are killed and replaced; replicas are broken (a row their
-- applier cannot apply: it stops) and must be found and replaced by the
-- coordinator while their master's NPCs tick on; masters are stopped with SIGSTOP for
-- T seconds (0: until their replica took over) and fenced when they
-- answer again; J sets join (zones move to them by load) and L sets leave
-- (their zones move to the others, then they stop); with --ballast 1 a
-- master's arena is filled to the brim for a while (its tick must go on);
-- with --rebalance S a zone moves every S seconds from the most loaded set
-- to the least when that evens them out. Then it pauses the ticking, lets
-- the hand-overs in flight finish, waits for every token to be collected,
-- compares every replica with its master, sends bad input (probes.lua) and
-- checks: every NPC exists exactly once, on the set that owns its zone, no
-- travel was entered twice, every master reloaded the edited tree. Prints
-- the figures (with --report S, memory per instance every S seconds, and
-- whether it stayed flat); exits 1 on a broken invariant.
--
-- Every loop is bounded; the instances are stopped at the end whatever
-- happens (and quit by themselves if the driver dies). --dir D: the
-- databases and logs go there (made if missing; it must be empty),
-- else in a temporary directory removed at the end (kept, and named, when
-- the run failed or with --keep 1). --live 1: each master serves its NPCs
-- to the live debugger. --view PORT: the one view of the world (view.lua,
-- world.html) on http://127.0.0.1:PORT/ (0: a free port, printed).
-- --foreign PORT: checks that a port answering as another run's instance
-- is refused (the test of two runs at once).
local fiber = require "fiber"
local clock = require "clock"
local fio = require "fio"
local uuid = require "uuid"
local digest = require "digest"

local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
if here == "" then here = "./" end
here = fio.abspath(here) .. "/"
local root = here .. "../../"
package.path = here .. "?.lua;" .. root .. "lua/?.lua;" .. root
  .. "lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BONSAI_CPATH") or root .. "build-luajit/src/?.so")
  .. ";" .. package.cpath
local W = require "world"
local probes = require "probes"
io.stdout:setvbuf("line") -- its lines as they come (the browser test reads them)

local opt = { npcs = 300, seconds = 8, sets = 3, replicas = 1, kills = 1,
  ["replica-kills"] = 0, breaks = 0, stops = 0, ["stop-seconds"] = 0, join = 0, leave = 0,
  rebalance = 0, ballast = 0, memory = 64, ["replica-memory"] = 0, wal = "write", checkpoint = 30,
  ["fail-after"] = 2, report = 0, keep = 0, live = 0, view = -1, foreign = 0 }
local function usage(why)
  io.stderr:write("cluster.lua: ", why, " (see the top of samples/cluster/cluster.lua)\n")
  os.exit(2)
end
do
  local i = 1
  while arg[i] do
    local k, v = arg[i]:match("^%-%-([%w-]+)$"), arg[i + 1]
    if k == "dir" and v then opt.dir = v
    elseif k == "wal" and (v == "write" or v == "fsync") then opt.wal = v
    elseif k and type(opt[k]) == "number" and tonumber(v) and tonumber(v) >= 0 then
      opt[k] = tonumber(v)
    else usage("bad argument " .. arg[i] .. " " .. tostring(v)) end
    i = i + 2
  end
  if opt.sets < 1 or opt.sets + opt.join > #W.SETS then
    usage(("at most %d sets in all"):format(#W.SETS))
  end
  if opt.leave >= opt.sets + opt.join then usage("a set must stay") end
  if opt.view > 65535 then usage("bad --view port") end
end

-- The run's directory: given (made if missing, refused unless empty: a
-- run's databases are its own) or temporary.
local temporary = false
if opt.dir then
  if fio.path.exists(opt.dir) then
    if not fio.path.is_dir(opt.dir) or #(fio.listdir(opt.dir) or {}) > 0 then
      usage("--dir " .. opt.dir .. " exists and is not an empty directory")
    end
  elseif not fio.mktree(opt.dir) then
    usage("--dir " .. opt.dir .. " cannot be made")
  end
  opt.dir = fio.abspath(opt.dir)
else
  opt.dir = fio.tempdir()
  temporary = true
end

-- The run's id (every instance answers with it) and secret (the password
-- of the cluster's user: the driver, the peers, replication), readable by
-- this user only.
local run = uuid.str()
local secret = digest.urandom(16):gsub(".", function(c) return ("%02x"):format(c:byte()) end)
local function write(path, text, private)
  local f = assert(fio.open(path, { "O_WRONLY", "O_CREAT", "O_TRUNC" },
    tonumber(private and "600" or "644", 8)))
  f:write(text)
  f:close()
end
write(opt.dir .. "/run", run .. "\n", true)
write(opt.dir .. "/secret", secret .. "\n", true)
-- The instances' tree file, a copy the driver edits mid-run (a designer's
-- save: every instance must reload it).
local tree_text = assert(io.open(here .. "npc_tree.lua")):read("*a")
write(opt.dir .. "/npc_tree.lua", tree_text)

local bad = {}
local function say(fmt, ...) print("cluster: " .. fmt:format(...)) end
local C = require("coordinator").new { here = here, dir = opt.dir, run = run,
  secret = secret, replicas = opt.replicas, memory = opt.memory,
  replica_memory = opt["replica-memory"] > 0 and opt["replica-memory"] or opt.memory, wal = opt.wal,
  checkpoint = opt.checkpoint, live = opt.live == 1, fail_after = opt["fail-after"],
  say = say, problem = function(t) bad[#bad + 1] = t end }

local function now() return clock.monotonic() end
local t0 -- the start of the run proper
local function at() return now() - t0 end

-- Waits until cond() (bounded); returns its last value.
local function wait_for(seconds, cond)
  local deadline, v = now() + seconds, nil
  repeat
    v = cond()
    if v then return v end
    fiber.sleep(0.1)
  until now() > deadline
  return v
end

local function figures(inst)
  local ok, f = pcall(C.call, inst, "figures", {}, 3)
  return ok and f or nil
end
local function masters()
  local out = {}
  for _, name in ipairs(C.order) do
    local s = C.sets[name]
    if s.in_map and s.master.state == "up" then out[#out + 1] = s.master end
  end
  return out
end
local function sum(field)
  local n = 0
  for _, m in ipairs(masters()) do n = n + ((figures(m) or {})[field] or 0) end
  return n
end
local function leaving_to(name)
  local n = 0
  for _, m in ipairs(masters()) do
    if m.set.name ~= name then n = n + (((figures(m) or {}).leaving_to or {})[name] or 0) end
  end
  return n
end
-- Waits (bounded) until the moved zones' NPCs are on their new owners:
-- none left in those zones on the old owners, and no more hand-overs in
-- flight from an old owner to a new one than NPCs crossing their border
-- at any moment (a few).
local function moved_over(moves)
  return wait_for(60, function()
    for _, mv in ipairs(moves) do
      local set = C.sets[mv.from]
      if set then
        local ok, c = pcall(C.call, set.master, "census", {}, 3)
        if not ok or (c.zones[mv.zone] or 0) > 2 or (c.leaving_to[mv.to] or 0) > 10 then
          return false
        end
      end
    end
    return true
  end)
end
local function describe(moves)
  local out = {}
  for _, mv in ipairs(moves) do out[#out + 1] = ("%d (%s to %s)"):format(mv.zone, mv.from, mv.to) end
  return table.concat(out, ", ")
end
local function set_total(set, field)
  local n = 0
  for _, f in pairs(set.past) do n = n + (f[field] or 0) end
  return n
end
local function all_migrated()
  local n = 0
  for _, name in ipairs(C.order) do n = n + set_total(C.sets[name], "migrated_in") end
  return n
end

-- Waits for the set's master (a new one, or the old one restarted) to
-- tick after `since` (wall clock); returns its figures.
local function ticking_again(set, old_pid, since)
  return wait_for(60, function()
    local m = set.master
    if m.state ~= "up" or m.pid == old_pid then return nil end
    local f = figures(m)
    return f and f.first_tick_at and f.first_tick_at > since and f or nil
  end)
end

-- The scenario's events -----------------------------------------------

local kills = {} -- what each kill measured

-- Kill -9 of a set's master during a burst of hand-overs, and the time
-- until its NPCs tick again (on its promoted replica).
local function kill_master(name)
  local set = C.sets[name]
  local m = set.master
  local out_n, in_n, held = 0, 0, 0
  wait_for(30, function() -- (the hold renewed while waiting: 8 s at most each)
    if now() >= held then
      pcall(C.call, m, "hold", { 8 })
      held = now() + 5
    end
    out_n, in_n = (figures(m) or {}).leaving or 0, leaving_to(name)
    return out_n > 0 and in_n > 0
  end)
  local f = figures(m)
  if f then C.note(m, f) end
  local before, active = {}, 0
  local ok, list = pcall(C.call, m, "npcs_here", {}, 5)
  for _, n in ipairs(ok and list or {}) do
    if n.state == "active" then before[n.id], active = n.time, active + 1 end
  end
  local t_kill, pid = clock.realtime(), m.pid
  C.signal(m, "KILL")
  say("killed %s (master of %s) at %.1f s: %d NPCs active there, hand-overs in flight: %d from it, %d to it",
    m.name, name, at(), active, out_n, in_n)
  local g = ticking_again(set, pid, t_kill)
  if not g then
    bad[#bad + 1] = ("%s did not tick again within 60 s of the kill of %s"):format(name, m.name)
    return
  end
  local nm = set.master
  pcall(C.call, nm, "pause", { true }) -- read the resumed clocks first
  local lost = 0
  ok, list = pcall(C.call, nm, "npcs_here", {}, 5)
  for _, n in ipairs(ok and list or {}) do
    if n.state == "active" and before[n.id] then lost = math.max(lost, before[n.id] - n.time) end
  end
  pcall(C.call, nm, "pause", { false })
  local k = { set = name, victim = m.name, took = g.first_tick_at - t_kill, out = out_n,
    into = in_n, lost = lost, by = nm.name, restored = g.restored }
  kills[#kills + 1] = k
  if out_n == 0 or in_n == 0 then
    bad[#bad + 1] = ("the kill of %s found no hand-over in flight %s it"):format(m.name,
      out_n == 0 and "from" or "to")
  end
  say("%s: %s %s its %d NPCs, ticking again %.2f s after the kill; agent time lost at most %.2f s",
    name, nm.name, nm == m and ("restarted from its disk (read in %.2f s) with"):format(g.boot_s)
      or "promoted with", g.restored, k.took, lost)
end

-- Kill -9 of a replica: the master's quorum lowered, another replica
-- started; the time until it counts again.
local function kill_replica(name)
  local set = C.sets[name]
  local r
  for _, x in ipairs(set.replicas) do if x.member then r = x break end end
  if not r then say("%s has no replica to kill", name) return end
  local t = now()
  C.signal(r, "KILL")
  say("killed %s (replica of %s) at %.1f s", r.name, name, at())
  if wait_for(60, function() return C.ready(name) and not (r.state == "up") end) then
    say("%s: a new replica caught up %.1f s after the kill (the master's quorum was 1 meanwhile)",
      name, now() - t)
  else
    bad[#bad + 1] = ("%s had no replica again within 60 s of the kill of %s"):format(name, r.name)
  end
end

-- A replica broken on purpose: a ballast row written on it behind its
-- master's back, then on its master (whose commit waits for its quorum):
-- the replica's applier stops on the duplicate key, the master's
-- synchronous commits cannot be confirmed. The coordinator must find the
-- broken replica and replace it; the master's work resumes.
local breaks = {}
local function break_replica(name)
  local set = C.sets[name]
  local r
  for _, x in ipairs(set.replicas) do if x.member and x.state == "up" then r = x break end end
  if not r then
    bad[#bad + 1] = name .. " had no replica to break"
    return
  end
  local m = set.master
  local key = 2 ^ 40 + #breaks + 1
  local f0 = figures(m) or {}
  local ok, err = pcall(C.call, r, "conflict", { key }, 10)
  if not ok then bad[#bad + 1] = "conflict on " .. r.name .. ": " .. tostring(err) return end
  local t = now()
  fiber.create(function() pcall(C.call, m, "conflict", { key }, 60) end)
  say("broke %s (replica of %s) at %.1f s: a row its applier cannot apply", r.name, name, at())
  local found = wait_for(60, function()
    for _, e in ipairs(C.events) do
      if e.kind == "replica broken" and e.name == r.name then return e end
    end
  end)
  if not found then
    bad[#bad + 1] = ("the broken replica %s was not found within 60 s"):format(r.name)
    return
  end
  local replaced = wait_for(120, function() return C.ready(name) and now() end)
  -- the master's writes go on: commits made after the heal
  local f1 = figures(set.master) or {}
  local resumed = wait_for(30, function()
    local f = figures(set.master)
    return f and (f.commits or 0) > (f1.commits or 0) + 10 and f
  end)
  local b = { set = name, victim = r.name, found = found.at - t,
    replaced = replaced and replaced - t, why = found.why,
    timeouts = ((resumed or f1).quorum_timeouts or 0) - (f0.quorum_timeouts or 0) }
  breaks[#breaks + 1] = b
  if not replaced then bad[#bad + 1] = name .. " had no replica again within 120 s of the heal" end
  if not resumed then bad[#bad + 1] = set.master.name .. " made no commit after the heal" end
  say("%s: %s found broken %.1f s after (%s); a fresh replica counted %s; its master's commits go on",
    name, r.name, b.found, b.why, replaced and ("%.1f s after"):format(b.replaced) or "never")
end

local stops = {}
-- SIGSTOP of a set's master for `seconds` (0: until its replica took
-- over): what the others do meanwhile, and its fencing when it answers.
local function stop_master(name, seconds)
  local set = C.sets[name]
  local m = set.master
  local stale0 = sum("stale")
  local t_stop, t = clock.realtime(), now()
  C.signal(m, "STOP")
  say("stopped %s (master of %s, SIGSTOP) at %.1f s", m.name, name, at())
  local waited, sampling = 0, true -- the others' NPCs at its borders
  fiber.create(function()
    while sampling do
      waited = math.max(waited, leaving_to(name))
      fiber.sleep(0.2)
    end
  end)
  local g = ticking_again(set, m.pid, t_stop)
  local s = { set = name, victim = m.name }
  if g then
    s.took = g.first_tick_at - t_stop
    say("%s: %s promoted; its NPCs tick again %.2f s after the stop", name, set.master.name, s.took)
  else
    bad[#bad + 1] = ("%s did not tick again within 60 s of the stop of %s"):format(name, m.name)
  end
  fiber.sleep(seconds > 0 and math.max(0, seconds - (now() - t)) or 1)
  sampling = false
  s.stopped, s.waited = now() - t, waited
  local t_cont = now()
  C.signal(m, "CONT")
  if m.state == "deposed" or m.state == "fenced" then
    wait_for(30, function() return m.state == "fenced" end)
  end
  s.fenced_after = m.state == "fenced" and now() - t_cont or nil
  s.stale = sum("stale") - stale0
  stops[#stops + 1] = s
  if m.state ~= "fenced" then
    bad[#bad + 1] = ("%s was not fenced within 30 s of answering again (%s)"):format(m.name, m.state)
  end
  say("%s resumed after %.1f s stopped: fenced %s; meanwhile the others ticked on, with up to %d of their NPCs waiting at %s's borders; they refused %d message(s) of its old term",
    m.name, s.stopped, s.fenced_after and ("%.2f s later"):format(s.fenced_after) or "never",
    waited, name, s.stale)
end

-- The arena of a set's master filled to the brim for a while: its writes
-- fail (counted), it says its memory is near the limit, it ticks on.
local function fill(name)
  local m = C.sets[name].master
  local f0 = figures(m)
  local ok, mb = pcall(C.call, m, "ballast", { -1 }, 60)
  if not ok then bad[#bad + 1] = "ballast: " .. tostring(mb) return end
  say("%s's arena filled on purpose at %.1f s: %.1f MB of ballast", m.name, at(), mb)
  -- full until its writes fail and it warned, then 20 ticks more
  local f1 = wait_for(30, function()
    local x = figures(m)
    return x and x.alloc_failures > f0.alloc_failures and x.mem_warnings > f0.mem_warnings and x
  end) or f0
  local f = wait_for(30, function()
    local x = figures(m)
    return x and x.ticks >= f1.ticks + 20 and x
  end) or figures(m) or f0
  pcall(C.call, m, "ballast", { 0 }, 30)
  say("%s with its arena full: %d writes failed, %d memory warning(s), %d ticks made meanwhile; ballast removed",
    m.name, f.alloc_failures - f0.alloc_failures, f.mem_warnings - f0.mem_warnings,
    f.ticks - f0.ticks)
  if f.alloc_failures == f0.alloc_failures then bad[#bad + 1] = "the full arena failed no write" end
  if f.mem_warnings == f0.mem_warnings then bad[#bad + 1] = "the full arena gave no memory warning" end
  if f.ticks < f0.ticks + 10 then bad[#bad + 1] = m.name .. " stopped ticking with its arena full" end
end

local joins = {}
-- A new set joins: started, in the map, then zones move to it by load,
-- one at a time, each once the last one's NPCs arrived.
local function join()
  local name
  for _, n in ipairs(W.SETS) do if not C.sets[n] and not C.gone_sets[n] then name = n break end end
  local t = now()
  C.locked(C.start_set, name)
  if not wait_for(90, function() return C.ready(name) end) then
    bad[#bad + 1] = name .. " did not start within 90 s"
    return
  end
  local ready = now() - t
  C.locked(function() C.sets[name].in_map = true C.publish() end)
  local t_move, all0 = now(), all_migrated()
  local f0 = figures(C.sets[name].master) or {}
  local owners, planned = C.join_plan(name)
  local zones = C.apply(owners, name)
  moved_over(zones)
  local dur = now() - t_move
  local f = figures(C.sets[name].master) or {}
  C.note(C.sets[name].master, f)
  local moved = (f.migrated_in or 0) - (f0.migrated_in or 0)
  local j = { set = name, ready = ready, zones = #zones, moved = moved, took = dur,
    rate = moved / math.max(dur, 0.001), all = (all_migrated() - all0) / math.max(dur, 0.001) }
  joins[#joins + 1] = j
  say("%s joined at %.1f s (its master and replica ready in %.1f s); zones %s moved in %.1f s (%d NPCs planned to move): %d NPCs handed over to %s (%.0f/s; %.0f hand-overs/s in the cluster meanwhile)",
    name, at() - dur - ready, ready, describe(zones), dur, planned, moved, name,
    j.rate, j.all)
  if #zones == 0 then bad[#bad + 1] = "no zone moved to " .. name end
end

local leaves = {}
-- A set leaves: its zones to the least loaded others, its NPCs handed
-- over, then out of the map and stopped.
local function leave(name)
  local set = C.sets[name]
  local t = now()
  local had = (figures(set.master) or {}).active or 0
  C.locked(function()
    set.state = "leaving"
    -- the stretches cut again among the sets that stay
    local _, counts = C.loads()
    local order = {}
    for _, n in ipairs(C.stretch_order()) do if n ~= name then order[#order + 1] = n end end
    for z, owner in pairs((C.plan(order, counts))) do C.map.zones[z].owner = owner end
    C.publish()
  end)
  local emptied = wait_for(60, function()
    local f = figures(set.master)
    return f and f.active == 0 and f.leaving == 0 and f.done == 0
      and leaving_to(name) == 0 and C.map_everywhere()
  end)
  if not emptied then bad[#bad + 1] = name .. " did not empty within 60 s of leaving" end
  local f = figures(set.master)
  if f then C.note(set.master, f) end
  C.remove_set(name)
  local l = { set = name, npcs = had, took = now() - t }
  leaves[#leaves + 1] = l
  say("%s left at %.1f s: its %d NPCs handed over in %.1f s (%.0f/s), its instances stopped",
    name, at() - l.took, had, l.took, had / math.max(l.took, 0.001))
end

local edited_at
local function edit()
  edited_at = now()
  write(opt.dir .. "/npc_tree.lua", (tree_text:gsub('bt.action "work",',
    'bt.action "work",\n    bt.wait { name = "rest", seconds = 0.2 },')))
  say("tree edited at %.1f s", at())
end

-- The stretches cut again by load, if that evens the sets out.
local function rebalance()
  local moved = C.rebalance()
  if moved then say("rebalanced by load at %.1f s: zones %s", at(), describe(moved)) end
end

-- Memory per instance over time (--report S).
local samples = {}
local function report()
  local parts = {}
  for _, name in ipairs(C.order) do
    local set = C.sets[name]
    for _, inst in ipairs { set.master, unpack(set.replicas) } do
      local f = inst.state == "up" and figures(inst)
      if f then
        local p = io.popen("du -sk " .. opt.dir .. "/" .. inst.name .. " 2>/dev/null")
        local disk = tonumber((p:read("*l") or ""):match("^(%d+)")) or 0
        p:close()
        parts[#parts + 1] = ("%s rss %.0f MB, data %.1f MB, Lua %.1f MB, tokens %d, disk %.0f MB")
          :format(inst.name, f.rss_kb / 1024, f.items_mb, f.lua_kb / 1024, f.tokens, disk / 1024)
        samples[inst.name] = samples[inst.name] or {}
        table.insert(samples[inst.name], { t = at(), rss = f.rss_kb / 1024,
          data = f.items_mb, lua = f.lua_kb / 1024, tokens = f.tokens, disk = disk / 1024 })
      end
    end
  end
  say("memory at %.0f s: %s", at(), table.concat(parts, "; "))
end

-- Memory flat: for every instance seen from the second report to the
-- last, the last within a quarter (and a little) of the second.
local function flat()
  local checked = 0
  for name, s in pairs(samples) do
    if #s >= 3 then
      local a, b = s[2], s[#s]
      checked = checked + 1
      -- (the database on disk: a snapshot or two and the log since, 16 MB
      -- at most before the next checkpoint)
      if b.data > a.data * 1.25 + 1 or b.lua > a.lua * 1.25 + 4 or b.rss > a.rss * 1.25 + 16
          or b.disk > a.disk * 2 + 64 then
        bad[#bad + 1] = ("%s's memory grew: rss %.0f -> %.0f MB, data %.1f -> %.1f MB, Lua %.1f -> %.1f MB, disk %.0f -> %.0f MB from %.0f s to %.0f s")
          :format(name, a.rss, b.rss, a.data, b.data, a.lua, b.lua, a.disk, b.disk, a.t, b.t)
      end
    end
  end
  if checked > 0 then say("memory per instance flat from the second report to the last: %s",
    #bad == 0 and "yes" or "no") end
end

-- The run -------------------------------------------------------------

local function main()
  for i = 1, opt.sets do C.start_set(W.SETS[i]) end
  C.monitor()
  local initial = {}
  for i = 1, opt.sets do initial[i] = W.SETS[i] end
  if not wait_for(120, function()
    for _, n in ipairs(initial) do if not C.ready(n) then return false end end
    return true
  end) then
    error("the replica sets did not start within 120 s (logs in " .. opt.dir .. ")")
  end
  if opt.foreign > 0 then -- another run's instance must be refused
    local conn, why = C.connect_checked("127.0.0.1:" .. opt.foreign, "a1")
    if conn then
      conn:close()
      bad[#bad + 1] = "port " .. opt.foreign .. " was taken for this run's a1"
    else
      say("port %d refused as this run's a1: %s", opt.foreign, why)
    end
  end
  C.locked(function()
    C.map.zones = W.first_map(opt.sets).zones
    for _, n in ipairs(initial) do C.sets[n].in_map = true end
    C.publish()
  end)
  local per = math.ceil(opt.npcs / opt.sets)
  for idx, name in ipairs(initial) do
    local first = (idx - 1) * per + 1
    local n = math.min(per, opt.npcs - first + 1)
    if n > 0 then C.mcall(name, "spawn", { first, n }, 60) end
  end
  say("%d NPCs on %d replica sets of %d instance(s), %.0f s; databases in %s (wal_mode %s, a checkpoint every %d s)",
    opt.npcs, opt.sets, opt.replicas + 1, opt.seconds, opt.dir, opt.wal, opt.checkpoint)
  local view_server
  if opt.view >= 0 then
    view_server = require("view").serve(opt.view, C, here .. "world.html")
    say("one view of the world on http://127.0.0.1:%d/", view_server:name().port)
  end
  if opt.live == 1 then
    for _, m in ipairs(masters()) do
      say("%s's live debugger on http://127.0.0.1:%d/", m.name, (figures(m) or {}).live or 0)
    end
  end

  -- The events, spread over the run, one after the other.
  t0 = now()
  local S, events = opt.seconds, {}
  local function add(t, fn, ...) events[#events + 1] = { t = t, fn = fn, args = { ... } } end
  add(S * 0.4, edit)
  for k = 1, opt.kills do add(S * k / (opt.kills + 1), "kill") end
  for k = 1, opt["replica-kills"] do add(S * (k - 0.5) / (opt["replica-kills"] + 1), "replica") end
  for k = 1, opt.breaks do add(S * (k - 0.6) / (opt.breaks + 1), "break") end
  for k = 1, opt.stops do add(S * (k - 0.3) / (opt.stops + 1), "stop") end
  for k = 1, opt.join do add(S * (0.15 + 0.1 * k), join) end
  for k = 1, opt.leave do add(S * (0.5 + 0.1 * k), "leave") end
  if opt.ballast == 1 then add(S * 0.3, fill, "b") end
  table.sort(events, function(a, b) return a.t < b.t end)
  local victims = 0
  local function victim()
    victims = victims + 1
    local active = {}
    for _, n in ipairs(C.order) do
      if C.sets[n].in_map and C.sets[n].state == "active" then active[#active + 1] = n end
    end
    return active[victims % #active + 1] -- b, c, a, ...
  end
  local next_report = opt.report > 0 and opt.report or math.huge
  local next_balance = opt.rebalance > 0 and opt.rebalance or math.huge
  while at() < S or #events > 0 do
    if events[1] and at() >= events[1].t then
      local e = table.remove(events, 1)
      if e.fn == "kill" then kill_master(victim())
      elseif e.fn == "replica" then kill_replica(victim())
      elseif e.fn == "break" then break_replica(victim())
      elseif e.fn == "stop" then stop_master(victim(), opt["stop-seconds"])
      elseif e.fn == "leave" then leave(C.order[1])
      else e.fn(unpack(e.args)) end
    elseif at() >= next_report then
      report()
      next_report = next_report + opt.report
    elseif at() >= next_balance then
      rebalance()
      next_balance = next_balance + opt.rebalance
    else
      fiber.sleep(0.25)
    end
  end
  local elapsed = at()
  if opt.report > 0 then report() end
  if edited_at then -- (an edit made late is given its ticks to be read)
    wait_for(10, function()
      for _, m in ipairs(masters()) do
        if m.started < edited_at and ((figures(m) or {}).reloads or 0) < 1 then return false end
      end
      return true
    end)
  end

  -- Settle: no ticking, the hand-overs in flight finish, then every
  -- token is forgotten (bounded).
  for _, m in ipairs(masters()) do pcall(C.call, m, "pause", { true }) end
  local settle = now()
  local leaving = wait_for(30 + opt.npcs / 1000, function()
    return sum("leaving") == 0
  end)
  settle = now() - settle
  if not leaving then
    bad[#bad + 1] = ("%d hand-overs still in flight after %.0f s"):format(sum("leaving"), settle)
  end
  local collected = wait_for(30, function() return sum("tokens") + sum("done") == 0 end)
  if not collected then
    bad[#bad + 1] = ("tokens not collected: %d held, %d done not yet forgotten")
      :format(sum("tokens"), sum("done"))
  end

  -- Every replica that counts holds what its master holds.
  local compared = 0
  for _, m in ipairs(masters()) do
    local okm, ms = pcall(C.call, m, "status", {}, 3)
    for _, r in ipairs(m.set.replicas) do
      if r.member and r.state == "up" and okm then
        local lsn
        for _, p in ipairs(ms.vclock) do if p[1] == m.id then lsn = p[2] end end
        wait_for(20, function()
          local ok, rs = pcall(C.call, r, "status", {}, 3)
          if not ok then return false end
          for _, p in ipairs(rs.vclock) do if p[1] == m.id then return p[2] >= lsn end end
        end)
        local ok1, a = pcall(C.call, m, "digest", {}, 10)
        local ok2, b = pcall(C.call, r, "digest", {}, 10)
        if not (ok1 and ok2) or a.sum ~= b.sum or a.npcs ~= b.npcs then
          bad[#bad + 1] = ("replica %s differs from its master %s (%s NPC rows against %s)")
            :format(r.name, m.name, ok2 and b.npcs or "?", ok1 and a.npcs or "?")
        end
        compared = compared + 1
      end
    end
  end

  -- Bad input, to the first set from the second; then every NPC (and
  -- the probes') exactly once.
  local bt = require "bonsai"
  W.register()
  local map = W.index(C.plain_map())
  local target, from = C.order[1], C.order[2]
  for _, p in ipairs(probes.run {
      call = function(fn, args) return C.mcall(target, fn, args) end,
      bt = bt, W = W, tree = bt.load(here .. "npc_tree.lua"), run = run,
      target = target, from = from, term = C.sets[from].term,
      x = W.stretches(map, target)[1][1] + 1, census = function()
        local n = 0
        for _, m in ipairs(masters()) do n = n + #C.call(m, "npcs_here") end
        return n
      end }) do
    bad[#bad + 1] = p
  end

  local totals = { migrated = 0, duplicates = 0, saved = 0, kb = 0 }
  local all_sets = {}
  for _, name in ipairs(C.order) do all_sets[#all_sets + 1] = C.sets[name] end
  for _, set in pairs(C.gone_sets) do all_sets[#all_sets + 1] = set end
  for _, set in ipairs(all_sets) do
    local m = set.master
    if m.state == "up" then
      local f = figures(m)
      if f then C.note(m, f) end
    end
    local T = function(k) return set_total(set, k) end
    local ticks, wall = T("ticks"), T("wall")
    local errors = 0
    for _, f in pairs(set.past) do
      for _, n in pairs(f.errors or {}) do errors = errors + n end
    end
    local f = set.past[m.name .. "#" .. m.lives] or {}
    local commit_max = 0
    for _, x in pairs(set.past) do commit_max = math.max(commit_max, x.commit_ms_max or 0) end
    print(("  %s: %5d NPCs, %.1f Hz, tick %.2f ms (max %.1f), commit %.2f ms (max %.0f), out %d, in %d, duplicates %d, refused %d, stale %d, reloads %d, saves %.0f/s (%.0f KB/s), tokens held %d (%d forgotten), errors %d, master %s (term %d), data %.1f MB, Lua %.0f KB%s")
      :format(set.name, f.active or 0, ticks > 1 and (ticks - 1) / math.max(wall, 0.001) or 0,
        ticks > 0 and T("tick_ms_sum") / ticks or 0, f.tick_ms_max or 0,
        T("commits") > 0 and T("commit_ms_sum") / T("commits") or 0, commit_max,
        T("migrated_out"), T("migrated_in"), T("duplicates"), T("refused"), T("stale"),
        f.reloads or 0, T("saved") / elapsed, T("saved_bytes") / elapsed / 1024, f.tokens or 0,
        T("forgotten"), errors, m.name, set.term, f.items_mb or 0, f.lua_kb or 0,
        C.sets[set.name] and "" or " (left)"))
    totals.migrated = totals.migrated + T("migrated_out")
    totals.saved = totals.saved + T("saved") / elapsed
    totals.kb = totals.kb + T("saved_bytes") / elapsed / 1024
    if C.sets[set.name] and edited_at and m.started < edited_at and (f.reloads or 0) < 1 then
      bad[#bad + 1] = m.name .. " did not reload the edited tree"
    end
    if C.sets[set.name] and f.listen and not f.listen:match("^127%.0%.0%.1:") then
      bad[#bad + 1] = m.name .. " listens on " .. tostring(f.listen)
    end
  end

  local where, dups = {}, {}
  for _, m in ipairs(masters()) do
    for _, n in ipairs(C.call(m, "npcs_here", {}, 10)) do
      if where[n.id] then
        dups[#dups + 1] = ("npc %d on %s and %s"):format(n.id, where[n.id].on, m.set.name)
      end
      where[n.id] = { on = m.set.name, npc = n }
    end
  end
  for _, d in ipairs(dups) do bad[#bad + 1] = d end
  for id, w in pairs(where) do
    local n = w.npc
    if n.state ~= "active" then
      bad[#bad + 1] = ("npc %d still %s on %s"):format(id, n.state, w.on)
    elseif W.owner_of(map, n.x) ~= w.on then
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
  local lost_time, failover = 0, nil
  for _, k in ipairs(kills) do
    lost_time = math.max(lost_time, k.lost)
    failover = math.max(failover or 0, k.took)
  end
  say("persistence: every NPC saved every %.1f s (%.0f rows/s, %.0f KB/s in all), hand-overs on synchronous spaces (%d replica(s) per set, %d compared with their master); agent time lost at a kill <= %.2f s",
    W.SAVE_EVERY, totals.saved, totals.kb, opt.replicas, compared, lost_time)
  if failover then say("failover: a killed master's NPCs ticked again within %.2f s", failover) end
  if opt.report > 0 then flat() end
  local happened = {}
  for _, e in ipairs(C.events) do happened[e.kind] = (happened[e.kind] or 0) + 1 end
  say("coordinator: %d failover(s), %d fenced, %d restart(s) from disk, %d replica(s) lost, %d broken replica(s) replaced, %d uncounted for lagging, %d replica(s) caught up, %d zone map change(s) by load",
    happened.failover or 0, happened.fenced or 0, happened.restart or 0,
    happened["replica lost"] or 0, happened["replica broken"] or 0,
    happened["replica lagging"] or 0,
    happened["replica synced"] or 0, happened.moves or 0)
  say("failure detector: the slowest answer %.2f s, so an instance was dead after %.1f s of silence at most (%.1f s at least)",
    C.slowest, math.max(C.patience, opt["fail-after"]), opt["fail-after"])
  for _, b in ipairs(breaks) do
    say("heal: %s broken on purpose, found in %.1f s, a fresh replica counting %s later; %d synchronous commit(s) of its master timed out meanwhile",
      b.victim, b.found, b.replaced and ("%.1f s"):format(b.replaced) or "never", b.timeouts)
  end
  say("%d NPCs, %d sets, tick %.0f Hz, migrations %.1f/s, lost %d, duplicated %d, kills %d, stops %d, joins %d, leaves %d, breaks %d, settled in %.1f s",
    opt.npcs, #C.order, 1 / W.TICK, totals.migrated / elapsed, lost, #dups, #kills, #stops,
    #joins, #leaves, #breaks, settle)
  for k = 1, math.min(#bad, 20) do print("  BROKEN: " .. bad[k]) end
  return #bad == 0
end

local ok, res = pcall(main)
C.stop_all()
if not ok then print("cluster: error: " .. tostring(res)) end
local passed = ok and res
if temporary and passed and opt.keep == 0 then
  fio.rmtree(opt.dir)
else
  print("cluster: databases and logs kept in " .. opt.dir)
end
os.exit(passed and 0 or 1)
