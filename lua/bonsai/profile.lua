-- bonsai.profile: tree:profile, the per-node profile of a tree (calls and
-- seconds per node, summed over the tree's agents; the core counts, see
-- bonsai_tree_profile). The table it returns prints as a report: one line
-- per node in tree order, the runtime's time and the leaf's own apart.

local M = {}

local report = {}

-- "12.3 us" for a number of seconds
local function us(secs)
  return string.format("%.1f us", secs * 1e6)
end

-- The report: totals, then a line per node (indented by depth) with its
-- calls, the runtime's time, the leaf's own, and its share of the total.
function report.__tostring(p)
  local lines = {
    string.format("profile (%s): %d ticks, %s, %s a tick",
                  p.on and "on" or "off", p.ticks, us(p.time),
                  us(p.ticks > 0 and p.time / p.ticks or 0)),
    string.format("%-40s %10s %12s %12s %6s", "node", "calls", "runtime",
                  "leaf", "share"),
  }
  for _, n in ipairs(p.nodes) do
    local depth = select(2, n.path:gsub("/", ""))
    local label = string.rep("  ", depth) ..
                  (n.name ~= "" and n.name or "(" .. n.type .. ")")
    local share = p.time > 0 and (n.runtime + n.leaf) / p.time * 100 or 0
    local leaf = (n.type == "action" or n.type == "condition") and us(n.leaf)
                 or "-"
    lines[#lines + 1] = string.format("%-40s %10d %12s %12s %5.1f%%",
      label, n.calls, us(n.runtime), leaf, share)
  end
  return table.concat(lines, "\n")
end

-- tree:profile(): the profile; tree:profile(true) starts it from zero,
-- tree:profile(false) stops it (and returns the counts so far).
function M.profile(tree, on)
  if on ~= nil and type(on) ~= "boolean" then
    error("bad argument #1 to 'profile' (true to start, false to stop, " ..
          "nothing to read; got " .. type(on) .. ")", 2)
  end
  return setmetatable(tree:_profile(on), report)
end

return M
