#!/bin/bash
# bench/groupby.sh - the ten db-benchmark groupby questions end to end from
# the G1 CSV: pems vs DuckDB, GNU datamash and Miller.
#
#   bash bench/groupby.sh [ROWS...]      row counts like 1e6 1e7 1e8 (default 1e6)
#
# Environment (all optional):
#   K=100                 groups of id1, id2, id4, id5 (pems-run gen --format groupby --k)
#   NAS="0 5"             percent of empty (NULL) fields, one file each
#   QUESTIONS="q1 ... q10"
#   ENGINES="pems duckdb datamash miller"
#   MEM=1G                pems --mem; every contender runs in bench/cgrun.sh
#                         with a cgroup limit of CG_LIMIT and the page cache
#                         dropped before the run
#   CG_LIMIT=1.1G         the memory cgroup of every run
#   DUCK_MEM=600MB        DuckDB's memory_limit: its limit does not cover
#                         everything the process allocates (CSV buffers, the
#                         result, node itself), and at 1GB inside 1.1 GiB it
#                         thrashes; 600MB keeps the whole process inside
#   THREADS=2             pems --threads, DuckDB threads
#   BENCH_TMP=/var/tmp/pems-bench-groupby   inputs, outputs, temp files (one disk)
#   RESULTS_DIR=bench/results/groupby      groupby.csv, groupby-ratios.txt, logs/
#   KEEP_DATA=0           1: keep the generated CSVs
#
# What runs, for each ROWS x NA (input: pems-run gen --format groupby
# --rows ROWS --k K --na NA --seed 1, untimed) and question:
#   pems      pems-run aggregate --by ... --agg ... --mem MEM (the CSV to a CSV)
#   duckdb    bench/groupby_duckdb.js: COPY (SELECT ... FROM read_csv(IN)
#             GROUP BY ...) TO OUT, the db-benchmark's SQL; secs = DuckDB's
#             own time of that statement (node's start-up not counted)
#   datamash  datamash -t, -s --header-in -g ... (sorts through GNU sort);
#             q7/q9 finish with awk; no q8 (no top-k); fails on NULLs
#   miller    mlr --icsv --ocsv stats1/stats2/top -g ... (in memory)
# Answers are checked after each run (untimed): the output's lines, sorted,
# against pems's, integers exactly and floats within 1e-9 relative; a
# disagreeing run has status "wrong".
# One line per run:
#   bench=groupby-qN-naP impl=… bytes=… mem=… secs=… rss=… cg_peak=… status=…
# and a ratio table per file (secs(peer) / secs(pems): > 1 = pems faster)
# with the geometric mean over the questions.
# Exit 0 if pems and DuckDB ran and agreed everywhere, 1 otherwise (a
# datamash or Miller run that fails or disagrees is recorded, not fatal).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
NAME=groupby.sh
source bench/lib.sh
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PEMS_RUN=${PEMS_RUN:-$BUILD/pems-run}
K=${K:-100} NAS=${NAS:-"0 5"} MEM=${MEM:-1G} CG_LIMIT=${CG_LIMIT:-1.1G}
DUCK_MEM=${DUCK_MEM:-600MB} THREADS=${THREADS:-2}
QUESTIONS=${QUESTIONS:-"q1 q2 q3 q4 q5 q6 q7 q8 q9 q10"}
ENGINES=${ENGINES:-"pems duckdb datamash miller"}
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench-groupby}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/groupby}
NODE_DIR=$ROOT/bench/.node
L=$RESULTS_DIR/logs
CSV=$RESULTS_DIR/groupby.csv
NFAIL=0
ROWS=("$@")
((${#ROWS[@]})) || ROWS=(1e6)
mkdir -p "$BENCH_TMP/tmp" "$L"
[[ -x "$PEMS_RUN" ]] || die "$PEMS_RUN is not built (make)"
rm -f "$CSV"
csv_header "$CSV"

# pems --by and --agg of each question (--as: the db-benchmark's names)
declare -A BY AGG AS
BY[q1]=id1 AGG[q1]='sum(v1)' AS[q1]=v1
BY[q2]=id1,id2 AGG[q2]='sum(v1)' AS[q2]=v1
BY[q3]=id3 AGG[q3]='sum(v1),mean(v3)' AS[q3]=v1,v3
BY[q4]=id4 AGG[q4]='mean(v1),mean(v2),mean(v3)' AS[q4]=v1,v2,v3
BY[q5]=id6 AGG[q5]='sum(v1),sum(v2),sum(v3)' AS[q5]=v1,v2,v3
BY[q6]=id4,id5 AGG[q6]='median(v3),sd(v3)' AS[q6]=median_v3,sd_v3
BY[q7]=id3 AGG[q7]='max(v1)-min(v2)' AS[q7]=range_v1_v2
BY[q8]=id6 AGG[q8]='top2(v3)' AS[q8]=largest2_v3
BY[q9]=id2,id4 AGG[q9]='pow(corr(v1,v2),2)' AS[q9]=r2
BY[q10]=id1,id2,id3,id4,id5,id6 AGG[q10]='sum(v3),count(*)' AS[q10]=v3,count

# datamash: columns id1..id6 = 1..6, v1 v2 v3 = 7 8 9
declare -A DM MLR
DM[q1]='-g 1 sum 7' DM[q2]='-g 1,2 sum 7' DM[q3]='-g 3 sum 7 mean 9'
DM[q4]='-g 4 mean 7 mean 8 mean 9' DM[q5]='-g 6 sum 7 sum 8 sum 9'
DM[q6]='-g 4,5 median 9 sstdev 9' DM[q7]='-g 3 max 7 min 8' DM[q9]='-g 2,4 spearson 7:8'
DM[q10]='-g 1,2,3,4,5,6 sum 9 count 9'
MLR[q1]='stats1 -a sum -f v1 -g id1' MLR[q2]='stats1 -a sum -f v1 -g id1,id2'
MLR[q3]='stats1 -a sum,mean -f v1,v3 -g id3 then cut -o -f id3,v1_sum,v3_mean'
MLR[q4]='stats1 -a mean -f v1,v2,v3 -g id4' MLR[q5]='stats1 -a sum -f v1,v2,v3 -g id6'
MLR[q6]='stats1 -i -a median,stddev -f v3 -g id4,id5'
MLR[q7]="stats1 -a max,min -f v1,v2 -g id3 then put '\$r = \$v1_max - \$v2_min' then cut -o -f id3,r"
MLR[q8]='top -n 2 -f v3 -g id6 -a then cut -o -f id6,v3'
MLR[q9]='stats2 -a r2 -f v1,v2 -g id2,id4'
MLR[q10]='stats1 -a sum,count -f v3 -g id1,id2,id3,id4,id5,id6'

have_duck=0
if [[ " $ENGINES " == *" duckdb "* ]]; then
	if ! command -v node >/dev/null 2>&1; then
		msg "skipping duckdb: node (Node.js) not installed"
	else
		if [[ ! -d "$NODE_DIR/node_modules/@duckdb/node-api" ]]; then
			msg "installing @duckdb/node-api into $NODE_DIR"
			mkdir -p "$NODE_DIR"
			(cd "$NODE_DIR" && npm install --no-audit --no-fund --silent @duckdb/node-api) \
				>"$L/npm.log" 2>&1 || msg "npm install failed (see $L/npm.log)"
		fi
		[[ -d "$NODE_DIR/node_modules/@duckdb/node-api" ]] && have_duck=1 ||
			msg "skipping duckdb: @duckdb/node-api not installed"
	fi
fi

# same OUT WANT: the lines of both, sorted, equal as text or as numbers
# within 1e-9 relative (the header line is dropped; a peer's nan, NA or
# (error) counts as NULL, an empty field)
same() {
	LC_ALL=C sort <(tail -n +2 "$1") >"$1.sorted"
	LC_ALL=C sort <(tail -n +2 "$2") >"$2.sorted"
	awk -F, 'NR == FNR { a[FNR] = $0; n = FNR; next }
	function num(s) { return s ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
	function null(s) { return s == "" || s ~ /^-?nan$|^NaN$|^NA$|^\(error\)$/ }
	{
		m = FNR
		if (a[FNR] == $0) next
		k = split(a[FNR], x, ","); if (k != NF) { bad = 1; exit }
		for (i = 1; i <= NF; i++) {
			if (x[i] == $i || (null(x[i]) && null($i))) continue
			if (num(x[i]) && num($i)) {
				d = x[i] - $i; if (d < 0) d = -d
				s = x[i] < 0 ? -x[i] : x[i]
				if (d <= 1e-9 * s || d < 1e-12) continue
			}
			bad = 1; exit
		}
	}
	END { exit bad || m != n }' "$1.sorted" "$2.sorted"
}

# run_engine ENGINE Q IN OUT LOG: the timed run (M_* set by cg_measure)
run_engine() {
	local e=$1 q=$2 in=$3 out=$4 log=$5
	case $e in
	pems)
		cg_measure "$CG_LIMIT" "$log" "$PEMS_RUN" aggregate --quiet --mem "$MEM" \
			--threads "$THREADS" --tmp "$BENCH_TMP/tmp" --by "${BY[$q]}" --agg "${AGG[$q]}" \
			--as "${AS[$q]}" "$in" "$out" ;;
	duckdb)
		cg_measure "$CG_LIMIT" "$log" env NODE_PATH="$NODE_DIR/node_modules" node \
			"$ROOT/bench/groupby_duckdb.js" "$q" "$in" "$out" "$BENCH_TMP/tmp" "$DUCK_MEM" "$THREADS"
		local s
		s=$(sed -n 's/^duckdb_secs=//p' "$log" | tail -n 1)
		[[ -n "$s" ]] && M_SECS=$s ;;
	datamash)
		local post='{ print }'
		[[ $q == q7 ]] && post='BEGIN { FS = OFS = "," } { print $1, $2 - $3 }'
		[[ $q == q9 ]] && post='BEGIN { FS = OFS = "," } { $3 = sprintf("%.17g", $3 * $3); print }'
		cg_measure "$CG_LIMIT" "$log" bash -c "set -o pipefail; { echo header; datamash -t, -s --header-in ${DM[$q]} <'$in' |
			awk '$post'; } >'$out'" ;;
	miller)
		cg_measure "$CG_LIMIT" "$log" bash -c "mlr --icsv --ocsv ${MLR[$q]} '$in' >'$out'" ;;
	esac
}

