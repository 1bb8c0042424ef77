#!/bin/sh
# check-format.sh - the C sources of src/ and include/ are as clang-format
# writes them with the project's .clang-format. Prints each file that
# differs (and, with -v, the diff); exits 1 if any does.
#
#   tools/check-format.sh [-v]        check
#   tools/check-format.sh --fix       rewrite the files in place
set -u
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$cf" ] || { echo "check-format: clang-format not found (tools/setup.sh --test installs it)" >&2; exit 1; }
mode=${1:-}
fail=0
for f in $(git ls-files 'src/*.c' 'src/*.h' 'include/*.h'); do
	if [ "$mode" = --fix ]; then
		"$cf" -i --style=file "$f"
		continue
	fi
	if ! "$cf" --style=file "$f" | cmp -s - "$f"; then
		echo "$f: not as clang-format writes it (tools/check-format.sh --fix)" >&2
		[ "$mode" = -v ] && "$cf" --style=file "$f" | diff -u "$f" - >&2
		fail=1
	fi
done
[ $fail -eq 0 ] && [ "$mode" != --fix ] && echo "format ok"
exit $fail
