-- handover.lua: moving NPCs to the instance that owns their new zone,
-- exactly once, through a kill of either side at any moment, in batches.
--
-- The protocol (each step one database transaction, for a batch of NPCs):
--   1. leave: the sender marks the NPCs' rows "leaving", each with its
--      receiver's name, a fresh token and the NPC's save taken now, and
--      stops ticking them. From here an NPC ticks nowhere until step 2
--      commits.
--   2. accept: the sender sends each receiver its leaving rows, up to
--      BATCH in one call; the receiver checks every message on its own
--      (a refused one changes nothing), restores the agents, and in one
--      transaction records their tokens and stores them "active"; then it
--      ticks them. A token it already took is answered "duplicate" and
--      changes nothing, so a retried or replayed message never makes a
--      second NPC.
--   3. done: the sender deletes the rows answered "accepted" or
--      "duplicate", if each is still the same hand-over.
-- A sender killed before step 1 commits resumes the NPCs from their last
-- save as its own; killed after it, finds the rows "leaving" on restart
-- and retries step 2; a receiver killed before step 2 commits never had
-- them (the sender retries), after it answers "duplicate" to the retry.
-- Each receiver has its own sending fiber: a dead one holds up no other.
local fiber = require "fiber"
local clock = require "clock"
local uuid = require "uuid"
local digest = require "digest"
local netbox = require "net.box"

local M = {}

M.BATCH = 500 -- hand-overs in one call

-- The checksum a message carries: a save cut short in transit is refused.
function M.sum(token, id, save)
  return digest.crc32(("%s/%d/"):format(token, id) .. save)
end

