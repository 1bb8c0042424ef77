#!/bin/sh
# tools/run-calls.sh counts what it should: on a copy of src/run, a name
# defined in one file and called from another is listed and counted, and a
# count over the limit fails; a static function, a name named only in a
# comment or a string, and one used only through a header's inline function
# are not counted (the last is said); a bad limit is refused.
#   tests/run-calls.sh SOURCE_ROOT
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

mkdir -p "$tmp/t/tools"
cp -R "$root/src" "$tmp/t/src"
cp "$root/tools/run-calls.sh" "$tmp/t/tools/"

calls() {
	sh "$tmp/t/tools/run-calls.sh" "$@" >"$tmp/out" 2>"$tmp/err"
	echo $?
}

expect() {
	grep -qxF "$1" "$tmp/out" || { echo "FAIL: no line: $1" >&2; sed 's/^/  /' "$tmp/out" >&2; fail=1; }
}

[ "$(calls 1000 "$tmp/t")" = 0 ] || { echo "FAIL: the copy exceeds 1000" >&2; fail=1; }
base=$(sed -n 's/^\([0-9]*\) cross-file .*/\1/p' "$tmp/out")
hidden=$(sed -n 's/.*; \([0-9]*\) more used only .*/\1/p' "$tmp/out")
hidden=${hidden:-0}
[ -n "$base" ] || { echo "FAIL: no count" >&2; cat "$tmp/out" >&2; exit 1; }

cat >"$tmp/t/src/run/extra_a.c" <<'EOF'
/* extra_a.c - cs__run_x_called, in a comment */
#include "run/runner_int.h"
static void cs__run_x_static(void) {}
int cs__run_x_called(int a)
{
	return a + 1;
}
int cs__run_x_quiet(int a) { return a; }
int cs__run_x_inline(int a) { return a; }
EOF
cat >"$tmp/t/src/run/extra_b.c" <<'EOF'
/* extra_b.c - cs__run_x_quiet(1), in a comment */
static const char *s = "cs__run_x_quiet";
static int b(void) { return cs__run_x_called(2); }
EOF
cat >"$tmp/t/src/run/extra.h" <<'EOF'
int cs__run_x_inline(int a);
static inline int x_inline(int a) { return cs__run_x_inline(a); }
EOF
n=$((base + 1))
[ "$(calls "$base" "$tmp/t")" = 1 ] || { echo "FAIL: $n names pass a limit of $base" >&2; fail=1; }
expect "cs__run_x_called extra_a.c extra_b.c"
expect "$n cross-file cs__run_ names in src/run (limit $base); $((hidden + 1)) more used only through inline functions of its headers"
grep -q 'cs__run_x_static\|cs__run_x_quiet\|cs__run_x_inline ' "$tmp/out" && {
	echo "FAIL: a static name, a comment's or a string's, or a header's counted" >&2
	fail=1
}
[ "$(calls "$n" "$tmp/t")" = 0 ] || { echo "FAIL: $n names fail a limit of $n" >&2; fail=1; }

[ "$(calls 2x "$tmp/t")" = 2 ] || { echo "FAIL: a limit of '2x' accepted" >&2; fail=1; }
grep -qxF "run-calls: limit '2x' is not a whole number" "$tmp/err" || {
	echo "FAIL: no message for a bad limit" >&2
	fail=1
}

[ $fail -eq 0 ] && echo "run-calls refusals ok"
exit $fail
