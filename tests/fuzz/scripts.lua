-- tests/fuzz/scripts.lua: fuzzes the script language (bonsai.script). Per
-- seed: random expressions built from the grammar, written twice (every
-- operation in parentheses, and with only the parentheses BehaviorTree.CPP's
-- binding powers need) and checked against this file's own evaluation of
-- them (keys, and fields of a table on a key), and assignments; the same
-- run as bt.script and bt.script_condition nodes of real agents (the C
-- checks included); mutations of valid scripts (characters and tokens
-- inserted, dropped, swapped), random bytes, deep nesting and huge
-- literals, which must compile or be refused with a message, never raise
-- anything else. Any error of the engine's own (a Lua error with a file
-- position) fails the run.
--
--   lua5.4 tests/fuzz/scripts.lua --seeds 1-300
--   lua5.4 tests/fuzz/scripts.lua --seconds 30     (new seeds, from the time)

local root = (arg and arg[0] or ""):match("^(.-)/?tests/fuzz/[^/]*$") or "."
if root == "" then root = "." end
package.path = package.path .. ";" .. root .. "/lua/?.lua;" .. root ..
               "/lua/?/init.lua"
package.cpath = package.cpath .. ";" .. root .. "/build/src/?.so"

local bt = require "bonsai"
local script = require "bonsai.script"
local tointeger = require("bonsai.compat").tointeger
local mathtype = math.type or type -- before 5.3 numbers are all floats

local first, last, seconds = 1, 100, nil
for i = 1, #arg do
  if arg[i] == "--seeds" then
    local x, y = arg[i + 1]:match("^(%d+)%-(%d+)$")
    first, last = tonumber(x), tonumber(y)
  elseif arg[i] == "--seconds" then
    seconds = tonumber(arg[i + 1])
  end
end

local failures = 0
local function fail(seed, what, code, detail)
  failures = failures + 1
  io.stderr:write(string.format("seed %d: %s\n  script: %s\n  %s\n", seed,
                                what, code, tostring(detail)))
end

