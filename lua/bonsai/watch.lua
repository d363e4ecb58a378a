-- bonsai.watch: bt.watch and bt.poll. Watched files are compared by their
-- modification time (nanoseconds) and size at each poll; a changed file
-- that a tree was loaded from (or that such a file uses, like an included
-- subtree file) reloads that tree; any other changed file that a loader
-- knows is run again as a leaf file (its bt.register calls take effect at
-- the next tick). It reads what bonsai.loaders loaded; loaders knows
-- nothing of it.
local core = require "bonsai.core"
local loaders = require "bonsai.loaders"
local paths = require "bonsai.paths"

local M = {}
local watched = {}   -- file path -> "mtime:size" when last seen (or false)
local watchdirs = {} -- directory -> true
local listings = {}  -- library folder of a watched tree -> its files

-- "mtime:size" of a file, or nil and a message.
local function stamp(path)
  local m, size = core._mtime(path)
  if not m then return nil, size end
  return string.format("%.9f", m) .. ":" .. size
end

-- Files a loader handles: a leaf file or a tree file.
local function known(name)
  return loaders.registry[name:match("%.[^./]*$") or ""] ~= nil
end

-- The tree files of a library folder, one string ("" when it is gone).
local function listing(dir)
  local names = {}
  for _, name in ipairs(core._dir(dir == "" and "." or dir) or {}) do
    if known(name) and name:sub(1, 1) ~= "." then names[#names + 1] = name end
  end
  table.sort(names)
  return table.concat(names, "\n")
end

-- Whether dir (resolved, as bonsai.paths resolves it) is watched.
local function dirwatched(dir)
  for d in pairs(watchdirs) do
    if paths.normal(d) == dir then return true end
  end
  return false
end

-- A file just (re)loaded by bt.load/bt.reload counts as seen now, and
-- so do the subtree files it uses and the library folders it listed, if
-- it is watched; a library folder that is watched itself is listed too.
local function seen(path)
  local mine = watched[path] ~= nil
  if mine then
    watched[path] = stamp(path)
    for _, dep in ipairs(loaders.deps[path] or {}) do
      if watched[dep] == nil then watched[dep] = stamp(dep) end
    end
  end
  for _, dir in ipairs(loaders.folders[path] or {}) do
    if mine or dirwatched(dir) then listings[dir] = listing(dir) end
  end
end
loaders.on_load(seen)

-- bt.watch(file_or_dir): bt.poll() will reload the file, or the files of
-- the directory (new ones included), when they change on disk.
function M.watch(path)
  if type(path) == "string" and path:match("[^/]/+$") then
    path = path:gsub("/+$", "") -- "trees/" is "trees": its files' paths
  end
  local names = core._dir(path)
  if names then
    watchdirs[path] = true
    for _, name in ipairs(names) do
      if known(name) then
        local f = path .. "/" .. name
        watched[f] = stamp(f)
      end
    end
  else
    local st, err = stamp(path)
    if not st then return nil, err end
    watched[path] = st
  end
  for f in pairs(loaders.loaded) do -- the files and folders they use
    seen(f)
  end
  return true
end

-- M.watching(path): whether path is watched, itself or in a watched
-- directory (bonsai.debug.edit saves nowhere else).
function M.watching(path)
  if watched[path] ~= nil then return true end
  local dir = path:match("^(.*)/[^/]*$")
  return dir ~= nil and watchdirs[dir] == true
end

-- The trees loaded from f or from a file that uses f (of the table
-- loaders.deps, or loaders.folders for a library folder f).
local function users(f, uses)
  local list = {}
  if loaders.loaded[f] then list[1] = f end
  for path, deps in pairs(uses or loaders.deps) do
    for _, dep in ipairs(deps) do
      if dep == f and path ~= f and loaders.loaded[path] then
        list[#list + 1] = path
      end
    end
  end
  table.sort(list)
  return list
end

-- bt.poll(): reloads what changed; returns the list of paths reloaded
-- and the list of { path =, error = } that failed.
function M.poll()
  for dir in pairs(watchdirs) do
    for _, name in ipairs(core._dir(dir) or {}) do
      local f = dir .. "/" .. name
      if known(name) and watched[f] == nil then watched[f] = false end
    end
  end
  local changed = {}
  for f, old in pairs(watched) do
    local now = stamp(f)
    if now and now ~= old then changed[#changed + 1] = f; watched[f] = now end
  end
  for dir, old in pairs(listings) do -- a tree file added or removed
    local now = listing(dir)
    if now ~= old then changed[#changed + 1] = dir; listings[dir] = now end
  end
  table.sort(changed)
  local reloaded, failed, done = {}, {}, {}
  for _, f in ipairs(changed) do
    local list = listings[f] and users(f, loaders.folders) or users(f)
    if #list == 0 and f:match("%.lua$") then list = { f } end
    for _, path in ipairs(list) do
      if not done[path] then
        done[path] = true
        local ok, err
        if loaders.loaded[path] then
          ok, err = loaders.reload(path)
        else
          ok, err = loaders.runfile(path)
        end
        if ok then reloaded[#reloaded + 1] = path
        else failed[#failed + 1] = { path = path, error = err } end
      end
    end
  end
  return reloaded, failed
end

return M
