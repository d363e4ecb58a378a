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

-- Every unknown name gets the nearest known names, from one helper
-- (bonsai_nearest): options, node types, leaves, statuses, the test kit's
-- fields and stand-ins, the formats' node types and ports.
describe("did you mean", function()
  local function tree_error(root)
    return refused(bt.tree, root, { name = "T" })
  end

  it("an option, a node type, a leaf and a status", function()
    assert.equal("tree 'T': repeater: 'repeater' has no option 'cout' (did "
                 .. "you mean 'times'?)",
                 tree_error(bt.repeater { cout = 3, always "success" }))
    assert.equal("tree 'T': sequence: child 1: unknown node type 'acton' "
                 .. "(did you mean 'action'?)",
                 tree_error(bt.sequence { { type = "acton", fn = print } }))
    bt.register("dym.sell", function() return true end)
    bt.register("dym.buy", function() return true end)
    assert.equal("tree 'T': sequence/dym.sel: no leaf registered as "
                 .. "'dym.sel' (did you mean 'dym.sell'?)",
                 tree_error(bt.sequence { bt.action "dym.sel" }))
    assert.matches("bonsai has no 'SUCESS': did you mean bt.SUCCESS%?",
                   refused(function() return bt.SUCESS end))
    assert.is_nil(bt.NOT_A_NAME_AT_ALL)
  end)

  it("the test kit's fields, stand-ins and statuses", function()
    local T = require "bonsai.test"
    bt.register("dym.sweep", function() return true end)
    local tree = bt.sequence { name = "dym.shop", bt.action "dym.sweep" }
    assert.matches("T.scenario: unknown field 'blackbord' %(did you mean "
                   .. "'blackboard'%?%)",
                   refused(T.scenario, { tree = tree, blackbord = {} }))
    assert.matches("stand%-in 'dym.swep': no leaf registered by that name "
                   .. "and no node at that path in tree '[^']*' %(did you "
                   .. "mean 'dym.sweep'%?%)",
                   refused(T.scenario, { tree = tree,
                                         stand_ins = { ["dym.swep"] = "success" } }))
    assert.matches("got sucess %(did you mean 'success'%?%)",
                   refused(T.scenario, { tree = tree,
                                         stand_ins = { ["dym.sweep"] = "sucess" } }))
  end)

  it("a format's node types and BehaviorTree.CPP 3's ports", function()
    assert.equal("xml:1:80: node 'inverter': unknown decorator node (did "
                 .. "you mean 'Inverter'?) (a control or decorator of the "
                 .. "game's own: bt.define it)",
                 refused(bt.import, '<root BTCPP_format="4" '
                   .. 'main_tree_to_execute="M"><BehaviorTree ID="M">'
                   .. '<Sequence><inverter><AlwaysSuccess/></inverter>'
                   .. '</Sequence></BehaviorTree></root>', "btcpp"))
    assert.equal("xml:1:70: node 'Parallel': unknown port "
                 .. "'failure_threshold' (BehaviorTree.CPP 3's name: format "
                 .. "4 calls it 'failure_count')",
                 refused(bt.import, '<root BTCPP_format="4" '
                   .. 'main_tree_to_execute="M"><BehaviorTree ID="M">'
                   .. '<Parallel failure_threshold="1" success_count="1">'
                   .. '<AlwaysSuccess/></Parallel></BehaviorTree></root>',
                   "btcpp"))
    assert.matches("unknown port 'sucess_count' %(did you mean "
                   .. "'success_count'%?%)",
                   refused(bt.import, '<root BTCPP_format="4" '
                   .. 'main_tree_to_execute="M"><BehaviorTree ID="M">'
                   .. '<Parallel sucess_count="1">'
                   .. '<AlwaysSuccess/></Parallel></BehaviorTree></root>',
                   "btcpp"))
    assert.matches("node 'inverter': unknown node type with children %(did "
                   .. "you mean 'Inverter'%?%)",
                   refused(bt.import, '{"name":"t","root":{"name":'
                   .. '"Sequence","children":[{"name":"inverter","children":'
                   .. '[{"name":"Wait","args":{"time":1}}]}]}}', "behavior3"))
  end)
end)

describe("a key a check reads that is not set", function()
  it("is named, with the keys the blackboard has that it may mean, tick "
     .. "by tick", function()
    local a = bt.agent(bt.tree(bt.sequence { name = "shop",
      bt.check("stok", "<", 3) }, { name = "T" }),
      { blackboard = { stock = 4, price = 2 } })
    assert.equal("tree 'T' node 'shop/check[1]': key 'stok' is not set "
                 .. "(did you mean 'stock'?)", refused(a.tick, a, 1))
    a.bb.stok = 1
    assert.equal("success", a:tick(1))
    a.bb.stok = "x"
    assert.equal("tree 'T' node 'shop/check[1]': 'stok' is a string, "
                 .. "compared with a number", refused(a.tick, a, 1))
  end)
end)

