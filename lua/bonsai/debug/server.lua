-- bonsai.debug.server: the live debugger's web side (docs/DEBUGGER.md); it
-- knows nothing of trees. On a bonsai.http server (Host, Origin and token
-- checks, limits) it serves the viewer's files, the event stream (/events:
-- a session's lines, or the lines of a trace file), the commands a page
-- posts (/command: JSON objects handed to the session) and /live.

local cjson = require "cjson.safe"
local http = require "bonsai.http"

local M = {}

local TYPES = {
  html = "text/html; charset=utf-8", js = "text/javascript; charset=utf-8",
  css = "text/css; charset=utf-8", json = "application/json",
  jsonl = "application/x-ndjson", svg = "image/svg+xml", png = "image/png",
  ico = "image/x-icon", txt = "text/plain; charset=utf-8",
  map = "application/json",
}

-- A request path as a file under root, or nil when it is not a plain
-- relative path (no "..", no hidden names, no backslashes or NULs).
local function filepath(root, path)
  path = path:gsub("%%(%x%x)", function(h)
    return string.char(tonumber(h, 16))
  end)
  if path == "/" then path = "/index.html" end
  if not path:match("^/[%w%._%-/]+$") or path:find("//", 1, true) then
    return nil
  end
  for part in path:gmatch("[^/]+") do
    if part:sub(1, 1) == "." then return nil end -- "..", ".git", ...
  end
  return root .. path
end

-- An event of the stream.
local function frame(line) return "data: " .. line .. "\n\n" end

-- The paths that need the token besides a trace file's: everything that
-- shows or changes the game. The viewer's files are public (code anyone
-- may read).
local PRIVATE = { ["/events"] = true, ["/command"] = true, ["/live"] = true }

local Server = {}
Server.__index = Server

-- Refuses what new is given but cannot serve, with a message.
local function check(o)
  local host = o.host or "127.0.0.1"
  if not http.LOOPBACK[host] and not o.allow_remote then
    error(("refusing to listen on %s (only the loopback interface " ..
           "unless allow_remote = true)"):format(host), 0)
  end
  if o.hosts ~= nil and type(o.hosts) ~= "table" then
    error("hosts must be a list of host names", 0)
  end
end

-- The lines of a trace file (file mode) and its name in the page's URL.
local function tracefile(path, read, max)
  local text, err = read(path, max)
  if not text then error(err, 0) end
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines, (path:match("[^/\\]+$"):gsub("[^%w%._%-]", "_"))
end

-- new{ session = S, limits = L, read = bt.readfile, host, port, token,
-- hosts, allow_remote, root = viewer dir, file = trace path }: a server
-- listening, or an error raised with a message. The session gives
-- S:command(table) -> result | nil, why and S:replay(send); the server
-- sets S.out. With file, the stream is that file's lines and commands are
-- refused.
function M.new(o)
  check(o)
  local W = setmetatable({ session = o.session, limits = o.limits,
                           read = o.read, root = o.root }, Server)
  if o.file then
    W.lines, W.tracename = tracefile(o.file, o.read, o.limits.MAX_TRACE)
  end
  W.http = http.new { host = o.host or "127.0.0.1", port = o.port,
    token = o.token, hosts = o.hosts,
    handle = function(_, c, req) W:handle(c, req) end,
    public = function(req) return W:public(req) end }
  if W.session then
    W.session.out = function(line) W.http:broadcast(frame(line)) end
  end
  W.port = W.http.port
  W.url = W.http.url .. "?" ..
          (W.tracename and "trace=" .. W.tracename .. "&" or "") ..
          "token=" .. W.http.token
  return W
end

-- Whether a request needs no token: a GET of the viewer's files.
function Server:public(req)
  return (req.method == "GET" or req.method == "HEAD") and
         not PRIVATE[req.path] and
         not (self.tracename and req.path == "/" .. self.tracename)
end

function Server:json(c, code, t)
  self.http:respond(c, code, TYPES.json, cjson.encode(t))
end

-- The event stream of a trace file: fed as the page reads, limits.FEED
-- bytes at a time.
function Server:feeder()
  local at, lines, limits = 0, self.lines, self.limits
  return function()
    local parts, n = {}, 0
    while at < #lines and n < limits.FEED do
      at = at + 1
      parts[#parts + 1] = frame(lines[at])
      n = n + #parts[#parts]
    end
    return n > 0 and table.concat(parts) or nil
  end
end

-- /events: the trace file's lines, or the session's: what a new page must
-- see, then the lines as the game makes them.
function Server:events(c, req)
  if req.method ~= "GET" and req.method ~= "HEAD" then
    return self:json(c, 405, { ok = false, error = "GET expected" })
  end
  if self.lines then return self.http:stream(c, self:feeder()) end
  if not self.http:stream(c) then return end
  self.session:replay(function(line) self.http:event(c, frame(line)) end)
end

-- /command: a JSON object for the session.
function Server:command(c, req)
  if req.method ~= "POST" then
    return self:json(c, 405, { ok = false, error = "POST expected" })
  end
  if self.lines then
    return self:json(c, 200, { ok = false, error = "not a live game" })
  end
  local r, err = self.session:command(cjson.decode(req.body))
  if r == nil then
    return self:json(c, 200, { ok = false, error = tostring(err) })
  end
  -- (a command that answers more than yes says it in result)
  return self:json(c, 200, { ok = true, result = r ~= true and r or nil })
end

-- A file: the trace file by its name, else one of the viewer's.
function Server:static(c, req)
  local path = req.path
  if self.lines and path == "/" .. self.tracename then
    return self.http:respond(c, 200, TYPES.jsonl,
                             table.concat(self.lines, "\n") .. "\n")
  end
  local name = filepath(self.root, path)
  if not name then
    return self.http:respond(c, 403, TYPES.txt, "forbidden\n")
  end
  local data = self.read(name, self.limits.MAX_FILE)
  if not data then
    return self.http:respond(c, 404, TYPES.txt, "not found\n")
  end
  self.http:respond(c, 200, TYPES[name:match("%.(%w+)$") or ""] or
                            "application/octet-stream", data)
end

-- A request that passed bonsai.http's checks.
function Server:handle(c, req)
  if req.path == "/events" then return self:events(c, req) end
  if req.path == "/command" then return self:command(c, req) end
  if req.method ~= "GET" and req.method ~= "HEAD" then
    return self:json(c, 405, { ok = false, error = "method not allowed" })
  end
  if req.path == "/live" then
    return self:json(c, 200, { live = self.lines == nil })
  end
  return self:static(c, req)
end

-- poll(): does what the sockets allow now; never blocks.
function Server:poll() self.http:poll() end

-- clients(): the connections open, and how many are event streams.
function Server:clients() return self.http:clients() end

-- close(): the session's lines go nowhere; every connection closes.
function Server:close()
  if self.session then self.session.out = nil end
  self.http:close()
end

return M
