-- helpers/story.lua: a test kit scenario (bonsai.test) told tick by tick
-- in the trace helper's words, for the specs that use scenarios: one
-- "STATUS | calls" line per tick, the calls being the stand-ins' enter,
-- tick, exit (with its status) and abort, in order, by the leaf's name:
--
--   assert.same({ "running | enter patrol; tick patrol",
--                 "running | abort patrol; enter combat; tick combat" },
--               story(s))
--
-- and leaf(name), a place for a stand-in in a tree definition: an action
-- of that name that raises if it is ever ticked itself.
local bt = require "bonsai"

local M = {}

function M.story(s)
  local calls = {}
  for _, c in ipairs(s.log) do
    local line = c.what .. " " .. c.path:match "[^/]+$"
    if c.what == "exit" then line = line .. " " .. tostring(c.status) end
    calls[c.tick] = calls[c.tick] or {}
    table.insert(calls[c.tick], line)
  end
  local out = {}
  for n, t in ipairs(s.ticks) do
    out[n] = t.status .. " |" ..
             (calls[n] and " " .. table.concat(calls[n], "; ") or "")
  end
  return out
end

function M.leaf(name)
  return bt.named(name, bt.action(function()
    error(name .. " has no stand-in", 0)
  end))
end

return M
