-- tests/fuzz/differential.lua: the LuaJIT path against the lua_call path
-- (docs/LUA_VERSIONS.md). Replays the fuzzer's random worlds (fuzz.lua
-- --replay SEED --log) once on each path (BONSAI_FFI=1 and 0, each in a
-- process of its own) and compares the two logs line by line: every API
-- call and every callback in the order they came, each tick's node
-- statuses (the tree dumps), every error and, with --events, every trace
-- event of every agent. The seeds alternate between worlds the LuaJIT path
-- steps (fuzz.lua --stepped: events sent to its agents, no event node)
-- and the fuzzer's own (whose lifecycle leaves, tasks, event nodes and
-- latent aborts it leaves to the lua_call path, agent by agent, tick by
-- tick), with and without traces; the stepped worlds must have been
-- stepped. Run with LuaJIT:
--   luajit tests/fuzz/differential.lua [--seeds 1-40] [--steps 300]
local root = (arg[0]:match("^(.-)/?tests/fuzz/[^/]*$") or ".")
if root == "" then root = "." end
local lua = os.getenv("BONSAI_LUA") or arg[-1] or "luajit"

local first, last, steps = 1, 40, 300
do
  local i = 1
  while arg[i] do
    if arg[i] == "--seeds" then
      local x, y = arg[i + 1]:match("^(%d+)%-(%d+)$")
      first, last = tonumber(x), tonumber(y)
      i = i + 1
    elseif arg[i] == "--steps" then
      steps = tonumber(arg[i + 1])
      i = i + 1
    else
      io.stderr:write("differential.lua: unknown option " .. arg[i] .. "\n")
      os.exit(2)
    end
    i = i + 1
  end
end

if not (type(jit) == "table" and pcall(require, "ffi")) then
  print("differential: not LuaJIT with the FFI: nothing to compare")
  os.exit(77) -- skipped
end
if os.getenv("BONSAI_FFI") == "0" then -- (meson test --setup luacall)
  print("differential: runs both paths itself, in the default setup")
  os.exit(77)
end

-- The log of a replay on one path: its lines (addresses left out), the
-- stepped ticks it counted.
local function replay(ffi, seed, mode)
  local cmd = ("BONSAI_FFI=%d %s %s/tests/fuzz/fuzz.lua --replay %d "
               .. "--steps %d --log %s 2>&1"):format(ffi, lua, root, seed,
                                                     steps, mode)
  local p = assert(io.popen(cmd))
  local lines, stepped = {}, nil
  for l in p:lines() do
    local n = l:match("^stepped ticks: (%d+)$")
    if n then
      stepped = tonumber(n)
    else
      lines[#lines + 1] = (l:gsub("0x%x+", "0x"))
    end
  end
  p:close()
  return lines, stepped
end

local MODES = { "--stepped", "--stepped --events", "", "--events" }
local failed, compared, nstepped = 0, 0, 0
for seed = first, last do
  local mode = MODES[(seed - 1) % #MODES + 1]
  local a, sa = replay(0, seed, mode)
  local b, sb = replay(1, seed, mode)
  local bad
  if a[#a] ~= "seed " .. seed .. ": ok" then
    bad = "the lua_call path's run failed: " .. tostring(a[#a])
  elseif b[#b] ~= "seed " .. seed .. ": ok" then
    bad = "the LuaJIT path's run failed: " .. tostring(b[#b])
  elseif sa ~= 0 then
    bad = "BONSAI_FFI=0 stepped " .. tostring(sa) .. " ticks"
  elseif mode:find("stepped", 1, true) and not (sb and sb > 0) then
    bad = "a world for the LuaJIT path was not stepped"
  else
    for i = 1, math.max(#a, #b) do
      if a[i] ~= b[i] then
        bad = ("line %d differs:\n    lua_call: %s\n    LuaJIT:   %s")
          :format(i, tostring(a[i]), tostring(b[i]))
        break
      end
    end
  end
  compared = compared + #a
  nstepped = nstepped + (sb or 0)
  if bad then
    failed = failed + 1
    print(("FAIL seed %d (%s): %s\n  replay: BONSAI_FFI=0|1 %s "
           .. "tests/fuzz/fuzz.lua --replay %d --steps %d --log %s")
      :format(seed, mode, bad, lua, seed, steps, mode))
  end
end
print(("differential: %d seeds x %d steps, %d log lines compared, %d ticks "
       .. "stepped, %d failed"):format(last - first + 1, steps, compared,
                                       nstepped, failed))
os.exit(failed == 0 and 0 or 1)
