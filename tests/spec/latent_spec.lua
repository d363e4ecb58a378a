-- latent_spec: latent aborts (docs/NODES.md, "Latent aborts"), tick by
-- tick: an abort callback that returns bt.RUNNING when a decision of the
-- tree cut its node off keeps it aborting, called again at each tick until
-- it returns anything else or its abort_timeout passes, while the node
-- that cut it off waits (running) and goes on in the tick the last abort
-- ends. Every node that cuts off a branch, nesting, the immediate aborts,
-- bt.control, a:running(), traces, saves, reloads and bad input.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tick_error = trace.agent_of, trace.tick_error

-- A trace action whose abort answers bt.RUNNING to its first n calls.
local function slow(name, script, n, opts)
  opts = opts or {}
  opts.latent = n
  return t:action(name, script, opts)
end

describe("a latent abort", function()
  it("keeps a reactive node waiting, then it ends as it decided", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", 2),
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; abort A", t:step(a, 1))
    assert.same({ "reactive_selector", "A (aborting)" }, a:running())
    assert.equal("aborting", trace.statuses(a).A)
    assert.equal("running | abort A", t:step(a, 1)) -- C is not asked
    assert.equal("success | abort A", t:step(a, 1))
    assert.same({}, a:running())
    assert.equal("aborted", trace.statuses(a).A)
    assert.equal("success | tick C", t:step(a, 1))
  end)

  it("makes the higher child that cut it off wait, then go on", function()
    local a = agent_of(bt.reactive_selector {
      t:action("B", "FR"), slow("A", "R", 1),
    })
    assert.equal("running | enter B; tick B; exit B failure; enter A; tick A",
                 t:step(a, 1))
    assert.equal("running | enter B; tick B; abort A", t:step(a, 1))
    assert.same({ "reactive_selector", "B", "A (aborting)" }, a:running())
    assert.equal("running | abort A; tick B", t:step(a, 1))
    assert.same({ "reactive_selector", "B" }, a:running())
  end)

  it("holds the priority section's new branch until it ends", function()
    local a = bt.agent(bt.tree(slow("Work", "R", 1), {
      name = "T",
      priority = { bt.filter { name = "danger",
                               conditions = { t:condition("Hurt", "FS") },
                               t:action("Flee", "R") } },
    }))
    assert.equal("running | tick Hurt; enter Work; tick Work", t:step(a, 1))
    assert.equal("running | tick Hurt; enter Flee; tick Flee; abort Work",
                 t:step(a, 1))
    assert.same({ "danger", "Flee", "Work (aborting)" }, a:running())
    assert.equal("running | abort Work; tick Hurt; tick Flee", t:step(a, 1))
  end)

  it("makes a parallel whose policy is met wait", function()
    local a = agent_of(bt.parallel {
      success = 1, slow("B", "R", 1), t:action("A", "RS"),
    })
    assert.equal("running | enter B; tick B; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick B; tick A; exit A success; abort B",
                 t:step(a, 1))
    assert.equal("success | abort B", t:step(a, 1))
  end)

  it("makes a timeout, a filter and a while_do_else wait", function()
    local a = agent_of(bt.timeout { seconds = 2, slow("A", "R", 1) })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("failure | abort A", t:step(a, 1))
    a = agent_of(bt.filter { conditions = { t:condition("C", "SF") },
                             slow("B", "R", 1) })
    assert.equal("running | tick C; enter B; tick B", t:step(a, 1))
    assert.equal("running | tick C; abort B", t:step(a, 1))
    assert.equal("failure | abort B", t:step(a, 1)) -- C not asked again
    a = agent_of(bt.while_do_else {
      t:condition("W", "SF"), slow("D", "R", 1), t:action("E", "R"),
    })
    assert.equal("running | tick W; enter D; tick D", t:step(a, 1))
    assert.equal("running | tick W; abort D", t:step(a, 1))
    assert.equal("running | abort D; enter E; tick E", t:step(a, 1))
  end)

  it("makes a guard that takes over wait ('lower'), and its parent when " ..
     "the guard cuts its own child ('self')", function()
    local a = agent_of(bt.selector {
      bt.guard { bt.is_set "alarm", abort = "lower", t:action("X", "R") },
      slow("A", "R", 1),
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.alarm = true
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("running | abort A; enter X; tick X", t:step(a, 1))
    local b = agent_of(bt.selector {
      bt.guard { bt.is_set "go", abort = "self", slow("X", "R", 1) },
      t:action("B", "R"),
    }, { blackboard = { go = true } })
    assert.equal("running | enter X; tick X", t:step(b, 1))
    b.bb.go = nil
    assert.equal("running | abort X", t:step(b, 1))
    assert.equal("running | abort X; enter B; tick B", t:step(b, 1))
  end)

  it("makes the parent of a node whose run_while turned false wait",
     function()
    local a = agent_of(bt.sequence {
      bt.invert { run_while = "go", slow("A", "R", 1) },
      t:action("Z", "S"),
    }, { blackboard = { go = true } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.go = false
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("success | abort A; enter Z; tick Z; exit Z success",
                 t:step(a, 1))
  end)

  it("makes an interrupt's abort latent: the tree does not run until it " ..
     "ends, then the tick is aborted", function()
    local a = agent_of(bt.sequence { slow("A", "R", 2) })
    local on = false
    a:add_interrupt(function() return on end)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    on = true
    assert.equal("running | abort A", t:step(a, 1))
    on = false
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("aborted | abort A", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
  end)

  it("nests: an outer cut drops the inner decision and waits for the same " ..
     "abort", function()
    local a = agent_of(bt.timeout { seconds = 2, bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", 2),
    } })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; abort A", t:step(a, 1))
    assert.equal("running | abort A", t:step(a, 1)) -- the timeout cuts
    assert.same({ "timeout", "reactive_selector[1] (aborting)",
                  "A (aborting)" }, a:running())
    assert.equal("failure | abort A", t:step(a, 1))
  end)

  it("is cut off by abort_timeout (the leaf's, a registered one's), " ..
     "without a call", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", -1, { abort_timeout = 2 }),
    })
    a:trace(64)
    t:step(a, 1)
    assert.equal("running | tick C; abort A", t:step(a, 1))
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("success |", t:step(a, 1)) -- 2 s: cut off
    local cut
    for _, e in ipairs(a:events()) do
      if e.node == "reactive_selector/A" and e.cutoff then cut = e end
    end
    assert.equal("aborted", cut.status)
    assert.equal(4, cut.tick)
    bt.register("holster", t:leafdef("H", "R", { latent = -1,
                                                 abort_timeout = 0.5 }))
    local b = agent_of(bt.reactive_selector {
      t:condition("K", "FS"), bt.action "holster",
    })
    t:step(b, 1)
    assert.equal("running | tick K; abort H", t:step(b, 1))
    assert.equal("success |", t:step(b, 1))
    local c = agent_of(bt.reactive_selector {
      t:condition("Z", "FS"), slow("Q", "R", -1, { abort_timeout = 0 }),
    })
    t:step(c, 1)
    assert.equal("success | tick Z; abort Q", t:step(c, 1)) -- at once
  end)

  it("without a timeout may take as long as it wants: the agent runs on",
     function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", -1),
    })
    t:step(a, 1)
    t:step(a, 1)
    for _ = 1, 200 do assert.equal("running | abort A", t:step(a, 1)) end
    assert.same({ "reactive_selector", "A (aborting)" }, a:running())
  end)
end)

