-- formats_edges_spec: the edge-list text format of the classic Unity
-- articles (API.md "Trees from files and editors"): the root line, edges
-- in line order, parameters where a node first appears, filters, the
-- priority section, shared nodes, the BehaviorTree.CPP kinds (IfThenElse,
-- WhileDoElse, SkipUnlessUpdated, WaitValueUpdate, RunOnce{then_skip}),
-- tick by tick; refusals with file, line and node; hot reload through
-- bt.poll.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local function leaves(scripts) t:register(scripts) end

local function conditions(scripts) t:register_conditions(scripts) end

local function refused(text)
  local ok, msg = pcall(bt.import, text, "edges", { file = "t.bt" })
  assert(not ok, "the import was expected to fail")
  return msg
end

describe("an edge-list file", function()
  it("loads the root, filters and the priority section", function()
    conditions { SeeEnemy = "FS", IsTired = "F", IsDead = "FFFS" }
    leaves { Attack = "R", Patrol = "SR", Rest = "R", Die = "R" }
    local tree = assert(bt.load("tests/trees/guard.bt"))
    assert.equal("guard", tree.name)
    local a = bt.agent(tree)
    -- Repeat[7]{2}: Patrol twice, the second run goes on
    assert.equal("running | tick IsDead; tick SeeEnemy; enter Patrol; " ..
                 "tick Patrol; exit Patrol success; enter Patrol; tick Patrol",
                 t:step(a, 1))
    assert.same({ "ActiveSelector[1]", "Sequence[6]", "Repeat[7]",
                  "Patrol[8]" }, a:running())
    -- the active selector: the enemy seen aborts the patrol
    assert.equal("running | tick IsDead; tick SeeEnemy; enter Attack; " ..
                 "tick Attack; abort Patrol", t:step(a, 1))
    -- Sequence[2] resumes Attack; Timeout[4]{3}: seconds
    assert.equal("running | tick IsDead; tick Attack",
                 t:step(a, 1))
    -- the priority section's filter takes over
    assert.equal("running | tick IsDead; enter Die; tick Die; abort Attack",
                 t:step(a, 1))
  end)

  it("bt.import returns the priority section as tree options", function()
    conditions { D = "FS" }
    leaves { A = "R", B = "R" }
    local a = bt.agent(bt.tree(bt.import("Sequence[1]\nSequence[1]->A[2]\n" ..
      "PriorityNode[3]->{D[4],B[5]}", "edges")))
    assert.equal("running | tick D; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick D; enter B; tick B; abort A", t:step(a, 1))
  end)

  it("filters check their conditions every tick", function()
    conditions { C = "SSF" }
    leaves { A = "R" }
    local a = bt.agent(bt.tree(bt.import("Sequence[1]\n" ..
      "Sequence[1]->{C[2],A[3]}", "edges")))
    assert.equal("running | tick C; enter A; tick A", t:step(a, 1))
    assert.equal("running | tick C; tick A", t:step(a, 1))
    assert.equal("failure | tick C; abort A", t:step(a, 1))
  end)

  it("shares a node referenced from two parents", function()
    leaves { A = "F", B = "S" }
    local seen = {}
    bt.register("Act", function(_, _, args)
      seen[#seen + 1] = args.x .. args.who
      t:add("act")
      return true
    end)
    local root = bt.import([[
      Selector[1]
      Selector[1]->Sequence[2]
      Sequence[2]->Act[3]{x=1, who = bob}
      Sequence[2]->A[4]
      Selector[1]->Act[3]
    ]], "edges")
    local a = bt.agent(bt.tree(root))
    assert.equal("success | act; enter A; tick A; exit A failure; act",
                 t:step(a, 1))
    assert.same({ "1bob", "1bob" }, seen)
  end)

  it("reads decorators' and parallels' parameters", function()
    leaves { A = "RS", B = "F" }
    local a = bt.agent(bt.tree(bt.import([[
      Parallel[1]{one,all}
      Parallel[1]->Inverter[2]
      Inverter[2]->B[3]
      Parallel[1]->A[4]
    ]], "edges")))
    assert.equal("success | enter B; tick B; exit B failure", t:step(a, 1))
    leaves { A = "FFS" }
    a = bt.agent(bt.tree(bt.import("Retry[1]{2}\nRetry[1]->A[2]", "edges")))
    assert.equal("failure | enter A; tick A; exit A failure; enter A; " ..
                 "tick A; exit A failure", t:step(a, 1))
  end)

  it("reads IfThenElse, WhileDoElse, the key decorators and " ..
     "RunOnce{then_skip}", function()
    leaves { C = "SF", A = "RS", B = "S" }
    local a = bt.agent(bt.tree(bt.import([[
      IfThenElse[1]
      IfThenElse[1]->C[2]
      IfThenElse[1]->A[3]
      IfThenElse[1]->B[4]
    ]], "edges")))
    -- the condition once, then its branch to the end
    assert.equal("running | enter C; tick C; exit C success; enter A; " ..
                 "tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter C; tick C; exit C failure; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    leaves { C = "SF", A = "R", B = "S" }
    a = bt.agent(bt.tree(bt.import([[
      WhileDoElse[1]
      WhileDoElse[1]->C[2]
      WhileDoElse[1]->A[3]
      WhileDoElse[1]->B[4]
    ]], "edges")))
    -- the condition every tick: its failure aborts the running branch
    assert.equal("running | enter C; tick C; exit C success; enter A; " ..
                 "tick A", t:step(a, 1))
    assert.equal("success | enter C; tick C; exit C failure; abort A; " ..
                 "enter B; tick B; exit B success", t:step(a, 1))
    -- SkipUnlessUpdated{key}: skipped until the key changes
    leaves { A = "S", B = "S" }
    a = bt.agent(bt.tree(bt.import([[
      Sequence[1]
      Sequence[1]->SkipUnlessUpdated[2]{ seen }
      SkipUnlessUpdated[2]->A[3]
      Sequence[1]->B[4]
    ]], "edges")))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    a.bb.seen = 1
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    -- WaitValueUpdate{key}: running until the key changes
    a = bt.agent(bt.tree(bt.import(
      "WaitValueUpdate[1]{seen}\nWaitValueUpdate[1]->A[2]", "edges")))
    assert.equal("running |", t:step(a, 1))
    a.bb.seen = true
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    -- RunOnce{then_skip}: skipped after its run; RunOnce: its last status
    local function once(param)
      return bt.agent(bt.tree(bt.import("Sequence[1]\n" ..
        "Sequence[1]->RunOnce[2]" .. param .. "\nRunOnce[2]->A[3]\n" ..
        "Sequence[1]->B[4]", "edges")))
    end
    local skip, last = once("{then_skip}"), once("")
    for _, x in ipairs { skip, last } do
      assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                   "tick B; exit B success", t:step(x, 1))
      assert.equal("success | enter B; tick B; exit B success", t:step(x, 1))
    end
    assert.equal("skipped", skip:node_statuses()[1]) -- RunOnce[2]
    assert.equal("success", last:node_statuses()[1])
  end)

  it("reloads when the file changes", function()
    leaves { A = "R", B = "R" }
    local path = os.tmpname() .. ".bt"
    local function write(s)
      local f = assert(io.open(path, "w"))
      f:write(s)
      f:close()
    end
    write("Sequence[1]\nSequence[1]->A[2]\n")
    local tree = assert(bt.load(path))
    assert.is_true(bt.watch(path))
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("Sequence[1]\nSequence[1]->B[2]\nSequence[1]->A[3]\n")
    local ok, failed = bt.poll()
    assert.same({ path }, ok)
    assert.same({}, failed)
    -- A[2] is gone (its path changed to A[3]): aborted, B starts
    assert.equal("running | abort A; enter B; tick B", t:step(a, 1))
    write("Sequence[1]\nSequence[1]->B[2]\nSequence[1]->Nope[3]\n")
    ok, failed = bt.poll()
    assert.same({}, ok)
    assert.equal(path .. ":3: node 'Nope[3]': no leaf registered as 'Nope'" ..
                 " (bt.define it, or bt.register a leaf under that name)",
                 failed[1].error)
    assert.equal("running | tick B", t:step(a, 1))
    os.remove(path)
  end)
end)

describe("refused edge-list files", function()
  before_each(function() leaves { A = "S" } end)

  it("name the file, the line and the node", function()
    assert.equal("t.bt: no root line (Type[id] alone)",
                 refused("Sequence[1]->A[2]"))
    assert.equal("t.bt:2: node 'Sequence[2]': a second root line (the root " ..
                 "is Sequence[1], line 1)", refused("Sequence[1]\nSequence[2]"))
    assert.equal("t.bt:1: node 'Sequence[1]': cycle: Sequence[1] is its " ..
                 "own descendant", refused("Sequence[1]\nSequence[1]->" ..
                 "Sequence[2]\nSequence[2]->Sequence[1]\nSequence[2]->A[3]"))
    assert.equal("t.bt:3: node 'Selector[2]': id 2 is Sequence[2] (line 2)",
      refused("Sequence[1]\nSequence[1]->Sequence[2]\nSequence[1]->Selector[2]"))
    assert.equal("t.bt:2: node 'Sequence[2]': needs children",
      refused("Sequence[1]\nSequence[1]->Sequence[2]\nSequence[1]->A[3]"))
    assert.equal("t.bt:1: node 'Repeat[1]': bad number 'x'",
      refused("Repeat[1]{x}\nRepeat[1]->A[2]"))
    assert.equal("t.bt:3: node 'A[3]': a parameter is written where the " ..
      "node first appears (line 2)",
      refused("Sequence[1]\nSequence[1]->A[3]\nSequence[1]->A[3]{5}"))
    assert.equal("t.bt:3: node 'B[3]': not reachable from the root",
      refused("Sequence[1]\nSequence[1]->A[2]\nB[3]->A[4]"))
    assert.equal("t.bt:2: node 'Jump[2]': no leaf registered as 'Jump'" ..
                 " (bt.define it, or bt.register a leaf under that name)",
      refused("Sequence[1]\nSequence[1]->Jump[2]"))
    -- a misspelt type: the node type meant (the format's own names)
    assert.equal("t.bt:2: node 'Sequnce[1]': unknown node type with " ..
                 "children (did you mean 'Sequence'?) (a composite or " ..
                 "decorator of the game's own: bt.define it)",
      refused("Sequnce[1]\nSequnce[1]->Succeeder[2]"))
    assert.equal("t.bt:2: node 'Invertr[2]': no leaf registered as " ..
                 "'Invertr' (did you mean 'Invert' or 'Inverter'?) " ..
                 "(bt.define it, or bt.register a leaf under that name)",
      refused("Sequence[1]\nSequence[1]->Invertr[2]"))
    assert.equal("t.bt:2: expected Type[id] at 'A'",
      refused("Sequence[1]\nSequence[1]->A"))
    assert.equal("t.bt:2: node 'PriorityNode[9]': the priority section " ..
      "takes filters: PriorityNode[9]->{Condition[id],...,Child[id]}",
      refused("Sequence[1]\nPriorityNode[9]->A[2]\nSequence[1]->A[3]"))
    assert.equal("t.bt:4: node 'Inverter[2]': needs exactly one child",
      refused("Sequence[1]\nSequence[1]->Inverter[2]\nInverter[2]->A[3]\n" ..
              "Inverter[2]->A[4]"))
  end)

  it("the new kinds name what is missing", function()
    assert.equal("t.bt:1: node 'SkipUnlessUpdated[1]': needs {key}, a " ..
      "blackboard key", refused("SkipUnlessUpdated[1]\n" ..
                                "SkipUnlessUpdated[1]->A[2]"))
    assert.equal("t.bt:1: node 'WaitValueUpdate[1]': needs {key}, a " ..
      "blackboard key", refused("WaitValueUpdate[1]{ }\n" ..
                                "WaitValueUpdate[1]->A[2]"))
    assert.equal("t.bt:1: node 'RunOnce[1]': takes {then_skip} or no " ..
      "parameter", refused("RunOnce[1]{true}\nRunOnce[1]->A[2]"))
    assert.equal("t.bt:1: node 'IfThenElse[1]': needs 2 or 3 children " ..
      "(condition, then, else)", refused("IfThenElse[1]\nIfThenElse[1]->A[2]"))
    assert.equal("t.bt:5: node 'WhileDoElse[1]': needs 2 or 3 children " ..
      "(condition, then, else)", refused("WhileDoElse[1]\n" ..
      "WhileDoElse[1]->A[2]\nWhileDoElse[1]->A[3]\nWhileDoElse[1]->A[4]\n" ..
      "WhileDoElse[1]->A[5]"))
  end)

  it("100,000 levels deep and shared-node explosions, quickly", function()
    local lines = { "Inverter[0]" }
    for i = 1, 99990 do
      lines[#lines + 1] = "Inverter[" .. (i - 1) .. "]->Inverter[" .. i .. "]"
    end
    local t0 = os.clock()
    assert.equal("t.bt:1001: node 'Inverter[1000]': nested deeper than " ..
                 "1000 levels", refused(table.concat(lines, "\n")))
    -- 40 levels, each node under both nodes of the level above: 2^40
    lines = { "Sequence[a0]", "Sequence[a0]->Sequence[a1]",
              "Sequence[a0]->Sequence[b1]" }
    for i = 1, 40 do
      for _, p in ipairs { "a", "b" } do
        lines[#lines + 1] = "Sequence[" .. p .. i .. "]->Sequence[a" ..
                            (i + 1) .. "]"
        lines[#lines + 1] = "Sequence[" .. p .. i .. "]->Sequence[b" ..
                            (i + 1) .. "]"
      end
    end
    lines[#lines + 1] = "Sequence[a41]->A[z]"
    lines[#lines + 1] = "Sequence[b41]->A[z]"
    assert.matches("the tree expands to more than 100000 nodes",
                   refused(table.concat(lines, "\n")))
    assert.is_true(os.clock() - t0 < 5)
  end)
end)

describe("edges' RandomSelector", function()
  it("is a random_selector on the key of its {param}", function()
    local edges = require "bonsai.formats.edges"
    local root = edges.parse("RandomSelector[r]{seed}\n" ..
      "RandomSelector[r]->Wait[w]{1}\nRandomSelector[r]->Wait[v]{2}\n", { bt = bt, file = "t.edges" })
    assert.equal("random_selector", root.type)
    assert.equal("seed", root.key)
    assert.equal(2, #root)
    bt.tree(root) -- a valid definition
  end)
end)

describe("the edge-list exporter", function()
  -- Imports text, ticks an agent on it (the leaves' scripts set by setup,
  -- on a new trace) and returns each tick's trace and the tree's export.
  local function run(text, ticks, setup)
    t = trace.new()
    setup()
    local root, o = bt.import(text, "edges", { file = "t.bt" })
    local opts = { name = "t" }
    for k, v in pairs(o or {}) do opts[k] = v end
    local tree = bt.tree(root, opts)
    local a = bt.agent(tree)
    local log = {}
    for i = 1, ticks do log[i] = t:step(a, 1) end
    local types = {}
    for _, nd in ipairs(tree:nodes()) do types[#types + 1] = nd.type end
    return log, tree:export("edges"), types
  end

  -- import -> export -> import ticks the same, tick by tick; the export of
  -- the export is itself.
  local function roundtrip(text, ticks, setup)
    local log1, out1, types1 = run(text, ticks, setup)
    local log2, out2, types2 = run(out1, ticks, setup)
    assert.same(log1, log2)
    assert.same(types1, types2)
    assert.equal(out1, out2)
    return out1, log1
  end

  it("writes tests/trees/guard.bt back as it was (comments aside), " ..
     "ticking the same", function()
    local f = assert(io.open("tests/trees/guard.bt"))
    local text = f:read("*a")
    f:close()
    local out = roundtrip(text, 8, function()
      conditions { SeeEnemy = "FFFS", IsTired = "FFFFFS", IsDead = "F" }
      leaves { Attack = "RRS", Patrol = "SR", Rest = "R", Die = "R" }
    end)
    local want = { "# t: written by Bonsai's edge-list exporter" }
    for line in text:gmatch("[^\n]+") do
      if not line:match("^%s*#") and not line:match("^%s*%-%-") then
        want[#want + 1] = line
      end
    end
    assert.equal(table.concat(want, "\n") .. "\n", out)
  end)

  it("writes every kind the format maps, a shared node, leaf args and " ..
     "a node the game defined, ticking the same", function()
    bt.define("Twice", function(args, kids)
      return bt.repeater { times = 2, name = args.name, kids[1] }
    end)
    local out, log = roundtrip([[
ReactiveSequence[1]
ReactiveSequence[1]->Parallel[2]{all,one}
Parallel[2]->IfThenElse[3]
IfThenElse[3]->C[4]
IfThenElse[3]->Inverter[5]
Inverter[5]->A[6]{x=1, who = bob}
IfThenElse[3]->Succeeder[7]
Succeeder[7]->Failer[8]
Failer[8]->Retry[9]{2}
Retry[9]->B[10]
Parallel[2]->WhileDoElse[11]
WhileDoElse[11]->C[4]
WhileDoElse[11]->Limit[12]{3}
Limit[12]->TimeLimit[13]{5}
TimeLimit[13]->Cooldown[14]{1}
Cooldown[14]->RunOnce[15]{then_skip}
RunOnce[15]->A[6]
ReactiveSequence[1]->RandomSelector[16]{seed}
RandomSelector[16]->SkipUnlessUpdated[17]{hp}
SkipUnlessUpdated[17]->Wait[18]{0.5}
RandomSelector[16]->WaitValueUpdate[19]{hp}
WaitValueUpdate[19]->RepeatUntilFail[20]
RepeatUntilFail[20]->Twice[21]
Twice[21]->B[10]
ReactiveSequence[1]->Selector[22]
Selector[22]->Timeout[23]{9}
Timeout[23]->Repeat[24]{2}
Repeat[24]->{C[25],B[10]}
]], 6, function()
      leaves { A = "SR", B = "RSF" }
      conditions { C = "SFS" }
    end)
    assert.matches("WhileDoElse[11]->C[26]\n", out, 1, true) -- shared: its own
    assert.matches("Twice[21]->B[", out, 1, true)
    assert.matches("Inverter[5]->A[6]{who=bob,x=1}\n", out, 1, true)
    assert.matches("Repeat[24]->{C[25],B[", out, 1, true)
    assert.equal(6, #log)
  end)

  it("gives a node the page named its name as id", function()
    leaves { A = "S" }
    local tree = bt.tree(bt.sequence { name = "chase",
      bt.named("wait_1", bt.wait(2)), bt.named("A[3]", bt.action("A")) },
      { name = "g" })
    assert.equal("# g: written by Bonsai's edge-list exporter\n" ..
                 "Sequence[chase]\n" ..
                 "Sequence[chase]->Wait[wait_1]{2}\n" ..
                 "Sequence[chase]->A[3]\n", tree:export("edges"))
  end)

  it("refuses what an edge list cannot hold, naming the node", function()
    leaves { A = "S" }
    local function refusal(root)
      local ok, err = pcall(bt.tree(root, { name = "g" }).export,
                            bt.tree(root, { name = "g" }), "edges")
      assert.is_false(ok)
      return err
    end
    assert.equal("export edges: g/is_set[1]: 'is_set' has no edge-list " ..
                 "equivalent", refusal(bt.sequence { name = "g",
                   bt.is_set "k" }))
    assert.equal("export edges: g/A: 'skip_if' has no edge-list equivalent",
      refusal(bt.sequence { name = "g", bt.named("A",
        { type = "action", leaf = "A", skip_if = "hp < 3" }) }))
    assert.equal("export edges: g: 'wait' has no edge-list equivalent",
      refusal(bt.parallel { name = "g", wait = true, bt.action("A") }))
  end)
end)
