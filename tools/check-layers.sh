#!/bin/sh
# check-layers.sh - what each module of src/ may include, as
# docs/architecture.md says, and that the doc names every source file.
#
# The doc's table "| module | may use |" gives, for each module of src/,
# the modules whose headers it may include besides its own and the public
# header (clustersim/clustersim.h). Checked here:
#   - every `#include "mod/file.h"` of a .c or .h under src/ keeps to it;
#   - a module's _int.h headers are included by its own files only;
#   - every module of src/ has a row, every row a module, and a row names
#     only modules of rows above it (so the graph has no cycle);
#   - every .c and .h under src/ is named in the doc: by its name in its
#     module's row of the module table (the row "| `src/mod/` | ..."), as
#     src/mod/file anywhere, or, for a header, through its .c file's name.
# The table is the only statement of the graph: change it there.
#
#   tools/check-layers.sh [SOURCE_ROOT]
set -eu
cd "${1:-$(dirname "$0")/..}"
doc=docs/architecture.md
[ -r "$doc" ] || { echo "check-layers: cannot read '$doc'" >&2; exit 1; }
# generated sources (protobuf-c's) are the build's, not src/'s
files=$(find src -name '*.[ch]' ! -name '*.pb-c.[ch]' | LC_ALL=C sort | tr '\n' ' ')
mods=
for d in src/*/; do
	d=${d%/}
	mods="$mods ${d#src/}"
done

# shellcheck disable=SC2086
exec awk -v doc="$doc" -v mods="$mods" -v files="$files" -v q="'" '
BEGIN {
	nfiles = split(files, order, " ")
	for (i = 1; i <= nfiles; i++)
		isfile[order[i]] = 1
}

function err(msg) { print msg > "/dev/stderr"; bad = 1 }

# the cells of a table row, trimmed, into cell[1..n]; returns n
function cells(line,    n, i) {
	sub(/^[ \t]*\|/, "", line)
	sub(/\|[ \t]*$/, "", line)
	n = split(line, cell, /\|/)
	for (i = 1; i <= n; i++) {
		gsub(/`/, "", cell[i])
		gsub(/^[ \t]+|[ \t]+$/, "", cell[i])
	}
	return n
}

function named(p,    b, d, stem) {
	if (index(text, p))
		return 1
	d = p; sub(/\/[^\/]*$/, "", d)
	b = substr(p, length(d) + 2)
	if (index(modrow[d], "`" b "`"))
		return 1
	stem = b; sub(/\.h$/, "", stem)
	return b ~ /\.h$/ && ((d "/" stem ".c") in isfile) && named(d "/" stem ".c")
}

FILENAME == doc {
	text = text $0 "\n"
	if (intable && $0 !~ /^[ \t]*\|/)
		intable = 0
	if (intable) {
		if (cells($0) >= 2 && cell[1] !~ /^-+$/) {
			if (cell[1] in row)
				err(doc ": the module " q cell[1] q " has two rows in the table of what each module may use")
			row[cell[1]] = ++nrows
			u = cell[2]
			gsub(/[^a-z0-9_]+/, " ", u)
			gsub(/^ +| +$/, "", u)
			uses[cell[1]] = u
		}
	} else if ($0 ~ /^[ \t]*\|[ \t]*module[ \t]*\|[ \t]*may use[ \t]*\|/) {
		intable = 1
		tables++
	}
	if ($0 ~ /^[ \t]*\|[ \t]*`src\/[a-z0-9_]+\/`[ \t]*\|/) {
		d = $0
		sub(/^[ \t]*\|[ \t]*`/, "", d)
		sub(/\/`.*/, "", d)
		modrow[d] = modrow[d] $0
	}
	next
}

FNR == 1 {
	mod = FILENAME
	sub(/^src\//, "", mod)
	sub(/\/.*/, "", mod)
}

/^[ \t]*#[ \t]*include[ \t]*"[^"\/]*\// {
	ninc++
	dep = $0
	sub(/^[^"]*"/, "", dep)
	hdr = dep
	sub(/".*/, "", hdr)
	sub(/\/.*/, "", dep)
	if (dep == "clustersim" || !(mod in row))
		next
	if (dep == mod)
		next
	if (hdr ~ /_int\.h$/) {
		err(FILENAME ":" FNR ": " q hdr q " is internal to " q dep q " (its _int.h headers are its own)")
		next
	}
	if (index(" " uses[mod] " ", " " dep " ") == 0)
		err(FILENAME ":" FNR ": " q mod q " may not include " q dep q " (it may use: " \
		    (uses[mod] == "" ? "no other module" : uses[mod]) ")")
}

END {
	if (tables != 1)
		err(doc ": " (tables ? "more than one" : "no") " table " q "| module | may use |" q)
	n = split(mods, m, " ")
	for (i = 1; i <= n; i++) {
		ismod[m[i]] = 1
		if (!(m[i] in row))
			err("src/" m[i] ": a module without a row in " doc q "s table of what each module may use")
	}
	for (r in row) {
		if (!(r in ismod))
			err(doc ": the table of what each module may use names " q r q ", which src/ lacks")
		k = split(uses[r], w, " ")
		for (i = 1; i <= k; i++)
			if (!(w[i] in row))
				err(doc ": " q r q " may use " q w[i] q ", which has no row in the table")
			else if (row[w[i]] >= row[r])
				err(doc ": " q r q " may use " q w[i] q ", whose row is not above its own")
	}
	for (i = 1; i <= nfiles; i++)
		if (!named(order[i]))
			err(order[i] ": not in " doc)
	if (bad)
		exit 1
	print "layers ok: " n " modules, " nfiles " files, " ninc " includes"
}' "$doc" $files
