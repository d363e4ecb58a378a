-- badinput_spec.lua: malformed, huge, deep, cyclic and hostile definitions
-- and arguments. Each is refused with a message naming the place, or works,
-- in bounded time and memory: NUL bytes and over-long names, the max_nodes
-- limit on expanded definitions, 100,000-level trees and blackboard chains,
-- metamethods that raise or yield, NaN and infinities, bt.load of things
-- that are not trees.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local bbpairs = luaver.bbpairs

local function ok() return true end

-- Runs f and returns its error message, failing if it does not raise.
local function refused(f)
  local good, err = pcall(f)
  assert.is_false(good, "expected an error")
  return tostring(err)
end

-- A chain of 'levels' tables, each listing the next one twice.
local function doubling(levels)
  local n = bt.action(ok)
  for _ = 1, levels do n = bt.sequence { n, n } end
  return n
end

describe("NUL bytes", function()
  it("are refused in node names, types, keys, operators and modes", function()
    assert.matches("sequence/action[1]: 'name' contains a NUL byte",
      refused(function()
        bt.tree(bt.sequence { bt.named("a\0b", bt.action(ok)) })
      end), 1, true)
    assert.matches("'type' contains a NUL byte", refused(function()
      bt.tree { type = "sequence\0junk", bt.action(ok) }
    end), 1, true)
    assert.matches("check[1]: argument 'key' must be a string without NUL "
      .. "bytes", refused(function()
        bt.tree(bt.sequence { bt.check("hp\0x", "==", 1) })
      end), 1, true)
    assert.matches("argument 'op' must be a string without NUL bytes",
      refused(function()
        bt.tree(bt.sequence { bt.check("hp", "<\0", 1) })
      end), 1, true)
    assert.matches("argument 'abort' must be a string without NUL bytes",
      refused(function()
        bt.tree(bt.guard { bt.is_set "k", abort = "self\0", bt.action(ok) })
      end), 1, true)
    assert.matches("argument 'success' must be a string without NUL bytes",
      refused(function()
        bt.tree(bt.parallel { success = "all\0", bt.action(ok) })
      end), 1, true)
    assert.matches("'leaf' contains a NUL byte", refused(function()
      bt.tree(bt.sequence { bt.action "badinput.x\0y" })
    end), 1, true)
  end)

  it("are refused in tree names", function()
    assert.matches("the tree name contains a NUL byte", refused(function()
      bt.tree(bt.action(ok), { name = "guard\0x" })
    end), 1, true)
    local t = bt.tree(bt.action(ok), { name = "guard" })
    local good, err = t:reload(bt.named("x\0", bt.action(ok)))
    assert.is_nil(good)
    assert.matches("'name' contains a NUL byte", err, 1, true)
  end)

  it("are refused in blackboard keys", function()
    local bb = bt.blackboard {}
    assert.matches("NUL", refused(function() bb["a\0b"] = 1 end), 1, true)
    assert.matches("NUL", refused(function() bb:set("a\0b", 1) end), 1, true)
    assert.is_nil(bb["a\0b"])
    assert.is_nil(bb:get("a\0b"))
  end)
end)

