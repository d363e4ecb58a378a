-- tests/live/game.lua: a small game loop that serves its agents live on
-- 127.0.0.1, for the viewer's browser test and for trying the viewer by
-- hand. Usage (from the repository, after scripts/setup):
--   lua5.4 tests/live/game.lua [PORT [SECONDS]] [--stdin]
-- PORT 0 (the default) picks a free port; the page's URL, with its token,
-- is printed on the first line ("live: http://127.0.0.1:PORT/?token=...").
-- Three guards patrol (a bt.control node taking walk, look and report in
-- turn: a script, a skip_if and an on_success among them), chase and
-- flee, at about 30 frames a second.
-- Alone, it runs for SECONDS (default 30): guard 1 is hurt every 3 s,
-- guard 2 sees a wolf every 4 s, and the tree is reloaded at 10 s. With
-- --stdin (a test drives it), nothing happens by the clock: it does what
-- its standard input says, a command a line ("hurt N": guard N's hp drops
-- to 10; "wolf N": guard N sees a wolf; "reload": the tree's next
-- version), answers each on its standard output ("done hurt 1"), and runs
-- until its input closes.
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

local args, driven = {}, false
for _, a in ipairs(arg) do
  if a == "--stdin" then driven = true else args[#args + 1] = a end
end
local port = tonumber(args[1] or "0")
local seconds = tonumber(args[2] or "30")

-- The patrol: a control node of the game's own that runs its children in
-- turn (walk, look, report) and starts over.
local function patrol(version)
  return bt.control { name = "patrol",
    enter = function(c) c.memory.i = 1 end,
    tick = function(c)
      local m = c.memory
      while m.i <= c.n do
        local s = c:tick(m.i)
        if s == bt.RUNNING or s == bt.FAILURE then return s end
        m.i = m.i + 1 -- (success, or skipped)
      end
      return bt.SUCCESS
    end,
    bt.named("walk", bt.wait(version == 1 and 1 or 0.5)),
    bt.action { name = "look", on_success = "seen := seen + 1",
      tick = function(a, bb)
        bb.looks = (bb.looks or 0) + 1
        return true
      end },
    bt.sequence { name = "report", skip_if = "looks < 3",
      bt.script "rounds := rounds + 1" },
  }
end

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
    patrol(version),
  }
end

local tree = bt.tree(guard(1), { name = "guard" })
local agents = {}
for i = 1, 3 do
  agents[i] = bt.agent(tree, { owner = { name = "guard " .. i },
                               blackboard = { hp = 100, seen = 0, rounds = 0,
                                 gear = { sword = 2, charm = function() end } } })
end

local _, url = bt.debug.serve { port = port, agents = agents }
print("live: " .. url)
io.stdout:flush()

-- What the game does when told (by its input, or by the clock).
local function act(line)
  local what, n = line:match("^(%a+)%s*(%d*)$")
  local a = agents[tonumber(n) or 0]
  if what == "hurt" and a then a.bb.hp = 10
  elseif what == "wolf" and a then a.bb.enemy = "wolf"
  elseif what == "reload" then assert(tree:reload(guard(2)))
  else return io.stderr:write("game.lua: unknown command '", line, "'\n") end
  print("done " .. line)
  io.stdout:flush()
end

-- The input, read without blocking the loop (a line at a time, unbuffered
-- so that select sees every line); nil once it closed.
local input = { getfd = function() return 0 end, dirty = function() end }
io.stdin:setvbuf("no")
local function command()
  if not socket.select({ input }, nil, 0)[1] then return false end
  return io.stdin:read("*l")
end

local dt, frame, start = 1 / 30, 0, socket.gettime()
while driven or socket.gettime() - start < seconds do
  frame = frame + 1
  if driven then
    local line = command()
    if line == nil then break end
    if line and line ~= "" then act(line) end
  else
    if frame % 90 == 0 then act("hurt 1") end
    if frame % 120 == 0 then act("wolf 2") end
    if frame == 300 then act("reload") end
  end
  local errors = bt.tick_all(agents, dt)
  if errors then io.stderr:write(errors[1].error, "\n") end
  bt.debug.poll()
  socket.sleep(dt)
end
bt.debug.close()
