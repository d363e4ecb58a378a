#!/bin/sh
# found.sh DIR PREFIX SUFFIX NAME...: every DIR/PREFIX*SUFFIX file is one of
# the NAMEs meson found when it configured (tests/meson.build: the specs,
# the C tests), so that a test added since is not left out in silence.
dir=$1
prefix=$2
suffix=$3
shift 3
status=0
for f in "$dir"/"$prefix"*"$suffix"; do
  name=$(basename "$f" "$suffix")
  name=${name#"$prefix"}
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
