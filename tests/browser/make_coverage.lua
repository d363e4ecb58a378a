-- make_coverage.lua: a coverage report with nodes that never ran, for the
-- viewer's browser test (test_viewer.js): a guard's combat tree run by the
-- test kit for 4 ticks with an enemy from tick 2, so the retreat and the
-- attack never run and the guard never aborts its child. Writes the report
-- (cov:write) to the path given.
--
--   lua5.4 make_coverage.lua FILE
local bt = require "bonsai"
local T = require "bonsai.test"

-- the game's leaves (the scenario's stand-ins replace them)
for _, name in ipairs { "flee", "attack", "chase", "patrol", "in_reach" } do
  bt.register(name, function() return bt.FAILURE end)
end

local function combat()
  return bt.selector { name = "npc",
    bt.guard { name = "combat", bt.is_set "enemy", abort = "both",
      bt.reactive_selector { name = "fight",
        bt.filter { name = "retreat", conditions = { bt.check("hp", "<", 3) },
                    bt.action "flee" },
        bt.filter { name = "strike", conditions = { bt.condition "in_reach" },
                    bt.action "attack" },
        bt.action "chase",
      } },
    bt.action "patrol",
  }, { name = "npc" }
end

local cov = T.new_coverage()
T.scenario {
  tree = combat, coverage = cov, blackboard = { hp = 10 },
  stand_ins = { flee = T.running(), attack = true, chase = T.running(),
                patrol = T.running(), in_reach = false },
  timeline = { { at = 2, set = { enemy = "wolf" } } },
}:run(4)
cov:write(assert(arg[1], "usage: make_coverage.lua FILE"))
