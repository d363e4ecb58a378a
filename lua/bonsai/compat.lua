-- bonsai.compat: the few things that differ between the Luas Bonsai runs
-- on (5.1, LuaJIT 2.1, 5.3, 5.4), for the modules of lua/bonsai/, which
-- are written in the language all of them share. Before 5.3 every number
-- is a float: there a number is an integer when it is whole and fits 64
-- bits, as the C binding reads it (src/lua/lcompat.h).
local M = {}

M.unpack = table.unpack or unpack

local floor = math.floor

if math.type then
  function M.isinteger(v) return math.type(v) == "integer" end
  M.tointeger = math.tointeger
else
  local function isinteger(v)
    return type(v) == "number" and v == floor(v) and v >= -2^63 and v < 2^63
  end
  M.isinteger = isinteger
  -- math.tointeger of 5.4: the integer a number or numeric string is, or nil
  function M.tointeger(v)
    if type(v) == "string" then v = tonumber(v) end
    if isinteger(v) then return v end
    return nil
  end
end

-- load(text, chunkname, mode, env) of 5.2+ (LuaJIT has it too); on 5.1,
-- a text chunk through loadstring and setfenv.
if setfenv and not pcall(load, "return") then
  function M.load(text, name, mode, env)
    if mode == "t" and text:byte(1) == 27 then
      return nil, "attempt to load a binary chunk (mode is 't')"
    end
    local f, err = loadstring(text, name)
    if f and env then setfenv(f, env) end
    return f, err
  end
else
  M.load = load
end

-- require "bonsai.core", saying what is wrong when the one found was built
-- for another Lua: the dynamic linker refuses it (a function of that Lua's
-- C API is not in this one), never loads it half-way.
function M.core()
  local ok, core = pcall(require, "bonsai.core")
  if ok then return core end
  local msg = tostring(core)
  local sym = msg:match("undefined symbol: (luaL?_[%w_]+)")
  if not sym then error(core, 0) end
  error(("%s was built for another Lua than this %s (it needs %s, which "
         .. "this Lua does not have): build Bonsai for this Lua (meson setup "
         .. "-Dlua_pkg=NAME, luarocks --lua-version V make)"):format(
        msg:match("from file '([^']+)'") or "bonsai.core",
        jit and jit.version or _VERSION, sym), 0)
end

return M
