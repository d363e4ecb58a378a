-- tests/build/layers.lua SRC BUILD: the layering of the sources.
-- 1. The binding (src/lua/) is a client of the public API: its files
--    include, of the project's headers, only bonsai.h, bonsai_lua.h and the
--    binding's own lbonsai.h (which includes only bonsai.h and lcompat.h,
--    the Lua versions' differences, which includes no header of ours).
-- 2. No two source files depend on each other in a circle. A file stem is
--    one module (agent.c with agent.h); it depends on another by including
--    its header or by calling a function (or reading a variable) the other
--    defines, read from the symbols of the object files (nm) under BUILD.
-- 3. The Lua modules (lua/bonsai/): no circle in the require graph (a
--    module named anywhere in a file's code, or read from package.loaded,
--    is an edge), the rules of LUA_RULES below, each over the modules a
--    module requires, and no private method of the library called by a
--    tool but those PRIVATE_USED names.
-- Prints each breach and exits 1, or prints the order of the modules.
local src = assert(arg[1] and arg[2], "usage: layers.lua SRC BUILD") and
            arg[1]
local failed = false

local function fail(fmt, ...)
  print(string.format(fmt, ...))
  failed = true
end

local function lines(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

local function includes(path)
  local t = {}
  for l in io.lines(path) do
    local h = l:match('^%s*#%s*include%s+"([^"]+)"')
    if h then t[#t + 1] = h end
  end
  return t
end

local function stem(name) return (name:match("([^/]+)%.[ch]$")) end

-- 1. the seam
local allowed = { ["bonsai.h"] = true, ["bonsai_lua.h"] = true,
                  ["lbonsai.h"] = true }
local lbonsai_h = { ["bonsai.h"] = true, ["lcompat.h"] = true }
local files = lines("ls " .. src .. "/src/core/*.[ch] " .. src .. "/src/lua/*.[ch]")
for _, f in ipairs(files) do
  local base = f:match("([^/]+)$")
  if f:match("/src/lua/[^/]+$") then
    for _, h in ipairs(includes(f)) do
      if base == "lcompat.h" or (base == "lbonsai.h" and not lbonsai_h[h])
         or (base ~= "lbonsai.h" and not allowed[h]) then
        fail("%s includes %s: the binding uses the public API alone", base, h)
      end
    end
  end
end

-- 2. the module graph
local deps = {} -- deps[a][b] = why
local function dep(a, b, why)
  if a == b or a == nil or b == nil then return end
  deps[a] = deps[a] or {}
  deps[a][b] = deps[a][b] or why
end
for _, f in ipairs(files) do
  for _, h in ipairs(includes(f)) do
    if h ~= "bonsai.h" and h ~= "bonsai_lua.h" then
      dep(stem(f), stem(h), "includes " .. h)
    end
  end
  deps[stem(f)] = deps[stem(f)] or {}
end
local defined, uses = {}, {}
for _, o in ipairs(lines("find " .. arg[2] .. "/src -name '*.c.o'")) do
  local m = stem(o:match("([^/]+)%.o$"):gsub("^%.%._", ""))
  do
    uses[m] = uses[m] or {}
    for _, l in ipairs(lines("nm " .. o)) do
      local kind, sym = l:match("(%a) (%S+)$")
      if kind == "U" then
        uses[m][#uses[m] + 1] = sym
      elseif kind and kind:match("[TDBR]") then
        defined[sym] = m
      end
    end
  end
end
for m, syms in pairs(uses) do
  for _, s in ipairs(syms) do dep(m, defined[s], "calls " .. s) end
end

-- depth-first search; a module met again while on the path closes a circle
local state, order, path = {}, {}, {}
local function visit(m)
  if state[m] == "done" then return end
  if state[m] == "open" then
    local k = #path
    while path[k] ~= m do k = k - 1 end
    local circle = {}
    for i = k, #path do
      local nxt = path[i + 1] or m
      circle[#circle + 1] = path[i] .. " (" .. deps[path[i]][nxt] .. ")"
    end
    fail("circle: %s -> %s", table.concat(circle, " -> "), m)
    return
  end
  state[m] = "open"
  path[#path + 1] = m
  local next = {}
  for d in pairs(deps[m] or {}) do next[#next + 1] = d end
  table.sort(next)
  for _, d in ipairs(next) do visit(d) end
  path[#path] = nil
  state[m] = "done"
  order[#order + 1] = m
end
local all = {}
for m in pairs(deps) do all[#all + 1] = m end
table.sort(all)
for _, m in ipairs(all) do visit(m) end

print("layers, lowest first: " .. table.concat(order, " "))

-- 3. The Lua modules ---------------------------------------------------------

-- Whether name matches one of the patterns.
local function matches(name, pats)
  for _, p in ipairs(pats or {}) do
    if name:match(p) then return true end
  end
  return false
end

-- The rules between Lua modules: the modules `from` matches may require
-- no module `never` matches, but those `never.but` matches (patterns over
-- module names).
local TOOLS = { "^bonsai%.debug$", "^bonsai%.debug%.", "^bonsai%.http$",
                "^bonsai%.record$", "^bonsai%.test$", "^bonsai%.test%." }
local LUA_RULES = {
  { -- formats get what they need passed in (the module as opts.bt)
    name = "formats never require bonsai",
    from = { "^bonsai%.formats%." }, never = { "^bonsai$" } },
  { -- tools (the debugger, the recorder, the test kit) use the public API:
    -- require "bonsai" and one another, never the modules behind bt
    name = "tools use only the public API",
    from = TOOLS, never = { "^bonsai%.", but = TOOLS } },
}
-- Nor do tools call the private methods of the library's objects
-- (a:_name(), bt._name), but for these: { modules, names ("*": any), why }.
local PRIVATE_USED = {
  { TOOLS, { _checkopts = true, _nearest = true, _suggest = true },
    "the module's helpers for messages, shared with its tools" },
  { { "^bonsai%.record$" }, { _kept = true },
    "a recording's subscriptions, kept on the agent" },
  { { "^bonsai%.debug%.stepper$" }, { _on_event = true },
    "the step through a tick: a hook on each status event of one tick" },
  { { "^bonsai%.debug%.edit" }, { _source = true, _register = true },
    "the editor drafts from the definition a tree keeps, and puts the " ..
    "game's tree back under its name after compiling a draft" },
  { { "^bonsai%.debug%.edit" }, { _files = true, _registered = true,
                                   _defined = true },
    "the editor's palette (registered leaves, defined types) and the " ..
    "files it may save (those bt.watch watches)" },
}
local function private_ok(m, name)
  for _, u in ipairs(PRIVATE_USED) do
    if matches(m, u[1]) and (u[2] == "*" or u[2][name]) then return true end
  end
  return false
end

-- Known breaches still to mend: { from, to, what is left } (to: patterns).
-- Each is printed, and left out of the rules and of the circles, until the
-- code no longer has it (then its line goes).
local WAITING = {}

-- The text of a Lua file without its comments (strings kept).
local function code(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("*a")
  f:close()
  local out, i = {}, 1
  while i <= #t do
    local c = t:sub(i, i)
    local long = t:match("^%[(=*)%[", i)
    if t:sub(i, i + 1) == "--" then
      local eq = t:match("^%[(=*)%[", i + 2)
      if eq then
        local _, e = t:find("]" .. eq .. "]", i, true)
        i = (e or #t) + 1
      else
        i = (t:find("\n", i, true) or #t + 1)
      end
    elseif long then
      local _, e = t:find("]" .. long .. "]", i, true)
      out[#out + 1] = t:sub(i, e or #t)
      i = (e or #t) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= #t and t:sub(j, j) ~= c do
        j = j + (t:sub(j, j) == "\\" and 2 or 1)
      end
      out[#out + 1] = t:sub(i, j)
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

-- A module requires another when its code names it in a string (require
-- "x", a table of module names that a require reads later, a lazy loader)
-- or reads it from package.loaded.
local requires = {} -- requires[module][module it requires] = true
local luafiles = lines("cd " .. src .. "/lua && find bonsai -name '*.lua' | sort")
local known = { ["bonsai.core"] = true }
for _, f in ipairs(luafiles) do
  known[(f:gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))] = true
end
for _, f in ipairs(luafiles) do
  local m = f:gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  local text = code(src .. "/lua/" .. f)
  requires[m] = {}
  if matches(m, TOOLS) then
    for p in text:gmatch(":(_[%a][%w_]*)%s*[%(\"'{]") do
      if not private_ok(m, p) then
        fail("%s calls the private method :%s: tools use only the public API", m, p)
      end
    end
    for p in text:gmatch("%f[%w_]bt%.(_[%a][%w_]*)") do
      if not private_ok(m, p) then
        fail("%s uses bt.%s: tools use only the public API", m, p)
      end
    end
  end
  for _, pat in ipairs { "[\"']([%w_.]+)[\"']", "package%.loaded%.([%w_]+)" } do
    for r in text:gmatch(pat) do
      local waits
      for _, w in ipairs(WAITING) do
        for _, to in ipairs(w[2]) do
          if m:match(w[1]) and r:match(to) then waits = w[3] end
        end
      end
      if not known[r] or r == m then -- a string that names no module
      elseif waits then
        print(string.format("waiting for %s: %s requires %s", waits, m, r))
      else
        requires[m][r] = true
      end
    end
  end
end

local luamods = {}
for m in pairs(requires) do luamods[#luamods + 1] = m end
table.sort(luamods)
for _, rule in ipairs(LUA_RULES) do
  for _, m in ipairs(luamods) do
    if matches(m, rule.from) then
      for r in pairs(requires[m]) do
        if matches(r, rule.never) and not matches(r, rule.never.but) then
          fail("%s requires %s: %s", m, r, rule.name)
        end
      end
    end
  end
end

-- a circle of requires, found as the C modules' circles are (visit)
deps, state, order, path = {}, {}, {}, {}
for m, rs in pairs(requires) do
  for r in pairs(rs) do dep(m, r, "requires " .. r) end
  deps[m] = deps[m] or {}
end
for _, m in ipairs(luamods) do visit(m) end
if failed then os.exit(1) end
print("Lua modules, lowest first: " .. table.concat(order, " "))
