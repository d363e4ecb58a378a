-- subtrees_spec: bt.subtree (API.md "Subtrees and more nodes"): a tree
-- run inside another, with its arguments and remapped keys, tick by tick
-- through the trace helper, with dumps, builder forms and hot reloads of
-- the inner and the outer tree.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local bbpairs = luaver.bbpairs
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

local keep = {}
after_each(function() keep = {} end)

local agent_of, tick_error, tree_error =
  trace.agent_of, trace.tick_error, trace.tree_error

describe("subtree", function()
  local n = 0
  local function fresh(prefix) -- tree names unique to one spec
    n = n + 1
    return prefix .. n
  end

  it("runs another tree's root as a child, found by tree or by name",
     function()
    local name = fresh "patrol"
    local inner = bt.tree(bt.sequence { t:action("A", "RS"),
                                        t:action("B", "F") }, { name = name })
    for _, ref in ipairs { inner, name } do
      local a = agent_of(bt.selector { bt.subtree(ref), t:action("C", "S") })
      assert.equal("running | enter A; tick A", t:step(a, 1))
      assert.same({ "selector", name, "sequence[1]", "A" }, a:running())
      assert.equal("success | tick A; exit A success; enter B; tick B; "
                   .. "exit B failure; enter C; tick C; exit C success",
                   t:step(a, 1))
      t:set("A", "RS")
    end
    -- agents of the inner tree itself are not affected
    local b = bt.agent(inner)
    assert.equal("running | enter A; tick A", t:step(b, 1))
  end)

  it("is named after its tree unless named, and shows in dumps", function()
    local name = fresh "inner"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    local tree = bt.tree(bt.sequence { bt.subtree(name),
                                       bt.subtree(name, { name = "again" }) },
                         { name = "T" })
    assert.equal("sequence\n  " .. name .. " (subtree)\n    A (action)\n"
                 .. "  again (subtree)\n    A (action)\n", tree:dump())
  end)

  it("reports unknown names, bad trees and recursion as definition errors",
     function()
    assert.equal("tree 'T': sequence/subtree[2]: no tree named 'nope.tree'",
                 tree_error(bt.sequence { t:action("A", "S"),
                                          bt.subtree "nope.tree" },
                            { name = "T" }))
    assert.matches("'tree' must be a tree or the name of one %(got number%)",
                   tree_error(bt.subtree(3)))
    local an, bn = fresh "a", fresh "b"
    local ta = bt.tree(t:action("A", "S"), { name = an })
    local tb = bt.tree(bt.sequence { bt.subtree(an) }, { name = bn })
    local ok, msg = ta:reload(bt.subtree(an))
    assert.is_nil(ok)
    assert.equal("tree '" .. an .. "': subtree: subtree '" .. an
                 .. "' contains itself", msg)
    ok, msg = ta:reload(bt.selector { bt.subtree(bn) })
    assert.is_nil(ok)
    assert.equal("tree '" .. an .. "': selector/" .. bn .. "/sequence[1]/subtree[1]: "
                 .. "subtree '" .. an .. "' contains itself", msg)
    -- both still run their old versions
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(tb), 1))
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(ta), 1))
  end)

  it("gives its args to the leaves inside; a leaf's own args come first, "
     .. "missing fields read from the subtree's", function()
    local seen = {}
    local function show(tag)
      return function(_, _, args)
        seen[#seen + 1] = tag .. ":" .. tostring(args and args.speed) .. ","
                          .. tostring(args and args.mode)
        return true
      end
    end
    local name = fresh "walk"
    keep[#keep + 1] = bt.tree(bt.sequence { bt.action(show "plain"),
                          bt.action(show "own", { mode = "sneak" }),
                          bt.action(show "both", { speed = 1 }) },
            { name = name })
    local a = agent_of(bt.sequence {
      bt.subtree(name, { args = { speed = 5, mode = "run" } }),
      bt.subtree(name),
    })
    assert.equal("success", a:tick(1))
    assert.same({ "plain:5,run", "own:5,sneak", "both:1,run",
                  "plain:nil,nil", "own:nil,sneak", "both:1,nil" }, seen)
  end)

  it("passes args down through a nested subtree without args of its own",
     function()
    local got
    local leafn, midn = fresh "leaf", fresh "mid"
    keep[#keep + 1] = bt.tree(bt.action(function(_, _, args) got = args.v return true end),
            { name = leafn })
    keep[#keep + 1] = bt.tree(bt.sequence { bt.subtree(leafn) }, { name = midn })
    local a = agent_of(bt.subtree(midn, { args = { v = 42 } }))
    assert.equal("success", a:tick(1))
    assert.equal(42, got)
  end)

  it("remaps checks, is_set and guards onto the caller's keys", function()
    local name = fresh "hunt"
    keep[#keep + 1] = bt.tree(bt.sequence {
      bt.is_set "target",
      bt.check("target", "==", "$prey"),
      bt.guard { bt.check("hp", ">", 10), abort = "self",
                 t:action("A", "R") },
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy",
                                                    prey = "wanted" } }),
                       { blackboard = { enemy = "wolf", wanted = "wolf",
                                        hp = 20, target = "ignored" } })
    assert.equal("running | enter A; tick A", t:step(a, 1))
    a.bb.hp = 5 -- not remapped: the caller's hp; the guard aborts A
    assert.equal("failure | abort A", t:step(a, 1))
    a.bb.hp = 20
    a.bb.wanted = "bear"
    assert.equal("failure |", t:step(a, 1))
    a.bb.enemy = nil
    a.bb.wanted = nil
    assert.equal("failure |", t:step(a, 1))
  end)

  it("wants remap to map key names to key names", function()
    local name = fresh "r"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    assert.equal("tree 'T': sequence/" .. name .. ": 'remap' must map key "
                 .. "names to key names",
                 tree_error(bt.sequence { bt.subtree(name,
                   { remap = { target = 3 } }) }, { name = "T" }))
    assert.equal("tree 'T': sequence/" .. name .. ": 'remap' must be a "
                 .. "table of key names",
                 tree_error(bt.sequence { bt.subtree(name,
                   { remap = "target" }) }, { name = "T" }))
  end)

  it("composes the remaps of nested subtrees", function()
    local innern, midn = fresh "inner", fresh "mid"
    keep[#keep + 1] = bt.tree(bt.check("x", "==", 1), { name = innern })
    keep[#keep + 1] = bt.tree(bt.subtree(innern, { remap = { x = "y" } }), { name = midn })
    local a = agent_of(bt.subtree(midn, { remap = { y = "z" } }),
                       { blackboard = { z = 1, y = 2, x = 3 } })
    assert.equal("success", a:tick(1))
    a.bb.z = 2
    assert.equal("failure", a:tick(1))
  end)

  it("gives Lua leaves inside a blackboard on which the remapped keys read "
     .. "and write the caller's", function()
    local name = fresh "view"
    local log = {}
    keep[#keep + 1] = bt.tree(bt.action(function(_, bb)
      log[#log + 1] = tostring(bb.target) .. "/" .. tostring(bb:get("target"))
                      .. "/" .. tostring(bb:has("target")) .. "/"
                      .. tostring(bb.other)
      bb.target = "hit " .. bb.target
      bb:set("count", (bb:get("count", 0)) + 1)
      bb.other = "mine"
      local keys = {}
      for k in bbpairs(bb) do keys[#keys + 1] = k end
      table.sort(keys)
      log[#log + 1] = table.concat(keys, ",")
      return true
    end), { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy",
                                                    count = "n" } }),
                       { blackboard = { enemy = "wolf", target = "x" } })
    assert.equal("success", a:tick(1))
    assert.equal("hit wolf", a.bb.enemy)
    assert.equal("x", a.bb.target)   -- the caller's own 'target' is untouched
    assert.equal(1, a.bb.n)
    assert.equal("mine", a.bb.other) -- keys not remapped are the caller's
    assert.same({ "wolf/wolf/true/nil", "count,other,target" }, log)
    -- the caller's observers see the writes under their own names
    local changes = {}
    a.bb:observe("enemy", function(_, k, new)
      changes[#changes + 1] = k .. "=" .. new
    end)
    assert.equal("success", a:tick(1))
    assert.same({ "enemy=hit hit wolf" }, changes)
  end)

  it("gives utility functions inside the view too", function()
    local name = fresh "pick"
    keep[#keep + 1] = bt.tree(bt.utility_selector {
      bt.utility(function(_, bb) return bb.danger end, t:action("F", "R")),
      bt.utility(function() return 1 end, t:action("P", "R")),
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { danger = "threat" } }),
                       { blackboard = { threat = 0, danger = 9 } })
    assert.equal("running | enter P; tick P", t:step(a, 1))
    a.bb.threat = 5
    assert.equal("running | enter F; tick F; abort P", t:step(a, 1))
  end)

  it("gives remapped views to registered leaves, tasks and lifecycle "
     .. "callbacks, with their events as registered", function()
    local name = fresh "named"
    local seen = {}
    bt.register("kinds.view.exitonly", {
      tick = function(_, bb) seen[#seen + 1] = "tick " .. bb.target
                              return bt.RUNNING end,
      exit = function(_, bb, _, st) seen[#seen + 1] = "exit " .. st .. " "
                                      .. bb.target end,
    })
    bt.register("kinds.view.cond",
                function(_, bb) return bb.target == "wolf" end)
    keep[#keep + 1] = bt.tree(bt.sequence {
      bt.condition "kinds.view.cond",
      bt.task(function(_, bb)
        seen[#seen + 1] = "task " .. bb.target
        coroutine.yield()
        seen[#seen + 1] = "task again " .. bb.target
        return true
      end),
      bt.action "kinds.view.exitonly",
    }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { target = "enemy" } }),
                       { blackboard = { enemy = "wolf" } })
    assert.equal("running", a:tick(1))
    a.bb.enemy = "wolf" -- the same value: no change
    assert.equal("running", a:tick(1))
    assert.equal("running", a:tick(1))
    a:abort()
    assert.same({ "task wolf", "task again wolf", "tick wolf", "tick wolf",
                  "exit aborted wolf" }, seen)
  end)
end)

describe("a condition script inside a remapping subtree", function()
  local n = 0
  local function fresh(prefix)
    n = n + 1
    return prefix .. n
  end
  local count = require "helpers.lua_calls"
  local function lua_calls(tree, hp) return count(bt, tree, hp) end
  local function attack() return bt.action(function() return "success" end) end

  it("has its keys renamed as it compiles: a comparison is the C check it "
     .. "is outside, with no Lua call of its own", function()
    local bare, name = fresh "bare", fresh "guarded"
    keep[#keep + 1] = bt.tree(bt.sequence { attack() }, { name = bare })
    keep[#keep + 1] = bt.tree(bt.sequence { skip_if = "life < 3", attack() },
                              { name = name })
    -- the same subtree without the condition (its leaf sees the view,
    -- made by one Lua call)
    local plain = lua_calls(bt.tree(bt.subtree(bare,
                                               { remap = { life = "hp" } })))
    local tree = bt.tree(bt.subtree(name, { remap = { life = "hp" } }))
    assert.equal(plain, lua_calls(tree)) -- 100 more through the view
    if not jit then -- skipped on the caller's hp: no Lua call at all
      assert.equal(0, lua_calls(tree, 1))
    end
    local a = bt.agent(tree, { blackboard = { hp = 1, life = 10 } })
    assert.equal("skipped", a:tick(1)) -- the caller's hp, not its life
    a.bb.hp = 5
    assert.equal("success", a:tick(1))
    assert.matches('skip_if "life < 3"', a.tree:dump(a), 1, true)
  end)

  it("reads and writes the caller's keys in several statements, once "
     .. "renamed (a remap that swaps two keys)", function()
    local leaf = bt.action(function() return "failure" end)
    leaf.success_if = "a == 1 && b == 2"
    leaf.on_success = "x := a; a := b + 10"
    local name = fresh "swapped"
    keep[#keep + 1] = bt.tree(bt.sequence { leaf }, { name = name })
    local a = agent_of(bt.subtree(name, { remap = { a = "b", b = "a" } }),
                       { blackboard = { a = 2, b = 1 } })
    assert.equal("success", a:tick(1)) -- inner a, b: the caller's b, a
    assert.equal(1, a.bb.x) -- a key not remapped is the caller's
    assert.equal(12, a.bb.b) -- inner a := inner b + 10
    assert.equal(2, a.bb.a)
  end)
end)

describe("subtree reloads", function()
  local n = 0
  local function fresh(prefix)
    n = n + 1
    return "reload." .. prefix .. n
  end

  it("reloading the subtree's tree reloads every tree that uses it; "
     .. "running nodes are kept by path", function()
    local name = fresh "inner"
    local inner = bt.tree(bt.sequence { t:action("A", "RRS") },
                          { name = name })
    local outer = bt.tree(bt.sequence { name = "root", bt.subtree(name) },
                          { name = "T" })
    local a = bt.agent(outer)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    assert.is_true(inner:reload(bt.sequence { t:action("B", "S"),
                                              t:action("A", "RS") }))
    assert.equal(5, outer.size)
    -- the running A is kept (its place among siblings changed: the
    -- sequence keeps its running child, found by name)
    assert.equal("running | tick A", t:step(a, 1))
    assert.equal("success | tick A; exit A success", t:step(a, 1))
    assert.equal("success | enter B; tick B; exit B success; enter A; tick A; "
                 .. "exit A success", t:step(a, 1))
  end)

  it("reloads users of users, and takes another tree's version", function()
    local cn, bn = fresh "c", fresh "b"
    local c = bt.tree(t:action("A", "S"), { name = cn })
    keep[#keep + 1] = bt.tree(bt.sequence { bt.subtree(cn) }, { name = bn })
    local top = bt.tree(bt.selector { bt.subtree(bn) }, { name = "T" })
    local a = bt.agent(top)
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
    assert.is_true(c:reload(t:action("B", "F")))
    assert.equal("failure | enter B; tick B; exit B failure", t:step(a, 1))
    assert.is_true(c:reload(bt.tree(t:action("C", "S"))))
    assert.equal("success | enter C; tick C; exit C success", t:step(a, 1))
  end)

  it("leaves every tree unchanged when a user would not compile", function()
    local innern, outern = fresh "inner", fresh "outer"
    local inner = bt.tree(t:action("A", "S"), { name = innern })
    local outer = bt.tree(bt.sequence { bt.subtree(innern) },
                          { name = outern })
    local ok, msg = inner:reload(bt.sequence { bt.subtree(outern) })
    assert.is_nil(ok)
    assert.equal("tree '" .. innern .. "': sequence/" .. outern
                 .. "/sequence[1]/subtree[1]: subtree '" .. innern
                 .. "' contains itself", msg)
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(outer), 1))
    assert.equal("success | enter A; tick A; exit A success",
                 t:step(bt.agent(inner), 1))
    -- nor may it take outer's version (which inlines it)
    ok, msg = inner:reload(outer)
    assert.is_nil(ok)
    assert.equal("tree '" .. innern .. "': subtree '" .. innern
                 .. "' contains itself", msg)
    -- once outer no longer uses inner, inner may use outer
    assert.is_true(outer:reload(t:action("B", "S")))
    assert.is_true(inner:reload(bt.sequence { bt.subtree(outern) }))
    assert.equal("success | enter B; tick B; exit B success",
                 t:step(bt.agent(inner), 1))
  end)

  it("follows bt.reload of the subtree's file", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir '" .. dir .. "'"))
    local path = dir .. "/kinds_sub.lua"
    local function write(text)
      local f = assert(io.open(path, "w"))
      f:write(text)
      f:close()
    end
    bt.register("kinds.file.a", t:leafdef("A", "R"))
    bt.register("kinds.file.b", t:leafdef("B", "S"))
    write("return bt.sequence { bt.action 'kinds.file.a' }\n")
    assert(bt.load(path))
    local outer = bt.tree(bt.sequence { bt.subtree "kinds_sub",
                                        bt.action "kinds.file.b" },
                          { name = "T" })
    local a = bt.agent(outer)
    assert.equal("running | enter A; tick A", t:step(a, 1))
    write("return bt.sequence { bt.action 'kinds.file.b' }\n-- longer\n")
    assert(bt.reload(path))
    assert.equal("success | abort A; enter B; tick B; exit B success; "
                 .. "enter B; tick B; exit B success", t:step(a, 1))
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("works from the builder, with a utility in a utility selector",
     function()
    local name = fresh "b"
    keep[#keep + 1] = bt.tree(t:action("A", "S"), { name = name })
    local tree = bt.builder():utility_selector()
      :action(t:leafdef("B", "S")):name("B")
      :subtree(name, { name = "sub" }):utility(function() return 1 end)
      :build { name = "T" }
    local a = bt.agent(tree)
    assert.equal("success | enter A; tick A; exit A success", t:step(a, 1))
  end)
end)
