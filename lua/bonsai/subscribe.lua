-- bonsai.subscribe: any number of consumers of an agent's ticks, each with
-- its own event filter, none displacing another (docs/DEBUGGER.md,
-- "Subscriptions"). a:subscribe, a:unsubscribe, a:on_tick, bt.subscribe and
-- bt.unsubscribe are these functions; bt.record and bt.debug subscribe too.
-- An agent with subscriptions gets the core's one tick hook (a:_on_tick),
-- and a trace while one of them wants events: each tick's events are read
-- once and handed to every subscriber. An agent without any pays one flag
-- test per tick, as before.

local M = {}

M.TRACE_SIZE = 4096 -- events kept per subscribed agent between two ticks

local STATUS = require("bonsai.core").STATUS -- by number
-- the agent events of a tick (bits of _tick_events' marks: BONSAI_TRACE_*),
-- in the order they are listed before its status events
local RELOAD, ERROR = 2, 4
local MARKS = { { 8, "interrupt" }, { 16, "reset" }, { RELOAD, "reload" } }

-- An agent's subscriptions: a list replaced, never changed in place, so
-- a dispatch under way keeps the list it started with; 'traced': how many
-- want events; 'paths' (id -> path) and 'events' (code -> event table):
-- of the version the agent runs, made when first wanted (while the agent
-- is traced, its reloads are seen and start them over). The agent keeps
-- it, in its own storage (a:_kept): a subscriber that refers to the agent
-- does not keep it alive (a weak-keyed table would on Lua 5.1 and LuaJIT,
-- whose weak tables are no ephemerons).
local function subs(agent)
  local box = agent:_kept("subs") -- { list = the list }, the hook's
  return box and box.list
end

-- subscription -> its agent, both held weakly: a subscription does not
-- keep its agent alive, nor the agent the subscription
local owner = setmetatable({}, { __mode = "kv" })

local function bit(x, b) return x % (b + b) >= b end

-- The filter as a function of an event, or nil for every event.
local function matcher(filter)
  if filter == nil or type(filter) == "function" then return filter end
  local st, node, again = filter.status, filter.node, filter.again
  if type(st) == "string" then st = { st } end
  local want
  if st then
    want = {}
    for _, s in ipairs(st) do want[s] = true end
  end
  if not want and node == nil and again ~= false then return nil end
  return function(e)
    if e.event then return not want and node == nil end
    return (not want or want[e.status]) and
           (node == nil or e.node:find(node) ~= nil) and
           (again ~= false or not e.again)
  end
end

-- The paths of the nodes of the version the agent runs (0-based).
local function paths(agent)
  local out = {}
  for _, n in ipairs((agent.tree:nodes(agent))) do out[n.id] = n.path end
  return out
end

-- The table of a status event, made once per code and version: a tick's
-- events are mostly those of the tick before.
local function event(agent, list, code)
  local e = list.events[code]
  if e == nil then
    if list.paths == nil then list.paths = paths(agent) end
    local id = math.floor(code / 32)
    e = { id = id, node = list.paths[id],
          status = STATUS[math.floor(code / 2) % 8],
          again = code % 2 == 1 or nil,
          forced = math.floor(code / 16) % 2 == 1 or nil }
    list.events[code] = e
  end
  return e
end

-- One tick's events as a list (its tick and time as fields), agent events
-- first (the events delivered to the tick before its status events, an
-- error last).
local function tables(agent, list, ev, err)
  local out = { tick = ev.tick, time = agent.time }
  local marks = ev.marks
  for _, m in ipairs(MARKS) do
    if bit(marks, m[1]) then out[#out + 1] = { event = m[2] } end
  end
  for _, d in ipairs(ev.delivered or {}) do
    out[#out + 1] = { event = "event", name = d[1], payload = d[2] }
  end
  for _, code in ipairs(ev.codes) do
    out[#out + 1] = event(agent, list, code)
  end
  if bit(marks, ERROR) then
    out[#out + 1] = { event = "error",
                      message = err ~= nil and tostring(err) or nil }
  end
  return out
end

-- The agent's tick hook: reads the events once, calls every subscriber
-- of its list (box.list).
local function dispatch(box, agent, status, err)
  local list = box.list
  if list == nil then return end
  local ev, all
  if list.traced > 0 then
    local codes, tick, marks, delivered = agent:_tick_events()
    ev = { codes = codes, tick = tick, marks = marks, delivered = delivered }
    if bit(marks, RELOAD) then -- other nodes
      list.paths, list.events = nil, {}
    end
  end
  for i = 1, #list do
    local s = list[i]
    if s.on then -- (not unsubscribed by an earlier one in this tick)
      if s.codes then
        s.fn(agent, status, err, ev)
      elseif not s.events then
        s.fn(agent, nil, status, err)
      else
        all = all or tables(agent, list, ev, err)
        local mine = all
        if s.match then
          mine = { tick = all.tick, time = all.time }
          for _, e in ipairs(all) do
            if s.match(e) then mine[#mine + 1] = e end
          end
        end
        s.fn(agent, mine, status, err)
      end
    end
  end
end

-- Replaces the agent's list by a copy with s added (add) or taken out.
local function update(agent, s, add)
  local old = subs(agent) or { traced = 0 }
  local kept = old.traced > 0 -- (reloads were seen)
  local new = { traced = old.traced, paths = kept and old.paths or nil,
                events = kept and old.events or {} }
  for _, x in ipairs(old) do
    if x ~= s then new[#new + 1] = x end
  end
  local wants = s.codes or s.events
  if add then
    new[#new + 1] = s
    if wants then new.traced = new.traced + 1 end
  elseif #new < #old and wants then
    new.traced = new.traced - 1
  end
  if old.traced == 0 and new.traced > 0 then
    agent:trace(M.TRACE_SIZE)
    agent:events() -- what came before belongs to no subscriber
  elseif old.traced > 0 and new.traced == 0 then
    agent:trace(false)
  end
  if #new == 0 then
    agent:_kept("subs", nil)
    agent:_on_tick(nil)
  else
    local box = agent:_kept("subs")
    if box == nil then -- the hook's own: no lookup per tick
      box = agent:_kept("subs", {})
      agent:_on_tick(function(a, status, err)
        return dispatch(box, a, status, err)
      end)
    end
    box.list = new
  end
end

-- a:subscribe(fn [, filter]): fn(agent, events, status, err) after every
-- tick of the agent; returns the subscription (for a:unsubscribe).
function M.subscribe(agent, fn, filter)
  assert(type(fn) == "function", "subscribe: function expected")
  local t = type(filter)
  assert(filter == nil or t == "function" or t == "table",
         "subscribe: filter must be a table or a function")
  local s = { fn = fn, on = true, events = true }
  owner[s] = agent
  if t == "table" then
    s.events = filter.events ~= false
    s.codes = filter._codes -- bonsai.record's compact form
  end
  s.match = s.events and not s.codes and matcher(filter) or nil
  update(agent, s, true)
  return s
end

-- bt.unsubscribe(sub): sub from a:subscribe or bt.subscribe; true if it
-- was subscribed (a second time: false).
function M.unsubscribe(sub)
  if type(sub) ~= "table" then return false end
  if sub.each then
    local any = false
    for _, s in ipairs(sub.each) do any = M.unsubscribe(s) or any end
    sub.each = {}
    return any
  end
  local agent = owner[sub]
  if not sub.on or agent == nil then return false end -- (or collected)
  sub.on = false
  update(agent, sub, false)
  return true
end

-- a:unsubscribe(sub): the same, for a subscription of that agent.
function M.unsubscribe_agent(agent, sub)
  if type(sub) ~= "table" or owner[sub] ~= agent then return false end
  return M.unsubscribe(sub)
end

-- bt.subscribe(agents, fn [, filter]): one subscription for each agent of
-- the list (as it is now); returns them as one, for bt.unsubscribe.
function M.subscribe_all(agents, fn, filter)
  assert(type(agents) == "table", "bt.subscribe: list of agents expected")
  local each = {}
  for i, a in ipairs(agents) do each[i] = M.subscribe(a, fn, filter) end
  return { each = each }
end

-- a:on_tick(fn | nil): the agent's one on_tick function, fn(agent, status,
-- err), a subscription without events that a next call replaces.
function M.on_tick(agent, fn)
  assert(fn == nil or type(fn) == "function",
         "on_tick: function or nil expected")
  local old = agent:_kept("on_tick")
  if old then M.unsubscribe(old) end
  agent:_kept("on_tick", fn and M.subscribe(agent, function(a, _, status, err)
    return fn(a, status, err)
  end, { events = false }) or nil)
end

return M
