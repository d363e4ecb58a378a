-- view.lua: the one view of the cluster's world, served by the driver
-- (cluster.lua --view PORT) on 127.0.0.1: GET / is world.html, GET
-- /world?follow=ID the population of every instance (its census: NPCs per
-- zone, travelling, leaving, tick times, hand-overs) and where NPC ID is
-- now, asked of every instance (so the page follows it across a
-- hand-over). Without follow, the NPC of instance a nearest to crossing a
-- border is proposed. One request per connection, bounded in size and
-- time.
local socket = require "socket" -- Tarantool's, fiber-friendly
local json = require "json"

local M = {}

-- census(name) and where(name, id) ask an instance (and raise when it is
-- down); W is the map; page the path of world.html.
function M.serve(port, W, census, where, page)
  local function world(follow)
    local out = { borders = W.BORDERS, instances = {} }
    for i, name in ipairs(W.INSTANCES) do
      local ok, c = pcall(census, name)
      out.instances[i] = ok and c or { name = name, down = true }
      if ok and follow == nil and name == W.INSTANCES[1] then follow = c.next_out end
    end
    if follow then
      out.follow = { id = follow }
      for _, name in ipairs(W.INSTANCES) do
        local ok, n = pcall(where, name, follow)
        if ok and n then
          out.follow = n
          out.follow.on = name
          if n.state == "active" then break end -- (a leaving row may linger)
        end
      end
    end
    return out
  end

  local function respond(s, code, ctype, body)
    s:write(("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
      .. "Cache-Control: no-store\r\nConnection: close\r\n\r\n%s")
      :format(code, code == 200 and "OK" or "Not Found", ctype, #body, body), 2)
  end

  return socket.tcp_server("127.0.0.1", port, function(s)
    local head = s:read({ delimiter = "\r\n\r\n", chunk = 8192 }, 2)
    local path = head and head:match("^GET (/%S*) HTTP/1%.[01]\r\n")
    if path == "/" then
      local f = assert(io.open(page))
      respond(s, 200, "text/html; charset=utf-8", f:read("*a"))
      f:close()
    elseif path and path:match("^/world") then
      local follow = tonumber(path:match("[?&]follow=(%d+)"))
      respond(s, 200, "application/json", json.encode(world(follow)))
    else
      respond(s, 404, "text/plain", "not found\n")
    end -- (the server closes the connection when this returns)
  end)
end

return M
