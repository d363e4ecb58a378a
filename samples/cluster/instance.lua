-- instance.lua: one server of the cluster sample, run by Tarantool:
--   tarantool instance.lua NAME DIR BASEPORT [live] [HOST]
-- NAME is a, b or c (world.lua says which zones each owns); DIR holds each
-- instance's database (DIR/NAME) and log; it listens on 127.0.0.1 at
-- BASEPORT + its index (loopback only, unless HOST names another address).
-- It ticks its NPCs with bt.tick_all in a fiber and saves a fifth of them
-- at each tick (every NPC every W.SAVE_EVERY seconds), hands the NPCs that
-- crossed into another instance's zone over to it (handover.lua: exactly
-- once, idempotent, surviving kills, in batches), and on start resumes
-- every NPC of its database from its last save. With "live"
-- it serves its NPCs to the live debugger on 127.0.0.1:BASEPORT+10+i (the
-- NPCs keep their names, "npc 17", from instance to instance).
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
local bt = require "bonsai"
local W = require "world"

local name, dir, baseport, live = arg[1], arg[2], tonumber(arg[3]), arg[4] == "live"
local host = arg[5] or "127.0.0.1"
local index
for i, n in ipairs(W.INSTANCES) do if n == name then index = i end end
assert(index and dir and baseport, "usage: instance.lua NAME DIR BASEPORT")

os.execute("mkdir -p '" .. dir .. "/" .. name .. "'")
box.cfg { -- listening starts at the end, once the functions exist
  work_dir = dir .. "/" .. name,
  log = dir .. "/" .. name .. ".log",
  log_level = 5,
  memtx_memory = 64 * 1024 * 1024,
}

-- npcs: the NPCs this instance holds: "active" (ticked here) or "leaving"
-- (handed over to `to`, not ticked, kept until the other side has it).
-- accepted: hand-over tokens this instance took (a replay is answered
-- "duplicate" and changes nothing).
local npcs = box.schema.space.create("npcs", { if_not_exists = true,
  format = W.FORMAT })
npcs:create_index("primary", { if_not_exists = true })
npcs:create_index("leaving", { if_not_exists = true, unique = false,
  parts = { "state", "to" } })
local accepted = box.schema.space.create("accepted", { if_not_exists = true,
  format = { { name = "token", type = "string" }, { name = "id", type = "unsigned" } } })
accepted:create_index("primary", { if_not_exists = true, type = "hash",
  parts = { "token" } })

W.register()
-- The tree file: DIR/npc_tree.lua when the driver put one there (it edits
-- it mid-run), else the sample's own; watched: an edit reloads it here.
local tree_file = dir .. "/npc_tree.lua"
if not io.open(tree_file) then tree_file = here .. "npc_tree.lua" end
local tree = bt.load(tree_file)
bt.watch(tree_file)

local S = { -- this instance's NPCs and its figures
  agents = {},       -- id -> agent (the active ones)
  count = 0,         -- how many
  list = {},         -- the agents, for bt.tick_all, rebuilt when dirty
  dirty = false,
  ticks = 0, tick_ms = 0, tick_ms_max = 0, saved = 0, saved_bytes = 0,
  wall = 0,          -- seconds of ticking (not paused): the rate held
  migrated_out = 0, migrated_in = 0, duplicates = 0, refused = 0,
  restored = 0, restarted = 0, reloads = 0, paused = false,
  held_until = 0,    -- hand-overs held until then (handover.lua)
  started = clock.monotonic(),
}

-- An NPC ticked here from now on, or no longer (the live debugger is told).
function S.hold(id, a)
  if not S.agents[id] then S.count = S.count + 1 end
  S.agents[id], S.dirty = a, true
  if live then bt.debug.add(a) end
end
function S.drop(id)
  local a = S.agents[id]
  if a then S.count = S.count - 1 end
  S.agents[id], S.dirty = nil, true
  if a and live then bt.debug.remove(a) end
end

