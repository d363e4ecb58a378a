-- bonsai.luajit: the LuaJIT path (docs/LUA_VERSIONS.md). On LuaJIT with its
-- JIT on and the FFI, bt.tick_all's loop, a:tick and a control node's c:tick
-- are the Lua functions here: they step their agents' ticks through the C
-- core (bonsai.h, "Stepped ticks"; src/lua/lstep.c), called through the FFI,
-- and call the Lua leaves themselves, so that the JIT compiles the loop with
-- the leaves inlined in it; a call from C into Lua would leave compiled code
-- at every leaf. Each leaf call site is monomorphic: a dispatch generated
-- per tree version maps the ticket the core hands out to its own call of
-- the leaf's function. What cannot be stepped (ticks that need abort
-- callbacks, traced hooks, interrupts...) takes the lua_call path, agent by
-- agent; both paths tick the same agents with the same results.
local M = {}

local ok_ffi, ffi = pcall(require, "ffi")

-- Whether this Lua can take the path: LuaJIT, its compiler on, the FFI.
function M.available()
  return ok_ffi and type(jit) == "table" and jit.status() == true
end

local built -- the path, made once: { put = fn, take = fn }
local installed = false

-- The entry points and what they hand out (src/lua/lbonsai.h, lstep.c).
local function declare()
  if pcall(ffi.typeof, "bonsai_stepapi") then return end
  ffi.cdef [[
typedef struct bonsai_stepout {
  double version;
  int32_t args, status, level, node, strict;
} bonsai_stepout;
typedef struct bonsai_stepapi {
  int (*begin)(void *lb, void *state, double dt, int all);
  int (*on)(void *lb, void *state, int level, int r);
  int (*child)(void *lb, void *state, int node, int k);
  double (*time)(void *lb, void *state);
  int (*asleep)(void *lb, void *state, double dt);
} bonsai_stepapi;
]]
end

-- lstep.c's codes
local ASLEEP, CLASSIC, FAILED, SLOW, TICKET = 6, 7, 8, 16, 17
local NAMES = { [0] = "idle", "running", "success", "failure", "aborted",
                "skipped" }

-- The values every part of the path shares (S): bonsai.core's _step (X),
-- the entry points and what they hand out, and the helpers the dispatch
-- and the loops call. Each part reads them into locals of its own, so the
-- functions it makes keep them as constant upvalues (which the JIT folds).
local function bind(core)
  declare()
  local X = core._step
  local api = ffi.cast("bonsai_stepapi *", X.api)
  local S = {
    X = X, CTX = ffi.cast("void *", X.context),
    O = ffi.cast("bonsai_stepout *", X.out),
    begin = api.begin, on = api.on, child = api.child, time = api.time,
    asleep = api.asleep, note = X.note, call = X.call,
    named = X.named, CREFS = X.key, extras = X.extras,
  }
  local O, status, control = S.O, X.status, X.control
  local named, CREFS, extras = S.named, S.CREFS, S.extras
  local rawget, type = rawget, type

  -- An agent is given to the entry points as the userdata at its [1] (the
  -- FFI passes its address), and only when it is an agent's state: its
  -- metatable's mark (getmetatable gives it) is the states' (lstep.c);
  -- anything else takes the lua_call path.
  local MARK = X.mark
  function S.isstate(ud)
    return type(ud) == "userdata" and getmetatable(ud) == MARK
  end

  -- An agent's blackboard, by its state (as a tick fetches it); weak
  -- values too: a weak key keeps its value one collection longer.
  local bbs = setmetatable({}, { __mode = "kv" })
  function S.bbof(ud)
    local bb = bbs[ud]
    if bb == nil then bb = X.bb(ud); bbs[ud] = bb end
    return bb
  end

  -- A leaf's result as a status (lleaf.c's tostatus): the common ones
  -- here, the rest (an invalid status, nothing under bt.strict) in C.
  local function conv(r)
    if r == "running" then return 1 end
    if r == true or r == "success" then return 2 end
    if r == false or r == "failure" then return 3 end
    if r == nil and O.strict == 0 then return 3 end
    return status(r)
  end
  S.conv = conv
  -- A control node's tick: "skipped" too; nil is an error, bt.strict or
  -- not (lleaf.c's lb_control_call).
  function S.convc(r)
    if r == "skipped" then return 5 end
    if r == nil then return status(r, true) end
    return conv(r)
  end
  -- A control node's 'c' (its callback handed out: lstep.c gave its node
  -- and the version): kept in its agent's extras by node, with its node and
  -- version in its private part (lleaf.c); made or brought up to the
  -- version by _step.control. The extras of a state are at [0] of its
  -- environment table where it has one (LuaJIT, 5.1: lcompat.h's
  -- lb_getbeside), else in the context's extras table.
  local getfenv = debug.getfenv
  function S.cof(a, ud)
    local e, x = getfenv(ud), nil
    if type(e) == "table" then x = rawget(e, 0) else x = extras[ud] end
    local c = x and x[O.node + 1]
    if type(c) == "table" then
      local refs = rawget(c, CREFS)
      if refs and refs[4] == O.version then return c end
    end
    return control(a, ud)
  end
  return S
