-- bonsai.debug: the live server behind bt.debug (docs/TRACE_FORMAT.md,
-- "Live"). A small HTTP/1.1 server on lua-socket, all of it non-blocking:
-- bt.debug.poll(), called once a frame, accepts, reads and writes what the
-- sockets allow at once and returns. It serves the viewer's files, streams
-- the trace lines of the agents it was given as server-sent events, and
-- takes commands (blackboard writes, breakpoints, freeze, resume, step,
-- faults).
-- Every client has bounded buffers and a deadline, so a client that sends
-- garbage, stops reading or holds its connection open is dropped.

local socket = require "socket"
local cjson = require "cjson.safe"
local record = require "bonsai.record"

local M = {}

-- Limits.
M.MAX_HEADER = 16 * 1024       -- bytes of request line and headers
M.MAX_BODY = 64 * 1024         -- bytes of a request body
M.MAX_OUT = 8 * 1024 * 1024    -- bytes of live lines queued for one client
M.FEED = 256 * 1024            -- bytes of a trace file's stream queued at once
M.REQUEST_TIMEOUT = 10         -- seconds to send a whole request
M.ACCEPT_PER_POLL = 16
M.MAX_CLIENTS = 64             -- connections at once; more are closed
M.READ_PER_POLL = 64 * 1024
M.PING = 15                    -- seconds between keep-alive comments
M.PROFILE = 1                  -- seconds between profile lines (profiled
                               -- trees whose counts changed)
M.SWEEP = 1                    -- seconds between looks for agents collected

local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true, localhost = true }

local TYPES = {
  html = "text/html; charset=utf-8", js = "text/javascript; charset=utf-8",
  css = "text/css; charset=utf-8", json = "application/json",
  jsonl = "application/x-ndjson", svg = "image/svg+xml", png = "image/png",
  ico = "image/x-icon", txt = "text/plain; charset=utf-8",
  map = "application/json",
}

local STATUS = {
  [200] = "OK", [400] = "Bad Request", [403] = "Forbidden",
  [404] = "Not Found", [405] = "Method Not Allowed",
  [408] = "Request Timeout", [413] = "Payload Too Large",
}

-- The viewer directory next to this module's tree (lua/bonsai/ -> viewer/).
local function viewerdir()
  local src = debug.getinfo(1, "S").source
  local dir = src:match("^@(.*)[/\\]lua[/\\]bonsai[/\\][^/\\]*$")
  return (dir or ".") .. "/viewer"
end

-- A request path as a file under root, or nil when it is not a plain
-- relative path (no "..", no hidden names, no backslashes or NULs).
local function filepath(root, path)
  path = path:gsub("%?.*$", ""):gsub("#.*$", "")
  path = path:gsub("%%(%x%x)", function(h)
    return string.char(tonumber(h, 16))
  end)
  if path == "/" then path = "/index.html" end
  if not path:match("^/[%w%._%-/]+$") or path:find("//", 1, true) then
    return nil
  end
  for part in path:gmatch("[^/]+") do
    if part:sub(1, 1) == "." then return nil end -- "..", ".git", ...
  end
  return root .. path
end

local function readfile(name)
  local f = io.open(name, "rb")
  if not f then return nil end
  local data = f:read("*a")
  f:close()
  return data
end

-- Server ------------------------------------------------------------------