-- An agent from a stored save; a save that no longer restores (another
-- tree's, or one past what a reload's path matching reads) restarts the
-- NPC's tree with its blackboard kept, logged: never dropped. Returns the
-- agent and whether it was restarted.
local function revive(id, save, owner)
  local o = W.plain(owner)
  local ok, a = pcall(bt.agent, tree, { owner = o, restore = save })
  if ok then return a, false end
  log.warn("npc %d: save does not restore (%s): tree restarted, blackboard kept",
    id, a)
  S.restarted = S.restarted + 1
  return bt.agent(tree, { owner = o, blackboard = o.bb }), true
end

if live then -- the live debugger, polled by a fiber of its own
  -- bt.debug runs on LuaSocket, which Tarantool's own "socket" module
  -- hides: the first require of bt.debug (made by serve) gets LuaSocket.
  local builtin = package.loaded.socket
  package.loaded.socket = nil
  local ok, err = pcall(bt.debug.serve, { port = baseport + 10 + index })
  package.loaded.socket = builtin
  assert(ok, err)
  fiber.create(function()
    fiber.name("live")
    while true do
      bt.debug.poll()
      fiber.sleep(0.05)
    end
  end)
end

local handover = require("handover").new {
  W = W, name = name, npcs = npcs, accepted = accepted, S = S, log = log,
  host = host, baseport = baseport, revive = revive,
}

-- Resume what the database holds.
for _, t in npcs:pairs() do
  if t.state == "active" then
    S.hold(t.id, (revive(t.id, t.save, W.owner(t))))
    S.restored = S.restored + 1
  end
end
log.info("instance %s: %d NPCs resumed", name, S.restored)

-- Saves, in one transaction, the active NPCs of one slice (id % SLICES):
-- a slice per tick, so every NPC is written every W.SAVE_EVERY seconds
-- and no tick carries them all.
local SLICES = math.floor(W.SAVE_EVERY / W.TICK + 0.5)
local function save_slice(k)
  box.begin()
  for id, a in pairs(S.agents) do
    if id % SLICES == k then
      local s = a:save()
      npcs:replace(W.row("active", s, a.owner, a.bb))
      S.saved, S.saved_bytes = S.saved + 1, S.saved_bytes + #s
    end
  end
  box.commit()
end

