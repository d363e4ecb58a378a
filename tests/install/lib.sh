# lib.sh: what the install tests share (sourced by each): a clean Lua
# environment, the skip for sanitized builds, a temporary directory removed
# on exit, a copy of the checkout, and the C example of docs/C_API.md.

set -eu
unset LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4 LUA_INIT LUA_INIT_5_4
unset LUA_PATH_5_3 LUA_CPATH_5_3 LUA_INIT_5_3

# The Lua of the build (tests/meson.build sets these): its interpreter,
# pkg-config name and language version (5.1 for LuaJIT).
lua="${BONSAI_LUA:-lua5.4}"
lua_pkg="${BONSAI_LUA_PKG:-lua5.4}"
lua_v="${BONSAI_LUA_SHORT:-5.4}"
export LC_ALL=C
src="$(cd "$(dirname "$0")/../.." && pwd)"

# skip_sanitized B_SANITIZE: installing a sanitized module is pointless.
skip_sanitized() {
  if [ "$1" != "none" ] && [ "$1" != "" ]; then
    echo "SKIP: install tests run in the plain build only (b_sanitize=$1)"
    exit 77
  fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# checkout DIR: copies the files of the checkout (tracked, plus new files
# git does not ignore) into DIR, as a fresh clone would have them.
checkout() {
  mkdir -p "$1"
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z -co --exclude-standard |
      tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
      tar -xf - -C "$1"
  else
    (cd "$src" && tar -cf - --exclude='./build*' .) | tar -xf - -C "$1"
  fi
}

# readme_example FILE.c FILE.out: the C program of docs/C_API.md's "Embedding
# from C" section, and the output the page says it prints.
readme_example() {
  awk '/^#+ Embedding from C/ { s = 1 }
       s && /^```c$/ { c = 1; next }
       c && /^```$/ { exit }
       c' "$src/docs/C_API.md" >"$1"
  awk '/^#+ Embedding from C/ { s = 1 }
       s && /^It prints:/ { p = 1 }
       p && /^```/ { if (o) exit; o = 1; next }
       o' "$src/docs/C_API.md" >"$2"
  [ -s "$1" ] && [ -s "$2" ] || fail "no C example in docs/C_API.md"
}

# no_liblua FILE: the Lua module must not link liblua (the host provides
# the Lua API).
no_liblua() {
  if ldd "$1" | grep -q liblua; then
    ldd "$1" >&2
    fail "$1 links liblua"
  fi
}

# run_samples: runs every sample with --test, with LUA_PATH and LUA_CPATH
# as the caller set them (the samples then use no other copy of bonsai).
run_samples() {
  local s
  for s in "$src"/samples/*.lua; do
    case "$s" in */setup.lua) continue ;; esac
    "$lua" "$s" --test >"$tmp/sample.log" 2>&1 ||
      { cat "$tmp/sample.log" >&2; fail "sample $(basename "$s")"; }
    echo "ok: $(basename "$s")"
  done
}

# serves_viewer LMOD: the installed module's live debugger serves the page
# (GET / and viewer.js) from the viewer files installed in LMOD/bonsai/viewer,
# with LUA_PATH and LUA_CPATH as the caller set them.
serves_viewer() {
  "$lua" - "$1" <<'LUA' || fail "the installed module does not serve the live page"
local lmod = ...
local bt = require "bonsai"
local socket = require "socket"
local dir = require("bonsai.debug").viewerdir()
assert(dir == lmod .. "/bonsai/viewer", "the viewer found in " .. dir)
local port = bt.debug.serve { port = 0 }
local function get(path)
  local c = assert(socket.connect("127.0.0.1", port))
  c:settimeout(0)
  c:send("GET " .. path .. " HTTP/1.1\r\nHost: 127.0.0.1:" .. port .. "\r\n\r\n")
  local got, t0 = "", socket.gettime()
  repeat -- (until the server closes; a deadline in case it never does)
    bt.debug.poll()
    local d, e, part = c:receive(65536)
    got = got .. (d or part or "")
    if e == "closed" then break end
    socket.sleep(0.002)
  until socket.gettime() - t0 > 60
  c:close()
  return got
end
local page = get("/")
assert(page:find("^HTTP/1.1 200") and page:find("<title>Bonsai", 1, true),
       page:sub(1, 300))
local js = get("/viewer.js")
assert(js:find("^HTTP/1.1 200") and
       js:find("Content-Type: text/javascript", 1, true), js:sub(1, 300))
bt.debug.close()
print("ok: the live page, served from " .. dir)
LUA
}
