-- bonsai.debug.edit.luatext: a definition written as canonical Lua, the
-- form the live page saves a .lua tree in (docs/DEBUGGER.md, "Saving"):
-- plain node tables loadable by bt.load, scripts as bt.script, the
-- comment lines that opened the old text kept.
local node = require "bonsai.debug.edit.node"
local script = require "bonsai.script"

local isnode, place, plain = node.isnode, node.place, node.plain

-- Lua, canonical: the definition as plain node tables (type and name
-- first, then the other keys sorted; two-space indentation), loadable by
-- bt.load; scripts as bt.script. The comment lines that open the old text
-- are kept (else a line says who wrote it). Raises with the place of a
-- node it cannot write (an inline function, a table).
local function text(root, opts, map, old)
  local out = {}
  local function value(v)
    if type(v) == "string" then return ("%q"):format(v) end
    if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2^53 then
      return ("%d"):format(v)
    end
    if type(v) == "number" then return ("%.17g"):format(v) end
    return tostring(v)
  end
  local function key(k)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
    return "[" .. value(k) .. "]"
  end
  local function go(n, ind)
    local src = script.source[n]
    if src then
      local f = src.kind == "script" and "bt.script" or "bt.script_condition"
      local s = f .. "(" .. value(src.code) .. ")"
      if n.name then s = "bt.named(" .. value(n.name) .. ", " .. s .. ")" end
      return s
    end
    local keys = {}
    for k, v in pairs(n) do
      if type(k) ~= "number" or k > #n or k < 1 then
        if type(v) == "function" then
          error(place(map, n) .. ": its '" .. tostring(k) .. "' is an " ..
                "inline Lua function, which the page cannot write: name " ..
                "the leaf with bt.register, or save the tree as .xml or " ..
                ".json", 0)
        elseif type(v) == "table" and not isnode(v) then
          error(place(map, n) .. ": its '" .. tostring(k) .. "' is a " ..
                "table the page cannot write", 0)
        end
        if k ~= "type" and k ~= "name" then keys[#keys + 1] = k end
      end
    end
    table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
    local parts = { ind .. "  type = " .. value(n.type) .. "," }
    if n.name ~= nil then
      parts[#parts + 1] = ind .. "  name = " .. value(n.name) .. ","
    end
    for _, k in ipairs(keys) do
      parts[#parts + 1] = ind .. "  " .. key(k) .. " = " .. value(n[k]) .. ","
    end
    local leaf = true
    for _, c in ipairs(n) do
      if isnode(c) then
        leaf = false
        parts[#parts + 1] = ind .. "  " .. go(c, ind .. "  ") .. ","
      end
    end
    if leaf then -- on one line when it fits in 100 columns
      local flat = {}
      for i, p in ipairs(parts) do flat[i] = p:gsub("^%s+", "") end
      local line = "{ " .. table.concat(flat, " "):gsub(",$", "") .. " }"
      if #ind + 4 + #line <= 100 then return line end
    end
    return "{\n" .. table.concat(parts, "\n") .. "\n" .. ind .. "}"
  end
  for line in (old or ""):gmatch("([^\n]*)\n") do
    if not line:match("^%-%-") then break end
    out[#out + 1] = line
  end
  if #out == 0 then
    out[1] = "-- Written by the live page (bonsai.debug.edit)."
  end
  local o = {}
  for k, v in pairs(opts or {}) do
    if k ~= "name" and plain(v) then o[#o + 1] = key(k) .. " = " .. value(v) end
  end
  table.sort(o)
  out[#out + 1] = "return " .. go(root, "") ..
    (#o > 0 and ", { " .. table.concat(o, ", ") .. " }" or "")
  return table.concat(out, "\n") .. "\n"
end

return text
