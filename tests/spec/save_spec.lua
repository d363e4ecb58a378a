-- save_spec.lua: a:save() and bt.agent(tree, { restore = s }): round trips
-- with every node kind running, across a reload, across processes, the
-- blackboard values that can and cannot be saved, and the refusals of
-- bytes that are not a save of the tree (fuzzed).
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local mathtype, unpack = luaver.mathtype, luaver.unpack

local everything = require "helpers.everything"
local tree = everything.tree

local function run() return bt.RUNNING end

describe("a:save and restore", function()
  it("restore every kind of running state, which then goes on as the " ..
     "original does", function()
    local T = tree()
    local a = bt.agent(T, { blackboard = { hp = 20, go = true } })
    for _ = 1, 3 do a:tick(1) end
    local b = bt.agent(T, { blackboard = { hp = 20, go = true },
                            restore = a:save() })
    assert.equal(table.concat(a:running(), ","),
                 table.concat(b:running(), ","))
    for k = 1, 12 do
      if k == 6 then a.bb.hp = 3; b.bb.hp = 3 end -- the guard aborts
      assert.equal(a:tick(1), b:tick(1))
      assert.equal(table.concat(a:running(), ","),
                   table.concat(b:running(), ","))
    end
    assert.equal(a.time, b.time)
  end)

  it("keeps the agent's own blackboard values, tables included", function()
    local T = tree()
    local shared = { x = 1 }
    local a = bt.agent(T, { blackboard = { hp = 7, name = "orc",
      flag = false, ratio = 0.25, big = math.maxinteger,
      bag = { "sword", "shield", gold = 12, inner = { deep = { true } },
              [2.5] = "half", [true] = "yes", a = shared, b = shared } } })
    local b = bt.agent(T, { restore = a:save() })
    assert.equal(7, b.bb.hp)
    assert.equal("orc", b.bb.name)
    assert.equal(false, b.bb.flag)
    assert.equal(0.25, b.bb.ratio)
    assert.equal(math.maxinteger, b.bb.big)
    assert.is_true(mathtype(b.bb.hp) == "integer")
    assert.same({ "sword", "shield", gold = 12, inner = { deep = { true } },
                  [2.5] = "half", [true] = "yes", a = { x = 1 },
                  b = { x = 1 } }, b.bb.bag)
  end)

  it("refuses values it cannot save, naming the key", function()
    local T = tree()
    local cyclic = {}
    cyclic.self = cyclic
    for _, v in ipairs { print, io.stdout, coroutine.create(function() end),
                         setmetatable({}, {}), cyclic, { f = print },
                         { [{}] = 1 } } do
      local a = bt.agent(T, { blackboard = { bad = v } })
      local ok, err = pcall(a.save, a)
      assert.is_false(ok)
      assert.matches("^tree 't': blackboard key 'bad': ", err)
    end
  end)

  it("goes on after a reload, nodes matched by path", function()
    local T = bt.tree(bt.sequence { name = "root",
      bt.named("A", bt.action(function() return true end)),
      bt.named("B", bt.action(run)) }, { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    local s = a:save()
    assert(T:reload(bt.sequence { name = "root",
      bt.named("new", bt.action(function() return true end)),
      bt.named("A", bt.action(function() return true end)),
      bt.named("B", bt.action(run)) }))
    local b = bt.agent(T, { restore = s })
    assert.equal("root>B", table.concat(b:running(), ">"))
    assert.equal("running", b:tick(1))
    assert.equal("root>B", table.concat(b:running(), ">"))
  end)

  it("enters a running task again (its body cannot be saved), and a " ..
     "running plain leaf not", function()
    local log = {}
    local T = bt.tree(bt.parallel { name = "p",
      bt.named("job", bt.task(function()
        log[#log + 1] = "job starts"
        while true do coroutine.yield() end
      end)),
      bt.action { name = "leaf", enter = function()
        log[#log + 1] = "leaf enters" end, tick = run } }, { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    log = {}
    local b = bt.agent(T, { restore = a:save() })
    b:tick(1)
    assert.same({ "job starts" }, log)
  end)

  it("keeps a running parallel's finished children, wherever they are",
     function()
    local ticks = {}
    local function leaf(name, script)
      return bt.action { name = name, tick = function()
        ticks[#ticks + 1] = name
        ticks[name] = (ticks[name] or 0) + 1
        local c = script:sub(ticks[name], ticks[name])
        return c == "S" and bt.SUCCESS or c == "F" and bt.FAILURE
               or bt.RUNNING
      end }
    end
    local T = bt.tree(bt.parallel { name = "p", success = 3,
      leaf("A", "RRRS"), leaf("B", "S"), leaf("C", "RRRR"), leaf("D", "RS"),
      leaf("E", "RRRRS") }, { name = "t" })
    local a = bt.agent(T)
    a:tick(1)
    a:tick(1) -- B and D finished, between running A, C and E
    local s = a:save()
    ticks = {}
    assert.equal("running", a:tick(1))
    local want = table.concat(ticks, " ")
    ticks = { A = 2, B = 1, C = 2, D = 2, E = 2 }
    local b = bt.agent(T, { restore = s })
    assert.equal("running", b:tick(1))
    assert.equal(want, table.concat(ticks, " "))
    assert.equal("A C E", want)
    assert.equal("success", b:tick(1)) -- A: the third success
  end)

  it("works across processes", function()
    local path = os.tmpname()
    local T = tree()
    local a = bt.agent(T, { blackboard = { hp = 20, go = true } })
    for _ = 1, 4 do a:tick(1) end
    local f = assert(io.open(path, "wb"))
    f:write(a:save())
    f:close()
    a:tick(1)
    local cmd = string.format("%s -e %q", luaver.interpreter, ([[
      package.path = %q
      package.cpath = %q
      local f = assert(io.open(%q, "rb"))
      local s = f:read("*a")
      f:close()
      local bt = require "bonsai"
      local T = require("helpers.everything").tree()
      local b = bt.agent(T, { restore = s })
      b:tick(1)
      io.write(table.concat(b:running(), ","), "|", tostring(b.time))
    ]]):format(package.path, package.cpath, path))
    local env = os.getenv("LD_PRELOAD")
    if env then cmd = "LD_PRELOAD=" .. env .. " " .. cmd end
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    os.remove(path)
    assert.equal(table.concat(a:running(), ",") .. "|" .. a.time, out)
  end)

  it("refuses another tree's save, a newer format and corrupted bytes, " ..
     "changing nothing", function()
    local T = tree()
    local a = bt.agent(T, { blackboard = { hp = 20, go = true,
                                           bag = { 1, 2, { x = "y" } } } })
    a:tick(1)
    local s = a:save()
    local U = tree("u")
    assert.has_error(function() bt.agent(U, { restore = s }) end,
                     "tree 'u': cannot restore: saved from tree 't', not 'u'")
    assert.has_error(function()
      bt.agent(T, { restore = s:sub(1, 4) .. "\3" .. s:sub(6) })
    end, "tree 't': cannot restore: saved in format 3; this Bonsai reads " ..
         "formats 1 to 2")
    assert.has_error(function() bt.agent(T, { restore = s .. "x" }) end)
    assert.has_error(function() bt.agent(T, { restore = 42 }) end)
    local rng = 12345
    local function rand(n)
      rng = (rng * 1103515245 + 12345) % 2147483648
      return rng % n + 1
    end
    for _ = 1, 3000 do -- never a crash: refused, or a sane agent
      local bytes = { s:byte(1, -1) }
      for _ = 1, rand(4) do bytes[rand(#bytes)] = rand(256) - 1 end
      local cut = rand(10) == 1 and rand(#bytes) or #bytes
      local m = string.char(unpack(bytes, 1, cut))
      local ok, b = pcall(bt.agent, T, { restore = m })
      if ok then
        pcall(b.tick, b, 1) -- a check may meet values it cannot compare
        b:abort()
      else
        assert.matches("^tree 't': cannot restore: ", b)
      end
    end
  end)
end)

