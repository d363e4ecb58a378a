-- control_spec: bt.control, the control nodes whose decisions are Lua
-- callbacks: c:tick, c:abort, c.n, c.memory; enter/tick/abort; the children
-- aborted when a run ends; errors named after the node; reloads, resets,
-- saves, traces and remapping subtrees.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local agent_of, tick_error = trace.agent_of, trace.tick_error

-- A sequence with memory written as a control node (the index in memory).
local function myseq(children, name)
  local n = {
    name = name or "myseq",
    enter = function(c) c.memory.i = 1 end,
    tick = function(c)
      while c.memory.i <= c.n do
        local s = c:tick(c.memory.i)
        if s ~= bt.SUCCESS then return s end
        c.memory.i = c.memory.i + 1
      end
      return bt.SUCCESS
    end,
  }
  for i, ch in ipairs(children) do n[i] = ch end
  return bt.control(n)
end

describe("bt.control", function()
  it("ticks its children as its tick callback says", function()
    local a = agent_of(myseq { t:action("A", "S"), t:action("B", "RS"),
                               t:action("C", "F") })
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("failure | tick B; exit B success; enter C; tick C; "
                 .. "exit C failure", t:step(a, 1))
    -- a new run (B's script repeats its last status)
    assert.equal("failure | enter A; tick A; exit A success; enter B; tick B; "
                 .. "exit B success; enter C; tick C; exit C failure",
                 t:step(a, 1))
  end)

  it("gets c, the agent, its blackboard and its args", function()
    local seen
    local a = agent_of(bt.control {
      args = { x = 1 },
      tick = function(c, agent, bb, args)
        seen = { c.n, agent, bb, args.x }
        return bt.SUCCESS
      end,
      t:action("A", "S"), t:action("B", "S"),
    })
    assert.equal(bt.SUCCESS, a:tick(1))
    assert.same({ 2, a, a.bb, 1 }, seen)
  end)

  it("may keep several children running at once", function()
    local a = agent_of(bt.control {
      tick = function(c)
        local s1, s2 = c:tick(1), c:tick(2)
        if s1 == bt.SUCCESS and s2 == bt.SUCCESS then return bt.SUCCESS end
        return bt.RUNNING
      end,
      t:action("A", "RS"), t:action("B", "RRS"),
    })
    assert.equal("running | enter A; tick A; enter B; tick B", t:step(a, 1))
    assert.same({ "control", "A", "B" }, a:running())
    assert.equal("running | tick A; exit A success; tick B", t:step(a, 1))
    -- A starts a new run: the callback ticks it again
    assert.equal("success | enter A; tick A; exit A success; tick B; "
                 .. "exit B success", t:step(a, 1))
  end)

  it("aborts the children still running when its run ends", function()
    local a = agent_of(bt.control {
      tick = function(c)
        c:tick(1)
        return c:tick(2)
      end,
      t:action("A", "R"), t:action("B", "F"),
    })
    assert.equal("failure | enter A; tick A; enter B; tick B; "
                 .. "exit B failure; abort A", t:step(a, 1))
  end)

  it("enters once per run; when cut off, its abort runs before its "
     .. "children's", function()
    local a = agent_of(bt.control {
      enter = function() t:add("enter C") end,
      tick = function(c) t:add("tick C") return c:tick(1) end,
      abort = function(c) t:add("abort C " .. c.n) end,
      t:action("A", "R"),
    })
    assert.equal("running | enter C; tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; tick A", t:step(a, 1))
    a:abort()
    assert.equal("abort C 1; abort A", t:take())
    assert.equal("running | enter C; tick C; enter A; tick A", t:step(a, 1))
  end)

  it("is cut off by a reactive parent like any node", function()
    local go = true
    local a = agent_of(bt.reactive_selector {
      bt.condition(function() return not go end),
      bt.control {
        name = "C",
        abort = function(c) t:add("abort C") end,
        tick = function(c) return c:tick(1) end,
        t:action("A", "R"),
      },
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    go = false
    assert.equal("success | abort C; abort A", t:step(a, 1))
  end)

  it("c:abort(i) aborts a running child, and nothing else", function()
    local k = 0
    local a = agent_of(bt.control {
      tick = function(c)
        k = k + 1
        if k == 1 then return c:tick(1) end
        c:abort(1)
        c:abort(2) -- not running: nothing
        return bt.FAILURE
      end,
      t:action("A", "R"), t:action("B", "S"),
    })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | abort A", t:step(a, 1))
  end)

  it("keeps c.memory per agent and node across runs; a:reset empties it",
     function()
    local tree = bt.tree(bt.control {
      tick = function(c)
        c.memory.runs = (c.memory.runs or 0) + 1
        return c.memory.runs
      end,
    })
    local runs = {}
    local tree2 = bt.tree(bt.control {
      tick = function(c)
        c.memory.runs = (c.memory.runs or 0) + 1
        runs[#runs + 1] = c.memory.runs
        return bt.SUCCESS
      end,
    })
    assert.truthy(tree)
    local a, b = bt.agent(tree2), bt.agent(tree2)
    a:tick(1); a:tick(1); b:tick(1); a:tick(1)
    assert.same({ 1, 2, 1, 3 }, runs)
    a:reset()
    a:tick(1)
    assert.equal(1, runs[5])
  end)

  it("gives enter and abort c, the agent, its blackboard and its args too; "
     .. "c.memory and c.n in every callback", function()
    local a = agent_of(bt.control { args = { k = 7 },
      enter = function(c, agent, bb, args)
        c.memory.e = args.k
        t:add("enter n=" .. c.n .. " " .. tostring(bb == agent.bb))
      end,
      tick = function(c) t:add("tick e=" .. c.memory.e) return c:tick(1) end,
      abort = function(c, agent, bb, args)
        t:add("abort n=" .. c.n .. " e=" .. c.memory.e .. " k=" .. args.k ..
              " " .. tostring(bb == agent.bb))
      end,
      t:action("A", "R") })
    assert.equal("running | enter n=1 true; tick e=7; enter A; tick A",
                 t:step(a, 1))
    a:abort()
    assert.equal("abort n=1 e=7 k=7 true; abort A", t:take())
  end)

  it("keeps c.memory through a tick error and a:abort (only a:reset "
     .. "empties it)", function()
    local boom = false
    local a = agent_of(bt.control {
      name = "C",
      tick = function(c)
        c.memory.n = (c.memory.n or 0) + 1
        t:add("n=" .. c.memory.n)
        return c:tick(1)
      end,
      bt.action(function() if boom then error("boom") end
                           return bt.RUNNING end) })
    a:tick(1)
    boom = true
    tick_error(a)
    boom = false
    a:tick(1)
    a:abort()
    a:tick(1)
    assert.equal("n=1; n=2; n=3; n=4", t:take())
  end)

  it("c.memory = {} replaces the memory: saved, kept by a reload, emptied "
     .. "by a:reset", function()
    local tree = bt.tree(bt.control { name = "C", tick = function(c)
      t:add(tostring(c.memory.x))
      c.memory = { x = (c.memory.x or 0) + 1 }
      return bt.RUNNING
    end }, { name = "R" })
    local a = bt.agent(tree)
    a:tick(1)
    a:tick(1)
    local b = bt.agent(tree, { restore = a:save() })
    b:tick(1)
    assert(tree:reload(bt.control { name = "C", tick = function(c)
      t:add(tostring(c.memory.x))
      return bt.RUNNING
    end }))
    b:tick(1)
    b:reset()
    b:tick(1)
    assert.equal("nil; 1; 2; 3; nil", t:take())
  end)

  it("starts with an empty memory when a reload put another kind at its "
     .. "path, then a control node again", function()
    local function ctl()
      return bt.control { name = "C", tick = function(c)
        c.memory.n = (c.memory.n or 0) + 1
        t:add("n=" .. c.memory.n)
        return true
      end }
    end
    local tree = bt.tree(bt.sequence { name = "S", ctl() }, { name = "K" })
    local a = bt.agent(tree)
    a:tick(1)
    a:tick(1)
    assert(tree:reload(bt.sequence { name = "S",
      bt.sequence { name = "C", t:action("A", "S") } }))
    a:tick(1)
    assert(tree:reload(bt.sequence { name = "S", ctl() }))
    a:tick(1)
    assert.equal("n=1; n=2; enter A; tick A; exit A success; n=1", t:take())
  end)

  it("c:tick returns skipped for a child whose run_while turned false, "
     .. "after aborting it", function()
    local child = t:action("A", "R")
    child.run_while = "go"
    local a = agent_of(bt.control {
      tick = function(c)
        local s = c:tick(1)
        t:add(s)
        if s == bt.SKIPPED then return bt.SUCCESS end
        return s
      end,
      child }, { blackboard = { go = true } })
    assert.equal("running | enter A; tick A; running", t:step(a, 1))
    a.bb.go = false
    assert.equal("success | abort A; skipped", t:step(a, 1))
  end)

  it("goes on through a reload, its memory and running children kept",
     function()
    local function root(extra)
      local def = {
        name = "C",
        enter = function(c) t:add("enter C") c.memory.k = 0 end,
        tick = function(c)
          c.memory.k = c.memory.k + 1
          t:add("tick C n=" .. c.n .. " k=" .. c.memory.k)
          return c:tick(c.n) -- its last child: B
        end,
      }
      if extra then def[#def + 1] = t:action("Z", "S") end
      def[#def + 1] = t:action("A", "S")
      def[#def + 1] = t:action("B", "RRRS")
      return bt.control(def)
    end
    local tree = bt.tree(root(false), { name = "R" })
    local a = bt.agent(tree)
    assert.equal("running | enter C; tick C n=2 k=1; enter B; tick B",
                 t:step(a, 1))
    assert(tree:reload(root(true)))
    assert.equal("running | tick C n=3 k=2; tick B", t:step(a, 1))
  end)

  it("keeps its memory when a reload moves it to another place", function()
    local function root(extra)
      local ctl = bt.control {
        name = "C",
        tick = function(c)
          c.memory.k = (c.memory.k or 0) + 1
          t:add("k=" .. c.memory.k)
          return c:tick(1)
        end,
        t:action("A", "R"),
      }
      if extra then
        return bt.sequence { name = "S", t:action("X", "S"), t:action("Y", "S"),
                             ctl }
      end
      return bt.sequence { name = "S", ctl }
    end
    local tree = bt.tree(root(false), { name = "moved" })
    local a, b = bt.agent(tree), bt.agent(tree)
    assert.equal("running | k=1; enter A; tick A", t:step(a, 1))
    assert.equal("running | k=2; tick A", t:step(a, 1))
    assert(tree:reload(root(true)))
    assert.equal("running | k=3; tick A", t:step(a, 1))
    -- another agent, which had not run, starts the new version afresh
    assert.equal("running | enter X; tick X; exit X success; enter Y; " ..
                 "tick Y; exit Y success; k=1; enter A; tick A", t:step(b, 1))
  end)

  it("is traced: the node and its children's statuses", function()
    local a = agent_of(myseq({ bt.action(function() return true end) }, "S"))
    a:trace(64)
    a:tick(1)
    local seen = {}
    for _, e in ipairs(a:events()) do
      seen[#seen + 1] = e.node .. "=" .. e.status
    end
    assert.same({ "S=running", "S/action[1]=running", "S/action[1]=success",
                  "S=success" }, seen)
  end)

  it("nests: a control node among another's children", function()
    local a = agent_of(myseq({ t:action("A", "S"),
                               myseq({ t:action("B", "RS") }, "inner"),
                               t:action("C", "S") }, "outer"))
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.same({ "outer", "inner", "B" }, a:running())
    assert.equal("success | tick B; exit B success; enter C; tick C; "
                 .. "exit C success", t:step(a, 1))
  end)

  it("sees the view of a remapping subtree's blackboard", function()
    local inner = bt.tree(bt.control {
      tick = function(c, agent, bb) bb.hp = (bb.hp or 0) + 1 return true end,
    }, { name = "inner_ctl" })
    local a = agent_of(bt.subtree(inner, { remap = { hp = "health" } }))
    a:tick(1)
    assert.equal(1, a.bb.health)
    assert.is_nil(a.bb.hp)
  end)

  it("is made by the builder too", function()
    local tree = bt.builder()
      :control{ name = "C", tick = function(c) return c:tick(2) end }
        :action(function() return false end)
        :action(function() return true end)
      :back()
      :build{ name = "built" }
    assert.equal(bt.SUCCESS, bt.agent(tree):tick(1))
  end)
end)

describe("bt.control errors", function()
  local function ctl(tick, ...)
    return bt.control { name = "C", tick = tick, ... }
  end

  it("a raising callback is a leaf error of the node; the agent goes on",
     function()
    local boom = false
    local a = agent_of(ctl(function(c)
      if boom then error("boom") end
      return c:tick(1)
    end, t:action("A", "R")))
    a:tick(1)
    boom = true
    local msg = tick_error(a)
    assert.matches("tree 'T' node 'C': .*boom", msg)
    assert.equal("enter A; tick A; abort A", t:take())
    boom = false
    assert.equal(bt.RUNNING, a:tick(1))
  end)

  it("names the node for enter and abort errors too", function()
    local a = agent_of(bt.control { name = "C", tick = function() return
      bt.RUNNING end, enter = function() error("in enter") end })
    assert.matches("node 'C': .*in enter", tick_error(a))
    local b = agent_of(bt.control { name = "C", tick = function() return
      bt.RUNNING end, abort = function() error("in abort") end })
    b:tick(1)
    local ok, msg = pcall(b.abort, b)
    assert.is_false(ok)
    assert.matches("node 'C': .*in abort", msg)
  end)

  it("refuses a bad status", function()
    assert.matches("node 'C': invalid status 'nope'",
                   tick_error(agent_of(ctl(function() return "nope" end))))
  end)

  it("refuses a child out of range", function()
    local msg = tick_error(agent_of(ctl(function(c) return c:tick(2) end,
                                        t:action("A", "S"))))
    assert.matches("node 'C': .*c:tick: no child 2 %(the node has 1%)", msg)
  end)

  it("a child's error names the child", function()
    local msg = tick_error(agent_of(ctl(function(c) return c:tick(1) end,
      bt.sequence { t:action("A", "E") })))
    assert.matches("node 'C/sequence%[1%]/A': .*A failed on purpose", msg)
  end)

  it("a child's error caught by the callback still fails the node",
     function()
    local a = agent_of(ctl(function(c)
      pcall(c.tick, c, 1)
      return bt.SUCCESS
    end, t:action("A", "E")))
    assert.matches("node 'C': a child's error was caught inside the callback",
                   tick_error(a))
  end)

  it("cannot tick its own agent", function()
    local a
    a = agent_of(ctl(function() return a:tick(1) end))
    assert.matches("node 'C': .*agent is already ticking", tick_error(a))
  end)

  it("cannot keep a tick going: its child ticks are bounded", function()
    local a = agent_of(ctl(function(c)
      while true do c:tick(1) end
    end, t:action("A", "R")))
    assert.matches("node 'C': ticked its children more than 1002 times in "
                   .. "one tick", tick_error(a))
  end)

  it("c:tick works only inside its own node's tick callback", function()
    local kept
    local a = agent_of(bt.control {
      name = "C",
      enter = function(c) c:tick(1) end,
      tick = function() return bt.SUCCESS end,
      t:action("A", "S"),
    })
    assert.matches("node 'C': .*c:tick: only during its node's tick callback",
                   tick_error(a))
    local b = agent_of(ctl(function(c) kept = c return bt.RUNNING end,
                           t:action("A", "S")))
    b:tick(1)
    assert.has_error(function() kept:tick(1) end)
    -- from a child's leaf, during the child's run: refused too
    local c2 = agent_of(ctl(function(c) kept = c return c:tick(1) end,
      bt.action(function() return kept:tick(1) end)))
    assert.matches("only during its node's tick callback", tick_error(c2))
  end)

  it("refuses a control node without a tick function, or a bad callback",
     function()
    assert.matches("a control node needs a tick function",
                   trace.tree_error(bt.control { t:action("A", "S") }))
    assert.matches("control field 'abort' must be a function",
                   trace.tree_error(bt.control { tick = print, abort = 1 }))
  end)

  it("refuses control nodes nested deeper than 32", function()
    local n = bt.action(function() return true end)
    for _ = 1, 33 do
      n = bt.control { tick = function(c) return c:tick(1) end, n }
    end
    assert.matches("nested more than 32 deep", trace.tree_error(n))
  end)

  it("runs 32 nested control nodes", function()
    local n = bt.action(function() return true end)
    for _ = 1, 32 do
      n = bt.control { tick = function(c) return c:tick(1) end, n }
    end
    assert.equal(bt.SUCCESS, agent_of(n):tick(1))
  end)
end)

describe("bt.control and saves", function()
  it("saves and restores a running control node with an empty memory",
     function()
    local root = bt.control {
      name = "C",
      tick = function(c) return c:tick(1) end,
      bt.wait { seconds = 2 },
    }
    local tree = bt.tree(root, { name = "saved" })
    local a = bt.agent(tree)
    a:tick(1)
    local b = bt.agent(tree, { restore = a:save() })
    assert.same({ "C", "wait[1]" }, b:running())
    assert.equal(bt.RUNNING, b:tick(1)) -- the wait started at time 1
    assert.equal(bt.SUCCESS, b:tick(1))
  end)

  it("saves c.memory with plain values, matched by path on restore",
     function()
    local function root(extra)
      local ctl = bt.control {
        name = "C",
        tick = function(c)
          c.memory.k = (c.memory.k or 0) + 1
          c.memory.log = c.memory.log or { first = c.memory.k }
          t:add("k=" .. c.memory.k .. " first=" .. c.memory.log.first)
          return c:tick(1)
        end,
        t:action("A", "R"),
      }
      if extra then return bt.sequence { name = "S", t:action("X", "S"), ctl } end
      return bt.sequence { name = "S", ctl }
    end
    local tree = bt.tree(root(false), { name = "mem" })
    local a = bt.agent(tree)
    a:tick(1)
    a:tick(1)
    local s = a:save()
    local b = bt.agent(tree, { restore = s })
    t:take()
    assert.equal("running | k=3 first=1; tick A", t:step(b, 1))
    -- after a reload that moved the node, the memory follows its path
    assert(tree:reload(root(true)))
    local c = bt.agent(tree, { restore = s })
    assert.equal("running | k=3 first=1; tick A", t:step(c, 1))
    -- a save without memories is the core's format alone
    assert.equal("BNSA", bt.agent(tree):save():sub(1, 4))
    assert.equal("BNSL", s:sub(1, 4))
  end)

  it("refuses a memory it cannot save, naming the node", function()
    local a = agent_of(bt.control {
      name = "C",
      tick = function(c) c.memory.f = print return bt.RUNNING end,
    })
    a:tick(1)
    local ok, msg = pcall(a.save, a)
    assert.is_false(ok)
    assert.matches("tree 'T': cannot save node 'C': c.memory: ", msg)
  end)

  it("refuses corrupted memories", function()
    local a = agent_of(bt.control { tick = function(c) c.memory.k = 1
                                                       return true end })
    a:tick(1)
    local s = a:save()
    local ok, msg = pcall(bt.agent, a.tree, { restore = s:sub(1, 10) })
    assert.is_false(ok)
    assert.matches("cannot restore: corrupted bt.control memories", msg)
  end)
end)
