#!/bin/sh
# run-calls.sh - the names the files of src/run/ call one another through:
# each cs__run_ name defined at file scope in one src/run/*.c (a function
# that is not static) and used in another src/run/*.c. Printed one a line
# (the name, the file that defines it, the files that use it), then their
# count; exits 1 when the count exceeds LIMIT (default 20), so the runner's
# files keep to what they own (docs/architecture.md).
#
# Comments and string literals are no use. A name used only through an
# inline function of a src/run/*.h header (cs__run_retune through
# cs__run_tune) is not counted; the last line says how many are.
#
#   tools/run-calls.sh [LIMIT [SOURCE_ROOT]]
set -eu
limit=${1:-20}
case $limit in
'' | *[!0-9]*)
	echo "run-calls: limit '$limit' is not a whole number" >&2
	exit 2
	;;
esac
cd "${2:-$(dirname "$0")/..}"
[ -d src/run ] || { echo "run-calls: no 'src/run' under '$(pwd)'" >&2; exit 2; }
files=$(find src/run -name '*.[ch]' | LC_ALL=C sort | tr '\n' ' ')

# shellcheck disable=SC2086
exec awk -v limit="$limit" '
# The text of a file without its comments and literals (each a space;
# newlines kept); a preprocessor line is kept as its identifiers alone,
# each marked with "@" (a use wherever it lies).
function clean(text,    out, i, n, c, d, st, pp, bol) {
	out = ""
	n = length(text)
	st = 0 # 0 code, 1 block comment, 2 line comment, 3 string, 4 char
	pp = 0
	bol = 1
	for (i = 1; i <= n; i++) {
		c = substr(text, i, 1)
		d = substr(text, i + 1, 1)
		if (st == 1) {
			if (c == "*" && d == "/") {
				st = 0
				i++
				out = out " "
			} else
				out = out (c == "\n" ? "\n" : "")
			continue
		}
		if (st == 2) {
			if (c == "\n") {
				st = 0
				pp = 0
				bol = 1
				out = out "\n"
			}
			continue
		}
		if (st == 3 || st == 4) {
			if (c == "\\")
				i++
			else if ((st == 3 && c == "\"") || (st == 4 && c == "\x27"))
				st = 0
			continue
		}
		if (c == "/" && d == "*") {
			st = 1
			i++
			continue
		}
		if (c == "/" && d == "/") {
			st = 2
			i++
			continue
		}
		if (c == "\"") {
			st = 3
			out = out " "
			continue
		}
		if (c == "\x27") {
			st = 4
			out = out " "
			continue
		}
		if (c == "\n") {
			if (!(pp && substr(text, i - 1, 1) == "\\"))
				pp = 0
			bol = 1
			out = out "\n"
			continue
		}
		if (bol && c == "#")
			pp = 1
		if (c != " " && c != "\t")
			bol = 0
		if (pp) {
			if (c ~ /[A-Za-z_]/ && substr(text, i - 1, 1) !~ /[A-Za-z0-9_]/)
				out = out " @" c
			else
				out = out (c ~ /[A-Za-z0-9_]/ ? c : " ")
			continue
		}
		out = out c
	}
	return out
}

# Uses (use[name, file]) and definitions (def[name]) of the cs__run_ names
# in a cleaned file; a header uses a name inside a body ({ ... }) alone.
function scan(f, s, header,    n, i, c, depth, isstatic, id, j, k, pdepth, nx, pp) {
	n = length(s)
	depth = 0
	isstatic = 0
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c == "{")
			depth++
		else if (c == "}") {
			depth--
			if (depth == 0)
				isstatic = 0
		} else if (c == ";" && depth == 0)
			isstatic = 0
		else if (c ~ /[A-Za-z_@]/) {
			for (j = i + 1; j <= n && substr(s, j, 1) ~ /[A-Za-z0-9_]/; j++)
				;
			id = substr(s, i, j - i)
			i = j - 1
			if (id == "static" && depth == 0) {
				isstatic = 1
				continue
			}
			pp = substr(id, 1, 1) == "@"
			if (pp)
				id = substr(id, 2)
			if (id !~ /^cs__run_/)
				continue
			if (!pp && depth == 0 && !isstatic && !header) {
				# a definition: name ( ... ) {
				for (k = j; k <= n && substr(s, k, 1) ~ /[ \t\n]/; k++)
					;
				if (substr(s, k, 1) == "(") {
					for (pdepth = 0; k <= n; k++) {
						nx = substr(s, k, 1)
						if (nx == "(")
							pdepth++
						else if (nx == ")" && --pdepth == 0)
							break
					}
					for (k++; k <= n && substr(s, k, 1) ~ /[ \t\n]/; k++)
						;
					if (substr(s, k, 1) == "{") {
						def[id] = f
						continue
					}
				}
			}
			if (header && !pp && depth == 0)
				continue # a declaration
			use[id, f] = 1
			name[id] = 1
		}
	}
}

BEGIN {
	nf = split(ARGV[1], file, " ")
	ARGV[1] = ""
	for (i = 1; i <= nf; i++) {
		text = ""
		while ((getline line < file[i]) > 0)
			text = text line "\n"
		close(file[i])
		base = file[i]
		sub(/^.*\//, "", base)
		short[file[i]] = base
		scan(base, clean(text), base ~ /\.h$/)
	}
	count = 0
	hidden = 0
	n = 0
	for (id in def)
		order[++n] = id
	# sort by name (insertion: a few dozen names)
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && order[j - 1] > order[j]; j--) {
			t = order[j]
			order[j] = order[j - 1]
			order[j - 1] = t
		}
	for (i = 1; i <= n; i++) {
		id = order[i]
		users = ""
		inh = 0
		for (k = 1; k <= nf; k++) {
			b = short[file[k]]
			if (b == def[id] || !((id, b) in use))
				continue
			if (b ~ /\.h$/)
				inh = 1
			else
				users = users " " b
		}
		if (users != "") {
			print id " " def[id] users
			count++
		} else if (inh)
			hidden++
	}
	printf "%d cross-file cs__run_ names in src/run (limit %d)", count, limit
	if (hidden)
		printf "; %d more used only through inline functions of its headers", hidden
	printf "\n"
	exit count > limit ? 1 : 0
}
' "$files"
