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
-- The exporter writes a kind under its first row's name (or under the name
-- a node imported from the file had: ActiveSelector stays ActiveSelector).
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
    leaves.origin[node] = { format = "edges", name = n.type, param = n.param,
                            children = kids } -- (for the exporter)
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

-- Export ----------------------------------------------------------------------

-- A node's place in the exporter's messages.
local function xfail(path, msg)
  error("export edges: " .. path .. ": " .. msg, 0)
end

-- A value of a {param} as the reader gives it back (leaves.value), or nil
-- when the text cannot hold it (a separator, a string read as a number).
local function param_text(v)
  if type(v) == "boolean" then return tostring(v) end
  if type(v) == "number" then
    local t = (tointeger(v) and ("%d"):format(v)) or ("%.17g"):format(v)
    if leaves.value(t) == v then return t end
    return nil
  end
  if type(v) == "string" and not v:find("[,{}=\n#]") and
     not v:find("%-%-") and v == v:match("^%s*(.-)%s*$") and
     leaves.value(v) == v then
    return v
  end
end

-- The node fields a row writes in its {param}, besides type and name.
local PARAM_FIELDS = { times = { "times" }, seconds = { "seconds" },
  policies = { "success", "failure" }, key = { "key" },
  then_skip = { "then_skip" } }

-- The fields of a leaf an edge list writes: its name, the leaf, its args.
local LEAF_FIELDS = { type = true, name = true, leaf = true, args = true }

