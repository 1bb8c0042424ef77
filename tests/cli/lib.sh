# lib.sh - what the shell tests of tests/cli share; sourced, with $bin the
# binary and $fail the verdict so far.

# expect WANT ARGS...: clustersim ARGS exits WANT; out.txt and err.txt hold
# its standard output and error
expect() {
	want=$1
	shift
	"$bin" "$@" >out.txt 2>err.txt
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: clustersim $* exited $got, expected $want" >&2
		sed 's/^/  /' err.txt >&2
		fail=1
	fi
}

# has FILE NEEDLE...: each needle is part of a line of FILE
has() {
	file=$1
	shift
	for needle in "$@"; do
		grep -qF -e "$needle" "$file" || { echo "FAIL: no '$needle' in $file:" >&2;
			sed 's/^/  /' "$file" >&2; fail=1; }
	done
}

# expect_err WANT MESSAGE ARGS...: clustersim ARGS exits WANT with MESSAGE on
# standard error
expect_err() {
	want=$1
	msg=$2
	shift 2
	expect "$want" "$@"
	grep -qF -- "$msg" err.txt ||
		{ echo "FAIL: clustersim $*: no '$msg' in:" >&2; cat err.txt >&2; fail=1; }
}
