-- errors_spec: run-time errors (a Lua error in a leaf callback, an invalid
-- status, re-entrant ticks) and definition errors raised by bt.tree, with
-- the messages that name the tree and the node; plus trees kept alive by
-- their agents and very deep and very wide trees.
local bt = require "bonsai"
-- What an invalid status message ends with: the valid ones.
local VALID = ': a leaf returns "success", "failure", "running", true or '
  .. "false"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tick_error = trace.agent_of, trace.tick_error
local tree_error = trace.tree_error

describe("a Lua error in a leaf", function()
  it("in tick raises naming the tree and node, after aborting the "
     .. "running nodes", function()
    local a = agent_of(bt.parallel {
      name = "both", t:action("P", "R"), t:action("Q", "RE"),
    })
    assert.equal("running | enter P; tick P; enter Q; tick Q", t:step(a, 1))
    assert.equal("tree 'T' node 'both/Q': Q failed on purpose", tick_error(a))
    assert.equal("tick P; tick Q; abort P; abort Q", t:take())
    assert.equal("aborted", a:status())
    assert.same({}, a:running())
    t:set("Q", "R")
    assert.equal("running | enter P; tick P; enter Q; tick Q", t:step(a, 1))
  end)

  it("in the first tick of a run aborts the failing leaf too", function()
    local a = agent_of(bt.parallel {
      name = "both", t:action("P", "R"), t:action("Q", "E"),
    })
    assert.equal("tree 'T' node 'both/Q': Q failed on purpose", tick_error(a))
    assert.equal("enter P; tick P; enter Q; tick Q; abort P; abort Q",
                 t:take())
  end)

  it("in enter does not abort the leaf that was not entered", function()
    local a = agent_of(bt.parallel {
      name = "both", t:action("P", "R"), t:action("Q", "R", { fail = "enter" }),
    })
    assert.equal("tree 'T' node 'both/Q': Q enter failed", tick_error(a))
    assert.equal("enter P; tick P; enter Q; abort P", t:take())
    assert.equal("aborted", a:status())
  end)

  it("in exit raises once the leaf has finished", function()
    local a = agent_of(bt.parallel {
      t:action("X", "R"), t:action("P", "RS", { fail = "exit" }),
    })
    assert.equal("running | enter X; tick X; enter P; tick P", t:step(a, 1))
    assert.equal("tree 'T' node 'parallel/P': P exit failed", tick_error(a))
    assert.equal("tick X; tick P; exit P success; abort X", t:take())
  end)

  it("in abort, during a tick, raises after the other aborts", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.parallel { name = "work", t:action("Lo", "R", { fail = "abort" }),
                    t:action("X", "R") },
    })
    assert.equal("running | tick C; enter Lo; tick Lo; enter X; tick X",
                 t:step(a, 1))
    assert.equal("tree 'T' node 'reactive_selector/work/Lo': Lo abort failed",
                 tick_error(a))
    assert.equal("tick C; abort Lo; abort X", t:take())
    assert.equal("aborted", a:status())
    assert.same({}, a:running())
  end)

  it("in exit(..., 'aborted') of a leaf without abort is reported",
     function()
    local a = agent_of(bt.reactive_sequence {
      t:condition("C", "SF"),
      t:action("A", "R", { noabort = true, fail = "exit" }),
    })
    t:step(a, 1)
    assert.equal("tree 'T' node 'reactive_sequence/A': A exit failed",
                 tick_error(a))
    assert.equal("tick C; exit A aborted", t:take())
  end)

  it("in abort, during a:abort(), is raised after every abort ran",
     function()
    local a = agent_of(bt.parallel {
      t:action("P", "R", { fail = "abort" }), t:action("Q", "R"),
    })
    t:step(a, 1)
    local ok, msg = pcall(a.abort, a)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'parallel/P': P abort failed", msg)
    assert.equal("abort P; abort Q", t:take())
    assert.equal("aborted", a:status())
    assert.equal("running | enter P; tick P; enter Q; tick Q", t:step(a, 1))
  end)

  it("keeps the first message when an abort fails during the recovery",
     function()
    local a = agent_of(bt.parallel {
      t:action("P", "R", { fail = "abort" }), t:action("Q", "RE"),
    })
    t:step(a, 1)
    assert.equal("tree 'T' node 'parallel/Q': Q failed on purpose",
                 tick_error(a))
    assert.equal("tick P; tick Q; abort P; abort Q", t:take())
  end)

  it("closes running tasks", function()
    local closed = 0
    local a = agent_of(bt.parallel {
      bt.task(function()
        bt.defer(function() closed = closed + 1 end)
        while true do coroutine.yield() end
      end),
      t:action("Q", "RE"),
    })
    t:step(a, 1)
    assert.matches("Q failed on purpose$", tick_error(a))
    assert.equal(1, closed)
  end)

  it("from a task's cleanup (bt.defer) during an abort is reported",
     function()
    local a = agent_of(bt.parallel {
      bt.task(function()
        bt.defer(function() error("close failed", 0) end)
        coroutine.yield()
        return true
      end),
      t:action("B", "R"),
    })
    assert.equal("running | enter B; tick B", t:step(a, 1))
    local ok, msg = pcall(a.abort, a)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'parallel/action[1]': close failed", msg)
    assert.equal("abort B", t:take())
    assert.equal("aborted", a:status())
  end)

  it("from a yield in a plain leaf is reported", function()
    local a = agent_of(bt.sequence {
      bt.action(function() coroutine.yield() return true end),
    })
    -- (Lua's own message: "from outside a coroutine" from 5.2, "across
    -- metamethod/C-call boundary" in 5.1; LuaJIT adds the position)
    assert.matches("^tree 'T' node 'sequence/action%[1%]': .*attempt to yield ",
                   tick_error(a))
    local co = coroutine.wrap(function() return pcall(a.tick, a, 1) end)
    local ok, msg = co()
    assert.is_false(ok)
    assert.matches("^tree 'T' node 'sequence/action%[1%]': .*attempt to "
                   .. "yield across a?%s?[%w/]*C%-call boundary$", msg)
  end)

  it("keeps the position of the original message", function()
    local a = agent_of(bt.sequence { bt.action(function() error("boom") end) })
    assert.matches("^tree 'T' node 'sequence/action%[1%]': "
                   .. ".*errors_spec%.lua:%d+: boom$", tick_error(a))
  end)

  it("that is not a string is reported as such", function()
    local a = agent_of(bt.sequence { bt.action(function() error({}) end) })
    assert.equal("tree 'T' node 'sequence/action[1]': "
                 .. "(error object is not a string)", tick_error(a))
  end)

  it("names the node by the names it was given", function()
    local a = agent_of(bt.selector {
      name = "root",
      bt.sequence { name = "combat",
        bt.retry { times = 2, bt.action(function() error("x", 0) end) } },
    }, nil, "guard")
    assert.equal("tree 'guard' node 'root/combat/retry[1]/action[1]': x",
                 tick_error(a))
  end)
end)

