-- bonsai.test.worlds: random worlds, property style. A property runs a
-- tree over many seeded random blackboard histories (each a list of
-- { at = tick, key, value } changes drawn from generators) and checks
-- invariants after every tick. A broken invariant is shrunk (changes
-- dropped, values made simpler, while it still breaks) and reported with
-- its seed, which replays it exactly. The generator is Park and Miller's
-- minimal standard (x * 16807 mod 2^31 - 1): exact in doubles and in
-- integers, so the same seed gives the same worlds on every Lua.

local M = {}

-- Random numbers -------------------------------------------------------------

local MOD = 2147483647

local Random = {}
Random.__index = Random

-- M.random(seed): a generator; r:next() in 1..MOD-1, r:int(lo, hi),
-- r:float() in [0, 1).
function M.random(seed)
  local x = math.floor(tonumber(seed) or 1) % (MOD - 1)
  if x < 0 then x = x + MOD - 1 end
  return setmetatable({ x = x + 1 }, Random)
end

function Random:next()
  self.x = self.x * 16807 % MOD
  return self.x
end

function Random:int(lo, hi)
  return lo + self:next() % (hi - lo + 1)
end

function Random:float()
  return (self:next() - 1) / (MOD - 1)
end

-- Generators: gen(r) -> value; shrink(v) -> simpler values -----------------

local Gen = { __name = "bonsai.test.generator" }

local function gen(draw, shrink, what)
  return setmetatable({ draw = draw, shrink = shrink, what = what }, Gen)
end

