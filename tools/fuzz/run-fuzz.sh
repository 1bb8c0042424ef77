#!/bin/sh
# Build the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, then fuzz each for SECONDS (default 30):
#   fuzz_load    the scenario loader (cs_scenario_load on the input as a file)
#   fuzz_set     --set overrides and the unit parsers (cs_parse_size, ...)
#   fuzz_kineto  the profiler trace reader of 'compare' (cs_kineto_load on the
#                input as a file: JSON, or gzip)
#   fuzz_calib   nccl-tests output, calibration files and kernel classes
#                (cs_nccltests_parse_set, cs_calib_parse, cs_kernel_rules_parse;
#                the input's first byte picks the reader)
#   fuzz_chakra  the Chakra execution-trace decoder of 'run-chakra'
#                (cs_chakra_decode; the first byte picks the rank)
#   fuzz_kprof   the kernel-profile reader (cs_kprof_parse on the input)
#   fuzz_groups  the comm-group file reader of 'run-chakra --comm-groups'
#                (cs_chakra_groups_load on the input as a file)
#
#   tools/fuzz/run-fuzz.sh [SECONDS]
#
# Exits non-zero on any crash, sanitizer report, leak, input slower than
# 10 s or use of more than 2048 MB; the input that did it is saved as
# build-fuzz/artifacts/TARGET-crash-* (or leak-, timeout-, oom-). Keep a
# reproducer as tests/data/fuzz/load-NAME, tests/data/fuzz/set-NAME or
# tests/data/fuzz/kineto-NAME, tests/data/fuzz/calib-NAME, tests/data/fuzz/chakra-NAME,
# tests/data/fuzz/kprof-NAME or tests/data/fuzz/groups-NAME: every run replays those first.
#
# The seed corpora are the repository's scenarios (scenarios/*.yaml,
# tests/data/*/*.yaml) for fuzz_load, tools/fuzz/corpus-set/ for fuzz_set
# tools/fuzz/corpus-kineto/ for fuzz_kineto, tools/fuzz/corpus-calib/ for fuzz_calib
# (nccl-tests' text and JSON, a calibration file, kernel classes),
# tools/fuzz/corpus-chakra/ for fuzz_chakra, the built-in profiles
# (src/hw/profiles/*.yaml) for fuzz_kprof and tools/fuzz/corpus-groups/ for
# fuzz_groups; the inputs found are kept in build-fuzz/corpus-*, so later runs
# start from them. A dictionary of keys, names and units is taken from
# docs/scenarios.md. Environment: FUZZ_BUILD (build directory, default
# build-fuzz), FUZZ_FORK (run that many fuzzing processes per target).
set -eu
cd "$(dirname "$0")/../.."

secs=${1:-30}
case $secs in
''|*[!0-9]*) echo "usage: tools/fuzz/run-fuzz.sh [SECONDS]" >&2; exit 2 ;;
esac
build=${FUZZ_BUILD:-build-fuzz}

for tool in clang meson ninja pkg-config; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "run-fuzz: '$tool' is missing (apt-get install clang libclang-rt-14-dev)" >&2
		exit 1
	fi
done

# The library, instrumented for coverage; the fuzz targets link it with
# libFuzzer. -fno-sanitize-recover makes every UBSan report fatal.
san_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined"
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" --buildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dtests=disabled -Dmpi=disabled -Dc_args="$san_args" >/dev/null
fi
ninja -C "$build" libclustersim.a >/dev/null

# shellcheck disable=SC2046
for t in fuzz_load fuzz_set fuzz_kineto fuzz_calib fuzz_chakra fuzz_kprof fuzz_groups; do
	clang -std=c17 -g -O1 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
		-Iinclude -Isrc -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		"tools/fuzz/$t.c" "$build/libclustersim.a" $(pkg-config --libs yaml-0.1 gsl jansson zlib libprotobuf-c) \
		-lm -lpthread -o "$build/$t"
done

# Seeds: copied at run time, so the repository keeps one copy of each.
targets="load set kineto calib chakra kprof groups"
for t in $targets; do
	mkdir -p "$build/corpus-$t" "$build/seed-$t"
	rm -f "$build/seed-$t/"*
