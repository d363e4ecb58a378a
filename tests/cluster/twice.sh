#!/usr/bin/env bash
# twice.sh: two runs of the cluster sample at once on one machine (each
# with a kill -9 of a master and its failover), as two test suites run
# side by side: every instance of each listens on a port the system picks,
# and the second run is pointed at a port of the first as if it were its
# own instance a1: it must refuse it (another run's instance), and both
# runs must keep every invariant.
#   tests/cluster/twice.sh SRCDIR       (BONSAI_CPATH: a LuaJIT build)
set -u
src="$1"
cluster="$src/samples/cluster/cluster.lua"
work="$(mktemp -d)"
pa="" pb=""
finish() {
  [ -n "$pa" ] && kill "$pa" 2>/dev/null
  [ -n "$pb" ] && kill "$pb" 2>/dev/null
  rm -rf "$work"
}
trap finish EXIT
mkdir "$work/a" "$work/b"

tarantool "$cluster" --npcs 300 --seconds 12 --kills 1 --dir "$work/a" >"$work/a.out" 2>&1 &
pa=$!
# the first run's a1 answers (bounded: the machine may be busy)
for _ in $(seq 1200); do
  [ -s "$work/a/a1.port" ] && break
  kill -0 "$pa" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$work/a/a1.port" ]; then
  cat "$work/a.out"
  echo "twice: the first run did not start"
  exit 1
fi
port="$(cat "$work/a/a1.port")"
tarantool "$cluster" --npcs 300 --seconds 8 --kills 1 --dir "$work/b" \
  --foreign "$port" >"$work/b.out" 2>&1 &
pb=$!
wait "$pa"; ra=$?; pa=""
wait "$pb"; rb=$?; pb=""
sed 's/^/first:  /' "$work/a.out"
sed 's/^/second: /' "$work/b.out"
status=0
for r in "first $ra" "second $rb"; do
  set -- $r
  if [ "$2" -ne 0 ]; then echo "twice: the $1 run failed (exit $2)"; status=1; fi
done
if ! grep -q "port $port refused as this run's a1" "$work/b.out"; then
  echo "twice: the second run did not refuse the first run's a1 (port $port)"
  status=1
fi
for f in a b; do
  if ! grep -q "lost 0, duplicated 0" "$work/$f.out"; then status=1; fi
done
[ "$status" -eq 0 ] && echo "twice: both runs kept every invariant; the foreign port was refused"
exit "$status"
