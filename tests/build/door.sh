#!/bin/sh
# tests/build/door.sh SRC: every status store of the core goes through the
# door of src/core/trace.h (SET in the tick, bs_setstatus elsewhere), so traces
# see every change. Fails, naming the lines, on a direct store such as
# "st[i] = RUNNING" or "a->state[i] = ..." in src/core/vm.c (the door itself,
# the SET macro, is the one line allowed).
src="$1"
bad=$(grep -nE '(^|[^_a-z])(st|a->state|state)\[[^]]+\] *= *[^=]' "$src/core/vm.c" |
      grep -v 'bs_setstatus')
if [ -n "$bad" ]; then
  echo "status stores that bypass the trace door (use SET / bs_setstatus):"
  echo "$bad"
  exit 1
fi
