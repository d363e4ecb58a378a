-- bonsai.formats.edges: the edge-list text format of the classic Unity
-- behavior tree articles. One statement per line ("#" or "--" start a
-- comment): "Type[id]" (the root), "Parent[id]->Child[id]" (children in
-- line order), "Type[id]{param}" where the node first appears (a count,
-- seconds, policies, a key or RunOnce's then_skip), and
-- "Parent[id]->{Cond[id],...,Child[id]}" (a filter: conditions, then the
-- child). Edges from the one "PriorityNode[id]" are filters of the tree's
-- priority section. A node referenced from two parents is shared: its
-- definition appears under both. parse(text, opts) -> root, { priority }.
local leaves = require "bonsai.nodes.leaves"
local tointeger = require("bonsai.compat").tointeger
local kit = require "bonsai.formats.kit"

local M = {}

local MAX_NODES, MAX_DEPTH = kit.MAX_NODES, kit.MAX_DEPTH -- after sharing

-- The name table (formats/kit.lua): rows { Type, kind, shape =
-- "composite" | "branches" (2 or 3 children) | "decorator" | "leaf",
-- param = how the {param} is read }; the kinds refused, by name. Edges
-- written ->{...} make filters; the one PriorityNode, the priority section.
-- The format is read only: the first row of a kind is its name.
local NAMES = kit.names("edges", {
  { "Sequence", "sequence", shape = "composite" },
  { "Selector", "selector", shape = "composite" },
  { "Fallback", "selector", shape = "composite" },
  { "ReactiveSequence", "reactive_sequence", shape = "composite" },
  { "ReactiveSelector", "reactive_selector", shape = "composite" },
  { "ActiveSelector", "reactive_selector", shape = "composite" },
  { "Parallel", "parallel", shape = "composite", param = "policies" },
  { "IfThenElse", "if_then_else", shape = "branches" },
  { "WhileDoElse", "while_do_else", shape = "branches" },
  { "Inverter", "invert", shape = "decorator" },
  { "Invert", "invert", shape = "decorator" },
  { "Succeeder", "force_success", shape = "decorator" },
  { "ForceSuccess", "force_success", shape = "decorator" },
  { "Failer", "force_failure", shape = "decorator" },
  { "ForceFailure", "force_failure", shape = "decorator" },
  { "Repeat", "repeater", shape = "decorator", param = "times" },
  { "Repeater", "repeater", shape = "decorator", param = "times" },
  { "Retry", "retry", shape = "decorator", param = "times" },
  { "RepeatUntilFail", "repeat_until_failure", shape = "decorator" },
  { "RepeatUntilFailure", "repeat_until_failure", shape = "decorator" },
  { "Limit", "limit", shape = "decorator", param = "times" },
  { "Timeout", "timeout", shape = "decorator", param = "seconds" },
  { "TimeLimit", "time_limit", shape = "decorator", param = "seconds" },
  { "Cooldown", "cooldown", shape = "decorator", param = "seconds" },
  { "RunOnce", "run_once", shape = "decorator", param = "then_skip" },
  { "SkipUnlessUpdated", "skip_unless_updated", shape = "decorator", param = "key" },
  { "WaitValueUpdate", "wait_value_update", shape = "decorator", param = "key" },
  { "Wait", "wait", shape = "leaf", param = "seconds" },
  { "RandomSelector", "random_selector", shape = "composite", param = "key" },
  { "->{...}", "filter" }, -- Parent[id]->{Cond[id],...,Child[id]}
  { "PriorityNode", "priority" }, -- the priority section's filters
}, kit.refusals("has no edge-list equivalent", {
  "check", "is_set", "monitor", "guard", "delay", "utility_selector",
  "subtree", "keep_running_until_failure", "event", "wait_event",
  "event_guard",
}, {
  action = "is a leaf the game registered (bt.register), by its name",
  condition = "is a leaf the game registered (bt.register), by its name",
  control = "is a node the game defined (bt.define), by its name",
}))

M.names = { NAMES } -- what each kind is in the file (formats_kinds_spec)

-- The node types an edge list writes (a row with a shape), for the
-- did-you-mean of a type that is none of them.
local TYPES = {}
for name, row in pairs(NAMES.by_name) do
  if row.shape then TYPES[name] = true end
end

local function fail(ctx, line, node, msg)
  kit.fail(kit.at(ctx.file, line), node, msg)
end

-- Reads "Type[id]" or "Type[id]{param}" at the start of s: the reference
-- and the rest of s.
local function ref(ctx, line, s)
  local ty, id, rest = s:match("^%s*([%a_][%w_.]*)%[([%w_]+)%](.*)$")
  if not ty then fail(ctx, line, nil, "expected Type[id] at '" .. s .. "'") end
  local param
  if rest:match("^{") then
    param, rest = rest:match("^{([^{}]*)}(.*)$")
    if not param then fail(ctx, line, ty .. "[" .. id .. "]", "unclosed {") end
  end
  return { type = ty, id = id, param = param, line = line }, rest
end

-- The node record of reference r: the first appearance defines it.
local function define(ctx, r)
  local label = r.type .. "[" .. r.id .. "]"
  local n = ctx.nodes[r.id]
  if not n then
    ctx.count = ctx.count + 1
    if ctx.count > MAX_NODES then
      fail(ctx, r.line, label, "more than " .. MAX_NODES .. " nodes")
    end
    n = { type = r.type, id = r.id, param = r.param, line = r.line,
          label = label, kids = {} }
    ctx.nodes[r.id] = n
    return n
  end
  if n.type ~= r.type then
    fail(ctx, r.line, label, "id " .. r.id .. " is " .. n.label ..
         " (line " .. n.line .. ")")
  end
  if r.param then
    fail(ctx, r.line, label, "a parameter is written where the node first " ..
         "appears (line " .. n.line .. ")")
  end
  return n
end

local function number(ctx, n, text)
  local v = kit.number(text)
  if not v then
    fail(ctx, n.line, n.label, "bad number '" .. tostring(text) .. "'")
  end
  return tointeger(v) or v
end

-- The args of a leaf from its {param}: "k=v,k2=v2", or one value (args[1]);
-- values converted (numbers, booleans), or as written when `raw`.
local function args(n, raw)
  if not n.param or n.param:match("^%s*$") then return nil end
  local value = raw and function(v) return v end or leaves.value
  local a = {}
  for item in n.param:gmatch("[^,]+") do
    local k, v = item:match("^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$")
    if k then a[k] = value(v)
    else a[#a + 1] = value(item:match("^%s*(.-)%s*$")) end
  end
  return a
end

local build

-- The Bonsai node of record n (kind: "condition" inside a filter's
-- conditions), expanded below it; stack: the records being built.
function build(ctx, n, kind, stack)
  if stack[n] then
    fail(ctx, n.line, n.label, "cycle: " .. n.label .. " is its own " ..
         "descendant")
  end
  ctx.built = ctx.built + 1
  if ctx.built > MAX_NODES then
    fail(ctx, n.line, n.label, "the tree expands to more than " ..
         MAX_NODES .. " nodes")
  end
  stack.depth = stack.depth + 1
  if stack.depth > MAX_DEPTH then
    fail(ctx, n.line, n.label, "nested deeper than " .. MAX_DEPTH ..
         " levels")
  end
  stack[n] = true
  local game = leaves.game(ctx.bt, n.type) -- the game's own names win
  local ty = not game and NAMES.by_name[n.type]
  local node
  if n.type == "PriorityNode" then
    fail(ctx, n.line, n.label, "the PriorityNode is not a child")
  elseif game == "define" then -- {param} as written, named by its label
    local kids = {}
    for i, e in ipairs(n.kids) do kids[i] = ctx.edge(e, stack) end
    local ok, res = pcall(leaves.defined, ctx.bt, n.type, args(n, true), kids,
                          n.label)
    if not ok then fail(ctx, n.line, n.label, res) end
    node = res
  elseif not ty then -- a registered leaf
    if #n.kids > 0 then
      fail(ctx, n.kids[1].line, n.label, "unknown node type with children" ..
           leaves.suggest(ctx.bt, n.type, TYPES) .. " (a composite or " ..
           "decorator of the game's own: bt.define it)")
    end
    local ok, res = pcall(leaves.leaf, ctx.bt, kind or "action", n.type,
                          args(n), nil, n.label, TYPES)
    if not ok then fail(ctx, n.line, n.label, res) end
    node = res
  else
    node = { type = ty[2], name = n.label }
    local shape, param = ty.shape, ty.param
    if param == "times" or param == "seconds" then
      if not n.param then
        fail(ctx, n.line, n.label, "needs {" .. param .. "}")
      end
      node[param] = number(ctx, n, n.param)
    elseif param == "policies" then
      local s, f = (n.param or ""):match("^%s*([%w]*)%s*,?%s*([%w]*)%s*$")
      if not s then
        fail(ctx, n.line, n.label, "bad policies '" .. n.param .. "'")
      end
      local function policy(p)
        if p == "all" or p == "one" then return p end
        return number(ctx, n, p)
      end
      if s ~= "" then node.success = policy(s) end
      if f ~= "" then node.failure = policy(f) end
    elseif param == "key" then
      node.key = (n.param or ""):match("^%s*(.-)%s*$")
      if node.key == "" then
        fail(ctx, n.line, n.label, "needs {key}, a blackboard key")
      end
    elseif param == "then_skip" and n.param then -- RunOnce{then_skip}
      if not n.param:match("^%s*then_skip%s*$") then
        fail(ctx, n.line, n.label, "takes {then_skip} or no parameter")
      end
      node.then_skip = true
    elseif n.param then
      fail(ctx, n.line, n.label, "takes no parameter")
    end
    if shape == "leaf" and #n.kids > 0 then
      fail(ctx, n.kids[1].line, n.label, "takes no children")
    elseif shape == "decorator" and #n.kids ~= 1 then
      fail(ctx, (n.kids[2] or n).line, n.label, "needs exactly one child")
    elseif shape == "branches" and (#n.kids < 2 or #n.kids > 3) then
      fail(ctx, (n.kids[4] or n).line, n.label, "needs 2 or 3 children " ..
           "(condition, then, else)")
    elseif shape == "composite" and #n.kids == 0 then
      fail(ctx, n.line, n.label, "needs children")
    end
    for i, e in ipairs(n.kids) do node[i] = ctx.edge(e, stack) end
  end
  stack[n] = nil
  stack.depth = stack.depth - 1
  return node
end

-- parse(text, opts): the root node and { priority = filters } (or nil).
function M.parse(text, opts)
  local ctx = { file = opts.file or "edges", bt = opts.bt, nodes = {},
                count = 0, built = 0 }
  local root, prio
  local lineno = 0
  for raw in (text .. "\n"):gmatch("([^\n]*)\n") do
    lineno = lineno + 1
    local s = raw:gsub("%-%-.*$", ""):gsub("#.*$", ""):gsub("\r$", "")
    if s:match("%S") then
      local parent, rest = ref(ctx, lineno, s)
      local p = define(ctx, parent)
      if rest:match("^%s*$") then
        if root then
          fail(ctx, lineno, p.label, "a second root line (the root is " ..
               root.label .. ", line " .. root.line .. ")")
        end
        root = p
      else
        local target = rest:match("^%s*%->%s*(.-)%s*$")
        if not target then fail(ctx, lineno, p.label, "expected '->'") end
        local edge = { line = lineno }
        if target:match("^{") then
          local inner = target:match("^{(.*)}$")
          if not inner then fail(ctx, lineno, p.label, "unclosed {") end
          edge.filter = {}
          local r = inner
          repeat
            local c
            c, r = ref(ctx, lineno, r)
            edge.filter[#edge.filter + 1] = define(ctx, c)
            r = r:match("^%s*,(.*)$") or (r:match("^%s*$") and "") or
                fail(ctx, lineno, p.label, "expected ',' in {...}")
          until r == ""
        else
          local c, r = ref(ctx, lineno, target)
          if not r:match("^%s*$") then
            fail(ctx, lineno, p.label, "unexpected '" .. r .. "'")
          end
          edge.child = define(ctx, c)
        end
        if p.type == "PriorityNode" then
          if prio and prio ~= p then
            fail(ctx, lineno, p.label, "a second PriorityNode (the first " ..
                 "is " .. prio.label .. ", line " .. prio.line .. ")")
          end
          if not edge.filter then
            fail(ctx, lineno, p.label, "the priority section takes filters: " ..
                 p.label .. "->{Condition[id],...,Child[id]}")
          end
          prio = p
        end
        p.kids[#p.kids + 1] = edge
      end
    end
  end
  if not root then error(ctx.file .. ": no root line (Type[id] alone)", 0) end
  if root.type == "PriorityNode" then
    fail(ctx, root.line, root.label, "the PriorityNode cannot be the root")
  end
  -- The node of one edge: a child, or a filter of conditions and a child.
  function ctx.edge(e, stack)
    if e.child then return build(ctx, e.child, nil, stack) end
    local f = { type = "filter", conditions = {} }
    for i = 1, #e.filter - 1 do
      f.conditions[i] = build(ctx, e.filter[i], "condition", stack)
    end
    f[1] = build(ctx, e.filter[#e.filter], nil, stack)
    return f
  end
  local node = build(ctx, root, nil, { depth = 0 })
  local reached = {}
  local function mark(n)
    if reached[n] then return end
    reached[n] = true
    for _, e in ipairs(n.kids) do
      if e.child then mark(e.child) end
      for _, c in ipairs(e.filter or {}) do mark(c) end
    end
  end
  mark(root)
  local topts
  if prio then
    mark(prio)
    topts = { priority = {} }
    for i, e in ipairs(prio.kids) do
      topts.priority[i] = ctx.edge(e, { depth = 0 })
    end
  end
  local lost
  for _, n in pairs(ctx.nodes) do
    if not reached[n] and (not lost or n.line < lost.line or
       n.line == lost.line and n.id < lost.id) then
      lost = n
    end
  end
  if lost then
    fail(ctx, lost.line, lost.label, "not reachable from the root")
  end
  return node, topts
end

function M.export()
  error("export edges: not supported (export to 'btcpp' or 'behavior3')", 0)
end

return M