-- The ticking fiber: a fixed rate (a late tick is followed at once by the
-- next; figures' ticks and wall say how many were made a second); the
-- NPCs that left this instance's zones are handed over, all of a tick's in
-- one transaction.
fiber.create(function()
  fiber.name("tick")
  local slice, last = 0, nil
  while true do
    local t0 = clock.monotonic()
    if last and not S.paused then S.wall = S.wall + (t0 - last) end
    last = t0
    if not S.paused then
      if S.dirty then
        local list = {}
        for _, a in pairs(S.agents) do list[#list + 1] = a end
        S.list, S.dirty = list, false
      end
      local errors = bt.tick_all(S.list, W.TICK)
      for _, e in ipairs(errors or {}) do log.error("npc: %s", e.error) end
      local gone = {}
      for id, a in pairs(S.agents) do
        local owner = W.owner_of(a.owner.x)
        if owner ~= name then gone[#gone + 1] = { id, a, owner } end
      end
      if #gone > 0 then handover.leave(gone) end
      save_slice(slice)
      slice = (slice + 1) % SLICES
      local ms = (clock.monotonic() - t0) * 1000
      S.ticks, S.tick_ms = S.ticks + 1, S.tick_ms + ms
      if ms > S.tick_ms_max then S.tick_ms_max = ms end
      local reloaded, failed = bt.poll()
      S.reloads = S.reloads + #reloaded
      for _, f in ipairs(failed) do log.warn("tree not reloaded: %s", f.error) end
    end
    fiber.sleep(math.max(0, W.TICK - (clock.monotonic() - t0)))
  end
end)

-- Called by the other instances and the driver (net.box, loopback). -------

function accept(msg) return handover.accept(msg) end

-- spawn(first, n): n new NPCs with ids first.., placed evenly over this
-- instance's zones.
function spawn(first, n)
  local lo, hi = W.span(name)
  box.begin()
  for id = first, first + n - 1 do
    local x = lo + (id * 7919) % (hi - lo)
    local a = bt.agent(tree, { owner = W.new_owner(id, x) })
    S.hold(id, a)
    npcs:replace(W.row("active", a:save(), a.owner, a.bb))
  end
  box.commit()
end

-- pause(true|false): stops or restarts ticking (hand-overs go on).
function pause(on) S.paused = on and true or false end

-- hold(seconds): hand-overs held that long (handover.lua; the driver's
-- kills use it so that one finds hand-overs in flight on both sides).
function hold(seconds) S.held_until = clock.monotonic() + math.min(seconds, 10) end

-- figures(): this instance's counts and times since it started (sums, for
-- the driver to add up over restarts, and the means the page shows).
function figures()
  local to = {}
  for _, t in npcs.index.leaving:pairs({ "leaving" }) do to[t.to] = (to[t.to] or 0) + 1 end
  local leaving = 0
  for _, k in pairs(to) do leaving = leaving + k end
  local up = clock.monotonic() - S.started
  return { name = name, active = S.count, leaving = leaving, leaving_to = to,
    ticks = S.ticks, wall = S.wall, tick_ms_sum = S.tick_ms,
    tick_ms = S.ticks > 0 and S.tick_ms / S.ticks or 0,
    tick_ms_max = S.tick_ms_max, migrated_out = S.migrated_out,
    migrated_in = S.migrated_in, duplicates = S.duplicates,
    refused = S.refused, restored = S.restored, restarted = S.restarted,
    reloads = S.reloads, listen = box.cfg.listen, up = up, saved = S.saved,
    saved_bytes = S.saved_bytes,
    lua_kb = collectgarbage("count"), arena_mb = box.slab.info().arena_used / 1e6 }
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
    local a, t = S.agents[only], npcs:get(only)
    if a then out[1] = described(only, a)
    elseif t and t.state == "leaving" then out[1] = { id = only, state = "leaving", to = t.to } end
    return out
  end
  for id, a in pairs(S.agents) do out[#out + 1] = described(id, a) end
  for _, t in npcs.index.leaving:pairs({ "leaving" }) do
    out[#out + 1] = { id = t.id, state = "leaving", to = t.to }
  end
  return out
end

-- The travelling NPC nearest to crossing out of this instance's stretch.
local function next_out()
  local lo, hi = W.span(name)
  local best, gap
  for id, a in pairs(S.agents) do
    local o = a.owner
    local edge = o.dest >= hi and hi or o.dest < lo and lo
    if edge and (not gap or math.abs(edge - o.x) < gap) then
      best, gap = id, math.abs(edge - o.x)
    end
  end
  return best
end

-- census(): what the world page shows of this instance: its NPCs' count
-- per zone and per state, active (travelling or working) and leaving.
function census()
  local zones, travelling = {}, 0
  for _, a in pairs(S.agents) do
    local _, z = W.owner_of(a.owner.x)
    zones[z + 1] = (zones[z + 1] or 0) + 1
    if a.owner.x ~= a.owner.dest then travelling = travelling + 1 end
  end
  for z = 1, #W.BORDERS - 1 do zones[z] = zones[z] or 0 end
  local f = figures()
  f.zones, f.travelling, f.next_out = zones, travelling, next_out()
  return f
end

-- any_token(): one hand-over this instance accepted, { token, id }, or nil
-- (the driver replays it: it must change nothing).
function any_token()
  for _, t in accepted:pairs() do return { t.token, t.id } end
end

function quit() fiber.create(function() fiber.sleep(0.05) os.exit(0) end) end

-- The functions above are all a peer (or the driver) may call: each runs
-- with this instance's rights (setuid); guest may call them and nothing
-- else.
for _, fn in ipairs { "accept", "spawn", "pause", "hold", "figures", "npcs_here",
                   "census", "any_token", "quit" } do
  box.schema.func.create(fn, { setuid = true, if_not_exists = true })
  box.schema.user.grant("guest", "execute", "function", fn, { if_not_exists = true })
end
box.cfg { listen = host .. ":" .. (baseport + index) } -- loopback unless told
