-- bonsai.nodes.controls: control nodes of the editor formats that no
-- Bonsai kind has, written with bt.control (docs/CUSTOM_NODES.md) with
-- their runtime's semantics: BehaviorTree.CPP 4's AsyncSequence,
-- AsyncFallback, SequenceWithMemory, SwitchN, TryCatch, the LoopT queues,
-- Precondition's else="RUNNING",
-- behavior3's Switch, Foreach, Loop, Filter and Assert. Each takes the
-- node's children, already built; a
-- Switch reads its variable through get(bb), a Loop its count through
-- count(bb), at each tick.
local M = {}

local SUCCESS, FAILURE, RUNNING = "success", "failure", "running"
local SKIPPED = "skipped"

local function control(bt, kids, def)
  for i, k in ipairs(kids) do def[i] = k end
  return bt.control(def)
end

-- AsyncSequence (go = "success") and AsyncFallback (go = "failure"): the
-- children in turn, a running one resumed; a child ending with `go` hands
-- over to the next, and when it had not been running before this tick the
-- node returns RUNNING first (BehaviorTree.CPP wakes the tree at once and
-- goes on at the next tick); a skipped child is passed over at once; any
-- other end ends the node with it. Past the last child: `go`, or skipped
-- when every child was skipped in this run.
function M.async(bt, kids, go)
  return control(bt, kids, {
    enter = function(c)
      c.memory.i, c.memory.running, c.memory.skipped = nil, nil, nil
    end,
    tick = function(c)
      local m = c.memory
      local i = m.i or 1
      while i <= c.n do
        local was = m.running == i
        local s = c:tick(i)
        if s == RUNNING then
          m.i, m.running = i, i
          return RUNNING
        elseif s == SKIPPED then
          i, m.skipped = i + 1, (m.skipped or 0) + 1
        elseif s ~= go then
          m.i, m.running = nil, nil
          return s
        else
          i, m.running = i + 1, nil
          if not was and i <= c.n then
            m.i = i
            return RUNNING
          end
        end
      end
      m.i = nil
      return m.skipped == c.n and SKIPPED or go
    end,
  })
end

-- SequenceWithMemory: a sequence that keeps its place when a child fails
-- (the next run ticks that child again) and when it is cut off; it starts
-- from its first child only after all succeeded (its memory is empty
-- then). A skipped child is passed over; when all its children were
-- skipped in this run, the node is skipped.
function M.sequence_with_memory(bt, kids)
  return control(bt, kids, {
    enter = function(c) c.memory.skipped = nil end,
    tick = function(c)
      local m = c.memory
      local i = m.i or 1
      while i <= c.n do
        local s = c:tick(i)
        if s == SKIPPED then
          m.skipped = (m.skipped or 0) + 1
        elseif s ~= SUCCESS then
          m.i = i > 1 and i or nil
          return s
        end
        i = i + 1
      end
      m.i = nil
      return m.skipped == c.n and SKIPPED or SUCCESS
    end,
  })
end

-- Precondition with else="RUNNING": the condition (the first child) is
-- asked while the child (the second) is not running; false: the node is
-- running without ticking the child, and asks again at the next tick; true:
-- the child's run, to its end.
function M.precondition_running(bt, kids)
  local function reset(c) c.memory.child = nil end
  return control(bt, kids, {
    enter = reset,
    abort = reset,
    tick = function(c)
      local m = c.memory
      if not m.child then
        if c:tick(1) ~= SUCCESS then return RUNNING end
        m.child = true
      end
      local s = c:tick(2)
      if s ~= RUNNING then m.child = nil end
      return s
    end,
  })
end

-- TryCatch: all children but the last as a sequence (the try block);
-- when one fails, the last child (the catch) runs to its end and the node
-- fails; success when the try block succeeds.
function M.try_catch(bt, kids)
  return control(bt, kids, {
    enter = function(c) c.memory.i, c.memory.catching = nil, nil end,
    tick = function(c)
      local m = c.memory
      local i = m.i or 1
      while not m.catching and i < c.n do
        local s = c:tick(i)
        if s == RUNNING then
          m.i = i
          return RUNNING
        end
        if s == FAILURE then
          m.i, m.catching = nil, true
        else
          i = i + 1
        end
      end
      if not m.catching then
        m.i = nil
        return SUCCESS
      end
      if c:tick(c.n) == RUNNING then return RUNNING end
      m.catching = nil
      return FAILURE
    end,
  })
end

-- behavior3's Switch over its Cases, flattened: kids are the condition and
-- the action of each case in turn. The first case whose condition succeeds
-- (a condition may run) runs its action, whose status is the node's; no
-- case: failure.
function M.cases(bt, kids)
  return control(bt, kids, {
    enter = function(c) c.memory.k = nil end,
    tick = function(c)
      local m = c.memory
      local k = m.k or 1
      while k <= c.n do
        local s = c:tick(k)
        if s == RUNNING then
          m.k = k
          return RUNNING
        end
        if k % 2 == 0 then -- an action
          m.k = nil
          return s
        end
        k = s == SUCCESS and k + 1 or k + 2
      end
      m.k = nil
      return FAILURE
    end,
  })
