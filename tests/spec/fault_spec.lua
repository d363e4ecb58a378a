-- fault_spec: fault injection (docs/DEBUGGER.md, "Forcing a node"):
-- a:force and tree:force make a node return success or failure without
-- running, for some ticks or until removed; a running node is aborted
-- first; the events are marked forced (a:events, subscriptions, trace
-- files); a reload drops an agent's faults; an agent collected with
-- faults frees them.
local bt = require "bonsai"

-- root (reactive selector): fight (sequence: see, attack), patrol (runs)
local function guard(log)
  local function leaf(name, status)
    return bt.named(name, bt.action { tick = function()
      log[#log + 1] = name
      return status
    end, abort = function() log[#log + 1] = name .. " aborted" end })
  end
  return bt.tree(bt.reactive_selector { name = "root",
    bt.sequence { name = "fight",
      bt.named("see", bt.condition(function()
        log[#log + 1] = "see"
        return false
      end)),
      leaf("attack", bt.SUCCESS) },
    leaf("patrol", bt.RUNNING) })
end

-- "path status[ forced]" of an agent's waiting events
local function events(a)
  local out = {}
  for _, e in ipairs(a:events()) do
    if e.node then
      out[#out + 1] = e.node .. " " .. e.status .. (e.forced and " forced" or "")
    end
  end
  return table.concat(out, "; ")
end

describe("a:force", function()
  it("makes a node return a status without running, for n ticks",
     function()
    local log = {}
    local a = bt.agent(guard(log)):trace()
    a:tick(0.1)
    a:events()
    assert.equal(a, a:force("root/fight/see", "success", 2))
    assert.same({ "success", 2 }, { a:forced("root/fight/see") })
    log = {}
    assert.equal(bt.SUCCESS, a:tick(0.1))
    assert.same({ "success", 1 }, { a:forced("root/fight/see") })
    assert.equal("root running; root/fight running; root/fight/see " ..
      "success forced; root/fight/attack running; root/fight/attack " ..
      "success; root/fight success; root/patrol aborted; root success",
      events(a))
    assert.equal(bt.SUCCESS, a:tick(0.1))
    assert.is_nil(a:forced("root/fight/see")) -- its two ticks are over
    assert.equal(bt.RUNNING, a:tick(0.1))    -- see runs again: fails
    assert.matches("root/fight/see failure; ", events(a))
  end)

  it("aborts a running node first; its leaf is not called", function()
    local log = {}
    local a = bt.agent(guard(log))
    a:tick(0.1)
    a:force(4, "failure") -- patrol, by id, until removed
    for i = #log, 1, -1 do log[i] = nil end
    assert.equal(bt.FAILURE, a:tick(0.1))
    assert.same({ "see", "patrol aborted" }, log)
    assert.equal(bt.FAILURE, a:tick(0.1))
    assert.same({ "failure", 0 }, { a:forced(4) })
    a:force(4, nil) -- removed
    assert.is_nil(a:forced(4))
    assert.equal(bt.RUNNING, a:tick(0.1))
    assert.equal("patrol", log[#log])
  end)

  it("works on an agent that is not traced, and is dropped by a reload",
     function()
    local log = {}
    local tree = guard(log)
    local a = bt.agent(tree)
    a:force("root/fight/see", "success")
    assert.equal(bt.SUCCESS, a:tick(0.1))
    tree:reload(bt.reactive_selector { name = "root",
      bt.named("see", bt.condition(function() return false end)) })
    assert.equal(bt.FAILURE, a:tick(0.1)) -- the new version runs as it is
    assert.is_nil(a:forced("root/see"))
  end)

  it("marks forced events for subscribers and in trace files", function()
    local cjson = require "cjson"
    local a = bt.agent(guard({}))
    local seen = {}
    a:subscribe(function(_, evs)
      for _, e in ipairs(evs) do
        if e.forced then seen[#seen + 1] = e.node .. " " .. e.status end
      end
    end)
    local file = os.tmpname()
    local rec = bt.record(file, a)
    a:force("root/fight/see", "success", 1)
    a:tick(0.1)
    a:tick(0.1)
    rec:close()
    assert.same({ "root/fight/see success" }, seen)
    local forced = {}
    for line in io.lines(file) do
      local o = cjson.decode(line)
      for _, e in ipairs(o.t == "tick" and o.events or {}) do
        if e[4] == 1 then forced[#forced + 1] = { o.tick, e[1], e[2] } end
      end
    end
    os.remove(file)
    assert.same({ { 1, 2, "success" } }, forced)
  end)

  it("refuses unknown nodes and statuses other than success or failure",
     function()
    local a = bt.agent(guard({}))
    assert.has_error(function() a:force("root/flee", "success") end,
      "bad argument #1 to 'force' (no node 'root/flee' in tree 'root')")
    assert.has_error(function() a:force(9, "success") end,
      "bad argument #1 to 'force' (no node 9 in tree 'root' (ids 0 to 4))")
    assert.has_error(function() a:force("root", "running") end)
    assert.has_error(function() a:force("root", "success", -1) end)
  end)

  it("frees the faults of an agent collected", function()
    local tree = guard({})
    for _ = 1, 20 do bt.agent(tree):force("root/fight/see", "success") end
    collectgarbage()
    collectgarbage()
  end)
end)

describe("tree:force", function()
  it("forces the node on every agent of the tree, not those made later",
     function()
    local tree = guard({})
    local a, b = bt.agent(tree), bt.agent(tree)
    assert.equal(tree, tree:force("root/fight/see", "success", 1))
    local c = bt.agent(tree)
    assert.equal(bt.SUCCESS, a:tick(0.1))
    assert.equal(bt.SUCCESS, b:tick(0.1))
    assert.equal(bt.RUNNING, c:tick(0.1))
    tree:force("root/fight/see", "failure")
    tree:force("root/fight/see", nil)
    assert.is_nil(a:forced("root/fight/see"))
  end)
end)
