-- define_spec: node types of the game's own (API.md "Nodes of the game's
-- own"): bt.define and bt.node, and the importers (behavior3 classic and
-- current, BehaviorTree.CPP, edge lists) looking a name up among the game's
-- definitions and registered leaves before their own tables, passing the
-- file's attributes as args and its names as node names, and refusing a
-- name nobody knows with the place, the name and how to provide it.
-- Definitions last for the process: each test defines names of its own.
-- Then behavior3lua's sample trees (tests/trees/behavior3lua), loaded with
-- the nodes a game provides.
local bt = require "bonsai"
local cjson = require "cjson"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local function run(root, n)
  local a = bt.agent(bt.tree(root, { name = "T" }))
  local out = {}
  for i = 1, n or 1 do out[i] = t:step(a, 1) end
  return table.concat(out, " / "), a
end

local function import_error(text, format, file)
  local ok, msg = pcall(bt.import, text, format, { file = file })
  assert.is_false(ok)
  return msg
end

describe("bt.define and bt.node", function()
  it("builds a node from args and children already built", function()
    local seen
    bt.define("Twice", function(args, children)
      seen = args
      return bt.sequence { children[1], children[1], name = "twice" }
    end)
    local n = bt.node("Twice", { k = 1 }, { t:action("A", "S") })
    assert.same({ k = 1 }, seen)
    assert.equal("success | enter A; tick A; exit A success; enter A; " ..
                 "tick A; exit A success", run(n))
  end)

  it("names the node by args.name unless the builder named it", function()
    bt.define("Plain", function(_, children) return bt.invert(children[1]) end)
    bt.define("Named", function(_, children)
      return bt.invert { name = "mine", children[1] }
    end)
    assert.equal("given", bt.node("Plain", { name = "given" },
                                  { t:action("A", "S") }).name)
    assert.equal("mine", bt.node("Named", { name = "given" },
                                 { t:action("A", "S") }).name)
    -- a builder returning the same table each time: only the copy is named
    local shared = bt.action(function() return true end)
    bt.define("Shared", function() return shared end)
    local a, b = bt.node("Shared", { name = "a" }), bt.node("Shared")
    assert.equal("a", a.name)
    assert.is_nil(b.name)
    assert.is_nil(shared.name)
  end)

  it("a later bt.define changes later definitions, not built trees",
     function()
    bt.define("Flip", function() return bt.action(function() return true end) end)
    local tree = bt.tree(bt.node("Flip"), { name = "flip" })
    bt.define("Flip", function() return bt.action(function() return false end) end)
    assert.equal(bt.SUCCESS, bt.agent(tree):tick(1))
    assert.equal(bt.FAILURE, bt.agent(bt.tree(bt.node("Flip"))):tick(1))
  end)

  it("refuses unknown names, bad arguments and builders that return no node",
     function()
    assert.has_error(function() bt.node("NeverDefined") end,
      "bt.node: no node type defined as 'NeverDefined' (bt.define it)")
    assert.has_error(function() bt.define("", print) end)
    assert.has_error(function() bt.define("X", 1) end)
    bt.define("Broken", function() return 42 end)
    assert.has_error(function() bt.node("Broken") end,
      "bt.define 'Broken': the builder returned number (a node expected)")
    bt.define("Raw", function() return { type = "action", fn = print } end)
    assert.equal("action", bt.node("Raw").type)
  end)

  it("checks what a definition builds like any other tree", function()
    bt.define("Loop", function()
      local s = bt.sequence {}
      s[1] = s
      return s
    end)
    assert.matches("a node cannot contain itself",
                   trace.tree_error(bt.node("Loop")))
  end)
end)

