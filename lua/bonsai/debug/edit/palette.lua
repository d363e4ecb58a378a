-- bonsai.debug.edit.palette: the commands that describe what the page may
-- write: palette (the kinds but hidden ones, the game's bt.define'd types
-- and registered leaves, a script node, each with the parameters it takes
-- and their types for the page's fields) and script (a script's parse
-- error, as it is typed).
local M = {}

-- The conditions every node takes (scripts; docs/DEBUGGER.md).
local CONDITIONS = { "skip_if", "success_if", "failure_if", "run_while",
                     "on_success", "on_failure", "on_halted", "post" }

-- The type of a kind's parameter p, for the page's field.
local function ptype(row, p)
  return row.number == p and "number" or
         (p == "abort" and "enum:self,lower,both,none") or
         (p == "op" and "enum:<,<=,>,>=,==,~=") or
         (p == "then_skip" and "boolean") or
         ((p == "times" or p == "success" or p == "failure" or
           p == "timeout") and "number") or
         (p == "value" and "value") or "string"
end

-- Parameters of a row, with their types.
local function params(row)
  local list = {}
  for _, p in ipairs(row.params or {}) do
    list[#list + 1] = { name = p, type = ptype(row, p) }
  end
  return list
end

-- The names of a table's keys, sorted.
local function sorted(t)
  local names = {}
  for name in pairs(t or {}) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- palette: { palette = { { type, class, params, from } }, conditions }.
function M.palette(E)
  local list = {}
  for _, row in ipairs(E.bt.KINDS) do
    if row.class ~= "hidden" and row.name ~= "control" then
      list[#list + 1] = { type = row.name, class = row.class,
                          params = params(row), from = "kind" }
    end
  end
  for _, name in ipairs(sorted(E.bt._defined)) do
    list[#list + 1] = { type = name, class = "defined", params = {},
                        from = "define" }
  end
  for _, name in ipairs(sorted(E.bt._registered)) do
    list[#list + 1] = { type = name, class = "leaf", params = {},
                        from = "leaf" }
  end
  list[#list + 1] = { type = "script", class = "leaf", from = "script",
                      params = { { name = "code", type = "script" } } }
  return { palette = list, conditions = CONDITIONS }
end

-- script: whether text parses as a script: { ok = true } or { error =
-- "at character N: ...", at = N }.
function M.script(E, cmd)
  if type(cmd.text) ~= "string" then return nil, "text must be a string" end
  local ok, err = E.bt.parse_script(cmd.text)
  if ok then return { ok = true } end
  return { error = err, at = tonumber(tostring(err):match("character (%d+)")) }
end

return M