describe("a latent abort and sleep", function()
  it("keeps its agent awake: a leaf's bt.sleep counts once it has ended",
     function()
    local a = agent_of(bt.parallel {
      bt.reactive_selector { t:condition("C", "FS"), slow("A", "R", 2) },
      bt.action(function() t:add("nap"); return bt.sleep(100) end),
    })
    assert.equal("running | tick C; enter A; tick A; nap", t:step(a, 1))
    assert.truthy(a:sleeping())
    assert.equal("running | tick C; abort A; nap", t:step(a, 1))
    assert.is_nil(a:sleeping()) -- (A is aborting)
    assert.is_nil(bt.tick_all({ a }, 1))
    assert.equal("abort A; nap", t:take())
    assert.is_nil(bt.tick_all({ a }, 1))
    assert.equal("abort A; nap", t:take())
    assert.truthy(a:sleeping()) -- over: it sleeps
    assert.is_nil(bt.tick_all({ a }, 1))
    assert.equal("", t:take())
  end)
end)

describe("aborts from outside the tree's decisions", function()
  it("are immediate: the callback once more, its bt.RUNNING ignored",
     function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", -1),
    })
    t:step(a, 1)
    t:step(a, 1)
    a:abort()
    assert.equal("abort A", t:take())
    assert.same({}, a:running())
    assert.equal("aborted", a:status())
    assert.equal("success | tick C", t:step(a, 1))
    local b = agent_of(slow("B", "R", -1))
    t:step(b, 1)
    b:reset()
    assert.equal("abort B", t:take())
    assert.equal("idle", trace.statuses(b).B)
  end)

  it("a reload that drops the aborting node aborts it at once; one that " ..
     "keeps it lets it finish", function()
    local A = slow("A", "R", 3)
    local tree = bt.tree(bt.reactive_selector { name = "r",
      t:action("B", "FR"), A }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    assert.equal("running | enter B; tick B; abort A", t:step(a, 1))
    tree:reload(bt.reactive_selector { name = "r",
      t:action("Q", "F"), t:action("B", "R"), A })
    assert.equal("running | abort A", t:step(a, 1)) -- kept: it goes on
    tree:reload(bt.reactive_selector { name = "r", t:action("B", "R") })
    assert.equal("running | abort A; tick B", t:step(a, 1))
  end)

  it("a leaf given a new definition while it aborts (reload, bt.register) " ..
     "answers with the new one: its abort, or exit(aborted) when it has " ..
     "none, which ends it", function()
    local log = {}
    local function leaf(tag, latent)
      return {
        tick = function() return bt.RUNNING end,
        abort = latent and function()
          log[#log + 1] = tag .. " abort"
          return bt.RUNNING
        end or nil,
        exit = not latent and function(_, _, _, st)
          log[#log + 1] = tag .. " exit " .. st
        end or nil,
      }
    end
    bt.register("latent_spec.slow", leaf("old", true))
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.named("X", bt.action("latent_spec.slow")) })
    assert.equal("running | tick C", t:step(a, 1))
    assert.equal("running | tick C", t:step(a, 1))
    assert.same({ "old abort" }, log)
    assert.same({ "reactive_selector", "X (aborting)" }, a:running())
    bt.register("latent_spec.slow", leaf("new", true))
    assert.equal("running |", t:step(a, 1))
    assert.same({ "old abort", "new abort" }, log)
    bt.register("latent_spec.slow", leaf("plain", false))
    assert.equal("success |", t:step(a, 1)) -- (C succeeded: decided)
    assert.same({ "old abort", "new abort", "plain exit aborted" }, log)
    assert.same({}, a:running())
  end)

  it("an abort callback that raises while latent fails the tick, naming " ..
     "its node: everything is aborted at once, it is not called again, " ..
     "and the node that waited never goes on", function()
    local calls = 0
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.parallel { name = "p",
        t:action("Y", "R"),
        bt.action { name = "X", tick = function() return bt.RUNNING end,
                    abort = function()
                      calls = calls + 1
                      if calls == 1 then return bt.RUNNING end
                      error("holster jammed", 0)
                    end } },
    })
    t:step(a, 1)
    assert.equal("running | tick C; abort Y", t:step(a, 1))
    assert.same({ "reactive_selector", "p (aborting)", "X (aborting)" },
                a:running())
    assert.equal("tree 'T' node 'reactive_selector/p/X': holster jammed",
                 tick_error(a))
    assert.equal(2, calls)
    assert.same({}, a:running())
    assert.equal("aborted", a:status())
    assert.equal("success | tick C", t:step(a, 1))
  end)
