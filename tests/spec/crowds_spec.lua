-- crowds_spec.lua: many agents: sleeping agents (bt.sleep, a:wake,
-- a:sleeping, and what wakes them), tick budgets (bt.tick_all with
-- { budget = n }) and the sleep cache of long lists (src/lua/lsleep.c), tick by
-- tick.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local unpack = luaver.unpack
local trace = require "helpers.trace"

-- An agent whose leaf "nap" sleeps s seconds each time it is ticked,
-- logging its ticks; returns the agent and the log.
local function napper(s, opts)
  local log = {}
  local T = bt.tree(bt.sequence { name = "root",
    bt.action { name = "nap", tick = function(a)
      log[#log + 1] = a.time
      return bt.sleep(s)
    end, abort = function() log[#log + 1] = "abort" end } },
    { name = "t" })
  return bt.agent(T, opts), log
end

describe("bt.sleep", function()
  it("makes bt.tick_all skip the agent for that much of its time, while " ..
     "its clock goes on", function()
    local a, log = napper(2)
    assert.is_nil(bt.tick_all({ a }, 1))
    assert.same({ 1 }, log)
    assert.equal(2, a:sleeping())
    assert.equal("running", a:status())
    bt.tick_all({ a }, 1) -- time 2: asleep until 3
    assert.same({ 1 }, log)
    assert.equal(2, a.time)
    assert.equal(1, a:sleeping())
    bt.tick_all({ a }, 1) -- time 3: ticked, sleeps again until 5
    assert.same({ 1, 3 }, log)
    assert.equal(2, a:sleeping())
  end)

  it("is ended by a:tick, which ticks the tree", function()
    local a, log = napper(10)
    a:tick(1)
    assert.equal(10, a:sleeping())
    a:tick(1)
    assert.same({ 1, 2 }, log)
    assert.equal(10, a:sleeping())
  end)

  it("is ended by a:wake, a:abort, a:reset and an error", function()
    local a, log = napper(10)
    a:tick(1)
    a:wake()
    assert.is_nil(a:sleeping())
    bt.tick_all({ a }, 1)
    assert.same({ 1, 2 }, log)
    a:abort()
    assert.is_nil(a:sleeping())
    a:tick(1)
    a:reset()
    assert.is_nil(a:sleeping())
    local b = bt.agent(bt.tree(bt.action(function()
      bt.sleep(5)
      error("after sleeping", 0)
    end), { name = "e" }))
    assert.equal("tree 'e' node 'action': after sleeping", trace.tick_error(b))
    assert.is_nil(b:sleeping())
  end)

  it("is ended when a key one of its guards watches changes", function()
    local log = {}
    local T = bt.tree(bt.selector { name = "root",
      bt.guard { name = "g", bt.check("alarm", "==", true), abort = "lower",
        bt.action { name = "fight", tick = function()
          log[#log + 1] = "fight"; return bt.RUNNING end } },
      bt.action { name = "idle", tick = function()
        log[#log + 1] = "idle"; return bt.sleep(100) end } },
      { name = "t" })
    local a = bt.agent(T, { blackboard = { alarm = false } })
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    a.bb.other = 1 -- not watched: it sleeps on
    bt.tick_all({ a }, 1)
    assert.same({ "idle" }, log)
    a.bb.alarm = true
    bt.tick_all({ a }, 1)
    assert.same({ "idle", "fight" }, log)
    assert.is_nil(a:sleeping())
  end)

  it("still asks the agent's interrupts; one that fires wakes and " ..
     "aborts it", function()
    local a, log = napper(100)
    local asked = 0
    a:add_interrupt(function(ag)
      asked = asked + 1
      return ag.time >= 4
    end)
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    bt.tick_all({ a }, 1)
    assert.same({ 1 }, log)
    assert.equal(3, asked)
    assert.equal("running", a:status())
    local errs = bt.tick_all({ a }, 1)
    assert.is_nil(errs)
    assert.same({ 1, "abort" }, log)
    assert.equal("aborted", a:status())
    assert.is_nil(a:sleeping())
  end)

  it("works from a task's yield", function()
    local log = {}
    local a = bt.agent(bt.tree(bt.task(function(ag)
      for _ = 1, 2 do
        log[#log + 1] = ag.time
        coroutine.yield(bt.sleep(3))
      end
      return true
    end), { name = "t" }))
    for _ = 1, 6 do bt.tick_all({ a }, 1) end
    assert.same({ 1, 4 }, log)
    assert.equal("running", a:status())
    bt.tick_all({ a }, 1)
    assert.same({ 1, 4 }, log)
    assert.equal("success", a:status())
  end)

  it("needs a ticking agent and a number >= 0", function()
    assert.has_error(function() bt.sleep(1) end, "bt.sleep: no agent is ticking")
    assert.has_error(function() bt.sleep(-1) end)
    assert.has_error(function() bt.sleep(0 / 0) end)
  end)

  it("lets a reloaded tree's agent switch when it wakes", function()
    local a, log = napper(2)
    bt.tick_all({ a }, 1)
    assert(a.tree:reload(bt.sequence { name = "root",
      bt.action { name = "other", tick = function()
        log[#log + 1] = "other"; return bt.RUNNING end } }))
    bt.tick_all({ a }, 1) -- asleep: not switched yet
    assert.same({ 1 }, log)
    bt.tick_all({ a }, 1)
    assert.same({ 1, "abort", "other" }, log)
  end)
end)

describe("bt.tick_all with a budget", function()
  local function counters(n)
    local T = bt.tree(bt.action(function(a)
      a.owner.ticks[#a.owner.ticks + 1] = a.time
      return bt.RUNNING
    end), { name = "t" })
    local list = {}
    for i = 1, n do
      list[i] = bt.agent(T, { owner = { id = i, ticks = {} } })
    end
    return list
  end

  it("ticks at most n agents a call, taking up where the last call " ..
     "stopped, each with the dt it missed", function()
    local list = counters(5)
    bt.tick_all(list, 1, { budget = 2 }) -- 1, 2 (list clock 1)
    bt.tick_all(list, 1, { budget = 2 }) -- 3, 4 (clock 2)
    bt.tick_all(list, 1, { budget = 2 }) -- 5, 1 (clock 3)
    local t = {}
    for i, a in ipairs(list) do t[i] = a.time end
    assert.same({ 3, 1, 2, 2, 3 }, t)
    assert.same({ 1, 3 }, list[1].owner.ticks)
    assert.same({ 3 }, list[5].owner.ticks)
  end)

  it("counts only awake agents", function()
    local list = counters(3)
    local sleeper = bt.agent(bt.tree(bt.action(function(a)
      a.owner.n = a.owner.n + 1
      return bt.sleep(100)
    end), { name = "s" }), { owner = { n = 0 } })
    table.insert(list, 1, sleeper)
    bt.tick_all(list, 1, { budget = 1 }) -- the sleeper, asleep after
    bt.tick_all(list, 1, { budget = 1 }) -- list[2]
    bt.tick_all(list, 1, { budget = 1 }) -- list[3]
    bt.tick_all(list, 1, { budget = 1 }) -- list[4]
    bt.tick_all(list, 1, { budget = 1 }) -- the sleeper skipped, list[2]
    assert.equal(1, sleeper.owner.n)
    assert.equal(5, sleeper.time)
    assert.same({ 2, 5 }, list[2].owner.ticks)
  end)

  it("reports errors and refuses a bad budget", function()
    local T = bt.tree(bt.action(function() error("x", 0) end), { name = "e" })
    local list = { bt.agent(T), 42, bt.agent(T) }
    local errs = bt.tick_all(list, 1, { budget = 10 })
    assert.equal(3, #errs)
    assert.equal("element 2 is not an agent", errs[2].error)
    assert.has_error(function() bt.tick_all(list, 1, { budget = -1 }) end)
    assert.has_error(function() bt.tick_all(list, 1, { budget = 1.5 }) end)
  end)
end)

describe("bt.tick_all over a long list of sleepers", function()
  -- A list of n agents whose leaf counts its ticks in a.owner.ticks and
  -- sleeps a.owner.s seconds (100 unless set), under a guard watching the
  -- key "alarm" (then the leaf "fight" runs). Such a list gets a sleep
  -- cache (its second call that skips 16 sleepers or more, 1 in a debug
  -- build, makes it; the next fills it): warm() ticks it past that, every
  -- agent asleep.
  local function sleepers(n)
    local T = bt.tree(bt.selector { name = "root",
      bt.guard { name = "g", bt.check("alarm", "==", true), abort = "lower",
        bt.action { name = "fight", tick = function(a)
          a.owner.fights = a.owner.fights + 1; return bt.RUNNING end } },
      bt.action { name = "nap", tick = function(a)
        a.owner.ticks = a.owner.ticks + 1
        return bt.sleep(a.owner.s or 100)
      end, abort = function(a) a.owner.aborts = a.owner.aborts + 1 end } },
      { name = "s" })
    local list = {}
    for i = 1, n do
      list[i] = bt.agent(T, { owner = { id = i, ticks = 0, fights = 0,
        aborts = 0 }, blackboard = { alarm = false } })
    end
    return list
  end
  local function warm(list)
    for _ = 1, 6 do assert.is_nil(bt.tick_all(list, 1)) end
  end
  local function field(list, k)
    local t = {}
    for i, a in ipairs(list) do t[i] = k == "time" and a.time or a.owner[k] end
    return t
  end
  local function rep(v, n)
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  local function counter()
    return bt.agent(bt.tree(bt.action(function(a)
      a.owner.ticks = a.owner.ticks + 1
      return bt.RUNNING
    end), { name = "c" }), { owner = { ticks = 0 } })
  end

  it("skips them call after call, their clocks moving", function()
    local list = sleepers(32)
    warm(list)
    for _ = 1, 10 do assert.is_nil(bt.tick_all(list, 0.5)) end
    assert.same(rep(1, 32), field(list, "ticks"))
    assert.same(rep(11, 32), field(list, "time"))
    assert.equal(90, list[32]:sleeping())
    list[9].owner.s = 2 -- its next nap is short
    list[9]:wake()
    bt.tick_all(list, 1) -- ticked: time 12, asleep until 14
    assert.equal(2, list[9].owner.ticks)
    bt.tick_all(list, 1)
    assert.equal(2, list[9].owner.ticks)
    bt.tick_all(list, 1) -- time 14: awake, ticked again
    assert.equal(3, list[9].owner.ticks)
    assert.equal(1, list[10].owner.ticks)
  end)

  it("ticks an agent put in a sleeper's entry, and leaves the one taken " ..
     "out alone", function()
    local list = sleepers(32)
    warm(list)
    local out, x = list[5], counter()
    list[5] = x
    list[7] = list[8] -- a sleeper listed twice
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(1, x.owner.ticks)
    assert.equal(6, out.time)
    assert.equal(8, list[8].time)
    list[5] = out
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(7, out.time)
    assert.equal(1, x.owner.ticks)
    assert.equal(10, list[8].time)
    assert.same(rep(1, 32), field(list, "ticks"))
  end)

  it("sees the edits a leaf makes to the entries after its own", function()
    local list = sleepers(32)
    local x, broken = counter(), { "not an agent" }
    local e = bt.agent(bt.tree(bt.action(function(a)
      if a.owner.edit then
        list[5] = x
        list[7] = broken
        a.owner.edit = false
      end
      return bt.RUNNING
    end), { name = "e" }), { owner = { edit = false } })
    table.insert(list, 1, e) -- ticked first, then the sleepers
    warm(list)
    local out = list[5]
    e.owner.edit = true
    local errs = bt.tick_all(list, 1)
    assert.equal(1, x.owner.ticks)
    assert.equal(6, out.time)
    assert.equal(1, #errs)
    assert.equal(broken, errs[1].agent)
    assert.equal("element 7 is not an agent", errs[1].error)
    assert.equal(7, list[8].time)
  end)

  it("sees an agent's [1] replaced once the state it held wakes",
     function()
    local list = sleepers(32)
    warm(list) -- time 6, and the list has its sleep cache
    local a, b = list[3], list[4]
    local state = a[1]
    a[1] = nil -- a sleeping entry's skip does not read [1]: a sleeps on
    state = setmetatable({ state }, { __mode = "v" }) -- held by the cache
    collectgarbage()
    collectgarbage()
    state = state[1]
    if not luaver.ephemerons then
      -- (5.1, LuaJIT: the cache anchors nothing, lest a list whose agents
      -- refer to it never go, and reads [1]: the state went, and the entry
      -- goes the ordinary way at once)
      assert.is_nil(state)
      local errs = bt.tick_all(list, 1)
      assert.equal(1, #errs)
      assert.equal("element 3 is not an agent", errs[1].error)
      return
    end
    assert.is_userdata(state)
    assert.is_nil(bt.tick_all(list, 1))
    assert.is_nil(a.time) -- nothing at [1]: no clock to read
    assert.has_error(function() a:wake() end)
    a[1] = {}
    assert.is_nil(bt.tick_all(list, 1))
    a[1] = state
    assert.equal(8, a.time) -- the state's clock moved at both calls
    a:wake()
    a[1] = {} -- awake now: the call reads [1] and refuses it
    local errs = bt.tick_all(list, 1)
    assert.equal(1, #errs)
    assert.equal(a, errs[1].agent)
    assert.equal("element 3 is not an agent", errs[1].error)
    a[1] = b[1] -- b's state, asleep, in two entries: its clock moves twice
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(11, b.time)
    a[1] = state -- entry 3 still names b's state, which sleeps: a waits
    b:wake() -- until it wakes; then each entry goes its own way
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(9, a.time) -- its own state: woken, ticked, asleep again
    assert.equal(12, b.time)
    assert.equal(11, list[5].time)
    assert.same({ 1, 1, 2, 2, 1 }, { list[1].owner.ticks,
      list[2].owner.ticks, a.owner.ticks, b.owner.ticks, list[5].owner.ticks })
  end)

  -- (a list brought back by its finalizer: tables have none before 5.2)
  local it_gc = luaver.table_gc and it or pending
  it_gc("refuses the finalized agents of a list a finalizer brought back",
     function()
    local other = sleepers(4) -- a cache alive elsewhere: caches are looked up
    warm(other)
    local saved
    do -- a list whose tree only its agents hold: all go in one cycle
      local T = bt.tree(bt.action(function() return bt.sleep(100) end),
                        { name = "gone" })
      local list = {}
      for i = 1, 4 do list[i] = bt.agent(T) end
      warm(list)
      setmetatable(list, { __gc = function(l) saved = l end })
    end
    collectgarbage()
    collectgarbage()
    assert.equal(4, #saved) -- its agents' states were finalized meanwhile
    local errs = bt.tick_all(saved, 1)
    assert.equal(4, #errs)
    for i = 1, 4 do
      assert.equal(saved[i], errs[i].agent)
      assert.equal("element " .. i .. " is not an agent", errs[i].error)
    end
    assert.is_nil(bt.tick_all(other, 1))
  end)

  it("lets go of an agent taken out of the list at a call with a budget",
     function()
    local list = sleepers(20)
    warm(list)
    local weak = setmetatable({}, { __mode = "k" })
    weak[list[5].owner] = true
    list[5] = sleepers(1)[1] -- despawned, another spawned in its place
    assert.is_nil(bt.tick_all(list, 1, { budget = 8 }))
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(weak))
  end)

  it("follows the list when it shrinks, shifts and grows", function()
    local list = sleepers(32)
    warm(list)
    local last = list[32]
    list[32] = nil
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(6, last.time)
    local first = table.remove(list, 1) -- every entry moves down
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(7, first.time)
    assert.same(rep(8, 30), field(list, "time"))
    for _ = 1, 3 do bt.tick_all(list, 1) end -- known again at their places
    local x, y = counter(), counter()
    list[31], list[32] = x, y
    list[33] = first
    assert.is_nil(bt.tick_all(list, 1))
    assert.same({ 1, 1, 8 }, { x.owner.ticks, y.owner.ticks, first.time })
    assert.same(rep(12, 30), field({ unpack(list, 1, 30) }, "time"))
    assert.same(rep(1, 30), field({ unpack(list, 1, 30) }, "ticks"))
  end)

  it("ticks at once a sleeper woken by a:wake, by a key its guard " ..
     "watches or by an interrupt", function()
    local list = sleepers(32)
    warm(list)
    list[2]:wake()
    list[3].bb.alarm = true
    list[4].bb.other = 1 -- not watched: it sleeps on
    local asked = 0
    list[5]:add_interrupt(function(a)
      asked = asked + 1
      return a.owner.fire == true
    end)
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(2, list[2].owner.ticks)
    assert.same({ 1, 1 }, { list[3].owner.ticks, list[3].owner.fights })
    assert.equal("running", list[3]:status())
    assert.is_nil(list[3]:sleeping())
    assert.same({ 1, 0 }, { list[4].owner.ticks, list[4].owner.fights })
    assert.equal(1, asked)
    assert.same({ 1, 0 }, { list[5].owner.ticks, list[5].owner.aborts })
    list[5].owner.fire = true
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(2, asked)
    assert.same({ 1, 1 }, { list[5].owner.ticks, list[5].owner.aborts })
    assert.equal("aborted", list[5]:status())
    assert.is_nil(list[5]:sleeping())
    list[5].owner.fire = false
    assert.is_nil(bt.tick_all(list, 1)) -- ticked: it naps again
    assert.equal(2, list[5].owner.ticks)
    assert.equal(3, asked)
    assert.same(rep(9, 32), field(list, "time"))
  end)

  it("lets an agent dropped from the list, and the list, be collected",
     function()
    local list = sleepers(32)
    warm(list)
    local gone = setmetatable({}, { __mode = "v" })
    gone.replaced, gone.cut = list[7], list[32]
    gone.state = list[7][1]
    list[7] = counter()
    list[32] = nil
    bt.tick_all(list, 1)
    collectgarbage()
    collectgarbage()
    assert.is_nil(gone.replaced)
    assert.is_nil(gone.state)
    assert.is_nil(gone.cut)
    gone.tenth = list[10]
    for i = 31, 4, -1 do list[i] = nil end -- a short list now
    bt.tick_all(list, 1)
    collectgarbage()
    collectgarbage()
    assert.is_nil(gone.tenth)
    gone.list, gone.first = list, list[1]
    list = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    collectgarbage() -- 5.1 clears weak values of finalized objects one later
    assert.is_nil(gone.list)
    assert.is_nil(gone.first)
  end)

  it("keeps budgets and calls from a leaf on the same list working",
     function()
    local list = sleepers(32)
    warm(list)
    local errs
    local w = bt.agent(bt.tree(bt.action(function(a)
      a.owner.ticks = a.owner.ticks + 1
      if a.owner.nest then errs = bt.tick_all(list, 1) end
      return bt.RUNNING
    end), { name = "w" }), { owner = { ticks = 0, nest = true } })
    list[33] = w
    assert.is_nil(bt.tick_all(list, 1)) -- and inside, a call on the list
    assert.equal(1, #errs)
    assert.equal(w, errs[1].agent)
    assert.matches("already ticking", errs[1].error)
    assert.same(rep(8, 32), field({ unpack(list, 1, 32) }, "time"))
    w.owner.nest = false
    bt.tick_all(list, 1, { budget = 1 }) -- the sleepers do not count
    bt.tick_all(list, 1, { budget = 1 })
    assert.equal(3, w.owner.ticks)
    assert.same(rep(1, 32), field({ unpack(list, 1, 32) }, "ticks"))
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal(4, w.owner.ticks)
    assert.same(rep(11, 32), field({ unpack(list, 1, 32) }, "time"))
  end)
end)

describe("a list's sleep cache", function()
  -- Two worlds built alike. One ticks its own list, which gets a sleep
  -- cache; the other ticks a copy of its list made for each call (a new
  -- table every time, which never gets one). The same random edits go to
  -- both between calls, and after each call the worlds must look the same.
  local N = 40
  local function world(seed)
    local w = { seed = seed, agents = {}, list = {}, fire = {} }
    local function rand(n) -- the world's own numbers, drawn in tick order
      w.seed = (w.seed * 1103515245 + 12345) % 2147483648
      return math.floor(w.seed / 65536) % n + 1
    end
    local T = bt.tree(bt.selector { name = "root",
      bt.guard { name = "g", bt.check("alarm", "==", true), abort = "lower",
        bt.action { name = "fight", tick = function(a)
          a.owner.fights = a.owner.fights + 1
          a.bb.alarm = false
          return bt.SUCCESS
        end } },
      bt.action { name = "nap", tick = function(a)
        a.owner.ticks = a.owner.ticks + 1
        local r = rand(8)
        if r <= 6 then return bt.sleep(r) end
        return bt.RUNNING
      end, abort = function(a) a.owner.aborts = a.owner.aborts + 1 end } },
      { name = "twin" })
    for i = 1, N do
      local a = bt.agent(T, { owner = { id = i, ticks = 0, fights = 0,
        aborts = 0 }, blackboard = { alarm = false } })
      w.agents[i], w.list[i] = a, a
    end
    return w
  end

  -- What can be seen of a world: its agents and the errors of a call.
  local function look(w, errs)
    local t = {}
    for i, a in ipairs(w.agents) do
      local o = a.owner
      t[i] = { o.ticks, o.fights, o.aborts }
      t[i][4], t[i][5], t[i][6] = a.time, a:status(), a:sleeping()
    end
    for k, e in ipairs(errs or {}) do
      t[N + k] = { type(e.agent) == "table" and e.agent.owner.id or e.agent,
                   e.error }
    end
    return t
  end

  -- One random edit (r: the shared numbers), made in both worlds.
  local function edit(ws, r)
    local op, i, j = r(12), r(N), r(N)
    for _, w in ipairs(ws) do
      local l, a = w.list, w.agents[i]
      if op == 1 and #l > 0 then l[(i - 1) % #l + 1] = w.agents[j]
      elseif op == 2 then l[#l] = nil
      elseif op == 3 then l[#l + 1] = w.agents[j]
      elseif op == 4 and #l > 0 then table.remove(l, (i - 1) % #l + 1)
      elseif op == 5 then a:reset()
      elseif op == 6 then a:abort()
      elseif op == 7 then a:wake()
      elseif op == 8 then a.bb.alarm = true
      elseif op == 9 and not w.fire[i] then
        w.fire[i] = function(ag) return ag.owner.fire == true end
        a:add_interrupt(w.fire[i])
      elseif op == 10 and w.fire[i] then
        a:remove_interrupt(w.fire[i])
        w.fire[i] = nil
      elseif op == 11 then a.owner.fire = not a.owner.fire
      elseif op == 12 and #l > 0 then l[(i - 1) % #l + 1] = 42
      end
    end
    if op == 5 or op == 12 or r(4) == 1 then collectgarbage() end
  end

  it("changes nothing that can be seen", function()
    for seed = 1, 12 do
      local ws = { world(seed), world(seed) }
      local s = seed
      local function r(n)
        s = (s * 69069 + 1) % 4294967296
        return math.floor(s / 65536) % n + 1
      end
      for step = 1, 120 do
        local errs = bt.tick_all(ws[1].list, 1)
        local copy = {}
        for i, x in ipairs(ws[2].list) do copy[i] = x end
        local want = look(ws[2], bt.tick_all(copy, 1))
        assert.same(want, look(ws[1], errs), "seed " .. seed .. " step " ..
                    step)
        if step > 8 then -- the cache is made and filled by then
          for _ = 1, r(3) - 1 do edit(ws, r) end
        end
      end
    end
  end)
end)
