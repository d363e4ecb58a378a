-- script_spec: bt.script, bt.script_condition, bt.enums and the language
-- of bonsai.script (BehaviorTree.CPP 4's scripts): every operator and its
-- precedence, values as Lua values, the blackboard rules (:= creates, =
-- needs the key), errors at definition time and at run time (leaf errors
-- naming the node and the key), fields of table values (t.x, t[i]), the
-- bt.check a comparison compiles to, a guard woken by a script's write, and
-- no allocation per tick.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local trace = require "helpers.trace"
local script = require "bonsai.script"

local function agent_of(root, bb)
  return trace.agent_of(root, { blackboard = bb or {} })
end

-- The value of expression e on a blackboard holding bb (through a script
-- that stores it in r).
local function value(e, bb)
  local a = agent_of(bt.script("r := " .. e), bb)
  assert.equal("success", a:tick(1))
  return a.bb.r
end

-- The message of bt.tree over bt.script(code) / bt.script_condition(code),
-- which must raise (a script that does not compile is refused by bt.tree,
-- naming the node's path).
local function refused(code, condition)
  local ok, msg = pcall(function()
    return bt.tree((condition and bt.script_condition or bt.script)(code),
                   { name = "T" })
  end)
  assert.is_false(ok)
  return msg
end

-- Fields are read by behavior3 files' expressions only (bt.script refuses
-- them, as BehaviorTree.CPP does): the value of e through such a script,
-- and the node of such a script or condition.
local FIELDS = { fields = true }
local function fnode(kind, code)
  return script.node(kind, code, 1, nil, FIELDS)
end
local function fvalue(e, bb)
  local a = agent_of(fnode("script", "r := " .. e), bb)
  assert.equal("success", a:tick(1))
  return a.bb.r
end
local function frefused(code)
  local ok, msg = pcall(fnode, "script", code)
  assert.is_false(ok)
  return msg
end

describe("values", function()
  it("reads numbers (decimal, real, exponent, hex), strings and booleans",
     function()
    assert.equal(42, value("42"))
    assert.equal(2.5, value("2.5"))
    assert.equal(1500, value("1.5e3"))
    assert.equal(0.015, value("1.5E-2"))
    assert.equal(255, value("0xFF"))
    assert.equal(31, value("0x1f"))
    assert.equal("it's", value("\"it's\""))
    assert.equal("a b", value("'a b'"))
    assert.equal("", value("''"))
    assert.is_true(value("true"))
    assert.is_false(value("false"))
  end)

  it("reads keys of the blackboard", function()
    assert.equal(7, value("hp", { hp = 7 }))
    assert.equal("orc", value("enemy", { enemy = "orc" }))
    assert.equal(false, value("seen", { seen = false }))
  end)

  it("reads keys named like a blackboard method through bb:get", function()
    local a = agent_of(bt.script("get := 3; set := get + 1"))
    a:tick(1)
    assert.equal(3, a.bb:get("get"))
    assert.equal(4, a.bb:get("set"))
  end)
end)

describe("fields of table values (behavior3 files' expressions)", function()
  it("are refused in bt.script, naming the node, as BehaviorTree.CPP does",
     function()
    assert.equal("tree 'T': action: at character 6 of \"x := math.pi\": " ..
                 "'math.pi': a script reads blackboard keys, not fields or " ..
                 "globals (BehaviorTree.CPP's scripts have no '.' nor '['; " ..
                 "behavior3 files' expressions read fields)",
                 refused("x := math.pi"))
    assert.matches("'t%[1%]': a script reads blackboard keys",
                   refused("t[1] > 0", true))
  end)

  it("reads t.name and t[expr], nested, as Lua indexes (behavior3lua's)",
     function()
    local bb = { t = { x = 3, [0] = { x = -1 }, { y = "a" }, ["a b"] = 9 },
                 i = 0 }
    assert.equal(3, fvalue("t.x", bb))
    assert.equal("a", fvalue("t[1].y", bb))
    assert.equal(-1, fvalue("t[i].x", bb))
    assert.equal("a!", fvalue("t[i + 1].y .. '!'", bb))
    assert.equal(9, fvalue("t['a b']", bb))
    assert.is_nil(fvalue("t.z", bb))
    assert.is_true(fvalue("t[0].x < 0 && t.x > 2", bb))
  end)

  it("reads raw: a metamethod of the value never runs", function()
    local called = false
    local t = setmetatable({}, { __index = function()
      called = true
      return 1
    end })
    assert.is_nil(fvalue("t.x", { t = t }))
    assert.is_false(called)
  end)

  it("follows the blackboard tick by tick", function()
    local a = agent_of(fnode("condition", "target[1].hp > 0"),
                       { target = { { hp = 5 } } })
    assert.equal("success", a:tick(1))
    a.bb.target[1].hp = 0
    assert.equal("failure", a:tick(1))
    a.bb.target = { { hp = 1 } }
    assert.equal("success", a:tick(1))
  end)

  it("raise a leaf error naming the read when the value is not a table",
     function()
    local a = agent_of(bt.sequence { name = "s",
                                     fnode("condition", "t[0].x > 0") })
    assert.equal("tree 'T' node 's/condition[1]': key 't' is not set",
                 trace.tick_error(a))
    a = agent_of(fnode("condition", "t[0].x > 0"), { t = {} })
    assert.matches("'t%[0%]' is nil, not a table %(reading 't%[0%]%.x'%)",
                   trace.tick_error(a))
    a = agent_of(fnode("condition", "s.len"), { s = "text" })
    assert.matches("'s' is a string, not a table %(reading 's%.len'%)",
                   trace.tick_error(a))
    a = agent_of(fnode("condition", "t.x > 1"), { t = { x = "many" } })
    assert.matches("'t%.x' is a string, compared with a number",
                   trace.tick_error(a))
  end)

  it("are read, never assigned or called", function()
    assert.matches("at character 5: ':=' assigns to a key only",
                   frefused("t.x := 1"))
    assert.matches("at character 1: 't.f%(': a script calls no function",
                   frefused("t.f(1)"))
    assert.matches("at character 6: 'os.exit%(': a script calls no " ..
                   "function", frefused("x := os.exit()"))
    assert.matches("syntax error", frefused("t[1"))
    assert.matches("syntax error", frefused("t."))
  end)
end)

describe("operators", function()
  it("does arithmetic on numbers", function()
    assert.equal(5, value("2 + 3"))
    assert.equal(-1, value("2 - 3"))
    assert.equal(6, value("2 * 3"))
    assert.equal(3.5, value("7 / 2"))
    assert.equal(1, value("7 % 3"))
    assert.equal(-4, value("-x", { x = 4 }))
    assert.equal(4, value("- -x", { x = 4 }))
  end)

  it("adds two strings, as BehaviorTree.CPP does", function()
    assert.equal("ab", value("'a' + 'b'"))
  end)

  it("concatenates strings and numbers with ..", function()
    assert.equal("hp: 7", value("'hp: ' .. hp", { hp = 7 }))
    assert.equal("12", value("1 .. 2"))
    assert.equal("x1.5", value("'x' .. 1.5"))
  end)

  it("has the bitwise operators & | ^ ~ on whole numbers", function()
    assert.equal(1, value("5 & 3"))
    assert.equal(7, value("5 | 3"))
    assert.equal(6, value("5 ^ 3"))
    assert.equal(-6, value("~5"))
    assert.equal(249, value("-7 & 0xFF"))
    assert.equal(-1, value("-8 | 7"))
    assert.equal(2^40 + 1, value("x | 1", { x = 2^40 }))
    assert.equal(0, value("x & 1", { x = 2^40 }))
  end)

  it("compares numbers, strings and any two values for equality", function()
    assert.is_true(value("1 < 2"))
    assert.is_false(value("2 < 2"))
    assert.is_true(value("2 <= 2"))
    assert.is_true(value("3 > 2"))
    assert.is_true(value("2 >= 2"))
    assert.is_true(value("2 == 2.0"))
    assert.is_true(value("2 != 3"))
    assert.is_true(value("2 ~= 3"))
    assert.is_true(value("'abc' < 'abd'"))
    assert.is_false(value("1 == '1'"))
    assert.is_true(value("x == true", { x = true }))
    assert.is_false(value("missing == 0"))
  end)

  it("chains comparisons: a < b < c is a < b && b < c", function()
    assert.is_true(value("1 < x < 3", { x = 2 }))
    assert.is_false(value("1 < x < 3", { x = 3 }))
    assert.is_true(value("3 > 2 > 1"))
  end)

  it("gives booleans for && || ! and their spellings and, or, not",
     function()
    assert.is_true(value("1 < 2 && 2 < 3"))
    assert.is_false(value("true && false"))
    assert.is_true(value("false || true"))
    assert.is_false(value("!true"))
    assert.is_true(value("!0"))
    assert.is_true(value("not false and (true or false)"))
    -- numbers as truth values: 0 is false; an unset key is false
    assert.is_true(value("1 && 2"))
    assert.is_false(value("0 || 0"))
    assert.is_false(value("missing || false"))
  end)

  it("evaluates && and || left to right, stopping when decided", function()
    local a = agent_of(bt.script("false && (n := 1); true || (m := 1)"))
    a:tick(1)
    assert.is_nil(a.bb.n)
    assert.is_nil(a.bb.m)
  end)

  it("chooses with ? :", function()
    assert.equal("hi", value("hp > 50 ? 'hi' : 'lo'", { hp = 60 }))
    assert.equal("lo", value("hp > 50 ? 'hi' : 'lo'", { hp = 10 }))
    assert.equal(3, value("false ? 1 : false ? 2 : 3"))
    assert.equal(7, value("x ? 1 + 2 : 0", { x = true }) + 4)
  end)

  it("binds as BehaviorTree.CPP 4 does", function()
    assert.equal(7, value("1 + 2 * 3"))
    assert.equal(9, value("(1 + 2) * 3"))
    assert.equal(1, value("10 - 6 - 3"))
    assert.equal(1, value("12 / 4 / 3"))
    assert.is_true(value("1 + 1 == 2"))
    assert.equal(3, value("1 | 2 & 3"))        -- & before |
    assert.is_true(value("1 == 1 && 2 == 2 || false"))
    assert.is_true(value("!false == true"))   -- prefix before ==
    assert.equal("3a", value("1 + 2 .. 'a'"))  -- .. with + and -, left first
    assert.equal(-6, value("-2 * 3"))
    assert.equal(2, value("true ? 1 : 0 + 1") + 1)
  end)
end)

describe("assignments", function()
  it(":= creates a key; = += -= *= /= change one that is set", function()
    local a = agent_of(bt.script(
      "n := 10; n = n + 1; n += 4; n -= 5; n *= 3; n /= 6; s := 'a'; s += 'b'"))
    assert.equal("success", a:tick(1))
    assert.equal(5, a.bb.n)
    assert.equal("ab", a.bb.s)
  end)

  it("gives the value assigned; several statements run in order", function()
    local a = agent_of(bt.script("a := b := 4; c := a + b"))
    a:tick(1)
    assert.equal(8, a.bb.c)
    a = agent_of(bt.script("x := 1 y := x + 2")) -- ';' is optional
    a:tick(1)
    assert.equal(3, a.bb.y)
  end)

  it("refuses = and += on a key that is not set (a leaf error)", function()
    local a = agent_of(bt.sequence { name = "s", bt.script("ammo = 3") })
    assert.equal("tree 'T' node 's/action[1]': key 'ammo' is not set (':=' " ..
                 "creates a key, '=' does not)", trace.tick_error(a))
    a = agent_of(bt.script("ammo += 3"))
    assert.matches("'ammo' is not set", trace.tick_error(a))
  end)

  it("writes through the blackboard: observers see script writes", function()
    local a = agent_of(bt.script("alarm := true"))
    local seen
    a.bb:observe("alarm", function(_, k, new) seen = k .. "=" .. tostring(new) end)
    a:tick(1)
    assert.equal("alarm=true", seen)
  end)

  it("wakes a guard watching the key it writes", function()
    local t = trace.new()
    local a = agent_of(bt.selector {
      bt.guard { name = "g", bt.is_set "enemy", abort = "lower",
                 t:action("combat", "R") },
      bt.sequence { name = "patrol", t:action("walk", "S"),
                    bt.script("enemy := 'orc'"), t:action("wait", "R") },
    })
    assert.equal("running | enter walk; tick walk; exit walk success; " ..
                 "enter wait; tick wait", t:step(a, 1))
    assert.equal("running | abort wait; enter combat; tick combat",
                 t:step(a, 1))
  end)
end)

describe("bt.script_condition", function()
  it("succeeds when the value is true, fails otherwise, tick by tick",
     function()
    local a = agent_of(bt.script_condition("hp > 50 && ammo > 0"),
                       { hp = 60, ammo = 1 })
    assert.equal("success", a:tick(1))
    a.bb.ammo = 0
    assert.equal("failure", a:tick(1))
    a.bb.ammo, a.bb.hp = 2, 50
    assert.equal("failure", a:tick(1))
    a.bb.hp = 51
    assert.equal("success", a:tick(1))
  end)

  it("is a bt.check when it compares a key with a constant or a key",
     function()
    local cases = {
      { "hp > 50", "hp", ">", 50 },
      { "50 < hp", "hp", ">", 50 },
      { "hp >= -5", "hp", ">=", -5 },
      { "name != 'bob'", "name", "~=", "bob" },
      { "armed == true", "armed", "==", true },
      { "hp <= max_hp", "hp", "<=", "$max_hp" },
    }
    for _, c in ipairs(cases) do
      local n = bt.script_condition(c[1])
      assert.same({ type = "check", key = c[2], op = c[3], value = c[4],
                    script = c[1] }, setmetatable(n, nil))
    end
    -- a string starting with "$" is no key: a compiled condition
    assert.equal("condition", bt.script_condition("s == '$x'").type)
    assert.equal("condition", bt.script_condition("hp + 1 > 50").type)
    assert.equal("condition", bt.script_condition("1 < hp < 3").type)
    -- bt.check orders numbers and strings only: this one fails at run time
    local n = bt.script_condition("flag < true")
    assert.equal("condition", n.type)
    assert.matches("'flag' is a boolean, compared with a boolean",
                   trace.tick_error(agent_of(n, { flag = false })))
  end)

  it("gives the same results in its check form and its Lua form",
     function()
    for _, bb in ipairs { { hp = 50 }, { hp = 51 }, { hp = 49.5 } } do
      local c = agent_of(bt.script_condition("hp > 50"), bb):tick(1)
      local l = agent_of(bt.script_condition("hp > 50 + 0"), bb):tick(1)
      assert.equal(c, l)
    end
    assert.equal("failure", agent_of(bt.script_condition("x == 1")):tick(1))
  end)
end)

describe("bt.enums", function()
  it("adds names scripts use as constants", function()
    bt.enums { RED = 1, GREEN = 2 }
    bt.enums { BLUE = 3 }
    local n = bt.script_condition("color == GREEN")
    assert.equal(2, n.value)
    assert.equal(6, value("RED + GREEN + BLUE"))
    assert.equal("success", agent_of(n, { color = 2 }):tick(1))
  end)

  it("refuses what is not a name with a number", function()
    assert.has_error(function() bt.enums { ["a b"] = 1 } end)
    assert.has_error(function() bt.enums { x = "1" } end)
    assert.has_error(function() bt.enums { ["true"] = 1 } end)
    assert.has_error(function() bt.enums(5) end)
  end)
end)

describe("the doors for tools: bt.script_of, bt.parse_script, bt.copy",
         function()
  it("bt.script_of gives the kind and code a node was made from, else nil",
     function()
    assert.same({ "script", "n := 1" }, { bt.script_of(bt.script("n := 1")) })
    assert.same({ "condition", "hp > 5" },
                { bt.script_of(bt.script_condition("hp > 5")) }) -- a check
    assert.same({ "condition", "a && b" },
                { bt.script_of(bt.script_condition("a && b")) })
    assert.is_nil(bt.script_of(bt.condition(function() return true end)))
    assert.is_nil(bt.script_of({ type = "action", script = "n := 1" }))
    assert.is_nil(bt.script_of("n := 1"))
    assert.is_nil(bt.script_of(nil))
  end)

  it("bt.parse_script says whether text parses, with the error's place",
     function()
    assert.same({ true }, { bt.parse_script("hp := hp + 1; ok := true") })
    local ok, err = bt.parse_script("hp := hp +")
    assert.is_nil(ok)
    assert.equal("at character 11: syntax error at the end", err)
    ok, err = bt.parse_script("a := (1")
    assert.is_nil(ok)
    assert.matches("^at character %d+: ", err)
    ok, err = bt.parse_script(42)
    assert.is_nil(ok)
    assert.equal("a script is a string (got number)", err)
    assert.same({ nil, "empty script" }, { bt.parse_script("") })
  end)

  it("bt.copy copies tables, shares functions and trees, keeps scripts",
     function()
    local fn = function() return "success" end
    local sub = bt.tree(bt.action(fn), { name = "copied_sub" })
    local s = bt.script("n := n + 1")
    local root = bt.sequence { name = "root", s, bt.action(fn, { 1, 2 }),
      { type = "subtree", tree = sub } }
    local seen = {}
    local c = bt.copy(root, seen)
    assert.are_not.equal(root, c)
    assert.same(root, c)
    assert.equal(getmetatable(root), getmetatable(c))
    assert.equal(c, seen[root])
    assert.equal(c[1], seen[s])
    assert.are_not.equal(root[2].args, c[2].args)
    assert.same({ 1, 2 }, c[2].args)
    assert.equal(fn, c[2].fn)
    assert.equal(sub, c[3].tree)
    assert.same({ "script", "n := n + 1" }, { bt.script_of(c[1]) })
    -- the copy changes apart, and runs as the original
    c[2].args[1] = 9
    assert.equal(1, root[2].args[1])
    local a = agent_of(c, { n = 1 })
    assert.equal(bt.SUCCESS, a:tick())
    assert.equal(2, a.bb:get("n"))
    -- a table met twice is copied once (a cycle too)
    local t = { type = "action", leaf = "x" }
    t.self = t
    local ct = bt.copy({ type = "sequence", t, t })
    assert.equal(ct[1], ct[2])
    assert.equal(ct[1], ct[1].self)
    assert.are_not.equal(t, ct[1])
    assert.equal(5, bt.copy(5))
    assert.has_error(function() bt.copy(root, 1) end,
                     "bt.copy: seen must be a table, got number")
  end)
end)

describe("run-time errors", function()
  it("name the node and the key of a wrong type", function()
    local a = agent_of(bt.sequence { name = "s",
                                     bt.script_condition("hp + 1 > 50") },
                       { hp = "full" })
    assert.equal("tree 'T' node 's/condition[1]': 'hp' is a string, '+' " ..
                 "needs numbers", trace.tick_error(a))
    a = agent_of(bt.script_condition("hp > ammo + 0"), { hp = "x", ammo = 1 })
    assert.matches("'hp' is a string, compared with a number",
                   trace.tick_error(a))
    a = agent_of(bt.script_condition("0 + 1 < hp"), { hp = true })
    assert.matches("'hp' is a boolean, compared with a number",
                   trace.tick_error(a))
    a = agent_of(bt.script("x := -s"), { s = "a" })
    assert.matches("'s' is a string, '%-' needs a number", trace.tick_error(a))
    a = agent_of(bt.script("x := s .. true"), { s = "a" })
    assert.matches("the right side is a boolean, '..' needs strings",
                   trace.tick_error(a))
    a = agent_of(bt.script("x := f & 1"), { f = 1.5 })
    assert.matches("'f' is a number, '&' needs whole numbers",
                   trace.tick_error(a))
  end)

  it("divide by zero as BehaviorTree.CPP's doubles do: inf, -inf, NaN",
     function()
    local a = agent_of(bt.script("x := 1 / d; y := -1 / d; z := d / d; " ..
                                 "m := 5 % d; u := 2; u /= d"), { d = 0 })
    assert.equal("success", a:tick(1))
    assert.equal(math.huge, a.bb.x)
    assert.equal(-math.huge, a.bb.y)
    assert.is_true(a.bb.z ~= a.bb.z)
    assert.is_true(a.bb.m ~= a.bb.m)
    assert.equal(math.huge, a.bb.u)
    -- tick by tick: the key changes, the script follows
    a.bb.d = 2
    assert.equal("success", a:tick(1))
    assert.equal(0.5, a.bb.x)
    assert.equal(1, a.bb.m)
    -- constants too (the fast path of key / constant), and a condition
    a = agent_of(bt.script("x := k / 0; y := k % 0"), { k = 3 })
    assert.equal("success", a:tick(1))
    assert.equal(math.huge, a.bb.x)
    assert.is_true(a.bb.y ~= a.bb.y)
    a = agent_of(bt.script_condition("1 / d > 1000"), { d = 0 })
    assert.equal("success", a:tick(1))
    a.bb.d = 1
    assert.equal("failure", a:tick(1))
  end)

  it("refuse a value of the wrong type for ! && || ? : and a condition",
     function()
    local a = agent_of(bt.sequence { name = "s", bt.script("x := !s") },
                       { s = "a" })
    assert.equal("tree 'T' node 's/action[1]': 's' is a string, '!' needs " ..
                 "a boolean or a number", trace.tick_error(a))
    a = agent_of(bt.script("x := 'a' && true"))
    assert.matches("the operand is a string, '&&' needs a boolean",
                   trace.tick_error(a))
    a = agent_of(bt.script("x := false || s"), { s = "a" })
    assert.matches("'s' is a string, '||' needs a boolean", trace.tick_error(a))
    a = agent_of(bt.script("x := s ? 1 : 2"), { s = "a" })
    assert.matches("'s' is a string, '%? :' needs a boolean",
                   trace.tick_error(a))
    a = agent_of(bt.script_condition("s"), { s = "yes" })
    assert.matches("'s' is a string, a condition needs a boolean",
                   trace.tick_error(a))
    a = agent_of(bt.script("x := 'a' + 1"))
    assert.matches("the left side is a string, '%+' needs numbers",
                   trace.tick_error(a))
    a = agent_of(bt.script_condition("'a' < 1"))
    assert.matches("compared with a", trace.tick_error(a))
    a = agent_of(bt.script("x := -'a'"))
    assert.matches("'%-' needs a number", trace.tick_error(a))
    -- fixed, the same agent runs on
    a = agent_of(bt.script_condition("s"), { s = "yes" })
    trace.tick_error(a)
    a.bb.s = true
    assert.equal("success", a:tick(1))
  end)

  it("leave the agent able to run again", function()
    local a = agent_of(bt.script_condition("hp + 0 > 50"), { hp = "x" })
    trace.tick_error(a)
    a.bb.hp = 60
    assert.equal("success", a:tick(1))
  end)
end)

describe("definition errors", function()
  it("refuse a script that does not parse, naming where", function()
    assert.equal("tree 'T': action: at character 6 of \"a := \": syntax " ..
                 "error at the end", refused("a := "))
    -- the node's path names its nearest named ancestors
    local ok, msg = pcall(bt.tree, bt.sequence { name = "patrol",
      bt.sequence { bt.action(function() end), bt.script("n := (") } },
      { name = "T" })
    assert.is_false(ok)
    assert.equal("tree 'T': patrol/sequence[1]/action[2]: at character 7 " ..
                 "of \"n := (\": syntax error at the end", msg)
    assert.matches("at character 4 of \"1 %+%)\": syntax error near '%)'",
                   refused("1 +)"))
    assert.matches("unexpected ':='", refused("1 ? 2 : x := 3"))
    assert.matches("':=' assigns to a key only", refused("1 + x := 3"))
    assert.matches("empty script", refused("  "))
    assert.matches("syntax error", refused("'open"))
    assert.matches("syntax error", refused("3foo"))
    assert.matches("syntax error", refused("1.; x"))
    assert.matches("condition: at character 2", refused("(", true))
  end)

  it("refuse calls and assignments to fields", function()
    assert.matches("a script calls no function", refused("print('x')"))
    assert.matches("a script calls no function", refused("os.exit()"))
    assert.matches("assigns to a key only", refused("_G.x := 1"))
    assert.matches("root blackboard", refused("@x := 1"))
  end)

  it("read a name as a key, never as a global", function()
    assert.is_nil(value("print"))
    assert.is_nil(value("_G"))
    assert.matches("'_G.print': a script reads blackboard keys",
                   refused("x := _G.print"))
    assert.matches("key '_G' is not set", trace.tick_error(
      agent_of(fnode("script", "x := _G.print"))))
  end)

  it("refuse huge numbers, long scripts and deep nesting", function()
    assert.matches("out of range", refused("x := 99999999999999999999"))
    assert.matches("out of range", refused("x := 1e999"))
    assert.matches("out of range", refused("x := 0x1234567890abcdef1"))
    assert.matches("longer than " .. script.MAX_LENGTH,
                   refused("x := " .. string.rep("1", script.MAX_LENGTH)))
    local deep = script.MAX_DEPTH
    assert.matches("nests deeper than",
                   refused(string.rep("(", deep + 1) .. "1" ..
                           string.rep(")", deep + 1)))
    assert.matches("nests deeper than", refused(string.rep("-", 3000) .. "1"))
    assert.matches("nests deeper than", refused(string.rep("1+", 1000) .. "1"))
    assert.matches("nests deeper than",
                   refused(string.rep("(", 2000) .. "1" .. string.rep(")", 2000)))
    -- just within the bound
    assert.equal(1, value(string.rep("(", deep - 2) .. "1" ..
                          string.rep(")", deep - 2)))
  end)

  it("refuse what is not a string", function()
    assert.matches("a script is a string", refused(42))
    assert.matches("a script is a string", refused(nil))
  end)
end)

describe("shared trees", function()
  it("take a script_condition that is a check, not a Lua script", function()
    local ok = pcall(function()
      return bt.tree(bt.script_condition("hp > 5"), { name = "c" }):share()
    end)
    assert.is_true(ok)
    local ok2, msg = pcall(function()
      return bt.tree(bt.script("hp := 5"), { name = "s" }):share()
    end)
    assert.is_false(ok2)
    assert.matches("cannot share a tree with leaves that are Lua functions",
                   msg)
  end)
end)

describe("cost", function()
  it("allocates nothing per tick for numbers and booleans", function()
    luaver.nojit(finally) -- LuaJIT's traces live on the heap
    local a = agent_of(bt.sequence {
      bt.script("count := count + 1; x := count * 2; y := x > 3 && !done"),
      bt.script_condition("count > 0 && x >= 2 ? true : false"),
      bt.script_condition("count > 0"),
    }, { count = 0, done = false })
    collectgarbage()
    collectgarbage("stop")
    -- warm up with the collector stopped: 5.3's full collection frees the
    -- spare call frames the ticks make again
    for _ = 1, 200 do a:tick(1) end
    local before = collectgarbage("count")
    for _ = 1, 1000 do a:tick(1) end
    local grown = collectgarbage("count") - before
    collectgarbage("restart")
    assert.equal(1200, a.bb.count)
    assert.is_true(grown < 1, grown .. " KB in 1000 ticks")
  end)
end)

describe("scripts are visible", function()
  local function tree()
    return bt.tree(bt.sequence { name = "shop",
      bt.script_condition("deal >= 5 && stock > 0"),
      bt.check("hp", "<", 3),
      bt.script("stock -= 1\n  sold += 1"),
      bt.action { fn = function() return true end, skip_if = "hp > 10",
                  on_success = "done := true" },
      bt.script_condition("true"),
    }, { name = "T" })
  end

  it("in tree:dump, each script's source on one line and a check's "
     .. "comparison", function()
    local t = tree()
    assert.equal("shop (sequence)\n" ..
      "  condition[1] \"deal >= 5 && stock > 0\"\n" ..
      "  check[2] hp < 3\n" ..
      "  action[3] \"stock -= 1   sold += 1\"\n" ..
      "  action[4] skip_if \"hp > 10\" on_success \"done := true\"\n" ..
      "  condition[5] \"true\"\n", t:dump())
    local a = bt.agent(t, { blackboard = { deal = 5, stock = 2, hp = 1,
                                           sold = 0 } })
    assert.equal("success", a:tick(1))
    assert.matches("condition%[1%] \"deal >= 5 && stock > 0\" %[success%]",
                   t:dump(a))
  end)

  it("in tree:nodes and the trace's node table: script, conditions and "
     .. "the keys they read or write", function()
    local n = tree():nodes()
    assert.equal("deal >= 5 && stock > 0", n[2].script)
    assert.same({ "deal", "stock" }, n[2].keys)
    assert.equal("hp < 3", n[3].script)
    assert.same({ "hp" }, n[3].keys)
    assert.equal("stock -= 1\n  sold += 1", n[4].script)
    assert.same({ "stock", "sold" }, n[4].keys)
    assert.is_nil(n[5].script)
    assert.same({ skip_if = "hp > 10", on_success = "done := true" },
                n[5].conditions)
    assert.same({ "hp", "done" }, n[5].keys)
    assert.equal("true", n[6].script)
    assert.is_nil(n[6].keys) -- reads no key
    assert.is_nil(n[1].script)
    assert.is_nil(n[1].keys)
    -- a long script is cut in dumps, whole in tree:nodes
    local long = "x := " .. string.rep("1 + ", 30) .. "1"
    local t = bt.tree(bt.script(long), { name = "L" })
    assert.equal(long, t:nodes()[1].script)
    assert.matches('^action "x := 1 %+ 1 %+ .-%.%.%."\n$', t:dump())
  end)
end)
