-- bonsai.builder: the fluent builder of the classic behavior tree articles,
-- on the same node tables as the DSL:
--
--   bt.builder()
--     :reactive_selector()
--       :sequence():condition(see_enemy):action(attack):back()
--       :action(patrol)
--     :build{ name = "guard" }
--
-- A composite stays open until :back(). A decorator closes itself once its
-- child is complete; so do a filter or monitor, which take their conditions
-- in the argument table ({ conditions = {...} }) and then one child, and a
-- guard, which takes its check as argument. :name(s) names the node added
-- or opened last. :build(opts) closes everything and returns
-- bt.tree(root, opts); :node() returns the root node without compiling.

local Builder = {}
Builder.__index = Builder

local M = {}

function M.new(bt)
  return setmetatable({ bt = bt, stack = {}, root = nil }, Builder)
end

-- The kinds come from the core's table (core.KINDS): composites stay open,
-- decorators take one child; the guard and the subtree have forms of
-- their own below.
local composites, decorators, number_param = {}, {}, {}
for _, k in ipairs(require("bonsai.core").KINDS) do
  if k.class == "composite" and k.name ~= "guard" then
    composites[#composites + 1] = k.name
  elseif k.class == "decorator" and k.name ~= "subtree" then
    decorators[#decorators + 1] = k.name
  end
  -- the parameter a bare number means, for :timeout(2) or :repeater(3)
  number_param[k.name] = k.number
end

local single = { filter = true, monitor = true } -- one child, then closed
for _, k in ipairs(decorators) do single[k] = true end

-- Adds a finished node to the open one (or makes it the root), then closes
-- decorators that now have their child.
function Builder:_add(n, closing)
  if not closing then self.last = n end
  local top = self.stack[#self.stack]
  if top then
    top[#top + 1] = n
  elseif self.root then
    error("bonsai.builder: a tree has one root (use :back() less)", 3)
  else
    self.root = n
  end
  self:_settle()
  return self
end

-- Closes open decorators (and guards) whose child is in place.
function Builder:_settle()
  while true do
    local top = self.stack[#self.stack]
    if not top then return end
    local need = single[top.type] and 1 or (top.type == "guard" and 2) or nil
    if not need or #top < need then return end
    self.stack[#self.stack] = nil
    self:_add(top, true)
    return
  end
end

function Builder:_open(kind, opts)
  local n = {}
  if type(opts) == "table" then
    for k, v in pairs(opts) do n[k] = v end
  elseif type(opts) == "number" and number_param[kind] then
    n[number_param[kind]] = opts
  elseif type(opts) == "string" then
    n.name = opts
  end
  n.type = kind
  setmetatable(n, self.bt.Node)
  self.stack[#self.stack + 1] = n
  self.last = n
  return self
end

for _, k in ipairs(composites) do
  Builder[k] = function(self, opts) return self:_open(k, opts) end
end
for _, k in ipairs(decorators) do
  Builder[k] = function(self, opts) return self:_open(k, opts) end
end
Builder.fallback = Builder.selector                -- alias
Builder.active_selector = Builder.reactive_selector -- alias
Builder.inverter = Builder.invert                  -- alias

-- :guard(check, abort_mode [, name])
function Builder:guard(check, mode, name)
  self:_open("guard", { abort = mode, name = name })
  local top = self.stack[#self.stack]
  top[1] = check
  return self
end

function Builder:action(fn, args) return self:_add(self.bt.action(fn, args)) end
function Builder:condition(fn, args) return self:_add(self.bt.condition(fn, args)) end
function Builder:task(fn, args) return self:_add(self.bt.task(fn, args)) end
function Builder:wait(s) return self:_add(self.bt.wait(s)) end
function Builder:check(key, op, value) return self:_add(self.bt.check(key, op, value)) end
function Builder:is_set(key) return self:_add(self.bt.is_set(key)) end
function Builder:event(name, opts) return self:_add(self.bt.event(name, opts)) end
function Builder:wait_event(name, opts)
  return self:_add(self.bt.wait_event(name, opts))
end
-- :leaf(node) adds any node built with the DSL
function Builder:leaf(n) return self:_add(n) end
-- :subtree(tree_or_name, opts) adds bt.subtree(...); given a node, it adds
-- that node (as :leaf does)
function Builder:subtree(t, opts)
  if getmetatable(t) == self.bt.Node then return self:_add(t) end
  return self:_add(self.bt.subtree(t, opts))
end

-- Names the node added or opened last.
function Builder:name(name)
  if not self.last then error("bonsai.builder: :name() before any node", 2) end
  self.last.name = name
  return self
end

-- Gives the node added or opened last a utility (for a utility_selector).
function Builder:utility(fn)
  if not self.last then
    error("bonsai.builder: :utility() before any node", 2)
  end
  self.last.utility = fn
  return self
end

-- Closes the innermost open composite.
function Builder:back()
  local top = self.stack[#self.stack]
  if not top then error("bonsai.builder: :back() with nothing open", 2) end
  self.stack[#self.stack] = nil
  return self:_add(top, true)
end
Builder["end"] = Builder.back

-- The root node, closing whatever is still open.
function Builder:node()
  while #self.stack > 0 do self:back() end
  if not self.root then error("bonsai.builder: empty tree", 2) end
  return self.root
end

function Builder:build(opts)
  return self.bt.tree(self:node(), opts)
end

return M
