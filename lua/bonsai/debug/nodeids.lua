-- bonsai.debug.nodeids: the ids of a recorded version's nodes by path
-- (made when first asked), and whether the page was shown a node.

local M = {}

-- The ids of version v's nodes (a bonsai.record version) by path.
function M.of(v)
  if not v.index then
    v.index = {}
    for _, n in ipairs(v.nodes) do v.index[n.path] = n.id end
  end
  return v.index
end

-- Whether a version of the tree that the page was shown (one of the
-- recording's, rec may be nil) has the node at path.
function M.known(rec, tree, path)
  for _, v in pairs(rec and rec.versions or {}) do
    if v.tree == tree and M.of(v)[path] then return true end
  end
  return false
end

return M
