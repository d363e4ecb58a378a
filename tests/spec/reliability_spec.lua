-- reliability_spec.lua: the defect classes found by attacking the runtime,
-- each pinned down more widely than the sample that found it: callbacks
-- that re-enter the API while an agent switches versions, lists edited
-- while they are walked, reloads that change a node's shape under running
-- state, task coroutines touched from outside a tick, and the bookkeeping
-- of errors. The samples (repros) and where their regression tests are:
--   migrate_reload_in_abort, migrate_other_agent_in_abort,
--   migrate_error_names_wrong_node: "a version switch";
--   tick_all_list_replaced, tick_all_list_cleared,
--   tick_all_list_other_agent, tick_all_busy_in_recovery: "bt.tick_all with
--   a list edited by its leaves";
--   parallel_policy_met_by_reload, priority_added_by_reload: "a reload
--   that changes a node's shape under running state";
--   task_finished_outside, task_aborts_itself_outside: "a task's coroutine
--   touched from outside its tick";
--   debug_step_into_control: "entries reached from inside a bt.control
--   tick"; control_caught_error_wrong_node: "a child's error caught inside
--   a bt.control callback"; control_abort_twice: "a callback that raises
--   while its node is cut off"; luajit_self_referencing_tree_leak: "objects
--   that refer to themselves";
--   observe_deep_parent_chain: badinput_spec ("a 100,000-level
--   blackboard chain"); files_b3_path_outside, files_unbounded_read:
--   tree_files_spec; kit_stand_in_keeps_conditions: testkit_spec;
--   debug_cross_origin_command, debug_watch_flood: debug_spec.
local bt = require "bonsai"
local trace = require "helpers.trace"
local luaver = require "helpers.luaver"

local function run() return bt.RUNNING end

describe("a version switch", function()
  it("survives an abort callback that reloads the tree again", function()
    local T
    local log = {}
    local function root(name, abort)
      return bt.sequence { name = "root", bt.action { name = name, tick = run,
        enter = function() log[#log + 1] = "enter " .. name end,
        abort = function()
          log[#log + 1] = "abort " .. name
          if abort then abort() end
        end } }
    end
    T = bt.tree(root("A", function() assert(T:reload(root("C"))) end),
                { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    assert(T:reload(root("B")))
    assert.equal("running", a:tick(1)) -- A aborted (reloads to C), then C
    assert.equal("root>C", table.concat(a:running(), ">"))
    assert.equal("enter A; abort A; enter C", table.concat(log, "; "))
    a:tick(1)
    assert.equal("root>C", table.concat(a:running(), ">"))
  end)

  it("aborts a node kept by one step with the callbacks of that step's " ..
     "version when a callback reloaded again", function()
    local T
    local log = {}
    local function act(name, tag, on_abort)
      return bt.action { name = name, tick = run,
        abort = function()
          log[#log + 1] = "abort " .. name .. tag
          if on_abort then on_abort() end
        end }
    end
    local v3 = bt.parallel { name = "p", act("C", "3") }
    T = bt.tree(bt.parallel { name = "p", act("A", "1"),
      act("X", "1", function() assert(T:reload(v3)) end) }, { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    assert(T:reload(bt.parallel { name = "p", act("A", "2") })) -- X goes
    a:tick(1)
    -- step 1 (v1 -> v2): X aborted with v1's callback, A kept; X's abort
    -- reloaded to v3, so step 2 (v2 -> v3) aborts A with v2's callback
    assert.equal("abort X1; abort A2", table.concat(log, "; "))
    assert.equal("p>C", table.concat(a:running(), ">"))
  end)

  it("survives an abort callback that ticks an agent on another old " ..
     "version of the same tree", function()
    local B
    local T = bt.tree(bt.sequence { name = "r", bt.action { name = "X",
      tick = run, abort = function() B:tick(0) end } }, { name = "t" })
    local A = bt.agent(T)
    B = bt.agent(T)
    A:tick(1)
    assert(T:reload(bt.sequence { name = "r", bt.action { name = "Y",
      tick = run } }))
    B:tick(1)
    assert(T:reload(bt.sequence { name = "r", bt.action { name = "Z",
      tick = run } }))
    assert.equal("running", A:tick(1))
    assert.equal("r>Z", table.concat(A:running(), ">"))
    assert.equal("r>Z", table.concat(B:running(), ">"))
  end)

  it("refuses, from an abort callback, to tick, abort or reset the agent " ..
     "being switched, and lets it abort and reset others", function()
    local A, B, seen = nil, nil, {}
    local T = bt.tree(bt.sequence { name = "r", bt.action { name = "X",
      tick = run, abort = function(a)
        if a ~= A then return end
        for _, op in ipairs { "tick", "abort", "reset" } do
          local ok, err = pcall(A[op], A)
          seen[#seen + 1] = op .. ":" .. tostring(ok) .. ":" .. tostring(err)
        end
        B:abort()
        B:reset()
      end } }, { name = "t" })
    A, B = bt.agent(T), bt.agent(T)
    A:tick(1)
    B:tick(1)
    assert(T:reload(bt.sequence { name = "r", bt.action { name = "Y",
      tick = run } }))
    A:tick(1)
    assert.same({ "tick:false:agent is already ticking",
                  "abort:false:agent is already ticking",
                  "reset:false:agent is already ticking" }, seen)
    assert.equal("r>Y", table.concat(A:running(), ">"))
    assert.equal("idle", B:status())
    assert.same({}, B:running())
  end)

  it("names the first node whose abort failed, in the version it belonged " ..
     "to, and runs the new version", function()
    local T = bt.tree(bt.parallel { name = "p",
      bt.action { name = "A", tick = run,
                  abort = function() error("A's abort failed", 0) end },
      bt.action { name = "B", tick = run,
                  abort = function() error("B's abort failed", 0) end },
      bt.action { name = "D", tick = run, abort = function() end } },
      { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    assert(T:reload(bt.parallel { name = "p",
      bt.action { name = "C", tick = run } }))
    assert.equal("tree 't' node 'p/A': A's abort failed", trace.tick_error(a))
    assert.equal("running", a:tick(1))
    assert.equal("p>C", table.concat(a:running(), ">"))
  end)

  it("switches before a:abort and a:reset, raising a failed abort of the " ..
     "switch", function()
    local T = bt.tree(bt.sequence { name = "r", bt.action { name = "A",
      tick = run, abort = function() error("no", 0) end } }, { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    assert(T:reload(bt.sequence { name = "r", bt.action { name = "B",
      tick = run } }))
    local ok, err = pcall(a.abort, a)
    assert.is_false(ok)
    assert.equal("tree 't' node 'r/A': no", err)
    assert.same({}, a:running())
    a:tick(1)
    assert.equal("r>B", table.concat(a:running(), ">"))
  end)
end)

describe("bt.tick_all with a list edited by its leaves", function()
  local function errtree(edit)
    return bt.tree(bt.parallel { name = "p",
      bt.action { name = "L", tick = run,
                  abort = function(a) a.owner.aborted = a end },
      bt.action { name = "E", tick = function(a)
        if a.owner.raise then edit(a); error("boom", 0) end
        return bt.RUNNING end } }, { name = "t" })
  end

  it("reports the error of the agent that raised and recovers it, " ..
     "whatever its entry holds", function()
    for _, replacement in ipairs { "nil", "table", "other" } do
      local list = {}
      local T = errtree(function()
        if replacement == "nil" then list[1] = nil
        elseif replacement == "table" then list[1] = {}
        else list[1] = list[2] end
      end)
      local oa, ob = {}, {}
      local A = bt.agent(T, { owner = oa })
      local B = bt.agent(T, { owner = ob })
      list[1], list[2] = A, B
      assert.is_nil(bt.tick_all(list, 1))
      oa.raise = true
      local errs = bt.tick_all(list, 1)
      assert.equal(A, errs[1].agent, replacement)
      assert.equal("tree 't' node 'p/E': boom", errs[1].error)
      assert.equal(A, oa.aborted)
      assert.is_nil(ob.aborted)
      assert.equal(1, #errs)
      assert.same({}, A:running())
      assert.equal("p>L>E", table.concat(B:running(), ">"))
    end
  end)

  it("keeps a dropped and collected agent alive for its recovery", function()
    local list = {}
    local T = errtree(function() list[1] = nil; collectgarbage() end)
    list[1] = bt.agent(T, { owner = { raise = false } })
    bt.tick_all(list, 1)
    list[1].owner.raise = true
    local errs = bt.tick_all(list, 1)
    assert.equal("tree 't' node 'p/E': boom", errs[1].error)
    assert.same({}, errs[1].agent:running())
    assert.equal("aborted", errs[1].agent:status())
  end)

  it("ticks the entries as they are when reached, up to the length the " ..
     "list had", function()
    local T = bt.tree(bt.action(function(a)
      a.owner.n = (a.owner.n or 0) + 1
      if a.owner.edit then a.owner.edit() end
      return true
    end), { name = "t" })
    local list = {}
    local x, y, z = {}, {}, {}
    list[1] = bt.agent(T, { owner = x })
    list[2] = bt.agent(T, { owner = y })
    local C = bt.agent(T, { owner = z })
    x.edit = function() list[2] = C; list[3] = list[1] end
    assert.is_nil(bt.tick_all(list, 1))
    assert.same({ 1, nil, 1 }, { x.n, y.n, z.n }) -- list[3]: added later
  end)

  it("keeps each nested call's failing agent apart from the outer one's",
     function()
    local outer, inner = {}, {}
    local T = errtree(function(a)
      if a.owner.nest then -- an inner call whose agent fails too
        local errs = bt.tick_all(inner, 1)
        assert.equal(inner[1], errs[1].agent)
        assert.equal(inner[1], inner[1].owner.aborted)
      end
      outer[1] = nil
    end)
    local A = bt.agent(T, { owner = { nest = true } })
    inner[1] = bt.agent(T, { owner = {} })
    outer[1] = A
    bt.tick_all(inner, 1)
    assert.is_nil(bt.tick_all(outer, 1))
    A.owner.raise, inner[1].owner.raise = true, true
    outer[1] = A
    local errs = bt.tick_all(outer, 1)
    assert.equal(A, errs[1].agent)
    assert.equal(A, A.owner.aborted)
    assert.equal(1, #errs)
  end)

  it("lets the agents it ticked go once it returns", function()
    local T = errtree(function() end)
    local weak = setmetatable({}, { __mode = "k" })
    local list = { bt.agent(T, { owner = {} }) }
    weak[list[1]] = true
    list[1].owner.raise = true
    bt.tick_all(list, 1) -- an error: the recovery path
    list[1] = bt.agent(T, { owner = {} })
    weak[list[1]] = true
    bt.tick_all(list, 1) -- no error
    list[1] = nil
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(weak))
  end)

  it("keeps an error raised from a recovery that calls bt.tick_all on " ..
     "the failing agent", function()
    local A
    local T = bt.tree(bt.parallel { name = "p",
      bt.action { name = "L", tick = run,
                  abort = function() bt.tick_all({ A }, 0) end },
      bt.action { name = "E", tick = function(a)
        if a.time > 1 then error("original", 0) end
        return bt.RUNNING end } }, { name = "t" })
    A = bt.agent(T)
    A:tick(1)
    assert.equal("tree 't' node 'p/E': original", trace.tick_error(A))
    local errs = bt.tick_all({ A }, 1) -- and from bt.tick_all itself
    assert.equal("tree 't' node 'p/E': original", errs[1].error)
  end)
end)

describe("interrupts edited from their own calls", function()
  it("take the list before the calls: one removed before its turn is " ..
     "not called, one added waits for the next tick", function()
    local a = bt.agent(bt.tree(bt.action(run), { name = "t" }))
    local calls = {}
    local i1, i2, i3
    local function added() calls[#calls + 1] = "added" end
    i1 = function(ag)
      calls[#calls + 1] = "i1"
      ag:remove_interrupt(i2)
      ag:add_interrupt(added)
    end
    i2 = function() calls[#calls + 1] = "i2" end
    i3 = function(ag) calls[#calls + 1] = "i3"; ag:remove_interrupt(i3) end
    a:add_interrupt(i1)
    a:add_interrupt(i2)
    a:add_interrupt(i3)
    assert.equal("running", a:tick(1))
    assert.equal("i1; i3", table.concat(calls, "; "))
    calls = {}
    a:remove_interrupt(i1)
    assert.equal("running", a:tick(1))
    assert.equal("added", table.concat(calls, "; "))
  end)
end)

describe("a reload that changes a node's shape under running state", function()
  local function done(name) return bt.named(name, bt.action(function()
    return true end)) end
  local function bad(name) return bt.named(name, bt.action(function()
    return false end)) end
  local function runs(name, log) return bt.action { name = name, tick = run,
    abort = function() log[#log + 1] = "abort " .. name end } end

  it("ends a parallel whose policy its finished children now meet", function()
    local log = {}
    local T = bt.tree(bt.parallel { name = "p", success = "all",
      done "A", done "B", runs("C", log) }, { name = "t" })
    local a = bt.agent(T)
    assert.equal("running", a:tick(1))
    assert(T:reload(bt.parallel { name = "p", success = "all",
      done "A", done "B" }))
    assert.equal("success", a:tick(1))
    assert.equal("abort C", table.concat(log, "; "))
    -- the failure policy, and a count lowered under a running child
    log = {}
    T = bt.tree(bt.parallel { name = "p", failure = 3, bad "A", bad "B",
      runs("C", log) }, { name = "t" })
    a = bt.agent(T)
    assert.equal("running", a:tick(1))
    assert(T:reload(bt.parallel { name = "p", failure = 1, bad "A", bad "B",
      runs("C", log) }))
    assert.equal("failure", a:tick(1))
    assert.equal("abort C", table.concat(log, "; "))
    assert.same({}, a:running())
  end)

  it("runs a priority section added above a running root, which it " ..
     "aborts when a branch fires", function()
    local t = trace.new()
    local function root() return bt.sequence { name = "root",
      t:action("A", "R") } end
    local T = bt.tree(root(), { name = "t" })
    local a = bt.agent(T)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert(T:reload(root(), { priority = { bt.filter { name = "now",
      conditions = { bt.check("x", "==", 1) }, t:action("P", "R") } } }))
    assert.equal("running | tick A", t:step(a, 1)) -- x unset: root goes on
    assert.equal("root>A", table.concat(a:running(), ">"))
    a.bb.x = 1
    assert.equal("running | enter P; tick P; abort A", t:step(a, 1))
    assert.equal("now>P", table.concat(a:running(), ">"))
    -- a:abort right after such a reload aborts the root's nodes
    local b = bt.agent(bt.tree(root(), { name = "u" }))
    t:step(b, 1)
    assert(b.tree:reload(root(), { priority = { bt.filter { name = "never",
      conditions = { bt.check("x", "==", 1) }, t:action("Q", "R") } } }))
    b:abort()
    assert.equal("abort A", t:take())
    assert.same({}, b:running())
  end)

  it("keeps the root running when the priority section goes", function()
    local t = trace.new()
    local function root() return bt.sequence { name = "root",
      t:action("A", "R") } end
    local T = bt.tree(root(), { name = "t", priority = { bt.filter {
      name = "f", conditions = { bt.check("x", "==", 1) },
      t:action("P", "R") } } })
    local a = bt.agent(T)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert(T:reload(root()))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("root>A", table.concat(a:running(), ">"))
  end)
end)

describe("a task's coroutine touched from outside its tick", function()
  local function tasktree(body, log)
    return bt.tree(bt.sequence { name = "s", bt.named("job", bt.task(body)),
      bt.action { name = "after", tick = function()
        log[#log + 1] = "after"; return true end } }, { name = "t" })
  end

  it("is refused at the next tick when it was resumed to its end, closed " ..
     "or failed", function()
    local hows = { "end", "fail" }
    if coroutine.close then hows[3] = "close" end -- from Lua 5.4
    for _, how in ipairs(hows) do
      local co, log, runs = nil, {}, 0
      local T = tasktree(function()
        runs = runs + 1
        co = coroutine.running()
        local fail = coroutine.yield()
        if fail then error("outside", 0) end
        return function() log[#log + 1] = "stale value called" end
      end, log)
      local a = bt.agent(T)
      assert.equal("running", a:tick(1))
      if how == "end" then assert(coroutine.resume(co))
      elseif how == "close" then assert(coroutine.close(co))
      else assert(not coroutine.resume(co, true)) end
      local err = trace.tick_error(a)
      assert.matches("^tree 't' node 's/job': the task's coroutine ", err)
      assert.matches("resumed from outside its agent's tick$", err)
      assert.same({}, a:running())
      assert.equal("running", a:tick(1)) -- a new run, a new coroutine
      assert.equal(2, runs)
      assert.same({}, log)
    end
  end)

  it("cannot be closed by an abort while it runs", function()
    local co, caught
    local T = bt.tree(bt.named("job", bt.task(function(a)
      co = coroutine.running()
      coroutine.yield()
      caught = select(2, pcall(a.abort, a))
      coroutine.yield()
    end)), { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    assert(coroutine.resume(co))
    assert.equal("tree 't' node 'job': cannot close the task's coroutine: " ..
                 "it is running (resumed from outside its agent's tick)",
                 caught)
    assert.same({}, a:running())
    collectgarbage()
    assert.equal("running", a:tick(1))
  end)

  it("cannot tick or abort its own agent from inside a tick", function()
    local seen
    local a = bt.agent(bt.tree(bt.named("job", bt.task(function(ag)
      seen = { pcall(ag.tick, ag, 0) }
      coroutine.yield()
    end)), { name = "t" }))
    assert.equal("running", a:tick(1))
    assert.same({ false, "agent is already ticking" }, seen)
  end)
end)

describe("bt.register", function()
  it("leaves a name in use as it was when the new definition is bad",
     function()
    bt.register("rel_leaf", function() return true end)
    local a = bt.agent(bt.tree(bt.action "rel_leaf", { name = "t" }))
    assert.equal("success", a:tick(1))
    assert.has_error(function()
      bt.register("rel_leaf", { enter = function() end, tick = 42 })
    end, "bt.register 'rel_leaf': leaf field 'tick' must be a function " ..
         "(got number)")
    assert.has_error(function() bt.register("rel_leaf", { abort = print }) end)
    assert.equal("success", a:tick(1))
  end)

  it("refuses a name with a NUL byte", function()
    assert.has_error(function() bt.register("a\0b", print) end)
  end)
end)

describe("depth", function()
  it("reloads a 100,000-deep tree under a running agent in linear time",
     function()
    local function deep(n, leaf)
      local node = bt.action { name = leaf, tick = run }
      for _ = 1, n do node = bt.sequence { name = "s", node } end
      return node
    end
    local T = bt.tree(deep(100000, "A"), { name = "deep" })
    local a = bt.agent(T)
    assert.equal("running", a:tick(1))
    assert(T:reload(deep(100000, "A")))
    assert.equal("running", a:tick(1))
    assert(T:reload(deep(100000, "B")))
    assert.equal("running", a:tick(1))
    assert.equal(100001, #a:running())
    assert.equal("B", a:running()[100001])
  end)
end)

-- What runs inside c:tick finds the tick's stack through the child's run,
-- never through the frame of the tick that started it
-- (the repro debug_step_into_control: the live debugger's step into a
-- tick crashed the game at a bt.control node).
describe("entries reached from inside a bt.control tick", function()
  -- A pass-through control node; nested ones make a path of control nodes.
  local function pass(name, child, abort)
    return bt.control { name = name, tick = function(c) return c:tick(1) end,
                        abort = abort, child }
  end

  -- The trace hook's codes during the tick, and the tick's own events.
  local function hooked(a)
    local seen = {}
    a:trace(256)
    a:_on_event(function(kind, code)
      assert(a.bb.hp ~= nil) -- the hook reads the blackboard
      if kind == "status" then seen[#seen + 1] = code end
    end)
    return seen
  end

  it("the trace hook of a:_on_event sees every event of the tick through " ..
     "nested control nodes", function()
    local T = bt.tree(bt.sequence { name = "root",
      pass("p", pass("q", bt.sequence { name = "s",
        bt.action { name = "A", tick = function() return true end },
        bt.action { name = "B", tick = run } })) }, { name = "t" })
    local a = bt.agent(T, { blackboard = { hp = 1 } })
    local seen = hooked(a)
    for i = 1, 3 do
      assert.equal("running", a:tick(0.1))
      local codes = a:_tick_events()
      assert.same(codes, seen, "tick " .. i)
      assert.is_true(#codes >= (i == 1 and 7 or 5))
      for k in pairs(seen) do seen[k] = nil end
    end
  end)

  it("the trace hook sees the events of a child's run, of a c:abort from " ..
     "an abort callback, and of the node itself after a caught error",
     function()
    local n = 0
    local T = bt.tree(bt.control { name = "p",
      tick = function(c)
        n = n + 1
        if n == 1 then return c:tick(1) end -- q and its leaf run
        if n == 2 then -- q is cut off: its abort aborts its leaf
          c:abort(1)
          return c:tick(2)
        end
        assert.is_false(pcall(c.tick, c, 3)) -- a raise under the child
        return "success"
      end,
      pass("q", bt.action { name = "A", tick = run }, function(c)
        c:abort(1)
      end),
      bt.action { name = "B", tick = run },
      bt.action { name = "E", tick = function() error("boom", 0) end } },
      { name = "t" })
    local a = bt.agent(T, { blackboard = { hp = 1 } })
    local seen = hooked(a)
    a:tick(1)
    assert.same(a:_tick_events(), seen)
    for k in pairs(seen) do seen[k] = nil end
    a:tick(1)
    assert.same(a:_tick_events(), seen)
    for k in pairs(seen) do seen[k] = nil end
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.matches("node 'p': a child's error was caught", err)
    local codes = a:_tick_events()
    -- the hook saw the same status events (the error's own mark aside)
    assert.same(codes, seen)
  end)

  it("bt.sleep from a leaf under control nodes puts that agent to sleep, " ..
     "also from a callback after a caught error", function()
    local T = bt.tree(pass("p", pass("q", bt.action { name = "A",
      tick = function() return bt.sleep(5) end })), { name = "t" })
    local a, b = bt.agent(T), bt.agent(T)
    a:tick(1)
    assert.equal(5, a:sleeping())
    assert.is_nil(b:sleeping())
    local T2 = bt.tree(bt.control { name = "p",
      tick = function(c)
        assert.is_false(pcall(c.tick, c, 1))
        bt.sleep(3)
        return "running"
      end,
      bt.action { name = "E", tick = function() error("boom", 0) end } },
      { name = "t2" })
    local d = bt.agent(T2)
    assert.is_false(pcall(d.tick, d, 1))
    assert.is_nil(d:sleeping()) -- recovered: nothing runs to sleep on
  end)

  it("a task under control nodes gets its arguments and its bt.defer " ..
     "cleanups run when its run ends", function()
    local log = {}
    local T = bt.tree(pass("p", pass("q", bt.action { name = "T",
      args = { x = 7 },
      task = function(agent, bb, args)
        bt.defer(function() log[#log + 1] = "defer " .. bb.k end)
        log[#log + 1] = "start " .. args.x .. " " .. agent.owner.name
        coroutine.yield()
        return true
      end })), { name = "t" })
    local a = bt.agent(T, { owner = { name = "o" }, blackboard = { k = "v" } })
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal("start 7 o; defer v", table.concat(log, "; "))
  end)

  it("leaves, utilities, conditions and observers under control nodes get " ..
     "their own agent, blackboard, view and args", function()
    local seen, me = {}, nil
    local inner = bt.tree(bt.sequence { name = "in",
      bt.action { name = "L", args = { y = 2 }, tick = function(agent, bb, args)
        seen[#seen + 1] = "leaf " .. tostring(bb.hp) .. " " .. args.y
        bb.hp = 9 -- through the view: the outer key 'life'
        return agent == me
      end } }, { name = "inner" })
    local T = bt.tree(pass("p", bt.sequence { name = "s",
      pass("q", bt.subtree(inner, { remap = { hp = "life" } })),
      bt.utility_selector { name = "u",
        bt.action { name = "U", skip_if = "life > 100 && life < 200",
          on_success = "n := life + 1",
          utility = function(agent, bb)
            seen[#seen + 1] = "utility " .. bb.life
            return 1
          end, tick = function() return true end } } }),
      { name = "t" })
    local a = bt.agent(T, { blackboard = { life = 3 } })
    me = a
    a.bb:observe("life", function(bb, key, new, old)
      seen[#seen + 1] = ("observer %s %s %s"):format(key, new, old)
      assert.equal(a.bb, bb)
    end)
    assert.equal("success", a:tick(1))
    assert.same({ "leaf 3 2", "observer life 9 3", "utility 9" }, seen)
    assert.equal(10, a.bb.n) -- the post-condition ran
  end)

  it("a leaf under a control node may tick another agent whose tree has " ..
     "control nodes; each hook sees its own agent's events", function()
    local other
    local T2 = bt.tree(pass("x", bt.action { name = "Y",
      tick = function() return true end }), { name = "t2" })
    local T = bt.tree(pass("p", bt.sequence { name = "s",
      bt.action { name = "A", tick = function() other:tick(1) return true end },
      bt.action { name = "B", tick = run } }), { name = "t" })
    local a = bt.agent(T, { blackboard = { hp = 1 } })
    other = bt.agent(T2, { blackboard = { hp = 2 } })
    local seen, seen2 = hooked(a), hooked(other)
    assert.equal("running", a:tick(1))
    assert.same(a:_tick_events(), seen)
    assert.same(other:_tick_events(), seen2)
    assert.equal(4, #seen2) -- x and Y running, then success
  end)
end)

-- A raise under a control node's child, caught by its callback
-- (the repro control_caught_error_wrong_node): the callback's own
-- errors are the node's, and no frame of the run it left stays behind.
describe("a child's error caught inside a bt.control callback", function()
  local function raising(name)
    return bt.action { name = name, tick = function() error("child error", 0) end }
  end
  local function failure(a)
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    return err
  end

  it("reports the callback's own raise, invalid status or success at the " ..
     "node, and the child's error left uncaught at the child", function()
    local function case(tick)
      return bt.agent(bt.tree(bt.control { name = "C", tick = tick,
        raising("L") }, { name = "t" }))
    end
    assert.equal("tree 't' node 'C': my own error", failure(case(function(c)
      pcall(c.tick, c, 1)
      error("my own error", 0)
    end)))
    assert.matches("^tree 't' node 'C': invalid status %(a number value%)",
      failure(case(function(c) pcall(c.tick, c, 1) return 42 end)))
    assert.equal("tree 't' node 'C': a child's error was caught inside the " ..
      "callback", failure(case(function(c) pcall(c.tick, c, 1) return true end)))
    assert.equal("tree 't' node 'C/L': child error", failure(case(function(c)
      return c:tick(1)
    end)))
    -- raised again by the callback: still the child's
    assert.equal("tree 't' node 'C/L': child error", failure(case(function(c)
      local ok, err = pcall(c.tick, c, 1)
      error(err, 0)
    end)))
  end)

  it("names the right node through nested control nodes", function()
    local function tree(outer, inner)
      return bt.agent(bt.tree(bt.control { name = "P", tick = outer,
        bt.control { name = "C", tick = inner, raising("L") } },
        { name = "t" }))
    end
    local pass = function(c) return c:tick(1) end
    local catch = function(c) pcall(c.tick, c, 1) return true end
    local own = function(c) pcall(c.tick, c, 1) error("mine", 0) end
    assert.equal("tree 't' node 'P/C/L': child error",
                 failure(tree(pass, pass)))
    assert.equal("tree 't' node 'P/C': mine", failure(tree(pass, own)))
    assert.equal("tree 't' node 'P/C': a child's error was caught inside " ..
                 "the callback", failure(tree(pass, catch)))
    assert.equal("tree 't' node 'P': a child's error was caught inside " ..
                 "the callback", failure(tree(catch, pass)))
    assert.equal("tree 't' node 'P': mine", failure(tree(own, pass)))
    local other = function(c) pcall(c.tick, c, 1) error("P's", 0) end
    assert.equal("tree 't' node 'P': P's", failure(tree(other, own)))
    -- (the same message raised again is taken for the error caught)
    assert.equal("tree 't' node 'P/C': mine", failure(tree(own, own)))
  end)

  it("fails the node that caught a core failure under it (a check that " ..
     "cannot compare) as for a raise", function()
    local a = bt.agent(bt.tree(bt.control { name = "C",
      tick = function(c) assert.is_false(pcall(c.tick, c, 1)) return true end,
      bt.check("x", "<", 3) }, { name = "t" }), { blackboard = { x = "s" } })
    assert.equal("tree 't' node 'C': a child's error was caught inside the " ..
                 "callback", failure(a))
  end)

  it("names the child for a core failure under it too (a check that " ..
     "cannot compare)", function()
    local a = bt.agent(bt.tree(bt.control { name = "P",
      tick = function(c) return c:tick(1) end,
      bt.control { name = "C", tick = function(c) return c:tick(1) end,
        bt.check("x", "<", 3) } }, { name = "t" }),
      { blackboard = { x = "text" } })
    assert.matches("^tree 't' node 'P/C/check%[1%]': 'x' is a string, compared with a number",
                   failure(a))
  end)

  it("leaves no frame of the run behind: a caught error refuses the " ..
     "node's further c:tick and c:abort, and a kept 'c' of a node inside " ..
     "the run that was left", function()
    local kept, log = nil, {}
    local T = bt.tree(bt.control { name = "X",
      tick = function(c)
        local ok, err = pcall(c.tick, c, 1) -- Y raises in its own callback
        log[#log + 1] = tostring(ok) .. " " .. err
        ok, err = pcall(kept.tick, kept, 1)
        log[#log + 1] = tostring(ok) .. " " .. err
        ok, err = pcall(c.tick, c, 2)
        log[#log + 1] = tostring(ok) .. " " .. err
        ok, err = pcall(c.abort, c, 2)
        log[#log + 1] = tostring(ok) .. " " .. err
        return true
      end,
      bt.control { name = "Y", tick = function(c)
        kept = c
        error("Y's error", 0)
      end, bt.action { name = "A", tick = function()
        log[#log + 1] = "A ticked" return true end } },
      bt.action { name = "B", tick = function()
        log[#log + 1] = "B ticked" return true end } }, { name = "t" })
    local a = bt.agent(T)
    assert.equal("tree 't' node 'X': a child's error was caught inside the " ..
                 "callback", failure(a))
    assert.equal("false Y's error", log[1])
    assert.matches("^false c:tick: only during its node's tick callback",
                   log[2])
    assert.equal("false Y's error", log[3]) -- B is not ticked
    assert.equal("false Y's error", log[4])
    assert.equal(4, #log)
    assert.same({}, a:running())
    -- the agent goes on from the root
    kept = nil
    assert.is_false(pcall(a.tick, a, 1))
  end)
end)

-- Found by the fuzzer with post-conditions on any node: a root whose
-- post-condition raised after the root had ended kept its resume point,
-- and the next tick ticked the leaf that had ended, without enter (a
-- debug build stopped on an assertion).
describe("a root whose post-condition raises after it ended", function()
  it("starts its next tick from the root", function()
    local log, boom = {}, false
    local k = 0
    local a = bt.agent(bt.tree(bt.sequence { name = "root",
      post = function() if boom then error("post fails", 0) end return true end,
      bt.action { name = "L",
        enter = function() log[#log + 1] = "enter" end,
        tick = function()
          k = k + 1
          log[#log + 1] = "tick"
          return k % 2 == 1 and bt.RUNNING or bt.FAILURE
        end } }, { name = "t" }))
    assert.equal("running", a:tick(1))
    boom = true
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 't' node 'root': post fails", err)
    boom = false
    assert.equal("running", a:tick(1))
    assert.equal("enter tick tick enter tick", table.concat(log, " "))
  end)
end)

-- An abort pass runs every callback once, wherever it runs
-- (the repro control_abort_twice: a running control child whose
-- abort raised was aborted twice, its own child only at the second time):
-- every kind of node whose abort or exit raises, cut off by every kind of
-- parent, then the error's recovery.
describe("a callback that raises while its node is cut off", function()
  local log
  local function note(s) log[#log + 1] = s end
  local function leaf(name) -- runs until cut off
    return bt.action { name = name, tick = run,
                       abort = function() note("abort " .. name) end }
  end

  -- The nodes whose abort (or exit) raises, each named X, running.
  local raisers = {
    action = function()
      return bt.action { name = "X", tick = run,
        abort = function() note("abort X") error("X fails", 0) end }
    end,
    exit_only = function()
      return bt.action { name = "X", tick = run,
        exit = function(_, _, _, s) note("exit X " .. s) error("X fails", 0) end }
    end,
    task = function()
      return bt.action { name = "X", task = function()
        bt.defer(function() note("abort X") error("X fails", 0) end)
        while true do coroutine.yield() end
      end }
    end,
    control = function()
      return bt.control { name = "X", tick = function(c) return c:tick(1) end,
        abort = function() note("abort X") error("X fails", 0) end,
        leaf("A") }
    end,
    nested_control = function()
      return bt.control { name = "X", tick = function(c) return c:tick(1) end,
        abort = function() note("abort X") end,
        bt.control { name = "Y", tick = function(c) return c:tick(1) end,
          abort = function() note("abort Y") error("X fails", 0) end,
          leaf("A") } }
    end,
    control_aborting_child = function() -- its abort aborts its child first
      return bt.control { name = "X", tick = function(c) return c:tick(1) end,
        abort = function(c)
          c:abort(1)
          note("abort X")
          error("X fails", 0)
        end, leaf("A") }
    end,
    on_halted = function()
      return bt.action { name = "X", tick = run,
        abort = function() note("abort X") end, on_halted = "n := n + 1" }
    end,
  }
  -- Where the failing node is, below X (for the message).
  local failing = { nested_control = "X/Y" }

  -- Parents that cut X off at the second tick ('go' turned false).
  local parents = {
    control = function(x) -- its run ends: its running child is aborted
      return bt.control { name = "P",
        tick = function(c, _, bb)
          local s = c:tick(1)
          if bb.go then return s end
          return "success"
        end, x }
    end,
    c_abort = function(x)
      return bt.control { name = "P",
        tick = function(c, _, bb)
          if bb.go then return c:tick(1) end
          c:abort(1)
          return "running"
        end, x }
    end,
    reactive_sequence = function(x)
      return bt.reactive_sequence { name = "P", bt.check("go", "==", true), x }
    end,
    parallel = function(x)
      return bt.parallel { name = "P", success = 1, x,
        bt.action { name = "stop", tick = function(_, bb)
          return bb.go and bt.RUNNING or bt.SUCCESS
        end } }
    end,
    run_while = function(x)
      return bt.sequence { name = "P", bt.sequence { name = "W",
        run_while = "go == true && go != 0", x } }
    end,
    guard = function(x)
      return bt.guard { name = "P", bt.check("go", "==", true),
                        abort = "self", x }
    end,
  }
  local prefix = { run_while = "P/W/" }

  for pname, parent in pairs(parents) do
    for rname, raiser in pairs(raisers) do
      it(("%s under %s: each callback once, then recovered"):format(rname,
         pname), function()
        log = {}
        local a = bt.agent(bt.tree(bt.sequence { name = "root",
          parent(raiser()) }, { name = "t" }),
          { blackboard = { go = true } })
        assert.equal("running", a:tick(1))
        a.bb.go = false
        local ok, err = pcall(a.tick, a, 1)
        assert.is_false(ok)
        local path = (prefix[pname] or "P/") .. (failing[rname] or "X")
        assert.matches("^tree 't' node 'root/" .. path:gsub("%p", "%%%0") ..
                       "': ", err)
        local seen = {}
        for _, e in ipairs(log) do
          assert.is_nil(seen[e], e .. " twice: " .. table.concat(log, ", "))
          seen[e] = true
        end
        -- X's own running child (A) was aborted, X's callback before it
        -- unless X aborted it first
        if seen["abort A"] and rname ~= "control_aborting_child" then
          local first = rname == "nested_control" and "abort Y" or "abort X"
          local ix, ia
          for i, e in ipairs(log) do
            if e == first then ix = i elseif e == "abort A" then ia = i end
          end
          assert.is_true(ix < ia, table.concat(log, ", "))
        end
        assert.is_true(seen["abort X"] or seen["exit X aborted"] or false,
                       table.concat(log, ", "))
        if rname:find("control") then assert.is_true(seen["abort A"]) end
        assert.same({}, a:running())
        assert.equal("aborted", a:status())
        a.bb.go = true
        log = {}
        assert.equal("running", a:tick(1))
      end)
    end
  end
end)

-- What is dropped goes, on every Lua: the binding keeps the Lua values of
-- an object in the object's own storage, never as the value of a
-- weak-keyed table that may refer back to its key, which on Lua 5.1 and
-- LuaJIT (weak tables that are no ephemerons) would keep both for ever
-- (the repro luajit_self_referencing_tree_leak). Counted, not timed:
-- the objects made are held by a weak probe, and after full collections
-- none is left and bt.memory() is back to the byte.
describe("objects that refer to themselves", function()
  local function gc() for _ = 1, 4 do collectgarbage("collect") end end

  -- make(probe) n times; every object it put in the probe must be gone.
  local function collected(make, n)
    luaver.nojit(finally) -- LuaJIT's traces may hold what they ran on
    local probe = setmetatable({}, { __mode = "v" })
    gc()
    local core0 = bt.memory()
    for _ = 1, n or 20 do make(probe) end
    assert.is_true(#probe > 0)
    gc()
    local left = 0
    for _ in pairs(probe) do left = left + 1 end
    assert.equal(0, left)
    assert.equal(core0, bt.memory())
  end
  local function put(probe, ...)
    for _, x in ipairs { ... } do probe[#probe + 1] = x end
  end

  it("a tree whose leaf refers to the tree", function()
    collected(function(probe)
      local rec = {}
      rec.t = bt.tree(bt.action(function() return rec.t ~= nil end))
      bt.agent(rec.t):tick(1)
      put(probe, rec.t)
    end)
  end)

  it("a tree whose bt.control callback refers to the tree", function()
    collected(function(probe)
      local rec = {}
      rec.t = bt.tree(bt.control { tick = function(c) return rec.t and
        c:tick(1) end, bt.action(function() return true end) })
      bt.agent(rec.t):tick(1)
      put(probe, rec.t)
    end)
  end)

  it("an agent whose leaf refers to the agent", function()
    collected(function(probe)
      local A = {}
      local t = bt.tree(bt.action(function() return A[1] ~= nil end))
      A[1] = bt.agent(t)
      A[1]:tick(1)
      put(probe, A[1], t)
    end)
  end)

  it("an agent whose subscriber or on_tick function refers to it", function()
    collected(function(probe)
      local t = bt.tree(bt.action(run))
      local a, b = bt.agent(t), bt.agent(t)
      a:subscribe(function() return a end)
      b:on_tick(function() return b end)
      a:tick(1)
      b:tick(1)
      put(probe, a, b, t)
    end)
  end)

  it("an agent recorded, the recorder closed", function()
    local path = os.tmpname()
    finally(function() os.remove(path) end)
    collected(function(probe)
      local t = bt.tree(bt.action(run))
      local a = bt.agent(t)
      local r = bt.record(path, { a })
      a:tick(1)
      r:close()
      put(probe, a, t)
    end, 5)
  end)

  it("a bt.tick_all list whose agents' leaves refer to it, with its " ..
     "sleep cache", function()
    collected(function(probe)
      local list = {}
      local t = bt.tree(bt.action(function() return list and bt.sleep(100) end))
      for i = 1, 20 do list[i] = bt.agent(t) end
      for _ = 1, 4 do assert.is_nil(bt.tick_all(list, 1)) end
      put(probe, list, list[1], t)
    end)
  end)

  it("an agent whose file-loaded leaf has blackboard ports, and its " ..
     "blackboard", function()
    bt.register("Copy", function(_, _, args) args.out = args.src return true end)
    local t = bt.tree(bt.import('<root BTCPP_format="4"><BehaviorTree ' ..
      'ID="T"><Action ID="Copy" src="{m}" out="{o}"/></BehaviorTree></root>',
      "btcpp"), { name = "T" })
    collected(function(probe)
      local a = bt.agent(t, { blackboard = { m = "hi" } })
      a.bb.me = a -- the blackboard refers to its agent
      assert.equal("success", a:tick(1))
      assert.equal("hi", a.bb.o)
      put(probe, a, a.bb)
    end)
  end)

  it("a game that reloads a tree in a loop (a remapping subtree, a " ..
     "control node, leaves that refer to the tree) does not grow", function()
    luaver.nojit(finally) -- LuaJIT's traces live on the heap
    local rec = {}
    local function version(k)
      local inner = bt.tree(bt.action { name = "L", tick = function(_, bb)
        bb.hp = (bb.hp or 0) + k
        return rec.t and bt.RUNNING
      end }, { name = "inner" })
      return bt.sequence { name = "root", bt.control { name = "c",
        tick = function(c) return rec.t and c:tick(1) end,
        bt.subtree(inner, { remap = { hp = "life" } }) } }
    end
    rec.t = bt.tree(version(0), { name = "game" })
    local agents = {}
    for i = 1, 10 do agents[i] = bt.agent(rec.t) end
    local heap, core = {}, {}
    for round = 1, 12 do
      for _ = 1, 10 do
        assert(rec.t:reload(version(round)))
        assert.is_nil(bt.tick_all(agents, 1))
      end
      gc()
      heap[round], core[round] = collectgarbage("count"), bt.memory()
    end
    assert.equal(core[4], core[12])
    -- a round makes 10 versions of two trees for 10 agents: a leak of them
    -- would add tens of KB a round
    assert.is_true(heap[12] - heap[4] < 8, ("heap %.1f KB -> %.1f KB")
                   :format(heap[4], heap[12]))
  end)
end)
