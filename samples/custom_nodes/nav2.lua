-- custom_nodes/nav2.lua: four control nodes of Nav2 (ros-navigation/
-- navigation2, nav2_behavior_tree/plugins), written with bt.control, a few
-- lines each, with Nav2's semantics: RecoveryNode, PipelineSequence,
-- RoundRobin and RateController. Each is a builder(args, children) as
-- bt.define takes it; args are the XML attributes as the file writes them
-- (strings). M.define(bt) defines them under Nav2's names, so Nav2's tree
-- files load with bt.load. What differs from Nav2 is said at each node.
local bt = require "bonsai"

local M = {}

local SUCCESS, FAILURE, RUNNING = bt.SUCCESS, bt.FAILURE, bt.RUNNING

-- A control node named from args (its `name` attribute) over the children.
local function control(args, children, def)
  def.name = args.name
  for i, child in ipairs(children) do def[i] = child end
  return bt.control(def)
end

-- RecoveryNode(number_of_retries = 1): ticks its first child; when it
-- fails, ticks the second (the recovery) and, when that succeeds, the
-- first again, in the same tick, up to number_of_retries recoveries.
-- Succeeds when the first child does; fails when the recovery fails or the
-- retries are spent. A run that ends or is cut off starts over.
function M.RecoveryNode(args, children)
  local retries = tonumber(args.number_of_retries) or 1
  local function reset(c) c.memory.i, c.memory.tries = 1, 0 end
  return control(args, children, {
    enter = reset,
    abort = reset,
    tick = function(c)
      local m = c.memory
      while m.tries <= retries do
        local s = c:tick(m.i)
        if s == RUNNING then return RUNNING end
        if m.i == 1 then
          if s == SUCCESS or m.tries >= retries then return s end
          m.i = 2
        elseif s == FAILURE then
          return FAILURE
        else
          m.i, m.tries = 1, m.tries + 1
        end
      end
      return FAILURE
    end,
  })
end

-- PipelineSequence: ticks its children in order every tick; a child that
-- runs stops the tick unless a later child ran before (then the ones
-- before it keep being ticked while it runs: a pipeline). Fails at the
-- first failure; succeeds when the last child succeeds.
function M.PipelineSequence(args, children)
  return control(args, children, {
    enter = function(c) c.memory.last = 1 end,
    abort = function(c) c.memory.last = 1 end,
    tick = function(c)
      local m = c.memory
      for i = 1, c.n do
        local s = c:tick(i)
        if s == FAILURE then return FAILURE end
        if s == RUNNING and i >= m.last then
          m.last = i
          return RUNNING
        end
      end
      return SUCCESS
    end,
  })
end

-- RoundRobin: from where it stopped, ticks children until one succeeds
-- (the next run starts at the child after it) or runs; fails when all of
-- them failed in a row (counted across ticks), and then, or when cut off,
-- starts again from the first child. The place lasts across runs.
function M.RoundRobin(args, children)
  local function reset(c) c.memory.i, c.memory.failed = 1, 0 end
  return control(args, children, {
    abort = reset,
    tick = function(c)
      local m = c.memory
      if m.i == nil then reset(c) end
      while m.failed < c.n do
        local s = c:tick(m.i)
        if s == RUNNING then return RUNNING end
        m.i = m.i % c.n + 1
        if s == SUCCESS then
          m.failed = 0
          return SUCCESS
        end
        m.failed = m.failed + 1
      end
      reset(c)
      return FAILURE
    end,
  })
end

-- RateController(hz = 10): ticks its child at most hz times a second of
-- agent time (the first tick, then when a period has passed since the
-- period began or the child last succeeded), and every tick while the
-- child runs; running in between. Its period begins when it is first
-- ticked or after it was cut off. Nav2 begins one too when a parent
-- resets its finished children; a Bonsai node is told nothing when its
-- parent's run ends, so here the period runs on.
function M.RateController(args, children)
  local period = 1 / (tonumber(args.hz) or 10)
  return control(args, children, {
    abort = function(c) c.memory.start = nil end,
    tick = function(c, agent)
      local m = c.memory
      local first = m.start == nil
      if first then m.start = agent.time end
      if not (first or m.running or agent.time - m.start >= period) then
        return RUNNING
      end
      local s = c:tick(1)
      m.running = s == RUNNING
      if s == SUCCESS then m.start = agent.time end
      return s
    end,
  })
end

-- Defines the four under Nav2's names (RoundRobin as Nav2 registers it).
function M.define(bonsai)
  for _, name in ipairs { "RecoveryNode", "PipelineSequence", "RoundRobin",
                          "RateController" } do
    bonsai.define(name, M[name])
  end
end

return M
