-- bonsai.debug.session: what the live debugger knows of the game (docs/
-- DEBUGGER.md): the agents offered and their trace lines, and after each
-- tick of a streamed agent the breakpoints, watches, faults and steps
-- (bonsai.debug.breakpoints, .watches, .faults, .stepper) that the page's
-- commands (bonsai.debug.commands) set. It knows nothing of HTTP: it
-- hands its lines to S.out(line) (the server frames and sends them),
-- replays what a new page must see (bonsai.debug.catchup) and carries out
-- commands given as tables (S:command). What a page may ask is bounded by
-- the limits of bonsai.debug (read at each use, so a test may lower them).

local cjson = require "cjson.safe"
local socket = require "socket"
local record = require "bonsai.record"
local breakpoints = require "bonsai.debug.breakpoints"
local catchup = require "bonsai.debug.catchup"
local commands = require "bonsai.debug.commands"
local faults = require "bonsai.debug.faults"
local stepper = require "bonsai.debug.stepper"
local watches = require "bonsai.debug.watches"

local M = {}

-- A value a page may write or compare (for bonsai.debug.edit).
M.plain = commands.plain

local Session = {}
Session.__index = Session

-- new(bt, limits): a session; S.out(line) is set by the server (nil: the
-- lines are kept for the pages to come only).
function M.new(bt, limits)
  local S = setmetatable({
    bt = bt, limits = limits,
    commands = {},  -- name -> function(cmd, S) (bonsai.debug.edit adds
                    -- its own)
    -- (agents are held weakly: a game that drops an agent without
    -- bt.debug.remove sees it collected, and the page is told)
    streams = setmetatable({}, { __mode = "k" }), -- the agents streamed
    faults = faults.new(),
    profiled = 0,   -- when the profiles were last looked at
    swept = 0,      -- when collected agents were last looked for
  }, Session)
  for name, f in pairs(commands.list) do S.commands[name] = f end
  -- (the recorder's sink, one function per session to attach and detach;
  -- and its writer: a line of the stream is sent to every page and kept
  -- for the pages to come when they must see it)
  S.sink = function(agent, status, err, ev) -- (no method lookup per tick)
    return Session.after_tick(S, agent, status, err, ev)
  end
  S.emit = function(line)
    S.catchup:keep(line)
    if S.out then S.out(line) end
  end
  S:forget_all()
  return S
end

-- What the session forgets when it closes (it starts anew).
function Session:forget_all()
  self.rec = nil                  -- the Recording whose lines the pages get
  self.byid = setmetatable({}, { __mode = "v" }) -- agent id -> agent
  self.offered = {}               -- ids offered and not yet gone
  self.catchup = catchup.new()
  self.breaks = breakpoints.new(self.bt.STATUS)
  self.watches = watches.new()
end

-- A line for the pages connected, not kept.
function Session:broadcast(line)
  if self.out then self.out(line) end
end

-- After each tick of a streamed agent: its line, with its steps and
-- faults, and breakpoints: a node's event that a rule names, or a watch
-- that became true, freezes the agent.
function Session:after_tick(agent, status, err, ev)
  local rec = self.rec
  local st = rec.ids[agent]
  if not st then return end
  local line = rec:line(agent, status, err, ev)
  if st.stepping then line.steps = stepper.finish(agent, st, line.codes) end
  if self.faults:any(agent) then
    line.faults = self.faults:after(agent, st, line)
  end
  local stop = self.breaks.count > 0 and self.breaks:stop(st, line.codes)
  if stop then
    agent:freeze(true)
    st.frozen = stop
  end
  if self.watches.count > 0 then
    local hit = self.watches:check(agent, st, line)
    if hit then
      agent:freeze(true)
      st.frozen, line.watch = -1, hit:match("^%S+ (.*)$")
    end
  end
  if agent:frozen() then line.frozen = st.frozen or -1 end
  rec:write(line)
end

