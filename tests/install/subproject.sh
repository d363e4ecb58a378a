#!/usr/bin/env bash
# subproject.sh B_SANITIZE: the project of tests/install/consumer/ with a
# copy of the checkout as its subproject subprojects/bonsai, built with the
# fallback forced (an installed bonsai.pc is not used), with and without
# Lua (-Dbonsai:lua=disabled: the C core alone); runs the C example of docs/C_API.md
# built that way and compares its output with the page's.
. "$(dirname "$0")/lib.sh"
skip_sanitized "${1:-none}"

app="$tmp/consumer"
mkdir -p "$app/subprojects"
cp "$src/tests/install/consumer/meson.build" "$app/"
readme_example "$app/app.c" "$tmp/expected"
checkout "$app/subprojects/bonsai"
for lua in auto disabled; do
  (meson setup "$app/build-$lua" "$app" --force-fallback-for=bonsai \
     -Dbonsai:lua=$lua &&
   meson compile -C "$app/build-$lua" app) >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; fail "consumer build (lua=$lua)"; }
  "$app/build-$lua/app" >"$tmp/out" || fail "app (lua=$lua)"
  diff -u "$tmp/expected" "$tmp/out" || fail "C_API.md output (lua=$lua)"
  echo "ok: docs/C_API.md C example, bonsai as a subproject (lua=$lua)"
done
