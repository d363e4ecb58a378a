-- edit_spec: the live page's editing commands (bonsai.debug.edit,
-- docs/DEBUGGER.md "Editing"), from Lua (bt.debug.command) and once over
-- HTTP: a tree's definition as data, tree operations checked as bt.tree
-- checks a definition (a broken edit refused with its place, the draft
-- unchanged), undo and redo, the migration's dry run over live agents,
-- apply and rollback with running nodes kept, saves to the tree's own file
-- in its format (Lua DSL, BT.CPP XML), never outside the watched folders,
-- refused when stale, seen once by the watcher.
local bt = require "bonsai"
local debugmod = require "bonsai.debug"
local socket = require "socket"
local cjson = require "cjson"

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir .. "/trees " .. dir .. "/other")

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end
local function readfile(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("*a")
  f:close()
  return t
end

local calls
bt.register("look", function() calls[#calls + 1] = "look"; return bt.SUCCESS end)
bt.register("walk", {
  enter = function() calls[#calls + 1] = "enter walk" end,
  tick = function() calls[#calls + 1] = "walk"; return bt.RUNNING end,
  abort = function() calls[#calls + 1] = "abort walk" end,
})
bt.register("run", {
  enter = function() calls[#calls + 1] = "enter run" end,
  tick = function() calls[#calls + 1] = "run"; return bt.RUNNING end,
  abort = function() calls[#calls + 1] = "abort run" end,
})
bt.register("strike", {
  enter = function() calls[#calls + 1] = "enter strike" end,
  tick = function() return bt.RUNNING end,
  abort = function() calls[#calls + 1] = "abort strike" end,
})

local GUARD = [[
return bt.selector { name = "guard",
  bt.sequence { name = "chase", bt.is_set "enemy",
    bt.named("strike", bt.action("strike")) },
  bt.sequence { name = "patrol",
    bt.named("look", bt.action("look")),
    bt.named("walk", bt.action("walk")),
  },
}
]]

local D, n = nil, 0
local function setup(text, ext)
  n = n + 1
  local path = write(dir .. "/trees/guard" .. n .. "." .. (ext or "lua"),
                     text or GUARD)
  local tree = assert(bt.load(path))
  assert(bt.watch(dir .. "/trees"))
  D = debugmod.new(bt)
  calls = {}
  return tree, path
end

-- The agents of a test, held (the debugger holds agents weakly: a game
-- that drops one sees it go from the page).
local held = {}
local function agent(tree, o)
  local a = bt.agent(tree, o)
  held[#held + 1] = a
  return a
end

after_each(function()
  if D then D.close() end
  D, held = nil, {}
end)

local function ok(r, err)
  assert(r, err)
  return r
end

-- The id of the node at path in a tree's data.
local function id(doc, path)
  local function go(d)
    if d.path == path then return d.id end
    for _, c in ipairs(d.children or {}) do
      local x = go(c)
      if x then return x end
    end
  end
  return assert(go(doc.root), "no node " .. path)
end

describe("bt.debug's editing commands", function()
  it("give a tree's definition as data with ids, paths and parameters",
     function()
    local tree = setup()
    local a = agent(tree)
    D.add(a)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    assert.equal(1, doc.version)
    assert.equal("lua", doc.format)
    assert.equal("guard/patrol/walk", doc.root.children[2].children[2].path)
    assert.same({ leaf = "walk" }, doc.root.children[2].children[2].params)
    assert.equal("is_set", doc.root.children[1].children[1].type)
    assert.same({ key = "enemy" }, doc.root.children[1].children[1].params)
    local pal = ok(D.command { cmd = "palette" })
    local byname = {}
    for _, p in ipairs(pal.palette) do byname[p.type] = p end
    assert.same({ { name = "seconds", type = "number" } }, byname.timeout.params)
    assert.equal("leaf", byname.walk.class)
    assert.is_nil(byname.priority) -- (hidden)
    local _, err = D.command { cmd = "tree", tree = "nope" }
    assert.equal("no tree 'nope' among the agents shown", err)
  end)

  it("refuse a broken edit with its place and keep the draft", function()
    local tree = setup()
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    local isset = id(doc, "guard/chase/is_set[1]")
    local r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "set", node = isset, key = "key", value = 3 } } }
    assert.is_nil(r)
    assert.matches("guard/chase/is_set%[1%]", err)
    r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "set", node = id(doc, "guard/patrol"),
                key = "skip_if", value = "hp <" } } }
    assert.is_nil(r)
    assert.matches("guard/patrol.*skip_if.*character 5", err)
    r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "insert", parent = 1,
                node = { type = "frobnicate" } } } }
    assert.is_nil(r)
    assert.equal("op 1 (insert, node 'guard'): no node type 'frobnicate' " ..
                 "(a kind, a bt.define'd type or a registered leaf)", err)
    r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "move", node = 1, parent = 2 } } }
    assert.is_nil(r)
    assert.matches("cannot move into itself", err)
    r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "delete", node = 99 } } }
    assert.is_nil(r)
    assert.matches("no node 99", err)
    -- a script's parse error, as the page types it
    local s = ok(D.command { cmd = "script", text = "hp := hp +" })
    assert.equal(11, s.at)
    assert.same({ ok = true }, D.command { cmd = "script", text = "hp := 1" })
    -- nothing changed
    assert.same(doc, ok(D.command { cmd = "tree", tree = tree.name }))
    -- a stale version is refused
    ok(D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "set", node = isset, key = "key", value = "foe" } } })
    r, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "set", node = isset, key = "key", value = "x" } } }
    assert.is_nil(r)
    assert.matches("stale edit.*version 2", err)
  end)

  it("insert, wrap, move, duplicate and delete, naming what they create " ..
     "so no sibling's path shifts; undo and redo", function()
    local tree = setup()
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "wrap", node = id(doc, "guard/patrol/walk"),
        with = { type = "timeout", params = { seconds = 5 } } },
      { op = "insert", parent = id(doc, "guard/chase"), index = 1,
        node = { type = "check", params = { key = "hp", op = ">",
                                             value = 20 } } },
      { op = "duplicate", node = id(doc, "guard/patrol/look") },
    } })
    assert.equal(2, doc.version)
    local chase = doc.root.children[1]
    assert.same({ "check_1", "is_set[1]", "strike" },
                { chase.children[1].name, chase.children[2].name,
                  chase.children[3].name })
    assert.equal("guard/chase/is_set[1]", chase.children[2].path)
    local patrol = doc.root.children[2]
    assert.same({ "look", "look_1", "timeout_1" },
                { patrol.children[1].path:match("[^/]+$"),
                  patrol.children[2].name, patrol.children[3].name })
    assert.equal("guard/patrol/timeout_1/walk",
                 patrol.children[3].children[1].path)
    -- move the timeout before look, delete the copy
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 2, ops = {
      { op = "move", node = id(doc, "guard/patrol/timeout_1"),
        parent = id(doc, "guard/patrol"), index = 1 },
      { op = "delete", node = id(doc, "guard/patrol/look_1") },
    } })
    assert.same({ "timeout_1", "look" }, { doc.root.children[2].children[1].name,
      doc.root.children[2].children[2].name })
    local undone = ok(D.command { cmd = "undo", tree = tree.name })
    assert.equal(3, #undone.root.children[2].children)
    local redone = ok(D.command { cmd = "redo", tree = tree.name })
    assert.equal(2, #redone.root.children[2].children)
    local _, err = D.command { cmd = "redo", tree = tree.name }
    assert.equal("nothing to redo", err)
  end)

  it("leave the game's tree the one bt.subtree finds by its name",
     function()
    local tree = setup()
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    -- each edit is checked by compiling the draft under the tree's name,
    -- and so is an extraction's probe: the draft (then nothing, once
    -- collected) would answer for the name
    ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "delete", node = id(doc, "guard/chase") },
      { op = "extract", node = id(doc, "guard/patrol/walk"), id = "w" } } })
    collectgarbage()
    collectgarbage()
    local user = bt.tree(bt.sequence { name = "user", bt.subtree(tree.name) },
                         { name = "user" })
    local paths = {}
    for _, nd in ipairs(user:nodes()) do paths[#paths + 1] = nd.path end
    assert.is_truthy(table.concat(paths, " "):find("guard/chase/strike", 1,
                                                     true))
  end)

  it("preview the migration over live agents, apply (running nodes kept, " ..
     "switched at the next tick) and roll back", function()
    local tree = setup()
    local agents = {}
    for i = 1, 5 do
      agents[i] = agent(tree, { blackboard = { enemy = i <= 2 or nil } })
      D.add(agents[i])
    end
    bt.tick_all(agents, 1)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    -- a guard in front of the strike: the chasers' strike moves under it
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "wrap", node = id(doc, "guard/chase/strike"),
        with = { type = "timeout", name = "limit", params = { seconds = 9 } } },
    } })
    local p = ok(D.command { cmd = "preview", tree = tree.name })
    assert.equal("3 agents keep guard/patrol/walk, " ..
                 "2 agents abort guard/chase/strike", p.summary)
    assert.same({ "guard", "guard/chase" }, p.agents[1].keep)
    assert.same({ "guard/chase/strike" }, p.agents[1].abort)
    -- nothing ran yet
    calls = {}
    local _, err = D.command { cmd = "apply", tree = tree.name, version = 1 }
    assert.matches("stale apply: the draft of tree '.-' is at version 2", err)
    ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    assert.same({}, calls) -- (at their next tick)
    bt.tick_all(agents, 1)
    -- the chasers abort the old strike and enter it under the timeout; the
    -- walkers keep walking (not entered again)
    local n_abort, n_enter, n_walk, n_enterwalk = 0, 0, 0, 0
    for _, c in ipairs(calls) do
      if c == "abort strike" then n_abort = n_abort + 1 end
      if c == "enter strike" then n_enter = n_enter + 1 end
      if c == "walk" then n_walk = n_walk + 1 end
      if c == "enter walk" then n_enterwalk = n_enterwalk + 1 end
    end
    assert.same({ 2, 2, 3, 0 }, { n_abort, n_enter, n_walk, n_enterwalk })
    assert.same({ "guard", "chase", "limit", "strike" }, agents[1]:running())
    -- rollback: the version before
    doc = ok(D.command { cmd = "rollback", tree = tree.name })
    assert.equal("strike", doc.root.children[1].children[2].name)
    calls = {}
    bt.tick_all(agents, 1)
    assert.same({ "guard", "chase", "strike" }, agents[1]:running())
    assert.same({ "guard", "patrol", "walk" }, agents[5]:running())
    _, err = D.command { cmd = "rollback", tree = tree.name }
    assert.equal("nothing applied to roll back", err)
  end)

  it("apply to one agent first (the others held on the version they run, " ..
     "tick by tick), then to all, and roll back from either state",
     function()
    local tree = setup()
    local agents = {}
    for i = 1, 3 do
      agents[i] = agent(tree)
      D.add(agents[i])
    end
    bt.tick_all(agents, 1) -- all three walk
    local function tick(i)
      calls = {}
      agents[i]:tick(1)
      return table.concat(calls, "; ")
    end
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    -- the walk runs the leaf "run" instead: a kept node, the new callbacks
    ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "set", node = id(doc, "guard/patrol/walk"), key = "leaf",
        value = "run" } } })
    local p = ok(D.command { cmd = "preview", tree = tree.name,
                             agents = { 2 } })
    assert.equal("1 agent keeps guard/patrol/walk", p.summary)
    assert.equal(2, p.agents[1].agent)
    local _, err = D.command { cmd = "apply", tree = tree.name, version = 2,
                               agents = { 9 } }
    assert.equal("no agent '9'", err)
    _, err = D.command { cmd = "apply", tree = tree.name, version = 2,
                         agents = "2" }
    assert.equal("agents must be a list of agent numbers", err)
    assert.is_false(tree:held()) -- (a refused apply holds nothing)
    doc = ok(D.command { cmd = "apply", tree = tree.name, version = 2,
                         agents = { 2 } })
    assert.same({ 1, 3 }, doc.held)
    assert.is_true(tree:held()) -- the tree held, agent 2 let through
    assert.is_true(agents[2]:passes())
    assert.is_false(agents[1]:passes())
    local _, v = tree:nodes()
    -- agent 2 switches at its next tick, its walk kept (not entered), on
    -- the new callbacks; 1 and 3 keep the old version's, tick after tick
    for _ = 1, 3 do
      assert.equal("walk", tick(1))
      assert.equal("run", tick(2))
      assert.equal("walk", tick(3))
    end
    assert.equal(v, select(2, tree:nodes(agents[2])))
    assert.is_not.equal(v, select(2, tree:nodes(agents[1])))
    assert.same({ "guard", "patrol", "walk" }, agents[2]:running())
    -- apply to all: the holds go, and 1 and 3 switch at their next tick
    doc = ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    assert.is_nil(doc.held)
    assert.is_false(tree:held())
    assert.equal("run", tick(1))
    assert.equal("run", tick(3))
    assert.equal(v, select(2, tree:nodes(agents[3])))
    assert.equal(1, doc.rollback) -- (the second apply reloaded nothing)
    -- roll back from there: everyone walks again, the walk kept
    doc = ok(D.command { cmd = "rollback", tree = tree.name })
    for i = 1, 3 do assert.equal("walk", tick(i)) end
    -- apply to one, then roll back while the others are held: the one
    -- goes back, the held ones stay on the version they run, and once
    -- released (apply to all) switch to the rolled-back version
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = doc.version,
                   ops = { { op = "set", node = id(doc, "guard/patrol/walk"),
                             key = "leaf", value = "run" } } })
    ok(D.command { cmd = "apply", tree = tree.name, version = doc.version + 1,
                   agents = { 3 } })
    assert.equal("walk", tick(1))
    assert.equal("run", tick(3))
    doc = ok(D.command { cmd = "rollback", tree = tree.name })
    assert.same({ 1, 2 }, doc.held)
    assert.equal("walk", tick(3))
    assert.equal("walk", tick(1))
    local _, back = tree:nodes()
    assert.is_not.equal(back, select(2, tree:nodes(agents[1])))
    doc = ok(D.command { cmd = "apply", tree = tree.name,
                         version = doc.version })
    assert.is_nil(doc.held)
    assert.equal("walk", tick(1))
    assert.equal(back, select(2, tree:nodes(agents[1])))
    -- a closed session lets no agent behind
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = doc.version,
                   ops = { { op = "set", node = id(doc, "guard/patrol/walk"),
                             key = "leaf", value = "run" } } })
    ok(D.command { cmd = "apply", tree = tree.name, version = doc.version + 1,
                   agents = { 1 } })
    assert.is_true(tree:held())
    D.close()
    D = nil
    assert.is_false(tree:held())
    assert.equal("run", tick(2))
  end)

  it("apply to one holds the agents the game never offered the session " ..
     "too; apply to all, rollback and save move them", function()
    local tree, path = setup()
    local shown, unseen = agent(tree), agent(tree) -- unseen: never D.add'd
    D.add(shown)
    local function tick(a)
      calls = {}
      a:tick(1)
      return table.concat(calls, "; ")
    end
    assert.equal("look; enter walk; walk", tick(shown))
    assert.equal("look; enter walk; walk", tick(unseen))
    local _, v1 = tree:nodes()
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "set", node = id(doc, "guard/patrol/walk"), key = "leaf",
        value = "run" } } })
    doc = ok(D.command { cmd = "apply", tree = tree.name, version = 2,
                         agents = { 1 } })
    assert.is_nil(doc.held) -- (the page lists the agents it shows)
    for _ = 1, 3 do -- the one chosen runs the draft; unseen stays, tick by tick
      assert.equal("run", tick(shown))
      assert.equal("walk", tick(unseen))
    end
    assert.equal(v1, select(2, tree:nodes(unseen)))
    assert.is_false(unseen:passes())
    -- rollback while held: the chosen one goes back, unseen stays where it
    -- was (the rolled-back version is the one it runs, in content)
    ok(D.command { cmd = "rollback", tree = tree.name })
    assert.equal("walk", tick(shown))
    assert.equal("walk", tick(unseen))
    assert.equal(v1, select(2, tree:nodes(unseen)))
    -- apply to all: unseen switches at its next tick, its walk kept
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = doc.version,
                   ops = { { op = "set", node = id(doc, "guard/patrol/walk"),
                             key = "leaf", value = "run" } } })
    ok(D.command { cmd = "apply", tree = tree.name, version = doc.version + 1,
                   agents = { 1 } })
    assert.equal("walk", tick(unseen))
    doc = ok(D.command { cmd = "apply", tree = tree.name,
                         version = doc.version + 1 })
    assert.is_false(tree:held())
    assert.equal("run", tick(unseen)) -- (walk kept: not entered, not aborted)
    assert.equal(select(2, tree:nodes()), select(2, tree:nodes(unseen)))
    assert.same({ "guard", "patrol", "walk" }, unseen:running())
    -- a save while the tree is held: the file is written, the tree runs it,
    -- and unseen stays on its version until apply to all
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = doc.version,
                   ops = { { op = "set", node = id(doc, "guard/patrol/walk"),
                             key = "leaf", value = "walk" } } })
    doc = ok(D.command { cmd = "apply", tree = tree.name,
                         version = doc.version + 1, agents = { 1 } })
    assert.equal("walk", tick(shown))
    assert.equal("run", tick(unseen))
    ok(D.command { cmd = "save", tree = tree.name, version = doc.version,
                   stamp = doc.stamp })
    assert.matches('"walk"', readfile(path))
    assert.equal("run", tick(unseen))
    assert.is_true(tree:held())
    D.close() -- a page that goes away releases the tree
    D = nil
    assert.is_false(tree:held())
    assert.equal("walk", tick(unseen))
  end)

  it("change a script's code, the node keeping its name and place, " ..
     "then save it as bt.script", function()
    local tree, path = setup([[
return bt.sequence { name = "count",
  bt.named("step", bt.script("n := n + 1")),
  bt.named("look", bt.action("look")),
}
]])
    local a = agent(tree, { blackboard = { n = 0 } })
    D.add(a)
    a:tick(1)
    assert.equal(1, a.bb.n)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    local step = id(doc, "count/step")
    assert.equal("n := n + 1", doc.root.children[1].script)
    -- a script that does not parse is refused with its place
    local _, err = D.command { cmd = "edit", tree = tree.name, version = 1,
      ops = { { op = "set", node = step, key = "code", value = "n := " } } }
    assert.matches("count/step: at character 6 of \"n := \"", err)
    -- twice in one batch: the second set finds the node the first made
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "set", node = step, key = "code", value = "n := n + 5" },
      { op = "set", node = step, key = "code", value = "n := n + 10" } } })
    local d = doc.root.children[1]
    assert.same({ "step", "count/step", "n := n + 10", "script" },
                { d.name, d.path, d.script, d.kind })
    assert.equal("look", doc.root.children[2].name)
    ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    a:tick(1)
    assert.equal(11, a.bb.n)
    _, err = D.command { cmd = "save", tree = tree.name, version = 1,
                         stamp = doc.stamp }
    assert.matches("stale save: the draft of tree '.-' is at version 2", err)
    ok(D.command { cmd = "save", tree = tree.name, version = 2,
                   stamp = doc.stamp })
    local text = readfile(path)
    assert.truthy(text:find('bt.named("step", bt.script("n := n + 10"))', 1,
                            true), text)
  end)

  it("save a Lua tree as canonical Lua DSL, applied once", function()
    local tree, path = setup()
    local a = agent(tree)
    D.add(a)
    a:tick(1)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "insert", parent = id(doc, "guard/patrol"), index = 1,
        node = { type = "wait", params = { seconds = 0.5 } } },
    } })
    doc = ok(D.command { cmd = "save", tree = tree.name, version = 2,
                         stamp = doc.stamp })
    assert.is_true(doc.applied)
    assert.equal([[
-- Written by the live page (bonsai.debug.edit).
return {
  type = "selector",
  name = "guard",
  {
    type = "sequence",
    name = "chase",
    { type = "is_set", key = "enemy" },
    { type = "action", name = "strike", leaf = "strike" },
  },
  {
    type = "sequence",
    name = "patrol",
    { type = "wait", name = "wait_1", seconds = 0.5 },
    { type = "action", name = "look", leaf = "look" },
    { type = "action", name = "walk", leaf = "walk" },
  },
}
]], readfile(path))
    -- the watcher sees it as loaded already: not applied a second time
    local reloaded = bt.poll()
    assert.same({}, reloaded)
    -- and the file loads as it was saved
    assert.truthy(bt.reload(path))
  end)

  it("save a BehaviorTree.CPP tree through its exporter", function()
    local tree, path = setup([[
<root BTCPP_format="4" main_tree_to_execute="Guard">
  <BehaviorTree ID="Guard">
    <Sequence name="patrol">
      <look/>
      <walk/>
    </Sequence>
  </BehaviorTree>
</root>
]], "xml")
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    assert.equal("btcpp", doc.format)
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "insert", parent = 1, index = 1,
        node = { type = "wait", params = { seconds = 2 } } } } })
    ok(D.command { cmd = "save", tree = tree.name, version = 2,
                   stamp = doc.stamp })
    local text = readfile(path)
    assert.matches('<Sleep msec="2000" name="wait_1"', text, 1, true)
    local t2 = assert(bt.load(path))
    assert.equal("wait", t2:nodes()[2].type)
  end)

  it("extract a subtree: a tree of its own, a subtree in its place, " ..
     "applied, saved as Lua and as BT.CPP XML, undone", function()
    local tree, path = setup()
    local a = agent(tree, { blackboard = { enemy = true } })
    local b = agent(tree)
    D.add(a)
    D.add(b)
    bt.tick_all({ a, b }, 1)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    local patrol = id(doc, "guard/patrol")
    -- refused: the root, a name taken, a name that is none
    local bad = {
      { id(doc, "guard"), "x", "op 1 (extract, node 'guard'): the root " ..
        "cannot be extracted (it is the tree)" },
      { patrol, tree.name, "op 1 (extract, node 'guard/patrol'): a tree " ..
        "named '" .. tree.name .. "' exists" },
      { patrol, "1x", "op 1 (extract, node 'guard/patrol'): id must be a " ..
        "tree's name (a letter or _, then letters, digits, _ . -)" },
    }
    for _, c in ipairs(bad) do
      local _, err = D.command { cmd = "edit", tree = tree.name, version = 1,
                                 ops = { { op = "extract", node = c[1],
                                           id = c[2] } } }
      assert.equal(c[3], err)
    end
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "extract", node = patrol, id = "patrolling" } } })
    local sub = doc.root.children[2]
    assert.same({ "subtree", "patrol", "guard/patrol", { tree = "patrolling" } },
                { sub.type, sub.name, sub.path, sub.params })
    assert.is_nil(sub.children)
    -- the walker's running nodes inside the extracted part gain a level
    -- (guard/patrol/patrol/walk): aborted; the chaser keeps its strike
    local p = ok(D.command { cmd = "preview", tree = tree.name })
    assert.equal("1 agent aborts guard/patrol/walk, " ..
                 "1 agent keeps guard/chase/strike", p.summary)
    ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    calls = {}
    bt.tick_all({ a, b }, 1)
    assert.same({ "abort walk", "look", "enter walk", "walk" }, calls)
    assert.same({ "guard", "patrol", "patrol", "walk" }, b:running())
    assert.same({ "guard", "chase", "strike" }, a:running())
    -- saved as Lua: the tree made by bt.tree before the root, by its local
    doc = ok(D.command { cmd = "save", tree = tree.name, version = 2,
                         stamp = doc.stamp })
    assert.equal([[
-- Written by the live page (bonsai.debug.edit).
local patrolling = bt.tree({
  type = "sequence",
  name = "patrol",
  { type = "action", name = "look", leaf = "look" },
  { type = "action", name = "walk", leaf = "walk" },
}, { name = "patrolling" })
return {
  type = "selector",
  name = "guard",
  {
    type = "sequence",
    name = "chase",
    { type = "is_set", key = "enemy" },
    { type = "action", name = "strike", leaf = "strike" },
  },
  { type = "subtree", name = "patrol", tree = patrolling },
}
]], readfile(path))
    calls = {}
    bt.tick_all({ a, b }, 1) -- the file's version: the same paths, kept
    assert.same({ "walk" }, calls)
    assert.same({ "tree", "patrolling" },
                { "tree", doc.root.children[2].params.tree })
    -- undone (the draft), and extracted again under the same name
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    local undone = ok(D.command { cmd = "undo", tree = tree.name })
    assert.equal("sequence", undone.root.children[2].type)
    ok(D.command { cmd = "edit", tree = tree.name, version = undone.version,
                   ops = { { op = "extract", id = "patrolling",
                             node = id(undone, "guard/patrol") } } })
  end)

  it("write the trees of subtrees as locals whose names are no Lua word",
     function()
    local lua_text = require("bonsai.debug.edit").lua_text
    local a = bt.tree({ type = "action", leaf = "look" }, { name = "bt" })
    local b = bt.tree({ type = "action", leaf = "look" }, { name = "end" })
    local text = lua_text({ type = "sequence",
      { type = "subtree", tree = a }, { type = "subtree", tree = b } }, {},
      {}, nil)
    assert.equal([[
-- Written by the live page (bonsai.debug.edit).
local bt_2 = bt.tree({ type = "action", leaf = "look" }, { name = "bt" })
local end_2 = bt.tree({ type = "action", leaf = "look" }, { name = "end" })
return {
  type = "sequence",
  { type = "subtree", tree = bt_2 },
  { type = "subtree", tree = end_2 },
}
]], text)
    local root = bt.import(text, "lua")
    assert.equal("sequence/end/look", bt.tree(root):nodes()[5].path)
  end)

  it("extract a subtree of a BT.CPP tree: a BehaviorTree of its own and " ..
     "a SubTree in its place", function()
    local tree, path = setup([[
<root BTCPP_format="4" main_tree_to_execute="Guard">
  <BehaviorTree ID="Guard">
    <Fallback name="guard">
      <Sequence name="patrol">
        <look/>
        <walk/>
      </Sequence>
    </Fallback>
  </BehaviorTree>
</root>
]], "xml")
    local a = agent(tree)
    D.add(a)
    a:tick(1)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "extract", node = id(doc, "guard/patrol"), id = "Patrol" } } })
    ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    a:tick(1)
    assert.same({ "guard", "patrol", "patrol", "walk" }, a:running())
    doc = ok(D.command { cmd = "save", tree = tree.name, version = 2,
                         stamp = doc.stamp })
    local text = readfile(path)
    assert.matches([[
    <Fallback name="guard">
      <SubTree ID="Patrol" _autoremap="true" name="patrol"/>
    </Fallback>
  </BehaviorTree>
  <BehaviorTree ID="Patrol">
    <Sequence name="patrol">
      <look/>
      <walk/>
    </Sequence>
  </BehaviorTree>]], text, 1, true)
    -- loaded back, the SubTree of the file is expanded in place (as the
    -- format's own are): the paths of before the extraction
    calls = {}
    a:tick(1)
    assert.same({ "abort walk", "look", "enter walk", "walk" }, calls)
    assert.same({ "guard", "patrol", "walk" }, a:running())
    local t2 = assert(bt.load(path))
    assert.equal("guard/patrol/walk", t2:nodes()[4].path)
  end)

  it("save an edge-list tree through its exporter", function()
    local tree, path = setup([[
# patrol
Sequence[1]
Sequence[1]->look[2]
Sequence[1]->walk[3]
]], "bt")
    local a = agent(tree)
    D.add(a)
    a:tick(1)
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    assert.equal("edges", doc.format)
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "insert", parent = 1, index = 1,
        node = { type = "wait", params = { seconds = 2 } } },
      { op = "wrap", node = id(doc, "Sequence[1]/walk[3]"),
        with = { type = "timeout", params = { seconds = 9 } } } } })
    ok(D.command { cmd = "save", tree = tree.name, version = 2,
                   stamp = doc.stamp })
    assert.equal("# patrol\n" .. -- (the file's own comment kept)
                 "Sequence[1]\n" ..
                 "Sequence[1]->Wait[wait_1]{2}\n" ..
                 "Sequence[1]->look[2]\n" ..
                 "Sequence[1]->Timeout[timeout_1]{9}\n" ..
                 "Timeout[timeout_1]->walk[3]\n", readfile(path))
    -- the file's names (Type[id]) are the nodes' own: walk[3] moved
    -- under the timeout (a new path) is aborted, the sequence starts over
    calls = {}
    a:tick(1)
    assert.same({ "abort walk" }, calls)
    assert.same({ "Sequence[1]", "Wait[wait_1]" }, a:running())
    -- a node the format cannot hold: the save is refused, the file kept
    doc = ok(D.command { cmd = "tree", tree = tree.name })
    doc = ok(D.command { cmd = "edit", tree = tree.name,
                         version = doc.version, ops = {
      { op = "insert", parent = 1, node = { type = "is_set",
                                            params = { key = "k" } } } } })
    local _, err = D.command { cmd = "save", tree = tree.name,
                               version = doc.version, stamp = doc.stamp }
    assert.equal("cannot save: export edges: Sequence[1]/is_set_1: " ..
                 "'is_set' has no edge-list equivalent", err)
  end)

  it("save a behavior3 tree through its exporter", function()
    local tree, path = setup([[
{
  "title": "patrol", "root": "a",
  "nodes": {
    "a": { "id": "a", "name": "Sequence", "title": "patrol",
           "properties": {}, "children": ["b", "c"] },
    "b": { "id": "b", "name": "look", "title": "look", "properties": {} },
    "c": { "id": "c", "name": "walk", "title": "walk", "properties": {} }
  }
}
]], "json")
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    assert.equal("behavior3", doc.format)
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "move", node = 3, parent = 1, index = 1 } } })
    -- the unnamed node moved keeps its name (its path moves, no more)
    assert.equal("patrol/walk", doc.root.children[1].path)
    ok(D.command { cmd = "save", tree = tree.name, version = 2,
                   stamp = doc.stamp })
    local saved = cjson.decode(readfile(path))
    local root = saved.nodes[saved.root]
    assert.equal("Sequence", root.name)
    assert.same({ "look", "walk" }, { saved.nodes[root.children[2]].name,
                                      saved.nodes[root.children[1]].name })
    -- a subtree extracted: the format has none in the same file, refused
    local text = readfile(path)
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 3, ops = {
      { op = "extract", node = 2, id = "walking" } } })
    local _, err = D.command { cmd = "save", tree = tree.name, version = 4,
                               stamp = doc.stamp }
    assert.equal("cannot save: export behavior3: patrol/walk: 'subtree' " ..
                 "has no behavior3 equivalent", err)
    assert.equal(text, readfile(path))
  end)

  it("refuse to write into a Lua file a subtree of another file's tree",
     function()
    write(dir .. "/trees/part.lua", [[
return { type = "sequence", name = "part", { type = "action", leaf = "look" } }
]])
    local tree, path = setup(([[
local part = bt.load(%q)
return { type = "selector", name = "whole", { type = "subtree", tree = part },
  { type = "action", leaf = "walk", name = "walk" } }
]]):format(dir .. "/trees/part.lua"))
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "set", node = id(doc, "whole/walk"), key = "name",
        value = "walking" } } })
    local _, err = D.command { cmd = "save", tree = tree.name, version = 2,
                               stamp = doc.stamp }
    assert.equal("cannot save: node 'whole/part': its tree 'part' is the " ..
                 "file " .. dir .. "/trees/part.lua's: the page cannot " ..
                 "write it into this file", err)
    assert.matches("bt.load", readfile(path), 1, true)
  end)

  it("save a tree of the current behavior3 editor in its own format",
     function()
    local tree, path = setup([[
{
  "version": "1.8.0", "name": "patrol",
  "root": { "id": "1", "name": "Sequence", "desc": "patrol", "args": {},
    "children": [ { "id": "2", "name": "look", "args": {} },
                  { "id": "3", "name": "walk", "args": {} } ] }
}
]], "json")
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    assert.equal("behavior3-current", doc.format)
    doc = ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "delete", node = 2 } } })
    ok(D.command { cmd = "save", tree = tree.name, version = 2,
                   stamp = doc.stamp })
    local saved = cjson.decode(readfile(path))
    assert.equal("Sequence", saved.root.name)
    assert.equal(1, #saved.root.children)
    assert.equal("walk", saved.root.children[1].name)
  end)

  it("apply to a frozen agent at a breakpoint, then step it on the new " ..
     "version", function()
    local tree = setup()
    local a = agent(tree)
    D.add(a)
    a:tick(1)
    ok(D.command { cmd = "freeze", agent = 1 })
    local doc = ok(D.command { cmd = "tree", tree = tree.name })
    ok(D.command { cmd = "edit", tree = tree.name, version = 1, ops = {
      { op = "insert", parent = id(doc, "guard/patrol"), index = 3,
        node = { type = "wait", name = "rest", params = { seconds = 1 } } } } })
    ok(D.command { cmd = "apply", tree = tree.name, version = 2 })
    calls = {}
    a:tick(1)
    assert.same({}, calls) -- frozen: nothing ran
    ok(D.command { cmd = "step", agent = 1 })
    a:tick(1)
    assert.same({ "walk" }, calls) -- kept, not entered again
    local paths = {}
    for _, nd in ipairs(tree:nodes(a)) do paths[#paths + 1] = nd.path end
    assert.equal("guard/patrol/rest", paths[#paths])
  end)

  it("refuse a save outside the watched folders, a stale one, and " ..
     "inline functions in a Lua file", function()
    -- a tree loaded from a folder nobody watches
    local other = write(dir .. "/other/free.lua", GUARD)
    local tree = assert(bt.load(other))
    D = debugmod.new(bt)
    D.add(agent(tree))
    local doc = ok(D.command { cmd = "tree", tree = "free" })
    local _, err = D.command { cmd = "save", tree = "free", version = 1,
                               stamp = doc.stamp }
    assert.matches("not in a folder the game watches", err)
    assert.equal(GUARD, readfile(other))
    D.close()
    -- a file changed behind the page's back (another page saved it)
    local t2, path = setup()
    D.add(agent(t2))
    doc = ok(D.command { cmd = "tree", tree = t2.name })
    write(path, GUARD .. "-- an editor's change\n")
    _, err = D.command { cmd = "save", tree = t2.name, version = 1,
                         stamp = doc.stamp }
    assert.matches("stale save: .* changed since this page read it", err)
    assert.equal(GUARD .. "-- an editor's change\n", readfile(path))
    D.close()
    -- a tree file that is a link to a file outside: the save replaces the
    -- link, the file outside is left as it was
    local outside = write(dir .. "/other/outside.lua", GUARD)
    n = n + 1
    local link = dir .. "/trees/linked" .. n .. ".lua"
    os.execute("ln -s " .. outside .. " " .. link)
    local t4 = assert(bt.load(link))
    D = debugmod.new(bt)
    D.add(agent(t4))
    doc = ok(D.command { cmd = "tree", tree = t4.name })
    doc = ok(D.command { cmd = "edit", tree = t4.name, version = 1, ops = {
      { op = "delete", node = 2 } } })
    ok(D.command { cmd = "save", tree = t4.name, version = 2,
                   stamp = doc.stamp })
    assert.equal(GUARD, readfile(outside))
    assert.not_matches("chase", readfile(link))
    D.close()
    -- inline functions: the page says which node, and leaves the file
    local t3, p3 = setup([[
return bt.sequence { name = "s",
  bt.named("mine", bt.action(function() return bt.SUCCESS end)) }
]])
    D.add(agent(t3))
    doc = ok(D.command { cmd = "tree", tree = t3.name })
    assert.same({ "fn" }, doc.root.children[1].inline)
    _, err = D.command { cmd = "save", tree = t3.name, version = 1,
                         stamp = doc.stamp }
    assert.matches("node 's/mine': its 'fn' is an inline Lua function", err)
    assert.matches("bt.named%(\"mine\"", readfile(p3))
  end)

  it("answer over HTTP with the token, results in 'result'", function()
    local tree = setup()
    D.add(agent(tree))
    local port = D.serve { port = 0 }
    local token = D.url:match("token=(%x+)")
    local function post(body, tok)
      local c = assert(socket.connect("127.0.0.1", port))
      c:settimeout(0)
      c:send("POST /command HTTP/1.1\r\nHost: 127.0.0.1:" .. port ..
             "\r\nContent-Type: application/json\r\n" ..
             (tok and "X-Bonsai-Token: " .. tok .. "\r\n" or "") ..
             "Content-Length: " .. #body .. "\r\n\r\n" .. body)
      local buf = ""
      repeat -- (until the server closes: it answers within some polls)
        D.poll()
        local d, e, p = c:receive(65536)
        buf = buf .. (d or p or "")
      until e == "closed"
      c:close()
      return buf
    end
    local body = cjson.encode { cmd = "tree", tree = tree.name }
    assert.matches("^HTTP/1.1 403", post(body))
    local r = cjson.decode(post(body, token):match("\r\n\r\n(.*)$"))
    assert.is_true(r.ok, r.error)
    assert.equal("guard", r.result.root.name)
  end)
end)
