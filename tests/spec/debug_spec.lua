-- debug_spec: the live server (bt.debug, docs/TRACE_FORMAT.md "Live") with
-- lua-socket clients in the same process, all on 127.0.0.1 and bounded in
-- time: the event stream and what a new client receives, commands
-- (blackboard writes, breakpoints, freeze, step, resume, record), static
-- files and refused paths, a trace file served to the viewer, and clients
-- that disconnect, send garbage, hold the connection or stop reading.
-- poll() must never block.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local debugmod = require "bonsai.debug"
local http = require "bonsai.http"
local socket = require "socket"
local cjson = require "cjson"

local D, port
local limits = {}

local function serve(o)
  D = debugmod.new(bt)
  port = D.serve(o)
  return D
end

before_each(function()
  for _, m in ipairs { debugmod, http } do
    limits[m] = {}
    for k, v in pairs(m) do
      if type(v) == "number" then limits[m][k] = v end
    end
  end
end)

after_each(function()
  if D then D.close() end
  D = nil
  for m, kept in pairs(limits) do
    for k, v in pairs(kept) do m[k] = v end
  end
end)

-- Polls the server until cond() is true (the deadline, 30 s unless given,
-- is there only in case it never is: a busy machine does not reach it).
local function pump(cond, secs)
  local t0 = socket.gettime()
  repeat
    D.poll()
    if cond() then return true end
    socket.sleep(0.002)
  until socket.gettime() - t0 > (secs or 30)
  return false
end