done
mkdir -p "$build/artifacts"
rm -f "$build/artifacts/"*
for f in scenarios/*.yaml tests/data/*/*.yaml; do
	[ -f "$f" ] && cp "$f" "$build/seed-load/$(echo "$f" | tr / _)"
done
cp tools/fuzz/corpus-set/* "$build/seed-set/"
cp tools/fuzz/corpus-kineto/* "$build/seed-kineto/"
cp tools/fuzz/corpus-calib/* "$build/seed-calib/"
cp tools/fuzz/corpus-chakra/* "$build/seed-chakra/"
cp src/hw/profiles/*.yaml "$build/seed-kprof/"
cp tools/fuzz/corpus-groups/* "$build/seed-groups/"
for t in $targets; do
	for f in tests/data/fuzz/"$t"-*; do
		[ -f "$f" ] && cp "$f" "$build/seed-$t/"
	done
done

# The dictionary: every `code` token of docs/scenarios.md that is printable
# ASCII without spaces, and the parts of dotted keys.
# shellcheck disable=SC2016
tokens=$(LC_ALL=C grep -o '`[^` ]*`' docs/scenarios.md | tr -d '`' | LC_ALL=C grep -v '[^!-~]')
{ echo "$tokens"; echo "$tokens" | tr '.' '\n'; } | LC_ALL=C grep -v '^$' |
	sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$/"/' | sort -u >"$build/fuzz.dict"
printf '"%s"\n' ": " "{" "}" "[" "]" "- " "\\x0a  " "=" "GiB" "Gb/s" "us" "TFLOPS" \
	"true" "false" "1e308" "-1" "nan" "inf" "0x10" >>"$build/fuzz.dict"
# and the trace reader's: Kineto's keys, categories and kernel-name keywords
printf '"%s"\n' '"traceEvents"' '"cat"' '"name"' '"ts"' '"dur"' '"args"' '"device"' '"pid"' \
	'"kernel"' '"gpu_memcpy"' '"gpu_memset"' '"user_annotation"' '"gpu_user_annotation"' \
	'ProfilerStep#' 'nccl' 'adam' 'multi_tensor_apply' 'FusedOptimizer' 'sdpa' 'fmha' 'flash' \
	'cudnn::fusion' 'attention' 'nvjet' 'gemm' 'cutlass' 'xmma' 'cublas' \
	'# Rank' ' Group ' ' on ' ' device ' '# Collective test starting: ' 'all_reduce_perf' \
	'size' 'count' 'redop' 'root' 'time' 'algbw' 'busbw' '#wrong' 'N/A' 'network:' \
	'scale_up_bandwidth' 'scale_out_bandwidth' 'latency' \
	'comm_type' 'comm_size' 'pg_name' 'comm_src' 'comm_dst' 'comm_tag' 'is_cpu_op' 'cs_ns' \
	'cs_stream' 'cs_to' 'cs_coll' 'cs_comm' 'cs_bytes' 'cs_mem' 'tp.0' 'tp.1' 'dp.0' 'pp.1' 'dp-intra' \
	| sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$/"/' >>"$build/fuzz.dict"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fork=${FUZZ_FORK:+-fork=$FUZZ_FORK}
# the targets write every input to a file: keep it in memory where possible.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	export TMPDIR=/dev/shm
fi

status=0
for t in $targets; do
	echo "== fuzz_$t for $secs s"
	# shellcheck disable=SC2086
	if ! "$build/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 \
		-dict="$build/fuzz.dict" -artifact_prefix="$build/artifacts/fuzz_$t-" $fork \
		"$build/corpus-$t" "$build/seed-$t" >"$build/fuzz_$t.log" 2>&1; then
		echo "run-fuzz: fuzz_$t failed (log: $build/fuzz_$t.log)" >&2
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|    #[0-9]+ )' \
			"$build/fuzz_$t.log" | head -40 >&2 || true
		for a in "$build/artifacts/fuzz_$t-"*; do
			[ -f "$a" ] && echo "  reproducer: $a" >&2
		done
		status=1
	fi
	grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|^#[0-9]+.*DONE' \
		"$build/fuzz_$t.log" | tail -4 || true
done
exit $status
