-- helpers/lua_calls: lua_calls(bt, tree, hp) counts the Lua functions
-- called in 100 ticks of an agent of tree (blackboard key hp = hp, or 10),
-- the collector stopped (no finalizer counted): what a tree's conditions
-- cost in Lua calls, for the specs that show one is a check in C. Not
-- counted: busted's own functions (under LuaJIT its insulated
-- environment's __index is called a varying number of times, 1 to 10,
-- around the hook) and the LuaJIT path's loop and dispatch, which call the
-- leaves (not a call of the tree's).
local sethook, getinfo = debug.sethook, debug.getinfo

local function ours(source)
  return source == "=bonsai dispatch" or
         source:find("bonsai/luajit.lua", 1, true) ~= nil or
         source:find("/busted/", 1, true) ~= nil
end

return function(bt, tree, hp)
  local a = bt.agent(tree)
  a.bb.hp = hp or 10
  local n = 0
  collectgarbage()
  collectgarbage("stop")
  sethook(function()
    local f = getinfo(2, "S")
    if f.what == "Lua" and not ours(f.source) then n = n + 1 end
  end, "c")
  for _ = 1, 100 do a:tick(1) end
  sethook()
  collectgarbage("restart")
  return n
end