describe("max_nodes", function()
  it("refuses a definition that expands past the default limit, quickly",
     function()
    local t0 = os.clock()
    local err = refused(function() bt.tree(doubling(30)) end)
    assert.matches("more than 1000000 nodes", err, 1, true)
    assert.matches("raise max_nodes", err, 1, true)
    assert.is_true(os.clock() - t0 < 30)
  end)

  it("is a tree option, exact at its boundary", function()
    local n = doubling(4) -- 31 nodes
    assert.equal(31, bt.tree(n, { max_nodes = 31 }).size)
    assert.matches("more than 30 nodes", refused(function()
      bt.tree(n, { max_nodes = 30 })
    end), 1, true)
    local t = bt.tree(doubling(12), { max_nodes = 10000 })
    assert.equal(8191, t.size)
  end)

  it("applies to tree:reload, which keeps the old version", function()
    local t = bt.tree(doubling(3))
    local good, err = t:reload(doubling(12), { max_nodes = 5000 })
    assert.is_nil(good)
    assert.matches("more than 5000 nodes", err, 1, true)
    assert.equal(15, t.size)
    assert.is_true(t:reload(doubling(12), { max_nodes = 8191 }))
    assert.equal(8191, t.size)
  end)

  it("checks its value", function()
    for _, v in ipairs { 0, -1, 1.5, "10", 0 / 0, math.huge } do
      assert.matches("'max_nodes' must be a whole number", refused(function()
        bt.tree(bt.action(ok), { max_nodes = v })
      end), 1, true)
    end
  end)

  it("stops a wide list and long condition lists at the limit", function()
    local kids = { type = "sequence" }
    local leaf = bt.action(ok)
    for i = 1, 200000 do kids[i] = leaf end
    assert.matches("more than 1000 nodes", refused(function()
      bt.tree(setmetatable(kids, bt.Node), { max_nodes = 1000 })
    end), 1, true)
    local conds = {}
    local c = bt.condition(ok)
    for i = 1, 200000 do conds[i] = c end
    assert.matches("more than 1000 nodes", refused(function()
      bt.tree(bt.filter { conditions = conds, leaf }, { max_nodes = 1000 })
    end), 1, true)
  end)
end)

describe("huge inputs", function()
  local big = string.rep("x", 50 * 1024 * 1024)

  it("refuses 50 MB names, keys and leaf names, naming the place", function()
    assert.matches("the tree name is too long", refused(function()
      bt.tree(bt.action(ok), { name = big })
    end), 1, true)
    assert.matches("sequence/action[1]: 'name' is too long", refused(function()
      bt.tree(bt.sequence { bt.named(big, bt.action(ok)) })
    end), 1, true)
    assert.matches("argument 'key' must be a string of at most 1024 bytes",
      refused(function() bt.tree(bt.sequence { bt.is_set(big) }) end),
      1, true)
    assert.matches("'leaf' is too long", refused(function()
      bt.tree(bt.sequence { bt.action(big) })
    end), 1, true)
    assert.matches("1 MB", "1 MB") -- a 1 MB name: the same path
    assert.matches("too long", refused(function()
      bt.tree(bt.sequence { bt.named(big:sub(1, 2^20), bt.action(ok)) })
    end), 1, true)
  end)

  it("keeps a 1,024-byte name", function()
    local name = string.rep("n", 1024)
    local t = bt.tree(bt.sequence { bt.named(name, bt.action(ok)) })
    assert.equal(2, t.size)
  end)
end)

