-- bonsai.paths: what a tree file may read. Files come from modders: a path
-- a file names (a BehaviorTree.CPP include, a behavior3 subtree path) must
-- stay inside the directories the game allows, first as written ("." and
-- ".." resolved: neither "../" nor an absolute path escapes), then as the
-- disk resolves it (a symbolic link inside that leads outside is
-- refused; a file found in a library folder must lie in that folder); and
-- any file is read only when it is a regular file (a FIFO
-- or a device is refused, never waited on) and only up to a bound,
-- whatever its size says (docs/FORMATS.md, "Which files a tree file may
-- read").

local core = require "bonsai.core"

local M = {}

M.MAX_SIZE = 8 * 1024 * 1024 -- bytes one load reads, all its files together

-- A path with "." and ".." resolved as far as they go ("a/./b/../c" is
-- "a/c", "../a/../b" is "../b", "/../x" is "/x").
function M.normal(path)
  local abs, out = path:sub(1, 1) == "/", {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      if #out > 0 and out[#out] ~= ".." then out[#out] = nil
      elseif not abs then out[#out + 1] = ".." end
    elseif part ~= "." then
      out[#out + 1] = part
    end
  end
  return (abs and "/" or "") .. table.concat(out, "/")
end

-- Whether path (resolved by M.normal) lies in dir (resolved too; "" is the
-- current directory, "/" the whole disk).
local function within(path, dir)
  if dir == "" then
    return path:sub(1, 1) ~= "/" and path ~= ".." and path:sub(1, 3) ~= "../"
  end
  if dir == "/" then return path:sub(1, 1) == "/" end
  return path:sub(1, #dir + 1) == dir .. "/"
end

-- M.dirs(list, what): the allowed directories of a load, each resolved by
-- M.normal, or an error naming what gave them.
function M.dirs(list, what)
  if type(list) ~= "table" then
    error(what .. ": include_dirs must be a list of directories (got " ..
          type(list) .. ")", 0)
  end
  local out = {}
  for _, dir in ipairs(list) do
    if type(dir) ~= "string" then
      error(what .. ": include_dirs: a directory must be a string", 0)
    end
    out[#out + 1] = M.normal(dir)
  end
  return out
end

-- M.resolve(name, base, dirs [, folder]): the path a file names (relative
-- to the directory base, "" for the current one), resolved, or nil when it
-- lies outside every directory of dirs; with folder, the path of a folder,
-- which may be one of dirs itself.
function M.resolve(name, base, dirs, folder)
  local path = name
  if path:sub(1, 1) ~= "/" and base ~= "" then
    path = base:gsub("/*$", "") .. "/" .. path
  end
  local full = M.normal(path)
  for _, dir in ipairs(dirs) do
    if within(full, dir) or (folder and full == dir) then return full end
  end
  return nil
end

-- The directory of a file's path as written ("" for none).
function M.dir(path)
  return path:match("^(.*)/[^/]*$") or ""
end

M.MAX_FOLDER = 1024 -- tree files one library folder may hold

-- M.folder(path, exts): the names in the directory path of the files whose
-- extension is one of exts (a set: [".xml"] = true), sorted, without
-- hidden files (a name starting with ".") nor subdirectories; nil when
-- path is no directory, or nil and a message when it holds more than
-- M.MAX_FOLDER of them.
function M.folder(path, exts)
  local names = core._dir(path == "" and "." or path)
  if not names then return nil end
  local out = {}
  for _, name in ipairs(names) do
    local ext = name:match("%.[^./]*$")
    if ext and exts[ext] and name:sub(1, 1) ~= "." and
       not core._dir(path == "" and name or path .. "/" .. name) then
      out[#out + 1] = name
    end
  end
  if #out > M.MAX_FOLDER then
    return nil, path .. ": more than " .. M.MAX_FOLDER .. " tree files " ..
                "in one folder"
  end
  table.sort(out)
  return out
end

-- M.library(list, base, dirs, exts, what): the entries of a load's library
-- option (a path or a list of paths of files and folders, relative to the
-- directory base): a list of { path = as written, full = resolved (nil
-- when outside dirs: the reader refuses it), folder = the folder it was
-- found in, if any (M.check: a link in it must not lead out) }, a folder
-- standing for its files of the extensions exts (M.folder); and the list
-- of the folders. what (the loaded file) begins the messages of a bad
-- option.
function M.library(list, base, dirs, exts, what)
  local entries, folders = {}, {}
  if list == nil then return entries, folders end
  if type(list) == "string" then list = { list } end
  if type(list) ~= "table" then
    error(what .. ": library must be a file, a folder or a list of them " ..
          "(got " .. type(list) .. ")", 0)
  end
  for i, path in ipairs(list) do
    if type(path) ~= "string" or path == "" then
      error(what .. ": library: entry " .. i .. " must be a path", 0)
    end
    local full = M.resolve(path, base, dirs, true)
    local names, err
    if full then names, err = M.folder(full, exts) end
    if err then error(what .. ": library: " .. err, 0) end
    if names then
      folders[#folders + 1] = full
      local written = path:gsub("/*$", "")
      for _, name in ipairs(names) do
        entries[#entries + 1] = { path = written .. "/" .. name,
          full = M.normal((full == "" and "" or full .. "/") .. name),
          folder = full }
      end
    else
      entries[#entries + 1] = { path = path, full = full }
    end
  end
  return entries, folders
end

-- M.read(path [, max]): the bytes of a regular file of at most max bytes
-- (default M.MAX_SIZE), or nil and a message.
function M.read(path, max)
  return core._readfile(path, max or M.MAX_SIZE)
end

-- M.check(path, dirs [, what]): true when the real location of path
-- (symbolic links followed) lies in one of dirs (resolved), else nil and a
-- message ("PATH: leads outside WHAT (to REAL)"; what: "the directories
-- allowed" unless given).
function M.check(path, dirs, what)
  local where, err = core._realpath(path)
  if not where then return nil, err end
  for _, d in ipairs(dirs) do
    local r = core._realpath(d == "" and "." or d)
    if r and (where == r or within(where, r)) then return true end
  end
  return nil, path .. ": leads outside " .. (what or
              "the directories allowed") .. " (to " .. where .. ")"
end

-- M.reader(): the file reader of one load, read(path [, dirs]) -> text or
-- nil, message. It reads each file once (a file used twice, or by two
-- files, comes from what was read), M.MAX_SIZE bytes in all, and, given
-- dirs (the load's allowed directories, resolved), refuses a path whose
-- real location (symbolic links followed) lies outside all of them.
function M.reader()
  local texts, left = {}, M.MAX_SIZE
  return function(path, dirs)
    if dirs then
      local ok, err = M.check(path, dirs)
      if not ok then return nil, err end
    end
    local text = texts[path]
    if text then return text end
    local err
    text, err = M.read(path, left)
    if not text then
      if err:find(": file too large", 1, true) and left < M.MAX_SIZE then
        err = path .. ": the files of this load are larger than " ..
              M.MAX_SIZE .. " bytes in all"
      end
      return nil, err
    end
    left = left - #text
    texts[path] = text
    return text
  end
end

return M
