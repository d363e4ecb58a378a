-- kind_params_spec: walks the kind table (core.KINDS) and checks that
-- tree:nodes() and tree:dump() show every parameter of every kind, read
-- from the node's row: a kind added without its parameters, or a parameter
-- one of them leaves out, fails here.
local bt = require "bonsai"
local core = require "bonsai.core"
local examples = require("helpers.examples").examples

-- A value of each parameter that is no default, what tree:nodes() reports
-- for it and what tree:dump() writes.
local samples = {
  times = { 3, 3, " x3" },
  seconds = { 2.5, 2.5, " 2.5s" },
  success = { "one", 1, " success>=1" },
  failure = { 1, 1, " failure>=1" },
  key = { "hp", "hp", " hp" },
  op = { "<", "<", " <" },
  value = { 7, 7, " 7" },
  abort = { "both", "both", " abort=both" },
  wait = { true, true, " wait" },
  then_skip = { true, true, " then_skip" },
  event = { "heard", "heard", ' "heard"' },
  timeout = { 5, 5, " timeout=5s" },
  abort_timeout = { 2, 2, " abort_timeout=2s" },
}
-- (an event guard takes "none" or "lower" only)
local per_kind = { event_guard = { abort = { "lower", "lower", " abort=lower" } } }

describe("the kind table's parameters", function()
  it("each has a sample here", function()
    for _, k in ipairs(core.KINDS) do
      for _, p in ipairs(k.params) do
        assert.is_truthy(samples[p], "no sample of parameter '" .. p .. "'")
      end
    end
  end)

  for _, k in ipairs(core.KINDS) do
    if k.class ~= "hidden" then
      it("of a " .. k.name .. " are all in tree:nodes() and tree:dump()",
         function()
        local n = assert(examples[k.name], "no example of a " .. k.name)()
        local sample = setmetatable(per_kind[k.name] or {},
                                    { __index = samples })
        for _, p in ipairs(k.params) do n[p] = sample[p][1] end
        if k.name == "parallel" then n[2] = bt.wait(1) end -- two children
        local tree = bt.tree(n)
        local root = tree:nodes()[1]
        assert.equal(k.name, root.type)
        local line = tree:dump():match("^[^\n]*")
        for _, p in ipairs(k.params) do
          assert.equal(sample[p][2], root.params[p], k.name .. "." .. p)
          assert.is_truthy(line:find(sample[p][3], 1, true),
                           k.name .. "'s dump line '" .. line .. "' shows "
                           .. p)
        end
        local shown = 0
        for p in pairs(root.params) do
          if p ~= "leaf" then shown = shown + 1 end
        end
        assert.equal(#k.params, shown, k.name .. ": only its parameters")
      end)
    end
  end

  it("defaults are shown too (a repeater forever, a parallel's counts)",
     function()
    local tree = bt.tree(bt.repeater { bt.wait(1) })
    assert.equal(0, tree:nodes()[1].params.times)
    assert.equal("repeater forever", tree:dump():match("^[^\n]*"))
    tree = bt.tree(bt.parallel { bt.wait(1), bt.wait(2) })
    assert.same({ success = 2, failure = 1, wait = false },
                tree:nodes()[1].params)
  end)
end)
