-- lua_versions_spec: what differs between the Luas Bonsai runs on (5.1,
-- LuaJIT, 5.3, 5.4), seen from any of them: a module built for another Lua
-- is refused with a clear message, a save crosses from one Lua to another
-- and back, and a task cleans up the same way everywhere (bt.defer;
-- leaves_spec and errors_spec run the rest). The other Luas are those of
-- the other build directories (scripts/test makes them all first).
local bt = require "bonsai"
local luaver = require "helpers.luaver"

-- The build directories scripts/test makes, one per Lua (sanitized ones
-- left out: their module needs the sanitizer's runtime preloaded).
local BUILDS = { "build", "build-lua51", "build-luajit", "build-lua53" }
local INTERP = { build = "lua5.4", ["build-lua51"] = "lua5.1",
                 ["build-luajit"] = "luajit", ["build-lua53"] = "lua5.3" }

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

-- Whether dir is the build these specs run with (its module on LUA_CPATH).
local function mybuild(dir)
  local mine = (os.getenv("LUA_CPATH") or ""):match("([^;]*)/src/%?%.so")
  return mine ~= nil and mine:match("/" .. dir:gsub("%-", "%%-") .. "$") ~= nil
end

-- Runs `require "bonsai"` in a new process of this Lua with the module of
-- build dir; returns its output and whether it exited by itself.
local function load_from(dir)
  local p = assert(io.popen(("LUA_PATH='lua/?.lua;lua/?/init.lua' " ..
    "LUA_CPATH='%s/src/?.so' %s -e 'local ok, e = pcall(require, " ..
    "\"bonsai\") io.write(ok and \"ok\" or e)' 2>&1; echo; echo rc=$?"):format(
    dir, luaver.interpreter)))
  local out = p:read("*a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return out:gsub("\nrc=%d+%s*$", ""), rc ~= nil and rc < 128
end

describe("a module built for another Lua", function()
  local others = {}
  for _, d in ipairs(BUILDS) do
    if exists(d .. "/src/bonsai/core.so") and not mybuild(d) then
      others[#others + 1] = d
    end
  end
  -- (the other builds exist when scripts/test runs: it makes them first)
  local it_others = #others > 0 and it or pending

  it_others("is refused with a message that says so, never loaded half-way",
            function()
    local me = luaver.interpreter:match("[^/]+$")
    for _, d in ipairs(others) do
      local out, exited = load_from(d)
      assert.is_true(exited, d .. ": " .. out)
      -- the same Lua's loads (LuaJIT loads 5.1's modules too)
      if INTERP[d] == me or (me == "luajit" and INTERP[d] == "lua5.1") then
        assert.equal("ok", out, d)
      else
        assert.matches("^" .. d:gsub("%-", "%%-") .. "/src/bonsai/core%.so " ..
                       "was built for another Lua than this [%w. %-]+ %(it " ..
                       "needs luaL?_[%w_]+, which this Lua does not have%): " ..
                       "build Bonsai for this Lua", out)
      end
    end
  end)
end)

describe("a save", function()
  local everything = require "helpers.everything"
  local summary = everything.summary
  local others = {}
  for _, d in ipairs(BUILDS) do
    if exists(d .. "/src/bonsai/core.so") and not mybuild(d) then
      others[#others + 1] = d
    end
  end
  local it_others = #others > 0 and it or pending

  local function write(path, s)
    local f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
  end

  -- The other process: restores the save at path, ticks once, prints the
  -- agent's summary and saves it back to path.
  local SCRIPT = [[
    local path, which = ...
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    local bt = require "bonsai"
    local everything = require "helpers.everything"
    local b = bt.agent(everything[which](), { restore = s })
    b:tick(1)
    io.write(everything.summary(b))
    f = assert(io.open(path, "wb"))
    f:write(b:save())
    f:close()
  ]]

  -- Saves an agent of everything[which]() (blackboard bb) after 4 ticks,
  -- restores it under every other Lua, which ticks it and saves it back:
  -- each side's agent reads as the other's. int and float name keys whose
  -- number type (5.3 and later) must survive the crossings.
  local function crosses(which, bb, int, float)
    for _, d in ipairs(others) do
      local path = os.tmpname()
      local a = bt.agent(everything[which](), { blackboard = bb() })
      for _ = 1, 4 do a:tick(1) end
      write(path, a:save())
      a:tick(1)
      write(path .. ".lua", SCRIPT)
      local p = assert(io.popen(("LUA_PATH='lua/?.lua;lua/?/init.lua;" ..
        "tests/spec/?.lua' LUA_CPATH='%s/src/?.so;;' %s %s.lua %s %s 2>&1"
        ):format(d, INTERP[d], path, path, which)))
      local out = p:read("*a")
      p:close()
      os.remove(path .. ".lua")
      assert.equal(summary(a), out, d)
      local f = assert(io.open(path, "rb"))
      local back = bt.agent(everything[which](), { restore = f:read("*a") })
      f:close()
      os.remove(path)
      assert.equal(summary(a), summary(back), d .. " back")
      if math.type then -- integers stay integers (whole floats that crossed
        -- 5.1 or LuaJIT come back as integers too: there all are floats)
        assert.equal("integer", math.type(back.bb[int]), d)
        assert.equal("float", math.type(back.bb[float]), d)
      end
      for _ = 1, 3 do
        a:tick(1)
        back:tick(1)
      end
      assert.equal(summary(a), summary(back), d .. " back, ticked")
    end
  end

  it_others("made here restores under every other Lua, and its save there "
            .. "back here", function()
    crosses("tree", function()
      return { hp = 20, go = true, n = 7, f = 0.25, big = 2 ^ 40, s = "text",
               bag = { 1, 2.5, { x = "y" } } }
    end, "n", "f")
  end)

  it_others("of a running bt.control's c.memory and of skipped nodes "
            .. "crosses the Luas too", function()
    crosses("controlled", function()
      return { hp = 20, wins = 0, ends = 0 }
    end, "k", "f")
  end)

  it_others("of a running leaf's own state (save, restore) crosses the "
            .. "Luas too", function()
    crosses("kept", function() return {} end, "t", "f")
  end)
end)

describe("bt.defer", function()
  local log
  before_each(function() log = {} end)
  local function add(s) log[#log + 1] = s end

  local function job(fail)
    return bt.task(function()
      bt.defer(function(err) add("first " .. tostring(err)) end)
      bt.defer(function(err) add("second " .. tostring(err)) end)
      coroutine.yield()
      if fail then error("bad", 0) end
      return true
    end)
  end

  it("runs the cleanups, the last first, when the task returns", function()
    local a = bt.agent(bt.tree(job()))
    assert.equal("running", a:tick(1))
    assert.same({}, log)
    assert.equal("success", a:tick(1))
    assert.same({ "second nil", "first nil" }, log)
    assert.equal("running", a:tick(1)) -- a new run registers them again
    assert.equal("success", a:tick(1))
    assert.equal(4, #log)
  end)

  it("gives them the error when the task fails", function()
    local a = bt.agent(bt.tree(job(true), { name = "T" }))
    a:tick(1)
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'action': bad", err)
    assert.same({ "second bad", "first bad" }, log)
  end)

  it("runs them when the task is aborted", function()
    local a = bt.agent(bt.tree(job()))
    a:tick(1)
    a:abort()
    assert.same({ "second nil", "first nil" }, log)
    assert.equal("aborted", a:status())
  end)

  it("fails the task with a cleanup's error, the others still run",
     function()
    local a = bt.agent(bt.tree(bt.task(function()
      bt.defer(function() add("ran") end)
      bt.defer(function() error("cleanup failed", 0) end)
      return true
    end), { name = "T" }))
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.equal("tree 'T' node 'action': cleanup failed", err)
    assert.same({ "ran" }, log)
  end)

  it("is refused outside a task's body", function()
    assert.has_error(function() bt.defer(print) end,
                     "bt.defer: not called from the body of a running bt.task")
    local co = coroutine.wrap(function() bt.defer(print) end)
    assert.has_error(co)
    local a = bt.agent(bt.tree(bt.action(function()
      bt.defer(print)
      return true
    end), { name = "T" }))
    local ok, err = pcall(a.tick, a, 1)
    assert.is_false(ok)
    assert.matches("not called from the body of a running bt.task$", err)
  end)

  it("lets an agent dropped while its task runs be collected", function()
    local T = bt.tree(bt.task(function(a)
      bt.defer(function() return a end) -- refers back to the agent
      while true do coroutine.yield() end
    end))
    local gone = setmetatable({}, { __mode = "v" })
    do
      local a = bt.agent(T)
      a:tick(1)
      gone.a = a
    end
    for _ = 1, 3 do collectgarbage() end
    assert.is_nil(gone.a)
  end)
end)
