#!/bin/bash
# bench/aggregate_accept.sh - acceptance runs of `pems-run aggregate` against
# an independent reference (hand-run; long: minutes per case).
#
#   bash bench/aggregate_accept.sh CASE...
#
# CASE is ROWS:GROUPS:SKEW[:OUTFMT], e.g. 500M:1e3:uniform 500M:1e6:zipf:1.1
# 250M:0:uniform (GROUPS 0 = all keys distinct; M = 10^6).  For each case:
#   1. pems-run gen --format kv --count ROWS --groups GROUPS --skew SKEW
#      --seed 7 (16-byte rows; not timed)
#   2. bench/agg_tool ref: an in-memory hash aggregation of the same file
#      (or, for all-distinct keys, the rows themselves), each group's csv
#      line formatted by the tool's own code; prints lines=N hash=H (an
#      order-independent 64-bit sum of line hashes)
#   3. /usr/bin/time -v pems-run aggregate --agg count,sum,min,max,avg
#      --mem $MEM (default 1G) IN OUT.csv; then bench/agg_tool sum OUT.csv
#      checks the header and that keys strictly increase, and prints the
#      same lines=N hash=H, which must equal the reference's
#   4. for ROWS <= 1M also sqlite3: GROUP BY key with count, sum, min, max
#      (keys stored as int64 there), its lines hashed and compared with
#      pems's lines in the same form (agg_tool sum --sqlite; avg dropped)
# One line per case:
#   accept rows=… groups=… skew=… secs=… rss=… ref=<lines/hash> pems=<…> ok|MISMATCH
# Environment: BUILD (build), MEM (1G), ACCEPT_TMP (/var/tmp/pems-accept:
# input, output and pems scratch; needs ~ROWS*16*3 bytes plus the output),
# PEMS_ARGS (extra pems-run arguments, e.g. "--procs 64").
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
MEM=${MEM:-1G}
T=${ACCEPT_TMP:-/var/tmp/pems-accept}
PEMS_RUN=$BUILD/pems-run
TOOL=$BUILD/bench/agg_tool
mkdir -p "$T/tmp" "$BUILD/bench" || exit 1
cc -O2 -Wall -Wextra -o "$TOOL" bench/agg_tool.c || exit 1
fails=0

count_of() {
	awk -v s="$1" 'BEGIN {
		if (s ~ /^[0-9]+(\.[0-9]+)?[eE][0-9]+$/) { printf "%.0f\n", s + 0; exit }
		m = 1; u = substr(s, length(s), 1)
		if (u ~ /[Kk]/) m = 1e3; else if (u ~ /[Mm]/) m = 1e6; else if (u ~ /[Gg]/) m = 1e9
		if (m > 1) s = substr(s, 1, length(s) - 1)
		printf "%.0f\n", s * m }'
}

for c in "$@"; do
	IFS=: read -r rows_s groups_s skew rest <<<"$c"
	[[ -n "$rest" ]] && skew="$skew:$rest"
	N=$(count_of "$rows_s") G=$(count_of "$groups_s")
	IN=$T/in.kv OUT=$T/out.csv
	rm -f "$IN" "$OUT"
	"$PEMS_RUN" gen --format kv --count "$N" --groups "$G" --skew "${skew:-uniform}" \
		--seed 7 --quiet "$IN" || { echo "accept $c: gen failed"; fails=$((fails + 1)); continue; }
	if ((G == 0)); then
		ref=$("$TOOL" ref "$IN" --distinct)
	else
		ref=$("$TOOL" ref "$IN" --groups "$G")
	fi
	# shellcheck disable=SC2086
	/usr/bin/time -v -o "$T/time.txt" "$PEMS_RUN" aggregate --agg count,sum,min,max,avg \
		--mem "$MEM" --tmp "$T/tmp" --quiet --stats ${PEMS_ARGS:-} "$IN" "$OUT" 2>"$T/stats.txt"
	rc=$?
	secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.1f", s }' "$T/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 * 1024 }' "$T/time.txt")
	got="rc=$rc"
	((rc == 0)) && got=$("$TOOL" sum "$OUT")
	st=ok
	[[ "$got" == "$ref" ]] || st=MISMATCH
	sq=""
	if ((N <= 1000000 && rc == 0)) && command -v sqlite3 >/dev/null; then
		"$TOOL" csv "$IN" "$T/in.csv" --signed
		rm -f "$T/s.db"
		sqlite3 -csv "$T/s.db" "CREATE TABLE t(key INTEGER, value INTEGER);" \
			".import --csv --skip 1 $T/in.csv t" >/dev/null
		sqlite3 -csv "$T/s.db" "SELECT key, count(*), sum(value), min(value), max(value)
			FROM t GROUP BY key" >"$T/s.csv"
		sq_ref=$("$TOOL" lines "$T/s.csv")
		sq_got=$("$TOOL" sum "$OUT" --sqlite)
		sq=" sqlite=[$sq_ref] pems-vs-sqlite=[$sq_got]"
		[[ "$sq_ref" == "$sq_got" ]] || st=MISMATCH
		rm -f "$T/s.db" "$T/in.csv" "$T/s.csv"
	fi
	echo "accept rows=$N groups=$G skew=${skew:-uniform} secs=$secs rss=$rss ref=[$ref] pems=[$got]$sq $st"
	grep -E "^aggregate: stats: (ctx|h_)" "$T/stats.txt" | sed 's/^/    /'
	[[ "$st" == ok ]] || fails=$((fails + 1))
	rm -f "$IN" "$OUT"
done
rm -rf "$T/tmp" "$T/time.txt" "$T/stats.txt"
exit $((fails > 0))
