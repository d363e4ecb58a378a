-- bonsai.debug.edit.luatext: a definition written as canonical Lua, the
-- form the live page saves a .lua tree in (docs/DEBUGGER.md, "Saving"):
-- plain node tables loadable by bt.load, scripts as bt.script, the trees
-- of extracted subtrees as locals made by bt.tree before it, the comment
-- lines that opened the old text kept.
local node = require "bonsai.debug.edit.node"

local isnode, place, plain = node.isnode, node.place, node.plain

local function value(v, ident)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2^53 then
    return ("%d"):format(v)
  end
  if type(v) == "number" then return ("%.17g"):format(v) end
  if ident and ident[v] then return ident[v] end
  return tostring(v)
end

local function key(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. value(k) .. "]"
end

-- The keys of node n to write but type and name, sorted; raises for a
-- value the page cannot write (w: { map, ident }).
local function keysof(n, w)
  local keys = {}
  for k, v in pairs(n) do
    if type(k) ~= "number" or k > #n or k < 1 then
      local what = type(v) == "function" and "is an inline Lua function, " ..
        "which the page cannot write: name the leaf with bt.register, or " ..
        "save the tree as .xml or .json" or
        (type(v) == "table" and not isnode(v) or
         type(v) == "userdata" and not w.ident[v]) and
        "is a value the page cannot write"
      if what then
        error(place(w.map, n) .. ": its '" .. tostring(k) .. "' " .. what, 0)
      end
      if k ~= "type" and k ~= "name" then keys[#keys + 1] = k end
    end
  end
  table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
  return keys
end

-- Node n as Lua at indentation ind: a table (on one line when a leaf fits
-- in 100 columns), or a script node as bt.script.
local function write(n, ind, w)
  local kind, code = w.script_of(n)
  if kind then
    local f = kind == "script" and "bt.script" or "bt.script_condition"
    local s = f .. "(" .. value(code) .. ")"
    if n.name then s = "bt.named(" .. value(n.name) .. ", " .. s .. ")" end
    return s
  end
  local parts = { ind .. "  type = " .. value(n.type) .. "," }
  if n.name ~= nil then
    parts[#parts + 1] = ind .. "  name = " .. value(n.name) .. ","
  end
  for _, k in ipairs(keysof(n, w)) do
    parts[#parts + 1] = ind .. "  " .. key(k) .. " = " ..
                        value(n[k], w.ident) .. ","
  end
  local leaf = true
  for _, c in ipairs(n) do
    if isnode(c) then
      leaf = false
      parts[#parts + 1] = ind .. "  " .. write(c, ind .. "  ", w) .. ","
    end
  end
  if leaf then
    local flat = {}
    for i, p in ipairs(parts) do flat[i] = p:gsub("^%s+", "") end
    local line = "{ " .. table.concat(flat, " "):gsub(",$", "") .. " }"
    if #ind + 4 + #line <= 100 then return line end
  end
  return "{\n" .. table.concat(parts, "\n") .. "\n" .. ind .. "}"
end

-- The plain tree options but name, as Lua: ", { k = v, ... }" or "".
local function options(opts, extra)
  local o = { extra }
  for k, v in pairs(opts or {}) do
    if k ~= "name" and plain(v) then o[#o + 1] = key(k) .. " = " .. value(v) end
  end
  table.sort(o)
  return #o > 0 and ", { " .. table.concat(o, ", ") .. " }" or ""
end

-- Lua's reserved words and the file's bt (not a local's name).
local RESERVED = {}
for w in ([[and break do else elseif end false for function goto if in
  local nil not or repeat return then true until while bt]]):gmatch("%a+") do
  RESERVED[w] = true
end

-- The trees that subtree nodes under n hold as objects (an extracted
-- part), inner ones first, each given a local's name in w.ident; one
-- loaded from a file (external(tree) gives its path) is refused.
local function trees(n, w, list, external)
  local v = n.type == "subtree" and n.tree
  if type(v) == "userdata" and not w.ident[v] then
    local src = v:_source()
    local from = external and external(v)
    if not src or from then
      error(place(w.map, n) .. ": its tree '" .. tostring(v.name) .. "' " ..
            (from and "is the file " .. from .. "'s" or "has no " ..
            "definition here") .. ": the page cannot write it into this " ..
            "file", 0)
    end
    trees(src.root, w, list, external)
    local base = tostring(v.name):gsub("[^%w_]", "_"):gsub("^(%d)", "_%1")
    local name, i = base, 1
    while w.used[name] or RESERVED[name] do
      i = i + 1
      name = base .. "_" .. i
    end
    w.used[name], w.ident[v] = true, name
    list[#list + 1] = { tree = v, src = src }
  end
  for _, c in ipairs(n) do
    if isnode(c) then trees(c, w, list, external) end
  end
  return list
end

-- Lua, canonical: the definition as plain node tables (type and name
-- first, then the other keys sorted; two-space indentation), loadable by
-- bt.load; scripts as bt.script. The comment lines that open the old text
-- are kept (else a line says who wrote it). Raises with the place of a
-- node it cannot write (an inline function, a table, a tree of another
-- file: external(tree) -> its path or nil). bt: the bonsai module, which
-- tells a script node (bt.script_of; without it, a script node is refused
-- as an inline function).
local function text(root, opts, map, old, external, bt)
  local out = {}
  for line in (old or ""):gmatch("([^\n]*)\n") do
    if not line:match("^%-%-") then break end
    out[#out + 1] = line
  end
  if #out == 0 then
    out[1] = "-- Written by the live page (bonsai.debug.edit)."
  end
  local w = { map = map, ident = {}, used = {},
              script_of = bt and bt.script_of or function() end }
  for _, t in ipairs(trees(root, w, {}, external)) do
    out[#out + 1] = "local " .. w.ident[t.tree] .. " = bt.tree(" ..
      write(t.src.root, "", w) .. options(t.src.opts, "name = " ..
      value(t.tree.name)) .. ")"
  end
  out[#out + 1] = "return " .. write(root, "", w) .. options(opts)
  return table.concat(out, "\n") .. "\n"
end

return text