end)

describe("tasks and exits", function()
  it("cannot abort latently: a task's abort_timeout is refused, and its " ..
     "abort is never latent", function()
    local err = trace.tree_error(bt.sequence {
      { type = "action", task = function() coroutine.yield() end,
        abort_timeout = 1 },
    })
    assert.truthy(err:find("a task cannot abort latently", 1, true), err)
    assert.has_error(function()
      bt.register("tk", { type = "action", task = function() end,
                          abort_timeout = 1 })
    end)
    local closed = 0
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.task(function() coroutine.yield(); closed = -1 end),
    })
    a:tick(1)
    assert.equal("success", a:tick(1))
    assert.equal(0, closed)
  end)

  it("exit callbacks are never latent", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), t:action("A", "R", { noabort = true }),
    })
    t:step(a, 1)
    assert.equal("success | tick C; exit A aborted", t:step(a, 1))
  end)

  it("abort_timeout must be a number >= 0, on actions and controls only",
     function()
    assert.truthy(trace.tree_error(bt.action {
      tick = function() end, abort_timeout = -1 }):find("abort_timeout"))
    assert.truthy(trace.tree_error(bt.action {
      tick = function() end, abort_timeout = "2" }):find("abort_timeout"))
    assert.truthy(trace.tree_error(bt.condition {
      tick = function() end, abort_timeout = 1 }):find("abort_timeout"))
  end)
