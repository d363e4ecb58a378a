-- packaging_spec.lua: what the packages must agree on. One version in
-- bt.VERSION, BONSAI_VERSION (include/bonsai.h), the meson project, the
-- rockspec (file name and version) and the first section of CHANGELOG.md;
-- the rockspec builds every C source that src/core/meson.build and src/lua/meson.build list and
-- installs every Lua file of lua/bonsai/, and nothing else.

local bt = require "bonsai"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Lines of a shell command's output (run without the sanitizer runtime
-- that the ASan build preloads into lua5.4).
local function lines(cmd)
  local out, p = {}, assert(io.popen("env -u LD_PRELOAD " .. cmd))
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- The one rockspec at the top: its file name and its fields.
local function rockspec()
  local found = lines("sh -c 'ls bonsai-*.rockspec 2>/dev/null'")
  assert.are.equal(1, #found, "want one bonsai-*.rockspec at the top")
  local env = {}
  assert(require("bonsai.compat").load(read(found[1]), "@" .. found[1], "t",
                                     env))()
  return found[1], env
end

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function keys(s)
  local list = {}
  for k in pairs(s) do list[#list + 1] = k end
  table.sort(list)
  return list
end

-- a minus b, sorted
local function minus(a, b)
  local d = {}
  for k in pairs(a) do
    if not b[k] then d[#d + 1] = k end
  end
  table.sort(d)
  return d
end

describe("versions", function()
  local v = bt.VERSION

  it("bt.VERSION is MAJOR.MINOR.PATCH", function()
    assert.is_truthy(v:match("^%d+%.%d+%.%d+$"), v)
  end)

  it("BONSAI_VERSION and the meson project agree", function()
    assert.are.equal(v, read("include/bonsai.h"):match(
      '#define BONSAI_VERSION "([^"]+)"'))
    assert.are.equal(v, read("meson.build"):match(
      "project%b()"):match("version:%s*'([^']+)'"))
  end)

  it("the rockspec agrees", function()
    local name, spec = rockspec()
    assert.are.equal("bonsai", spec.package)
    assert.are.equal(v, spec.version:match("^(.-)%-%d+$"))
    assert.are.equal("bonsai-" .. spec.version .. ".rockspec", name)
  end)

  it("CHANGELOG.md opens with its section", function()
    local first = read("CHANGELOG.md"):match("\n## ([^\n]*)")
    assert.are.equal(v, first:match("^(%S+)"), first)
  end)
end)

describe("the rockspec", function()
  local _, spec = rockspec()
  local modules = spec.build.modules

  it("builds every C source of src/core and src/lua into bonsai.core", function()
    local want = {}
    for _, dir in ipairs { "src/core", "src/lua" } do
      for name in read(dir .. "/meson.build"):gmatch("'([%w_%-/]+%.c)'") do
        want[dir .. "/" .. name] = true
      end
    end
    assert.is_truthy(next(want), "no sources found in src/*/meson.build")
    local have = set(modules["bonsai.core"].sources)
    assert.are.same({}, minus(want, have),
      "in src/*/meson.build, missing from the rockspec")
    assert.are.same({}, minus(have, want),
      "in the rockspec, not in src/*/meson.build")
  end)

  it("installs every Lua file of lua/bonsai/ under its module name", function()
    local want = {}
    for _, path in ipairs(lines("sh -c \"find lua/bonsai -name '*.lua'\"")) do
      local name = path:gsub("^lua/", ""):gsub("%.lua$", "")
                       :gsub("/init$", ""):gsub("/", ".")
      want[name] = path
    end
    local have = {}
    for name, m in pairs(modules) do
      if type(m) == "string" then have[name] = m end
    end
    assert.are.same(want, have)
  end)

  it("installs every file of viewer/ in bonsai/viewer/, as meson does",
     function()
    local want = set(lines("sh -c 'ls viewer'"))
    local have = {}
    for name, file in pairs(spec.build.install.lua) do
      assert.is_truthy(name:match("^bonsai%.viewer%.[%w_]+$"), name)
      local base = file:match("^viewer/([^/]+)$")
      assert.is_truthy(base, file)
      have[base] = true
    end
    assert.are.same(keys(want), keys(have))
    assert.is_truthy(read("meson.build"):find(
      "install_subdir('viewer', install_dir: lua_lmod / 'bonsai')", 1, true))
  end)

  it("needs only Lua, 5.1 to 5.4 (LuaJIT counts as 5.1)", function()
    assert.are.same({ "lua >= 5.1, < 5.5" }, spec.dependencies)
  end)
end)

describe("the README", function()
  local readme = read("README.md")

  it("shows samples/quickstart.lua's example word for word", function()
    local block = readme:match("\n## A guard in Lua\n.-\n```lua\n(.-\n)```\n")
    assert.is_truthy(block, "README.md: no lua block under '## A guard in Lua'")
    local sample = read("samples/quickstart.lua")
    local body = sample:match("\n%-%- The README's example\n(.-\n)\n%-%- What the README")
    assert.is_truthy(body, "samples/quickstart.lua: no example between its marks")
    assert.are.equal(body, block)
  end)

  it("stays a front page: under 40 KB, every docs/ page it links exists", function()
    assert.is_true(#readme < 40 * 1024, "README.md is " .. #readme .. " bytes")
    for path in readme:gmatch("%]%((docs/[^)#]+)") do
      assert.is_truthy(io.open(path), "README.md links " .. path .. ", which is missing")
    end
  end)
end)
