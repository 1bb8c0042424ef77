#!/bin/sh
# check-layers.sh - the modules of src/ depend one way only.
#
# Each module may include its own headers, the public header
# (clustersim/clustersim.h) and the headers of the modules before it in
# LAYERS; never one after it. There is no exception list: a new include
# that breaks the order fails CI, and docs/architecture.md draws this order.
#
#   tools/check-layers.sh [SOURCE_ROOT]
set -eu
root=${1:-$(dirname "$0")/..}
LAYERS="core config hw coll model fault program chakra run ingest study report cli"

rank() {
	i=0
	for m in $LAYERS; do
		[ "$m" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

fail=0
for dir in "$root"/src/*/; do
	mod=$(basename "$dir")
	me=$(rank "$mod")
	if [ "$me" -lt 0 ]; then
		echo "src/$mod: a module not in the layer order ($LAYERS)" >&2
		fail=1
		continue
	fi
	for f in "$dir"*.c "$dir"*.h; do
		[ -e "$f" ] || continue
		# "#include "mod/file.h"" lines, with their line numbers
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]*/' "$f" |
		sed 's/^\([0-9]*\):[^"]*"\([^"/]*\)\/.*/\1 \2/' |
		while read -r line dep; do
			[ "$dep" = clustersim ] && continue
			[ "$dep" = "$mod" ] && continue
			r=$(rank "$dep")
			if [ "$r" -lt 0 ] || [ "$r" -gt "$me" ]; then
				echo "src/$mod/$(basename "$f"):$line: '$mod' includes '$dep', which comes after it ($LAYERS)" >&2
				echo x
			fi
		done | grep -q x && fail=1
	done
done
[ $fail -eq 0 ] && echo "layers ok: $LAYERS"
exit $fail
