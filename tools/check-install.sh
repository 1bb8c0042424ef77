#!/bin/sh
# Install clustersim into a temporary prefix and check what a user gets:
# the command, the header, the manual page and the example scenarios, each
# scenario valid as installed, and one of them run by the installed binary.
#
#   tools/check-install.sh
#
# Builds in a temporary directory (tests off), removed at the end.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
	echo "check-install: $*" >&2
	exit 1
}

meson setup "$tmp/build" --prefix="$prefix" --bindir=bin --datadir=share --mandir=share/man \
	--includedir=include --buildtype=release -Dtests=disabled -Dmpi=disabled \
	>"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; fail "meson setup failed"; }
meson install -C "$tmp/build" >"$tmp/install.log" 2>&1 ||
	{ tail -20 "$tmp/install.log" >&2; fail "install failed"; }

bin=$prefix/bin/clustersim
share=$prefix/share/clustersim/scenarios
man1=$prefix/share/man/man1/clustersim.1

[ -x "$bin" ] || fail "'$bin' was not installed"
[ -f "$prefix/include/clustersim/clustersim.h" ] || fail "the header was not installed"
[ -f "$man1" ] || fail "the manual page was not installed as '$man1'"
[ -d "$share" ] || fail "the scenarios were not installed in '$share'"
"$bin" --version | grep -q '^clustersim [0-9]' || fail "'clustersim --version' prints no version"

# Every file of the tree's scenarios/ is installed, unchanged, with its
# subfolders (scenarios/validation: the replays' tables), and every scenario
# is valid where it lies (run from elsewhere, so nothing resolves against the
# source tree; a plan that does not fit in memory, which docs/scenarios.md
# says of those that do not, is still valid: --allow-oom).
cd "$tmp"
n=0
all=0
for rel in $(cd "$src/scenarios" && find . -type f | sort); do
	inst=$share/$rel
	[ -f "$inst" ] || fail "'scenarios/$rel' was not installed"
	cmp -s "$src/scenarios/$rel" "$inst" || fail "'$inst' differs from the source"
	case $rel in
	./*/*.yaml) "$bin" validate "$inst" --allow-oom >/dev/null 2>&1 ||
		fail "'clustersim validate $inst' failed" ;;
	*.yaml)
		"$bin" validate "$inst" --allow-oom >/dev/null 2>"$tmp/validate.err" ||
			{ cat "$tmp/validate.err" >&2; fail "'clustersim validate $inst' failed"; }
		n=$((n + 1))
		;;
	esac
	all=$((all + 1))
done
[ "$n" -gt 0 ] || fail "no scenarios in the source tree"
for rel in $(cd "$share" && find . -type f); do
	[ -f "$src/scenarios/$rel" ] || fail "'$share/$rel' is not a file of the tree's scenarios/"
done

# Shell completion for bash and zsh.
[ -f "$prefix/share/bash-completion/completions/clustersim" ] || fail "no bash completion installed"
[ -f "$prefix/share/zsh/site-functions/_clustersim" ] || fail "no zsh completion installed"

# 'list scenarios' run away from the tree finds the installed ones.
listed=$("$bin" list scenarios | tail -n +2 | wc -l)
[ "$listed" -eq "$n" ] || fail "'clustersim list scenarios' shows $listed scenarios, $n installed"
"$bin" list scenarios | grep -q " $share/ddp-gpt-small.yaml\$" ||
	fail "'clustersim list scenarios' does not name the installed files"
# and a scenario given by its name is the installed one, which it says
"$bin" validate ddp-gpt-small >"$tmp/name.out" 2>"$tmp/name.err" ||
	{ cat "$tmp/name.err" >&2; fail "'clustersim validate ddp-gpt-small' failed"; }
grep -qF "scenario 'ddp-gpt-small': reading $share/ddp-gpt-small.yaml" "$tmp/name.err" &&
	grep -qF "ok: $share/ddp-gpt-small.yaml: " "$tmp/name.out" ||
	fail "'clustersim validate ddp-gpt-small' did not read the installed file"


# One run, checked through its JSON.
"$bin" run "$share/ddp-llama2-7b-2node.yaml" --no-progress --format json >"$tmp/run.json" \
	2>"$tmp/run.err" || { cat "$tmp/run.err" >&2; fail "the installed binary cannot run a scenario"; }
grep -q '"step_time_s": *[0-9]' "$tmp/run.json" || fail "the run printed no step time"

# The manual page renders and names every command.
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 MANPAGER=cat man -M "$prefix/share/man" clustersim >"$tmp/man.txt" 2>"$tmp/man.err" ||
		{ cat "$tmp/man.err" >&2; fail "'man -M $prefix/share/man clustersim' failed"; }
else
	groff -man -Tascii "$man1" >"$tmp/man.txt" 2>/dev/null || fail "the manual page does not render"
fi
for c in run validate coll memory pipeline sweep plan compare calibrate list; do
	grep -q "clustersim $c" "$tmp/man.txt" || fail "the manual page has no synopsis of '$c'"
done

echo "check-install: ok ($n scenarios and $all files in all installed, valid, found by name, one run, man page renders)"
