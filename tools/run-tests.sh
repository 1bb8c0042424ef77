#!/bin/sh
# Install what the build needs, then build with warnings as errors and run
# the whole test suite twice: plain, and under AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -eu
cd "$(dirname "$0")/.."
tools/setup.sh --test

run_suite() {
	dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" -Dwerror=true "$@" >/dev/null
	ninja -C "$dir" >/dev/null
	meson test -C "$dir" --print-errorlogs --num-processes 2
}

echo "== plain build"
run_suite build-test --buildtype=debugoptimized
echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
echo "== the sources as clang-format writes them"
tools/check-format.sh
echo "== every command the docs show runs"
tools/check-docs.sh build-test
echo "== a sweep over MPI ranks equals the single-process sweep"
tools/check-mpi-sweep.sh
echo "== fuzzing the scenario loader and --set"
tools/fuzz/run-fuzz.sh 30
echo "== valgrind"
tools/check-valgrind.sh
echo "== install into a temporary prefix"
tools/check-install.sh
