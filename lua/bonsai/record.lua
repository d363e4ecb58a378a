-- bonsai.record: turns the ticks of traced agents into the lines of the
-- trace format (docs/TRACE_FORMAT.md, format 1), encoded with lua-cjson.
-- bt.record(path, agents) writes them to a file; bt.debug streams the same
-- lines to the viewer. Each recording of an agent is one of its
-- subscriptions (bonsai.subscribe), which read its events once per tick;
-- an agent that is not recorded pays one flag test per tick.

local cjson = require "cjson"

local M = {}

M.FORMAT = 1

local encode, null = cjson.encode, cjson.null
local floor = math.floor

-- Subscriptions -------------------------------------------------------------

-- Each recording of an agent is a subscription (a:subscribe) in the
-- compact form: sink(agent, status, err, ev), ev = { codes, tick, marks,
-- delivered } from a:_tick_events() (codes: id * 32 + forced * 16 +
-- status * 2 + again; marks: a bit per agent event kind, below; delivered:
-- the events delivered to the tick, { name, payload } each, or nil).

local RELOAD, INTERRUPT, RESET = 2, 8, 16 -- BONSAI_TRACE_*: 1 << 1, 3, 4
M.RELOAD, M.INTERRUPT, M.RESET = RELOAD, INTERRUPT, RESET

-- Whether the marks have the bit (a power of two; no bit operators before
-- Lua 5.3).
local function has(marks, bit) return floor(marks / bit) % 2 == 1 end

-- Subscribes sink to the agent's ticks (the agent is traced meanwhile).
-- The agent keeps { [sink] = its subscription } (a:_kept: a weak-keyed
-- table would keep it alive on Lua 5.1 and LuaJIT, through the sink).
function M.attach(agent, sink)
  local mine = agent:_kept("record") or agent:_kept("record", {})
  if not mine[sink] then
    mine[sink] = agent:subscribe(sink, { _codes = true })
  end
end

-- Unsubscribes sink.
function M.detach(agent, sink)
  local mine = agent:_kept("record")
  if mine and mine[sink] then
    agent:unsubscribe(mine[sink])
    mine[sink] = nil
  end
end

-- Values ------------------------------------------------------------------

local jsonvalue

M.TABLE_KEYS = 16 -- keys of a table written at most (tables cjson refuses)

