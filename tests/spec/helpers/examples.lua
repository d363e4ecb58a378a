-- helpers.examples: a valid node table of every kind of the kind table
-- (core.KINDS), for specs that walk it: examples[kind]() makes a fresh one
-- (with a child where it needs one). A kind added without a way to make it
-- here has no example, which those specs report.
local bt = require "bonsai"
local core = require "bonsai.core"

local function leaf() return bt.action(function() return "success" end) end

local examples = {
  action = function() return { type = "action", fn = leaf().fn } end,
  condition = function() return { type = "condition", fn = leaf().fn } end,
  wait = function() return { type = "wait", seconds = 1 } end,
  check = function()
    return { type = "check", key = "k", op = "==", value = 1 }
  end,
  is_set = function() return { type = "is_set", key = "k" } end,
  parallel = function() return { type = "parallel", leaf() } end,
  filter = function()
    return { type = "filter", conditions = { bt.is_set "k" }, leaf() }
  end,
  monitor = function()
    return { type = "monitor", conditions = { bt.is_set "k" }, leaf() }
  end,
  guard = function() return { type = "guard", bt.is_set "k", leaf() } end,
  control = function()
    return { type = "control", tick = function(c) return c:tick(1) end, leaf() }
  end,
  if_then_else = function()
    return { type = "if_then_else", bt.is_set "k", leaf(), leaf() }
  end,
  while_do_else = function()
    return { type = "while_do_else", bt.is_set "k", leaf(), leaf() }
  end,
  skip_unless_updated = function()
    return { type = "skip_unless_updated", key = "k", leaf() }
  end,
  wait_value_update = function()
    return { type = "wait_value_update", key = "k", leaf() }
  end,
  subtree = function()
    return { type = "subtree", tree = bt.tree(leaf(), { name = "inner" }) }
  end,
  event = function() return { type = "event", event = "e" } end,
  wait_event = function() return { type = "wait_event", event = "e" } end,
  event_guard = function() return { type = "event_guard", event = "e", leaf() } end,
  random_selector = function()
    return { type = "random_selector", key = "seed", leaf(), leaf() }
  end,
}
-- The other composites and decorators: children, and the parameters they
-- need.
for _, k in ipairs(core.KINDS) do
  if not examples[k.name] and k.class == "composite" then
    examples[k.name] = function() return { type = k.name, leaf() } end
  elseif not examples[k.name] and k.class == "decorator" then
    examples[k.name] = function()
      local n = { type = k.name, leaf() }
      for _, p in ipairs(k.params) do
        if p == "times" then n.times = 2 elseif p == "seconds" then
          n.seconds = 1
        end
      end
      return n
    end
  end
end

return { examples = examples, leaf = leaf }
