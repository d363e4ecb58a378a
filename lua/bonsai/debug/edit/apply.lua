-- bonsai.debug.edit.apply: the commands that change what runs: apply (the
-- draft becomes the running version, tree:reload; to some agents first:
-- the tree held, tree:hold, and those agents given a pass, a:pass) and
-- rollback (the version before the last apply runs again and becomes the
-- draft).
local node = require "bonsai.debug.edit.node"
local preview = require "bonsai.debug.edit.preview"

local M = {}

-- The tree runs root (a copy of it: the draft stays the page's).
local function reload(E, d, root)
  local ok, err = d.tree:reload(E.bt.copy(root), d.opts)
  if not ok then return nil, err end
  d.live = root
  return true
end

-- Holds d's tree and lets exactly the agents of only through: every other
-- agent of the tree, whether the game offered it to the session or not,
-- stays on the version it runs (those let through by an earlier apply
-- included: their passes are taken back).
local function holdbut(E, d, only)
  d.tree:hold(true)
  E.holding[d.tree] = true
  for agent in pairs(E.passed) do
    if agent.tree == d.tree and not only[agent] then
      agent:pass(false)
      E.passed[agent] = nil
    end
  end
  for agent in pairs(only) do
    agent:pass(true)
    E.passed[agent] = true
  end
end

-- apply: { tree, version [, agents] }: the draft becomes the running
-- version (each agent switches at its next tick, running nodes matched by
-- path kept). With agents = { ids }, only those switch: the tree is held
-- (every agent of it stays on the version it runs, those the game never
-- offered the debugger included) and they are let through, to compare on
-- the population view; a later apply to all releases the tree, and every
-- agent switches to the newest version at its next tick.
function M.apply(E, cmd)
  local d, why = E:at(cmd, "apply")
  if not d then return nil, why end
  local only
  only, why = preview.chosen(E, d, cmd.agents)
  if only == false then return nil, why end
  if d.root ~= d.live then -- (else the draft runs: only holds change)
    local before = d.tree:_source()
    local ok, err = reload(E, d, d.root) -- (no agent switches before its tick)
    if not ok then return nil, err end
    E:push(d.applied, before.root)
  end
  if only then holdbut(E, d, only) else E:release(d.tree) end
  return E:describe(d)
end

-- rollback: { tree }: the version before the last apply runs again, and
-- becomes the draft. While an apply to some holds the tree, only the agents
-- let through go back; the others stay on the version they run, and an
-- apply to all releases them to the rolled-back version.
function M.rollback(E, cmd)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  local prev = d.applied[#d.applied]
  if not prev then return nil, "nothing applied to roll back" end
  local root = E.bt.copy(prev)
  local ok, err = reload(E, d, root)
  if not ok then return nil, err end
  d.applied[#d.applied] = nil
  E:push(d.undo, { root = d.root, map = d.map })
  d.root, d.serial = root, d.serial + 1
  d.map = node.labels(root, d.tree)
  return E:describe(d)
end

return M