end

-- BehaviorTree.CPP 4's LoopInt, LoopDouble, LoopString, LoopBool: while
-- its child does not run, takes the next item of the queue (a list: the
-- static one the file wrote, copied at each run, or the blackboard's at
-- queue(bb), whose first item is removed) into value(bb, item) and ticks
-- the child once; running after each item, failure when the child fails,
-- `empty` when no item is left.
function M.queue_loop(bt, kids, static, queue, value, empty)
  return control(bt, kids, {
    enter = function(c)
      local m = c.memory
      m.running = nil
      if static then
        m.items = {}
        for i, v in ipairs(static) do m.items[i] = v end
      end
    end,
    tick = function(c, _, bb)
      local m = c.memory
      if not m.running then
        local q = static and m.items or queue(bb)
        if type(q) ~= "table" or q[1] == nil then
          m.items = nil
          return empty
        end
        value(bb, table.remove(q, 1))
      end
      local s = c:tick(1)
      m.running = s == RUNNING or nil
      if s == FAILURE then
        m.items = nil
        return FAILURE
      end
      return RUNNING
    end,
  })
end

-- behavior3's Foreach: for each item of the list at blackboard key `list`,
-- the item at key `item`, then its children in turn; a failure fails it, a
-- running child is resumed (the item set again); success at the end.
function M.foreach(bt, kids, list, item)
  return control(bt, kids, {
    enter = function(c) c.memory.i, c.memory.j = nil, nil end,
    tick = function(c, _, bb)
      local m = c.memory
      local arr = bb[list]
      local i, j = m.i or 1, m.j or 1
      if type(arr) ~= "table" then
        error("'" .. list .. "' is not a list (" .. type(arr) .. ")", 0)
      end
      while i <= #arr do
        bb[item] = arr[i]
        while j <= c.n do
          local s = c:tick(j)
          if s ~= SUCCESS then
            if s == RUNNING then m.i, m.j = i, j else m.i, m.j = nil, nil end
            return s
          end
          j = j + 1
        end
        i, j = i + 1, 1
      end
      m.i, m.j = nil, nil
      return SUCCESS
    end,
  })
end

-- behavior3lua's Loop: its children in turn, count(bb) times, whatever
-- they return; a running child is resumed at the next tick, the loop going
-- on from it; success at the end.
function M.loop(bt, kids, count)
  return control(bt, kids, {
    enter = function(c) c.memory.i, c.memory.j = nil, nil end,
    tick = function(c, _, bb)
      local m = c.memory
      local n, i, j = count(bb), m.i or 1, m.j or 1
      while i <= n do
        while j <= c.n do
          if c:tick(j) == RUNNING then
            m.i, m.j = i, j
            return RUNNING
          end
          j = j + 1
        end
        i, j = i + 1, 1
      end
      m.i, m.j = nil, nil
      return SUCCESS
    end,
  })
end

-- BehaviorTree.CPP's string equality of a variable and a case: the same
-- text, or both numbers and equal.
local function same(v, case)
  if v == nil or case == nil then return false end
  if tostring(v) == tostring(case) then return true end
  local x, y = tonumber(v), tonumber(case)
  return x ~= nil and x == y
end

-- SwitchN: the child of the first case equal to the variable (get(bb)),
-- else the last child (default); a running child that is no longer chosen
-- is aborted. cases[k] is the value of case_k (or nil: never chosen).
function M.switch(bt, kids, get, cases)
  return control(bt, kids, {
    abort = function(c) c.memory.running = nil end,
    tick = function(c, _, bb)
      local m = c.memory
      local v, pick = get(bb), c.n
      for k = 1, c.n - 1 do
        if same(v, cases[k]) then
          pick = k
          break
        end
      end
      if m.running and m.running ~= pick then c:abort(m.running) end
      local s = c:tick(pick)
      m.running = s == RUNNING and pick or nil
      return s
    end,
  })
end

