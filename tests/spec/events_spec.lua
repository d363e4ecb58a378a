-- events_spec: events (docs/NODES.md, "Events"), tick by tick: a:send and
-- bt.send queue an event that is delivered to the agent's next tick (every
-- node reached sees it; several of one name: the payload of the last) and
-- gone at that tick's end; bt.event, bt.wait_event and bt.guard{ event };
-- the bounded queue and a:dropped_events(); waking sleepers; events sent
-- from a leaf of the same agent; observers; traces; saves; bad input.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of = trace.agent_of

describe("an event", function()
  it("is delivered to the agent's next tick, and to that tick only",
     function()
    local a = agent_of(bt.reactive_selector {
      bt.sequence { bt.event("heard"), t:action("Hear", "S") },
      t:action("Idle", "R"),
    })
    assert.equal("running | enter Idle; tick Idle", t:step(a, 1))
    a:send("heard")
    assert.equal("success | enter Hear; tick Hear; exit Hear success; " ..
                 "abort Idle", t:step(a, 1))
    assert.equal("running | enter Idle; tick Idle", t:step(a, 1))
    a:send("other", 1)
    assert.equal("running | tick Idle", t:step(a, 1))
  end)

  it("writes its payload to the key first; several of one name: the " ..
     "last's, and bt.event counts once", function()
    local seen = {}
    local a = agent_of(bt.sequence {
      bt.event("heard", { key = "noise" }),
      bt.action(function(_, bb) seen[#seen + 1] = bb.noise; return true end),
    })
    local where = { x = 3, y = 4 }
    a:send("heard", where)
    assert.equal("success", a:tick(1))
    assert.equal(where, seen[1]) -- the very table
    assert.equal(where, a.bb.noise)
    a:send("heard", 1)
    a:send("heard", "north")
    assert.equal("success", a:tick(1))
    assert.equal("north", seen[2])
    a:send("heard") -- nil clears the key
    assert.equal("success", a:tick(1))
    assert.is_nil(a.bb.noise)
    assert.equal("failure", a:tick(1))
  end)

  it("reaches every node of the tick, observers see its payload", function()
    local log = {}
    local a = agent_of(bt.parallel {
      bt.event("go", { key = "first" }), bt.event("go", { key = "second" }),
    })
    a.bb:observe("second", function(_, key, new, old)
      log[#log + 1] = key .. "=" .. tostring(new) .. " was " .. tostring(old)
    end)
    a:send("go", 7)
    assert.equal("success", a:tick(1))
    assert.equal(7, a.bb.first)
    assert.same({ "second=7 was nil" }, log)
  end)

  it("sent from a leaf of the same agent waits for the next tick", function()
    local a = agent_of(bt.selector {
      bt.event("ping"),
      bt.action(function(agent) agent:send("ping"); return false end),
    })
    assert.equal("failure", a:tick(1))
    assert.equal("success", a:tick(1))
  end)

  it("an interrupted tick takes the events, unread", function()
    local a = agent_of(bt.event("e"))
    local on = true
    a:add_interrupt(function() return on end)
    a:send("e")
    assert.equal("aborted", a:tick(1))
    on = false
    assert.equal("failure", a:tick(1))
  end)

  it("in a remapping subtree, writes the caller's key", function()
    local inner = bt.tree(bt.event("heard", { key = "noise" }),
                          { name = "ear" })
    local a = agent_of(bt.subtree(inner, { remap = { noise = "sound" } }))
    a:send("heard", "bang")
    assert.equal("success", a:tick(1))
    assert.equal("bang", a.bb.sound)
    assert.is_nil(a.bb.noise)
  end)
end)

describe("the queue", function()
  it("holds 64 events, or events = n; the oldest dropped, counted",
     function()
    local a = agent_of(bt.event("e", { key = "x" }))
    for k = 1, 70 do a:send("e", k) end
    assert.equal(6, a:dropped_events())
    assert.equal("success", a:tick(1))
    assert.equal(70, a.bb.x)
    local b = agent_of(bt.event("e", { key = "x" }), { events = 2 })
    b:send("e", 1); b:send("e", 2); b:send("e", 3)
    assert.equal(1, b:dropped_events())
    local c = agent_of(bt.event("e"), { events = 0 })
    c:send("e")
    assert.equal(1, c:dropped_events())
    assert.equal("failure", c:tick(1))
    assert.has_error(function()
      agent_of(bt.event("e"), { events = -1 })
    end)
    assert.has_error(function()
      agent_of(bt.event("e"), { events = 1.5 })
    end)
  end)

  it("bt.send sends to every agent of a list; an element that is no " ..
     "agent sends to none", function()
    local tree = bt.tree(bt.event("alarm", { key = "where" }), { name = "T" })
    local list = {}
    for k = 1, 5 do list[k] = bt.agent(tree) end
    local spot = { x = 1 }
    bt.send(list, "alarm", spot)
    for k = 1, 5 do
      assert.equal("success", list[k]:tick(1))
      assert.equal(spot, list[k].bb.where)
    end
    list[3] = "nope"
    assert.has_error(function() bt.send(list, "alarm") end,
                     "bt.send: element 3 is not an agent")
    assert.equal("failure", list[1]:tick(1)) -- nothing was sent
  end)

  it("lets go of a table payload once its tick is over, or its agent is " ..
     "collected", function()
    local a = agent_of(bt.event("e", { key = "x" }))
    local weak = setmetatable({}, { __mode = "v" })
    weak[1] = {}
    a:send("e", weak[1])
    a:tick(1)
    a.bb.x = nil
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[1])
    weak[2] = {}
    local b = agent_of(bt.event("e"), { events = 1 })
    b:send("e", weak[2])
    b:send("e", 2) -- drops it: gone at the next send or tick call
    b:tick(1)
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[2])
    weak[3] = {}
    local list = {}
    for k = 1, 50 do list[k] = agent_of(bt.event("e")) end
    bt.send(list, "e", weak[3]) -- one payload for them all
    bt.tick_all(list, 1)
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[3])
    weak[4] = {}
    local c = agent_of(bt.event("e"))
    c:send("e", weak[4])
    c = nil -- never ticked: collected, its queue goes with it
    for _ = 1, 3 do collectgarbage() end
    assert.is_nil(weak[4])
  end)
end)

