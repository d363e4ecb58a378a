-- bonsai.debug.catchup: what a page that connects is sent first, kept as
-- the stream goes: the header, tree and agent lines (an agent gone takes
-- its line with it, so what a new page is sent does not grow with every
-- agent a game ever offered), each agent's last tick whole (made when a
-- page asks) and the last profile line of each tree.

local record = require "bonsai.record"

local M = {}

local Catchup = {}
Catchup.__index = Catchup

function M.new()
  return setmetatable({
    lines = {},     -- { line }, dead = true once its agent is gone (until
                    -- the list is compacted)
    dead = 0,       -- dead entries in lines
    agentline = {}, -- agent id -> its entry in lines
    profiles = {},  -- tree name -> its last profile line
  }, Catchup)
end

-- Keeps a line of the stream that a page to come must see: header, tree
-- and agent lines, not ticks nor agents gone (quotes in strings are
-- escaped, so '"t":"tick"' is the line's type).
function Catchup:keep(line)
  local lines = self.lines
  if line:find('"t":"agent"', 1, true) then
    local id = tonumber(line:match('"agent":(%d+)'))
    lines[#lines + 1] = { line }
    if id then self.agentline[id] = lines[#lines] end
  elseif not line:find('"t":"tick"', 1, true) and
         not line:find('"t":"gone"', 1, true) then
    lines[#lines + 1] = { line }
  end
end

-- Agent id is gone: its line goes (the list is compacted once half of it
-- is dead).
function Catchup:forget(id)
  local l = self.agentline[id]
  if not l then return end
  self.agentline[id], l.dead, self.dead = nil, true, self.dead + 1
  if self.dead > #self.lines / 2 then
    local kept = {}
    for _, x in ipairs(self.lines) do
      if not x.dead then kept[#kept + 1] = x end
    end
    self.lines, self.dead = kept, 0
  end
end

-- Whether line (a tree's profile line, or nil) is news: then it is kept
-- as the tree's last.
function Catchup:profile(name, line)
  if not line or line == self.profiles[name] then return false end
  self.profiles[name] = line
  return true
end

-- The line a new page gets for an agent: its last tick with the whole
-- state and blackboard.
local function snapshot(agent, st)
  local line = { t = "tick", agent = st.id, tick = st.tick,
                 time = agent.time, version = st.v.version,
                 status = agent:status(), events = {}, bb = {} }
  local state = {}
  for id, s in pairs(agent:node_statuses()) do
    state[#state + 1] = { id, s }
  end
  table.sort(state, function(x, y) return x[1] < y[1] end)
  line.state = state
  for k, v in agent.bb:pairs() do line.bb[k] = record.value(v) end
  if agent:frozen() then line.frozen = st.frozen or -1 end
  return record.encode(line, { "events", "state" })
end

-- Sends a page that connects what it must see first: the lines kept,
-- each agent's last tick whole (rec: the recording, or nil), the last
-- profile of each tree.
function Catchup:replay(send, rec)
  for _, l in ipairs(self.lines) do
    if not l.dead then send(l[1]) end
  end
  if rec then
    for agent, st in pairs(rec.ids) do
      if st.tick > 0 then send(snapshot(agent, st)) end
    end
  end
  for _, l in pairs(self.profiles) do send(l) end
end

return M