describe("an invalid status", function()
  it("aborts the running nodes and names the node", function()
    local a = agent_of(bt.parallel {
      t:action("P", "R"), t:action("Q", { bt.RUNNING, "done" }),
    })
    t:step(a, 1)
    assert.equal("tree 'T' node 'parallel/Q': invalid status 'done'"
                 .. VALID, tick_error(a))
    assert.equal("tick P; tick Q; abort P; abort Q", t:take())
    assert.equal("aborted", a:status())
  end)

  it("from a condition returning running is an error", function()
    local a = agent_of(bt.parallel {
      t:action("P", "R"), t:condition("C", "R"),
    })
    assert.equal("tree 'T' node 'parallel/C': a condition cannot return "
                 .. "running", tick_error(a))
    assert.equal("enter P; tick P; tick C; abort P", t:take())
  end)

  it("from a filter's condition returning running is an error", function()
    local a = agent_of(bt.filter {
      conditions = { bt.action(function() return bt.RUNNING end) },
      t:action("A", "R"),
    })
    assert.equal("tree 'T' node 'filter/action[1]': a condition cannot "
                 .. "return running", tick_error(a))
  end)
end)

describe("the agent after an error", function()
  it("can be ticked again from the root", function()
    local a = agent_of(bt.sequence {
      t:action("A", "S"), t:action("B", "RER"),
    })
    t:step(a, 1)
    tick_error(a)
    t:take()
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
  end)

  it("keeps its clock going", function()
    local a = agent_of(t:action("A", "E"))
    tick_error(a, 1.5)
    assert.equal(1.5, a.time)
  end)

  it("refuses a bad dt as the call's error, not the agent's", function()
    local a = agent_of(t:action("A", "E"))
    assert.equal("tree 'T' node 'A': A failed on purpose", tick_error(a))
    assert.matches("dt must be a number >= 0, got %-1", tick_error(a, -1))
    assert.matches("dt must be a number >= 0, got %-1", tick_error(a, -1))
    assert.equal("tree 'T' node 'A': A failed on purpose", tick_error(a))
  end)
end)

