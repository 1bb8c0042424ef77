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
