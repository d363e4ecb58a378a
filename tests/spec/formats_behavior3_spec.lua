-- formats_behavior3_spec: behavior3 editor files (API.md "Trees from files
-- and editors"): a classic behavior3editor project with custom nodes and a
-- tree used as a subtree, a current behavior3 editor tree with a subtree
-- file, each built-in node tick by tick against its source runtime
-- (behavior3js for the classic format, behavior3lua for the current one),
-- refusals with file, JSON path and node, and export -> load round trips.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local mathtype = luaver.mathtype
local cjson = require "cjson"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local function leaves(scripts) t:register(scripts) end

-- A classic tree: nodes given as id -> { name, children | child,
-- properties }; the root is "1".
local function classic(nodes, extra)
  local data = { id = "T", title = "T", root = "1", nodes = {} }
  for id, n in pairs(nodes) do
    n.id = id
    n.title = n.title or n.name
    n.properties = n.properties or {}
    data.nodes[id] = n
  end
  for k, v in pairs(extra or {}) do data[k] = v end
  return cjson.encode(data)
end

-- A current behavior3 editor tree around root.
local function current(root)
  return cjson.encode { version = "1.8.0", name = "T", root = root }
end

local function agent(text, opts)
  return bt.agent(bt.tree(bt.import(text, "behavior3", { file = "t.json" }),
                          { name = "T" }), opts)
end

local function refused(text, opts)
  local ok, msg = pcall(bt.import, text, "behavior3", opts or { file = "t.json" })
  assert(not ok, "the import was expected to fail")
  return msg
end

describe("behavior3 expressions", function()
  it("run Check, Calculate, Let and Cmp on the blackboard, tick by tick",
     function()
    local a = agent(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "Check", args = { value = "hp > 10 and not dead" } },
      { id = 3, name = "Calculate", args = { value = "hp * 2 + bonus" },
        output = { "power" } },
      { id = 4, name = "Let", args = { value = "ready" }, output = { "mood" } },
      { id = 5, name = "Let", input = { "power" }, output = { "copy" } },
      { id = 6, name = "Cmp", input = { "power" }, args = { ge = 30 } },
    } }, { blackboard = { hp = 12, dead = false, bonus = 6 } })
    assert.equal("success", a:tick(1))
    assert.equal(30, a.bb.power)
    assert.equal(30, a.bb.copy)
    assert.equal("ready", a.bb.mood)
    a.bb.bonus = 5
    assert.equal("failure", a:tick(1)) -- Cmp: 29 >= 30 is false
    a.bb.hp = 10
    assert.equal("failure", a:tick(1)) -- Check
    assert.equal(29, a.bb.power)
  end)

  it("IsNull, NotNull read whether a variable is set; Clear clears one, " ..
     "tick by tick", function()
    local a = agent(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "NotNull", input = { "target" } },
      { id = 3, name = "Clear", output = { "target" } },
      { id = 4, name = "IsNull", input = { "target" } },
    } }, { blackboard = { target = false } })
    assert.equal("success", a:tick(1)) -- false is a value (behavior3lua's)
    assert.is_nil(a.bb.target)
    assert.equal("failure", a:tick(1))
    a.bb.target = "orc"
    assert.equal("success", a:tick(1))
    assert.matches("node 'IsNull': needs an input variable name",
      refused(current { id = 1, name = "IsNull" }))
    assert.matches("node 'Clear': needs an output variable name",
      refused(current { id = 1, name = "Clear" }))
  end)

  it("make Cmp a bt.check and refuse what they cannot keep", function()
    local n = bt.import(current { id = 1, name = "Cmp", input = { "hp" },
                                  args = { lt = 5 } }, "behavior3")
    assert.same({ "check", "hp", "<", 5 }, { n.type, n.key, n.op, n.value })
    assert.matches("needs one of gt", refused(current { id = 1,
      name = "Cmp", input = { "hp" }, args = {} }))
    assert.matches("node 'Cmp': needs an input variable name",
      refused(current { id = 1, name = "Cmp", args = { lt = 5 } }))
  end)

  it("run Cmp's other form, a value expression (behavior3lua's args.value), "
     .. "tick by tick", function()
    local a = agent(current { id = 1, name = "Cmp",
      args = { value = "target.hp + bonus", ge = 30 } },
      { blackboard = { target = { hp = 25 }, bonus = 5 } })
    assert.equal("success", a:tick(1))
    a.bb.bonus = 4
    assert.equal("failure", a:tick(1))
    a.bb.target = { hp = 26 }
    assert.equal("success", a:tick(1))
    assert.matches("%$%.root%.args%.value: node 'Cmp': at character 4: syntax error at the end",
      refused(current { id = 1, name = "Cmp", args = { value = "1 +", lt = 5 } }))
    assert.matches("needs an output variable", refused(current { id = 1,
      name = "Calculate", args = { value = "1" } }))
    assert.matches("'value' must be a number", refused(current { id = 1,
      name = "Let", args = { value = { 1, 2 } }, output = { "x" } }))
    assert.matches("node 'Assert': needs a 'message'", refused(current {
      id = 1, name = "Assert", children = { { id = 2, name = "Check",
      args = { value = "true" } } } }))
  end)

  it("are written back as Check and Calculate and read again the same",
     function()
    local tree = bt.tree(bt.import(current { id = 1, name = "Sequence",
      children = {
        { id = 2, name = "Calculate", args = { value = "hp * 2" },
          output = { "power" } },
        { id = 3, name = "Check", args = { value = "power >= 20" } },
        { id = 4, name = "Cmp", input = { "hp" }, args = { lt = 50 } },
      } }, "behavior3"), { name = "T" })
    local out = tree:export("behavior3")
    local copy = bt.tree(bt.import(out, "behavior3"), { name = "T" })
    assert.equal(out, copy:export("behavior3"))
    local nodes = {}
    for _, n in pairs(cjson.decode(out).nodes) do
      nodes[#nodes + 1] = n.name .. " " .. tostring(n.properties.value)
    end
    table.sort(nodes)
    assert.same({ "Calculate power := (hp * 2)", "Check hp < 50",
                  "Check power >= 20", "MemSequence nil" }, nodes)
    for _, hp in ipairs { 5, 12, 60 } do
      local a = bt.agent(tree, { blackboard = { hp = hp } })
      local b = bt.agent(copy, { blackboard = { hp = hp } })
      assert.equal(a:tick(1), b:tick(1))
      assert.equal(a.bb.power, b.bb.power)
    end
    -- Lua trees too
    out = bt.tree(bt.sequence { bt.script("x := 2; y := x + 1"),
      bt.script_condition("y == 3 && x < 5") }, { name = "L" })
      :export("behavior3")
    assert.matches('"value":"x := 2; y := x %+ 1"', out)
    assert.equal("success", bt.agent(bt.tree(bt.import(out, "behavior3")))
                              :tick(1))
  end)
end)

