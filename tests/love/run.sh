#!/usr/bin/env bash
# tests/love/run.sh SRC BUILD: runs the LÖVE sample (samples/love) under
# Xvfb for a few seconds with a copy of its tree file, rewrites that file
# while it runs (chase becomes flee), and checks from the sample's log that
# the NPCs patrolled, chased and fled, that the tree was reloaded and no NPC
# chased after it, and that the live debugger served. The screenshot it
# takes is left at BUILD/love-screenshot.png. Skips (77) without love or
# xvfb-run.
set -eu
src="$1" build="$2"
command -v love >/dev/null && command -v xvfb-run >/dev/null ||
  { echo "SKIP: love or xvfb-run not installed"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$src/samples/love/npc.lua" "$tmp/npc.lua"
touch -d "-5 seconds" "$tmp/npc.lua" # an edit is a newer time
log="$tmp/love.log" shot="$build/love-screenshot.png"
rm -f "$shot"

fail() {
  echo "FAIL: $*" >&2
  cat "$log" >&2 || true
  exit 1
}

timeout 120 xvfb-run -a -s "-screen 0 800x600x24" \
  love "$src/samples/love" --test 6 "$log" "$shot" --tree "$tmp/npc.lua" \
  >"$tmp/out" 2>&1 &
game=$!
# Once the game has run a second (of its own clock: the log says), the
# tree file changes; waited for as long as the game runs.
while kill -0 "$game" 2>/dev/null; do
  if grep -q '^[1-9][0-9]*\.[0-9]* ' "$log" 2>/dev/null; then
    sed -i 's/bt.action "chase"/bt.action "flee"/' "$tmp/npc.lua"
    break
  fi
  sleep 0.1
done
wait "$game" || { status=$?; cat "$tmp/out" >&2; fail "love exited with $status"; }

grep -q '^0\.00 debugger http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*$' "$log" ||
  fail "no live debugger"
at="$(awk '/ reloaded / { print $1; exit }' "$log")"
[ -n "$at" ] || fail "the tree was not reloaded"
before="$(awk -v at="$at" '$1 < at' "$log")"
after="$(awk -v at="$at" '$1 > at' "$log")"
for m in patrol chase flee; do
  echo "$before" | grep -q ">$m\$" || fail "no NPC took to '$m' before the reload"
done
echo "$after" | grep -q '>flee$' || fail "no NPC fled after the reload"
if echo "$after" | grep -q '>chase$'; then
  fail "an NPC chased after the reload took chase out"
fi
grep -q ' done patrol=[0-9]* chase=[0-9]* flee=[0-9]* reloads=1$' "$log" ||
  fail "no summary"
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "no PNG screenshot"
echo "ok: $(grep -c '>' "$log") behaviour changes, reload at ${at}s," \
     "screenshot $shot"
