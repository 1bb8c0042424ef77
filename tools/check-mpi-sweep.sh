#!/bin/sh
# check-mpi-sweep.sh - build clustersim with MPI in its own build directory,
# run one sweep as a single process and under mpirun (2 and 3 ranks), and
# compare the CSVs byte for byte. Exit status 0 when they are identical,
# 1 on a difference, 2 when the build or a run fails.
#
#   tools/check-mpi-sweep.sh [BUILD_DIR]      (default: build-mpi)
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-mpi}
ranks_list=${CS_MPI_RANKS:-"2 3"}

command -v mpirun >/dev/null 2>&1 || {
	echo "check-mpi-sweep: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)" >&2
	exit 2
}
if [ -f "$build/build.ninja" ]; then
	meson configure "$build" -Dmpi=enabled >/dev/null || exit 2
else
	meson setup "$build" "$root" -Dmpi=enabled -Dwerror=true >/dev/null || exit 2
fi
ninja -C "$build" clustersim >/dev/null || exit 2

# Running as root (containers, CI) needs OpenMPI's explicit consent.
flags="--oversubscribe"
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# 18 points, 6 of them failing (tp 3 does not divide 8 GPUs): error rows
# must travel between ranks too.
set -- sweep "$root/scenarios/ddp-gpt-small.yaml" \
	--vary parallelism.data_parallel.bucket=1MiB,25MiB,100MiB \
	--vary parallelism.tp=1,3,2 \
	--vary training.micro_batch=1,2 \
	--jobs 2 --no-progress

"$build/clustersim" "$@" --out "$tmp/single.csv" 2>"$tmp/single.err" || {
	cat "$tmp/single.err" >&2
	echo "check-mpi-sweep: the single-process sweep failed" >&2
	exit 2
}
rows=$(grep -c ',ok,' "$tmp/single.csv")
[ "$rows" -eq 12 ] || { echo "check-mpi-sweep: expected 12 ok rows, got $rows" >&2; exit 2; }

status=0
for n in $ranks_list; do
	# shellcheck disable=SC2086
	mpirun $flags -n "$n" "$build/clustersim" "$@" --out "$tmp/mpi$n.csv" 2>"$tmp/mpi$n.err" || {
		cat "$tmp/mpi$n.err" >&2
		echo "check-mpi-sweep: the sweep under mpirun -n $n failed" >&2
		exit 2
	}
	if cmp -s "$tmp/single.csv" "$tmp/mpi$n.csv"; then
		echo "check-mpi-sweep: $n ranks: identical ($(wc -l <"$tmp/single.csv") lines)"
	else
		echo "check-mpi-sweep: $n ranks: the CSV differs from the single-process one" >&2
		diff "$tmp/single.csv" "$tmp/mpi$n.csv" | head -20 >&2
		status=1
	fi
done
exit $status
