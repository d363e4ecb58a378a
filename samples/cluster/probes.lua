-- probes.lua: the cluster driver's bad input, sent to instance a once the
-- NPCs are settled: hand-over messages that are not a list, not a
-- message, from an unknown instance or from a itself, truncated, with a
-- save cut short, with another NPC's owner record or a blackboard copy
-- that is not numbers, duplicated in one batch and replayed later, each
-- refused (logged and counted by a) or answered "duplicate", changing no
-- NPC; and saves that do not restore as they were: one of another version
-- of the NPC tree whose running nodes are gone (restored by path
-- matching), one of another tree (the NPC's tree restarted, its
-- blackboard kept). Those two, and one good message, add the NPCs
-- M.EXTRA to a. Returns a list of what went wrong.
local uuid = require "uuid"
local handover = require "handover"

local M = {}

M.EXTRA = { 999997, 999998, 999999 }

-- call(instance, fn, args) -> result; bt: bonsai with world.lua's leaves
-- registered; W: the map; tree: the NPCs' tree (named "npc").
function M.run(call, bt, W, tree)
  local bad = {}
  local function msg(id, save, bb)
    local token = uuid.str()
    local owner = W.plain(W.new_owner(id, 10))
    owner.bb = bb or {}
    return { from = "b", token = token, id = id, save = save, owner = owner,
      sum = handover.sum(token, id, save) }
  end
  local function agent_save(t)
    local a = bt.agent(t, { owner = W.new_owner(1, 10) })
    a:tick(0.1)
    return a:save()
  end
  local good = agent_save(tree)
  local old = agent_save(bt.tree(bt.sequence { name = "old trip",
    bt.wait { name = "idle", seconds = 30 } }, { name = "npc" }))
  local other = agent_save(bt.tree(bt.wait { name = "idle", seconds = 30 },
    { name = "another tree" }))
  local before = call("a", "figures")
  local count0 = #call("a", "npcs_here") + #call("b", "npcs_here") + #call("c", "npcs_here")

  local function expect(what, msgs, want)
    local answers = call("a", "accept", { msgs })
    for k, w in ipairs(want) do
      local r = answers[k] or {}
      local got = r.duplicate and "duplicate" or r.ok and "accepted" or "refused"
      if got ~= w then bad[#bad + 1] = ("%s: answered %s, not %s"):format(what, got, w) end
    end
  end
  expect("not a list", "x", { "refused" })
  expect("not a message", { "x" }, { "refused" })
  local m = msg(1, good)
  m.from = "zz"
  expect("from an unknown instance", { m }, { "refused" })
  m = msg(1, good)
  m.from = "a"
  expect("from the receiver itself", { m }, { "refused" })
  m = msg(1, good)
  m.owner = nil
  expect("truncated (no owner record)", { m }, { "refused" })
  m = msg(1, good)
  m.save = good:sub(1, #good - 7)
  expect("a save cut short", { m }, { "refused" })
  m = msg(1, good)
  m.owner.id = 2
  expect("the owner record of another NPC", { m }, { "refused" })
  m = msg(1, good, { entered = "many" })
  expect("a blackboard copy that is not numbers", { m }, { "refused" })
  local once = msg(M.EXTRA[1], good)
  expect("duplicated in one batch", { once, once }, { "accepted", "duplicate" })
  expect("replayed", { once }, { "duplicate" })
  expect("another version of the tree", { msg(M.EXTRA[2], old) }, { "accepted" })
  expect("another tree", { msg(M.EXTRA[3], other, { entered = 5, trips = 5 }) },
    { "accepted" })
  local replay = call("a", "any_token")
  if replay then -- an old hand-over of the run itself, sent again
    local r = msg(replay[2], good)
    r.token, r.sum = replay[1], handover.sum(replay[1], replay[2], good)
    expect("an old hand-over replayed", { r }, { "duplicate" })
  end

  local after = call("a", "figures")
  local count1 = #call("a", "npcs_here") + #call("b", "npcs_here") + #call("c", "npcs_here")
  if count1 ~= count0 + #M.EXTRA then
    bad[#bad + 1] = ("bad input changed the NPCs: %d before, %d after (+%d expected)")
      :format(count0, count1, #M.EXTRA)
  end
  if after.refused - before.refused ~= 8 then
    bad[#bad + 1] = ("a refused %d bad messages, not 8"):format(after.refused - before.refused)
  end
  if after.restarted - before.restarted ~= 1 then
    bad[#bad + 1] = "the save of another tree did not restart the NPC's tree"
  end
  local kept = call("a", "npcs_here", { M.EXTRA[3] })[1]
  if not kept or kept.entered ~= 5 or kept.trips ~= 5 then
    bad[#bad + 1] = "the restarted NPC lost its blackboard"
  end
  local matched = call("a", "npcs_here", { M.EXTRA[2] })[1]
  if not matched or matched.state ~= "active" then
    bad[#bad + 1] = "the NPC of another tree version is not on a"
  end
  print(("cluster: bad input: 8 hand-over messages refused, 3 duplicates answered, "
    .. "a save of another tree version restored by path matching, one of another "
    .. "tree restarted with its blackboard kept (%d problem(s))"):format(#bad))
  return bad
end

return M
