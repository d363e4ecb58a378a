-- instance.lua: one server of the cluster sample, run by Tarantool:
--   tarantool instance.lua NAME DIR BASEPORT [live]
-- NAME is a, b or c (world.lua says which zones each owns); DIR holds each
-- instance's database (DIR/NAME) and log; it listens on 127.0.0.1 at
-- BASEPORT + its index (loopback only). It ticks its NPCs with bt.tick_all
-- in a fiber, saves every NPC in one transaction every W.SAVE_EVERY
-- seconds, hands an NPC that crossed into another instance's zone over to
-- it (handover.lua: exactly once, idempotent, surviving kills), and on
-- start resumes every NPC of its database from its last save. With "live"
-- it serves its NPCs to the live debugger on 127.0.0.1:BASEPORT+10+i (the
-- NPCs keep their names, "npc 17", from instance to instance).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/]*$")
if here == "" then here = "./" end
here = require("fio").abspath(here) .. "/" -- box.cfg's work_dir moves the cwd
local root = here .. "../../"
package.path = here .. "?.lua;" .. root .. "lua/?.lua;" .. root
  .. "lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BONSAI_CPATH") or root .. "build-luajit/src/lua/?.so")
  .. ";" .. package.cpath

local fiber = require "fiber"
local clock = require "clock"
local log = require "log"
local bt = require "bonsai"
local W = require "world"

local name, dir, baseport, live = arg[1], arg[2], tonumber(arg[3]), arg[4] == "live"
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
local npcs = box.schema.space.create("npcs", { if_not_exists = true, format = {
  { name = "id", type = "unsigned" }, { name = "state", type = "string" },
  { name = "save", type = "string" }, { name = "owner", type = "map" },
  { name = "to", type = "string" }, { name = "token", type = "string" },
} })
npcs:create_index("primary", { if_not_exists = true })
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
  list = {},         -- the agents, for bt.tick_all
  ticks = 0, tick_ms = 0, tick_ms_max = 0,
  migrated_out = 0, migrated_in = 0, duplicates = 0, refused = 0,
  restored = 0, restarted = 0, reloads = 0, paused = false,
}

-- An NPC ticked here from now on, or no longer (the live debugger is told).
function S.hold(id, a)
  S.agents[id] = a
  if live then bt.debug.add(a) end
end
function S.drop(id)
  local a = S.agents[id]
  S.agents[id] = nil
  if a and live then bt.debug.remove(a) end
end

local function rebuild_list()
  local list = {}
  for _, a in pairs(S.agents) do list[#list + 1] = a end
  table.sort(list, function(x, y) return x.owner.id < y.owner.id end)
  S.list = list
end

-- An agent from a stored save; a save that no longer restores (a tree
-- changed past recognition) restarts the NPC's tree with its blackboard
-- kept, logged: never dropped.
local function revive(id, save, owner)
  local o = W.plain(owner)
  local ok, a = pcall(bt.agent, tree, { owner = o, restore = save })
  if ok then return a end
  log.warn("npc %d: save does not restore (%s): tree restarted, blackboard kept",
    id, a)
  S.restarted = S.restarted + 1
  return bt.agent(tree, { owner = o, blackboard = o.bb })
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
  baseport = baseport, rebuild = rebuild_list,
  restore = function(save, owner)
    return bt.agent(tree, { owner = W.plain(owner), restore = save })
  end,
}

-- Resume what the database holds.
for _, t in npcs:pairs() do
  if t.state == "active" then
    S.hold(t.id, revive(t.id, t.save, t.owner))
    S.restored = S.restored + 1
  end
end
rebuild_list()
log.info("instance %s: %d NPCs resumed", name, S.restored)

-- Saves every active NPC in one transaction.
local function save_all()
  box.begin()
  for id, a in pairs(S.agents) do
    npcs:replace { id, "active", a:save(), W.plain(a.owner, a.bb), "", "" }
  end
  box.commit()
end

-- The ticking fiber: a fixed rate; NPCs that left this instance's zones
-- are handed over.
fiber.create(function()
  fiber.name("tick")
  local next_save = W.SAVE_EVERY
  while true do
    local t0 = clock.monotonic()
    if not S.paused then
      local errors = bt.tick_all(S.list, W.TICK)
      for _, e in ipairs(errors or {}) do log.error("npc: %s", e.error) end
      local gone = {} -- taken first: a hand-over's write yields
      for id, a in pairs(S.agents) do
        local owner = W.owner_of(a.owner.x)
        if owner ~= name then gone[#gone + 1] = { id, a, owner } end
      end
      for _, g in ipairs(gone) do handover.leave(g[1], g[2], g[3]) end
      if #gone > 0 then rebuild_list() end
      next_save = next_save - W.TICK
      if next_save <= 0 then
        next_save = W.SAVE_EVERY
        save_all()
      end
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

-- spawn(first, n): n new NPCs with ids first.., placed in this instance's
-- zones.
function spawn(first, n)
  box.begin()
  for id = first, first + n - 1 do
    local x = ((index - 1) * 2 + (id % 2)) * W.ZONE + (id * 37) % W.ZONE
    local a = bt.agent(tree, { owner = W.new_owner(id, x) })
    S.hold(id, a)
    npcs:replace { id, "active", a:save(), W.plain(a.owner, a.bb), "", "" }
  end
  box.commit()
  rebuild_list()
end

-- pause(true|false): stops or restarts ticking (hand-overs go on).
function pause(on) S.paused = on and true or false end

-- figures(): this instance's counts and times.
function figures()
  local leaving = 0
  for _, t in npcs:pairs() do if t.state == "leaving" then leaving = leaving + 1 end end
  return { name = name, active = #S.list, leaving = leaving, ticks = S.ticks,
    tick_ms = S.ticks > 0 and S.tick_ms / S.ticks or 0,
    tick_ms_max = S.tick_ms_max, migrated_out = S.migrated_out,
    migrated_in = S.migrated_in, duplicates = S.duplicates,
    refused = S.refused, restored = S.restored, restarted = S.restarted,
    reloads = S.reloads,
    lua_kb = collectgarbage("count"), arena_mb = box.slab.info().arena_used / 1e6 }
end

-- npcs_here(): a list of { id, state, time, entered, trips, running } for
-- the NPCs held here (active ones from their agents, leaving ones from
-- their rows).
function npcs_here()
  local out = {}
  for id, a in pairs(S.agents) do
    out[#out + 1] = { id = id, state = "active", time = a.time, x = a.owner.x,
      entered = a.bb.entered or 0, trips = a.bb.trips or 0,
      running = table.concat(a:running(), "/") }
  end
  for _, t in npcs:pairs() do
    if t.state == "leaving" then
      out[#out + 1] = { id = t.id, state = "leaving", to = t.to }
    end
  end
  return out
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
for _, fn in ipairs { "accept", "spawn", "pause", "figures", "npcs_here", "any_token",
                   "quit" } do
  box.schema.func.create(fn, { setuid = true, if_not_exists = true })
  box.schema.user.grant("guest", "execute", "function", fn, { if_not_exists = true })
end
box.cfg { listen = "127.0.0.1:" .. (baseport + index) } -- loopback only
