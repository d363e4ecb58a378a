-- coordinator.lua: the driver's half of the cluster, its failover
-- coordinator. Tarantool 2.6 has synchronous replication but no election,
-- so the driver does what vshard's and Cartridge's coordinators do: it
-- starts the instances (each on a port the system picks, checked to be the
-- process it started, of this run), keeps every replica set at a master
-- and R replicas (a replica counts in the master's quorum once it caught
-- up), watches every instance, promotes the most advanced replica of a
-- master that died, fences a deposed master when it answers again, and
-- publishes the zone map (which set owns which zone, each set's master and
-- term) to every master, which stores it in a replicated space.
--
-- The failover rule: a master is dead when its process is gone or it has
-- not answered for FAIL_AFTER seconds, or four times its slowest recent
-- answer if that is longer (at most 4 x FAIL_AFTER: a master that is slow
-- on a loaded machine is not dead). A commit confirmed by a quorum q
-- is on q - 1 of the n replicas counted in it, so the driver promotes only
-- when at least n - q + 2 of those answer, and then the one holding the
-- most of the dead master's rows: it holds every confirmed commit. With
-- fewer (a set whose replica is lost or still catching up: quorum 1), it
-- restarts the master from its own disk if the process is gone, and
-- otherwise waits for it. The new term is told to the other masters
-- before the new master starts: from then on they refuse the old one.
--
-- The heal: a replica whose applier stopped (box.info.replication's
-- upstream "stopped", e.g. on a row it cannot apply), that stays
-- disconnected, that does not advance while its master does, or that lags
-- while its master's synchronous commits time out for lack of quorum, is
-- broken: it is stopped, its database removed, the master's quorum
-- lowered (what waited for it is confirmed) and a fresh replica started,
-- which bootstraps from the master.
local fiber = require "fiber"
local clock = require "clock"
local netbox = require "net.box"
local fio = require "fio"
local ffi = require "ffi"
pcall(ffi.cdef, "int kill(int pid, int sig);")
pcall(ffi.cdef, "int getpid(void);")

local M = {}

M.FAIL_AFTER = 2      -- seconds without an answer: dead
M.START_WITHIN = 60   -- seconds an instance may take to start
M.STUCK_AFTER = 15    -- seconds a replica may stay disconnected or not advance
M.LAG_AFTER = 4       -- seconds a counted replica may lag (a commit waits 10 s)
local SIGNALS = { KILL = 9, CONT = 18, STOP = 19 }

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
-- A process that exists and is not a zombie (an instance is the child of
-- a shell that has exited: whoever adopts it may be slow to reap it).
local function alive(pid)
  if pid == nil or ffi.C.kill(pid, 0) ~= 0 then return false end
  local f = io.open("/proc/" .. pid .. "/stat")
  local state = f and f:read("*l"):match("^%d+ %b() (%a)")
  if f then f:close() end
  return state ~= "Z" and state ~= "X"
end

-- The { id, lsn } pairs of a status' vclock: the lsn of replica id.
local function lsn_of(status, id)
  for _, p in ipairs(status.vclock or {}) do if p[1] == id then return p[2] end end
  return 0
end

