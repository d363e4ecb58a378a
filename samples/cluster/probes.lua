-- probes.lua: the cluster driver's bad input, sent to one set's master
-- once the NPCs are settled, as if from another set: envelopes that are
-- not one, of another run, from an unknown set or from the receiver
-- itself, of the sender's previous term (a deposed master); messages that
-- are not one, truncated, with a save cut short, with another NPC's owner
-- record or a blackboard copy that is not numbers, duplicated in one
-- batch and replayed later; each refused (logged and counted) or
-- answered "duplicate", changing no NPC. Then the collection of tokens:
-- a forget from a set that did not send the token changes nothing, one
-- from its sender deletes it. And saves that do not restore as they were:
-- one of another version of the NPC tree whose running nodes are gone
-- (restored by path matching), one of another tree (the NPC's tree
-- restarted, its blackboard kept). Those two and one good message add the
-- NPCs M.EXTRA to the target. Returns a list of what went wrong.
local uuid = require "uuid"
local handover = require "handover"

local M = {}

M.EXTRA = { 999997, 999998, 999999 }

-- o: call(fn, args) (to the target's master), bt (with world.lua's leaves
-- registered), W, tree (the NPCs' tree, named "npc"), run, target and
-- from (two sets of the map), term (from's), x (a position in a zone of
-- the target), census() (the NPCs of every master, counted).
function M.run(o)
  local bt, W, call = o.bt, o.W, o.call
  local bad = {}
  local function msg(id, save, bb)
    local token = uuid.str()
    local owner = W.plain(W.new_owner(id, o.x))
    owner.bb = bb or {}
    return { token = token, id = id, save = save, owner = owner,
      sum = handover.sum(token, id, save) }
  end
  local function env(msgs, forget)
    return { run = o.run, from = o.from, term = o.term, msgs = msgs, forget = forget }
  end
  local function agent_save(t)
    local a = bt.agent(t, { owner = W.new_owner(1, o.x) })
    a:tick(0.1)
    return a:save()
  end
  local good = agent_save(o.tree)
  local old = agent_save(bt.tree(bt.sequence { name = "old trip",
    bt.wait { name = "idle", seconds = 30 } }, { name = "npc" }))
  local other = agent_save(bt.tree(bt.wait { name = "idle", seconds = 30 },
    { name = "another tree" }))
  local before = call("figures")
  local count0 = o.census()

  -- The answers to an envelope: "refused" for the whole of it, else one
  -- per message.
  local function expect(what, e, want)
    local res = call("accept", { e })
    local got = {}
    if type(res) ~= "table" or res.error then
      got[1] = "refused"
    else
      for k = 1, #want do
        local r = res.results[k] or {}
        got[k] = r.duplicate and "duplicate" or r.ok and "accepted" or "refused"
      end
    end
    for k, w in ipairs(want) do
      if got[k] ~= w then
        bad[#bad + 1] = ("%s: answered %s, not %s"):format(what, tostring(got[k]), w)
      end
    end
    return res
  end
  expect("not an envelope", "x", { "refused" })
  local e = env { msg(1, good) }
  e.run = "another run"
  expect("of another run", e, { "refused" })
  e = env { msg(1, good) }
  e.from = "zz"
  expect("from an unknown set", e, { "refused" })
  e = env { msg(1, good) }
  e.from = o.target
  expect("from the receiver itself", e, { "refused" })
  e = env { msg(1, good) }
  e.term = o.term - 1
  expect("of the sender's previous term (a deposed master)", e, { "refused" })
  expect("not a message", env { "x" }, { "refused" })
  local m = msg(1, good)
  m.owner = nil
  expect("truncated (no owner record)", env { m }, { "refused" })
  m = msg(1, good)
  m.save = good:sub(1, #good - 7)
  expect("a save cut short", env { m }, { "refused" })
  m = msg(1, good)
  m.owner.id = 2
  expect("the owner record of another NPC", env { m }, { "refused" })
  m = msg(1, good, { entered = "many" })
  expect("a blackboard copy that is not numbers", env { m }, { "refused" })
  local once = msg(M.EXTRA[1], good)
  expect("duplicated in one batch", env { once, once }, { "accepted", "duplicate" })
  expect("replayed", env { once }, { "duplicate" })
  expect("another version of the tree", env { msg(M.EXTRA[2], old) }, { "accepted" })
  local restarted = msg(M.EXTRA[3], other, { entered = 5, trips = 5 })
  expect("another tree", env { restarted }, { "accepted" })

  -- The tokens: held until their sender says forget, and only then.
  local tokens = call("figures").tokens
  local others = env({}, { once.token })
  others.from = o.target == "zz" and "yy" or "zz"
  expect("a forget from an unknown set", others, { "refused" })
  local res = expect("the tokens forgotten", env({}, { once.token, restarted.token }), {})
  if type(res) ~= "table" or res.forgotten ~= 2 or call("figures").tokens ~= tokens - 2 then
    bad[#bad + 1] = ("its sender's forget deleted %s of 2 tokens"):format(
      tostring(type(res) == "table" and res.forgotten))
  end

  local after = call("figures")
  local count1 = o.census()
  if count1 ~= count0 + #M.EXTRA then
    bad[#bad + 1] = ("bad input changed the NPCs: %d before, %d after (+%d expected)")
      :format(count0, count1, #M.EXTRA)
  end
  if after.refused - before.refused ~= 11 then
    bad[#bad + 1] = ("%s refused %d bad messages, not 11"):format(o.target,
      after.refused - before.refused)
  end
  if after.restarted - before.restarted ~= 1 then
    bad[#bad + 1] = "the save of another tree did not restart the NPC's tree"
  end
  local kept = call("npcs_here", { M.EXTRA[3] })[1]
  if not kept or kept.entered ~= 5 or kept.trips ~= 5 then
    bad[#bad + 1] = "the restarted NPC lost its blackboard"
  end
  local matched = call("npcs_here", { M.EXTRA[2] })[1]
  if not matched or matched.state ~= "active" then
    bad[#bad + 1] = "the NPC of another tree version is not on " .. o.target
  end
  print(("cluster: bad input: 11 hand-over envelopes or messages refused, 2 duplicates answered, "
    .. "tokens forgotten only by their sender, a save of another tree version restored by path "
    .. "matching, one of another tree restarted with its blackboard kept (%d problem(s))"):format(#bad))
  return bad
end

return M