end

-- The arguments a dispatch passes to f, the function of callback ev of a
-- leaf (of a control node with 'control'), as its source text: as many as
-- it declares, as many as the lua_call path gives it (agent, bb, args,
-- status).
local function args(f, ev, control)
  local info = debug.getinfo(f, "u")
  local max = control and 4 or (ev == 2 and 4 or 3)
  local n = (info.isvararg or not info.nparams) and max or
            math.min(info.nparams, max)
  local t = control and { "cof(a, ud)", "a", "bbof(ud)", "V[O.args]" }
            or { "a", "bbof(ud)", "V[O.args]", "NAMES[O.status]" }
  return table.concat(t, ", ", 1, n)
end

-- The source of the call with ticket 'code' (the functions of values
-- table V, or of the named leaves N), or nil when it is no function.
local function branch(code, V, named)
  local t = code - TICKET
  local isnamed, ev, ctl, key = t % 2, math.floor(t / 2) % 4,
                                math.floor(t / 8) % 2, math.floor(t / 16)
  local F = isnamed == 1 and named or V
  local f = F[key]
  if type(f) ~= "function" then return nil end
  local fn = (isnamed == 1 and "N[" or "V[") .. key .. "]"
  local callf = fn .. "(" .. args(f, ev, ctl == 1) .. ")"
  if ev ~= 0 then return callf .. "; return 0" end
  return "return " .. (ctl == 1 and "convc(" or "conv(") .. callf .. ")"
end

