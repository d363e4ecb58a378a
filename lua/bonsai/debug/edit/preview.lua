-- bonsai.debug.edit.preview: the dry run of the reload's migration over
-- the live agents (docs/RELOAD.md's rules: a running node is kept when
-- the draft has a node of the same path and type and its parent is kept),
-- and the agents a command names.
local cjson = require "cjson.safe"
local node = require "bonsai.debug.edit.node"

local M = {}

-- The running nodes of an agent: { path = type }, and their paths in
-- pre-order.
local function running(tree, agent)
  local list, order = {}, {}
  for _, nd in ipairs(tree:nodes(agent)) do
    if not nd.hidden and (nd.status == "running" or
                          nd.status == "aborting") then
      list[nd.path] = nd.type
      order[#order + 1] = nd.path
    end
  end
  return list, order
end

-- The agents a command names (agents = { ids }) among d's tree's: a set
-- of agent objects, nil when the command names none (all of them), or
-- false, why.
function M.chosen(E, d, ids)
  if ids == nil or ids == cjson.null then return nil end
  if type(ids) ~= "table" or #ids == 0 or #ids > 4096 then
    return false, "agents must be a list of agent numbers"
  end
  local want, set = {}, {}
  for _, id in ipairs(ids) do
    if type(id) ~= "number" then
      return false, "agents must be a list of agent numbers"
    end
    want[id] = true
  end
  for agent, st in pairs(E.S.recording().ids) do
    if want[st.id] then
      if st.v.tree ~= d.tree.name then
        return false, "agent " .. st.id .. " runs tree " ..
                      node.named(st.v.tree) .. ", not " ..
                      node.named(d.tree.name)
      end
      set[agent] = true
      want[st.id] = nil
    end
  end
  local missing = next(want)
  if missing then return false, "no agent " .. node.named(missing) end
  return set
end

-- What an agent would keep and abort: its running paths, kept when new
-- (path -> type of the draft's nodes) has the same type there and the
-- parent is kept (or was not running).
local function migrate(tree, agent, new)
  local run, order = running(tree, agent)
  local keep, abort, kept = {}, {}, {}
  for _, p in ipairs(order) do
    local up = p:match("^(.*)/[^/]*$")
    if new[p] == run[p] and (up == nil or kept[up] or not run[up]) then
      kept[p] = true
      keep[#keep + 1] = p
    else
      abort[#abort + 1] = p
    end
  end
  return keep, abort
end

-- The summary of the groups (key -> count; order: the keys): "41 agents
-- abort chase/strike, 12 agents keep patrol/walk", the largest first.
local function summary(groups, order)
  table.sort(order, function(x, y)
    if groups[x] ~= groups[y] then return groups[x] > groups[y] end
    return x < y
  end)
  local parts = {}
  for _, k in ipairs(order) do
    parts[#parts + 1] = groups[k] == 1 and
      "1 agent " .. k:gsub("^(%a+) ", "%1s ", 1):gsub("^idle$", "is idle") or
      groups[k] .. " agents " .. k
  end
  return table.concat(parts, ", ")
end

-- preview: { tree [, agents] }: for each agent of the tree (or each of
-- agents = { ids }), its running nodes kept and aborted; and a summary,
-- agents grouped by what they do.
function M.preview(E, cmd)
  local d, why = E:draft(cmd.tree)
  if not d then return nil, why end
  local only
  only, why = M.chosen(E, d, cmd.agents)
  if only == false then return nil, why end
  local ok, t = E:compile(d, d.root)
  if not ok then return nil, tostring(t) end
  local new = {}
  for _, nd in ipairs(t:nodes()) do
    if not nd.hidden then new[nd.path] = nd.type end
  end
  local agents, groups, order = {}, {}, {}
  for agent, st in pairs(E.S.recording().ids) do
    if st.v.tree == d.tree.name and (only == nil or only[agent]) then
      local keep, abort = migrate(d.tree, agent, new)
      agents[#agents + 1] = { agent = st.id, keep = keep, abort = abort }
      local leafk, leafa = keep[#keep], abort[#abort]
      local key = leafa and "abort " .. leafa or
                  leafk and "keep " .. leafk or "idle"
      if not groups[key] then
        groups[key] = 0
        order[#order + 1] = key
      end
      groups[key] = groups[key] + 1
    end
  end
  table.sort(agents, function(x, y) return x.agent < y.agent end)
  return { agents = agents, summary = summary(groups, order),
           version = d.serial }
end

return M