function M.new(bt)
  local D = {}
  local server        -- listening socket, or nil
  local clients = {}  -- list of client records
  local rec           -- the Recording whose lines the clients receive
  -- (the agents are held weakly: a game that drops an agent without
  -- bt.debug.remove sees it collected, and the page is told)
  local streams = setmetatable({}, { __mode = "k" }) -- streamed agents
  local byid = setmetatable({}, { __mode = "v" })    -- agent id -> agent
  local offered = {}  -- ids offered and not yet gone
  local breaks = {}   -- tree name -> path -> { [rule] = true }, a rule
                      -- "STATUS@AGENT", "*" for any ("*@*": any event)
  local watches = {}  -- "AGENT key op value" -> { agent, key, op, value,
                      -- was = agent -> last result }
  local opts = {}
  local lines = {}    -- header, tree and agent lines, for new clients
  local profiles = {} -- tree name -> its last profile line (sent)
  local faults = setmetatable({}, { __mode = "k" }) -- agent -> { [node id]
                      -- = true }: the nodes the page forced (command force)
  local profiled = 0  -- when the profiles were last looked at
  local swept = 0     -- when collected agents were last looked for
  local file          -- file mode: every line of a trace file

  local function now() return socket.gettime() end

  -- Queues text for a client; live lines (not forced) drop a client that
  -- reads too slowly. A response's body is queued forced (by reference).
  local function queue(c, s, forced)
    if c.closed then return end
    c.outsize = c.outsize + #s
    if not forced and c.outsize > M.MAX_OUT then
      c.closing = true
      c.out, c.outsize = {}, 0
      return
    end
    c.out[#c.out + 1] = s
  end

  local function event(c, line) queue(c, "data: " .. line .. "\n\n") end

  -- A line of the stream: sent to every SSE client; header, tree and agent
  -- lines are also kept for the clients to come.
  local function emit(line)
    if not line:find('"t":"tick"', 1, true) then -- (quotes in strings
      lines[#lines + 1] = line                    -- are escaped)
    end
    for _, c in ipairs(clients) do
      if c.sse then event(c, line) end
    end
  end

  -- The profile lines of the streamed trees that have a profile, when they
  -- changed; the last of each tree goes to the clients to come too.
  local function sendprofiles()
    for _, tree in ipairs(rec:trees()) do
      local line = rec:profile(tree)
      if line and line ~= profiles[tree.name] then
        profiles[tree.name] = line
        for _, c in ipairs(clients) do
          if c.sse then event(c, line) end
        end
      end
    end
  end

  local function respond(c, code, ctype, body, extra)
    queue(c, ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n" ..
              "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n")
             :format(code, STATUS[code], ctype, #body, extra or ""), true)
    if c.method ~= "HEAD" then queue(c, body, true) end
    c.closing = true
  end

  local function json(c, code, t)
    respond(c, code, TYPES.json, cjson.encode(t))
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

  -- The faults the page set that the agent still has after its tick, as
  -- [[node, status, ticks left (0: until removed)], ...]; [] once the
  -- last has ended (its ticks ran out, it was removed, or a reload dropped
  -- them: the ids were the old version's), and the agent is no longer
  -- looked at.
  local function faulted(agent, line)
    local mine, list = faults[agent], {}
    if line.reload then mine = {} end
    for id in pairs(mine) do
      local s, left = agent:forced(id)
      if s then list[#list + 1] = { id, s, left } else mine[id] = nil end
    end
    table.sort(list, function(x, y) return x[1] < y[1] end)
    faults[agent] = next(mine) and mine or nil
    return list
  end

  -- After each tick of a streamed agent: its line, and breakpoints: a
  -- node's event that a rule names, or a watch that became true.
  local function sink(agent, status, err, ev)
    local st = rec.ids[agent]
    if not st then return end
    local line = rec:line(agent, status, err, ev)
    if st.stepping then line.steps = stepped(agent, st, line.codes) end
    if faults[agent] then line.faults = faulted(agent, line) end
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
    for name, w in pairs(watches) do
      if w.agent == nil or w.agent == st.id then
        local now = holds(w, agent)
        if now and not w.was[agent] then
          agent:freeze(true)
          st.frozen, line.watch = -1, name:match("^%S+ (.*)$")
        end
        w.was[agent] = now
      end
    end
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
  function D.add(agent, o)
    if not rec then
      rec = record.new(emit, bt.VERSION)
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
  local function gone(id)
    offered[id] = nil
    emit(cjson.encode { t = "gone", agent = id }) -- the page marks it
    for _, marks in pairs(breaks) do
      for path, rules in pairs(marks) do
        for rule in pairs(rules) do
          if rule:match("@(.*)$") == tostring(id) then rules[rule] = nil end
        end
        if next(rules) == nil then marks[path] = nil end
      end
    end
    for name, w in pairs(watches) do
      if w.agent == id then watches[name] = nil end
    end
  end

  -- bt.debug.remove(agent): no longer offered or streamed.
  function D.remove(agent)
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

  -- A value a page may write or compare: a string, a boolean or a finite
  -- number (cjson reads NaN and Infinity too).
  local function plain(v)
    local t = type(v)
    return t == "string" or t == "boolean" or
           t == "number" and v == v and v ~= math.huge and v ~= -math.huge
  end

  -- An agent id as a command gave it (JSON numbers decode as floats: 9,
  -- not 9.0).
  local function agentname(x)
    return type(x) == "number" and ("%.14g"):format(x) or tostring(x)
  end

  function commands.set(cmd)
    local agent = byid[cmd.agent]
    if not agent then return nil, "no agent " .. agentname(cmd.agent) end
    if type(cmd.key) ~= "string" or cmd.key == "" then
      return nil, "key must be a string"
    end
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
      if v.tree == tree then
        for _, n in ipairs(v.nodes) do
          if n.path == path then return true end
        end
      end
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
    if cmd.on ~= false and not known(cmd.tree, cmd.node) then
      return nil, "no node '" .. cmd.node .. "' in tree '" .. cmd.tree .. "'"
    end
    local marks = breaks[cmd.tree] or {}
    breaks[cmd.tree] = marks
    local rules = marks[cmd.node] or {}
    rules[(s or "*") .. "@" .. who] = cmd.on ~= false or nil
    marks[cmd.node] = next(rules) and rules or nil
    return true
  end

  function commands.watch(cmd)
    if type(cmd.key) ~= "string" or cmd.key == "" then
      return nil, "key must be a string"
    end
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
      watches[name] = nil
    elseif not watches[name] then
      watches[name] = { agent = who ~= "*" and who or nil, key = cmd.key,
                        op = cmd.op, value = v,
                        was = setmetatable({}, { __mode = "k" }) }
    end
    return true
  end

  -- The id of the node with that path in the version the agent runs, or
  -- nil.
  local function nodeid(agent, path)
    for _, n in ipairs((agent.tree:nodes(agent))) do
      if n.path == path then return n.id end
    end
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
    for agent, st in pairs(rec.ids) do
      if (who == "*" or who == st.id) and st.v.tree == cmd.tree then
        local id = nodeid(agent, cmd.node)
        if id then
          agent:force(id, s, ticks)
          hit = hit + 1
          faults[agent] = faults[agent] or {}
          faults[agent][id] = true -- (told on its lines, till it ends)
        end
      end
    end
    if hit == 0 then
      return nil, "no node '" .. cmd.node .. "' in tree '" .. cmd.tree ..
                  "' of " .. (who == "*" and "any agent" or "agent " ..
                                                  agentname(who))
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
      local line = cjson.encode { t = "frozen", agent = st.id }
      for _, c in ipairs(clients) do
        if c.sse then event(c, line) end
      end
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
  local function command(body)
    local cmd = cjson.decode(body)
    if type(cmd) ~= "table" then return nil, "body is not a JSON object" end
    local f = commands[cmd.cmd]
    if not f then return nil, "unknown command " .. tostring(cmd.cmd) end
    local ok, r, err = pcall(f, cmd)
    if not ok then return nil, "the command failed: " .. tostring(r) end
    return r, err
  end
  D.command = function(t) -- the same commands, from Lua
    local f = commands[t.cmd]
    if not f then return nil, "unknown command " .. tostring(t.cmd) end
    return f(t)
  end

  -- HTTP -------------------------------------------------------------------

  local function handle(c)
    local method, path = c.method, c.path
    if path == "/events" and (method == "GET" or method == "HEAD") then
      queue(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" ..
               "Cache-Control: no-store\r\nConnection: keep-alive\r\n\r\n")
      c.sse, c.ping = true, now()
      if file then -- fed as the client reads, M.FEED bytes at a time
        local at = 0
        c.feed = function()
          local parts, n = {}, 0
          while at < #file and n < M.FEED do
            at = at + 1
            parts[#parts + 1] = "data: " .. file[at] .. "\n\n"
            n = n + #parts[#parts]
          end
          return n > 0 and table.concat(parts) or nil
        end
      else
        for _, l in ipairs(lines) do event(c, l) end
        if rec then
          for agent, st in pairs(rec.ids) do
            if st.tick > 0 then event(c, snapshot(agent, st)) end
          end
        end
        for _, l in pairs(profiles) do event(c, l) end
      end
      return
    end
    if path == "/command" then
      if method ~= "POST" then
        return json(c, 405, { ok = false, error = "POST expected" })
      end
      if file then
        return json(c, 200, { ok = false, error = "not a live game" })
      end
      local ok, err = command(c.body)
      if ok then return json(c, 200, { ok = true }) end
      return json(c, 200, { ok = false, error = tostring(err) })
    end
    if method ~= "GET" and method ~= "HEAD" then
      return json(c, 405, { ok = false, error = "method not allowed" })
    end
    if path == "/live" then
      return json(c, 200, { live = file == nil })
    end
    if file and opts.tracename and path == "/" .. opts.tracename then
      return respond(c, 200, TYPES.jsonl, table.concat(file, "\n") .. "\n")
    end
    local name = filepath(opts.root, path)
    if not name then return respond(c, 403, TYPES.txt, "forbidden\n") end
    local data = readfile(name)
    if not data then return respond(c, 404, TYPES.txt, "not found\n") end
    respond(c, 200, TYPES[name:match("%.(%w+)$") or ""] or
                    "application/octet-stream", data)
  end

  -- Parses what c has received; handles a complete request.
  local function parse(c)
    if not c.path then
      local head = c.inbuf:find("\r\n\r\n", 1, true)
      if not head then
        if #c.inbuf > M.MAX_HEADER then
          respond(c, 413, TYPES.txt, "request too large\n")
        end
        return
      end
      if head > M.MAX_HEADER then
        return respond(c, 413, TYPES.txt, "request too large\n")
      end
      local text = c.inbuf:sub(1, head - 1)
      c.inbuf = c.inbuf:sub(head + 4)
      local method, path = text:match("^(%u+) (/%S*) HTTP/1%.[01]\r?\n?")
      if not method then
        return respond(c, 400, TYPES.txt, "bad request\n")
      end
      c.method, c.path = method, path
      local len = text:lower():match("\ncontent%-length:%s*(%d+)")
      c.length = tonumber(len or "0")
      if c.length > M.MAX_BODY then
        return respond(c, 413, TYPES.txt, "request too large\n")
      end
    end
    if #c.inbuf < c.length then return end
    c.body = c.inbuf:sub(1, c.length)
    c.inbuf = ""
    c.done = true
    handle(c)
  end

  local function drop(c)
    c.closed = true
    c.sock:close()
  end

  -- Reads what has arrived, without waiting.
  local function receive(c)
    local data, err, partial = c.sock:receive(M.READ_PER_POLL)
    data = data or partial
    if data and #data > 0 then
      if not c.done then
        c.inbuf = c.inbuf .. data
        parse(c)
      end -- an SSE client's further bytes are ignored
    end
    if err == "closed" then drop(c) end
  end

  -- Writes what the socket takes now.
  local function send(c)
    while #c.out > 0 or c.feed do
      if #c.out == 0 then -- the next part of a trace file's stream
        local chunk = c.feed()
        if not chunk then
          c.feed = nil
          break
        end
        c.out[1], c.outsize = chunk, #chunk
      end
      local s = c.out[1]
      local last, err, part = c.sock:send(s, c.sent + 1)
      last = last or part
      if last and last > c.sent then c.sent = last end
      if c.sent < #s then
        if err == "closed" then drop(c) end
        return
      end
      table.remove(c.out, 1)
      c.outsize = c.outsize - #s
      c.sent = 0
    end
    if c.closing then drop(c) end
  end

  -- bt.debug.serve{ port = P, host = "127.0.0.1", allow_remote = false,
  -- root = viewer dir, agents = { ... }, file = trace path }: starts the
  -- server; returns the port it listens on and the page's URL.
  function D.serve(o)
    o = o or {}
    assert(not server, "bt.debug: already serving")
    local host = o.host or "127.0.0.1"
    if not LOOPBACK[host] and not o.allow_remote then
      error(("bt.debug: refusing to listen on %s (only the loopback " ..
             "interface unless allow_remote = true)"):format(host), 2)
    end
    opts = { root = o.root or viewerdir(), host = host }
    if o.file then
      file = {}
      for l in assert(io.open(o.file)):lines() do
        if l ~= "" then file[#file + 1] = l end
      end
      opts.tracename = o.file:match("[^/\\]+$"):gsub("[^%w%._%-]", "_")
    end
    local s = assert(socket.tcp())
    s:setoption("reuseaddr", true)
    local ok, err = s:bind(host == "localhost" and "127.0.0.1" or host,
                           o.port or 0)
    if not ok then
      s:close()
      error("bt.debug: cannot listen on " .. host .. ":" ..
            tostring(o.port or 0) .. ": " .. tostring(err), 2)
    end
    assert(s:listen(32))
    s:settimeout(0)
    server = s
    for _, a in ipairs(o.agents or {}) do D.add(a) end
    local _, port = s:getsockname()
    D.port = tonumber(port)
    D.url = ("http://%s:%d/"):format(host:find(":") and "[" .. host .. "]"
                                       or host, D.port)
    if opts.tracename then D.url = D.url .. "?trace=" .. opts.tracename end
    return D.port, D.url
  end

  -- bt.debug.poll(): does what the sockets allow now; never blocks.
  -- Returns the number of connected clients.
  function D.poll()
    if not server then return 0 end
    for _ = 1, M.ACCEPT_PER_POLL do
      local s = server:accept()
      if not s then break end
      if #clients >= M.MAX_CLIENTS then
        s:close() -- too many: refused at once
      else
        s:settimeout(0)
        s:setoption("tcp-nodelay", true)
        clients[#clients + 1] = { sock = s, inbuf = "", out = {},
                                  outsize = 0, sent = 0, since = now() }
      end
    end
    local t = now()
    if rec and t - profiled >= M.PROFILE then
      profiled = t
      sendprofiles()
    end
    if t - swept >= M.SWEEP then
      swept = t
      sweep()
    end
    for i = #clients, 1, -1 do
      local c = clients[i]
      if not c.closed and not c.closing then receive(c) end
      if not c.closed and not c.done and not c.closing and
         t - c.since > M.REQUEST_TIMEOUT then
        respond(c, 408, TYPES.txt, "request timeout\n")
      end
      if not c.closed and c.sse and t - c.ping > M.PING then
        queue(c, ": ping\n\n")
        c.ping = t
      end
      if not c.closed then send(c) end
      if c.closed then table.remove(clients, i) end
    end
    return #clients
  end

  -- bt.debug.close(): closes every connection and the server; agents are
  -- no longer streamed and frozen ones are released.
  function D.close()
    for _, c in ipairs(clients) do
      if not c.closed then drop(c) end
    end
    clients = {}
    if rec then
      for agent in pairs(rec.ids) do D.remove(agent) end
    end
    rec, lines, breaks, file = nil, {}, {}, nil
    byid, offered = setmetatable({}, { __mode = "v" }), {}
    profiles = {}
    if server then server:close() end
    server = nil
    D.port, D.url = nil, nil
  end

  -- bt.debug.clients(): the connections open, and how many of them are
  -- pages that follow the stream (/events)
  function D.clients()
    local pages = 0
    for _, c in ipairs(clients) do
      if c.sse and not c.closed then pages = pages + 1 end
    end
    return #clients, pages
  end

  return D
end

return M
