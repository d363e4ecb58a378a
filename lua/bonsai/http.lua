-- bonsai.http: the small HTTP/1.1 server under the live debugger
-- (bonsai.debug); it knows nothing of trees. A Server object (M.new), all
-- of it non-blocking, on lua-socket: S:poll(), called once a frame,
-- accepts, reads and writes what the sockets allow at once and returns.
-- It runs on the developer's machine, where any web page the developer
-- visits can reach it, so (docs/DEBUGGER.md, "Security"):
-- - a request for another Host than the server's own names (DNS
--   rebinding), or from a page of another Origin (a "simple" cross-origin
--   POST needs no preflight), is refused;
-- - a request carries the server's token, in its query (?token=) or an
--   X-Bonsai-Token header, unless the handler calls its path public; the
--   token is drawn from /dev/urandom and compared in constant time;
-- - each connection is bounded (its request's size and time, the bytes
--   queued for it) and so is the whole: connections (an idle one gives its
--   place to a newcomer), event streams, bytes queued for all streams.

local socket = require "socket"

local M = {}

-- Limits (the server reads them at each use, so a test may lower them).
M.MAX_HEADER = 16 * 1024      -- bytes of request line and headers
M.MAX_BODY = 64 * 1024        -- bytes of a request body
M.REQUEST_TIMEOUT = 10        -- seconds to send a whole request
M.RESPONSE_TIMEOUT = 30       -- seconds to take a whole response
M.MAX_CONNECTIONS = 64        -- connections at once, event streams included
M.MAX_STREAMS = 16            -- event streams at once
M.MAX_QUEUED = 4 * 1024 * 1024       -- bytes queued for one event stream
M.MAX_QUEUED_ALL = 16 * 1024 * 1024  -- bytes queued for all of them
M.ACCEPT_PER_POLL = 64
M.READ_PER_POLL = 64 * 1024
M.PING = 15                   -- seconds between keep-alive comments

local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true, localhost = true }
M.LOOPBACK = LOOPBACK

local STATUS = {
  [200] = "OK", [400] = "Bad Request", [403] = "Forbidden",
  [404] = "Not Found", [405] = "Method Not Allowed",
  [408] = "Request Timeout", [413] = "Payload Too Large",
  [503] = "Service Unavailable",
}

