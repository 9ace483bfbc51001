#!/bin/bash
# scripts/check-structure.sh - the structure rules of the house style,
# checked (`make check-structure`).
#
#   bash scripts/check-structure.sh [BUILD]      BUILD: default build
#   CHECK_ROOT=DIR ...                           check the tree at DIR (tests)
#
# Product code is every .c and .h under io/ mpi/ pems/ bsp/ algorithms/
# gen/ model/ cli/ include/ (not tests/, bench/, examples/). Rules:
#   size      no product file over 1000 lines, cli/ under 3000 in all
#             (the CLI is a thin front over algorithms/ and model/)
#   function  no product function over 80 lines, from the line of its
#             opening brace to the line of its closing brace (a brace
#             counter that skips comments, strings and preprocessor lines)
#   include   a #include "..." resolves only into the layers its own layer
#             may use (below)
#   call      an object's undefined symbols are defined only in layers its
#             layer may call, or are exported by libpems.so (the public
#             API); read with nm from BUILD's objects, skipped (with a
#             note) when they are not built
# Layers and what each may use, lowest first:
#   io          io
#   mpi         mpi                          (the plugin; dlopen()ed)
#   pems        pems io mpi include
#   bsp         bsp pems/api include         (calls: any of pems io)
#   algorithms  algorithms include           (calls: the public API only)
#   gen         gen algorithms include       (calls: the public API only)
#   model       model gen algorithms include (calls: the public API only)
#   cli         cli algorithms gen model include (calls: the public API only)
#   include     include
# Prints one line per violation, `RULE FILE[:LINE]: what`, then a count
# per rule. Exit 0 when there is none, 1 otherwise.
set -uo pipefail

cd "${CHECK_ROOT:-$(dirname "${BASH_SOURCE[0]}")/..}" || exit 1
BUILD=${1:-${BUILD:-build}}
MAX_LINES=1000
MAX_FUNC=80
MAX_CLI=3000
LAYERS="io mpi pems bsp algorithms gen model cli include"

declare -A USES=(
	[io]="io" [mpi]="mpi" [pems]="pems pems/api io mpi include" [pems/api]="pems/api include"
	[bsp]="bsp pems/api include" [algorithms]="algorithms include"
	[gen]="gen algorithms include" [model]="model gen algorithms include"
	[cli]="cli algorithms gen model include"
	[include]="include"
)
# layers whose objects may call anything of a lower layer, not only its
# public API (the others: their own layers and libpems.so's exports)
declare -A CALLS=(
	[io]="io" [mpi]="mpi" [pems]="pems io mpi" [bsp]="bsp pems io"
	[algorithms]="algorithms" [gen]="gen algorithms" [model]="model gen algorithms"
	[cli]="cli algorithms gen model" [include]=""
)

files=()
for l in $LAYERS; do
	[[ -d $l ]] || continue
	while IFS= read -r f; do files+=("$f"); done < <(
		if [[ -z ${CHECK_ROOT:-} ]] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files --cached --others --exclude-standard -- "$l" | grep -E '\.[ch]$'
		else
			find "$l" -name '*.[ch]'
		fi | sort)
done

out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

