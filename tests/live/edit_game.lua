-- tests/live/edit_game.lua: a game whose tree comes from a watched folder,
-- served live for the editing page's browser test (tests/browser/
-- test_edit.js) and for trying Edit mode by hand. Usage:
--   lua5.4 tests/live/edit_game.lua DIR [--stdin]
-- DIR holds guard.lua (the test copies tests/live/trees/guard.lua there);
-- it is loaded with bt.load and watched (bt.watch, bt.poll each frame).
-- Six guards: 1 and 2 see a wolf (they strike), the others patrol (look,
-- then walk, which runs until the end). The page's URL is printed first
-- ("live: http://127.0.0.1:PORT/?token=..."). With --stdin it answers,
-- a line each, the commands of its standard input:
--   state   {"frame":F,"reloads":R,"agents":[{"running":[...],"paths":[...],
--            "enters":{"walk":N,...},"aborts":{...},"bb":{"hp":...,
--            "enemy":...},"held":B}],"stray":{...}}: what each agent runs
--            now (names, and its version's paths), whether it is held on
--            its version (apply to the selected agent: its own hold, or
--            its tree's without a pass), how often each leaf was entered
--            or aborted, its hp and enemy, the reloads bt.poll made; the
--            same of the stray, a guard never offered to the page
--   frames N  after N more frames: "done frames N"
-- and runs until its input closes; alone it runs for 60 seconds.
local here = arg[0]:match("^(.*)/tests/live/[^/]*$") or "."
if not (os.getenv("LUA_PATH") or os.getenv("LUA_PATH_5_4")) then
  package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" ..
                 package.path
end
if not (os.getenv("LUA_CPATH") or os.getenv("LUA_CPATH_5_4")) then
  package.cpath = here .. "/build/src/?.so;" .. package.cpath
end
local bt = require "bonsai"
local cjson = require "cjson"
local socket = require "socket"

local dir = assert(arg[1], "usage: edit_game.lua DIR [--stdin]")
local driven = arg[2] == "--stdin"

-- The leaves, by name: each counts its enters and aborts per agent.
local function counted(name, status)
  bt.register(name, {
    enter = function(a) a.owner.enters[name] = (a.owner.enters[name] or 0) + 1 end,
    tick = function() return status end,
    abort = function(a) a.owner.aborts[name] = (a.owner.aborts[name] or 0) + 1 end,
  })
end
counted("look", bt.SUCCESS)
counted("walk", bt.RUNNING)
counted("strike", bt.RUNNING)

local tree = assert(bt.load(dir .. "/guard.lua"))
assert(bt.watch(dir))
local agents = {}
for i = 1, 6 do
  agents[i] = bt.agent(tree, { owner = { name = "guard " .. i, enters = {},
                                         aborts = {} },
                               blackboard = { hp = 100 * i,
                                              enemy = i <= 2 and "wolf" or nil } })
end
-- A seventh guard the game ticks but never offers to the debugger: the
-- page cannot see it, and an apply to the selected agent holds it all the
-- same (its tree is held).
local stray = bt.agent(tree, { owner = { name = "stray", enters = {},
                                          aborts = {} },
                               blackboard = { hp = 700 } })
local ticked = { stray }
for i, a in ipairs(agents) do ticked[i + 1] = a end
local _, url = bt.debug.serve { port = 0, agents = agents }
print("live: " .. url)
io.stdout:flush()

local frame, reloads, waits = 0, 0, {}

local function described(a)
  local paths = {}
  for _, n in ipairs(tree:nodes(a)) do
    if not n.hidden then paths[#paths + 1] = n.path end
  end
  return { running = a:running(), paths = paths,
           enters = a.owner.enters, aborts = a.owner.aborts,
           held = a:held() or (a.tree:held() and not a:passes()),
           bb = { hp = a.bb.hp, enemy = a.bb.enemy } }
end

local function state()
  local out = { frame = frame, reloads = reloads, agents = {},
                stray = described(stray) }
  for i, a in ipairs(agents) do out.agents[i] = described(a) end
  return cjson.encode(out)
end

local function act(line)
  local n = line:match("^frames (%d+)$")
  if line == "state" then print(state())
  elseif n then waits[#waits + 1] = { at = frame + tonumber(n), line = line }
  else io.stderr:write("edit_game.lua: unknown command '", line, "'\n") end
  io.stdout:flush()
end

local input = { getfd = function() return 0 end, dirty = function() end }
io.stdin:setvbuf("no")
local function command()
  if not socket.select({ input }, nil, 0)[1] then return false end
  return io.stdin:read("*l")
end

local dt, start = 1 / 30, socket.gettime()
while driven or socket.gettime() - start < 60 do
  frame = frame + 1
  if driven then
    local line = command()
    if line == nil then break end
    if line and line ~= "" then act(line) end
  end
  local done, failed = bt.poll()
  reloads = reloads + #done
  for _, f in ipairs(failed) do io.stderr:write(f.error, "\n") end
  local errors = bt.tick_all(ticked, dt)
  if errors then io.stderr:write(errors[1].error, "\n") end
  bt.debug.poll()
  for i = #waits, 1, -1 do
    if frame >= waits[i].at then
      print("done " .. waits[i].line)
      io.stdout:flush()
      table.remove(waits, i)
    end
  end
  socket.sleep(dt)
end
bt.debug.close()
