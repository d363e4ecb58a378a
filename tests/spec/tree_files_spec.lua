-- tree_files_spec: files come from modders (docs/FORMATS.md, "Which files
-- a tree file may read"). Every file the game names (bt.load, bt.reload,
-- bt.watch and bt.poll, a Lua tree or leaf file) and every path a file can
-- name (a BehaviorTree.CPP include, a behavior3 subtree path) against what
-- a modder can write: FIFOs, devices, files larger than the bound or
-- larger than their size says. Regression test of the repro
-- files_unbounded_read.
local bt = require "bonsai"
local core = require "bonsai.core"
local paths = require "bonsai.paths"

local root -- a directory of its own per test: root/mod holds the game's trees
before_each(function()
  root = os.tmpname()
  os.remove(root)
  assert(os.execute("mkdir -p '" .. root .. "/mod/sub'"))
end)
after_each(function() os.execute("rm -rf '" .. root .. "'") end)

local function write(name, text)
  local f = assert(io.open(root .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return root .. "/" .. name
end

local function sh(cmd) assert(os.execute(cmd)) end

-- Counts the files opened for reading while fn runs (every read of a tree
-- file goes through core._readfile).
local function reads(fn)
  local list, orig = {}, core._readfile
  core._readfile = function(path, max)
    list[#list + 1] = path
    return orig(path, max)
  end
  local ok, err = pcall(fn)
  core._readfile = orig
  assert(ok, err)
  return list
end

local XML_MAIN = '<root BTCPP_format="4" main_tree_to_execute="M">%s' ..
  '<BehaviorTree ID="M"><AlwaysSuccess/></BehaviorTree></root>'
local XML_SUB = '<root BTCPP_format="4"><BehaviorTree ID="S%d">' ..
  '<AlwaysSuccess/></BehaviorTree></root>'

-- A BehaviorTree.CPP file in mod/ including name, and a behavior3 file in
-- mod/ whose subtree has that path.
local function btcpp(name)
  return write("mod/main.xml",
               XML_MAIN:format('<include path="' .. name .. '"/>'))
end
local function b3(name)
  return write("mod/main.json", '{"name":"t","root":{"name":"Sequence",' ..
    '"children":[{"name":"Sub","path":"' .. name .. '"}]}}')
end
local B3_SUB = '{"name":"s","root":{"name":"JustSuccess"}}'

-- bt.load of a file naming name refuses it; the message and the files read.
local function refused(file)
  local tree, msg
  local list = reads(function() tree, msg = bt.load(file) end)
  assert.is_nil(tree)
  assert.is_string(msg)
  return msg, list
end

describe("a file read for a tree", function()
  it("must be a regular file: a FIFO is refused, never waited on, and so " ..
     "are devices and directories", function()
    sh("mkfifo '" .. root .. "/mod/fifo.xml' '" .. root .. "/mod/fifo.json' '" ..
       root .. "/mod/fifo.lua'")
    sh("ln -s /dev/zero '" .. root .. "/mod/zero.xml'")
    sh("ln -s /dev/null '" .. root .. "/mod/null.json'")
    sh("mkdir '" .. root .. "/mod/dir.xml'")
    local function notregular(msg, what)
      assert.truthy(msg:find("not a regular file (" .. what .. ")", 1, true),
                    msg)
    end
    notregular(refused(btcpp("fifo.xml")), "a FIFO")
    notregular(refused(b3("fifo.json")), "a FIFO")
    notregular(refused(btcpp("dir.xml")), "a directory")
    notregular(refused(btcpp("zero.xml")), "a device")
    notregular(refused(b3("null.json")), "a device")
    -- the files the game names itself
    notregular(refused(root .. "/mod/fifo.xml"), "a FIFO")
    notregular(refused(root .. "/mod/fifo.lua"), "a FIFO")
    notregular(refused(root .. "/mod/dir.xml"), "a directory")
    sh("ln -s /dev/zero '" .. root .. "/zero.xml'")
    notregular(refused(root .. "/zero.xml"), "a device")
    sh("ln -s /dev/zero '" .. root .. "/zero.lua'")
    notregular(refused(root .. "/zero.lua"), "a device")
  end)

  it("is read up to the bound, whatever its size says", function()
    local max = paths.MAX_SIZE
    finally(function() paths.MAX_SIZE = max end)
    paths.MAX_SIZE = 1000
    local text = XML_MAIN:format(("<!-- x -->"):rep(200))
    local file = write("mod/big.xml", text)
    assert.equal(file .. ": file too large (" .. #text .. " bytes, at most " ..
                 "1000)", select(2, bt.load(file)))
    -- a file larger than its size says (the kernel's files say 0)
    local f = io.open("/proc/self/status")
    if f then
      f:close()
      local text, err = paths.read("/proc/self/status", 100)
      assert.is_nil(text)
      assert.equal("/proc/self/status: file too large (more than 100 " ..
                   "bytes)", err)
      assert.truthy(paths.read("/proc/self/status", 1e6))
    end
    -- the bound is for the whole load: the loaded file and what it names
    write("mod/a.xml", XML_SUB:format(1) .. (" "):rep(400))
    write("mod/b.xml", XML_SUB:format(2) .. (" "):rep(400))
    local main = write("mod/main.xml", XML_MAIN:format(
      '<include path="a.xml"/><include path="b.xml"/>'))
    local _, msg = bt.load(main)
    assert.matches("node 'include': cannot include: .*/mod/b%.xml: the " ..
                   "files of this load are larger than 1000 bytes in all",
                   msg)
  end)

  it("is refused by bt.reload and bt.poll as by bt.load, and the old " ..
     "version keeps running", function()
    local file = write("mod/t.xml", XML_MAIN:format(""))
    local tree = assert(bt.load(file))
    assert.is_true(bt.watch(root .. "/mod"))
    os.remove(file)
    sh("mkfifo '" .. file .. "'")
    local t, msg = bt.reload(file)
    assert.is_nil(t)
    assert.matches("not a regular file %(a FIFO%)", msg)
    local reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    assert.equal(1, #failed)
    assert.matches("not a regular file %(a FIFO%)", failed[1].error)
    assert.equal("success", bt.agent(tree):tick(1))
    -- a leaf file that became a FIFO in a watched folder
    sh("mkfifo '" .. root .. "/mod/leaves.lua'")
    reloaded, failed = bt.poll()
    assert.same({}, reloaded)
    for _, fl in ipairs(failed) do
      assert.matches("not a regular file %(a FIFO%)", fl.error)
    end
  end)
end)
