-- bonsai.debug.edit: editing the running game's trees from the live page
-- (docs/DEBUGGER.md, "Editing"). It adds commands to a debug session:
-- tree (a tree's definition as data, its nodes numbered), palette (what
-- can be inserted, with the parameters each takes), edit (tree operations
-- on a draft, each batch checked as bt.tree checks a definition), undo and
-- redo (of the draft), script (a script's parse error as it is typed),
-- preview (a dry run of the reload's migration over the live agents),
-- apply (tree:reload with the draft; to some agents first: the others
-- held on the version they run, a:hold), rollback (the version before the
-- last apply) and save (the draft written to the file the tree came from,
-- in its format, only inside the watched folders, refused when the file
-- changed since the page read it). The draft keeps the definition's own
-- tables: an inline Lua function is carried along untouched; only a save
-- to a Lua file refuses it (the page cannot write a function).

local cjson = require "cjson.safe"
local core = require "bonsai.core"
local paths = require "bonsai.paths"
local script = require "bonsai.script"

local M = {}

M.MAX_OPS = 256      -- operations in one edit command
M.MAX_HISTORY = 64   -- drafts kept for undo, versions kept for rollback

local KINDS = {}     -- kind name -> its row of core.KINDS
for _, row in ipairs(core.KINDS) do KINDS[row.name] = row end

-- Fields of a node table that are not parameters.
local STRUCT = { type = true, name = true }

-- Parameters of a row, with their types for the page's fields.
local CONDITIONS = { "skip_if", "success_if", "failure_if", "run_while",
                     "on_success", "on_failure", "on_halted", "post" }
local function params(row)
  local list = {}
  for _, p in ipairs(row.params or {}) do
    local t = row.number == p and "number" or
              (p == "abort" and "enum:self,lower,both,none") or
              (p == "op" and "enum:<,<=,>,>=,==,~=") or
              (p == "then_skip" and "boolean") or
              ((p == "times" or p == "success" or p == "failure" or
                p == "timeout") and "number") or
              (p == "value" and "value") or "string"
    list[#list + 1] = { name = p, type = t }
  end
  return list
end

-- A node table's copy, its inner tables copied too (functions and the
-- script source they came from kept), so a draft never changes the
-- definition the tree runs.
local function copy(n, seen)
  if type(n) ~= "table" then return n end
  seen = seen or {}
  if seen[n] then return seen[n] end
  local c = {}
  seen[n] = c
  for k, v in pairs(n) do c[k] = copy(v, seen) end
  if script.source[n] then script.source[c] = script.source[n] end
  return setmetatable(c, getmetatable(n))
end

local function isnode(v)
  return type(v) == "table" and type(rawget(v, "type")) == "string"
end

-- The plain value a page may see or give: a string, a boolean, a finite
-- number.
local plain = require("bonsai.debug.session").plain

-- The nodes of a definition in pre-order (def[1], def[1][1], ...), each
-- with its parent and index.
local function walk(root)
  local list = {}
  local function go(n, parent, i)
    list[#list + 1] = { node = n, parent = parent, index = i }
    for j, c in ipairs(n) do
      if isnode(c) then go(c, n, j) end
    end
  end
  go(root, nil, nil)
  return list
end

-- The compiled names and paths of a definition's nodes: a map node table
-- -> { name, path } from the tree compiled from it (hidden nodes skipped;
-- a subtree's inlined nodes are not the definition's).
local function labels(root, tree)
  local map = {}
  local list = tree:nodes()
  local kids = {}
  for _, nd in ipairs(list) do
    if nd.parent then
      kids[nd.parent] = kids[nd.parent] or {}
      table.insert(kids[nd.parent], nd)
    end
  end
  local function shown(nd) -- through hidden wrappers
    while nd and nd.hidden do nd = (kids[nd.id] or {})[1] end
    return nd
  end
  local function go(n, nd)
    nd = shown(nd)
    if not nd then return end
    map[n] = { name = nd.name, path = nd.path }
    local ks, j = kids[nd.id] or {}, 0
    for _, c in ipairs(n) do
      if isnode(c) then
        j = j + 1
        go(c, ks[j])
      end
    end
  end
  go(root, list[1])
  return map
end

-- A node as data for the page: { id, type, name (given), label and path
-- (compiled), params = { k = plain value }, script (code of bt.script),
-- inline (fields holding Lua functions), leaf, children }.
local function data(root, map)
  local id = 0
  local function go(n)
    id = id + 1
    local d = { id = id, type = n.type, name = n.name, params = {},
                inline = {}, children = {} }
    local l = map[n]
    if l then d.label, d.path = l.name, l.path end
    local src = script.source[n]
    if src then d.script, d.kind = src.code, src.kind end
    for k, v in pairs(n) do
      if type(k) == "string" and not STRUCT[k] then
        if plain(v) then d.params[k] = v
        elseif type(v) == "function" and not src then
          d.inline[#d.inline + 1] = k
        end
      end
    end
    table.sort(d.inline)
    if next(d.params) == nil then d.params = nil end
    if #d.inline == 0 then d.inline = nil end
    for _, c in ipairs(n) do
      if isnode(c) then d.children[#d.children + 1] = go(c) end
    end
    if #d.children == 0 then d.children = nil end
    return d
  end
  return go(root)
end

-- A message's place: "node 'path'" for a node table of the draft.
local function place(map, n)
  local l = map[n]
  return l and "node '" .. l.path .. "'" or "the new node"
end

-- A fingerprint of a file's text, to see that it changed: its length and
-- a 32-bit polynomial hash, in hex (not a defence against anyone: the
-- pages are the developer's own).
local function stamp(text)
  if not text then return "none" end
  local h = 0
  for i = 1, #text do h = (h * 31 + text:byte(i)) % 4294967296 end
  return ("%d:%08x"):format(#text, h)
end

-- Lua, canonical: the definition as plain node tables (type and name
-- first, then the other keys sorted; two-space indentation), loadable by
-- bt.load; scripts as bt.script. The comment lines that open the old text
-- are kept (else a line says who wrote it). Raises with the place of a
-- node it cannot write (an inline function, a table).
local function lua_text(root, opts, map, old)
  local out = {}
  local function value(v)
    if type(v) == "string" then return ("%q"):format(v) end
    if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2^53 then
      return ("%d"):format(v)
    end
    if type(v) == "number" then return ("%.17g"):format(v) end
    return tostring(v)
  end
  local function key(k)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
    return "[" .. value(k) .. "]"
  end
  local function go(n, ind)
    local src = script.source[n]
    if src then
      local f = src.kind == "script" and "bt.script" or "bt.script_condition"
      local s = f .. "(" .. value(src.code) .. ")"
      if n.name then s = "bt.named(" .. value(n.name) .. ", " .. s .. ")" end
      return s
    end
    local keys = {}
    for k, v in pairs(n) do
      if type(k) ~= "number" or k > #n or k < 1 then
        if type(v) == "function" then
          error(place(map, n) .. ": its '" .. tostring(k) .. "' is an " ..
                "inline Lua function, which the page cannot write: name " ..
                "the leaf with bt.register, or save the tree as .xml or " ..
                ".json", 0)
        elseif type(v) == "table" and not isnode(v) then
          error(place(map, n) .. ": its '" .. tostring(k) .. "' is a " ..
                "table the page cannot write", 0)
        end
        if k ~= "type" and k ~= "name" then keys[#keys + 1] = k end
      end
    end
    table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
    local parts = { ind .. "  type = " .. value(n.type) .. "," }
    if n.name ~= nil then
      parts[#parts + 1] = ind .. "  name = " .. value(n.name) .. ","
    end
    for _, k in ipairs(keys) do
      parts[#parts + 1] = ind .. "  " .. key(k) .. " = " .. value(n[k]) .. ","
    end
    local leaf = true
    for _, c in ipairs(n) do
      if isnode(c) then
        leaf = false
        parts[#parts + 1] = ind .. "  " .. go(c, ind .. "  ") .. ","
      end
    end
    if leaf then -- on one line when it fits in 100 columns
      local flat = {}
      for i, p in ipairs(parts) do flat[i] = p:gsub("^%s+", "") end
      local line = "{ " .. table.concat(flat, " "):gsub(",$", "") .. " }"
      if #ind + 4 + #line <= 100 then return line end
    end
    return "{\n" .. table.concat(parts, "\n") .. "\n" .. ind .. "}"
  end
  for line in (old or ""):gmatch("([^\n]*)\n") do
    if not line:match("^%-%-") then break end
    out[#out + 1] = line
  end
  if #out == 0 then
    out[1] = "-- Written by the live page (bonsai.debug.edit)."
  end
  local o = {}
  for k, v in pairs(opts or {}) do
    if k ~= "name" and plain(v) then o[#o + 1] = key(k) .. " = " .. value(v) end
  end
  table.sort(o)
  out[#out + 1] = "return " .. go(root, "") ..
    (#o > 0 and ", { " .. table.concat(o, ", ") .. " }" or "")
  return table.concat(out, "\n") .. "\n"
end
M.lua_text = lua_text

-- The format of a tree file, by its name (and, for behavior3, its text).
local function formatof(path, text)
  local ext = path:match("%.([^./]*)$")
  if ext == "xml" then return "btcpp" end
  if ext == "json" or ext == "b3" then
    -- the current editor's files have "root" as a node, the classic's a
    -- "nodes" table
    local doc = text and cjson.decode(text)
    if type(doc) == "table" and type(doc.root) == "table" then
      return "behavior3-current"
    end
    return "behavior3"
  end
  if ext == "lua" then return "lua" end
  return nil
end

-- add(S, bt): the editing commands on session S.
function M.add(S, bt)
  local commands = S.commands
  local files = bt._files
  local drafts = {} -- tree name -> { tree, root, opts, serial, undo, redo,
                    -- applied = { definitions before each apply }, file,
                    -- stamp (of the file when read), map, live }
  -- Agents this session holds on an older version (apply to some agents):
  -- agent -> true. A closed session releases them (a page that goes away
  -- leaves no agent behind).
  local held = setmetatable({}, { __mode = "k" })
  local function release(tree)
    for agent in pairs(held) do
      if tree == nil or agent.tree == tree then
        agent:hold(false)
        held[agent] = nil
      end
    end
  end
  local close = S.close
  function S.close() -- (the drafts go with the session's agents)
    drafts = {}
    release()
    return close()
  end

  local function named(x)
    x = tostring(x)
    return "'" .. (#x > 60 and x:sub(1, 60) .. "..." or x) .. "'"
  end

  -- The tree a command names, among the trees of the streamed agents.
  local function treeof(name)
    if type(name) ~= "string" then return nil, "tree must be a string" end
    local rec = S.recording()
    for _, t in ipairs(rec and rec:trees() or {}) do
      if t.name == name then return t end
    end
    return nil, "no tree " .. named(name) .. " among the agents shown"
  end

  -- The file a tree was loaded from, or nil.
  local function fileof(tree)
    for path, t in pairs(files and files.loaded or {}) do
      if t == tree then return path end
    end
  end

  local function compile(d, root)
    return pcall(bt.tree, root, d.opts)
  end

  local function draft(name)
    local tree, why = treeof(name)
    if not tree then return nil, why end
    local d = drafts[name]
    if d and d.tree == tree then return d end
    local src = tree:_source()
    if not src then
      return nil, "tree " .. named(name) .. " was not built from node " ..
                  "tables (a shared tree): it cannot be edited here"
    end
    local path = fileof(tree)
    d = { tree = tree, root = copy(src.root), opts = copy(src.opts or {}),
          serial = 1, undo = {}, redo = {}, applied = {}, file = path }
    local ok, t = compile(d, d.root)
    if not ok then return nil, tostring(t) end
    d.map = labels(d.root, t)
    d.live = src.root
    if path then d.stamp = stamp(paths.read(path)) end
    drafts[name] = d
    return d
  end

  -- The agents held on an older version of d's tree: their ids, sorted.
  local function heldids(d)
    local list, rec = {}, S.recording()
    for agent in pairs(held) do
      local st = rec and rec.ids[agent]
      if st and agent.tree == d.tree then list[#list + 1] = st.id end
    end
    table.sort(list)
    return list
  end

  local function describe(d)
    local h = heldids(d)
    return { tree = d.tree.name, version = d.serial, file = d.file,
             held = #h > 0 and h or nil, -- (absent: none)
             format = d.file and formatof(d.file, paths.read(d.file)),
             stamp = d.stamp, applied = d.root == d.live,
             undo = #d.undo, redo = #d.redo, rollback = #d.applied,
             root = data(d.root, d.map) }
  end

  function commands.tree(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    return describe(d)
  end

  -- palette: the kinds (but hidden ones), the game's bt.define'd types and
  -- its registered leaves, each with the parameters it takes.
  function commands.palette()
    local list = {}
    for _, row in ipairs(core.KINDS) do
      if row.class ~= "hidden" and row.name ~= "control" then
        list[#list + 1] = { type = row.name, class = row.class,
                            params = params(row), from = "kind" }
      end
    end
    local names = {}
    for name in pairs(bt._defined or {}) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      list[#list + 1] = { type = name, class = "defined", params = {},
                          from = "define" }
    end
    names = {}
    for name in pairs(bt._registered or {}) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      list[#list + 1] = { type = name, class = "leaf", params = {},
                          from = "leaf" }
    end
    list[#list + 1] = { type = "script", class = "leaf", from = "script",
                        params = { { name = "code", type = "script" } } }
    return { palette = list, conditions = CONDITIONS }
  end

  -- script: whether text parses as a script: { ok = true } or { error =
  -- "at character N: ...", at = N }.
  function commands.script(cmd)
    if type(cmd.text) ~= "string" then return nil, "text must be a string" end
    local ok, err = script.parse(cmd.text)
    if ok then return { ok = true } end
    return { error = err, at = tonumber(tostring(err):match("character (%d+)")) }
  end

  -- A node table made from a page's description: { type, name, params =
  -- { k = v }, code (a script), children = { descriptions } }.
  local function make(spec, where)
    if type(spec) ~= "table" or type(spec.type) ~= "string" then
      error(where .. ": the node must be an object with a type", 0)
    end
    local n
    local ps = spec.params
    if ps ~= nil and type(ps) ~= "table" then
      error(where .. ": params must be an object", 0)
    end
    for k, v in pairs(ps or {}) do
      if type(k) ~= "string" or not plain(v) then
        error(where .. ": parameter " .. named(k) .. " must be a number, " ..
              "string or boolean", 0)
      end
    end
    if spec.type == "script" then
      if type(spec.code) ~= "string" then
        error(where .. ": a script node needs its code", 0)
      end
      local ok, res = pcall(bt.script, spec.code)
      if not ok then error(where .. ": " .. tostring(res), 0) end
      n = res
    elseif KINDS[spec.type] then
      n = { type = spec.type }
      for k, v in pairs(ps or {}) do n[k] = v end
    elseif bt._registered and bt._registered[spec.type] then
      n = { type = "action", leaf = spec.type }
    elseif bt._defined and bt._defined[spec.type] then
      local ok, res = pcall(bt.node, spec.type, copy(ps or {}), {})
      if not ok then error(where .. ": " .. tostring(res), 0) end
      n = copy(res)
    else
      error(where .. ": no node type " .. named(spec.type) ..
            " (a kind, a bt.define'd type or a registered leaf)", 0)
    end
    if spec.name ~= nil and spec.name ~= cjson.null then
      if type(spec.name) ~= "string" or spec.name == "" then
        error(where .. ": name must be a non-empty string", 0)
      end
      n.name = spec.name
    end
    if spec.children ~= nil then
      if type(spec.children) ~= "table" then
        error(where .. ": children must be a list", 0)
      end
      for i, c in ipairs(spec.children) do
        n[#n + 1] = make(c, where .. ", child " .. i)
      end
    end
    return n
  end

  -- Stable identity: a node the page creates gets a name (its type and a
  -- number no sibling has), and its unnamed siblings get the names they
  -- had (their default names count places), so no path shifts.
  local function settle(parent, n, map)
    for _, c in ipairs(parent) do
      if isnode(c) and c ~= n and c.name == nil and map[c] and
         not script.source[c] then
        c.name = map[c].name
      end
    end
    if n.name == nil then
      local taken = {}
      for _, c in ipairs(parent) do
        if isnode(c) and c.name then taken[c.name] = true end
      end
      local base = script.source[n] and "script" or
                   (n.leaf and tostring(n.leaf)) or n.type
      local k = 1
      while taken[base .. "_" .. k] do k = k + 1 end
      n.name = base .. "_" .. k
    end
  end

  -- The operations, on the copy (byid: the page's ids -> its node tables).
  local OPS = {}
  local function target(op, byid, field, where)
    local n = byid[op[field or "node"]]
    if not n then
      error(where .. ": no node " .. tostring(op[field or "node"]) ..
            " in this version of the draft", 0)
    end
    return n
  end
  local function position(parent, i, where)
    local count = 0
    for _, c in ipairs(parent) do if isnode(c) then count = count + 1 end end
    if i == nil or i == cjson.null then return count + 1 end
    if type(i) ~= "number" or i ~= math.floor(i) or i < 1 or i > count + 1 then
      error(where .. ": index must be 1.." .. (count + 1), 0)
    end
    return i
  end
  local function parentof(root, n)
    for _, e in ipairs(walk(root)) do
      if e.node == n then return e.parent, e.index end
    end
  end

  function OPS.insert(root, op, byid, map, where)
    local parent = target(op, byid, "parent", where)
    local i = position(parent, op.index, where)
    local n = make(op.node, where)
    table.insert(parent, i, n)
    settle(parent, n, map)
  end

  function OPS.wrap(root, op, byid, map, where)
    local n = target(op, byid, nil, where)
    local w = make(op.with, where)
    local parent, i = parentof(root, n)
    w[#w + 1] = n
    if not parent then return w end -- the new root
    parent[i] = w
    settle(parent, w, map)
  end

  function OPS.move(root, op, byid, map, where)
    local n = target(op, byid, nil, where)
    local to = target(op, byid, "parent", where)
    for _, e in ipairs(walk(n)) do
      if e.node == to then error(where .. ": a node cannot move into itself", 0) end
    end
    local parent, i = parentof(root, n)
    if not parent then error(where .. ": the root cannot move", 0) end
    settle(parent, n, map)
    if n.name == nil and map[n] then n.name = map[n].name end
    table.remove(parent, i)
    local at = position(to, op.index, where)
    table.insert(to, at, n)
    settle(to, n, map)
  end

  function OPS.delete(root, op, byid, map, where)
    local n = target(op, byid, nil, where)
    local parent, i = parentof(root, n)
    if not parent then error(where .. ": the root cannot be deleted", 0) end
    settle(parent, n, map)
    table.remove(parent, i)
  end

  function OPS.duplicate(root, op, byid, map, where)
    local n = target(op, byid, nil, where)
    local parent, i = parentof(root, n)
    if not parent then error(where .. ": the root cannot be duplicated", 0) end
    local c = copy(n)
    c.name = nil
    table.insert(parent, i + 1, c)
    settle(parent, c, map)
  end

  function OPS.set(root, op, byid, map, where)
    local n = target(op, byid, nil, where)
    local k, v = op.key, op.value
    if v == cjson.null then v = nil end
    if type(k) ~= "string" or k == "" or k == "type" then
      error(where .. ": key must be a parameter's name", 0)
    end
    if v ~= nil and not plain(v) then
      error(where .. ": value must be a number, string, boolean or null", 0)
    end
    if k == "code" and script.source[n] then -- a script's text
      local ok, res = pcall(bt.script, v)
      if not ok then error(where .. ": " .. tostring(res), 0) end
      for key in pairs(n) do if key ~= "name" then n[key] = nil end end
      for key, x in pairs(res) do n[key] = x end
      script.source[n] = script.source[res]
      return
    end
    if type(n[k]) == "function" then
      error(where .. ": " .. named(k) .. " is an inline Lua function; " ..
            "the page cannot change it", 0)
    end
    n[k] = v
  end

  -- edit: { tree, version, ops = { op, ... } }: the ops on the draft of
  -- that version, then checked; the new draft, or nil and why (the place:
  -- the op's number and its node's path; the draft is unchanged).
  function commands.edit(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    if cmd.version ~= d.serial then
      return nil, "stale edit: the draft of tree " .. named(d.tree.name) ..
        " is at version " .. d.serial .. " (another page edited it): " ..
        "reload it"
    end
    if type(cmd.ops) ~= "table" or #cmd.ops == 0 or #cmd.ops > M.MAX_OPS then
      return nil, "ops must be a list of 1 to " .. M.MAX_OPS .. " operations"
    end
    local seen = {}
    local root = copy(d.root, seen)
    local map, byid = {}, {}
    for i, e in ipairs(walk(d.root)) do
      byid[i] = seen[e.node]
      map[seen[e.node]] = d.map[e.node]
    end
    for i, op in ipairs(cmd.ops) do
      local f = type(op) == "table" and OPS[op.op]
      if not f then
        return nil, "op " .. i .. ": op must be insert, wrap, move, " ..
                    "delete, duplicate or set"
      end
      local n = byid[op.node] or byid[op.parent]
      local where = "op " .. i .. " (" .. op.op ..
                    (n and ", " .. place(map, n) or "") .. ")"
      local ok, res = pcall(f, root, op, byid, map, where)
      if not ok then return nil, tostring(res) end
      if res then root = res end
    end
    local ok, t = compile(d, root)
    if not ok then return nil, "refused: " .. tostring(t) end
    d.undo[#d.undo + 1] = { root = d.root, map = d.map }
    if #d.undo > M.MAX_HISTORY then table.remove(d.undo, 1) end
    d.redo = {}
    d.root, d.map, d.serial = root, labels(root, t), d.serial + 1
    return describe(d)
  end

  local function step(cmd, from, to)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    local last = d[from][#d[from]]
    if not last then return nil, "nothing to " .. from end
    d[from][#d[from]] = nil
    d[to][#d[to] + 1] = { root = d.root, map = d.map }
    d.root, d.map, d.serial = last.root, last.map, d.serial + 1
    return describe(d)
  end
  function commands.undo(cmd) return step(cmd, "undo", "redo") end
  function commands.redo(cmd) return step(cmd, "redo", "undo") end

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
  -- of agent objects, or nil, why.
  local function chosen(d, ids)
    if type(ids) ~= "table" or #ids == 0 or #ids > 4096 then
      return nil, "agents must be a list of agent numbers"
    end
    local want, set = {}, {}
    for _, id in ipairs(ids) do
      if type(id) ~= "number" then
        return nil, "agents must be a list of agent numbers"
      end
      want[id] = true
    end
    for agent, st in pairs(S.recording().ids) do
      if want[st.id] then
        if st.v.tree ~= d.tree.name then
          return nil, "agent " .. st.id .. " runs tree " .. named(st.v.tree) ..
                      ", not " .. named(d.tree.name)
        end
        set[agent] = true
        want[st.id] = nil
      end
    end
    local missing = next(want)
    if missing then return nil, "no agent " .. named(missing) end
    return set
  end

  -- preview: { tree [, agents] }: the reload's migration, dry: for each
  -- agent of the tree (or each of agents = { ids }), its running nodes kept
  -- (same path and type in the draft, parent kept) and aborted; and a
  -- summary, agents grouped by what they do.
  function commands.preview(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    local only
    if cmd.agents ~= nil and cmd.agents ~= cjson.null then
      only, why = chosen(d, cmd.agents)
      if not only then return nil, why end
    end
    local ok, t = compile(d, d.root)
    if not ok then return nil, tostring(t) end
    local new = {}
    for _, nd in ipairs(t:nodes()) do
      if not nd.hidden then new[nd.path] = nd.type end
    end
    local agents, groups, order = {}, {}, {}
    for agent, st in pairs(S.recording().ids) do
      if st.v.tree == d.tree.name and (only == nil or only[agent]) then
        local run, order_ = running(d.tree, agent)
        local keep, abort, kept = {}, {}, {}
        for _, p in ipairs(order_) do
          local up = p:match("^(.*)/[^/]*$")
          if new[p] == run[p] and (up == nil or kept[up] or not run[up]) then
            kept[p] = true
            keep[#keep + 1] = p
          else
            abort[#abort + 1] = p
          end
        end
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
    return { agents = agents, summary = table.concat(parts, ", "),
             version = d.serial }
  end

  -- apply: { tree, version [, agents] }: the draft becomes the running
  -- version (tree:reload: each agent switches at its next tick, running
  -- nodes matched by path kept). With agents = { ids }, only those switch:
  -- every other agent of the tree the session shows is held on the
  -- version it runs (a:hold), to compare on the population view; a later
  -- apply to all releases them, and they switch to the newest version at
  -- their next tick. An agent the game never offered the debugger is not
  -- held: it switches as any agent does.
  local function reload(d, root)
    local ok, err = d.tree:reload(copy(root), d.opts)
    if not ok then return nil, err end
    d.live = root
    return true
  end

  function commands.apply(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    if cmd.version ~= d.serial then
      return nil, "stale apply: the draft is at version " .. d.serial
    end
    local only
    if cmd.agents ~= nil and cmd.agents ~= cjson.null then
      only, why = chosen(d, cmd.agents)
      if not only then return nil, why end
    end
    local hold = {} -- the agents this apply holds (undone if it fails)
    if only then
      for agent, st in pairs(S.recording().ids) do
        if st.v.tree == d.tree.name and agent.tree == d.tree and
           not only[agent] and not agent:held() then
          agent:hold(true)
          hold[agent] = true
        end
      end
    end
    if d.root ~= d.live then -- (else the draft runs: only holds change)
      local before = d.tree:_source()
      local ok, err = reload(d, d.root)
      if not ok then
        for agent in pairs(hold) do agent:hold(false) end
        return nil, err
      end
      d.applied[#d.applied + 1] = before.root
      if #d.applied > M.MAX_HISTORY then table.remove(d.applied, 1) end
    end
    for agent in pairs(hold) do held[agent] = true end
    if only then -- the chosen ones switch (they may have been held)
      for agent in pairs(only) do
        if held[agent] then
          agent:hold(false)
          held[agent] = nil
        end
      end
    else
      release(d.tree)
    end
    return describe(d)
  end

  -- rollback: { tree }: the version before the last apply runs again, and
  -- becomes the draft. Agents held on an older version stay on it; an
  -- apply to all releases them, and they switch to the rolled-back version.
  function commands.rollback(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    local prev = d.applied[#d.applied]
    if not prev then return nil, "nothing applied to roll back" end
    local root = copy(prev)
    local ok, err = reload(d, root)
    if not ok then return nil, err end
    d.applied[#d.applied] = nil
    d.undo[#d.undo + 1] = { root = d.root, map = d.map }
    d.root, d.serial = root, d.serial + 1
    d.map = labels(root, d.tree)
    return describe(d)
  end

  -- Whether the file lies in a folder (or is a file) the game watches.
  local function watched(path)
    return files and files.watching and files.watching(path)
  end

  -- save: { tree, version, stamp }: the draft written to the tree's file
  -- in its format; refused outside the watched folders, when the file
  -- changed since the page read it (stamp), for a Lua file with inline
  -- functions. The tree then runs what the file says (as the watcher
  -- would load it, once: the watcher sees the file as already loaded).
  function commands.save(cmd)
    local d, why = draft(cmd.tree)
    if not d then return nil, why end
    if cmd.version ~= d.serial then
      return nil, "stale save: the draft is at version " .. d.serial
    end
    local path = d.file
    if not path then
      return nil, "tree " .. named(d.tree.name) .. " was not loaded from " ..
                  "a file (bt.load): there is nowhere to save it"
    end
    if not watched(path) then
      return nil, "refused: " .. path .. " is not in a folder the game " ..
                  "watches (bt.watch): the page writes nowhere else"
    end
    local old = paths.read(path)
    if stamp(old) ~= d.stamp or cmd.stamp ~= d.stamp then
      return nil, "stale save: " .. path .. " changed since this page " ..
        "read it (another page or an editor saved it): reload the tree " ..
        "and redo the edits"
    end
    local fmt = formatof(path, old)
    local text, err
    local ok, t = compile(d, d.root)
    if not ok then return nil, tostring(t) end
    if fmt == "lua" then
      ok, text = pcall(lua_text, d.root, d.opts, d.map, old)
    elseif fmt then
      ok, text = pcall(t.export, t, fmt)
    else
      ok, text = false, "no exporter for " .. path
    end
    if not ok then return nil, "cannot save: " .. tostring(text) end
    -- written beside the file, then renamed over it: a tree file that is
    -- a symbolic link is replaced by the file, never written through (what
    -- it pointed to, maybe outside the folder, is left alone); a link
    -- planted at the temporary name is removed first, not followed
    local tmp = path .. ".bonsai-save"
    os.remove(tmp)
    local f
    f, err = io.open(tmp, "wb")
    if not f then return nil, "cannot save: " .. tostring(err) end
    f:write(text)
    f:close()
    ok, err = os.rename(tmp, path)
    if not ok then
      os.remove(tmp)
      return nil, "cannot save: " .. tostring(err)
    end
    d.stamp = stamp(text)
    -- the tree runs what the file says, loaded as a modder's file is
    local before = d.tree:_source()
    local good, msg = bt.reload(path)
    if not good then return nil, "saved, but reloading failed: " .. msg end
    d.applied[#d.applied + 1] = before.root
    if #d.applied > M.MAX_HISTORY then table.remove(d.applied, 1) end
    d.root = copy(d.tree:_source().root)
    d.live = d.root
    d.map = labels(d.root, d.tree)
    d.serial = d.serial + 1
    return describe(d)
  end
end

return M
