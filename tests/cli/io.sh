#!/bin/sh
# Files in and out, through the binary: outputs checked before the work
# without touching them, written whole or not at all (a failing run keeps
# the old result), devices and pipes written only once the result is
# complete, an output that is an input refused; every write failure (a
# full disk, a closed pipe) exits 1 with the path and the reason; inputs
# that are not regular files (a FIFO must not hang) or are over their size
# limit refused with exit 2; export-chakra's folder made whole with a
# manifest that run-chakra checks, and gone when a signal interrupts it.
#   tests/cli/io.sh CLUSTERSIM SOURCE_ROOT
set -u
real=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
root=$2
gpt=$root/scenarios/ddp-gpt-small.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
# a command that waits on a FIFO fails the test instead of hanging it
printf '#!/bin/sh\nexec timeout 120 "%s" "$@"\n' "$real" >clustersim
chmod +x clustersim
bin=$tmp/clustersim

fail=0
# shellcheck source=tests/cli/lib.sh
. "$lib"

# same FILE TEXT: FILE holds exactly the line TEXT
same() {
	[ "$(cat "$1")" = "$2" ] || { echo "FAIL: '$1' changed: $(head -c 200 "$1")" >&2; fail=1; }
}

# no_temporaries: no output's temporary file is left in this folder
no_temporaries() {
	if ls ./*.tmp.* >/dev/null 2>&1; then
		echo "FAIL: temporary files left behind: $(ls ./*.tmp.*)" >&2
		fail=1
	fi
}

# closed_stdout ARGS...: clustersim ARGS with its standard output a pipe
# whose reader has gone; its exit status in rc.txt, its standard error in
# err.txt (SIGPIPE at its default, as a shell leaves it)
closed_stdout() {
	python3 - "$bin" "$@" <<'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
with open("err.txt", "wb") as err:
    p = subprocess.run(sys.argv[1:], stdout=w, stderr=err)
open("rc.txt", "w").write("%d\n" % p.returncode)
EOF
}

# ---- write failures: one exit status, the path and the reason ----------------
closed_stdout run "$gpt"
same rc.txt 1
has err.txt "clustersim: cannot write the standard output: Broken pipe"
closed_stdout plan "$gpt" --gpus 2 --top 2
same rc.txt 1
if [ -w /dev/full ]; then
	"$bin" run "$gpt" >/dev/full 2>err.txt
	[ $? -eq 1 ] || { echo "FAIL: run >/dev/full did not exit 1" >&2; fail=1; }
	has err.txt "clustersim: cannot write the standard output: No space left on device"
	expect_err 1 "clustersim plan: cannot write '/dev/full': No space left on device" \
		plan "$gpt" --gpus 2 --top 2 --out /dev/full
	expect_err 1 "clustersim run: cannot write '/dev/full': No space left on device" \
		run "$gpt" --trace /dev/full
	expect_err 1 "clustersim run: cannot write '/dev/full': No space left on device" \
		run "$gpt" --per-rank /dev/full
	expect_err 1 "clustersim sweep: cannot write '/dev/full': No space left on device" \
		sweep "$gpt" --vary training.micro_batch=1,2 --out /dev/full
	expect_err 1 "clustersim calibrate: cannot write '/dev/full': No space left on device" \
		calibrate "$root/tests/data/trace_llama8l-h4096-s8192.json.gz" \
		"$root/scenarios/h200-llama8l-h4096-s8192.yaml" --out /dev/full
fi

# ---- /dev/stdout: a pipe, or the file the shell redirected to -----------------
{ "$bin" plan "$gpt" --gpus 2 --top 2 --out /dev/stdout 2>err.txt; echo $? >rc.txt; } | cat >piped.txt
same rc.txt 0
has piped.txt 'searched ' ' rank    step s'
expect 0 run "$gpt" --format json --per-rank /dev/stdout
# the report and the rows, neither written over the other
has out.txt '"step_time_s"' 'rank,end_s,busy_s'
[ "$(grep -c '^[0-9]' out.txt)" -eq 8 ] || { echo "FAIL: --per-rank /dev/stdout: not 8 rows" >&2; fail=1; }
expect 0 run "$gpt" --per-rank /dev/null

# ---- a failing run keeps the old output ---------------------------------------
horizon="simulated time exceeds 2^61 ns (73 years)"
printf 'old\n' >single.csv
printf 'old\n' >linked.csv
ln linked.csv other-name.csv
printf 'old\n' >trace.json
for out in single.csv other-name.csv; do
	expect_err 1 "$horizon" run "$gpt" --set cluster.gpu.peak_bf16=989FLOPS --per-rank "$out" \
		--trace trace.json
done
same single.csv old
same linked.csv old
same trace.json old
no_temporaries
# and a run that succeeds replaces it whole
expect 0 run "$gpt" --per-rank other-name.csv
has linked.csv 'rank,end_s,busy_s'
[ "$(stat -c %h linked.csv)" -eq 2 ] || { echo "FAIL: a hard-linked output lost its link" >&2; fail=1; }

# ---- an output that is an input, by any name ----------------------------------
cp "$gpt" in.yaml
ln in.yaml in-link.yaml
expect_err 2 "cannot write 'in-link.yaml': it is the input 'in.yaml'" run in.yaml --trace in-link.yaml
expect_err 2 "cannot write './in.yaml': it is the input 'in.yaml'" plan in.yaml --gpus 2 --out ./in.yaml
same_text=$(cat "$gpt")
[ "$(cat in.yaml)" = "$same_text" ] || { echo "FAIL: a refused output changed its input" >&2; fail=1; }
ln -f linked.csv b.csv
expect_err 2 "'linked.csv' is given for two outputs" run in.yaml --per-rank linked.csv --trace b.csv
# and two names of one file still to be made: another spelling of its
# folder, or a symlink to it
mkdir sub
expect_err 2 "is given for two outputs" run in.yaml --per-rank new.csv --trace ./new.csv
expect_err 2 "is given for two outputs" run in.yaml --per-rank new.csv --trace sub/../new.csv
expect_err 2 "is given for two outputs" run in.yaml --per-rank new.csv --trace "$tmp/new.csv"
ln -s ../new.csv sub/to-new.csv
expect_err 2 "is given for two outputs" run in.yaml --per-rank new.csv --trace sub/to-new.csv
[ -e new.csv ] && { echo "FAIL: a refused run wrote new.csv" >&2; fail=1; }
expect 0 run in.yaml --per-rank new.csv --trace sub/new.csv

# the files the scenario names are inputs too
printf 'calibration:\n  gemm: 1.1\n' >cal.yaml
expect_err 2 "cannot write 'cal.yaml': it is the input '$tmp/cal.yaml'" \
	run "$gpt" --set cluster.gpu.calibration="$tmp/cal.yaml" --trace cal.yaml
expect_err 2 "cannot write 'cal.yaml': it is the input '$tmp/cal.yaml'" \
	calibrate "$root/tests/data/trace_llama8l-h4096-s8192.json.gz" \
	"$root/scenarios/h200-llama8l-h4096-s8192.yaml" --set cluster.gpu.calibration="$tmp/cal.yaml" \
	--out cal.yaml
same cal.yaml "$(printf 'calibration:\n  gemm: 1.1')"

# ---- inputs: regular files only (a FIFO is refused, never waited on) ----------
mkfifo fifo
mkdir folder
expect_err 2 "cannot read 'fifo': not a regular file" run fifo
expect_err 2 "cannot read 'folder': not a regular file" validate folder
expect_err 2 "cannot read calibration '$tmp/fifo': not a regular file" \
	run "$gpt" --set cluster.gpu.calibration="$tmp/fifo"
expect_err 2 "cannot read kernel profile '$tmp/fifo': not a regular file" \
	run "$gpt" --set cluster.gpu.profile="$tmp/fifo"
expect_err 2 "cannot read 'fifo': not a regular file" compare fifo "$gpt"
expect_err 2 "cannot read 'fifo': not a regular file" compare "$root/tests/data/trace_llama8l-h4096-s8192.json.gz" \
	"$root/scenarios/h200-llama8l-h4096-s8192.yaml" --kernel-classes fifo
expect_err 2 "cannot read 'fifo': not a regular file" calibrate --nccl-tests fifo "$gpt" --out net.yaml
expect_err 2 "cannot read 'fifo': not a regular file" run-chakra "$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" \
	--astra-network fifo
expect_err 2 "cannot read 'fifo': not a regular file" run-chakra "$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" \
	--astra-network "$root/tests/data/chakra/astra-sim/HGX-H100-validated.yml" --astra-system fifo
expect_err 2 "cannot read 'fifo': not a regular file" run-chakra "$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" \
	--astra-network "$root/tests/data/chakra/astra-sim/HGX-H100-validated.yml" --comm-groups fifo
mkdir fifo-traces
mkfifo fifo-traces/x.0.et
expect_err 2 "cannot read 'fifo-traces/x.0.et': not a regular file" run-chakra fifo-traces \
	--astra-network "$root/tests/data/chakra/astra-sim/HGX-H100-validated.yml" --set cluster.gpus_per_node=1 \
	--set cluster.nodes=1

# ---- inputs: nesting as deep as a scenario's at most (libyaml builds 80,000
# levels in 30 s), refused at once at the level past it ----------------------
deep() { awk -v key="$1" 'BEGIN { s = key ": "; for (i = 0; i < 80000; i++) s = s "["; for (i = 0; i < 80000; i++) s = s "]"; print s }'; }
deep gemm_shapes >deep-cal.yaml
expect_err 2 "deep-cal.yaml:1:45: nesting deeper than 32 levels" \
	run "$gpt" --set cluster.gpu.calibration="$tmp/deep-cal.yaml"
deep gemm >deep-prof.yaml
expect_err 2 "deep-prof.yaml:1:38: nesting deeper than 32 levels" \
	run "$gpt" --set cluster.gpu.profile="$tmp/deep-prof.yaml"
deep topology >deep-net.yml
expect_err 2 "deep-net.yml:1:42: nesting deeper than 32 levels" \
	run-chakra "$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" --astra-network deep-net.yml

# ---- inputs: each kind of file has a size limit (sparse files, nothing read) ---
truncate -s 17M big.yaml
expect_err 2 "'big.yaml' is larger than the limit of 16 MiB" validate big.yaml
truncate -s 2M big-cal.yaml
expect_err 2 "'$tmp/big-cal.yaml' is larger than the limit of 1 MiB" \
	run "$gpt" --set cluster.gpu.calibration="$tmp/big-cal.yaml"
expect_err 2 "'$tmp/big.yaml' is larger than the limit of 16 MiB" \
	run "$gpt" --set cluster.gpu.profile="$tmp/big.yaml"
expect_err 2 "'big-cal.yaml' is larger than the limit of 1 MiB" compare \
	"$root/tests/data/trace_llama8l-h4096-s8192.json.gz" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" \
	--kernel-classes big-cal.yaml
truncate -s 65M big.txt
expect_err 2 "'big.txt' is larger than the limit of 64 MiB" calibrate --nccl-tests big.txt "$gpt" --out net.yaml
expect_err 2 "'big-cal.yaml' is larger than the limit of 1 MiB" run-chakra \
	"$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" --astra-network big-cal.yaml
expect_err 2 "'big.txt' is larger than the limit of 64 MiB" run-chakra \
	"$root/tests/data/chakra/astra-sim/all_reduce_8npus_1MB" \
	--astra-network "$root/tests/data/chakra/astra-sim/HGX-H100-validated.yml" --comm-groups big.txt

# ---- export-chakra: a folder made whole, with a manifest run-chakra checks ----
expect 0 export-chakra "$gpt" --out et --prefix t
has et/t.manifest 'clustersim-chakra-manifest 1' 'ranks 8' 'file t.0.et ' 'file t.comm_group.json '
ls -d et.* >/dev/null 2>&1 && { echo "FAIL: export-chakra left a folder beside et: $(ls -d et.*)" >&2; fail=1; }
expect 0 run-chakra et --cluster "$gpt"
# an old export is replaced whole (a stale trace of another prefix goes with it)
cp et/t.0.et et/stale.0.et
expect 0 export-chakra "$gpt" --out et/ --prefix t
[ -e et/stale.0.et ] && { echo "FAIL: an old export's file survived its replacement" >&2; fail=1; }
cp et/t.manifest manifest.before
# refused before anything is written: over the size bound, or a folder of other files
expect_err 2 "clustersim export-chakra: the export would write about 0.2 MiB (8 ranks, 1848 nodes), more than the limit of 0.1 MiB ('--max-size' raises it)" \
	export-chakra "$gpt" --out et --prefix t --max-size 100KiB
cmp -s et/t.manifest manifest.before || { echo "FAIL: a refused export changed the old one" >&2; fail=1; }
ls -d et.* >/dev/null 2>&1 && { echo "FAIL: a refused export left a folder: $(ls -d et.*)" >&2; fail=1; }
expect_err 2 "bad value 'lots' for '--max-size'" export-chakra "$gpt" --out et --max-size lots
mkdir notes
printf 'mine\n' >notes/notes.txt
expect_err 2 "cannot replace 'notes': it holds 'notes.txt', which is no part of an export" \
	export-chakra "$gpt" --out notes
same notes/notes.txt mine
expect_err 2 "cannot write 'single.csv': it is not a directory" export-chakra "$gpt" --out single.csv
# run-chakra: a byte changed, a file gone, and traces without a manifest
cp -r et changed
printf 'X' | dd of=changed/t.2.et bs=1 seek=100 conv=notrunc 2>/dev/null
expect_err 2 "'changed/t.2.et' is not the file its manifest 'changed/t.manifest' lists" \
	run-chakra changed --cluster "$gpt"
has err.txt 'it changed after the export'
cp -r et cut
rm cut/t.7.et
expect_err 2 "'cut/t.7.et' is missing: the manifest 'cut/t.manifest' lists it" run-chakra cut --cluster "$gpt"
rm cut/t.comm_group.json
cp et/t.7.et cut/
expect_err 2 "'cut/t.comm_group.json' is missing: the manifest 'cut/t.manifest' lists it" \
	run-chakra cut --cluster "$gpt"
rm changed/t.manifest
expect 0 run-chakra changed --cluster "$gpt"
printf 'not a manifest\n' >et/t.manifest
expect_err 2 "et/t.manifest:1: not a manifest line" run-chakra et --cluster "$gpt"

# ---- calibrate interrupted mid-fit: the old calibration stays --------------
# the refits read the fit from a file of their own in TMPDIR; '--out' is
# written once, after the last: SIGTERM between leaves it as it was, and no
# file of the fit (16 copies of one GPU's trace: seconds of refits)
mkdir traces16 fit
i=0
while [ $i -lt 16 ]; do
	cp "$root/tests/data/trace_llama8l-h4096-s8192.json.gz" traces16/rank$i.json.gz
	i=$((i + 1))
done
printf 'calibration:\n  gemm: 1.1\n' >old-cal.yaml
TMPDIR=$tmp/fit "$real" calibrate traces16 "$root/scenarios/h200-llama8l-h4096-s8192.yaml" \
	--out old-cal.yaml >/dev/null 2>err.txt &
pid=$!
i=0
while [ $i -lt 3000 ] && ! ls fit/clustersim-calibrate-$pid.yaml.tmp.* >/dev/null 2>&1; do
	sleep 0.01
	i=$((i + 1))
done
kill -TERM $pid
wait $pid
got=$?
[ "$(kill -l "$got" 2>/dev/null)" = TERM ] ||
	{ echo "FAIL: calibrate sent SIGTERM mid-fit exited $got, not by the signal" >&2; cat err.txt >&2; fail=1; }
same old-cal.yaml "$(printf 'calibration:\n  gemm: 1.1')"
[ -z "$(ls fit)" ] || { echo "FAIL: SIGTERM left the fit's file: $(ls fit)" >&2; fail=1; }
no_temporaries

# ---- export-chakra interrupted: its folder goes, the old export stays ------
expect 0 export-chakra "$gpt" --out ex --prefix t
cp ex/t.manifest manifest.ex
# interrupted SIG [LAUNCHER...]: an export of 16,384 small ranks (seconds of
# files) into ex in the background, sent SIG once its first file is written:
# it ends by the signal, leaves no folder beside ex, and ex is the old export
interrupted() {
	sig=$1
	shift
	"$@" "$real" export-chakra "$gpt" --out ex --prefix t --set cluster.nodes=2048 \
		--set training.global_batch=65536 --set simulate.steps=1 --set model.layers=1 >/dev/null 2>err.txt &
	pid=$!
	i=0
	while [ $i -lt 2000 ] && ! ls ex.tmp.*/t.0.et >/dev/null 2>&1; do
		sleep 0.01
		i=$((i + 1))
	done
	kill "-$sig" $pid
	wait $pid
	got=$?
	[ "$(kill -l "$got" 2>/dev/null)" = "$sig" ] ||
		{ echo "FAIL: export-chakra sent SIG$sig exited $got, not by the signal" >&2; cat err.txt >&2; fail=1; }
	ls -d ex.* >/dev/null 2>&1 && { echo "FAIL: SIG$sig left a folder beside ex: $(ls -d ex.*)" >&2; fail=1; }
	cmp -s ex/t.manifest manifest.ex || { echo "FAIL: SIG$sig changed the old export" >&2; fail=1; }
	expect 0 run-chakra ex --cluster "$gpt"
}
interrupted TERM
interrupted HUP
# a background job's SIGINT is ignored unless set back to its default
if env --default-signal=INT true 2>/dev/null; then
	interrupted INT env --default-signal=INT
fi

exit $fail
