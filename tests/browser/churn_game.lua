-- churn_game.lua: a game loop for the viewer's browser test where agents
-- and trees come and go: it serves two guards live, adds two new trees at
-- frame 20 ("scout" with two scouts, "sentry" with one sentry), withdraws
-- guard 1 at frame 40 (bt.debug.remove), drops scout 2 and the sentry at
-- frame 50 without telling the debugger (they are collected: the sentry's
-- tree goes with it) and reloads the scout tree at frame 60 (new nodes).
-- Prints "live: URL" first. It runs for SECONDS (default 20), or with
-- --stdin until its standard input closes (the browser test), holding
-- before frame 20 until it reads the line "go" (answered "done go"), so
-- that a page sees the two guards alone however slow the machine.
--   lua5.4 tests/browser/churn_game.lua [SECONDS] [--stdin]
local bt = require "bonsai"
local socket = require "socket"

local seconds, driven = 20, false
for _, a in ipairs(arg) do
  if a == "--stdin" then driven = true else seconds = tonumber(a) end
end
-- The input, read without blocking (a line at a time, unbuffered): false
-- when no line waits, nil once it closed.
local input = { getfd = function() return 0 end, dirty = function() end }
io.stdin:setvbuf("no")
local function command()
  if not socket.select({ input }, nil, 0)[1] then return false end
  return io.stdin:read("*l")
end

local function walker(name, pause)
  return bt.tree(bt.sequence { name = name,
    bt.named("walk", bt.wait(pause)),
    bt.named("count", bt.action(function(a, bb)
      bb.steps = (bb.steps or 0) + 1
      return true
    end)),
  }, { name = name })
end

local guards = walker("guard", 0.3)
local guard_agents = {
  bt.agent(guards, { owner = { name = "guard 1" } }),
  bt.agent(guards, { owner = { name = "guard 2" } }),
}
local agents = { guard_agents[1], guard_agents[2] }
local _, url = bt.debug.serve { port = 0, agents = agents }
print("live: " .. url)
io.stdout:flush()

local scouts, dropped
local go = not driven
local dt, frame, start = 1 / 30, 0, socket.gettime()
while driven or socket.gettime() - start < seconds do
  if driven then
    local line = command()
    if line == nil then break end
    if line == "go" then
      go = true
      print("done go")
      io.stdout:flush()
    end
  end
  if go or frame < 19 then frame = frame + 1 end
  if frame == 20 then
    scouts = walker("scout", 0.2)
    for i = 1, 2 do
      local a = bt.agent(scouts, { owner = { name = "scout " .. i } })
      agents[#agents + 1] = a
      bt.debug.add(a)
    end
    local sentry = bt.agent(walker("sentry", 0.25), { owner = { name = "sentry" } })
    agents[#agents + 1] = sentry
    bt.debug.add(sentry)
  elseif frame == 40 then
    bt.debug.remove(guard_agents[1])
    table.remove(agents, 1)
  elseif frame == 50 then -- scout 2 and the sentry: the last two
    agents[#agents], agents[#agents - 1] = nil, nil
    dropped = true
  elseif frame == 60 then
    scouts:reload(bt.sequence { name = "scout",
      bt.named("walk", bt.wait(0.1)),
      bt.named("look", bt.action(function() return true end)),
    })
  end
  bt.tick_all(agents, dt)
  if dropped then collectgarbage() end
  bt.debug.poll()
  socket.sleep(dt)
end
bt.debug.close()
