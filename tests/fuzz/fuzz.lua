-- tests/fuzz/fuzz.lua: a randomized, model-checked test of the Lua API.
-- Each seed builds a small world (trees of every node kind, bt.control
-- nodes, scripts, pre- and post-conditions on any node, agents, shared
-- blackboards, observers, interrupts, named leaves) and runs random steps
-- on it; leaf, exit, abort, control, condition, observer and interrupt
-- callbacks re-enter the API (tick, tick_all, abort, reset, reload,
-- register, writes, list edits, dropped references, garbage collection)
-- and raise; control callbacks catch their children's errors. The callbacks keep
-- the fuzzer's own books; after every step they are compared with the
-- library: enters paired with one exit or abort, a:running() equal to the
-- entered leaves (an aborting one, whose abort answered bt.RUNNING, marked
-- so), each task's cleanup (bt.defer) run once, each error naming its node
-- and being the first raised, no error swallowed, the clock never going
-- back, the events a traced agent was sent delivered in order, once each,
-- and an event node succeeding exactly in a tick its event was delivered
-- to, and at the end of a seed every byte of bt.memory() back and every
-- payload sent let go.
--
--   lua5.4 tests/fuzz/fuzz.lua --seeds 1-100 --steps 2000
--   lua5.4 tests/fuzz/fuzz.lua --seconds 60        (new seeds, from the time)
--   lua5.4 tests/fuzz/fuzz.lua --replay 17 --steps 2000   (prints each step)
-- (any Lua: lua5.1, luajit, lua5.3 run it the same, a seed drawing the same
-- numbers)
--   --without reload,reenter,...  leaves a feature out (see FEATURES)
--   --stepped   worlds whose ticks the LuaJIT path steps (leaves without
--               exit or abort callbacks, no tasks, no utility functions,
--               control nodes without abort)
--   --log       with --replay, also prints every callback as it is called
--   --events    with --log, traces every agent and prints its events after
--               each step (tests/fuzz/differential.lua compares the output
--               of the LuaJIT path's and the lua_call path's runs)

local root = (arg and arg[0] or ""):match("^(.-)/?tests/fuzz/[^/]*$") or "."
if root == "" then root = "." end
package.path = package.path .. ";" .. root .. "/lua/?.lua;" .. root ..
               "/lua/?/init.lua"
package.cpath = package.cpath .. ";" .. root .. "/build/src/?.so"

local bt = require "bonsai"
local unpack = table.unpack or unpack
local pack = table.pack or function(...)
  return { n = select("#", ...), ... }
end

-- Options ------------------------------------------------------------------

local FEATURES = {
  "reload",    -- tree:reload and bt tree swaps
  "reenter",   -- callbacks that call the API
  "raise",     -- callbacks that raise, leaves returning bad statuses
  "observers", -- bb:observe / unobserve
  "interrupts",-- a:add_interrupt / remove_interrupt
  "register",  -- bt.register of named leaves, also while they run
  "tick_all",  -- bt.tick_all over lists that callbacks edit
  "tasks",     -- bt.task leaves
  "gc",        -- collectgarbage, dropped agents and trees
  "guards",    -- bt.guard with observer aborts
  "priority",  -- priority sections
  "abort",     -- a:abort and a:reset
  "abort_reenter", -- abort callbacks (and exit(aborted)) that call the API
  "lists",     -- callbacks that edit the lists bt.tick_all walks
  "sleep",     -- bt.sleep from leaves and tasks, a:wake
  "budget",    -- bt.tick_all(list, dt, { budget = n })
  "save",      -- a:save() and bt.agent(tree, { restore = s })
  "subtree",   -- bt.subtree of library trees, reloaded under their hosts
  "control",   -- bt.control nodes: random decisions, children ticked and
               -- aborted in odd orders, several running at once
  "events",    -- a:send and bt.send (also from callbacks, to the agent
               -- itself), bt.event, bt.wait_event, bt.guard{ event }
  "latent",    -- abort callbacks (leaves, control nodes) that answer
               -- bt.RUNNING, with or without abort_timeout
  "catch",     -- control callbacks that catch a child's error (pcall) and
               -- go on: succeed, raise their own, raise it again, or
               -- return no status
  "scripts",   -- bt.script and bt.script_condition leaves
  "conditions",-- pre- and post-conditions (skip_if ... post) on any node:
               -- scripts, and functions that re-enter the API and raise
  "leafsave",  -- lifecycle leaves with save and restore (their state
               -- checked after a restore)
}

local opt = { first = 1, last = 20, steps = 500, seconds = nil, replay = nil,
              without = {}, verbose = false, stepped = false, log = false,
              events = false }
do
  local i = 1
  while arg and arg[i] do
    local a, v = arg[i], arg[i + 1]
    if a == "--seeds" then
      local x, y = v:match("^(%d+)%-(%d+)$")
      if not x then x = v:match("^(%d+)$"); y = x end
      opt.first, opt.last = tonumber(x), tonumber(y)
      i = i + 1
    elseif a == "--steps" then opt.steps = tonumber(v); i = i + 1
    elseif a == "--seconds" then opt.seconds = tonumber(v); i = i + 1
    elseif a == "--replay" then opt.replay = tonumber(v); i = i + 1
    elseif a == "--without" then
      for f in v:gmatch("[^,]+") do opt.without[f] = true end
      i = i + 1
    elseif a == "--verbose" then opt.verbose = true
    elseif a == "--stepped" then opt.stepped = true
    elseif a == "--log" then opt.log = true
    elseif a == "--events" then opt.events = true
    else
      io.stderr:write("fuzz.lua: unknown option " .. a .. "\n")
      os.exit(2)
    end
    i = i + 1
  end
end
local ON = {}
for _, f in ipairs(FEATURES) do ON[f] = not opt.without[f] end
if opt.stepped then ON.tasks = false end
-- Event nodes: the LuaJIT path does not step their versions (a payload may
-- be written through Lua), so its worlds only send events to agents
local EVNODES = ON.events and not opt.stepped
for f in pairs(opt.without) do
  if ON[f] == nil then
    io.stderr:write("fuzz.lua: unknown feature " .. f .. "\n")
    os.exit(2)
  end
end

