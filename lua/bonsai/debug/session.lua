-- bonsai.debug.session: what the live debugger knows of the game (docs/
-- DEBUGGER.md): the agents offered and their trace lines, breakpoints,
-- watches, faults, freeze, resume and step, and the commands that change
-- them. It knows nothing of HTTP: it hands its lines to out(line) (the
-- server frames and sends them), replays what a new page must see to
-- replay(send), and carries out commands given as tables (command).
-- What a page may ask is bounded by the limits of bonsai.debug (read at
-- each use, so a test may lower them).

local cjson = require "cjson.safe"
local socket = require "socket"
local record = require "bonsai.record"

local M = {}

-- A value a page may write or compare: a string, a boolean or a finite
-- number (cjson reads NaN and Infinity too).
local function plain(v)
  local t = type(v)
  return t == "string" or t == "boolean" or
         t == "number" and v == v and v ~= math.huge and v ~= -math.huge
end
M.plain = plain

-- new(bt, limits): a session; S.out(line) is set by the server (nil: the
-- lines are kept for the pages to come only).
function M.new(bt, limits)
  local S = {}
  local rec           -- the Recording whose lines the pages receive
  -- (the agents are held weakly: a game that drops an agent without
  -- bt.debug.remove sees it collected, and the page is told)
  local streams = setmetatable({}, { __mode = "k" }) -- streamed agents
  local byid = setmetatable({}, { __mode = "v" })    -- agent id -> agent
  local offered = {}  -- ids offered and not yet gone
  local breaks = {}   -- tree name -> path -> { [rule] = true }, a rule
                      -- "STATUS@AGENT", "*" for any ("*@*": any event)
  local nbreaks = 0   -- rules in breaks
  local watches = {}  -- "AGENT key op value" -> { agent, key, op, value,
                      -- serial, was = agent -> last result }
  local nwatches = 0
  local bykey = {}    -- key -> { [name] = watch }: the watches of a key
  local serial = 0    -- the serial of the last watch added
  local added = {}    -- the watches in the order they came (removed ones
                      -- too, until the list is compacted)
  local lines = {}    -- header, tree and agent events, for new clients:
                      -- { event }; an agent gone takes its line with it
                      -- (dead = true until the list is compacted)
  local dead = 0      -- dead entries in lines
  local agentline = {} -- agent id -> its entry in lines
  local profiles = {} -- tree name -> its last profile line (sent)
  local faults = setmetatable({}, { __mode = "k" }) -- agent -> { [node
                      -- path] = true }: the nodes the page forced
  local profiled = 0  -- when the profiles were last looked at
  local swept = 0     -- when collected agents were last looked for

  local function now() return socket.gettime() end

  local function broadcast(line)
    if S.out then S.out(line) end
  end

  -- A line of the stream: sent to every page; header, tree and agent
  -- lines are also kept for the pages to come (quotes in strings are
  -- escaped, so '"t":"tick"' is the line's type).
  local function emit(line)
    if line:find('"t":"agent"', 1, true) then
      local id = tonumber(line:match('"agent":(%d+)'))
      lines[#lines + 1] = { line }
      if id then agentline[id] = lines[#lines] end
    elseif not line:find('"t":"tick"', 1, true) and
           not line:find('"t":"gone"', 1, true) then
      lines[#lines + 1] = { line }
    end
    broadcast(line)
  end

  -- An agent gone: the pages to come do not hear of it (so what they are
  -- sent does not grow with every agent a game ever offered).
  local function forget(id)
    local l = agentline[id]
    if not l then return end
    agentline[id], l.dead, dead = nil, true, dead + 1
    if dead > #lines / 2 then
      local kept = {}
      for _, x in ipairs(lines) do
        if not x.dead then kept[#kept + 1] = x end
      end
      lines, dead = kept, 0
    end
  end

  -- The profile lines of the streamed trees that have a profile, when they
  -- changed; the last of each tree goes to the pages to come too.
  local function sendprofiles()
    for _, tree in ipairs(rec:trees()) do
      local line = rec:profile(tree)
      if line and line ~= profiles[tree.name] then
        profiles[tree.name] = line
        broadcast(line)
      end
    end
  end

  -- Streaming agents ------------------------------------------------------

  -- The line a new client gets for an agent: its last tick with the whole
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

  local STATUS = { [0] = "idle", "running", "success", "failure", "aborted",
                   "skipped", "aborting" }

  -- Whether a node's rules stop agent id on an event with status s.
  local function stops(rules, s, id)
    return rules["*@*"] or rules[s .. "@*"] or rules["*@" .. id] or
           rules[s .. "@" .. id]
  end

  local COMPARE = {
    ["=="] = function(x, y) return x == y end,
    ["~="] = function(x, y) return x ~= y end,
    ["<"] = function(x, y) return x < y end,
    ["<="] = function(x, y) return x <= y end,
    [">"] = function(x, y) return x > y end,
    [">="] = function(x, y) return x >= y end,
  }

  -- The watch's condition on the agent's blackboard (false when the
  -- values cannot be compared: an unset key, a number against a string).
  local function holds(w, agent)
    local ok, r = pcall(COMPARE[w.op], agent.bb[w.key], w.value)
    return ok and r == true
  end

  -- Stepping through a tick: the step command arms the agent's trace hook
  -- (a:_on_event) for its next tick; at each status event of that tick the
  -- hook notes the event's code and the blackboard keys changed since the
  -- event before (since the last line sent, for the first). The tick line
  -- then carries them as 'steps', [index of the event in the line, { key =
  -- value }, unset keys or nil], and the page reveals the tick node by node
  -- (docs/DEBUGGER.md).
  local function stepper(agent, st)
    local run = { steps = {}, codes = {} } -- the status events seen
    local seen = {}
    for k, v in pairs(st.bb or {}) do seen[k] = v end
    st.stepping = run
    agent:_on_event(function(kind, code)
      if kind == "reload" then -- (the old version's events are dropped)
        run.steps, run.codes = {}, {}
      elseif kind == "status" then
        local changed, unset, now = nil, nil, {}
        for k, v in agent.bb:pairs() do
          now[k] = v
          if seen[k] ~= v then
            changed = changed or {}
            changed[k] = record.value(v)
          end
        end
        for k in pairs(seen) do
          if now[k] == nil then
            unset = unset or {}
            unset[#unset + 1] = k
          end
        end
        if changed or unset then
          if unset then table.sort(unset) end
          run.steps[#run.steps + 1] = { #run.codes, changed or {}, unset }
        end
        seen = now
        run.codes[#run.codes + 1] = code
      end
    end)
  end

  -- Ends a step through a tick: the steps for the line, or nil when the
  -- events the hook saw are not in the line. It saw those of the tick;
  -- events recorded outside it (the game aborted the frozen agent before;
  -- an error's abort pass after) are in the line too: the indices are
  -- shifted to where the events seen are.
  local function stepped(agent, st, codes)
    local run = st.stepping
    st.stepping = nil
    agent:_on_event(nil)
    local seen = run.codes
    for shift = 0, #codes - #seen do
      local i = 1
      while i <= #seen and codes[shift + i] == seen[i] do i = i + 1 end
      if i > #seen then
        for _, s in ipairs(run.steps) do s[1] = s[1] + shift end
        return run.steps
      end
    end
  end

  -- The ids of a version's nodes by path (made when first asked).
  local function index(v)
    if not v.index then
      v.index = {}
      for _, n in ipairs(v.nodes) do v.index[n.path] = n.id end
    end
    return v.index
  end

  -- The faults the page set that the agent still has after its tick, as
  -- [[node, status, ticks left (0: until removed)], ...]; [] once the
  -- last has ended (its ticks ran out, it was removed, or a reload dropped
  -- them: they were the old version's), and the agent is no longer
  -- looked at.
  local function faulted(agent, st, line)
    local mine, list = faults[agent], {}
    if line.reload then mine = {} end
    local ids = index(st.v)
    for path in pairs(mine) do
      local ok, s, left = pcall(agent.forced, agent, path)
      if ok and s and ids[path] then
        list[#list + 1] = { ids[path], s, left }
      else
        mine[path] = nil
      end
    end
    table.sort(list, function(x, y) return x[1] < y[1] end)
    faults[agent] = next(mine) and mine or nil
    return list
  end

  -- Watches after a tick: a watch can change its mind only when its key
  -- changed, so only the watches of the keys the tick's line carries (the
  -- keys changed or cleared since the line before) are looked at, and the
  -- watches added since the agent's last tick, once. What a tick costs
  -- grows with what it changed, not with the number of watches.
  local function watched(agent, st, line)
    local hit
    local function look(name, w)
      if w.agent ~= nil and w.agent ~= st.id then return end
      local now = holds(w, agent)
      if now and not w.was[agent] then hit = name end
      w.was[agent] = now
    end
    local seen = st.watchserial or 0
    if seen < serial then -- (the newest last)
      for i = #added, 1, -1 do
        local w = added[i]
        if w.serial <= seen then break end
        if watches[w.name] == w then look(w.name, w) end
      end
      st.watchserial = serial
    end
    if next(bykey) then
      for k in pairs(line.bb) do
        for name, w in pairs(bykey[k] or {}) do look(name, w) end
      end
      for _, k in ipairs(line.unset or {}) do
        for name, w in pairs(bykey[k] or {}) do look(name, w) end
      end
    end
    if hit then
      agent:freeze(true)
      st.frozen, line.watch = -1, hit:match("^%S+ (.*)$")
    end
  end

  -- After each tick of a streamed agent: its line, and breakpoints: a
  -- node's event that a rule names, or a watch that became true.
  local function sink(agent, status, err, ev)
    local st = rec.ids[agent]
    if not st then return end
    local line = rec:line(agent, status, err, ev)
    if st.stepping then line.steps = stepped(agent, st, line.codes) end
    if faults[agent] then line.faults = faulted(agent, st, line) end
    local marks = breaks[st.v.tree]
    if marks then
      for _, code in ipairs(line.codes) do
        local id = math.floor(code / 32)
        local nd = st.v.nodes[id + 1]
        local rules = nd and marks[nd.path]
        if code % 2 == 0 and rules and
           stops(rules, STATUS[math.floor(code / 2) % 8], st.id) then
          agent:freeze(true)
          st.frozen = id
          break
        end
      end
    end
    if nwatches > 0 then watched(agent, st, line) end
    if agent:frozen() then line.frozen = st.frozen or -1 end
    rec:write(line)
  end

  local function stream(agent, on)
    if on and not streams[agent] then
      streams[agent] = true
      record.attach(agent, sink)
      if rec.ids[agent] then rec.ids[agent].full = true end -- ticks missed
    elseif not on and streams[agent] then
      streams[agent] = nil
      record.detach(agent, sink)
    end
  end

  -- bt.debug.add(agent [, { record = false }]): offers an agent to the
  -- page, streaming it unless record is false; returns its id.
  function S.add(agent, o)
    if not rec then
      rec = record.new(emit, bt)
      rec:header()
    end
    local st = rec:add(agent)
    byid[st.id] = agent
    offered[st.id] = true
    stream(agent, not (o and o.record == false))
    return st.id
  end

  -- An agent withdrawn or collected: the page is told, its breakpoints and
  -- watches go (ids are not given again).
  local function unwatch(name)
    local w = watches[name]
    if not w then return end
    watches[name], nwatches = nil, nwatches - 1
    bykey[w.key][name] = nil
    if next(bykey[w.key]) == nil then bykey[w.key] = nil end
  end

  local function gone(id)
    offered[id] = nil
    emit(cjson.encode { t = "gone", agent = id }) -- the page marks it
    forget(id)
    for _, marks in pairs(breaks) do
      for path, rules in pairs(marks) do
        for rule in pairs(rules) do
          if rule:match("@(.*)$") == tostring(id) then
            rules[rule], nbreaks = nil, nbreaks - 1
          end
        end
        if next(rules) == nil then marks[path] = nil end
      end
    end
    for name, w in pairs(watches) do
      if w.agent == id then unwatch(name) end
    end
  end

  -- bt.debug.remove(agent): no longer offered or streamed.
  function S.remove(agent)
    if not rec or not rec.ids[agent] then return end
    local id = rec.ids[agent].id
    stream(agent, false)
    byid[id] = nil
    rec:remove(agent)
    agent:freeze(false)
    gone(id)
  end

  -- The agents the game let go without bt.debug.remove.
  local function sweep()
    for id in pairs(offered) do
      if byid[id] == nil then gone(id) end
    end
  end

  -- Commands ---------------------------------------------------------------

  local commands = {}

  -- An agent id as a command gave it (JSON numbers decode as floats: 9,
  -- not 9.0), or a string of it cut to a line.
  local function agentname(x)
    return type(x) == "number" and ("%.14g"):format(x) or
           type(x) == "string" and ("%q"):format(x:sub(1, 40)) or
           type(x)
  end

  -- A name a command gave, quoted in a message (at most 60 bytes of it).
  local function named(x)
    return "'" .. (#x > 60 and x:sub(1, 60) .. "..." or x) .. "'"
  end

  -- A blackboard key a command may name: a string, not empty, without NUL
  -- (the blackboard refuses those).
  local function badkey(k)
    if type(k) ~= "string" or k == "" or k:find("\0", 1, true) then
      return "key must be a string without NUL bytes"
    end
  end

  function commands.set(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
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

  -- The agent a command names for a scope: nil (any agent) or one known.
  local function scope(cmd)
    if cmd.agent == nil or cmd.agent == cjson.null then return "*" end
    if not byid[cmd.agent] then
      return nil, "no agent " .. agentname(cmd.agent)
    end
    return cmd.agent
  end

  -- Whether a version of the tree that the page was shown has that node.
  local function known(tree, path)
    for _, v in pairs(rec and rec.versions or {}) do
      if v.tree == tree and index(v)[path] then return true end
    end
    return false
  end

  commands["break"] = function(cmd)
    if type(cmd.tree) ~= "string" or type(cmd.node) ~= "string" then
      return nil, "tree and node must be strings"
    end
    local s = cmd.status
    if s == cjson.null then s = nil end
    if s ~= nil and s ~= "running" and s ~= "success" and s ~= "failure" and
       s ~= "aborted" and s ~= "skipped" and s ~= "aborting" then
      return nil, "status must be running, success, failure, aborted, " ..
        "skipped or aborting"
    end
    local who, why = scope(cmd)
    if not who then return nil, why end
    local rule = (s or "*") .. "@" .. who
    local marks = breaks[cmd.tree]
    local rules = marks and marks[cmd.node]
    if cmd.on == false then
      if rules and rules[rule] then
        rules[rule], nbreaks = nil, nbreaks - 1
        if next(rules) == nil then marks[cmd.node] = nil end
        if next(marks) == nil then breaks[cmd.tree] = nil end
      end
      return true
    end
    if not known(cmd.tree, cmd.node) then
      return nil, "no node " .. named(cmd.node) .. " in tree " ..
                  named(cmd.tree)
    end
    if rules and rules[rule] then return true end
    if nbreaks >= limits.MAX_BREAKPOINTS then
      return nil, "too many breakpoints (" .. limits.MAX_BREAKPOINTS ..
                  "): take one away first"
    end
    marks = marks or {}
    breaks[cmd.tree] = marks
    rules = rules or {}
    marks[cmd.node] = rules
    rules[rule], nbreaks = true, nbreaks + 1
    return true
  end

  function commands.watch(cmd)
    local bad = badkey(cmd.key)
    if bad then return nil, bad end
    if not COMPARE[cmd.op] then
      return nil, "op must be one of == ~= < <= > >="
    end
    local v, t = cmd.value, type(cmd.value)
    if not plain(v) then
      return nil, "value must be a number, string or boolean"
    end
    local who, why = scope(cmd)
    if not who then return nil, why end
    local name = who .. " " .. cmd.key .. " " .. cmd.op .. " " ..
                 (t == "string" and ("%q"):format(v) or
                  t == "number" and ("%.14g"):format(v) or tostring(v))
    if cmd.on == false then
      unwatch(name)
    elseif not watches[name] then
      local same = 0
      for _ in pairs(bykey[cmd.key] or {}) do same = same + 1 end
      if nwatches >= limits.MAX_WATCHES or same >= limits.MAX_WATCHES_KEY then
        return nil, "too many watches (" .. (same >= limits.MAX_WATCHES_KEY and
          limits.MAX_WATCHES_KEY .. " of key " .. named(cmd.key) or
          limits.MAX_WATCHES) .. "): take one away first"
      end
      serial = serial + 1
      local w = { name = name, agent = who ~= "*" and who or nil,
                  key = cmd.key, op = cmd.op, value = v, serial = serial,
                  was = setmetatable({}, { __mode = "k" }) }
      watches[name], nwatches = w, nwatches + 1
      bykey[cmd.key] = bykey[cmd.key] or {}
      bykey[cmd.key][name] = w
      if #added > 2 * nwatches then -- compacted: the removed ones go
        local kept = {}
        for _, x in ipairs(added) do
          if watches[x.name] == x then kept[#kept + 1] = x end
        end
        added = kept
      end
      added[#added + 1] = w
    end
    return true
  end

  -- force: a node of one agent, or of every streamed agent of a tree,
  -- returns a status for some ticks or until removed (a:force).
  function commands.force(cmd)
    if type(cmd.tree) ~= "string" or type(cmd.node) ~= "string" then
      return nil, "tree and node must be strings"
    end
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
    local who, why = scope(cmd)
    if not who then return nil, why end
    local hit = 0
    for agent, st in pairs(rec and rec.ids or {}) do
      -- (by path: the agent's tree resolves it in the version it runs)
      if (who == "*" or who == st.id) and st.v.tree == cmd.tree and
         pcall(agent.force, agent, cmd.node, s, ticks) then
        hit = hit + 1
        faults[agent] = faults[agent] or {}
        faults[agent][cmd.node] = true -- (told on its lines, till it ends)
      end
    end
    if hit == 0 then
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
  function commands.freeze(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
    if not agent:frozen() then
      local st = rec.ids[agent]
      agent:freeze(true)
      st.frozen = nil -- (written -1: frozen by other than a breakpoint)
      broadcast(cjson.encode { t = "frozen", agent = st.id })
    end
    return true
  end

  function commands.resume(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
    agent:freeze(false)
    rec.ids[agent].frozen = nil
    return true
  end

  -- step: one tick of a frozen agent; with nodes = true, the tick's line
  -- says what the blackboard held at each of its events (stepper).
  function commands.step(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
    if cmd.nodes == true then
      local st = rec.ids[agent]
      if not agent:frozen() then
        return nil, "agent " .. st.id .. " is not frozen"
      end
      if not streams[agent] then
        return nil, "agent " .. st.id .. " is not streamed"
      end
      stepper(agent, st)
    end
    agent:freeze("step")
    return true
  end

  function commands.record(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
    stream(agent, cmd.on ~= false)
    return true
  end

  -- (a command that raises, which none should, is refused with the
  -- message: it never leaves bt.debug.poll)
  -- Carries out a command (a table): true, or nil and why. A command
  -- refuses what it cannot do; anything it raises (a game's observer that
  -- raises on the value written, say) is refused with the message too, so
  -- neither bt.debug.poll nor bt.debug.command ever raises.
  local function run(cmd)
    if type(cmd) ~= "table" then return nil, "a command is a JSON object" end
    local f = commands[cmd.cmd]
    if not f then
      return nil, "unknown command " .. (type(cmd.cmd) == "string" and
                                         named(cmd.cmd) or type(cmd.cmd))
    end
    local ok, r, err = pcall(f, cmd)
    if not ok then return nil, "the command failed: " .. tostring(r) end
    return r, err
  end

  S.command = run

  -- The command table, by name (bonsai.debug.edit adds its own).
  S.commands = commands

  -- replay(send): what a page that connects is sent first: the header,
  -- tree and agent lines kept, each agent's last tick whole, the last
  -- profile of each tree.
  function S.replay(send)
    for _, l in ipairs(lines) do
      if not l.dead then send(l[1]) end
    end
    if rec then
      for agent, st in pairs(rec.ids) do
        if st.tick > 0 then send(snapshot(agent, st)) end
      end
    end
    for _, l in pairs(profiles) do send(l) end
  end

  -- poll(): the work a frame owes the pages: profiles that changed (at
  -- most every limits.PROFILE seconds), agents collected (every
  -- limits.SWEEP seconds).
  function S.poll()
    local t = now()
    if rec and t - profiled >= limits.PROFILE then
      profiled = t
      sendprofiles()
    end
    if t - swept >= limits.SWEEP then
      swept = t
      sweep()
    end
  end

  -- The recording (for bonsai.debug.edit: the agents and their versions).
  function S.recording() return rec end
  S.byid = function(id) return byid[id] end

  -- close(): agents are no longer streamed and frozen ones are released;
  -- everything is forgotten.
  function S.close()
    if rec then
      for agent in pairs(rec.ids) do S.remove(agent) end
    end
    rec, lines, dead, agentline, breaks = nil, {}, 0, {}, {}
    watches, bykey, added, nwatches, nbreaks = {}, {}, {}, 0, 0
    byid, offered = setmetatable({}, { __mode = "v" }), {}
    profiles = {}
  end

  return S
end

return M