-- What node n is written as: { type = the file's name, param = text or
-- nil, kids = { nodes }, leaf = "action" | "condition" | nil }; raises
-- for what the format cannot hold, with n's path.
local function shape_of(n, path)
  local o = leaves.origin[n]
  if o and o.format == "edges" then -- a node of the game's (bt.define)
    return { type = o.name, param = o.param, kids = o.children or {} }
  end
  local kind, leaf, a, refs = leaves.named(n)
  if leaf then
    if refs and next(refs) then
      xfail(path, "leaf '" .. leaf .. "' reads blackboard ports, which " ..
            "an edge list cannot write")
    end
    for k in pairs(leaves.origin[n] and {} or n) do
      if type(k) ~= "number" and not LEAF_FIELDS[k] then
        xfail(path, "'" .. tostring(k) .. "' has no edge-list equivalent")
      end
    end
    local items, keys = {}, {}
    for i, v in ipairs(a or {}) do
      items[i] = param_text(v) or
                 xfail(path, "argument " .. i .. " cannot be written")
    end
    for k in pairs(a or {}) do
      if type(k) ~= "number" or k < 1 or k > #(a or {}) then
        if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
          xfail(path, "argument '" .. tostring(k) .. "' cannot be written")
        end
        keys[#keys + 1] = k
      end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      items[#items + 1] = k .. "=" .. (param_text(a[k]) or
        xfail(path, "argument '" .. k .. "' cannot be written"))
    end
    return { type = leaf, param = #items > 0 and table.concat(items, ",") or
             nil, kids = {}, leaf = kind }
  end
  local row = NAMES.by_kind[n.type]
  if not row or not row.shape then
    xfail(path, "'" .. tostring(n.type) .. "' " .. (NAMES.refused[n.type] or
          "has no edge-list equivalent"))
  end
  local known = { type = true, name = true }
  for _, f in ipairs(PARAM_FIELDS[row.param] or {}) do known[f] = true end
  for k in pairs(n) do
    if type(k) ~= "number" and not known[k] then
      xfail(path, "'" .. tostring(k) .. "' has no edge-list equivalent")
    end
  end
  local param
  if row.param == "policies" then
    local s, f = n.success, n.failure
    if s ~= nil or f ~= nil then
      param = (s ~= nil and tostring(s) or "") .. "," ..
              (f ~= nil and tostring(f) or "")
    end
  elseif row.param == "then_skip" then
    param = n.then_skip and "then_skip" or nil
  elseif row.param then
    param = param_text(n[row.param])
    if param == nil then
      xfail(path, "needs its '" .. row.param .. "' written as text")
    end
  end
  local kids = {}
  for i, c in ipairs(n) do kids[i] = c end
  local ty = type(n.name) == "string" and n.name:match("^([%a_][%w_.]*)%[")
  if not (ty and NAMES.by_name[ty] and NAMES.by_name[ty][2] == n.type) then
    ty = row[1] -- (else the name the file gave it: ActiveSelector[1])
  end
  return { type = ty, param = param, kids = kids }
end

-- The id node n names for itself written as type ty: "Type[id]" gives
-- id, a bare name ("chase") is one; nil for other names.
local function ownid(n, ty)
  return type(n.name) == "string" and
    (n.name:match("^" .. ty:gsub("%p", "%%%0") .. "%[([%w_]+)%]$") or
     n.name:match("^([%w_]+)$"))
end

-- The writer: the lines written, the ids given to nodes, the ids nodes
-- claim (their own, the first node in pre-order to claim one has it).
local function writer()
  local w = { lines = {}, ids = {}, claimed = {}, taken = {}, next = 1 }
  -- The reference of node n (written as type ty), with its {param} where
  -- it first appears; its id its own when it claimed it, else the first
  -- number no node claimed or has.
  function w.ref(n, ty, param)
    local id = w.ids[n]
    local first = id == nil
    if first then
      id = ownid(n, ty)
      if not id or w.claimed[id] ~= n or w.taken[id] then
        while w.claimed[tostring(w.next)] or w.taken[tostring(w.next)] do
          w.next = w.next + 1
        end
        id = tostring(w.next)
      end
      w.taken[id] = true
      w.ids[n] = id
    end
    return ty .. "[" .. id .. "]" .. (first and param and
                                      "{" .. param .. "}" or "")
  end
  return w
end

-- The ids the nodes under n claim, in pre-order (what cannot be written
-- is left to the writing pass, which says why).
local function claim(w, n)
  if type(n) ~= "table" then return end
  if n.type == "filter" and not leaves.origin[n] then
    for _, c in ipairs(n.conditions or {}) do claim(w, c) end
    return claim(w, n[1])
  end
  local ok, sh = pcall(shape_of, n, "")
  if not ok then return end
  local own = ownid(n, sh.type)
  if own and not w.claimed[own] then w.claimed[own] = n end
  for _, c in ipairs(sh.kids) do claim(w, c) end
end

local emit

-- Writes the edge from parent ref p to child c (a filter: its conditions
-- and child in braces), then what lies below.
local function edge(w, p, c, path)
  if type(c) == "table" and c.type == "filter" and not leaves.origin[c] then
    for k in pairs(c) do
      if type(k) ~= "number" and k ~= "type" and k ~= "conditions" then
        xfail(path, "a filter's '" .. tostring(k) .. "' has no edge-list " ..
              "equivalent")
      end
    end
    if #c ~= 1 then xfail(path, "a filter needs one child") end
    local items, below = {}, {}
    for i, cond in ipairs(c.conditions or {}) do
      local sp = path .. "/condition[" .. i .. "]"
      local sh = shape_of(cond, sp)
      if sh.leaf == "action" then
        xfail(sp, "an action among a filter's conditions (it would read " ..
              "back as a condition)")
      end
      items[#items + 1] = w.ref(cond, sh.type, sh.param)
      below[#below + 1] = { cond, sh, sp }
    end
    local sp = path .. "/" .. tostring(type(c[1]) == "table" and
                                       (c[1].name or c[1].type))
    local sh = shape_of(c[1], sp)
    items[#items + 1] = w.ref(c[1], sh.type, sh.param)
    below[#below + 1] = { c[1], sh, sp }
    w.lines[#w.lines + 1] = p .. "->{" .. table.concat(items, ",") .. "}"
    for _, b in ipairs(below) do emit(w, b[1], b[2], b[3]) end
    return
  end
  if type(c) ~= "table" or type(c.type) ~= "string" then
    xfail(path, "not a node")
  end
  local sh = shape_of(c, path)
  if sh.leaf == "condition" then
    xfail(path, "a condition outside a filter's conditions (it would " ..
          "read back as an action)")
  end
  w.lines[#w.lines + 1] = p .. "->" .. w.ref(c, sh.type, sh.param)
  emit(w, c, sh, path)
end

-- The edges below node n (sh: its shape).
function emit(w, n, sh, path)
  local p = w.ref(n, sh.type)
  for i, c in ipairs(sh.kids) do
    edge(w, p, c, path .. "/" .. (type(c) == "table" and
      (c.name or tostring(c.type) .. "[" .. i .. "]") or "[" .. i .. "]"))
  end
end

-- export(root, opts): the edge-list text of a tree (opts.opts: its tree
-- options, whose priority section is written as the PriorityNode's
-- filters). Names "Type[id]" keep their ids; other nodes get numbers (a
-- node named "chase" becomes Type[chase]).
function M.export(root, opts)
  local topts = opts and opts.opts or {}
  local w = writer()
  claim(w, root)
  for _, f in ipairs(topts.priority or {}) do claim(w, f) end
  local path = tostring(root.name or root.type)
  if root.type == "filter" then xfail(path, "a filter cannot be the root") end
  local sh = shape_of(root, path)
  if sh.leaf == "condition" then
    xfail(path, "a condition cannot be the root")
  end
  local head = "# " .. tostring(opts and opts.name or "tree") ..
               ": written by Bonsai's edge-list exporter"
  w.lines[1] = head
  w.lines[2] = w.ref(root, sh.type, sh.param)
  emit(w, root, sh, path)
  if topts.priority and #topts.priority > 0 then
    local prio = {}
    local p = w.ref(prio, "PriorityNode")
    for i, f in ipairs(topts.priority) do
      if type(f) ~= "table" or f.type ~= "filter" then
        xfail("priority[" .. i .. "]", "the priority section holds filters")
      end
      edge(w, p, f, "priority[" .. i .. "]")
    end
  end
  return table.concat(w.lines, "\n") .. "\n"
end

return M
