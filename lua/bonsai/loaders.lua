-- bonsai.loaders: the loader registry (bt.loaders) behind bt.load,
-- bt.reload and bt.import, and the files loaded (which bonsai.watch reads:
-- it depends on this module, never the reverse). A loader turns a file into
-- the plain node tables bt.tree compiles, so the C core never sees a format:
-- bt.loaders[".ext"](path, opts) -> node or tree [, tree options]. Files of
-- editor formats are data: loading one runs no code from it.

local compat = require "bonsai.compat"
local paths = require "bonsai.paths"

local MAX_SIZE = paths.MAX_SIZE -- bytes; larger tree files are refused

local formats = {
  behavior3 = "bonsai.formats.behavior3",
  btcpp = "bonsai.formats.btcpp",
  edges = "bonsai.formats.edges",
}

-- The options bt.import and bt.load take, per format (any other is
-- refused; bt.load checks them when its loader is the format's built-in).
local import_options = {
  behavior3 = "file read deps dir include_dirs tree library",
  btcpp = "file read deps main include_dirs library",
  edges = "file",
  lua = "file",
}

local M = {
  loaded = {},  -- path -> tree loaded from it
  deps = {},    -- path -> files it used (subtree files), for bt.poll
  folders = {}, -- path -> library folders it read (bt.poll lists them)
  options = {}, -- path -> the options of bt.load(path, opts), for reloads
  registry = {}, -- bt.loaders: ".ext" -> loader
}

local bt -- the module bonsai (M.bind): what tree files and formats see
local after_load = {} -- functions called with a path (re)loaded (M.on_load)

-- M.bind(bt): the module these loaders make trees with, given once by
-- init.lua (bt.load and the rest are this module's functions).
function M.bind(module)
  bt = module
end

-- M.on_load(fn): fn(path) after each successful bt.load or bt.reload of
-- path (bonsai.watch counts the file and the files it uses as seen).
function M.on_load(fn)
  after_load[#after_load + 1] = fn
end

local function loaded(path)
  for _, fn in ipairs(after_load) do fn(path) end
end

local function format(name)
  local m = formats[name]
  if not m then
    local near = type(name) == "string" and
                 bt._nearest(name, "behavior3 btcpp edges lua")
    error("unknown format '" .. tostring(name) .. "'" ..
          (near and " (did you mean '" .. near .. "'?)" or
           " (behavior3, btcpp, edges or lua)"), 3)
  end
  return require(m)
end

-- Runs a Lua tree or leaf file with bt in scope; returns true and what the
-- file returned, or nil and a message.
local function runfile(path)
  local env = setmetatable({ bt = bt }, { __index = _G })
  local text, err = paths.read(path)
  if not text then return nil, err end
  local chunk
  chunk, err = compat.load(text, "@" .. path, "t", env)
  if not chunk then return nil, err end
  local ok, res, opts = pcall(chunk)
  if not ok then return nil, tostring(res) end
  return true, res, opts
end
M.runfile = runfile

local loaders = M.registry
local formatof = {} -- a built-in loader -> its format (for its options)

loaders[".lua"] = function(path)
  local ok, res, opts = runfile(path)
  if not ok then error(res, 0) end
  return res, opts
end
formatof[loaders[".lua"]] = "lua"

-- A loader of an editor format: reads the file and parses it; subtree
-- files it names are read relative to it (bonsai.paths: inside the
-- directories allowed, each once, 8 MB in all) and recorded as
-- dependencies.
local function fileloader(name)
  local function load(path, opts)
    local read = paths.reader()
    local text, err = read(path)
    if not text then error(err, 0) end
    local o = {}
    for k, v in pairs(opts or {}) do o[k] = v end
    o.file, o.bt = path, bt
    o.deps, o.folders = o.deps or {}, o.folders or {}
    o.read = o.read or read
    local node, topts = format(name).parse(text, o)
    M.deps[path], M.folders[path] = o.deps, o.folders
    return node, topts
  end
  formatof[load] = name
  return load
end
loaders[".json"] = fileloader "behavior3"
loaders[".b3"] = fileloader "behavior3"
loaders[".xml"] = fileloader "btcpp"
loaders[".bt"] = fileloader "edges"

-- bt.import(text, format [, opts]): the root node described by text, and
-- the tree options the file gives (its name, an edge file's priority).
function M.import(text, fmt, opts)
  if type(text) ~= "string" then
    error("bad argument #1 to 'import' (string expected, got " ..
          type(text) .. ")", 2)
  end
  if import_options[fmt] then
    local ok, err = pcall(bt._checkopts, opts,
                          "bt.import (" .. fmt .. ")", import_options[fmt])
    if not ok then error(err, 2) end
  end
  if fmt == "lua" then
    local env = setmetatable({ bt = bt }, { __index = _G })
    local chunk = assert(compat.load(text, "=" .. ((opts or {}).file or "import"),
                              "t", env))
    return (chunk())
  end
  if #text > MAX_SIZE then
    error(((opts or {}).file or "import") .. ": text too large", 2)
  end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.bt, o.deps = bt, o.deps or {}
  o.read = o.read or paths.reader()
  return format(fmt).parse(text, o)
end

local function basename(path)
  return ((path:match("([^/]+)$") or path):gsub("%.[^.]*$", ""))
end

-- Runs the loader for path with the load options: what it returned, or
-- nil and a message.
local function run(path)
  local loader = loaders[path:match("%.[^./]*$") or ""]
  if not loader then
    return nil, path .. ": no loader for this file (see bt.loaders)"
  end
  local o = {}
  for k, v in pairs(M.options[path] or {}) do o[k] = v end
  local ok, res, opts = pcall(loader, path, o)
  if not ok then return nil, tostring(res) end
  if not bt.istree(res) and not bt.isnode(res) and
     not (type(res) == "table" and type(res.type) == "string") then
    return nil, path .. ": the file must return a node or a tree (got " ..
           (type(res) == "userdata" and "a userdata that is no tree" or
            type(res)) .. ")"
  end
  return res, opts
end

local function checkpath(path, fname)
  if type(path) ~= "string" then
    error("bad argument #1 to '" .. fname .. "' (string expected, got " ..
          type(path) .. ")", 3)
  end
end

-- bt.load(path [, opts]): a tree from a file (a node becomes a tree named
-- after the file); the tree, or nil and a message. opts go to the loader
-- (main: the BehaviorTree.CPP tree to run) and are kept for bt.reload and
-- bt.poll.
function M.load(path, opts)
  checkpath(path, "load")
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #2 to 'load' (table expected, got " ..
          type(opts) .. ")", 2)
  end
  local fmt = formatof[loaders[path:match("%.[^./]*$") or ""]]
  if fmt then
    local ok, err = pcall(bt._checkopts, opts, "bt.load (" .. fmt .. ")",
                          import_options[fmt])
    if not ok then error(err, 2) end
  end
  local kept = {}
  for k, v in pairs(opts or {}) do kept[k] = v end
  M.options[path] = kept
  local res, topts = run(path)
  if not res then return nil, topts end
  local tree = res
  if not bt.istree(res) then
    local o = {}
    for k, v in pairs(topts or {}) do o[k] = v end
    o.name = o.name or basename(path)
    local good, t = pcall(bt.tree, res, o)
    if not good then return nil, t end
    tree = t
  end
  M.loaded[path] = tree
  loaded(path)
  return tree
end

-- bt.reload(path): compiles the file again into the tree loaded from it;
-- the tree, or nil and a message with the old version left running.
function M.reload(path)
  checkpath(path, "reload")
  local tree = M.loaded[path]
  if not tree then return M.load(path) end
  local res, opts = run(path)
  if not res then return nil, opts end
  local good, err = tree:reload(res, opts)
  if not good then return nil, err end
  loaded(path)
  return tree
end

-- tree:export(format): the tree's current version as text of an editor
-- ("behavior3", the classic editor's; "behavior3-current", the current
-- behavior3 editor's; "btcpp").
function M.export(tree, fmt, def)
  if not def then
    error("tree '" .. tree.name .. "' was not built from node tables", 3)
  end
  local current = fmt == "behavior3-current" -- the current editor's file
  return format(current and "behavior3" or fmt).export(def.root,
    { name = tree.name, opts = def.opts, bt = bt, current = current })
end

return M
