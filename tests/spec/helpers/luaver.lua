-- helpers/luaver: what the Lua running the specs has, for the specs that
-- run on every Lua (5.1, LuaJIT, 5.3, 5.4). Specs that need 5.4's syntax
-- are files of their own (*_54_spec.lua, run in builds for 5.4).
local M = {}

-- math.type, and before 5.3 (no integer subtype) the type a whole number
-- has when it crosses into 5.4 (as the binding reads numbers).
function M.mathtype(v)
  if math.type then return math.type(v) end
  if type(v) ~= "number" then return nil end
  return v == math.floor(v) and "integer" or "float"
end

-- Whether pairs() honours __pairs (5.2+; not LuaJIT's default build).
M.has_pairs_mm = false
for _ in pairs(setmetatable({}, { __pairs = function()
  M.has_pairs_mm = true
  return function() end
end })) do end

-- pairs(bb) where __pairs works, else bb:pairs() (the same iteration).
function M.bbpairs(bb)
  if M.has_pairs_mm then return pairs(bb) end
  return bb:pairs()
end

M.unpack = table.unpack or unpack

-- Whether tables run a __gc metamethod (5.2+).
do
  local ran = false
  setmetatable({}, { __gc = function() ran = true end })
  collectgarbage()
  collectgarbage()
  M.table_gc = ran
end

-- Whether weak-keyed tables are ephemerons (5.2+): an entry whose value
-- refers to its key goes with the key.
do
  local t = setmetatable({}, { __mode = "k" })
  do local k = {}; t[k] = { k } end
  collectgarbage()
  collectgarbage()
  M.ephemerons = next(t) == nil
end

-- LuaJIT's compiler keeps its traces on the Lua heap: the specs that count
-- the heap turn it off for the test (M.nojit(finally)).
function M.nojit(finally)
  if not jit then return end
  jit.off()
  jit.flush()
  finally(function() jit.on() end)
end

-- os.execute's success as a boolean (5.1 returns the exit status).
function M.execute(cmd)
  local r = os.execute(cmd)
  return r == true or r == 0
end

-- The interpreter running the specs (meson sets BONSAI_LUA), for the
-- specs that start another process.
M.interpreter = os.getenv("BONSAI_LUA") or "lua5.4"

return M
