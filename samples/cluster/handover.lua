-- handover.lua: moving an NPC to the instance that owns its new zone,
-- exactly once, through a kill of either side at any moment.
--
-- The protocol (each step one database transaction):
--   1. leave: the sender marks the NPC's row "leaving", with the receiver's
--      name, a fresh token and the NPC's save taken now, and stops ticking
--      it. From here it ticks nowhere until step 2 commits.
--   2. accept: the receiver checks the message, restores the agent (a
--      save that does not restore is refused: the sender keeps the NPC),
--      and in one transaction records the token and stores the NPC
--      "active"; then it ticks it. A token it already took is answered
--      "duplicate" and changes nothing, so a retried or replayed message
--      never makes a second NPC.
--   3. done: the sender, told "accepted" or "duplicate", deletes its row.
-- A sender killed before step 1 commits resumes the NPC from its last
-- save as its own; killed after it, finds the row "leaving" on restart and
-- retries step 2; a receiver killed before step 2 commits never had it
-- (the sender retries), after it answers "duplicate" to the retry.
local fiber = require "fiber"
local uuid = require "uuid"
local netbox = require "net.box"

local M = {}

function M.new(o)
  local W, name, npcs, accepted, S, log = o.W, o.name, o.npcs, o.accepted,
    o.S, o.log
  local known, conns, failing = {}, {}, {}
  for i, n in ipairs(W.INSTANCES) do known[n] = o.baseport + i end

  local function connection(to)
    local c = conns[to]
    if c == nil or not c:is_connected() then
      if c then c:close() end
      c = netbox.connect("127.0.0.1:" .. known[to],
        { wait_connected = 1, reconnect_after = nil })
      conns[to] = c
    end
    return c
  end

  local H = {}

  -- Step 1.
  function H.leave(id, a, to)
    npcs:replace { id, "leaving", a:save(), W.plain(a.owner, a.bb), to, uuid.str() }
    S.drop(id)
  end

  -- A refusal: logged, counted, returned as the answer.
  local function refuse(why, msg)
    S.refused = S.refused + 1
    log.warn("hand-over refused: %s (from %s, npc %s)", why,
      type(msg) == "table" and tostring(msg.from) or "?",
      type(msg) == "table" and tostring(msg.id) or "?")
    return { ok = false, error = why }
  end

  -- Step 2, on the receiver.
  function H.accept(msg)
    if type(msg) ~= "table" then return refuse("not a message", msg) end
    if type(msg.from) ~= "string" or not known[msg.from] or msg.from == name then
      return refuse("unknown sender", msg)
    end
    if type(msg.token) ~= "string" or #msg.token ~= 36 then
      return refuse("bad token", msg)
    end
    if type(msg.id) ~= "number" or msg.id < 1 or msg.id % 1 ~= 0 then
      return refuse("bad id", msg)
    end
    if type(msg.save) ~= "string" or type(msg.owner) ~= "table"
        or type(msg.owner.x) ~= "number" then
      return refuse("truncated message", msg)
    end
    if accepted:get(msg.token) then
      S.duplicates = S.duplicates + 1
      return { ok = true, duplicate = true }
    end
    if W.owner_of(msg.owner.x) ~= name then
      return refuse("npc is not in a zone of " .. name, msg)
    end
    local row = npcs:get(msg.id)
    if row and row.state == "active" then
      return refuse("npc already active here", msg)
    end
    local ok, a = pcall(o.restore, msg.save, msg.owner)
    if not ok then return refuse("save does not restore: " .. tostring(a), msg) end
    box.begin()
    accepted:insert { msg.token, msg.id }
    npcs:replace { msg.id, "active", msg.save, W.plain(msg.owner), "", "" }
    box.commit()
    S.hold(msg.id, a)
    S.migrated_in = S.migrated_in + 1
    o.rebuild()
    return { ok = true }
  end

  -- A row still leaving with the same token? The NPC may have come back
  -- (accepted here again) while earlier calls yielded.
  local function current(t)
    local now = npcs:get(t.id)
    return now ~= nil and now.state == "leaving" and now.token == t.token
  end

  -- Steps 2 and 3 for one leaving row.
  local function send(t)
    local c = connection(t.to)
    local ok, r = pcall(c.call, c, "accept", { {
      from = name, token = t.token, id = t.id, save = t.save,
      owner = t.owner } }, { timeout = 1 })
    if ok and r and r.ok then
      if current(t) then npcs:delete(t.id) end
      S.migrated_out = S.migrated_out + 1
    elseif ok then
      log.warn("npc %d: %s refused it: %s", t.id, t.to, tostring(r and r.error))
    elseif failing[t.to] ~= tostring(r) then -- logged once, not per NPC
      failing[t.to] = tostring(r)
      log.warn("hand-overs to %s fail, retrying: %s", t.to, tostring(r))
    end
    if ok then failing[t.to] = nil end
  end

  -- Steps 2 and 3 from the sender: every leaving row, again and again.
  fiber.create(function()
    fiber.name("handover")
    local function round()
      local leaving = {} -- taken first: the calls below yield
      for _, t in npcs:pairs() do
        if t.state == "leaving" then leaving[#leaving + 1] = t end
      end
      for _, t in ipairs(leaving) do
        if current(t) then send(t) end
      end
    end
    while true do
      local ok, err = pcall(round) -- an error never ends the hand-overs
      if not ok then log.error("hand-over round: %s", tostring(err)) end
      fiber.sleep(0.05)
    end
  end)

  return H
end

return M
