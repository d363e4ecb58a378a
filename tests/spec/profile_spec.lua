-- profile_spec: tree:profile (docs/DEBUGGER.md, "Where the CPU goes"):
-- calls and seconds per node summed over every agent of a tree, the leaves'
-- own time apart from the runtime's; started, stopped and restarted; a
-- reload starts it again; a profiled tick does what an unprofiled one does.
local bt = require "bonsai"

local function clock_wait(secs) -- a leaf's own work: busy for secs
  local t = os.clock() + secs
  while os.clock() < t do end
end

-- root: sequence{ ok (condition), walk (running n ticks, then success) }
local function walker(n)
  return bt.tree(bt.sequence { name = "root",
    bt.named("ok", bt.condition(function() return true end)),
    bt.named("walk", bt.action(function(a, bb)
      local left = (bb:get("left") or n) - 1
      bb:set("left", left)
      return left > 0 and bt.RUNNING or bt.SUCCESS
    end)) })
end

-- { path = node } of a profile
local function bypath(p)
  local out = {}
  for _, n in ipairs(p.nodes) do out[n.path] = n end
  return out
end

describe("tree:profile", function()
  it("is empty and off until started", function()
    local tree = walker(2)
    bt.agent(tree):tick(0.1)
    local p = tree:profile()
    assert.is_false(p.on)
    assert.equals(0, p.ticks)
    assert.same({}, p.nodes)
  end)

  it("counts calls per node over every agent, those made later too",
     function()
    local tree = walker(3)
    local a1 = bt.agent(tree)
    a1:tick(0.1) -- not counted: before the start
    tree:profile(true)
    local a2 = bt.agent(tree)
    a1:tick(0.1) -- a1: walk runs again (its 2nd of 3), then ends
    a1:tick(0.1)
    a2:tick(0.1)
    local p = tree:profile()
    assert.is_true(p.on)
    assert.equals(3, p.ticks)
    local n = bypath(p)
    -- the root is reached by every tick (resumed ticks too); ok only by
    -- the ticks that start the sequence (a2's)
    assert.equals(3, n["root"].calls)
    assert.equals(1, n["root/ok"].calls)
    assert.equals(3, n["root/walk"].calls)
    assert.equals("sequence", n["root"].type)
    assert.equals("walk", n["root/walk"].name)
    assert.equals(2, n["root/walk"].id)
  end)

  it("keeps the leaves' own time apart from the runtime's", function()
    local tree = bt.tree(bt.sequence { name = "root",
      bt.named("slow", bt.action(function()
        clock_wait(0.002)
        return bt.SUCCESS
      end)),
      bt.named("quick", bt.condition(function() return true end)) })
    tree:profile(true)
    local a = bt.agent(tree)
    for _ = 1, 5 do a:tick(0.1) end
    local p = tree:profile()
    local n = bypath(p)
    assert.equals(5, p.ticks)
    assert.is_true(n["root/slow"].leaf >= 5 * 0.0015)
    assert.is_true(n["root/quick"].leaf < n["root/slow"].leaf / 10)
    assert.equals(0, n["root"].leaf) -- a composite has no callback
    local sum = 0
    for _, x in ipairs(p.nodes) do sum = sum + x.runtime + x.leaf end
    assert.is_true(math.abs(sum - p.time) <= p.time * 1e-6 + 1e-9)
    assert.is_true(n["root/slow"].runtime < n["root/slow"].leaf)
  end)

  it("stops with false, keeps the counts, and starts from zero with true",
     function()
    local tree = walker(100)
    local a = bt.agent(tree)
    tree:profile(true)
    a:tick(0.1)
    local stopped = tree:profile(false)
    assert.is_false(stopped.on)
    assert.equals(1, stopped.ticks)
    a:tick(0.1)
    assert.equals(1, tree:profile().ticks)
    tree:profile(true)
    assert.equals(0, tree:profile().ticks)
    a:tick(0.1)
    assert.equals(1, tree:profile().ticks)
  end)

  it("starts again for the new version after a reload", function()
    local tree = walker(100)
    local a = bt.agent(tree)
    tree:profile(true)
    a:tick(0.1)
    assert(tree:reload(bt.sequence { name = "root",
      bt.named("other", bt.condition(function() return false end)) }))
    assert.same({}, tree:profile().nodes) -- until an agent ticks the new one
    a:tick(0.1)
    local p = tree:profile()
    assert.equals(1, p.ticks)
    assert.equals(1, bypath(p)["root/other"].calls)
    assert.is_nil(bypath(p)["root/walk"])
  end)

  it("gives a profiled tick the events and status of an unprofiled one",
     function()
    local plain, profiled = walker(3), walker(3)
    profiled:profile(true)
    local a, b = bt.agent(plain):trace(), bt.agent(profiled):trace()
    for _ = 1, 4 do
      assert.equals(a:tick(0.1), b:tick(0.1))
    end
    local ea, eb = a:events(), b:events()
    assert.equals(#ea, #eb)
    for i = 1, #ea do
      assert.equals(ea[i].node, eb[i].node)
      assert.equals(ea[i].status, eb[i].status)
      assert.equals(ea[i].again, eb[i].again)
    end
  end)

  it("counts on after a leaf's error, and not a tick nested in a leaf",
     function()
    local inner
    local boom = true
    local tree = bt.tree(bt.sequence { name = "root",
      bt.named("leaf", bt.action(function()
        if inner then
          local b = inner
          inner = nil
          b:tick(0.1) -- another agent of the tree, inside this leaf
        end
        if boom then
          boom = false
          error("boom")
        end
        return bt.SUCCESS
      end)) })
    tree:profile(true)
    local a = bt.agent(tree)
    assert.is_false(pcall(a.tick, a, 0.1))
    a:tick(0.1)
    inner = bt.agent(tree)
    a:tick(0.1)
    local p = tree:profile()
    -- the tick that raised is not a tick counted (its call is), the nested
    -- one not at all
    assert.equals(2, p.ticks)
    assert.equals(3, bypath(p)["root/leaf"].calls)
  end)

  it("prints as a report, a line per node", function()
    local tree = walker(2)
    tree:profile(true)
    bt.agent(tree):tick(0.1)
    local text = tostring(tree:profile())
    assert.matches("^profile %(on%): 1 ticks", text)
    assert.matches("\n  walk +1 ", text)
    assert.matches("\n  ok +1 ", text)
  end)

  it("goes into a trace file when the recorder closes", function()
    local cjson = require "cjson"
    local file = os.tmpname()
    local tree, other = walker(2), walker(2)
    tree:profile(true)
    local a, b = bt.agent(tree), bt.agent(other)
    local rec = bt.record(file, { a, b })
    a:tick(0.1)
    b:tick(0.1)
    rec:close()
    local profiles = {}
    for line in io.lines(file) do
      local o = cjson.decode(line)
      if o.t == "profile" then profiles[#profiles + 1] = o end
    end
    os.remove(file)
    assert.equal(1, #profiles) -- the tree not profiled has none
    local p = profiles[1]
    assert.equal("root", p.tree)
    assert.equal(1, p.version)
    assert.equal(1, p.ticks)
    local calls = {}
    for _, n in ipairs(p.nodes) do calls[n[1]] = n[2] end
    assert.same({ [0] = 1, [1] = 1, [2] = 1 }, calls)
  end)

  it("reaches the agents alive, not those collected", function()
    local tree = walker(100)
    local keep = bt.agent(tree)
    for _ = 1, 50 do bt.agent(tree):tick(0.1) end
    collectgarbage()
    collectgarbage()
    tree:profile(true) -- walks the tree's agents: the collected are gone
    keep:tick(0.1)
    for _ = 1, 3 do bt.agent(tree):tick(0.1) end
    assert.equal(4, tree:profile().ticks)
    tree:profile(false)
    tree = nil
    keep = nil
    collectgarbage() -- the tree and its profile go with their last agent
    collectgarbage()
  end)

  it("refuses what is not a boolean", function()
    local tree = walker(2)
    assert.has_error(function() tree:profile("yes") end,
      "bad argument #1 to 'profile' (true to start, false to stop, " ..
      "nothing to read; got string)")
  end)
end)