describe("bt.wait_event", function()
  it("runs until its event comes, then succeeds (payload to its key); " ..
     "fails after its timeout", function()
    local a = agent_of(bt.wait_event("go", { key = "where", timeout = 2 }))
    assert.equal("running", a:tick(1))
    a:send("go", "home")
    assert.equal("success", a:tick(1))
    assert.equal("home", a.bb.where)
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("failure", a:tick(1))
    local b = agent_of(bt.wait_event("go"))
    for _ = 1, 50 do assert.equal("running", b:tick(100)) end
  end)
end)

describe("bt.guard{ event = ... }", function()
  it("'none': its child starts only in a tick its event is delivered to, " ..
     "and goes on after", function()
    local a = agent_of(bt.reactive_selector {
      bt.guard { event = "alarm", t:action("X", "R") },
      t:action("Idle", "R"),
    })
    assert.equal("running | enter Idle; tick Idle", t:step(a, 1))
    a:send("alarm")
    assert.equal("running | enter X; tick X; abort Idle", t:step(a, 1))
    assert.equal("running | tick X", t:step(a, 1))
  end)

  it("'lower': takes over a running lower-priority sibling in that tick",
     function()
    local a = agent_of(bt.selector {
      bt.guard { event = "alarm", abort = "lower", t:action("X", "R") },
      t:action("Idle", "R"),
    })
    assert.equal("running | enter Idle; tick Idle", t:step(a, 1))
    assert.equal("running | tick Idle", t:step(a, 1))
    a:send("alarm")
    assert.equal("running | abort Idle; enter X; tick X", t:step(a, 1))
  end)

  it("takes 'none' and 'lower' only (an event holds for one tick)",
     function()
    assert.truthy(trace.tree_error(bt.selector {
      bt.guard { event = "a", abort = "self", t:action("X", "R") },
    }):find("an event guard's abort is \"none\" or \"lower\"", 1, true))
    assert.equal("event_guard", bt.guard { event = "a", bt.wait(1) }.type)
    assert.equal("guard", bt.guard { bt.is_set "k", bt.wait(1) }.type)
  end)

  it("the builder has them too", function()
    local a = bt.builder()
      :selector()
        :event_guard { event = "alarm", abort = "lower" }
          :wait_event("calm", { key = "mood" })
        :action(function() return bt.RUNNING end)
      :build { name = "B" }
    local ag = bt.agent(a)
    assert.equal("running", ag:tick(1))
    ag:send("alarm")
    assert.equal("running", ag:tick(1))
    ag:send("calm", "ok")
    assert.equal("success", ag:tick(1))
    assert.equal("ok", ag.bb.mood)
  end)
end)

