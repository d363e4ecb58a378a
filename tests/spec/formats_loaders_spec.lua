-- formats_loaders_spec: the loader registry (API.md "Trees from files and
-- editors"): bt.loaders for a user's own format through bt.load, bt.reload
-- and bt.poll; bt.import of every format, "lua" included; files too large;
-- a subtree file whose change reloads the trees that use it; bt.load's
-- options (main) kept by bt.reload and bt.poll.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local scratch = require("helpers.scratch")()
local write = scratch.write
local dir -- this test's directory
before_each(function() scratch.make(); dir = scratch.dir end)
after_each(scratch.remove)

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
    -- the loaded file itself is read once: naming it reads nothing more
    _, err = bt.load(main, { library = { "main.xml" } })
    assert.matches("node 'Guard': no BehaviorTree with ID 'Guard'", err)
    -- a library file that includes the loaded file closes a cycle
    write("back.xml", '<root BTCPP_format="4"><include path="main.xml"/>' ..
          "</root>")
    _, err = bt.load(main, { library = { "back.xml" } })
    assert.equal(dir .. "/back.xml:1:24: node 'include': include " ..
                 "recursion: " .. dir .. "/main.xml -> " .. dir ..
                 "/back.xml -> " .. dir .. "/main.xml", err)
    _, err = bt.load(main, { library = 3 })
    assert.matches("library must be a file, a folder or a list of them " ..
                   "%(got number%)", err)
    _, err = bt.load(main, { library = { false } })
    assert.matches("library: entry 1 must be a path", err)
    _, err = bt.load(main)
    assert.matches("node 'Guard': no BehaviorTree with ID 'Guard'", err)
  end)

  it("names a cycle of SubTrees whole, each tree with its file", function()
    t:register { ["L.Go"] = "S" }
    write("guard.xml", [[<root BTCPP_format="4"><BehaviorTree ID="Guard">
<SubTree ID="Chase"/></BehaviorTree>
<BehaviorTree ID="Chase"><Sequence><SubTree ID="Main"/></Sequence>
</BehaviorTree></root>]])
    local main = write("main.xml", MAIN)
    local _, err = bt.load(main, { library = "guard.xml" })
    assert.equal(dir .. "/guard.xml:3:36: node 'Main': subtree recursion: " ..
      "Main (" .. dir .. "/main.xml) -> Guard (" .. dir .. "/guard.xml) " ..
      "-> Chase (" .. dir .. "/guard.xml) -> Main (" .. dir .. "/main.xml)",
      err)
  end)
end)

