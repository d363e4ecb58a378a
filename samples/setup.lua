-- setup.lua: what every sample does first, and the helpers their scripts
-- share. Run with the sample's directory (loadfile(...)(dir)): finds bonsai
-- beside the samples (../lua, ../build) unless LUA_PATH or LUA_CPATH say
-- where it is, and the samples themselves, so they can require each other.
local here = ...
local function prepend(field, entry)
  if not package[field]:find(entry, 1, true) then
    package[field] = entry .. ";" .. package[field]
  end
end
if not (os.getenv("LUA_PATH_5_4") or os.getenv("LUA_PATH")) then
  prepend("path", here .. "../lua/?/init.lua")
  prepend("path", here .. "../lua/?.lua")
end
if not (os.getenv("LUA_CPATH_5_4") or os.getenv("LUA_CPATH")) then
  prepend("cpath", here .. "../build/src/?.so")
end
prepend("path", here .. "?.lua")

local M = {}

-- Raises the formatted message unless cond holds (a scripted check).
function M.check(cond, ...)
  if not cond then error(string.format(...), 2) end
end

-- Is stdout a terminal? TERM says there is one; test -t 1 says it is ours.
function M.on_terminal()
  local term = os.getenv("TERM")
  if not term or term == "" or term == "dumb" then return false end
  return os.execute("test -t 1") == true
end

-- A deterministic random generator seeded with seed (a whole number): a
-- 64-bit linear congruential generator (Knuth's MMIX constants) on four
-- 16-bit limbs, so that every Lua (only floats before 5.3) draws the same
-- numbers. Returns random(n) -> 1..n and uniform(lo, hi) -> lo <= x < hi
-- in steps of 1/1024.
function M.generator(seed)
  local A = { 0x7f2d, 0x4c95, 0xf42d, 0x5851 } -- 6364136223846793005
  local C = { 0x814f, 0xf767, 0x7b7e, 0x1405 } -- 1442695040888963407
  local s = { seed % 65536, math.floor(seed / 65536) % 65536, 0, 0 }
  local function random(n)
    local r, carry = {}, 0
    for i = 1, 4 do
      local v = carry + C[i]
      for j = 1, i do v = v + s[j] * A[i - j + 1] end
      r[i] = v % 65536
      carry = math.floor(v / 65536)
    end
    s = r
    return math.floor((r[4] * 65536 + r[3]) / 2) % n + 1 -- seed >> 33
  end
  local function uniform(lo, hi)
    return lo + (random(1024) - 1) / 1024 * (hi - lo)
  end
  return random, uniform
end

return M
