-- tests/soak/soak.lua: the soak. AGENTS agents run a tree of about 60 nodes
-- that uses every node kind (a priority section, a subtree, a utility
-- selector, a waiting parallel, a delay among them), ticked TICKS times
-- with bt.tick_all; the tree is reloaded every 20 ticks (two versions in
-- turn: a node comes and goes, parameters change) and the keys the guards
-- watch are written every tick. Checks: enters = exits + aborts + still
-- running (lifecycle leaves), task starts = task closes + still running,
-- no tick error; memory (Lua heap, bt.memory(), RSS) flat after warm-up.
--   lua5.4 tests/soak/soak.lua [AGENTS] [TICKS]     (default 10000 20000)
local root = (arg and arg[0] or ""):match("^(.-)/?tests/soak/[^/]*$") or "."
if root == "" then root = "." end
package.path = package.path .. ";" .. root .. "/lua/?.lua;" .. root ..
               "/lua/?/init.lua"
package.cpath = package.cpath .. ";" .. root .. "/build/src/?.so"

local bt = require "bonsai"

local AGENTS = tonumber(arg[1]) or 10000
local TICKS = tonumber(arg[2]) or 20000
local RELOAD = 20
local DT = 0.1

local enters, exits, aborts, starts, closes, reloads = 0, 0, 0, 0, 0, 0

-- A lifecycle leaf that runs for a while, decided by the agent's clock.
local function life(name, len)
  return bt.action { name = name,
    enter = function() enters = enters + 1 end,
    tick = function(a)
      local t = a.owner.t + a.owner.id -- each agent in its own phase
      if t % len == 0 then return math.floor(t / len) % 4 ~= 0 end
      return bt.RUNNING
    end,
    exit = function() exits = exits + 1 end,
    abort = function() aborts = aborts + 1 end }
end

local function closed() closes = closes + 1 end
local function task(name)
  return bt.named(name, bt.task(function(a)
    starts = starts + 1
    bt.defer(closed)
    for _ = 1, 1 + a.owner.id % 3 do coroutine.yield() end
    return a.owner.id % 5 ~= 0
  end))
end

bt.register("soak.see", function(a, bb) return bb.enemy end)
bt.register("soak.hit", function(a, bb)
  return a.owner.t % 3 == 0 and bt.SUCCESS or bt.RUNNING
end)

-- A library tree every version inlines (bt.subtree).
local lib = bt.tree(bt.sequence { name = "errand",
  bt.delay { name = "pause", seconds = 0.2, life("fetch", 3) },
  bt.utility_selector { name = "choose",
    bt.utility(function(a) return a.owner.id % 3 end, life("left", 2)),
    bt.utility(function(a) return a.owner.t % 3 end, life("right", 3)) } },
  { name = "errand" })

local function tree(v)
  local extra = v == 2 and life("extra", 2) or bt.wait(0.2)
  return bt.reactive_selector { name = "root",
    bt.guard { name = "alarm", bt.check("alarm", "==", true),
               abort = "both",
      bt.sequence { name = "fight",
        bt.condition "soak.see",
        bt.retry { name = "tries", times = 2, bt.action "soak.hit" },
        bt.force_success(life("shout", 3)) } },
    bt.monitor { name = "watch",
      conditions = { bt.check("hp", ">", 10) },
      bt.parallel { name = "chores", success = "all", failure = "one",
        bt.timeout { name = "to", seconds = 3 + v, life("dig", 4) },
        bt.time_limit { name = "tl", seconds = 2, task "carry" },
        bt.repeater { name = "rep", times = 2,
          bt.sequence { name = "step", life("walk", 2), extra } } } },
    bt.filter { name = "tired", conditions = { bt.is_set "tired" },
      bt.reactive_sequence { name = "rest",
        bt.invert(bt.check("hp", "<", 5)),
        bt.cooldown { name = "cd", seconds = 1,
          bt.force_failure(life("sit", 2)) },
        bt.limit { name = "lim", times = 3, life("nap", 5) } } },
    bt.parallel { name = "errands", wait = true, success = "one",
      bt.subtree(lib, { name = "errand" }),
      bt.force_failure(bt.wait(0.3)) },
    bt.selector { name = "idle",
      bt.run_once(bt.action(function() return true end)),
      bt.repeat_until_failure(bt.condition(function(a)
        return a.owner.t % 7 ~= 0 end)),
      bt.sequence { name = "wander", life("look", 3), bt.wait(0.5),
                    task "stroll" } },
  }
