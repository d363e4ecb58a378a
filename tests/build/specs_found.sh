#!/bin/sh
# specs_found.sh DIR NAME...: every DIR/*_spec.lua is one of the NAMEs meson
# found when it configured (tests/meson.build), so that a spec added since
# is not left out of the suite in silence.
dir=$1
shift
status=0
for f in "$dir"/*_spec.lua; do
  name=$(basename "$f" _spec.lua)
  found=0
  for n in "$@"; do
    [ "$n" = "$name" ] && found=1 && break
  done
  if [ "$found" -eq 0 ]; then
    echo "$f is not in the suite: configure again (meson setup --reconfigure BUILD, or scripts/setup BUILD)"
    status=1
  fi
done
exit $status