-- The source of a dispatch of the tickets 'codes' (sorted), their calls
-- in body: a binary search over the tickets, in functions of at most 64
-- (a function's jumps, constants and locals are bounded), kept in D; the
-- last line returns the top one.
local function emit(codes, body)
  local floor = math.floor
  local parts, nfun, lines = {}, 0, nil
  local function tree(lo, hi, ind)
    if lo == hi then
      lines[#lines + 1] = ind .. ("if code == %d then %s end"):format(
        codes[lo], body[codes[lo]])
      lines[#lines + 1] = ind .. "return slow(a, ud)"
      return
    end
    local mid = floor((lo + hi) / 2)
    lines[#lines + 1] = ind .. ("if code <= %d then"):format(codes[mid])
    tree(lo, mid, ind .. "  ")
    lines[#lines + 1] = ind .. "end"
    tree(mid + 1, hi, ind)
  end
  local function fun(lo, hi)
    lines = {}
    if hi - lo < 64 then
      tree(lo, hi, "  ")
    else
      local mid = floor((lo + hi) / 2)
      local left, right = fun(lo, mid), fun(mid + 1, hi)
      lines = { ("  if code <= %d then return D[%d](code, a, ud, V) end"):format(
                  codes[mid], left),
                ("  return D[%d](code, a, ud, V)"):format(right) }
    end
    nfun = nfun + 1
    parts[#parts + 1] = ("D[%d] = function(code, a, ud, V)\n%s\nend\n"):format(
      nfun, table.concat(lines, "\n"))
    return nfun
  end
  local top = fun(1, #codes)
  return "local N, O, NAMES, conv, convc, cof, bbof, slow = ...\n" ..
         "local D = {}\n" .. table.concat(parts) ..
         ("return D[%d]\n"):format(top)
end

-- The dispatch of a version: dispatch(code, a, ud) makes the call with
-- that ticket (the functions of values table V, or of the named leaves)
-- and returns its result for the core; an unknown ticket or a call of
-- another kind is made by _step.call. Generated once per values table, a
-- branch per ticket, each with a call site of its own; the functions are
-- read from their table at each call (a named one may be re-registered).
local function generate(S, V, tickets)
  local codes, body = {}, {}
  for _, code in ipairs(tickets) do
    local b = branch(code, V, S.named)
    if b and not body[code] then body[code] = b; codes[#codes + 1] = code end
  end
  table.sort(codes)
  local call = S.call
  if #codes == 0 then return function(_, a, ud) return call(a, ud) end end
  return assert(loadstring(emit(codes, body), "=bonsai dispatch"))(
    S.named, S.O, NAMES, S.conv, S.convc, S.cof, S.bbof, call)
end

-- dispatch(ud, ver): the dispatch of the version that agent (state ud)
-- runs, id ver, and its values table: by values table (the dispatch does
-- not hold it, so the entry goes with the version), and the values table
-- by id.
local function dispatcher(S)
  local X = S.X
  local byvalues = setmetatable({}, { __mode = "k" })
  local byver = setmetatable({}, { __mode = "v" })
  return function(ud, ver)
    local V = byver[ver]
    if V == nil then
      V = X.values(ud)
      byver[ver] = V
    end
    local d = byvalues[V]
    if d == nil then
      d = generate(S, V, X.tickets(ud))
      byvalues[V] = d
    end
    return d, V
  end
end

-- bt.tick_all's Lua loops (ltick.c's 'stepped'): make() gives a loop of
-- one depth, which ticks the entries of list from i to n, each agent's
-- calls in one flat loop (a loop nested in it would stop the trace);
-- returns at the end, or at an entry it does not step ("classic") or
-- whose tick failed ("failed"), and the sleepers it found without the
-- list's sleep cache. pos holds the tick under way: agent, entry, state.
-- The sleep cache (sc, its anchors: entry i's agent table at 2i - 1, its
-- state at 2i) is used and kept as pbatch does (lsleep.c): an entry it
-- knows is skipped while that same table is there and its state sleeps,
-- without reading the table's [1].
local function looper(S, dispatch)
  local CTX, O, begin, on, asleep, note = S.CTX, S.O, S.begin, S.on,
                                          S.asleep, S.note
  local isstate, rawget, type = S.isstate, rawget, type
  return function()
    -- the version's values table is held weakly (it holds the leaves, which
    -- may hold the list or its agents, which hold the tree, which holds it)
    local ver, disp, last = -1, nil, setmetatable({}, { __mode = "v" })
    local function loop(list, i, n, dt, pos, sc, anchors)
      local code, a, ud, slept = 0, nil, nil, 0
      local V = last[1]
      if V == nil then ver = -1 end
      i = i - 1
      while true do
        -- an iteration makes the call handed out, if any, then, if the tick
        -- is over, begins the next one: a tick of one call is one
        -- iteration, which the trace's loop keeps
        if code >= SLOW then
          code = on(CTX, ud, 0, disp(code, a, ud, V))
        end
        if code < SLOW then -- the last tick is over: the next entry
          if code >= CLASSIC then
            return i, code == CLASSIC and "classic" or "failed", slept
          end
          i = i + 1
          if i > n then return nil, nil, slept end
          a = list[i]
          code = 0
          if anchors ~= nil and anchors[2 * i - 1] == a and a ~= nil then
            ud = anchors[2 * i]
            if isstate(ud) and asleep(CTX, ud, dt) ~= 0 then code = ASLEEP end
          end
          if code == 0 then
            ud = type(a) == "table" and rawget(a, 1)
            if not isstate(ud) then return i, "classic", slept end
            pos[1], pos[2], pos[3] = a, i, ud
            code = begin(CTX, ud, dt, 1)
            if code >= SLOW then
              if O.version ~= ver then
                disp, V = dispatch(ud, O.version)
                ver, last[1] = O.version, V
              end
            elseif code == ASLEEP then
              slept = slept + 1
              if anchors ~= nil and (anchors[2 * i - 1] ~= a or
                                     anchors[2 * i] ~= ud) then
                note(sc, i, a, ud)
              end
            end
            if code ~= ASLEEP and code ~= CLASSIC and anchors ~= nil and
               anchors[2 * i - 1] ~= nil then
              note(sc, i)
            end
          end
        end
      end
    end
    return { loop, {} }
  end
end

-- a:tick and the agents' __index (ctick, cindex: the lua_call path's).
local function ticker(S, dispatch, ctick, cindex, methods)
  local X, CTX, O, begin, on, time = S.X, S.CTX, S.O, S.begin, S.on, S.time
  local isstate, rawget, type = S.isstate, rawget, type
  local running = coroutine.running

  -- the calls of the tick, unrolled (a loop would stop the trace of the
  -- game's loop around a:tick), then a loop for long ticks
  local tver, tdisp, tlast = -1, nil, setmetatable({}, { __mode = "v" })
  local function more(a, ud, code, disp, V)
    while code >= SLOW do code = on(CTX, ud, 0, disp(code, a, ud, V)) end
    return code
  end
  local function steps(a, ud, dt)
    local code = begin(CTX, ud, dt, 0)
    if code < SLOW then return code end
    local V = tlast[1] -- (held weakly, as looper's)
    if O.version ~= tver or V == nil then
      tdisp, V = dispatch(ud, O.version)
      tver, tlast[1] = O.version, V
    end
    local disp = tdisp
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    code = on(CTX, ud, 0, disp(code, a, ud, V))
    if code < SLOW then return code end
    return more(a, ud, on(CTX, ud, 0, disp(code, a, ud, V)), disp, V)
  end

  -- After the stepped tick: an error out of it (recovered here, raised
  -- naming tree and node), a tick that failed, or one not stepped.
  local function after(a, ud, ok, code, dt)
    if not ok then error(X.recover(a, ud, code), 0) end
    if code == FAILED then error(X.message(ud), 0) end
    return ctick(a, dt) -- CLASSIC: the lua_call path ticks it
  end

  local function tick(a, dt)
    if dt == nil then
      dt = 0
    elseif type(dt) ~= "number" or not (dt >= 0) then
      return ctick(a, dt) -- its message (or a string that is a number)
    end
    local ud = type(a) == "table" and rawget(a, 1)
    if not isstate(ud) or running() then -- (running: a leaf's yield
      return ctick(a, dt)                       -- must fail, as from C)
    end
    local ok, code = pcall(steps, a, ud, dt)
    if ok and code < ASLEEP then return NAMES[code] end
    return after(a, ud, ok, code, dt)
  end

  -- The agents' __index: the methods, a.time through the FFI, the rest
  -- (a.tree, a broken agent) as the C one does.
  local function index(a, k)
    local m = methods[k]
    if m ~= nil then return m end
    if k == "time" then
      local ud = type(a) == "table" and rawget(a, 1)
      if isstate(ud) then
        local t = time(CTX, ud)
        if t >= 0 then return t end
      end
    end
    return cindex(a, k)
  end
  return tick, index
end

-- c:tick(k): the child's run stepped, a level above the control node's
-- (cctick: the lua_call path's).
local function controller(S, dispatch, cctick)
  local X, CTX, O, on, child = S.X, S.CTX, S.O, S.on, S.child
  local isstate, CREFS, crecover = S.isstate, S.CREFS, X.crecover
  local rawget, type, floor = rawget, type, math.floor
  local function cmore(a, ud, level, code, disp, V)
    while code >= SLOW do code = on(CTX, ud, level, disp(code, a, ud, V)) end
    return code
  end
  local function cstep(a, ud, level, code, disp, V)
    code = on(CTX, ud, level, disp(code, a, ud, V))
    if code >= SLOW then
      code = on(CTX, ud, level, disp(code, a, ud, V))
      if code >= SLOW then code = cmore(a, ud, level, code, disp, V) end
    end
    return code
  end
  return function(c, k)
    local refs = type(c) == "table" and type(k) == "number" and
                 rawget(c, CREFS)
    local ud = type(refs) == "table" and refs[2]
    if not isstate(ud) or k ~= floor(k) then return cctick(c, k) end
    local node = refs[3]
    local code = child(CTX, ud, node, k - 1)
    if code >= SLOW then
      local disp, V = dispatch(ud, refs[4])
      local ok
      ok, code = pcall(cstep, refs[1], ud, O.level, code, disp, V)
      if not ok then -- a raise under the child (as lleaf.c's c:tick)
        crecover(ud, node, code)
        error(code, 0)
      end
    end
    if code < ASLEEP then return NAMES[code] end
    if code == FAILED then
      crecover(ud, node, nil)
      error(X.errmsg(ud), 0)
    end
    return cctick(c, k) -- CLASSIC
  end
end

-- Makes the path for bonsai.core (core: the module table): its functions
-- and tables, kept for the life of the Lua state; put() installs them in
-- bonsai.core's tables, take() puts the lua_call path's back.
local function build(core)
  local S = bind(core)
  local dispatch = dispatcher(S)
  local registry = debug.getregistry()
  local agentmt = registry["bonsai.agent"]
  local methods = agentmt.methods
  local ctick, cindex = methods.tick, agentmt.__index
  local tick, index = ticker(S, dispatch, ctick, cindex, methods)
  local cmethods = registry["bonsai.control"].__index
  local cctick = cmethods.tick
  local ctick_ = controller(S, dispatch, cctick)
  local stepper = { make = looper(S, dispatch) }
  return {
    put = function()
      S.X.use(stepper)
      methods.tick, agentmt.__index, cmethods.tick = tick, index, ctick_
    end,
    take = function()
      S.X.use(nil)
      methods.tick, agentmt.__index, cmethods.tick = ctick, cindex, cctick
    end,
  }
end

-- Takes the path, where this Lua can; returns whether it is on.
function M.install(core, bt)
  if not installed and M.available() then
    built = built or build(core)
    built.put()
    installed = true
  end
  return installed
end

-- Puts the lua_call path back.
function M.remove()
  if installed then built.take(); installed = false end
end

function M.on() return installed end

return M
