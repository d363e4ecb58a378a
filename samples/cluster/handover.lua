-- handover.lua: moving NPCs to the replica set that owns their new zone,
-- exactly once, through a kill, a stop or a failover of either side at any
-- moment, in batches; and collecting the tokens that make it so.
--
-- The protocol (each step one transaction of a master, on synchronous
-- spaces: committed only once its replica has it too):
--   1. leave: the sender marks the NPCs' rows "leaving", each with its
--      receiver (a set), a fresh token and the NPC's save taken now, and
--      stops ticking them. From here an NPC ticks nowhere until step 2
--      commits.
--   2. accept: the sender sends the receiver's master its leaving rows, up
--      to BATCH in one call, in an envelope naming the run, the sending
--      set and its term; the receiver refuses an envelope of another run,
--      of an unknown set or of a term that is not the set's current one (a
--      deposed master: fenced), checks every message on its own (a refused
--      one changes nothing), and in one transaction records the tokens and
--      stores the NPCs "active"; then it ticks them. A token it holds is
--      answered "duplicate" and changes nothing, so a retried or replayed
--      message never makes a second NPC.
--   3. done: the sender deletes the rows answered "accepted" or
--      "duplicate" (each if it is still the same hand-over) and, in the
--      same transaction, records their tokens as done.
--   4. forget: the next envelope to that receiver carries the done tokens;
--      the receiver deletes them (its own, of that sender) in the
--      transaction of step 2, and the sender then deletes its done rows.
-- A token is forgotten only once the sender has deleted the row it came
-- from: only a sender that no longer holds the row could send it again,
-- and that is a deposed master, whose term every receiver refuses.
-- Each receiver has its own sending fiber on the sender: a dead one holds
-- up no other.
local fiber = require "fiber"
local clock = require "clock"
local uuid = require "uuid"
local digest = require "digest"
local netbox = require "net.box"

local M = {}

M.BATCH = 500 -- hand-overs in one call
M.TIMEOUT = 2 -- seconds a call may take

-- The checksum a message carries: a save cut short in transit is refused.
function M.sum(token, id, save)
  return digest.crc32(("%s/%d/"):format(token, id) .. save)
end

