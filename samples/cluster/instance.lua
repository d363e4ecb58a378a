-- instance.lua: one Tarantool instance of the cluster sample, the master
-- or a replica of a replica set, run by the driver (cluster.lua):
--   tarantool instance.lua --dir D --name a1 --set a --role master|replica
--       [--master HOST:PORT] [--term N] [--memory MB] [--wal write|fsync]
--       [--checkpoint S] [--driver PID] [--live 1] [--host H]
-- Its database is D/NAME, its log D/NAME.log. It reads the run's id and
-- secret from D/run and D/secret (written by the driver), listens on a
-- port the system picks (HOST, 127.0.0.1 unless told) and, once ready,
-- writes it to D/NAME.port. A replica replicates its master (the
-- replication user is the run's, its password the secret); a master ticks
-- the NPCs of its set's zones (ticking.lua) and hands over those that
-- leave them (handover.lua). The driver promotes a replica, fences a
-- deposed master and changes the zone map through the functions at the
-- end; with --driver PID the instance quits when that process is gone.
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
if here == "" then here = "./" end
here = require("fio").abspath(here) .. "/" -- box.cfg's work_dir moves the cwd
local root = here .. "../../"
package.path = here .. "?.lua;" .. root .. "lua/?.lua;" .. root
  .. "lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BONSAI_CPATH") or root .. "build-luajit/src/?.so")
  .. ";" .. package.cpath

local fiber = require "fiber"
local clock = require "clock"
local log = require "log"
local fio = require "fio"
local ffi = require "ffi"
local dg = require "digest"
local bt = require "bonsai"
local W = require "world"
pcall(ffi.cdef, "int kill(int pid, int sig);")
pcall(ffi.cdef, "int getpid(void);")

local opt = { memory = 64, wal = "write", checkpoint = 30, term = 1, host = "127.0.0.1" }
do
  local i = 1
  while arg[i] do
    local k = arg[i]:match("^%-%-([%w_]+)$")
    if not k or arg[i + 1] == nil then
      io.stderr:write("instance.lua: bad argument ", arg[i], "\n")
      os.exit(2)
    end
    opt[k] = tonumber(arg[i + 1]) or arg[i + 1]
    i = i + 2
  end
end
assert(opt.dir and opt.name and opt.set and (opt.role == "master" or opt.role == "replica")
  and (opt.role == "master" or opt.master), "usage: see the top of instance.lua")
local function read(path)
  local f = assert(io.open(path), path .. ": not found (the driver writes it)")
  local s = f:read("*l")
  f:close()
  return s
end

-- The instance: what the other files read of it.
local I = { name = opt.name, set = opt.set, role = opt.role, term = opt.term,
  fenced = false, map = nil, map_version = 0,
  run = read(opt.dir .. "/run"), secret = read(opt.dir .. "/secret") }

local SYNC_TIMEOUT = 10 -- seconds a synchronous commit waits for its quorum
local function replication_uri(hostport) return "bonsai:" .. I.secret .. "@" .. hostport end

fio.mkdir(opt.dir .. "/" .. I.name)
local booted = clock.monotonic()
box.cfg { -- its port is written once the functions exist
  listen = opt.host .. ":0",
  work_dir = opt.dir .. "/" .. I.name,
  log = opt.dir .. "/" .. I.name .. ".log",
  log_level = 5,
  memtx_memory = opt.memory * 1024 * 1024,
  wal_mode = opt.wal,
  -- a checkpoint every opt.checkpoint seconds or 16 MB of write-ahead
  -- log, whichever comes first: a restart reads the last snapshot and at
  -- most that much log (seconds, not minutes)
  checkpoint_interval = opt.checkpoint,
  checkpoint_wal_threshold = 16 * 1024 * 1024,
  checkpoint_count = 2,
  replication = I.role == "replica" and { replication_uri(opt.master) } or nil,
  read_only = I.role == "replica",
  replication_synchro_quorum = 1, -- the driver raises it once a replica follows
  replication_synchro_timeout = SYNC_TIMEOUT,
}
booted = clock.monotonic() - booted -- its database read (or joined)

