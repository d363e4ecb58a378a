-- quickstart.lua: the README's first example, as a script that runs from
-- any directory (`lua5.4 path/to/samples/quickstart.lua`). Everything
-- below the line "-- The README's example" is the README's code block,
-- word for word (tests/spec/packaging_spec.lua compares them); with
-- --test it also checks the outcome the README's comments promise.

-- Find bonsai beside the samples (setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
assert(loadfile(here .. "setup.lua"))(here)

-- The README's example
local bt = require "bonsai"

-- A lifecycle action: enter before its first tick, tick every tick,
-- exit(status) when its run ends, abort when the run is cut off.
local patrol = bt.action {
  name = "patrol",
  enter = function(a) a.owner.steps = 0 end,
  tick = function(a, bb)
    a.owner.steps = a.owner.steps + 1
    return a.owner.steps >= bb.beat and bt.SUCCESS or bt.RUNNING
  end,
  exit = function(a, bb, args, status) print(a.owner.name, "round", status) end,
  abort = function(a) print(a.owner.name, "stops patrolling") end,
}

-- A plain function is a one-tick action: it returns a status every tick.
local function attack(a, bb)
  bb.enemy_hp = bb.enemy_hp - 10
  if bb.enemy_hp > 0 then return bt.RUNNING end
  bb.enemy = nil
  return bt.SUCCESS
end

local tree = bt.tree(
  bt.reactive_selector { name = "guard",   -- re-evaluated from the top each tick
    bt.reactive_sequence { name = "flee",
      bt.check("hp", "<", 25),              -- compared in C, no Lua call
      bt.named("run", bt.action(function(a) a.owner.x = a.owner.x - 1
                                            return bt.RUNNING end)),
    },
    bt.selector { name = "duty",           -- resumes its running child
      bt.guard { name = "alert", bt.is_set "enemy", abort = "lower",
                 bt.named("attack", bt.action(attack)) },
      patrol,
    },
  }, { name = "guard" })

local npc = { name = "Brom", x = 0 }
local a = bt.agent(tree, { owner = npc, blackboard = { hp = 100, beat = 3 } })

print(a:tick(0.5), table.concat(a:running(), " > "))
--> running   guard > duty > patrol
a.bb.enemy, a.bb.enemy_hp = "wolf", 20     -- the guard reacts at the next tick
print(a:tick(0.5), table.concat(a:running(), " > "))
--> Brom      stops patrolling
--> running   guard > duty > alert > attack
print(a:tick(0.5))                         --> success (the wolf is gone)
a.bb.hp = 10
print(a:tick(0.5), table.concat(a:running(), " > "), a.time)
--> running   guard > flee > run   2.0

-- Agents share the compiled tree; bt.tick_all ticks a whole list from C.
local crowd = {}
for i = 1, 100 do
  crowd[i] = bt.agent(tree, { owner = { name = "guard" .. i, x = 0 },
                              blackboard = { hp = 100, beat = 1000 } })
end
for _ = 1, 60 do
  local errors = bt.tick_all(crowd, 1 / 30)  -- nil, or { {agent=, error=}... }
  if errors then error(errors[1].error) end
end

-- What the README's comments say happened.
if arg and arg[1] == "--test" then
  assert(npc.steps == 1 and a.bb.enemy == nil and a.bb.hp == 10)
  assert(a.time == 2.0 and a:status() == bt.RUNNING)
  assert(table.concat(a:running(), " > ") == "guard > flee > run")
  for i = 1, #crowd do
    assert(crowd[i]:status() == bt.RUNNING and crowd[i].owner.steps == 60)
  end
  print("quickstart: ok")
end