-- o: W, I (the instance: name, set, run, secret, role, term, fenced, map),
-- S (ticking's state: agents, pending, counts, held_until, unconfirmed,
-- inflight), log, revive(id, save, owner) -> agent, restarted (a save that
-- does not restore restarts the tree with the blackboard kept), complain
-- (kind, err) (an error counted and logged), commit(fn) (fn's writes, one
-- synchronous transaction; raises when not committed).
function M.new(o)
  local W, I, S, log = o.W, o.I, o.S, o.log
  local space = box.space
  local wake = fiber.cond()
  local H = { wake = wake }

  -- The fault injection of the driver's kills (hold(seconds)): until then
  -- a sender does not complete what was accepted and a receiver does not
  -- answer what it committed, so a kill finds hand-overs in flight on
  -- both sides.
  local function hold()
    while clock.monotonic() < S.held_until do fiber.sleep(0.05) end
  end

  -- Step 1, for a list of { id, agent, to }: raises when not committed
  -- (the caller ticks them again). Until the commit, the rows' tokens are
  -- "unconfirmed": the senders do not send what may yet be rolled back.
  function H.leave(list)
    local tokens = {}
    for k = 1, #list do tokens[k] = uuid.str() S.unconfirmed[tokens[k]] = true end
    local ok, err = pcall(o.commit, function()
      for k, g in ipairs(list) do
        local a = g.agent
        space.npcs:replace(W.row("leaving", a:save(), a.owner, a.bb, g.to, tokens[k]))
        space.saves:delete(g.id)
      end
    end)
    for _, t in ipairs(tokens) do S.unconfirmed[t] = nil end
    if not ok then error(err, 0) end
    wake:broadcast()
  end

  -- A refusal: counted, logged (rate-limited by the caller's log), returned.
  local function refuse(why, id, from)
    S.refused = S.refused + 1
    log.warn("hand-over refused: %s (from %s, npc %s)", why, tostring(from), tostring(id))
    return { ok = false, error = why }
  end

  -- What is wrong with a message, or nil.
  local function fault(msg)
    if type(msg) ~= "table" then return "not a message" end
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

  -- What is wrong with an envelope as a whole, or nil (and the sender's
  -- entry of the map).
  local function envelope_fault(env)
    if type(env) ~= "table" or type(env.msgs) ~= "table" then return "not an envelope" end
    if env.run ~= I.run then return "a message of another run" end
    if I.role ~= "master" or I.fenced then return "not the master of " .. I.set end
    if S.quiet then return "busy: a replica joins" end
    local from = type(env.from) == "string" and I.map and I.map.sets[env.from]
    if not from or env.from == I.set then return "unknown sender" end
    if type(env.term) == "number" and env.term > from.term then
      return ("busy: term %d of %s is newer than this map's (%d)"):format(env.term,
        env.from, from.term) -- the driver's map is on its way: retried
    end
    if env.term ~= from.term then
      S.stale = S.stale + 1
      return ("term %s of %s, not its current %d (a deposed master: fenced)")
        :format(tostring(env.term), env.from, from.term)
    end
    if #env.msgs > M.BATCH or (env.forget ~= nil and (type(env.forget) ~= "table"
        or #env.forget > M.BATCH)) then
      return "batch too long"
    end
  end

  -- Steps 2 and 4, on the receiver: an envelope { run, from, term, msgs,
  -- forget }, answered { results = { answer per message }, forgotten = n }
  -- or { error = why } (nothing changed).
  function H.accept(env)
    local why = envelope_fault(env)
    if why then
      if why:match("^not the master") or why:match("^busy") then return { error = why } end
      refuse(why, nil, type(env) == "table" and env.from)
      return { error = why }
    end
    local answers, fresh, tokens, ids = {}, {}, {}, {}
    for i, msg in ipairs(env.msgs) do
      local bad = fault(msg)
      if bad then
        answers[i] = refuse(bad, type(msg) == "table" and msg.id, env.from)
      elseif S.inflight[msg.token] then -- an earlier call's commit under way
        answers[i] = { ok = false, busy = true }
      elseif tokens[msg.token] or space.accepted:get(msg.token) then
        S.duplicates = S.duplicates + 1
        answers[i] = { ok = true, duplicate = true }
      elseif W.owner_of(I.map, msg.owner.x) ~= I.set then
        answers[i] = { ok = false, reroute = true, error = "npc is not in a zone of " .. I.set }
      elseif ids[msg.id] or S.agents[msg.id] or S.pending[msg.id] then
        answers[i] = refuse("npc already active here", msg.id, env.from)
      else
        tokens[msg.token], ids[msg.id] = true, true
        local a, restarted = o.revive(msg.id, msg.save, msg.owner)
        fresh[#fresh + 1] = { i = i, msg = msg, a = a,
          save = restarted and a:save() or msg.save }
      end
    end
    local forget = {}
    for _, t in ipairs(env.forget or {}) do
      if type(t) == "string" then forget[#forget + 1] = t end
    end
    local forgotten = 0
    if #fresh > 0 or #forget > 0 then
      for t in pairs(tokens) do S.inflight[t] = true end
      local ok, err = pcall(o.commit, function()
        for _, f in ipairs(fresh) do
          -- an NPC back while its hand-over from here is not completed
          -- (the answer lost, or this master new): that hand-over is done,
          -- since the NPC could only leave by it, and its token is to be
          -- forgotten by its receiver
          local was = space.npcs:get(f.msg.id)
          if was and was.state == "leaving" then space.done:replace { was.token, was.to } end
          space.accepted:insert { f.msg.token, f.msg.id, env.from }
          space.npcs:replace(W.row("active", f.save, f.msg.owner))
          space.saves:delete(f.msg.id)
        end
        for _, t in ipairs(forget) do
          local row = space.accepted:get(t)
          if row and row.from == env.from then
            space.accepted:delete(t)
            forgotten = forgotten + 1
          end
        end
      end)
      for t in pairs(tokens) do S.inflight[t] = nil end
      if not ok then
        o.complain("accept", err)
        return { error = "not committed: " .. tostring(err) }
      end
      for _, f in ipairs(fresh) do
        S.hold(f.msg.id, f.a)
        answers[f.i] = { ok = true }
      end
      S.migrated_in = S.migrated_in + #fresh
      S.forgotten = S.forgotten + forgotten
    end
    hold()
    return { results = answers, forgotten = forgotten }
  end

  -- A row still leaving with the same token? The NPC may have come back
  -- (accepted here again) while the call yielded.
  local function current(t)
    local now = space.npcs:get(t.id)
    return now ~= nil and now.state == "leaving" and now.token == t.token
  end

  -- A leaving row whose zone is this set's again (the map changed while it
  -- was refused): the NPC is taken back, ticked here.
  local function take_back(t)
    local a = o.revive(t.id, t.save, W.owner(t))
    space.npcs:replace(W.row("active", t.save, W.owner(t)))
    return a
  end

  -- A connection to the master of set `to`, checked: it must be that set's
  -- master in this run (a port that answers otherwise is another run's,
  -- or an instance that has since changed role).
  local conns = {}
  local function connect(to, target)
    local c = conns[to]
    if c and c.uri == target.uri and c.conn:is_connected() then return c.conn end
    if c then c.conn:close() end
    conns[to] = nil
    local conn = netbox.connect(target.uri, { user = "bonsai", password = I.secret,
      wait_connected = M.TIMEOUT, connect_timeout = M.TIMEOUT })
    if not conn:is_connected() then
      local err = tostring(conn.error)
      conn:close()
      error(("cannot connect to %s at %s: %s"):format(to, target.uri, err), 0)
    end
    local ok, who = pcall(conn.call, conn, "whoami", {}, { timeout = M.TIMEOUT })
    if not ok or type(who) ~= "table" or who.run ~= I.run or who.set ~= to
        or who.name ~= target.master then
      conn:close()
      error(("%s answers as %s, not as %s of this run"):format(target.uri,
        ok and type(who) == "table" and ("%s of run %s"):format(tostring(who.name),
          tostring(who.run)) or tostring(who), target.master), 0)
    end
    conns[to] = { uri = target.uri, conn = conn }
    return conn
  end

  -- Steps 2, 3 and 4 for one receiver: a batch of its leaving rows and of
  -- the done tokens it may forget.
  local failing = {}
  local function send(to, rows, done)
    local conn = connect(to, I.map.sets[to])
    local msgs, forget = {}, {}
    for k, t in ipairs(rows) do
      msgs[k] = { token = t.token, id = t.id, save = t.save, owner = W.owner(t),
        sum = M.sum(t.token, t.id, t.save) }
    end
    for k, t in ipairs(done) do forget[k] = t.token end
    local res = conn:call("accept", { { run = I.run, from = I.set, term = I.term,
      msgs = msgs, forget = forget } }, { timeout = M.TIMEOUT })
    if type(res) ~= "table" or res.error or type(res.results) ~= "table" then
      error(type(res) == "table" and tostring(res.error) or "bad answer", 0)
    end
    hold()
    if I.fenced then return end
    local back = {}
    o.commit(function()
      for k, t in ipairs(rows) do
        local r = res.results[k]
        if type(r) == "table" and r.ok then
          if current(t) then
            space.npcs:delete(t.id)
            space.done:replace { t.token, to }
            S.migrated_out = S.migrated_out + 1
          end
        elseif type(r) == "table" and r.reroute then
          local owner = W.owner_of(I.map, t.x)
          if owner and owner ~= to and current(t) then
            S.rerouted = S.rerouted + 1
            if owner == I.set then back[#back + 1] = { t.id, take_back(t) }
            else space.npcs:update(t.id, { { "=", "to", owner } }) end
          end
        elseif not (type(r) == "table" and r.busy) then
          log.warn("npc %d: %s refused it: %s", t.id, to,
            tostring(type(r) == "table" and r.error or r))
        end
      end
      for _, t in ipairs(done) do space.done:delete(t.token) end
    end)
    for _, b in ipairs(back) do S.hold(b[1], b[2]) end
  end

  -- The leaving rows to `to` that may be sent (their step 1 committed).
  local function sendable(to)
    local rows = {}
    for _, t in space.npcs.index.leaving:pairs({ "leaving", to }) do
      if not S.unconfirmed[t.token] then rows[#rows + 1] = t end
      if #rows >= M.BATCH then break end
    end
    return rows
  end

  -- One sending fiber per receiving set, while that set is in the map.
  local senders = {}
  local function sender(to)
    local me = {}
    senders[to] = me
    fiber.create(function()
      fiber.name("handover to " .. to)
      while senders[to] == me do
        local full = false
        if I.role == "master" and not I.fenced and I.map and I.map.sets[to] then
          local rows = sendable(to)
          local done = space.done.index.to:select({ to }, { limit = M.BATCH })
          if #rows > 0 or #done > 0 then
            local ok, err = pcall(send, to, rows, done)
            if not ok then
              if failing[to] ~= tostring(err) then -- logged once, not per batch
                failing[to] = tostring(err)
                log.warn("hand-overs to %s fail, retrying: %s", to, tostring(err))
              end
              S.send_failures = S.send_failures + 1
              fiber.sleep(0.05)
            else
              failing[to] = nil
              full = #rows >= M.BATCH
            end
          end
        end
        if not full then wake:wait(0.05) end
      end
    end)
  end

  -- Called when the map changes: a sender for every other set in it; the
  -- done tokens of a set that left are dropped (its tokens went with it).
  -- A row still leaving to a set that left is kept and logged: the driver
  -- removes a set only once no row is addressed to it anywhere.
  function H.on_map(map)
    for to in pairs(map.sets) do
      if to ~= I.set and not senders[to] then sender(to) end
    end
    for to in pairs(senders) do
      if not map.sets[to] then
        senders[to] = nil
        if I.role == "master" and not I.fenced then
          local gone = space.done.index.to:select({ to })
          pcall(o.commit, function()
            for _, t in ipairs(gone) do space.done:delete(t.token) end
          end)
          for _ in space.npcs.index.leaving:pairs({ "leaving", to }) do
            log.error("a hand-over to %s, which left the cluster, is still leaving", to)
            break
          end
        end
      end
    end
    wake:broadcast()
  end

  return H
end

return M
