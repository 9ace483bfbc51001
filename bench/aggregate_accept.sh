#!/bin/bash
# bench/aggregate_accept.sh - acceptance runs of `pems-run aggregate` against
# an independent reference (hand-run; long: minutes per case).
#
#   bash bench/aggregate_accept.sh CASE...
#
# CASE is ROWS:GROUPS:SKEW[:OUTFMT], e.g. 500M:1e3:uniform 500M:1e6:zipf:1.1
# 250M:0:uniform (GROUPS 0 = all keys distinct: `gen --groups 0` makes
# record i's key a bijective mix of i, so no two rows share a key;
# M = 10^6).  For each case:
#   1. pems-run gen --format kv --count ROWS --groups GROUPS --skew SKEW
#      --seed 7 (16-byte rows; not timed)
#   2. bench/agg_tool ref: an in-memory hash aggregation of the same file
#      (or, for all-distinct keys, the rows themselves), each group's csv
#      line formatted by the tool's own code; prints lines=N hash=H (an
#      order-independent 64-bit sum of line hashes); above 2e7 groups in
#      REF_PARTS hash parts, one pass each, to bound its memory
#   3. bench/cgrun.sh $LIMIT (default 1127M = MEM 1 GiB + 10 %) -- pems-run
#      aggregate --agg count,sum,min,max,avg --mem $MEM (default 1G)
#      --stats IN OUT.csv: a memory cgroup, page cache dropped first; peak
#      RSS and the cgroup's peak charge from cgrun.sh; meanwhile the bytes
#      under ACCEPT_TMP are sampled every 2 s (peak scratch + output);
#      then bench/agg_tool sum OUT.csv checks the header and that keys
#      strictly increase, and prints the same lines=N hash=H, which must
#      equal the reference's
#   4. sqlite3 on a sample: the first SAMPLE_ROWS (default 1000000) rows of
#      IN, aggregated by pems-run (same options, no cgroup) and by sqlite3
#      (GROUP BY key with count, sum, min, max; keys stored as int64
#      there); the lines are hashed and compared in the same form
#      (agg_tool sum --sqlite; avg dropped)
# One line per case:
#   accept rows=… groups=… skew=… secs=… rss=… cg_peak=… scratch_peak=…
#     ref=<lines/hash> pems=<…> sample=<…> ok|MISMATCH
# then pems' --stats lines (I/O bytes).
# Environment: BUILD (build), MEM (1G), LIMIT (1127M), ACCEPT_TMP
# (/var/tmp/pems-accept: input, output and pems scratch; needs
# ~ROWS*16*3 bytes plus the output), PEMS_ARGS (extra pems-run arguments,
# e.g. "--procs 64"), SAMPLE_ROWS (1000000), REF_PARTS (8).
# Needs root (cgroup, drop_caches).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
MEM=${MEM:-1G}
LIMIT=${LIMIT:-1127M}
SAMPLE_ROWS=${SAMPLE_ROWS:-1000000}
REF_PARTS=${REF_PARTS:-8}
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
	elif ((G > 20000000)); then
		ref=$("$TOOL" ref "$IN" --groups "$G" --parts "$REF_PARTS")
	else
		ref=$("$TOOL" ref "$IN" --groups "$G")
	fi
	# peak bytes under $T (input + scratch + output) while pems runs
	du0=$(du -sb "$T" | cut -f1)
	(peak=0; while :; do b=$(du -sb "$T" 2>/dev/null | cut -f1); ((b > peak)) && peak=$b
		echo "$peak" >"$T/du.peak"; sleep 2; done) &
	dupid=$!
	# shellcheck disable=SC2086
	bench/cgrun.sh "$LIMIT" -- "$PEMS_RUN" aggregate --agg count,sum,min,max,avg \
		--mem "$MEM" --tmp "$T/tmp" --quiet --stats ${PEMS_ARGS:-} "$IN" "$OUT" 2>"$T/stats.txt"
	rc=$?
	kill "$dupid" 2>/dev/null
	wait "$dupid" 2>/dev/null
	cg=$(grep '^cg_peak_bytes=' "$T/stats.txt" | tail -n 1)
	secs=$(sed -n 's/.* secs=\([0-9.]*\).*/\1/p' <<<"$cg")
	rss=$(($(sed -n 's/.* rss_kb=\([0-9]*\).*/\1/p' <<<"$cg") * 1024))
	cgpeak=$(sed -n 's/^cg_peak_bytes=\([0-9]*\).*/\1/p' <<<"$cg")
	scratch=$(($(cat "$T/du.peak" 2>/dev/null || echo 0) - du0))
	got="rc=$rc"
	((rc == 0)) && got=$("$TOOL" sum "$OUT")
	st=ok
	[[ "$got" == "$ref" ]] || st=MISMATCH
	((rss <= 1181116006)) || st="$st,RSS>1.1GiB"
	sq=""
	if ((rc == 0)) && command -v sqlite3 >/dev/null; then
		ns=$((N < SAMPLE_ROWS ? N : SAMPLE_ROWS))
		head -c $((ns * 16)) "$IN" >"$T/sample.kv"
		# shellcheck disable=SC2086
		"$PEMS_RUN" aggregate --agg count,sum,min,max,avg --mem "$MEM" --tmp "$T/tmp" \
			--quiet ${PEMS_ARGS:-} "$T/sample.kv" "$T/sample.csv" || st=MISMATCH
		"$TOOL" csv "$T/sample.kv" "$T/in.csv" --signed
		rm -f "$T/s.db"
		sqlite3 -csv "$T/s.db" "CREATE TABLE t(key INTEGER, value INTEGER);" \
			".import --csv --skip 1 $T/in.csv t" >/dev/null
		sqlite3 -csv "$T/s.db" "SELECT key, count(*), sum(value), min(value), max(value)
			FROM t GROUP BY key" >"$T/s.csv"
		sq_ref=$("$TOOL" lines "$T/s.csv")
		sq_got=$("$TOOL" sum "$T/sample.csv" --sqlite)
		sq=" sample_rows=$ns sqlite=[$sq_ref] pems-on-sample=[$sq_got]"
		[[ "$sq_ref" == "$sq_got" ]] || st=MISMATCH
		rm -f "$T/s.db" "$T/in.csv" "$T/s.csv" "$T/sample.kv" "$T/sample.csv"
	fi
	echo "accept rows=$N groups=$G skew=${skew:-uniform} secs=$secs rss=$rss cg_peak=$cgpeak scratch_peak=$scratch ref=[$ref] pems=[$got]$sq $st"
	grep -E "^aggregate: stats: (ctx|h_)|^aggregate: .*groups" "$T/stats.txt" | sed 's/^/    /'
	[[ "$st" == ok ]] || fails=$((fails + 1))
	rm -f "$IN" "$OUT"
done
rm -rf "$T/tmp" "$T/stats.txt" "$T/du.peak"
exit $((fails > 0))