local function pick(t) return t[math.random(#t)] end

-- Expressions: trees the fuzzer evaluates itself ---------------------------

local KEYS = { "a", "b", "c", "hp", "name", "flag" }
local stats = { values = 0, errors = 0 }
local BP = { ["||"] = 6, ["&&"] = 8, ["=="] = 10, ["!="] = 10, ["<"] = 10,
  ["<="] = 10, [">"] = 10, [">="] = 10, ["|"] = 12, ["^"] = 12, ["&"] = 14,
  ["+"] = 16, ["-"] = 16, [".."] = 16, ["*"] = 18, ["/"] = 18, ["%"] = 18 }
local BINOPS = {}
for op in pairs(BP) do BINOPS[#BINOPS + 1] = op end
table.sort(BINOPS)

-- Truth as BehaviorTree.CPP's scripts take it: booleans, numbers (0 is
-- false), an unset key false; a string or a table raises "type".
local function truth(v)
  if v == true or v == false then return v end
  if v == nil or v == 0 then return false end
  if type(v) ~= "number" then error("type") end
  return true
end

-- Fields are read by behavior3 files' expressions only: every script here
-- is compiled with them allowed.
local FIELDS = { fields = true }

-- The value of tree e on blackboard bb, or raises "type" for any error the
-- engine must report (types, whole numbers; division by zero gives IEEE's
-- values).
local eval

-- The bitwise operators: Lua 5.3+'s own; before (all numbers floats, the
-- engine takes whole ones within 2^53 there), on the bits of two's
-- complement, which floor and % give negative numbers too.
local bitop, BITLIMIT
local native = not _VERSION:find("5%.[12]") and
  (loadstring or load)("return function(o, x, y) if o == '&' then " ..
    "return x & y elseif o == '|' then return x | y else return x ~ y end " ..
    "end")
if native then
  bitop, BITLIMIT = native(), math.huge
else
  local ONE = { ["&"] = function(p, q) return p * q end,
                ["|"] = function(p, q) return math.max(p, q) end,
                ["^"] = function(p, q) return (p + q) % 2 end }
  BITLIMIT = 2^53
  function bitop(o, x, y)
    local f, r = ONE[o], 0
    for i = 0, 52 do
      r = r + f(math.floor(x / 2^i) % 2, math.floor(y / 2^i) % 2) * 2^i
    end
    local sign = f(math.floor(x / 2^53) % 2, math.floor(y / 2^53) % 2)
    return r - sign * 2^53
  end
end

function eval(e, bb)
  local k = e.k
  if k == "num" or k == "str" or k == "bool" then return e.v end
  if k == "key" then return bb[e.v] end
  if k == "field" then -- t.key, t['key']: the board's copy in table t
    if type(bb.t) ~= "table" then error("type") end
    return bb.t[e.v]
  end
  if k == "not" then return not truth(eval(e[1], bb)) end
  if k == "neg" then
    local v = eval(e[1], bb)
    if type(v) ~= "number" then error("type") end
    return -v
  end
  if k == "if" then
    if truth(eval(e[1], bb)) then return eval(e[2], bb) end
    return eval(e[3], bb)
  end
  local op = e.op
  if op == "&&" then return truth(eval(e[1], bb)) and truth(eval(e[2], bb)) end
  if op == "||" then return truth(eval(e[1], bb)) or truth(eval(e[2], bb)) end
  local x, y = eval(e[1], bb), eval(e[2], bb)
  if op == "==" then return x == y end
  if op == "!=" then return x ~= y end
  local tx, ty = type(x), type(y)
  if BP[op] == 10 then
    if tx ~= ty or tx ~= "number" and tx ~= "string" then error("type") end
    if op == "<" then return x < y elseif op == "<=" then return x <= y
    elseif op == ">" then return x > y else return x >= y end
  end
  if op == ".." then
    if tx ~= "string" and tx ~= "number" or ty ~= "string" and
       ty ~= "number" then error("type") end
    return x .. y
  end
  if op == "+" and tx == "string" and ty == "string" then return x .. y end
  if tx ~= "number" or ty ~= "number" then error("type") end
  if op == "+" then return x + y elseif op == "-" then return x - y
  elseif op == "*" then return x * y end
  if op == "/" or op == "%" then
    if op == "/" then return x / y end
    if y == 0 then return 0 / 0 end -- (C's fmod)
    return x % y
  end
  local xi, yi = tointeger(x), tointeger(y)
  if not xi or not yi or xi >= BITLIMIT or xi < -BITLIMIT or
     yi >= BITLIMIT or yi < -BITLIMIT then error("type") end
  return bitop(op, xi, yi)
end

-- A tree of type ty ("int", "num", "bool" or "str"; the keys hold values
-- of their type, see board), depth levels at most.
local TYPED_KEYS = { int = { "a", "b", "hp" }, num = { "a", "b", "c", "hp" },
                     bool = { "flag" }, str = { "name" } }
local function leafof(ty)
  local r = math.random()
  if r < 0.4 then return { k = "key", v = pick(TYPED_KEYS[ty]) } end
  if r < 0.55 then
    return { k = "field", v = pick(TYPED_KEYS[ty]), dot = r < 0.5 }
  end
  if ty == "int" then return { k = "num", v = math.random(-3, 40) } end
  if ty == "num" then -- as the script reads it back: 24 / 4 is the integer 6
    return { k = "num", v = tonumber(string.format("%.17g",
                                                   math.random(0, 99) / 4)) }
  end
  if ty == "bool" then return { k = "bool", v = math.random() < 0.5 } end
  return { k = "str", v = pick { "", "x", "orc", "10" } }
end

local function gen(ty, depth)
  if depth <= 0 or math.random() < 0.25 then return leafof(ty) end
  local d = depth - 1
  if math.random() < 0.12 then
    return { k = "if", gen("bool", d), gen(ty, d), gen(ty, d) }
  end
  if ty == "int" then
    local r = math.random(3)
    if r == 1 then return { k = "neg", gen("int", d) } end
    if r == 2 then
      return { k = "bin", op = pick { "+", "-", "*" }, gen("int", d),
               gen("int", d) }
    end
    return { k = "bin", op = pick { "&", "|", "^" }, gen("int", d),
             gen("int", d) }
  elseif ty == "num" then
    if math.random() < 0.5 then return gen("int", depth) end
    return { k = "bin", op = pick { "+", "-", "*", "/", "%" }, gen("num", d),
             gen("num", d) }
  elseif ty == "bool" then
    local r = math.random(4)
    if r == 1 then return { k = "not", gen("bool", d) } end
    if r == 2 then
      return { k = "bin", op = pick { "&&", "||" }, gen("bool", d),
               gen("bool", d) }
    end
    local t = pick { "num", "str", "bool" }
    local ops = t == "bool" and { "==", "!=" } or
      { "==", "!=", "<", "<=", ">", ">=" }
    return { k = "bin", op = pick(ops), gen(t, d), gen(t, d) }
  end
  return { k = "bin", op = "..", gen(pick { "str", "int" }, d),
           gen(pick { "str", "int" }, d) }
end

-- An expression of any type, now and then one with a wrong operand.
local function expression(depth)
  local e = gen(pick { "int", "num", "bool", "str" }, depth)
  if math.random() < 0.1 then
    local wrong = { k = "bin", op = pick(BINOPS), e, leafof(pick {
      "int", "num", "bool", "str" }) }
    return wrong
  end
  return e
end

local function atom(e)
  if e.k == "num" then
    if e.v < 0 then return "(" .. string.format("%.17g", e.v) .. ")" end
    return string.format("%.17g", e.v)
  end
  if e.k == "str" then return "'" .. e.v .. "'" end
  if e.k == "field" then
    return e.dot and "t." .. e.v or "t['" .. e.v .. "']"
  end
  return tostring(e.v)
end

-- Every operation in parentheses.
local function full(e)
  if e.k == "not" then return "(!" .. full(e[1]) .. ")" end
  if e.k == "neg" then return "(-" .. full(e[1]) .. ")" end
  if e.k == "if" then
    return "(" .. full(e[1]) .. " ? " .. full(e[2]) .. " : " .. full(e[3]) .. ")"
  end
  if e.k == "bin" then
    return "(" .. full(e[1]) .. " " .. e.op .. " " .. full(e[2]) .. ")"
  end
  return atom(e)
end

-- Only the parentheses the binding powers need (min: the power the context
-- binds with; comparisons are written in parentheses inside comparisons,
-- where they would chain).
local function tight(e, min)
  local function wrap(s, bp) return bp < min and "(" .. s .. ")" or s end
  if e.k == "not" or e.k == "neg" then
    return (e.k == "not" and "!" or "-") .. tight(e[1], 20)
  end
  if e.k == "if" then
    return wrap(tight(e[1], 6) .. " ? " .. tight(e[2], 0) .. " : " ..
                tight(e[3], 4), 4)
  end
  if e.k == "bin" then
    local bp = BP[e.op]
    if bp == 10 then
      return wrap(tight(e[1], 11) .. " " .. e.op .. " " .. tight(e[2], 11), 10)
    end
    return wrap(tight(e[1], bp) .. " " .. e.op .. " " .. tight(e[2], bp + 1), bp)
  end
  return atom(e)
end

-- Blackboards of the keys' types (now and then one unset or of another
-- type), and t a table of the same keys (now and then not a table).
local function board()
  local bb = { a = math.random(-5, 30), b = math.random(0, 7),
               c = math.random(0, 40) / 8, hp = math.random(-100, 100),
               name = pick { "", "x", "10", "orc" },
               flag = math.random() < 0.5 }
  if math.random() < 0.1 then bb[pick(KEYS)] = pick { "s", 3, true, nil } end
  local t = {}
  for k, v in pairs(bb) do t[k] = v end
  bb.t = t
  if math.random() < 0.05 then bb.t = pick { "t", 1, false } end
  return bb
end

local function same(x, y)
  if x ~= x and y ~= y then return true end -- NaN
  return x == y and mathtype(x) == mathtype(y) or
    type(x) == "number" and type(y) == "number" and x == y
end

-- An error of the engine's own carries a file position.
local function internal(msg)
  return type(msg) ~= "string" or msg:find("%.lua:%d+:")
end

-- Checks code compiled from tree e against eval on bb.
local function against(seed, e, code, bb)
  local f, err = script.compile(code, nil, FIELDS)
  if not f then return fail(seed, "a valid script is refused", code, err) end
  local ok, want = pcall(eval, e, bb)
  local ok2, got = pcall(f, bb)
  if ok ~= ok2 then
    return fail(seed, ok and "raised" or "did not raise", code,
                ok and got or tostring(got))
  end
  stats[ok and "values" or "errors"] = stats[ok and "values" or "errors"] + 1
  if ok and not same(want, got) then
    return fail(seed, "wrong value", code, tostring(got) .. " instead of " ..
                tostring(want))
  end
  if not ok and internal(got) then
    return fail(seed, "an error of the engine's own", code, got)
  end
end

-- The same as nodes of a real agent: its statuses against eval.
local function nodes(seed, e, code, bb)
  local ok, want = pcall(eval, e, bb)
  -- the condition raises for a value that is no truth
  ok = ok and pcall(truth, want)
  local cond = script.node("condition", code, 1, nil, FIELDS)
  local a = bt.agent(bt.tree(bt.sequence {
    script.node("script", "r := " .. code, 1, nil, FIELDS), cond }),
    { blackboard = bb })
  local ok2, st = pcall(a.tick, a, 1)
  if ok ~= ok2 then
    if not (cond.type == "check" and ok and not ok2) then -- check messages
      return fail(seed, "agent: " .. (ok and "raised" or "did not raise"),
                  code, st)
    end
  elseif ok then
    if st ~= (truth(want) and "success" or "failure") or
       not same(a.bb.r, want) then
      return fail(seed, "agent: wrong result", code, tostring(st))
    end
  end
end

-- Assignments: `k op= y`, `k := k op y`, `k = y` on a table blackboard,
-- against eval.
local function assignments(seed)
  local bb = board()
  local k = pick { "a", "b", "c", "hp", "name", "flag", "fresh" }
  local op = pick { "+", "-", "*", "/" }
  local y = pick { { k = "num", v = 0 }, { k = "num", v = 1 },
                   { k = "num", v = 2.5 }, { k = "num", v = -3 },
                   { k = "str", v = "s" } }
  local e = { k = "bin", op = op, { k = "key", v = k }, y }
  for _, code in ipairs { k .. " " .. op .. "= " .. atom(y),
                          k .. " := " .. k .. " " .. op .. " " .. atom(y),
                          k .. " = " .. atom(y) } do
    local copy = {}
    for key, v in pairs(bb) do copy[key] = v end
    local f, err = script.compile(code, nil, FIELDS)
    if not f then return fail(seed, "a valid script is refused", code, err) end
    local ok, want
    if code:find(" = ") then
      ok, want = bb[k] ~= nil, y.v
    else
      ok, want = pcall(eval, e, bb)
      ok = ok and (bb[k] ~= nil or code:find(":="))
    end
    local ok2, got = pcall(f, copy)
    if ok ~= ok2 or ok and not (same(got, want) and same(copy[k], want)) then
      return fail(seed, "assignment", code, tostring(ok2) .. " " ..
                  tostring(got) .. " instead of " .. tostring(want))
    end
    if not ok2 and internal(got) then
      return fail(seed, "an error of the engine's own", code, got)
    end
  end
end

-- Mutations and other bad input --------------------------------------------

local TOKENS = { "(", ")", "?", ":", ";", ":=", "=", "+=", "'", '"', "..",
  ".", "@", "!", "~", "&&", "||", "0x", "1e", "e", "9", " ", "\n", "and",
  "not", "print(", "[", "]", "\0", "\255", "-", "--", "/", "%" }

local function mutate(code)
  for _ = 1, math.random(3) do
    local i = math.random(#code + 1)
    local r = math.random(3)
    if r == 1 then
      code = code:sub(1, i - 1) .. pick(TOKENS) .. code:sub(i)
    elseif r == 2 then
      code = code:sub(1, i - 1) .. code:sub(i + math.random(4))
    else
      local j = math.random(#code + 1)
      code = code:sub(1, i - 1) .. code:sub(j, j) .. code:sub(i + 1)
    end
  end
  return code
end

-- code must compile or be refused with a message; run it when it compiles.
local function survives(seed, code)
  local ok, f, err = pcall(script.compile, code, nil, FIELDS)
  if not ok then return fail(seed, "compile raised", code, f) end
  if not f and type(err) ~= "string" then
    return fail(seed, "refused without a message", code, err)
  end
  if f then
    local ok2, res = pcall(f, board())
    if not ok2 and internal(res) then
      return fail(seed, "an error of the engine's own", code, res)
    end
  end
end

local function extremes(seed)
  local d = script.MAX_DEPTH + math.random(-3, 3)
  local n = math.random(1, 3000)
  for _, code in ipairs {
    string.rep("(", d) .. "1" .. string.rep(")", d),
    string.rep("!", n) .. "true",
    string.rep("-", n) .. "1",
    string.rep("1+", n) .. "1",
    string.rep("a ? ", d) .. "1" .. string.rep(" : 2", d),
    "x := " .. string.rep("9", n),
    "x := 0x" .. string.rep("f", math.random(1, 40)),
    "x := '" .. string.rep("s", n) .. "'",
    "x := 1e" .. string.rep("9", math.random(1, 6)),
    string.rep("x := 1;", n),
    string.rep("(", n),
  } do survives(seed, code) end
  local bytes = {}
  for i = 1, math.random(0, 64) do bytes[i] = string.char(math.random(0, 255)) end
  survives(seed, table.concat(bytes))
end

-- Seeds --------------------------------------------------------------------

local function run(seed)
  math.randomseed(seed)
  for _ = 1, 20 do
    local e = expression(math.random(1, 6))
    local bb = board()
    against(seed, e, full(e), bb)
    against(seed, e, tight(e, 0), bb)
    nodes(seed, e, tight(e, 0), board())
    for _ = 1, 5 do survives(seed, mutate(tight(e, 0))) end
    assignments(seed)
  end
  extremes(seed)
end

local n = 0
if seconds then
  local seed, stop = os.time() * 1000, os.clock() + seconds
  while os.clock() < stop and failures == 0 do
    run(seed)
    seed, n = seed + 1, n + 1
  end
else
  for seed = first, last do run(seed) n = n + 1 end
end
print(string.format("scripts fuzz: %d seeds (%d values and %d errors " ..
  "checked), %d failures", n, stats.values, stats.errors, failures))
os.exit(failures == 0 and 0 or 1)
