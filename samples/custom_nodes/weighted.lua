-- custom_nodes/weighted.lua: a weighted random selector written with
-- bt.control. At the start of each run it draws an order of its children
-- (weighted, without replacement) from a random stream kept in the node's
-- memory, then tries them in that order as a selector does: the first
-- success succeeds, a running child is resumed, all failing fails. The
-- stream is per agent and seeded (the blackboard key args.seed_key, else
-- args.seed, else 1), so an agent's choices replay exactly after a:reset or
-- from the same seed on another machine: Park and Miller's minimal
-- standard generator, exact in doubles, the same on every Lua.
local bt = require "bonsai"

local M = {}

local MOD, MUL = 2147483647, 16807

-- The next number of the stream in memory m, in [0, 1).
local function random(m)
  m.rng = (m.rng * MUL) % MOD
  return (m.rng - 1) / (MOD - 1)
end

-- Children 1..n in a random order, child k drawn with weight weights[k].
local function draw(m, weights, n)
  local left, order, total = {}, {}, 0
  for k = 1, n do
    left[k] = weights[k] or 1
    total = total + left[k]
  end
  for i = 1, n do
    local x, pick = random(m) * total, nil
    for k = 1, n do
      if left[k] > 0 then
        pick = k
        x = x - left[k]
        if x < 0 then break end
      end
    end
    if pick == nil then -- only zero weights left: the rest in order
      for k = 1, n do if left[k] == 0 then pick = k break end end
    end
    order[i] = pick
    total = total - left[pick]
    left[pick] = -1 -- drawn
  end
  return order
end

-- builder(args, children) for bt.define: args.weights (a list, or a
-- string "3,1,1" as an editor file writes it), args.seed, args.seed_key.
function M.WeightedRandom(args, children)
  local weights = args.weights or {}
  if type(weights) == "string" then
    local list = {}
    for w in weights:gmatch("[^,%s]+") do list[#list + 1] = tonumber(w) end
    weights = list
  end
  local def = {
    name = args.name,
    enter = function(c, _, bb)
      local m = c.memory
      if m.rng == nil then
        local seed = args.seed_key and bb[args.seed_key] or args.seed or 1
        m.rng = math.floor(tonumber(seed) or 1) % (MOD - 1) + 1
      end
      m.order, m.at = draw(m, weights, c.n), 1
    end,
    tick = function(c)
      local m = c.memory
      while m.at <= c.n do
        local s = c:tick(m.order[m.at])
        if s ~= bt.FAILURE then return s end
        m.at = m.at + 1
      end
      return bt.FAILURE
    end,
  }
  for i, child in ipairs(children) do def[i] = child end
  return bt.control(def)
end

function M.define(bonsai)
  bonsai.define("WeightedRandom", M.WeightedRandom)
end

return M
