-- tasks_54_spec: a task's to-be-closed variables (Lua 5.4 syntax; run in
-- builds for 5.4). An abort or an error closes the task's coroutine, so
-- they are closed, before the cleanups its body registered with bt.defer
-- (tasks on every Lua: leaves_spec, errors_spec, reload_spec).
local bt = require "bonsai"
local trace = require "helpers.trace"

local agent_of, tick_error = trace.agent_of, trace.tick_error

describe("a task's to-be-closed variables", function()
  local log
  before_each(function() log = {} end)

  local function job()
    return bt.task(function()
      local guard <close> = setmetatable({}, {
        __close = function(_, err) log[#log + 1] = "closed " .. tostring(err) end,
      })
      bt.defer(function(err) log[#log + 1] = "defer " .. tostring(err) end)
      coroutine.yield()
      coroutine.yield()
      return true
    end)
  end

  it("are closed when the task is aborted, before its cleanups", function()
    local a = agent_of(job())
    assert.equal("running", a:tick(1))
    a:abort()
    assert.same({ "closed nil", "defer nil" }, log)
    assert.equal("running", a:tick(1)) -- a new run
  end)

  it("are closed when it returns", function()
    local a = agent_of(job())
    a:tick(1)
    a:tick(1)
    assert.same({}, log)
    assert.equal("success", a:tick(1))
    assert.same({ "closed nil", "defer nil" }, log)
  end)

  it("get the error when the task fails, and the error is raised",
     function()
    local a = bt.agent(bt.tree(bt.sequence {
      bt.task(function()
        local guard <close> = setmetatable({}, {
          __close = function(_, err) log[#log + 1] = "closed " .. tostring(err) end,
        })
        coroutine.yield()
        error("bad task", 0)
      end),
    }, { name = "T" }))
    assert.equal("running", a:tick(1))
    assert.equal("tree 'T' node 'sequence/action[1]': bad task",
                 tick_error(a))
    assert.same({ "closed bad task" }, log)
    assert.equal("aborted", a:status())
  end)

  it("that fail to close during an abort are reported", function()
    local a = agent_of(bt.sequence { bt.task(function()
      local c <close> = setmetatable({}, {
        __close = function() error("close failed", 0) end,
      })
      coroutine.yield()
      return true
    end) })
    assert.equal("running", a:tick(1))
    local ok, msg = pcall(a.abort, a)
    assert.is_false(ok)
    assert.matches("close failed$", msg)
  end)
end)