-- Polls the server n times (what a game's n frames do).
local function polls(n)
  for _ = 1, n do D.poll() end
end

local function connect()
  local c = assert(socket.connect("127.0.0.1", port))
  c:settimeout(0)
  return { sock = c, buf = "", closed = false }
end

-- Reads what has arrived at client c.
local function read(c)
  local d, e, p = c.sock:receive(65536)
  c.buf = c.buf .. (d or p or "")
  if e == "closed" then c.closed = true end
  return c.buf
end

-- Sends a raw request and returns the whole response (the server closes
-- every connection but the event stream).
local function raw(text)
  local c = connect()
  c.sock:send(text)
  assert(pump(function() read(c); return c.closed end), "no response")
  c.sock:close()
  return c.buf
end

-- The server's token (in the URL it printed) and Host.
local function token() return D.url:match("token=(%x+)") end
local function host() return "Host: 127.0.0.1:" .. port .. "\r\n" end

-- A GET of path with the token, as the page sends it.
local function get(path)
  return raw("GET " .. path .. (path:find("?", 1, true) and "&" or "?") ..
             "token=" .. token() .. " HTTP/1.1\r\n" .. host() .. "\r\n")
end

local function post(body)
  local r = raw("POST /command HTTP/1.1\r\n" .. host() .. "Content-Type: " ..
                "application/json\r\nX-Bonsai-Token: " .. token() ..
                "\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body)
  return cjson.decode(r:match("\r\n\r\n(.*)$"))
end

-- An event-stream client: its lines so far, decoded.
local function subscribe()
  local c = connect()
  c.sock:send("GET /events?token=" .. token() .. " HTTP/1.1\r\n" .. host() ..
              "\r\n")
  c.lines = function()
    local out = {}
    for data in read(c):gmatch("data: ([^\n]*)\n\n") do
      out[#out + 1] = cjson.decode(data)
    end
    return out
  end
  return c
end

local function guardtree()
  return bt.tree(bt.reactive_selector { name = "guard",
    bt.reactive_sequence { name = "flee", bt.check("hp", "<", 25),
      bt.named("run", bt.action(function() return bt.RUNNING end)) },
    bt.named("patrol", bt.action(function(a, bb)
      bb.steps = (bb.steps or 0) + 1
      return bt.RUNNING
    end)),
  }, { name = "guard" })
end

describe("bt.debug.serve", function()
  it("listens on 127.0.0.1 only, unless told otherwise", function()
    D = debugmod.new(bt)
    assert.has_error(function() D.serve { host = "0.0.0.0" } end)
    assert.has_error(function() D.serve { host = "192.168.1.10" } end)
    port = D.serve { port = 0 }
    assert.is_true(port > 0)
    assert.matches("^http://127%.0%.0%.1:" .. port .. "/%?token=%x+$", D.url)
    local _, pa = get("/live"):match("^(HTTP/1.1 200).-\r\n\r\n(.*)$")
    assert.same({ live = true }, cjson.decode(pa))
  end)

  it("streams header, trees, agents and ticks; new clients catch up",
     function()
    local tree = guardtree()
    local a = bt.agent(tree, { owner = { name = "Brom" },
                               blackboard = { hp = 100 } })
    serve { agents = { a } }
    assert.equal(0, select(2, D.clients()))
    local c1 = subscribe()
    assert.is_true(pump(function() return #c1.lines() >= 3 end))
    local l = c1.lines()
    assert.equal("header", l[1].t)
    assert.equal(1, l[1].format)
    assert.equal("tree", l[2].t)
    assert.equal("guard/flee/check[1]", l[2].nodes[3].path)
    assert.same({ t = "agent", agent = 1, tree = "guard", version = 1,
                  label = "Brom" }, l[3])
    a:tick(0.5)
    bt.tick_all({ a }, 0.5)
    assert.is_true(pump(function() return #c1.lines() >= 5 end))
    l = c1.lines()
    assert.equal("tick", l[4].t)
    assert.equal(1, l[4].tick)
    assert.same({ hp = 100, steps = 1 }, l[4].bb)
    assert.equal(2, l[5].tick)
    assert.same({ 4, "running", 1 }, l[5].events[#l[5].events])
    assert.same({ steps = 2 }, l[5].bb)
    -- a client arriving now gets the last tick with the whole state
    local c2 = subscribe()
    assert.is_true(pump(function() return #c2.lines() >= 4 end))
    assert.equal(2, select(2, D.clients())) -- two pages follow the stream
    local last = c2.lines()[4]
    assert.equal(2, last.tick)
    assert.same({ { 0, "running" }, { 1, "failure" }, { 2, "failure" },
                  { 4, "running" } }, last.state)
    assert.equal(2, last.bb.steps)
    -- a reload is streamed as a new tree version
    tree:reload(bt.reactive_selector { name = "guard",
      bt.named("patrol", bt.action(function() return bt.RUNNING end)) })
    a:tick(0.5)
    assert.is_true(pump(function() return #c2.lines() >= 6 end))
    l = c2.lines()
    assert.equal("tree", l[5].t)
    assert.equal(2, l[5].version)
    assert.same({ from = 1, to = 2 }, l[6].reload)
    c1.sock:close()
    c2.sock:close()
    assert.is_true(pump(function() return D.clients() == 0 end))
  end)

  it("streams a profiled tree's profile when it changes; new clients " ..
     "get the last", function()
    debugmod.PROFILE = 0 -- at every poll (else once a second)
    local tree = guardtree()
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    serve { agents = { a } }
    local c1 = subscribe()
    a:tick(0.5)
    assert.is_true(pump(function() return #c1.lines() >= 4 end))
    local function profiles(c)
      local out = {}
      for _, l in ipairs(c.lines()) do
        if l.t == "profile" then out[#out + 1] = l end
      end
      return out
    end
    assert.same({}, profiles(c1)) -- not profiled: no profile line
    tree:profile(true)
    a:tick(0.5)
    a:tick(0.5)
    assert.is_true(pump(function() return #profiles(c1) > 0 end))
    polls(20) -- unchanged: no more lines
    local p = profiles(c1)
    assert.equal(1, #p)
    assert.equal("guard", p[1].tree)
    assert.equal(1, p[1].version)
    assert.is_true(p[1].on)
    assert.equal(2, p[1].ticks)
    local calls = {}
    for _, n in ipairs(p[1].nodes) do calls[n[1]] = n[2] end
    assert.same({ [0] = 2, [1] = 2, [2] = 2, [4] = 2 }, calls) -- run: never
    local c2 = subscribe()
    assert.is_true(pump(function() return #profiles(c2) == 1 end))
    assert.same(p[1], profiles(c2)[1])
    a:tick(0.5)
    assert.is_true(pump(function() return #profiles(c1) == 2 end))
    assert.equal(3, profiles(c1)[2].ticks)
    c1.sock:close()
    c2.sock:close()
  end)

  it("forces a node on one agent or any of a tree (fault injection)",
     function()
    local tree = guardtree()
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    local b = bt.agent(tree, { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    local c = subscribe()
    a:tick(1)
    b:tick(1)
    assert.same({ ok = true }, post('{"cmd":"force","agent":1,"tree":"guard",' ..
      '"node":"guard/flee/check[1]","status":"success","ticks":1}'))
    assert.same({ "success", 1 }, { a:forced("guard/flee/check[1]") })
    assert.is_nil(b:forced("guard/flee/check[1]"))
    a:tick(1)
    assert.same({ "guard", "flee", "run" }, a:running())
    assert.is_true(pump(function() return #c.lines() >= 7 end))
    local l = c.lines()[7] -- after header, tree, 2 agents, 2 ticks
    assert.equal(1, l.agent)
    assert.same({ 2, "success", 0, 1 }, l.events[3]) -- marked forced
    a:tick(1) -- its one tick is over: the check runs again
    assert.same({ "guard", "patrol" }, a:running())
    -- any agent of the tree, until removed; then removed
    assert.same({ ok = true }, post('{"cmd":"force","tree":"guard",' ..
      '"node":"guard/patrol","status":"failure"}'))
    assert.same({ "failure", 0 }, { b:forced("guard/patrol") })
    assert.same({ "failure", 0 }, { a:forced("guard/patrol") })
    assert.same({ ok = true }, post('{"cmd":"force","tree":"guard",' ..
      '"node":"guard/patrol","on":false}'))
    assert.is_nil(a:forced("guard/patrol"))
    -- refused: nodes, agents, statuses and counts that are not there
    local function refused(body, want)
      local r = post(body)
      assert.is_false(r.ok)
      assert.equal(want, r.error)
    end
    refused('{"cmd":"force","tree":"guard","node":"guard/fly",' ..
            '"status":"success"}',
            "no node 'guard/fly' in tree 'guard' of any agent")
    refused('{"cmd":"force","agent":9,"tree":"guard","node":"guard",' ..
            '"status":"success"}', "no agent 9")
    refused('{"cmd":"force","tree":"guard","node":"guard",' ..
            '"status":"running"}', "status must be success or failure")
    refused('{"cmd":"force","tree":"guard","node":"guard",' ..
            '"status":"success","ticks":-2}',
            "ticks must be a count of ticks (0: until removed)")
    refused('{"cmd":"force","tree":7,"node":"guard","status":"success"}',
            "tree and node must be strings")
    c.sock:close()
  end)

  it("tells the page the faults it set, tick by tick, until they end",
     function()
    local tree = guardtree()
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    serve { agents = { a } }
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 3 end)) -- connected
    a:tick(1)
    assert.is_true(D.command { cmd = "force", agent = 1, tree = "guard",
                               node = "guard/patrol", status = "failure",
                               ticks = 2 })
    assert.is_true(D.command { cmd = "force", agent = 1, tree = "guard",
                               node = "guard/flee/check[1]",
                               status = "success" })
    for _ = 1, 3 do a:tick(1) end
    -- a fault the game set itself is not the page's to list
    a:force("guard/flee/run", "failure", 1)
    assert.is_true(D.command { cmd = "force", agent = 1, tree = "guard",
                               node = "guard/flee/check[1]", on = false })
    a:tick(1)
    tree:reload(bt.reactive_selector { name = "guard",
      bt.named("patrol", bt.action(function() return bt.RUNNING end)) })
    assert.is_true(D.command { cmd = "force", agent = 1, tree = "guard",
                               node = "guard/flee/check[1]",
                               status = "success" })
    a:tick(1) -- the reload drops it
    a:tick(1)
    local got
    assert.is_true(pump(function()
      got = {}
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" then got[#got + 1] = l.faults or "-" end
      end
      return #got == 7
    end))
    assert.same({ "-",
                  { { 2, "success", 0 }, { 4, "failure", 1 } },
                  { { 2, "success", 0 } }, { { 2, "success", 0 } },
                  {}, {}, "-" }, got)
  end)

  it("writes blackboard values through the normal path", function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local seen
    a.bb:observe("hp", function(_, _, new) seen = new end)
    serve { agents = { a } }
    a:tick(1)
    assert.same({ ok = true }, post('{"cmd":"set","agent":1,"key":"hp",' ..
                                    '"value":10}'))
    assert.equal(10, a.bb.hp)
    assert.equal(10, seen)
    a:tick(1)
    assert.same({ "guard", "flee", "run" }, a:running())
    assert.same({ ok = true }, post('{"cmd":"set","agent":1,"key":"name",' ..
                                    '"value":"Brom"}'))
    assert.same({ ok = true }, post('{"cmd":"set","agent":1,"key":"name",' ..
                                    '"value":null}'))
    assert.is_nil(a.bb.name)
    local r = post('{"cmd":"set","agent":1,"key":"hp","value":{"x":1}}')
    assert.is_false(r.ok)
    assert.is_false(post('{"cmd":"set","agent":9,"key":"hp","value":1}').ok)
    assert.is_false(post('{"cmd":"fly"}').ok)
    assert.is_false(post('[1,2').ok)
  end)

  it("freezes an agent that enters a breakpoint; step and resume",
     function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local b = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    local c = subscribe()
    assert.same({ ok = true }, post('{"cmd":"break","tree":"guard",' ..
                                    '"node":"guard/flee/run","on":true}'))
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen())
    a.bb.hp = 10
    bt.tick_all({ a, b }, 1)
    assert.is_true(a:frozen())
    assert.is_false(b:frozen())
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" and l.agent == 1 and l.frozen == 3 then
          return true
        end
      end
    end))
    local steps = b.bb.steps
    local time = a.time
    bt.tick_all({ a, b }, 1)
    a:tick(1)
    assert.equal(time, a.time) -- skipped
    assert.equal(steps + 1, b.bb.steps) -- the other one goes on
    assert.same({ ok = true }, post('{"cmd":"step","agent":1}'))
    bt.tick_all({ a }, 1)
    assert.equal(time + 1, a.time)
    assert.is_true(a:frozen())
    bt.tick_all({ a }, 1)
    assert.equal(time + 1, a.time)
    assert.same({ ok = true }, post('{"cmd":"break","tree":"guard",' ..
                                    '"node":"guard/flee/run","on":false}'))
    assert.same({ ok = true }, post('{"cmd":"resume","agent":1}'))
    bt.tick_all({ a }, 1)
    assert.equal(time + 2, a.time)
    assert.is_false(a:frozen())
  end)

  it("freezes any agent on command; the pages are told; it is stepped " ..
     "into and resumed", function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local b = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    local c = subscribe()
    bt.tick_all({ a, b }, 1)
    assert.is_true(pump(function() return #c.lines() >= 6 end)) -- connected
    assert.same({ ok = true }, post('{"cmd":"freeze","agent":1}'))
    assert.is_true(a:frozen())
    assert.is_false(b:frozen())
    local function told()
      local n = 0
      for _, l in ipairs(c.lines()) do
        if l.t == "frozen" then
          assert.same({ t = "frozen", agent = 1 }, l)
          n = n + 1
        end
      end
      return n
    end
    assert.is_true(pump(function() return told() == 1 end))
    local time, steps = a.time, b.bb.steps
    bt.tick_all({ a, b }, 1)
    assert.equal(time, a.time)          -- not ticked
    assert.equal(steps + 1, b.bb.steps) -- the other one goes on
    -- frozen already: nothing changes, nobody is told again
    assert.is_true(D.command { cmd = "freeze", agent = 1 })
    -- a page that comes now reads it in the snapshot
    local late = subscribe()
    assert.is_true(pump(function()
      for _, l in ipairs(late.lines()) do
        if l.t == "tick" and l.agent == 1 then return l.frozen == -1 end
      end
    end))
    -- step into its next tick: one tick, its events with the blackboard
    assert.same({ ok = true },
                post('{"cmd":"step","agent":1,"nodes":true}'))
    bt.tick_all({ a, b }, 1)
    assert.equal(time + 1, a.time)
    assert.is_true(a:frozen())
    local line
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" and l.agent == 1 and l.tick == 2 then line = l end
      end
      return line ~= nil
    end))
    assert.equal(-1, line.frozen)
    assert.equal(1, #line.steps) -- patrol counted a step
    assert.same({ steps = 2 }, line.steps[1][2])
    local ev = line.events[line.steps[1][1] + 1]
    assert.same({ "patrol", "running" },
                { a.tree:nodes(a)[ev[1] + 1].name, ev[2] })
    assert.equal(1, told())
    assert.same({ ok = true }, post('{"cmd":"resume","agent":1}'))
    bt.tick_all({ a, b }, 1)
    assert.equal(time + 2, a.time)
    assert.is_false(a:frozen())
    -- unknown agents are refused
    local r = post('{"cmd":"freeze","agent":7}')
    assert.same({ ok = false, error = "no agent 7" }, r)
    assert.same({ ok = false, error = "no agent nil" },
                post('{"cmd":"freeze"}'))
  end)

  it("lets go of an agent the game drops: collected, it is gone for the " ..
     "page, its breakpoints, watches and faults with it", function()
    local tree = guardtree()
    local keep = bt.agent(tree, { blackboard = { hp = 100 } })
    local drop = bt.agent(tree, { blackboard = { hp = 100 } }) -- (held
    serve { agents = { keep, drop } }          -- until the game lets go)
    debugmod.SWEEP = 0
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 4 end)) -- connected
    local cmd = D.command
    assert.is_true(cmd { cmd = "break", tree = "guard", node = "guard/patrol",
                         agent = 2 })
    assert.is_true(cmd { cmd = "watch", key = "hp", op = "<", value = 5,
                         agent = 2 })
    assert.is_true(cmd { cmd = "force", tree = "guard", node = "guard/patrol",
                         status = "failure", agent = 2 })
    assert.is_true(cmd { cmd = "step", agent = 2 }) -- frozen, then dropped
    drop = nil -- luacheck: ignore
    for _ = 1, 3 do collectgarbage() end
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "gone" and l.agent == 2 then return true end
      end
    end))
    local ok, err = cmd { cmd = "resume", agent = 2 }
    assert.is_nil(ok)
    assert.equal("no agent 2", err)
    ok, err = cmd { cmd = "freeze", agent = 2 }
    assert.is_nil(ok)
    assert.equal("no agent 2", err)
    ok, err = cmd { cmd = "break", tree = "guard", node = "guard/patrol",
                    agent = 2 }
    assert.equal("no agent 2", err)
    -- the one kept goes on, with its own breakpoints only
    keep:tick(1)
    assert.is_false(keep:frozen())
    -- a page that comes now does not hear of it (what a new page is sent
    -- does not grow with every agent gone), only of the one kept
    local late = subscribe()
    assert.is_true(pump(function()
      for _, l in ipairs(late.lines()) do
        if l.t == "tick" and l.agent == 1 then return true end
      end
    end))
    for _, l in ipairs(late.lines()) do assert.are_not.equal(2, l.agent) end
  end)

  it("steps through a tick node by node: what the blackboard held at " ..
     "each event", function()
    local tree = bt.tree(bt.sequence { name = "day",
      bt.named("wake", bt.action(function(_, bb)
        bb.wakes = (bb.wakes or 0) + 1
        return true
      end)),
      bt.check("wakes", ">", 0),
      bt.named("eat", bt.action(function(_, bb)
        bb.food, bb.hungry = { "bread", 2 }, nil
        return true
      end)),
      bt.named("work", bt.action(function(_, bb)
        bb.coins = (bb.coins or 0) + 1
        return true
      end)),
    }, { name = "day" })
    local a = bt.agent(tree)
    local other = bt.agent(tree)
    serve { agents = { a, other } }
    local c = subscribe()
    bt.tick_all({ a, other }, 1)
    local ok, err = D.command { cmd = "step", agent = 1, nodes = true }
    assert.is_nil(ok)
    assert.equal("agent 1 is not frozen", err)
    a:freeze(true)
    a.bb.hungry = true -- the game writes between two ticks
    assert.same({ ok = true },
                post('{"cmd":"step","agent":1,"nodes":true}'))
    bt.tick_all({ a, other }, 1)
    assert.is_true(a:frozen()) -- one tick, frozen again
    local line
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" and l.agent == 1 and l.tick == 2 then line = l end
      end
      return line ~= nil
    end))
    local names = {}
    for i, e in ipairs(line.events) do
      names[i] = tree:nodes(a)[e[1] + 1].name .. " " .. e[2]
    end
    assert.same({ "day running", "wake running", "wake success",
                  "check[2] success", "eat running", "eat success",
                  "work running", "work success", "day success" }, names)
    -- [event index (0-based), keys changed since the event before, unset]
    assert.same({ { 0, { hungry = true } }, { 2, { wakes = 2 } },
                  { 5, { food = { "bread", 2 } }, { "hungry" } },
                  { 7, { coins = 2 } } }, line.steps)
    -- the next tick, and the other agent's, are plain
    assert.same({ ok = true }, post('{"cmd":"step","agent":1}'))
    bt.tick_all({ a, other }, 1)
    assert.is_true(pump(function()
      local n = 0
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" then
          if l.agent ~= 1 or l.tick ~= 2 then assert.is_nil(l.steps) end
          if l.agent == 1 and l.tick == 3 then n = n + 1 end
        end
      end
      return n == 1
    end))
    -- an agent not streamed, or gone, is refused
    D.command { cmd = "record", agent = 2, on = false }
    other:freeze(true)
    ok, err = D.command { cmd = "step", agent = 2, nodes = true }
    assert.equal("agent 2 is not streamed", err)
    D.remove(a)
    ok, err = D.command { cmd = "step", agent = 1, nodes = true }
    assert.equal("no agent 1", err)
  end)

  it("steps through a tick that a reload starts, and through an error",
     function()
    local tree = bt.tree(bt.sequence { name = "t",
      bt.named("a", bt.action(function(_, bb) bb.x = 1; return true end)),
    }, { name = "t" })
    local agent = bt.agent(tree)
    serve { agents = { agent } }
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 3 end)) -- connected
    bt.tick_all({ agent }, 1)
    agent:freeze(true)
    tree:reload(bt.sequence { name = "t",
      bt.named("b", bt.action(function(_, bb) bb.y = 2; return true end)),
      bt.named("c", bt.action(function() error("boom") end)),
    })
    assert.is_true(D.command { cmd = "step", agent = 1, nodes = true })
    bt.tick_all({ agent }, 1)
    local line
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" and l.tick == 2 then line = l end
      end
      return line ~= nil
    end))
    assert.same({ from = 1, to = 2 }, line.reload)
    assert.matches("boom", line.error)
    local names = {}
    for i, e in ipairs(line.events) do
      names[i] = tree:nodes(agent)[e[1] + 1].name .. " " .. e[2]
    end
    -- the events of the new version; c's abort comes after the error
    assert.same({ "t running", "b running", "b success", "c running",
                  "c aborted", "t aborted" }, names)
    assert.same({ { 2, { y = 2 } } }, line.steps)
  end)

  it("breaks on a node's status for one agent or any, and when a " ..
     "blackboard condition becomes true", function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local b = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 4 end)) -- connected
    local cmd = D.command
    assert.is_true(cmd { cmd = "break", tree = "guard", status = "success",
                         node = "guard/flee/check[1]", agent = 1 })
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen()) -- the check failed
    a.bb.hp, b.bb.hp = 10, 10
    bt.tick_all({ a, b }, 1)
    assert.is_true(a:frozen())
    assert.is_false(b:frozen()) -- agent 1 only
    assert.is_true(cmd { cmd = "break", tree = "guard", status = "success",
                         node = "guard/flee/check[1]", agent = 1, on = false })
    assert.is_true(cmd { cmd = "resume", agent = 1 })
    -- a watch on any agent: when hp < 5 becomes true
    assert.is_true(cmd { cmd = "watch", key = "hp", op = "<", value = 5 })
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen())
    a.bb.hp = 3
    bt.tick_all({ a, b }, 1)
    assert.is_true(a:frozen())
    assert.is_false(b:frozen())
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "tick" and l.agent == 1 and l.watch == "hp < 5" then
          return l.frozen == -1
        end
      end
    end))
    cmd { cmd = "resume", agent = 1 }
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen()) -- still true: it did not become true
    a.bb.hp = 10
    bt.tick_all({ a, b }, 1)
    a.bb.hp = 3
    bt.tick_all({ a, b }, 1)
    assert.is_true(a:frozen()) -- true again
    cmd { cmd = "resume", agent = 1 }
    assert.is_true(cmd { cmd = "watch", key = "hp", op = "<", value = 5,
                         on = false })
    a.bb.hp = 10
    bt.tick_all({ a, b }, 1)
    a.bb.hp = 3
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen()) -- the watch is gone
    -- refusals
    local ok, err = cmd { cmd = "break", tree = "guard", node = "guard",
                          status = "maybe" }
    assert.is_nil(ok)
    assert.matches("status must be", err)
    ok, err = cmd { cmd = "watch", key = "hp", op = "=", value = 1 }
    assert.matches("op must be", err)
    ok, err = cmd { cmd = "watch", key = "hp", op = "<", value = {} }
    assert.matches("value must be", err)
    ok, err = cmd { cmd = "watch", key = "hp", op = "<", value = 1, agent = 9 }
    assert.equal("no agent 9", err)
    ok, err = cmd { cmd = "break", tree = "guard", node = "guard/gone" }
    assert.equal("no node 'guard/gone' in tree 'guard'", err)
    ok, err = cmd { cmd = "break", tree = "elsewhere", node = "guard" }
    assert.equal("no node 'guard' in tree 'elsewhere'", err)
    D.remove(a) -- withdrawn: the page is told; commands for it are refused
    assert.is_true(pump(function()
      for _, l in ipairs(c.lines()) do
        if l.t == "gone" and l.agent == 1 then return true end
      end
    end))
    ok, err = cmd { cmd = "resume", agent = 1 }
    assert.equal("no agent 1", err)
  end)

  it("streams only the agents recorded", function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local b = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve {}
    D.add(a)
    D.add(b, { record = false })
    local c = subscribe()
    bt.tick_all({ a, b }, 1)
    assert.same({ ok = true }, post('{"cmd":"record","agent":2,"on":true}'))
    assert.same({ ok = true }, post('{"cmd":"record","agent":1,"on":false}'))
    bt.tick_all({ a, b }, 1)
    assert.is_true(pump(function() return #c.lines() >= 6 end))
    local ticks = {}
    for _, l in ipairs(c.lines()) do
      if l.t == "tick" then
        ticks[#ticks + 1] = ("%d:%d"):format(l.agent, l.tick)
      end
    end
    assert.same({ "1:1", "2:2" }, ticks)
  end)

  it("serves the viewer's files and refuses other paths", function()
    local root = os.tmpname()
    os.remove(root)
    assert(os.execute("mkdir -p '" .. root .. "/sub' '" .. root .. "/.git'"))
    local function put(name, text)
      local f = assert(io.open(root .. "/" .. name, "w"))
      f:write(text)
      f:close()
    end
    put("index.html", "<p>viewer</p>")
    put("sub/viewer.js", "let x = 1;")
    put(".git/config", "secret")
    serve { root = root }
    local r = get("/")
    assert.truthy(r:find("^HTTP/1.1 200"))
    assert.truthy(r:find("text/html", 1, true))
    assert.truthy(r:find("<p>viewer</p>", 1, true))
    r = get("/sub/viewer.js?v=2")
    assert.truthy(r:find("text/javascript", 1, true))
    assert.truthy(r:find("let x = 1;", 1, true))
    assert.truthy(get("/nothing.html"):find("^HTTP/1.1 404"))
    for _, p in ipairs { "/../README.md", "/sub/../../README.md",
                         "/%2e%2e/README.md", "/.git/config",
                         "/sub/%2E%2E/index.html", "//etc/passwd",
                         "/a\\b" } do
      assert.truthy(get(p):find("^HTTP/1.1 403"), p)
    end
    assert.truthy(raw("DELETE /?token=" .. token() .. " HTTP/1.1\r\n" ..
                      host() .. "\r\n"):find("^HTTP/1.1 405"))
    os.execute("rm -rf '" .. root .. "'")
  end)

  it("serves a trace file to the viewer, larger than any queue", function()
    local path = os.tmpname()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local r = bt.record(path, { a })
    for _ = 1, 40 do a:tick(1) end
    r:close()
    http.MAX_QUEUED, debugmod.FEED = 1024, 500 -- the file is larger
    serve { file = path }
    local name = path:match("[^/]+$")
    assert.truthy(D.url:find("?trace=" .. name, 1, true))
    local body = get("/" .. name):match("\r\n\r\n(.*)$")
    local f = io.open(path)
    assert.equal(f:read("*a"), body)
    f:close()
    local _, live = get("/live"):match("^(HTTP/1.1 200).-\r\n\r\n(.*)$")
    assert.same({ live = false }, cjson.decode(live))
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 44 end))
    assert.equal(44, #c.lines())
    assert.equal(40, c.lines()[43].tick)
    assert.equal("end", c.lines()[44].t)
    assert.is_false(post('{"cmd":"resume","agent":1}').ok)
    os.remove(path)
  end)

  it("refuses malformed commands, and commands for agents reloaded or " ..
     "collected, without touching the game", function()
    local tree = guardtree()
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    local b = bt.agent(tree, { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    bt.tick_all({ a, b }, 1)
    -- what the game is before: statuses, blackboards, faults, freezing
    local function state()
      local out = {}
      for i, x in ipairs { a, b } do
        local bb = {}
        for k, v in x.bb:pairs() do bb[k] = v end
        out[i] = { x:node_statuses(), bb, x:frozen(),
                   x:forced("guard/patrol") }
      end
      return out
    end
    local before = state()
    local bodies = {
      "", "null", "42", '"set"', "[1,2", "[]", "{}", '{"cmd":null}',
      '{"cmd":["set"]}', '{"cmd":"__index"}', '{"cmd":"fly","agent":1}',
      ("["):rep(5000) .. ("]"):rep(5000),                  -- too deep
      '{"cmd":"set","agent":"1","key":"hp","value":1}',
      '{"cmd":"set","agent":1.5,"key":"hp","value":1}',
      '{"cmd":"set","agent":1,"key":7,"value":1}',
      '{"cmd":"set","agent":1,"key":"","value":1}',
      '{"cmd":"set","agent":1,"key":"hp","value":[1]}',
      '{"cmd":"set","agent":1,"key":"hp","value":NaN}',
      '{"cmd":"set","agent":1,"key":"hp","value":-Infinity}',
      '{"cmd":"set","agent":1,"key":"hp","value":1e999}',
      '{"cmd":"break","tree":"guard","node":["guard"]}',
      '{"cmd":"break","tree":"guard","node":"guard","agent":{}}',
      '{"cmd":"break","tree":"guard","node":"guard","status":"late"}',
      '{"cmd":"watch","key":"hp","op":"<","value":NaN}',
      '{"cmd":"watch","key":"hp","op":"<<","value":1}',
      '{"cmd":"watch","key":{},"op":"<","value":1}',
      '{"cmd":"force","tree":"guard","node":"guard/patrol",' ..
        '"status":"success","ticks":1e300}',
      '{"cmd":"force","tree":"guard","node":"guard/patrol",' ..
        '"status":"success","ticks":NaN}',
      '{"cmd":"force","tree":"guard","node":"guard/patrol",' ..
        '"status":"idle"}',
      '{"cmd":"resume"}', '{"cmd":"step","agent":-1}',
      '{"cmd":"freeze","agent":3}', '{"cmd":"freeze","agent":[1]}',
      '{"cmd":"step","agent":1,"nodes":true}', -- not frozen
      '{"cmd":"record","agent":3}',
    }
    for _, body in ipairs(bodies) do
      local r = post(body)
      assert.is_false(r.ok, body)
      assert.is_string(r.error, body)
      assert.is_true(#r.error < 200, body)
    end
    assert.same(before, state())
    bt.tick_all({ a, b }, 1) -- the game goes on
    assert.equal(2, a.time)
    -- a fault left on an agent that is reloaded goes with the old version;
    -- a command for the old version's node is refused
    assert.same({ ok = true }, post('{"cmd":"force","agent":1,' ..
      '"tree":"guard","node":"guard/patrol","status":"failure"}'))
    assert.equal("failure", a:forced("guard/patrol"))
    tree:reload(bt.reactive_selector { name = "guard",
      bt.named("wander", bt.action(function() return bt.RUNNING end)) })
    bt.tick_all({ a, b }, 1)
    assert.same({ "guard", "wander" }, a:running())
    assert.is_nil(a:forced("guard/wander"))
    local r = post('{"cmd":"force","agent":1,"tree":"guard",' ..
                   '"node":"guard/patrol","status":"failure"}')
    assert.is_false(r.ok)
    assert.equal("no node 'guard/patrol' in tree 'guard' of agent 1", r.error)
    -- for an agent collected: refused
    b = nil -- luacheck: ignore
    debugmod.SWEEP = 0
    for _ = 1, 3 do collectgarbage() end
    D.poll()
    r = post('{"cmd":"set","agent":2,"key":"hp","value":1}')
    assert.same({ ok = false, error = "no agent 2" }, r)
    a:tick(1)
    assert.equal(4, a.time)
  end)

  it("survives garbage, disconnects, idle and slow clients", function()
    http.REQUEST_TIMEOUT = 0.2
    http.MAX_QUEUED = 4096
    http.MAX_HEADER = 1024
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    -- garbage
    assert.truthy(raw("\0\1\2garbage\r\n\r\n"):find("^HTTP/1.1 400"))
    assert.truthy(raw("GET\r\n\r\n"):find("^HTTP/1.1 400"))
    -- too large: headers that never end, a body over the limit
    assert.truthy(raw("GET / HTTP/1.1\r\nX: " .. ("x"):rep(2000))
                  :find("^HTTP/1.1 413"))
    assert.truthy(raw("POST /command HTTP/1.1\r\nContent-Length: 999999" ..
                      "\r\n\r\n{}"):find("^HTTP/1.1 413"))
    -- a client that connects and says nothing, one that stops mid-request
    local idle, half = connect(), connect()
    half.sock:send("GET /live HTTP/1.1\r\nHo")
    assert.is_true(pump(function()
      read(idle); read(half)
      return idle.closed and half.closed
    end))
    assert.truthy(idle.buf:find("^HTTP/1.1 408"))
    -- clients that go away: before the answer, and in the middle of the
    -- stream
    local gone = connect()
    gone.sock:send("GET /live HTTP/1.1\r\n\r\n")
    gone.sock:close()
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 3 end))
    c.sock:close()
    -- a stream client that never reads: dropped once its queue is full
    local slow = connect()
    slow.sock:setoption("keepalive", false)
    slow.sock:send("GET /events?token=" .. token() .. " HTTP/1.1\r\n" ..
                   host() .. "\r\n")
    assert.is_true(pump(function() return select(2, D.clients()) == 1 end))
    local big = ("x"):rep(40000)
    for i = 1, 300 do
      a.bb.filler = big .. i
      a:tick(0.1)
      D.poll()
    end
    assert.is_true(pump(function() return D.clients() == 0 end))
    -- more connections than allowed: newcomers take the places of the
    -- idle ones (oldest first), so idle connections never keep a page out
    http.MAX_CONNECTIONS = 2
    local many = {}
    for i = 1, 4 do
      many[i] = connect()
      assert.is_true(pump(function() return D.clients() == math.min(i, 2) end))
    end
    assert.is_true(pump(function()
      for i = 1, 4 do read(many[i]) end
      return many[1].closed and many[2].closed and D.clients() == 2
    end))
    assert.is_false(many[3].closed or many[4].closed)
    for i = 1, 4 do many[i].sock:close() end
    assert.is_true(pump(function() return D.clients() == 0 end))
    http.MAX_CONNECTIONS = 64
    -- the game and the server still work
    a:tick(0.1)
    assert.truthy(get("/live"):find("^HTTP/1.1 200"))
    slow.sock:close()
    idle.sock:close()
    half.sock:close()
  end)
end)

describe("bt.debug.serve, a server on the developer's machine", function()
  -- (docs/DEBUGGER.md, "Security"; the repro debug_cross_origin_command)
  local function request(method, path, headers, body)
    local text = method .. " " .. path .. " HTTP/1.1\r\n"
    for _, h in ipairs(headers) do text = text .. h .. "\r\n" end
    body = body or ""
    if method == "POST" then
      text = text .. "Content-Length: " .. #body .. "\r\n"
    end
    local r = raw(text .. "\r\n" .. body)
    return tonumber(r:match("^HTTP/1.1 (%d+)")), r:match("\r\n\r\n(.*)$"), r
  end

  it("refuses a page of another origin and another Host (DNS rebinding)",
     function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    a:tick(1)
    local own = "Host: 127.0.0.1:" .. port
    local body = '{"cmd":"set","agent":1,"key":"pwned","value":true}'
    -- a "simple" cross-origin POST (text/plain: no preflight), with the
    -- token even: refused for its Origin
    for _, origin in ipairs { "http://evil.example", "null",
                              "http://127.0.0.1:" .. (port + 1),
                              "https://127.0.0.1:" .. port } do
      local code, answer = request("POST", "/command?token=" .. token(),
        { own, "Origin: " .. origin, "Content-Type: text/plain" }, body)
      assert.equal(403, code, origin)
      assert.equal("requests from pages of other origins are refused",
                   cjson.decode(answer).error)
    end
    -- another Host, whatever else the request has
    for _, h in ipairs { "Host: attacker.example", "Host: attacker.example:" ..
                         port, "Host: 127.0.0.1", "Host: 127.0.0.1:1",
                         "Host: 127.0.0.1:" .. port .. ".evil.example" } do
      for _, path in ipairs { "/events?token=" .. token(), "/live", "/",
                              "/command?token=" .. token() } do
        local code, answer = request(path:find("command") and "POST" or "GET",
                                     path, { h }, body)
        assert.equal(403, code, h .. " " .. path)
        assert.matches("^unknown Host", cjson.decode(answer).error)
      end
    end
    -- no Host at all, or two
    assert.equal(403, (request("GET", "/live?token=" .. token(), {})))
    assert.equal(400, (request("GET", "/live?token=" .. token(),
                               { own, "Host: attacker.example" })))
    D.poll()
    a:tick(1)
    assert.is_nil(a.bb.pwned)
    -- the server's own names and origins are answered
    for _, name in ipairs { "127.0.0.1", "localhost", "LocalHost", "[::1]" } do
      local code, answer = request("POST", "/command", { "Host: " .. name ..
        ":" .. port, "Origin: http://" .. name:lower() .. ":" .. port,
        "X-Bonsai-Token: " .. token(), "Content-Type: application/json" },
        '{"cmd":"set","agent":1,"key":"ok","value":"' .. name .. '"}')
      assert.equal(200, code, name)
      assert.same({ ok = true }, cjson.decode(answer))
    end
    assert.equal("[::1]", a.bb.ok)
  end)

  it("asks for the token for what shows or changes the game; the page's " ..
     "files are public", function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    a:tick(1)
    local own = "Host: 127.0.0.1:" .. port
    local wrong = token():gsub("^.", function(ch)
      return ch == "0" and "1" or "0"
    end)
    for _, t in ipairs { "", "?token=", "?token=" .. wrong,
                         "?token=" .. token():sub(2),
                         "?token=" .. token():upper() } do
      for _, path in ipairs { "/events", "/live", "/command" } do
        local code, answer = request(path == "/command" and "POST" or "GET",
          path .. t, { own }, '{"cmd":"freeze","agent":1}')
        assert.equal(403, code, path .. t)
        assert.matches("needs the token", cjson.decode(answer).error)
      end
      local code = request("GET", "/index.html" .. t, { own })
      assert.equal(200, code) -- the viewer's code, anyone may read
    end
    assert.is_false(a:frozen())
    -- the token in the query or in a header
    assert.equal(200, (request("GET", "/live?token=" .. token(), { own })))
    assert.equal(200, (request("GET", "/live", { own, "X-Bonsai-Token: " ..
                                                      token() })))
    -- every answer tells the browser not to sniff, frame or share it
    local _, _, r = request("GET", "/index.html", { own })
    for _, h in ipairs { "X-Content-Type-Options: nosniff",
                         "X-Frame-Options: DENY",
                         "Referrer-Policy: no-referrer",
                         "Cross-Origin-Resource-Policy: same-origin" } do
      assert.truthy(r:find(h, 1, true), h)
    end
  end)

  it("draws each token from the system's random source", function()
    local seen = {}
    for _ = 1, 3 do
      math.randomseed(42) -- (a token from math.random would repeat)
      D = debugmod.new(bt)
      D.serve { port = 0 }
      local t = D.url:match("token=(%x+)$")
      assert.equal(32, #t)
      assert.is_nil(seen[t])
      seen[t] = true
      D.close()
    end
    -- a game may give its own
    D = debugmod.new(bt)
    port = D.serve { port = 0, token = "my-own-token-of-20c" }
    assert.matches("%?token=my%-own%-token%-of%-20c$", D.url)
    assert.has_error(function()
      debugmod.new(bt).serve { port = 0, token = "short" }
    end)
    assert.is_true(http.same("abcdefghijklmnopq", "abcdefghijklmnopq"))
    assert.is_false(http.same("abcdefghijklmnopr", "abcdefghijklmnopq"))
    assert.is_false(http.same("abc", "abcdefghijklmnopq"))
    assert.is_false(http.same(nil, "abcdefghijklmnopq"))
  end)

  it("answers the host names the game gives", function()
    D = debugmod.new(bt)
    port = D.serve { port = 0, host = "0.0.0.0", allow_remote = true,
                     hosts = { "devbox.lan" } }
    assert.matches("^http://127%.0%.0%.1:" .. port .. "/", D.url)
    assert.equal(200, (request("GET", "/live?token=" .. token(),
      { "Host: devbox.lan:" .. port, "Origin: http://devbox.lan:" .. port })))
    assert.equal(403, (request("GET", "/live?token=" .. token(),
      { "Host: other.lan:" .. port })))
  end)

  it("never lets idle connections keep the page out", function()
    http.REQUEST_TIMEOUT = 3600 -- (they would stay an hour)
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    local idle = {}
    for i = 1, 500 do
      local c = socket.tcp()
      c:settimeout(0)
      c:connect("127.0.0.1", port)
      idle[i] = c
      if i % 32 == 0 then D.poll() end -- (the listen queue is bounded)
    end
    D.poll()
    -- the page, while they are all there
    local code = request("GET", "/live?token=" .. token(),
                         { "Host: 127.0.0.1:" .. port })
    assert.equal(200, code)
    assert.is_true(D.clients() <= http.MAX_CONNECTIONS)
    for _, c in ipairs(idle) do c:close() end
  end)

  it("bounds the event streams and what is queued for them", function()
    http.MAX_QUEUED = 64 * 1024
    http.MAX_QUEUED_ALL = 256 * 1024
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    -- 20 pages that never read: 16 streams, 4 refused
    local pages, refused = {}, 0
    for i = 1, 20 do
      pages[i] = connect()
      pages[i].sock:setoption("keepalive", false)
      pages[i].sock:send("GET /events?token=" .. token() .. " HTTP/1.1\r\n" ..
                         host() .. "\r\n")
      pump(function()
        read(pages[i])
        return pages[i].buf:find("\r\n\r\n", 1, true) ~= nil
      end)
      if pages[i].buf:find("^HTTP/1.1 503") then refused = refused + 1 end
    end
    assert.equal(4, refused)
    assert.equal(16, select(2, D.clients()))
    -- 30 MB of lines: the game's heap stays bounded, the streams that
    -- cannot keep up are dropped
    collectgarbage()
    local base, most = collectgarbage("count"), 0
    local big = ("x"):rep(100000)
    for i = 1, 300 do
      a.bb.filler = big .. i
      a:tick(0.1)
      D.poll()
      if i % 10 == 0 then
        collectgarbage()
        most = math.max(most, collectgarbage("count") - base)
      end
    end
    assert.is_true(most < 4 * 1024, ("the heap grew by %.0f KB"):format(most))
    assert.is_true(select(2, D.clients()) < 16)
    for _, c in ipairs(pages) do c.sock:close() end
    -- a page that reads gets its stream
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 4 end))
    c.sock:close()
  end)

  it("sends a new page the agents there are, not every agent gone",
     function()
    local tree = guardtree()
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    serve { agents = { a } }
    for _ = 1, 1000 do
      local b = bt.agent(tree, { blackboard = { hp = 1 } })
      D.add(b)
      b:tick(1)
      D.remove(b)
    end
    a:tick(1)
    local c = subscribe()
    assert.is_true(pump(function() return #c.lines() >= 4 end))
    polls(5)
    local kinds = {}
    for _, l in ipairs(c.lines()) do
      kinds[#kinds + 1] = l.t .. (l.agent and ("%d"):format(l.agent) or "")
    end
    assert.same({ "header", "tree", "agent1", "tick1" }, kinds)
    c.sock:close()
  end)
end)

describe("bt.debug's commands", function()
  it("never raise, whatever they are given (poll and bt.debug.command)",
     function()
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    a:tick(1)
    local obs = a.bb:observe("hp", function()
      error("the game's observer says no")
    end)
    local weird = { "a\0b", "", ("k"):rep(70000), 0 / 0, math.huge, -1, 1.5,
                    true, {}, { 1, 2 }, { x = { y = {} } }, cjson.null }
    local fields = { "agent", "key", "value", "op", "tree", "node", "status",
                     "ticks", "on", "nodes" }
    local names = { "set", "break", "watch", "force", "freeze", "resume",
                    "step", "record" }
    local n = 0
    for _, name in ipairs(names) do
      for _, f in ipairs(fields) do
        for _, w in ipairs(weird) do
          local cmd = { cmd = name, agent = 1, key = "hp", value = 1,
                        op = "<", tree = "guard", node = "guard/patrol",
                        status = "success" }
          cmd[f] = w
          local ok, r, err = pcall(D.command, cmd)
          assert.is_true(ok, name .. "." .. f .. ": " .. tostring(r))
          assert.is_true(r == true or type(err) == "string")
          n = n + 1
        end
      end
    end
    assert.is_true(n > 900)
    for _, cmd in ipairs { "not a table", 3, false, { cmd = {} },
                           { cmd = ("x"):rep(100000) } } do
      local ok, r, err = pcall(D.command, cmd)
      assert.is_true(ok)
      assert.is_nil(r)
      assert.is_true(#err < 200)
    end
    -- a NUL in a key is refused by the command itself
    assert.same({ nil, "key must be a string without NUL bytes" },
                { D.command { cmd = "set", agent = 1, key = "a\0b", value = 1 } })
    assert.same({ ok = false, error = "key must be a string without NUL bytes" },
                post('{"cmd":"set","agent":1,"key":"a\\u0000b","value":1}'))
    -- the game's observer raised: refused with its message
    local r, err = D.command { cmd = "set", agent = 1, key = "hp", value = 5 }
    assert.is_nil(r)
    assert.matches("the command failed: .*the game's observer says no", err)
    a.bb:unobserve(obs)
    bt.tick_all({ a }, 1)
    assert.is_true(a.time >= 2)
  end)

  it("keep watches and breakpoints within their bounds", function()
    debugmod.MAX_WATCHES, debugmod.MAX_WATCHES_KEY = 10, 4
    debugmod.MAX_BREAKPOINTS = 5
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a } }
    a:tick(1)
    for i = 1, 4 do
      assert.is_true(D.command { cmd = "watch", key = "hp", op = "==",
                                 value = i })
    end
    assert.same({ nil, "too many watches (4 of key 'hp'): take one away " ..
                  "first" }, { D.command { cmd = "watch", key = "hp",
                                           op = "==", value = 5 } })
    for i = 1, 6 do
      assert.is_true(D.command { cmd = "watch", key = "k" .. i, op = "==",
                                 value = i })
    end
    assert.same({ nil, "too many watches (10): take one away first" },
                { D.command { cmd = "watch", key = "k7", op = "==",
                              value = 7 } })
    -- taken away: room again; the same watch twice is one
    assert.is_true(D.command { cmd = "watch", key = "k1", op = "==",
                               value = 1, on = false })
    assert.is_true(D.command { cmd = "watch", key = "k7", op = "==",
                               value = 7 })
    assert.is_true(D.command { cmd = "watch", key = "k7", op = "==",
                               value = 7 })
    -- breakpoints: five rules; clearing one that is not there costs nothing
    for _, s in ipairs { "running", "success", "failure", "aborted",
                         "skipped" } do
      assert.is_true(D.command { cmd = "break", tree = "guard",
                                 node = "guard/patrol", status = s })
    end
    assert.same({ nil, "too many breakpoints (5): take one away first" },
                { D.command { cmd = "break", tree = "guard",
                              node = "guard/flee" } })
    for i = 1, 1000 do
      assert.is_true(D.command { cmd = "break", tree = "t" .. i, node = "x",
                                 on = false })
    end
    assert.is_true(D.command { cmd = "break", tree = "guard",
                               node = "guard/patrol", status = "running",
                               on = false })
    assert.is_true(D.command { cmd = "break", tree = "guard",
                               node = "guard/flee" })
  end)

  it("look at a watch only when its key changes, or once when it is new",
     function()
    -- (the cost of a tick grows with what it changed, not with the number
    -- of watches: the repro debug_watch_flood, 2,000 watches)
    local a = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    local b = bt.agent(guardtree(), { blackboard = { hp = 100 } })
    serve { agents = { a, b } }
    bt.tick_all({ a, b }, 1)
    for i = 1, 2000 do
      assert.is_true(D.command { cmd = "watch", key = "k" .. i, op = "==",
                                 value = i })
    end
    assert.is_true(D.command { cmd = "watch", key = "hp", op = "<",
                               value = 50, agent = 2 })
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen() or b:frozen())
    a.bb.k77 = 77 -- a's k77 == 77 became true
    bt.tick_all({ a, b }, 1)
    assert.is_true(a:frozen())
    assert.is_false(b:frozen())
    a.bb.hp = 10 -- not a's watch
    b.bb.hp = 10
    a:freeze(false)
    bt.tick_all({ a, b }, 1)
    assert.is_false(a:frozen())
    assert.is_true(b:frozen())
  end)
end)

describe("tests/live/game.lua", function()
  -- Waits for cond() (polling; a deadline only in case it never comes).
  local function eventually(cond)
    local t0 = socket.gettime()
    repeat
      local v = cond()
      if v then return v end
      socket.sleep(0.01)
    until socket.gettime() - t0 > 60
    error("waited 60 s in vain")
  end

  it("serves its game live on 127.0.0.1, does what its input says and " ..
     "stops when it closes", function()
    local out = os.tmpname()
    local p = assert(io.popen(luaver.interpreter ..
                              " tests/live/game.lua 0 --stdin > " .. out, "w"))
    local function said()
      local f = io.open(out)
      local text = f and f:read("*a") or ""
      if f then f:close() end
      return text
    end
    local url = eventually(function()
      return said():match("^live: (http://127%.0%.0%.1:%d+/%?token=%x+)\n")
    end)
    local gport, tok = url:match(":(%d+)/%?token=(%x+)$")
    local c = assert(socket.connect("127.0.0.1", tonumber(gport)))
    c:settimeout(0)
    c:send("GET /events?token=" .. tok .. " HTTP/1.1\r\nHost: 127.0.0.1:" ..
           gport .. "\r\n\r\n")
    local got = ""
    local function stream()
      local d, e, part = c:receive(65536)
      got = got .. (d or part or "")
      assert(e ~= "closed", "the stream closed")
      return got
    end
    eventually(function() return stream():find('"t":"tick"', 1, true) end)
    assert.truthy(got:find('"t":"header"', 1, true))
    assert.truthy(got:find('"type":"control"', 1, true)) -- (the patrol)
    -- a command on its input, answered, and seen in the stream
    p:write("hurt 2\n")
    p:flush()
    eventually(function() return said():find("\ndone hurt 2\n", 1, true) end)
    eventually(function() return stream():find('"hp":1[01]', 1) end)
    c:close()
    assert.truthy(p:close()) -- its input closed: it stops
    os.remove(out)
  end)
end)
