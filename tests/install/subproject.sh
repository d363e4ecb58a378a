#!/usr/bin/env bash
# subproject.sh B_SANITIZE: the project of tests/install/consumer/ with a
# copy of the checkout as its subproject subprojects/bonsai, built with the
# fallback forced (an installed bonsai.pc is not used); runs the README's C
# example built that way and compares its output with the README's.
. "$(dirname "$0")/lib.sh"
skip_sanitized "${1:-none}"

app="$tmp/consumer"
mkdir -p "$app/subprojects"
cp "$src/tests/install/consumer/meson.build" "$app/"
readme_example "$app/app.c" "$tmp/expected"
checkout "$app/subprojects/bonsai"
(meson setup "$app/build" "$app" --force-fallback-for=bonsai &&
 meson compile -C "$app/build" app) >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "consumer build"; }
"$app/build/app" >"$tmp/out" || fail "app"
diff -u "$tmp/expected" "$tmp/out" || fail "README output"
echo "ok: README C example built with bonsai as a subproject"
