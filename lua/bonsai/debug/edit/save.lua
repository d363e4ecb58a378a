-- bonsai.debug.edit.save: the save command: the draft written to the file
-- its tree came from, in its format (an exporter's, or canonical Lua),
-- only inside the watched folders, refused when the file changed since
-- the page read it; the tree then runs what the file says, loaded once.
local node = require "bonsai.debug.edit.node"
local file = require "bonsai.debug.edit.file"
local luatext = require "bonsai.debug.edit.luatext"

local M = {}

-- The text of the draft's file, or nil and why the draft may not be saved
-- to it: no file, not watched, stale.
local function current(E, d, cmd)
  local path = d.file
  if not path then
    return nil, "tree " .. node.named(d.tree.name) .. " was not loaded from " ..
           "a file (bt.load): there is nowhere to save it"
  end
  if not (E.files and E.files.watching and E.files.watching(path)) then
    return nil, "refused: " .. path .. " is not in a folder the game " ..
           "watches (bt.watch): the page writes nowhere else"
  end
  local old = E.bt.readfile(path)
  if file.stamp(old) ~= d.stamp or cmd.stamp ~= d.stamp then
    return nil, "stale save: " .. path .. " changed since this page " ..
      "read it (another page or an editor saved it): reload the tree " ..
      "and redo the edits"
  end
  return old or false
end

-- An edge list's text with the comment lines that opened the old one in
-- place of the exporter's (a file's own notes kept).
local function comments(old, text)
  local head = {}
  for line in (old or ""):gmatch("([^\n]*)\n") do
    if not line:match("^%s*#") and not line:match("^%s*%-%-") then break end
    head[#head + 1] = line .. "\n"
  end
  if #head == 0 then return text end
  return table.concat(head) .. text:gsub("^#[^\n]*\n", "", 1)
end

-- The draft's text (t: the tree compiled from it) in the format of its
-- file: true and the text, or false and why.
local function text(E, d, t, old)
  local fmt = file.format(d.file, old)
  if fmt == "lua" then
    return pcall(luatext, d.root, d.opts, d.map, old,
                 function(tree) return E:fileof(tree) end, E.bt)
  elseif fmt then
    local ok, out = pcall(t.export, t, fmt)
    if ok and fmt == "edges" then out = comments(old, out) end
    return ok, out
  end
  return false, "no exporter for " .. d.file
end

-- save: { tree, version, stamp }: the new draft (what the file now says).
function M.save(E, cmd)
  local d, why = E:at(cmd, "save")
  if not d then return nil, why end
  local old
  old, why = current(E, d, cmd)
  if old == nil then return nil, why end
  local ok, t = E:compile(d, d.root)
  if not ok then return nil, tostring(t) end
  local out
  ok, out = text(E, d, t, old or nil)
  if not ok then return nil, "cannot save: " .. tostring(out) end
  local err
  ok, err = file.replace(d.file, out)
  if not ok then return nil, "cannot save: " .. tostring(err) end
  d.stamp = file.stamp(out)
  -- the tree runs what the file says, loaded as a modder's file is (the
  -- watcher sees the file as already loaded)
  local before = d.tree:_source()
  local good, msg = E.bt.reload(d.file)
  if not good then return nil, "saved, but reloading failed: " .. msg end
  E:push(d.applied, before.root)
  d.root = E.bt.copy(d.tree:_source().root)
  d.live = d.root
  d.map = node.labels(d.root, d.tree)
  d.serial = d.serial + 1
  return E:describe(d)
end

return M