-- Random numbers, one stream per seed: a 64-bit linear congruential
-- generator (Knuth's MMIX constants) on four 16-bit limbs, so that a seed
-- draws the same numbers on every Lua (only floats before 5.3) ------------

local R = {}
local A = { 0x7f2d, 0x4c95, 0xf42d, 0x5851 }
local C = { 0x814f, 0xf767, 0x7b7e, 0x1405 }
local rstate
local function rnext() -- the state's top 48 bits, as an integral float
  local s, carry, r = rstate, 0, {}
  for i = 1, 4 do
    local v = carry + C[i]
    for j = 1, i do v = v + s[j] * A[i - j + 1] end
    r[i] = v % 65536
    carry = math.floor(v / 65536)
  end
  rstate = r
  return (r[4] * 65536 + r[3]) * 65536 + r[2]
end
local function rseed(s)
  rstate = { s % 65536, math.floor(s / 65536) % 65536, 0x5DEE, 0xCE66 }
  for _ = 1, 4 do rnext() end
end
function R.int(n) return math.floor(rnext() / 131072) % n + 1 end -- 1..n
function R.chance(p) return rnext() / 281474976710656 < p end
function R.pick(t) return t[R.int(#t)] end

-- The world of one seed and its books ---------------------------------------

local W            -- the current world (nil between seeds)
local KEYS = { "k1", "k2", "k3", "k4", "k5", "k6" }
-- Ordered checks read n1 and n2 only, which always hold numbers (ordering
-- anything else is a run-time error the books cannot foresee).
local NKEYS = { "n1", "n2" }
local NREG = 6     -- named leaves fz.r1..fz.r6
local EVENTS = { "e1", "e2", "e3" }
-- The event of the event node called id (the books read it back from the
-- name alone).
local function eventof(id)
  return EVENTS[tonumber(id:match("%d+")) % #EVENTS + 1]
end

local function violation(msg)
  local v = W.violations
  v[#v + 1] = msg .. " (depth " .. W.depth .. ")"
end

local STATS = {}
local function count(k) STATS[k] = (STATS[k] or 0) + 1 end

local function trace(s)
  count(s:match("^%s*%-> (error)") or s:match("^(%a+_?%a*)") or s)
  local t = W.trace
  t[#t + 1] = string.rep("  ", W.depth) .. s
  if #t > 60 then table.remove(t, 1) end
  if opt.replay then print(string.rep("  ", W.depth) .. s) end
end

-- Books per agent, weakly keyed: a dropped agent may still be mid-tick.
local function book(a)
  local b = W.books[a]
  if not b then
    b = { entered = {}, time = 0, id = "?", ended = {},
          sent = {}, got = 0 } -- events sent; of them, those seen delivered
    W.books[a] = b
  end
  return b
end

-- Frames: one per API call (top level or from a callback); a callback that
-- raises records its error in the innermost frame.
local function frame() return W.frames[#W.frames] end

local function record(a, node, msg, aborting)
  local f = frame()
  if not f then
    violation("a callback raised outside any API call: " .. tostring(msg))
    return
  end
  if a == nil then
    f.obs[#f.obs + 1] = msg
  else
    local l = f.raises[a]
    if not l then l = {}; f.raises[a] = l end
    l[#l + 1] = { node = node, msg = msg, aborting = aborting }
  end
end

local function clockcheck(a)
  if type(a) ~= "table" then return end
  local b = book(a)
  local ok, t = pcall(function() return a.time end)
  if ok and type(t) == "number" then
    if t < b.time then
      violation(("agent %s: the clock went back from %s to %s"):format(
        b.id, b.time, t))
    end
    b.time = t
  end
end

-- API calls -------------------------------------------------------------------

local api -- forward
local effect -- forward

-- The message m of an error raised at node 'node' (nil: an interrupt) as
-- the tick reports it; msg nil means a message made by the library.
local function matches(M, r)
  if type(M) ~= "string" then return false end
  if r.node == nil then
    return M:match("^tree '[^']*': (.*)$") == r.msg
  end
  local path, rest = M:match("^tree '[^']*' node '([^']*)': (.*)$")
  if not path then return false end
  if (path:match("([^/]+)$") or path) ~= r.node then return false end
  return r.msg == nil or rest == r.msg
end

local function refusal(M)
  return type(M) == "string" and (M:find("already ticking", 1, true) or
         M:find("is not an agent", 1, true) or
         M:find("C stack overflow", 1, true) or
         M:find("error in error handling", 1, true))
end

-- An event node's write of its payload (bb:set) raised in an observer: the
-- node's error.
local function payloadwrite(f, M)
  local node, rest = tostring(M):match("^tree '[^']*' node '([^']*)': (.*)$")
  if not (node and (node:match("([^/]+)$") or ""):match("^[VQ]%d+$")) then
    return false
  end
  for _, m in ipairs(f.obs) do
    if m == rest then return true end
  end
  return false
end

-- Checks an API call on agent a (tick, abort, reset) that returned ok, res.
local function checkagentcall(what, a, f, ok, res)
  local raises = f.raises[a]
  local b = book(a)
  if ok then
    if raises then
      violation(("%s of %s returned %s but its callback raised '%s' "
        .. "(error swallowed)"):format(what, b.id, tostring(res),
        tostring(raises[1].msg)))
    end
    if what == "tick" then
      if res ~= "running" and res ~= "success" and res ~= "failure" and
         res ~= "aborted" and res ~= "skipped" then -- (skip_unless_updated)
        violation("tick returned " .. tostring(res))
      elseif a:status() ~= res then
        violation(("tick returned %s, a:status() is %s"):format(res,
          a:status()))
      end
    end
    return
  end
  if raises then
    if not matches(res, raises[1]) then
      violation(("%s of %s raised %q, expected the first error %q at %s")
        :format(what, b.id, tostring(res), tostring(raises[1].msg),
                tostring(raises[1].node)))
    end
    -- (an abort callback that fails while the agent switches versions
    -- leaves the kept nodes running)
    if what == "tick" and not raises[1].aborting and
       a:status() ~= "aborted" then
      violation("after an error a:status() is " .. a:status())
    end
  elseif not refusal(res) and not payloadwrite(f, res) then
    violation(("%s of %s raised %q, but no callback raised"):format(what,
      b.id, tostring(res)))
  end
end

-- --events: the events each agent's trace recorded since the last step.
local function printevents()
  for _, a in ipairs(W.agents) do
    local ok, evs = pcall(a.events, a)
    for _, e in ipairs(ok and evs or {}) do
      print(("  event %s %s %s %s%s%s %s"):format(book(a).id, e.tick,
        tostring(e.node), e.status or e.event, e.again and " again" or "",
        e.forced and " forced" or "", e.message or ""))
    end
  end
end

-- Runs fn(...) as one API call in its own frame; returns ok, result.
function api(desc, check, fn, ...)
  local f = { raises = {}, obs = {} }
  local fr = W.frames
  fr[#fr + 1] = f
  trace(desc)
  local r = pack(pcall(fn, ...))
  if fr[#fr] ~= f then violation("frames out of order after " .. desc) end
  fr[#fr] = nil
  if opt.events and opt.replay and #fr == 0 then printevents() end
  if check then check(f, r[1], r[2]) end
  if not r[1] then trace("  -> error: " .. tostring(r[2])) end
  return unpack(r, 1, r.n)
end

local function tick(a, dt)
  if opt.replay then
    local ok, d = pcall(function() return a.tree:dump(a) end)
    print(ok and d or "")
  end
  return api("tick " .. book(a).id .. " dt=" .. dt, function(f, ok, res)
    checkagentcall("tick", a, f, ok, res)
  end, a.tick, a, dt)
end

local function abortop(a, m)
  return api(m .. " " .. book(a).id, function(f, ok, res)
    checkagentcall(m, a, f, ok, res)
  end, a[m], a)
end

local function tickall(list, dt, opts)
  local outer = W.walking
  W.walking = list
  local r = pack(api("tick_all list of " .. #list .. " dt=" .. dt,
    function(f, ok, res)
      if not ok then
        if not refusal(res) then
          violation("bt.tick_all raised " .. tostring(res))
        end
        return
      end
      local errs = {}
      for _, e in ipairs(res or {}) do
        local a = e.agent
        local rs = f.raises[a]
        if a ~= nil then errs[a] = true end
        trace(("  -> error of %s (%s in a row): %s"):format(
          tostring(W.books[a] and W.books[a].id or a), tostring(e.count),
          tostring(e.error)))
        if rs then
          local any = false
          for _, r in ipairs(rs) do any = any or matches(e.error, r) end
          if not any then
            violation(("tick_all: error %q of %s matches none of its "
              .. "callbacks' errors (first %q)"):format(tostring(e.error),
              book(a).id, tostring(rs[1].msg)))
          end
        elseif not refusal(e.error) and not payloadwrite(f, e.error) then
          violation(("tick_all: error %q for %s, whose callbacks did not "
            .. "raise"):format(tostring(e.error), tostring(a and
            W.books[a] and W.books[a].id)))
        end
      end
      for a, rs in pairs(f.raises) do
        if not errs[a] then
          violation(("tick_all: %s raised %q, but no error entry names it")
            :format(book(a).id, tostring(rs[1].msg)))
        end
      end
    end, bt.tick_all, list, dt, opts))
  W.walking = outer
  return unpack(r, 1, r.n)
end

local function write(bb, key, v)
  return api("write " .. key .. " = " .. tostring(v), function(f, ok, res)
    if ok and #f.obs > 0 then
      violation("a write returned but its observer raised " ..
        tostring(f.obs[1]))
    elseif not ok and #f.obs == 0 and not refusal(res) then
      violation("a write raised " .. tostring(res) ..
        ", but no observer raised")
    elseif not ok and #f.obs > 0 and res ~= f.obs[1] then
      violation(("a write raised %q, the first observer error was %q")
        :format(tostring(res), tostring(f.obs[1])))
    end
  end, function() bb[key] = v end)
end

-- Leaves ------------------------------------------------------------------

local function newmsg()
  W.nerr = W.nerr + 1
  return "E" .. W.nerr
end

-- What a callback does besides its result: maybe an effect, maybe raise.
local function sideeffects(a, aborting)
  if aborting and not ON.abort_reenter then return end
  if ON.reenter and W.depth < 3 and R.chance(0.08) then
    count("(re-entrant effects)")
    W.depth = W.depth + 1
    local ok, err = pcall(effect, a)
    W.depth = W.depth - 1
    if not ok then error(err, 0) end
  end
end

local function maybe_raise()
  if ON.raise and R.chance(0.02) then error(newmsg(), 0) end
end

-- Forgets the errors recorded for agent a in the current frame after the
-- first n0 of them: a callback caught them.
local function forget(a, n0)
  local f = frame()
  local l = f and f.raises[a]
  if not l then return end
  for j = #l, n0 + 1, -1 do l[j] = nil end
  if #l == 0 then f.raises[a] = nil end
end

-- How many errors the current frame holds for agent a.
local function recorded(a)
  local f = frame()
  local l = f and f.raises[a]
  return l and #l or 0
end

-- Runs body(...) for agent a at node id; records an escaping error.
local function guarded(a, id, body, aborting)
  if opt.log and opt.replay then
    print(string.rep("  ", W.depth) .. "call " .. book(a).id .. " " ..
          tostring(id))
  end
  local ok, r = pcall(body)
  if not ok then
    count("(callback errors)")
    record(a, id, type(r) == "string" and r or "(error object is not a " ..
           "string)", aborting)
    error(r, 0)
  end
  return r
end

local function status(running_ok)
  local x = R.int(100)
  if ON.raise and x <= 1 then return "bogus", true end
  if running_ok and x <= 45 then return bt.RUNNING end
  if x <= 72 then return bt.SUCCESS end
  return bt.FAILURE
end

-- A lifecycle leaf's callbacks; variant: 1 all four, 2 no abort, 3 no exit.
-- A leaf whose last abort call answered bt.RUNNING is entered, ticked or
-- exited: right if the core had ended its abort (cut it off, or ignored
-- the answer of a final call), which a:running() then no longer marks.
local function stillaborting(a, b, id, what)
  for _, name in ipairs(a:running()) do
    if name == id .. " (aborting)" then
      violation(("%s %s %s while aborting"):format(b.id, id, what))
    end
  end
end

local function lifecycle(variant)
  local t = {}
  t.enter = function(a, bb, args)
    local id = args.id
    guarded(a, id, function()
      local b = book(a)
      clockcheck(a)
      trace("enter " .. b.id .. " " .. id)
      if b.entered[id] == "aborting" then
        stillaborting(a, b, id, "entered")
      elseif b.entered[id] then
        violation(b.id .. " " .. id .. " entered twice")
      end
      sideeffects(a)
      maybe_raise()
      b.entered[id] = "leaf"
    end)
  end
  t.tick = function(a, bb, args)
    local id = args.id
    return guarded(a, id, function()
      local b = book(a)
      clockcheck(a)
      if not b.entered[id] then
        violation(b.id .. " " .. id .. " ticked without enter")
      elseif b.entered[id] == "aborting" then
        stillaborting(a, b, id, "ticked")
      end
      sideeffects(a)
      maybe_raise()
      local s, bad = status(true)
      if s == bt.RUNNING and ON.sleep and R.chance(0.05) then
        s = bt.sleep(R.pick { 0.3, 1, 3 })
      end
      trace("tick " .. b.id .. " " .. id .. " -> " .. s)
      if bad then
        record(a, id, nil)
      elseif s ~= bt.RUNNING then
        if variant == 3 then b.entered[id] = nil
        else b.ended[id] = s end
      end
      return s
    end)
  end
  if variant ~= 3 then
    t.exit = function(a, bb, args, st)
      local id = args.id
      local b = book(a)
      trace("exit " .. b.id .. " " .. id .. " " .. tostring(st))
      if not b.entered[id] then
        violation(b.id .. " " .. id .. " exit without enter")
      elseif b.entered[id] == "aborting" and st ~= "aborted" then
        -- (a leaf reloaded or re-registered without abort while aborting
        -- ends with exit(aborted); any other exit came after its end)
        violation(b.id .. " " .. id .. " exit after a latent abort")
      end
      if st == "aborted" and b.entered[id] == "aborting" then
        -- (its variant is the new registration's, which has no abort)
      elseif st == "aborted" then
        if variant == 1 then
          violation(b.id .. " " .. id .. " has abort but got exit(aborted)")
        end
      elseif b.ended[id] ~= st then
        violation(("%s %s exit(%s) after its tick returned %s"):format(b.id,
          id, tostring(st), tostring(b.ended[id])))
      end
      b.entered[id], b.ended[id] = nil, nil
      guarded(a, id, function()
        clockcheck(a)
        sideeffects(a, st == "aborted")
        maybe_raise()
      end, st == "aborted")
    end
  end
  if variant == 1 and ON.leafsave then -- its run's state, checked back
    t.save = function(a, bb, args)
      local id, b = args.id, book(a)
      if b.entered[id] ~= "leaf" then
        violation(b.id .. " " .. id .. " saved while not running")
      end
      b.saves = (b.saves or 0) + 1
      b.saved = b.saved or {}
      b.saved[id] = { id = id, n = b.saves, f = b.saves + 0.5 }
      trace("save state " .. b.id .. " " .. id)
      return b.saved[id]
    end
    t.restore = function(a, bb, args, v)
      local b = book(a)
      b.restored = b.restored or {}
      if b.restored[args.id] then
        violation("restore of " .. args.id .. " called twice")
      end
      b.restored[args.id] = v or "nothing"
      count(v and "(leaf states restored)" or "(leaf restores, no state)")
    end
  end
  if variant == 1 or variant == 3 then
    t.abort = function(a, bb, args)
      local id = args.id
      local b = book(a)
      trace("abort " .. b.id .. " " .. id)
      if not b.entered[id] then
        violation(b.id .. " " .. id .. " aborted without enter")
      end
      b.entered[id], b.ended[id] = nil, nil
      guarded(a, id, function()
        clockcheck(a)
        sideeffects(a, true)
        maybe_raise()
      end, true)
      if ON.latent and R.chance(0.35) then -- latent: more calls may come
        b.entered[id] = "aborting"
        trace("  -> running (aborting)")
        return bt.RUNNING
      end
    end
  end
  return t
end

local function plain(a, bb, args)
  return guarded(a, args.id, function()
    clockcheck(a)
    sideeffects(a)
    maybe_raise()
    local s, bad = status(true)
    if bad then record(a, args.id, nil) end
    return s
  end)
end

local function cond(a, bb, args)
  return guarded(a, args.id, function()
    clockcheck(a)
    sideeffects(a)
    maybe_raise()
    if ON.raise and R.chance(0.005) then
      record(a, args.id, nil)
      return bt.RUNNING -- a condition that runs is an error
    end
    return R.chance(0.6)
  end)
end

local function task(a, bb, args)
  local id = args.id
  local b = book(a)
  if b.entered[id] and b.entered[id] ~= "pending" then
    violation(b.id .. " task " .. id .. " started twice")
  end
  b.entered[id] = "task"
  local closed = false
  bt.defer(function()
    if closed then violation(b.id .. " task " .. id .. " closed twice") end
    closed = true
    if b.entered[id] ~= "task" then
      violation(b.id .. " task " .. id .. " closed while not running")
    end
    b.entered[id] = nil
    trace("close " .. b.id .. " " .. id)
  end)
  trace("start " .. b.id .. " " .. id)
  while true do
    local s = guarded(a, id, function()
      clockcheck(a)
      sideeffects(a)
      maybe_raise()
      local s = status(true)
      if s == "bogus" then s = bt.FAILURE end
      return s
    end)
    if s ~= bt.RUNNING then return s end
    if ON.sleep and R.chance(0.05) then
      coroutine.yield(bt.sleep(R.pick { 0.3, 1, 3 }))
    else
      coroutine.yield()
    end
  end
end

-- A leaf with only enter and tick (--stepped: no exit or abort callback,
-- so the books cannot pair its enters; they are logged and called).
local function entered(name)
  return {
    enter = function(a, bb, args)
      guarded(a, args.id, function()
        clockcheck(a)
        trace("enter " .. book(a).id .. " " .. args.id)
        sideeffects(a)
        maybe_raise()
      end)
    end,
    tick = function(a, bb, args) return plain(a, bb, args) end,
    name = name,
  }
end

-- Named leaves: the registry is process-wide, so they look the world up.
local function register(k, variant)
  local def = opt.stepped and entered() or lifecycle(variant)
  bt.register("fz.r" .. k, def)
end

-- Trees ------------------------------------------------------------------

local COMPOSITES = { "sequence", "selector", "reactive_sequence",
                     "reactive_selector", "parallel", "utility_selector" }
local DECORATORS = { "invert", "force_success", "force_failure", "repeater",
                     "retry", "repeat_until_failure", "timeout", "time_limit",
                     "limit", "cooldown", "run_once", "delay",
                     "skip_unless_updated", "wait_value_update" }
local OPS = { "==", "~=", "<", "<=", ">", ">=" }

-- A random spec (plain tables) of a subtree; ids are unique in a version.
-- (a library tree's ids start at 10000 times its number, so that a host
-- that inlines it keeps every name unique)
local function newid(used, prefix, n)
  for _ = 1, 50 do
    local id = prefix .. (W.idbase + R.int(n))
    if not used[id] then used[id] = true; return id end
  end
  W.nid = W.nid + 1
  local id = prefix .. (W.idbase + n + W.nid)
  used[id] = true
  return id
end

local function checkspec()
  local v = R.int(5) - 1
  if R.chance(0.3) then
    return { kind = "is_set", key = R.pick(KEYS) }
  end
  local op = R.pick(OPS)
  if op == "==" or op == "~=" then
    if R.chance(0.2) then v = "$" .. R.pick(KEYS) end
    return { kind = "check", key = R.pick(KEYS), op = op, value = v }
  end
  if R.chance(0.2) then v = "$" .. R.pick(NKEYS) end
  return { kind = "check", key = R.pick(NKEYS), op = op, value = v }
end

local function genleaf(used)
  local x = R.int(100)
  if x <= 35 and opt.stepped then
    return { kind = "enter", id = newid(used, "E", 30) }
  end
  if x <= 35 then
    return { kind = "life", id = newid(used, "L", 30), variant = R.int(3),
             atimeout = ON.latent and R.pick { false, false, 0, 0.5, 2 } or
                        nil }
  end
  if x <= 45 and ON.tasks then
    return { kind = "task", id = newid(used, "K", 12) }
  end
  if x <= 55 and EVNODES and x > 49 then
    local kind = R.pick { "event", "wait_event" }
    local id = newid(used, kind == "event" and "V" or "Q", 12)
    return { kind = kind, id = id,
             key = R.chance(0.6) and R.pick(KEYS) or nil,
             timeout = R.pick { false, 0, 0.5, 2 } or nil }
  end
  if x <= 55 then return { kind = "plain", id = newid(used, "P", 12) } end
  if x <= 68 then return { kind = "cond", id = newid(used, "C", 16) } end
  if x <= 78 then return { kind = "named",
                           id = newid(used, opt.stepped and "Y" or "R", 12),
                           reg = R.int(NREG) } end
  if x <= 85 then return checkspec() end
  if x <= 88 and ON.scripts then -- scripts that cannot fail: comparisons
    -- of any values, ordering of n1 and n2 (numbers), assignments to the
    -- s keys (no observer, guard or check reads them); no truth of a k key
    -- (it may hold a string or a table: an error, as in BehaviorTree.CPP)
    if R.chance(0.5) then
      return { kind = "script", code = R.pick { "s1 := k1",
        "s2 := n1 + n2; s3 := k2 == k1", "s1 := n1 < n2 ? k3 : k4 != 1" } }
    end
    return { kind = "scond", code = R.pick { "n1 >= n2", "k1 == k2",
      "k5 == false || n2 > 1", "k3 ~= k6 && n1 < 3" } }
  end
  if x <= 92 and ON.subtree and W.idbase == 0 and #W.libs > 0 then
    local j = R.int(#W.libs)
    if not used["lib" .. j] then
      used["lib" .. j] = true
      return { kind = "subtree", lib = j }
    end
  end
  return { kind = "wait", seconds = R.pick { 0, 0.5, 1, 3 } }
end

-- Pre- and post-conditions for a spec: { field = script or true (a
-- function of the fuzzer's) }, or nil. Scripts cannot fail (see genleaf).
local CONDFIELDS = { "skip_if", "success_if", "failure_if", "run_while",
                     "on_success", "on_failure", "on_halted", "post" }
-- (the LuaJIT path's worlds: pre-conditions only, C checks; a post's
-- script, a Lua function, is not stepped)
local PREFIELDS = { "skip_if", "success_if", "failure_if", "run_while" }
local PRE = { "k1 == 1", "n1 > 2", "n1 < n2", "k3 != true", "k2 == k4" }
local POST = { "s1 := k1", "s2 := n1 + 1", "s3 := n1 < n2" }
local function genconds()
  if not ON.conditions or not R.chance(0.25) then return nil end
  local c = {}
  for _ = 1, R.int(2) do
    local f = R.pick(opt.stepped and PREFIELDS or CONDFIELDS)
    local pre = f == "skip_if" or f == "success_if" or f == "failure_if" or
                f == "run_while"
    -- (the LuaJIT path's worlds: scripts only, a function is not stepped)
    c[f] = (not opt.stepped and R.chance(0.4)) or R.pick(pre and PRE or POST)
  end
  return c
end

-- (not on event nodes: the events' books tell their statuses from the
-- deliveries, which success_if or failure_if would overrule)
local NOCONDS = { subtree = true, event = true, wait_event = true }
local function withconds(s)
  if s and s.id and not NOCONDS[s.kind] then s.conds = genconds() end
  return s
end

local function gen(used, depth)
  if depth >= 4 or R.chance(0.3) then return withconds(genleaf(used)) end
  local x = R.int(100)
  local s
  if x <= 45 then
    s = { kind = R.pick(COMPOSITES), id = newid(used, "N", 40), children = {} }
    for i = 1, R.int(4) do s.children[i] = gen(used, depth + 1) end
    if s.kind == "selector" and s.id:byte(-1) % 3 == 0 then
      -- a third of the selectors random ones (from the id: no draw, so a
      -- seed makes the same world otherwise), seeded by a number key
      s.kind, s.key = "random_selector", NKEYS[s.id:byte(-1) % 2 + 1]
    end
    if s.kind == "parallel" then
      s.wait = R.chance(0.3) or nil
      local n = #s.children
      local function pol()
        local y = R.int(3)
        return y == 1 and "all" or y == 2 and "one" or R.int(n)
      end
      s.success, s.failure = pol(), pol()
    end
  elseif x <= 55 then
    s = { kind = R.pick { "filter", "monitor" }, id = newid(used, "N", 40),
          conditions = {}, children = { gen(used, depth + 1) } }
    for i = 1, R.int(3) - 1 do
      s.conditions[i] = R.chance(0.5) and checkspec() or
                        { kind = "cond", id = newid(used, "C", 16) }
    end
  elseif x <= 65 and ON.guards then
    s = { kind = "guard", id = newid(used, "N", 40),
          abort = R.pick { "none", "self", "lower", "both" },
          check = checkspec(), children = { gen(used, depth + 1) } }
  elseif x <= 67 and EVNODES then
    s = { kind = "event_guard", id = newid(used, "N", 40),
          event = R.pick(EVENTS), abort = R.pick { "none", "lower" },
          children = { gen(used, depth + 1) } }
  elseif x <= 73 and ON.control then
    s = { kind = "control", id = newid(used, "N", 40), children = {} }
    for i = 1, R.int(3) do s.children[i] = gen(used, depth + 1) end
  elseif x <= 78 then -- a condition, then one or two branches
    s = { kind = R.pick { "if_then_else", "while_do_else" },
          id = newid(used, "N", 40), children = {} }
    for i = 1, R.int(2) + 1 do s.children[i] = gen(used, depth + 1) end
  else
    s = { kind = R.pick(DECORATORS), id = newid(used, "N", 40),
          children = { gen(used, depth + 1) } }
    local k = s.kind
    if k == "repeater" or k == "retry" or k == "limit" then
      s.times = R.int(4) - 1
    elseif k == "timeout" or k == "time_limit" or k == "cooldown" or
           k == "delay" then
      s.seconds = R.pick { 0, 0.5, 1, 2, 4 }
    elseif k == "skip_unless_updated" or k == "wait_value_update" then
      s.key = R.pick(KEYS)
    elseif k == "run_once" then
      s.then_skip = R.chance(0.5) or nil
    end
  end
  return withconds(s)
end

local function ids(s, used)
  if s.id then used[s.id] = true end
  if s.lib then used["lib" .. s.lib] = true end
  for _, c in ipairs(s.children or {}) do ids(c, used) end
  for _, c in ipairs(s.conditions or {}) do ids(c, used) end
  return used
end

local function copyspec(s)
  local c = {}
  for k, v in pairs(s) do c[k] = v end
  if s.children then
    c.children = {}
    for i, x in ipairs(s.children) do c.children[i] = copyspec(x) end
  end
  if s.conditions then
    c.conditions = {}
    for i, x in ipairs(s.conditions) do c.conditions[i] = copyspec(x) end
  end
  return c
end

-- A mutated copy: one random subtree replaced, or a child of a sequence,
-- selector or reactive node inserted or removed.
local LISTS = { sequence = true, selector = true, reactive_sequence = true,
                reactive_selector = true }
local function mutate(s)
  s = copyspec(s)
  local all = {}
  local function walk(x, parent, i)
    all[#all + 1] = { x = x, parent = parent, i = i }
    for j, c in ipairs(x.children or {}) do walk(c, x, j) end
  end
  walk(s)
  local pick = R.pick(all)
  local used = ids(s, {})
  local y = R.int(3)
  local p = pick.parent
  if p == nil then
    return gen({}, 0)
  elseif y == 1 then
    p.children[pick.i] = gen(used, 2)
  elseif y == 2 and LISTS[p.kind] and #p.children > 1 then
    table.remove(p.children, pick.i)
  elseif LISTS[p.kind] and #p.children < 6 then
    table.insert(p.children, pick.i, genleaf(used))
  end
  return s
end

-- A utility function for the child called id of a utility selector.
local function utilityfn(id)
  return function(a, bb)
    return guarded(a, id, function()
      clockcheck(a)
      sideeffects(a)
      maybe_raise()
      if ON.raise and R.chance(0.003) then
        record(a, id, nil)
        return "high" -- not a number: an error naming the child
      end
      return R.int(5) - 1
    end)
  end
end

-- A bt.control node called id over kids: each tick it ticks and aborts
-- children in a random order (at most c.n + 1 of them), then returns the
-- last child's status (unless skipped) or a random one; its callbacks
-- re-enter the API and raise like leaves; rarely it ticks a child it does
-- not have.
local function control(id, kids)
  local t = { name = id }
  t.enter = function(c, a)
    guarded(a, id, function()
      clockcheck(a)
      sideeffects(a)
      maybe_raise()
      c.memory.runs = (c.memory.runs or 0) + 1
    end)
  end
  t.tick = function(c, a)
    return guarded(a, id, function()
      count("(control ticks)")
      clockcheck(a)
      sideeffects(a)
      maybe_raise()
      local last, caught, n0 = bt.FAILURE, nil, 0
      for _ = 1, R.int(c.n + 2) - 1 do
        local i = R.int(c.n)
        if R.chance(0.15) then
          c:abort(i)
        elseif ON.catch and R.chance(0.2) then
          n0 = recorded(a)
          local ok, r = pcall(c.tick, c, i)
          if not ok then caught = r break end
          last = r
        else
          last = c:tick(i)
        end
      end
      if caught then -- the node fails whatever comes next
        count("(caught child errors)")
        local y = R.int(4)
        trace("caught " .. tostring(caught) .. " in " .. id .. ": " ..
              ({ "raise it again", "raise its own", "bad status",
                 "return" })[y])
        if y == 1 then error(caught, 0) end -- still the child's
        forget(a, n0)
        if y == 2 then error(newmsg(), 0) end
        if y == 3 then
          record(a, id, nil) -- the library's message
          return 42
        end
        record(a, id, "a child's error was caught inside the callback")
        return R.pick { bt.SUCCESS, bt.FAILURE, bt.RUNNING }
      end
      if ON.raise and R.chance(0.005) then
        record(a, id, nil)
        c:tick(c.n + 1)
      end
      if R.chance(0.4) and last ~= bt.SKIPPED then return last end
      local s, bad = status(true)
      if bad then record(a, id, nil) end
      return s
    end)
  end
  if not opt.stepped then
    t.abort = function(_, a)
      guarded(a, id, function()
        clockcheck(a)
        sideeffects(a, true)
        maybe_raise()
      end, true)
      if ON.latent and R.chance(0.3) then return bt.RUNNING end
    end
  end
  for i, k in ipairs(kids) do t[i] = k end
  return bt.control(t)
end

-- A condition of node id (field: its name) as a function of the fuzzer:
-- true or false at random; it re-enters the API and raises like a leaf
-- (on_halted runs in an abort pass).
local function condfn(id, field)
  local aborting = field == "on_halted"
  return function(a)
    return guarded(a, id, function()
      count("(condition calls)")
      clockcheck(a)
      sideeffects(a, aborting)
      maybe_raise()
      return R.chance(field == "run_while" and 0.8 or 0.3)
    end, aborting)
  end
end

-- Node tables from a spec (fresh functions every time).
local buildnode
local function build(s)
  local n = buildnode(s)
  for f, c in pairs(s.conds or {}) do
    n[f] = c == true and condfn(s.id, f) or c
  end
  return n
end

function buildnode(s)
  local k = s.kind
  if k == "script" then
    return bt.script(s.code)
  elseif k == "scond" then
    return bt.script_condition(s.code)
  end
  if k == "life" then
    local t = lifecycle(s.variant)
    t.name = s.id
    t.abort_timeout = s.atimeout or nil
    return bt.action(t, { id = s.id })
  elseif k == "enter" then
    return bt.action(entered(s.id), { id = s.id })
  elseif k == "event" or k == "wait_event" then
    return bt[k](eventof(s.id), { name = s.id, key = s.key,
                 timeout = k == "wait_event" and s.timeout or nil })
  elseif k == "task" then
    return bt.named(s.id, bt.task(task, { id = s.id }))
  elseif k == "plain" then
    return bt.named(s.id, bt.action(function(a, bb, args)
      return plain(a, bb, args) end, { id = s.id }))
  elseif k == "cond" then
    return bt.named(s.id, bt.condition(function(a, bb, args)
      return cond(a, bb, args) end, { id = s.id }))
  elseif k == "named" then
    return bt.named(s.id, bt.action("fz.r" .. s.reg, { id = s.id }))
  elseif k == "check" then
    return bt.check(s.key, s.op, s.value)
  elseif k == "is_set" then
    return bt.is_set(s.key)
  elseif k == "wait" then
    return bt.wait { seconds = s.seconds }
  elseif k == "subtree" then
    return bt.subtree(W.libs[s.lib].tree, { name = "S" .. s.lib })
  elseif k == "control" then
    local kids = {}
    for i, c in ipairs(s.children) do kids[i] = build(c) end
    return control(s.id, kids)
  end
  local t = { name = s.id }
  if k == "filter" or k == "monitor" then
    t.conditions = {}
    for i, c in ipairs(s.conditions) do t.conditions[i] = build(c) end
  end
  if k == "guard" then t[1] = build(s.check) end
  for _, c in ipairs(s.children) do
    local n = build(c)
    if k == "utility_selector" and c.id and R.chance(0.8) and
       not opt.stepped then
      n = bt.utility(utilityfn(c.id), n)
    end
    t[#t + 1] = n
  end
  t.success, t.failure, t.times, t.seconds = s.success, s.failure, s.times,
                                             s.seconds
  t.wait, t.key, t.then_skip = s.wait, s.key, s.then_skip
  if k == "guard" or k == "event_guard" then t.abort = s.abort end
  if k == "event_guard" then
    t.event = s.event
    return bt.guard(t)
  end
  return bt[k](t)
end

local function treeopts(name, pspec)
  local o = { name = name }
  if pspec then
    o.priority = {}
    for i, p in ipairs(pspec) do o.priority[i] = build(p) end
  end
  return o
end

local function genprio(used)
  if not ON.priority or not R.chance(0.3) then return nil end
  local p = {}
  for i = 1, R.int(2) do
    local f = { kind = "filter", id = newid(used, "N", 40), conditions = {},
                children = { genleaf(used) } }
    f.conditions[1] = R.chance(0.7) and checkspec() or
                      { kind = "cond", id = newid(used, "C", 16) }
    p[i] = f
  end
  return p
end

-- A library tree, inlined by hosts with bt.subtree; reloading it reloads
-- them all (or none).
local function newlib()
  local j = #W.libs + 1
  W.idbase = 10000 * j
  local spec = gen({}, 1)
  W.idbase = 0
  local name = "Lib" .. j
  local t = bt.tree(build(spec), { name = name })
  W.libs[j] = { tree = t, spec = spec, name = name, base = 10000 * j }
end

local function reloadlib(e)
  W.idbase = e.base
  local spec = R.chance(0.8) and mutate(e.spec) or gen({}, 1)
  W.idbase = 0
  local ok, good, err = api("reload " .. e.name .. " (and its hosts)", nil,
                            e.tree.reload, e.tree, build(spec))
  if not ok then
    violation("tree:reload of a library raised " .. tostring(good))
  elseif not good then
    violation("tree:reload refused a good library tree: " .. tostring(err))
  else
    e.spec = spec
  end
end

local function newtree()
  W.ntrees = W.ntrees + 1
  local name = "T" .. W.ntrees
  local used = {}
  local spec = gen(used, 0)
  local prio = genprio(used)
  local t = bt.tree(build(spec), treeopts(name, prio))
  local e = { tree = t, spec = spec, prio = prio, name = name }
  W.trees[#W.trees + 1] = e
  return e
end

local function reload(e)
  local spec = R.chance(0.8) and mutate(e.spec) or gen({}, 0)
  local prio = e.prio
  if R.chance(0.2) then prio = genprio(ids(spec, {})) end
  if prio then
    -- priority ids must not clash with the root's
    local used = ids(spec, {})
    for _, p in ipairs(prio) do
      for id in pairs(ids(p, {})) do
        if used[id] then prio = nil break end
      end
      if not prio then break end
    end
  end
  local ok, good, err = api("reload " .. e.name, nil, e.tree.reload, e.tree,
                            build(spec), treeopts(e.name, prio))
  if not ok then
    violation("tree:reload raised " .. tostring(good))
  elseif not good then
    violation("tree:reload refused a good tree: " .. tostring(err))
  else
    e.spec, e.prio = spec, prio
    if opt.replay then print(e.tree:dump()) end
  end
end

-- Agents -------------------------------------------------------------------

local function newagent(e)
  e = e or R.pick(W.trees)
  W.nagents = W.nagents + 1
  local id = "A" .. W.nagents
  local bb
  if #W.bbs > 0 and R.chance(0.4) then
    bb = R.pick(W.bbs)
  elseif #W.bbs > 0 and R.chance(0.5) then
    bb = { parent = R.pick(W.bbs), k1 = R.int(3) }
    if R.chance(0.5) then bb.n1 = R.int(4) end
  else
    bb = { k1 = R.int(3), k2 = "a", n1 = R.int(4), n2 = R.int(4) - 0.5 }
  end
  local a = bt.agent(e.tree, { owner = { id = id }, blackboard = bb,
    events = ON.events and R.chance(0.3) and R.int(3) or nil })
  local b = book(a)
  b.id = id
  if ON.events and R.chance(0.5) then -- its deliveries are checked
    a:trace(4096)
    b.traced = true
  end
  if opt.events and not b.traced then a:trace(256) end
  W.agents[#W.agents + 1] = a
  trace("new agent " .. id .. " of " .. e.name)
  return a
end

-- Saves agent a and restores the string into a new agent of its tree: the
-- new agent's running leaves must be leaves a had entered (they go on
-- without enter); its running tasks start their bodies again.
local function saverestore(a)
  local b = book(a)
  b.saved = {} -- what the leaves' save functions return, by leaf
  local ok, s = pcall(a.save, a)
  trace("save " .. b.id .. (ok and "" or " -> " .. tostring(s)))
  if not ok then return end
  W.nagents = W.nagents + 1
  local id = "A" .. W.nagents
  -- (only the agent's own blackboard values are saved: n1 and n2, which
  -- ordered checks read, may come from a parent)
  local good, n = pcall(bt.agent, a.tree, { owner = { id = id },
    restore = s, blackboard = { n1 = 1, n2 = 2 } })
  if not good then
    violation("restoring a fresh save failed: " .. tostring(n))
    return
  end
  local nb = book(n)
  nb.id = id
  if n.time ~= a.time then
    violation(("restored clock %s, saved %s"):format(n.time, a.time))
  end
  local restored = nb.restored or {}
  local running = {}
  for _, name in ipairs(n:running()) do
    local k = name:sub(1, 1)
    running[name] = true
    local base = name:match("^(%u%d+) %(aborting%)$")
    if base and (k == "L" or k == "R") then
      if b.entered[base] ~= "aborting" then
        violation(("%s restored from %s has %s aborting, which %s had not")
          :format(id, b.id, base, b.id))
      end
      nb.entered[base] = "aborting"
    elseif (k == "L" or k == "R") and name:match("^%u%d+$") then
      if b.entered[name] ~= "leaf" then
        violation(("%s restored from %s runs %s, which %s had not entered")
          :format(id, b.id, name, b.id))
      end
      local sv, got = b.saved[name], restored[name]
      if sv and (type(got) ~= "table" or got.id ~= sv.id or got.n ~= sv.n or
                 got.f ~= sv.f) then
        violation(("%s: %s saved its state %s.%s, restore got %s"):format(
          id, name, sv.id, sv.n, type(got) == "table" and
          tostring(got.id) .. "." .. tostring(got.n) or tostring(got)))
      end
      nb.entered[name] = "leaf"
      nb.ended[name] = b.ended[name]
    elseif k == "K" and name:match("^K%d+$") then
      nb.entered[name] = "pending"
    end
  end
  for name in pairs(restored) do
    if not running[name] then
      violation(id .. ": restore of " .. name .. ", which does not run")
    end
  end
  trace("restored " .. id .. " from " .. b.id)
  if b.traced and n:dropped_events() == a:dropped_events() then
    -- its queue: the events a was sent and had not been delivered (copies
    -- of their payloads: names compared)
    for i = b.got + 1, #b.sent do
      nb.sent[#nb.sent + 1] = { name = b.sent[i].name, copy = true }
    end
    n:trace(4096)
    nb.traced = true
  end
  if #W.agents < 10 then W.agents[#W.agents + 1] = n end
end

local function anyagent()
  if #W.agents == 0 then return nil end
  return R.pick(W.agents)
end

local AGENT_MT -- the metatable of agents (set by warmup)
local function isagent(x)
  return type(x) == "table" and getmetatable(x) == AGENT_MT
end

-- A payload: nil, a number, a string, a small table (kept weakly: each must
-- be let go by the end of the seed), rarely something a:save refuses.
local function payload()
  local x = R.int(6)
  if x == 1 then return nil end
  if x == 2 then return R.int(9) end
  if x == 3 then return R.pick { "north", "south" } end
  if x == 4 and ON.raise and R.chance(0.1) then return print, true end
  local t = { x = R.int(9), tag = R.pick { "a", "b" } }
  W.payloads[#W.payloads + 1] = t
  return t
end

-- Sends an event to agent a (or, with a list, bt.send); the books note it
-- for each agent it reaches (a refused payload reaches none).
local function send(a, list)
  local name, p, bad = R.pick(EVENTS), payload()
  local targets = list or { a }
  local ok, err
  if list then
    trace("bt.send " .. name .. " to " .. #list)
    ok, err = pcall(bt.send, list, name, p)
  else
    trace("send " .. name .. " to " .. book(a).id)
    ok, err = pcall(a.send, a, name, p)
  end
  if bad and ok then violation("a payload a:save cannot save was sent") end
  if not ok then
    local agents = true
    for i = 1, #targets do agents = agents and isagent(targets[i]) end
    if not bad and agents then
      violation("send raised " .. tostring(err))
    end
    return
  end
  for i = 1, #targets do
    local b = book(targets[i])
    b.sent[#b.sent + 1] = { name = name, payload = p }
  end
end

local function randvalue()
  local x = R.int(8)
  if x == 1 then return nil end
  if x <= 4 then return R.int(5) - 1 end
  if x == 5 then return R.pick { "a", "b" } end
  if x == 6 then return R.chance(0.5) end
  if x == 7 then return R.int(4) - 0.5 end
  return {}
end

-- A key and a value to write: numbers only for n1 and n2.
local function anykv()
  if R.chance(0.2) then return R.pick(NKEYS), R.int(6) - 1.5 end
  return R.pick(KEYS), randvalue()
end

local function anybb()
  local x = R.int(3)
  if x == 1 and #W.bbs > 0 then return R.pick(W.bbs) end
  local a = anyagent()
  return a and a.bb or (#W.bbs > 0 and R.pick(W.bbs)) or nil
end

local function observe()
  local bb = anybb()
  if not bb then return end
  local key = R.pick(KEYS)
  local fn = function(obb, k, new, old)
    local ok, r = pcall(function()
      trace("observer " .. k)
      sideeffects(nil)
      if ON.raise and R.chance(0.03) then error(newmsg(), 0) end
      if R.chance(0.1) then
        write(obb, anykv())
      end
    end)
    if not ok then
      record(nil, nil, r)
      error(r, 0)
    end
  end
  local h = bb:observe(key, fn)
  W.observers[#W.observers + 1] = { bb = bb, h = h }
  trace("observe " .. key)
end

local function unobserve()
  if #W.observers == 0 then return end
  local i = R.int(#W.observers)
  local o = table.remove(W.observers, i)
  if o.bb:unobserve(o.h) ~= true then
    violation("unobserve of a live handle returned false")
  end
  trace("unobserve")
end

local function addinterrupt(a)
  local fn
  fn = function(ag, bb)
    return guarded(ag, nil, function()
      clockcheck(ag)
      sideeffects(ag)
      if ON.raise and R.chance(0.01) then error(newmsg(), 0) end
      return R.chance(0.04)
    end)
  end
  a:add_interrupt(fn)
  local b = book(a)
  b.interrupts = b.interrupts or {}
  b.interrupts[#b.interrupts + 1] = fn
  trace("add interrupt " .. b.id)
end

local function removeinterrupt(a)
  local b = book(a)
  if not b.interrupts or #b.interrupts == 0 then return end
  local fn = table.remove(b.interrupts, R.int(#b.interrupts))
  if a:remove_interrupt(fn) ~= true then
    violation("remove_interrupt of a registered function returned false")
  end
  trace("remove interrupt " .. b.id)
end

local function dt() return R.pick { 0, 0.1, 0.5, 1, 2 } end

local function budget()
  if ON.budget and R.chance(0.3) then return { budget = R.int(3) } end
  return nil
end

local function anylist()
  if #W.lists == 0 then return nil end
  return R.pick(W.lists)
end

local function editlist(a)
  local w = W.walking
  if a and w and R.chance(0.7) then -- the entry of the agent being ticked
    for i = 1, #w do
      if rawequal(w[i], a) then
        local y = R.int(3)
        w[i] = y == 1 and anyagent() or y == 2 and {} or nil
        trace("edit the walked list at " .. i)
        return
      end
    end
  end
  local l = anylist()
  if not l then return end
  local x = R.int(4)
  local n = #l
  if x == 1 and n > 0 then l[R.int(n)] = anyagent() or {}
  elseif x == 2 and n > 0 then l[n] = nil
  elseif x == 3 then l[n + 1] = anyagent()
  elseif n > 0 then l[R.int(n)] = {} end
  trace("edit a list")
end

local function drop()
  if not ON.gc then return end
  if R.chance(0.5) and #W.agents > 1 then
    local i = R.int(#W.agents)
    trace("drop agent " .. book(W.agents[i]).id)
    table.remove(W.agents, i)
  elseif #W.trees > 1 then
    local e = table.remove(W.trees, R.int(#W.trees))
    trace("drop tree " .. e.name)
  end
end

-- One re-entrant effect from a callback of agent a (nil: an observer).
function effect(a)
  local protected = R.chance(0.6)
  local x = R.int(ON.events and 17 or 16)
  local ok, err = true, nil
  local target = (a and R.chance(0.3)) and a or anyagent()
  if x <= 3 and target then
    ok, err = tick(target, dt())
  elseif x == 4 and ON.tick_all then
    local l = anylist()
    if l then ok, err = tickall(l, dt(), budget()) end
  elseif x == 5 and ON.abort and target then
    ok, err = abortop(target, R.chance(0.5) and "abort" or "reset")
  elseif x == 6 and ON.reload and #W.trees > 0 then
    if ON.subtree and #W.libs > 0 and R.chance(0.3) then
      reloadlib(R.pick(W.libs))
    else
      reload(R.pick(W.trees))
    end
  elseif x == 7 and ON.register then
    local k = R.int(NREG)
    register(k, R.int(2))
    trace("register fz.r" .. k)
  elseif x <= 9 then
    local bb = anybb()
    if bb then ok, err = write(bb, anykv()) end
  elseif x == 10 and ON.observers then
    if R.chance(0.5) then observe() else unobserve() end
  elseif x == 11 and ON.interrupts and target then
    if R.chance(0.5) then addinterrupt(target) else removeinterrupt(target) end
  elseif x == 12 and ON.tick_all and ON.lists then
    editlist(a)
    -- a list edited under bt.tick_all, then an error: the error and the
    -- recovery must stay with the agent that raised
    if a and ON.raise and R.chance(0.3) then error(newmsg(), 0) end
  elseif x == 13 then
    drop()
  elseif x == 15 and ON.sleep and target then
    trace("wake " .. book(target).id)
    target:wake()
  elseif x == 16 and ON.events and target then
    send(target) -- (to the agent being ticked too: its next tick)
  elseif x == 14 and ON.gc then
    trace("collectgarbage")
    collectgarbage(R.chance(0.5) and "collect" or "step")
  end
  if not ok and not protected then error(err, 0) end
end

-- Top-level steps -----------------------------------------------------------

-- An event to agent a, or with bt.send to a list (when no entry is a hole
-- or not an agent: those are refused, which the books would not foresee).
local function sendstep(a)
  if R.chance(0.3) and #W.lists > 0 then
    local l, ok = anylist(), true
    for i = 1, #l do ok = ok and isagent(l[i]) end
    if ok then return send(nil, l) end
  end
  send(a)
end

local function step()
  local x = R.int(100)
  local a = anyagent()
  if x <= 40 and a then
    tick(a, dt())
  elseif x <= 50 and ON.tick_all then
    local l = anylist()
    if not l or R.chance(0.1) then
      l = {}
      for i = 1, R.int(4) do l[i] = anyagent() end
      W.lists[#W.lists + 1] = l
      if #W.lists > 3 then table.remove(W.lists, 1) end
    end
    tickall(l, dt(), budget())
  elseif x <= 54 and ON.abort and a then
    abortop(a, R.chance(0.6) and "abort" or "reset")
  elseif x <= 59 and ON.reload and #W.trees > 0 then
    if ON.subtree and #W.libs > 0 and R.chance(0.3) then
      reloadlib(R.pick(W.libs))
    else
      reload(R.pick(W.trees))
    end
  elseif x <= 60 and ON.reload and #W.trees > 1 then
    local e1, e2 = R.pick(W.trees), R.pick(W.trees)
    if e1 ~= e2 and e1.name then
      local ok, good, err = api("take " .. e2.name .. " into " .. e1.name,
        nil, e1.tree.reload, e1.tree, e2.tree)
      if not ok or not good then
        violation("tree:reload(other) failed: " .. tostring(good or err))
      else
        e1.spec, e1.prio = e2.spec, e2.prio
      end
    end
  elseif x <= 75 and not (ON.events and x > 69) then
    local bb = anybb()
    if bb then write(bb, anykv()) end
  elseif x <= 75 and a then -- (ON.events)
    sendstep(a)
  elseif x <= 79 and ON.observers then
    if R.chance(0.6) then observe() else unobserve() end
  elseif x <= 82 and ON.interrupts and a then
    if R.chance(0.5) then addinterrupt(a) else removeinterrupt(a) end
  elseif x <= 84 and ON.register then
    local k = R.int(NREG)
    register(k, R.int(2))
    trace("register fz.r" .. k)
  elseif x <= 88 then
    if #W.agents < 8 then newagent() end
  elseif x <= 89 then
    if #W.trees < 5 then newtree() end
  elseif x <= 91 then
    drop()
  elseif x <= 92 and ON.gc then
    trace("collectgarbage")
    collectgarbage()
  elseif x <= 94 and ON.tick_all and ON.lists then
    editlist()
  elseif x <= 94 then
    local bb = anybb()
    if bb then
      trace("pairs")
      for k, v in pairs(bb) do
        if not rawequal(bb:get(k), v) then
          violation(("pairs gave %s = %s, bb:get gives %s"):format(k,
            tostring(v), tostring(bb:get(k))))
        end
      end
    end
  elseif x <= 95 then
    W.bbs[#W.bbs + 1] = bt.blackboard { parent = R.chance(0.5) and anybb() or
                                        nil, k3 = R.int(3), n1 = R.int(4),
                                        n2 = R.int(4) }
    if #W.bbs > 4 then table.remove(W.bbs, 1) end
  elseif x <= 98 and x > 97 and ON.save and a then
    saverestore(a)
  elseif x <= 97 and ON.sleep and a then
    trace("wake " .. book(a).id)
    a:wake()
  elseif a then
    tick(a, dt())
  end
end

-- The events a traced agent's trace recorded since the last step: each
-- event delivered is the next one it was sent (name, and the very payload),
-- until it has dropped one; an event node (bt.event, bt.wait_event)
-- succeeded in a tick only if its event was delivered to that tick, and a
-- bt.event failed only if not.
local function checkevents(a, b)
  local delivered = {} -- tick -> { [name] = true }
  local lossy = a:dropped_events() > 0
  for _, e in ipairs(a:events()) do
    if e.event == "event" then
      local d = delivered[e.tick] or {}
      delivered[e.tick] = d
      d[e.name] = true
      local want = b.sent[b.got + 1]
      if not lossy and want == nil then
        violation(("%s: event %s delivered at tick %d, never sent")
          :format(b.id, e.name, e.tick))
      elseif not lossy and (want.name ~= e.name or
             (not want.copy and not rawequal(want.payload, e.payload))) then
        violation(("%s: event %s (%s) delivered at tick %d, %s (%s) was next")
          :format(b.id, e.name, tostring(e.payload), e.tick, want.name,
                  tostring(want.payload)))
      end
      b.got = b.got + 1
    elseif e.node and (e.status == "success" or e.status == "failure") then
      local id = e.node:match("([^/]+)$")
      if id and id:match("^[VQ]%d+$") then
        local got = (delivered[e.tick] or {})[eventof(id)] == true
        if e.status == "success" and not got then
          violation(("%s: %s succeeded at tick %d, no %s was delivered")
            :format(b.id, e.node, e.tick, eventof(id)))
        elseif e.status == "failure" and got and id:sub(1, 1) == "V" then
          violation(("%s: bt.event %s failed at tick %d, %s was delivered")
            :format(b.id, e.node, e.tick, eventof(id)))
        end
      end
    end
  end
end

-- After every step: the books against the library.
local TRACKED = { L = true, R = true, K = true }
local function checkworld()
  for _, a in ipairs(W.agents) do
    local b = book(a)
    clockcheck(a)
    local run, aborting = {}, {}
    for _, name in ipairs(a:running()) do
      local base = name:match("^(%u%d+) %(aborting%)$")
      if base and TRACKED[name:sub(1, 1)] then
        aborting[base] = true
      elseif TRACKED[name:sub(1, 1)] and name:match("^%u%d+$") then
        run[name] = true
      end
    end
    for id in pairs(aborting) do
      if b.entered[id] ~= "aborting" then
        violation(("%s: a:running() lists %s as aborting, whose last abort "
          .. "call did not answer running (%s)"):format(b.id, id,
          tostring(b.entered[id])))
      end
    end
    if b.traced then checkevents(a, b) end
    for id, how in pairs(b.entered) do
      if how == "aborting" and not aborting[id] then
        if run[id] then
          violation(("%s: %s answered running to its abort, a:running() "
            .. "lists it running"):format(b.id, id))
        end
        b.entered[id] = nil -- cut off, or its running ignored: ended
      elseif how == "aborting" then -- (listed so, as it should)
      elseif how == "pending" and not run[id] then
        b.entered[id] = nil -- a restored task, aborted before it started
      elseif not run[id] then
        violation(("%s: %s was entered and has not ended, but a:running() "
          .. "does not list it (running: %s)"):format(b.id, id,
          table.concat(a:running(), ",")))
      end
    end
    for id in pairs(run) do
      if not b.entered[id] then
        violation(("%s: a:running() lists %s, which is not entered")
          :format(b.id, id))
      end
    end
  end
end

-- One seed ------------------------------------------------------------------

local function warmup()
  -- intern the keys and names once, so bt.memory() is comparable
  AGENT_MT = getmetatable(bt.agent(bt.tree(bt.wait(1))))
  local bb = bt.blackboard {}
  for _, k in ipairs(KEYS) do bb[k] = 1 end
  for _, k in ipairs(NKEYS) do bb[k] = 1 end
  for k = 1, NREG do register(k, 1) end
end

local function runseed(seed, steps)
  collectgarbage()
  collectgarbage()
  local base = bt.memory()
  rseed(seed)
  W = { books = setmetatable({}, { __mode = "k" }), frames = {}, depth = 0,
        violations = {}, trace = {}, trees = {}, agents = {}, lists = {},
        bbs = {}, observers = {}, nerr = 0, nid = 0, ntrees = 0,
        nagents = 0, libs = {}, idbase = 0,
        payloads = setmetatable({}, { __mode = "v" }) }
  for k = 1, NREG do register(k, R.int(2)) end
  local failed
  local ok, err = xpcall(function()
    if ON.subtree then
      for _ = 1, R.int(3) - 1 do newlib() end
    end
    for _ = 1, R.int(3) do newtree() end
    for _ = 1, 2 + R.int(3) do newagent() end
    for i = 1, steps do
      W.step = i
      step()
      if #W.frames ~= 0 then violation("frames left after a step") end
      checkworld()
      if #W.violations > 0 then failed = i break end
    end
  end, debug.traceback)
  if not ok then
    violation("the fuzzer stopped: " .. tostring(err))
    failed = W.step
  end
  local v, tr, payloads = W.violations, W.trace, W.payloads
  W.agents, W.trees, W.lists, W.bbs, W.observers = nil, nil, nil, nil, nil
  W.libs = nil
  W = nil
  for k = 1, NREG do register(k, 1) end
  -- until a cycle frees nothing more (5.1 clears the weak values of
  -- finalized objects only a cycle later: chains of them take more);
  -- LuaJIT's compiled traces keep their constants until flushed
  if jit then jit.flush() end
  local last
  repeat
    last = bt.memory()
    collectgarbage()
    collectgarbage()
  until bt.memory() == last
  local now = bt.memory()
  if not failed and now ~= base then
    v[#v + 1] = ("bt.memory() is %d after the seed, %d before"):format(now,
      base)
    failed = steps
  end
  if not failed and next(payloads) ~= nil then
    v[#v + 1] = "an event's payload is still held after the seed"
    failed = steps
  end
  if failed then
    return false, v, tr, failed
  end
  return true
end

local function without()
  local w = {}
  for f in pairs(opt.without) do w[#w + 1] = f end
  table.sort(w)
  return #w > 0 and (" --without " .. table.concat(w, ",")) or ""
end

local function report(seed, v, tr, at)
  print(("FAIL seed %d at step %d:"):format(seed, at))
  for i = 1, math.min(#v, 5) do print("  " .. v[i]) end
  if not opt.replay then
    print("  last steps:")
    for _, s in ipairs(tr) do print("    " .. s) end
  end
  print(("  replay: scripts/fuzz [--plain] --replay %d --steps %d%s")
    :format(seed, at, without()))
end

warmup()
local t0 = os.time()
local clock0 = os.clock()
local nseeds, nfail = 0, 0
if opt.replay then
  local ok, v, tr, at = runseed(opt.replay, opt.steps)
  if not ok then report(opt.replay, v, tr, at) os.exit(1) end
  if opt.log then -- (differential.lua reads it, and leaves it out)
    print("stepped ticks: " .. require("bonsai.core")._step.stats())
  end
  print("seed " .. opt.replay .. ": ok")
  os.exit(0)
end
local seed = opt.first
if opt.seconds then seed = os.time() % 1000000 * 1000 end
while true do
  if opt.seconds then
    if os.time() - t0 >= opt.seconds then break end
  elseif seed > opt.last then
    break
  end
  if opt.verbose then io.stderr:write("seed ", seed, "\n") end
  local ok, v, tr, at = runseed(seed, opt.steps)
  nseeds = nseeds + 1
  if not ok then
    nfail = nfail + 1
    report(seed, v, tr, at)
    if nfail >= 5 then break end
  end
  seed = seed + 1
end
print(("fuzz: %d seeds x %d steps, %d failed, %.1f s CPU%s"):format(nseeds,
  opt.steps, nfail, os.clock() - clock0, without()))
if opt.verbose then
  local ks = {}
  for k in pairs(STATS) do ks[#ks + 1] = k end
  table.sort(ks)
  for _, k in ipairs(ks) do print(("  %-22s %d"):format(k, STATS[k])) end
end
os.exit(nfail == 0 and 0 or 1)
