-- bonsai.debug.edit.history: the commands that change a draft: tree (the
-- draft as data), edit (tree operations, checked together as bt.tree
-- checks a definition), undo and redo (the draft's history).
local ops = require "bonsai.debug.edit.ops"
local node = require "bonsai.debug.edit.node"

local M = {}

-- tree: { tree }: the draft of that tree.
function M.tree(E, cmd)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  return E:describe(d)
end

-- edit: { tree, version, ops = { op, ... } }: the ops on the draft of
-- that version, then checked; the new draft, or nil and why (the place:
-- the op's number and its node's path; the draft is unchanged).
function M.edit(E, cmd)
  local d, why = E:at(cmd, "edit")
  if not d then return nil, why end
  local max = E.limits.MAX_OPS
  if type(cmd.ops) ~= "table" or #cmd.ops == 0 or #cmd.ops > max then
    return nil, "ops must be a list of 1 to " .. max .. " operations"
  end
  local root, err = ops.run(E.bt, d.root, d.map, cmd.ops, d.tree,
                             E.made)
  if not root then return nil, err end
  local ok, t = E:compile(d, root)
  if not ok then return nil, "refused: " .. tostring(t) end
  E:push(d.undo, { root = d.root, map = d.map })
  d.redo = {}
  d.root, d.map, d.serial = root, node.labels(root, t), d.serial + 1
  return E:describe(d)
end

-- One step back (from "undo" to "redo") or forth.
local function step(E, cmd, from, to)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  local last = d[from][#d[from]]
  if not last then return nil, "nothing to " .. from end
  d[from][#d[from]] = nil
  E:push(d[to], { root = d.root, map = d.map })
  d.root, d.map, d.serial = last.root, last.map, d.serial + 1
  return E:describe(d)
end
function M.undo(E, cmd) return step(E, cmd, "undo", "redo") end
function M.redo(E, cmd) return step(E, cmd, "redo", "undo") end

return M