end

local function opts()
  return { name = "soak", priority = {
    bt.filter { name = "dead", conditions = { bt.check("hp", "<=", 0) },
                life("die", 2) } } }
end

local T = bt.tree(tree(1), opts())
local names = {}
for _, n in ipairs { "shout", "dig", "walk", "extra", "sit", "nap", "look",
                     "die", "fetch", "left", "right" } do
  names[n] = "life"
end
names.carry, names.stroll = "task", "task"

local agents = {}
for i = 1, AGENTS do
  agents[i] = bt.agent(T, { owner = { id = i, t = 0 },
    blackboard = { hp = 50, enemy = false, alarm = false } })
end

local function rss()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local pages = f:read("*n")
  pages = f:read("*n")
  f:close()
  return (pages or 0) * 4096
end

local function memory()
  collectgarbage()
  collectgarbage()
  return { lua = collectgarbage("count") * 1024, core = bt.memory(),
           rss = rss() }
end

local function running()
  local life_n, task_n = 0, 0
  for _, a in ipairs(agents) do
    for _, n in ipairs(a:running()) do
      if names[n] == "life" then life_n = life_n + 1
      elseif names[n] == "task" then task_n = task_n + 1 end
    end
  end
  return life_n, task_n
end

local clock0 = os.clock()
local warm, last
local warmat = math.max(RELOAD, math.floor(TICKS / 10 / RELOAD) * RELOAD)
local errors = 0
for k = 1, TICKS do
  for i = 1, AGENTS do
    local a = agents[i]
    local o = a.owner
    o.t = k
    local bb = a.bb
    local p = (i + k) % 50
    bb.alarm = p < 5                -- the guard's key, every tick
    bb.enemy = p < 3
    bb.hp = 50 - (k + i) % 60       -- monitor, filter, priority
    bb.tired = ((k + i) % 40 < 10) or nil
  end
  local errs = bt.tick_all(agents, DT)
  if errs then
    errors = errors + #errs
    if errors <= 3 then print("tick error: " .. errs[1].error) end
  end
  if k % RELOAD == 0 then
    if k == warmat then warm = memory() end
    if k == TICKS - TICKS % RELOAD then last = memory() end
    reloads = reloads + 1
    assert(T:reload(tree(reloads % 2 + 1), opts()))
  end
end
local secs = os.clock() - clock0
local life_n, task_n = running()

local function mb(x) return ("%.2f MB"):format(x / 1048576) end
print(("soak: %d agents x %d ticks (%d agent-ticks) of a %d-node tree in " ..
       "%.1f s CPU, %d reloads, %d tick errors"):format(AGENTS, TICKS,
       AGENTS * TICKS, T.size, secs, reloads, errors))
print(("  lifecycle leaves: %d enters = %d exits + %d aborts + %d running")
  :format(enters, exits, aborts, life_n))
print(("  tasks: %d starts = %d closes + %d running"):format(starts, closes,
  task_n))
print(("  memory at tick %d and at tick %d:"):format(warmat,
  TICKS - TICKS % RELOAD))
print(("    Lua heap    %s  %s"):format(mb(warm.lua), mb(last.lua)))
print(("    bt.memory() %d bytes  %d bytes"):format(warm.core, last.core))
print(("    RSS         %s  %s"):format(mb(warm.rss), mb(last.rss)))

local bad = {}
if errors > 0 then bad[#bad + 1] = "tick errors" end
if enters ~= exits + aborts + life_n then bad[#bad + 1] = "enters" end
if starts ~= closes + task_n then bad[#bad + 1] = "tasks" end
if last.core ~= warm.core then bad[#bad + 1] = "bt.memory() grew" end
if last.lua > warm.lua * 1.05 + 65536 then bad[#bad + 1] = "Lua heap grew" end
-- (under AddressSanitizer freed memory waits in its quarantine: RSS grows)
local asan = (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true)
if asan then
  print("  (RSS not checked: AddressSanitizer's quarantine keeps freed memory)")
elseif last.rss > warm.rss * 1.10 + 4194304 then
  bad[#bad + 1] = "RSS grew"
end
if #bad > 0 then
  print("soak: FAILED: " .. table.concat(bad, ", "))
  os.exit(1)
end
print("soak: ok")
