-- formats_nodes_spec: the parts of the importers that need the node kinds
-- of branch `nodes` (bt.delay, bt.parallel{ wait = true }, bt.subtree):
-- BehaviorTree.CPP's Delay, ParallelAll with max_failures > 1 and a SubTree
-- of a tree outside the file, tick by tick, and their export round trip.
-- Registered in tests/meson.build once those nodes are in the core.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local function leaves(scripts) t:register(scripts) end

local function tree(body)
  return bt.tree(bt.import('<root BTCPP_format="4"><BehaviorTree ID="T">' ..
    body .. "</BehaviorTree></root>", "btcpp"), { name = "T" })
end

describe("BehaviorTree.CPP nodes on the new core kinds", function()
  it("Delay waits delay_msec, then ticks its child", function()
    leaves { A = "RS" }
    local a = bt.agent(tree('<Delay delay_msec="1500"><A/></Delay>'))
    assert.equal("running |", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 0.5))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
  end)

  it("ParallelAll max_failures=2 lets every child finish", function()
    leaves { A = "F", B = "RF", C = "RRS" }
    local tr = tree('<ParallelAll max_failures="2"><A/><B/><C/></ParallelAll>')
    local a = bt.agent(tr)
    assert.equal("running | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; enter C; tick C", t:step(a, 1))
    -- two failures: the policy is met, but C still runs to its end
    assert.equal("running | tick B; exit B failure; tick C", t:step(a, 1))
    assert.equal("failure | tick C; exit C success", t:step(a, 1))
    leaves { A = "F", B = "S", C = "S" }
    a = bt.agent(tr)
    assert.equal("success | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B success; enter C; tick C; exit C success",
                 t:step(a, 1))
  end)

  it("a SubTree of a tree outside the file is bt.subtree by name", function()
    bt.register("Hit", function(_, bb) t:add("hit " .. tostring(bb.target))
      return bt.RUNNING end)
    -- (held: a tree no one holds is collected, and gone from the names)
    local strike = bt.tree(bt.sequence { bt.action "Hit" }, { name = "Strike" })
    local tr = tree('<Sequence><SubTree ID="Strike" _autoremap="true" ' ..
                    'target="{enemy}"/></Sequence>')
    local a = bt.agent(tr, { blackboard = { enemy = "orc", target = "me" } })
    assert.equal("running | hit orc", t:step(a, 1))
    local out = tr:export("btcpp")
    assert.matches('<SubTree ID="Strike" _autoremap="true" target="{enemy}"/>',
                   out, 1, true)
    local ok, msg = pcall(bt.import, '<root BTCPP_format="4"><BehaviorTree ' ..
      'ID="T"><SubTree ID="Strike" target="x"/></BehaviorTree></root>', "btcpp")
    assert.is_false(ok)
    assert.matches("a tree outside it %(bt.subtree by name%) shares the " ..
                   "caller's keys", msg)
    assert.equal("Strike", strike.name)
  end)

  it("export round trip", function()
    local tr = tree('<Sequence><Delay delay_msec="500"><A/></Delay>' ..
      '<ParallelAll max_failures="2"><A/><A/><A/></ParallelAll></Sequence>')
    local out = tr:export("btcpp")
    assert.matches('<Delay delay_msec="500">', out)
    assert.matches('<ParallelAll max_failures="2">', out)
    local copy = bt.tree(bt.import(out, "btcpp"), { name = "T" })
    assert.equal(out, copy:export("btcpp"))
  end)
end)
