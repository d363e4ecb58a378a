-- bonsai.debug.edit.editor: the editor of one debug session, an object:
-- its drafts (one per tree: the definition being edited, its undo and
-- redo history, the versions applied before, the file it came from), the
-- trees it holds and the agents it lets through (apply to some agents),
-- and what the commands share (the
-- tree a command names, its draft, the draft as data for the page).
local node = require "bonsai.debug.edit.node"
local file = require "bonsai.debug.edit.file"

local labels, named = node.labels, node.named

local E = {}
E.__index = E

-- new(S, bt, limits): the editor of session S (limits: MAX_OPS and
-- MAX_HISTORY, read at each use).
function E.new(S, bt, limits)
  return setmetatable({
    S = S, bt = bt, files = bt._files, limits = limits,
    drafts = {}, -- tree name -> { tree, root, opts, serial, undo, redo,
                 -- applied = { definitions before each apply }, file,
                 -- stamp (of the file when read), map, live }
    -- The trees this session holds (apply to some agents): tree -> true,
    -- and the agents it lets through their tree's hold: agent -> true. A
    -- closed session releases them (a page that goes away leaves no agent
    -- behind).
    holding = setmetatable({}, { __mode = "k" }),
    passed = setmetatable({}, { __mode = "k" }),
    -- The trees extract made: id -> tree (kept by the drafts that use
    -- them).
    made = setmetatable({}, { __mode = "v" }),
  }, E)
end

-- Releases the trees this session holds (every one: tree nil): each agent
-- switches to the newest version at its next tick (the passes go with the
-- hold).
function E:release(tree)
  for t in pairs(self.holding) do
    if tree == nil or t == tree then
      t:hold(false)
      self.holding[t] = nil
    end
  end
  for agent in pairs(self.passed) do
    if tree == nil or agent.tree == tree then self.passed[agent] = nil end
  end
end

-- The session is closing: the drafts go with its agents.
function E:close()
  self.drafts = {}
  self:release()
end

-- The tree a command names, among the trees of the streamed agents.
function E:treeof(name)
  if type(name) ~= "string" then return nil, "tree must be a string" end
  local rec = self.S.recording()
  for _, t in ipairs(rec and rec:trees() or {}) do
    if t.name == name then return t end
  end
  return nil, "no tree " .. named(name) .. " among the agents shown"
end

-- The file a tree was loaded from, or nil.
function E:fileof(tree)
  for path, t in pairs(self.files and self.files.loaded or {}) do
    if t == tree then return path end
  end
end

-- Compiles a definition with d's options: true and the tree, or false
-- and why. bt.tree registers what it makes under the tree's name (for
-- bt.subtree by name): the game's tree takes its place back.
function E:compile(d, root)
  local ok, t = pcall(self.bt.tree, root, d.opts)
  d.tree:_register()
  return ok, t
end

-- The draft of the tree a command names (made from the running
-- definition on first use, or when the tree was replaced), or nil, why.
function E:draft(name)
  local tree, why = self:treeof(name)
  if not tree then return nil, why end
  local d = self.drafts[name]
  if d and d.tree == tree then return d end
  local src = tree:_source()
  if not src then
    return nil, "tree " .. named(name) .. " was not built from node " ..
                "tables (a shared tree): it cannot be edited here"
  end
  local path = self:fileof(tree)
  local copy = self.bt.copy
  d = { tree = tree, root = copy(src.root), opts = copy(src.opts or {}),
        serial = 1, undo = {}, redo = {}, applied = {}, file = path }
  local ok, t = self:compile(d, d.root)
  if not ok then return nil, tostring(t) end
  d.map = labels(d.root, t)
  d.live = src.root
  if path then d.stamp = file.stamp(self.bt.readfile(path)) end
  self.drafts[name] = d
  return d
end

-- Appends entry to a history list, keeping the last MAX_HISTORY.
function E:push(list, entry)
  list[#list + 1] = entry
  if #list > self.limits.MAX_HISTORY then table.remove(list, 1) end
end

-- The agents of d's tree the session shows that its hold keeps on the
-- version they run (not let through): their ids, sorted.
function E:heldids(d)
  local list, rec = {}, self.S.recording()
  if not self.holding[d.tree] or not rec then return list end
  for agent, st in pairs(rec.ids) do
    if agent.tree == d.tree and not agent:passes() then
      list[#list + 1] = st.id
    end
  end
  table.sort(list)
  return list
end

-- at(cmd, what): the draft of cmd.tree when it is at cmd.version, the
-- version the page saw; else nil and why ("stale edit", "stale apply",
-- "stale save": another page changed it).
function E:at(cmd, what)
  local d, why = self:draft(cmd.tree)
  if not d then return nil, why end
  if cmd.version ~= d.serial then
    return nil, "stale " .. what .. ": the draft of tree " ..
      named(d.tree.name) .. " is at version " .. d.serial ..
      " (another page edited it): reload it"
  end
  return d
end

-- The draft as the page gets it.
function E:describe(d)
  local h = self:heldids(d)
  return { tree = d.tree.name, version = d.serial, file = d.file,
           held = #h > 0 and h or nil, -- (absent: none)
           format = d.file and file.format(d.file, self.bt.readfile(d.file)),
           stamp = d.stamp, applied = d.root == d.live,
           undo = #d.undo, redo = #d.redo, rollback = #d.applied,
           root = node.data(d.root, d.map, self.bt) }
end

return E
