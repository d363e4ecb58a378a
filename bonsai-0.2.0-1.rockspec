-- bonsai-0.2.0-1.rockspec: `luarocks make` builds the C module bonsai.core
-- (the C core and the Lua binding, from src/) and installs the Lua modules
-- of lua/bonsai/ with LuaRocks' builtin build type, and the live
-- debugger's page (viewer/) beside them, in bonsai/viewer/ (build.install:
-- a file of bonsai.viewer.NAME lands in bonsai/viewer/ under its own name).
-- tests/spec/packaging_spec.lua checks that every source file of src/core
-- and src/lua, every lua/bonsai/*.lua and every file of viewer/ is listed
-- here.
rockspec_format = "3.0"
package = "bonsai"
version = "0.2.0-1"
source = {
  -- `luarocks make` builds the checkout and never fetches this; set it to
  -- the published repository before `luarocks upload`.
  url = "git+https://example.invalid/bonsai.git",
  tag = "v0.2.0",
}
description = {
  summary = "Behavior trees for game AI: a C core scripted in Lua (5.1-5.4, LuaJIT)",
  detailed = [[
Trees are compiled once into a flat, immutable blueprint shared by every
agent; ticking is an iterative loop in C that enters Lua only for Lua
leaves. Composites, decorators, guards with observer aborts, coroutine
tasks, blackboards, hot reload and a fluent builder.]],
  license = "MIT",
  labels = { "gamedev", "ai", "behavior-tree" },
}
dependencies = {
  "lua >= 5.1, < 5.5", -- 5.1 and LuaJIT, 5.3, 5.4
}
build = {
  type = "builtin",
  modules = {
    ["bonsai.core"] = {
      sources = {
        -- the C core (src/core/meson.build: core_sources)
        "src/core/agent.c",
        "src/core/blackboard.c",
        "src/core/compile.c",
        "src/core/def.c",
        "src/core/dump.c",
        "src/core/env.c",
        "src/core/error.c",
        "src/core/events.c",
        "src/core/inspect.c",
        "src/core/kinds.c",
        "src/core/latent.c",
        "src/core/names.c",
        "src/core/nearest.c",
        "src/core/reload.c",
        "src/core/fault.c",
        "src/core/profile.c",
        "src/core/trace.c",
        "src/core/save.c",
        "src/core/step.c",
        "src/core/tree.c",
        "src/core/vm.c",
        -- the binding (src/lua/meson.build: binding_sources)
        "src/lua/lagent.c",
        "src/lua/lblackboard.c",
        "src/lua/lbonsai.c",
        "src/lua/lcheck.c",
        "src/lua/levents.c",
        "src/lua/lfiles.c",
        "src/lua/linit.c",
        "src/lua/lleaf.c",
        "src/lua/ltrace.c",
        "src/lua/lsave.c",
        "src/lua/lsleep.c",
        "src/lua/lstep.c",
        "src/lua/ltick.c",
        "src/lua/ltree.c",
      },
      incdirs = { "include" },
      defines = { "NDEBUG" },
    },
    ["bonsai"] = "lua/bonsai/init.lua",
    ["bonsai.builder"] = "lua/bonsai/builder.lua",
    ["bonsai.debug"] = "lua/bonsai/debug.lua", -- needs lua-socket, lua-cjson
    ["bonsai.debug.breakpoints"] = "lua/bonsai/debug/breakpoints.lua",
    ["bonsai.debug.catchup"] = "lua/bonsai/debug/catchup.lua",
    ["bonsai.debug.commands"] = "lua/bonsai/debug/commands.lua",
    ["bonsai.debug.faults"] = "lua/bonsai/debug/faults.lua",
    ["bonsai.debug.nodeids"] = "lua/bonsai/debug/nodeids.lua",
    ["bonsai.debug.stepper"] = "lua/bonsai/debug/stepper.lua",
    ["bonsai.debug.watches"] = "lua/bonsai/debug/watches.lua",
    ["bonsai.debug.session"] = "lua/bonsai/debug/session.lua",
    ["bonsai.debug.server"] = "lua/bonsai/debug/server.lua",
    ["bonsai.debug.edit"] = "lua/bonsai/debug/edit.lua",
    ["bonsai.debug.edit.apply"] = "lua/bonsai/debug/edit/apply.lua",
    ["bonsai.debug.edit.editor"] = "lua/bonsai/debug/edit/editor.lua",
    ["bonsai.debug.edit.file"] = "lua/bonsai/debug/edit/file.lua",
    ["bonsai.debug.edit.history"] = "lua/bonsai/debug/edit/history.lua",
    ["bonsai.debug.edit.luatext"] = "lua/bonsai/debug/edit/luatext.lua",
    ["bonsai.debug.edit.make"] = "lua/bonsai/debug/edit/make.lua",
    ["bonsai.debug.edit.node"] = "lua/bonsai/debug/edit/node.lua",
    ["bonsai.debug.edit.ops"] = "lua/bonsai/debug/edit/ops.lua",
    ["bonsai.debug.edit.palette"] = "lua/bonsai/debug/edit/palette.lua",
    ["bonsai.debug.edit.preview"] = "lua/bonsai/debug/edit/preview.lua",
    ["bonsai.debug.edit.save"] = "lua/bonsai/debug/edit/save.lua",
    ["bonsai.http"] = "lua/bonsai/http.lua", -- needs lua-socket
    ["bonsai.export"] = "lua/bonsai/export.lua",
    ["bonsai.profile"] = "lua/bonsai/profile.lua",
    ["bonsai.record"] = "lua/bonsai/record.lua", -- needs lua-cjson
    ["bonsai.script"] = "lua/bonsai/script.lua", -- needs lpeg
    ["bonsai.subscribe"] = "lua/bonsai/subscribe.lua",
    ["bonsai.loaders"] = "lua/bonsai/loaders.lua",
    ["bonsai.luajit"] = "lua/bonsai/luajit.lua",
    ["bonsai.paths"] = "lua/bonsai/paths.lua",
    ["bonsai.watch"] = "lua/bonsai/watch.lua",
    ["bonsai.nodes.leaves"] = "lua/bonsai/nodes/leaves.lua",
    ["bonsai.nodes.controls"] = "lua/bonsai/nodes/controls.lua",
    ["bonsai.formats.kit"] = "lua/bonsai/formats/kit.lua",
    ["bonsai.formats.xml"] = "lua/bonsai/formats/xml.lua",
    ["bonsai.formats.btcpp"] = "lua/bonsai/formats/btcpp.lua",
    ["bonsai.formats.behavior3"] = "lua/bonsai/formats/behavior3.lua",
    ["bonsai.formats.edges"] = "lua/bonsai/formats/edges.lua",
    ["bonsai.compat"] = "lua/bonsai/compat.lua",
    ["bonsai.meta"] = "lua/bonsai/meta.lua", -- annotations for editors
    ["bonsai.test"] = "lua/bonsai/test.lua", -- the test kit
    ["bonsai.test.standin"] = "lua/bonsai/test/standin.lua",
    ["bonsai.test.golden"] = "lua/bonsai/test/golden.lua",
    ["bonsai.test.coverage"] = "lua/bonsai/test/coverage.lua",
    ["bonsai.test.worlds"] = "lua/bonsai/test/worlds.lua",
    ["bonsai.test.busted"] = "lua/bonsai/test/busted.lua", -- a busted helper
    ["bonsai.test.meta"] = "lua/bonsai/test/meta.lua", -- the kit's annotations
  },
  install = {
    lua = { -- the viewer, beside the modules (bonsai.debug finds it there)
      ["bonsai.viewer.index"] = "viewer/index.html",
      ["bonsai.viewer.viewer_js"] = "viewer/viewer.js",
      ["bonsai.viewer.viewer_css"] = "viewer/viewer.css",
      ["bonsai.viewer.trace"] = "viewer/trace.js",
      ["bonsai.viewer.coverage"] = "viewer/coverage.js",
      ["bonsai.viewer.edit"] = "viewer/edit.js",
    },
  },
}
