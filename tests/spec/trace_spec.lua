-- trace_spec: a:trace and a:events (API.md "Seeing the AI think"): one
-- event per status change or running node ticked again, with tick, time,
-- node path and status; reload, error and interrupt events; the ring's
-- size; the tick hook (a:on_tick) and freezing (a:freeze) that bt.record
-- and bt.debug build on; tree:nodes; the events of a delay, a utility
-- selector and a subtree.
local bt = require "bonsai"
local luaver = require "helpers.luaver"

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
    -- each tick visits the running root again, then its running leaf
    assert.equal("2 root running+; 2 root/walk running+; 3 root running+; " ..
                 "3 root/walk success; 3 root success", lines(ev))
    assert.equal(1.5, ev[5].time)
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
                 "2 reload; 2 root running+; 2 root/new running",
                 lines(a:events()))
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
    luaver.nojit(finally) -- LuaJIT's traces live on the heap
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
    assert.equal("3 s running+; 3 s/action[1] running; " ..
                 "3 s/action[1] success; 3 s/action[2] running+",
                 lines(a:events()))
  end)
end)

-- API.md: "one event each time a node's status changes or a running node is
-- ticked again". A tick that resumes a running leaf visits its running
-- ancestors again, so each tick's events show the whole path that ran, in
-- the order a walk from the root visits it.
describe("a tick's events", function()
  local function run() return bt.RUNNING end
  local function yes() return true end

  -- the lines of each of k ticks of a, one string per tick
  local function ticks(a, k)
    local out = {}
    for i = 1, k do
      a:tick(1)
      out[i] = lines(a:events())
    end
    return out
  end

  it("show the running sequences above a resumed leaf", function()
    local tree = bt.tree(bt.sequence { name = "day",
      bt.sequence { name = "job", bt.named("work", bt.action(run)) } })
    local a = bt.agent(tree):trace()
    assert.same({
      "1 day running; 1 day/job running; 1 day/job/work running",
      "2 day running+; 2 day/job running+; 2 day/job/work running+",
      "3 day running+; 3 day/job running+; 3 day/job/work running+",
    }, ticks(a, 3))
  end)

  it("show filters, their conditions and decorators on the way", function()
    local tree = bt.tree(bt.sequence { name = "s",
      bt.filter { name = "f",
        conditions = { bt.named("ok", bt.condition(yes)) },
        bt.invert { name = "inv", bt.named("go", bt.action(run)) } } })
    local a = bt.agent(tree):trace()
    assert.same({
      "1 s running; 1 s/f running; 1 s/f/ok success; 1 s/f/inv running; " ..
        "1 s/f/inv/go running",
      "2 s running+; 2 s/f running+; 2 s/f/ok success; " ..
        "2 s/f/inv running+; 2 s/f/inv/go running+",
    }, ticks(a, 2))
  end)

  it("show a parallel and each of its running children", function()
    local n = 0
    local tree = bt.tree(bt.sequence { name = "s",
      bt.parallel { name = "p",
        bt.named("a", bt.action(run)),
        bt.named("b", bt.action(function()
          n = n + 1
          return n < 2 and bt.RUNNING or bt.SUCCESS
        end)) } })
    local a = bt.agent(tree):trace()
    assert.same({
      "1 s running; 1 s/p running; 1 s/p/a running; 1 s/p/b running",
      "2 s running+; 2 s/p running+; 2 s/p/a running+; 2 s/p/b success",
      "3 s running+; 3 s/p running+; 3 s/p/a running+",
    }, ticks(a, 3))
  end)

  it("show a reactive node ticking its children from the first", function()
    local tree = bt.tree(bt.sequence { name = "s",
      bt.reactive_sequence { name = "r",
        bt.named("see", bt.condition(yes)),
        bt.named("chase", bt.action(run)) } })
    local a = bt.agent(tree):trace()
    assert.same({
      "1 s running; 1 s/r running; 1 s/r/see success; 1 s/r/chase running",
      "2 s running+; 2 s/r running+; 2 s/r/see success; " ..
        "2 s/r/chase running+",
    }, ticks(a, 2))
  end)

  it("show a subtree's root and its running nodes", function()
    local inner = bt.tree(bt.sequence { name = "in",
      bt.named("dig", bt.action(run)) }, { name = "trace.inner" })
    local tree = bt.tree(bt.sequence { name = "s",
      bt.subtree(inner, { name = "sub" }) })
    local a = bt.agent(tree):trace()
    assert.same({
      "1 s running; 1 s/sub running; 1 s/sub/in running; " ..
        "1 s/sub/in/dig running",
      "2 s running+; 2 s/sub running+; 2 s/sub/in running+; " ..
        "2 s/sub/in/dig running+",
    }, ticks(a, 2))
  end)

  it("show the priority branch that runs instead of the root", function()
    local tree = bt.tree(bt.sequence { name = "s",
      bt.named("walk", bt.action(run)) }, { name = "t", priority = {
        bt.filter { name = "flee", conditions = { bt.check("hp", "<", 10) },
          bt.named("run", bt.action(run)) } } })
    local a = bt.agent(tree, { blackboard = { hp = 50 } }):trace()
    local first = ticks(a, 2)
    a.bb.hp = 5
    local later = ticks(a, 2)
    -- the hidden priority wrapper has the path ""; the root, no longer
    -- reached, is aborted once the branch has run
    assert.same({
      "1  running; 1 flee running; 1 flee/check[1] failure; 1 flee failure; " ..
        "1 s running; 1 s/walk running",
      "2  running+; 2 flee running; 2 flee/check[1] failure; " ..
        "2 flee failure; 2 s running+; 2 s/walk running+",
    }, first)
    assert.same({
      "3  running+; 3 flee running; 3 flee/check[1] success; " ..
        "3 flee/run running; 3 s/walk aborted; 3 s aborted",
      "4  running+; 4 flee running+; 4 flee/check[1] success; " ..
        "4 flee/run running+",
    }, later)
  end)
end)

describe("delay, utility_selector and subtree in traces", function()
  local trace = require "helpers.trace"
  local t
  before_each(function() t = trace.new() end)
  local agent_of = trace.agent_of

  local function events(a)
    local out = {}
    for _, e in ipairs(a:events()) do
      out[#out + 1] = e.tick .. ":" .. e.node .. ":" .. e.status
    end
    return table.concat(out, " ")
  end

  it("record their status changes like any node", function()
    local a = agent_of(bt.delay { name = "d", seconds = 1,
                                  t:action("A", "S") })
    a:trace()
    a:tick(1)
    a:tick(1)
    assert.equal("1:d:running 2:d:running 2:d/A:running 2:d/A:success " ..
                 "2:d:success", events(a))
    local u = 0
    local b = agent_of(bt.utility_selector { name = "u",
      bt.utility(function() return u end, t:action("X", "R")),
      bt.utility(function() return 1 end, t:action("Y", "R")) })
    b:trace()
    b:tick(1)
    u = 2
    b:tick(1)
    assert.equal("1:u:running 1:u/Y:running 2:u:running 2:u/X:running " ..
                 "2:u/Y:aborted", events(b))
    local inner = bt.tree(t:action("I", "S"), { name = "kinds.trace.inner" })
    local c = agent_of(bt.subtree(inner))
    c:trace()
    c:tick(1)
    assert.equal("1:kinds.trace.inner:running 1:kinds.trace.inner/I:running "
                 .. "1:kinds.trace.inner/I:success "
                 .. "1:kinds.trace.inner:success", events(c))
  end)
end)
