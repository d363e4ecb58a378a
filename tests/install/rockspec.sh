#!/usr/bin/env bash
# rockspec.sh B_SANITIZE: luarocks lint, then `luarocks make` of the
# rockspec at the top, from a copy of the checkout into a temporary tree,
# with a configuration of its own (Lua 5.4, no servers: nothing is fetched;
# the user's luarocks setup is not read); then require "bonsai" and the
# samples with only that tree's paths.
. "$(dirname "$0")/lib.sh"
skip_sanitized "${1:-none}"

checkout "$tmp/src"
set -- "$tmp"/src/bonsai-*.rockspec
[ $# -eq 1 ] && [ -f "$1" ] || fail "want one bonsai-*.rockspec at the top"
rockspec="$1"

incdir="$(pkg-config --variable=includedir lua5.4)/lua5.4"
tree="$tmp/tree"
cat >"$tmp/config.lua" <<CONFIG
lua_version = "5.4"
rocks_trees = { "$tree" }
rocks_servers = {}
variables = {
  LUA = "$(command -v lua5.4)",
  LUA_BINDIR = "$(dirname "$(command -v lua5.4)")",
  LUA_INCDIR = "$incdir",
}
CONFIG
export LUAROCKS_CONFIG="$tmp/config.lua" HOME="$tmp/home"
luarocks --lua-version 5.4 lint "$rockspec" || fail "luarocks lint"
(cd "$tmp/src" && luarocks --lua-version 5.4 make --tree "$tree" \
   "$(basename "$rockspec")") >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log" >&2; fail "luarocks make"; }

export LUA_PATH="$tree/share/lua/5.4/?.lua;$tree/share/lua/5.4/?/init.lua;;"
export LUA_CPATH="$tree/lib/lua/5.4/?.so;;"
no_liblua "$tree/lib/lua/5.4/bonsai/core.so"
lua5.4 - "$tree" <<'LUA' || fail "require \"bonsai\" from the tree"
local tree = ...
local bt = require "bonsai"
local lmod, cmod = tree .. "/share/lua/5.4/", tree .. "/lib/lua/5.4/"
assert(package.searchpath("bonsai", package.path) == lmod .. "bonsai/init.lua")
assert(package.searchpath("bonsai.core", package.cpath) ==
       cmod .. "bonsai/core.so")
local a = bt.agent(bt.tree(bt.sequence { bt.wait(0.5), bt.action(function()
  return true end) }))
assert(a:tick(0.5) == bt.RUNNING and a:tick(0.5) == bt.SUCCESS)
print("bonsai " .. bt.VERSION .. " from " .. tree)
LUA
run_samples
