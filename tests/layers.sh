#!/bin/sh
# tools/check-layers.sh refuses what it should: on a copy of src/ and
# docs/architecture.md, a forbidden include, another module's _int.h, a
# file or a module the doc does not name and a row that names a later one
# each fail with their message; the clean copy, and a header named through
# its .c file, pass.
#   tests/layers.sh SOURCE_ROOT
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

copy() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/docs" "$tmp/t/tools"
	cp -R "$root/src" "$tmp/t/src"
	cp "$root/docs/architecture.md" "$tmp/t/docs/"
	cp "$root/tools/check-layers.sh" "$tmp/t/tools/"
}

check() {
	sh "$tmp/t/tools/check-layers.sh" "$tmp/t" >"$tmp/out" 2>"$tmp/err"
	echo $?
}

# append line $2 to file $1; prints the line's number
add() {
	echo "$2" >>"$tmp/t/$1"
	wc -l <"$tmp/t/$1" | tr -d ' '
}

expect() {
	grep -qxF "$1" "$tmp/err" || { echo "FAIL: no line: $1" >&2; sed 's/^/  /' "$tmp/err" >&2; fail=1; }
}

copy
[ "$(check)" = 0 ] || { echo "FAIL: the clean copy" >&2; cat "$tmp/err" >&2; fail=1; }

l1=$(add src/hw/calib.c '#include "study/study.h"')
l2=$(add src/study/pool.c '#include "run/runner_int.h"')
: >"$tmp/t/src/fault/extra.c"
mkdir "$tmp/t/src/extra" && : >"$tmp/t/src/extra/a.c"
sed 's/^| `fault` | `core` `config` |$/| `fault` | `core` `config` `study` |/' "$tmp/t/docs/architecture.md" >"$tmp/doc"
cp "$tmp/doc" "$tmp/t/docs/architecture.md"
[ "$(check)" = 1 ] || { echo "FAIL: a broken copy passes" >&2; fail=1; }
expect "src/hw/calib.c:$l1: 'hw' may not include 'study' (it may use: core config)"
expect "src/study/pool.c:$l2: 'run/runner_int.h' is internal to 'run' (its _int.h headers are its own)"
expect "src/fault/extra.c: not in docs/architecture.md"
expect "src/extra: a module without a row in docs/architecture.md's table of what each module may use"
expect "src/extra/a.c: not in docs/architecture.md"
expect "docs/architecture.md: 'fault' may use 'study', whose row is not above its own"

copy
: >"$tmp/t/src/fault/extra.c"
: >"$tmp/t/src/fault/extra.h"
sed 's/^\(| `src\/fault\/` |.*\) |$/\1, `extra.c` |/' "$tmp/t/docs/architecture.md" >"$tmp/doc"
cp "$tmp/doc" "$tmp/t/docs/architecture.md"
[ "$(check)" = 0 ] || { echo "FAIL: a header named through its .c file" >&2; cat "$tmp/err" >&2; fail=1; }

[ $fail -eq 0 ] && echo "layers refusals ok"
exit $fail
