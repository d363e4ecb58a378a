-- bonsai.debug.watches: the page's watches, conditions on a blackboard key
-- ("hp < 3", of one agent or of any) that freeze an agent when they
-- become true. They are filed by key: after a tick only the watches of
-- the keys it changed are looked at, so what a tick costs grows with what
-- it changed, not with the number of watches.

local M = {}

M.COMPARE = {
  ["=="] = function(x, y) return x == y end,
  ["~="] = function(x, y) return x ~= y end,
  ["<"] = function(x, y) return x < y end,
  ["<="] = function(x, y) return x <= y end,
  [">"] = function(x, y) return x > y end,
  [">="] = function(x, y) return x >= y end,
}

local Watches = {}
Watches.__index = Watches

function M.new()
  return setmetatable({
    byname = {}, -- name -> { name, agent (nil: any), key, op, value,
                 -- serial, was = agent -> last result }
    count = 0,   -- watches in byname
    bykey = {},  -- key -> { [name] = watch }
    serial = 0,  -- the serial of the last watch added
    added = {},  -- the watches in the order they came (removed ones too,
                 -- until the list is compacted)
  }, Watches)
end

-- The name of a watch: "AGENT key op value" (AGENT "*" for any agent).
function M.name(who, key, op, value)
  local t = type(value)
  return who .. " " .. key .. " " .. op .. " " ..
         (t == "string" and ("%q"):format(value) or
          t == "number" and ("%.14g"):format(value) or tostring(value))
end

function Watches:get(name) return self.byname[name] end

-- How many watches key has.
function Watches:ofkey(key)
  local n = 0
  for _ in pairs(self.bykey[key] or {}) do n = n + 1 end
  return n
end

-- Adds a watch: agent is an agent's id or nil for any.
function Watches:add(name, agent, key, op, value)
  self.serial = self.serial + 1
  local w = { name = name, agent = agent, key = key, op = op, value = value,
              serial = self.serial,
              was = setmetatable({}, { __mode = "k" }) }
  self.byname[name], self.count = w, self.count + 1
  self.bykey[key] = self.bykey[key] or {}
  self.bykey[key][name] = w
  if #self.added > 2 * self.count then -- compacted: the removed ones go
    local kept = {}
    for _, x in ipairs(self.added) do
      if self.byname[x.name] == x then kept[#kept + 1] = x end
    end
    self.added = kept
  end
  self.added[#self.added + 1] = w
end

function Watches:remove(name)
  local w = self.byname[name]
  if not w then return end
  self.byname[name], self.count = nil, self.count - 1
  self.bykey[w.key][name] = nil
  if next(self.bykey[w.key]) == nil then self.bykey[w.key] = nil end
end

-- Agent id is gone: its watches go.
function Watches:forget(id)
  for name, w in pairs(self.byname) do
    if w.agent == id then self:remove(name) end
  end
end

-- The watch's condition on the agent's blackboard (false when the values
-- cannot be compared: an unset key, a number against a string).
local function holds(w, agent)
  local ok, r = pcall(M.COMPARE[w.op], agent.bb[w.key], w.value)
  return ok and r == true
end

-- After a tick of agent (st: its bonsai.record agent, line: its tick's
-- line): the name of a watch that became true, or nil. Looked at: the
-- watches of the keys the line carries (changed or cleared since the line
-- before), and the watches added since the agent's last tick, once.
function Watches:check(agent, st, line)
  local hit
  local function look(name, w)
    if w.agent ~= nil and w.agent ~= st.id then return end
    local now = holds(w, agent)
    if now and not w.was[agent] then hit = name end
    w.was[agent] = now
  end
  local seen = st.watchserial or 0
  if seen < self.serial then -- (the newest last)
    for i = #self.added, 1, -1 do
      local w = self.added[i]
      if w.serial <= seen then break end
      if self.byname[w.name] == w then look(w.name, w) end
    end
    st.watchserial = self.serial
  end
  local bykey = self.bykey
  if next(bykey) then
    for k in pairs(line.bb) do
      for name, w in pairs(bykey[k] or {}) do look(name, w) end
    end
    for _, k in ipairs(line.unset or {}) do
      for name, w in pairs(bykey[k] or {}) do look(name, w) end
    end
  end
  return hit
end

return M
