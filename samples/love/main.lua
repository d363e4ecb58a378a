-- samples/love/main.lua: a top-down scene in LÖVE (LuaJIT) where 36 NPCs
-- patrol, chase and flee a wandering monster, each driven by a Bonsai agent
-- of the tree in npc.lua. Edit npc.lua while it runs: bt.poll reloads it
-- and the agents switch at their next tick. The live debugger serves the
-- agents to the viewer (the URL is on screen).
--
--   meson setup build-luajit -Dlua_pkg=luajit && ninja -C build-luajit
--   love samples/love
--   love samples/love --test SECONDS LOG SHOT --tree FILE  (tests/love/run.sh)
--
-- The module is looked up in build-luajit (BONSAI_CPATH overrides).

local source = love.filesystem.getSource()
local root = source .. "/../.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" ..
               package.path
package.cpath = (os.getenv("BONSAI_CPATH") or
                 root .. "/build-luajit/src/?.so") .. ";" .. package.cpath

local bt = require "bonsai"

local W, H = 800, 600
local COLORS = { patrol = { 0.3, 0.8, 0.4 }, chase = { 0.9, 0.25, 0.2 },
                 flee = { 0.95, 0.85, 0.2 } }

local opt = { tree = source .. "/npc.lua" }
local npcs, agents, tree = {}, {}, nil
local monster = { x = W / 2, y = H / 2, t = 0 }
local clock, reloads, url, log = 0, 0, nil, nil
local counts = {}

local function say(fmt, ...)
  if log then log:write(("%.2f "):format(clock), fmt:format(...), "\n") end
end

-- Leaves: each sets the NPC's velocity and its mode (its colour).
local function steer(npc, tx, ty, speed)
  local dx, dy = tx - npc.x, ty - npc.y
  local d = math.sqrt(dx * dx + dy * dy)
  if d < 1 then npc.vx, npc.vy = 0, 0 return end
  npc.vx, npc.vy = dx / d * speed, dy / d * speed
end

local function mode(npc, m)
  if npc.mode ~= m then
    say("npc %d %s>%s", npc.id, npc.mode or "none", m)
    counts[m] = (counts[m] or 0) + 1
    npc.mode = m
  end
end

bt.register("patrol", function(a)
  local npc = a.owner
  local wp = npc.route[npc.at]
  if (wp[1] - npc.x) ^ 2 + (wp[2] - npc.y) ^ 2 < 100 then
    npc.at = npc.at % #npc.route + 1
    wp = npc.route[npc.at]
  end
  steer(npc, wp[1], wp[2], 50)
  mode(npc, "patrol")
  return bt.RUNNING
end)

bt.register("chase", function(a)
  steer(a.owner, monster.x, monster.y, 80)
  mode(a.owner, "chase")
  return bt.RUNNING
end)

bt.register("flee", function(a)
  local npc = a.owner
  steer(npc, 2 * npc.x - monster.x, 2 * npc.y - monster.y, 90)
  mode(npc, "flee")
  return bt.RUNNING
end)

local function arguments(args)
  local i = 1
  while args[i] do
    if args[i] == "--test" then
      opt.seconds, opt.log, opt.shot = tonumber(args[i + 1]), args[i + 2],
                                       args[i + 3]
      i = i + 4
    elseif args[i] == "--tree" then
      opt.tree = args[i + 1]
      i = i + 2
    else
      i = i + 1
    end
  end
end

function love.load(args)
  arguments(args or {})
  if opt.log then
    log = assert(io.open(opt.log, "w"))
    log:setvbuf("line") -- read while the game runs (tests/love/run.sh)
  end
  tree = assert(bt.load(opt.tree))
  assert(bt.watch(opt.tree))
  for i = 1, 36 do
    local x, y = 60 + (i - 1) % 6 * 136, 60 + math.floor((i - 1) / 6) * 96
    local npc = { id = i, x = x, y = y, vx = 0, vy = 0, at = 1,
                  brave = i % 3 ~= 0, hp = 100,
                  route = { { x, y }, { x + 60, y }, { x + 60, y + 50 },
                            { x, y + 50 } } }
    npcs[i] = npc
    agents[i] = bt.agent(tree, { owner = npc,
      blackboard = { sees = false, scared = false } })
  end
  local ok, port, page = pcall(bt.debug.serve, { port = 0, agents = agents })
  if ok then
    url = page -- (with its token: docs/DEBUGGER.md, "Security")
    say("debugger %s", url)
  else
    say("debugger unavailable: %s", tostring(port))
  end
end

local function senses(npc, bb)
  local d = math.sqrt((npc.x - monster.x) ^ 2 + (npc.y - monster.y) ^ 2)
  if d < 40 then npc.hp = math.max(0, npc.hp - 1) end
  npc.hp = math.min(100, npc.hp + 0.1)
  bb.sees = d < 170
  bb.scared = bb.sees and (not npc.brave or npc.hp < 40)
end

function love.update(dt)
  dt = math.min(dt, 1 / 20)
  clock = clock + dt
  monster.t = monster.t + dt
  monster.x = W / 2 + math.sin(monster.t * 0.7) * 300
  monster.y = H / 2 + math.sin(monster.t * 1.1) * 220
  for i, npc in ipairs(npcs) do senses(npc, agents[i].bb) end
  local errors = bt.tick_all(agents, dt)
  if errors then error(errors[1].error) end
  for _, npc in ipairs(npcs) do
    npc.x = math.max(8, math.min(W - 8, npc.x + npc.vx * dt))
    npc.y = math.max(8, math.min(H - 8, npc.y + npc.vy * dt))
  end
  local reloaded, failed = bt.poll()
  for _, path in ipairs(reloaded) do
    reloads = reloads + 1
    say("reloaded %s", path)
  end
  for _, f in ipairs(failed) do say("reload failed: %s", f.error) end
  bt.debug.poll()
  if opt.seconds and clock >= opt.seconds and not opt.done then
    opt.done = true
    love.graphics.captureScreenshot(function(image)
      if opt.shot then
        local f = assert(io.open(opt.shot, "wb"))
        f:write(image:encode("png"):getString())
        f:close()
      end
      say("done patrol=%d chase=%d flee=%d reloads=%d", counts.patrol or 0,
          counts.chase or 0, counts.flee or 0, reloads)
      if log then log:close() end
      love.event.quit(0)
    end)
  end
end

function love.draw()
  love.graphics.clear(0.1, 0.12, 0.15)
  for _, npc in ipairs(npcs) do
    love.graphics.setColor(COLORS[npc.mode] or { 1, 1, 1 })
    love.graphics.circle(npc.brave and "fill" or "line", npc.x, npc.y, 8)
  end
  love.graphics.setColor(0.7, 0.3, 0.9)
  love.graphics.circle("fill", monster.x, monster.y, 18)
  love.graphics.setColor(1, 1, 1)
  local n = { patrol = 0, chase = 0, flee = 0 }
  for _, npc in ipairs(npcs) do
    if npc.mode then n[npc.mode] = n[npc.mode] + 1 end
  end
  love.graphics.print(("patrol %d  chase %d  flee %d   reloads %d   %s"):format(
    n.patrol, n.chase, n.flee, reloads, url or "(no debugger)"), 10, 10)
  love.graphics.print("filled: brave, ring: coward; edit npc.lua to reload",
                      10, H - 24)
end

function love.quit()
  bt.debug.close()
end
