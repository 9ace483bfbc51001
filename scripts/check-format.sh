#!/bin/bash
# scripts/check-format.sh - the whitespace and layout rules of the house
# style (.editorconfig; docs/design.md, "Conventions"), checked
# (`make check-format`, part of `make check`).
#
#   bash scripts/check-format.sh [FILE...]     default: every tracked text file
#
# Rules, for every text file (C, shell, Makefile, man pages, Markdown,
# gnuplot, JavaScript, C++, Python):
#   crlf       no carriage returns
#   trailing   no whitespace at the end of a line
#   eof        the file ends with exactly one newline (no missing final
#              newline, no blank lines at the end)
# and for C (.c .h):
#   indent     indentation is tabs: no line starts with spaces, except a
#              comment's continuation (" * ...", " */")
#   tabspace   no space before a tab in the indentation
#   length     at most 120 columns (tab = 8) unless the line holds a
#              string literal (user-visible strings are never split);
#              aim for 100
# Prints `RULE FILE:LINE: what` per violation. Exit 0 if none, 1 otherwise.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
MAX_COLS=120

if (($#)); then
	files=("$@")
else
	mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' '*.sh' '*.cpp' '*.js' '*.gp' \
		'*.py' '*.md' 'Makefile' 'man/*' '.editorconfig' '.gitignore' | sort)
fi
((${#files[@]})) || { echo "check-format: no files" >&2; exit 1; }

awk -v maxc="$MAX_COLS" '
function report(rule, what) {
	printf "%s %s:%d: %s\n", rule, FILENAME, FNR, what; bad++
}
function endfile() {
	if (fname == "") return
	if (blanks > 0) printf "eof %s: %d blank line(s) at the end\n", fname, blanks
	bad += (blanks > 0)
}
FNR == 1 { endfile(); fname = FILENAME; blanks = 0; isc = (FILENAME ~ /\.[ch]$/) }
{
	if (/\r/) report("crlf", "carriage return")
	if (/[ \t]+$/) report("trailing", "whitespace at the end of the line")
	blanks = (/^[ \t]*$/) ? blanks + 1 : 0
	if (!isc) next
	if (/^ +/ && !/^ +\*/) report("indent", "indented with spaces")
	if (/^\t* +\t/) report("tabspace", "space before a tab")
	line = $0; cols = 0
	for (i = 1; i <= length(line); i++)
		cols = (substr(line, i, 1) == "\t") ? cols + 8 - cols % 8 : cols + 1
	if (cols > maxc && line !~ /"/) report("length", cols " columns (max " maxc ")")
}
END { endfile(); exit bad > 0 }
' "${files[@]}"
rc=$?
# a final newline is missing when the last byte is not one
for f in "${files[@]}"; do
	[[ -s $f && $(tail -c 1 "$f" | od -An -c | tr -d ' ') != '\n' ]] &&
		echo "eof $f: no newline at the end" && rc=1
done
if ((rc)); then
	echo "check-format: violations above (rules: scripts/check-format.sh)" >&2
	exit 1
fi
echo "check-format: ok (${#files[@]} files)"
