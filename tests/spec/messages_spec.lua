-- messages_spec: the first hour's messages say what to do (docs/ERRORS.md):
-- a bad blackboard option, an agent given to bt.tick_all, an invalid status
-- with the valid ones, one check of dt for every call that ticks, and the
-- strict mode that makes a leaf returning nothing an error.
local bt = require "bonsai"

local function refused(f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(msg)
end

local function always(s) return bt.action(function() return s end) end

describe("bt.agent's blackboard option", function()
  it("that is no table and no blackboard says what it must be", function()
    local tree = bt.tree(always "success")
    assert.equal("bt.agent: 'blackboard' must be a table of initial values "
                 .. "or a blackboard (bt.blackboard()), got number",
                 refused(bt.agent, tree, { blackboard = 5 }))
  end)

  it("takes a table or a blackboard", function()
    local tree = bt.tree(always "success")
    assert.equal(1, bt.agent(tree, { blackboard = { x = 1 } }).bb.x)
    local bb = bt.blackboard { y = 2 }
    assert.equal(2, bt.agent(tree, { blackboard = bb }).bb.y)
  end)
end)

describe("bt.tick_all given an agent", function()
  it("says it takes a list", function()
    local a = bt.agent(bt.tree(always "success"))
    assert.matches("a list of agents expected, got an agent: "
                   .. "bt.tick_all%({ agent }, dt%), or agent:tick%(dt%)",
                   refused(bt.tick_all, a, 1))
    assert.equal("idle", a:status())
  end)
end)

describe("one check of dt", function()
  local bad = { -1, 0 / 0, -math.huge, "soon" }

  it("a:tick, bt.tick_all and bt.tick_all with a budget refuse a bad dt "
     .. "with the same message, ticking nothing", function()
    for _, dt in ipairs(bad) do
      local a = bt.agent(bt.tree(always "running"))
      local want = "dt must be a number >= 0, got " .. tostring(dt)
      local msgs = {
        refused(function() return a:tick(dt) end),
        refused(bt.tick_all, { a }, dt),
        refused(bt.tick_all, { a }, dt, { budget = 1 }),
      }
      for _, m in ipairs(msgs) do
        assert.is_truthy(m:find(want, 1, true), m)
        assert.matches("^.*bad argument #%d", m)
      end
      assert.equal("idle", a:status())
      assert.equal(0, a.time)
    end
  end)

  it("is the call's error: the agent's own error stays", function()
    local a = bt.agent(bt.tree(bt.action(function() error("boom", 0) end),
                               { name = "T" }))
    assert.matches("boom", refused(a.tick, a, 1))
    refused(a.tick, a, -1)
    assert.equal("aborted", a:status())
  end)
end)

describe("an invalid status", function()
  it("lists the valid ones, with the one meant", function()
    local a = bt.agent(bt.tree(always "sucess", { name = "T" }))
    assert.equal("tree 'T' node 'action': invalid status 'sucess' (did you "
                 .. 'mean "success"?): a leaf returns "success", "failure", '
                 .. '"running", true or false', refused(a.tick, a, 1))
  end)
end)

describe("bt.strict", function()
  after_each(function() bt.strict(false) end)

  local function forgetful()
    return bt.agent(bt.tree(bt.action(function() local _ = 1 end),
                            { name = "T" }))
  end

  it("is off by default: a leaf returning nothing fails", function()
    assert.is_false(bt.strict())
    assert.equal("failure", forgetful():tick(1))
  end)

  it("on, a leaf returning nothing is an error", function()
    assert.is_false(bt.strict(true))
    assert.is_true(bt.strict())
    local a = forgetful()
    assert.equal("tree 'T' node 'action': returned nothing: did you forget "
                 .. 'return? (a leaf returns "success", "failure", "running", '
                 .. "true or false; bt.strict is on)", refused(a.tick, a, 1))
  end)

  it("on, false is still a failure and a task's end without a value an "
     .. "error", function()
    bt.strict(true)
    assert.equal("failure", bt.agent(bt.tree(always(false))):tick(1))
    local a = bt.agent(bt.tree(bt.task(function() end)))
    assert.matches("did you forget return%?", refused(a.tick, a, 1))
  end)

  it("applies to bt.tick_all's agents too", function()
    bt.strict(true)
    local errs = bt.tick_all({ forgetful() }, 1)
    assert.matches("did you forget return%?", errs[1].error)
  end)

  it("takes a boolean", function()
    assert.matches("boolean expected", refused(bt.strict, "yes"))
  end)
end)