-- A table that cjson cannot encode as it is (a function or userdata inside,
-- mixed or sparse keys, a cycle: a game object, say) as a short object that
-- it can: its first TABLE_KEYS keys (in string order) as strings, then
-- "...": how many more; values as jsonvalue gives them, but tables inside
-- as "{...}", or "<name>" when they have a string 'name'.
local function plain(t)
  local keys, out = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
  for i = 1, math.min(#keys, M.TABLE_KEYS) do
    local v = t[keys[i]]
    if type(v) == "table" then
      local name = rawget(v, "name")
      v = type(name) == "string" and "<" .. name .. ">" or "{...}"
    end
    out[tostring(keys[i])] = jsonvalue(v)
  end
  if #keys > M.TABLE_KEYS then
    out["..."] = (#keys - M.TABLE_KEYS) .. " more keys"
  end
  return out
end

-- A blackboard value as JSON can hold it: numbers (finite), strings and
-- booleans as they are, tables as they are when cjson can encode them,
-- else as plain() makes them, anything else as tostring(v).
function jsonvalue(v)
  local t = type(v)
  if t == "string" or t == "boolean" then return v end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return tostring(v) end
    return v
  end
  if t == "table" then
    if pcall(encode, v) then return v end
    return plain(v)
  end
  return tostring(v)
end
M.value = jsonvalue

-- Puts the field k, already encoded as json, first in the encoded object s.
local function splice(s, k, json)
  return '{"' .. k .. '":' .. json .. (s == "{}" and "}" or "," .. s:sub(2))
end

-- Encodes line (a table); fields listed in arrays that are empty tables are
-- written as [] (cjson writes an empty table as {}).
local function encodeline(line, arrays)
  local empty = {}
  for _, k in ipairs(arrays) do
    if line[k] ~= nil and next(line[k]) == nil then
      empty[#empty + 1] = k
      line[k] = nil
    end
  end
  local s = encode(line)
  for _, k in ipairs(empty) do s = splice(s, k, "[]") end
  return s
end
M.encode = encodeline

-- Events: each [node, status, again] (and 1 after them when a fault
-- forced the status) is encoded once by cjson and kept, by its code and
-- the status names (bt.STATUS, by number) of the recording; a tick's list
-- is those texts joined.
local triples = setmetatable({}, { __mode = "k" }) -- names -> code -> text
local function triple(code, names)
  local known = triples[names]
  if known == nil then
    known = {}
    triples[names] = known
  end
  local s = known[code]
  if s == nil then
    s = encode { floor(code / 32), names[floor(code / 2) % 8], code % 2,
                 floor(code / 16) % 2 == 1 and 1 or nil }
    known[code] = s
  end
  return s
end

local function eventsjson(codes, names)
  local parts = {}
  for i = 1, #codes do parts[i] = triple(codes[i], names) end
  return "[" .. table.concat(parts, ",") .. "]"
end

-- Recordings --------------------------------------------------------------

local Recording = {}
Recording.__index = Recording

-- A recording: emit(text) receives each line (without its newline); bt:
-- the module (its VERSION and STATUS).
function M.new(emit, bt)
  return setmetatable({
    emit = emit,
    bonsai = bt.VERSION,
    status = bt.STATUS, -- the status names by number
    nagents = 0,
    ids = setmetatable({}, { __mode = "k" }),  -- agent -> state
    versions = {},   -- blueprint id -> { tree = name, version = n }
    count = {},      -- tree name -> versions seen
    ticks = 0,       -- tick lines written
  }, Recording)
end

function Recording:header()
  self.emit(encode { t = "header", format = M.FORMAT, bonsai = self.bonsai,
                     started = os.date("!%Y-%m-%dT%H:%M:%SZ") })
end

-- The version record of the blueprint the agent runs, writing its tree
-- line the first time it is seen.
function Recording:version(agent)
  local nodes, id = agent.tree:nodes(agent)
  local v = self.versions[id]
  if v then return v end
  local name = agent.tree.name
  local n = (self.count[name] or 0) + 1
  self.count[name] = n
  v = { tree = name, version = n, nodes = nodes }
  self.versions[id] = v
  local list = {}
  for i, nd in ipairs(nodes) do
    local params = {}
    for k, x in pairs(nd.params) do params[k] = jsonvalue(x) end
    list[i] = { id = nd.id, name = nd.name, type = nd.type,
                parent = nd.parent or null, path = nd.path,
                hidden = nd.hidden, params = params, script = nd.script,
                keys = nd.keys, conditions = nd.conditions }
  end
  self.emit(encode { t = "tree", tree = name, version = n, nodes = list })
  return v
end

-- Adds an agent: its tree line if new, then its agent line.
function Recording:add(agent)
  if self.ids[agent] then return self.ids[agent] end
  self.nagents = self.nagents + 1
  local v = self:version(agent)
  local owner = agent.owner
  local label = type(owner) == "table" and owner.name ~= nil
                and tostring(owner.name) or ("agent " .. self.nagents)
  local st = { id = self.nagents, v = v, bb = nil, tick = 0, full = true,
               label = label }
  self.ids[agent] = st
  self.emit(encode { t = "agent", agent = st.id, tree = v.tree,
                     version = v.version, label = label })
  return st
end

function Recording:remove(agent)
  self.ids[agent] = nil
end

-- The whole state of the agent as [[node, status], ...].
local function fullstate(agent)
  local state = {}
  for id, s in pairs(agent:node_statuses()) do
    state[#state + 1] = { id, s }
  end
  table.sort(state, function(x, y) return x[1] < y[1] end)
  return state
end

-- The blackboard keys that changed since the last snapshot (all of them
-- the first time) and the keys cleared (nil if none); returns bb, unset,
-- the new snapshot.
local function bbdiff(agent, old)
  local now, changed, unset, n = {}, {}, nil, 0
  for k, v in agent.bb:pairs() do
    now[k] = v
    n = n + 1
    if old == nil or old[k] ~= v then changed[k] = jsonvalue(v) end
  end
  if old and (next(old) ~= nil or n > 0) then
    for k in pairs(old) do
      if now[k] == nil then
        unset = unset or {}
        unset[#unset + 1] = k
      end
    end
    if unset then table.sort(unset) end
  end
  if n == 0 and old and next(old) == nil then now = old end
  return changed, unset, now
end
M.bbdiff = bbdiff -- (bonsai.debug.stepper: the keys changed at each event)

-- The tick line of one tick of agent (status, or err when it raised; ev:
-- its events, see dispatch). Returns the line as a table whose 'codes' are
-- the events' codes (written as the 'events' list).
function Recording:line(agent, status, err, ev)
  local st = self.ids[agent]
  local line = { t = "tick", agent = st.id, time = agent.time,
                 status = agent:status(), codes = ev.codes }
  local marks = ev.marks
  if has(marks, RELOAD) then
    local from = st.v.version
    st.v = self:version(agent)
    line.reload = { from = from, to = st.v.version }
  end
  if has(marks, RESET) then st.full = true end
  if has(marks, INTERRUPT) then line.interrupt = true end
  if ev.delivered then -- the events delivered to the tick, with payloads
    local list = {}
    for i, d in ipairs(ev.delivered) do
      list[i] = { name = d[1], payload = d[2] ~= nil and jsonvalue(d[2]) or nil }
    end
    line.delivered = list
  end
  if err ~= nil then line.error = tostring(err) end
  st.tick = ev.tick or st.tick + 1
  line.tick = st.tick
  line.version = st.v.version
  if line.reload or st.full then
    line.state = fullstate(agent)
    st.full = false
  end
  line.bb, line.unset, st.bb = bbdiff(agent, st.bb)
  return line
end

-- Emits a tick line made by Recording:line.
function Recording:write(line)
  local codes = line.codes
  line.codes = nil
  self.ticks = self.ticks + 1
  self.emit(splice(encodeline(line, { "state", "steps", "faults" }), "events",
                   eventsjson(codes, self.status)))
  line.codes = codes
end

-- The profile line of a tree (tree:profile, docs/TRACE_FORMAT.md) when it
-- has a profile of a version this recording described; nil otherwise.
-- Nodes a tick never reached are left out.
function Recording:profile(tree)
  local p = tree:profile()
  local v = self.versions[p.version]
  if #p.nodes == 0 or not v then return nil end
  local nodes = {}
  for _, n in ipairs(p.nodes) do
    if n.calls > 0 then
      nodes[#nodes + 1] = { n.id, n.calls, n.runtime, n.leaf }
    end
  end
  return encodeline({ t = "profile", tree = v.tree, version = v.version,
                      on = p.on, ticks = p.ticks, time = p.time,
                      nodes = nodes }, { "nodes" })
end

-- The trees of the agents recorded (each once).
function Recording:trees()
  local seen, list = {}, {}
  for agent in pairs(self.ids) do
    local tree = agent.tree
    if not seen[tree] then
      seen[tree] = true
      list[#list + 1] = tree
    end
  end
  return list
end

function Recording:finish()
  self.emit(encode { t = "end", ticks = self.ticks })
end

M.Recording = Recording

-- bt.record ---------------------------------------------------------------

local Recorder = {}
Recorder.__index = Recorder

-- bt.record(path, agents): agents is one agent or a list of them.
function M.record(bt, path, agents)
  assert(type(path) == "string", "bt.record: path expected")
  local f = assert(io.open(path, "w"))
  f:setvbuf("full")
  local self = setmetatable({ file = f, agents = {} }, Recorder)
  self.rec = M.new(function(s) f:write(s, "\n") end, bt)
  self.sink = function(agent, status, err, ev)
    self.rec:write(self.rec:line(agent, status, err, ev))
  end
  self.rec:header()
  if agents ~= nil then
    if agents.tick ~= nil then agents = { agents } end -- one agent
    for _, a in ipairs(agents) do self:add(a) end
  end
  return self
end

-- recorder:add(agent): records one more agent from its next tick on.
function Recorder:add(agent)
  assert(self.file, "recorder is closed")
  if self.agents[agent] then return self end
  self.agents[agent] = true
  self.rec:add(agent)
  M.attach(agent, self.sink)
  return self
end

-- recorder:remove(agent): stops recording that agent.
function Recorder:remove(agent)
  if self.agents[agent] then
    self.agents[agent] = nil
    M.detach(agent, self.sink)
    self.rec:remove(agent)
  end
  return self
end

function Recorder:flush()
  if self.file then self.file:flush() end
  return self
end

-- recorder:close(): stops recording, writes the profiles of the trees
-- recorded that have one (tree:profile), the end line, closes the file.
function Recorder:close()
  if not self.file then return end
  for _, tree in ipairs(self.rec:trees()) do
    local line = self.rec:profile(tree)
    if line then self.rec.emit(line) end
  end
  self.rec:finish()
  self.file:close()
  self.file = nil
  for agent in pairs(self.agents) do -- (at exit, agents may be gone first)
    pcall(M.detach, agent, self.sink)
  end
  self.agents = {}
end
Recorder.__close = Recorder.close
Recorder.__gc = Recorder.close

return M