-- Streams the agent's ticks (on) or no longer.
function Session:stream(agent, on)
  if on and not self.streams[agent] then
    self.streams[agent] = true
    record.attach(agent, self.sink)
    local st = self.rec.ids[agent]
    if st then st.full = true end -- (ticks missed)
  elseif not on and self.streams[agent] then
    self.streams[agent] = nil
    record.detach(agent, self.sink)
  end
end

-- bt.debug.add(agent [, { record = false }]): offers an agent to the
-- page, streaming it unless record is false; returns its id.
function Session:add(agent, o)
  if not self.rec then
    self.rec = record.new(self.emit, self.bt)
    self.rec:header()
  end
  local st = self.rec:add(agent)
  self.byid[st.id] = agent
  self.offered[st.id] = true
  self:stream(agent, not (o and o.record == false))
  return st.id
end

-- An agent withdrawn or collected: the page is told, its breakpoints and
-- watches go (ids are not given again).
function Session:gone(id)
  self.offered[id] = nil
  self.emit(cjson.encode { t = "gone", agent = id }) -- the page marks it
  self.catchup:forget(id)
  self.breaks:forget(id)
  self.watches:forget(id)
end

-- bt.debug.remove(agent): no longer offered or streamed.
function Session:remove(agent)
  local st = self.rec and self.rec.ids[agent]
  if not st then return end
  self:stream(agent, false)
  self.byid[st.id] = nil
  self.rec:remove(agent)
  agent:freeze(false)
  self:gone(st.id)
end

-- The agents the game let go without bt.debug.remove.
function Session:sweep()
  for id in pairs(self.offered) do
    if self.byid[id] == nil then self:gone(id) end
  end
end

-- The profile lines of the streamed trees that have a profile, when they
-- changed.
function Session:profiles()
  for _, tree in ipairs(self.rec:trees()) do
    local line = self.rec:profile(tree)
    if self.catchup:profile(tree.name, line) then self:broadcast(line) end
  end
end

-- Carries out a command (a table): true (or what the command answers), or
-- nil and why. A command refuses what it cannot do; anything it raises (a
-- game's observer that raises on the value written, say) is refused with
-- the message too, so neither bt.debug.poll nor bt.debug.command ever
-- raises.
function Session:command(cmd)
  if type(cmd) ~= "table" then return nil, "a command is a JSON object" end
  local f = self.commands[cmd.cmd]
  if not f then
    return nil, "unknown command " .. (type(cmd.cmd) == "string" and
                                       commands.named(cmd.cmd) or
                                       type(cmd.cmd))
  end
  local ok, r, err = pcall(f, cmd, self)
  if not ok then return nil, "the command failed: " .. tostring(r) end
  return r, err
end

-- replay(send): what a page that connects is sent first.
function Session:replay(send)
  self.catchup:replay(send, self.rec)
end

-- poll(): the work a frame owes the pages: profiles that changed (at most
-- every limits.PROFILE seconds), agents collected (every limits.SWEEP
-- seconds).
function Session:poll()
  local t = socket.gettime()
  if self.rec and t - self.profiled >= self.limits.PROFILE then
    self.profiled = t
    self:profiles()
  end
  if t - self.swept >= self.limits.SWEEP then
    self.swept = t
    self:sweep()
  end
end

-- close(): agents are no longer streamed and frozen ones are released;
-- everything is forgotten (but the nodes the page forced, which the
-- agents still have). A module that added commands (extension) is told
-- first.
function Session:close()
  if self.extended then self.extended.close() end
  if self.rec then
    for agent in pairs(self.rec.ids) do self:remove(agent) end
  end
  self:forget_all()
end

-- The session as a module that adds commands sees it (bonsai.debug.edit's
-- add(E, bt)): E.commands, the command table; E.recording(), the
-- Recording (the agents and their versions) or nil; E.close(), called
-- first when the session closes (the module wraps it to drop what it
-- holds).
function Session:extension()
  local S = self
  self.extended = {
    commands = self.commands,
    recording = function() return S.rec end,
    close = function() end,
  }
  return self.extended
end

return M
