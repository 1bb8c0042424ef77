# nccl-tests-rules.awk - reads nccl-tests' text output the way scripts
# that consume it do, line by line, and fails (exit 1, a message on
# standard error) where a line breaks the rules nccl-tests' own writer
# (src/util.cu of NVIDIA/nccl-tests: writeDeviceReport, writeResultHeader,
# writeBenchmarkLine*, writeResultFooter) and its README give them:
#
#   - "# nccl-tests version V nccl-headers=N nccl-library=N" (when present)
#   - "# Collective test starting: NAME" ... "# Collective test concluded: NAME"
#   - "# nThread T nGpus G minBytes B maxBytes E step: S(factor|bytes) warmup
#     iters: W iters: N agg iters: M validation: V graph: G [unalign: U]",
#     read by field name
#   - "#  Rank R Group G Pid P on HOST device D [BUS] NAME", ranks 0, 1, ...
#   - the banner with out-of-place and in-place where its literal puts them
#     (columns 64 and 99), and the column header: size count type redop root
#     time|cputime algbw busbw #wrong (twice)
#   - a result row: a line whose first field is a number, 13 fields (more
#     after them are another tool's), each field right-aligned where the
#     header's name ends (nccl-tests' own N/A of #wrong, 7 characters where
#     a count has 8, moves the rest of the row one column left); whole
#     sizes and counts, a root, times of at most 7 characters and
#     bandwidths of at most 6 (getFloatStr); algbw = size / time and busbw =
#     algbw x the test's bus factor (2(n-1)/n all-reduce, (n-1)/n
#     reduce-scatter, all-gather, all-to-all, gather, scatter; 1 the rest),
#     within their printed precision, n the '# Rank' lines
#   - sizes from minBytes (less what a count rounds off) up to maxBytes,
#     growing by the step
#   - "# Out of bounds values : K OK|FAILED" (the pass/fail line) and
#     "# Avg bus bandwidth    : X" with X the mean of the busbw columns
#
#   awk -f tests/cli/nccl-tests-rules.awk OUTPUT.txt
function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	bad = 1
}
function num(s) { return s ~ /^-?[0-9]+(\.[0-9]*)?(e[-+]?[0-9]+)?$/ }
function ends(line, k,    i, n, pos, rest, m) {
	# the column where field k of `line` ends (fields split at blanks)
	rest = line; pos = 0
	for (i = 1; i <= k; i++) {
		m = match(rest, /[^ ]+/)
		if (!m) return -1
		pos += RSTART + RLENGTH - 1
		rest = substr(rest, RSTART + RLENGTH)
	}
	return pos
}
function bus_factor(test, n) {
	sub(/_mpi$/, "", test)
	if (test == "all_reduce_perf") return 2 * (n - 1) / n
	if (test ~ /^(reduce_scatter|all_gather|alltoall|gather|scatter)_perf$/) return (n - 1) / n
	return 1
}
/^# nccl-tests version / {
	if ($0 !~ /^# nccl-tests version [0-9.]+.* nccl-headers=[0-9]+ nccl-library=[0-9]+$/)
		fail("a version line that is not nccl-tests'")
	next
}
/^# Collective test starting: / { test = $NF; next }
/^# Collective test concluded: / {
	if ($NF != test) fail("concluded '" $NF "', started '" test "'")
	concluded = 1
	next
}
/^# nThread / {
	for (i = 2; i < NF; i++) {
		if ($i == "nThread") nthread = $(i + 1)
		if ($i == "nGpus") ngpus = $(i + 1)
		if ($i == "minBytes") minb = $(i + 1)
		if ($i == "maxBytes") maxb = $(i + 1)
		if ($i == "step:") step = $(i + 1)
		if ($i == "iters:" && $(i - 1) == "warmup") warmup = $(i + 1)
		if ($i == "iters:" && $(i - 1) != "warmup" && $(i - 1) != "agg") iters = $(i + 1)
	}
	if (!num(nthread) || !num(ngpus) || !num(minb) || !num(maxb) || step !~ /^[0-9.e+]+\((factor|bytes)\)$/ ||
	    !num(warmup) || !num(iters))
		fail("a '# nThread' line without nThread, nGpus, minBytes, maxBytes, step, warmup iters, iters")
	stepv = step; sub(/\(.*/, "", stepv); byfactor = step ~ /factor/
	next
}
/^# +Rank +[0-9]+ +Group / {
	if ($3 != nranks) fail("rank " $3 " where rank " nranks " comes next")
	if ($0 !~ / on +[^ ]+ device +[0-9]+ \[[^]]+\] [^ ]/) fail("a '# Rank' line without its host, device and name")
	nranks++
	next
}
/^# .*out-of-place.*in-place/ {
	if (index($0, "out-of-place") != 64 || index($0, "in-place") != 99)
		fail("out-of-place at column " index($0, "out-of-place") " and in-place at " index($0, "in-place") \
		     ", not 64 and 99 as nccl-tests prints them")
	banner = 1
	next
}
/^# +size +count +type +redop +root / {
	split("size count type redop root time algbw busbw #wrong time algbw busbw #wrong", want, " ")
	for (k = 1; k <= 13; k++) {
		name = $(k + 1)
		if (name != want[k] && !(want[k] == "time" && name == "cputime")) fail("column " k " is '" name "', not '" want[k] "'")
		hend[k] = ends($0, k + 1)
	}
	header = 1
	next
}
/^# Out of bounds values : / {
	if ($0 !~ /^# Out of bounds values : [0-9]+ (OK|FAILED)$/) fail("an out-of-bounds line scripts cannot read")
	if ($7 != 0 || $8 != "OK") fail("out of bounds values: " $7 " " $8)
	oob = 1
	next
}
/^# Avg bus bandwidth +: / { avg = $NF; avgseen = 1; next }
/^#/ { next }
$1 ~ /^[0-9]+$/ {
	if (!header) { fail("a result row before the column header"); next }
	if (NF < 13) { fail("a row of " NF " fields, not 13"); next }
	shift = 0
	for (k = 1; k <= 13; k++) {
		if (k == 9 && $9 == "N/A" || k == 13 && $13 == "N/A") shift = 1
		if (ends($0, k) != hend[k] - (k >= 9 ? shift : 0) && !(k == 13 && $13 == "N/A" && $9 == "N/A"))
			fail("field " k " ('" $k "') ends at column " ends($0, k) ", its header's name at " hend[k])
	}
	if ($2 !~ /^[0-9]+$/ || $5 !~ /^-?[0-9]+$/) fail("size, count or root not whole")
	for (c = 6; c <= 10; c += 4) {
		if (length($c) > 7 || length($(c + 1)) > 6 || length($(c + 2)) > 6) fail("a time over 7 or a bandwidth over 6 characters")
		if (!num($c) || !num($(c + 1)) || !num($(c + 2))) { fail("a time or bandwidth that is not a number"); continue }
		alg = $1 / $c / 1e3
		tol = 0.006 + alg * 0.002
		if ($(c + 1) - alg > tol || alg - $(c + 1) > tol) fail("algbw " $(c + 1) " is not size / time (" alg ")")
		f = $(c + 1) * bus_factor(test, nranks)
		if ($(c + 2) - f > 0.011 + f * 0.002 || f - $(c + 2) > 0.011 + f * 0.002) fail("busbw " $(c + 2) " is not algbw x the bus factor (" f ")")
		bsum += $(c + 2); bcnt++
	}
	# sizes grow by the step (a count rounds them down), and start again for
	# the next type, reduction, root or cycle
	if (rows > 0 && $1 + 0 > last + 0) {
		if (byfactor && $1 / last > stepv * 1.01) fail("size " $1 " after " last " is more than a step of " stepv)
		if (!byfactor && $1 - last > stepv * 1.01) fail("size " $1 " after " last " is more than a step of " stepv)
	}
	if ($1 + 0 < minb * 0.5 || $1 + 0 > maxb + 0) fail("size " $1 " outside minBytes to maxBytes")
	last = $1
	rows++
	next
}
END {
	if (!test) fail("no '# Collective test starting' line")
	if (!nthread) fail("no '# nThread' line")
	if (!nranks) fail("no '# Rank' lines")
	if (!banner || !header) fail("no column header")
	if (!rows) fail("no result rows")
	if (!oob) fail("no '# Out of bounds values' line")
	if (!avgseen) fail("no '# Avg bus bandwidth' line")
	else if (bcnt) {
		m = bsum / bcnt
		if (m - avg > 0.01 * avg + 0.01 || avg - m > 0.01 * avg + 0.01) fail("avg bus bandwidth " avg " is not the mean " m)
	}
	if (!concluded) fail("no '# Collective test concluded' line")
	exit bad
}