for rows in "${ROWS[@]}"; do
	n=$(awk -v r="$rows" 'BEGIN { printf "%.0f", r }')
	for na in $NAS; do
		in=$BENCH_TMP/G1_${rows}_${K}_${na}_0.csv
		[[ -s "$in" ]] || "$PEMS_RUN" gen --format groupby --rows "$n" --k "$K" --na "$na" \
			--seed 1 --quiet "$in" || die "gen $in failed"
		bytes=$(stat -c %s "$in")
		for q in $QUESTIONS; do
			want=$BENCH_TMP/pems_${rows}_${na}_$q.csv
			for e in $ENGINES; do
				out=$BENCH_TMP/${e}_${rows}_${na}_$q.csv log=$L/${e}_${rows}_${na}_$q.log
				[[ $e == duckdb ]] && ((!have_duck)) && continue
				[[ $e == datamash && -z "${DM[$q]:-}" ]] && continue
				[[ $e == datamash || $e == miller ]] &&
					! command -v "${e/miller/mlr}" >/dev/null 2>&1 && continue
				rm -f "$out"
				run_engine "$e" "$q" "$in" "$out" "$log"
				if [[ $M_STATUS == ok && $e != pems ]] && ! same "$out" "$want"; then
					M_STATUS=wrong
				fi
				record "$CSV" "groupby-$q-na$na" "$e" "$bytes" "$(to_bytes "$MEM")" 1 1 "rows=$n"
				# datamash and Miller run where they can: an OOM kill, a NULL
				# they refuse or count differently is noted, not a failure
				[[ ($e == datamash || $e == miller) && $M_STATUS != ok ]] && NFAIL=$((NFAIL - 1))
			done
		done
	done
	[[ ${KEEP_DATA:-0} == 1 ]] || rm -f "$BENCH_TMP"/G1_"${rows}"_*.csv
done

# ratios per file and peer, and their geometric mean over the questions
awk -F, 'NR > 1 && $12 == "ok" { split($1, b, "-"); f = $3 " " b[3]; t[f, b[2], $2] = $7; fs[f] = 1; e[$2] = 1 }
END {
	for (f in fs) {
		printf "file bytes=%s (secs(peer) / secs(pems), > 1: pems faster)\n", f
		for (p in e) {
			if (p == "pems") continue
			lg = 0; c = 0; line = ""
			for (i = 1; i <= 10; i++) {
				q = "q" i
				if (!((f, q, p) in t) || !((f, q, "pems") in t) || t[f, q, "pems"] <= 0) { line = line " " q "=-"; continue }
				r = t[f, q, p] / t[f, q, "pems"]; lg += log(r); c++
				line = line sprintf(" %s=%.2f", q, r)
			}
			printf "  %-9s%s  geomean=%s\n", p, line, c ? sprintf("%.2f", exp(lg / c)) : "-"
		}
	}
}' "$CSV" | tee "$RESULTS_DIR/groupby-ratios.txt"
((NFAIL == 0))