-- o: here (the sample's directory), dir, run, secret, replicas (per set),
-- memory and replica_memory (MB), wal, checkpoint, live, fail_after,
-- say(fmt, ...) (the driver's output), problem(text) (a broken invariant of
-- the run).
function M.new(o)
  local C = { sets = {}, order = {}, events = {}, deposed = {}, gone_sets = {},
    slowest = 0, patience = 0, -- the slowest answer seen, the longest patience
    map = { version = 0, zones = {}, sets = {} }, stopping = false }
  local host = "127.0.0.1"
  local fail_after = o.fail_after or M.FAIL_AFTER
  local lock = fiber.channel(1)

  -- fn() run alone among the coordinator's changes (the monitor's rounds,
  -- the scenario's joins, leaves and moves).
  function C.locked(fn, ...)
    lock:put(true)
    local res = { pcall(fn, ...) }
    lock:get()
    if not res[1] then error(res[2], 0) end
    return unpack(res, 2)
  end

  function C.say(...) o.say(...) end

  -- Instances ---------------------------------------------------------

  function C.signal(inst, sig)
    if inst.pid then ffi.C.kill(inst.pid, SIGNALS[sig]) end
  end

  -- Starts inst's process (its state "starting" until its port file
  -- appears and it answers as itself).
  local function spawn(inst, role, master_uri)
    local args = { "--dir", o.dir, "--name", inst.name, "--set", inst.set.name,
      "--role", role, "--term", inst.set.term,
      "--memory", role == "replica" and o.replica_memory or o.memory, "--wal", o.wal,
      "--checkpoint", o.checkpoint, "--driver", tonumber(ffi.C.getpid()) }
    if master_uri then args[#args + 1] = "--master" args[#args + 1] = master_uri end
    if o.live then args[#args + 1] = "--live" args[#args + 1] = "1" end
    for k, a in ipairs(args) do args[k] = quote(a) end
    os.remove(o.dir .. "/" .. inst.name .. ".port")
    local p = io.popen(("tarantool %s %s >>%s 2>&1 & echo $!"):format(
      quote(o.here .. "instance.lua"), table.concat(args, " "),
      quote(o.dir .. "/" .. inst.name .. ".out")))
    inst.pid = tonumber(p:read("*l"))
    p:close()
    inst.role, inst.state, inst.started = role, "starting", clock.monotonic()
    inst.lives = (inst.lives or 0) + 1
    inst.member, inst.following = false, master_uri
  end

  -- The last lines of an instance's log, for an error that names it.
  local function log_tail(inst)
    local f = io.open(o.dir .. "/" .. inst.name .. ".log")
    if not f then return "(no log)" end
    local lines = {}
    for l in f:lines() do
      lines[#lines + 1] = l
      if #lines > 3 then table.remove(lines, 1) end
    end
    f:close()
    return table.concat(lines, " | ")
  end

  -- Connects to uri and checks who answers: the instance `name` of this
  -- run, with process id pid when given. Returns the connection, or nil
  -- and why.
  function C.connect_checked(uri, name, pid)
    local conn = netbox.connect(uri, { user = "bonsai", password = o.secret,
      wait_connected = 5, connect_timeout = 5 })
    if not conn:is_connected() then
      local err = tostring(conn.error)
      conn:close()
      return nil, ("%s: %s"):format(uri, err)
    end
    local ok, who = pcall(conn.call, conn, "whoami", {}, { timeout = 5 })
    if not ok or type(who) ~= "table" or who.run ~= o.run or who.name ~= name
        or (pid and who.pid ~= pid) then
      conn:close()
      return nil, ("%s answers as %s, not as %s of this run"):format(uri,
        ok and type(who) == "table" and ("%s (pid %s) of run %s"):format(
          tostring(who.name), tostring(who.pid), tostring(who.run)) or tostring(who),
        name)
    end
    return conn
  end

  -- A starting instance: "up" once it answers, "failed" when its process
  -- ended or took too long, nil meanwhile.
  local function try_up(inst)
    local f = io.open(o.dir .. "/" .. inst.name .. ".port")
    if not f then
      if not alive(inst.pid) then return "failed", "it exited: " .. log_tail(inst) end
      if clock.monotonic() - inst.started > M.START_WITHIN then
        return "failed", "it did not start within " .. M.START_WITHIN .. " s: " .. log_tail(inst)
      end
      return nil
    end
    local port = tonumber(f:read("*l"))
    f:close()
    if not port then return nil end
    local uri = host .. ":" .. port
    local conn, why = C.connect_checked(uri, inst.name, inst.pid)
    if not conn then return "failed", why end
    local ok, st = pcall(conn.call, conn, "status", {}, { timeout = 5 })
    if not ok then conn:close() return "failed", tostring(st) end
    if inst.conn then inst.conn:close() end
    inst.conn, inst.port, inst.uri = conn, port, uri
    inst.id, inst.uuid = st.id, st.uuid
    inst.state, inst.last_ok = "up", clock.monotonic()
    return "up"
  end

  -- How long an instance may stay silent before it is dead: fail_after,
  -- or four times its slowest answer of late if that is longer (at most
  -- four times fail_after).
  local function patience(inst)
    return math.min(math.max(fail_after, 4 * (inst.slowest or 0)), 4 * fail_after)
  end

  -- A replica's health, from its status and its master's: why it is
  -- broken, or nil. h keeps what the last checks saw.
  local function diagnose(set, r, h, rs, ms)
    local now, mid = clock.monotonic(), set.master.id
    if rs.upstream == "stopped" then
      return ("its applier stopped: %s"):format(tostring(rs.message))
    end
    if rs.upstream == "follow" or rs.upstream == "sync" then h.connected = now end
    if now - h.connected > M.STUCK_AFTER then
      return ("disconnected from its master for %.0f s (%s: %s)"):format(now - h.connected,
        tostring(rs.upstream), tostring(rs.message))
    end
    local lsn, behind = lsn_of(rs, mid), lsn_of(rs, mid) < lsn_of(ms, mid)
    if lsn ~= h.lsn or not behind then h.lsn, h.moved = lsn, now end
    if now - h.moved > M.STUCK_AFTER then
      return ("it has not advanced for %.0f s, %d rows behind its master"):format(
        now - h.moved, lsn_of(ms, mid) - lsn)
    end
    -- how far behind it is in time: since the master first held a row
    -- the replica does not hold yet
    local hist = h.history
    hist[#hist + 1] = { t = now, lsn = lsn_of(ms, mid) }
    while hist[1] and hist[1].lsn <= lsn do table.remove(hist, 1) end
    if #hist > 60 then table.remove(hist, 1) end
    h.lag = hist[1] and now - hist[1].t or 0
    local timeouts = ms.quorum_timeouts or 0
    if r.member and h.timeouts and timeouts > h.timeouts and behind
        and h.behind_at and h.behind_at == h.moved then
      return ("its master's synchronous commits time out (%d) and it does not advance"):format(
        timeouts)
    end
    h.timeouts, h.behind_at = timeouts, behind and h.moved or nil
  end

  -- Each instance watched by a fiber of its own: the time of its last
  -- answer (a stopped process answers nothing; a dead one is seen by its
  -- process id) and how slow its answers are of late, a master's figures
  -- every second (the driver adds them up over the masters a set had), a
  -- replica's health every second (inst.broken says why it is broken).
  local function watch(inst)
    local life, n = inst.lives, 0
    local h = { connected = clock.monotonic(), moved = clock.monotonic(), history = {} }
    fiber.create(function()
      fiber.name("watch " .. inst.name)
      while (inst.state == "up" or inst.state == "deposed") and inst.lives == life
          and not C.stopping do
        local t = clock.monotonic()
        -- (a late answer still counts: an instance that is slow is alive)
        if inst.conn:ping({ timeout = patience(inst) }) then
          local now = clock.monotonic()
          inst.last_ok = now
          -- the slowest answer of late, forgotten by half in about 30 s
          inst.slowest = math.max(now - t, (inst.slowest or 0) * 0.995)
          C.slowest = math.max(C.slowest, now - t)
          C.patience = math.max(C.patience, patience(inst))
        end
        n = n + 1
        if n % 5 == 0 and inst.role == "master" and inst.state == "up" then
          local ok, f = pcall(C.call, inst, "figures", {}, 1)
          if ok then C.note(inst, f) end
        elseif n % 5 == 0 and inst.role == "replica" and inst.state == "up"
            and not inst.broken and inst.set.master.state == "up"
            and not h.asking then
          -- in a fiber of its own: a master that stopped answering holds
          -- the call to it up to 2 s, and the pings that say this replica
          -- is alive must go on meanwhile (else a stopped master takes
          -- its replica with it, and no one may take over)
          h.asking = true
          fiber.create(function()
            local set = inst.set
            local master = set.master
            local okr, rs = pcall(C.call, inst, "status", {}, 2)
            local okm, ms = pcall(C.call, master, "status", {}, 2)
            if okr and okm and inst.following == master.uri and inst.lives == life
                and set.master == master then
              inst.broken = diagnose(set, inst, h, rs, ms)
              inst.lag = h.lag
            else -- (a new master: the replica follows it from now on)
              h.connected, h.moved, h.timeouts = clock.monotonic(), clock.monotonic(), nil
              h.history, inst.lag = {}, 0
            end
            h.asking = nil
          end)
        end
        fiber.sleep(0.2)
      end
    end)
  end

  -- The latest figures of a master's life, kept by its set (sums over
  -- the set's masters: a promoted or restarted one starts from zero).
  function C.note(inst, f)
    inst.set.past[inst.name .. "#" .. inst.lives] = f
  end

  local function dead(inst)
    return not alive(inst.pid) or clock.monotonic() - inst.last_ok > patience(inst)
  end

  function C.call(inst, fn, args, timeout)
    return inst.conn:call(fn, args or {}, { timeout = timeout or 10 })
  end
  function C.mcall(set, fn, args, timeout)
    return C.call(C.sets[set].master, fn, args, timeout)
  end

  -- Its database, gone with it (a deposed or dead instance was replaced;
  -- its log stays in the run's directory).
  local function remove_dir(inst)
    fio.rmtree(o.dir .. "/" .. inst.name)
    os.remove(o.dir .. "/" .. inst.name .. ".port")
  end

  function C.event(e)
    e.at = clock.monotonic()
    C.events[#C.events + 1] = e
    return e
  end

  -- The zone map -------------------------------------------------------

  -- The map as the instances get it: zones and sets (as last published).
  function C.plain_map()
    return { version = C.map.version, zones = C.map.zones, sets = C.map.sets }
  end

  local function push(set, map)
    if set.master.state ~= "up" then return false end
    local ok, v = pcall(C.call, set.master, "set_map", { map }, 3)
    if ok then set.map_version = v end
    return ok
  end

  -- A new version of the map to every master: to `first` before the
  -- others (a zone's new owner takes its NPCs before its old owner sends
  -- them), none to `except` (a set whose master is about to change).
  function C.publish(first, except)
    local sets = {}
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map then
        sets[name] = { master = set.master.name, uri = set.uri, term = set.term,
          state = set.state }
      end
    end
    C.map.version, C.map.sets = C.map.version + 1, sets
    local map = C.plain_map()
    if first and C.sets[first] then push(C.sets[first], map) end
    local left = 0
    local all = fiber.cond()
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map and name ~= first and name ~= except then
        left = left + 1
        fiber.create(function()
          push(set, map)
          left = left - 1
          all:signal()
        end)
      end
    end
    while left > 0 do all:wait(1) end
    return map
  end

  -- A master's quorum from its replicas that caught up: a majority of
  -- the master and them (2 with one replica, 1 with none). Kept as it was
  -- while the master does not answer (the failover rule reads it).
  local function update_quorum(set)
    local n = 0
    for _, r in ipairs(set.replicas) do if r.member then n = n + 1 end end
    local q = math.floor((n + 1) / 2) + 1
    if q ~= set.quorum or n ~= set.counted then
      if pcall(C.call, set.master, "set_quorum", { q }, 2) then
        set.quorum, set.counted = q, n
      end
    end
  end

  -- Replica sets -------------------------------------------------------

  -- A new set (its master started; the monitor adds its replicas).
  function C.start_set(name)
    local set = { name = name, term = 1, next = 1, replicas = {}, quorum = 1,
      counted = 0, state = "active", in_map = false, map_version = 0, past = {} }
    C.sets[name] = set
    C.order[#C.order + 1] = name
    local m = { name = name .. set.next, set = set }
    set.next = set.next + 1
    set.master = m
    spawn(m, "master")
    return set
  end

  -- A new replica of the set's master, started with the master quiet (its
  -- registration is written outside the synchronous queue: instance.lua,
  -- quiet) until it answers or fails.
  local function spawn_replica(set)
    -- (quiet returns false when commits were still under way after 30 s)
    local ok, quiet = pcall(C.call, set.master, "quiet", { true }, 35)
    if not (ok and quiet) then
      pcall(C.call, set.master, "quiet", { false }, 5)
      return
    end
    local r = { name = set.name .. set.next, set = set, quieted = set.master }
    set.next = set.next + 1
    spawn(r, "replica", set.master.uri)
    set.replicas[#set.replicas + 1] = r
  end
  local function unquiet(r)
    if r.quieted then
      pcall(C.call, r.quieted, "quiet", { false }, 5)
      r.quieted = nil
    end
  end

  local function remove_replica(set, r)
    for k, x in ipairs(set.replicas) do
      if x == r then table.remove(set.replicas, k) break end
    end
  end

  -- A set is ready when its master answers and every replica counts.
  function C.ready(name)
    local set = C.sets[name]
    if not set or set.master.state ~= "up" then return false end
    local n = 0
    for _, r in ipairs(set.replicas) do if r.member then n = n + 1 end end
    return n >= o.replicas
  end

  -- The master of set died: promote, restart or wait (the rule above).
  local function promote(set, candidates)
    local m = set.master
    local t0 = clock.monotonic()
    local best, best_lsn
    for _, c in ipairs(candidates) do
      local ok, st = pcall(C.call, c, "status", {}, 2)
      if ok and (not best or lsn_of(st, m.id) > best_lsn) then
        best, best_lsn = c, lsn_of(st, m.id)
      end
    end
    if not best then return end
    set.term = set.term + 1
    m.state = alive(m.pid) and "deposed" or "dead"
    if m.state == "deposed" then C.deposed[#C.deposed + 1] = m else remove_dir(m) end
    remove_replica(set, best)
    for k = #set.replicas, 1, -1 do
      local r = set.replicas[k]
      r.member = false
      if r.state == "starting" then -- joining the old master: never will
        unquiet(r)
        C.signal(r, "KILL")
        r.state = "dead"
        remove_dir(r)
        table.remove(set.replicas, k)
      end
    end
    set.master, set.uri, set.quorum, set.counted = best, best.uri, 1, 0
    best.role = "master"
    -- every other master refuses the old term before the new master sends
    local map = C.publish(nil, set.name)
    local ok, err = pcall(C.call, best, "promote", { set.term, map, 1, m.uuid }, 30)
    if not ok then
      o.problem(("%s: the promotion of %s failed: %s"):format(set.name, best.name, tostring(err)))
      return
    end
    set.map_version = map.version
    local e = C.event { kind = "failover", set = set.name, from = m.name, to = best.name,
      term = set.term, lsn = best_lsn, promoted_in = clock.monotonic() - t0 }
    C.say("%s: %s %s; %s promoted master (term %d) in %.2f s", set.name, m.name,
      m.state == "deposed" and "does not answer (deposed: fenced when it answers)"
        or "is dead", best.name, set.term, e.promoted_in)
  end

  local function restart_master(set)
    local m = set.master
    set.term = set.term + 1
    set.quorum, set.counted = 1, 0
    for _, r in ipairs(set.replicas) do r.member = false end
    C.event { kind = "restart", set = set.name, name = m.name, term = set.term }
    C.say("%s: %s is dead and no replica may take over: restarted from its disk (term %d)",
      set.name, m.name, set.term)
    spawn(m, "master")
    m.restarting = true
  end

  local function master_dead(set)
    local m = set.master
    local candidates = {}
    for _, r in ipairs(set.replicas) do
      if r.member and r.state == "up" and not dead(r) then candidates[#candidates + 1] = r end
    end
    if #candidates > 0 and #candidates >= set.counted - set.quorum + 2 then
      set.waiting = nil
      return promote(set, candidates)
    end
    if not alive(m.pid) then
      set.waiting = nil
      return restart_master(set)
    end
    if not set.waiting then
      set.waiting = true
      C.say("%s: %s does not answer and no replica may take over safely: waiting for it",
        set.name, m.name)
    end
  end

  local function replica_dead(set, r, why)
    C.signal(r, "KILL")
    r.state = "dead"
    remove_replica(set, r)
    if r.member then
      r.member = false
      update_quorum(set)
    end
    if r.uuid then pcall(C.call, set.master, "forget_member", { r.uuid }, 2) end
    remove_dir(r)
    if why then
      C.event { kind = "replica broken", set = set.name, name = r.name, why = why }
      C.say("%s: replica %s broken, %s: replaced (quorum now %d); a fresh one bootstraps",
        set.name, r.name, why, set.quorum)
    else
      C.event { kind = "replica lost", set = set.name, name = r.name }
      C.say("%s: replica %s lost (quorum now %d); another one started", set.name, r.name,
        set.quorum)
    end
  end

  -- A replica that caught up with its master counts in its quorum.
  local function check_sync(set, r)
    local okm, ms = pcall(C.call, set.master, "status", {}, 2)
    local okr, rs = pcall(C.call, r, "status", {}, 2)
    if okm and okr and rs.upstream == "follow"
        and lsn_of(rs, set.master.id) >= lsn_of(ms, set.master.id) then
      r.member, set.failures = true, 0
      update_quorum(set)
      if set.quorum > 1 and not r.announced then
        r.announced = true
        C.event { kind = "replica synced", set = set.name, name = r.name }
      end
    end
  end

  -- A deposed master that answers again: fenced (read-only, no ticking,
  -- no hand-over), then stopped and its database removed.
  local function fence(inst)
    local ok, f = pcall(C.call, inst, "fence", {}, 5)
    C.signal(inst, "KILL")
    inst.state = "fenced"
    remove_dir(inst)
    local e = C.event { kind = "fenced", set = inst.set.name, name = inst.name,
      figures = ok and f or nil }
    C.say("%s: %s answers again: fenced and stopped", inst.set.name, inst.name)
    return e
  end

  -- One round of the monitor, for every set: instances starting, a dead
  -- master or replica, replicas to start, follow or count, the map.
  local function round(set)
    local m = set.master
    for _, inst in ipairs { m, unpack(set.replicas) } do
      if inst.state == "starting" then
        local r, why = try_up(inst)
        if r then unquiet(inst) end
        if r == "up" then
          watch(inst)
          if inst == m then
            set.uri = m.uri
            m.restarting = nil
            if set.in_map then C.publish() end
          end
        elseif r == "failed" then
          -- a master is started again at the next round (three times at
          -- most); a replica is replaced (three failures in a row at most)
          C.signal(inst, "KILL")
          inst.state = "dead"
          C.say("%s could not start: %s", inst.name, why)
          if inst == m then
            if inst.lives >= 3 then o.problem(inst.name .. " could not start: " .. why) end
          else
            remove_replica(set, inst)
            remove_dir(inst)
            set.failures = (set.failures or 0) + 1
            if set.failures == 3 then o.problem(inst.name .. " could not start: " .. why) end
          end
        end
      end
    end
    if m.state == "up" and dead(m) then master_dead(set)
    elseif m.state == "dead" and not alive(m.pid) and m.lives < 3 then restart_master(set) end
    for _, r in ipairs(set.replicas) do
      if r.state == "up" and dead(r) then replica_dead(set, r)
      elseif r.state == "up" and r.broken and set.master.state == "up" then
        replica_dead(set, r, r.broken)
      elseif r.state == "up" and r.member and (r.lag or 0) > M.LAG_AFTER then
        -- a replica that cannot keep up (a loaded machine) no longer
        -- counts, before the commits waiting for it time out (a rollback
        -- in 2.6 can stop a replica's applier); it counts again once it
        -- caught up
        r.member, r.lag = false, 0
        update_quorum(set)
        C.event { kind = "replica lagging", set = set.name, name = r.name }
        C.say("%s: replica %s lags its master by more than %d s: no longer counted (quorum now %d) until it catches up",
          set.name, r.name, M.LAG_AFTER, set.quorum)
      end
    end
    m = set.master
    if m.state == "up" and not dead(m) then
      for _, r in ipairs(set.replicas) do
        if r.state == "up" then
          if r.following ~= m.uri then
            if pcall(C.call, r, "follow", { m.uri }, 2) then r.following, r.member = m.uri, false end
          elseif not r.member then
            check_sync(set, r)
          end
        end
      end
      if #set.replicas < o.replicas then spawn_replica(set) end
      if set.in_map and set.map_version < C.map.version then push(set, C.plain_map()) end
    end
  end

  -- The monitor: a round every 0.2 s, until stop().
  function C.monitor()
    fiber.create(function()
      fiber.name("monitor")
      while not C.stopping do
        local ok, err = pcall(C.locked, function()
          for _, name in ipairs(C.order) do
            if C.sets[name] then round(C.sets[name]) end
          end
          for k = #C.deposed, 1, -1 do
            local d = C.deposed[k]
            if d.state ~= "deposed" then table.remove(C.deposed, k)
            elseif not alive(d.pid) then
              d.state = "dead"
              remove_dir(d)
              table.remove(C.deposed, k)
            elseif clock.monotonic() - d.last_ok < 0.5 then
              fence(d)
              table.remove(C.deposed, k)
            end
          end
        end)
        if not ok then C.say("monitor: %s", tostring(err)) end
        fiber.sleep(0.2)
      end
    end)
  end

  -- Balancing -----------------------------------------------------------

  -- NPCs per zone (from each master's census) and per set of the map.
  function C.loads()
    local zones, loads = {}, {}
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map then
        loads[name] = 0
        local ok, c = pcall(C.mcall, name, "census", {}, 3)
        if ok then
          for z, k in ipairs(c.zones) do zones[z] = (zones[z] or 0) + k end
        end
      end
    end
    for z, zone in ipairs(C.map.zones) do
      if loads[zone.owner] then loads[zone.owner] = loads[zone.owner] + (zones[z] or 0) end
    end
    return loads, zones
  end

  -- The sets of the map in the order of their zones along x (a set that
  -- owns no zone yet last).
  function C.stretch_order()
    local order, seen = {}, {}
    for _, zone in ipairs(C.map.zones) do
      if not seen[zone.owner] then seen[zone.owner] = true order[#order + 1] = zone.owner end
    end
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map and set.state == "active" and not seen[name] then order[#order + 1] = name end
    end
    return order
  end

  -- A plan: the zones cut into one stretch per set of `order` (side by
  -- side, in that order: every border between two sets is crossed by
  -- NPCs, so a set's zones are best together), the stretches' NPC counts
  -- as even as can be (their largest within a twentieth of the mean of
  -- the best cut), then as few NPCs moved as can be. counts: NPCs per
  -- zone. Returns owners (per zone), the largest load and the NPCs moved.
  function C.plan(order, counts)
    local Z, k = C.map.zones, #order
    local n, total = #Z, 0
    for z = 1, n do total = total + (counts[z] or 0) end
    local step = math.max(1, total / k / 20)
    local function seg(from, to, set) -- load and NPCs moved of zones from..to to set
      local load, moved = 0, 0
      for z = from, to do
        load = load + (counts[z] or 0)
        if Z[z].owner ~= set then moved = moved + (counts[z] or 0) end
      end
      return load, moved
    end
    local function better(a, b)
      if not b then return true end
      local ma, mb = math.floor(a.max / step), math.floor(b.max / step)
      return ma < mb or (ma == mb and a.moved < b.moved)
    end
    -- best[j][i]: the first i zones cut among the first j sets
    local best = { [0] = { [0] = { max = 0, moved = 0 } } }
    for j = 1, k do
      best[j] = {}
      for i = j, n - (k - j) do
        for from = j, i do -- set j takes zones from..i
          local prev = best[j - 1][from - 1]
          if prev then
            local load, moved = seg(from, i, order[j])
            local c = { max = math.max(prev.max, load), moved = prev.moved + moved, from = from }
            if better(c, best[j][i]) then best[j][i] = c end
          end
        end
      end
    end
    local owners, i = {}, n
    for j = k, 1, -1 do
      local c = best[j][i]
      for z = c.from, i do owners[z] = order[j] end
      i = c.from - 1
    end
    return owners, best[k][n].max, best[k][n].moved
  end

  -- The plan for a set joining: its stretch put where the NPCs moved are
  -- fewest (between two sets, or at an end of the map).
  function C.join_plan(name)
    local _, counts = C.loads()
    local order = C.stretch_order()
    for k = #order, 1, -1 do if order[k] == name then table.remove(order, k) end end
    local best
    for p = 1, #order + 1 do
      local o = {}
      for k, s in ipairs(order) do o[#o + 1] = s if k == p - 1 then o[#o + 1] = name end end
      if p == 1 then table.insert(o, 1, name) end
      local owners, max, moved = C.plan(o, counts)
      if not best or max < best.max * 0.95 or (max <= best.max * 1.05 and moved < best.moved) then
        best = { owners = owners, max = max, moved = moved }
      end
    end
    return best.owners, best.moved
  end

  -- The map's zones given to their planned owners, in one new version
  -- (to `first` before the others). Returns the moves, { zone, from, to }.
  function C.apply(owners, first)
    return C.locked(function()
      local moved = {}
      for z, zone in ipairs(C.map.zones) do
        if owners[z] and owners[z] ~= zone.owner then
          moved[#moved + 1] = { zone = z, from = zone.owner, to = owners[z] }
          zone.owner = owners[z]
        end
      end
      if #moved > 0 then
        C.publish(first)
        C.event { kind = "moves", zones = moved }
      end
      return moved
    end)
  end

  -- Rebalancing by load: when the most loaded set holds a quarter more
  -- than the mean, the sets' stretches cut again if that makes the largest
  -- load smaller by a tenth (not for less: NPCs walk, loads change, a
  -- zone moved back and forth is NPCs handed over for nothing). Returns
  -- the moves (or nil).
  function C.rebalance()
    local loads, counts = C.loads()
    local max, total, n = 0, 0, 0
    for _, l in pairs(loads) do max, total, n = math.max(max, l), total + l, n + 1 end
    if n < 2 or max <= total / n * 1.25 then return nil end
    local owners, planned = C.plan(C.stretch_order(), counts)
    if planned < max * 0.9 then return C.apply(owners) end
  end

  -- Every master of the map on its latest version?
  function C.map_everywhere()
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map and set.map_version < C.map.version then return false end
    end
    return true
  end

  -- Stops every instance (and the monitor).
  function C.stop_all()
    C.stopping = true
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set then
        for _, inst in ipairs { set.master, unpack(set.replicas) } do C.signal(inst, "KILL") end
      end
    end
    for _, d in ipairs(C.deposed) do C.signal(d, "KILL") end
  end

  -- Removes a set that left (it holds nothing): out of the map, its
  -- instances stopped, their databases removed.
  function C.remove_set(name)
    C.locked(function()
      local set = C.sets[name]
      set.in_map = false
      C.publish()
      for _, inst in ipairs { set.master, unpack(set.replicas) } do
        C.signal(inst, "KILL")
        inst.state = "gone"
        remove_dir(inst)
      end
      C.sets[name], C.gone_sets[name] = nil, set
      for k, n in ipairs(C.order) do if n == name then table.remove(C.order, k) break end end
    end)
  end

  return C
end

return M