describe("re-entrant calls", function()
  it("ticking an agent from its own leaf is an error", function()
    local a = agent_of(bt.parallel {
      t:action("X", "R"),
      bt.action(function(agent) return agent:tick(1) end),
    })
    assert.matches("^tree 'T' node 'parallel/action%[2%]': "
                   .. ".*agent is already ticking$", tick_error(a))
    assert.equal("enter X; tick X; abort X", t:take())
    assert.equal(1, a.time)
  end)

  it("resetting an agent from its own leaf is an error", function()
    local a = agent_of(bt.action(function(agent) agent:reset() end))
    assert.matches("agent is already ticking$", tick_error(a))
  end)

  it("ticking another agent from a leaf is allowed", function()
    local inner = agent_of(t:action("I", "RS"), nil, "inner")
    local a = agent_of(bt.action(function()
      return inner:tick(0.5)
    end), nil, "outer")
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal(1, inner.time)
  end)
end)

describe("a definition error", function()
  it("names the node: a decorator without a child", function()
    assert.equal(
      "tree 'guard': reactive_selector/combat/retry[1]: 'retry' needs a child",
      tree_error(bt.reactive_selector {
        bt.sequence { name = "combat", bt.retry {} },
        bt.action(function() end),
      }, { name = "guard" }))
  end)

  it("a decorator with two children", function()
    assert.equal("tree 'x': sequence/invert[1]: 'invert' takes one child",
      tree_error(bt.sequence { bt.invert { bt.wait(1), bt.wait(2) } },
                 { name = "x" }))
  end)

  it("a composite without children", function()
    assert.equal("tree 'x': selector/sequence[2]: 'sequence' needs children",
      tree_error(bt.selector { bt.wait(1), bt.sequence {} }, { name = "x" }))
    assert.equal("tree 'x': filter: 'filter' needs a child",
      tree_error(bt.filter { conditions = {} }, { name = "x" }))
  end)

  it("an unknown node type", function()
    assert.equal("tree 'x': sequence: child 2: unknown node type 'jump'",
      tree_error(bt.sequence { bt.wait(1), { type = "jump" } },
                 { name = "x" }))
  end)

  it("a child that is not a node", function()
    assert.equal("tree 'x': sequence: child 2: not a node (got number)",
      tree_error(bt.sequence { bt.wait(1), 42 }, { name = "x" }))
    assert.equal("tree 'x': sequence: child 1: not a node (got string)",
      tree_error(bt.sequence { "wait" }, { name = "x" }))
    assert.equal(
      "tree 'x': sequence: child 1: not a node (a table without a 'type')",
      tree_error(bt.sequence { {} }, { name = "x" }))
  end)

  it("a leaf name that is not registered", function()
    assert.equal(
      "tree 'x': sequence/errors.nowhere: no leaf registered as "
      .. "'errors.nowhere'",
      tree_error(bt.sequence { bt.action "errors.nowhere" }, { name = "x" }))
  end)

  it("a leaf that is not a function", function()
    assert.equal("tree 'x': sequence/action[1]: leaf field 'tick' must be a "
                 .. "function (got number)",
      tree_error(bt.sequence { bt.action { tick = 3 } }, { name = "x" }))
    assert.equal("tree 'x': sequence/action[1]: leaf field 'abort' must be a "
                 .. "function (got string)",
      tree_error(bt.sequence { bt.action { tick = print, abort = "no" } },
                 { name = "x" }))
    assert.equal("tree 'x': sequence/action[1]: a leaf needs a function "
                 .. "(fn, tick or task)",
      tree_error(bt.sequence { bt.action { enter = print } }, { name = "x" }))
    assert.matches("^tree 'x': sequence/action%[1%]: ",
      tree_error(bt.sequence { bt.action(42) }, { name = "x" }))
  end)

  it("times that is not a whole number >= 0", function()
    for _, v in ipairs { "x", 1.5, -1, true } do
      assert.equal("tree 'x': sequence/repeater[1]: argument 'times' must be "
                   .. "a whole number >= 0",
        tree_error(bt.sequence { bt.repeater { times = v, bt.wait(1) } },
                   { name = "x" }))
    end
    assert.equal("tree 'x': retry: argument 'times' must be a whole number "
                 .. ">= 0", tree_error(bt.retry { times = {}, bt.wait(1) },
                                       { name = "x" }))
  end)

  it("seconds that are not a number >= 0", function()
    assert.equal("tree 'x': wait: argument 'seconds' must be a number >= 0",
      tree_error(bt.wait { seconds = -1 }, { name = "x" }))
    assert.equal("tree 'x': timeout: argument 'seconds' must be a number >= 0",
      tree_error(bt.timeout { seconds = "2", bt.wait(1) }, { name = "x" }))
    assert.equal("tree 'x': cooldown: argument 'seconds' must be a number >= 0",
      tree_error(bt.cooldown { seconds = 0 / 0, bt.wait(1) }, { name = "x" }))
  end)

  it("missing times or seconds", function()
    assert.equal("tree 'x': limit: 'limit' needs 'times'",
      tree_error(bt.limit { bt.wait(1) }, { name = "x" }))
    assert.equal("tree 'x': timeout: 'timeout' needs 'seconds'",
      tree_error(bt.timeout { bt.wait(1) }, { name = "x" }))
    assert.equal("tree 'x': wait: 'wait' needs 'seconds'",
      tree_error(bt.wait {}, { name = "x" }))
  end)

  it("a parallel policy that is not 'all', 'one' or a count", function()
    assert.equal('tree \'x\': parallel: argument \'success\' must be "all", '
                 .. '"one" or a count >= 1',
      tree_error(bt.parallel { success = "some", bt.wait(1) }, { name = "x" }))
    assert.equal('tree \'x\': parallel: argument \'failure\' must be "all", '
                 .. '"one" or a count >= 1',
      tree_error(bt.parallel { failure = 0, bt.wait(1) }, { name = "x" }))
    assert.equal("tree 'x': parallel: 'parallel' policy count is larger than "
                 .. "its 2 children",
      tree_error(bt.parallel { success = 3, bt.wait(1), bt.wait(2) },
                 { name = "x" }))
  end)

  it("a parameter the node does not take", function()
    assert.equal("tree 'x': sequence: 'sequence' has no option 'times' "
                 .. "(it takes: type name utility failure_if success_if "
                 .. "skip_if run_while on_halted on_failure on_success post)",
      tree_error(bt.sequence { times = 3, bt.wait(1) }, { name = "x" }))
  end)

  it("a name that is not a string", function()
    assert.matches("^tree 'x': .*'name' must be a string$",
      tree_error(bt.sequence { bt.wait { name = 3, seconds = 1 } },
                 { name = "x" }))
  end)

  it("conditions that are not a list", function()
    local msg = tree_error(bt.sequence {
      bt.filter { conditions = 3, bt.wait(1) },
    }, { name = "x" })
    assert.equal("tree 'x': sequence/filter[1]: 'conditions' must be a "
                 .. "list of conditions", msg)
    assert.equal("tree 'x': sequence/monitor[2]: 'conditions' must be a "
                 .. "list of conditions", tree_error(bt.sequence {
      bt.wait(1), bt.monitor { conditions = "c", bt.wait(1) },
    }, { name = "x" }))
  end)

  it("a node that contains itself", function()
    local s = bt.sequence { bt.wait(1) }
    s[2] = s
    assert.equal("tree 'cyc': sequence/sequence[2]: a node cannot contain itself",
                 tree_error(s, { name = "cyc" }))
    local inv = bt.invert {}
    local root = bt.sequence { bt.wait(1), inv }
    inv[1] = root
    assert.equal("tree 'cyc': sequence/invert[2]/sequence[1]: a node cannot "
                 .. "contain itself", tree_error(root, { name = "cyc" }))
  end)

  it("is not raised for a node used twice without a cycle", function()
    local shared = bt.sequence { bt.action(function() return bt.RUNNING end) }
    local a = bt.agent(bt.tree(bt.parallel { shared, shared }))
    assert.equal("running", a:tick(1))
    assert.same({ "parallel", "sequence[1]", "action[1]", "sequence[2]",
                  "action[1]" }, a:running())
  end)

  it("from the DSL is raised at once", function()
    assert.error_matches(function() bt.sequence(3) end,
                         "bt.sequence takes a table of children", 1, true)
    assert.error_matches(function() bt.invert(3) end,
                         "bt.invert takes a node or a table", 1, true)
  end)

  it("is raised for options that are not a table", function()
    assert.has_error(function() bt.tree(bt.wait(1), 5) end)
  end)
end)

