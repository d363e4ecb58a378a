-- bonsai.debug.faults: the nodes the page forced to a status (a:force),
-- per agent, told on the agent's tick lines until each ends (its ticks
-- ran out, it was removed, or a reload dropped it).

local nodeids = require "bonsai.debug.nodeids"

local M = {}

local Faults = {}
Faults.__index = Faults

function M.new()
  -- agent -> { [node path] = true } (agents held weakly)
  return setmetatable({ byagent = setmetatable({}, { __mode = "k" }) }, Faults)
end

-- Forces the node at path to status s (nil: no longer) for ticks ticks (0:
-- until removed) in the agents of rec (the recording, or nil) that run
-- tree, of agent id who or of any ("*"); the number of agents hit.
function Faults:force(rec, who, tree, path, s, ticks)
  local hit = 0
  for agent, st in pairs(rec and rec.ids or {}) do
    -- (by path: the agent's tree resolves it in the version it runs)
    if (who == "*" or who == st.id) and st.v.tree == tree and
       pcall(agent.force, agent, path, s, ticks) then
      hit = hit + 1
      self.byagent[agent] = self.byagent[agent] or {}
      self.byagent[agent][path] = true
    end
  end
  return hit
end

-- Whether the page forced nodes of agent that may still be forced.
function Faults:any(agent) return self.byagent[agent] ~= nil end

-- The faults the page set that the agent still has after its tick (st:
-- its bonsai.record agent, line: its tick's line), as [[node, status,
-- ticks left (0: until removed)], ...]; [] once the last has ended, and
-- the agent is no longer looked at.
function Faults:after(agent, st, line)
  local mine, list = self.byagent[agent], {}
  if line.reload then mine = {} end -- (they were the old version's)
  local ids = nodeids.of(st.v)
  for path in pairs(mine) do
    local ok, s, left = pcall(agent.forced, agent, path)
    if ok and s and ids[path] then
      list[#list + 1] = { ids[path], s, left }
    else
      mine[path] = nil
    end
  end
  table.sort(list, function(x, y) return x[1] < y[1] end)
  self.byagent[agent] = next(mine) and mine or nil
  return list
end

return M