-- Sent with every response: no sniffing, no framing, no referrer (the
-- page's address holds the token), not readable by pages of other origins.
local HEADERS = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff" ..
  "\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n" ..
  "Cross-Origin-Resource-Policy: same-origin\r\n"

-- A token of 128 random bits from the system's random source, as 32 hex
-- digits; nil and a message when there is none.
function M.token()
  local f = io.open("/dev/urandom", "rb")
  local bytes = f and f:read(16)
  if f then f:close() end
  if type(bytes) ~= "string" or #bytes ~= 16 then
    return nil, "no /dev/urandom to draw a token from"
  end
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- Whether the string a equals the token b, in a time that depends on b's
-- length only.
local function same(a, b)
  if type(a) ~= "string" or #a ~= #b then return false end
  local diff = 0
  for i = 1, #b do diff = diff + math.abs(a:byte(i) - b:byte(i)) end
  return diff == 0
end
M.same = same

local function unescape(s)
  return (s:gsub("+", " "):gsub("%%(%x%x)", function(h)
    return string.char(tonumber(h, 16))
  end))
end

-- The query of a request target as a table (the first of repeated names).
local function query(q)
  local t = {}
  for k, v in (q or ""):gmatch("([^&=]+)=?([^&]*)") do
    k = unescape(k)
    if t[k] == nil then t[k] = unescape(v) end
  end
  return t
end

-- The Host values and origins the server answers: its loopback names with
-- its port, the host it listens on when it is not a wildcard, and the
-- names the game gave.
local function names(host, port, extra)
  local list = { "127.0.0.1", "localhost", "[::1]" }
  if not LOOPBACK[host] and host ~= "0.0.0.0" and host ~= "::" and
     host ~= "*" then
    list[#list + 1] = host:find(":") and "[" .. host .. "]" or host
  end
  for _, n in ipairs(extra or {}) do list[#list + 1] = n end
  local hosts, origins = {}, {}
  for _, n in ipairs(list) do
    n = n:lower()
    hosts[n .. ":" .. port] = true
    origins["http://" .. n .. ":" .. port] = true
    if port == 80 then
      hosts[n], origins["http://" .. n] = true, true
    end
  end
  return hosts, origins
end

-- The request line and headers of a request (the text before its blank
-- line): its method, target and headers (lower-case name -> value), or
-- nil, the status to refuse it with and why.
local function parsehead(text)
  local method, target = text:match("^(%u+) (/%S*) HTTP/1%.[01]\r?\n?")
  if not method then return nil, 400, "bad request" end
  local headers = {}
  for name, value in text:gmatch("\n([%w%-]+):[ \t]*([^\r\n]*)") do
    name = name:lower()
    if headers[name] and (name == "host" or name == "origin" or
                          name == "content-length") then
      return nil, 400, "repeated " .. name .. " header"
    end
    headers[name] = value:gsub("[ \t]+$", "")
  end
  if headers["transfer-encoding"] then
    return nil, 400, "chunked bodies are not taken"
  end
  return method, target, headers
end

local function now() return socket.gettime() end

-- A connection: its socket, the bytes received, the strings queued (out,
-- first..tail; live: those that are live events, livesize their bytes),
-- the request (req, length of its body, done once whole), and for an
-- event stream: stream, ping (when last pinged), feed.
local function connection(sock)
  return { sock = sock, inbuf = "", out = {}, first = 1, tail = 0,
           live = {}, livesize = 0, sent = 0, length = 0, since = now() }
end

-- Queues s for c; live (an event of the stream as the game makes it, not
-- an answer nor a new page's catch-up) counts against the bounds.
local function push(c, s, live)
  if c.closed then return end
  c.tail = c.tail + 1
  c.out[c.tail] = s
  if live then
    c.live[c.tail] = true
    c.livesize = c.livesize + #s
  end
end

local Server = {}
Server.__index = Server

-- M.new{ host =, port =, token =, hosts = { extra names }, handle =
-- function(server, c, req), public = function(req) }: a server listening
-- (or an error raised with the reason). handle is called with each
-- request that passed the checks: req = { method, path, query = {...},
-- headers = { lower-case name = value }, body }; it answers with
-- server:respond or server:stream.
function M.new(o)
  local S = setmetatable({
    conns = {},   -- the connections, oldest first
    streams = 0,  -- how many of them are event streams
    handle = o.handle, public = o.public,
  }, Server)
  S:listen(o.host or "127.0.0.1", o.port or 0, S:checktoken(o.token))
  S.hosts, S.origins = names(S.host, S.port, o.hosts)
  return S
end

-- The token given, or one drawn; an error when it will not do.
function Server:checktoken(token)
  if not token then
    local err
    token, err = M.token()
    if not token then
      error(err .. " (give the server a token of your own: token = ...)", 0)
    end
  end
  if type(token) ~= "string" or #token < 16 or token:find("[^%w%-_.~]") then
    error("the token must be a string of at least 16 letters, digits or " ..
          "-_.~", 0)
  end
  return token
end

-- Listens on host:port (0: any free port); sets S.port, S.token, S.url.
function Server:listen(host, port, token)
  local s = assert(socket.tcp())
  s:setoption("reuseaddr", true)
  local ok, err = s:bind(host == "localhost" and "127.0.0.1" or host, port)
  if not ok then
    s:close()
    error("cannot listen on " .. host .. ":" .. tostring(port) .. ": " ..
          tostring(err), 0)
  end
  assert(s:listen(128))
  s:settimeout(0)
  self.listener, self.host, self.token = s, host, token
  local _, bound = s:getsockname()
  self.port = tonumber(bound)
  local shown = (host == "0.0.0.0" or host == "::" or host == "*") and
                "127.0.0.1" or host
  self.url = ("http://%s:%d/"):format(shown:find(":") and "[" .. shown .. "]"
                                      or shown, self.port)
end

function Server:drop(c)
  if c.closed then return end
  c.closed = true
  if c.stream then self.streams = self.streams - 1 end
  c.sock:close()
end

-- The bounds of event streams, after live events were queued: a stream
-- whose queue of live events passed its bound (more than the one just
-- queued), then the stream with the most queued while all of them pass
-- theirs together, is dropped. The page's browser connects again and gets
-- a fresh snapshot: a page that cannot keep up sees a jump, the game
-- never waits nor grows.
local function bound(S, c, s)
  if c.livesize > M.MAX_QUEUED and c.livesize > #s then S:drop(c) end
end
local function boundall(S)
  local all, worst = 0, nil
  for _, c in ipairs(S.conns) do
    if c.stream and not c.closed then
      all = all + c.livesize
      if not worst or c.livesize > worst.livesize then worst = c end
    end
  end
  if all > M.MAX_QUEUED_ALL then S:drop(worst) end
end

-- S:respond(c, code, content type, body [, extra header lines]): the
-- answer, after which the connection closes.
function Server:respond(c, code, ctype, body, extra)
  push(c, ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n" ..
           "%sConnection: close\r\n%s\r\n")
          :format(code, STATUS[code] or "Error", ctype, #body, HEADERS,
                  extra or ""))
  if c.method ~= "HEAD" then push(c, body) end
  c.closing, c.answered = true, now()
end

-- A refusal, as JSON ({"ok":false,"error":...}) for the page to show.
function Server:refuse(c, code, why)
  self:respond(c, code, "application/json",
               ('{"ok":false,"error":"%s"}'):format(why))
end

-- S:stream(c [, feed]): the connection becomes an event stream
-- (text/event-stream), or is answered 503 when there are too many; feed,
-- if given, is called for the next part of the stream whenever its queue
-- is empty (nil: nothing more). Returns true when streaming.
function Server:stream(c, feed)
  if self.streams >= M.MAX_STREAMS then
    self:refuse(c, 503, ("too many event streams (%d): close a page")
                        :format(M.MAX_STREAMS))
    return false
  end
  push(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" ..
          HEADERS .. "Connection: keep-alive\r\n\r\n")
  if c.method == "HEAD" then
    c.closing, c.answered = true, now()
    return false
  end
  c.stream, c.ping, c.feed = true, now(), feed
  self.streams = self.streams + 1
  return true
end

-- S:event(c, frame): queues an event ("data: ...\n\n") for one stream:
-- what a new page catches up with, not counted against the bounds.
function Server:event(c, frame)
  if c.stream then push(c, frame) end
end

-- S:broadcast(frame): queues the same live event (one string) for every
-- stream.
function Server:broadcast(frame)
  for _, c in ipairs(self.conns) do
    if c.stream and not c.closed then
      push(c, frame, true)
      bound(self, c, frame)
    end
  end
  boundall(self)
end

-- Whether a request may be handled: its Host is one of the server's, its
-- Origin (if any: browsers send it with every POST and every cross-origin
-- fetch) the server's own, and it carries the token unless its path is
-- public. Refuses it otherwise.
function Server:allowed(c, req)
  local host = req.headers.host
  if not host or not self.hosts[host:lower()] then
    self:refuse(c, 403, "unknown Host: this server answers only for its " ..
                        "own address")
    return false
  end
  local origin = req.headers.origin
  if origin and not self.origins[origin:lower()] then
    self:refuse(c, 403, "requests from pages of other origins are refused")
    return false
  end
  local given = req.query.token or req.headers["x-bonsai-token"]
  if not same(given, self.token) and
     not (self.public and self.public(req)) then
    self:refuse(c, 403, "this needs the token printed with the page's URL " ..
                        "(open that URL)")
    return false
  end
  return true
end

-- Reads the request line and headers once c has received them: c.req and
-- c.length, or a refusal. Returns whether c has its head.
function Server:head(c)
  local head = c.inbuf:find("\r\n\r\n", 1, true)
  if not head then
    if #c.inbuf > M.MAX_HEADER then self:refuse(c, 413, "request too large") end
    return false
  end
  if head > M.MAX_HEADER then return self:refuse(c, 413, "request too large") end
  local text = c.inbuf:sub(1, head - 1)
  c.inbuf = c.inbuf:sub(head + 4)
  local method, target, headers = parsehead(text)
  if not method then return self:refuse(c, target, headers) end
  local len = headers["content-length"] or "0"
  if not len:match("^%d+$") then return self:refuse(c, 400, "bad length") end
  c.length = tonumber(len)
  if c.length > M.MAX_BODY then return self:refuse(c, 413, "request too large") end
  local path, q = target:match("^([^?#]*)%??([^#]*)")
  c.method = method
  c.req = { method = method, path = path, query = query(q),
            headers = headers }
  return true
end

-- Parses what c has received; handles a complete request.
function Server:parse(c)
  if not c.req and not self:head(c) then return end
  if #c.inbuf < c.length then return end
  local req = c.req
  req.body = c.inbuf:sub(1, c.length)
  c.inbuf, c.done = "", true
  if self:allowed(c, req) then self.handle(self, c, req) end
end

-- Reads what has arrived, without waiting.
function Server:receive(c)
  local data, err, partial = c.sock:receive(M.READ_PER_POLL)
  data = data or partial
  if data and #data > 0 and not c.done then
    c.inbuf = c.inbuf .. data
    self:parse(c)
  end -- (a stream's further bytes are ignored)
  if err == "closed" then self:drop(c) end
end

-- Writes what the socket takes now.
function Server:send(c)
  while c.first <= c.tail or c.feed do
    if c.first > c.tail then -- the next part of a fed stream
      local chunk = c.feed()
      if not chunk then
        c.feed = nil
        break
      end
      push(c, chunk)
    end
    local s = c.out[c.first]
    local last, err, part = c.sock:send(s, c.sent + 1)
    last = last or part
    if last and last > c.sent then c.sent = last end
    if c.sent < #s then
      if err == "closed" then self:drop(c) end
      return
    end
    if c.live[c.first] then
      c.live[c.first] = nil
      c.livesize = c.livesize - #s
    end
    c.out[c.first] = nil
    c.first = c.first + 1
    c.sent = 0
  end
  if c.closing then self:drop(c) end
end

-- A newcomer when every place is taken: the oldest connection that has
-- not finished sending its request gives its place (else the oldest
-- answer still being taken), so idle connections never keep the page out;
-- event streams keep theirs (they are bounded apart).
function Server:makeroom()
  local waiting, answering
  for _, c in ipairs(self.conns) do
    if not c.closed and not c.stream then
      if not c.done then waiting = waiting or c
      else answering = answering or c end
    end
  end
  local victim = waiting or answering
  if victim then self:drop(victim) end
  return victim ~= nil
end

function Server:accept()
  for _ = 1, M.ACCEPT_PER_POLL do
    local s = self.listener:accept()
    if not s then break end
    if self:clients() >= M.MAX_CONNECTIONS and not self:makeroom() then
      s:close()
    else
      s:settimeout(0)
      s:setoption("tcp-nodelay", true)
      self.conns[#self.conns + 1] = connection(s)
    end
  end
end

-- A connection's turn in a poll at time t: what it sent, its deadlines, a
-- stream's keep-alive, what it is owed.
function Server:serve(c, t)
  if not c.closed and not c.closing then self:receive(c) end
  if not c.closed and not c.stream then
    if not c.done and not c.closing and t - c.since > M.REQUEST_TIMEOUT then
      self:refuse(c, 408, "request timeout")
    elseif c.answered and t - c.answered > M.RESPONSE_TIMEOUT then
      self:drop(c)
    end
  end
  if not c.closed and c.stream and t - c.ping > M.PING then
    push(c, ": ping\n\n")
    c.ping = t
  end
  if not c.closed then self:send(c) end
end

-- S:poll(): does what the sockets allow now; never blocks.
function Server:poll()
  if not self.listener then return end
  self:accept()
  local t, conns = now(), self.conns
  for _, c in ipairs(conns) do self:serve(c, t) end
  local n = 0 -- (the closed ones go)
  for i = 1, #conns do
    if not conns[i].closed then
      n = n + 1
      conns[n] = conns[i]
    end
  end
  for i = #conns, n + 1, -1 do conns[i] = nil end
end

-- S:clients(): the connections open, and how many are event streams.
function Server:clients()
  local open = 0
  for _, c in ipairs(self.conns) do
    if not c.closed then open = open + 1 end
  end
  return open, self.streams
end

-- S:close(): closes every connection and the listening socket.
function Server:close()
  for _, c in ipairs(self.conns) do self:drop(c) end
  self.conns = {}
  if self.listener then self.listener:close() end
  self.listener = nil
end

return M