# ---- size and function length ----------------------------------------------
awk -v maxl="$MAX_LINES" -v maxf="$MAX_FUNC" '
function flush_file() {
	if (FNR_last > maxl)
		printf "size %s: %d lines (max %d)\n", fname, FNR_last, maxl
}
FNR == 1 {
	if (NR > 1) flush_file()
	fname = FILENAME; depth = 0; cmt = 0; pp = 0; hdr = ""; infn = 0
}
{
	FNR_last = FNR
	line = $0
	# preprocessor lines (and their continuations) are not code
	if (pp || (!cmt && line ~ /^[ \t]*#/)) {
		pp = (line ~ /\\$/)
		if (depth == 0) hdr = ""
		next
	}
	n = length(line); i = 1
	while (i <= n) {
		c = substr(line, i, 1); c2 = substr(line, i, 2)
		if (cmt) {
			if (c2 == "*/") { cmt = 0; i += 2 } else i++
			continue
		}
		if (c2 == "/*") { cmt = 1; i += 2; continue }
		if (c2 == "//") break
		if (c == "\"" || c == "\047") {	# skip a string or char literal
			q = c; i++
			while (i <= n && substr(line, i, 1) != q) {
				if (substr(line, i, 1) == "\\") i++
				i++
			}
			i++
			if (depth == 0) hdr = hdr "\"\""
			continue
		}
		if (c == "{") {
			if (depth == 0 && hdr ~ /\(/ && hdr !~ /=/) {
				infn = 1; fstart = FNR
				name = hdr; sub(/\(.*/, "", name)
				gsub(/[^A-Za-z0-9_]+/, " ", name)
				k = split(name, w, " "); fn = (k ? w[k] : "?")
			}
			depth++
		} else if (c == "}") {
			if (depth > 0) depth--
			if (depth == 0) {
				if (infn && FNR - fstart + 1 > maxf)
					printf "function %s:%d: %s() is %d lines (max %d)\n",
						fname, fstart, fn, FNR - fstart + 1, maxf
				infn = 0; hdr = ""
			}
		} else if (depth == 0) {
			if (c == ";") hdr = ""; else hdr = hdr c
		}
		i++
	}
	if (depth == 0) hdr = hdr " "
}
END { if (NR > 0) flush_file() }
' "${files[@]}" >>"$out"

cli_lines=0
for f in "${files[@]}"; do
	[[ $f == cli/* ]] && cli_lines=$((cli_lines + $(wc -l <"$f")))
done
((cli_lines < MAX_CLI)) || echo "size cli/: $cli_lines lines in all (max $((MAX_CLI - 1)))" >>"$out"

# ---- includes ----------------------------------------------------------------
layer_of() {	# pems/api/ (the runtime as bsp/ sees it) counts as its own layer
	case $1 in pems/api/*) echo pems/api ;; *) echo "${1%%/*}" ;; esac
}
in_list() { [[ " $2 " == *" $1 "* ]]; }
declare -A DIRS=()
for f in "${files[@]}"; do DIRS[$(dirname "$f")]=1; done
for f in "${files[@]}"; do
	from=$(layer_of "$f")
	while IFS=: read -r ln inc; do
		inc=${inc#*\"}; inc=${inc%%\"*}
		ok=0 bad=""
		for d in "$(dirname "$f")" "${!DIRS[@]}"; do
			c=$(realpath -m --relative-to=. "$d/$inc")
			[[ -f $c ]] || continue
			if in_list "$(layer_of "$c")" "${USES[$from]}"; then ok=1; break; fi
			bad=$c
		done
		((ok)) || [[ -z $bad ]] ||
			echo "include $f:$ln: $from/ includes $bad (${from} may use: ${USES[$from]})"
	done < <(grep -n '^[ \t]*#[ \t]*include[ \t]*"' "$f")
done >>"$out"

# ---- calls (nm) --------------------------------------------------------------
if [[ -f $BUILD/libpems.so ]] && ls "$BUILD"/pems/*.o >/dev/null 2>&1; then
	defs=$(mktemp) && undefs=$(mktemp) || exit 1
	trap 'rm -f "$out" "$defs" "$undefs"' EXIT
	for l in $LAYERS; do
		[[ -d $BUILD/$l ]] || continue
		while IFS= read -r o; do
			nm -g --defined-only "$o" 2>/dev/null |
				awk -v l="$l" 'NF == 3 { print $3, l }' >>"$defs"
			nm -u "$o" 2>/dev/null |
				awk -v l="$l" -v o="${o#"$BUILD"/}" '{ print $NF, l, o }' >>"$undefs"
		done < <(find "$BUILD/$l" -name '*.o' | sort)
	done
	pub=$(nm -D --defined-only "$BUILD/libpems.so" | awk 'NF == 3 { print $3 }' | sort -u)
	calls_spec=""
	for l in $LAYERS; do calls_spec+="$l=${CALLS[$l]};"; done
	awk -v spec="$calls_spec" -v pub="$pub" '
	BEGIN {
		n = split(spec, a, ";")
		for (i = 1; i <= n; i++) if (split(a[i], b, "=") == 2) {
			m = split(b[2], c, " ")
			for (j = 1; j <= m; j++) may[b[1], c[j]] = 1
		}
		m = split(pub, p, "\n"); for (j = 1; j <= m; j++) public[p[j]] = 1
	}
	FNR == NR { if (!($1 in def)) def[$1] = $2; next }
	{
		s = $1; from = $2; o = $3
		if (!(s in def) || s == "main") next	# libc, ...; main: the user program
		to = def[s]
		if (to == from || ((from, to) in may) || (s in public)) next
		if (!seen[o, s]++)
			printf "call %s: %s/ calls %s(), defined in %s/ and not public\n", o, from, s, to
	}' "$defs" "$undefs" >>"$out"
else
	echo "check-structure: note: no objects in $BUILD (make first): calls not checked" >&2
fi

cat "$out"
nv=$(wc -l <"$out")
if ((nv)); then
	echo "check-structure: $nv violation(s):" \
		"$(awk '{ n[$1]++ } END { for (r in n) printf "%s %d; ", r, n[r] }' "$out")" >&2
	exit 1
fi
echo "check-structure: ok (${#files[@]} files)"
exit 0