-- The spaces, users and functions, made once by the first master of the
-- set (a replica receives them). Every space is synchronous (is_sync: a
-- commit returns once the quorum has it): npcs (each NPC's ownership,
-- "active" here or "leaving" to a set, with its save at that moment),
-- accepted (the tokens this set took), done (the tokens of completed
-- hand-overs its receivers may forget), map (the zone map) and saves
-- (every NPC's latest save, written at every tick). saves need not be
-- (a failover would lose some agent time, nothing else), but Tarantool
-- 2.6 stalls when asynchronous commits mix with synchronous ones
-- (ticking.lua, T.commit). ballast is the driver's fault injection: an
-- arena filled on purpose.
local FUNCTIONS = { "whoami", "accept", "spawn", "pause", "hold", "figures",
  "npcs_here", "census", "set_map", "promote", "fence", "follow", "set_quorum",
  "quiet", "status", "forget_member", "digest", "ballast", "conflict", "quit" }
if I.role == "master" then
  box.once("bonsai cluster", function()
    box.schema.user.create("bonsai", { password = I.secret })
    box.schema.user.grant("bonsai", "replication")
    local npcs = box.schema.space.create("npcs", { format = W.FORMAT, is_sync = true })
    npcs:create_index("primary")
    npcs:create_index("leaving", { unique = false, parts = { "state", "to" } })
    local saves = box.schema.space.create("saves", { format = W.FORMAT, is_sync = true })
    saves:create_index("primary")
    local accepted = box.schema.space.create("accepted", { is_sync = true, format = {
      { name = "token", type = "string" }, { name = "id", type = "unsigned" },
      { name = "from", type = "string" } } })
    accepted:create_index("primary", { type = "hash", parts = { "token" } })
    local done = box.schema.space.create("done", { is_sync = true, format = {
      { name = "token", type = "string" }, { name = "to", type = "string" } } })
    done:create_index("primary", { type = "hash", parts = { "token" } })
    done:create_index("to", { unique = false, parts = { "to" } })
    local map = box.schema.space.create("map", { is_sync = true, format = {
      { name = "key", type = "string" }, { name = "version", type = "unsigned" },
      { name = "map", type = "map" } } })
    map:create_index("primary", { parts = { "key" } })
    box.schema.space.create("ballast", { is_sync = true }):create_index("primary")
    -- The driver and the peers log in as "bonsai"; guest may only ask who
    -- this is. Each function runs with the instance's rights (setuid).
    for _, fn in ipairs(FUNCTIONS) do
      box.schema.func.create(fn, { setuid = true })
      box.schema.user.grant("bonsai", "execute", "function", fn)
    end
    box.schema.user.grant("guest", "execute", "function", "whoami")
  end)
end

W.register()
-- The tree file: DIR/npc_tree.lua when the driver put one there (it edits
-- it mid-run), else the sample's own; watched: an edit reloads it here.
local tree_file = opt.dir .. "/npc_tree.lua"
if not io.open(tree_file) then tree_file = here .. "npc_tree.lua" end
local tree = bt.load(tree_file)
bt.watch(tree_file)

local live = opt.live == 1
local T = require("ticking").new { W = W, I = I, bt = bt, tree = tree, log = log, live = live }
local S = T.S
local H = require("handover").new { W = W, I = I, S = S, log = log,
  revive = T.revive, complain = T.complain, commit = T.commit }
T.H = H

-- The zone map of the database (a restart, a replica): cached, indexed.
local function load_map(map, version)
  I.map = W.index { version = version, zones = map.zones, sets = map.sets }
  I.map_version = version
  H.on_map(I.map)
  local me = map.sets[I.set]
  if I.role == "master" and me and me.master ~= I.name and not I.fenced then
    I.fenced = true -- a map that names another master: this one was deposed
    log.warn("the zone map names %s the master of %s: fenced", me.master, I.set)
    pcall(box.cfg, { read_only = true })
  end
end
local stored = box.space.map and box.space.map:get("map")
if stored then load_map(stored.map, stored.version) end

local live_port
local function serve_live()
  if not live or live_port then return end
  -- bt.debug runs on LuaSocket, which Tarantool's own "socket" module
  -- hides: the first require of bt.debug (made by serve) gets LuaSocket.
  local builtin = package.loaded.socket
  package.loaded.socket = nil
  local ok, port = pcall(bt.debug.serve, { port = 0 })
  package.loaded.socket = builtin
  assert(ok, port)
  live_port = port
  fiber.create(function()
    fiber.name("live")
    while true do
      bt.debug.poll()
      fiber.sleep(0.05)
    end
  end)
end

if I.role == "master" then
  serve_live() -- (before the NPCs: each is shown to it as it is taken)
  T.resume()
  log.info("instance %s, master of %s: %d NPCs resumed", I.name, I.set, S.restored)
end
T.start()

-- Called by the peers and the driver (net.box, as "bonsai"). ----------

function whoami()
  return { run = I.run, name = I.name, set = I.set, role = I.role, term = I.term,
    fenced = I.fenced, pid = tonumber(ffi.C.getpid()) }
end

function accept(env) return H.accept(env) end

-- spawn(first, n): n new NPCs with ids first.., spread over this set's zones.
function spawn(first, n)
  local parts, total = W.stretches(I.map, I.set), 0
  for _, p in ipairs(parts) do total = total + p[2] - p[1] end
  local made = {}
  T.commit(function()
    for id = first, first + n - 1 do
      local at = (id * 7919) % total
      local x
      for _, p in ipairs(parts) do
        if at < p[2] - p[1] then x = p[1] + at break end
        at = at - (p[2] - p[1])
      end
      local a = bt.agent(tree, { owner = W.new_owner(id, x) })
      made[id] = a
      box.space.npcs:replace(W.row("active", a:save(), a.owner, a.bb))
    end
  end)
  for id, a in pairs(made) do S.hold(id, a) end
end

-- pause(true|false): stops or restarts ticking (hand-overs go on).
function pause(on) S.paused = on and true or false end

-- hold(seconds): hand-overs held that long (handover.lua; the driver's
-- kills use it so that one finds hand-overs in flight on both sides).
function hold(seconds) S.held_until = clock.monotonic() + math.min(seconds, 10) end

local function rss_kb()
  local f = io.open("/proc/self/status")
  local kb = f and f:read("*a"):match("VmRSS:%s*(%d+)")
  if f then f:close() end
  return tonumber(kb) or 0
end

-- figures(): this instance's counts and times since it started (sums, for
-- the driver to add up over an instance's lives, and what the page shows).
function figures()
  local to, leaving = {}, 0
  for _, t in box.space.npcs.index.leaving:pairs({ "leaving" }) do
    to[t.to] = (to[t.to] or 0) + 1
    leaving = leaving + 1
  end
  for _, g in pairs(S.pending) do
    to[g.to] = (to[g.to] or 0) + 1
    leaving = leaving + 1
  end
  local slab = box.slab.info()
  return { name = I.name, set = I.set, role = I.role, term = I.term, fenced = I.fenced,
    map_version = I.map_version, active = S.count, leaving = leaving, leaving_to = to,
    ticks = S.ticks, wall = S.wall, tick_ms_sum = S.tick_ms,
    tick_ms = S.ticks > 0 and S.tick_ms / S.ticks or 0,
    tick_ms_max = S.tick_ms_max, migrated_out = S.migrated_out,
    migrated_in = S.migrated_in, duplicates = S.duplicates,
    refused = S.refused, rerouted = S.rerouted, stale = S.stale,
    forgotten = S.forgotten, restored = S.restored, restarted = S.restarted,
    reloads = S.reloads, listen = box.info.listen, live = live_port,
    up = clock.monotonic() - S.started, saved = S.saved, saved_bytes = S.saved_bytes,
    tokens = box.space.accepted:len(), done = box.space.done:len(),
    errors = S.errors, send_failures = S.send_failures, alloc_failures = S.alloc_failures,
    mem_warnings = S.mem_warnings, mem_used = S.mem_used,
    first_tick_at = S.first_tick_at, promoted_at = S.promoted_at,
    commits = S.commits, commit_ms_sum = S.commit_ms, commit_ms_max = S.commit_ms_max,
    lua_kb = collectgarbage("count"), rss_kb = rss_kb(), boot_s = booted,
    arena_mb = slab.arena_used / 1048576, items_mb = slab.items_used / 1048576,
    quota_mb = slab.quota_size / 1048576 }
end

-- npcs_here([id]): a list of { id, state, time, x, entered, trips,
-- running } for the NPCs held here (active ones from their agents, leaving
-- ones from their rows), or for NPC id alone.
local function described(id, a)
  return { id = id, state = "active", time = a.time, x = a.owner.x,
    dest = a.owner.dest, entered = a.bb.entered or 0, trips = a.bb.trips or 0,
    running = table.concat(a:running(), "/") }
end
function npcs_here(only)
  local out = {}
  if only then
    local a, t, g = S.agents[only], box.space.npcs:get(only), S.pending[only]
    if a then out[1] = described(only, a)
    elseif g then out[1] = { id = only, state = "leaving", to = g.to }
    elseif t and t.state == "leaving" then out[1] = { id = only, state = "leaving", to = t.to } end
    return out
  end
  for id, a in pairs(S.agents) do out[#out + 1] = described(id, a) end
  for id, g in pairs(S.pending) do out[#out + 1] = { id = id, state = "leaving", to = g.to } end
  for _, t in box.space.npcs.index.leaving:pairs({ "leaving" }) do
    if not S.pending[t.id] then out[#out + 1] = { id = t.id, state = "leaving", to = t.to } end
  end
  return out
end

-- The travelling NPC nearest to crossing out of this set's zones.
local function next_out()
  local best, gap
  for id, a in pairs(S.agents) do
    local o = a.owner
    if o.dest ~= o.x and W.owner_of(I.map, o.dest) ~= I.set then
      local d = math.abs(o.dest - o.x)
      if not gap or d < gap then best, gap = id, d end
    end
  end
  return best
end

-- census(): what the world page and the driver's balancing read of this
-- set: its NPCs' count per zone of the map, travelling, and figures().
function census()
  local zones, travelling = {}, 0
  local n = I.map and #I.map.zones or 0
  for z = 1, n do zones[z] = 0 end
  for _, a in pairs(S.agents) do
    local _, z = W.owner_of(I.map, a.owner.x)
    if z then zones[z] = zones[z] + 1 end
    if a.owner.x ~= a.owner.dest then travelling = travelling + 1 end
  end
  local f = figures()
  f.zones, f.travelling, f.next_out = zones, travelling, next_out()
  return f
end

-- set_map(map): the zone map, taken if newer than this instance's (stored
-- in its space: replicated to its replicas). Returns the version it has.
function set_map(map)
  if type(map) ~= "table" or type(map.version) ~= "number" then error("not a map") end
  if map.version > I.map_version then
    local plain = { zones = map.zones, sets = map.sets }
    if I.role == "master" and not I.fenced then
      T.commit(function() box.space.map:replace { "map", map.version, plain } end)
    end
    load_map(plain, map.version)
  end
  return I.map_version
end

-- promote(term, map, quorum, old): this replica becomes its set's master:
-- replicates no one, writable, the old master's transactions it holds
-- that were waiting for their quorum confirmed (box.ctl.clear_synchro_queue:
-- a replica promoted is one of the quorum, so it holds every confirmed
-- one), the old master (its uuid) no longer a member, then ticks the NPCs
-- of its database. Returns its figures.
function promote(term, map, quorum, old)
  if I.role ~= "master" then
    box.cfg { replication = {}, read_only = false, replication_synchro_quorum = 1,
      replication_synchro_timeout = 0.1 }
    box.ctl.clear_synchro_queue()
    box.cfg { replication_synchro_timeout = SYNC_TIMEOUT,
      replication_synchro_quorum = quorum or 1 }
    if old then -- (nothing else writes yet: the queue is empty)
      local ok, err = pcall(box.space._cluster.index.uuid.delete,
        box.space._cluster.index.uuid, old)
      if not ok then log.warn("promote: %s not removed: %s", old, tostring(err)) end
    end
    I.role, I.term, I.fenced = "master", term, false
    S.first_tick_at, S.promoted_at = nil, clock.realtime()
    set_map(map)
    serve_live()
    T.resume()
    log.info("instance %s promoted master of %s (term %d): %d NPCs resumed",
      I.name, I.set, term, S.restored)
  end
  return figures()
end

-- fence(): a deposed master that answers again stops: no ticking, no
-- hand-over, no write (read-only). The driver then stops it.
function fence()
  I.fenced = true
  pcall(box.cfg, { read_only = true })
  log.warn("fenced: %s is no longer the master of %s", I.name, I.set)
  return figures()
end

-- follow(hostport): a replica replicates that master from now on.
function follow(hostport)
  fiber.create(function()
    local ok, err = pcall(box.cfg, { replication = { replication_uri(hostport) } })
    if not ok then log.error("follow %s: %s", hostport, tostring(err)) end
  end)
end

-- set_quorum(q): how many instances (this master included) a synchronous
-- commit waits for; lowering it confirms what waited for a lost replica.
function set_quorum(q) box.cfg { replication_synchro_quorum = q } end

-- quiet(on): no commit under way and none started until quiet(false)
-- (returns true once so): the driver starts a replica meanwhile, whose
-- registration Tarantool writes outside the synchronous queue.
function quiet(on) return T.quiet(on) end

-- status(): what the driver's failover and its health checks read: role,
-- ids, the vclock (as { id, lsn } pairs), on a replica the state of its
-- upstream and its message (a stopped applier says why), on a master the
-- synchronous commits its quorum did not confirm in time.
function status()
  local vclock = {}
  for id, lsn in pairs(box.info.vclock) do vclock[#vclock + 1] = { id, lsn } end
  local upstream, message
  for _, r in pairs(box.info.replication) do
    if r.upstream then upstream, message = r.upstream.status, r.upstream.message end
  end
  return { name = I.name, role = I.role, id = box.info.id, uuid = box.info.uuid,
    vclock = vclock, upstream = upstream, message = message, ro = box.info.ro,
    quorum = box.cfg.replication_synchro_quorum, quorum_timeouts = S.quorum_timeouts }
end

-- forget_member(uuid): an instance that left the set (dead, replaced) is
-- removed from it (box.space._cluster), so that its master keeps no write-
-- ahead log for it.
function forget_member(uuid)
  T.quiet(true)
  local ok, err = pcall(function() box.space._cluster.index.uuid:delete(uuid) end)
  T.quiet(false)
  if not ok then log.warn("forget_member %s: %s", uuid, tostring(err)) end
  return ok
end

-- digest(): a checksum of the synchronous spaces (the driver compares a
-- master's and its replicas').
function digest()
  local crc, n = 0, 0
  for _, t in box.space.npcs:pairs() do
    crc = dg.crc32_update(crc, ("%d/%s/%s/%s;"):format(t.id, t.state, t.to, t.token))
    n = n + 1
  end
  local tok = {}
  for _, t in box.space.accepted:pairs() do tok[#tok + 1] = t.token end
  for _, t in box.space.done:pairs() do tok[#tok + 1] = "done " .. t.token end
  table.sort(tok)
  for _, t in ipairs(tok) do crc = dg.crc32_update(crc, t) end
  return { npcs = n, tokens = #tok, sum = crc }
end

-- ballast(mb): the arena filled on purpose (replicated like the rest:
-- the driver gives the replicas more memory): mb MB more, or with mb < 0
-- to the brim (rows of 1000, 100 and 10 bytes until none fits);
-- ballast(0) empties it. Returns the MB it holds.
local ballast_bytes, ballast_id = 0, 0
function ballast(mb)
  local b = box.space.ballast
  if mb == 0 then
    while b:len() > 0 do
      local ids = {}
      for _, t in b:pairs() do
        ids[#ids + 1] = t[1]
        if #ids == 1000 then break end
      end
      T.commit(function() for _, id in ipairs(ids) do b:delete(id) end end)
    end
    ballast_bytes = 0
  else
    local goal = mb > 0 and ballast_bytes + mb * 1048576 or math.huge
    for _, size in ipairs { 1000, 100, 10 } do
      local blob, full = string.rep("x", size), false
      while ballast_bytes < goal and not full do
        local n = 0
        full = not pcall(T.commit, function()
          for _ = 1, 100 do
            b:insert { ballast_id + n + 1, blob }
            n = n + 1
          end
        end)
        if not full then ballast_id, ballast_bytes = ballast_id + n, ballast_bytes + n * size end
      end
      if mb > 0 then break end
    end
  end
  return ballast_bytes / 1048576
end

-- conflict(key): the driver's fault injection of a broken replica: a
-- ballast row of that key, written on a replica behind its master's back
-- (read_only off for the moment), then on its master, whose row the
-- replica's applier cannot apply (a duplicate key: it stops, as in a
-- defect of Tarantool 2.6 seen under load). Returns true once written.
function conflict(key)
  if I.role == "master" then
    T.commit(function() box.space.ballast:insert { key, "conflict" } end)
  else
    box.cfg { read_only = false }
    local ok, err = pcall(box.space.ballast.insert, box.space.ballast, { key, "conflict" })
    box.cfg { read_only = true }
    if not ok then error(err, 0) end
  end
  return true
end

function quit() fiber.create(function() fiber.sleep(0.05) os.exit(0) end) end

-- The driver gone (killed, crashed), its instances go too.
if opt.driver then
  fiber.create(function()
    fiber.name("driver watch")
    while ffi.C.kill(opt.driver, 0) == 0 do fiber.sleep(1) end
    log.warn("the driver (pid %d) is gone: quitting", opt.driver)
    os.exit(1)
  end)
end

-- Ready: the port the system gave, for the driver (written whole, then
-- renamed: the driver never reads half of it).
do
  local port = box.info.listen:match(":(%d+)$")
  local path = opt.dir .. "/" .. I.name .. ".port"
  local f = assert(io.open(path .. ".new", "w"))
  f:write(port, "\n")
  f:close()
  assert(os.rename(path .. ".new", path))
  log.info("instance %s (%s of %s, run %s) listens on %s", I.name, I.role, I.set,
    I.run, box.info.listen)
end
