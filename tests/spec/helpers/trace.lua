-- helpers/trace.lua: scripted leaves for the busted specs, the Lua twin of
-- tests/c/trace_leaf.c. A trace leaf returns the statuses of its script in
-- turn (the last one repeats) and appends its events ("enter A", "tick A",
-- "exit A success", "abort A") to the trace's log, which specs compare tick
-- by tick:
--
--   local t = trace.new()
--   local a = bt.agent(bt.tree(bt.sequence { t:action("A", "RS") }))
--   assert.equal("running | enter A; tick A", t:step(a, 1))
--
-- A script is a string of letters, one per tick: S success, F failure,
-- R running, E raise an error ("A failed on purpose"); or a list of values
-- returned as they are (true, 42, "done"..., trace.ERROR to raise; no nil).
-- t:set(name, script) gives a leaf a new script and restarts it.
local bt = require "bonsai"

local M = {}

local letters = { S = bt.SUCCESS, F = bt.FAILURE, R = bt.RUNNING }
M.ERROR = setmetatable({}, { __name = "trace.ERROR" }) -- raise in a list

-- One agent (bt.agent options opts) on a tree of root named name or "T".
function M.agent_of(root, opts, name)
  return bt.agent(bt.tree(root, { name = name or "T" }), opts)
end

-- The message of a:tick(dt), which must raise.
function M.tick_error(a, dt)
  local ok, msg = pcall(a.tick, a, dt or 1)
  assert(not ok, "the tick was expected to raise")
  return msg
end

-- The message of bt.tree(root, opts), which must raise.
function M.tree_error(root, opts)
  local ok, msg = pcall(bt.tree, root, opts)
  assert(not ok, "bt.tree was expected to raise")
  return msg
end

local Trace = {}
Trace.__index = Trace

function M.new()
  return setmetatable({ log = {}, scripts = {}, ticks = {} }, Trace)
end

local function parse(script)
  if type(script) == "table" then return script end
  assert(type(script) == "string" and #script > 0, "a script is a string")
  local list = {}
  for c in script:gmatch "." do
    if c == "E" then
      list[#list + 1] = M.ERROR
    else
      list[#list + 1] = assert(letters[c], "script letter " .. c)
    end
  end
  return list
end

-- Appends one event to the log.
function Trace:add(line)
  self.log[#self.log + 1] = line
end

-- The log since the last take, joined by "; ", and empties it.
function Trace:take()
  local s = table.concat(self.log, "; ")
  self.log = {}
  return s
end

-- Ticks agent a with dt; returns "STATUS | LOG" for one-line comparisons.
function Trace:step(a, dt)
  local s = a:tick(dt)
  local log = self:take()
  return s .. " |" .. (log ~= "" and " " .. log or "")
end

-- Gives leaf 'name' a new script, restarted from its first entry.
function Trace:set(name, script)
  self.scripts[name] = { list = parse(script), n = 0 }
end

-- How many times leaf 'name' was ticked.
function Trace:count(name)
  return self.ticks[name] or 0
end

-- The next status of leaf 'name' (raises for an E entry).
function Trace:next(name)
  local sc = self.scripts[name]
  sc.n = sc.n + 1
  self.ticks[name] = (self.ticks[name] or 0) + 1
  local v = sc.list[math.min(sc.n, #sc.list)]
  if v == M.ERROR then error(name .. " failed on purpose", 0) end
  return v
end

-- The lifecycle table of a trace action. opts: noabort (no abort callback:
-- the leaf gets exit(..., "aborted")), noenter, noexit, fail = "enter",
-- "exit" or "abort" (that callback raises after logging), latent = n (its
-- abort returns bt.RUNNING to its first n calls, -1: to all: a latent
-- abort), abort_timeout = s.
function Trace:leafdef(name, script, opts)
  opts = opts or {}
  self:set(name, script)
  local function maybe_fail(ev)
    if opts.fail == ev then error(name .. " " .. ev .. " failed", 0) end
  end
  local def = {
    tick = function()
      self:add("tick " .. name)
      return self:next(name)
    end,
  }
  if not opts.noenter then
    def.enter = function()
      self:add("enter " .. name)
      maybe_fail "enter"
    end
  end
  if not opts.noexit then
    def.exit = function(_, _, _, status)
      self:add("exit " .. name .. " " .. tostring(status))
      maybe_fail "exit"
    end
  end
  if not opts.noabort then
    local latent = opts.latent or 0
    def.abort = function()
      self:add("abort " .. name)
      maybe_fail "abort"
      if latent ~= 0 then
        latent = latent - 1
        return bt.RUNNING
      end
    end
  end
  def.abort_timeout = opts.abort_timeout
  return def
end

-- A trace action node named 'name'.
function Trace:action(name, script, opts)
  local n = bt.action(self:leafdef(name, script, opts))
  n.name = name
  return n
end

-- Registers a trace action under each name of scripts (name -> script),
-- for trees that name their leaves (bt.register, editor files).
function Trace:register(scripts)
  for name, script in pairs(scripts) do
    bt.register(name, self:leafdef(name, script))
  end
end

-- The same for conditions (they log "tick C" only).
function Trace:register_conditions(scripts)
  for name, script in pairs(scripts) do
    self:set(name, script)
    bt.register(name, function()
      self:add("tick " .. name)
      return self:next(name)
    end)
  end
end

-- A trace condition node named 'name' (logs "tick C" only).
function Trace:condition(name, script)
  self:set(name, script)
  local n = bt.condition(function()
    self:add("tick " .. name)
    return self:next(name)
  end)
  n.name = name
  return n
end

-- The statuses of agent a's nodes, read from tree:dump(a): a table from
-- each node's name to its status ("idle", "running", "aborted"...). Names
-- repeated in different branches keep the last one.
function M.statuses(a)
  local st = {}
  for line in a.tree:dump(a):gmatch "[^\n]+" do
    local name, status = line:match "^%s*(%S+).*%[(%a+)%]$"
    assert(name, "unexpected dump line: " .. line)
    st[name] = status
  end
  return st
end

-- Runs fn, the body of a spec that shows a known runtime bug: while fn
-- fails, the spec is pending ("BUG: " .. what); once fn passes, the spec
-- fails, asking for the wrapper to be removed so the spec guards the fix.
-- 'pending' is busted's, which exists only inside the spec's environment.
function M.known_bug(pending, what, fn)
  local ok, err = pcall(fn)
  if ok then
    error("known bug no longer reproduces, unwrap this spec: " .. what, 2)
  end
  pending("BUG: " .. what .. " (" .. tostring(err):gsub("\n.*", "") .. ")")
end

return M
