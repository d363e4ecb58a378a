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

return M
