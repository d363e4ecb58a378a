-- view.lua: the one view of the cluster's world, served by the driver
-- (cluster.lua --view PORT) on 127.0.0.1: GET / is world.html, GET
-- /world?follow=ID the zone map (zones and their owners), the population
-- of every replica set (its master's census: NPCs per zone, travelling,
-- leaving, tick times, hand-overs; its master, term and replicas) and
-- where NPC ID is now, asked of every master (so the page follows it
-- across a hand-over). Without follow, the NPC of the first set nearest
-- to crossing out of its zones is proposed. One request per connection,
-- bounded in size and time.
local socket = require "socket" -- Tarantool's, fiber-friendly
local json = require "json"

local M = {}

-- C: the coordinator (its sets, map and calls); page: world.html's path.
-- Returns the server (its :name().port is the port, chosen when 0).
function M.serve(port, C, page)
  local function world(follow)
    local out = { zones = {}, sets = {} }
    for z, zone in ipairs(C.map.zones) do
      out.zones[z] = { lo = zone.lo, hi = zone.hi, owner = zone.owner }
    end
    local names = {}
    for _, name in ipairs(C.order) do
      local set = C.sets[name]
      if set.in_map then
        names[#names + 1] = name
        local ok, c = pcall(C.call, set.master, "census", {}, 2)
        local replicas = {}
        for _, r in ipairs(set.replicas) do
          replicas[#replicas + 1] = r.name .. (r.member and "" or " (catching up)")
        end
        local entry = ok and c or { down = true }
        entry.set, entry.master, entry.term, entry.replicas, entry.state =
          name, set.master.name, set.term, replicas, set.state
        out.sets[#out.sets + 1] = entry
        if ok and follow == nil and #names == 1 then follow = c.next_out end
      end
    end
    if follow then
      out.follow = { id = follow }
      for _, name in ipairs(names) do
        local ok, n = pcall(C.call, C.sets[name].master, "npcs_here", { follow }, 2)
        if ok and n[1] then
          out.follow = n[1]
          out.follow.on = name
          if n[1].state == "active" then break end -- (a leaving row may linger)
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

  local server = socket.tcp_server("127.0.0.1", port, function(s)
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
  if not server then error(("the view cannot listen on 127.0.0.1:%d"):format(port)) end
  return server
end

return M
