-- bonsai.script: the expression language of bt.script, bt.script_condition
-- and the editors' script nodes (BehaviorTree.CPP 4's scripting language,
-- with behavior3's spellings `~=`, `and`, `or`, `not`, double quotes).
-- parse: text -> statements (LPeg for the tokens and the operand/operator
-- runs, a precedence-climbing fold for BT.CPP's binding powers). compile:
-- statements -> one closure f(bb) over a blackboard, built once; a single
-- comparison of a key with a constant or another key compiles instead to
-- the arguments of the C bt.check (no Lua at all per tick). A script reads
-- and writes blackboard keys and reads the fields of table values on them
-- (raw: no metamethod runs), and nothing else: there are no calls or
-- globals in the grammar. Works on Lua 5.1, LuaJIT, 5.3 and 5.4.
local lpeg = require "lpeg"

local P, S, R, C, Ct, Cc, Cp, V =
  lpeg.P, lpeg.S, lpeg.R, lpeg.C, lpeg.Ct, lpeg.Cc, lpeg.Cp, lpeg.V

local M = {}

M.MAX_LENGTH = 4096 -- characters of one script
M.MAX_DEPTH = 32    -- levels of nested operators and parentheses

-- Names scripts may use as constants (bt.enums adds to it; a script reads
-- them when it is defined).
M.enums = {}

local tointeger = require("bonsai.compat").tointeger

-- Parsing -------------------------------------------------------------------

-- Binding powers, BT.CPP 4's (script_parser.cpp): higher binds tighter.
local ASSIGN, TERNARY, COMPARE = 2, 4, 10
local BP = {
  [":="] = ASSIGN, ["="] = ASSIGN, ["+="] = ASSIGN, ["-="] = ASSIGN,
  ["*="] = ASSIGN, ["/="] = ASSIGN,
  ["?"] = TERNARY,
  ["||"] = 6, ["&&"] = 8,
  ["=="] = COMPARE, ["!="] = COMPARE, ["<"] = COMPARE, ["<="] = COMPARE,
  [">"] = COMPARE, [">="] = COMPARE,
  ["|"] = 12, ["^"] = 12, ["&"] = 14,
  ["+"] = 16, ["-"] = 16, [".."] = 16,
  ["*"] = 18, ["/"] = 18, ["%"] = 18,
}
local SPELLING = { ["~="] = "!=", ["and"] = "&&", ["or"] = "||", ["not"] = "!" }

-- Climbs one run `operand op operand op ...` (list, from index run.i) into
-- a tree, as BT.CPP's Pratt parser does: assignments and ternaries take
-- everything to their right and end the run; comparisons chain.
local function climb(run, min)
  local left = run[run.i]
  run.i = run.i + 1
  while true do
    local op = run[run.i]
    local bp = op and BP[op.op]
    if not bp or bp < min then return left end
    run.i = run.i + 1
    if bp == ASSIGN then
      if left.tag ~= "key" then
        error({ pos = op.pos, msg = "'" .. op.op .. "' assigns to a key only" })
      end
      return { tag = "assign", op = op.op, key = left.name,
               value = climb(run, 0), pos = op.pos }
    elseif bp == TERNARY then
      return { tag = "if", left, op.mid, climb(run, TERNARY), pos = op.pos }
    elseif bp == COMPARE then
      local node = { tag = "compare", ops = { op.op }, left, pos = op.pos }
      node[2] = climb(run, COMPARE + 1)
      while run[run.i] and BP[run[run.i].op] == COMPARE do
        node.ops[#node.ops + 1] = run[run.i].op
        run.i = run.i + 1
        node[#node + 1] = climb(run, COMPARE + 1)
      end
      left = node
    else
      left = { tag = "binary", op = op.op, left, climb(run, bp + 1),
               pos = op.pos }
    end
  end
end

-- The tree of a whole run; an operator left over is an error.
local function fold(run)
  run.i = 1
  local tree = climb(run, 0)
  local rest = run[run.i]
  if rest then
    error({ pos = rest.pos, msg = "unexpected '" .. rest.op .. "'" })
  end
  return tree
end

local far -- the furthest position a token was tried at (error messages)
local function mark(_, i)
  if i > far then far = i end
  return true
end

local space = S" \t\r\n"^0
local idchar = R("az", "AZ", "09") + "_"
local function token(p) return lpeg.Cmt(P(true), mark) * p * space end
local function keyword(w) return P(w) * -idchar end

local hex = P"0" * S"xX" * R("09", "af", "AF")^1
local digits = R"09"^1
local decimal = digits * ("." * digits)^-1 * (S"eE" * S"+-"^-1 * digits)^-1
local function number(text, pos)
  local n = tonumber(text)
  if not n or n ~= n or n == math.huge or n == -math.huge or
     not text:find("[.eE]") and not text:find("^0[xX]") and n >= 2^53 or
     text:find("^0[xX]") and #text > 15 then
    error({ pos = pos, msg = "number '" .. text .. "' out of range" })
  end
  return { tag = "const", value = n }
end
local numeral = lpeg.Cmt(Cp() * C(hex + decimal) * -(idchar + "." * -P"."),
  function(_, i, pos, text) return i, number(text, pos) end)

local str = "'" * C((1 - P"'")^0) * "'" + '"' * C((1 - P'"')^0) * '"'
local boolean = keyword"true" * Cc(true) + keyword"false" * Cc(false)
local reserved = keyword"true" + keyword"false" + keyword"and" +
  keyword"or" + keyword"not"
local name = C((R("az", "AZ") + "_") * idchar^0) - reserved

-- A name (a key, or an enum's constant); a call after it is refused by
-- name (at match time).
local function named(_, i, pos, id, call)
  if call then
    error({ pos = pos, msg = "'" .. id .. "(': a script calls no function" })
  end
  if M.enums[id] ~= nil then return i, { tag = "const", value = M.enums[id] } end
  return i, { tag = "key", name = id }
end

-- The text of a read (key, field or index) in messages: t.x, t[1], t[...].
local function spelled(node)
  if node.tag == "key" then return node.name end
  if node.tag ~= "index" then return "..." end
  local k = node[2].value
  if node[2].tag ~= "const" then k = "[...]"
  elseif type(k) == "string" and k:match("^[%a_][%w_]*$") then k = "." .. k
  elseif type(k) == "string" then k = string.format("[%q]", k)
  else k = "[" .. tostring(k) .. "]" end
  return spelled(node[1]) .. k
end

-- A key and the fields it reads (.name, [expr]) as nested index nodes; a
-- call after them is refused.
local function fields(_, i, start, reads, call)
  local node = reads[1]
  for j = 2, #reads do
    node = { tag = "index", node, reads[j].key, pos = reads[j].pos,
             start = start }
  end
  if call then
    error({ pos = start, msg = "'" .. spelled(node) ..
      "(': a script calls no function" })
  end
  return i, node
end

local binop = Cp() * C(P":=" + "+=" + "-=" + "*=" + "/=" + "==" + "!=" +
  "~=" + "<=" + ">=" + "&&" + "||" + ".." + S"+-*/%&|^<>=" +
  keyword"and" + keyword"or")
local prefix = Cp() * C(S"-~" + P"!" * -P"=" + keyword"not")

local grammar = P{
  "script",
  script = space * Ct((V"statement" * token(";")^0)^0) * token(-P(1)),
  statement = V"run" / fold,
  expr = V"run" / fold,
  run = Ct(V"unary" * (V"op" * V"unary")^0),
  op = token(P"?") * Cp() * V"expr" * token(":") /
         function(pos, mid) return { op = "?", mid = mid, pos = pos - 1 } end
     + token(binop) / function(pos, op)
         return { op = SPELLING[op] or op, pos = pos } end,
  unary = token(prefix) * V"unary" / function(pos, op, operand)
            return { tag = "unary", op = SPELLING[op] or op, operand,
                     pos = pos } end
        + V"primary",
  primary = token(numeral)
          + token(str) / function(s) return { tag = "const", value = s } end
          + token(boolean) / function(b) return { tag = "const", value = b } end
          + lpeg.Cmt(Cp() * Ct(V"key" * V"field"^0) * (Cp() * token"(")^-1,
                     fields)
          + token("(") * V"expr" * token(")") / function(e)
              e.parens = (e.parens or 0) + 1 -- counts as a level
              return e end,
  key = token(lpeg.Cmt(Cp() * name * space * C(P"(")^-1, named))
      + token(P"@" * name) / function(id) -- the root's key (BT.CPP)
          return { tag = "key", name = "@" .. id } end,
  -- a field read after a key: .name, or [expr] (the table's field of that
  -- value)
  field = token(Cp() * P"." * -P".") * token(name) / function(pos, id)
            return { pos = pos, key = { tag = "const", value = id } } end
        + token(Cp() * P"[") * V"expr" * token"]" / function(pos, e)
            return { pos = pos, key = e } end,
}
-- LPeg compiles a pattern at its first match, and a match that runs out of
-- memory while compiling leaves it broken: compile now, at load time.
far = 1
lpeg.match(grammar, "0")

-- The depth of an expression tree, refused past MAX_DEPTH.
local function depth(node, d)
  d = d + (node.parens or 0)
  if d > M.MAX_DEPTH then
    error({ pos = node.pos or 1, msg = "nests deeper than " ..
      M.MAX_DEPTH .. " levels" })
  end
  for _, child in ipairs(node) do depth(child, d + 1) end
  if node.value and type(node.value) == "table" then depth(node.value, d + 1) end
  return node
end

-- parse(code) -> list of statement trees, or nil and a message
-- "at character N: ...".
function M.parse(code)
  if type(code) ~= "string" then
    return nil, "a script is a string (got " .. type(code) .. ")"
  end
  if #code > M.MAX_LENGTH then
    return nil, "longer than " .. M.MAX_LENGTH .. " characters"
  end
  far = 1
  local ok, res = pcall(lpeg.match, grammar, code)
  if not ok then
    if type(res) == "table" then
      return nil, "at character " .. res.pos .. ": " .. res.msg
    end
    -- LPeg's own bounds (backtrack stack, capture nesting)
    if tostring(res):find("too deep") or tostring(res):find("overflow") then
      return nil, "nests deeper than " .. M.MAX_DEPTH .. " levels"
    end
    error(res, 0)
  end
  if not res then
    local near = code:sub(far, far + 9):match("^[^\n]*")
    return nil, "at character " .. far .. ": syntax error" ..
      (near ~= "" and " near '" .. near .. "'" or " at the end")
  end
  if #res == 0 then return nil, "empty script" end
  for _, s in ipairs(res) do
    local ok2, err = pcall(depth, s, 1)
    if not ok2 then
      if type(err) == "table" then
        return nil, "at character " .. err.pos .. ": " .. err.msg
      end
      error(err, 0)
    end
  end
  return res
end

-- Running -------------------------------------------------------------------

local METHODS = { get = true, set = true, has = true, observe = true,
                  unobserve = true, pairs = true }

local function article(v)
  if v == nil then return "nil" end
  return "a " .. type(v)
end

-- The keys set on bb (a blackboard, a view, or a plain table), for the
-- did-you-mean of a key that is not set.
local function setkeys(bb)
  local list = {}
  local ok, f, st, k = pcall(function()
    if type(bb) == "table" and getmetatable(bb) == nil then
      return pairs(bb)
    end
    return bb:pairs()
  end)
  if ok then
    for key, v in f, st, k do
      if type(key) == "string" and v ~= nil then list[#list + 1] = key end
    end
  end
  return list
end

-- The message for operand `node` holding the wrong value v ("what" it
-- should be); a key that is not set is said so, with the keys bb has that
-- it may mean (as bt.check says it in C).
local function bad(node, v, side, what, bb)
  if v == nil and node.tag == "key" then
    return "key '" .. node.name .. "' is not set" ..
      (bb ~= nil and require("bonsai.core")._suggest(node.name, setkeys(bb)) or "")
  end
  local who = (node.tag == "key" or node.tag == "index") and
    "'" .. spelled(node) .. "'" or
    side ~= "" and "the " .. side .. " side" or "the operand"
  return who .. " is " .. article(v) .. ", " .. what
end

-- Truth (`!`, `&&`, `||`, `? :`, a condition's value): booleans, numbers (0
-- is false) and nil (an unset key: false); any other value (a string, a
-- table) is an error naming the operand, as BehaviorTree.CPP refuses a
-- string there.
local function notruth(node, v, what)
  error(bad(node, v, "", what .. " needs a boolean or a number"), 0)
end

local function truth(v, node, what)
  if v == true or v == false then return v end
  if v == nil or v == 0 then return false end
  if type(v) ~= "number" then notruth(node, v, what) end
  return true
end

-- Whole numbers for the bitwise operators, checked.
local function whole(node, v, side, op, limit)
  local i = type(v) == "number" and tointeger(v)
  if not i or i >= limit or i < -limit then
    error(bad(node, v, side, "'" .. op .. "' needs whole numbers"), 0)
  end
  return i
end

-- The bitwise operators: Lua 5.3+'s own (64-bit), else LuaJIT's bit on
-- two 32-bit halves, else arithmetic (values within 2^53).
local bitops, BITLIMIT
do
  local native = not _VERSION:find("5%.[12]") and
    (loadstring or load)("return function(o, x, y) if o == '&' then " ..
      "return x & y elseif o == '|' then return x | y else return x ~ y end " ..
      "end")
  if native then
    bitops, BITLIMIT = native(), 2^63
  else
    local ok, bit = pcall(require, "bit")
    local ops32
    if ok and type(bit) == "table" and bit.band then
      ops32 = { ["&"] = bit.band, ["|"] = bit.bor, ["^"] = bit.bxor }
    else
      local function each(f)
        return function(x, y)
          local r, b = 0, 1
          for _ = 1, 32 do
            local xb, yb = x % 2, y % 2
            r = r + f(xb, yb) * b
            x, y, b = (x - xb) / 2, (y - yb) / 2, b * 2
          end
          return r
        end
      end
      ops32 = {
        ["&"] = each(function(p, q) return p * q end),
        ["|"] = each(function(p, q) return p + q - p * q end),
        ["^"] = each(function(p, q) return (p + q) % 2 end),
      }
    end
    BITLIMIT = 2^53
    bitops = function(o, x, y) -- on the two's complement halves
      local f, W = ops32[o], 2^32
      local xl, yl = x % W, y % W
      local xh, yh = (x - xl) / W % W, (y - yl) / W % W
      local lo, hi = f(xl, yl) % W, f(xh, yh) % W
      if hi >= 2^31 then hi = hi - W end
      return hi * W + lo
    end
  end
end

local compile

-- Reading and writing one key of bb (keys named like a blackboard method go
-- through bb:get / bb:set).
local function reader(k)
  if METHODS[k] then return function(bb) return bb:get(k) end end
  return function(bb) return bb[k] end
end
local function writer(k)
  if METHODS[k] then return function(bb, v) bb:set(k, v) end end
  return function(bb, v) bb[k] = v end
end

-- Division by zero gives IEEE's infinities and NaN, as BehaviorTree.CPP's
-- doubles do: `/` is a float division on every Lua (1/0 is inf, 0/0 NaN);
-- `%` by zero, which Lua 5.3's integers refuse, is NaN (C's fmod).
local NAN = 0 / 0
local arith = {
  ["+"] = function(x, y) return x + y end,
  ["-"] = function(x, y) return x - y end,
  ["*"] = function(x, y) return x * y end,
  ["/"] = function(x, y) return x / y end,
  ["%"] = function(x, y)
    if y == 0 then return NAN end
    return x % y
  end,
}

local order = {
  ["<"] = function(x, y) return x < y end,
  ["<="] = function(x, y) return x <= y end,
  [">"] = function(x, y) return x > y end,
  [">="] = function(x, y) return x >= y end,
}

-- One comparison of the values x (of node l) and y (of node r).
local function comparer(op, l, r)
  if op == "==" then return function(x, y) return x == y end end
  if op == "!=" then return function(x, y) return x ~= y end end
  local f = order[op]
  return function(x, y, bb)
    local tx, ty = type(x), type(y)
    if tx ~= ty or tx ~= "number" and tx ~= "string" then
      -- as bt.check says it: a key not set first, then the operand that
      -- cannot be ordered, then a key on the right, else the left one
      if x == nil and l.tag == "key" then error(bad(l, x, "", "", bb), 0) end
      if y == nil and r.tag == "key" then error(bad(r, y, "", "", bb), 0) end
      if (tx == "number" or tx == "string") and
         (ty ~= "number" and ty ~= "string" or r.tag == "key") then
        error(bad(r, y, "right", "compared with " .. article(x), bb), 0)
      end
      error(bad(l, x, "left", "compared with " .. article(y), bb), 0)
    end
    return f(x, y)
  end
end

-- An arithmetic step f on x (of node l) and y (of node r) for operator op.
local function arithmetic(op, l, r)
  local f = arith[op]
  return function(x, y, bb)
    if type(x) ~= "number" then
      if op == "+" and type(x) == "string" and type(y) == "string" then
        return x .. y -- BT.CPP adds strings
      end
      error(bad(l, x, "left", "'" .. op .. "' needs numbers", bb), 0)
    end
    if type(y) ~= "number" then
      error(bad(r, y, "right", "'" .. op .. "' needs numbers", bb), 0)
    end
    return f(x, y)
  end
end

local function concat(l, r)
  return function(x, y, bb)
    local tx, ty = type(x), type(y)
    if tx ~= "string" and tx ~= "number" then
      error(bad(l, x, "left", "'..' needs strings or numbers", bb), 0)
    end
    if ty ~= "string" and ty ~= "number" then
      error(bad(r, y, "right", "'..' needs strings or numbers", bb), 0)
    end
    return x .. y
  end
end

local function bitwise(op, l, r)
  return function(x, y, bb)
    if x == nil and l.tag == "key" then error(bad(l, x, "", "", bb), 0) end
    if y == nil and r.tag == "key" then error(bad(r, y, "", "", bb), 0) end
    return bitops(op, whole(l, x, "left", op, BITLIMIT),
                  whole(r, y, "right", op, BITLIMIT))
  end
end

-- A binary step: f(x, y) for op between nodes l and r.
local function step(op, l, r)
  if arith[op] then return arithmetic(op, l, r) end
  if op == ".." then return concat(l, r) end
  return bitwise(op, l, r)
end

-- Fast paths for the common shapes on a key that is not named like a
-- blackboard method: `key op constant` and `key op= constant` (also written
-- `key := key op constant`). The key is read (and written) inline and the
-- operation done inline when the value has the expected type; any other
-- value goes to the general path (slow), which computes it or raises.
local arith_fast = {
  ["+"] = function(k, y, slow) return function(bb)
    local x = bb[k] if type(x) == "number" then return x + y end
    return slow(x, y, bb) end end,
  ["-"] = function(k, y, slow) return function(bb)
    local x = bb[k] if type(x) == "number" then return x - y end
    return slow(x, y, bb) end end,
  ["*"] = function(k, y, slow) return function(bb)
    local x = bb[k] if type(x) == "number" then return x * y end
    return slow(x, y, bb) end end,
  ["/"] = function(k, y, slow) return function(bb)
    local x = bb[k] if type(x) == "number" then return x / y end
    return slow(x, y, bb) end end,
  ["%"] = function(k, y, slow) return function(bb)
    local x = bb[k] if type(x) == "number" then return x % y end
    return slow(x, y, bb) end end,
}

local update_fast = {
  ["+"] = function(k, y, slow) return function(bb)
    local x = bb[k]
    if type(x) == "number" then x = x + y bb[k] = x return x end
    return slow(bb) end end,
  ["-"] = function(k, y, slow) return function(bb)
    local x = bb[k]
    if type(x) == "number" then x = x - y bb[k] = x return x end
    return slow(bb) end end,
  ["*"] = function(k, y, slow) return function(bb)
    local x = bb[k]
    if type(x) == "number" then x = x * y bb[k] = x return x end
    return slow(bb) end end,
  ["/"] = function(k, y, slow) return function(bb)
    local x = bb[k]
    if type(x) == "number" then x = x / y bb[k] = x return x end
    return slow(bb) end end,
}

-- ty: the constant's type, "number" or "string"
local order_fast = {
  ["<"] = function(k, y, ty, slow) return function(bb)
    local x = bb[k] if type(x) == ty then return x < y end
    return slow(x, y, bb) end end,
  ["<="] = function(k, y, ty, slow) return function(bb)
    local x = bb[k] if type(x) == ty then return x <= y end
    return slow(x, y, bb) end end,
  [">"] = function(k, y, ty, slow) return function(bb)
    local x = bb[k] if type(x) == ty then return x > y end
    return slow(x, y, bb) end end,
  [">="] = function(k, y, ty, slow) return function(bb)
    local x = bb[k] if type(x) == ty then return x >= y end
    return slow(x, y, bb) end end,
}

-- Whether node is `key op constant` with a fast path: the key, the constant.
local function keyconst(node, fast)
  local l, r = node[1], node[2]
  if l.tag ~= "key" or r.tag ~= "const" or METHODS[l.name] then return nil end
  local y = r.value
  if fast == arith_fast and (type(y) ~= "number" or
     y == 0 and node.op == "%") then -- (Lua 5.3's integers refuse it)
    return nil
  end
  return l.name, y
end

-- node -> f(bb) returning its value.
local compilers = {}

function compilers.const(node)
  local v = node.value
  return function() return v end
end

function compilers.key(node)
  return reader(node.name)
end

-- t.name, t[expr]: a field of a table value, read raw (no metamethod
-- runs); reading from any other value is an error naming it.
function compilers.index(node)
  local base, fb, fk = node[1], compile(node[1]), compile(node[2])
  return function(bb)
    local t = fb(bb)
    if type(t) ~= "table" then
      error(bad(base, t, "", "not a table (reading '" .. spelled(node) ..
        "')"), 0)
    end
    return rawget(t, fk(bb))
  end
end

function compilers.unary(node)
  local f, x = compile(node[1]), node[1]
  if node.op == "!" then
    return function(bb) return not truth(f(bb), x, "'!'") end
  end
  if node.op == "-" then
    return function(bb)
      local v = f(bb)
      if type(v) ~= "number" then
        error(bad(x, v, "", "'-' needs a number", bb), 0)
      end
      return -v
    end
  end
  return function(bb) -- "~"
    return -1 - whole(x, f(bb), "", "~", BITLIMIT)
  end
end

function compilers.binary(node)
  local op, l, r = node.op, node[1], node[2]
  local fl, fr = compile(l), compile(r)
  if op == "&&" then
    return function(bb) -- truth() inline: the common case is a boolean
      local v = fl(bb)
      if v ~= true then
        if v == false or v == nil or v == 0 then return false end
        if type(v) ~= "number" then notruth(l, v, "'&&'") end
      end
      v = fr(bb)
      if v == true then return true end
      if v == false or v == nil or v == 0 then return false end
      if type(v) ~= "number" then notruth(r, v, "'&&'") end
      return true
    end
  end
  if op == "||" then
    return function(bb)
      local v = fl(bb)
      if v == true then return true end
      if v ~= false and v ~= nil and v ~= 0 then
        if type(v) ~= "number" then notruth(l, v, "'||'") end
        return true
      end
      v = fr(bb)
      if v == true then return true end
      if v == false or v == nil or v == 0 then return false end
      if type(v) ~= "number" then notruth(r, v, "'||'") end
      return true
    end
  end
  local s = step(op, l, r)
  local k, y = keyconst(node, arith_fast)
  if k and arith_fast[op] then return arith_fast[op](k, y, s) end
  return function(bb) return s(fl(bb), fr(bb), bb) end
end

function compilers.compare(node)
  local fs, cs = {}, {}
  for i, operand in ipairs(node) do fs[i] = compile(operand) end
  for i, op in ipairs(node.ops) do cs[i] = comparer(op, node[i], node[i + 1]) end
  if #cs == 1 then
    local c, fl, fr, op = cs[1], fs[1], fs[2], node.ops[1]
    local k, y = keyconst(node, order_fast)
    if k and (op == "==" or op == "!=") then
      if op == "==" then return function(bb) return bb[k] == y end end
      return function(bb) return bb[k] ~= y end
    elseif k and (type(y) == "number" or type(y) == "string") then
      return order_fast[op](k, y, type(y), c)
    end
    return function(bb) return c(fl(bb), fr(bb), bb) end
  end
  local n = #cs
  return function(bb) -- chained: a < b < c is a < b && b < c
    local x = fs[1](bb)
    for i = 1, n do
      local y = fs[i + 1](bb)
      if not cs[i](x, y, bb) then return false end
      x = y
    end
    return true
  end
end

compilers["if"] = function(node)
  local c, t, e = compile(node[1]), compile(node[2]), compile(node[3])
  local cond = node[1]
  return function(bb)
    if truth(c(bb), cond, "'? :'") then return t(bb) end
    return e(bb)
  end
end

-- The general assignment; compilers.assign adds the fast paths.
local function assignment(node)
  local k, op = node.key, node.op
  local get, set, value = reader(k), writer(k), compile(node.value)
  if op == ":=" then
    if not METHODS[k] then
      return function(bb)
        local v = value(bb)
        bb[k] = v
        return v
      end
    end
    return function(bb)
      local v = value(bb)
      set(bb, v)
      return v
    end
  end
  local key = { tag = "key", name = k }
  local s = op ~= "=" and arithmetic(op:sub(1, 1), key, node.value)
  return function(bb)
    local old = get(bb)
    if old == nil then
      error(bad(key, nil, "", "", bb) .. " (':=' creates a key, '" .. op ..
            "' does not)", 0)
    end
    local v = value(bb)
    if s then v = s(old, v, bb) end
    set(bb, v)
    return v
  end
end

function compilers.assign(node)
  local slow, k, op, v = assignment(node), node.key, node.op, node.value
  if METHODS[k] then return slow end
  local by, y -- k op= y, or k := k op y
  if #op == 2 and op ~= ":=" and v.tag == "const" then
    by, y = op:sub(1, 1), v.value
  elseif op == ":=" and v.tag == "binary" and v[1].tag == "key" and
         v[1].name == k and v[2].tag == "const" then
    by, y = v.op, v[2].value
  end
  if update_fast[by] and type(y) == "number" then
    return update_fast[by](k, y, slow)
  end
  return slow
end

function compile(node)
  return compilers[node.tag](node)
end

-- The arguments of bt.check for a statement that is one comparison of a key
-- with a constant or another key, or nil.
local FLIP = { ["<"] = ">", ["<="] = ">=", [">"] = "<", [">="] = "<=",
               ["=="] = "==", ["!="] = "!=" }
local function check(s)
  if s.tag ~= "compare" or #s.ops ~= 1 then return nil end
  local op, l, r = s.ops[1], s[1], s[2]
  if l.tag ~= "key" then op, l, r = FLIP[op], r, l end
  if l.tag ~= "key" then return nil end
  local v
  if r.tag == "key" then v = "$" .. r.name
  elseif r.tag == "const" then
    v = r.value
    if type(v) == "string" and v:sub(1, 1) == "$" then return nil end
    -- bt.check orders numbers and strings only (else a definition error)
    if type(v) == "boolean" and op ~= "==" and op ~= "!=" then return nil end
  else
    return nil
  end
  return l.name, op == "!=" and "~=" or op, v
end

-- Folds unary minus on a number constant (so "hp > -5" is still a check).
local function constants(node)
  for i, child in ipairs(node) do node[i] = constants(child) end
  if node.value and type(node.value) == "table" then
    node.value = constants(node.value)
  end
  if node.tag == "unary" and node.op == "-" and node[1].tag == "const" and
     type(node[1].value) == "number" then
    return { tag = "const", value = -node[1].value }
  end
  return node
end

-- Renames the keys of a statement tree: rename(key) returns "key", k or
-- "value", v (a constant the key stands for). Counts the changes in n.
local function renamed(node, rename, n)
  if node.tag == "key" then
    local what, v = rename(node.name)
    if what == "value" then
      n.changed = n.changed + 1
      return { tag = "const", value = v, parens = node.parens }
    end
    if v ~= node.name then n.changed = n.changed + 1 end
    node.name = v
  elseif node.tag == "assign" then
    local what, v = rename(node.key)
    if what == "value" then
      error("assigns to '" .. node.key .. "', which stands for a constant " ..
            "here", 0)
    end
    if v ~= node.key then n.changed = n.changed + 1 end
    node.key = v
    node.value = renamed(node.value, rename, n)
  end
  for i, child in ipairs(node) do node[i] = renamed(child, rename, n) end
  return node
end

-- The first key of BT.CPP's "@key" form left in a statement tree, or nil.
local function rooted(node)
  local k = node.tag == "key" and node.name or node.tag == "assign" and node.key
  if k and k:sub(1, 1) == "@" then return k end
  for _, child in ipairs(node) do
    local r = rooted(child)
    if r then return r end
  end
  return node.value and type(node.value) == "table" and rooted(node.value)
end

-- Every node of a statement tree (assignments' values included), in order.
local function each(node, f)
  f(node)
  for _, child in ipairs(node) do each(child, f) end
  if node.value and type(node.value) == "table" then each(node.value, f) end
end

-- The first field read (t.x, t[i]) of the statements, or nil.
local function field(stmts)
  local found
  for _, s in ipairs(stmts) do
    each(s, function(n)
      if n.tag == "index" and (not found or n.start < found.start) then
        found = n
      end
    end)
  end
  return found
end

-- The keys the statements read or write, in order, each once.
local function keys(stmts)
  local list, seen = {}, {}
  for _, s in ipairs(stmts) do
    each(s, function(n)
      local k = n.tag == "key" and n.name or n.tag == "assign" and n.key
      if k and not seen[k] then
        seen[k] = true
        list[#list + 1] = k
      end
    end)
  end
  return list
end

-- compile(code, rename, opts) -> f(bb) returning the last statement's
-- value, then (when the script is one comparison of a key) the key, op and
-- value of the equivalent bt.check, whether rename renamed a key, and
-- { keys = the keys it reads or writes, last = the last statement's tree };
-- or nil and the message. rename (optional): the keys seen from a subtree,
-- as for renamed(). opts.fields: field reads are allowed (behavior3's
-- expressions, which are Lua or JavaScript); without it a script reads
-- keys only, as BehaviorTree.CPP's does.
function M.compile(code, rename, opts)
  local stmts, err = M.parse(code)
  if not stmts then return nil, err end
  local dotted = not (opts and opts.fields) and field(stmts)
  if dotted then
    return nil, "at character " .. dotted.start .. ": '" ..
      spelled(dotted) .. "': a script reads blackboard keys, not fields " ..
      "or globals (BehaviorTree.CPP's scripts have no '.' nor '['; " ..
      "behavior3 files' expressions read fields)"
  end
  local n = { changed = 0 }
  if rename then
    for i, s in ipairs(stmts) do
      local ok, r = pcall(renamed, s, rename, n)
      if not ok then return nil, r end
      stmts[i] = r
    end
  end
  for _, s in ipairs(stmts) do
    local root = rooted(s)
    if root then
      return nil, "'" .. root .. "': the root blackboard's keys are " ..
        "reached from a BehaviorTree.CPP file only"
    end
  end
  local fs = {}
  for i, s in ipairs(stmts) do
    stmts[i] = constants(s)
    fs[i] = compile(stmts[i])
  end
  local f = fs[#fs]
  for i = #fs - 1, 1, -1 do -- each statement, then the rest
    local first, rest = fs[i], f
    f = function(bb) first(bb) return rest(bb) end
  end
  local key, op, value
  if #stmts == 1 then key, op, value = check(stmts[1]) end
  return f, key, op, value, n.changed > 0,
    { keys = keys(stmts), last = stmts[#stmts] }
end

-- Nodes ---------------------------------------------------------------------

-- node -> { kind = "script" | "condition", code = code, renamed = bool,
-- keys = { key... } }: the script a node was made from, for the exporters
-- (renamed: its keys are not the code's, seen through a subtree's
-- remapping) and the texts of dumps and traces (keys: those it reads or
-- writes, renamed).
M.source = require("bonsai.formats.kit").provenance "script"

-- node -> { [field] = code }: a pre- or post-condition of the node as its
-- file wrote it, when the node holds another text (the comparison it
-- became as a subtree renamed its keys, compiled in C): what dumps and
-- traces show (init.lua's script maker), with the keys it reads.
M.written = require("bonsai.formats.kit").provenance "written"

local function succeed(f)
  return function(_, bb) f(bb) return true end
end
-- A condition's value as true or false; a value that is neither a boolean
-- nor a number nor nil is an error naming the last statement's operand.
local function holds(f, last)
  return function(_, bb)
    local v = f(bb)
    if v == true or v == false then return v end
    return truth(v, last, "a condition")
  end
end

-- The message of a script that does not compile, with its code:
-- 'at character 6 of "a := ": syntax error at the end'.
local function refusal(code, err)
  local what = type(code) == "string" and
    (#code > 60 and code:sub(1, 57) .. "..." or code) or tostring(code)
  what = string.format("%q", what):gsub("\\\n", "\\n")
  local at, rest = err:match("^at character (%d+): (.*)$")
  if at then return "at character " .. at .. " of " .. what .. ": " .. rest end
  return what .. ": " .. err
end

-- The node table of bt.script(code) (kind "script": an action that
-- succeeds) or bt.script_condition(code) (kind "condition": success when
-- the value is true; a comparison of a key is a bt.check); its field
-- `script` holds the code. A script that does not compile raises
-- "bt.script('...'): at character N: ..." at `level`; with opts.defer it
-- gives instead the node { type =, script = code } without a function,
-- which bt.tree refuses naming the node's path. rename: as for compile;
-- opts.fields: as for compile.
function M.node(kind, code, level, rename, opts)
  local f, key, op, value, changed, info = M.compile(code, rename, opts)
  if not f then
    if opts and opts.defer and type(code) == "string" then
      return { type = kind == "script" and "action" or "condition",
               script = code }
    end
    local what = type(code) == "string" and
      (#code > 40 and code:sub(1, 37) .. "..." or code) or tostring(code)
    error(string.format("bt.%s(%q): %s", kind == "script" and "script" or
      "script_condition", what, key), level + 1)
  end
  local n
  if kind == "condition" and key then
    n = { type = "check", key = key, op = op, value = value }
  elseif kind == "condition" then
    n = { type = "condition", fn = holds(f, info.last) }
  else
    n = { type = "action", fn = succeed(f) }
  end
  n.script = code
  M.source[n] = { kind = kind, code = code, renamed = changed,
                  keys = info.keys }
  return n
end

-- The keys (space-separated, each seen through map: inner key -> the
-- caller's, or nil) of the script node n (a node table whose field
-- `script` holds code, kind "script" or "condition"), for bt.tree's walk;
-- or nil and the message when code does not compile, or compiles but the
-- node has nothing to run.
function M.node_keys(n, code, map)
  local src = M.source[n]
  local list
  if src and src.code == code then
    list = src.keys
  else
    local f, err, _, _, _, info = M.compile(code)
    if not f then return nil, refusal(code, err) end
    if rawget(n, "type") ~= "check" and rawget(n, "fn") == nil and
       rawget(n, "tick") == nil and rawget(n, "task") == nil and
       rawget(n, "leaf") == nil then
      return nil, "'script' is the text of the node's function, which it " ..
        "lacks (bt.script(code) and bt.script_condition(code) make both)"
    end
    list = info.keys
  end
  local out = {}
  for i, k in ipairs(list) do
    out[i] = type(map) == "table" and type(map[k]) == "string" and map[k] or k
  end
  return table.concat(out, " ")
end

-- The function of a pre- or post-condition (field: "skip_if", "on_success"...)
-- given as a script: fn(agent, bb) returning whether the condition holds
-- (a post-condition's script just runs, and says true); or nil and the
-- message; then whether rename renamed a key, for a pre-condition that
-- is one comparison of a key, its check (key, op, value, as bt.check's),
-- and the list of the keys it reads or writes. rename, opts: as for
-- compile.
local PRE = { failure_if = true, success_if = true, skip_if = true,
              run_while = true }
function M.condition(code, field_, rename, opts)
  local f, key, op, value, changed, info = M.compile(code, rename, opts)
  if not f then return nil, refusal(code, key) end
  if PRE[field_] then
    return holds(f, info.last), changed, key, op, value, info.keys
  end
  return succeed(f), changed, nil, nil, nil, info.keys
end

-- The code of a bt.check node (key, op, value): "hp >= 5", "a != $b" as
-- "a != b"; nil when its value has no literal (a string with both quotes).
local function iskey(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") and
    not lpeg.match(reserved * -1, k) and M.enums[k] == nil
end

function M.check_code(n)
  local v = n.value
  if not iskey(n.key) then return nil end
  if type(v) == "string" and v:sub(1, 1) == "$" then
    v = v:sub(2)
    if not iskey(v) then return nil end
  elseif type(v) == "string" then
    if not v:find("'") then v = "'" .. v .. "'"
    elseif not v:find('"') then v = '"' .. v .. '"'
    else return nil end
  elseif type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return nil end
    if v == math.floor(v) and math.abs(v) < 2^53 then
      v = string.format("%.0f", v)
    else
      for digits = 1, 17 do -- the shortest text that reads back the same
        v = string.format("%." .. digits .. "g", n.value)
        if tonumber(v) == n.value then break end
      end
    end
  elseif type(v) ~= "boolean" then
    return nil
  end
  return n.key .. " " .. (n.op == "~=" and "!=" or n.op) .. " " .. tostring(v)
end

-- enums(t): adds names (identifiers) with number values.
function M.add_enums(t)
  if type(t) ~= "table" then
    error("bt.enums takes a table of names and numbers", 3)
  end
  for k, v in pairs(t) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") or
       lpeg.match(reserved * -1, k) then
      error("bt.enums: '" .. tostring(k) .. "' is not a name", 3)
    end
    if type(v) ~= "number" or v ~= v then
      error("bt.enums: " .. k .. " must be a number", 3)
    end
  end
  for k, v in pairs(t) do M.enums[k] = v end
end

return M