describe("control nodes and tasks", function()
  local function leaf() return always "success" end

  it("a control node's tick that returns nothing is an error naming it",
     function()
    local a = bt.agent(bt.tree(bt.sequence { name = "S",
      bt.control { name = "C", tick = function(c) c:tick(1) end, leaf() } },
      { name = "T" }))
    assert.equal("tree 'T' node 'S/C': its tick returned nothing: did you "
                 .. "forget return? (a control node's tick returns its "
                 .. "status: \"success\", \"failure\", \"running\", "
                 .. "\"skipped\", true or false)", refused(a.tick, a, 1))
  end)

  it("a control node without a tick names the node", function()
    assert.equal("tree 'T': S/C: a control node needs a tick function",
                 refused(bt.tree, bt.sequence { name = "S",
                   bt.control { name = "C", leaf() } }, { name = "T" }))
    assert.equal("tree 'T': S/control[1]: a control node needs a tick "
                 .. "function",
                 refused(bt.tree, bt.sequence { name = "S",
                   bt.control { leaf() } }, { name = "T" }))
  end)

  it("bt.strict catches a task that yields a final status", function()
    local tree = bt.tree(bt.sequence { name = "S", bt.task(function()
      coroutine.yield(bt.SUCCESS)
      return bt.SUCCESS
    end) }, { name = "T" })
    local a = bt.agent(tree)
    assert.equal("running", a:tick(1)) -- documented: a yield is running
    assert.equal("success", a:tick(1))
    local was = bt.strict(true)
    local ok, msg = pcall(function()
      local b = bt.agent(tree)
      return b:tick(1)
    end)
    bt.strict(was)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'S/action[1]': yielded \"success\": a yield "
                 .. "means running (return the status to end the task; "
                 .. "bt.strict is on)", msg)
  end)
end)

describe("bt.tick_all's errors", function()
  it("count how many times in a row an agent failed so, per node and "
     .. "message, from 1 again after a tick without an error", function()
    local tree = bt.tree(bt.sequence { name = "shop",
      bt.check("stok", "<", 3) }, { name = "T" })
    local a = bt.agent(tree, { blackboard = { stock = 1 } })
    local b = bt.agent(tree, { blackboard = { stock = 1 } })
    local function counts(list)
      local errs, out = bt.tick_all(list, 1), {}
      for i, e in ipairs(errs or {}) do out[i] = e.count end
      return table.concat(out, " ")
    end
    assert.equal("1 1", counts { a, b })
    assert.equal("2 2", counts { a, b })
    assert.equal("3", counts { a })
    b.bb.stok = "x" -- another message: a new error
    assert.equal("4 1", counts { a, b })
    a.bb.stok = 1 -- a tick without an error ends a's run of errors
    assert.equal("2", counts { a, b })
    a.bb.stok = nil
    assert.equal("1 3", counts { a, b })
    local errs = bt.tick_all({ a, 5 }, 1) -- an entry that is no agent
    assert.equal(2, errs[1].count)
    assert.equal(1, errs[2].count)
    assert.equal(1, bt.tick_all({ 5 }, 1)[1].count)
  end)
end)

describe("a stand-in that cannot stand in", function()
  it("T.running for a condition is refused when the scenario is made, "
     .. "for a behavior3 file's condition too", function()
    local T = require "bonsai.test"
    local cjson = require "cjson"
    bt.register("dym.hungry", function() return true end)
    local text = cjson.encode { id = "T", title = "T", root = "1", nodes = {
      ["1"] = { id = "1", name = "dym.hungry", title = "dym.hungry",
                properties = {} } },
      custom_nodes = { { name = "dym.hungry", category = "condition" } } }
    local base = os.tmpname()
    local root = base .. ".json" -- the kit reads the file
    local f = assert(io.open(root, "w"))
    f:write(text)
    f:close()
    finally(function() os.remove(root) os.remove(base) end)
    assert.matches("stand%-in 'dym.hungry': T.running stands in for an "
                   .. "action, but 'dym.hungry' is a condition, which ends "
                   .. "in its tick",
                   refused(T.scenario, { tree = root,
                     stand_ins = { ["dym.hungry"] = T.running() } }))
    local s = T.scenario { tree = root,
                           stand_ins = { ["dym.hungry"] = false } }
    s:run(1)
    s:expect_returned("failure")
  end)
end)
