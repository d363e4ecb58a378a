-- bonsai.debug.edit.apply: the commands that change what runs: apply (the
-- draft becomes the running version, tree:reload; to some agents first,
-- the others held on the version they run, a:hold) and rollback (the
-- version before the last apply runs again and becomes the draft).
local node = require "bonsai.debug.edit.node"
local preview = require "bonsai.debug.edit.preview"

local M = {}

-- The tree runs root (a copy of it: the draft stays the page's).
local function reload(d, root)
  local ok, err = d.tree:reload(node.copy(root), d.opts)
  if not ok then return nil, err end
  d.live = root
  return true
end

-- Holds every agent of d's tree the session shows but those of only, on
-- the version it runs: the set of agents held now.
local function holdothers(E, d, only)
  local hold = {}
  for agent, st in pairs(E.S.recording().ids) do
    if st.v.tree == d.tree.name and agent.tree == d.tree and
       not only[agent] and not agent:held() then
      agent:hold(true)
      hold[agent] = true
    end
  end
  return hold
end

-- apply: { tree, version [, agents] }: the draft becomes the running
-- version (each agent switches at its next tick, running nodes matched by
-- path kept). With agents = { ids }, only those switch: every other agent
-- of the tree the session shows is held on the version it runs, to
-- compare on the population view; a later apply to all releases them, and
-- they switch to the newest version at their next tick. An agent the game
-- never offered the debugger is not held: it switches as any agent does.
function M.apply(E, cmd)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  if cmd.version ~= d.serial then
    return nil, "stale apply: the draft is at version " .. d.serial
  end
  local only
  only, why = preview.chosen(E, d, cmd.agents)
  if only == false then return nil, why end
  local hold = only and holdothers(E, d, only) or {} -- (undone on failure)
  if d.root ~= d.live then -- (else the draft runs: only holds change)
    local before = d.tree:_source()
    local ok, err = reload(d, d.root)
    if not ok then
      for agent in pairs(hold) do agent:hold(false) end
      return nil, err
    end
    E:push(d.applied, before.root)
  end
  for agent in pairs(hold) do E.held[agent] = true end
  if only then -- the chosen ones switch (they may have been held)
    for agent in pairs(only) do
      if E.held[agent] then
        agent:hold(false)
        E.held[agent] = nil
      end
    end
  else
    E:release(d.tree)
  end
  return E:describe(d)
end

-- rollback: { tree }: the version before the last apply runs again, and
-- becomes the draft. Agents held on an older version stay on it; an
-- apply to all releases them, and they switch to the rolled-back version.
function M.rollback(E, cmd)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  local prev = d.applied[#d.applied]
  if not prev then return nil, "nothing applied to roll back" end
  local root = node.copy(prev)
  local ok, err = reload(d, root)
  if not ok then return nil, err end
  d.applied[#d.applied] = nil
  E:push(d.undo, { root = d.root, map = d.map })
  d.root, d.serial = root, d.serial + 1
  d.map = node.labels(root, d.tree)
  return E:describe(d)
end

return M
