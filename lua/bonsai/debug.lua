-- bonsai.debug: the live debugger behind bt.debug (docs/TRACE_FORMAT.md,
-- "Live"; docs/DEBUGGER.md), made of two halves: bonsai.debug.session
-- (the agents offered, their trace lines, breakpoints, watches, faults,
-- freeze, resume, step and the commands that change them; no HTTP) and
-- bonsai.debug.server (the viewer's files, the event stream and the
-- commands' door on bonsai.http, a non-blocking server that refuses other
-- Hosts and Origins and asks for the token printed with the page's URL;
-- it knows nothing of trees). bt.debug.poll(), called once a frame, does
-- what the sockets allow and returns. What a page may ask is bounded
-- (watches, breakpoints) and so is what the game pays for it after each
-- tick (docs/DEBUGGER.md, "Security").

local session = require "bonsai.debug.session"
local webserver = require "bonsai.debug.server"

local M = {}

-- Limits (read at each use, so a test may lower them).
M.MAX_WATCHES = 4096     -- watches at once, every agent's together
M.MAX_WATCHES_KEY = 32   -- watches of one blackboard key
M.MAX_BREAKPOINTS = 256  -- breakpoint rules at once
M.MAX_FILE = 4 * 1024 * 1024 -- bytes of one of the viewer's files
M.MAX_TRACE = 2 ^ 32     -- bytes of a trace file served (bt.debug.serve{
                         -- file = }: the game's own, read whole)
M.FEED = 256 * 1024      -- bytes of a trace file's stream queued at once
M.PROFILE = 1            -- seconds between profile lines (profiled trees
                         -- whose counts changed)
M.SWEEP = 1              -- seconds between looks for agents collected

-- The viewer's files: installed beside this module (bonsai/viewer/, by
-- LuaRocks and meson install), else the checkout's viewer/ next to lua/.
-- (Only whether index.html opens is asked: the files are read, with
-- bt.readfile's checks, when served.)
local function viewerdir()
  local src = debug.getinfo(1, "S").source
  local here = src:match("^@(.*)[/\\][^/\\]*$") or "."
  local f = io.open(here .. "/viewer/index.html", "rb")
  if f then
    f:close()
    return here .. "/viewer"
  end
  local dir = src:match("^@(.*)[/\\]lua[/\\]bonsai[/\\][^/\\]*$")
  return (dir or ".") .. "/viewer"
end
M.viewerdir = viewerdir

function M.new(bt)
  local D = {}
  local S = session.new(bt, M)
  require("bonsai.debug.edit").add(S:extension(), bt) -- the page's editing
                                                      -- commands
  local server -- the bonsai.debug.server, or nil

  -- bt.debug.add(agent [, { record = false }]): offers an agent to the
  -- page, streaming it unless record is false; returns its id.
  function D.add(agent, o) return S:add(agent, o) end
  -- bt.debug.remove(agent): no longer offered or streamed.
  function D.remove(agent) return S:remove(agent) end
  -- bt.debug.command(cmd): the page's commands, from Lua: true (or what
  -- the command answers), or nil and why; never raises.
  function D.command(cmd) return S:command(cmd) end

  -- bt.debug.serve{ port = P, host = "127.0.0.1", allow_remote = false,
  -- hosts = { names }, token = T, root = viewer dir, agents = { ... },
  -- file = trace path }: starts the server; returns the port it listens on
  -- and the page's URL, which carries the token.
  function D.serve(o)
    o = o or {}
    assert(not server, "bt.debug: already serving")
    local ok, s = pcall(webserver.new, { session = S, limits = M,
      read = bt.readfile, host = o.host, port = o.port, token = o.token,
      hosts = o.hosts, allow_remote = o.allow_remote, root = o.root or viewerdir(),
      file = o.file })
    if not ok then error("bt.debug: " .. tostring(s), 2) end
    server = s
    for _, a in ipairs(o.agents or {}) do D.add(a) end
    D.port, D.url = server.port, server.url
    return D.port, D.url
  end

  -- bt.debug.poll(): does what the sockets allow now; never blocks.
  -- Returns the number of connected clients.
  function D.poll()
    if not server then return 0 end
    S:poll()
    server:poll()
    return (server:clients())
  end

  -- bt.debug.close(): closes every connection and the server; agents are
  -- no longer streamed and frozen ones are released.
  function D.close()
    if server then server:close() end
    server = nil
    S:close()
    D.port, D.url = nil, nil
  end

  -- bt.debug.clients(): the connections open, and how many of them are
  -- pages that follow the stream (/events)
  function D.clients()
    if not server then return 0, 0 end
    return server:clients()
  end

  return D
end

return M
