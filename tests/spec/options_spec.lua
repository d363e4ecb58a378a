-- options_spec: every option table is checked against what its node or
-- function takes (docs/ERRORS.md): an unknown key is a definition error
-- naming the node and the key, with the key it likely meant. The keys a
-- node takes come from the kind table (core.KINDS[i].keys); this spec walks
-- it, so a kind added without an example here fails.
local bt = require "bonsai"
local core = require "bonsai.core"

local function ok() return "success" end

local function refused(f, ...)
  local good, msg = pcall(f, ...)
  assert(not good, "expected an error")
  return tostring(msg)
end

local function tree_error(root, opts)
  return refused(bt.tree, root, opts)
end

local ex = require "helpers.examples"
local examples, leaf = ex.examples, ex.leaf

local function words(s)
  local t = {}
  for w in s:gmatch("%S+") do t[#t + 1] = w end
  return t
end

describe("the keys of a node table", function()
  it("come from the kind table: every kind lists its keys", function()
    for _, k in ipairs(core.KINDS) do
      local keys = words(k.keys)
      assert.are.equal("type", keys[1], k.name)
      for _, p in ipairs(k.params) do
        assert.is_truthy((" " .. k.keys .. " "):find(" " .. p .. " ", 1, true),
                         k.name .. " lists its parameter " .. p)
      end
    end
  end)

  for _, k in ipairs(core.KINDS) do
    if k.class ~= "hidden" then
      it("of a " .. k.name .. ": each misspelt key is refused with the "
         .. "key meant", function()
        local make = assert(examples[k.name], "no example of a " .. k.name)
        assert.is_truthy(bt.tree(make()), "the example compiles")
        for _, key in ipairs(words(k.keys)) do
          local n = make()
          n[key .. key:sub(-1)] = 1
          local msg = tree_error(n)
          assert.matches("'" .. k.name .. "' has no option '" .. key
                         .. key:sub(-1) .. "' %(did you mean '" .. key
                         .. "'%?%)", msg)
        end
      end)
    end
  end

  it("names the node by its path and the tree", function()
    assert.equal("tree 'T': patrol/walk: 'repeater' has no option 'count' "
                 .. "(did you mean 'times'?)",
                 tree_error(bt.sequence { name = "patrol",
                   bt.repeater { name = "walk", count = 3, leaf() } },
                   { name = "T" }))
    assert.equal("tree 'T': s/action[2]: 'action' has no option 'enetr' "
                 .. "(did you mean 'enter'?)",
                 tree_error(bt.sequence { name = "s", leaf(),
                   bt.action { tick = ok, enetr = ok } }, { name = "T" }))
  end)

  it("the issue's typos", function()
    assert.matches("'guard' has no option 'abrot' %(did you mean 'abort'%?%)",
      tree_error(bt.guard { bt.is_set "k", abrot = "both", leaf() }))
    assert.matches("'parallel' has no option 'succes' %(did you mean "
                   .. "'success'%?%)",
      tree_error(bt.parallel { succes = "one", leaf(), leaf() }))
    assert.matches("'repeater' has no option 'count' %(did you mean "
                   .. "'times'%?%)", tree_error(bt.repeater { count = 3, leaf() }))
    assert.matches("'retry' has no option 'num_attempts' %(did you mean "
                   .. "'times'%?%)",
                   tree_error(bt.retry { num_attempts = 3, leaf() }))
  end)

  it("without a near key lists the keys the node takes", function()
    assert.matches("'invert' has no option 'colour' %(it takes: type name "
                   .. "utility failure_if success_if skip_if run_while "
                   .. "on_halted on_failure on_success post%)",
                   tree_error(bt.invert { colour = 1, leaf() }))
  end)

  it("refuse keys that are no names and no places of children", function()
    assert.matches("keys are names and places of children %(got a boolean",
                   tree_error(bt.sequence { [true] = 1, leaf() }))
    assert.matches("keys are names and places of children %(got a number",
                   tree_error(bt.sequence { [1.5] = 1, leaf() }))
    assert.matches("'wait' is a leaf: it takes no children$",
                   tree_error({ type = "wait", seconds = 1, leaf() }))
    assert.matches("'action' is a leaf: it takes no children %(its function "
                   .. "goes in fn or tick: bt.action%(f%), bt.action{ tick = "
                   .. "f }%)", tree_error(bt.action { ok }))
  end)

  it("a nil hole in the children is named, not 'needs children'", function()
    local x
    assert.matches("'sequence': its child 1 is nil %(a misspelt variable%?%)",
                   tree_error(bt.sequence { x, leaf() }))
    assert.matches("'selector': its child 2 is nil",
                   tree_error(bt.selector { leaf(), x, leaf() }))
  end)

  it("conditions must be a list: one node is refused", function()
    assert.matches("'conditions' is a list: write conditions = { cond }",
      tree_error(bt.filter { conditions = bt.is_set "x", leaf() }))
    assert.matches("'conditions' is a list",
      tree_error(bt.monitor { conditions = bt.is_set "x", leaf() }))
  end)

  it("an unknown node type suggests the kind meant", function()
    assert.matches("unknown node type 'sequnce' %(did you mean "
                   .. "'sequence'%?%)", tree_error({ type = "sequnce" }))
    assert.matches("unknown node type 'ReactiveFallback' %(did you mean "
                   .. "'reactive_selector'%?%)",
                   tree_error({ type = "ReactiveFallback", leaf() }))
  end)

  it("from the builder are checked the same way", function()
    local msg = refused(function()
      return bt.builder():repeater { count = 3 }:action(ok):build()
    end)
    assert.matches("'repeater' has no option 'count' %(did you mean "
                   .. "'times'%?%)", msg)
  end)

  it("of a node read from a file are checked the same way", function()
    local root = bt.import([[return bt.sequence { nmae = "x",
                             bt.action(function() return true end) }]], "lua")
    assert.matches("'sequence' has no option 'nmae' %(did you mean "
                   .. "'name'%?%)", tree_error(root))
  end)
end)

describe("option tables", function()
  it("bt.tree", function()
    assert.equal("bt.tree has no option 'nmae' (did you mean 'name'?)",
                 tree_error(leaf(), { nmae = "x" }))
    assert.equal("bt.tree has no option 'max_node' (did you mean "
                 .. "'max_nodes'?)", tree_error(leaf(), { max_node = 10 }))
    assert.matches("bt.tree: the options are named %(got a number key%)",
                   tree_error(leaf(), { 1 }))
  end)

  it("tree:reload", function()
    local tree = bt.tree(leaf(), { name = "R" })
    local good, err = tree:reload(leaf(), { priorty = {} })
    assert.is_nil(good)
    assert.equal("tree:reload has no option 'priorty' (did you mean "
                 .. "'priority'?)", err)
  end)

  it("bt.agent", function()
    local tree = bt.tree(leaf())
    assert.equal("bt.agent has no option 'blackbord' (did you mean "
                 .. "'blackboard'?)",
                 refused(bt.agent, tree, { blackbord = {} }))
    assert.equal("bt.agent has no option 'ownr' (did you mean 'owner'?)",
                 refused(bt.agent, tree, { ownr = {} }))
  end)

  it("bt.tick_all", function()
    local a = bt.agent(bt.tree(leaf()))
    assert.equal("bt.tick_all has no option 'budjet' (did you mean "
                 .. "'budget'?)", refused(bt.tick_all, { a }, 1,
                                          { budjet = 1 }))
  end)

  it("bt.subtree", function()
    local inner = bt.tree(leaf(), { name = "inner" })
    assert.matches("bt.subtree has no option 'remp' %(did you mean "
                   .. "'remap'%?%)", refused(bt.subtree, inner, { remp = {} }))
  end)

  it("the lifecycle table of bt.register", function()
    assert.equal("bt.register 'x': the leaf has no option 'exti' (did you "
                 .. "mean 'exit'?)",
                 refused(bt.register, "x", { tick = ok, exti = ok }))
  end)

  it("bt.import, per format", function()
    assert.matches("bt.import %(btcpp%) has no option 'mian' %(did you mean "
                   .. "'main'%?%)", refused(bt.import, "<root/>", "btcpp",
                                            { mian = "x" }))
    assert.matches("bt.import %(behavior3%) has no option 'tre' %(did you "
                   .. "mean 'tree'%?%)", refused(bt.import, "{}", "behavior3",
                                                 { tre = "x" }))
    assert.matches("bt.import %(edges%) has no option 'fiel' %(did you mean "
                   .. "'file'%?%)", refused(bt.import, "A[1]", "edges",
                                            { fiel = "x" }))
    assert.matches("unknown format 'btcp' %(did you mean 'btcpp'%?%)",
                   refused(bt.import, "A[1]", "btcp"))
  end)

  it("bt.load, per the format of the file's built-in loader", function()
    assert.matches("bt.load %(btcpp%) has no option 'mian' %(did you mean "
                   .. "'main'%?%)", refused(bt.load, "t.xml", { mian = "x" }))
    assert.matches("bt.load %(behavior3%) has no option 'tre' ",
                   refused(bt.load, "t.json", { tre = "x" }))
    assert.matches("bt.load %(lua%) has no option 'main' ",
                   refused(bt.load, "t.lua", { main = "x" }))
    -- a loader of the game's own takes the options it likes
    local seen
    bt.loaders[".seq"] = function(_, opts)
      seen = opts.colour
      return bt.action(ok)
    end
    assert.truthy(bt.load("t.seq", { colour = "red" }))
    bt.loaders[".seq"] = nil
    assert.equal("red", seen)
  end)
end)

describe("a name bonsai does not have", function()
  it("suggests the constructor meant", function()
    assert.matches("bonsai has no 'sequnce': did you mean bt.sequence%?",
                   refused(function() return bt.sequnce {} end))
  end)

  it("points other runtimes' names to Bonsai's", function()
    local names = {
      fallback_star = "selector", reactive_fallback = "reactive_selector",
      ReactiveFallback = "reactive_selector", ["repeat"] = "repeater",
      retry_until_successful = "retry", RetryUntilSuccessful = "retry",
      sequence_star = "sequence", SequenceStar = "sequence",
      parallel_all = "parallel", Sequence = "sequence",
      Fallback = "fallback", Inverter = "inverter", MemSequence = "sequence",
      Succeeder = "force_success", Failer = "force_failure",
      MaxTime = "time_limit", Limiter = "limit", SimpleParallel = "parallel",
      TimeLimit = "time_limit", SubTree = "subtree", Loop = "repeater",
      OneShot = "run_once", KeepRunningUntilFailure =
        "keep_running_until_failure",
    }
    for other, ours in pairs(names) do
      assert.equal("bonsai has no '" .. other .. "': did you mean bt."
                   .. ours .. "?", (refused(function() return bt[other] end)
                   :gsub("^.-:%d+: ", "")))
    end
  end)

  it("suggests the constant meant for an ALL-CAPS name", function()
    assert.matches("bonsai has no 'SUCESS': did you mean bt.SUCCESS%?",
                   refused(function() return bt.SUCESS end))
    assert.matches("bonsai has no 'RUNING': did you mean bt.RUNNING%?",
                   refused(function() return bt.RUNING end))
  end)

  it("reads nil for a name near none, so bt.X == nil tests for it",
     function()
    assert.is_nil(bt.xyzzy)
    assert.is_nil(bt.PAUSED) -- a constant of some later version
    assert.is_true(bt.some_later_function == nil)
    assert.equal("success", bt.SUCCESS)
  end)

  it("leaves the module's own names alone", function()
    assert.is_function(bt.sequence)
    assert.is_function(bt.inverter)
    assert.is_nil(bt[1])
  end)
end)

describe("bt.named", function()
  it("with its arguments swapped says so", function()
    assert.equal('bt.named takes the name first: bt.named("n", node)',
                 (refused(bt.named, leaf(), "n"):gsub("^.-:%d+: ", "")))
  end)

  it("with a name and a node names it", function()
    assert.equal("n", bt.named("n", leaf()).name)
  end)
end)
