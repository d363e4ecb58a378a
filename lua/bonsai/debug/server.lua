-- bonsai.debug.server: the live debugger's web side (docs/DEBUGGER.md); it
-- knows nothing of trees. On a bonsai.http server (Host, Origin and token
-- checks, limits) it serves the viewer's files, the event stream (/events:
-- a session's lines, or the lines of a trace file), the commands a page
-- posts (/command: JSON objects handed to the session) and /live.

local cjson = require "cjson.safe"
local http = require "bonsai.http"
local paths = require "bonsai.paths"

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

-- new{ session = S, limits = L, host, port, token, hosts, allow_remote,
-- root = viewer dir, file = trace path }: a server listening, or an error
-- raised with a message (level 2 of the caller's caller). The session
-- gives S.command(table) -> result | nil, why and S.replay(send); the
-- server sets S.out. With file, the stream is that file's lines and
-- commands are refused.
function M.new(o)
  local limits, session = o.limits, o.session
  local host = o.host or "127.0.0.1"
  if not http.LOOPBACK[host] and not o.allow_remote then
    error(("refusing to listen on %s (only the loopback interface " ..
           "unless allow_remote = true)"):format(host), 0)
  end
  if o.hosts ~= nil and type(o.hosts) ~= "table" then
    error("hosts must be a list of host names", 0)
  end
  local root = o.root
  local file, tracename -- file mode: every line of a trace file
  if o.file then
    local text, err = paths.read(o.file, limits.MAX_TRACE)
    if not text then error(err, 0) end
    file = {}
    for l in text:gmatch("[^\n]+") do file[#file + 1] = l end
    tracename = o.file:match("[^/\\]+$"):gsub("[^%w%._%-]", "_")
  end
  local server

  local function json(c, code, t)
    server.respond(c, code, TYPES.json, cjson.encode(t))
  end

  -- The event stream of a trace file: fed as the page reads, limits.FEED
  -- bytes at a time.
  local function feeder()
    local at = 0
    return function()
      local parts, n = {}, 0
      while at < #file and n < limits.FEED do
        at = at + 1
        parts[#parts + 1] = frame(file[at])
        n = n + #parts[#parts]
      end
      return n > 0 and table.concat(parts) or nil
    end
  end

  -- What is public: the viewer's files (code anyone may read). Everything
  -- that shows or changes the game (the stream, commands, /live, a trace
  -- file) needs the token.
  local PRIVATE = { ["/events"] = true, ["/command"] = true, ["/live"] = true }
  local function public(req)
    return (req.method == "GET" or req.method == "HEAD") and
           not PRIVATE[req.path] and
           not (tracename and req.path == "/" .. tracename)
  end

  local function handle(_, c, req)
    local method, path = req.method, req.path
    if path == "/events" then
      if method ~= "GET" and method ~= "HEAD" then
        return json(c, 405, { ok = false, error = "GET expected" })
      end
      if file then return server.stream(c, feeder()) end
      if not server.stream(c) then return end
      session.replay(function(line) server.event(c, frame(line)) end)
      return
    end
    if path == "/command" then
      if method ~= "POST" then
        return json(c, 405, { ok = false, error = "POST expected" })
      end
      if file then
        return json(c, 200, { ok = false, error = "not a live game" })
      end
      local r, err = session.command(cjson.decode(req.body))
      if r == nil then
        return json(c, 200, { ok = false, error = tostring(err) })
      end
      -- (a command that answers more than yes says it in result)
      return json(c, 200, { ok = true, result = r ~= true and r or nil })
    end
    if method ~= "GET" and method ~= "HEAD" then
      return json(c, 405, { ok = false, error = "method not allowed" })
    end
    if path == "/live" then
      return json(c, 200, { live = file == nil })
    end
    if file and path == "/" .. tracename then
      return server.respond(c, 200, TYPES.jsonl,
                            table.concat(file, "\n") .. "\n")
    end
    local name = filepath(root, path)
    if not name then
      return server.respond(c, 403, TYPES.txt, "forbidden\n")
    end
    local data = paths.read(name, limits.MAX_FILE)
    if not data then return server.respond(c, 404, TYPES.txt, "not found\n") end
    server.respond(c, 200, TYPES[name:match("%.(%w+)$") or ""] or
                           "application/octet-stream", data)
  end

  server = http.new { host = host, port = o.port, token = o.token,
    hosts = o.hosts, handle = handle, public = public }
  if session then
    session.out = function(line) server.broadcast(frame(line)) end
  end
  local W = { port = server.port, file = file ~= nil }
  W.url = server.url .. "?" ..
          (tracename and "trace=" .. tracename .. "&" or "") ..
          "token=" .. server.token
  W.poll, W.clients = server.poll, server.clients
  function W.close()
    if session then session.out = nil end
    server.close()
  end
  return W
end

return M
