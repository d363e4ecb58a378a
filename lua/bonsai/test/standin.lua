-- bonsai.test.standin: where a scenario's stand-ins go. A tree is given as
-- its definition (node tables, a function returning them, or a file); the
-- definition is compiled once to learn every node's path (tree:nodes()),
-- walked beside the compiled nodes, and copied with the chosen leaves
-- replaced. The user's node tables are never changed: only the tables on
-- the way to a stand-in are copied. Subtrees are reached through the
-- definitions the scenario names in `trees`; a stand-in that cannot be
-- reached is an error, never a silent miss. Public API of bonsai only.

local bt = require "bonsai"

local M = {}

-- Suffix of the trees the kit compiles: bt.tree keeps trees by name for
-- bt.subtree, and a test copy must not take the game's tree's place.
M.SUFFIX = "~test"

local FORMATS = { json = "behavior3", b3 = "behavior3", xml = "btcpp",
                  bt = "edges" }

-- A definition as (root node, tree options), from a node, a function
-- returning them, or a file path; nil for a compiled tree (nil, nil, the
-- tree when a function returned one).
function M.definition(src, opts)
  if bt.isnode(src) then return src, opts end
  if type(src) == "function" then
    local root, o = src()
    if bt.istree(root) then return nil, nil, root end -- it built the tree
    return root, o or opts
  end
  if type(src) == "string" then
    local ext = src:match("%.([^./]+)$")
    local f, err = io.open(src, "rb")
    if not f then error("bonsai.test: cannot read tree file: " .. err, 0) end
    local text = f:read("*a")
    f:close()
    if ext == "lua" then
      local root, o = bt.import(text, "lua", { file = src })
      if bt.istree(root) then return nil, nil, root end
      return root, o or opts
    end
    if not FORMATS[ext] then
      error("bonsai.test: " .. src .. ": no format for this file", 0)
    end
    local root, o = bt.import(text, FORMATS[ext], { file = src })
    return root, o or opts
  end
  return nil
end

