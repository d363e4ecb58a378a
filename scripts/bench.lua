-- scripts/bench.lua: the benchmark suite (run it through scripts/bench).
-- Workloads W1 "guard", W2 "wide", W3 "deep" and the memory figures exactly
-- as docs/PERFORMANCE.md ("The workloads") defines them. Each section runs in a
-- process of its own; in it every Bonsai variant runs side by side with
-- its hand-written floor: several repetitions, in each the variants
-- alternate in chunks of ticks, CPU time around the tick loop only, a full
-- GC before each chunk; the table shows medians and the median of
-- per-repetition ratios. Checksums and (in an untimed pass) leaf-call
-- counts are checked against the floor.

local bt = require "bonsai"
-- Flags: --quick, --memory (the memory figures), --section NAME (one
-- section, rows printed for the driver), --workloads (W1, W2 and W3 only:
-- scripts/bench runs them so under every other Lua), --profile (below).
-- The script runs on every Lua Bonsai does (5.1, LuaJIT, 5.3, 5.4); the
-- floors are written in the Lua that runs them.
local quick, section, memory_only, workloads = false, nil, false, false
for i = 1, #arg do
  if arg[i] == "--quick" then quick = true end
  if arg[i] == "--memory" then memory_only = true end
  if arg[i] == "--section" then section = arg[i + 1] end
  if arg[i] == "--workloads" then workloads = true end
end
local ok_c, benchc = pcall(require, "benchc")
if not ok_c then benchc = nil end

local RUNNING, SUCCESS, FAILURE = bt.RUNNING, bt.SUCCESS, bt.FAILURE
local clock = os.clock

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  local h = math.floor(n / 2)
  if n % 2 == 1 then return s[h + 1] end
  return (s[h] + s[h + 1]) / 2
end

local function timed(f)
  collectgarbage("collect")
  collectgarbage("collect")
  local t0 = clock()
  f()
  return clock() - t0
end

local function check(what, got, want)
  if got ~= want then
    error(string.format("%s: checksum mismatch: got %s, want %s", what,
                        tostring(got), tostring(want)), 2)
  end
end

------------------------------------------------------------------------
-- W1 "guard"
------------------------------------------------------------------------

-- Sets the fields of state st[i] to their start (made if absent).
local function w1_init(st, i)
  local s = st[i] or {}
  s.hp, s.dist, s.clock, s.phase = 100 - (i * 13) % 60, 40, 0, (i * 37) % 80
  s.dmg, s.act, s.left = 1 + i % 7, 0, 0
  s.n_die, s.n_flee, s.n_attack, s.n_chase, s.n_patrol = 0, 0, 0, 0, 0
  st[i] = s
end

local function w1_states(n)
  local st = {}
  for i = 1, n do w1_init(st, i) end
  return st
end

local function w1_step(s)
  local p = (s.clock + s.phase) % 80
  s.clock = s.clock + 1
  local dist = (p < 40) and (40 - p) or (p - 40)
  s.dist = dist
  if dist <= 8 then s.hp = s.hp - s.dmg elseif s.hp < 100 then s.hp = s.hp + 1 end
end

local function w1_sum(st)
  local c = { act = 0, hp = 0, left = 0, n_attack = 0, n_chase = 0,
              n_die = 0, n_flee = 0, n_patrol = 0 }
  for _, s in ipairs(st) do
    for k in pairs(c) do c[k] = c[k] + s[k] end
  end
  return string.format(
    "act=%d hp=%d left=%d n_attack=%d n_chase=%d n_die=%d n_flee=%d n_patrol=%d",
    c.act, c.hp, c.left, c.n_attack, c.n_chase, c.n_die, c.n_flee, c.n_patrol)
end

local W1_EXPECT = {
  [10000] = "act=31078 hp=816143 left=19545 n_attack=100332 n_chase=218022 n_die=8660 n_flee=29731 n_patrol=73500",
  [1000] = "act=3109 hp=81570 left=1979 n_attack=10062 n_chase=21864 n_die=874 n_flee=2875 n_patrol=7351",
}

