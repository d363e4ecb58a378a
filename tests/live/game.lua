-- tests/live/game.lua: a small game loop that serves its agents live on
-- 127.0.0.1, for the viewer's browser test and for trying the viewer by
-- hand. Usage (from the repository, after scripts/setup):
--   lua5.4 tests/live/game.lua [PORT [SECONDS]]
-- PORT 0 (the default) picks a free port; the page's URL, with its token,
-- is printed on the first line ("live: http://127.0.0.1:PORT/?token=..."). It runs for SECONDS (default 30)
-- at about 30 frames a second: three guards patrol and chase, one of them
-- is hurt now and then (so guards react), and its tree is reloaded once.
local here = arg[0]:match("^(.*)/tests/live/[^/]*$") or "."
if not (os.getenv("LUA_PATH") or os.getenv("LUA_PATH_5_4")) then
  package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" ..
                 package.path
end
if not (os.getenv("LUA_CPATH") or os.getenv("LUA_CPATH_5_4")) then
  package.cpath = here .. "/build/src/?.so;" .. package.cpath
end
local bt = require "bonsai"
local socket = require "socket"

local port = tonumber(arg[1] or "0")
local seconds = tonumber(arg[2] or "30")

local function guard(version)
  return bt.reactive_selector { name = "guard",
    bt.reactive_sequence { name = "flee",
      bt.check("hp", "<", 25),
      bt.named("run", bt.action(function(a, bb)
        bb.hp = bb.hp + 1
        return bt.RUNNING
      end)),
    },
    bt.guard { name = "alert", bt.is_set "enemy", abort = "lower",
      bt.named("attack", bt.action(function(a, bb)
        bb.enemy_hp = (bb.enemy_hp or 30) - 10
        if bb.enemy_hp > 0 then return bt.RUNNING end
        bb.enemy, bb.enemy_hp = nil, nil
        return bt.SUCCESS
      end)),
    },
    bt.sequence { name = "patrol",
      bt.named("walk", bt.wait(version == 1 and 1 or 0.5)),
      bt.named("look", bt.action(function(a, bb)
        bb.looks = (bb.looks or 0) + 1
        return true
      end)),
    },
  }
end

local tree = bt.tree(guard(1), { name = "guard" })
local agents = {}
for i = 1, 3 do
  agents[i] = bt.agent(tree, { owner = { name = "guard " .. i },
                               blackboard = { hp = 100, gear = {
                                 sword = 2, charm = function() end } } })
end

local _, url = bt.debug.serve { port = port, agents = agents }
print("live: " .. url)
io.stdout:flush()

local dt, frame, start = 1 / 30, 0, socket.gettime()
while socket.gettime() - start < seconds do
  frame = frame + 1
  if frame % 90 == 0 then agents[1].bb.hp = 10 end
  if frame % 120 == 0 then agents[2].bb.enemy = "wolf" end
  if frame == 300 then tree:reload(guard(2)) end
  local errors = bt.tick_all(agents, dt)
  if errors then io.stderr:write(errors[1].error, "\n") end
  bt.debug.poll()
  socket.sleep(dt)
end
bt.debug.close()
