#!/bin/sh
# tests/build/seam.sh SRC: the Lua binding is a client of the public C API
# only (issue #11): each src/l*.c includes, of the project's headers, only
# bonsai.h, bonsai_lua.h and lbonsai.h. Fails naming the includes that
# reach into the core. 'pending' lists the files not yet converted.
src="$1"
pending="lagent.c lleaf.c lbonsai.c"
status=0
for f in "$src"/l*.c; do
  case " $pending " in *" $(basename "$f") "*) continue ;; esac
  bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
        grep -vE '"(bonsai|bonsai_lua|lbonsai)\.h"')
  if [ -n "$bad" ]; then
    echo "$(basename "$f") includes core headers (use bonsai.h):"
    echo "$bad"
    status=1
  fi
done
exit $status