describe("sleeping agents", function()
  it("are woken by an event; bt.tick_all ticks them in that call",
     function()
    local tree = bt.tree(bt.reactive_selector {
      bt.sequence { bt.event("alarm"), t:action("Run", "R") },
      bt.action(function() return bt.sleep(1e6) end),
    }, { name = "T" })
    local list = {}
    for k = 1, 40 do list[k] = bt.agent(tree) end
    for _ = 1, 3 do assert.is_nil(bt.tick_all(list, 1)) end
    assert.truthy(list[7]:sleeping())
    bt.send({ list[7], list[30] }, "alarm")
    assert.is_nil(list[7]:sleeping())
    t:take()
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal("enter Run; tick Run; enter Run; tick Run", t:take())
    assert.same({ "reactive_selector", "sequence[1]", "Run" },
                list[30]:running())
  end)
end)

describe("traces", function()
  it("record each event delivered, with its payload, at its tick", function()
    local a = agent_of(bt.event("heard", { key = "noise" }))
    a:trace(64)
    a:tick(1)
    local where = { x = 3 }
    a:send("heard", where)
    a:send("other", 2)
    a:tick(1)
    local evs = {}
    for _, e in ipairs(a:events()) do
      if e.event == "event" then evs[#evs + 1] = e end
    end
    assert.equal(2, #evs)
    assert.equal("heard", evs[1].name)
    assert.equal(where, evs[1].payload)
    assert.equal(2, evs[1].tick)
    assert.equal("other", evs[2].name)
    assert.equal(2, evs[2].payload)
  end)
end)

describe("saves", function()
  it("keep the queued events (table payloads too) and the dropped count",
     function()
    local tree = bt.tree(bt.event("heard", { key = "noise" }), { name = "T" })
    local a = bt.agent(tree, { events = 2 })
    a:send("heard", "a")
    a:send("heard", { x = 1, y = { 2 } })
    a:send("heard", { x = 5 })
    local s = a:save()
    local b = bt.agent(tree, { restore = s })
    assert.equal(1, b:dropped_events())
    assert.equal("success", b:tick(1))
    assert.same({ x = 5 }, b.bb.noise)
  end)
end)

describe("bad input", function()
  it("names must be non-empty strings of at most 1024 bytes, without NUL",
     function()
    local a = agent_of(bt.event("e"))
    for _, bad in ipairs { 1, true, {}, "", "a\0b", ("x"):rep(1025) } do
      assert.has_error(function() a:send(bad) end)
      assert.has_error(function() bt.send({ a }, bad) end)
    end
    a:send(("x"):rep(1024))
    assert.truthy(trace.tree_error(bt.event(1))
                    :find("argument 'event' must be an event name", 1, true))
    assert.truthy(trace.tree_error(bt.event(""))
                    :find("argument 'event' must be an event name", 1, true))
  end)

  it("payloads must be what a:save can save", function()
    local a = agent_of(bt.event("e"))
    local cyclic = {}
    cyclic.self = cyclic
    local err = select(2, pcall(a.send, a, "e", function() end))
    assert.truthy(err:find("a payload is a value a:save can save", 1, true))
    assert.truthy(err:find("a function value cannot be saved", 1, true))
    assert.has_error(function() a:send("e", cyclic) end)
    assert.has_error(function() a:send("e", setmetatable({}, {})) end)
    assert.has_error(function() a:send("e", { f = print }) end)
    assert.has_error(function() a:send("e", io.stdout) end)
    assert.has_error(function() bt.send({ a }, "e", print) end)
    assert.equal("failure", a:tick(1)) -- nothing was queued
  end)

  it("a table that is no agent, or a broken one, is refused", function()
    assert.has_error(function() bt.send({ {} }, "e") end,
                     "bt.send: element 1 is not an agent")
    local a = agent_of(bt.event("e"))
    local broken = setmetatable({}, getmetatable(a))
    assert.has_error(function() broken:send("e") end)
    assert.has_error(function() a.send({}, "e") end)
  end)

  it("an agent already collected (seen again from a finalizer) is refused",
     function()
    local seen
    local function finalized(fn) -- an object whose finalizer calls fn
      if newproxy then -- 5.1, LuaJIT
        local p = newproxy(true)
        getmetatable(p).__gc = fn
        return p
      end
      return setmetatable({}, { __gc = fn })
    end
    do
      local a = agent_of(bt.event("e"))
      local _ = finalized(function() seen = a end)
    end
    for _ = 1, 3 do collectgarbage() end
    assert.is_table(seen)
    assert.has_error(function() seen:send("e") end)
    assert.has_error(function() bt.send({ seen }, "e") end,
                     "bt.send: element 1 is not an agent")
    assert.has_error(function() seen:dropped_events() end)
  end)
end)
