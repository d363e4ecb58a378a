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
      bt.agent(T, { restore = s:sub(1, 4) .. "\4" .. s:sub(6) })
    end, "tree 't': cannot restore: saved in format 4; this Bonsai reads " ..
         "formats 1 to 3")
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


-- A lifecycle action's run keeps state of its own (here on its owner, the
-- shop's clerk): restored, the run goes on without enter, so the action
-- saves that state with the agent (save) and takes it back (restore).
describe("a leaf's state saved with its agent", function()
  -- The shop's restocking: enter starts the clock on the owner, each tick
  -- adds dt, success after 3 seconds, when the shelf gets its items.
  local function restock(keep)
    local def = { name = "restock",
      enter = function(a) a.owner.restock_t = 0 end,
      tick = function(a, bb)
        a.owner.restock_t = a.owner.restock_t + 1
        if a.owner.restock_t >= 3 then bb.stock = bb.stock + 10 return true end
        return bt.RUNNING
      end }
    if keep then
      def.save = function(a) return { t = a.owner.restock_t, why = "empty" } end
      def.restore = function(a, bb, args, v)
        assert.equal(args, nil)
        a.owner.restock_t = v and v.t or 0
        a.owner.restored = v and v.why or "nothing saved"
      end
    end
    return bt.tree(bt.sequence { name = "shop", bt.check("stock", "<", 5),
      bt.action(def) }, { name = "shop" })
  end

  it("goes on tick by tick as the original, with its state back", function()
    local T = restock(true)
    local a = bt.agent(T, { owner = {}, blackboard = { stock = 0 } })
    assert.equal("running", a:tick(1))
    local s = a:save()
    local b = bt.agent(T, { owner = {}, restore = s })
    assert.equal(1, b.owner.restock_t)
    assert.equal("empty", b.owner.restored)
    for k = 1, 3 do -- tick 2: running, tick 3: success (restocked)
      local sa, sb = a:tick(1), b:tick(1)
      assert.equal(sa, sb, "tick " .. k)
      assert.equal(a.owner.restock_t, b.owner.restock_t)
      assert.equal(a.bb.stock, b.bb.stock)
    end
    assert.equal(10, b.bb.stock)
  end)

  it("without save and restore the run goes on without its state (the " ..
     "documented way): the leaf's own error", function()
    local T = restock(false)
    local a = bt.agent(T, { owner = {}, blackboard = { stock = 0 } })
    a:tick(1)
    local b = bt.agent(T, { owner = {}, restore = a:save() })
    local ok, err = pcall(b.tick, b, 1)
    assert.is_false(ok)
    assert.matches("node .shop/restock.: .*arithmetic on .*nil value", err)
  end)

  it("restore gets nil from an older save or one that held nothing, and " ..
     "is not called for a leaf that does not run", function()
    -- a save of format 2 (before leaves' states): one of a tree whose leaf
    -- keeps none, marked 2, restored where the leaf keeps one
    local a = bt.agent(restock(false), { owner = {}, blackboard = { stock = 0 } })
    a:tick(1)
    local s = a:save()
    assert.equal(3, s:byte(5))
    local old = bt.agent(restock(true), { owner = {},
                         restore = s:sub(1, 4) .. "\2" .. s:sub(6) })
    assert.equal("nothing saved", old.owner.restored)
    assert.equal(0, old.owner.restock_t)
    assert.equal("running", old:tick(1))
    -- save returned nil: nothing kept, restore gets nil
    local T2 = bt.tree(bt.sequence { name = "shop", bt.check("stock", "<", 5),
      bt.action { name = "restock", tick = run,
        save = function() return nil end,
        restore = function(ag, _, _, v) ag.owner.got = v == nil end } },
      { name = "shop" })
    local c = bt.agent(T2, { owner = {}, blackboard = { stock = 0 } })
    c:tick(1)
    local d = bt.agent(T2, { owner = {}, restore = c:save() })
    assert.is_true(d.owner.got)
    local idle = bt.agent(T2, { owner = {}, blackboard = { stock = 9 } })
    idle:tick(1) -- the check fails: nothing runs
    local e = bt.agent(T2, { owner = {}, restore = idle:save() })
    assert.is_nil(e.owner.got)
  end)

  it("names the node when save or restore fails or save returns what " ..
     "cannot be saved; neither may tick the agent", function()
    local function shop(def)
      def.name, def.tick = "restock", run
      return bt.tree(bt.sequence { name = "shop", bt.action(def) },
                     { name = "shop" })
    end
    local function saving(save)
      local a = bt.agent(shop { save = save })
      a:tick(1)
      local ok, err = pcall(a.save, a)
      assert.is_false(ok)
      return err
    end
    assert.equal("tree 'shop': cannot save node 'shop/restock': save: no",
                 saving(function() error("no", 0) end))
    assert.matches("^tree 'shop': cannot save node 'shop/restock': save: .*" ..
                   "function", saving(function() return print end))
    assert.matches("^tree 'shop': cannot save node 'shop/restock': save: .*" ..
                   "already ticking", saving(function(a) a:tick(1) end))
    local T = shop { save = function() return 1 end,
                     restore = function() error("bad state", 0) end }
    local a = bt.agent(T)
    a:tick(1)
    local ok, err = pcall(bt.agent, T, { restore = a:save() })
    assert.is_false(ok)
    assert.equal("tree 'shop': cannot restore node 'shop/restock': " ..
                 "restore: bad state", err)
  end)

  it("matches by path after a reload; a registered leaf and one inside a " ..
     "remapping subtree keep theirs too", function()
    local seen = {}
    bt.register("sv_patrol", { tick = run,
      save = function(_, bb) return bb.wp end,
      restore = function(a, bb, args, v) seen[#seen + 1] = "patrol " ..
        tostring(v) .. " " .. args.route end })
    local inner = bt.tree(bt.action { name = "look", tick = run,
      save = function(_, bb) return { seen = bb.target } end,
      restore = function(_, _, _, v) seen[#seen + 1] = "look " .. v.seen end },
      { name = "sv_inner" })
    local function version(name)
      return bt.parallel { name = "p",
        bt.action { name = name, leaf = "sv_patrol", args = { route = "north" } },
        bt.subtree(inner, { name = "eyes", remap = { target = "enemy" } }) }
    end
    local T = bt.tree(version("walk"), { name = "sv" })
    local a = bt.agent(T, { blackboard = { wp = 3, enemy = "wolf" } })
    a:tick(1)
    local s = a:save()
    bt.agent(T, { restore = s })
    assert.same({ "patrol 3 north", "look wolf" }, seen)
    seen = {}
    assert(T:reload(version("stroll"))) -- the patrol's path changed
    local b = bt.agent(T, { restore = s })
    assert.same({ "look wolf" }, seen) -- the patrol starts a new run
    assert.equal("running", b:tick(1))
    assert.equal("p,stroll,eyes,look", table.concat(b:running(), ","))
  end)

  it("is refused on a task (its body starts again) and on a condition",
     function()
    assert.has_error(function()
      bt.tree(bt.action { task = function() end, save = function() end })
    end)
    local ok, err = pcall(bt.tree, bt.condition { fn = function() end,
                                                  restore = function() end })
    assert.is_false(ok)
    assert.matches("a condition keeps no state", err)
    ok, err = pcall(bt.tree, bt.action { tick = run, save = 1 })
    assert.is_false(ok)
    assert.matches("leaf field 'save' must be a function", err)
  end)

  it("restores a save of format 1, made by the version before (kept " ..
     "here as bytes), into the state it saved", function()
    local function tree()
      return bt.tree(bt.parallel { name = "p",
        bt.sequence { name = "s",
          bt.action { name = "A", tick = function() return true end },
          bt.action { name = "B", tick = run } },
        bt.control { name = "c", tick = function(c)
            c.memory.k = (c.memory.k or 0) + 1
            return c:tick(1)
          end,
          bt.repeater { name = "r", times = 3,
            bt.action { name = "C", tick = function() return true end } } },
        bt.cooldown { name = "cd", seconds = 5,
          bt.action { name = "D", tick = run } } }, { name = "old" })
    end
    local hex =
    "424e534c2100000007010000000503000000702f63070100000005010000006b" ..
    "030100000000000000424e534101030000006f6c64000000000000f83f000000" ..
    "0000000000020000000106000000010000007009010801000000000000000300" ..
    "0000702f730501ff010000004205000000702f732f4200010003000000702f63" ..
    "1d02100000000000000000000000000000000004000000702f63641501080000" ..
    "00000000000006000000702f63642f4400010003000000020000006870030700" ..
    "000000000000010000006604000000000000e03f030000006261670607030000" ..
    "0003010000000000000003010000000000000003020000000000000005010000" ..
    "0078030300000000000000070100000005010000007902"
    local bytes = hex:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end)
    assert.equal(1, bytes:byte(bytes:find("BNSA", 1, true) + 4)) -- format 1
    local T = tree()
    local a = bt.agent(T, { blackboard = { hp = 7, bag = { 1, "x", { y = true } },
                                           f = 0.5 } })
    a:tick(1)
    a:tick(0.5)
    local b = bt.agent(T, { restore = bytes })
    assert.equal(everything.summary(a), everything.summary(b))
    for _ = 1, 4 do
      assert.equal(a:tick(1), b:tick(1))
      assert.equal(everything.summary(a), everything.summary(b))
    end
  end)
end)
