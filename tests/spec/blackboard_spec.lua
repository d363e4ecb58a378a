-- blackboard_spec: values, scopes, observers and iteration of blackboards.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local mathtype, bbpairs = luaver.mathtype, luaver.bbpairs

describe("blackboard values", function()
  it("keeps any Lua value; nil clears", function()
    local bb = bt.blackboard()
    local t, f = {}, function() end
    bb.i, bb.n, bb.s, bb.b, bb.t, bb.f = 3, 2.5, "x", false, t, f
    assert.equal(3, bb.i)
    assert.is_true(mathtype(bb.i) == "integer")
    assert.equal(2.5, bb.n)
    assert.equal("x", bb.s)
    assert.equal(false, bb.b)
    assert.equal(t, bb.t)
    assert.equal(f, bb.f)
    bb.t = nil
    assert.is_nil(bb.t)
    assert.is_false(bb:has("t"))
    assert.is_true(bb:has("b"))
  end)

  it("get returns the default only for missing keys", function()
    local bb = bt.blackboard { zero = 0, no = false }
    assert.equal(0, bb:get("zero", 9))
    assert.equal(false, bb:get("no", 9))
    assert.equal(9, bb:get("missing", 9))
    bb:set("k", "v")
    assert.equal("v", bb:get("k"))
  end)

  it("methods shadow keys of the same name for dot access only", function()
    local bb = bt.blackboard()
    bb:set("get", 5)
    assert.is_function(bb.get)
    assert.equal(5, bb:get("get"))
  end)

  it("rejects keys that are not strings", function()
    local bb = bt.blackboard()
    assert.has_error(function() bb[1] = 2 end)
    assert.has_error(function() bb:set(true, 2) end)
  end)
end)