describe("a classic behavior3editor project", function()
  it("loads the selected tree, its custom nodes and a subtree", function()
    local seen = {}
    bt.register("IsHungry", function(_, bb, args)
      t:add("hungry? " .. bb.food .. "<" .. args.below)
      seen[#seen + 1] = mathtype(args.below)
      return bb.food < args.below
    end)
    bt.register("Eat", function(_, bb, args)
      t:add("eat " .. args.food)
      bb.food = 100
      return bt.SUCCESS
    end)
    leaves { ChopWood = "SRS" }
    local tree = assert(bt.load("tests/trees/villager.b3.json"))
    assert.equal("Villager", tree.name) -- its title
    local a = bt.agent(tree, { blackboard = { food = 50 } })
    -- Chores' Repeater (maxLoop 2) runs ChopWood twice in a row
    assert.equal("running | hungry? 50<30; enter ChopWood; tick ChopWood; " ..
                 "exit ChopWood success; enter ChopWood; tick ChopWood",
                 t:step(a, 1))
    -- the titles name the nodes, the Repeater's <maxLoop> filled in
    assert.same({ "reactive_selector", "Chores", "Repeat 2x", "Chop wood" },
                a:running())
    assert.equal("integer", seen[1])
    a.bb.food = 10
    -- Priority: a higher child that succeeds closes the running one
    assert.equal("success | hungry? 10<30; eat bread; abort ChopWood",
                 t:step(a, 1))
    -- Chores starts again; ChopWood's script goes on with S, S; then the
    -- Wait of 1.5 s starts
    assert.equal("running | hungry? 100<30; enter ChopWood; tick ChopWood; " ..
                 "exit ChopWood success; enter ChopWood; tick ChopWood; " ..
                 "exit ChopWood success", t:step(a, 1))
    assert.equal("running | hungry? 100<30", t:step(a, 1))
    assert.equal("success | hungry? 100<30", t:step(a, 1))
  end)

  it("loads another tree of the project on request", function()
    leaves { ChopWood = "S" }
    local text = assert(io.open("tests/trees/villager.b3.json")):read("*a")
    local a = bt.agent(bt.tree(bt.import(text, "behavior3", { tree = "chores" })))
    assert.equal("running | enter ChopWood; tick ChopWood; exit ChopWood " ..
                 "success; enter ChopWood; tick ChopWood; exit ChopWood " ..
                 "success", t:step(a, 1))
  end)
end)

describe("behavior3js built-ins", function()
  it("Sequence and Priority start from the first child every tick",
     function()
    leaves { A = "SF", B = "R" }
    local a = agent(classic { ["1"] = { name = "Sequence",
      children = { "2", "3" } }, ["2"] = { name = "A" }, ["3"] = { name = "B" } })
    assert.equal("running | enter A; tick A; exit A success; enter B; " ..
                 "tick B", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure; abort B",
                 t:step(a, 1))
    leaves { A = "FR", B = "R" }
    a = agent(classic { ["1"] = { name = "Priority",
      children = { "2", "3" } }, ["2"] = { name = "A" }, ["3"] = { name = "B" } })
    assert.equal("running | enter A; tick A; exit A failure; enter B; " ..
                 "tick B", t:step(a, 1))
    assert.equal("running | enter A; tick A; abort B", t:step(a, 1))
  end)

  it("MemSequence and MemPriority resume their running child", function()
    leaves { A = "SF", B = "RF" }
    local a = agent(classic { ["1"] = { name = "MemSequence",
      children = { "2", "3" } }, ["2"] = { name = "A" }, ["3"] = { name = "B" } })
    t:step(a, 1)
    assert.equal("failure | tick B; exit B failure", t:step(a, 1))
    leaves { A = "F", B = "RS" }
    a = agent(classic { ["1"] = { name = "MemPriority",
      children = { "2", "3" } }, ["2"] = { name = "A" }, ["3"] = { name = "B" } })
    t:step(a, 1)
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)

  it("Repeater runs maxLoop times whatever the results, returns the last",
     function()
    leaves { A = "FRSF" }
    local a = agent(classic { ["1"] = { name = "Repeater",
      properties = { maxLoop = 3 }, child = "2" }, ["2"] = { name = "A" } })
    assert.equal("running | enter A; tick A; exit A failure; enter A; " ..
                 "tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A success; enter A; tick A; " ..
                 "exit A failure", t:step(a, 1))
    leaves { A = "S" }
    a = agent(classic { ["1"] = { name = "Repeater",
      properties = { maxLoop = 0 }, child = "2" }, ["2"] = { name = "A" } })
    assert.equal("success |", t:step(a, 1))
    leaves { A = "F" }
    a = agent(classic { ["1"] = { name = "Repeater", child = "2" },
                        ["2"] = { name = "A" } }) -- maxLoop -1: forever
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("RepeatUntilFailure and RepeatUntilSuccess with maxLoop", function()
    leaves { A = "SSS" }
    local a = agent(classic { ["1"] = { name = "RepeatUntilFailure",
      properties = { maxLoop = 2 }, child = "2" }, ["2"] = { name = "A" } })
    assert.equal("success | enter A; tick A; exit A success; enter A; " ..
                 "tick A; exit A success", t:step(a, 1))
    leaves { A = "FFS" }
    a = agent(classic { ["1"] = { name = "RepeatUntilSuccess",
      properties = { maxLoop = 5 }, child = "2" }, ["2"] = { name = "A" } })
    assert.equal("success | enter A; tick A; exit A failure; enter A; " ..
                 "tick A; exit A failure; enter A; tick A; exit A success",
                 t:step(a, 1))
  end)

  it("Limiter never limits (its count restarts at every run)", function()
    leaves { A = "S" }
    local a = agent(classic { ["1"] = { name = "Limiter",
      properties = { maxLoop = 1 }, child = "2" }, ["2"] = { name = "A" } })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("Inverter, Succeeder, Failer, Runner, Wait", function()
    local a = agent(classic { ["1"] = { name = "Inverter", child = "2" },
                              ["2"] = { name = "Failer" } })
    assert.equal("success", a:tick(1))
    a = agent(classic { ["1"] = { name = "MemSequence",
      children = { "2", "3", "4" } }, ["2"] = { name = "Succeeder" },
      ["3"] = { name = "Wait", properties = { milliseconds = 500 } },
      ["4"] = { name = "Runner" } })
    assert.equal("running", a:tick(0.25))
    assert.same({ "sequence", "wait[2]" }, a:running())
    assert.equal("running", a:tick(0.25))
    assert.equal("running", a:tick(0.25))
    assert.same({ "sequence", "action[3]" }, a:running())
  end)
end)

describe("a current behavior3 editor tree", function()
  it("loads with a subtree file, args, input and output", function()
    bt.register("FindEnemy", function(_, bb, args)
      t:add("find " .. args.range)
      bb[args.output[1]] = bb.near
      return bb.near ~= nil
    end)
    bt.register("Attack", function(_, bb, args)
      t:add("attack " .. bb[args.input[1]] .. " " .. args.damage)
      return bt.SUCCESS
    end)
    leaves { Shout = "RF", Wander = "S" }
    local tree = assert(bt.load("tests/trees/monster.json"))
    assert.equal("monster", tree.name)
    local a = bt.agent(tree)
    assert.equal("running | find 8; enter Wander; tick Wander; " ..
                 "exit Wander success", t:step(a, 1)) -- Wait 2 s runs
    assert.equal("running |", t:step(a, 1))
    assert.equal("success |", t:step(a, 1))
    -- Once: its child ran, so the idle branch now fails at once
    a.bb.near = "elf"
    assert.equal("running | find 8; attack elf 10; enter Shout; tick Shout",
                 t:step(a, 1))
    -- the Parallel waits for every child and succeeds whatever they return
    assert.equal("success | tick Shout; exit Shout failure", t:step(a, 1))
    a.bb.near = nil
    assert.equal("failure | find 8; enter Wander; tick Wander; " ..
                 "exit Wander success", t:step(a, 1))
  end)

  it("IfElse (if_then_else) runs the branch its condition chose", function()
    leaves { If = "RF", Then = "S", Else = "RS" }
    local text = current { id = 1, name = "IfElse", children = {
      { id = 2, name = "If" }, { id = 3, name = "Then" },
      { id = 4, name = "Else" } } }
    local a = agent(text)
    assert.equal("if_then_else", bt.import(text, "behavior3").type)
    local made = bt.tree(bt.if_then_else { bt.action "If", bt.action "Then" },
                         { name = "ite" })
    assert.equal("IfElse",
                 cjson.decode(made:export("behavior3-current")).root.name)
    assert.equal("running | enter If; tick If", t:step(a, 1))
    assert.equal("running | tick If; exit If failure; enter Else; tick Else",
                 t:step(a, 1))
    assert.equal("success | tick Else; exit Else success", t:step(a, 1))
    assert.matches("needs 2 or 3 children", refused(current { id = 1,
      name = "IfElse", children = { { id = 2, name = "If" } } }))
  end)

  it("Loop (bt.control) runs its children count times, whatever they "
     .. "return", function()
    leaves { A = "FRS", B = "S" }
    local a = agent(current { id = 1, name = "Loop", args = { count = 2 },
      children = { { id = 2, name = "A" }, { id = 3, name = "B" } } })
    assert.equal("running | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B success; enter A; tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success; enter B; tick B; " ..
                 "exit B success", t:step(a, 1))
    -- the count from the variable its input names
    local b = agent(current { id = 1, name = "Loop", input = { "times" },
      children = { { id = 2, name = "B" } } }, { blackboard = { times = 3 } })
    assert.equal("success | enter B; tick B; exit B success; enter B; " ..
                 "tick B; exit B success; enter B; tick B; exit B success",
                 t:step(b, 1))
  end)

  it("maps RepeatUntilFailure, RepeatUntilSuccess, Repeat, Timeout",
     function()
    leaves { A = "SSF" }
    local a = agent(current { id = 1, name = "RepeatUntilFailure",
                              children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
    -- a run that ends in a later tick is followed by the next in that tick
    leaves { A = "RSSF" }
    a = agent(current { id = 1, name = "RepeatUntilFailure",
                        children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success; enter A; tick A; " ..
                 "exit A success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
    leaves { A = "FS" }
    a = agent(current { id = 1, name = "RepeatUntilSuccess",
                        children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    leaves { A = "SRSS" }
    a = agent(current { id = 1, name = "Repeat", args = { count = 3 },
                        children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A; exit A success; enter A; " ..
                 "tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success; enter A; tick A; " ..
                 "exit A success", t:step(a, 1))
    leaves { A = "R" }
    a = agent(current { id = 1, name = "Timeout", args = { time = 1.5 },
                        children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("failure | abort A", t:step(a, 1))
  end)

  it("AlwaysSuccess, AlwaysFail, Not and Once without a child", function()
    leaves { A = "S" }
    local a = agent(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "AlwaysSuccess", children = { { id = 3, name = "Not",
        children = { { id = 4, name = "A" } } } } },
      { id = 5, name = "Once" }, { id = 6, name = "AlwaysFail" } } })
    assert.equal("failure | enter A; tick A; exit A success", t:step(a, 1))
    -- Once has run: it fails from now on
    assert.equal("failure | enter A; tick A; exit A success", t:step(a, 1))
  end)
end)

describe("refused behavior3 files", function()
  before_each(function() leaves { A = "S" } end)

  it("name the file, the JSON path and the node", function()
    assert.equal("t.json: $.nodes[\"1\"]: node 'MaxTime': MaxTime ticks " ..
      "its child, then fails if the time is up, and leaves the child open; " ..
      "Bonsai's timeout aborts the child before ticking it (no exact " ..
      "equivalent)", refused(classic { ["1"] = { name = "MaxTime",
      properties = { maxTime = 10 }, child = "2" }, ["2"] = { name = "A" } }))
    assert.equal("t.json: $.nodes[\"1\"].children[2]: no node with id '9'",
      refused(classic { ["1"] = { name = "MemSequence",
      children = { "2", "9" } }, ["2"] = { name = "A" } }))
    assert.equal("t.json: $.nodes[\"2\"]: node 'Jump': unknown node type " ..
      "(not a behavior3 node, nor a custom node of the file: bt.define it, " ..
      "or bt.register a leaf under that name)", refused(classic { ["1"] = { name = "Inverter", child = "2" },
                                 ["2"] = { name = "Jump" } }))
    assert.equal("t.json: $.nodes[\"1\"].child: node 'Inverter': cycle " ..
      "through id '1'", refused(classic { ["1"] = { name = "Inverter",
                                                    child = "1" } }))
    assert.matches("t.json: %$.nodes%[\"1\"%].children%[2%]: node 'A': id " ..
      "'2' already has a parent", refused(classic { ["1"] = {
      name = "MemSequence", children = { "2", "2" } }, ["2"] = { name = "A" } }))
    assert.equal("t.json: $.nodes[\"1\"].properties.maxLoop: node " ..
      "'Repeater': bad number 'lots' for 'maxLoop'", refused(classic {
      ["1"] = { name = "Repeater", properties = { maxLoop = "lots" },
                child = "2" }, ["2"] = { name = "A" } }))
    assert.equal("t.json: $.nodes[\"1\"]: node 'Error': returns ERROR, " ..
      "which Bonsai does not have", refused(classic { ["1"] = {
      name = "Error" } }))
    assert.equal("t.json: $.root.children[1].args.value: node 'Check': " ..
      "at character 4: 'math.floor(': a script calls no function",
      refused(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "Check", args = { value = "hp>math.floor(x)" } } } }))
    assert.matches("t.json: %$.root: node 'Delay': runs its child later",
      refused(current { id = 1, name = "Delay", args = { delay = 1 },
                        children = { { id = 2, name = "A" } } }))
    assert.matches("t.json: %$.root.children%[2%]: node 'A': duplicate id 2",
      refused(current { id = 1, name = "Sequence", children = {
        { id = 2, name = "A" }, { id = 2, name = "A" } } }))
    assert.matches("node 'RepeatUntilFailure': bad number 'x' for 'maxLoop'",
      refused(current { id = 1, name = "RepeatUntilFailure",
        args = { maxLoop = "x" }, children = { { id = 2, name = "A" } } }))
  end)

  it("bad JSON, wrong roots, deep nesting, big files", function()
    assert.matches("^t.json:3:%d+: JSON error: ",
      refused('{\n  "root": "1",\n  "nodes": { "1": '))
    assert.equal("t.json: $: not a behavior3 file (no 'root' or 'trees')",
      refused('{ "tree": 1 }'))
    assert.equal("t.json: $: not a behavior3 file (a JSON object expected)",
      refused("[1, 2]"))
    local t0 = os.clock()
    assert.matches("^t.json:1:%d+: JSON error: .*nested",
      refused(("["):rep(100000)))
    assert.matches("^t.json:1:%d+: JSON error: ",
      refused('{"root": {"name": "A", "args": {"x": NaN}}}'))
    local deep = {}
    for i = 1, 100000 do deep[i] = '{"name":"Not","children":[' end
    assert.matches("JSON error", refused(table.concat(deep)))
    -- a chain of 20,000 nodes by id
    local nodes = {}
    for i = 1, 20000 do
      nodes[tostring(i)] = { name = "Inverter", child = tostring(i + 1) }
    end
    nodes["20001"] = { name = "A" }
    assert.equal("t.json: $.nodes[\"1001\"]: node 'Inverter': the tree is " ..
                 "deeper than 1000 levels", refused(classic(nodes)))
    local ok, msg = pcall(bt.import, ("x"):rep(50 * 1024 * 1024), "behavior3")
    assert.is_false(ok)
    assert.matches("text too large", msg)
    assert.is_true(os.clock() - t0 < 5)
  end)

  it("subtree recursion, through tree ids and through files", function()
    local project = cjson.encode { data = { selectedTree = "a", trees = {
      { id = "a", root = "1", nodes = { ["1"] = { id = "1", name = "b" } } },
      { id = "b", root = "1", nodes = { ["1"] = { id = "1",
        name = "Inverter", child = "2" }, ["2"] = { id = "2", name = "a" } } },
    } } }
    assert.equal("t.json: $.data.trees[2].nodes[\"2\"]: node 'a': subtree " ..
                 "recursion: a -> b -> a", refused(project))
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir '" .. dir .. "'"))
    local f = assert(io.open(dir .. "/x.json", "w"))
    f:write(current { id = 1, name = "Not", children = { { id = 2,
      name = "X", path = "x.json" } } })
    f:close()
    local tree, err = bt.load(dir .. "/x.json")
    assert.is_nil(tree)
    assert.equal(dir .. "/x.json: $.root.children[1]: node 'X': subtree " ..
                 "recursion: " .. dir .. "/x.json -> " .. dir .. "/x.json", err)
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)

describe("tree:export('behavior3')", function()
  it("writes a classic tree that loads back to the same behaviour",
     function()
    local text = assert(io.open("tests/trees/villager.b3.json")):read("*a")
    local tree = bt.tree(bt.import(text, "behavior3"), { name = "villager" })
    local out = tree:export("behavior3")
    local data = cjson.decode(out)
    assert.equal("villager", data.id)
    assert.equal("Priority", data.nodes[data.root].name)
    -- laid out left to right: a column per depth, a row per leaf, each
    -- parent level with the middle of its children, the root block left
    local rows = {}
    for _, n in pairs(data.nodes) do
      local kids = n.children or { n.child }
      if #kids == 0 then
        assert.is_nil(rows[n.display.y]) -- one leaf a row
        rows[n.display.y] = true
      else
        local first, last = data.nodes[kids[1]], data.nodes[kids[#kids]]
        assert.equal((first.display.y + last.display.y) / 2, n.display.y)
        for _, k in ipairs(kids) do
          assert.equal(n.display.x + 250, data.nodes[k].display.x)
        end
      end
    end
    assert.equal(250, data.nodes[data.root].display.x)
    assert.same({ camera_x = 0, camera_y = 0, camera_z = 1, x = 0,
                  y = data.nodes[data.root].display.y }, data.display)
    local copy = bt.tree(bt.import(out, "behavior3"), { name = "villager" })
    assert.equal(out, copy:export("behavior3"))
    local runs = {}
    for i, tr in ipairs { tree, copy } do
      bt.register("IsHungry", function(_, bb, args)
        t:add("hungry? " .. bb.food) return bb.food < args.below
      end)
      bt.register("Eat", function(_, bb, args)
        t:add("eat " .. args.food) bb.food = 100 return true
      end)
      leaves { ChopWood = "SRSFRRS" }
      local a = bt.agent(tr, { blackboard = { food = 50 } })
      local steps = {}
      for k = 1, 10 do
        if k == 4 then a.bb.food = 0 end
        steps[k] = t:step(a, 0.5)
      end
      runs[i] = steps
    end
    assert.same(runs[1], runs[2])
    assert.matches("eat bread", table.concat(runs[1]))
  end)

  it("writes the current editor's tree file too", function()
    leaves { Look = "S", Walk = "RS" }
    local tree = bt.tree(bt.selector { name = "patrol",
      bt.sequence { bt.action("Look", { range = 5 }), bt.wait { seconds = 2 } },
      bt.repeater { times = 3, bt.invert(bt.action "Walk") },
      bt.force_success(bt.action "Walk") }, { name = "guard" })
    local data = cjson.decode(tree:export("behavior3-current"))
    assert.equal("guard", data.name)
    assert.same({ id = 1, name = "Selector", desc = "patrol", children = {
      { id = 2, name = "Sequence", children = {
        { id = 3, name = "Look", args = { range = 5 } },
        { id = 4, name = "Wait", args = { time = 2 } } } },
      { id = 5, name = "Repeat", args = { count = 3 }, children = {
        { id = 6, name = "Invert", children = { { id = 7, name = "Walk" } } } } },
      { id = 8, name = "AlwaysSuccess", children = {
        { id = 9, name = "Walk" } } } } }, data.root)
    -- a file of that editor is written back as it was read
    local text = cjson.encode { name = "x", root = { id = 1, name = "Sequence",
      desc = "go", children = { { id = 2, name = "Look", args = { range = 2 },
        input = { "target" } }, { id = 3, name = "IfElse", children = {
          { id = 4, name = "Look" }, { id = 5, name = "Walk" },
          { id = 6, name = "Look" } } } } } }
    local back = cjson.decode(bt.tree(bt.import(text, "behavior3"),
      { name = "x" }):export("behavior3-current"))
    assert.same(cjson.decode(text).root, back.root)
    -- nodes the format lacks, named
    local bad = bt.tree(bt.sequence { bt.cooldown { seconds = 1,
      bt.action "Look" } }, { name = "T" })
    local ok, msg = pcall(bad.export, bad, "behavior3-current")
    assert.is_false(ok)
    assert.equal("export behavior3-current: sequence/cooldown[1]: " ..
                 "'cooldown' has no behavior3 equivalent", msg)
  end)

  it("refuses nodes behavior3js does not have, naming them", function()
    local tree = bt.tree(bt.sequence { bt.timeout { seconds = 1,
      bt.action "A" } }, { name = "T" })
    local ok, msg = pcall(tree.export, tree, "behavior3")
    assert.is_false(ok)
    assert.equal("export behavior3: sequence/timeout[1]: 'timeout' has no " ..
                 "behavior3 equivalent", msg)
  end)
end)

describe("behavior3's Filter and Assert", function()
  it("Filter: the items whose run of the child succeeded, in a new list",
     function()
    bt.register("Big", function(_, bb) t:add("big? " .. bb.it)
      return bb.it > 2 end)
    local slow = 0
    bt.register("Slow", function(_, bb)
      t:add("slow " .. bb.it)
      slow = slow + 1
      return slow % 2 == 0 or bt.RUNNING
    end)
    local function filter(child)
      return current { id = 1, name = "Filter", input = { "xs" },
        output = { "it", "kept" }, children = { { id = 2, name = child } } }
    end
    local a = agent(filter "Big", { blackboard = { xs = { 1, 5, 3 } } })
    assert.equal("success | big? 1; big? 5; big? 3", t:step(a, 1))
    assert.same({ 5, 3 }, a.bb.kept)
    assert.is_nil(a.bb.it)
    -- a running child is resumed on the same item
    a = agent(filter "Slow", { blackboard = { xs = { 7, 8 } } })
    assert.equal("running | slow 7", t:step(a, 1))
    assert.equal("running | slow 7; slow 8", t:step(a, 1))
    assert.equal("success | slow 8", t:step(a, 1))
    assert.same({ 7, 8 }, a.bb.kept)
    -- no list or an empty one: failure; no item kept: success
    assert.equal("failure |", t:step(agent(filter "Big", { blackboard =
      { xs = {} } }), 1))
    assert.equal("failure |", t:step(agent(filter "Big"), 1))
    local b = agent(filter "Big", { blackboard = { xs = { 1 } } })
    assert.equal("success | big? 1", t:step(b, 1))
    assert.same({}, b.bb.kept)
    assert.matches("needs the list's variable %(input%), the item's and " ..
      "the new list's %(output%)", refused(current { id = 1, name = "Filter",
      input = { "xs" }, output = { "it" }, children = { { id = 2,
      name = "Big" } } }))
  end)

  it("Assert: its child's status; a failure is an error with the message",
     function()
    leaves { Ok = "RS", No = "F" }
    local function asserting(child)
      return agent(current { id = 1, name = "Sequence", desc = "s",
        children = { { id = 2, name = "Assert", desc = "sure",
        args = { message = "the door must be open" },
        children = { { id = 3, name = child } } } } })
    end
    local a = asserting "Ok"
    assert.equal("running | enter Ok; tick Ok", t:step(a, 1))
    assert.equal("success | tick Ok; exit Ok success", t:step(a, 1))
    assert.equal("tree 'T' node 's/sure': the door must be open",
                 trace.tick_error(asserting "No"))
  end)
end)

describe("behavior3's Race and Switch", function()
  it("Race: every unfinished child each tick; the first success wins",
     function()
    leaves { A = "RRS", B = "F", C = "R" }
    local a = agent(current { id = 1, name = "Race", children = {
      { id = 2, name = "A" }, { id = 3, name = "B" }, { id = 4, name = "C" } } })
    assert.equal("running | enter A; tick A; enter B; tick B; exit B " ..
                 "failure; enter C; tick C", t:step(a, 1))
    assert.equal("running | tick A; tick C", t:step(a, 1))
    assert.equal("success | tick A; exit A success; abort C", t:step(a, 1))
  end)

  it("Switch: the first case whose condition succeeds runs its action",
     function()
    leaves { No = "F", Yes = "RS", Act = "F", Other = "S" }
    local a = agent(current { id = 1, name = "Switch", children = {
      { id = 2, name = "Case", children = { { id = 3, name = "No" },
                                            { id = 4, name = "Other" } } },
      { id = 5, name = "Case", children = { { id = 6, name = "Yes" },
                                            { id = 7, name = "Act" } } },
    } })
    assert.equal("running | enter No; tick No; exit No failure; enter Yes; " ..
                 "tick Yes", t:step(a, 1))
    -- the action's failure is the node's: the next case is not tried
    assert.equal("failure | tick Yes; exit Yes success; enter Act; " ..
                 "tick Act; exit Act failure", t:step(a, 1))
    assert.matches("a Switch takes only Case nodes", refused(current {
      id = 1, name = "Switch", children = { { id = 2, name = "Yes" } } }))
  end)
end)

describe("behavior3-ts's Watchdog, retries, AlwaysRunning, JustSuccess " ..
         "and JustFailure", function()
  it("Watchdog: the test every tick; the guarded child runs, the handler " ..
     "when the test fails", function()
    leaves { Test = "SSF", Guarded = "RRS", Handler = "RS" }
    local a = agent(current { id = 1, name = "Watchdog", children = {
      { id = 2, name = "Test" }, { id = 3, name = "Guarded" },
      { id = 4, name = "Handler" } } })
    assert.equal("running | enter Test; tick Test; exit Test success; " ..
                 "enter Guarded; tick Guarded", t:step(a, 1))
    assert.equal("running | enter Test; tick Test; exit Test success; " ..
                 "tick Guarded", t:step(a, 1))
    -- the test fails: the guarded child is cut off, the handler ticked
    -- once (and cut off: it runs), the node fails
    assert.equal("failure | enter Test; tick Test; exit Test failure; " ..
                 "abort Guarded; enter Handler; tick Handler; abort Handler",
                 t:step(a, 1))
  end)

  it("Watchdog: a running test is an error of the node; three children",
     function()
    leaves { Slow = "R", A = "S" }
    local a = agent(current { id = 1, name = "Watchdog", children = {
      { id = 2, name = "Slow" }, { id = 3, name = "A" },
      { id = 4, name = "A" } } })
    assert.matches("node 'Watchdog': its test %(the first child%) is running",
                   trace.tick_error(a))
    assert.matches("node 'Watchdog': needs exactly 3 children", refused(
      current { id = 1, name = "Watchdog", children = {
        { id = 2, name = "A" } } }))
  end)

  it("JustSuccess and JustFailure succeed and fail", function()
    local a = agent(current { id = 1, name = "Selector", children = {
      { id = 2, name = "JustFailure" }, { id = 3, name = "JustSuccess" } } })
    assert.equal("success", a:tick(1))
    assert.equal("failure", agent(current { id = 1, name = "JustFailure" })
                              :tick(1))
  end)

  it("RetryUntilSuccess: the next try at the next tick after a try of one " ..
     "tick, in the same tick after a longer one; count tries at most",
     function()
    leaves { A = "F", B = "RFRS" }
    local a = agent(current { id = 1, name = "RetryUntilSuccess",
      args = { count = 3 }, children = { { id = 2, name = "A" } } })
    for _ = 1, 3 do
      assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    end
    assert.equal("failure |", t:step(a, 1))
    a = agent(current { id = 1, name = "RetryUntilSuccess",
      children = { { id = 2, name = "B" } } })
    assert.equal("running | enter B; tick B", t:step(a, 1))
    assert.equal("running | tick B; exit B failure; enter B; tick B",
                 t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
  end)

  it("RetryUntilFailure: success when a try fails; the count from the " ..
     "blackboard", function()
    leaves { A = "SSF" }
    local a = agent(current { id = 1, name = "RetryUntilFailure",
      input = { "tries" }, children = { { id = 2, name = "A" } } },
      { blackboard = { tries = 2 } })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1)) -- two tries, no failure
    a.bb.tries = 5
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("AlwaysRunning: its child again and again, running", function()
    leaves { A = "SRS" }
    local a = agent(current { id = 1, name = "AlwaysRunning",
      children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    -- the run of two ticks ends: the next starts in the same tick
    assert.equal("running | tick A; exit A success; enter A; tick A; " ..
                 "exit A success", t:step(a, 1))
  end)

  it("Math is refused with the reason", function()
    local function why(name, kids)
      return refused(current { id = 1, name = name, children = kids })
    end
    assert.matches("node 'Math': computes with functions", why("Math"))
    assert.matches("node 'Now': is a leaf of behavior3's runtime over the " ..
                   "game's own values", why("Now"))
  end)
end)

describe("behavior3-ts's WaitForEvent", function()
  it("runs until the agent gets the event, then succeeds, tick by tick",
     function()
    leaves { A = "S", B = "S" }
    local a = agent(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "A" },
      { id = 3, name = "WaitForEvent", args = { event = "hello" } },
      { id = 4, name = "B" } } })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    a:send("other")
    assert.equal("running |", t:step(a, 1))
    assert.equal(bt.RUNNING, a:tick(1)) -- no timeout: it waits on
    a:send("hello", "world")
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("is refused without an event, and exports as it was read", function()
    assert.equal("t.json: $.root.args: node 'WaitForEvent': needs an " ..
      "'event' (the name of the event it waits for)",
      refused(current { id = 1, name = "WaitForEvent" }))
    assert.equal("t.json: $.root.args: node 'WaitForEvent': needs an " ..
      "'event' (the name of the event it waits for)",
      refused(current { id = 1, name = "WaitForEvent", args = { event = 3 } }))
    local text = bt.tree(bt.import(current { id = 1, name = "WaitForEvent",
      args = { event = "hello" } }, "behavior3", { file = "t.json" }),
      { name = "W" }):export("behavior3-current")
    assert.matches('"name":"WaitForEvent"', text, 1, true)
    assert.matches('"event":"hello"', text, 1, true)
  end)
end)

describe("behavior3's Listen on the tree's events", function()
  -- a Sequence of four Listens (their children: Before, After, Won, Lost)
  -- and Work; the events in each spelling behavior3 has
  local function listening(extra)
    local kids = {
      { id = 2, name = "Listen", args = { builtin = "beforeRun" },
        children = { { id = 3, name = "Before" } } },
      { id = 4, name = "Listen", args = { builtin = "afterRunTree" },
        children = { { id = 5, name = "After" } } },
      { id = 6, name = "Listen", args = { event = "treeTickedSuccess" },
        children = { { id = 7, name = "Won" } } },
      { id = 8, name = "Listen", args = { builtin = "afterRunFailure" },
        children = { { id = 9, name = "Lost" } } },
      { id = 10, name = "Work" },
    }
    for _, k in ipairs(extra or {}) do table.insert(kids, 1, k) end
    return current { id = 1, name = "Sequence", children = kids }
  end

  it("run their child before a new run and after a run ends, tick by tick",
     function()
    leaves { Before = "S", After = "RS", Won = "S", Lost = "S", Work = "RSF" }
    local a = agent(listening())
    -- the first run: the Listens start listening; no event before it
    assert.equal("running | enter Work; tick Work", t:step(a, 1))
    -- it ends: "after", then "success"; a child still running is cut off
    assert.equal("success | tick Work; exit Work success; enter After; " ..
                 "tick After; abort After; enter Won; tick Won; exit Won " ..
                 "success", t:step(a, 1))
    -- a new run: "before" first; then a failure: "after", then "failure"
    assert.equal("failure | enter Before; tick Before; exit Before " ..
                 "success; enter Work; tick Work; exit Work failure; " ..
                 "enter After; tick After; exit After success; enter Lost; " ..
                 "tick Lost; exit Lost success", t:step(a, 1))
  end)

  it("listen once per agent however often ticked, until a:reset()",
     function()
    leaves { Before = "S", After = "S", Won = "S", Lost = "S", Work = "S" }
    local a = agent(listening())
    t:step(a, 1)
    -- behavior3-ts would run Won twice: it adds a handler at every tick
    assert.equal("success | enter Before; tick Before; exit Before " ..
                 "success; enter Work; tick Work; exit Work success; " ..
                 "enter After; tick After; exit After success; enter Won; " ..
                 "tick Won; exit Won success", t:step(a, 1))
    a:reset() -- forgets the Listens: no "before" at this run
    local trace_after_reset = t:step(a, 1)
    assert.matches("^success | enter Work; tick Work; exit Work success; " ..
                   "enter After;", trace_after_reset)
  end)

  it("are written back as they were", function()
    leaves { Before = "S", After = "S", Won = "S", Lost = "S", Work = "S" }
    local text = bt.tree(bt.import(listening(), "behavior3", {
      file = "t.json" })):export("behavior3-current")
    local root = cjson.decode(text).root
    assert.equal("Sequence", root.name)
    assert.equal("Listen", root.children[1].name)
    assert.equal("beforeRun", root.children[1].args.builtin)
    assert.equal("Before", root.children[1].children[1].name)
    local a = agent(text)
    t:step(a, 1)
    assert.matches("^success | enter Before", t:step(a, 1))
  end)

  it("refuse the events no node can serve", function()
    local function listen(args, output)
      return refused(current { id = 1, name = "Listen", args = args,
        output = output, children = { { id = 2, name = "A" } } })
    end
    assert.equal("t.json: $.root.args: node 'Listen': event " ..
      "'treeInterrupted' fires when the tree is interrupted or cleared " ..
      "(a:abort, a:reset), where no node can tick a child (a game may " ..
      "provide Listen with bt.define)", listen { builtin = "treeInterrupted" })
    assert.matches("needs an 'event'", listen {})
    assert.matches("%$.root.output: node 'Listen': writes the event's " ..
                   "target", listen({ event = "afterRun" }, { "tree" }))
  end)
end)

describe("behavior3-ts's Listen on an event of the game's own", function()
  it("runs its child in the tick the event (a:send) is delivered, its "
     .. "payload written to the output variable", function()
    leaves { Hit = "S", Work = "R" }
    local a = agent(current { id = 1, name = "Sequence", children = {
      { id = 2, name = "Listen", args = { event = "hit" }, output = { "who" },
        children = { { id = 3, name = "Hit" } } },
      { id = 4, name = "Work" } } })
    -- the first tick: the Listen starts listening
    assert.equal("running | enter Work; tick Work", t:step(a, 1))
    assert.equal("running | tick Work", t:step(a, 1))
    a:send("hit", "orc")
    assert.equal("running | enter Hit; tick Hit; exit Hit success; tick Work",
                 t:step(a, 1))
    assert.equal("orc", a.bb.who)
    assert.equal("running | tick Work", t:step(a, 1)) -- delivered once
    a:send("miss")
    assert.equal("running | tick Work", t:step(a, 1))
    a:send("hit", "elf")
    a:send("hit", "imp") -- two in one tick: the child runs once, the last payload
    assert.equal("running | enter Hit; tick Hit; exit Hit success; tick Work",
                 t:step(a, 1))
    assert.equal("imp", a.bb.who)
  end)
end)

describe("behavior3's Foreach", function()
  it("runs its children for each item of a list", function()
    local seen = {}
    bt.register("Visit", function(_, bb)
      seen[#seen + 1] = bb.item
      if bb.item == "slow" and not seen.waited then
        seen.waited = true
        return bt.RUNNING
      end
      return bb.item ~= "bad"
    end)
    local a = agent(current { id = 1, name = "Foreach", input = { "list" },
      output = { "item" }, children = { { id = 2, name = "Visit" } } },
      { blackboard = { list = { "a", "slow", "c" } } })
    assert.equal(bt.RUNNING, a:tick(1))
    assert.equal(bt.SUCCESS, a:tick(1))
    assert.same({ "a", "slow", "slow", "c", waited = true }, seen)
    a.bb.list = { "a", "bad", "c" }
    seen = {}
    assert.equal(bt.FAILURE, a:tick(1))
    assert.same({ "a", "bad" }, seen)
    a.bb.list = 3
    assert.matches("'list' is not a list %(number%)", trace.tick_error(a))
    assert.matches("needs the list's variable", refused(current { id = 1,
      name = "Foreach", children = { { id = 2, name = "Visit" } } }))
  end)
end)

describe("messages that point at the remedy (issue 37)", function()
  it("an Assert without a desc is named 'Assert' in paths", function()
    leaves { No = "F" }
    local a = agent(current { id = 1, name = "Sequence", desc = "s",
      children = { { id = 2, name = "Assert",
        args = { message = "the door must be open" },
        children = { { id = 3, name = "No" } } } } })
    assert.equal("tree 'T' node 's/Assert': the door must be open",
                 trace.tick_error(a))
  end)

  it("a classic custom composite points at bt.define", function()
    assert.matches("node 'MyLoop': a custom composite of the file: bt.define "
                   .. "it %(bt.define%(\"MyLoop\", function%(args, children%) "
                   .. "... end%) gives it the game's behaviour%)",
                   refused(classic({ ["1"] = { name = "MyLoop",
                                               children = { "2" } },
                                     ["2"] = { name = "Succeeder" } },
                     { custom_nodes = { { name = "MyLoop",
                                          category = "composite" } } })))
  end)

  it("a classic condition the game registered as an action is refused at "
     .. "load", function()
    bt.register("b3.busy", bt.action { tick = function() return "running" end })
    assert.matches("node 'b3.busy': the file's custom node is a condition, "
                   .. "but the game registered 'b3.busy' as an action",
                   refused(classic({ ["1"] = { name = "b3.busy" } },
                     { custom_nodes = { { name = "b3.busy",
                                          category = "condition" } } })))
    bt.register("b3.seen", function() return true end) -- a function is fine
    local a = agent(classic({ ["1"] = { name = "b3.seen" } },
      { custom_nodes = { { name = "b3.seen", category = "condition" } } }))
    assert.equal("success", a:tick(1))
  end)
end)

describe("behavior3lua's RepeatUntilSuccess and RepeatUntilFailure with "
         .. "maxLoop", function()
  it("run one try a tick, and fail at the tick after the last try",
     function()
    leaves { A = "F" }
    local a = agent(current { id = 1, name = "RepeatUntilSuccess",
      args = { maxLoop = 2 }, children = { { id = 2, name = "A" } } })
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A failure", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    -- a try that succeeds ends it, with success
    leaves { B = "FS" }
    a = agent(current { id = 1, name = "RepeatUntilSuccess",
      args = { maxLoop = 5 }, children = { { id = 2, name = "B" } } })
    assert.equal("running | enter B; tick B; exit B failure", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("RepeatUntilFailure: success when a try fails; the count from its "
     .. "input variable", function()
    leaves { A = "SSSF" }
    local a = agent(current { id = 1, name = "RepeatUntilFailure",
      input = { "loops" }, children = { { id = 2, name = "A" } } },
      { blackboard = { loops = 2 } })
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    a.bb.loops = 10
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
  end)
end)

describe("a library of behavior3 files (bt.load's library)", function()
  local scratch = require("helpers.scratch")("lib")
  local write = scratch.write
  local dir -- this test's directory
  before_each(function() scratch.make(); dir = scratch.dir end)
  after_each(scratch.remove)
  -- a classic tree of id `id` whose root is a node named `name`
  local function tree(id, name)
    return cjson.encode { id = id, title = id, root = "1",
                          nodes = { ["1"] = { id = "1", name = name } } }
  end

  it("refers to a classic tree of another file by id, and names a cycle " ..
     "whole with the files", function()
    leaves { A = "S" }
    local main = write("main.json", tree("Main", "Guard"))
    write("lib/guard.json", tree("Guard", "A"))
    local tr = assert(bt.load(main, { library = "lib" }))
    assert.equal("Main", tr.name)
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(tr), 1))
    -- exported into one file, the library's tree in it
    for _, fmt in ipairs { "behavior3", "behavior3-current" } do
      local copy = bt.tree(bt.import(tr:export(fmt), "behavior3",
                                     { file = "x.json" }))
      assert.equal("success | enter A; tick A; exit A success",
                   t:step(bt.agent(copy), 1))
    end
    -- a project in the library: Guard -> Chase -> Main
    write("lib/guard.json", cjson.encode { data = { trees = {
      cjson.decode(tree("Guard", "Chase")),
      cjson.decode(tree("Chase", "Main")) } } })
    local _, err = bt.load(main, { library = "lib" })
    assert.equal(dir .. "/lib/guard.json: $.data.trees[2].nodes[\"1\"]: " ..
      "node 'Main': subtree recursion: Main (" .. dir .. "/main.json) -> " ..
      "Guard (" .. dir .. "/lib/guard.json) -> Chase (" .. dir ..
      "/lib/guard.json) -> Main (" .. dir .. "/main.json)", err)
  end)

  it("names a cycle of current editor files whole", function()
    local function file(name, path)
      return current { id = 1, name = "Not", children = { { id = 2,
                       name = "S", path = path } } }
    end
    local a = write("a.json", file("a", "lib/b.json"))
    write("lib/b.json", file("b", "lib/c.json"))
    write("lib/c.json", file("c", "a.json"))
    local _, err = bt.load(a, { dir = dir, library = "lib" })
    assert.equal(dir .. "/lib/c.json: $.root.children[1]: node 'S': " ..
      "subtree recursion: " .. dir .. "/a.json -> " .. dir ..
      "/lib/b.json -> " .. dir .. "/lib/c.json -> " .. dir .. "/a.json", err)
    -- the cycle from the tree chosen in the library
    _, err = bt.load(a, { dir = dir, library = "lib", tree = "lib/b.json" })
    assert.matches("subtree recursion: " .. dir .. "/lib/b.json %-> " ..
                   dir .. "/lib/c.json %-> " .. dir .. "/a.json %-> " ..
                   dir .. "/lib/b.json$", err)
  end)

  it("reloads at bt.poll when a file is added to a library folder",
     function()
    leaves { A = "S", B = "F" }
    local main = write("main.json", tree("Main", "Guard"))
    write("lib/a.json", tree("Other", "A"))
    local _, err = bt.load(main, { library = "lib" })
    assert.matches("node 'Guard': unknown node type", err)
    write("lib/guard.json", tree("Guard", "A"))
    local tr = assert(bt.load(main, { library = "lib" }))
    assert.is_true(bt.watch(main))
    local ag = bt.agent(tr)
    assert.equal(bt.SUCCESS, ag:tick(1))
    -- guard.json removed, the same tree in a new file: seen, reloaded
    os.remove(dir .. "/lib/guard.json")
    write("lib/guard2.json", tree("Guard", "B"))
    assert.same({ main }, (bt.poll()))
    assert.equal(bt.FAILURE, ag:tick(1))
  end)

  it("refuses a file outside, a file of the other format, a bad option",
     function()
    local main = write("main.json", tree("Main", "A"))
    local _, err = bt.load(main, { library = "../x.json" })
    assert.equal(main .. ": library: '../x.json' is outside the " ..
      "directories allowed (" .. dir .. "; bt.load's include_dirs option " ..
      "adds others)", err)
    write("lib/cur.json", current { id = 1, name = "A" })
    _, err = bt.load(main, { library = "lib" })
    assert.equal(dir .. "/lib/cur.json: $: a current behavior3 editor's " ..
      "file in the library of a classic file (a library holds files of one " ..
      "format)", err)
    write("lib/cur.json", "[1]")
    _, err = bt.load(main, { library = "lib" })
    assert.equal(dir .. "/lib/cur.json: $: not a behavior3 file (a JSON " ..
      "object expected)", err)
    -- a link in a library folder to a file outside it
    os.remove(dir .. "/lib/cur.json")
    write("beside.json", tree("B", "A"))
    assert(os.execute("ln -s ../beside.json '" .. dir .. "/lib/l.json'"))
    _, err = bt.load(main, { library = "lib" })
    assert.matches("^" .. main:gsub("%p", "%%%0") .. ": library: " ..
      dir:gsub("%p", "%%%0") .. "/lib/l.json: leads outside its folder " ..
      dir:gsub("%p", "%%%0") .. "/lib %(to .*/beside.json%)$", err)
    _, err = bt.load(main, { library = { "lib", 7 } })
    assert.equal(main .. ": library: entry 2 must be a path", err)
    os.remove(dir .. "/lib/l.json")
    _, err = bt.load(main, { library = "lib/nope.json" })
    assert.matches("^" .. main:gsub("%p", "%%%0") .. ": library: .*" ..
                   "nope.json: No such file or directory$", err)
    write("lib/odd.json", '{"a": 1}')
    _, err = bt.load(main, { library = "lib" })
    assert.equal(dir .. "/lib/odd.json: $: not a behavior3 file (no " ..
                 "'root' or 'trees')", err)
    os.remove(dir .. "/lib/odd.json")
    _, err = bt.load(main, { library = "lib", tree = "Boss" })
    assert.equal(main .. ": $: no tree 'Boss' in the file nor its library",
                 err)
    -- a current editor's file with a classic one in its library
    local cur = write("cur.json", current { id = 1, name = "A" })
    write("lib/classic.json", tree("C", "A"))
    _, err = bt.load(cur, { library = "lib" })
    assert.equal(dir .. "/lib/classic.json: $: a classic behavior3 file " ..
      "in the library of a current editor's file (a library holds files " ..
      "of one format)", err)
    _, err = bt.load(cur, { tree = 3 })
    assert.equal(cur .. ": tree must be a name (got number)", err)
    assert.has_error(function() bt.load(main, { libary = "lib" }) end,
      "bt.load (behavior3) has no option 'libary' (did you mean " ..
      "'library'?)")
  end)
end)