-- Options with name replaced (the tree's own options are not changed).
local function named(opts, name)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.name = name
  return o
end
M.named = named

-- The children of a compiled node, by id: { [id] = { child ids } }.
local function children_of(nodes)
  local kids = {}
  for _, n in ipairs(nodes) do
    kids[n.id] = kids[n.id] or {}
    if n.parent then
      kids[n.parent] = kids[n.parent] or {}
      table.insert(kids[n.parent], n.id)
    end
  end
  return kids
end

-- A definition node's child nodes, in the order the compiled tree keeps
-- them (a filter's or monitor's conditions first, then its array part).
local function def_children(n)
  local list = {}
  for _, c in ipairs(n.conditions or {}) do list[#list + 1] = c end
  for _, c in ipairs(n) do list[#list + 1] = c end
  return list
end

-- Walks a definition beside its compiled nodes. Returns
-- place[id] = { def = node table, holder = parent entry, slot = how the
-- parent holds it } for every node reached. A subtree's inner root is
-- reached through trees[name] (its definition), else its nodes stay out.
local function walk(root, opts, nodes, trees)
  local byid, kids, place = {}, children_of(nodes), {}
  for _, n in ipairs(nodes) do byid[n.id] = n end
  local visit
  local function visit_list(ids, defs, holder)
    if #ids ~= #defs then return end -- a kind this walk does not know
    for i, id in ipairs(ids) do visit(id, defs[i], holder, i) end
  end
  function visit(id, def, holder, slot)
    local n = byid[id]
    if type(def) ~= "table" then return end
    local entry = { def = def, holder = holder, slot = slot, node = n }
    place[id] = entry
    if n.type == "subtree" then
      local inner = def.tree
      local name = type(inner) == "string" and inner or
                   (bt.istree(inner) and inner.name)
      local idef = trees and name and trees[name]
      if idef then
        local iroot, iopts = M.definition(idef)
        entry.inner = { root = iroot, opts = iopts, name = name }
        visit_list(kids[id], { iroot }, entry)
      end
      return
    end
    visit_list(kids[id], def_children(def), entry)
  end
  local top = kids[nodes[1].id]
  if nodes[1].hidden then -- the priority wrapper: its filters, then root
    local defs = {}
    for _, p in ipairs((opts or {}).priority or {}) do defs[#defs + 1] = p end
    defs[#defs + 1] = root
    visit_list(top, defs, { priority = true })
  else
    visit(nodes[1].id, root, nil, nil)
  end
  return place
end

-- Is this compiled node a leaf (a node without children)?
local function isleaf(kids, id) return #kids[id] == 0 end

local CONDITIONS = { condition = true, check = true, is_set = true,
                     script_condition = true }
M.CONDITIONS = CONDITIONS

-- The ids a stand-in key names: every leaf registered under that name,
-- else the node whose path is the key or ends with "/" .. key (one only).
-- Raises a message naming the tree and the leaves it has when none does.
local function resolve(key, nodes, kids, tree_name)
  local ids = {}
  for _, n in ipairs(nodes) do
    if n.params and n.params.leaf == key and isleaf(kids, n.id) then
      ids[#ids + 1] = n.id
    end
  end
  if #ids > 0 then return ids end
  local found
  for _, n in ipairs(nodes) do
    if n.path == key then found = { n } break end
    if n.path:sub(-#key - 1) == "/" .. key then
      found = found or {}
      found[#found + 1] = n
    end
  end
  local leaves, names = {}, {}
  for _, n in ipairs(nodes) do
    if isleaf(kids, n.id) then
      leaves[#leaves + 1] = n.path
      names[n.name] = true
      if n.params and n.params.leaf then names[n.params.leaf] = true end
    end
  end
  if not found then
    error(string.format("bonsai.test: stand-in '%s': no leaf registered " ..
      "by that name and no node at that path in tree '%s'%s; its leaves: %s",
      key, tree_name, bt._suggest(key, names), table.concat(leaves, ", ")),
      0)
  end
  if #found > 1 then
    local paths = {}
    for _, n in ipairs(found) do paths[#paths + 1] = n.path end
    error(string.format("bonsai.test: stand-in '%s' names %d nodes of " ..
      "tree '%s' (%s): give more of the path", key, #found, tree_name,
      table.concat(paths, ", ")), 0)
  end
  local n = found[1]
  if not isleaf(kids, n.id) then
    error(string.format("bonsai.test: stand-in '%s': %s is a %s, not a " ..
      "leaf (stand-ins replace leaves)", key, n.path, n.type), 0)
  end
  return { n.id }
end

-- Copies the definition with the nodes of wanted (id -> stand-in maker)
-- replaced: returns the new root and tree options. make(node) builds the
-- stand-in node from a compiled node, its key and its definition node.
local function rebuild(root, opts, place, wanted, make, name)
  local copies = {} -- entry -> its copy (a node table)
  local function copy_of(entry)
    if copies[entry] then return copies[entry] end
    local c = setmetatable({}, getmetatable(entry.def))
    for k, v in pairs(entry.def) do c[k] = v end
    if c.conditions then
      local l = {}
      for i, v in ipairs(c.conditions) do l[i] = v end
      c.conditions = l
    end
    copies[entry] = c
    return c
  end
  local inner_roots = {} -- subtree entry -> its copied inner root holder
  local top = { root = root, priority = nil }
  local function put(entry, node)
    local holder = entry.holder
    if holder == nil then top.root = node return end
    if holder.priority then
      local list = (opts or {}).priority or {}
      if entry.slot > #list then top.root = node return end
      if not top.priority then
        top.priority = {}
        for i, v in ipairs(list) do top.priority[i] = v end
      end
      top.priority[entry.slot] = node
      return
    end
    if holder.inner then -- a subtree's root: rebuilt as its own tree
      inner_roots[holder] = node
      put(holder, holder.def) -- mark the way up as changed
      return
    end
    local c = copy_of(holder)
    local ncond = #(holder.def.conditions or {})
    if entry.slot <= ncond then c.conditions[entry.slot] = node
    else c[entry.slot - ncond] = node end
    put(holder, c)
  end
  local ids = {}
  for id in pairs(wanted) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local e = place[id]
    put(e, make(e.node, wanted[id], e.def))
  end
  -- Subtrees with a stand-in inside: compiled anew from their copies, and
  -- put in their subtree node's place (a copy naming the new tree).
  local subs = {}
  for entry in pairs(inner_roots) do subs[#subs + 1] = entry end
  table.sort(subs, function(x, y) return x.node.id > y.node.id end)
  for _, entry in ipairs(subs) do
    local inner = entry.inner
    local t = bt.tree(inner_roots[entry], named(inner.opts,
                                                inner.name .. M.SUFFIX))
    local c = copy_of(entry)
    c.tree = t
    c.name = entry.node.name -- the place keeps its name (and paths)
    put(entry, c)
  end
  local o = opts
  if top.priority then
    o = named(opts, name)
    o.priority = top.priority
  end
  return top.root, o
end

-- Raises why the stand-in key's node n was not reached in the definition:
-- under a subtree without its definition, or under a node whose table
-- holds its children otherwise than as a list (a kind this walk does not
-- know).
local function unreachable(key, n, nodes, place)
  local p = n.parent
  while p ~= nil do
    local up = nodes[p + 1]
    if up.type == "subtree" and place[p] then
      error(string.format("bonsai.test: stand-in '%s': %s is inside " ..
        "subtree %s, whose definition the scenario lacks: give it in " ..
        "trees = { [tree name] = root node, function or file }", key,
        n.path, up.path), 0)
    end
    p = up.parent
  end
  error(string.format("bonsai.test: stand-in '%s': %s was not found in " ..
    "the tree's definition (a node above it keeps its children in a way " ..
    "the kit does not walk): stand in by registered name instead", key,
    n.path), 0)
end

-- The definition of the scenario's tree with its stand-ins put in.
-- src, opts: the tree as the scenario gives it; trees: subtree
-- definitions by tree name; standins: key -> stand-in; make(node, key)
-- builds a stand-in node (node, key, definition). Returns the compiled tree and a map from node
-- path to the key of its stand-in.
function M.build(src, opts, trees, standins, make, name)
  local root, topts, built = M.definition(src, opts)
  if built then src = built end
  local keys = {}
  for k in pairs(standins or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  if root == nil then -- a compiled tree: used as it is
    if not bt.istree(src) then
      error("bonsai.test: tree must be a node, a function returning " ..
            "one, a file path or a tree (got " .. type(src) .. ")", 0)
    end
    if #keys > 0 then
      error("bonsai.test: stand-ins need the tree's definition (its root " ..
            "node, a function returning it, or its file), not the " ..
            "compiled tree '" .. src.name .. "'", 0)
    end
    return src, {}
  end
  name = name or (topts and topts.name) or "scenario"
  local plain = bt.tree(root, named(topts, name .. M.SUFFIX))
  if #keys == 0 then return plain, {} end
  local nodes = plain:nodes()
  local kids = children_of(nodes)
  local place = walk(root, topts, nodes, trees)
  local wanted, owner = {}, {}
  for _, key in ipairs(keys) do
    for _, id in ipairs(resolve(key, nodes, kids, name)) do
      local n = nodes[id + 1]
      local e = place[id]
      if not e then unreachable(key, n, nodes, place) end
      if e.holder and e.holder.node and e.holder.node.type == "guard" and
         e.slot == 1 then
        error(string.format("bonsai.test: stand-in '%s': %s is the check " ..
          "of guard %s, which stays in C: change its key in the timeline " ..
          "instead", key, n.path, e.holder.node.path), 0)
      end
      if owner[id] and owner[id] ~= key then
        error(string.format("bonsai.test: stand-ins '%s' and '%s' both " ..
          "name %s", owner[id], key, n.path), 0)
      end
      wanted[id], owner[id] = key, key
    end
  end
  local newroot, newopts = rebuild(root, topts, place, wanted, make,
                                   name .. M.SUFFIX)
  local t = bt.tree(newroot, named(newopts, name .. M.SUFFIX))
  local paths = {}
  for id, key in pairs(wanted) do paths[nodes[id + 1].path] = key end
  -- The stand-ins keep their places: every path is still there.
  local now = {}
  for _, n in ipairs(t:nodes()) do now[n.path] = true end
  for p in pairs(paths) do
    if not now[p] then
      error("bonsai.test: internal: stand-in path " .. p .. " moved", 0)
    end
  end
  return t, paths
end

return M
