-- ticking.lua: a master's NPCs: the tick fiber (bt.tick_all at a fixed
-- rate, the NPCs that left the set's zones put aside for a hand-over, a
-- fifth of the NPCs' saves taken), the writer fiber (which commits what the
-- tick put aside, so that a commit waiting for the replica never holds up
-- a tick), the memory watch, and the resume of the NPCs a database holds.
-- Neither fiber ever ends on an error: each is logged (at most once a
-- second per kind, with the count since), counted in the figures, and the
-- ticking goes on with what it can.
local fiber = require "fiber"
local clock = require "clock"

local M = {}

M.MEMORY_WARN = 0.8 -- of memtx_memory in use: the instance says so

-- o: W, I (the instance), bt, tree (the NPCs' tree), log.
function M.new(o)
  local W, I, bt, log = o.W, o.I, o.bt, o.log
  local space = box.space
  local S = {
    agents = {},       -- id -> agent (the active ones, ticked here)
    count = 0,         -- how many
    list = {},         -- the agents, for bt.tick_all, rebuilt when dirty
    dirty = false,
    pending = {},      -- id -> { id, agent, to }: left the set's zones, not yet committed "leaving"
    saves = {},        -- id -> row: each NPC's latest save, for the writer
    unconfirmed = {},  -- tokens of leaving rows not yet committed (not sent)
    inflight = {},     -- tokens a receiver is committing (a retry waits)
    ticks = 0, tick_ms = 0, tick_ms_max = 0, saved = 0, saved_bytes = 0,
    wall = 0,          -- seconds of ticking (not paused): the rate held
    migrated_out = 0, migrated_in = 0, duplicates = 0, refused = 0,
    rerouted = 0, stale = 0, forgotten = 0,
    restored = 0, restarted = 0, reloads = 0, paused = false,
    held_until = 0,    -- hand-overs held until then (handover.lua)
    errors = { tick = 0, write = 0, accept = 0 },
    send_failures = 0, -- calls to a receiver that failed (retried)
    quorum_timeouts = 0, -- synchronous commits its quorum did not confirm in time
    alloc_failures = 0, mem_warnings = 0, mem_used = 0,
    started = clock.monotonic(),
    first_tick_at = nil, -- wall clock of the first tick as a master
  }
  local T = { S = S }
  S.writing, S.quiet = 0, false -- commits under way; none started while quiet
  S.commits, S.commit_ms, S.commit_ms_max = 0, 0, 0 -- and how long they took

  -- Every write of a master is one synchronous transaction made here.
  -- Tarantool 2.6's queue of synchronous transactions stalls when an
  -- asynchronous one is committed while the queue is not empty (measured,
  -- even with no replica: every commit then waits for
  -- replication_synchro_timeout and is rolled back, and a replica can stop
  -- on the rows rolled back), so a master writes nothing else, and the
  -- rare writes Tarantool makes itself (a replica's registration when it
  -- joins, its removal) are made with the set quiet (T.quiet).
  function T.commit(fn)
    local deadline = clock.monotonic() + 30
    while S.quiet and clock.monotonic() < deadline do fiber.sleep(0.01) end
    S.writing = S.writing + 1
    local t = clock.monotonic()
    local ok, err = pcall(box.atomic, fn)
    S.writing = S.writing - 1
    if not ok then
      if tostring(err):find("Quorum collection", 1, true) then -- (the driver heals)
        S.quorum_timeouts = S.quorum_timeouts + 1
      end
      error(err, 0)
    end
    t = (clock.monotonic() - t) * 1000
    S.commits, S.commit_ms = S.commits + 1, S.commit_ms + t
    if t > S.commit_ms_max then S.commit_ms_max = t end
  end
  -- quiet(true) returns once no commit is under way (the queue is empty)
  -- and starts none until quiet(false).
  function T.quiet(on)
    S.quiet = on and true or false
    local deadline = clock.monotonic() + 30
    while S.quiet and S.writing > 0 and clock.monotonic() < deadline do fiber.sleep(0.005) end
    return S.writing == 0
  end

  -- An error counted and logged, at most once a second per kind.
  local last_log, unlogged = {}, {}
  function T.complain(kind, err)
    err = tostring(err)
    S.errors[kind] = S.errors[kind] + 1
    if err:find("Failed to allocate", 1, true) then S.alloc_failures = S.alloc_failures + 1 end
    local now = clock.monotonic()
    if (last_log[kind] or -1) + 1 <= now then
      log.error("%s: %s%s", kind, err, (unlogged[kind] or 0) > 0
        and (" (and %d more since the last)"):format(unlogged[kind]) or "")
      last_log[kind], unlogged[kind] = now, 0
    else
      unlogged[kind] = (unlogged[kind] or 0) + 1
    end
  end

  -- An NPC ticked here from now on, or no longer (the live debugger is told).
  function S.hold(id, a)
    if not S.agents[id] then S.count = S.count + 1 end
    S.agents[id], S.dirty = a, true
    if o.live then bt.debug.add(a) end
  end
  function S.drop(id)
    local a = S.agents[id]
    if a then S.count = S.count - 1 end
    S.agents[id], S.dirty = nil, true
    if a and o.live then bt.debug.remove(a) end
  end

  -- An agent from a stored save; a save that no longer restores (another
  -- tree's, or one past what a reload's path matching reads) restarts the
  -- NPC's tree with its blackboard kept, logged: never dropped. Returns the
  -- agent and whether it was restarted.
  function T.revive(id, save, owner)
    local ow = W.plain(owner)
    local ok, a = pcall(bt.agent, o.tree, { owner = ow, restore = save })
    if ok then return a, false end
    log.warn("npc %d: save does not restore (%s): tree restarted, blackboard kept",
      id, a)
    S.restarted = S.restarted + 1
    return bt.agent(o.tree, { owner = ow, blackboard = ow.bb }), true
  end

  -- Resume what the database holds (a master's start, a promotion): every
  -- NPC stored "active", from its latest save (space "saves", written at
  -- every tick) or, before its first, from the save of its hand-over.
  function T.resume()
    for _, t in space.npcs:pairs() do
      if t.state == "active" and not S.agents[t.id] then
        local s = space.saves:get(t.id) or t
        S.hold(t.id, (T.revive(t.id, s.save, W.owner(s))))
        S.restored = S.restored + 1
      end
    end
  end

  local SLICES = math.floor(W.SAVE_EVERY / W.TICK + 0.5)
  local wake = fiber.cond()
  local slice = 0

  -- One tick: every awake NPC; those out of the set's zones put aside for
  -- the writer (not ticked from now on); the saves of one slice (id %
  -- SLICES) taken, so that every NPC is written every W.SAVE_EVERY s.
  local function tick_once()
    if S.dirty then
      local list = {}
      for _, a in pairs(S.agents) do list[#list + 1] = a end
      S.list, S.dirty = list, false
    end
    local errors = bt.tick_all(S.list, W.TICK)
    for _, e in ipairs(errors or {}) do log.error("npc: %s", e.error) end
    local map = I.map
    if map and map.at then
      for id, a in pairs(S.agents) do
        local owner = W.owner_of(map, a.owner.x)
        if owner and owner ~= I.set then
          S.pending[id] = { id = id, agent = a, to = owner }
        end
      end
      for id in pairs(S.pending) do
        if S.agents[id] then S.drop(id) S.saves[id] = nil end
      end
    end
    for id, a in pairs(S.agents) do
      if id % SLICES == slice then
        S.saves[id] = W.row("active", a:save(), a.owner, a.bb)
      end
    end
    slice = (slice + 1) % SLICES
    wake:signal()
  end

  -- The tick fiber: a fixed rate, each tick due W.TICK after the last was
  -- due (a late tick is followed at once by the next; one more than a tick
  -- late, and the count starts again from now: figures' ticks and wall say
  -- how many were made a second).
  local function ticker()
    fiber.name("tick")
    local last, due = nil, clock.monotonic()
    while true do
      local t0 = clock.monotonic()
      local ticking = not S.paused and I.role == "master" and not I.fenced
      if last and ticking then S.wall = S.wall + (t0 - last) end
      last = t0
      if ticking then
        local ok, err = pcall(tick_once)
        if not ok then T.complain("tick", err) end
        local ms = (clock.monotonic() - t0) * 1000
        S.ticks, S.tick_ms = S.ticks + 1, S.tick_ms + ms
        if ms > S.tick_ms_max then S.tick_ms_max = ms end
        if not S.first_tick_at then S.first_tick_at = clock.realtime() end
        local ok2, reloaded, failed = pcall(bt.poll)
        if ok2 then
          S.reloads = S.reloads + #reloaded
          for _, f in ipairs(failed) do log.warn("tree not reloaded: %s", f.error) end
        end
      end
      local now = clock.monotonic()
      due = due + W.TICK
      if due < now - W.TICK then due = now end
      fiber.sleep(math.max(0, due - now))
    end
  end

  -- The writer fiber: step 1 of the hand-overs the tick put aside (when it
  -- is not committed, the NPCs are ticked here again and put aside at the
  -- next tick), then the saves (each NPC's latest, if it is still here).
  local function writer()
    fiber.name("writer")
    while true do
      wake:wait(W.TICK)
      if I.role == "master" and not I.fenced then
        if next(S.pending) then
          local list = {}
          for _, g in pairs(S.pending) do list[#list + 1] = g end
          local ok, err = pcall(T.H.leave, list)
          for _, g in ipairs(list) do S.pending[g.id] = nil end
          if not ok then
            T.complain("write", err)
            for _, g in ipairs(list) do S.hold(g.id, g.agent) end
          end
        end
        if next(S.saves) then
          local batch = S.saves
          S.saves = {}
          local n, bytes = 0, 0
          local ok, err = pcall(T.commit, function()
            for id, row in pairs(batch) do
              if S.agents[id] then
                space.saves:replace(row)
                n, bytes = n + 1, bytes + #row[3]
              end
            end
          end)
          if ok then S.saved, S.saved_bytes = S.saved + n, S.saved_bytes + bytes
          else T.complain("write", err) end
        end
      end
    end
  end

  -- The memory watch: the instance says in its log (and counts) when its
  -- memory nears the limit: when the share of memtx_memory in use passes
  -- MEMORY_WARN, or when an allocation failed (in a small arena, each size
  -- of row holds slabs of its own, and one size can run out with a third
  -- of the arena unused: measured at 54% of 32 MB); again once it fell
  -- well below and no allocation failed for a while.
  local function watch()
    fiber.name("memory watch")
    local warned, failures, calm = false, 0, 0
    while true do
      local ok, s = pcall(box.slab.info)
      if ok then
        S.mem_used = s.arena_used / s.quota_size
        local failing = S.alloc_failures > failures
        failures = S.alloc_failures
        calm = failing and 0 or calm + 1
        if (S.mem_used >= M.MEMORY_WARN or failing) and not warned then
          warned, S.mem_warnings = true, S.mem_warnings + 1
          log.warn("memory near the limit: %s; %.0f%% of memtx_memory (%.1f of %.1f MB) in use",
            failing and "allocations fail" or "most of the arena is used",
            100 * S.mem_used, s.arena_used / 1048576, s.quota_size / 1048576)
        elseif warned and S.mem_used < M.MEMORY_WARN - 0.1 and calm >= 20 then
          warned = false
          log.info("memory: %.0f%% of memtx_memory in use, no allocation failed for 5 s",
            100 * S.mem_used)
        end
      end
      fiber.sleep(0.25)
    end
  end

  function T.start()
    fiber.create(ticker)
    fiber.create(writer)
    fiber.create(watch)
  end

  return T
end

return M