describe("a folder as a library of BehaviorTree.CPP files", function()
  local function tree(id, body)
    return '<root BTCPP_format="4"><BehaviorTree ID="' .. id .. '">' ..
           body .. "</BehaviorTree></root>"
  end
  before_each(function() assert(os.execute("mkdir '" .. dir .. "/lib'")) end)

  it("reads every .xml file directly in it, the loaded file once, and " ..
     "creates any tree by ID", function()
    t:register { ["L.Look"] = "R", ["L.Go"] = "S" }
    write("lib/guard.xml", tree("Guard", '<L.Look at="{target}"/>'))
    write("lib/go.xml", tree("Go", "<L.Go/>"))
    write("lib/notes.json", "{}") -- not a BehaviorTree.CPP file: not read
    write("lib/.hidden.xml", "<broken") -- hidden: not read
    assert(os.execute("mkdir '" .. dir .. "/lib/old.xml'")) -- a folder
    assert(os.execute("mkdir '" .. dir .. "/lib/sub'")) -- nor its subfolders
    write("lib/sub/bad.xml", "<broken")
    local main = write("lib/main.xml", tree("Main", '<Sequence>' ..
      '<SubTree ID="Go"/><SubTree ID="Guard" target="{enemy}"/></Sequence>'))
    -- the folder holds the loaded file itself: read once, no cycle
    local tr = assert(bt.load(main, { library = "." }))
    assert.equal("Main", tr.name)
    assert.equal("running | enter L.Go; tick L.Go; exit L.Go success; " ..
                 "enter L.Look; tick L.Look", t:step(bt.agent(tr), 1))
    local g = assert(bt.load(main, { library = { "./" }, main = "Go" }))
    assert.equal("Go", g.name)
    -- from a file outside it, a list mixing files and folders
    local top = write("top.xml", tree("Top", '<SubTree ID="Main"/>'))
    assert(bt.load(top, { library = { "lib", "lib/guard.xml" } }))
    -- the export writes the trees used into one file, which loads alone
    local text = tr:export("btcpp")
    assert.matches('<BehaviorTree ID="Guard">', text, 1, true)
    assert.matches('<BehaviorTree ID="Go">', text, 1, true)
    assert.equal("running | enter L.Go; tick L.Go; exit L.Go success; " ..
                 "enter L.Look; tick L.Look",
                 t:step(bt.agent(bt.tree(bt.import(text, "btcpp"))), 1))
  end)

  it("sees a file added to or removed from the folder at bt.poll",
     function()
    t:register { ["L.Look"] = "R", ["L.Go"] = "S" }
    local main = write("lib/main.xml", tree("Main", '<SubTree ID="Guard"/>'))
    write("lib/guard.xml", tree("Guard", "<L.Look/>"))
    local tr = assert(bt.load(main, { library = "." }))
    assert.is_true(bt.watch(main))
    local a = bt.agent(tr)
    assert.equal("running | enter L.Look; tick L.Look", t:step(a, 1))
    -- a new file: reloaded, though no tree uses it yet
    write("lib/more.xml", tree("More", "<L.Go/>"))
    assert.same({ main }, (bt.poll()))
    assert.same({}, (bt.poll()))
    -- the file a tree uses removed: the reload fails, the old one runs
    os.remove(dir .. "/lib/guard.xml")
    local reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    assert.equal(main, failed[1].path)
    assert.matches("node 'Guard': no BehaviorTree with ID 'Guard'",
                   failed[1].error)
    assert.equal("running | tick L.Look", t:step(a, 1))
  end)

  it("sees a file added to a watched library folder, the tree's own file " ..
     "not watched", function()
    t:register { ["L.Look"] = "R" }
    local main = write("main.xml", tree("Main", '<SubTree ID="Guard"/>'))
    local tr, err = bt.load(main, { library = "lib" })
    assert.is_nil(tr)
    assert.matches("no BehaviorTree with ID 'Guard'", err)
    -- the load failed: bt.load again once the folder is watched
    assert.is_true(bt.watch(dir .. "/lib/"))
    write("lib/other.xml", tree("Other", "<L.Look/>"))
    assert.is_nil((bt.load(main, { library = "lib" })))
    write("lib/guard.xml", tree("Guard", "<L.Look/>"))
    -- not loaded yet: nothing to reload, the new file is seen
    assert.same({}, (bt.poll()))
    tr = assert(bt.load(main, { library = "lib" }))
    write("lib/guard.xml", tree("Guard", "<L.Look/>") .. " ")
    assert.same({ main }, (bt.poll()))
    os.remove(dir .. "/lib/other.xml") -- a file gone from the folder
    assert.same({ main }, (bt.poll()))
    assert.equal("running | enter L.Look; tick L.Look", t:step(bt.agent(tr), 1))
  end)

  it("refuses a folder of more than 1,024 tree files", function()
    local main = write("main.xml", tree("Main", "<AlwaysSuccess/>"))
    assert(os.execute("cd '" .. dir .. "/lib' && for i in $(seq 1025); " ..
                      "do : > t$i.xml; done"))
    local _, err = bt.load(main, { library = "lib" })
    assert.equal(main .. ": library: " .. dir .. "/lib: more than 1024 " ..
                 "tree files in one folder", err)
  end)

  it("reads nothing outside the folders allowed, nor through a link",
     function()
    local main = write("lib/main.xml", tree("Main", '<SubTree ID="X"/>'))
    local _, err = bt.load(main, { library = ".." })
    assert.matches("include '%.%.' is outside the directories allowed",
                   err)
    local out = os.tmpname()
    os.remove(out)
    assert(os.execute("mkdir '" .. out .. "'"))
    local f = assert(io.open(out .. "/x.xml", "w"))
    f:write(tree("X", "<AlwaysSuccess/>"))
    f:close()
    assert(os.execute("ln -s '" .. out .. "' '" .. dir .. "/lib/out'"))
    _, err = bt.load(main, { library = "out" })
    os.execute("rm -rf '" .. out .. "'")
    assert.matches("cannot include: .*leads outside the directories " ..
                   "allowed", err)
    -- a link in the folder to a file beside it: allowed to the loaded
    -- file, but not in the folder given
    os.remove(dir .. "/lib/out")
    write("shared.xml", tree("X", "<AlwaysSuccess/>"))
    assert(os.execute("ln -s ../shared.xml '" .. dir .. "/lib/x.xml'"))
    local top = write("top.xml", tree("Top", '<SubTree ID="X"/>'))
    _, err = bt.load(top, { library = "lib" })
    assert.matches("node 'library': cannot include: " .. dir ..
      "/lib/x.xml: leads outside its folder " .. dir .. "/lib %(to .*" ..
      "/shared.xml%)", err)
  end)
end)
