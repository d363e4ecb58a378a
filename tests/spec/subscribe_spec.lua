-- subscribe_spec: subscriptions to an agent's ticks (docs/DEBUGGER.md):
-- any number per agent, each with its own filter, none displacing another
-- (a:on_tick and bt.record included); a:unsubscribe, bt.subscribe for a
-- list, bt.unsubscribe; the agent traced only while a subscriber wants
-- events.
local bt = require "bonsai"

local function run() return bt.RUNNING end

-- "path status[+]" (agent events: their name) of a list of events
local function lines(events)
  local out = {}
  for _, e in ipairs(events) do
    out[#out + 1] = e.event or (e.node .. " " .. e.status ..
                                (e.again and "+" or ""))
  end
  return table.concat(out, "; ")
end

-- a sequence running walk after a condition that holds
local function walker()
  return bt.tree(bt.sequence { name = "s",
    bt.named("ok", bt.condition(function() return true end)),
    bt.named("walk", bt.action(run)) }, { name = "sub.walker" })
end

describe("a:subscribe", function()
  it("calls each subscriber after every tick with that tick's events",
     function()
    local a = bt.agent(walker())
    local got, seen = {}, {}
    local s1 = a:subscribe(function(ag, events, status, err)
      assert.equal(a, ag)
      assert.is_nil(err)
      got[#got + 1] = status .. ": " .. lines(events)
    end)
    local last, same
    a:subscribe(function(_, events)
      seen[#seen + 1] = #events
      assert.equal(#seen, events.tick)
      assert.equal(0.5 * #seen, events.time)
      -- the same event in another tick: the same (read-only) table
      if #seen == 3 then same = rawequal(last[2], events[2]) end
      last = events
    end)
    a:tick(0.5)
    a:tick(0.5)
    assert.same({ "running: s running; s/ok success; s/walk running",
                  "running: s running+; s/walk running+" }, got)
    assert.same({ 3, 2 }, seen)
    assert.is_true(a:unsubscribe(s1))
    assert.is_false(a:unsubscribe(s1)) -- once
    a:tick(0.5)
    assert.equal(2, #got)
    assert.same({ 3, 2, 2 }, seen) -- the other goes on
    assert.is_true(same)
  end)

  it("gives each subscriber the events its filter passes", function()
    local a = bt.agent(walker())
    local by = {}
    local function keep(name, filter)
      by[name] = {}
      a:subscribe(function(_, events)
        by[name][#by[name] + 1] = lines(events)
      end, filter)
    end
    keep("success", { status = "success" })
    keep("leaves", { node = "/walk$" })
    keep("changes", { again = false })
    keep("fn", function(e) return e.node == "s" end)
    keep("two", { status = { "success", "running" }, again = false })
    a:tick(1)
    a:tick(1)
    assert.same({ "s/ok success", "" }, by.success)
    assert.same({ "s/walk running", "s/walk running+" }, by.leaves)
    assert.same({ "s running; s/ok success; s/walk running", "" }, by.changes)
    assert.same({ "s running", "s running+" }, by.fn)
    assert.same(by.changes, by.two)
  end)

  it("without events, needs no trace; with events, traces the agent only " ..
     "while subscribed", function()
    local a = bt.agent(walker())
    local n = 0
    local s = a:subscribe(function(_, events)
      assert.is_nil(events)
      n = n + 1
    end, { events = false })
    a:tick(1)
    assert.equal(1, n)
    a:trace(8) -- the user's own trace is not touched by it
    a:tick(1)
    assert.equal(2, #a:events())
    a:trace(false)
    local t = a:subscribe(function() end)
    a:unsubscribe(t)
    a:tick(1) -- the trace went with the last subscriber that wanted events
    assert.same({}, a:events())
    assert.equal(3, n)
    a:unsubscribe(s)
    a:tick(1)
    assert.equal(3, n)
  end)

  it("lets a subscriber end another one in the same tick", function()
    local a = bt.agent(walker())
    local calls, second = {}, nil
    a:subscribe(function()
      calls[#calls + 1] = "first"
      a:unsubscribe(second)
    end)
    second = a:subscribe(function() calls[#calls + 1] = "second" end)
    a:subscribe(function() calls[#calls + 1] = "third" end)
    a:tick(1)
    a:tick(1)
    assert.same({ "first", "third", "first", "third" }, calls)
  end)

  it("names the new version's nodes after a reload, and reports errors",
     function()
    local tree = walker()
    local a = bt.agent(tree)
    local got = {}
    a:subscribe(function(_, events, status, err)
      got[#got + 1] = tostring(status) .. ": " .. lines(events)
      if err then got[#got + 1] = events[#events].message end
    end)
    a:tick(1)
    local boom = false
    tree:reload(bt.sequence { name = "s", bt.named("run", bt.action(function()
      if boom then error("tripped", 0) end
      return bt.RUNNING
    end)) })
    a:tick(1)
    boom = true
    pcall(a.tick, a, 1)
    assert.same({ "running: s running; s/ok success; s/walk running",
                  "running: reload; s running+; s/run running",
                  "nil: s running+; s/run aborted; s aborted; error",
                  "tree 'sub.walker' node 's/run': tripped" }, got)
  end)
end)

describe("a subscription", function()
  it("does not keep its agent alive (on every Lua)", function()
    local tree = walker()
    local a = bt.agent(tree)
    local sub = a:subscribe(function() end)
    a:on_tick(function() end)
    a:tick(1)
    local weak = setmetatable({ a }, { __mode = "v" })
    a = nil -- luacheck: ignore
    for _ = 1, 3 do collectgarbage() end
    assert.is_nil(weak[1])
    assert.is_false(bt.unsubscribe(sub)) -- its agent is gone
  end)
end)

describe("a:on_tick", function()
  it("is one subscription among others, replaced by the next call", function()
    local a = bt.agent(walker())
    local seen = {}
    a:subscribe(function() seen[#seen + 1] = "sub" end)
    a:on_tick(function(ag, status) seen[#seen + 1] = "1:" .. status end)
    a:on_tick(function(ag, status) seen[#seen + 1] = "2:" .. status end)
    a:tick(1)
    a:on_tick(nil)
    a:tick(1)
    assert.same({ "sub", "2:running", "sub" }, seen)
  end)

  it("no longer displaces a recording", function()
    local path = os.tmpname()
    local a = bt.agent(walker())
    local rec = bt.record(path, a)
    local n = 0
    a:on_tick(function() n = n + 1 end)
    a:tick(1)
    a:tick(1)
    rec:close()
    local ticks = 0
    for line in io.lines(path) do
      if line:find('"t":"tick"', 1, true) then ticks = ticks + 1 end
    end
    os.remove(path)
    assert.equal(2, ticks)
    assert.equal(2, n)
  end)
end)

describe("bt.subscribe", function()
  it("subscribes every agent of a list, and bt.unsubscribe ends them all",
     function()
    local tree = walker()
    local list = { bt.agent(tree), bt.agent(tree), bt.agent(tree) }
    local by = {}
    local sub = bt.subscribe(list, function(ag, events)
      by[ag] = (by[ag] or 0) + #events
    end, { status = "running", again = false })
    bt.tick_all(list, 1)
    bt.tick_all(list, 1)
    for _, a in ipairs(list) do assert.equal(2, by[a]) end
    assert.is_true(bt.unsubscribe(sub))
    assert.is_false(bt.unsubscribe(sub))
    bt.tick_all(list, 1)
    for _, a in ipairs(list) do
      assert.equal(2, by[a])
      assert.same({}, a:events()) -- no longer traced
    end
  end)

  it("refuses what is not a function or a filter", function()
    local a = bt.agent(walker())
    assert.has_error(function() a:subscribe("no") end)
    assert.has_error(function() a:subscribe(function() end, "running") end)
    assert.has_error(function() bt.subscribe(a.tick, function() end) end)
    assert.is_false(a:unsubscribe({}))
  end)
end)
