-- bonsai.test.coverage: coverage of trees over a test run. A collector
-- counts, per tree and node path, the ticks a node was visited (it had a
-- trace event), its successes, failures, aborts and runs, and the
-- outcomes a node of its kind should show at least once: every node runs;
-- a condition succeeds and fails; a guard aborts its own child ("self",
-- "both") and a lower branch ("lower", "both"); a timeout times out. An
-- outcome never seen is a gap ("never failed"). Scenarios feed the
-- kit's collector by themselves; other agents (a game loop) join with
-- :add(agent), a trace subscription (a:subscribe), so the recorder, the
-- debugger and the game's subscriptions watch them too. Reports: a table
-- (:text), a JSON file for the viewer (:write, format in docs/TESTING.md)
-- and :check{ min = } for CI.

local M = {}

local Coverage = {}
Coverage.__index = Coverage

local function weak() return setmetatable({}, { __mode = "k" }) end

function M.new()
  return setmetatable({ trees = {}, order = {}, known = weak(),
                        subs = weak() }, Coverage)
end

local CONDITIONS = { condition = true, check = true, is_set = true,
                     script_condition = true }
local TIMERS = { timeout = true, time_limit = true }

-- The outcomes a node should show, as { key, gap text }.
local function outcomes(n, kids)
  local list = { { "ran", "never ran" } }
  if CONDITIONS[n.type] then
    list[#list + 1] = { "success", "never succeeded" }
    list[#list + 1] = { "failure", "never failed" }
  elseif n.type == "guard" and #kids == 2 then
    local mode = n.params and n.params.abort or "none"
    if mode == "self" or mode == "both" then
      list[#list + 1] = { "abort_self", "never aborted its child" }
    end
    if mode == "lower" or mode == "both" then
      list[#list + 1] = { "abort_lower", "never aborted a lower branch" }
    end
  elseif TIMERS[n.type] and #kids == 1 then
    list[#list + 1] = { "timed_out", "never timed out" }
  end
  return list
end

-- The version of tree name these nodes make, found once per nodes table.
local function remember(self, nodes, name, v)
  self.known[nodes] = self.known[nodes] or {}
  self.known[nodes][name] = v
  return v
end

-- A tree's structure: its nodes by path, with counters. A tree seen again
-- with other nodes (another version) is kept apart as "name (2)".
function Coverage:tree(name, nodes)
  local known = self.known[nodes]
  if known and known[name] then return known[name] end
  local sig = {}
  for _, n in ipairs(nodes) do sig[#sig + 1] = n.path .. "=" .. n.type end
  sig = table.concat(sig, "\n")
  local versions = self.trees[name]
  if not versions then
    versions = {}
    self.trees[name] = versions
    self.order[#self.order + 1] = name
  end
  for _, v in ipairs(versions) do
    if v.sig == sig then return remember(self, nodes, name, v) end
  end
  local v = { sig = sig, name = #versions == 0 and name or
              (name .. " (" .. (#versions + 1) .. ")"), nodes = {},
              bypath = {} }
  local kids = {}
  for _, n in ipairs(nodes) do
    kids[n.id] = kids[n.id] or {}
    if n.parent then
      kids[n.parent] = kids[n.parent] or {}
      table.insert(kids[n.parent], n)
    end
  end
  for _, n in ipairs(nodes) do
    if not n.hidden then
      local c = { id = n.id, path = n.path, type = n.type, name = n.name,
                  parent = n.parent, ticks = 0, success = 0, failure = 0,
                  aborted = 0, runs = 0, seen = {}, kids = kids[n.id],
                  outcomes = outcomes(n, kids[n.id]) }
      v.nodes[#v.nodes + 1] = c
      v.bypath[n.path] = c
    end
  end
  versions[#versions + 1] = v
  return remember(self, nodes, name, v)
end

-- Under: is path p the node q or below it?
local function under(p, q) return p == q or p:sub(1, #q + 1) == q .. "/" end

-- Counts one tick of an agent of tree name (its events: node, status,
-- again, as a subscription hands them).
function Coverage:feed(name, nodes, tick)
  local v = self:tree(name, nodes)
  local took = {} -- path -> { status -> true } in this tick
  local aborted = {}
  for _, e in ipairs(tick.events) do
    local c = e.node and v.bypath[e.node]
    if c and e.status then
      took[e.node] = took[e.node] or {}
      if not e.again then
        took[e.node][e.status] = true
        if e.status == "success" then c.success = c.success + 1
        elseif e.status == "failure" then c.failure = c.failure + 1
        elseif e.status == "aborted" then
          c.aborted = c.aborted + 1
          aborted[#aborted + 1] = e.node
        elseif e.status == "running" then c.runs = c.runs + 1 end
      end
    end
  end
  for path, st in pairs(took) do
    local c = v.bypath[path]
    c.ticks = c.ticks + 1
    c.seen.ran = true
    if st.success then c.seen.success = true end
    if st.failure then c.seen.failure = true end
    if c.type == "guard" and #c.kids == 2 then
      local check = took[c.kids[1].path] or {}
      local child = took[c.kids[2].path] or {}
      if check.failure and child.aborted then c.seen.abort_self = true end
      if check.success then
        for _, p in ipairs(aborted) do
          if not under(p, path) then c.seen.abort_lower = true end
        end
      end
    elseif TIMERS[c.type] and #c.kids == 1 then
      local child = took[c.kids[1].path] or {}
      if child.aborted and (st.failure or st.success) then
        c.seen.timed_out = true
      end
    end
  end
end

-- :add(agent, name): counts this agent's ticks from now on, each as it
-- ends (name: the tree's name in reports, default a.tree.name); the
-- nodes are read again after a reload (bt.reload), as another version.
function Coverage:add(a, name)
  if self.subs[a] then return self end
  name = name or a.tree.name
  local nodes = a.tree:nodes(a)
  self.subs[a] = a:subscribe(function(agent, events)
    for _, e in ipairs(events) do -- (agent events come first)
      if e.event == "reload" then nodes = agent.tree:nodes(agent) end
      if not e.event then break end
    end
    self:feed(name, nodes, { events = events })
  end)
  return self
end

-- :remove(agent): stops counting its ticks (what was counted stays).
function Coverage:remove(a)
  if self.subs[a] then a:unsubscribe(self.subs[a]) end
  self.subs[a] = nil
  return self
end

-- :report(): { { tree, covered, total, nodes = { { id, path, type,
-- parent, ticks, success, failure, aborted, runs, gaps } } } }
function Coverage:report()
  local out = {}
  for _, name in ipairs(self.order) do
    for _, v in ipairs(self.trees[name]) do
      local r = { tree = v.name, covered = 0, total = 0, nodes = {} }
      for _, c in ipairs(v.nodes) do
        local gaps = {}
        for _, o in ipairs(c.outcomes) do
          r.total = r.total + 1
          if c.seen[o[1]] then r.covered = r.covered + 1
          elseif o[1] == "ran" or c.seen.ran then gaps[#gaps + 1] = o[2] end
        end
        r.nodes[#r.nodes + 1] = { id = c.id, path = c.path, type = c.type,
          name = c.name, parent = c.parent, ticks = c.ticks,
          success = c.success, failure = c.failure, aborted = c.aborted,
          runs = c.runs, gaps = gaps }
      end
      out[#out + 1] = r
    end
  end
  return out
end

local function percent(r)
  if r.total == 0 then return 100 end
  return 100 * r.covered / r.total
end

-- :text(): the report as a table, one row per node, indented as the tree.
function Coverage:text()
  local lines = {}
  for _, r in ipairs(self:report()) do
    lines[#lines + 1] = string.format("tree '%s': %d of %d outcomes " ..
      "covered (%.1f%%)", r.tree, r.covered, r.total, percent(r))
    lines[#lines + 1] = string.format("  %-44s %6s %6s %6s %6s  %s", "node",
      "ticks", "succ", "fail", "abort", "gaps")
    local depth = {}
    for _, n in ipairs(r.nodes) do
      depth[n.id] = n.parent and depth[n.parent] and depth[n.parent] + 1 or 0
      local label = string.rep("  ", depth[n.id]) .. n.name
      lines[#lines + 1] = string.format("  %-44s %6d %6d %6d %6d  %s",
        label, n.ticks, n.success, n.failure, n.aborted,
        table.concat(n.gaps, "; "))
    end
  end
  return table.concat(lines, "\n")
end

-- JSON text of a value made of tables (arrays or records with sorted
-- keys), strings, numbers and booleans.
local function json(v)
  local t = type(v)
  if t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(ch)
      return string.format("\\u%04x", ch:byte())
    end) .. '"'
  end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if v == math.floor(v) and v > -1e15 and v < 1e15 then
      return string.format("%d", v)
    end
    return string.format("%.14g", v)
  end
  if t == "boolean" then return tostring(v) end
  if t == "nil" then return "null" end
  if #v > 0 or next(v) == nil then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = json(x) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = json(k) .. ":" .. json(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end
M.json = json

-- :write(path): the report as JSON (docs/TESTING.md).
function Coverage:write(path)
  local trees = {}
  for _, r in ipairs(self:report()) do
    local nodes = {}
    for i, n in ipairs(r.nodes) do
      nodes[i] = { id = n.id, path = n.path, type = n.type, name = n.name,
                   parent = n.parent, ticks = n.ticks, success = n.success,
                   failure = n.failure, aborted = n.aborted, runs = n.runs,
                   gaps = n.gaps }
    end
    trees[#trees + 1] = { tree = r.tree, covered = r.covered,
                          total = r.total, nodes = nodes }
  end
  local f = assert(io.open(path, "w"))
  f:write(json({ format = "bonsai-coverage", version = 1, trees = trees }),
          "\n")
  f:close()
  return self
end

-- :check{ min = percent, tree = name }: raises when a tree (or the named
-- one) covers less than min percent of its outcomes, listing its gaps.
function Coverage:check(o)
  local min = assert(o and o.min, "coverage:check needs min (a percent)")
  local low = {}
  for _, r in ipairs(self:report()) do
    if (o.tree == nil or r.tree == o.tree) and percent(r) < min then
      local gaps = {}
      for _, n in ipairs(r.nodes) do
        for _, g in ipairs(n.gaps) do
          gaps[#gaps + 1] = "    " .. n.path .. ": " .. g
        end
      end
      low[#low + 1] = string.format("tree '%s' covers %.1f%% of its " ..
        "outcomes (%d of %d), below %g%%:\n%s", r.tree, percent(r),
        r.covered, r.total, min, table.concat(gaps, "\n"))
    end
  end
  if o.tree and not self.trees[o.tree] then
    low[#low + 1] = "tree '" .. o.tree .. "' never ran"
  end
  if #low > 0 then error("bonsai.test coverage: " .. table.concat(low, "\n"), 2) end
  return self
end

-- :reset(): forgets every count (the agents added stay added).
function Coverage:reset()
  self.trees, self.order, self.known = {}, {}, weak()
  return self
end

return M
