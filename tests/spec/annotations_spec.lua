-- annotations_spec.lua: lua/bonsai/meta.lua (the LuaLS annotations) against
-- the module itself: every public name of `require "bonsai"` (functions and
-- values), every agent, tree, blackboard and builder method, and the
-- functions of bt.debug must be annotated, and every annotated name must
-- exist, except the names in PENDING below; every name API.md uses must be
-- annotated.

local bt = require "bonsai"

-- PENDING: annotated for API.md's Additions but not in the module yet.
-- When a feature lands, remove its names here (the test fails for a
-- pending name that exists, so this list empties itself as work merges).
local PENDING = {
}

-- The tables of meta.lua and the prefix of their names here.
local prefix = { bt = "bt.", Debug = "bt.debug.", Agent = "Agent:",
                 Tree = "Tree:", Blackboard = "Blackboard:",
                 Builder = "Builder:" }

-- The names meta.lua annotates (function definitions and assignments).
local function annotated()
  local names, prev = {}, ""
  for line in io.lines("lua/bonsai/meta.lua") do
    local t, k = line:match("^function%s+([%a_][%w_]*)[.:]([%a_][%w_]*)%s*%(")
    if t and not prev:match("^%-%-%-") then
      error("meta.lua: " .. t .. "." .. k .. " has no annotation above it")
    end
    if not t then t, k = line:match("^([%a_][%w_]*)%.([%a_][%w_]*)%s*=") end
    if not t then t, k = line:match('^([%a_][%w_]*)%["([^"]+)"%]%s*=') end
    if t and prefix[t] then names[prefix[t] .. k] = true end
    prev = line
  end
  return names
end

-- The method table behind an object's metatable: its "methods" field, its
-- __index table, or a table among the upvalues of its __index function;
-- the one that holds probe.
local function methods_of(obj, probe)
  local mt = assert(debug.getmetatable(obj), "no metatable")
  local found = {}
  local function try(t)
    if type(t) == "table" and type(rawget(t, probe)) == "function" then
      found[#found + 1] = t
    end
  end
  try(rawget(mt, "methods"))
  local index = rawget(mt, "__index")
  try(index)
  if type(index) == "function" then
    for i = 1, math.huge do
      local name, v = debug.getupvalue(index, i)
      if not name then break end
      try(v)
    end
  end
  return assert(found[1], "no method table holding '" .. probe .. "'")
end

-- The public names the module has (keys that start with "_" are private).
local function actual()
  local names = {}
  local function add(pre, t, functions_only)
    for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and
         (not functions_only or type(v) == "function") then
        names[pre .. k] = true
      end
    end
  end
  add("bt.", bt)
  if type(bt.debug) == "table" then add("bt.debug.", bt.debug, true) end
  local tree = bt.tree(bt.action(function() return true end))
  local a = bt.agent(tree)
  add("Agent:", methods_of(a, "tick"), true)
  add("Tree:", methods_of(tree, "dump"), true)
  add("Blackboard:", methods_of(a.bb, "get"), true)
  add("Builder:", methods_of(bt.builder(), "build"), true)
  return names
end

local function sorted(set)
  local list = {}
  for k in pairs(set) do list[#list + 1] = k end
  table.sort(list)
  return list
end

describe("meta.lua", function()
  local meta, have, waiting = annotated(), actual(), {}
  for _, k in ipairs(PENDING) do waiting[k] = true end

  it("annotates every public name of the module", function()
    local missing = {}
    for k in pairs(have) do
      if not meta[k] then missing[#missing + 1] = k end
    end
    table.sort(missing)
    assert.are.same({}, missing,
      "in the module, not annotated in lua/bonsai/meta.lua: " ..
      table.concat(missing, ", "))
  end)

  it("annotates only names the module has (or pending ones)", function()
    local extra = {}
    for _, k in ipairs(sorted(meta)) do
      if not have[k] and not waiting[k] then extra[#extra + 1] = k end
    end
    assert.are.same({}, extra,
      "annotated in lua/bonsai/meta.lua, not in the module: " ..
      table.concat(extra, ", "))
  end)

  it("keeps PENDING to names that are annotated and not there yet", function()
    local stale = {}
    for _, k in ipairs(PENDING) do
      if have[k] then
        stale[#stale + 1] = k .. " (now in the module: remove it from PENDING)"
      elseif not meta[k] then
        stale[#stale + 1] = k .. " (not annotated)"
      end
    end
    assert.are.same({}, stale, table.concat(stale, ", "))
  end)

  it("annotates every name of the contract (docs/API.md)", function()
    local f = assert(io.open("docs/API.md"))
    local missing, seen = {}, {}
    local patterns = { ["bt."] = "bt%.([%a_][%w_]*)",
                       ["Agent:"] = "%f[%w]a:([%a_][%w_]*)",
                       ["Tree:"] = "tree:([%a_][%w_]*)",
                       ["Blackboard:"] = "bb:([%a_][%w_]*)" }
    for line in f:lines() do
      for pre, pattern in pairs(patterns) do
        for k in line:gmatch(pattern) do
          if not meta[pre .. k] and not seen[pre .. k] then
            missing[#missing + 1] = pre .. k
          end
          seen[pre .. k] = true
        end
      end
    end
    f:close()
    table.sort(missing)
    assert.are.same({}, missing, "in API.md, not annotated in meta.lua: " ..
      table.concat(missing, ", "))
  end)

  it("is valid Lua that never runs the module", function()
    local chunk = assert(loadfile("lua/bonsai/meta.lua", "t", {}))
    local m = chunk()
    assert.are.equal(bt.VERSION, m.VERSION)
  end)
end)
