-- share_spec.lua: tree:share() and bt.shared(handle) within one state (two
-- states in two threads: tests/c/test_threads.c): the same blueprint, args
-- carried, reloads reaching every tree on it, and what cannot be shared.
local bt = require "bonsai"

describe("shared trees", function()
  bt.register("share_work", function(a, _, args)
    a.owner.n = a.owner.n + args.step
    return bt.RUNNING
  end)
  local function root(step)
    return bt.sequence { name = "root", bt.action("share_work", { step = step }) }
  end

  it("run the same tree, and a reload from either reaches both", function()
    local T = bt.tree(root(2), { name = "s" })
    local a = bt.agent(T, { owner = { n = 0 } })
    a:tick(1)
    local h = T:share()
    assert.matches("^bonsai%-tree:%d+$", h)
    assert.equal(h, T:share()) -- the same handle again
    a:tick(1) -- switched to the shared copy, running kept
    assert.equal(4, a.owner.n)
    local U = bt.shared(h)
    assert.equal("s", U.name)
    assert.equal(T.size, U.size)
    local b = bt.agent(U, { owner = { n = 0 } })
    b:tick(1)
    assert.equal(2, b.owner.n)
    assert(U:reload(root(10)))
    a:tick(1)
    b:tick(1)
    assert.same({ 14, 12 }, { a.owner.n, b.owner.n })
    assert(T:reload(root(100)))
    a:tick(1)
    b:tick(1)
    assert.same({ 114, 112 }, { a.owner.n, b.owner.n })
  end)

  it("refuses trees whose leaves are Lua functions, and unknown handles",
     function()
    local T = bt.tree(bt.action(function() return true end), { name = "f" })
    assert.has_error(function() T:share() end, "tree 'f': cannot share a " ..
      "tree with leaves that are Lua functions: register them " ..
      "(bt.register) and use them by name")
    assert.has_error(function() bt.shared("bonsai-tree:123456789") end,
      "bt.shared: no shared tree has this handle (all its trees were " ..
      "released)")
    assert.has_error(function() bt.shared("x") end,
                     "bt.shared: not a handle of a shared tree")
  end)

  it("lives while one of its trees does", function()
    local T = bt.tree(root(1), { name = "l" })
    local h = T:share()
    local U = bt.shared(h)
    T = nil
    collectgarbage()
    collectgarbage()
    local b = bt.agent(U, { owner = { n = 0 } })
    b:tick(1)
    assert.equal(1, b.owner.n)
    U, b = nil, nil
    collectgarbage()
    collectgarbage()
    assert.has_error(function() bt.shared(h) end)
  end)
end)
