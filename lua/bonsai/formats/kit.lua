-- bonsai.formats.kit: what every format shares. The limits of a file read
-- (nodes and levels after expansion), numbers read from text, errors with
-- their place, each format's name table (a node type's name in the file
-- <-> a Bonsai kind, or a node a format makes of other kinds, or a kind
-- refused by name: tests/spec/formats_kinds_spec.lua walks core.KINDS over
-- every table), and the provenance of the nodes an importer made (one
-- record per node, read back by the exporters). Requires nothing of Bonsai.
local M = {}

M.MAX_NODES = 100000 -- nodes of one file, after subtrees are expanded
M.MAX_DEPTH = 1000   -- levels, after subtrees are expanded

-- The place of an error: "file:line:col", "file:line" (col nil), or
-- "file: $.json.path" (line a string).
function M.at(file, line, col)
  if type(line) == "string" then return file .. ": " .. line end
  return col and string.format("%s:%d:%d", file, line, col) or
         string.format("%s:%d", file, line)
end

-- The cycle x closes on stack (a list of what is being expanded, the
-- outermost first, x among them), whole, from where it starts: "a -> b ->
-- a"; label(v) names each (default: v itself); fileof(v), when given, is
-- its file, written after each name when they are not all in one file
-- ("a (x.xml) -> b (y.xml) -> a (x.xml)").
function M.cycle(stack, x, fileof, label)
  local from = #stack
  while stack[from] ~= x and from > 1 do from = from - 1 end
  local names, files, several = {}, {}, false
  for i = from, #stack + 1 do
    local n = stack[i] or x
    names[#names + 1] = label and label(n) or n
    files[#names] = fileof and fileof(n)
    several = several or files[#names] ~= files[1]
  end
  for i, n in ipairs(names) do
    if several then names[i] = n .. " (" .. tostring(files[i]) .. ")" end
  end
  return table.concat(names, " -> ")
end

-- Raises "PLACE: node 'NODE' ('NAME'): MSG": NODE the node's type or id
-- (nil: "PLACE: MSG"), NAME its name when it has one of its own.
function M.fail(place, node, msg, name)
  local what = ""
  if node ~= nil then
    what = "node '" .. tostring(node) .. "'" ..
           (name and name ~= node and " ('" .. name .. "')" or "") .. ": "
  end
  error(place .. ": " .. what .. msg, 0)
end

-- The number text reads as, finite; nil for anything else.
function M.number(text)
  local n = tonumber(text)
  if not n or n ~= n or n == math.huge or n == -math.huge then return nil end
  return n
end

-- Provenance: node -> its record, { [aspect] = what the importer knew },
-- weak on the node. provenance(aspect) is a view of one aspect, indexed by
-- node (reading a node without a record gives nil).
local records = setmetatable({}, { __mode = "k" })

function M.provenance(aspect)
  return setmetatable({}, {
    __index = function(_, node)
      local r = records[node]
      return r and r[aspect]
    end,
    __newindex = function(_, node, v)
      local r = records[node]
      if not r then
        if v == nil then return end
        r = {}
        records[node] = r
      end
      r[aspect] = v
    end,
  })
end

-- The record of node (nil when no importer or script made it).
function M.record(node) return records[node] end

-- A format's name table: rows { name, kind, import, export } (name: the
-- file's; kind: the Bonsai kind it maps to, or nil for a node the format
-- makes of other kinds; import(ctx, ...) and export(node, ...) are the
-- format's own functions, either may be absent), and refused: kind ->
-- reason a kind has no equivalent in the format. Returns the table with
-- by_name (name -> row), by_kind (kind -> the first row of the kind),
-- refused (kind -> reason). A kind both mapped and refused is an error.
function M.names(format, rows, refused)
  local t = { format = format, rows = rows, by_name = {}, by_kind = {},
              refused = refused or {} }
  for _, row in ipairs(rows) do
    local name, kind = row[1], row[2]
    if name then
      assert(not t.by_name[name], format .. ": name " .. name .. " twice")
      t.by_name[name] = row
    end
    if kind and not t.by_kind[kind] then t.by_kind[kind] = row end
    assert(not (kind and t.refused[kind]), format .. ": kind " ..
           tostring(kind) .. " both mapped and refused")
  end
  return t
end

-- The refusals of kinds, each named, for one reason: t (or a new table)
-- with kind -> reason for each of kinds.
function M.refusals(reason, kinds, t)
  t = t or {}
  for _, kind in ipairs(kinds) do t[kind] = reason end
  return t
end

-- What the format does with kind: "mapped", "refused" (and the reason) or
-- nil (unsaid: a spec fails).
function M.says(t, kind)
  if t.by_kind[kind] then return "mapped" end
  if t.refused[kind] then return "refused", t.refused[kind] end
end

return M
