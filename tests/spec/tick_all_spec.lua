-- tick_all_spec: bt.tick_all(list, dt) ticks a list of agents from C; one
-- agent's error does not stop the others and comes back in the error list.
local bt = require "bonsai"
local luaver = require "helpers.luaver"
-- What an invalid status message ends with: the valid ones.
local VALID = ': a leaf returns "success", "failure", "running", true or '
  .. "false"
local trace = require "helpers.trace"

local t
before_each(function() t = trace.new() end)

-- A tree whose single leaf runs the owner's script: owner "x" uses trace
-- leaf "x".
local function owner_tree(name)
  return bt.tree(bt.action {
    enter = function(a) t:add("enter " .. a.owner) end,
    tick = function(a)
      t:add("tick " .. a.owner)
      return t:next(a.owner)
    end,
    abort = function(a) t:add("abort " .. a.owner) end,
  }, { name = name or "TA" })
end

local function agents(tree, ...)
  local list = {}
  for k, spec in ipairs { ... } do
    local owner, script = spec:match "^(%w+):(%u+)$"
    t:set(owner, script)
    list[k] = bt.agent(tree, { owner = owner })
  end
  return list
end

describe("bt.tick_all", function()
  it("ticks every agent with dt and returns nil", function()
    local list = agents(owner_tree(), "a:RS", "b:R", "c:F")
    assert.is_nil(bt.tick_all(list, 0.5))
    assert.equal("enter a; tick a; enter b; tick b; enter c; tick c", t:take())
    assert.is_nil(bt.tick_all(list, 0.25))
    assert.equal("tick a; tick b; enter c; tick c", t:take())
    for _, a in ipairs(list) do assert.equal(0.75, a.time) end
    assert.equal("success", list[1]:status())
    assert.equal("running", list[2]:status())
    assert.equal("failure", list[3]:status())
  end)

  it("takes agents of different trees", function()
    local a = bt.agent(bt.tree(t:action("A", "R")))
    local b = bt.agent(bt.tree(bt.sequence { t:action("B", "S") }))
    assert.is_nil(bt.tick_all({ a, b }, 1))
    assert.equal("enter A; tick A; enter B; tick B; exit B success", t:take())
  end)

  it("returns nil for an empty list", function()
    assert.is_nil(bt.tick_all({}, 1))
  end)

  it("uses dt = 0 when none is given", function()
    local list = agents(owner_tree(), "a:R")
    assert.is_nil(bt.tick_all(list))
    assert.equal(0, list[1].time)
  end)

  it("ticks an agent twice when it is listed twice", function()
    local list = agents(owner_tree(), "a:R")
    assert.is_nil(bt.tick_all({ list[1], list[1] }, 1))
    assert.equal("enter a; tick a; tick a", t:take())
    assert.equal(2, list[1].time)
  end)

  it("goes on after an agent's error and reports it", function()
    local list = agents(owner_tree(), "a:R", "b:RE", "c:R", "d:RE", "e:R")
    assert.is_nil(bt.tick_all(list, 1))
    t:take()
    local errs = bt.tick_all(list, 1)
    assert.equal("tick a; tick b; abort b; tick c; tick d; abort d; tick e", t:take())
    assert.equal(2, #errs)
    assert.equal(list[2], errs[1].agent)
    assert.equal("tree 'TA' node 'action': b failed on purpose", errs[1].error)
    assert.equal(list[4], errs[2].agent)
    assert.equal("tree 'TA' node 'action': d failed on purpose", errs[2].error)
    for _, a in ipairs(list) do assert.equal(2, a.time) end
    assert.equal("aborted", list[2]:status())
    assert.equal("aborted", list[4]:status())
    assert.equal("running", list[5]:status())
  end)

  it("leaves failed agents ready for the next tick", function()
    local list = agents(owner_tree(), "a:E", "b:R")
    local errs = bt.tick_all(list, 1)
    assert.equal(1, #errs)
    assert.equal("enter a; tick a; abort a; enter b; tick b", t:take())
    t:set("a", "R")
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal("enter a; tick a; tick b", t:take())
  end)

  it("reports an invalid status like a:tick", function()
    local bad = bt.agent(bt.tree(bt.sequence {
      bt.action(function() return 12 end),
    }, { name = "B" }))
    local good = bt.agent(bt.tree(t:action("A", "R")))
    local errs = bt.tick_all({ bad, good }, 1)
    assert.equal(1, #errs)
    assert.equal(bad, errs[1].agent)
    assert.equal("tree 'B' node 'sequence/action[1]': invalid status "
                 .. "(a number value)" .. VALID, errs[1].error)
    assert.equal("running", good:status())
  end)

  it("reports elements that are not agents", function()
    local list = agents(owner_tree(), "a:R", "b:R")
    local fake = setmetatable({}, getmetatable(list[1]))
    local plain = {}
    local errs = bt.tick_all({ list[1], 42, plain, "x", fake, list[2] }, 1)
    assert.equal("enter a; tick a; enter b; tick b", t:take())
    assert.equal(4, #errs)
    assert.same({ agent = 42, error = "element 2 is not an agent",
                  count = 1 }, errs[1])
    assert.equal(plain, errs[2].agent)
    assert.equal("element 3 is not an agent", errs[2].error)
    assert.same({ agent = "x", error = "element 4 is not an agent",
                  count = 1 }, errs[3])
    assert.equal(fake, errs[4].agent)
    assert.equal("element 5 is not an agent", errs[4].error)
  end)

  it("refuses a negative dt before ticking any agent", function()
    local list = agents(owner_tree(), "a:R", "b:R")
    local ok, err = pcall(bt.tick_all, list, -1)
    assert.is_false(ok)
    assert.matches("bad argument #2 .*dt must be a number >= 0, got %-1", err)
    ok, err = pcall(bt.tick_all, list, -1, { budget = 1 })
    assert.is_false(ok)
    assert.matches("bad argument #2 .*dt must be a number >= 0, got %-1", err)
    assert.equal("", t:take())
  end)

  it("lists errors of every kind in one call in the order of the list",
     function()
    local list = agents(owner_tree(), "a:R", "b:RE", "c:R")
    local bad = bt.agent(bt.tree(bt.action(function() return 12 end),
                                 { name = "B" }))
    assert.is_nil(bt.tick_all(list, 1))
    t:take()
    local errs = bt.tick_all({ list[1], 7, list[2], bad, list[3] }, 1)
    assert.equal("tick a; tick b; abort b; tick c", t:take())
    assert.equal(3, #errs)
    assert.same({ agent = 7, error = "element 2 is not an agent",
                  count = 1 }, errs[1])
    assert.equal(list[2], errs[2].agent) -- raised
    assert.equal("tree 'TA' node 'action': b failed on purpose", errs[2].error)
    assert.equal(bad, errs[3].agent) -- returned a bad status
    assert.equal("tree 'B' node 'action': invalid status (a number value)"
                 .. VALID, errs[3].error)
  end)

  it("checks its arguments", function()
    assert.has_error(function() bt.tick_all(nil, 1) end)
    assert.has_error(function() bt.tick_all({}, "x") end)
    assert.is_nil(bt.tick_all({}, "0.5")) -- a numeric string is a number
  end)

  it("reports a leaf that ticks its own agent", function()
    local self_ticker = bt.agent(bt.tree(bt.action(function(a)
      return a:tick(1)
    end), { name = "S" }))
    local list = agents(owner_tree(), "b:R")
    local errs = bt.tick_all({ self_ticker, list[1] }, 1)
    assert.equal(1, #errs)
    assert.equal(self_ticker, errs[1].agent)
    assert.matches("^tree 'S' node 'action': .*agent is already ticking$",
                   errs[1].error)
    assert.equal("enter b; tick b", t:take())
  end)

  it("reports its own busy agent when called from a leaf", function()
    local inner
    local a = bt.agent(bt.tree(bt.action(function(agent)
      inner = bt.tick_all({ agent }, 1)
      return true
    end), { name = "S" }))
    assert.equal("success", a:tick(1))
    assert.equal(1, #inner)
    assert.equal("tree 'S': agent is already ticking", inner[1].error)
    assert.equal(1, a.time)
  end)

  it("checks interrupts", function()
    local list = agents(owner_tree(), "a:R", "b:R")
    list[2]:add_interrupt(function(a) return a.time >= 2 end)
    assert.is_nil(bt.tick_all(list, 1))
    t:take()
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal("tick a; abort b", t:take())
    assert.equal("aborted", list[2]:status())
  end)

  -- Leaf results stay on the stack during a tick and are dropped in
  -- groups: ticks with many leaves, errors among them and nested ticks
  -- must still see every status right and leave the stack balanced.
  it("keeps statuses right across many leaf calls in one tick", function()
    local calls = 0
    local kids = {}
    for k = 1, 60 do
      kids[k] = bt.sequence {
        bt.condition(function() calls = calls + 1; return k % 7 == 0 end),
        bt.action(function() calls = calls + 1
          return k == 56 and bt.SUCCESS or bt.FAILURE end),
      }
    end
    local tree = bt.tree(bt.selector(kids))
    local list = {}
    for k = 1, 30 do list[k] = bt.agent(tree) end
    for _ = 1, 3 do assert.is_nil(bt.tick_all(list, 1)) end
    for _, a in ipairs(list) do assert.equal("success", a:status()) end
    assert.equal(3 * 30 * (56 + 8), calls) -- 56 conditions, 8 actions
    assert.equal("success", list[1]:tick(1))
  end)

  it("recovers from an error raised after many leaf calls", function()
    local kids = {}
    for k = 1, 40 do
      kids[k] = bt.condition { name = "c" .. k, fn = function(a)
        if k == 33 and a.bb.boom then error("boom at 33", 0) end
        return false
      end }
    end
    kids[41] = bt.action { name = "hold", fn = function() return bt.RUNNING end }
    local tree = bt.tree(bt.reactive_selector(kids), { name = "many" })
    local list = { bt.agent(tree), bt.agent(tree), bt.agent(tree) }
    assert.is_nil(bt.tick_all(list, 1))
    list[2].bb.boom = true
    local errs = bt.tick_all(list, 1)
    assert.equal(1, #errs)
    assert.equal(list[2], errs[1].agent)
    assert.equal("tree 'many' node 'reactive_selector/c33': boom at 33", errs[1].error)
    assert.equal("aborted", list[2]:status())
    assert.equal("running", list[1]:status())
    assert.equal("running", list[3]:status())
    list[2].bb.boom = nil
    assert.is_nil(bt.tick_all(list, 1))
    assert.equal("running", list[2]:status())
  end)

  it("lets a leaf tick other agents in the middle of a tick", function()
    local inner = bt.tree(bt.sequence {
      bt.condition(function() return true end),
      bt.condition(function() return true end),
      bt.action(function() return bt.SUCCESS end),
    })
    local others = {}
    for k = 1, 5 do others[k] = bt.agent(inner) end
    local kids = {}
    for k = 1, 20 do
      kids[k] = bt.condition(function()
        if k == 10 then
          assert.is_nil(bt.tick_all(others, 1))
          assert.equal("success", others[1]:tick(1))
        end
        return k == 20
      end)
    end
    local outer = bt.tree(bt.selector(kids))
    local list = { bt.agent(outer), bt.agent(outer) }
    for _ = 1, 2 do assert.is_nil(bt.tick_all(list, 1)) end
    assert.equal("success", list[1]:status())
    assert.equal(8, others[1].time)
    assert.equal(4, others[2].time)
  end)

  it("allocates nothing while no agent fails", function()
    luaver.nojit(finally)
    local tree = bt.tree(bt.reactive_selector {
      bt.condition(function(a) return a.owner.x > 1 end),
      bt.action(function() return bt.RUNNING end),
    })
    local list = {}
    for k = 1, 50 do list[k] = bt.agent(tree, { owner = { x = k % 3 } }) end
    collectgarbage("collect")
    collectgarbage("stop")
    local tick_all, errs, before = bt.tick_all, nil, nil
    -- counted from the second call: the collection above shrank the Lua
    -- stack, and growing it back (doubled at the first call that needs
    -- more room) is the stack's, not the tick's
    for i = 1, 201 do
      if i == 2 then before = collectgarbage("count") end
      errs = errs or tick_all(list, 1)
    end
    local after = collectgarbage("count")
    collectgarbage("restart")
    assert.is_nil(errs)
    assert.equal(before, after)
  end)

  it("ticks many agents", function()
    local tree = bt.tree(bt.sequence {
      bt.action(function(_, bb) bb.n = (bb.n or 0) + 1; return true end),
      bt.wait { seconds = 1 },
    })
    local list = {}
    for k = 1, 1000 do list[k] = bt.agent(tree) end
    for _ = 1, 4 do assert.is_nil(bt.tick_all(list, 0.5)) end
    for _, a in ipairs(list) do
      assert.equal(2, a.bb.n)
      assert.equal("running", a:status())
    end
  end)
end)