describe("trees and agents", function()
  it("an agent keeps its tree alive", function()
    local a
    do
      local tree = bt.tree(bt.sequence {
        t:action("A", "S"), t:action("B", "RRRS"),
      })
      a = bt.agent(tree)
    end
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    collectgarbage("collect")
    assert.equal("running | tick B", t:step(a, 1))
    a.tree = nil -- the agent's state still holds the tree
    collectgarbage("collect")
    collectgarbage("collect")
    assert.equal("running | tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)

  it("an agent keeps its blackboard alive", function()
    local a = bt.agent(bt.tree(bt.condition(function(_, bb)
      return bb.flag
    end)), { blackboard = bt.blackboard { flag = true } })
    a.bb = nil
    collectgarbage("collect")
    collectgarbage("collect")
    assert.equal("success", a:tick(1))
  end)

  it("agents can be collected while running", function()
    local tree = bt.tree(bt.sequence { t:action("A", "R") })
    for _ = 1, 100 do bt.agent(tree):tick(1) end
    collectgarbage("collect")
    collectgarbage("collect")
    assert.equal("running", bt.agent(tree):tick(1))
  end)
end)

describe("big trees", function()
  it("compiles and ticks 10,000 nested sequences", function()
    local n = 0
    local node = bt.action(function()
      n = n + 1
      if n == 3 then error("deep down", 0) end
      return n < 2 and bt.RUNNING or bt.SUCCESS
    end)
    for _ = 1, 10000 do node = bt.sequence { node } end
    local a = bt.agent(bt.tree(node, { name = "deep" }))
    assert.equal("running", a:tick(1))
    local running = a:running()
    assert.equal(10001, #running)
    assert.equal("sequence", running[1])
    assert.equal("sequence[1]", running[10000])
    assert.equal("action[1]", running[10001])
    assert.equal("success", a:tick(1))
    local msg = tick_error(a)
    assert.matches("^tree 'deep' node 'sequence/sequence%[1%]/", msg)
    assert.matches(": deep down$", msg)
    assert.equal("aborted", a:status())
  end)

  it("names the failing leaf in an error even under a long path",
     function()
    local node = bt.action(function() error("deep down", 0) end)
    for _ = 1, 100 do node = bt.sequence { node } end
    local a = bt.agent(bt.tree(node, { name = "deep" }))
    assert.equal("tree 'deep' node '" .. ("sequence/")
                 .. ("sequence[1]/"):rep(99) .. "action[1]': deep down",
                 tick_error(a))
  end)

  it("aborts 10,000 nested nodes deepest first", function()
    local node = t:action("A", "R")
    for k = 1, 10000 do
      node = k % 2 == 0 and bt.reactive_sequence { t:condition("C", "S"), node }
        or bt.invert(node)
    end
    local a = bt.agent(bt.tree(node))
    a:tick(1)
    assert.equal(10001, #a:running())
    t:take()
    a:abort()
    assert.equal("abort A", t:take())
    assert.same({}, a:running())
    assert.equal("aborted", a:status())
  end)

  it("ticks a selector of 10,000 children", function()
    local kids = {}
    local ticks = 0
    for k = 1, 9999 do
      kids[k] = bt.condition(function()
        ticks = ticks + 1
        return false
      end)
    end
    kids[10000] = bt.action(function() return bt.RUNNING end)
    local a = bt.agent(bt.tree(bt.selector(kids), { name = "wide" }))
    assert.equal("running", a:tick(1))
    assert.equal(9999, ticks)
    assert.same({ "selector", "action[10000]" }, a:running())
    assert.equal("running", a:tick(1))
    assert.equal(9999, ticks) -- the running child is resumed
  end)

  it("ticks a reactive selector of 10,000 children every tick", function()
    local kids = {}
    local ticks = 0
    for k = 1, 10000 do
      kids[k] = bt.condition(function()
        ticks = ticks + 1
        return k == 10000
      end)
    end
    local a = bt.agent(bt.tree(bt.reactive_selector(kids)))
    assert.equal("success", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.equal(20000, ticks)
  end)
end)
