-- bonsai.debug.commands: the page's commands (docs/DEBUGGER.md), each a
-- function(cmd, session) that checks what the command gives, acts on the
-- session (bonsai.debug.session) and returns true, or nil and why. What a
-- page may ask is bounded by the session's limits (read at each use).

local cjson = require "cjson.safe"
local nodeids = require "bonsai.debug.nodeids"
local stepper = require "bonsai.debug.stepper"
local watches = require "bonsai.debug.watches"

local M = {}

-- A value a page may write or compare: a string, a boolean or a finite
-- number (cjson reads NaN and Infinity too).
function M.plain(v)
  local t = type(v)
  return t == "string" or t == "boolean" or
         t == "number" and v == v and v ~= math.huge and v ~= -math.huge
end
local plain = M.plain

-- A name a command gave, quoted in a message (at most 60 bytes of it).
function M.named(x)
  return "'" .. (#x > 60 and x:sub(1, 60) .. "..." or x) .. "'"
end
local named = M.named

-- An agent id as a command gave it (JSON numbers decode as floats: 9,
-- not 9.0), or a string of it cut to a line.
local function agentname(x)
  return type(x) == "number" and ("%.14g"):format(x) or
         type(x) == "string" and ("%q"):format(x:sub(1, 40)) or
         type(x)
end

-- The agent the command names, or nil and why.
local function agentof(cmd, S)
  local agent = S.byid[cmd.agent]
  if not agent then return nil, "no agent " .. agentname(cmd.agent) end
  return agent
end

-- The agent a command names for a scope: "*" (any agent) or one known;
-- or nil and why.
local function scope(cmd, S)
  if cmd.agent == nil or cmd.agent == cjson.null then return "*" end
  if not S.byid[cmd.agent] then
    return nil, "no agent " .. agentname(cmd.agent)
  end
  return cmd.agent
end

-- Why k is not a blackboard key a command may name (a string, not empty,
-- without NUL: the blackboard refuses those), or nil.
local function badkey(k)
  if type(k) ~= "string" or k == "" or k:find("\0", 1, true) then
    return "key must be a string without NUL bytes"
  end
end

-- Why a command's tree and node are not strings, or nil.
local function badnode(cmd)
  if type(cmd.tree) ~= "string" or type(cmd.node) ~= "string" then
    return "tree and node must be strings"
  end
end

local C = {}
M.list = C

function C.set(cmd, S)
  local agent, why = agentof(cmd, S)
  if not agent then return nil, why end
  local bad = badkey(cmd.key)
  if bad then return nil, bad end
  local v = cmd.value
  if v == cjson.null then v = nil end
  if v ~= nil and not plain(v) then
    return nil, "value must be a number, string, boolean or null"
  end
  agent.bb[cmd.key] = v -- the normal write path: guards and observers
  return true
end

local BREAK_ON = { running = true, success = true, failure = true,
                   aborted = true, skipped = true, aborting = true }

C["break"] = function(cmd, S)
  local bad = badnode(cmd)
  if bad then return nil, bad end
  local s = cmd.status
  if s == cjson.null then s = nil end
  if s ~= nil and not BREAK_ON[s] then
    return nil, "status must be running, success, failure, aborted, " ..
      "skipped or aborting"
  end
  local who, why = scope(cmd, S)
  if not who then return nil, why end
  local rule, breaks = (s or "*") .. "@" .. who, S.breaks
  if cmd.on == false then
    breaks:remove(cmd.tree, cmd.node, rule)
    return true
  end
  if not nodeids.known(S.rec, cmd.tree, cmd.node) then
    return nil, "no node " .. named(cmd.node) .. " in tree " ..
                named(cmd.tree)
  end
  if breaks:has(cmd.tree, cmd.node, rule) then return true end
  local max = S.limits.MAX_BREAKPOINTS
  if breaks.count >= max then
    return nil, "too many breakpoints (" .. max .. "): take one away first"
  end
  breaks:add(cmd.tree, cmd.node, rule)
  return true
end

function C.watch(cmd, S)
  local bad = badkey(cmd.key)
  if bad then return nil, bad end
  if not watches.COMPARE[cmd.op] then
    return nil, "op must be one of == ~= < <= > >="
  end
  if not plain(cmd.value) then
    return nil, "value must be a number, string or boolean"
  end
  local who, why = scope(cmd, S)
  if not who then return nil, why end
  local list, limits = S.watches, S.limits
  local name = watches.name(who, cmd.key, cmd.op, cmd.value)
  if cmd.on == false then
    list:remove(name)
  elseif not list:get(name) then
    local same = list:ofkey(cmd.key)
    if list.count >= limits.MAX_WATCHES or same >= limits.MAX_WATCHES_KEY then
      return nil, "too many watches (" .. (same >= limits.MAX_WATCHES_KEY and
        limits.MAX_WATCHES_KEY .. " of key " .. named(cmd.key) or
        limits.MAX_WATCHES) .. "): take one away first"
    end
    list:add(name, who ~= "*" and who or nil, cmd.key, cmd.op, cmd.value)
  end
  return true
end

-- force: a node of one agent, or of every streamed agent of a tree,
-- returns a status for some ticks or until removed (a:force).
function C.force(cmd, S)
  local bad = badnode(cmd)
  if bad then return nil, bad end
  local s = cmd.status
  if cmd.on == false then s = nil
  elseif s ~= "success" and s ~= "failure" then
    return nil, "status must be success or failure"
  end
  local ticks = cmd.ticks
  if ticks == nil or ticks == cjson.null then ticks = 0 end
  if type(ticks) ~= "number" or ticks < 0 or ticks ~= math.floor(ticks) or
     ticks > 0x7fffffff then
    return nil, "ticks must be a count of ticks (0: until removed)"
  end
  local who, why = scope(cmd, S)
  if not who then return nil, why end
  if S.faults:force(S.rec, who, cmd.tree, cmd.node, s, ticks) == 0 then
    return nil, "no node " .. named(cmd.node) .. " in tree " ..
                named(cmd.tree) .. " of " ..
                (who == "*" and "any agent" or "agent " .. agentname(who))
  end
  return true
end

-- freeze: stops an agent now, as a breakpoint would, to be stepped or
-- resumed. A frozen agent writes no tick line, so the pages connected
-- are told by a line {"t":"frozen","agent":A} (not kept: a new page
-- reads it in the agent's snapshot).
function C.freeze(cmd, S)
  local agent, why = agentof(cmd, S)
  if not agent then return nil, why end
  if not agent:frozen() then
    local st = S.rec.ids[agent]
    agent:freeze(true)
    st.frozen = nil -- (written -1: frozen by other than a breakpoint)
    S:broadcast(cjson.encode { t = "frozen", agent = st.id })
  end
  return true
end

function C.resume(cmd, S)
  local agent, why = agentof(cmd, S)
  if not agent then return nil, why end
  agent:freeze(false)
  S.rec.ids[agent].frozen = nil
  return true
end

-- step: one tick of a frozen agent; with nodes = true, the tick's line
-- says what the blackboard held at each of its events (bonsai.debug.
-- stepper).
function C.step(cmd, S)
  local agent, why = agentof(cmd, S)
  if not agent then return nil, why end
  if cmd.nodes == true then
    local st = S.rec.ids[agent]
    if not agent:frozen() then
      return nil, "agent " .. st.id .. " is not frozen"
    end
    if not S.streams[agent] then
      return nil, "agent " .. st.id .. " is not streamed"
    end
    stepper.start(agent, st)
  end
  agent:freeze("step")
  return true
end

function C.record(cmd, S)
  local agent, why = agentof(cmd, S)
  if not agent then return nil, why end
  S:stream(agent, cmd.on ~= false)
  return true
end

return M
