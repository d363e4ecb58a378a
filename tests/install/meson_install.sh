#!/usr/bin/env bash
# meson_install.sh B_SANITIZE BUILD_DIR PREFIX LIBDIR INCLUDEDIR CMOD LMOD:
# `meson install --destdir` of the build into a temporary root; checks that
# the headers, libbonsai.a, libbonsai.so, bonsai.pc and the Lua module are
# where the build says; builds the C example of docs/C_API.md against the
# installed copy with pkg-config and with CMake's find_package (shared and
# static) and compares its output with the page's; checks that the
# installed module serves the live page (the viewer installed beside it);
# runs the samples against the installed module.
. "$(dirname "$0")/lib.sh"
skip_sanitized "${1:-none}"
build="$2" prefix="$3" libdir="$4" includedir="$5" cmod="$6" lmod="$7"

root="$tmp/root"
meson install -C "$build" --no-rebuild --quiet --destdir "$root" \
  >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install"; }

for f in "$includedir/bonsai.h" "$includedir/bonsai_lua.h" \
         "$libdir/libbonsai.a" "$libdir/libbonsai.so" \
         "$libdir/pkgconfig/bonsai.pc" \
         "$libdir/cmake/bonsai/bonsaiConfig.cmake" "$cmod/bonsai/core.so" \
         "$lmod/bonsai/init.lua" "$lmod/bonsai/builder.lua" \
         "$lmod/bonsai/meta.lua" "$lmod/bonsai/viewer/index.html" \
         "$lmod/bonsai/viewer/viewer.js" "$lmod/bonsai/viewer/edit.js" \
         "$lmod/bonsai/debug/session.lua" "$lmod/bonsai/debug/edit.lua"; do
  [ -e "$root$f" ] || fail "not installed: $f"
done
no_liblua "$root$cmod/bonsai/core.so"

# pkg-config reads the installed bonsai.pc; the sysroot maps its paths
# into the temporary root.
export PKG_CONFIG_PATH="$root$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root"
[ "$(pkg-config --modversion bonsai)" = "$(sed -n \
  's/^#define BONSAI_VERSION "\(.*\)"/\1/p' "$root$includedir/bonsai.h")" ] ||
  fail "bonsai.pc and bonsai.h disagree on the version"
readme_example "$tmp/app.c" "$tmp/expected"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror -o "$tmp/app" "$tmp/app.c" \
  $(pkg-config --cflags --libs bonsai) || fail "cc with pkg-config"
ldd "$tmp/app" | grep -q 'libbonsai\.so' || fail "app does not use libbonsai.so"
LD_LIBRARY_PATH="$root$libdir" "$tmp/app" >"$tmp/out" || fail "app (shared)"
diff -u "$tmp/expected" "$tmp/out" || fail "C_API.md output (shared)"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror -o "$tmp/app_static" "$tmp/app.c" \
  $(pkg-config --cflags bonsai) "$root$libdir/libbonsai.a" ||
  fail "cc with libbonsai.a"
"$tmp/app_static" >"$tmp/out" || fail "app (static)"
diff -u "$tmp/expected" "$tmp/out" || fail "C_API.md output (static)"
echo "ok: docs/C_API.md C example with pkg-config, shared and static"

# CMake: find_package(bonsai) through the installed bonsaiConfig.cmake.
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
mkdir "$tmp/cmake"
cp "$src/tests/install/cmake/CMakeLists.txt" "$tmp/app.c" "$tmp/cmake/"
(cmake -S "$tmp/cmake" -B "$tmp/cmake/build" \
   -DCMAKE_PREFIX_PATH="$root$prefix" &&
 cmake --build "$tmp/cmake/build") >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; fail "cmake build"; }
LD_LIBRARY_PATH="$root$libdir" "$tmp/cmake/build/app" >"$tmp/out" ||
  fail "app (cmake, shared)"
diff -u "$tmp/expected" "$tmp/out" || fail "C_API.md output (cmake, shared)"
"$tmp/cmake/build/app_static" >"$tmp/out" || fail "app (cmake, static)"
diff -u "$tmp/expected" "$tmp/out" || fail "C_API.md output (cmake, static)"
echo "ok: docs/C_API.md C example with find_package(bonsai), shared and static"

# The Lua module, with nothing on the paths but the installed directories.
export LUA_PATH="$root$lmod/?.lua;$root$lmod/?/init.lua;;"
export LUA_CPATH="$root$cmod/?.so;;"
"$lua" - "$root$lmod" "$root$cmod" <<'LUA' || fail "require \"bonsai\""
local lmod, cmod = ...
local bt = require "bonsai"
local searchpath = package.searchpath or function(name, path) -- 5.1
  for f in path:gsub("%?", (name:gsub("%.", "/"))):gmatch("[^;]+") do
    local h = io.open(f)
    if h then h:close() return f end
  end
end
assert(searchpath("bonsai", package.path) == lmod .. "/bonsai/init.lua")
assert(searchpath("bonsai.core", package.cpath) ==
       cmod .. "/bonsai/core.so")
print("bonsai " .. bt.VERSION .. " from " .. cmod)
LUA
serves_viewer "$root$lmod"
run_samples
