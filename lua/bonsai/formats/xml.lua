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

-- The characters of text from byte i to j (UTF-8: expat counts columns in
-- characters).
local function chars(text, i, j)
  local _, n = text:sub(i, j):gsub("[^\128-\191]", "")
  return n
end

-- BehaviorTree.CPP reads its files with tinyxml2, which lets an '&' that
-- starts no entity reference through as itself: its own tutorials write
-- `code="A>-B && color != BLUE"`. Expat refuses it, so each such '&' is
-- written '&amp;' before expat reads the text (what expat then gives back
-- is the '&' itself). An '&' that starts a reference (`&lt;`, `&#38;`,
-- `&name;`) is left alone: expat reads the five predefined ones and the
-- character references, and refuses any other name as an undefined entity
-- (nothing is declared, nothing expanded). Returns the text and, by line,
-- the columns (in the new text) after which 4 bytes were added, or nil
-- when nothing was.
local function bare_amps(text)
  if not text:find("&", 1, true) then return text, nil end
  local out, added, n = {}, {}, 0
  local at, line, linestart, extra = 1, 1, 1, 0
  while true do
    local p = text:find("[&\n]", at)
    if not p then break end
    out[#out + 1] = text:sub(at, p)
    at = p + 1
    if text:byte(p) == 10 then
      line, linestart, extra = line + 1, p + 1, 0
    elseif not (text:find("^&[%a_:][%w_.:%-]*;", p) or
                text:find("^&#%d+;", p) or text:find("^&#x%x+;", p)) then
      n = n + 1
      out[#out + 1] = "amp;"
      local cols = added[line] or {}
      added[line] = cols
      cols[#cols + 1] = chars(text, linestart, p - 1) + extra -- the '&'
                                                             -- (0-based)
      extra = extra + 4
    end
  end
  if n == 0 then return text, nil end
  out[#out + 1] = text:sub(at)
  return table.concat(out), added
end

local PREDEFINED = { lt = true, gt = true, amp = true, quot = true,
                     apos = true }

-- What to say about the byte at (line, col) of text (col 1-based, as
-- expat's messages count) where expat stopped: the character, and what to
-- write for '<' and '&'. An undefined entity is reported at its element's
-- start: the first reference of that element expat does not know is named.
local function at_char(text, line, col, msg)
  local start = 1
  for _ = 2, line or 1 do
    start = text:find("\n", start, true)
    if not start then return "" end
    start = start + 1
  end
  local i, k = start, 1 -- byte i holds character k of the line
  while k < (col or 1) and i <= #text do
    i = i + 1
    if not text:sub(i, i):match("^[\128-\191]$") then k = k + 1 end
  end
  local c = text:sub(i, i)
  if c == "" then return "" end
  if msg == "undefined entity" then
    local stop = text:find(">", i, true) or #text
    for name in text:sub(i, stop):gmatch("&([%a_:][%w_.:%-]*);") do
      if not PREDEFINED[name] then
        return " '&" .. name .. ";' (a tree file declares no entity: " ..
          "write &amp; for '&'; &lt; &gt; &amp; &quot; &apos; and " ..
          "character references like &#38; are read)"
      end
    end
    return ""
  end
  if c == "&" then
    local ref = text:match("^&[^%s;&<>\"']*;?", i)
    return " at '" .. ref .. "'"
  elseif c == "<" then
    return " at '<' (write &lt; for a '<' inside an attribute value)"
  elseif c:match("^[%c]$") or c:byte() >= 128 then
    return string.format(" at byte 0x%02X (a tree file is UTF-8 text)",
                         c:byte())
  end
  return " at '" .. c .. "'"
end

-- The root element of text; raises "FILE:LINE:COL: message".
function M.parse(text, file)
  local root, stack, count = nil, {}, 0
  local parser
  local source, added = text, nil
  -- the column in the file of column col of line in the text read
  local function column(line, col)
    local cols = added and line and added[line]
    if not cols or not col then return col end
    local back = 0
    for _, c in ipairs(cols) do
      if c < col then back = back + 4 end
    end
    return col - back
  end
  local function fail(msg)
    local line, col = parser:pos()
    error(string.format("%s:%d:%d: %s", file, line or 0,
                        column(line, col) or 0, msg), 0)
  end
  text, added = bare_amps(text)
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
      col = column(line, col)
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
    col = column(line, col)
    error(string.format("%s:%d:%d: XML error: %s%s", file, line or 0,
                        col or 0, msg, at_char(source, line, col, msg)), 0)
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
