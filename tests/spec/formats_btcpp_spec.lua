-- formats_btcpp_spec: BehaviorTree.CPP 4 / Groot2 XML (API.md "Trees from
-- files and editors"). A multi-tree Groot2 file with subtrees and port
-- remapping, each built-in node's mapping tick by tick, {key} ports on the
-- blackboard, refusals with file, line, column and node, hot reload, and
-- export -> load round trips over a scenario; Delay, ParallelAll with
-- max_failures > 1 and a SubTree of a tree outside the file on the core's
-- own kinds.
local bt = require "bonsai"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

-- Registers trace leaves: name -> script.
local function leaves(scripts) t:register(scripts) end

-- An agent on the main tree of an XML text.
local function agent(text, opts)
  return bt.agent(bt.tree(bt.import(text, "btcpp"), { name = "T" }), opts)
end

local function doc(body)
  return '<root BTCPP_format="4"><BehaviorTree ID="T">' .. body ..
         "</BehaviorTree></root>"
end

-- The error bt.import raises for text.
local function refused(text, opts)
  local ok, msg = pcall(bt.import, text, "btcpp", opts or { file = "t.xml" })
  assert(not ok, "the import was expected to fail")
  return msg
end

describe("a Groot2 file with subtrees", function()
  local log
  before_each(function()
    log = {}
    local function add(s) log[#log + 1] = s end
    bt.register("SeeEnemy", function(_, bb, args)
      add("see")
      if bb.foe then args.target = bb.foe return true end
      return false
    end)
    bt.register("Below", function(_, _, args)
      add("below " .. args.value .. "<" .. args.limit)
      return args.value < args.limit
    end)
    bt.register("Run", { tick = function(_, _, args)
      add("run from " .. tostring(args.from)) return bt.RUNNING
    end, abort = function() add("abort run") end })
    bt.register("Attack", {
      enter = function(_, _, args) add("enter attack " .. args.target) end,
      tick = function(_, _, args)
        args.hits = (args.hits or 0) + 1
        add("attack " .. args.target)
        return args.hits >= 3 and bt.SUCCESS or bt.RUNNING
      end,
      abort = function() add("abort attack") end })
    bt.register("Patrol", { tick = function(_, _, args)
      add("patrol " .. args.speed .. " " .. args.route) return bt.RUNNING
    end, abort = function() add("abort patrol") end })
  end)
  local function step(a, dt)
    local s = a:tick(dt)
    local l = table.concat(log, "; ")
    log = {}
    return s .. " | " .. l
  end

  it("loads the main tree, remaps ports and ticks tick by tick", function()
    local tree = assert(bt.load("tests/trees/guard.xml"))
    assert.equal("Guard", tree.name) -- main_tree_to_execute
    local a = bt.agent(tree, { blackboard = { health = 100, route = "north",
                                             danger = "outer" } })
    assert.equal("running | below 100<25; see; patrol 1.5 north", step(a, 1))
    a.bb.foe = "wolf"
    -- the condition writes its output port {enemy}; Fight's _autoremap
    -- lets Attack read it and write {hits} in the caller's blackboard
    assert.equal("running | below 100<25; see; enter attack wolf; " ..
                 "attack wolf; abort patrol", step(a, 1))
    assert.equal("wolf", a.bb.enemy)
    assert.equal(1, a.bb.hits)
    -- combat is a Sequence: it resumes Attack without SeeEnemy
    assert.equal("running | below 100<25; attack wolf", step(a, 1))
    a.bb.health = 10 -- hp="{health}", threshold="25" (a literal)
    -- Run's {danger} is private to the Flee subtree (no _autoremap)
    assert.equal("running | below 10<25; run from nil; abort attack",
                 step(a, 1))
    assert.same({ "guard", "flee", "Run" }, a:running())
    a.bb.health = 50
    -- {hits} is the caller's key: the third hit in all ends the attack
    assert.equal("success | below 50<25; abort run; see; enter attack " ..
                 "wolf; attack wolf", step(a, 1))
    assert.equal(3, a.bb.hits)
  end)

  it("times out the attack after 2.5 s and retries it once", function()
    bt.register("Attack", { enter = function() log[#log + 1] = "enter" end,
      tick = function() log[#log + 1] = "tick" return bt.RUNNING end,
      abort = function() log[#log + 1] = "abort" end })
    local a = bt.agent(assert(bt.load("tests/trees/guard.xml")),
                       { blackboard = { health = 100, route = "r", foe = "x" } })
    assert.equal("running | below 100<25; see; enter; tick", step(a, 1))
    assert.equal("running | below 100<25; tick", step(a, 1))
    assert.equal("running | below 100<25; tick", step(a, 1))
    assert.equal("running | below 100<25; abort; enter; tick",
                 step(a, 1)) -- 2.5 s passed: try 2 of 2
    assert.equal("running | below 100<25; tick", step(a, 1))
    assert.equal("running | below 100<25; tick", step(a, 1))
    -- the second try times out: retry and combat fail, patrol runs
    assert.equal("running | below 100<25; abort; patrol 1.5 r",
                 step(a, 1))
  end)

  it("reloads when the file changes; a bad version keeps the old", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir '" .. dir .. "'"))
    local path = dir .. "/g.xml"
    local function write(body)
      local f = assert(io.open(path, "w"))
      f:write(doc(body))
      f:close()
    end
    write('<Patrol speed="1" route="a"/>')
    local tree = assert(bt.load(path))
    assert.is_true(bt.watch(path))
    local a = bt.agent(tree)
    assert.equal("running | patrol 1 a", step(a, 1))
    write('<Sequence><Patrol speed="2" route="b"/><Nope/></Sequence>  ')
    local ok, failed = bt.poll()
    assert.same({}, ok)
    assert.equal(1, #failed)
    assert.matches("g.xml:1:%d+: node 'Nope': no leaf registered as 'Nope'",
                   failed[1].error)
    assert.equal("running | patrol 1 a", step(a, 1))
    write('<Patrol speed="3" route="c"/>     ')
    ok = bt.poll()
    assert.same({ path }, ok)
    assert.equal("running | patrol 3 c", step(a, 1))
    local bad = bt.reload(path) -- unchanged: still fine
    assert.equal(tree, bad)
    write('<Patrol speed="3" route="c"></root>')
    local r, msg = bt.reload(path)
    assert.is_nil(r)
    assert.matches("g.xml:1:%d+: XML error: mismatched tag", msg)
    assert.equal("running | patrol 3 c", step(a, 1))
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)

describe("BehaviorTree.CPP built-ins", function()
  it("Sequence resumes its running child; ReactiveSequence does not",
     function()
    leaves { A = "SSF", B = "RS" }
    local a = agent(doc("<Sequence><A/><B/></Sequence>"))
    assert.equal("running | enter A; tick A; exit A success; enter B; " ..
                 "tick B", t:step(a, 1))
    assert.equal("success | tick B; exit B success", t:step(a, 1))
    leaves { A = "SF", B = "R" }
    a = agent(doc("<ReactiveSequence><A/><B/></ReactiveSequence>"))
    assert.equal("running | enter A; tick A; exit A success; enter B; " ..
                 "tick B", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure; abort B",
                 t:step(a, 1))
  end)

  it("Fallback and ReactiveFallback", function()
    leaves { A = "FS", B = "R" }
    local a = agent(doc("<Fallback><A/><B/></Fallback>"))
    assert.equal("running | enter A; tick A; exit A failure; enter B; " ..
                 "tick B", t:step(a, 1))
    assert.equal("running | tick B", t:step(a, 1))
    leaves { A = "FS", B = "R" }
    a = agent(doc("<ReactiveFallback><A/><B/></ReactiveFallback>"))
    t:step(a, 1)
    assert.equal("success | enter A; tick A; exit A success; abort B",
                 t:step(a, 1))
  end)

  it("Parallel fails as soon as success is out of reach", function()
    leaves { A = "F", B = "F", C = "R" }
    -- success_count 2 of 3: two failures make it impossible, although
    -- failure_count is 3
    local a = agent(doc('<Parallel success_count="2" failure_count="3">' ..
                        "<A/><B/><C/></Parallel>"))
    assert.equal("failure | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B failure", t:step(a, 1))
    leaves { A = "S", B = "RS", C = "R" }
    a = agent(doc('<Parallel success_count="-2"><A/><B/><C/></Parallel>'))
    assert.equal("running | enter A; tick A; exit A success; enter B; " ..
                 "tick B; enter C; tick C", t:step(a, 1))
    assert.equal("success | tick B; exit B success; abort C", t:step(a, 1))
  end)

  it("ParallelAll lets every child finish", function()
    leaves { A = "F", B = "RS", C = "RRS" }
    local a = agent(doc("<ParallelAll><A/><B/><C/></ParallelAll>"))
    assert.equal("running | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; enter C; tick C", t:step(a, 1))
    assert.equal("running | tick B; exit B success; tick C", t:step(a, 1))
    assert.equal("failure | tick C; exit C success", t:step(a, 1))
    leaves { A = "F", B = "S" }
    a = agent(doc('<ParallelAll max_failures="0"><A/><B/></ParallelAll>'))
    assert.equal("failure | enter A; tick A; exit A failure; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
  end)

  it("Inverter, ForceSuccess, ForceFailure", function()
    leaves { A = "RS" }
    local a = agent(doc("<Inverter><A/></Inverter>"))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A success", t:step(a, 1))
    leaves { A = "F" }
    a = agent(doc("<ForceSuccess><A/></ForceSuccess>"))
    assert.equal("success | enter A; tick A; exit A failure", t:step(a, 1))
    leaves { A = "S" }
    a = agent(doc("<ForceFailure><A/></ForceFailure>"))
    assert.equal("failure | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("Repeat num_cycles: in one tick; a failure fails it; 0 skips it",
     function()
    leaves { A = "SRSS" }
    local a = agent(doc('<Repeat num_cycles="3"><A/></Repeat>'))
    assert.equal("running | enter A; tick A; exit A success; enter A; " ..
                 "tick A", t:step(a, 1))
    -- the multi-tick run ends: the next starts in the same tick
    assert.equal("success | tick A; exit A success; enter A; tick A; " ..
                 "exit A success", t:step(a, 1))
    a = agent(doc('<Repeat num_cycles="0"><A/></Repeat>'))
    assert.equal("success |", t:step(a, 1))
    leaves { A = "SF" }
    a = agent(doc('<Repeat num_cycles="-1"><A/></Repeat>'))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
  end)

  it("RetryUntilSuccessful and KeepRunningUntilFailure", function()
    leaves { A = "FFS" }
    local a = agent(doc('<RetryUntilSuccessful num_attempts="2"><A/>' ..
                        "</RetryUntilSuccessful>"))
    assert.equal("failure | enter A; tick A; exit A failure; enter A; " ..
                 "tick A; exit A failure", t:step(a, 1))
    leaves { A = "SSF" }
    a = agent(doc("<KeepRunningUntilFailure><A/></KeepRunningUntilFailure>"))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure | enter A; tick A; exit A failure", t:step(a, 1))
    -- one tick of its child per tick: a run that ends is not followed by
    -- the next in the same tick
    leaves { A = "RSRF" }
    a = agent(doc("<KeepRunningUntilFailure><A/></KeepRunningUntilFailure>"))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("running | tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
  end)

  it("Timeout and Sleep take milliseconds", function()
    leaves { A = "R" }
    local a = agent(doc('<Timeout msec="250"><A/></Timeout>'))
    assert.equal("running | enter A; tick A", t:step(a, 0.1))
    assert.equal("running | tick A", t:step(a, 0.1))
    assert.equal("running | tick A", t:step(a, 0.1))
    assert.equal("failure | abort A", t:step(a, 0.1))
    a = agent(doc('<Timeout msec="0"><A/></Timeout>')) -- no timer
    assert.equal("running | enter A; tick A", t:step(a, 100))
    assert.equal("running | tick A", t:step(a, 100))
    leaves { B = "S" }
    a = agent(doc('<Sequence><Sleep msec="1500"/><B/></Sequence>'))
    assert.equal("running |", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("RunOnce then_skip=false, AlwaysSuccess, AlwaysFailure", function()
    leaves { A = "RF" }
    local a = agent(doc('<RunOnce then_skip="false"><A/></RunOnce>'))
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.equal("failure | tick A; exit A failure", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    a = agent(doc("<Sequence><AlwaysSuccess/><AlwaysFailure/></Sequence>"))
    assert.equal("failure |", t:step(a, 1))
    a = agent(doc("<Fallback><AlwaysFailure/><AlwaysSuccess/></Fallback>"))
    assert.equal("success |", t:step(a, 1))
  end)

  it("custom nodes by ID, in the compact and the explicit form", function()
    local seen = {}
    bt.register("Say", function(_, _, args)
      seen[#seen + 1] = args.message .. "/" .. tostring(args.times)
      return true
    end)
    local a = agent(doc('<Sequence><Say message="hi" times="2"/>' ..
      '<Action ID="Say" message="{m}"/><Condition ID="Say" message="x y"/>' ..
      "</Sequence>"), { blackboard = { m = "from bb" } })
    assert.equal("success", a:tick(1))
    assert.same({ "hi/2", "from bb/nil", "x y/nil" }, seen)
    a.bb.m = "changed"
    a:tick(1)
    assert.equal("changed/nil", seen[5])
  end)
end)

describe("BehaviorTree.CPP files with includes and models", function()
  it("reads the trees of included files; a change reloads", function()
    leaves { A = "R", B = "R" }
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir '" .. dir .. "'"))
    local function write(name, body)
      local f = assert(io.open(dir .. "/" .. name, "w"))
      f:write(body)
      f:close()
    end
    write("lib.xml", '<root BTCPP_format="4"><BehaviorTree ID="Lib">' ..
      "<A/></BehaviorTree></root>")
    write("main.xml", '<root BTCPP_format="4" main_tree_to_execute="M">' ..
      '<include path="lib.xml"/><BehaviorTree ID="M"><Sequence>' ..
      '<SubTree ID="Lib"/></Sequence></BehaviorTree></root>')
    local tree = assert(bt.load(dir .. "/main.xml"))
    assert.is_true(bt.watch(dir .. "/main.xml"))
    local a = bt.agent(tree)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("lib.xml", '<root BTCPP_format="4"><BehaviorTree ID="Lib">' ..
      "<B/></BehaviorTree></root>    ")
    assert.same({ dir .. "/main.xml" }, (bt.poll()))
    assert.equal("running | abort A; enter B; tick B", t:step(a, 1))
    write("lib.xml", '<root BTCPP_format="4"><BehaviorTree ID="Lib">' ..
      "<B></BehaviorTree></root>        ")
    local ok, failed = bt.poll()
    assert.same({}, ok)
    assert.matches("^" .. dir .. "/lib.xml:1:%d+: XML error: mismatched tag",
                   failed[1].error)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("names a SubTree by its name, its root's name, else its ID", function()
    bt.register("Plan", function() return bt.RUNNING end)
    local function running(main)
      local root = bt.import('<root BTCPP_format="4" main_tree_to_execute="' ..
        main .. '"><BehaviorTree ID="Main"><Fallback><SubTree ID="Navigate"/>' ..
        '</Fallback></BehaviorTree><BehaviorTree ID="Named"><SubTree ' ..
        'ID="Navigate" name="Go"/></BehaviorTree><BehaviorTree ID="Navigate">' ..
        '<Sequence><Plan name="ComputePath"/></Sequence></BehaviorTree>' ..
        '<BehaviorTree ID="Leaf"><SubTree ID="Step"/></BehaviorTree>' ..
        '<BehaviorTree ID="Step"><Plan/></BehaviorTree></root>', "btcpp")
      local a = bt.agent(bt.tree(root, { name = "T" }))
      a:tick(1)
      return table.concat(a:running(), "/")
    end
    assert.equal("selector/Navigate/ComputePath", running("Main"))
    assert.equal("Go/ComputePath", running("Named"))
    assert.equal("Plan", running("Leaf")) -- a leaf keeps its own name
  end)

  it("keeps includes inside the allowed directories, bounded, no cycles",
     function()
    -- BehaviorTree.CPP's own include tests (tests/trees/btcpp/tests/trees)
    local dir = "tests/trees/btcpp/tests/trees/"
    local file = dir .. "child/child_include_parent.xml"
    local tree, err = bt.load(file)
    assert.is_nil(tree)
    assert.equal(file .. ":2:3: node 'include': include " ..
      "'../parent_no_include.xml' is outside the directories allowed " ..
      "(tests/trees/btcpp/tests/trees/child; bt.load's include_dirs option " ..
      "adds others)", err)
    assert.is_truthy(bt.load(file, { include_dirs = { dir } }))
    -- the same include, from a file of the parent directory: allowed
    assert.is_truthy(bt.load(dir .. "parent_include_child_include_parent.xml"))
    local function import(text, files, opts)
      opts = opts or {}
      opts.file = "d/main.xml"
      opts.read = function(path)
        return files[path] or nil, path .. ": no such file"
      end
      local ok, msg = pcall(bt.import, text, "btcpp", opts)
      assert.is_false(ok)
      return msg
    end
    local function inc(path)
      return '<root BTCPP_format="4"><include path="' .. path .. '"/>' ..
             '<BehaviorTree ID="T"><AlwaysSuccess/></BehaviorTree></root>'
    end
    assert.equal("d/main.xml:1:24: node 'include': include '/etc/x.xml' is " ..
      "outside the directories allowed (d; bt.load's include_dirs option " ..
      "adds others)", import(inc("/etc/x.xml"), {}))
    assert.equal("d/main.xml:1:24: node 'include': include 'a/../../x.xml' " ..
      "is outside the directories allowed (d; bt.load's include_dirs " ..
      "option adds others)", import(inc("a/../../x.xml"), {}))
    -- a cycle, whatever the spelling of the path
    assert.equal("d/b.xml:1:24: node 'include': include recursion: " ..
      "d/main.xml -> d/b.xml -> d/main.xml", import(inc("b.xml"),
        { ["d/b.xml"] = inc("./main.xml"), ["d/main.xml"] = inc("b.xml") }))
    -- depth: a chain of 40 files
    local chain = {}
    for i = 1, 40 do chain["d/" .. i .. ".xml"] = inc((i + 1) .. ".xml") end
    assert.matches("^d/32%.xml:1:24: node 'include': includes nested " ..
      "more than 32 deep$", import(inc("1.xml"), chain))
    -- total size: three 3 MB files
    local big = '<root BTCPP_format="4"><!--' .. ("x"):rep(3 * 1024 * 1024) ..
                "--></root>"
    assert.matches("included files are larger than 8388608 bytes in all",
      import('<root BTCPP_format="4"><include path="a.xml"/>' ..
             '<include path="b.xml"/><include path="c.xml"/></root>',
             { ["d/a.xml"] = big, ["d/b.xml"] = big, ["d/c.xml"] = big }))
    -- a directory above the current one, when the game names it
    assert.equal("d/main.xml:1:24: node 'include': include '../../y/b.xml' " ..
      "is outside the directories allowed (../x; bt.load's include_dirs " ..
      "option adds others)", import(inc("../../y/b.xml"), {},
                                    { include_dirs = { "../x" } }))
    local read = {}
    assert.is_truthy(bt.import(inc("../../x/b.xml"), "btcpp", {
      file = "d/main.xml", include_dirs = { "../x" },
      read = function(path)
        read[#read + 1] = path
        return '<root BTCPP_format="4"/>'
      end }))
    assert.same({ "../x/b.xml" }, read)
    assert.equal("d/main.xml: include_dirs must be a list of directories " ..
      "(got string)", import(inc("b.xml"), {}, { include_dirs = "d" }))
    assert.equal("d/main.xml: include_dirs: a directory must be a string",
      import(inc("b.xml"), {}, { include_dirs = { 3 } }))
  end)

  it("refuses format 3 files, naming BehaviorTree.CPP's converter", function()
    local conv = "convert with convert_v3_to_v4.py (BehaviorTree.CPP's " ..
                 "converter, in its repository's root) first"
    local function err(text)
      local ok, msg = pcall(bt.import, text, "btcpp", { file = "v3.xml" })
      assert.is_false(ok)
      return msg
    end
    assert.equal("v3.xml:1:1: format 3: " .. conv, err('<root BTCPP_format=' ..
      '"3"><BehaviorTree ID="T"><AlwaysSuccess/></BehaviorTree></root>'))
    -- no format given, and a construct only format 3 has
    assert.equal("v3.xml:1:38: node 'U': format 3 (SubTreePlus): " ..
      conv, err('<root><BehaviorTree ID="T"><Sequence><SubTreePlus ID="U"' ..
      "/></Sequence></BehaviorTree></root>"))
    assert.equal("v3.xml:1:28: node 'U': format 3 " ..
      "(__shared_blackboard): " .. conv, err('<root><BehaviorTree ID="T">' ..
      '<SubTree ID="U" __shared_blackboard="true"/></BehaviorTree></root>'))
  end)

  it("checks ports against TreeNodesModel and reads its kinds", function()
    bt.register("Near", function(_, _, args) t:add("near " .. args.range)
      return bt.RUNNING end)
    local model = "<TreeNodesModel><Condition ID=\"Near\"><input_port " ..
      "name=\"range\"/></Condition></TreeNodesModel>"
    local ok, msg = pcall(bt.import, '<root BTCPP_format="4"><BehaviorTree ' ..
      'ID="T"><Near rang="3"/></BehaviorTree>' .. model .. "</root>",
      "btcpp", { file = "m.xml" })
    assert.is_false(ok)
    assert.equal("m.xml:1:45: node 'Near': port 'rang' is not declared in " ..
                 "TreeNodesModel", msg)
    -- a Condition: returning running is an error
    local a = bt.agent(bt.tree(bt.import('<root BTCPP_format="4">' ..
      '<BehaviorTree ID="T"><Near range="3"/></BehaviorTree>' .. model ..
      "</root>", "btcpp"), { name = "T" }))
    assert.equal("tree 'T' node 'Near': a condition cannot return running",
                 trace.tick_error(a))
  end)
end)

describe("scripts in BehaviorTree.CPP files", function()
  it("run Script and ScriptCondition on the blackboard, tick by tick",
     function()
    leaves { A = "S" }
    local a = agent(doc('<Sequence><Script code="n := n + 1; s := \'r\' .. n"/>' ..
      '<ScriptCondition code="n &lt; 3 &amp;&amp; s != \'r9\'"/><A/></Sequence>'),
      { blackboard = { n = 0 } })
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("r1", a.bb.s)
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    assert.equal(3, a.bb.n)
  end)

  it("map Precondition: checked when the child starts, else its status",
     function()
    leaves { A = "RS" }
    local a = agent(doc('<Precondition if="armed" else="FAILURE"><A/>' ..
      "</Precondition>"), { blackboard = { armed = true } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.armed = false -- not checked again while A runs
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("failure |", t:step(a, 1))
    local b = agent(doc('<Precondition if="hp &gt; 5" else="SUCCESS"><A/>' ..
      "</Precondition>"), { blackboard = { hp = 1 } })
    assert.equal("success |", t:step(b, 1))
    assert.matches("else=\"DONE\": a status", refused(doc('<Precondition ' ..
      'if="x" else="DONE"><A/></Precondition>')))
  end)

  it("map Precondition else=\"RUNNING\": running without the child until " ..
     "the condition holds as it would start", function()
    leaves { A = "RSR" }
    local a = agent(doc('<Sequence><Precondition if="armed" else="RUNNING">' ..
      '<A/></Precondition><Script code="done := true"/></Sequence>'),
      { blackboard = { armed = false } })
    assert.equal("running |", t:step(a, 1))
    assert.equal("running |", t:step(a, 1))
    a.bb.armed = true
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.armed = false -- not asked again while A runs
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.is_true(a.bb.done)
    a.bb.done = nil
    assert.equal("running |", t:step(a, 1)) -- a new run asks again
    a.bb.armed = true
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a:abort() -- cut off: the next run asks again
    a.bb.armed = false
    assert.equal("running | abort A", t:step(a, 1))
  end)

  it("map Precondition else=\"SKIPPED\": skipped unless the condition " ..
     "holds as the child starts", function()
    leaves { A = "RS", B = "S" }
    local a = agent(doc('<Sequence><Precondition if="armed" else="SKIPPED">' ..
      '<A/></Precondition><B/></Sequence>'), { blackboard = { armed = false } })
    local B = "enter B; tick B; exit B success"
    assert.equal("success | " .. B, t:step(a, 1)) -- A passed over
    a.bb.armed = true
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.armed = false -- not asked again while A runs
    assert.equal("success | tick A; exit A success; " .. B, t:step(a, 1))
    local only = agent(doc('<Precondition if="armed" else="SKIPPED"><A/>' ..
      '</Precondition>'), { blackboard = { armed = false } })
    assert.equal("skipped |", t:step(only, 1))
    -- with a _skipIf of its own, both are asked and both written back
    local text = doc('<Precondition if="armed" else="SKIPPED" ' ..
      '_skipIf="off"><A/></Precondition>')
    local both = agent(text, { blackboard = { armed = true, off = true } })
    assert.equal("skipped |", t:step(both, 1))
    local out = bt.tree(bt.import(text, "btcpp"), { name = "T" })
      :export("btcpp")
    assert.matches('<Precondition _skipIf="off" else="SKIPPED" if="armed">',
      out)
    -- refused with the place: no condition, or one that does not parse
    assert.matches("node 'Precondition': needs port 'if'", refused(doc(
      '<Precondition else="SKIPPED"><A/></Precondition>')))
    assert.matches("node 'Precondition': 'if': .*syntax error", refused(doc(
      '<Precondition if="1 +" else="SKIPPED"><A/></Precondition>')))
  end)

  it("see the keys a subtree remaps", function()
    local a = agent('<root BTCPP_format="4" main_tree_to_execute="T">' ..
      '<BehaviorTree ID="T"><SubTree ID="S" hp="{life}" max="10"/></BehaviorTree>' ..
      '<BehaviorTree ID="S"><Script code="hp := max - 1"/></BehaviorTree></root>')
    assert.equal("success", a:tick(1))
    assert.equal(9, a.bb.life)
    -- "@key": the main tree's key, from anywhere
    a = agent('<root BTCPP_format="4" main_tree_to_execute="T">' ..
      '<BehaviorTree ID="T"><SubTree ID="S"/></BehaviorTree><BehaviorTree ' ..
      'ID="S"><Script code="@alarm := true; local := 1"/></BehaviorTree></root>')
    a:tick(1)
    assert.is_true(a.bb.alarm)
    assert.is_nil(a.bb["local"])
    assert.matches("stands for a constant", refused('<root BTCPP_format="4" ' ..
      'main_tree_to_execute="T"><BehaviorTree ID="T"><SubTree ID="S" ' ..
      'max="10"/></BehaviorTree><BehaviorTree ID="S"><Script ' ..
      'code="max := 1"/></BehaviorTree></root>'))
  end)

  it("are refused with the file place when they do not parse", function()
    assert.equal("t.xml:1:45: node 'ScriptCondition': 'code': at " ..
      "character 4: syntax error at the end",
      refused(doc('<ScriptCondition code="1 +"/>')))
    assert.matches("needs port 'code'", refused(doc("<Script/>")))
  end)

  it("are written back and read again the same", function()
    leaves { A = "S" }
    local text = doc('<Sequence><Script code="n := 1"/><ScriptCondition ' ..
      'code="n == 1"/><Precondition if="n &gt; 0" else="SUCCESS"><A/>' ..
      '</Precondition><Precondition if="n &gt; 0"><A/></Precondition>' ..
      '<Precondition if="n &gt; 0" else="SKIPPED"><A/></Precondition>' ..
      '<Precondition if="n &gt; 0" else="RUNNING"><A/></Precondition>' ..
      "</Sequence>")
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "T" })
    local out = tree:export("btcpp")
    assert.matches('<Script code="n := 1"/>', out)
    assert.matches('<ScriptCondition code="n == 1"/>', out)
    assert.matches('<Precondition else="SUCCESS" if="n &gt; 0">', out)
    assert.matches('<Precondition else="SKIPPED" if="n &gt; 0">', out)
    assert.matches('<Precondition else="RUNNING" if="n &gt; 0">', out)
    local copy = bt.tree(bt.import(out, "btcpp"), { name = "T" })
    assert.equal(out, copy:export("btcpp"))
    assert.equal("success", bt.agent(copy):tick(1))
    -- Lua trees too
    out = bt.tree(bt.sequence { bt.script("x := 2"),
      bt.script_condition("x * 2 == 4") }, { name = "L" }):export("btcpp")
    assert.matches('<Script code="x := 2"/>', out)
    assert.matches('<ScriptCondition code="x %* 2 == 4"/>', out)
    -- and bt.check, as the script it is
    out = bt.tree(bt.sequence { bt.check("hp", "<", 2.5),
      bt.check("name", "~=", "$other"), bt.check("s", "==", "it's") },
      { name = "L" }):export("btcpp")
    assert.matches('<ScriptCondition code="hp &lt; 2.5"/>', out)
    assert.matches('<ScriptCondition code="name != other"/>', out)
    assert.matches('<ScriptCondition code="s == &quot;it\'s&quot;"/>', out)
  end)
end)

describe("refused BehaviorTree.CPP files", function()
  before_each(function() leaves { A = "S" } end)

  it("name the file, the line and column and the node", function()
    assert.equal("t.xml:1:45: node 'Bogus': no leaf registered as 'Bogus'" ..
                 " (bt.define it, or bt.register a leaf under that name)",
      refused(doc('<Bogus x="{k}"/>')))
    assert.equal("t.xml:1:45: node 'Script': 'code': at character 4: " ..
      "'os.exit(': a script calls no function",
      refused(doc('<Script code="x:=os.exit()"/>')))
    assert.equal("t.xml:1:45: node 'A': '_skipIf': at character 5 of " ..
      "\"x :=\": syntax error at the end", refused(doc('<A _skipIf="x :="/>')))
    assert.matches("t.xml:1:45: node 'Repeat': bad number 'two' for port " ..
      "'num_cycles'", refused(doc('<Repeat num_cycles="two"><A/></Repeat>')))
    assert.matches("node 'Repeat': needs port 'num_cycles'",
      refused(doc('<Repeat><A/></Repeat>')))
    assert.matches("node 'Inverter': needs exactly one child",
      refused(doc('<Inverter><A/><A/></Inverter>')))
    assert.matches("node 'Sequence': needs at least one child",
      refused(doc('<Sequence/>')))
    assert.matches("node 'Delay': 'delay_msec' must be > 0",
      refused(doc('<Delay delay_msec="0"><A/></Delay>')))
    assert.matches("node 'Timeout': unknown port 'ms'",
      refused(doc('<Timeout ms="3"><A/></Timeout>')))
    assert.matches("node 'RunOnce': bad boolean 'maybe' for port " ..
      "'then_skip'", refused(doc('<RunOnce then_skip="maybe"><A/></RunOnce>')))
    assert.matches("node 'SkipUnlessUpdated': needs port 'entry'",
      refused(doc('<SkipUnlessUpdated><A/></SkipUnlessUpdated>')))
    assert.matches("node 'IfThenElse': needs 2 or 3 children",
      refused(doc('<IfThenElse><A/></IfThenElse>')))
    assert.matches("node 'Switch2': bad children",
      refused(doc('<Switch2 variable="{v}" case_1="a"><A/></Switch2>')))
    assert.matches("node 'Repeat': port 'num_cycles' reads the blackboard",
      refused(doc('<Repeat num_cycles="{n}"><A/></Repeat>')))
    assert.matches("node 'Parallel': 'success_count' is larger than",
      refused(doc('<Parallel success_count="3"><A/><A/></Parallel>')))
    assert.matches("node 'Mine': unknown decorator node",
      refused(doc('<Mine><A/></Mine>')))
  end)

  it("wrong roots, missing trees, duplicates and recursion", function()
    assert.equal("t.xml:1:1: the root element must be <root>, not <tree>",
      refused("<tree/>"))
    assert.matches("BTCPP_format 5 is not supported",
      refused('<root BTCPP_format="5"/>'))
    assert.equal("t.xml: several BehaviorTree elements (a, b) and no " ..
      "main_tree_to_execute: choose one with bt.load(path, { main = ID })",
      refused('<root><BehaviorTree ID="a"><A/>' ..
      '</BehaviorTree><BehaviorTree ID="b"><A/></BehaviorTree></root>'))
    assert.equal("t.xml: main tree 'c' not found (the file has a)",
      refused('<root main_tree_to_execute="c"><BehaviorTree ID="a"><A/>' ..
              "</BehaviorTree></root>"))
    assert.matches("t.xml:1:%d+: node 'a': duplicate " ..
      "BehaviorTree ID 'a'", refused('<root><BehaviorTree ID="a"><A/>' ..
      '</BehaviorTree><BehaviorTree ID="a"><A/></BehaviorTree></root>'))
    assert.matches("node 'S': no BehaviorTree with ID 'S'",
      refused(doc('<SubTree ID="S"/>')))
    assert.matches("t.xml:3:%d+: node 'a': subtree recursion: a %-> b %-> a",
      refused('<root main_tree_to_execute="a">\n' ..
      '<BehaviorTree ID="a"><Sequence><SubTree ID="b"/></Sequence>' ..
      '</BehaviorTree>\n<BehaviorTree ID="b"><SubTree ID="a"/>' ..
      "</BehaviorTree></root>"))
    assert.matches("t.xml:1:%d+: XML error: ", refused("<root><Beha"))
    assert.matches("t.xml:%d+:%d+: XML error: ", refused(""))
  end)

  it("bounded: entity bombs, depth, size, subtree expansion", function()
    local bomb = '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n' ..
      ' <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;&lol;&lol;">\n]>\n' ..
      "<root>&lol2;</root>"
    assert.matches("^t.xml:2:%d+: DOCTYPE declarations are not allowed " ..
                   "in a tree file$", refused(bomb))
    assert.matches("t.xml:1:%d+: elements nested deeper than 200 levels",
      refused(("<Inverter>"):rep(100000)))
    local ok, msg = pcall(bt.import, ("x"):rep(9 * 1024 * 1024), "btcpp")
    assert.is_false(ok)
    assert.matches("text too large", msg)
    -- 10 trees, each using the next 10 times: 10^10 nodes once expanded
    local parts = { '<root main_tree_to_execute="t1">' }
    for i = 1, 10 do
      parts[#parts + 1] = '<BehaviorTree ID="t' .. i .. '"><Sequence>' ..
        (i < 10 and ('<SubTree ID="t' .. (i + 1) .. '"/>'):rep(10) or "<A/>") ..
        "</Sequence></BehaviorTree>"
    end
    parts[#parts + 1] = "</root>"
    local t0 = os.clock()
    assert.matches("the tree expands to more than 100000 nodes",
                   refused(table.concat(parts)))
    -- 600 trees of 150 levels, each using the next: 90,000 levels
    parts = { '<root main_tree_to_execute="t1">' }
    for i = 1, 600 do
      parts[#parts + 1] = '<BehaviorTree ID="t' .. i .. '">' ..
        ("<Inverter>"):rep(150) .. (i < 600 and ('<SubTree ID="t' ..
        (i + 1) .. '"/>') or "<A/>") .. ("</Inverter>"):rep(150) ..
        "</BehaviorTree>"
    end
    parts[#parts + 1] = "</root>"
    assert.matches("^t.xml:1:%d+: node 'Inverter': the tree is deeper than " ..
                   "1000 levels once its subtrees are expanded$",
                   refused(table.concat(parts)))
    assert.is_true(os.clock() - t0 < 5)
  end)

  it("a leaf that is not registered is refused at its place", function()
    assert.equal("t.xml:1:59: node 'Nowhere': no leaf registered as " ..
                 "'Nowhere' (bt.define it, or bt.register a leaf under that " ..
                 "name)", refused(doc("<Sequence><A/><Nowhere/>" ..
                                          "</Sequence>")))
  end)
end)

describe("tree:export('btcpp')", function()
  it("writes a leaf's numbers back as the same numbers of the same type",
     function()
    local mathtype = require("helpers.luaver").mathtype
    local seen = {}
    bt.register("Grip", function(_, _, args)
      seen[#seen + 1] = { args.position, mathtype(args.position),
                          args.force, mathtype(args.force), args.w }
      return true
    end)
    local tree = bt.tree(bt.import(doc('<Grip position="0.0" force="3" ' ..
                                       'w="0.7929"/>'), "btcpp"))
    bt.agent(tree):tick(1)
    bt.agent(bt.tree(bt.import(tree:export("btcpp"), "btcpp"))):tick(1)
    -- "float" where Lua tells floats from integers (5.3+)
    assert.same({ 0, mathtype(0.0), 3, "integer", 0.7929 }, seen[1])
    assert.same(seen[1], seen[2])
  end)

  it("writes a file that loads back to the same behaviour", function()
    leaves { A = "SFRS", B = "RRFS", C = "FS" }
    local text = doc('<ReactiveFallback name="top">' ..
      '<Parallel success_count="1" failure_count="2"><A/><B/></Parallel>' ..
      '<Repeat num_cycles="2"><Timeout msec="1500"><C/></Timeout></Repeat>' ..
      '<RetryUntilSuccessful num_attempts="3"><Inverter><A/></Inverter>' ..
      "</RetryUntilSuccessful><Sleep msec=\"500\"/>" ..
      '<ParallelAll><A/><C/></ParallelAll><KeepRunningUntilFailure><B/>' ..
      '</KeepRunningUntilFailure><RunOnce then_skip="false"><A/></RunOnce>' ..
      '<ForceFailure><AlwaysSuccess/></ForceFailure><Say message="{m}" n="2"/>' ..
      "</ReactiveFallback>")
    bt.register("Say", function(_, _, args)
      t:add("say " .. tostring(args.message) .. " " .. args.n)
      return bt.RUNNING
    end)
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "T" })
    local out = tree:export("btcpp")
    assert.matches('main_tree_to_execute="T"', out)
    assert.matches('<Say message="{m}" n="2"/>', out)
    assert.matches('<Action ID="Say">', out)
    local copy = bt.tree(bt.import(out, "btcpp"), { name = "T" })
    assert.equal(out, copy:export("btcpp"))
    -- the same scenario on both: identical statuses and leaf calls
    local runs = {}
    for i, tr in ipairs { tree, copy } do
      leaves { A = "SFRS", B = "RRFS", C = "FS" }
      local a = bt.agent(tr, { blackboard = { m = "hey" } })
      local steps = {}
      for k = 1, 12 do steps[k] = t:step(a, 0.5) end
      runs[i] = steps
    end
    assert.same(runs[1], runs[2])
    assert.is_true(#table.concat(runs[1]) > 200)
  end)

  it("keeps SubTrees as SubTrees; models the game's nodes by category",
     function()
    leaves { A = "S", B = "S" }
    bt.define("Twice", function(_, children)
      return bt.sequence { children[1], children[1] }
    end)
    bt.define("Both", function(_, children) return bt.sequence(children) end)
    bt.define("Ping", function() return bt.action(function() return true end) end)
    local text = '<root BTCPP_format="4" main_tree_to_execute="M">' ..
      '<BehaviorTree ID="M"><Sequence><SubTree ID="S" x="{y}" name="s1"/>' ..
      '<Twice times="2"><Both><Ping/><SubTree ID="S" x="3"/></Both></Twice>' ..
      '</Sequence></BehaviorTree><BehaviorTree ID="S"><Fallback>' ..
      '<Condition ID="A" v="{x}"/><SubTree ID="U"/></Fallback></BehaviorTree>' ..
      '<BehaviorTree ID="U"><B/></BehaviorTree></root>'
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "M" })
    local out = tree:export("btcpp")
    assert.equal(table.concat({
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<root BTCPP_format="4" main_tree_to_execute="M">',
      '  <BehaviorTree ID="M">',
      '    <Sequence>',
      '      <SubTree ID="S" x="{y}" name="s1"/>',
      '      <Twice times="2">',
      '        <Both>',
      '          <Ping/>',
      '          <SubTree ID="S" x="3"/>',
      '        </Both>',
      '      </Twice>',
      '    </Sequence>',
      '  </BehaviorTree>',
      '  <BehaviorTree ID="S">',
      '    <Fallback>',
      '      <Condition ID="A" v="{x}"/>',
      '      <SubTree ID="U"/>',
      '    </Fallback>',
      '  </BehaviorTree>',
      '  <BehaviorTree ID="U">',
      '    <B/>',
      '  </BehaviorTree>',
      '  <TreeNodesModel>',
      '    <Condition ID="A">',
      '      <inout_port name="v"/>',
      '    </Condition>',
      '    <Action ID="B"/>',
      '    <Decorator ID="Twice">',
      '      <input_port name="times"/>',
      '    </Decorator>',
      '    <Control ID="Both"/>',
      '    <Action ID="Ping"/>',
      '  </TreeNodesModel>',
      '</root>', "" }, "\n"), out)
    -- and it loads back, exporting the same text
    assert.equal(out, bt.tree(bt.import(out, "btcpp"), { name = "M" })
                        :export("btcpp"))
  end)

  it("refuses nodes BehaviorTree.CPP does not have, naming them", function()
    local tree = bt.tree(bt.sequence { bt.cooldown { seconds = 1,
      bt.action(function() end) } }, { name = "T" })
    local ok, msg = pcall(tree.export, tree, "btcpp")
    assert.is_false(ok)
    assert.equal("export btcpp: sequence/cooldown[1]: 'cooldown' has no " ..
                 "BehaviorTree.CPP equivalent", msg)
  end)
end)

describe("BehaviorTree.CPP built-ins written with bt.control", function()
  it("SequenceWithMemory keeps its place after a failure", function()
    leaves { A = "S", B = "FS", C = "RS" }
    local a = agent(doc("<SequenceWithMemory><A/><B/><C/></SequenceWithMemory>"))
    assert.equal("failure | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B failure", t:step(a, 1))
    -- the next run starts at B, not A
    assert.equal("running | enter B; tick B; exit B success; enter C; tick C",
                 t:step(a, 1))
    assert.equal("success | tick C; exit C success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success; enter C; tick C; exit C success",
                 t:step(a, 1))
  end)

  it("SequenceStar, format 3's name, is a SequenceWithMemory", function()
    leaves { A = "S", B = "FS" }
    local a = agent('<root><BehaviorTree ID="T"><SequenceStar><A/><B/>' ..
                    "</SequenceStar></BehaviorTree></root>")
    assert.equal("failure | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B failure", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("AsyncSequence and AsyncFallback yield after a child done at once",
     function()
    leaves { A = "S", B = "RS", C = "S", F = "F", G = "RF" }
    local a = agent(doc("<AsyncSequence><A/><B/><C/></AsyncSequence>"))
    -- A succeeded in the tick it started: running, B at the next tick
    assert.equal("running | enter A; tick A; exit A success", t:step(a, 1))
    assert.equal("running | enter B; tick B", t:step(a, 1))
    -- B had been running: C in the same tick
    assert.equal("success | tick B; exit B success; enter C; tick C; " ..
                 "exit C success", t:step(a, 1))
    local b = agent(doc("<AsyncFallback><F/><G/><A/></AsyncFallback>"))
    assert.equal("running | enter F; tick F; exit F failure", t:step(b, 1))
    assert.equal("running | enter G; tick G", t:step(b, 1))
    assert.equal("success | tick G; exit G failure; enter A; tick A; " ..
                 "exit A success", t:step(b, 1))
    -- a failure ends an AsyncSequence at once, and it starts over
    leaves { A = "S", B = "F" }
    local c = agent(doc("<AsyncSequence><B/><A/></AsyncSequence>"))
    assert.equal("failure | enter B; tick B; exit B failure", t:step(c, 1))
    assert.equal("failure | enter B; tick B; exit B failure", t:step(c, 1))
    -- written back as they were
    local out = bt.tree(bt.import(doc("<AsyncFallback><F/><A/>" ..
      "</AsyncFallback>"), "btcpp"), { name = "T" }):export("btcpp")
    assert.matches("<AsyncFallback>", out, 1, true)
  end)

  it("IfThenElse runs the branch its condition chose to its end", function()
    leaves { If = "RSF", Then = "RS", Else = "F" }
    local a = agent(doc("<IfThenElse><If/><Then/><Else/></IfThenElse>"))
    assert.equal("running | enter If; tick If", t:step(a, 1))
    assert.equal("running | tick If; exit If success; enter Then; tick Then",
                 t:step(a, 1))
    assert.equal("success | tick Then; exit Then success", t:step(a, 1))
    assert.equal("failure | enter If; tick If; exit If failure; enter Else; " ..
                 "tick Else; exit Else failure", t:step(a, 1))
    leaves { No = "F", Yes = "S" }
    local b = agent(doc("<IfThenElse><No/><Yes/></IfThenElse>"))
    assert.equal("failure | enter No; tick No; exit No failure", t:step(b, 1))
  end)

  it("WhileDoElse checks its condition every tick, aborting the other "
     .. "branch", function()
    leaves { W = "SSF", Do = "R", Else = "R" }
    local a = agent(doc("<WhileDoElse><W/><Do/><Else/></WhileDoElse>"))
    assert.equal("running | enter W; tick W; exit W success; enter Do; tick Do",
                 t:step(a, 1))
    assert.equal("running | enter W; tick W; exit W success; tick Do",
                 t:step(a, 1))
    assert.equal("running | enter W; tick W; exit W failure; abort Do; " ..
                 "enter Else; tick Else", t:step(a, 1))
  end)

  it("are Bonsai's if_then_else and while_do_else", function()
    leaves { A = "S", B = "S" }
    local n = bt.import(doc("<Sequence><IfThenElse><A/><B/></IfThenElse>" ..
      "<WhileDoElse><A/><B/><A/></WhileDoElse></Sequence>"), "btcpp")
    assert.equal("if_then_else", n[1].type)
    assert.equal("while_do_else", n[2].type)
  end)

  it("RunOnce skips after its run (then_skip, true unless said)", function()
    leaves { A = "S", B = "S" }
    local a = agent(doc("<Sequence><RunOnce><A/></RunOnce><B/></Sequence>"))
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
  end)

  it("SkipUnlessUpdated and WaitValueUpdate watch the key of 'entry'",
     function()
    leaves { A = "S", B = "S" }
    local a = agent(doc('<Sequence><SkipUnlessUpdated entry="{goal}"><A/>' ..
                        "</SkipUnlessUpdated><B/></Sequence>"))
    assert.equal("success | enter B; tick B; exit B success", t:step(a, 1))
    a.bb.goal = 1
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    a = agent(doc('<WaitValueUpdate entry="goal"><A/></WaitValueUpdate>'))
    assert.equal("running |", t:step(a, 1))
    a.bb.goal = 2
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("SkipUnlessUpdated reads the caller's key through a SubTree's port",
     function()
    leaves { A = "S" }
    local a = agent('<root BTCPP_format="4" main_tree_to_execute="T">' ..
      '<BehaviorTree ID="T"><SubTree ID="In" target="{enemy}"/>' ..
      '</BehaviorTree><BehaviorTree ID="In"><SkipUnlessUpdated ' ..
      'entry="{target}"><A/></SkipUnlessUpdated></BehaviorTree></root>')
    assert.equal("skipped |", t:step(a, 1))
    a.bb.enemy = "wolf"
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)

  it("the kinds export back to them and load again", function()
    leaves { A = "S", B = "S" }
    local text = doc("<Sequence><IfThenElse><A/><B/></IfThenElse>" ..
      "<WhileDoElse><A/><B/></WhileDoElse>" ..
      '<RunOnce then_skip="true"><A/></RunOnce>' ..
      '<RunOnce then_skip="false"><A/></RunOnce>' ..
      '<SkipUnlessUpdated entry="{k}"><A/></SkipUnlessUpdated>' ..
      '<WaitValueUpdate entry="{k}"><B/></WaitValueUpdate></Sequence>')
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "kinds" })
    local out = tree:export("btcpp")
    for _, s in ipairs { "<IfThenElse>", "<WhileDoElse>",
                         '<RunOnce then_skip="true">',
                         '<RunOnce then_skip="false">',
                         '<SkipUnlessUpdated entry="{k}">',
                         '<WaitValueUpdate entry="{k}">' } do
      assert.matches(s, out, 1, true)
    end
    local again = bt.tree(bt.import(out, "btcpp"), { name = "kinds2" })
    assert.equal(tree:dump(), again:dump())
  end)

  it("SwitchN ticks the case equal to the variable, else the default",
     function()
    leaves { Red = "R", Green = "S", Other = "S" }
    local a = agent(doc('<Switch2 variable="{color}" case_1="red" ' ..
                        'case_2="2"><Red/><Green/><Other/></Switch2>'),
                    { blackboard = { color = "red" } })
    assert.equal("running | enter Red; tick Red", t:step(a, 1))
    a.bb.color = 2 -- a number equal to the case "2"
    assert.equal("success | abort Red; enter Green; tick Green; " ..
                 "exit Green success", t:step(a, 1))
    a.bb.color = "blue"
    assert.equal("success | enter Other; tick Other; exit Other success",
                 t:step(a, 1))
  end)

  it("export writes them back as they were", function()
    leaves { A = "S", B = "S" }
    local text = doc('<Switch2 variable="{v}" case_1="x" case_2="y">' ..
                     "<A/><B/><IfThenElse><A/><B/></IfThenElse></Switch2>")
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "sw" })
    local out = tree:export("btcpp")
    assert.matches('<Switch2 [^>]*variable="{v}"', out)
    assert.matches('case_2="y"', out)
    assert.matches("<IfThenElse>", out)
    local again = bt.tree(bt.import(out, "btcpp"), { name = "sw2" })
    assert.equal(bt.SUCCESS, bt.agent(again, { blackboard = { v = "y" } })
                               :tick(1))
  end)
end)

describe("SetBlackboard and UnsetBlackboard", function()
  it("write and clear blackboard keys, through subtree remaps too",
     function()
    leaves { A = "S" }
    local a = agent(doc('<Sequence><SetBlackboard value="42" ' ..
      'output_key="answer"/><SetBlackboard value="{answer}" ' ..
      'output_key="{copy}"/><SetBlackboard value="yes" output_key="w"/>' ..
      '<UnsetBlackboard key="gone"/><A/></Sequence>'),
      { blackboard = { gone = 1 } })
    assert.equal(bt.SUCCESS, a:tick(1))
    assert.equal(42, a.bb.answer)
    assert.equal(42, a.bb.copy)
    assert.equal("yes", a.bb.w)
    assert.is_nil(a.bb.gone)
    assert.matches("needs ports 'value' and 'output_key'",
      refused(doc('<SetBlackboard value="1"/>')))
    local out = bt.tree(bt.import(doc('<Sequence><SetBlackboard value="42" ' ..
      'output_key="answer"/><UnsetBlackboard key="x"/></Sequence>'),
      "btcpp"), { name = "sb" }):export("btcpp")
    assert.matches('<SetBlackboard [^>]*output_key="answer"', out)
    assert.matches('<UnsetBlackboard key="x"', out)
  end)
end)

describe("TryCatch", function()
  it("runs its try block as a sequence, its catch child after a failure",
     function()
    leaves { A = "SS", B = "RFS", Catch = "RS" }
    local a = agent(doc("<TryCatch><A/><B/><Catch/></TryCatch>"))
    assert.equal("running | enter A; tick A; exit A success; enter B; tick B",
                 t:step(a, 1))
    assert.equal("running | tick B; exit B failure; enter Catch; tick Catch",
                 t:step(a, 1))
    assert.equal("failure | tick Catch; exit Catch success", t:step(a, 1))
    assert.equal("success | enter A; tick A; exit A success; enter B; " ..
                 "tick B; exit B success", t:step(a, 1))
    assert.matches("needs at least 2 children",
      refused(doc("<TryCatch><A/></TryCatch>")))
    assert.matches("catch_on_halt=\"true\" ticks the catch child",
      refused(doc('<TryCatch catch_on_halt="true"><A/><B/></TryCatch>')))
  end)
end)

describe("LoopInt, LoopDouble, LoopString, LoopBool", function()
  it("tick their child once per item of a queue", function()
    local seen = {}
    bt.register("Use", function(_, bb) seen[#seen + 1] = bb.v
                                       return bb.v ~= 13 end)
    local a = agent(doc('<LoopInt queue="1;2;3" value="{v}"><Use/></LoopInt>'))
    assert.equal(bt.RUNNING, a:tick(1))
    assert.equal(bt.RUNNING, a:tick(1))
    assert.equal(bt.RUNNING, a:tick(1))
    assert.equal(bt.SUCCESS, a:tick(1)) -- empty
    assert.same({ 1, 2, 3 }, seen)
    -- a new run copies the static queue again
    assert.equal(bt.RUNNING, a:tick(1))
    assert.same({ 1, 2, 3, 1 }, seen)
    -- a queue on the blackboard is consumed; a failure fails the loop
    seen = {}
    local b = agent(doc('<LoopDouble queue="{q}" value="{v}" ' ..
                        'if_empty="FAILURE"><Use/></LoopDouble>'),
                    { blackboard = { q = { 0.5, 13, 7 } } })
    assert.equal(bt.RUNNING, b:tick(1))
    assert.equal(bt.FAILURE, b:tick(1))
    assert.same({ 0.5, 13 }, seen)
    assert.same({ 7 }, b.bb.q)
    assert.equal(bt.RUNNING, b:tick(1))
    assert.equal(bt.FAILURE, b:tick(1)) -- if_empty
    assert.matches("bad item 'x' in port 'queue'",
      refused(doc('<LoopInt queue="1;x" value="{v}"><Use/></LoopInt>')))
    assert.matches("if_empty=\"SKIPPED\"", refused(doc('<LoopBool ' ..
      'queue="true" value="{v}" if_empty="SKIPPED"><Use/></LoopBool>')))
  end)
end)

describe("a pre-condition read from XML", function()
  local count = require "helpers.lua_calls"
  local function lua_calls(tree, hp) return count(bt, tree, hp) end
  local function attack() return bt.action(function() return "success" end) end

  it("is the C check Lua's skip_if makes: no Lua call of its own",
     function()
    bt.register("Attack", attack())
    local plain = lua_calls(bt.tree(bt.sequence { attack() }))
    local tree = bt.tree(bt.import(doc(
      '<Sequence _skipIf="hp &lt; 3"><Attack/></Sequence>'), "btcpp"))
    local xml, skipped = lua_calls(tree), lua_calls(tree, 1)
    local lua = lua_calls(bt.tree(bt.sequence { skip_if = "hp < 3",
                                                attack() }))
    assert.equal(plain, lua)
    assert.equal(plain, xml) -- 300 more when btcpp compiled it in Lua
    if not jit then assert.equal(100, xml - skipped) end -- the leaf's
  end)

  it("renamed by a subtree's port is a check in C too", function()
    bt.register("Attack", attack())
    local plain = lua_calls(bt.tree(bt.sequence { attack() }))
    local tree = bt.tree(bt.import('<root BTCPP_format="4" ' ..
      'main_tree_to_execute="T"><BehaviorTree ID="T">' ..
      '<SubTree ID="S" life="{hp}"/></BehaviorTree>' ..
      '<BehaviorTree ID="S"><Sequence _skipIf="life &lt; 3"><Attack/>' ..
      '</Sequence></BehaviorTree></root>', "btcpp"))
    assert.equal(plain, lua_calls(tree))
    if not jit then -- skipped: the leaf's 100 calls are gone
      assert.equal(plain - 100, lua_calls(tree, 1))
    end
  end)
end)

describe("a bare '&' in an attribute, as tinyxml2 reads it", function()
  it("is read as itself, tick by tick, and the file places stay exact",
     function()
    leaves { A = "S" }
    local a = agent(doc('<Sequence><Script code="x := 1"/>' ..
      '<ScriptCondition code="x == 1 && y != 2 &amp;&amp; 1 &lt; 2"/>' ..
      '<A/></Sequence>'))
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    a.bb.y = 2
    assert.equal("failure |", t:step(a, 1))
    -- the column of an element after bare '&'s on its line, and of an
    -- error after them, are the file's (with UTF-8 before them too)
    local xml = require "bonsai.formats.xml"
    local r = xml.parse('<r a="é&&&&"><B/></r>', "t.xml")
    local plain = xml.parse('<r a="é1234"><B/></r>', "t.xml")
    assert.equal(plain[1].col, r[1].col)
    assert.equal("é&&&&", r.attrs.a)
    assert.equal("t.xml:2:18: node 'Nope': no leaf registered as 'Nope' " ..
      "(bt.define it, or bt.register a leaf under that name)",
      refused('<root BTCPP_format="4"><BehaviorTree ID="T"><Sequence>\n' ..
              '<A x="&& &&"/>   <Nope/></Sequence></BehaviorTree></root>'))
    local bad = '<root BTCPP_format="4"><BehaviorTree ID="T">\n' ..
      '<A code="a && b"/><B></C></BehaviorTree></root>'
    local good = bad:gsub("&&", "aa")
    assert.equal(refused(good), refused(bad))
    assert.matches("^t.xml:2:24: XML error: mismatched tag at 'C'$",
                   refused(bad))
  end)

  it("leaves entities refused, naming them, and names the character of "
     .. "an error", function()
    assert.equal("t.xml:1:45: XML error: undefined entity '&nbsp;' (a tree "
      .. "file declares no entity: write &amp; for '&'; &lt; &gt; &amp; "
      .. "&quot; &apos; and character references like &#38; are read)",
      refused(doc('<A code="a && b &nbsp; c"/>')))
    assert.matches("DOCTYPE declarations are not allowed",
      refused('<!DOCTYPE r [<!ENTITY e "&&">]><root/>'))
    assert.equal("t.xml:1:61: XML error: not well-formed (invalid token) at "
      .. "'<' (write &lt; for a '<' inside an attribute value)",
      refused(doc('<A code="a && b < c"/>')))
    assert.matches("XML error: not well%-formed %(invalid token%) at byte "
      .. "0x01 %(a tree file is UTF%-8 text%)", refused(doc('<A x="\1"/>')))
    -- character references are read, as tinyxml2 reads them
    leaves { A = "S" }
    local a = agent(doc('<Sequence><Script code="s := &#39;&#x41;&#38;&amp;&#39;"/>' ..
                        '<A/></Sequence>'))
    a:tick(1)
    assert.equal("A&&", a.bb.s)
  end)
end)

describe("scripts of a file are visible", function()
  it("in tree:nodes and dumps, with the keys a subtree's ports remap",
     function()
    local t = bt.tree(bt.import([[<root BTCPP_format="4" main_tree_to_execute="M">
<BehaviorTree ID="M"><SubTree ID="S" x="{outer}"/></BehaviorTree>
<BehaviorTree ID="S"><Sequence><Script code="x := x + 1"/>
<ScriptCondition code="x > 2" _skipIf="x == 9"/></Sequence></BehaviorTree>
</root>]], "btcpp"), { name = "T" })
    local n = t:nodes()
    assert.equal("x := x + 1", n[2].script)
    assert.same({ "outer" }, n[2].keys)
    assert.equal("x > 2", n[3].script)
    assert.same({ skip_if = "x == 9" }, n[3].conditions)
    assert.same({ "outer" }, n[3].keys)
    assert.equal('S (sequence)\n  action[1] "x := x + 1"\n' ..
                 '  check[2] outer > 2 skip_if "x == 9"\n', t:dump())
  end)
end)

describe("a SubTree's model and editor attributes", function()
  -- BehaviorTree.CPP's t14 (subtree model), its two texts in one file
  local T14 = [[<root BTCPP_format="4" main_tree_to_execute="MainTree">
  <TreeNodesModel>
    <SubTree ID="MySub">
      <input_port name="sub_in_value" default="42"/>
      <input_port name="sub_in_name"/>
      <output_port name="sub_out_result" default="{out_result}"/>
      <output_port name="sub_out_state"/>
    </SubTree>
  </TreeNodesModel>
  <BehaviorTree ID="MySub">
    <Sequence>
      <ScriptCondition code="sub_in_value==42 && sub_in_name=='john'" />
      <Script code="sub_out_result:=69; sub_out_state:='ACTIVE'" />
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="MainTree">
    <Sequence>
      <Script code="in_name:= 'john' "/>
      <SubTree ID="MySub" sub_in_name="{in_name}" ATTRS
                          sub_out_state="{out_state}"/>
      <ScriptCondition code=" out_result==69 && out_state=='ACTIVE' " />
    </Sequence>
  </BehaviorTree>
</root>]]

  it("takes the ports the model gives a default (a literal, a {key})",
     function()
    local a = agent((T14:gsub("ATTRS", "")))
    assert.equal("success", a:tick(1))
    assert.equal(69, a.bb.out_result)
    assert.equal("ACTIVE", a.bb.out_state)
    assert.is_nil(a.bb.sub_in_value) -- a literal, not a key of the caller
    -- a port the SubTree gives wins over the default
    a = agent((T14:gsub("ATTRS", 'sub_in_value="41"')))
    assert.equal("failure", a:tick(1))
    a = agent((T14:gsub("ATTRS", 'sub_out_result="{elsewhere}"')))
    assert.equal("failure", a:tick(1))
    assert.equal(69, a.bb.elsewhere)
  end)

  it("accepts an editor's attributes, keeps them for the export, and "
     .. "writes the model back", function()
    local text = T14:gsub("ATTRS", '_collapsed="true" _uid="7" ' ..
                          '_fullpath="MainTree/MySub"')
    local tree = bt.tree(bt.import(text, "btcpp"), { name = "T" })
    local out = tree:export("btcpp")
    assert.matches('<SubTree ID="MySub" sub_in_name="{in_name}" ' ..
      '_collapsed="true" _uid="7" _fullpath="MainTree/MySub" ' ..
      'sub_out_state="{out_state}"/>', out, 1, true)
    assert.matches('<output_port name="sub_out_result" ' ..
                   'default="{out_result}"/>', out, 1, true)
    local a = bt.agent(bt.tree(bt.import(out, "btcpp"), { name = "T" }))
    assert.equal("success", a:tick(1))
    assert.equal(69, a.bb.out_result)
    assert.equal("t.xml:19:7: node 'MySub': unknown attribute '_autoremapp' " ..
                 "(did you mean '_autoremap'?)",
                 refused((T14:gsub("ATTRS", '_autoremapp="true"'))))
  end)
end)

describe("BehaviorTree.CPP nodes on the new core kinds", function()
  -- the tree of a BehaviorTree.CPP file whose main tree is body
  local function tree(body)
    return bt.tree(bt.import(doc(body), "btcpp"), { name = "T" })
  end

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
