-- world.lua: what every process of the cluster sample shares: the map
-- (zones along x; which replica set owns each zone is data, the zone map,
-- kept in a replicated space and changed while the world runs), the NPCs'
-- leaves, and the plain record of an NPC's owner data (what is stored
-- beside its save).
--
-- An NPC's blackboard counts its trips: `entered` when "travel" is entered,
-- `trips` when it arrives. A travel that goes on after a hand-over, a
-- restart or a failover is not entered again, so entered - trips is 0 or 1
-- for every NPC, wherever it ran: the cluster's driver checks it.
local W = {}

W.SPEED = 60          -- metres per second
W.TICK = 0.1          -- seconds per tick of an instance
W.SAVE_EVERY = 0.5    -- seconds between two saves of every NPC

-- The map is [0, 2400) metres along x in twelve zones. NPCs walk from
-- anywhere to anywhere, so the middle of the map is crossed most: its
-- zones are narrower, so that zones hold about as many NPCs and a replica
-- set of contiguous zones about a share of the world.
W.BORDERS = { 0, 255, 510, 728, 945, 1073, 1200, 1328, 1455, 1673, 1890,
  2145, 2400 }
W.LENGTH = W.BORDERS[#W.BORDERS]
W.SETS = { "a", "b", "c", "d", "e", "f", "g", "h" } -- replica sets' names, in order

-- The first zone map for the first n sets: contiguous stretches of zones.
-- A map is { version, zones = { { lo, hi, owner }... } (in order along
-- x), sets = { [name] = { master, uri, term, state } } }.
function W.first_map(n)
  local map = { version = 0, zones = {}, sets = {} }
  local count = #W.BORDERS - 1
  for z = 1, count do
    map.zones[z] = { lo = W.BORDERS[z], hi = W.BORDERS[z + 1],
      owner = W.SETS[math.floor((z - 1) * n / count) + 1] }
  end
  return map
end

-- The zone map's lookup: a table from each metre of x to its zone, built
-- once per map (every NPC is looked up at every tick).
function W.index(map)
  local at = {}
  for z, zone in ipairs(map.zones) do
    for m = math.floor(zone.lo), math.ceil(zone.hi) - 1 do at[m] = z end
  end
  map.at = at
  return map
end

-- The set that owns x in map, and the zone's number (1-based); nil before
-- the map exists.
function W.owner_of(map, x)
  local z = map and map.at and map.at[math.floor(x)]
  if not z then return nil end
  return map.zones[z].owner, z
end

-- The zones a set owns: a list of { lo, hi }.
function W.stretches(map, set)
  local out = {}
  for _, zone in ipairs(map.zones) do
    if zone.owner == set then out[#out + 1] = { zone.lo, zone.hi } end
  end
  return out
end

-- A small deterministic generator per NPC, kept in its owner record (so it
-- moves with the NPC and survives restarts).
local function rand(o)
  o.seed = (o.seed * 1103515245 + 12345) % 2147483648
  return o.seed / 2147483648
end

-- The leaves read and move a.owner (the NPC's plain record). (bonsai is
-- required here: the cluster's driver reads the map without it.)
function W.register()
  local bt = require "bonsai"
  bt.register("choose", function(a)
    local o = a.owner
    o.dest = math.floor(rand(o) * (W.LENGTH - 1))
    return bt.SUCCESS
  end)
  bt.register("travel", {
    enter = function(_, bb) bb.entered = (bb.entered or 0) + 1 end,
    tick = function(a, bb, _)
      local o, step = a.owner, W.SPEED * W.TICK
      if math.abs(o.dest - o.x) <= step then
        o.x = o.dest
        bb.trips = (bb.trips or 0) + 1
        return bt.SUCCESS
      end
      o.x = o.x + (o.dest > o.x and step or -step)
      return bt.RUNNING
    end,
  })
  -- Works 1 to 3 seconds, asleep meanwhile (bt.tick_all skips it).
  bt.register("work", {
    enter = function(a, bb) bb.work_until = a.time + 1 + 2 * rand(a.owner) end,
    tick = function(a, bb)
      if a.time >= bb.work_until then return bt.SUCCESS end
      return bt.sleep(bb.work_until - a.time)
    end,
  })
end

-- A new NPC's owner record.
function W.new_owner(id, x)
  return W.plain { id = id, x = x, dest = x, seed = id * 7919 % 2147483648 }
end

-- The owner record, plain fields only (as a hand-over message carries it),
-- with a copy of the blackboard's keys given bb (for a save that no longer
-- restores: the NPC then starts its tree again with them).
function W.plain(o, bb)
  bb = bb or o.bb or {}
  return { id = o.id, name = o.name or "npc " .. o.id, x = o.x, dest = o.dest,
    seed = o.seed, -- name: its label in the live debugger
    bb = { entered = bb.entered, trips = bb.trips, work_until = bb.work_until } }
end

-- An NPC's row in an instance's spaces "npcs" and "saves": its state
-- ("active" or "leaving"), its save, its owner record in fields of their
-- own (every NPC is written twice a second: a map would cost twice as much
-- to write), and for a leaving one its receiver (a set) and token.
W.FORMAT = {
  { name = "id", type = "unsigned" }, { name = "state", type = "string" },
  { name = "save", type = "string" }, { name = "x", type = "number" },
  { name = "dest", type = "number" }, { name = "seed", type = "number" },
  { name = "entered", type = "number", is_nullable = true },
  { name = "trips", type = "number", is_nullable = true },
  { name = "work_until", type = "number", is_nullable = true },
  { name = "to", type = "string" }, { name = "token", type = "string" },
}
local function stored(v) if v == nil then return box.NULL end return v end
local function loaded(v) if v == nil then return nil end return v end -- box.NULL == nil
function W.row(state, save, o, bb, to, token)
  bb = bb or o.bb
  return { o.id, state, save, o.x, o.dest, o.seed, stored(bb.entered),
    stored(bb.trips), stored(bb.work_until), to or "", token or "" }
end
-- The owner record of a row.
function W.owner(t)
  return { id = t.id, name = "npc " .. t.id, x = t.x, dest = t.dest, seed = t.seed,
    bb = { entered = loaded(t.entered), trips = loaded(t.trips),
      work_until = loaded(t.work_until) } }
end

return W