-- Leaves over the state s (the floor's form); count = a counter table or
-- nil (the untimed pass counts calls).
local function w1_leaves_state(count)
  local function action(id, dur, field, die)
    return function(s)
      if count then count.n = count.n + 1 end
      if s.act ~= id then s.act = id; s.left = dur end
      local left = s.left - 1
      s.left = left
      if left > 0 then return RUNNING end
      s.act = 0; s.left = 0
      s[field] = s[field] + 1
      if die then s.hp = 100 end
      return SUCCESS
    end
  end
  local function cond(f)
    if count then return function(s) count.n = count.n + 1; return f(s) end end
    return f
  end
  return {
    is_dead = cond(function(s) return s.hp <= 0 end),
    sees_enemy = cond(function(s) return s.dist <= 30 end),
    health_low = cond(function(s) return s.hp < 35 end),
    in_range = cond(function(s) return s.dist <= 5 end),
    die = action(1, 3, "n_die", true),
    flee = action(2, 4, "n_flee"),
    attack = action(3, 2, "n_attack"),
    chase = action(4, 5, "n_chase"),
    patrol = action(5, 6, "n_patrol"),
  }
end

-- The same leaves as users write them for Bonsai: function(a) local s =
-- a.owner ... end, no adapter closure.
local function w1_leaves_agent(count)
  local function action(id, dur, field, die)
    return function(a)
      local s = a.owner
      if count then count.n = count.n + 1 end
      if s.act ~= id then s.act = id; s.left = dur end
      local left = s.left - 1
      s.left = left
      if left > 0 then return RUNNING end
      s.act = 0; s.left = 0
      s[field] = s[field] + 1
      if die then s.hp = 100 end
      return SUCCESS
    end
  end
  local c = count
  return {
    is_dead = function(a) if c then c.n = c.n + 1 end return a.owner.hp <= 0 end,
    sees_enemy = function(a) if c then c.n = c.n + 1 end return a.owner.dist <= 30 end,
    health_low = function(a) if c then c.n = c.n + 1 end return a.owner.hp < 35 end,
    in_range = function(a) if c then c.n = c.n + 1 end return a.owner.dist <= 5 end,
    die = action(1, 3, "n_die", true),
    flee = action(2, 4, "n_flee"),
    attack = action(3, 2, "n_attack"),
    chase = action(4, 5, "n_chase"),
    patrol = action(5, 6, "n_patrol"),
  }
end

local function w1_floor(L)
  local is_dead, die, sees_enemy = L.is_dead, L.die, L.sees_enemy
  local health_low, flee, in_range = L.health_low, L.flee, L.in_range
  local attack, chase, patrol = L.attack, L.chase, L.patrol
  return function(s)
    local r
    if is_dead(s) then r = die(s); if r ~= FAILURE then return r end end
    if sees_enemy(s) then
      if health_low(s) then r = flee(s); if r ~= FAILURE then return r end end
      if in_range(s) then r = attack(s); if r ~= FAILURE then return r end end
      r = chase(s); if r ~= FAILURE then return r end
    end
    return patrol(s)
  end
end

-- A branch of 200 nodes (a sequence of 33 sequences of a condition and
-- five actions, and an action) whose leaves are never called.
local function never_branch()
  local function never() error("never reached") end
  local kids = {}
  for k = 1, 33 do
    local seq = { bt.condition(never) }
    for j = 1, 5 do seq[j + 1] = bt.action(never) end
    kids[k] = bt.sequence(seq)
  end
  kids[34] = bt.action(never)
  return bt.sequence(kids)
end

-- W1's tree; with 'big', the 200-node branch after chase, which never
-- fails: the same ticks in a larger tree, patrol 200 nodes further on.
local function w1_tree(L, big)
  return bt.tree(bt.reactive_selector {
    bt.reactive_sequence { bt.condition(L.is_dead), bt.action(L.die) },
    bt.reactive_sequence { bt.condition(L.sees_enemy),
      bt.reactive_selector {
        bt.reactive_sequence { bt.condition(L.health_low), bt.action(L.flee) },
        bt.reactive_sequence { bt.condition(L.in_range), bt.action(L.attack) },
        bt.action(L.chase),
        big and never_branch() or nil,
      },
    },
    bt.action(L.patrol),
  }, { name = "w1" })
end

-- A run is the state of one variant over n agents: run.step(k) ticks every
-- agent k times (the world step included where the workload has one),
-- run.sum() is the checksum and run.reset() puts states and agents back
-- to their start, in place. count: a counter table for the untimed pass.

-- A loop of its own: its source loaded afresh, so that under LuaJIT a trace
-- of one variant's loop never serves another's (traces are per prototype).
local load_ = loadstring or load -- 5.1: text chunks through loadstring
local nloops = 0
local function fresh(src, ...)
  nloops = nloops + 1
  return assert(load_(src, "=loop" .. nloops))(...)
end

-- The stepped shape's bound (issue #36), on LuaJIT: an empty C function
-- called through the FFI (libc's abs), and the leaves of a floor each
-- called after one such call: what stepping a C VM through the FFI costs
-- at the least (a crossing per leaf, and one to begin each agent's tick)
-- when the VM itself costs nothing.
local empty = (function()
  local ok, ffi = pcall(require, "ffi")
  if not ok or not jit then return nil end
  ffi.cdef "int abs(int);"
  local C = ffi.C
  return function() return C.abs(-1) end
end)()

local function crossing(leaves)
  local e, t = empty, {}
  for k, f in pairs(leaves) do t[k] = function(s) e(); return f(s) end end
  return t
end

-- Resets every agent of a list.
local function reset_all(agents)
  for i = 1, #agents do agents[i]:reset() end
end

-- W1; variant: "floor", "cloop" (hard-coded C calling the Lua leaves),
-- "tick", "tick_all", "cfloor" and "cbonsai" (all in C); "tick_all_big"
-- and "cbonsai_big": with a 200-node branch never reached. The batch
-- variants (tick_all, cloop) step the world for every agent, then tick
-- every agent: each agent still sees its own step before its tick.
local function w1_run(variant, n, count, prep)
  local cvariants = { cfloor = "floor", cbonsai = "bonsai",
                      cbonsai_big = "bonsai_big" }
  if cvariants[variant] then
    local r = benchc.w1(n, cvariants[variant], count)
    return { step = function(k) r:step(k); if count then count.n = r:calls() end end,
             sum = function() return r:sum() end,
             reset = function() r:reset() end }
  end
  local st = w1_states(n)
  local step, agents
  if variant == "floor" then
    local f = w1_floor(w1_leaves_state(count))
    step = function(k)
      for _ = 1, k do
        for i = 1, n do local s = st[i]; w1_step(s); f(s) end
      end
    end
  elseif variant == "bound" then
    step = fresh([[local n, st, w1_step, f, e = ...
      return function(k)
        for _ = 1, k do
          for i = 1, n do local s = st[i]; w1_step(s); e(); f(s) end
        end
      end]], n, st, w1_step, w1_floor(crossing(w1_leaves_state(count))), empty)
  elseif variant == "cloop" then
    local leaves, list, loop = w1_leaves_agent(count), {}, benchc.w1_loop
    for i = 1, n do list[i] = { owner = st[i] } end
    step = function(k)
      for _ = 1, k do
        for i = 1, n do w1_step(st[i]) end
        loop(list, leaves, FAILURE)
      end
    end
  else
    local tree = w1_tree(w1_leaves_agent(count), variant == "tick_all_big")
    agents = {}
    for i = 1, n do agents[i] = bt.agent(tree, { owner = st[i] }) end
    if prep then prep(agents) end
    if variant == "tick" then
      step = fresh([[local n, st, agents, w1_step = ...
        return function(k)
          for _ = 1, k do
            for i = 1, n do w1_step(st[i]); agents[i]:tick(1) end
          end
        end]], n, st, agents, w1_step)
    else
      step = fresh([[local n, st, agents, w1_step, tick_all = ...
        return function(k)
          for _ = 1, k do
            for i = 1, n do w1_step(st[i]) end
            tick_all(agents, 1)
          end
        end]], n, st, agents, w1_step, bt.tick_all)
    end
  end
  return { step = step, sum = function() return w1_sum(st) end,
           reset = function()
             for i = 1, n do w1_init(st, i) end
             if agents then reset_all(agents) end
           end }
end

-- Ticks one agent per state (owner = the state), with a:tick in a Lua
-- loop or with bt.tick_all; returns the step function and the agents.
local function agents_step(tree, st, variant)
  local agents, n = {}, #st
  for i = 1, n do agents[i] = bt.agent(tree, { owner = st[i] }) end
  if variant == "tick" then
    return fresh([[local n, agents = ...
      return function(k)
        for _ = 1, k do for i = 1, n do agents[i]:tick(1) end end
      end]], n, agents), agents
  end
  return fresh([[local agents, tick_all = ...
    return function(k)
      for _ = 1, k do tick_all(agents, 1) end
    end]], agents, bt.tick_all), agents
end

------------------------------------------------------------------------
-- W2 "wide"
------------------------------------------------------------------------

local function w2_leaves(agentform, count)
  local conds, acts = {}, {}
  for i = 1, 100 do
    if agentform then
      conds[i] = function(a) if count then count.n = count.n + 1 end return a.owner.sel == i end
      acts[i] = function(a) if count then count.n = count.n + 1 end
        local s = a.owner; s.count = s.count + i; return SUCCESS end
    else
      conds[i] = function(s) if count then count.n = count.n + 1 end return s.sel == i end
      acts[i] = function(s) if count then count.n = count.n + 1 end
        s.count = s.count + i; return SUCCESS end
    end
  end
  return conds, acts
end

local function w2_run(variant, n, count)
  local st = {}
  for i = 1, n do st[i] = { sel = 100, count = 0 } end
  local step, agents
  if variant == "floor" then
    local c, a = w2_leaves(false, count)
    -- 100 hand-written tests in one function, generated once; the leaves
    -- are upvalues (locals of the enclosing chunks), as a programmer's
    -- would be
    local src = { "local c, a, FAILURE = ...\n" }
    for i = 1, 100 do src[#src + 1] = string.format("local c%d = c[%d]\n", i, i) end
    src[#src + 1] = "return (function()\n"
    for i = 1, 100 do src[#src + 1] = string.format("local a%d = a[%d]\n", i, i) end
    src[#src + 1] = "return function(s)\n  local r\n"
    for i = 1, 100 do
      src[#src + 1] = string.format(
        "  if c%d(s) then r = a%d(s); if r ~= FAILURE then return r end end\n", i, i)
    end
    src[#src + 1] = "  return FAILURE\nend\nend)()\n"
    local make = load_(table.concat(src), "w2floor")
    if not make then
      -- 5.1 and LuaJIT allow a function 60 upvalues: there the programmer
      -- writes 4 functions of 25 tests, called one after the other
      src = { "local c, a, FAILURE = ...\nlocal g = {}\n" }
      for k = 0, 3 do
        src[#src + 1] = "do\n"
        for i = 25 * k + 1, 25 * k + 25 do
          src[#src + 1] = string.format("local c%d, a%d = c[%d], a[%d]\n",
                                        i, i, i, i)
        end
        src[#src + 1] = "g[#g + 1] = function(s)\n  local r\n"
        for i = 25 * k + 1, 25 * k + 25 do
          src[#src + 1] = string.format("  if c%d(s) then r = a%d(s); if r "
            .. "~= FAILURE then return r end end\n", i, i)
        end
        src[#src + 1] = "end\nend\n"
      end
      src[#src + 1] = "local g1, g2, g3, g4 = g[1], g[2], g[3], g[4]\n" ..
        "return function(s)\n" ..
        "  return g1(s) or g2(s) or g3(s) or g4(s) or FAILURE\nend\n"
      make = assert(load_(table.concat(src), "w2floor"))
    end
    local f = make(c, a, FAILURE)
    step = function(k)
      for _ = 1, k do for i = 1, n do f(st[i]) end end
    end
  else
    local c, a = w2_leaves(true, count)
    local kids = {}
    for i = 1, 100 do kids[i] = bt.sequence { bt.condition(c[i]), bt.action(a[i]) } end
    step, agents = agents_step(bt.tree(bt.selector(kids), { name = "w2" }),
                               st, variant)
  end
  return { step = step, sum = function()
    local sum = 0
    for i = 1, n do sum = sum + st[i].count end
    return sum
  end, reset = function()
    for i = 1, n do st[i].count = 0 end
    if agents then reset_all(agents) end
  end }
end

------------------------------------------------------------------------
-- W3 "deep"
------------------------------------------------------------------------

local function w3_run(variant, n, depth, count)
  local st = {}
  for i = 1, n do st[i] = { n = 0 } end
  local step, agents
  if variant == "floor" or variant == "bound" then
    local hold = function(s) if count then count.n = count.n + 1 end
      s.n = s.n + 1; return RUNNING end
    local e = variant == "bound" and empty or nil
    if e then hold = crossing({ hold })[1] end
    step = fresh(([[local n, st, hold, e = ...
      return function(k)
        for _ = 1, k do for i = 1, n do E hold(st[i]) end end
      end]]):gsub("E", e and "e();" or ""), n, st, hold, e)
  else
    local hold = function(a) if count then count.n = count.n + 1 end
      local s = a.owner; s.n = s.n + 1; return RUNNING end
    if variant == "cloop" then
      local list, loop = {}, benchc.w3_loop
      for i = 1, n do list[i] = { owner = st[i] } end
      step = function(k)
        for _ = 1, k do assert(loop(list, hold, RUNNING)) end
      end
    else
      local root = bt.action(hold)
      for _ = 1, depth do root = bt.sequence { root } end
      local call = variant == "tick_all_call"
      step, agents = agents_step(bt.tree(root, { name = "w3" }), st,
                                 call and "tick_all" or variant)
      if call then -- then one empty C method per agent, through a table
        local tick, callees = step, {}
        local mt = { __index = { nothing = benchc.nothing } }
        for i = 1, n do callees[i] = setmetatable({}, mt) end
        step = function(k)
          for _ = 1, k do
            tick(1)
            for i = 1, n do callees[i]:nothing(1) end
          end
        end
      end
    end
  end
  return { step = step, sum = function()
    local sum = 0
    for i = 1, n do sum = sum + st[i].n end
    return sum
  end, reset = function()
    for i = 1, n do st[i].n = 0 end
    if agents then reset_all(agents) end
  end }
end

------------------------------------------------------------------------
-- Driver
------------------------------------------------------------------------

-- A row of the table, printed for the driver (see the end of the file).
local function row(name, ns, calls, ratio, target, note)
  io.write(string.format("ROW\t%s\t%.17g\t%.17g\t%.17g\t%s\t%s\n", name,
                         ns, calls, ratio, target or "", note or ""))
end

------------------------------------------------------------------------
-- LuaJIT (issue #36): a variant on the LuaJIT path (ffi true) or on the
-- lua_call path (ffi false), switched before each of its chunks; and what
-- the JIT makes of a run: the share of the profiler's samples in compiled
-- code (C called through the FFI from it included) and the traces
-- aborted while it runs, after a warm-up; and the bytes it allocates per
-- agent-tick (Lua heap and C core, the collector stopped, after the
-- warm-up: the traces are compiled by then).
------------------------------------------------------------------------

local function onpath(ffi, make)
  return function(count)
    bt.config { ffi = ffi }
    local r = make(count)
    local step = r.step
    r.step = function(k)
      bt.config { ffi = ffi }
      return step(k)
    end
    return r
  end
end

local function jitstats(step, ticks, agents)
  local profile = require "jit.profile"
  local samples, aborts = {}, 0
  local function onabort(what) if what == "abort" then aborts = aborts + 1 end end
  step(ticks) -- warm
  jit.attach(onabort, "trace")
  profile.start("i1", function(_, n, vm) samples[vm] = (samples[vm] or 0) + n end)
  local t0 = clock()
  repeat step(ticks) until clock() - t0 > 0.3 -- a few hundred samples
  profile.stop()
  jit.attach(onabort)
  local all = 0
  for _, n in pairs(samples) do all = all + n end
  local bytes = math.huge -- the least of three measures (traces made
  for _ = 1, 3 do         -- meanwhile are allocated on the heap)
    collectgarbage("collect")
    collectgarbage("stop")
    local h, c = collectgarbage("count"), bt.memory()
    step(math.min(ticks, 10))
    bytes = math.min(bytes, ((collectgarbage("count") - h) * 1024 +
                             bt.memory() - c) / (math.min(ticks, 10) * agents))
    collectgarbage("restart")
  end
  return string.format("%d%% compiled, %d aborts, %.1f B/agent-tick",
    all > 0 and math.floor(100 * (samples.N or 0) / all + 0.5) or 0, aborts,
    bytes)
end

-- Measures variants of one workload side by side. Each variant is
-- { label =, target =, floor = true for the one the others are compared
-- to, listed first, make = function(count) -> run }. Each variant gets
-- one run, made once on a collected heap (objects laid out as a program
-- would lay them: with 10,000 agents the layout weighs heavily) and reset
-- in place before each repetition; in a repetition the runs alternate in
-- chunks of 'chunk' ticks, a full GC before each, CPU time around each
-- chunk: slow drifts of a shared machine fall on every variant alike.
-- Checksums are checked after every repetition; then an untimed pass
-- counts leaf calls per agent-tick against the floor. The table shows the
-- median time and the median of per-repetition ratios.
local function compare(wname, variants, ticks, agents, reps, expect, chunk)
  local floor, runs = nil, {}
  collectgarbage("collect")
  for k, v in ipairs(variants) do
    runs[k] = v.make()
    v.times, v.ratios = {}, {}
    if v.floor then floor = v end
  end
  if jit then -- warm: the traces are compiled before anything is timed
    for k in ipairs(variants) do runs[k].step(ticks); runs[k].reset() end
  end
  for _ = 1, reps do
    local t = {}
    for k in ipairs(variants) do runs[k].reset(); t[k] = 0 end
    for done = 0, ticks - 1, chunk do
      local n = math.min(chunk, ticks - done)
      for k in ipairs(variants) do
        collectgarbage("collect")
        local t0 = clock()
        runs[k].step(n)
        t[k] = t[k] + clock() - t0
      end
    end
    for k, v in ipairs(variants) do
      check(wname .. " " .. v.label, runs[k].sum(), expect)
      table.insert(v.times, t[k])
    end
    for k, v in ipairs(variants) do table.insert(v.ratios, t[k] / t[1]) end
  end
  runs = nil
  -- untimed: leaf calls per agent-tick, against the floor
  for _, v in ipairs(variants) do
    local count = { n = 0 }
    local r = v.make(count)
    r.step(ticks)
    check(wname .. " " .. v.label, r.sum(), expect)
    v.calls = count.n / (ticks * agents)
  end
  for _, v in ipairs(variants) do
    if math.abs(v.calls - floor.calls) > 1e-9 then
      error(string.format("%s %s: %.3f leaf calls per agent-tick, floor %.3f",
                          wname, v.label, v.calls, floor.calls))
    end
  end
  for _, v in ipairs(variants) do
    if jit and v.jit then
      local r = v.make()
      v.note = jitstats(r.step, ticks, agents)
    end
    row(wname .. " " .. v.label, median(v.times) / (ticks * agents) * 1e9,
        v.calls, v.floor and 1 or median(v.ratios), v.target, v.note)
  end
end

local reps = quick and 5 or 9
local W1N = quick and 1000 or 10000
local W1T = 200

-- One variant of compare(): the floor when 'floor' is true.
local function variant(label, make, target, floor)
  return { label = label, make = make, target = target, floor = floor }
end

-- The stepped shape's bound (the floor with a C call through the FFI per
-- leaf and per agent-tick), with the JIT's figures in its row.
local function bound(make)
  local v = variant("bound: floor + an FFI call per leaf and per tick", make)
  v.jit = true
  return v
end

-- A variant of the LuaJIT path (ffi) or the lua_call path, with the JIT's
-- figures in its row.
local function jvariant(label, make, ffi, target)
  local v = variant((ffi and "LuaJIT path: " or "lua_call path: ") .. label,
                    onpath(ffi, make), target)
  v.jit = true
  return v
end

-- The sections, each run by the driver in a process of its own: a fresh
-- heap, laid out as a program lays out its agents (with 10,000 agents the
-- layout weighs on the figures), and no section inherits another's garbage.
local sections = {}

local function w1(v) return function(count) return w1_run(v, W1N, count) end end
function sections.w1()
local w1v = { variant("Lua floor", w1("floor"), nil, true) }
if benchc then
  w1v[#w1v + 1] = variant("C loop, Lua leaves (the limit)", w1("cloop"))
end
w1v[#w1v + 1] = variant("bt.tick_all, Lua leaves", w1("tick_all"), "<= 1.15")
w1v[#w1v + 1] = variant("a:tick loop, Lua leaves", w1("tick"), "<= 1.15")
compare("W1", w1v, W1T, W1N, reps, W1_EXPECT[W1N], 20)
end

function sections.w1c() -- the core alone: C leaves registered by name
  if not benchc then return end
  compare("W1", { variant("C floor", w1("cfloor"), nil, true),
                  variant("Bonsai core, C leaves", w1("cbonsai"), "<= 2") },
          W1T, W1N, reps, W1_EXPECT[W1N], 20)
end

-- The same ticks in a tree with a 200-node branch never reached: what a
-- larger agent state costs (the cache lines a tick touches), with C
-- leaves (the core alone) and with Lua leaves.
function sections.w1big()
  local v = {}
  if benchc then
    compare("W1 C leaves,", {
      variant("plain", w1("cbonsai"), nil, true),
      variant("+ 200-node branch never reached", w1("cbonsai_big"),
              "<= 1.15"),
    }, W1T, W1N, reps, W1_EXPECT[W1N], 20)
  end
  v[1] = variant("plain", w1("tick_all"), nil, true)
  v[2] = variant("+ 200-node branch never reached", w1("tick_all_big"),
                 "<= 1.15")
  compare("W1 bt.tick_all,", v, W1T, W1N, reps, W1_EXPECT[W1N], 20)
end

-- Traces (issue #12): W1 with bt.tick_all, tracing off (the reference, as
-- in the w1 section), on for one agent, and on for every agent (events
-- kept in each agent's ring); then, on a tenth of the agents, recording
-- every agent to a trace file with bt.record (JSON encoding included).
local function w1traced(prep, n)
  return function(count) return w1_run("tick_all", n or W1N, count, prep) end
end
function sections.trace()
  compare("W1 trace", {
    variant("bt.tick_all, trace off", w1traced(nil), nil, true),
    variant("one agent traced", w1traced(function(ag) ag[1]:trace() end),
            "~ 1"),
    variant("every agent traced", w1traced(function(ag)
      for i = 1, #ag do ag[i]:trace(256) end
    end)),
  }, W1T, W1N, reps, W1_EXPECT[W1N], 20)
end

function sections.record()
  local n, ticks, files = 1000, quick and 20 or 50, {}
  local function recorded(ag)
    local path = os.tmpname()
    files[#files + 1] = path
    bt.record(path, ag)
  end
  local floor = w1_run("floor", n) -- the checksum, from the floor
  floor.step(ticks)
  compare("W1 record", {
    variant("1000 agents, not recorded", w1traced(nil, n), nil, true),
    variant("1000 agents, bt.record all", w1traced(recorded, n)),
  }, ticks, n, quick and 3 or 5, floor.sum(), ticks)
  for _, f in ipairs(files) do os.remove(f) end
end

local W2N, W2T = 1000, quick and 30 or 100
local function w2(v) return function(count) return w2_run(v, W2N, count) end end
function sections.w2()
compare("W2", { variant("Lua floor", w2("floor"), nil, true),
                variant("bt.tick_all, Lua leaves", w2("tick_all"), "<= 1.25"),
                variant("a:tick loop, Lua leaves", w2("tick"), "<= 1.25") },
        W2T, W2N, reps, W2N * W2T * 100, 10)
end

local W3N, W3T = 1000, quick and 200 or 1000
local function w3(v, depth)
  return function(count) return w3_run(v, W3N, depth, count) end
end
function sections.w3()
local w3v = { variant("Lua floor", w3("floor"), nil, true) }
if benchc then
  w3v[#w3v + 1] = variant("C loop, Lua leaf (the limit)", w3("cloop"))
end
w3v[#w3v + 1] = variant("bt.tick_all", w3("tick_all", 100), "<= 2.3")
w3v[#w3v + 1] = variant("a:tick loop", w3("tick", 100))
compare("W3 depth 100", w3v, W3T, W3N, reps, W3N * W3T, 100)
end

-- what an a:tick loop adds to bt.tick_all (issue #23's second W3 goal),
-- and the least any a:tick could add: bt.tick_all, then a Lua loop calling
-- an empty C method on each agent, found through a table __index
function sections.w3tick()
local w3v = { variant("bt.tick_all", w3("tick_all", 100), nil, true),
              variant("a:tick loop / bt.tick_all", w3("tick", 100)) }
if benchc then
  w3v[#w3v + 1] = variant("bt.tick_all + an empty C method call / bt.tick_all",
                          w3("tick_all_call", 100))
end
compare("W3 depth 100", w3v, W3T, W3N, reps, W3N * W3T, 100)
-- issue #36: the a:tick loop's goal, against the least an a:tick loop
-- costs (bt.tick_all, then an empty C method called on each agent)
if benchc then
  compare("W3 depth 100", {
    variant("bt.tick_all + an empty C method call", w3("tick_all_call", 100),
            nil, true),
    variant("a:tick loop / (bt.tick_all + empty C method)", w3("tick", 100),
            "<= 1.15") }, W3T, W3N, reps, W3N * W3T, 100)
end
end

-- LuaJIT (issue #36): each workload on the LuaJIT path and on the lua_call
-- path against the floor in one process, with the JIT's figures; and the
-- bt.control sequence against the built-in one with one running child.
function sections.jw1()
  compare("W1", { variant("Lua floor", w1("floor"), nil, true),
    bound(w1("bound")),
    jvariant("bt.tick_all", w1("tick_all"), true, "<= 2.0"),
    jvariant("a:tick loop", w1("tick"), true, "<= 2.5"),
    jvariant("bt.tick_all", w1("tick_all"), false),
    jvariant("a:tick loop", w1("tick"), false) },
    W1T, W1N, reps, W1_EXPECT[W1N], 20)
end

function sections.jw2()
  compare("W2", { variant("Lua floor", w2("floor"), nil, true),
    jvariant("bt.tick_all", w2("tick_all"), true, "<= 3"),
    jvariant("a:tick loop", w2("tick"), true),
    jvariant("bt.tick_all", w2("tick_all"), false) },
    W2T, W2N, reps, W2N * W2T * 100, 10)
end

function sections.jw3()
  compare("W3 depth 100", { variant("Lua floor", w3("floor"), nil, true),
    bound(w3("bound")),
    jvariant("bt.tick_all", w3("tick_all", 100), true, "<= 4"),
    jvariant("a:tick loop", w3("tick", 100), true),
    jvariant("bt.tick_all", w3("tick_all", 100), false) },
    W3T, W3N, reps, W3N * W3T, 100)
end


-- a running leaf resumed under 100 sequences against under none
function sections.w3depth()
compare("W3 tick_all", { variant("depth 1", w3("tick_all", 1), nil, true),
                         variant("depth 100 / depth 1", w3("tick_all", 100),
                                 "<= 1.1") },
        W3T, W3N, reps, W3N * W3T, 100)
end

------------------------------------------------------------------------
-- G: event-driven guards. A memory selector whose two guarded branches
-- watch keys that do not change, over a running patrol, against the same
-- tree with plain conditions instead of guards; then a write to a watched
-- key before each tick (the guard re-checks in C at the next tick) in a
-- small and a large tree. Same instructions for both sizes; what differs
-- is how much memory an agent's state spans.
------------------------------------------------------------------------

local function g_tree(guarded, filler, count)
  local patrol = bt.action(function()
    if count then count.n = count.n + 1 end
    return RUNNING
  end)
  local kids = {}
  if guarded then
    kids[1] = bt.guard { bt.is_set("enemy"), abort = "lower",
                         bt.action(function() return RUNNING end) }
    kids[2] = bt.guard { bt.check("hp", "<", 20), abort = "lower",
                         bt.action(function() return RUNNING end) }
  else
    kids[1] = bt.sequence { bt.is_set("enemy"), bt.action(function() return RUNNING end) }
    kids[2] = bt.sequence { bt.check("hp", "<", 20), bt.action(function() return RUNNING end) }
  end
  for i = 1, filler or 0 do  -- more branches, never reached while patrolling
    kids[#kids + 1] = bt.sequence { bt.check("never" .. i, "==", true),
                                    bt.action(function() return RUNNING end) }
  end
  kids[#kids + 1] = patrol
  return bt.tree(bt.selector(kids))
end

-- n agents patrolling; 'write' writes a watched key of each agent before
-- each tick (a value that keeps the guard's condition false).
local function g_run(n, guarded, filler, write)
  return function(count)
    local agents = {}
    local tree = g_tree(guarded, filler, count)
    for i = 1, n do agents[i] = bt.agent(tree, { blackboard = { hp = 100 } }) end
    local t = 0
    return {
      step = function(k)
        for _ = 1, k do
          t = t + 1
          if write then
            for i = 1, n do agents[i].bb.hp = 100 - t % 2 end
          end
          bt.tick_all(agents, 1)
        end
      end,
      sum = function() return agents[n]:status() end,
      reset = function() t = 0; reset_all(agents) end,
    }
  end
end

function sections.g()
  local n, ticks = quick and 2000 or 10000, quick and 50 or 100
  compare("G unchanged keys,",
          { variant("no guards", g_run(n, false), nil, true),
            variant("2 guards watching", g_run(n, true), "~ 1") },
          ticks, n, reps, "running", 10)
  -- a write to a watched key, then a tick, in a tree of 8 and of 2,008
  -- nodes: the guard re-checks in C, a constant, not a tree walk
  compare("G write watched key + tick,",
          { variant("8 nodes", g_run(n, true, 0, true), nil, true),
            variant("2008 nodes", g_run(n, true, 500, true), "~ 1") },
          ticks, n, reps, "running", 10)
end

------------------------------------------------------------------------
-- P: a running parallel whose other children have finished. Each agent's
-- parallel has 'finished' children that succeeded in its first tick
-- (untimed) and one that keeps running; a tick of 1,000 finished children
-- against one of 1: a tick touches only the unfinished children. Leaf
-- calls and the checksum count the running child's ticks.
------------------------------------------------------------------------

-- The runner of n agents of tree whose owners count their leaf calls in
-- .n: its first tick (which reaches the running leaf) is not measured.
local function counted_run(tree, n, count)
  local st, agents = {}, {}
  for i = 1, n do
    st[i] = { n = 0 }
    agents[i] = bt.agent(tree, { owner = st[i] })
  end
  local function start()
    reset_all(agents)
    bt.tick_all(agents, 1)
    for i = 1, n do st[i].n = 0 end
    if count then count.n = 0 end
  end
  start()
  return {
    step = fresh([[local agents, tick_all = ...
      return function(k) for _ = 1, k do tick_all(agents, 1) end end]],
      agents, bt.tick_all),
    sum = function()
      local sum = 0
      for i = 1, n do sum = sum + st[i].n end
      return sum
    end,
    reset = start,
  }
end

local function p_run(n, finished)
  return function(count)
    local kids = {}
    for k = 1, finished do
      kids[k] = bt.action(function() return SUCCESS end)
    end
    kids[finished + 1] = bt.action(function(a)
      if count then count.n = count.n + 1 end
      local s = a.owner
      s.n = s.n + 1
      return RUNNING
    end)
    local tree = bt.tree(bt.parallel(kids), { name = "p" .. finished })
    return counted_run(tree, n, count)
  end
end

function sections.p()
  local n, ticks = 1000, quick and 100 or 200
  compare("P parallel,", {
    variant("1 finished child + 1 running", p_run(n, 1), nil, true),
    variant("1000 finished + 1 running", p_run(n, 1000), "<= 1.2"),
  }, ticks, n, reps, n * ticks, 20)
end

------------------------------------------------------------------------
-- C: a control node of the game's own (bt.control) against the built-in
-- it imitates: a sequence with memory over two actions that succeed and a
-- third that keeps running, resumed every tick. The row: what a tick of
-- the Lua callback and its c:tick costs over the VM's own sequence.
------------------------------------------------------------------------

local function c_run(variant, n)
  return function(count)
    local function act(s)
      return bt.action(function(a)
        if count then count.n = count.n + 1 end
        local o = a.owner
        o.n = o.n + 1
        return s
      end)
    end
    local kids = { act(SUCCESS), act(SUCCESS), act(RUNNING) }
    local root
    if variant == "control" then
      root = bt.control {
        enter = function(c) c.memory.i = 1 end,
        tick = function(c)
          local m = c.memory
          while true do
            local s = c:tick(m.i)
            if s ~= SUCCESS or m.i == c.n then return s end
            m.i = m.i + 1
          end
        end,
        kids[1], kids[2], kids[3] }
    else
      root = bt.sequence(kids)
    end
    local tree = bt.tree(root, { name = "c" .. variant })
    return counted_run(tree, n, count)
  end
end

function sections.c()
  local n, ticks = 1000, quick and 100 or 200
  compare("C running child,", {
    variant("built-in sequence", c_run("sequence", n), nil, true),
    variant("bt.control sequence", c_run("control", n), "measured"),
  }, ticks, n, reps, n * ticks, 20)
end

-- LuaJIT (issue #36): the bt.control sequence against the built-in one,
-- one running child, on each path.
function sections.jc()
  local n, ticks = 1000, quick and 100 or 200
  local function c(v, ffi)
    local make = c_run(v, n)
    return function(count) return onpath(ffi, make)(count) end
  end
  local function cv(label, v, ffi, target, floor)
    local x = variant(label, c(v, ffi), target, floor)
    x.jit = true
    return x
  end
  compare("C running child,", {
    cv("LuaJIT path: built-in sequence", "sequence", true, nil, true),
    cv("LuaJIT path: bt.control sequence", "control", true, "<= 2"),
  }, ticks, n, reps, n * ticks, 20)
  compare("C running child,", {
    cv("lua_call path: built-in sequence", "sequence", false, nil, true),
    cv("lua_call path: bt.control sequence", "control", false),
  }, ticks, n, reps, n * ticks, 20)
end

------------------------------------------------------------------------
-- R: hot reload of a 200-node tree with 10,000 running agents, against
-- one full tick of those agents. The row: the extra cost of the reload
-- (compile, and the first tick's migrations) in plain ticks; its ns are per
-- agent.
------------------------------------------------------------------------

-- The R tree (50 sequences, the last one's action holding), n agents
-- running it after one tick, and a function that makes its root again
-- (new leaf closures: the reload of a tree of the same shape).
local function r_setup(n)
  local function root()
    local kids = {}
    for i = 1, 50 do
      kids[i] = bt.sequence { name = "b" .. i,
        bt.condition(function() return i == 50 end),
        bt.action(function() return SUCCESS end),
        bt.action { name = "hold", tick = function() return RUNNING end,
                    abort = function() end } }
    end
    return bt.selector(kids)
  end
  local tree = bt.tree(root(), { name = "r" })
  local agents = {}
  for i = 1, n do agents[i] = bt.agent(tree) end
  bt.tick_all(agents, 1)
  return tree, agents, root
end

-- For --profile r VARIANT: after the setup, nothing ("none"), one plain
-- tick ("tick") or a reload and the tick that migrates ("reload").
local function r_run(variant, n)
  local tree, agents, root = r_setup(n)
  local newroot = root()
  return {
    step = function()
      if variant == "reload" then assert(tree:reload(newroot)) end
      if variant ~= "none" then bt.tick_all(agents, 1) end
    end,
    sum = function() return tree.size end,
  }
end

function sections.r()
  local n = quick and 2000 or 10000
  local tree, agents, root = r_setup(n)
  local tick_t, reload_t, first_t = {}, {}, {}
  for _ = 1, reps do
    tick_t[#tick_t + 1] = timed(function() bt.tick_all(agents, 1) end)
    local newroot = root()
    reload_t[#reload_t + 1] = timed(function() assert(tree:reload(newroot)) end)
    first_t[#first_t + 1] = timed(function() bt.tick_all(agents, 1) end)
  end
  for _, a in ipairs(agents) do
    assert(a:status() == "running", "agents keep running across reloads")
  end
  local tk, rl, ft = median(tick_t), median(reload_t), median(first_t)
  io.write(string.format(
    "\nReload, %d-node tree, %d running agents: compile %.2f ms; first tick "
    .. "after it %.2f ms (migration included) against %.2f ms for a plain "
    .. "tick:\n  reload cost = %.2f full ticks (compile + migration - tick)\n",
    tree.size, n, rl * 1e3, ft * 1e3, tk * 1e3, (rl + ft - tk) / tk))
  row(string.format("R reload, %d running agents", n),
      (rl + ft - tk) / n * 1e9, 0, (rl + ft - tk) / tk, "<= 0.5")
end

------------------------------------------------------------------------
-- S: sleeping agents. 10,000 agents in one bt.tick_all list: all running
-- W1, against 1,000 running W1 (every tenth) among 9,000 asleep (their
-- leaf returned bt.sleep). The rows are per list entry, the ratios against
-- the all-awake list (goal: <= 0.15, the awake tenth plus a few ns for
-- each sleeper). A third list holds the awake tenth alone: what the
-- sleepers add is the difference, shown per sleeper.
------------------------------------------------------------------------

-- The list of n agents: kind "all" (all awake), "tenth" (9 in 10 asleep)
-- or "alone" (only the awake tenth; the states of all, as in the others).
local function s_run(kind, n)
  local st = w1_states(n)
  local tree = w1_tree(w1_leaves_agent())
  local sleeper = bt.tree(bt.action(function() return bt.sleep(1e300) end),
                          { name = "sleeper" })
  local list, awake = {}, {}
  for i = 1, n do
    if kind == "all" or i % 10 == 0 then
      list[#list + 1] = bt.agent(tree, { owner = st[i] })
      awake[#awake + 1] = st[i]
    elseif kind == "tenth" then
      list[#list + 1] = bt.agent(sleeper)
    end
  end
  bt.tick_all(list, 1) -- the sleepers fall asleep
  local function step(k)
    for _ = 1, k do
      for j = 1, #awake do w1_step(awake[j]) end
      bt.tick_all(list, 1)
    end
  end
  return { step = step, sum = function() return w1_sum(awake) end }
end

-- Times the steps of runs (each runs[k](20): 20 ticks or frames),
-- alternating in chunks of 20 so that a shared machine's drifts fall on
-- all alike: times[k] lists each repetition's seconds for run k.
local function alternate(runs, chunks)
  local times = {}
  for k = 1, #runs do times[k] = {} end
  for _ = 1, reps do
    local t = {}
    for k = 1, #runs do t[k] = 0 end
    for _ = 1, chunks do
      for k = 1, #runs do
        collectgarbage("collect")
        local t0 = clock()
        runs[k](20)
        t[k] = t[k] + clock() - t0
      end
    end
    for k = 1, #runs do times[k][#times[k] + 1] = t[k] end
  end
  return times
end

function sections.s()
  local n = W1N
  local runs = { s_run("all", n).step, s_run("tenth", n).step,
                 s_run("alone", n).step }
  local times = alternate(runs, math.floor(W1T / 20))
  local function ratio(k)
    local r = {}
    for i = 1, #times[1] do r[i] = times[k][i] / times[1][i] end
    return median(r)
  end
  local ns = {}
  for k = 1, 3 do ns[k] = median(times[k]) / (W1T * n) * 1e9 end
  row("S W1 list, all awake", ns[1], 0, 1)
  row("S W1 list, 90% asleep", ns[2], 0, ratio(2), "<= 0.15")
  row("S W1 list, the awake tenth alone", ns[3], 0, ratio(3))
  io.stdout:write(string.format(
    "S: a sleeper costs %.1f ns (the 90%% list less the tenth alone, per "
    .. "sleeper)\n", (ns[2] - ns[3]) * n / (n - math.floor(n / 10))))
end

------------------------------------------------------------------------
-- D "the live debugger" (issue #34): 40 agents streamed by bt.debug, each
-- tick changing a blackboard key (a 1 KB value), the loop a game runs:
-- bt.debug.poll() then bt.tick_all. Variants: no page; 2,000 watches (on
-- keys no tick changes: a watch is looked at when its key changes); 64
-- pages (event streams: 16 are taken, the others refused) that never
-- read, whose queues are bounded (the streams that cannot keep up are
-- dropped). Prints how much the Lua heap grew with the pages.
------------------------------------------------------------------------

local function d_run(variant, n)
  local socket = require "socket"
  local tree = bt.tree(bt.action(function(_, bb)
    bb.v = bb.v % 1000 + 1
    bb.text = bb.pad .. bb.v
    return RUNNING
  end), { name = "d" })
  local agents = {}
  for i = 1, n do
    agents[i] = bt.agent(tree, { blackboard = { v = i, pad = ("x"):rep(1000) } })
  end
  local D = require("bonsai.debug").new(bt)
  local port, url = D.serve { port = 0, agents = agents }
  local token = url:match("token=(%x+)")
  local pages = {}
  if variant == "watches" then
    for i = 1, 2000 do
      assert(D.command { cmd = "watch", key = "k" .. i, op = "==", value = i })
    end
  elseif variant == "pages" then
    for i = 1, 64 do
      local c = socket.tcp()
      c:setoption("keepalive", false)
      c:connect("127.0.0.1", port)
      c:send("GET /events?token=" .. token .. " HTTP/1.1\r\nHost: 127.0.0.1:" ..
             port .. "\r\n\r\n")
      pages[i] = c
      D.poll()
    end
  end
  local function step(k, sample)
    for t = 1, k do
      D.poll()
      bt.tick_all(agents, 0.01)
      if sample and t % 50 == 0 then sample() end
    end
  end
  return { step = step, close = function()
    D.close()
    for _, c in ipairs(pages) do c:close() end
  end }
end

function sections.d()
  local n, ticks = 40, quick and 500 or 2000
  local names = { "none", "watches", "pages" }
  local times = { {}, {}, {} }
  for _ = 1, reps do
    for k, name in ipairs(names) do
      collectgarbage("collect")
      local r = d_run(name, n)
      local t0 = clock()
      r.step(ticks)
      times[k][#times[k] + 1] = clock() - t0
      r.close()
    end
  end
  -- untimed: the heap with the pages, after a full GC every 50 ticks
  collectgarbage("collect")
  local heap, grew = collectgarbage("count"), 0
  local r = d_run("pages", n)
  r.step(ticks, function()
    collectgarbage("collect")
    grew = math.max(grew, collectgarbage("count") - heap)
  end)
  r.close()
  local function ratio(k)
    local q = {}
    for i = 1, #times[1] do q[i] = times[k][i] / times[1][i] end
    return median(q)
  end
  row("D bt.debug, 40 agents streamed", median(times[1]) / (ticks * n) * 1e9,
      0, 1)
  row("D ... and 2,000 watches", median(times[2]) / (ticks * n) * 1e9, 0,
      ratio(2), "<= 1.1")
  row("D ... and 64 pages that never read", median(times[3]) / (ticks * n) *
      1e9, 0, ratio(3))
  io.stdout:write(string.format("D: with 64 pages that never read, the " ..
    "Lua heap grew by %.1f MB at most (bound: 16 MB queued in all)\n",
    grew / 1024))
end

------------------------------------------------------------------------
-- E: events waking sleepers (issue #38). A crowd of 10,000 agents asleep
-- in one bt.tick_all list; each frame bt.send gives 100 of them (the next
-- hundred each frame) an "alarm" with a table payload, which wakes them:
-- their tick checks the event (bt.event, its payload to bb.where) and
-- calls their leaf, which answers bt.sleep: asleep again. Against the
-- same crowd without events (what the 9,900 sleepers cost), and 100
-- agents of the same tree that never sleep (their leaf answers running),
-- sent the same event each frame: the same tick. Goal: what the hundred
-- woken add to the crowd costs what the hundred awake cost (the rows are
-- per agent; the ratio is (woken - asleep) / awake). Every agent has been
-- woken once before the measure.
------------------------------------------------------------------------

local E_CROWD, E_WOKEN = 10000, 100

-- kind "crowd" (all asleep, no event), "woken" (100 woken a frame) or
-- "awake" (the 100 alone, never asleep).
local function e_run(kind)
  local function leaf(a)
    a.owner.n = a.owner.n + 1
    if a.owner.sleeps then return bt.sleep(1e300) end
    return RUNNING
  end
  local tree = bt.tree(bt.reactive_selector {
    bt.reactive_sequence { bt.event("alarm", { key = "where" }),
                           bt.action(leaf) },
    bt.action(leaf), -- (until the first event)
  }, { name = "crowd" })
  local n = kind == "awake" and E_WOKEN or E_CROWD
  local list, owners = {}, {}
  for i = 1, n do
    owners[i] = { n = 0, sleeps = kind ~= "awake" }
    list[i] = bt.agent(tree, { owner = owners[i] })
  end
  bt.tick_all(list, 1) -- the sleepers fall asleep
  bt.tick_all(list, 1) -- (the list gets its sleep cache)
  local frame, groups = 0, {}
  for g = 1, n / E_WOKEN do
    groups[g] = {}
    for j = 1, E_WOKEN do groups[g][j] = list[(g - 1) * E_WOKEN + j] end
  end
  local where = { x = 1, y = 2 }
  local function frames(k, send)
    for _ = 1, k do
      frame = frame + 1
      if send then bt.send(groups[frame % #groups + 1], "alarm", where) end
      bt.tick_all(list, 1)
    end
  end
  frames(#groups, true) -- each agent woken once
  local function sum()
    local t = 0
    for i = 1, n do t = t + owners[i].n end
    return t
  end
  return { step = function(k) frames(k, kind ~= "crowd") end, sum = sum }
end

function sections.e()
  local runs = { e_run("crowd").step, e_run("woken").step,
                 e_run("awake").step }
  local frames = quick and 200 or 1000
  local times = alternate(runs, frames / 20)
  local r = {}
  for i = 1, #times[1] do
    r[i] = (times[2][i] - times[1][i]) / times[3][i]
  end
  local us = {}
  for k = 1, 3 do us[k] = median(times[k]) / frames * 1e6 end
  io.stdout:write(string.format(
    "E: a frame of the 10,000 asleep %.1f us; with bt.send to 100 of them "
    .. "%.1f us (%.1f us more: %.0f ns per agent woken); 100 awake agents "
    .. "sent the same %.1f us (%.0f ns each)\n", us[1], us[2], us[2] - us[1],
    (us[2] - us[1]) / E_WOKEN * 1e3, us[3], us[3] / E_WOKEN * 1e3))
  row("E 10,000 asleep, no event (per agent)", us[1] / E_CROWD * 1e3, 0, 0)
  row("E 100 of them woken by bt.send (each)",
      (us[2] - us[1]) / E_WOKEN * 1e3, 0, median(r), "<= 1.2")
  row("E 100 awake, sent the same (each)", us[3] / E_WOKEN * 1e3, 0, 1)
end

------------------------------------------------------------------------
-- X "scripts" (issue #26): n agents whose tree is one condition on the
-- blackboard key hp, or one script. Variants: "check" bt.check("hp", ">",
-- 50); "script_condition" the same written "hp > 50" (it compiles to that
-- check: the instructions must be equal); "fn" a Lua condition reading
-- bb.hp (what the check saves); "script3" the 3-statement script
-- "count := count + 1; hp -= 1; low := hp < 20 && count > 3".
------------------------------------------------------------------------

local X_ROOTS = {
  check = function() return bt.check("hp", ">", 50) end,
  script_condition = function() return bt.script_condition("hp > 50") end,
  fn = function()
    return bt.condition(function(_, bb) return bb.hp > 50 end)
  end,
  script3 = function()
    return bt.script("count := count + 1; hp -= 1; low := hp < 20 && count > 3")
  end,
}

local function x_run(variant, n)
  local tree = bt.tree(assert(X_ROOTS[variant], "no variant " .. variant)(),
                       { name = "x" })
  local list = {}
  for i = 1, n do
    list[i] = bt.agent(tree, { blackboard = { hp = 1e9 + i % 100, count = 0 } })
  end
  local ok = 0
  return {
    step = function(k)
      for _ = 1, k or 1 do
        if bt.tick_all(list, 1) == nil then ok = ok + 1 end
      end
    end,
    sum = function() return "clean ticks " .. ok end,
    list = list,
  }
end

------------------------------------------------------------------------
-- --profile W VARIANT [agents] [ticks] [depth]: one untimed run of one
-- variant, nothing else, for callgrind or perf (W: w1, w2, w3, p, c, s, r,
-- x; VARIANT: floor, tick_all, tick, for w1 and w3 also cloop, for w1 also
-- cfloor, cbonsai, and sub, sub_none: bt.tick_all with one subscription on each
-- agent, taking its events or none (docs/DEBUGGER.md), and prof: bt.tick_all
-- with the tree profiled (tree:profile(true)); for p the number of
-- finished children; for c sequence or control; for s all, tenth or alone;
-- for e crowd, woken or awake (agents: its own; ticks are frames);
-- for r none, tick or reload, whatever the ticks; for x check,
-- script_condition, fn or script3; depth: W3's, 100 by default).
------------------------------------------------------------------------

if arg[1] == "--profile" then
  local w, variant = arg[2], arg[3]
  local n, ticks = tonumber(arg[4]) or 1000, tonumber(arg[5]) or 100
  local r
  local filters = { sub = {}, sub_none = { events = false } }
  if w == "w1" and filters[variant] then
    r = w1_run("tick_all", n, nil, function(agents)
      for _, a in ipairs(agents) do
        a:subscribe(function() end, filters[variant])
      end
    end)
  elseif w == "w1" and variant == "prof" then
    r = w1_run("tick_all", n, nil, function(agents)
      agents[1].tree:profile(true)
    end)
  elseif w == "w1" then
    r = w1_run(variant, n)
  elseif w == "w2" then
    r = w2_run(variant, n)
  elseif w == "p" then
    r = p_run(n, tonumber(variant))()
  elseif w == "c" then
    r = c_run(variant, n)()
  elseif w == "s" then
    r = s_run(variant, n)
  elseif w == "e" then
    r = e_run(variant)
  elseif w == "r" then
    r = r_run(variant, n)
  elseif w == "x" then
    r = x_run(variant, n)
  else
    r = w3_run(variant, n, tonumber(arg[6]) or 100)
  end
  collectgarbage("collect") -- no debt from the setup
  r.step(ticks)
  io.write(string.format("%s %s %d agents x %d ticks: %s\n", w, variant, n,
                         ticks, tostring(r.sum())))
  os.exit(0)
end

------------------------------------------------------------------------
-- --instructions: the stable figure, for a machine whose timings wander:
-- instructions per agent-tick of each variant, counted by callgrind
-- (valgrind) as the difference of two --profile runs of different lengths
-- (the setup cancels), then the ratios the goals of issues #14 and #15 are
-- stated in. Prints a line and returns when valgrind is not installed.
------------------------------------------------------------------------

-- name, --profile's W and VARIANT, agents, two tick counts[, W3's depth]
local IROWS = {
  { "W1 Lua floor", "w1 floor", 1000, 20, 40 },
  { "W1 C loop, Lua leaves", "w1 cloop", 1000, 20, 40 },
  { "W1 bt.tick_all", "w1 tick_all", 1000, 20, 40 },
  { "W1 a:tick loop", "w1 tick", 1000, 20, 40 },
  { "W1 bt.tick_all, + 200-node branch", "w1 tick_all_big", 1000, 20, 40 },
  { "W1 bt.tick_all, a subscriber (events)", "w1 sub", 1000, 20, 40 },
  { "W1 bt.tick_all, a subscriber (none)", "w1 sub_none", 1000, 20, 40 },
  { "W1 bt.tick_all, the tree profiled", "w1 prof", 1000, 20, 40 },
  { "W1 C floor", "w1 cfloor", 1000, 100, 200 },
  { "W1 Bonsai core, C leaves", "w1 cbonsai", 1000, 100, 200 },
  { "W1 C leaves, + 200-node branch", "w1 cbonsai_big", 1000, 100, 200 },
  { "W2 Lua floor", "w2 floor", 200, 5, 10 },
  { "W2 bt.tick_all", "w2 tick_all", 200, 5, 10 },
  { "W2 a:tick loop", "w2 tick", 200, 5, 10 },
  { "W3 depth 100 Lua floor", "w3 floor", 1000, 100, 200, 100 },
  { "W3 C loop, Lua leaf", "w3 cloop", 1000, 100, 200, 100 },
  { "W3 depth 100 bt.tick_all", "w3 tick_all", 1000, 100, 200, 100 },
  { "W3 depth 100 a:tick loop", "w3 tick", 1000, 100, 200, 100 },
  { "W3 depth 1 bt.tick_all", "w3 tick_all", 1000, 100, 200, 1 },
  { "P parallel, 1 finished + 1 running", "p 1", 1000, 100, 200 },
  { "P parallel, 1000 finished + 1 running", "p 1000", 1000, 100, 200 },
  { "C built-in sequence, running child", "c sequence", 1000, 100, 200 },
  { "C bt.control sequence, running child", "c control", 1000, 100, 200 },
  { "S list, all awake", "s all", 2000, 10, 20 },
  { "S list, 90% asleep", "s tenth", 2000, 10, 20 },
  { "S list, the awake tenth alone", "s alone", 2000, 10, 20 },
  { "X bt.check hp > 50", "x check", 1000, 100, 200 },
  { "X script_condition 'hp > 50'", "x script_condition", 1000, 100, 200 },
  { "X Lua condition bb.hp > 50", "x fn", 1000, 100, 200 },
  { "X 3-statement bt.script", "x script3", 1000, 100, 200 },
}

-- the ratios: name, numerator row, denominator row, goal
local IRATIOS = {
  { "W1 bt.tick_all / C loop", "W1 bt.tick_all", "W1 C loop, Lua leaves", "<= 1.08" },
  { "W2 bt.tick_all / floor", "W2 bt.tick_all", "W2 Lua floor", "<= 1.35" },
  { "W3 depth 100 bt.tick_all / floor", "W3 depth 100 bt.tick_all", "W3 depth 100 Lua floor", "<= 2.3" },
  { "W3 C loop / floor (the limit)", "W3 C loop, Lua leaf", "W3 depth 100 Lua floor", "measured" },
  { "W1 a:tick / bt.tick_all", "W1 a:tick loop", "W1 bt.tick_all", "<= 1.15" },
  { "W3 a:tick / bt.tick_all", "W3 depth 100 a:tick loop", "W3 depth 100 bt.tick_all", "<= 1.3" },
  { "W1 C leaves / C floor", "W1 Bonsai core, C leaves", "W1 C floor", "<= 2.0" },
  { "W1 + 200-node branch / W1 (C leaves)", "W1 C leaves, + 200-node branch", "W1 Bonsai core, C leaves", "<= 1.15" },
  { "W1 + 200-node branch / W1 (Lua leaves)", "W1 bt.tick_all, + 200-node branch", "W1 bt.tick_all", "<= 1.15" },
  { "W3 depth 100 / depth 1", "W3 depth 100 bt.tick_all", "W3 depth 1 bt.tick_all", "<= 1.1" },
  { "P 1000 finished / 1 finished", "P parallel, 1000 finished + 1 running", "P parallel, 1 finished + 1 running", "<= 1.2" },
  { "C bt.control / built-in sequence", "C bt.control sequence, running child", "C built-in sequence, running child", "measured" },
  { "S 90% asleep / all awake", "S list, 90% asleep", "S list, all awake", "<= 0.15" },
  { "R reload extra / plain tick", "R reload, extra", "R plain tick", "<= 0.5" },
  { "X script_condition / bt.check", "X script_condition 'hp > 50'", "X bt.check hp > 50", "== 1" },
}

local function instructions()
  if not os.execute("valgrind --version >/dev/null 2>&1") then
    io.write("\nInstructions: valgrind is not installed (apt install valgrind)\n")
    return
  end
  local function count(args, n, ticks, depth)
    local cmd = string.format("valgrind --tool=callgrind --callgrind-out-file=/dev/null "
      .. "%s %s --profile %s %d %d %s 2>&1", arg[-1], arg[0], args, n, ticks,
      depth and tostring(depth) or "")
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    return assert(tonumber(out:match("Collected : (%d+)")), "callgrind: " .. out)
  end
  io.write(string.format("\nInstructions per agent-tick (callgrind):\n%-40s %12s\n",
                         "variant", "instructions"))
  local per = {}
  for _, r in ipairs(IROWS) do
    local a = count(r[2], r[3], r[4], r[6])
    local b = count(r[2], r[3], r[5], r[6])
    per[r[1]] = (b - a) / (r[3] * (r[5] - r[4]))
    io.write(string.format("%-40s %12.0f\n", r[1], per[r[1]]))
  end
  -- R, per agent: a plain tick, and the reload with the tick that migrates
  -- less that plain tick (three runs: setup only, + a tick, + both)
  local rn = 10000
  local r0, r1, r2 = count("r none", rn, 1), count("r tick", rn, 1),
                     count("r reload", rn, 1)
  per["R plain tick"], per["R reload, extra"] = (r1 - r0) / rn, (r2 - r1) / rn
  io.write(string.format("%-40s %12.0f\n%-40s %12.0f\n",
                         "R plain tick, 10,000 running agents", per["R plain tick"],
                         "R reload + migration - tick, per agent", per["R reload, extra"]))
  -- E, per frame: the crowd asleep, with 100 woken, and the 100 awake
  -- (over 200 frames: the collector's cycles of a 10,000-agent heap even
  -- out)
  local e = {}
  for _, v in ipairs { "crowd", "woken", "awake" } do
    e[v] = (count("e " .. v, 0, 220) - count("e " .. v, 0, 20)) / 200
  end
  io.write(string.format("%-40s %12.0f\n%-40s %12.0f\n%-40s %12.0f\n",
                         "E 10,000 asleep, a frame", e.crowd,
                         "E + bt.send to 100 of them, a frame", e.woken,
                         "E 100 awake, sent the same, a frame", e.awake))
  io.write(string.format("%-40s %12s %9s\n", "ratio (instructions)", "", "goal"))
  io.write(string.format("%-40s %12.3f %9s\n", "E woken - asleep / awake",
                         (e.woken - e.crowd) / e.awake, "<= 1.2"))
  for _, q in ipairs(IRATIOS) do
    io.write(string.format("%-40s %12.3f %9s\n", q[1], per[q[2]] / per[q[3]], q[4]))
  end
end

if arg[1] == "--instructions" then
  instructions()
  os.exit(0)
end

-- The driver: every section in a process of its own, then the table.
local ORDER = { "w1", "w1c", "w1big", "trace", "record", "w2", "w3",
                "w3tick", "w3depth", "g", "p", "c", "r", "s", "e", "d" }
if workloads then ORDER = { "w1", "w2", "w3", "w3tick" } end
if workloads and jit then ORDER = { "jw1", "jw2", "jw3", "jc" } end
if section then
  assert(sections[section], "no section " .. section)()
  io.write("END\n") -- (5.1's p:close() does not tell a failed section)
  os.exit(0)
elseif not memory_only then
  io.write(string.format("Bonsai %s benchmarks (%s) on %s\n\n", bt.VERSION,
                         quick and "--quick" or "full",
                         jit and jit.version or _VERSION))
  local rows = {}
  for _, name in ipairs(ORDER) do
    local cmd = string.format("%s %s --section %s%s", arg[-1], arg[0], name,
                              quick and " --quick" or "")
    local p, ended = assert(io.popen(cmd)), false
    for line in p:lines() do
      if line == "END" then
        ended = true
      elseif line:sub(1, 4) == "ROW\t" then
        local f = {}
        for field in line:gmatch("\t([^\t]*)") do f[#f + 1] = field end
        rows[#rows + 1] = f
      else
        io.write(line, "\n")
      end
    end
    assert(p:close() and ended, "section " .. name .. " failed")
  end
  local w = 40 -- the longest name
  for _, r in ipairs(rows) do w = math.max(w, #r[1]) end
  io.write(string.format("%-" .. w .. "s %12s %12s %9s %9s\n", "variant",
                         "ns/agent-tick", "leaves/tick", "ratio", "target"))
  for _, r in ipairs(rows) do
    io.write(string.format("%-" .. w .. "s %12.1f %12.2f %9.3f %9s  %s\n",
                           r[1], tonumber(r[2]), tonumber(r[3]),
                           tonumber(r[4]), r[5], r[6] or ""))
  end
end

------------------------------------------------------------------------
-- Memory: 10,000 W1 agents
------------------------------------------------------------------------

local function rss()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local _, res = f:read("*n", "*n")
  f:close()
  return res * 4096
end

-- Measured in a process of its own (scripts/bench runs "--memory" first),
-- so the heap has no free space left over from other runs.
if memory_only then
  local n = 10000
  local st = w1_states(n)
  local tree = w1_tree(w1_leaves_agent())
  collectgarbage("collect"); collectgarbage("collect")
  local heap0, rss0, core0 = collectgarbage("count") * 1024, rss(), bt.memory()
  local agents = {}
  for i = 1, n do agents[i] = bt.agent(tree, { owner = st[i] }) end
  collectgarbage("collect"); collectgarbage("collect")
  local heap1, rss1, core1 = collectgarbage("count") * 1024, rss(), bt.memory()
  for _ = 1, 100 do
    for i = 1, n do w1_step(st[i]) end
    bt.tick_all(agents, 1)
  end
  collectgarbage("collect"); collectgarbage("collect")
  local heap2, rss2, core2 = collectgarbage("count") * 1024, rss(), bt.memory()
  io.write(string.format("\nMemory, %d W1 agents (%d nodes), bytes per agent:\n",
                         n, tree.size))
  io.write(string.format("  %-34s %10s %10s\n", "", "created", "after 100 ticks"))
  io.write(string.format("  %-34s %10.0f %10.0f\n", "Lua heap (agent table, userdata)",
                         (heap1 - heap0) / n, (heap2 - heap0) / n))
  io.write(string.format("  %-34s %10.0f %10.0f\n", "C core (agent state, blackboard)",
                         (core1 - core0) / n, (core2 - core0) / n))
  io.write(string.format("  %-34s %10.0f %10.0f\n", "process RSS", (rss1 - rss0) / n,
                         (rss2 - rss0) / n))
  io.write(string.format("  %-34s %10.0f\n", "total (Lua heap + C core)",
                         (heap1 - heap0 + core1 - core0) / n))

  -- Bytes allocated per agent-tick (Lua heap and C core, the collector
  -- stopped; goal 0): W1 as above, and a running bt.task (its coroutine
  -- resumed every tick), with bt.tick_all and with an a:tick loop.
  local function allocated(list, step)
    step() -- whatever grows once
    collectgarbage("collect"); collectgarbage("stop")
    local h, c = collectgarbage("count"), bt.memory()
    for _ = 1, 10 do step() end
    local h2, c2 = collectgarbage("count"), bt.memory()
    collectgarbage("restart")
    return ((h2 - h) * 1024 + c2 - c) / (10 * #list)
  end
  local function loops(list, world)
    return function()
      if world then for i = 1, #list do world(i) end end
      bt.tick_all(list, 1)
    end, function()
      for i = 1, #list do
        if world then world(i) end
        list[i]:tick(1)
      end
    end
  end
  local tasks = {}
  local task_tree = bt.tree(bt.sequence { bt.task(function()
    while true do coroutine.yield() end
  end) }, { name = "task" })
  for i = 1, 1000 do tasks[i] = bt.agent(task_tree) end
  local w1_all, w1_each = loops(agents, function(i) w1_step(st[i]) end)
  local task_all, task_each = loops(tasks)
  local x = x_run("script3", 1000)
  io.write("\nAllocation per agent-tick (Lua heap + C core, bytes; goal 0):\n")
  for _, r in ipairs {
    { "W1 bt.tick_all", agents, w1_all }, { "W1 a:tick loop", agents, w1_each },
    { "running bt.task, bt.tick_all", tasks, task_all },
    { "running bt.task, a:tick loop", tasks, task_each },
    { "3-statement bt.script, bt.tick_all", x.list, x.step },
  } do
    io.write(string.format("  %-34s %10.1f\n", r[1], allocated(r[2], r[3])))
  end
end