describe("deep inputs", function()
  it("compiles, ticks, aborts and dumps a 100,000-level tree", function()
    local entered, aborted = 0, 0
    local n = bt.action { name = "L",
      enter = function() entered = entered + 1 end,
      tick = function() return bt.RUNNING end,
      abort = function() aborted = aborted + 1 end }
    for _ = 1, 100000 do n = bt.sequence { n } end
    local t = bt.tree(n)
    assert.equal(100001, t.size)
    local a = bt.agent(t)
    assert.equal("running", a:tick(1))
    assert.equal(100001, #a:running())
    local d = t:dump(a)
    assert.is_true(#d < 100001 * 200) -- linear, not quadratic
    assert.matches("<100000> L (action) [running]", d, 1, true)
    assert.is_true(t:reload(n))         -- the running path is kept
    assert.equal("running", a:tick(1))
    assert.equal(100001, #a:running())
    a:abort()
    assert.equal(1, entered)
    assert.equal(1, aborted)
  end)

  it("handles a 100,000-level blackboard chain in linear time", function()
    local top = bt.blackboard { k = 1 }
    local p = top
    for _ = 1, 100000 do p = bt.blackboard { parent = p } end
    local seen = 0
    local t0 = os.clock()
    local h = p:observe("k", function(_, _, new) seen = new end)
    top.k = 2
    assert.equal(2, seen)
    local tab = {}
    top.k = tab
    assert.equal(tab, p.k)               -- a handle read through the chain
    local n = 0
    for _ in bbpairs(p) do n = n + 1 end
    assert.equal(1, n)
    assert.is_true(p:unobserve(h))
    assert.is_true(os.clock() - t0 < 20)
    p, top = nil, nil
    collectgarbage()
    collectgarbage()
  end)

  it("notifies a chain where every level observes in linear time", function()
    local top = bt.blackboard { k = 1 }
    local p, calls = top, 0
    local chain = {}
    for i = 1, 20000 do
      p = bt.blackboard { parent = p }
      chain[i] = p
      p:observe("k", function() calls = calls + 1 end)
    end
    local t0 = os.clock()
    top.k = 2
    assert.equal(20000, calls)
    chain[10000].k = 5 -- shadows the key below level 10,000
    calls = 0
    top.k = 3
    assert.equal(9999, calls)
    assert.is_true(os.clock() - t0 < 20)
  end)
end)

describe("pairs", function()
  it("gives values kept on the Lua side, through parents too", function()
    local t, f = {}, print
    local top = bt.blackboard { t = t, n = 1 }
    local bb = bt.blackboard { parent = top, f = f, n = 2 }
    local seen = {}
    for k, v in bbpairs(bb) do seen[k] = v end
    assert.same({ t = t, f = f, n = 2 }, seen)
  end)
end)

describe("cyclic definitions", function()
  it("are refused, naming the place", function()
    local s = bt.sequence { bt.action(ok) }
    s[2] = s
    assert.matches("sequence/sequence[2]: a node cannot contain itself",
      refused(function() bt.tree(s) end), 1, true)
    local f = bt.filter { conditions = {}, bt.action(ok) }
    f.conditions[1] = f
    assert.matches("a node cannot contain itself",
      refused(function() bt.tree(f) end), 1, true)
    local inner = bt.sequence { bt.action(ok) }
    local outer = bt.selector { inner }
    inner[2] = outer
    assert.matches("a node cannot contain itself",
      refused(function() bt.tree(outer) end), 1, true)
  end)
end)

describe("hostile metamethods", function()
  it("are not run while a definition is read", function()
    local calls = 0
    local mt = { __index = function() calls = calls + 1; error("boom") end }
    local n = setmetatable({ type = "sequence", bt.action(ok) }, mt)
    assert.equal(2, bt.tree(n).size)
    local y = setmetatable({ type = "sequence", bt.action(ok) },
      { __index = function() coroutine.yield() end })
    assert.equal(2, bt.tree(y).size)
    -- a node whose type only comes from __index is no node
    local ghost = setmetatable({}, { __index = { type = "sequence" } })
    assert.matches("not a node", refused(function() bt.tree(ghost) end), 1,
      true)
    assert.equal(0, calls)
  end)

  it("in args tables reach the leaf untouched", function()
    local args = setmetatable({}, { __index = function() error("args!") end })
    local t = bt.tree(bt.action(function(a, bb, x)
      return rawequal(x, args) end, args))
    assert.equal("success", bt.agent(t):tick(0))
  end)

  it("in blackboard values are stored as values", function()
    local v = setmetatable({}, { __eq = function() error("eq!") end,
                                 __index = function() error("index!") end })
    local bb = bt.blackboard {}
    bb.k = v
    bb.k = v
    assert.equal(v, bb.k)
    local t = bt.tree(bt.check("k", "==", 1))
    assert.equal("failure", bt.agent(t, { blackboard = bb }):tick(0))
  end)

  it("of a tree's options table are not run", function()
    local o = setmetatable({}, { __index = function() error("opts!") end })
    assert.equal(1, bt.tree(bt.action(ok), o).size)
  end)
end)

describe("NaN and infinities", function()
  it("are refused where a count or a time is expected", function()
    for _, v in ipairs { 0 / 0, math.huge, -math.huge, 1e300, -1, 2.5 } do
      assert.matches("argument 'times' must be a whole number >= 0",
        refused(function() bt.tree(bt.repeater { times = v, bt.action(ok) })
        end), 1, true)
      assert.matches("count", refused(function()
        bt.tree(bt.parallel { success = v, bt.action(ok) })
      end), 1, true)
    end
    for _, v in ipairs { 0 / 0, -math.huge, -1 } do
      assert.matches("argument 'seconds' must be a number >= 0",
        refused(function() bt.tree(bt.wait { seconds = v }) end), 1, true)
    end
  end)

  it("work where they mean something", function()
    local t = bt.tree(bt.timeout { seconds = math.huge,
      bt.action(function() return bt.RUNNING end) })
    local a = bt.agent(t)
    assert.equal("running", a:tick(1e300))
    local c = bt.tree(bt.check("x", "<", 0 / 0))
    assert.equal("failure", bt.agent(c, { blackboard = { x = 1 } }):tick(0))
    assert.matches("dt must be a number >= 0", refused(function()
      a:tick(0 / 0)
    end), 1, true)
    assert.matches("dt must be a number >= 0", refused(function()
      a:tick(-math.huge)
    end), 1, true)
  end)
end)

describe("bt.load", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local function file(name, text)
    local path = dir .. "/" .. name
    local f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
    return path
  end

  it("refuses a file that returns a userdata that is no tree", function()
    local good, err = bt.load(file("ud.lua", "return io.stdout"))
    assert.is_nil(good)
    assert.matches("must return a node or a tree %(got a userdata that is "
      .. "no tree%)", err)
    good, err = bt.reload(file("ud2.lua", "return io.stderr"))
    assert.is_nil(good)
    assert.matches("no tree", err, 1, true)
  end)

  it("takes a tree, and bt.istree tells trees apart", function()
    local t = bt.load(file("t.lua",
      "return bt.tree(bt.action(function() return true end))"))
    assert.is_true(bt.istree(t))
    assert.is_false(bt.istree(io.stdout))
    assert.is_false(bt.istree({}))
    assert.is_false(bt.istree(nil))
  end)

  it("refuses a file that expands past the limit, keeping the old version",
     function()
    local path = file("big.lua", [[
      local n = bt.action(function() return true end)
      for _ = 1, 30 do n = bt.sequence { n, n } end
      return n]])
    local good, err = bt.load(path)
    assert.is_nil(good)
    assert.matches("more than 1000000 nodes", err, 1, true)
    local t = bt.load(file("small.lua",
      "return bt.action(function() return true end)"))
    local f = assert(io.open(dir .. "/small.lua", "w"))
    f:write([[local n = bt.action(function() return true end)
      for _ = 1, 25 do n = bt.sequence { n, n } end
      return n, { max_nodes = 1000 }]])
    f:close()
    good, err = bt.reload(dir .. "/small.lua")
    assert.is_nil(good)
    assert.matches("more than 1000 nodes", err, 1, true)
    assert.equal(1, t.size)
  end)

  it("refuses a path that is not a string, and tree:dump a non-agent",
     function()
    assert.matches("bad argument #1 to 'load' %(string expected, got table%)",
      refused(function() bt.load({}) end))
    assert.matches("bad argument #1 to 'reload' %(string expected, got nil%)",
      refused(function() bt.reload() end))
    local t = bt.tree(bt.action(ok))
    assert.matches("bad argument #1 to 'dump' %(bonsai.agent expected, got "
      .. "table%)", refused(function() t:dump({ 1 }) end))
    assert.matches("bad argument #1 to 'dump' %(bonsai.agent expected",
      refused(function() t:dump({}) end))
  end)

  it("refuses options that are not a table", function()
    local t = bt.tree(bt.action(ok), { name = "o" })
    local good, err = t:reload(bt.action(ok), "fast")
    assert.is_nil(good)
    assert.matches("the options must be a table", err, 1, true)
  end)
end)
