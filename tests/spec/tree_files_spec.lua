-- tree_files_spec: files come from modders (docs/FORMATS.md, "Which files
-- a tree file may read"). Every path a file can name (a BehaviorTree.CPP
-- include, a behavior3 subtree path) and every file the game names
-- (bt.load, bt.reload, bt.watch and bt.poll, bt.import with a file, a Lua
-- tree or leaf file) against what a modder can write: "../", absolute
-- paths, symbolic links that lead out, FIFOs, devices, files larger than
-- the bound or larger than their size says; and includes in a diamond,
-- which are read once per load. Regression tests of the repros
-- files_b3_path_outside and files_unbounded_read.
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

describe("a path a tree file names", function()
  it("stays inside the loaded file's directory: '..' and absolute paths " ..
     "are refused before anything is read", function()
    write("secret.xml", XML_SUB:format(1))
    write("secret.json", B3_SUB)
    for _, case in ipairs {
      { btcpp, "../secret.xml", "include '../secret.xml' is outside" },
      { btcpp, root .. "/secret.xml", "is outside the directories allowed" },
      { btcpp, "sub/../../secret.xml", "is outside the directories allowed" },
      { btcpp, "/etc/passwd", "include '/etc/passwd' is outside" },
      { b3, "../secret.json", "subtree path '../secret.json' is outside" },
      { b3, root .. "/secret.json", "is outside the directories allowed" },
      { b3, "sub/../../secret.json", "is outside the directories allowed" },
      { b3, "/etc/passwd", "subtree path '/etc/passwd' is outside" },
      { b3, "/dev/zero", "subtree path '/dev/zero' is outside" },
    } do
      local file = case[1](case[2])
      local msg, list = refused(file)
      assert.truthy(msg:find(case[3], 1, true), msg)
      assert.truthy(msg:find("bt.load's include_dirs option adds others",
                             1, true), msg)
      assert.same({ file }, list) -- the loaded file only
    end
  end)

  it("may go where the game allows (include_dirs), and no further",
     function()
    sh("mkdir -p '" .. root .. "/common' '" .. root .. "/other'")
    write("common/a.xml", XML_SUB:format(1))
    write("common/a.json", B3_SUB)
    write("other/b.xml", XML_SUB:format(2))
    local dirs = { root .. "/mod", root .. "/common" }
    assert.truthy(bt.load(btcpp("../common/a.xml"), { include_dirs = dirs }))
    assert.truthy(bt.load(b3("../common/a.json"), { include_dirs = dirs }))
    local _, msg = bt.load(btcpp("../other/b.xml"), { include_dirs = dirs })
    assert.matches("is outside the directories allowed", msg)
    -- behavior3's workspace directory: paths are relative to it, and it is
    -- where they may lead by default
    write("mod/sub/w.json", B3_SUB)
    local tree = bt.load(b3("sub/w.json"), { dir = root .. "/mod" })
    assert.truthy(tree)
    _, msg = bt.load(b3("../secret.json"), { dir = root .. "/mod" })
    assert.matches("is outside the directories allowed %(" ..
                   root:gsub("%p", "%%%0") .. "/mod;", msg)
  end)

  it("is refused when a symbolic link inside leads outside", function()
    write("secret.xml", XML_SUB:format(1))
    write("secret.json", B3_SUB)
    sh("ln -s '" .. root .. "/secret.xml' '" .. root .. "/mod/link.xml'")
    sh("ln -s '" .. root .. "/secret.json' '" .. root .. "/mod/link.json'")
    sh("ln -s '" .. root .. "' '" .. root .. "/mod/up'") -- a directory
    for _, case in ipairs {
      { btcpp, "link.xml" }, { btcpp, "up/secret.xml" },
      { b3, "link.json" }, { b3, "up/secret.json" },
    } do
      local file = case[1](case[2])
      local msg, list = refused(file)
      assert.truthy(msg:find("leads outside the directories allowed (to " ..
                             root .. "/secret.", 1, true), msg)
      assert.same({ file }, list)
    end
    -- a link that stays inside is followed
    write("mod/sub/in.xml", XML_SUB:format(3))
    sh("ln -s '" .. root .. "/mod/sub/in.xml' '" .. root .. "/mod/in.xml'")
    assert.truthy(bt.load(btcpp("in.xml")))
  end)
end)

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
    -- a link to a device leads outside, and a device in the folder is
    -- refused as one
    assert.matches("leads outside", (refused(btcpp("zero.xml"))))
    assert.matches("leads outside", (refused(b3("null.json"))))
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

  it("is read by bt.readfile with the same checks (the tools' reader)",
     function()
    local file = write("mod/a.txt", "abc\0def")
    assert.equal("abc\0def", bt.readfile(file))
    assert.equal("abc\0def", bt.readfile(file, 7))
    assert.same({ nil, file .. ": file too large (7 bytes, at most 6)" },
                { bt.readfile(file, 6) })
    sh("mkfifo '" .. root .. "/mod/fifo'")
    assert.same({ nil, root .. "/mod/fifo: not a regular file (a FIFO)" },
                { bt.readfile(root .. "/mod/fifo") })
    assert.same({ nil, root .. "/mod: not a regular file (a directory)" },
                { bt.readfile(root .. "/mod") })
    local none, err = bt.readfile(root .. "/none")
    assert.is_nil(none)
    assert.matches("/none: ", err)
    -- the default bound is a load's (8 MB)
    local max = paths.MAX_SIZE
    finally(function() paths.MAX_SIZE = max end)
    paths.MAX_SIZE = 5
    assert.equal(file .. ": file too large (7 bytes, at most 5)",
                 select(2, bt.readfile(file)))
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

describe("files a load names more than once", function()
  -- a diamond: level i's two files both include level i+1's two files
  local function diamond(levels, ext)
    for i = 0, levels do
      for _, p in ipairs { "a", "b" } do
        local name = "mod/" .. p .. i .. ext
        if ext == ".xml" then
          local inc = i < levels and ('<include path="a' .. (i + 1) ..
            '.xml"/><include path="./b' .. (i + 1) .. '.xml"/>') or ""
          write(name, i == 0 and p == "a" and XML_MAIN:format(inc) or
                '<root BTCPP_format="4">' .. inc .. '</root>')
        else
          local kids = i < levels and ('[{"name":"S","path":"a' .. (i + 1) ..
            '.json"},{"name":"S","path":"./b' .. (i + 1) .. '.json"}]') or
            '[]'
          write(name, '{"name":"t","root":{"name":"Sequence","children":' ..
                kids .. '}}')
        end
      end
    end
    return root .. "/mod/a0" .. ext
  end

  it("reads each once: includes in a diamond load at once", function()
    local file = diamond(30, ".xml") -- 2^30 paths through the includes
    local tree
    local list = reads(function() tree = bt.load(file) end)
    assert.truthy(tree)
    assert.equal(61, #list) -- each of the 62 files once, but b0
  end)

  it("reads each subtree file once: a diamond is refused at the node " ..
     "bound", function()
    local file = diamond(30, ".json")
    local tree, msg
    local list = reads(function() tree, msg = bt.load(file) end)
    assert.is_nil(tree)
    assert.matches("the tree expands to more than 100000 nodes", msg)
    assert.is_true(#list <= 61, #list .. " reads")
  end)
end)
