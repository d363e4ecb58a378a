-- basics_spec: loading, statuses, a first tree ticked tick by tick.
local bt = require "bonsai"

describe("bonsai", function()
  it("loads with its version and statuses", function()
    assert.is_string(bt.VERSION)
    assert.matches("^%d+%.%d+%.%d+$", bt.VERSION)
    assert.equal("success", bt.SUCCESS)
    assert.equal("failure", bt.FAILURE)
    assert.equal("running", bt.RUNNING)
    assert.equal("aborted", bt.ABORTED)
    assert.equal("idle", bt.IDLE)
  end)

  it("ticks a sequence and resumes its running child", function()
    local log = {}
    local n = 0
    local tree = bt.tree(bt.sequence {
      bt.action(function() log[#log + 1] = "a"; return true end),
      bt.action(function()
        log[#log + 1] = "b"
        n = n + 1
        return n < 3 and bt.RUNNING or bt.SUCCESS
      end),
    })
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    assert.equal("success", a:tick(1))
    assert.same({ "a", "b", "b", "b" }, log)
    assert.equal(3, a.time)
  end)
end)
