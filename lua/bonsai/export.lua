-- bonsai.export: tree:dot(a) and tree:mermaid(a), the tree as Graphviz or
-- Mermaid text, with the statuses of agent a (coloured, and written in each
-- node's label) when one is given. Built from tree:nodes(a), so the picture
-- is of the version the agent runs.

local M = {}

-- Fill colours by status (idle: white).
M.COLORS = {
  idle = "#ffffff", running = "#ffd966", success = "#93c47d",
  failure = "#e06666", aborted = "#b4a7d6", skipped = "#cfe2f3",
}

-- "name" or "name (type)" when the name does not already say the type;
-- the hidden priority wrapper is "priority".
local function title(nd)
  if nd.hidden then return nd.type end
  if nd.name == nd.type or nd.name:sub(1, #nd.type + 1) == nd.type .. "[" then
    return nd.name
  end
  return nd.name .. " (" .. nd.type .. ")"
end

local function detail(nd)
  local p = nd.params
  if p.key and p.op then
    return ("%s %s %s"):format(p.key, p.op, tostring(p.value))
  elseif p.key then return p.key .. " is set"
  elseif p.seconds then return p.seconds .. "s"
  elseif p.times then return p.times == 0 and "forever" or "x" .. p.times
  elseif p.success then return ("success %d, failure %d"):format(p.success,
                                                                  p.failure)
  elseif p.abort then return "abort " .. p.abort
  end
end

local function lines(nd)
  local l = { title(nd) }
  l[#l + 1] = detail(nd)
  if nd.status then l[#l + 1] = "[" .. nd.status .. "]" end
  return l
end

local function dotquote(s)
  return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

function M.dot(tree, agent)
  local nodes = tree:nodes(agent)
  local out = {
    "digraph " .. dotquote(tree.name) .. " {",
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", ' ..
      'fontname="Helvetica"];',
  }
  for _, nd in ipairs(nodes) do
    local attrs = "label=" .. dotquote(table.concat(lines(nd), "\n"))
    if nd.status then
      attrs = attrs .. ", fillcolor=" .. dotquote(M.COLORS[nd.status])
    end
    out[#out + 1] = ("  n%d [%s];"):format(nd.id, attrs)
  end
  for _, nd in ipairs(nodes) do
    if nd.parent then
      out[#out + 1] = ("  n%d -> n%d;"):format(nd.parent, nd.id)
    end
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end

-- Mermaid text in a quoted label: quotes and angle brackets as entities.
local function mmquote(s)
  s = s:gsub("[\"<>#]", { ['"'] = "#quot;", ["<"] = "#lt;", [">"] = "#gt;",
                          ["#"] = "#35;" })
  return '"' .. s .. '"'
end

function M.mermaid(tree, agent)
  local nodes = tree:nodes(agent)
  local out = { "flowchart TD" }
  for _, nd in ipairs(nodes) do
    local l = lines(nd)
    for i, x in ipairs(l) do l[i] = mmquote(x):sub(2, -2) end
    out[#out + 1] = ('  n%d["%s"]'):format(nd.id, table.concat(l, "<br/>"))
  end
  for _, nd in ipairs(nodes) do
    if nd.parent then
      out[#out + 1] = ("  n%d --> n%d"):format(nd.parent, nd.id)
    end
  end
  if agent ~= nil then
    local by = {}
    for _, nd in ipairs(nodes) do
      if nd.status ~= "idle" then
        by[nd.status] = by[nd.status] or {}
        table.insert(by[nd.status], "n" .. nd.id)
      end
    end
    for _, s in ipairs { "running", "success", "failure", "aborted",
                            "skipped" } do
      if by[s] then
        out[#out + 1] = ("  classDef %s fill:%s"):format(s, M.COLORS[s])
        out[#out + 1] = ("  class %s %s"):format(table.concat(by[s], ","), s)
      end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
