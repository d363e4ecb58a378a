-- record_spec: bt.record (docs/TRACE_FORMAT.md, format 1): the header, one
-- tree line per version and an agent line per agent, then a tick line per
-- tick with the events as [node, status, again], the blackboard keys that
-- changed and those cleared, errors, interrupts, reloads with the whole
-- state, and the end line; then tree:dot and tree:mermaid.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
local cjson = require "cjson"

local function readlines(path)
  local out = {}
  for l in io.lines(path) do out[#out + 1] = cjson.decode(l) end
  return out
end

local path
before_each(function() path = os.tmpname() end)
after_each(function() os.remove(path) end)

local function guard()
  return bt.reactive_selector { name = "guard",
    bt.reactive_sequence { name = "flee", bt.check("hp", "<", 25),
      bt.named("run", bt.action(function() return bt.RUNNING end)) },
    bt.named("patrol", bt.action(function(a, bb)
      if bb.fail then error("tripped", 0) end
      bb.steps = (bb.steps or 0) + 1
      return bt.RUNNING
    end)),
  }
end

describe("bt.record", function()
  it("writes the format of docs/TRACE_FORMAT.md", function()
    local tree = bt.tree(guard(), { name = "guard" })
    local a = bt.agent(tree, { owner = { name = "Brom" },
                               blackboard = { hp = 100, f = print } })
    local b = bt.agent(tree, { blackboard = { hp = 5 } })
    local rec = bt.record(path, { a, b })
    bt.tick_all({ a, b }, 0.5)
    a.bb.hp = 10
    a.bb.steps = nil
    a:tick(0.5)
    local l = readlines(path) -- nothing lost to buffering on a flush
    rec:flush()
    l = readlines(path)
    assert.same({ "header", "tree", "agent", "agent", "tick", "tick",
                  "tick" }, { l[1].t, l[2].t, l[3].t, l[4].t, l[5].t,
                              l[6].t, l[7].t })
    assert.equal(1, l[1].format)
    assert.equal(bt.VERSION, l[1].bonsai)
    assert.truthy(l[1].started:match("^%d+%-%d+%-%d+T%d+:%d+:%d+Z$"))
    assert.equal("guard", l[2].tree)
    assert.equal(1, l[2].version)
    assert.equal(5, #l[2].nodes)
    assert.same({ id = 2, name = "check[1]", type = "check", parent = 1,
                  path = "guard/flee/check[1]",
                  params = { key = "hp", op = "<", value = 25 },
                  script = "hp < 25", keys = { "hp" } },
                l[2].nodes[3])
    assert.equal(cjson.null, l[2].nodes[1].parent)
    assert.equal("Brom", l[3].label)
    assert.equal("agent 2", l[4].label)
    -- a's first tick: everything, with the whole state
    local t = l[5]
    assert.equal(1, t.agent)
    assert.equal(1, t.tick)
    assert.equal(0.5, t.time)
    assert.equal("running", t.status)
    assert.same({ { 0, "running", 0 }, { 1, "running", 0 },
                  { 2, "failure", 0 }, { 1, "failure", 0 },
                  { 4, "running", 0 } }, t.events)
    assert.same({ { 0, "running" }, { 1, "failure" }, { 2, "failure" },
                  { 4, "running" } }, t.state)
    assert.equal(100, t.bb.hp)
    assert.equal(1, t.bb.steps)
    assert.equal(tostring(print), t.bb.f)
    assert.equal(2, l[6].agent)
    -- a's second tick: only what changed
    t = l[7]
    assert.equal(2, t.tick)
    assert.is_nil(t.state)
    assert.same({ hp = 10 }, t.bb)
    assert.same({ "steps" }, t.unset)
    assert.same({ 4, "aborted", 0 }, t.events[#t.events])
    rec:close()
  end)

  it("records errors, interrupts, reloads and the end", function()
    local tree = bt.tree(guard(), { name = "guard" })
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    local rec = bt.record(path, a)
    a:tick(1)
    a.bb.fail = true
    assert.has_error(function() a:tick(1) end)
    a.bb.fail = nil
    local stop = true
    a:add_interrupt(function() return stop end)
    a:tick(1)
    stop = false
    tree:reload(bt.sequence { name = "guard",
      bt.named("idle", bt.action(function() return bt.RUNNING end)) })
    a:tick(1)
    a:tick(1)
    rec:close()
    rec:close() -- twice is fine
    a:tick(1) -- no longer recorded
    local l = readlines(path)
    assert.equal("tick", l[5].t)
    assert.equal("tree 'guard' node 'guard/patrol': tripped", l[5].error)
    assert.equal("aborted", l[5].status)
    assert.is_true(l[6].interrupt)
    assert.equal("aborted", l[6].status)
    assert.equal("tree", l[7].t)
    assert.equal(2, l[7].version)
    assert.same({ from = 1, to = 2 }, l[8].reload)
    assert.equal(2, l[8].version)
    assert.same({ { 0, "running" }, { 1, "running" } }, l[8].state)
    assert.same({ { 0, "running", 1 }, { 1, "running", 1 } }, l[9].events)
    assert.same({ t = "end", ticks = 5 }, l[10])
    assert.equal(10, #l)
    assert.same({}, a:events()) -- the trace went with the recorder
  end)

  it("writes an empty list as []", function()
    local tree = bt.tree(bt.sequence { bt.action(function()
      return bt.RUNNING end) })
    local a = bt.agent(tree):trace()
    a:tick(1)
    local rec = bt.record(path, { a })
    local stop = true
    a:add_interrupt(function() return stop end)
    a:tick(1)
    a:tick(1) -- interrupted with nothing running: no events
    rec:close()
    local f = io.open(path)
    local text = f:read("*a")
    f:close()
    assert.truthy(text:find('"events":[]', 1, true))
    assert.falsy(text:find('"events":{}', 1, true))
  end)

  it("writes tables as JSON objects, short ones for those cjson cannot " ..
     "encode",
     function()
    local tree = bt.tree(bt.action(function() return bt.RUNNING end))
    local loop = { name = "loop", pack = { 1 } }
    loop.self = loop
    local big = { f = print }
    for i = 1, 20 do big["k" .. i] = i end
    local a = bt.agent(tree, { blackboard = {
      gear = { sword = 2, shield = true },             -- as it is
      mixed = { 10, 20, on_hit = print },              -- a function inside
      loop = loop,                                     -- a cycle
      big = big } })                                   -- many keys
    local rec = bt.record(path, a)
    a:tick(1)
    rec:close()
    local bb = readlines(path)[4].bb
    assert.same({ sword = 2, shield = true }, bb.gear)
    assert.same({ ["1"] = 10, ["2"] = 20, on_hit = tostring(print) },
                bb.mixed)
    assert.same({ name = "loop", self = "<loop>", pack = "{...}" }, bb.loop)
    assert.equal(17, #(function() -- 16 keys and "..."
      local n = {}
      for k in pairs(bb.big) do n[#n + 1] = k end
      return n
    end)())
    assert.equal("5 more keys", bb.big["..."])
    assert.equal(tostring(print), bb.big.f)
  end)
end)

describe("tree:dot and tree:mermaid", function()
  it("draw the tree with the agent's statuses", function()
    local tree = bt.tree(guard(), { name = "guard" })
    local a = bt.agent(tree, { blackboard = { hp = 100 } })
    a:tick(1)
    local dot = tree:dot(a)
    assert.truthy(dot:find('^digraph "guard" {'))
    assert.truthy(dot:find('n4 [label="patrol (action)\\n[running]", ' ..
                           'fillcolor="#ffd966"];', 1, true))
    assert.truthy(dot:find('n2 [label="check[1]\\nhp < 25\\n[failure]"',
                           1, true))
    assert.truthy(dot:find("n1 -> n2;", 1, true))
    assert.falsy(tree:dot():find("running", 1, true))
    local mm = tree:mermaid(a)
    assert.truthy(mm:find("^flowchart TD\n"))
    assert.truthy(mm:find('n2["check[1]<br/>hp #lt; 25<br/>[failure]"]',
                          1, true))
    assert.truthy(mm:find("n0 --> n1", 1, true))
    assert.truthy(mm:find("class n0,n4 running", 1, true))
    assert.truthy(mm:find("class n1,n2 failure", 1, true))
    assert.falsy(tree:mermaid():find("classDef", 1, true))
  end)
end)

describe("the arena's --record", function()
  it("records every agent of the sample", function()
    assert.is_true(luaver.execute(luaver.interpreter ..
                                  " samples/arena.lua --no-map --ticks=5 " ..
                                  "--record " .. path .. " > /dev/null"))
    local count = {}
    local l = readlines(path)
    for _, x in ipairs(l) do count[x.t] = (count[x.t] or 0) + 1 end
    assert.equal(1, count.header)
    assert.equal(280, count.agent)
    -- (the 8 sentries fall asleep in their first tick: not ticked again)
    assert.equal(272 * 5 + 8, count.tick)
    assert.equal(1, count["end"])
    assert.equal("end", l[#l].t)
  end)
end)