end)

describe("bt.control and latent aborts", function()
  it("c:abort from tick makes the node wait: c:tick returns running " ..
     "without ticking, and tick is called again when the abort ends",
     function()
    local cut, seen = false, {}
    local a = agent_of(bt.control {
      tick = function(c)
        if not cut then return c:tick(1) end
        if not seen.cut then
          seen.cut = true
          c:abort(1)
          seen.after = c:tick(1) .. "," .. c:tick(2)
          return bt.RUNNING
        end
        return c:tick(2)
      end,
      slow("A", "R", 1), t:action("B", "S"),
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    cut = true
    assert.equal("running | abort A", t:step(a, 1))
    assert.equal("running,running", seen.after)
    assert.same({ "control", "A (aborting)" }, a:running())
    assert.equal("success | abort A; enter B; tick B; exit B success",
                 t:step(a, 1))
  end)

  it("a tick that cuts a child off and returns its end waits, then ends " ..
     "with it, not called again", function()
    local ticks = 0
    local a = agent_of(bt.control {
      tick = function(c)
        ticks = ticks + 1
        if ticks == 1 then return c:tick(1) end
        c:abort(1)
        return bt.FAILURE
      end,
      slow("A", "R", 1),
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | abort A", t:step(a, 1))
    assert.same({ "control", "A (aborting)" }, a:running()) -- (it waits)
    assert.equal("failure | abort A", t:step(a, 1))
    assert.equal(2, ticks)
  end)

  it("its own abort callback may be latent", function()
    local calls = 0
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"),
      bt.control {
        name = "ctl",
        tick = function(c) return c:tick(1) end,
        abort = function()
          calls = calls + 1
          if calls < 3 then return bt.RUNNING end
        end,
        t:action("A", "R"),
      },
    })
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; abort A", t:step(a, 1))
    assert.same({ "reactive_selector", "ctl (aborting)" }, a:running())
    assert.equal("running |", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
    assert.equal(3, calls)
  end)
end)

describe("latent aborts and the agent's state", function()
  it("are traced: the start ('aborting'), each further call (again), the " ..
     "end ('aborted')", function()
    local a = agent_of(bt.reactive_selector {
      t:condition("C", "FS"), slow("A", "R", 1),
    })
    a:tick(1)
    a:trace(64)
    a:tick(1)
    a:tick(1)
    local got = {}
    for _, e in ipairs(a:events()) do
      if e.node == "reactive_selector/A" then
        got[#got + 1] = e.tick .. ":" .. e.status .. (e.again and "+" or "")
      end
    end
    assert.same({ "2:aborting", "3:aborted" }, got)
    local b = agent_of(bt.reactive_selector {
      t:condition("K", "FS"), slow("B", "R", 2),
    })
    b:tick(1)
    b:trace(64)
    b:tick(1)
    b:tick(1)
    got = {}
    for _, e in ipairs(b:events()) do
      if e.node == "reactive_selector/B" then
        got[#got + 1] = e.tick .. ":" .. e.status .. (e.again and "+" or "")
      end
    end
    assert.same({ "2:aborting", "3:aborting+" }, got)
  end)

  it("are saved: restored, the abort ends at the first tick (one last " ..
     "call) and the node that waited goes on", function()
    local tree = bt.tree(bt.reactive_selector {
      t:action("B", "FR"), slow("A", "R", -1),
    }, { name = "T" })
    local a = bt.agent(tree)
    t:step(a, 1)
    t:step(a, 1)
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "reactive_selector", "B", "A (aborting)" }, b:running())
    assert.equal("running | abort A; tick B", t:step(b, 1))
    assert.same({ "reactive_selector", "B" }, b:running())
  end)
end)