describe("blackboard scopes", function()
  it("falls through to the parent on reads; writes stay local", function()
    local world = bt.blackboard { time = 7, alarm = false }
    local bb = bt.blackboard { parent = world, hp = 10 }
    assert.equal(7, bb.time)
    bb.time = 9
    assert.equal(9, bb.time)
    assert.equal(7, world.time)
    bb.time = nil -- unshadows
    assert.equal(7, bb.time)
    assert.is_true(bb:has("alarm"))
  end)

  it("shares table values of the parent", function()
    local t = {}
    local world = bt.blackboard { shared = t }
    local bb = bt.blackboard { parent = world }
    assert.equal(t, bb.shared)
  end)

  it("iterates own keys, then the parent's keys it does not shadow", function()
    local world = bt.blackboard { a = 1, b = 2 }
    local bb = bt.blackboard { parent = world, b = 20, c = 30 }
    local seen = {}
    for k, v in bbpairs(bb) do seen[#seen + 1] = k .. "=" .. tostring(v) end
    table.sort(seen)
    assert.same({ "a=1", "b=20", "c=30" }, seen)
    local n = 0
    for _ in bb:pairs() do n = n + 1 end
    assert.equal(3, n)
  end)
end)

describe("blackboard observers", function()
  it("are called after each change with (bb, key, new, old)", function()
    local bb = bt.blackboard { hp = 10 }
    local log = {}
    bb:observe("hp", function(b, k, new, old)
      log[#log + 1] = { b == bb, k, new, old }
    end)
    bb.hp = 10 -- the same value is not a change
    bb.hp = 5
    bb:set("hp", nil)
    assert.same({ { true, "hp", 5, 10 }, { true, "hp", nil, 5 } }, log)
  end)

  it("treat the same table again as no change, another table as a change", function()
    local bb = bt.blackboard()
    local n, t = 0, {}
    bb:observe("t", function() n = n + 1 end)
    bb.t = t
    bb.t = t
    bb.t = {}
    assert.equal(2, n)
  end)

  it("run in registration order and can remove themselves or others", function()
    local bb = bt.blackboard()
    local log, h1, h2, h3 = {}
    h1 = bb:observe("k", function() log[#log + 1] = "one"; bb:unobserve(h1) end)
    h2 = bb:observe("k", function() log[#log + 1] = "two"; bb:unobserve(h3) end)
    h3 = bb:observe("k", function() log[#log + 1] = "three" end)
    bb.k = 1
    bb.k = 2
    assert.same({ "one", "two", "two" }, log)
    assert.is_true(bb:unobserve(h2))
    assert.is_false(bb:unobserve(h2))
    bb.k = 3
    assert.same({ "one", "two", "two" }, log)
  end)

  it("keep their order when one in the middle is removed", function()
    local bb = bt.blackboard()
    local log, h = {}, {}
    for k = 1, 4 do
      h[k] = bb:observe("k", function() log[#log + 1] = k end)
    end
    assert.is_true(bb:unobserve(h[2]))
    bb.k = 1
    assert.same({ 1, 3, 4 }, log)
    assert.is_true(bb:unobserve(h[4]))
    assert.is_true(bb:unobserve(h[1]))
    bb.k = 2
    assert.same({ 1, 3, 4, 3 }, log)
  end)

  it("see nested changes made by observers at once", function()
    local bb = bt.blackboard { a = 0, b = 0 }
    local log = {}
    bb:observe("a", function(_, _, new) log[#log + 1] = "a" .. new; bb.b = new * 10 end)
    bb:observe("b", function(_, _, new) log[#log + 1] = "b" .. new end)
    bb:observe("a", function(_, _, new) log[#log + 1] = "a'" .. new end)
    bb.a = 1
    assert.same({ "a1", "b10", "a'1" }, log)
  end)

  it("of a child fire for parent changes it reads through", function()
    local world = bt.blackboard { alarm = false }
    local kid = bt.blackboard { parent = world }
    local shadowing = bt.blackboard { parent = world, alarm = "mine" }
    local log = {}
    world:observe("alarm", function(_, _, new) log[#log + 1] = "world " .. tostring(new) end)
    kid:observe("alarm", function(b, _, new, old)
      log[#log + 1] = ("kid %s %s %s"):format(tostring(b == kid), tostring(old), tostring(new))
    end)
    shadowing:observe("alarm", function() log[#log + 1] = "shadowed" end)
    world.alarm = true
    assert.same({ "world true", "kid true false true" }, log)
  end)

  it("errors in observers reach the writer, the value stays written", function()
    local bb = bt.blackboard()
    bb:observe("x", function() error("boom") end)
    assert.has_error(function() bb.x = 1 end)
    assert.equal(1, bb.x)
  end)
end)

describe("blackboard conditions", function()
  it("bt.check compares in C, with $key references", function()
    local tree = bt.tree(bt.selector {
      bt.sequence { bt.check("hp", "<", "$limit"), bt.action(function() return "running" end, { "low" }) },
      bt.action(function() return "running" end),
    })
    local a = bt.agent(tree, { blackboard = { hp = 50, limit = 30 } })
    a:tick(1)
    assert.same({ "selector", "action[2]" }, a:running())
    a:reset()
    a.bb.limit = 60
    a:tick(1)
    assert.same({ "selector", "sequence[1]", "action[2]" }, a:running())
  end)

  it("ordering a number against a string is a run-time error naming the node", function()
    local tree = bt.tree(bt.sequence { bt.check("hp", ">", 3) }, { name = "c" })
    local a = bt.agent(tree, { blackboard = { hp = "lots" } })
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.matches("tree 'c' node 'sequence/check%[1%]': 'hp' is a string, compared with a number", err)
  end)

  it("ordering against a boolean constant is a definition error", function()
    assert.has_error(function() bt.tree(bt.check("x", "<", true)) end,
      "tree 'tree': check: 'check' can order only numbers and strings")
  end)
end)

describe("pairs over Lua-only values", function()
  it("returns tables and functions held by the blackboard or its parent",
     function()
    local t = {}
    local parent = bt.blackboard { f = print }
    local bb = bt.blackboard { parent = parent, t = t, n = 1 }
    local seen = {}
    for k, v in bbpairs(bb) do seen[k] = v end
    assert.same({ t = t, n = 1, f = print }, seen)
    assert.equal(t, seen.t)
  end)
end)
