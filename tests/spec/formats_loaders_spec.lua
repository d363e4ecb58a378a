-- formats_loaders_spec: the loader registry (API.md "Trees from files and
-- editors"): bt.loaders for a user's own format through bt.load, bt.reload
-- and bt.poll; bt.import of every format, "lua" included; files too large;
-- a subtree file whose change reloads the trees that use it; bt.load's
-- options (main) kept by bt.reload and bt.poll.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local dir
before_each(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir '" .. dir .. "'"))
end)
after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

local writes = 0
local function write(name, text)
  writes = writes + 1 -- a longer file each time: the change always shows
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text, (" "):rep(writes))
  f:close()
  return dir .. "/" .. name
end

describe("bt.loaders", function()
  it("adds a format to bt.load, bt.reload, bt.watch and bt.poll", function()
    bt.register("L.A", t:leafdef("A", "R"))
    bt.register("L.B", t:leafdef("B", "R"))
    -- a file of leaf names, one per line: a sequence of them
    bt.loaders[".seq"] = function(path)
      local node = bt.sequence {}
      for name in io.lines(path) do
        if name:match("%S") then node[#node + 1] = bt.action(name:match("%S+")) end
      end
      return node, { name = "seq" }
    end
    local path = write("x.seq", "L.A\n")
    local tree = assert(bt.load(path))
    assert.equal("seq", tree.name)
    assert.is_true(bt.watch(dir))
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("x.seq", "L.B\nL.A\n")
    assert.same({ path }, (bt.poll()))
    -- the running leaf keeps its place, found by name (README "Hot reload")
    assert.equal("running | tick A", t:step(a, 1))
    write("x.seq", "L.B\nL.Nope\n")
    local tr, msg = bt.reload(path)
    assert.is_nil(tr)
    assert.equal("tree 'seq': sequence/L.Nope: no leaf registered as " ..
                 "'L.Nope'", msg)
    assert.equal("running | tick A", t:step(a, 1))
    bt.loaders[".seq"] = nil
  end)

  it("refuses unknown extensions and formats, and files too large",
     function()
    local tree, msg = bt.load(write("x.yaml", "a: 1"))
    assert.is_nil(tree)
    assert.equal(dir .. "/x.yaml: no loader for this file (see bt.loaders)",
                 msg)
    assert.error_matches(function() bt.import("x", "yaml") end,
                         "unknown format 'yaml'")
    local f = assert(io.open(dir .. "/big.json", "w"))
    f:write(("x"):rep(9 * 1024 * 1024))
    f:close()
    tree, msg = bt.load(dir .. "/big.json")
    assert.is_nil(tree)
    assert.equal(dir .. "/big.json: file too large (9437184 bytes, at " ..
                 "most 8388608)", msg)
  end)
end)

describe("bt.import", function()
  it("reads every format into the same node tables", function()
    bt.register("I.A", t:leafdef("A", "FS"))
    local texts = {
      lua = "return bt.reactive_selector { bt.action 'I.A', bt.wait(1) }",
      btcpp = '<root BTCPP_format="4"><BehaviorTree ID="x"><ReactiveFallback>' ..
              '<I.A/><Sleep msec="1000"/></ReactiveFallback></BehaviorTree></root>',
      behavior3 = '{"root":"1","nodes":{"1":{"id":"1","name":"Priority",' ..
              '"children":["2","3"]},"2":{"id":"2","name":"I.A"},' ..
              '"3":{"id":"3","name":"Wait","properties":{"milliseconds":1000}}}}',
      edges = "ReactiveSelector[1]\nReactiveSelector[1]->I.A[2]\n" ..
              "ReactiveSelector[1]->Wait[3]{1}",
    }
    for fmt, text in pairs(texts) do
      local root = bt.import(text, fmt)
      local a = bt.agent(bt.tree(root))
      t:set("A", "FFS")
      assert.equal("running | enter A; tick A; exit A failure", t:step(a, 0.5),
                   fmt)
      assert.equal("running | enter A; tick A; exit A failure", t:step(a, 0.5),
                   fmt)
      assert.equal("success | enter A; tick A; exit A success", t:step(a, 0.5),
                   fmt)
    end
  end)
end)

describe("subtree files", function()
  it("reload the trees that use them when they change", function()
    bt.register("S.A", t:leafdef("A", "R"))
    bt.register("S.B", t:leafdef("B", "R"))
    local function tree(leaf)
      return '{"name":"sub","root":{"id":1,"name":"Sequence","children":' ..
             '[{"id":2,"name":"' .. leaf .. '"}]}}'
    end
    write("sub.json", tree("S.A"))
    local main = write("main.json", '{"name":"main","root":{"id":1,' ..
      '"name":"Selector","children":[{"id":2,"name":"x",' ..
      '"path":"sub.json"}]}}')
    local tr = assert(bt.load(main))
    assert.is_true(bt.watch(main))
    local a = bt.agent(tr)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("sub.json", tree("S.B"))
    local reloaded, failed = bt.poll()
    assert.same({ main }, reloaded)
    assert.same({}, failed)
    assert.equal("running | abort A; enter B; tick B", t:step(a, 1))
  end)
end)

describe("bt.load(path, { main = ID })", function()
  local two = [[
<root BTCPP_format="4">
  <BehaviorTree ID="Patrol"><%s/></BehaviorTree>
  <BehaviorTree ID="Flee"><%s/></BehaviorTree>
</root>]]

  it("runs the tree named, and bt.reload and bt.poll keep the choice",
     function()
    t:register { A = "S", B = "F" }
    local path = write("two.xml", two:format("A", "A"))
    local nomain, msg = bt.load(path)
    assert.is_nil(nomain)
    assert.matches("several BehaviorTree elements %(Patrol, Flee%)", msg)
    local tree = assert(bt.load(path, { main = "Flee" }))
    assert.equal("Flee", tree.name)
    assert.equal(bt.SUCCESS, bt.agent(tree):tick(1))
    write("two.xml", two:format("A", "B"))
    assert(bt.reload(path))
    assert.equal(bt.FAILURE, bt.agent(tree):tick(1))
    bt.watch(path)
    write("two.xml", two:format("B", "A"))
    local reloaded = bt.poll()
    assert.same({ path }, reloaded)
    assert.equal(bt.SUCCESS, bt.agent(tree):tick(1))
  end)

  it("takes a lone BehaviorTree without an ID, named after the file",
     function()
    t:register { A = "S" }
    local tree = assert(bt.load(write("lone.xml", [[
<root BTCPP_format="4"><BehaviorTree><A/></BehaviorTree></root>]])))
    assert.equal("lone", tree.name)
    assert.equal(bt.SUCCESS, bt.agent(tree):tick(1))
  end)

  it("refuses a main tree the file does not have, listing those it has",
     function()
    t:register { A = "S" }
    local path = write("miss.xml", two:format("A", "A"))
    local tree, msg = bt.load(path, { main = "Hide" })
    assert.is_nil(tree)
    assert.matches("main tree 'Hide' not found %(the file has Patrol, Flee%)",
                   msg)
    assert.has_error(function() bt.load(path, "Flee") end)
  end)
end)

describe("a library of BehaviorTree.CPP files (bt.load's library)", function()
  local MAIN = [[<root BTCPP_format="4"><BehaviorTree ID="Main"><Sequence>
<SubTree ID="Guard" target="{enemy}"/><L.Go/></Sequence></BehaviorTree></root>]]
  local function guard(leaf)
    return [[<root BTCPP_format="4"><BehaviorTree ID="Guard"><Sequence>
<]] .. leaf .. [[ at="{target}"/></Sequence></BehaviorTree></root>]]
  end

  it("refers to a tree of another file by ID, with its port rules, and "
     .. "reloads when a library file changes", function()
    t:register { ["L.Look"] = "R", ["L.Aim"] = "R", ["L.Go"] = "S" }
    write("guard.xml", guard("L.Look"))
    local main = write("main.xml", MAIN)
    local tr = assert(bt.load(main, { library = { "guard.xml" } }))
    assert.equal("Main", tr.name)
    assert.is_true(bt.watch(main))
    local a = bt.agent(tr)
    assert.equal("running | enter L.Look; tick L.Look", t:step(a, 1))
    write("guard.xml", guard("L.Aim"))
    assert.same({ main }, (bt.poll()))
    assert.equal("running | abort L.Look; enter L.Aim; tick L.Aim",
                 t:step(a, 1))
    -- any tree of the library by ID
    local g = assert(bt.load(main, { library = { "guard.xml" },
                                     main = "Guard" }))
    assert.equal("Guard", g.name)
  end)

  it("reads no file outside the directories allowed, and refuses what is "
     .. "no list, a missing file, a cycle", function()
    local main = write("main.xml", MAIN)
    local _, err = bt.load(main, { library = { "/etc/passwd" } })
    assert.matches("include '/etc/passwd' is outside the directories " ..
                   "allowed", err)
    _, err = bt.load(main, { library = { "nope.xml" } })
    assert.matches("node 'library': cannot include: .*nope.xml", err)
    _, err = bt.load(main, { library = { "main.xml" } })
    assert.matches("include recursion through 'main.xml'", err)
    _, err = bt.load(main, { library = "guard.xml" })
    assert.matches("library must be a list of files %(got string%)", err)
    _, err = bt.load(main)
    assert.matches("node 'Guard': no BehaviorTree with ID 'Guard'", err)
  end)
end)
