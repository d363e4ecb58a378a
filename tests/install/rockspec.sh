#!/usr/bin/env bash
# rockspec.sh B_SANITIZE: luarocks lint, then `luarocks make` of the
# rockspec at the top, from a copy of the checkout into a temporary tree,
# with a configuration of its own (the build's Lua: 5.1 with LuaJIT's
# interpreter and headers for LuaJIT; no servers: nothing is fetched; the
# user's luarocks setup is not read); then require "bonsai", the live page
# served from the viewer installed in the tree, and the samples with only
# that tree's paths.
. "$(dirname "$0")/lib.sh"
skip_sanitized "${1:-none}"

checkout "$tmp/src"
set -- "$tmp"/src/bonsai-*.rockspec
[ $# -eq 1 ] && [ -f "$1" ] || fail "want one bonsai-*.rockspec at the top"
rockspec="$1"

incdir="$(pkg-config --cflags-only-I "$lua_pkg" | sed 's/^ *-I//; s/ .*//')"
tree="$tmp/tree"
cat >"$tmp/config.lua" <<CONFIG
lua_version = "$lua_v"
rocks_trees = { "$tree" }
rocks_servers = {}
variables = {
  LUA = "$(command -v "$lua")",
  LUA_BINDIR = "$(dirname "$(command -v "$lua")")",
  LUA_INCDIR = "$incdir",
}
CONFIG
export LUAROCKS_CONFIG="$tmp/config.lua" HOME="$tmp/home"
luarocks --lua-version "$lua_v" lint "$rockspec" || fail "luarocks lint"
(cd "$tmp/src" && luarocks --lua-version "$lua_v" make --tree "$tree" \
   "$(basename "$rockspec")") >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log" >&2; fail "luarocks make"; }

export LUA_PATH="$tree/share/lua/$lua_v/?.lua;$tree/share/lua/$lua_v/?/init.lua;;"
export LUA_CPATH="$tree/lib/lua/$lua_v/?.so;;"
no_liblua "$tree/lib/lua/$lua_v/bonsai/core.so"
"$lua" - "$tree" "$lua_v" <<'LUA' || fail "require \"bonsai\" from the tree"
local tree, v = ...
local bt = require "bonsai"
local searchpath = package.searchpath or function(name, path) -- 5.1
  for f in path:gsub("%?", (name:gsub("%.", "/"))):gmatch("[^;]+") do
    local h = io.open(f)
    if h then h:close() return f end
  end
end
local lmod, cmod = tree .. "/share/lua/" .. v .. "/", tree .. "/lib/lua/" .. v .. "/"
assert(searchpath("bonsai", package.path) == lmod .. "bonsai/init.lua")
assert(searchpath("bonsai.core", package.cpath) ==
       cmod .. "bonsai/core.so")
local a = bt.agent(bt.tree(bt.sequence { bt.wait(0.5), bt.action(function()
  return true end) }))
assert(a:tick(0.5) == bt.RUNNING and a:tick(0.5) == bt.SUCCESS)
print("bonsai " .. bt.VERSION .. " from " .. tree)
LUA
serves_viewer "$tree/share/lua/$lua_v"
run_samples