-- int(lo, hi): integers in [lo, hi]; shrinks toward lo (or 0 in range).
function M.int(lo, hi)
  assert(lo and hi and lo <= hi, "T.int(lo, hi) needs lo <= hi")
  local base = (lo <= 0 and hi >= 0) and 0 or lo
  return gen(function(r) return r:int(lo, hi) end, function(v)
    local c = {}
    if v ~= base then
      c[#c + 1] = base
      local mid = base + math.floor((v - base) / 2)
      if mid ~= base and mid ~= v then c[#c + 1] = mid end
      if v > base then c[#c + 1] = v - 1 else c[#c + 1] = v + 1 end
    end
    return c
  end, "int")
end

-- number(lo, hi): numbers in [lo, hi) in steps of (hi - lo) / 1024.
function M.number(lo, hi)
  assert(lo and hi and lo < hi, "T.number(lo, hi) needs lo < hi")
  return gen(function(r) return lo + r:int(0, 1023) / 1024 * (hi - lo) end,
    function(v)
      if v == lo then return {} end
      return { lo, lo + math.floor((v - lo) / (hi - lo) * 512) / 1024 *
                      (hi - lo) }
    end, "number")
end

-- bool(): true or false; shrinks to false.
function M.bool()
  return gen(function(r) return r:int(0, 1) == 1 end, function(v)
    if v then return { false } end
    return {}
  end, "bool")
end

-- one_of{ v1, v2, ... }: one of the values; shrinks toward v1.
function M.one_of(values)
  assert(type(values) == "table" and #values > 0,
         "T.one_of takes a non-empty list")
  return gen(function(r) return values[r:int(1, #values)] end, function(v)
    local c = {}
    for _, x in ipairs(values) do
      if x == v then break end
      c[#c + 1] = x
    end
    return c
  end, "one_of")
end

-- maybe(g, p): nil (the key cleared) with chance p (default 0.5), else
-- g's value; shrinks to nil first.
function M.maybe(g, p)
  p = p or 0.5
  return gen(function(r)
    if r:float() < p then return nil end
    return g.draw(r)
  end, function(v)
    if v == nil then return {} end
    local c = { M.NIL }
    for _, x in ipairs(g.shrink(v)) do c[#c + 1] = x end
    return c
  end, "maybe")
end

M.NIL = setmetatable({}, { __name = "bonsai.test.nil" }) -- shrink to nil

-- Properties ------------------------------------------------------------------

local OPTIONS = { tree = true, options = true, name = true, trees = true,
                  blackboard = true, owner = true, dt = true,
                  stand_ins = true, keys = true, ticks = true, runs = true,
                  seed = true, rate = true, invariants = true,
                  shrinks = true, errors = true, coverage = true }

-- A history for one run: every key set at tick 1, then at each tick a
-- change of one key with chance rate.
local function history(o, keys, seed)
  local r, h = M.random(seed), {}
  for _, k in ipairs(keys) do
    h[#h + 1] = { at = 1, key = k, value = o.keys[k].draw(r) }
  end
  for tick = 2, o.ticks do
    if r:float() < o.rate then
      local k = keys[r:int(1, #keys)]
      h[#h + 1] = { at = tick, key = k, value = o.keys[k].draw(r) }
    end
  end
  return h
end

-- The scenario of a history (run for at most ticks ticks).
local function scenario(T, o, h, coverage)
  local timeline = {}
  for _, c in ipairs(h) do
    if c.value == nil then
      timeline[#timeline + 1] = { at = c.at, clear = { c.key } }
    else
      timeline[#timeline + 1] = { at = c.at, set = { [c.key] = c.value } }
    end
  end
  return T.scenario { tree = o.tree, options = o.options, name = o.name,
    trees = o.trees, blackboard = o.blackboard, owner = o.owner, dt = o.dt,
    stand_ins = o.stand_ins, timeline = timeline, errors = "record",
    coverage = coverage, max_ticks = o.ticks }
end

-- Runs a history; returns nil when every invariant held, else the broken
-- invariant's name, the tick, the message and the scenario.
local function try(T, o, names, h, ticks, coverage)
  local s = scenario(T, o, h, coverage)
  for _ = 1, ticks do
    local t = s:step()
    if t.error and o.errors ~= "allow" then
      return "the tree does not raise", t.n, t.error, s
    end
    for _, name in ipairs(names) do
      local ok, held, msg = pcall(o.invariants[name], t, s)
      if not ok then return name, t.n, tostring(held), s end
      if not held then return name, t.n, msg, s end
    end
  end
end

-- Shrinks a failing history: drops changes, makes them earlier, then
-- simplifies values,
-- while the same invariant still breaks, within o.shrinks runs.
local function shrink(T, o, names, h, name, tick)
  local budget = o.shrinks
  local function fails(cand)
    if budget <= 0 then return false end
    budget = budget - 1
    local n2, t2 = try(T, o, names, cand, tick, false)
    if n2 == name then
      tick = t2
      return true
    end
    return false
  end
  -- h with its change i replaced by { at, key, value } (from c), kept when
  -- the same invariant still breaks
  local function replaced(i, c, at, value)
    local cand = {}
    for j, x in ipairs(h) do cand[j] = x end
    cand[i] = { at = at, key = c.key, value = value }
    if fails(cand) then
      h = cand
      return true
    end
    return false
  end
  local changed = true
  while changed and budget > 0 do
    changed = false
    for i = #h, 1, -1 do
      if h[i] and h[i].at <= tick then
        local cand = {}
        for j, c in ipairs(h) do if j ~= i then cand[#cand + 1] = c end end
        if fails(cand) then h, changed = cand, true end
      end
    end
    for i = 1, #h do -- a change made earlier (at tick 1, or sooner)
      local c = h[i]
      for _, at in ipairs { 1, math.floor((c.at + 1) / 2) } do
        if at < c.at and replaced(i, c, at, c.value) then
          changed = true
          break
        end
      end
    end
    for i = 1, #h do
      local c = h[i]
      for _, v in ipairs(o.keys[c.key].shrink(c.value)) do
        if v == M.NIL then v = nil end
        if replaced(i, c, c.at, v) then
          changed = true
          break
        end
      end
    end
  end
  local kept = {}
  for _, c in ipairs(h) do if c.at <= tick then kept[#kept + 1] = c end end
  return kept, tick
end

-- T.property{ ... }: see docs/TESTING.md. Returns the number of runs when
-- every invariant held in every run; raises with the seed and the shrunk
-- history otherwise.
function M.property(T, o)
  for k in pairs(o) do
    if not OPTIONS[k] then
      error("bonsai.test: T.property: unknown field '" .. tostring(k) .. "'" ..
            (type(k) == "string" and require("bonsai")._suggest(k, OPTIONS)
             or ""), 3)
    end
  end
  assert(type(o.keys) == "table" and next(o.keys),
         "T.property needs keys = { key = generator, ... }")
  assert(type(o.invariants) == "table" and next(o.invariants),
         "T.property needs invariants = { name = function(tick, s) }")
  local p = {}
  for k, v in pairs(o) do p[k] = v end
  p.ticks = o.ticks or 50
  p.runs = o.runs or 100
  p.rate = o.rate or 0.2
  p.shrinks = o.shrinks or 500
  p.seed = o.seed or tonumber(os.getenv("BONSAI_SEED") or "") or 1
  local keys, names = {}, {}
  for k, g in pairs(o.keys) do
    if getmetatable(g) ~= Gen then
      error("bonsai.test: T.property: key '" .. tostring(k) .. "' needs a " ..
            "generator (T.int, T.number, T.bool, T.one_of, T.maybe)", 3)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for k in pairs(o.invariants) do names[#names + 1] = k end
  table.sort(names)
  for run = 1, p.runs do
    local seed = p.seed + run - 1
    local h = history(p, keys, seed)
    local name, tick, msg = try(T, p, names, h, p.ticks, o.coverage)
    if name then
      local small, at = shrink(T, p, names, h, name, tick)
      local lines = {}
      for _, c in ipairs(small) do
        lines[#lines + 1] = string.format("  tick %d: %s = %s", c.at, c.key,
                                          T.show(c.value))
      end
      local _, _, msg2, s = try(T, p, names, small, at, false)
      local text = string.format("bonsai.test property: invariant '%s' " ..
        "broken at tick %d (seed %d; replay with seed = %d, runs = 1)%s\n" ..
        "shrunk history (%d of %d changes):\n%s", name, at, seed, seed,
        (msg2 or msg) and (": " .. tostring(msg2 or msg)) or "", #small, #h,
        #lines > 0 and table.concat(lines, "\n") or "  (none)")
      if s then
        text = text .. "\ntrace of ticks " .. math.max(1, at - 2) .. "-" ..
               at .. ":\n" .. s:trace_text(at - 2, at)
      end
      error(text, 2)
    end
  end
  return p.runs
end

return M
