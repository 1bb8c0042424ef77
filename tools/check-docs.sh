#!/bin/sh
# Every command a doc shows runs: the `clustersim ...` lines of the ```sh
# blocks of README.md and docs/*.md (continuations joined, `build-release/`
# and `./build-release/` prefixes taken as the binary) and the inline
# `clustersim ...` code spans of their text and tables, each run with
# BUILD's binary from a scratch folder that mirrors the repository root (its
# outputs stay out of the checkout), must exit 0. Commands that name an
# input file the repository does not have (a user's own trace, scenario or
# calibration) are skipped and counted. Then tools/check-doc-figures.py
# compares the outputs and table figures the docs quote with what the
# commands print.
#
#   tools/check-docs.sh [BUILD_DIR]      (default build-release)
set -u
cd "$(dirname "$0")/.."
build=${1:-build-release}
bin=$(pwd)/$build/clustersim
[ -x "$bin" ] || { echo "check-docs: no binary at $bin (build it first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# the commands run in a folder that mirrors the repository's entries by
# links, so what they write lands there, not in the checkout
work=$tmp/work
mkdir "$work"
for e in * .[!.]*; do
	[ -e "$e" ] && ln -s "$(pwd)/$e" "$work/$e"
done

for doc in README.md docs/*.md; do
	awk -v doc="$doc" '
		/^```sh/ { insh = 1; next }
		/^```/ { insh = 0; next }
		insh {
			line = $0
			while (line ~ /\\$/ && (getline nxt) > 0) { sub(/\\$/, "", line); line = line " " nxt }
			sub(/^ *(\$ )?/, "", line)
			sub(/^(\.\/)?build-release\//, "", line)
			sub(/ +#.*$/, "", line)
			if (line ~ /^clustersim /) print doc "\t" line
			next
		}
		{
			rest = $0
			while (match(rest, /`(\.\/)?(build-release\/)?clustersim [^`]*`/)) {
				span = substr(rest, RSTART + 1, RLENGTH - 2)
				rest = substr(rest, RSTART + RLENGTH)
				sub(/^(\.\/)?build-release\//, "", span)
				nw = split(span, w, / +/)
				# a command, not a mention: arguments, none a placeholder
				# (FILE, SCENARIO.yaml, KEY=VALUE, [--steps N], A|B, ...)
				ok = nw >= 3 && w[nw] !~ /^-/ && span !~ /\[|\.\.\.|\|/
				for (i = 2; i <= nw; i++)
					if (w[i] ~ /^[A-Z][A-Z_]*([.=]|$)/ || w[i] ~ /=[A-Z][A-Z_]*$/)
						ok = 0
				if (ok)
					print doc "\t" span
			}
		}' "$doc"
done >"$tmp/commands"

ran=0 skipped=0 failed=0
# a doc's words are taken literally: a glob such as h200-*.yaml names no
# file, so it is skipped, never expanded into several arguments
set -f
while IFS="$(printf '\t')" read -r doc cmd; do
	missing=""
	# shellcheck disable=SC2086
	set -- $cmd
	shift
	for arg in "$@"; do
		case $arg in
		-*) ;;
		*.yaml|*.json|*.gz|*.txt)
			file=${arg#*=}
			case $file in /tmp/*) ;; *) [ -e "$file" ] || missing=$file ;; esac ;;
		esac
	done
	if [ -n "$missing" ]; then
		skipped=$((skipped + 1))
		continue
	fi
	ran=$((ran + 1))
	if ! (cd "$work" && "$bin" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null; then
		echo "FAIL ($doc): clustersim $*" >&2
		sed 's/^/  /' "$tmp/err" | head -5 >&2
		failed=$((failed + 1))
	fi
done <"$tmp/commands"
echo "check-docs: $ran commands ran, $failed failed, $skipped skipped (inputs not in the repository)"
# and the figures they quote are what they print
CS_DOCS_WORKDIR=$work python3 tools/check-doc-figures.py "$build" || failed=$((failed + 1))
[ "$failed" -eq 0 ]
