-- trace_spec: a:trace and a:events (API.md "Seeing the AI think"): one
-- event per status change or running node ticked again, with tick, time,
-- node path and status; reload, error and interrupt events; the ring's
-- size; the tick hook (a:on_tick) and freezing (a:freeze) that bt.record
-- and bt.debug build on; tree:nodes.
local bt = require "bonsai"

-- "tick node status[+]" lines of a list of events.
local function lines(events)
  local out = {}
  for _, e in ipairs(events) do
    if e.event then
      out[#out + 1] = e.tick .. " " .. e.event
    else
      out[#out + 1] = ("%d %s %s%s"):format(e.tick, e.node, e.status,
                                            e.again and "+" or "")
    end
  end
  return table.concat(out, "; ")
end

local function counter(ticks)
  local n = 0
  return bt.action(function()
    n = n + 1
    if n % ticks ~= 0 then return bt.RUNNING end
    return bt.SUCCESS
  end)
end

describe("a:trace / a:events", function()
  it("records changes with tick, time, path and status", function()
    local tree = bt.tree(bt.sequence { name = "root",
      bt.condition(function() return true end),
      bt.named("walk", counter(3)),
    }, { name = "t" })
    local a = bt.agent(tree)
    assert.equal(a, a:trace(16))
    a:tick(0.5)
    local ev = a:events()
    assert.equal("1 root running; 1 root/condition[1] success; " ..
                 "1 root/walk running", lines(ev))
    assert.equal(0.5, ev[1].time)
    assert.same({}, a:events()) -- forgotten once read
    a:tick(0.5); a:tick(0.5)
    ev = a:events()
    assert.equal("2 root/walk running+; 3 root/walk success; 3 root success",
                 lines(ev))
    assert.equal(1.5, ev[3].time)
    assert.is_true(ev[1].again)
  end)

  it("records nothing without a trace, or after a:trace(false)", function()
    local tree = bt.tree(bt.action(function() return true end))
    local a = bt.agent(tree)
    a:tick()
    assert.same({}, a:events())
    a:trace()
    a:tick()
    assert.equal(2, #a:events()) -- the action's run: running, success
    a:trace(false)
    a:tick()
    assert.same({}, a:events())
  end)

  it("keeps the newest n events", function()
    local tree = bt.tree(bt.sequence { name = "s",
      bt.condition(function() return true end) })
    local a = bt.agent(tree):trace(3)
    for _ = 1, 4 do a:tick(1) end
    assert.equal("4 s running; 4 s/condition[1] success; 4 s success",
                 lines(a:events()))
    assert.has_error(function() a:trace(-1) end)
  end)

  it("records errors with the message a:tick raises", function()
    local tree = bt.tree(bt.sequence { name = "s",
      bt.named("boom", bt.action(function() error("no ammo", 0) end)) },
      { name = "g" })
    local a = bt.agent(tree):trace()
    local ok, msg = pcall(a.tick, a, 1)
    assert.is_false(ok)
    local ev = a:events()
    local last = ev[#ev]
    assert.equal("error", last.event)
    assert.equal(msg, last.message)
    assert.equal("tree 'g' node 's/boom': no ammo", last.message)
    assert.equal("s/boom", last.node)
  end)

  it("records interrupts and reloads, naming old nodes as they were",
     function()
    local tree = bt.tree(bt.sequence { name = "root",
      bt.named("old", bt.action(function() return bt.RUNNING end)) })
    local a = bt.agent(tree):trace()
    a:tick(1)
    tree:reload(bt.sequence { name = "root",
      bt.named("new", bt.action(function() return bt.RUNNING end)) })
    a:tick(1)
    -- the root is kept (it goes on running); the old leaf is aborted
    assert.equal("1 root running; 1 root/old running; 2 root/old aborted; " ..
                 "2 reload; 2 root/new running", lines(a:events()))
    local fire = false
    a:add_interrupt(function() return fire end)
    fire = true
    assert.equal("aborted", a:tick(1))
    assert.equal("3 interrupt; 3 root/new aborted; 3 root aborted",
                 lines(a:events()))
    a:reset()
    assert.equal("3 reset", lines(a:events()))
  end)

  it("gives 0-based node ids with events('id')", function()
    local tree = bt.tree(bt.sequence { bt.action(function() return true end) })
    local a = bt.agent(tree):trace()
    a:tick()
    local ev = a:events("id")
    assert.equal(0, ev[1].id)
    assert.equal(1, ev[2].id)
    assert.is_nil(ev[1].node)
  end)
end)

describe("tick hooks and freezing", function()
  it("calls the hook after every tick, errors included", function()
    local fail = false
    local tree = bt.tree(bt.action(function()
      if fail then error("bad", 0) end
      return bt.RUNNING
    end))
    local a, b = bt.agent(tree), bt.agent(tree)
    local seen = {}
    a:on_tick(function(ag, status, err)
      seen[#seen + 1] = tostring(status) .. "/" .. tostring(err)
      assert.equal(a, ag)
    end)
    a:tick(1)
    bt.tick_all({ a, b }, 1)
    fail = true
    pcall(a.tick, a, 1)
    bt.tick_all({ a, b }, 1)
    assert.same({ "running/nil", "running/nil",
                  "nil/tree 'tree' node 'action': bad",
                  "nil/tree 'tree' node 'action': bad" }, seen)
    a:on_tick(nil)
    fail = false
    a:tick(1)
    assert.equal(4, #seen)
  end)

  it("lets a hook's error out of bt.tick_all as often as it raises, " ..
     "leaving nothing behind", function()
    local tree = bt.tree(bt.action(function() error("bad", 0) end))
    local a, b = bt.agent(tree), bt.agent(tree)
    a:on_tick(function(_, _, err) if err then error("hook: " .. err, 0) end end)
    local list, raised = { a, b }, 0
    local function calls(k) -- plain Lua in the loop: no garbage of busted's
      for _ = 1, k do
        local ok, err = pcall(bt.tick_all, list, 1)
        if not ok and err == "hook: tree 'tree' node 'action': bad" then
          raised = raised + 1
        end
      end
      collectgarbage()
      collectgarbage()
      return collectgarbage("count")
    end
    local before = calls(20)
    -- a call that kept its depth of nested calls taken would leave one
    -- behind each time, with its batch function: about 30 KB for 300
    -- calls; the heap moves by less on its own
    assert.is_true(calls(300) - before < 4)
    assert.equal(320, raised)
    a:on_tick(nil) -- and the calls after it tick every agent
    local errs = bt.tick_all({ a, b }, 1)
    assert.equal(2, #errs)
    assert.equal(b, errs[2].agent)
  end)

  it("skips frozen agents, and steps them one tick", function()
    local n = 0
    local tree = bt.tree(bt.action(function() n = n + 1; return bt.RUNNING end))
    local a = bt.agent(tree)
    a:tick(1)
    a:freeze(true)
    assert.is_true(a:frozen())
    assert.equal("running", a:tick(1))
    bt.tick_all({ a }, 1)
    assert.equal(1, n)
    assert.equal(1, a.time)
    a:freeze("step")
    bt.tick_all({ a }, 1)
    a:tick(1)
    assert.equal(2, n)
    assert.is_true(a:frozen())
    a:freeze(false)
    a:tick(1)
    assert.equal(3, n)
    assert.has_error(function() a:freeze("later") end)
  end)
end)

describe("tree:nodes", function()
  it("lists the nodes in pre-order with their parameters", function()
    local tree = bt.tree(bt.sequence { name = "root",
      bt.check("hp", "<", 25),
      bt.repeater { times = 3, bt.wait(2) },
    }, { name = "g" })
    local nodes, id = tree:nodes()
    assert.equal(4, #nodes)
    assert.is_number(id)
    assert.same({ key = "hp", op = "<", value = 25 }, nodes[2].params)
    assert.equal("root/check[1]", nodes[2].path)
    assert.equal(0, nodes[2].parent)
    assert.is_nil(nodes[1].parent)
    assert.equal("repeater", nodes[3].type)
    assert.same({ times = 3 }, nodes[3].params)
    assert.same({ seconds = 2 }, nodes[4].params)
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    a:tick(1)
    assert.equal("failure", tree:nodes(a)[2].status)
    a.bb.hp = 10
    a:tick(1)
    assert.equal("success", tree:nodes(a)[2].status)
    assert.equal("running", tree:nodes(a)[4].status)
  end)
end)

describe("tracing changed from a leaf", function()
  it("stops at once, and starts with the next tick", function()
    local a
    local toggle = false
    local tree = bt.tree(bt.reactive_sequence { name = "s",
      bt.action(function()
        if toggle == "stop" then a:trace(false)
        elseif toggle == "start" then a:trace(8) end
        toggle = false
        return true
      end),
      bt.action(function() return bt.RUNNING end) })
    a = bt.agent(tree):trace()
    toggle = "stop"
    a:tick(1) -- stopped during the tick: nothing is kept
    assert.same({}, a:events())
    toggle = "start"
    a:tick(1) -- started during the tick: the rest of it runs untraced
    assert.same({}, a:events())
    a:tick(1)
    assert.equal("3 s/action[1] running; 3 s/action[1] success; " ..
                 "3 s/action[2] running+", lines(a:events()))
  end)
end)