-- behavior3lua's Filter: for each item of the list bb[list] (none, or an
-- empty list: failure), the item in bb[item] and its first child ticked; the
-- items whose run succeeded are collected; a running child is resumed on
-- the same item. At the end bb[item] is cleared, bb[out] gets the items
-- collected, and the node succeeds (even with none, as behavior3lua does).
function M.filter(bt, kids, list, item, out)
  return control(bt, kids, {
    enter = function(c) c.memory.i, c.memory.kept = nil, nil end,
    tick = function(c, _, bb)
      local m = c.memory
      local arr = bb[list]
      if arr == nil then return FAILURE end
      if type(arr) ~= "table" then
        error("'" .. list .. "' is not a list (" .. type(arr) .. ")", 0)
      end
      if #arr == 0 then return FAILURE end
      local i, kept, resumed = m.i or 1, m.kept or {}, m.i ~= nil
      while i <= #arr do
        if not resumed then bb[item] = arr[i] end
        resumed = false
        local s = c:tick(1)
        if s == RUNNING then
          m.i, m.kept = i, kept
          return RUNNING
        elseif s == SUCCESS then
          kept[#kept + 1] = arr[i]
        end
        i = i + 1
      end
      m.i, m.kept = nil, nil
      bb[item], bb[out] = nil, kept
      return SUCCESS
    end,
  })
end

-- behavior3's Assert: its child's status, but a failure is an error of the
-- node with the message (a leaf error: the tick raises it).
function M.assert(bt, kids, message)
  return control(bt, kids, {
    tick = function(c)
      local s = c:tick(1)
      if s == FAILURE then error(message, 0) end
      return s
    end,
  })
end

-- behavior3-ts's Watchdog: its first child (the test; running is an error
-- of the node) every tick; on success the second runs, its run kept
-- across ticks, and its status is the node's; on failure the second is cut
-- off, the third ticked once (cut off if it runs) and the node fails.
function M.watchdog(bt, kids)
  return control(bt, kids, {
    tick = function(c)
      local s = c:tick(1)
      if s == RUNNING then
        error("its test (the first child) is running; a Watchdog's test " ..
              "must end in its tick", 0)
      elseif s == FAILURE then
        c:abort(2)
        if c:tick(3) == RUNNING then c:abort(3) end
        return FAILURE
      end
      return c:tick(2)
    end,
  })
end

-- behavior3-ts's RetryUntilSuccess (stop = "success") and
-- RetryUntilFailure (stop = "failure"), as its execution stack runs them:
-- a try that ends with stop ends the node with success; another end starts
-- the next try at the next tick when the try ended in the tick it started,
-- in the same tick when it ran over several ticks; after count(bb) tries
-- (nil: no limit) the node fails instead.
function M.retry_until(bt, kids, stop, count)
  return control(bt, kids, {
    enter = function(c) c.memory.tries, c.memory.running = nil, nil end,
    tick = function(c, _, bb)
      local m = c.memory
      if m.tries then
        if m.running then
          local s = c:tick(1)
          if s == RUNNING then return RUNNING end
          m.running = nil
          if s == stop then return SUCCESS end
        end
        local n = count(bb)
        if n and m.tries >= n then return FAILURE end
        m.tries = m.tries + 1
      else
        m.tries = 1
      end
      local s = c:tick(1)
      if s == stop then return SUCCESS end
      m.running = s == RUNNING or nil
      return RUNNING
    end,
  })
end

-- behavior3-ts's AlwaysRunning: running, its child ticked again and again;
-- a new run at the next tick after a run of one tick, in the same tick
-- after a run of several ticks (behavior3-ts's stack ticks the node again
-- when its running child ends).
function M.always_running(bt, kids)
  return control(bt, kids, {
    enter = function(c) c.memory.running = nil end,
    tick = function(c)
      local m = c.memory
      if m.running and c:tick(1) == RUNNING then return RUNNING end
      m.running = c:tick(1) == RUNNING or nil
      return RUNNING
    end,
  })
end

-- behavior3's Listen on the tree's own events. listening() is the state
-- the Listens of one tree share: events[k], Listen k's event ("before",
-- "after", "success" or "failure"), children[k] its child (or nil), and
-- each agent's list of the Listens it has ticked. listener(state, k) is
-- Listen k in the tree: an action that starts its listening (once per
-- agent, whatever the number of its ticks) and succeeds.
function M.listening()
  return { events = {}, children = {},
           memories = setmetatable({}, { __mode = "k" }) }
end

function M.listener(state, k)
  return { type = "action", fn = function(a)
    local m = state.memories[a]
    m.order = m.order or {}
    for _, j in ipairs(m.order) do
      if j == k then return true end
    end
    m.order[#m.order + 1] = k
    return true
  end }
end

-- The tree's root under a control node that runs the Listens' children:
-- at every tick first those of "game" (a game's event: each is a sequence
-- of bt.event and the Listen's child, which runs in the tick the event is
-- delivered), before a new run of the root those of "before", after a run
-- ended those of "after", then of "success" or "failure" (as behavior3
-- dispatches its tree events); each in the order its Listen was first
-- ticked, for one tick (a child still running is cut off, as behavior3
-- does). c.memory holds the agent's list, so a:reset() forgets it and a
-- reload keeps it.
function M.listen(bt, root, state)
  local kids, at = { root }, {}
  for k = 1, #state.events do
    if state.children[k] then
      kids[#kids + 1] = state.children[k]
      at[k] = #kids
    end
  end
  local function fire(c, m, event)
    local i = 1
    while m.order and m.order[i] do -- a child may start more Listens
      local k = m.order[i]
      if state.events[k] == event and at[k] and c:tick(at[k]) == RUNNING then
        c:abort(at[k])
      end
      i = i + 1
    end
  end
  return control(bt, kids, {
    name = "events",
    enter = function(c) c.memory.fresh = true end,
    tick = function(c, a)
      local m = c.memory
      state.memories[a] = m
      fire(c, m, "game")
      if m.fresh then
        m.fresh = nil
        fire(c, m, "before")
      end
      local s = c:tick(1)
      if s == SUCCESS or s == FAILURE then
        fire(c, m, "after")
        fire(c, m, s)
      end
      return s
    end,
  })
end

return M