-- o: W, name, npcs (with its "leaving" index on state and to), accepted,
-- S (the instance's state: agents, counts, held_until), log, host and
-- baseport (where the instances listen),
-- revive(id, save, owner) -> agent, restarted (a save that does not
-- restore restarts the tree with the blackboard kept).
function M.new(o)
  local W, name, npcs, accepted, S, log = o.W, o.name, o.npcs, o.accepted,
    o.S, o.log
  local known = {}
  for i, n in ipairs(W.INSTANCES) do known[n] = o.baseport + i end
  local wake = fiber.cond()

  -- The fault injection of the driver's kills (hold(seconds)): until then
  -- a sender does not delete what was accepted and a receiver does not
  -- answer what it committed, so a kill finds hand-overs in flight on
  -- both sides.
  local function hold()
    while clock.monotonic() < S.held_until do fiber.sleep(0.05) end
  end

  local H = {}

  -- Step 1, for a list of { id, agent, to }.
  function H.leave(list)
    box.begin()
    for _, g in ipairs(list) do
      local a = g[2]
      npcs:replace(W.row("leaving", a:save(), a.owner, a.bb, g[3], uuid.str()))
    end
    box.commit()
    for _, g in ipairs(list) do S.drop(g[1]) end
    wake:broadcast()
  end

  -- A refusal: logged, counted, returned as the answer.
  local function refuse(why, msg)
    S.refused = S.refused + 1
    log.warn("hand-over refused: %s (from %s, npc %s)", why,
      type(msg) == "table" and tostring(msg.from) or "?",
      type(msg) == "table" and tostring(msg.id) or "?")
    return { ok = false, error = why }
  end

  -- What is wrong with a message, or nil.
  local function fault(msg)
    if type(msg) ~= "table" then return "not a message" end
    if type(msg.from) ~= "string" or not known[msg.from] or msg.from == name then
      return "unknown sender"
    end
    if type(msg.token) ~= "string" or #msg.token ~= 36 then return "bad token" end
    if type(msg.id) ~= "number" or msg.id < 1 or msg.id % 1 ~= 0 then
      return "bad id"
    end
    local ow = msg.owner
    if type(msg.save) ~= "string" or type(msg.sum) ~= "number"
        or type(ow) ~= "table" or type(ow.x) ~= "number"
        or type(ow.dest) ~= "number" or type(ow.seed) ~= "number"
        or type(ow.bb) ~= "table" then
      return "truncated message"
    end
    if ow.id ~= msg.id then return "owner record of another npc" end
    for _, k in ipairs { "entered", "trips", "work_until" } do
      if ow.bb[k] ~= nil and type(ow.bb[k]) ~= "number" then return "bad blackboard copy" end
    end
    if M.sum(msg.token, msg.id, msg.save) ~= msg.sum then
      return "save cut short (checksum)"
    end
  end

  -- Step 2, on the receiver: a list of messages, a list of answers.
  function H.accept(msgs)
    if type(msgs) ~= "table" then return { refuse("not a list of messages", msgs) } end
    local answers, fresh, tokens, ids = {}, {}, {}, {}
    for i, msg in ipairs(msgs) do
      local why = i > M.BATCH and "batch too long" or fault(msg)
      if why then
        answers[i] = refuse(why, msg)
      elseif tokens[msg.token] or accepted:get(msg.token) then
        S.duplicates = S.duplicates + 1
        answers[i] = { ok = true, duplicate = true }
      elseif W.owner_of(msg.owner.x) ~= name then
        answers[i] = refuse("npc is not in a zone of " .. name, msg)
      elseif ids[msg.id] or S.agents[msg.id] then
        answers[i] = refuse("npc already active here", msg)
      else
        tokens[msg.token], ids[msg.id] = true, true
        local a, restarted = o.revive(msg.id, msg.save, msg.owner)
        fresh[#fresh + 1] = { i = i, msg = msg, a = a,
          save = restarted and a:save() or msg.save }
      end
    end
    if #fresh > 0 then
      box.begin()
      for _, f in ipairs(fresh) do
        accepted:insert { f.msg.token, f.msg.id }
        npcs:replace(W.row("active", f.save, f.msg.owner))
      end
      box.commit()
      for _, f in ipairs(fresh) do
        S.hold(f.msg.id, f.a)
        answers[f.i] = { ok = true }
      end
      S.migrated_in = S.migrated_in + #fresh
    end
    hold()
    return answers
  end

  -- A row still leaving with the same token? The NPC may have come back
  -- (accepted here again) while the call yielded.
  local function current(t)
    local now = npcs:get(t.id)
    return now ~= nil and now.state == "leaving" and now.token == t.token
  end

  -- Steps 2 and 3 for one receiver, one batch of its leaving rows.
  local conn, failing = {}, {}
  local function send(to, rows)
    local c = conn[to]
    if c == nil or not c:is_connected() then
      if c then c:close() end
      c = netbox.connect(o.host .. ":" .. known[to],
        { wait_connected = 1, reconnect_after = nil })
      conn[to] = c
    end
    local msgs = {}
    for k, t in ipairs(rows) do
      msgs[k] = { from = name, token = t.token, id = t.id, save = t.save,
        owner = W.owner(t), sum = M.sum(t.token, t.id, t.save) }
    end
    local ok, answers = pcall(c.call, c, "accept", { msgs }, { timeout = 2 })
    if not ok then
      if failing[to] ~= tostring(answers) then -- logged once, not per batch
        failing[to] = tostring(answers)
        log.warn("hand-overs to %s fail, retrying: %s", to, tostring(answers))
      end
      return
    end
    failing[to] = nil
    hold()
    box.begin()
    for k, t in ipairs(rows) do
      local r = answers[k]
      if type(r) == "table" and r.ok then
        if current(t) then
          npcs:delete(t.id)
          S.migrated_out = S.migrated_out + 1
        end
      else
        log.warn("npc %d: %s refused it: %s", t.id, to,
          tostring(type(r) == "table" and r.error or r))
      end
    end
    box.commit()
  end

  -- One sending fiber per receiver: its leaving rows, again and again.
  for _, to in ipairs(W.INSTANCES) do
    if to ~= name then
      fiber.create(function()
        fiber.name("handover to " .. to)
        while true do
          local rows = npcs.index.leaving:select({ "leaving", to }, { limit = M.BATCH })
          if #rows > 0 then
            local ok, err = pcall(send, to, rows) -- an error never ends them
            if not ok then
              log.error("hand-overs to %s: %s", to, tostring(err))
              fiber.sleep(0.05)
            end
          end
          if #rows < M.BATCH then wake:wait(0.05) end
        end
      end)
    end
  end

  return H
end

return M