describe("importers look the game's names up first", function()
  it("BehaviorTree.CPP: a defined ID gets its attributes as written, its "
     .. "children and its name", function()
    local seen
    bt.define("RecoveryNodeX", function(args, children)
      seen = args
      return bt.selector { children[1], children[2] }
    end)
    t:register { Work = "F", Fix = "S" }
    local root = bt.import([[
<root BTCPP_format="4"><BehaviorTree ID="M">
  <RecoveryNodeX name="recover" number_of_retries="2" goal="{target}">
    <Work/><Fix/>
  </RecoveryNodeX>
</BehaviorTree></root>]], "btcpp", { file = "r.xml" })
    assert.same({ name = "recover", number_of_retries = "2",
                  goal = "{target}" }, seen)
    assert.equal("recover", root.name)
    assert.equal("success | enter Work; tick Work; exit Work failure; " ..
                 "enter Fix; tick Fix; exit Fix success", run(root))
  end)

  it("BehaviorTree.CPP: a defined or registered name wins over a built-in",
     function()
    bt.define("KeepRunningUntilFailure", function(_, children)
      return bt.force_success(children[1])
    end)
    t:register { W = "F", AlwaysFailure = "S" }
    local root = bt.import([[
<root BTCPP_format="4"><BehaviorTree ID="M"><Sequence>
  <KeepRunningUntilFailure><W/></KeepRunningUntilFailure><AlwaysFailure/>
</Sequence></BehaviorTree></root>]], "btcpp", { file = "w.xml" })
    assert.equal("success | enter W; tick W; exit W failure; " ..
                 "enter AlwaysFailure; tick AlwaysFailure; " ..
                 "exit AlwaysFailure success", run(root))
  end)

  it("BehaviorTree.CPP: an unknown control is refused with how to provide it",
     function()
    t:register { A = "S" }
    assert.equal("u.xml:1:45: node 'PipelineSequenceY': unknown control " ..
      "node (a control or decorator of the game's own: bt.define it)",
      import_error('<root BTCPP_format="4"><BehaviorTree ID="M">' ..
                   '<PipelineSequenceY><A/><A/></PipelineSequenceY>' ..
                   '</BehaviorTree></root>', "btcpp", "u.xml"))
  end)

  it("behavior3 classic: a defined name gets properties, children, title",
     function()
    local seen
    bt.define("MemPriority", function(args, children)
      seen = args
      return bt.sequence { children[1], children[2] }
    end)
    t:register { A = "S", B = "S" }
    local root = bt.import(cjson.encode {
      id = "T", title = "T", root = "1",
      nodes = {
        ["1"] = { id = "1", name = "MemPriority", title = "both",
                  properties = { n = 3 }, children = { "2", "3" } },
        ["2"] = { id = "2", name = "A", title = "A", properties = {} },
        ["3"] = { id = "3", name = "B", title = "B", properties = {} },
      } }, "behavior3", { file = "c.json" })
    assert.same({ n = 3, name = "both" }, seen)
    assert.equal("both", root.name)
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", run(root))
  end)

  it("behavior3 current: Log registered, Cmp defined, both win", function()
    local logged = {}
    bt.register("Log", function(_, _, args)
      logged[#logged + 1] = args.message
      return true
    end)
    bt.define("Cmp", function(args)
      local input = args.input and args.input[1]
      for op, sym in pairs { lt = "<", gt = ">", eq = "==", ne = "~=",
                             le = "<=", ge = ">=" } do
        if args[op] ~= nil then return bt.check(input, sym, args[op]) end
      end
      error("Cmp needs a comparison")
    end)
    local root = bt.import(cjson.encode { version = "1.8.0", name = "T",
      root = { id = 1, name = "Sequence", children = {
        { id = 2, name = "Log", args = { message = "hi" } },
        { id = 3, name = "Cmp", desc = "hp low", args = { lt = 50 },
          input = { "hp" } },
      } } }, "behavior3", { file = "n.json" })
    local a = bt.agent(bt.tree(root, { name = "T" }),
                       { blackboard = { hp = 20 } })
    assert.equal(bt.SUCCESS, a:tick(1))
    a.bb.hp = 80
    assert.equal(bt.FAILURE, a:tick(1))
    assert.same({ "hi", "hi" }, logged)
    assert.equal("hp low", root[2].name)
  end)

  it("behavior3 current: a builder's error names the place", function()
    assert.matches("e.json: %$.root: node 'Cmp': .*Cmp needs a comparison",
      import_error(cjson.encode { name = "T", root = { id = 1, name = "Cmp",
        args = {}, input = { "hp" } } }, "behavior3", "e.json"))
  end)

  it("edge lists: a defined type gets its {param} as written and its label",
     function()
    local seen
    bt.define("Chance", function(args, children)
      seen = args
      return bt.force_failure(children[1])
    end)
    t:register { Act = "S" }
    local root = bt.import("Chance[1]{0.25}\nChance[1]->Act[2]\n", "edges",
                           { file = "e.bt" })
    assert.same({ "0.25", name = "Chance[1]" }, seen)
    assert.equal("Chance[1]", root.name)
    assert.equal("failure | enter Act; tick Act; exit Act success", run(root))
  end)
end)

describe("behavior3lua's sample workspace (tests/trees/behavior3lua)", function()
  local log
  local function note(s) log[#log + 1] = s end
  before_each(function()
    log = {}
    -- the leaves a game provides under the names the trees use
    bt.register("Log", function(_, _, args) note(args.message) return true end)
    bt.register("GetHp", function(a, bb, args)
      bb[args.output[1]] = a.owner.hp
      return true
    end)
    bt.register("FindEnemy", function(a, bb, args)
      local d = a.owner.enemy
      if d == nil or d > args.w then return false end
      bb[args.output[1]] = "enemy at " .. d
      return true
    end)
    bt.register("Attack", function(_, bb, args)
      note("attack " .. bb[args.input[1]])
      return true
    end)
    bt.register("MoveToTarget", function() note("chase") return true end)
    bt.register("MoveToPos", function(_, _, args)
      note("go to " .. args.x .. "," .. args.y)
      return true
    end)
    bt.register("Idle", function() return bt.RUNNING end)
    -- Listen: the game hooks the handler on its event; in the tree, success
    bt.define("Listen", function(args, children)
      return bt.action(function()
        note("listen " .. args.builtin .. " (" .. #children .. ")")
        return true
      end)
    end)
    -- Check: the game's own reading of "key op number"
    bt.define("Check", function(args)
      local key, op, v = args.value:match("^(%w+)%s*([<>=~]+)%s*(%S+)$")
      return bt.check(key, op, tonumber(v))
    end)
  end)

  it("hero.json: its listeners once, then attack, chase or retreat",
     function()
    local tree = assert(bt.load("tests/trees/behavior3lua/hero.json"))
    local owner = { hp = 100 }
    local a = bt.agent(tree, { owner = owner })
    assert.equal(bt.SUCCESS, a:tick(1))
    assert.same({ "listen beforeRunTree (1)", "listen afterRunTree (1)",
                  "listen treeInterrupted (1)", "go to 0,0" }, log)
    log = {}
    owner.enemy = 500
    assert.equal(bt.SUCCESS, a:tick(1))
    assert.same({ "chase" }, log) -- Once does not run its listeners again
    log = {}
    owner.enemy = 50
    assert.equal(bt.RUNNING, a:tick(1)) -- attack, then Wait 10
    assert.same({ "attack enemy at 50" }, log)
    assert.same({ "英雄测试AI", "攻击", "wait[3]" }, a:running()) -- desc names
  end)

  it("monster.json: attacks above half health, runs below", function()
    local tree = assert(bt.load("tests/trees/behavior3lua/monster.json"))
    local owner = { hp = 80 }
    local a = bt.agent(tree, { owner = owner })
    assert.equal(bt.RUNNING, a:tick(1))
    assert.same({ "Attack!" }, log)
    log = {}
    local b = bt.agent(tree, { owner = { hp = 20 } })
    assert.equal(bt.SUCCESS, b:tick(1))
    assert.same({ "Run!", "if true" }, log)
  end)
end)
