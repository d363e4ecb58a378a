-- bonsai.formats.xml: reads an XML document into element tables with
-- lua-expat, refusing what a tree file never needs and what could make
-- reading it unbounded: any DOCTYPE or entity declaration (so no entity
-- expansion), more than MAX_DEPTH nested or MAX_ELEMENTS elements.
-- Element: { tag = name, attrs = { name = value }, order = { names... },
-- line = l, col = c, file = f, [1..n] = child elements }; text is ignored.
local lxp = require "lxp"

local M = {}

local MAX_DEPTH = 200
local MAX_ELEMENTS = 100000

-- The root element of text; raises "FILE:LINE:COL: message".
function M.parse(text, file)
  local root, stack, count = nil, {}, 0
  local parser
  local function fail(msg)
    local line, col = parser:pos()
    error(string.format("%s:%d:%d: %s", file, line or 0, col or 0, msg), 0)
  end
  parser = lxp.new {
    StartDoctypeDecl = function()
      fail("DOCTYPE declarations are not allowed in a tree file")
    end,
    EntityDecl = function(_, name)
      fail("entity declaration '" .. tostring(name) .. "' is not allowed")
    end,
    StartElement = function(p, tag, attrs)
      count = count + 1
      if #stack >= MAX_DEPTH then
        fail("elements nested deeper than " .. MAX_DEPTH .. " levels")
      end
      if count > MAX_ELEMENTS then
        fail("more than " .. MAX_ELEMENTS .. " elements")
      end
      local line, col = p:pos()
      local e = { tag = tag, attrs = {}, order = {}, line = line,
                  col = col, file = file }
      for i, k in ipairs(attrs) do
        e.order[i] = k
        e.attrs[k] = attrs[k]
      end
      local parent = stack[#stack]
      if parent then parent[#parent + 1] = e else root = e end
      stack[#stack + 1] = e
    end,
    EndElement = function()
      stack[#stack] = nil
    end,
  }
  local ok, msg, line, col = parser:parse(text)
  if ok then ok, msg, line, col = parser:parse() end
  pcall(parser.close, parser)
  if not ok then
    error(string.format("%s:%d:%d: XML error: %s", file, line or 0,
                        col or 0, msg), 0)
  end
  if not root then error(file .. ": no root element", 0) end
  return root
end

-- Escapes a string for an attribute value.
function M.escape(s)
  return (tostring(s):gsub('[<>&"\n]', { ["<"] = "&lt;", [">"] = "&gt;",
    ["&"] = "&amp;", ['"'] = "&quot;", ["\n"] = "&#10;" }))
end

return M
