#!/bin/bash
# bench/aggregate.sh - GROUP BY larger than memory: pems vs DuckDB vs sqlite3.
#
#   bash bench/aggregate.sh [ROWS...]        row counts like 10M 100M (default 100M;
#                                            M = 10^6 here, K = 10^3)
#   bash bench/aggregate.sh --report DIR     redo DIR's ratio table and plot
#
# Environment (all optional):
#   AGG_GROUPS="1e3 1e7 1e8"  distinct keys per input (uniform; 0 = all distinct)
#   BUILD=build            pems-run is $BUILD/pems-run; helpers are built
#                          into $BUILD/bench/
#   MEM=1G                 memory budget of every contender; each runs in
#                          bench/cgrun.sh with a cgroup limit of MEM + 10 %
#                          and the page cache dropped before the run
#   BENCH_TMP=/var/tmp/pems-bench-agg   scratch dir (inputs, databases, temp
#                          files, outputs; all contenders on the same disk)
#   RESULTS_DIR=bench/results/aggregate   aggregate.csv, aggregate.png,
#                          aggregate-ratios.txt, logs/ go here
#   ENGINES="pems duckdb sqlite"       contenders
#   SQLITE_MAX_ROWS=0      sqlite only runs on inputs up to this many rows
#                          (0 = no limit); larger ones get a "skip" row
#   SQLITE_TIMEOUT_X=15 SQLITE_TIMEOUT_MIN=120
#                          sqlite is killed after max(MIN, X * pems' secs
#                          of the same input and repetition) seconds; the
#                          run is recorded with status "timeout" and secs =
#                          that cap, a lower bound: the ratio table shows
#                          ">=R" and later repetitions of that input skip
#                          sqlite (another bound adds nothing)
#   AGG_PHASE=all          all: generate, load, time; prep: only generate
#                          the inputs and load the peers' databases (untimed;
#                          implies KEEP_DATA=1; run it under a shared lock);
#                          run: only the timed runs, on the inputs prep left
#                          (deleted afterwards unless KEEP_DATA=1)
#   APPEND=0               1: add to an existing aggregate.csv instead of
#                          starting it anew (split a series into several
#                          invocations, e.g. one per group count)
#   THREADS=2              threads for pems (--threads) and DuckDB
#   REPEAT=1               runs per contender and input (interleaved); the
#                          ratio table and the plot use the median
#   KEEP_DATA=1            keep inputs and databases in $BENCH_TMP/data
#
# What runs, for each ROWS x GROUPS (input: `pems-run gen --format kv
# --count ROWS --groups G --seed 42`, 16-byte rows {u64 key, i64 value}):
#   pems    pems-run aggregate --agg count,sum,min,max,avg --output-format kv
#           --mem MEM on the kv file; the result (48 bytes per group) is
#           written to a file.  Timed: the whole process.
#   duckdb  @duckdb/node-api (npm; installed into bench/.node when missing),
#           bench/aggregate_duckdb.js.  Before timing (untimed, outside the
#           cgroup) the rows are loaded once into a table of DuckDB's own
#           database file, its best input.  Timed, with memory_limit=MEM,
#           threads=THREADS and temp_directory in BENCH_TMP: CREATE TABLE r
#           AS SELECT key, count(*), sum, min, max, avg ... GROUP BY key
#           (the result written to the database file); the time is
#           DuckDB's own for that statement, the cgroup measures the process.
#   sqlite  sqlite3 (Debian package), rows imported into a table before
#           timing; timed (.timer): the same CREATE TABLE r AS SELECT ...
#           GROUP BY key, with cache_size = MEM/2 (its sorter may take as
#           much again: with cache_size = MEM it was OOM-killed in the
#           MEM + 10 % cgroup at 100 M rows) and temp files on disk,
#           under `timeout` (see SQLITE_TIMEOUT_X).
# Outputs are untimed-checked: the column sums over the groups (groups,
# count, sum, min, max) of every engine must agree; a run that disagrees
# is marked "wrong".
# One line per run:
#   algo=aggregate engine=… rows=… groups=… secs=… rss=… cg_peak=… status=…
# (status: ok, timeout (secs = the cap: a lower bound), fail(...), wrong,
# skip)
# (secs: the GROUP BY; rss = peak RSS bytes; cg_peak = peak cgroup charge
# incl. page cache).  Then a ratio table (secs(peer) / secs(pems): > 1 =
# pems faster) and a plot of rows/s against groups (gnuplot).
# Exit 0 if no contender failed or disagreed (skips are fine), 1 otherwise.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PEMS_RUN=${PEMS_RUN:-$BUILD/pems-run}
MEM=${MEM:-1G}
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench-agg}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/aggregate}
ENGINES=${ENGINES:-pems duckdb sqlite}
GROUPS_LIST=${AGG_GROUPS:-1e3 1e7 1e8}
SQLITE_MAX_ROWS=${SQLITE_MAX_ROWS:-0}
SQLITE_TIMEOUT_X=${SQLITE_TIMEOUT_X:-15}
SQLITE_TIMEOUT_MIN=${SQLITE_TIMEOUT_MIN:-120}
AGG_PHASE=${AGG_PHASE:-all}
APPEND=${APPEND:-0}
THREADS=${THREADS:-2}
REPEAT=${REPEAT:-1}
NODE_DIR=$ROOT/bench/.node
REPORT_ONLY=0
if [[ "${1:-}" == --report ]]; then
	REPORT_ONLY=1
	RESULTS_DIR=${2:?usage: bench/aggregate.sh --report RESULTS_DIR}
	shift 2
fi
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(100M)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

NAME=aggregate.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh	# msg, die, cg_measure

count_of() {	# count_of 100M -> 100000000; 1e7 -> 10000000 (decimal)
	awk -v s="$1" 'BEGIN {
		if (s ~ /^[0-9]+(\.[0-9]+)?[eE][0-9]+$/) { printf "%.0f\n", s + 0; exit }
		if (s !~ /^[0-9]+(\.[0-9]+)?[KkMmGg]?$/) exit 1
		m = 1; u = substr(s, length(s), 1)
		if (u ~ /[Kk]/) m = 1e3; else if (u ~ /[Mm]/) m = 1e6; else if (u ~ /[Gg]/) m = 1e9
		if (m > 1) s = substr(s, 1, length(s) - 1)
		printf "%.0f\n", s * m }'
}
mem_bytes() {	# binary suffixes, like --mem
	awk -v s="$1" 'BEGIN {
		if (s !~ /^[0-9]+[KkMmGg]?$/) exit 1
		m = 1; u = substr(s, length(s), 1)
		if (u ~ /[Kk]/) m = 1024; else if (u ~ /[Mm]/) m = 1024^2; else if (u ~ /[Gg]/) m = 1024^3
		if (m > 1) s = substr(s, 1, length(s) - 1)
		printf "%.0f\n", s * m }'
}
MEM_B=$(mem_bytes "$MEM") || die "bad MEM '$MEM'"
LIMIT_B=$(awk -v m="$MEM_B" 'BEGIN { printf "%.0f", m * 1.1 }')
SQLITE_MAX=$(count_of "$SQLITE_MAX_ROWS") || die "bad SQLITE_MAX_ROWS '$SQLITE_MAX_ROWS'"
((SQLITE_MAX > 0)) || SQLITE_MAX=$((1 << 62))
case "$AGG_PHASE" in all | run) ;; prep) KEEP_DATA=1 ;; *) die "bad AGG_PHASE '$AGG_PHASE': all, prep or run" ;; esac
has_engine() { [[ " $ENGINES " == *" $1 "* ]]; }

CSV=$RESULTS_DIR/aggregate.csv
nfail=0
mkdir -p "$RESULTS_DIR/logs" || die "cannot create $RESULTS_DIR"
if ((REPORT_ONLY)); then
	[[ -f "$CSV" ]] || die "no $CSV"
	SIZES=()
else
	mkdir -p "$BENCH_TMP/data" || die "cannot create $BENCH_TMP"
	[[ "$AGG_PHASE" == prep || ("$APPEND" == 1 && -s "$CSV") ]] ||
		echo "engine,rows,groups,mem,limit,secs,mrows_per_sec,rss_bytes,cg_peak_bytes,rc,status" >"$CSV"
fi
L=$RESULTS_DIR/logs

# ---- contenders ---------------------------------------------------------------
have_pems=0 have_duck=0 have_sqlite=0
if ((!REPORT_ONLY)); then
	[[ -x "$PEMS_RUN" ]] && have_pems=1 || die "$PEMS_RUN not built (make all): the inputs come from pems-run gen"
	TOOL=$BUILD/bench/agg_tool
	mkdir -p "$BUILD/bench"
	if [[ ! -x "$TOOL" || "$TOOL" -ot bench/agg_tool.c ]]; then
		cc -O2 -Wall -Wextra -o "$TOOL" bench/agg_tool.c || die "cannot build $TOOL"
	fi
	if has_engine duckdb; then
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
	if has_engine sqlite; then
		command -v sqlite3 >/dev/null 2>&1 && have_sqlite=1 ||
			msg "skipping sqlite: sqlite3 not installed (scripts/deps.sh --bench)"
	fi
fi
duck() { NODE_PATH=$NODE_DIR/node_modules node "$ROOT/bench/aggregate_duckdb.js" "$@"; }

# ---- one measured run -----------------------------------------------------------
# measure ENGINE ROWS GROUPS LOG SECS_SED CMD...: run CMD in the cgroup, record.
# SECS_SED: sed expression that extracts the engine's own GROUP BY time from
# the log ("" = the process wall time from cgrun).  M_CAP: the timeout CMD
# runs under, else 0 (bench/lib.sh cg_measure).  Sets M_RC.
measure() {
	local engine=$1 rows=$2 groups=$3 log=$4 secs_sed=$5 own
	shift 5
	cg_measure "$LIMIT_B" "$log" "$@"
	if [[ -n "$secs_sed" && "$M_STATUS" != timeout ]]; then
		own=$(sed -n "$secs_sed" "$log" | tail -n 1)
		[[ -n "$own" ]] && M_SECS=$own
	fi
	report "$engine" "$rows" "$groups" "$M_SECS" "$M_RSS" "$M_PEAK" "$M_RC" "$M_STATUS"
}

report() {	# report ENGINE ROWS GROUPS SECS RSS PEAK RC STATUS
	local mr
	mr=$(awk -v n="$2" -v s="$4" 'BEGIN { if (s > 0) printf "%.2f", n / s / 1e6; else print "0" }')
	echo "algo=aggregate engine=$1 rows=$2 groups=$3 secs=$4 rss=$5 cg_peak=$6 mem=$MEM_B status=$8"
	echo "$1,$2,$3,$MEM_B,$LIMIT_B,$4,$mr,$5,$6,$7,$8" >>"$CSV"
	[[ "$8" == ok || "$8" == skip* || "$8" == timeout ]] || nfail=$((nfail + 1))
}

skip() {	# skip ENGINE ROWS GROUPS WHY
	msg "skipping $1 at $2 rows, $3 groups: $4"
	echo "$1,$2,$3,$MEM_B,$LIMIT_B,,,,,,skip" >>"$CSV"
}

# check ENGINE TOTALS: compare with the first engine's totals of this input
check() {
	local engine=$1 got=$2
	[[ -n "$got" ]] || { msg "$engine: no totals"; got="none"; }
	if [[ -z "$REF_TOTALS" ]]; then
		REF_TOTALS=$got REF_ENGINE=$engine
		return 0
	fi
	if [[ "$got" != "$REF_TOTALS" ]]; then
		msg "$engine result DISAGREES with $REF_ENGINE: '$got' vs '$REF_TOTALS'"
		sed -i '$ s/,ok$/,wrong/' "$CSV"
		nfail=$((nfail + 1))
	fi
}

run_engine() {	# run_engine ENGINE (uses N, G, IN, DB, SQ, rep)
	local e=$1 log=$L/aggregate-$1-$N-$G.r$rep.log out=$BENCH_TMP/out.kv tmpd=$BENCH_TMP/tmp
	rm -rf "$out" "$out".pems-tmp* "$tmpd"
	mkdir -p "$tmpd"
	case "$e" in
	pems)
		M_CAP=0
		measure pems "$N" "$G" "$log" "" \
			"$PEMS_RUN" aggregate --agg count,sum,min,max,avg --output-format kv \
			--mem "$MEM_B" --threads "$THREADS" --tmp "$tmpd" --quiet \
			--stats-json "$RESULTS_DIR/aggregate-pems-$N-$G.r$rep.json" "$IN" "$out"
		P_SECS=$(tail -n 1 "$CSV" | cut -d, -f6)
		((M_RC)) || check pems "$("$TOOL" totals "$out" 5)" ;;
	duckdb)
		if ((!have_duck)); then skip duckdb "$N" "$G" "not installed"; return 0; fi
		M_CAP=0
		measure duckdb "$N" "$G" "$log" 's/^duckdb_secs=\([0-9.]*\).*/\1/p' \
			env NODE_PATH="$NODE_DIR/node_modules" node "$ROOT/bench/aggregate_duckdb.js" \
			query "$DB" "$tmpd" "$((MEM_B >> 20))MB" "$THREADS"
		((M_RC)) || check duckdb "$(grep '^groups=' "$log" | tail -n 1)" ;;
	sqlite)
		if ((!have_sqlite)); then skip sqlite "$N" "$G" "not installed"; return 0; fi
		if ((N > SQLITE_MAX)); then skip sqlite "$N" "$G" "more than SQLITE_MAX_ROWS=$SQLITE_MAX rows"; return 0; fi
		if ((SQ_TIMED_OUT)); then
			msg "sqlite timed out on this input before: no more repetitions"
			return 0
		fi
		cat >"$tmpd/q.sql" <<-EOF
			PRAGMA cache_size = -$((MEM_B >> 11));
			PRAGMA temp_store = FILE;
			PRAGMA temp_store_directory = '$tmpd';
			PRAGMA journal_mode = OFF;
			PRAGMA synchronous = OFF;
			DROP TABLE IF EXISTS r;
			.timer on
			CREATE TABLE r AS SELECT key, count(*) AS c, sum(value) AS s, min(value) AS mn,
			  max(value) AS mx, avg(value) AS av FROM t GROUP BY key;
		EOF
		M_CAP=$(awk -v p="${P_SECS:-0}" -v x="$SQLITE_TIMEOUT_X" -v m="$SQLITE_TIMEOUT_MIN" \
			'BEGIN { c = p * x; if (c < m) c = m; printf "%d", c + 0.999 }')
		measure sqlite "$N" "$G" "$log" 's/^Run Time: real \([0-9.]*\).*/\1/p' \
			timeout "$M_CAP" sh -c 'exec sqlite3 "$1" <"$2"' sh "$SQ" "$tmpd/q.sql"
		if ((M_RC == 124)); then
			msg "sqlite timed out after ${M_CAP}s (${SQLITE_TIMEOUT_X}x pems' ${P_SECS:-?}s, min ${SQLITE_TIMEOUT_MIN}s): a lower bound"
			SQ_TIMED_OUT=1
			sqlite3 "$SQ" "DROP TABLE IF EXISTS r;" || true
			return 0
		fi
		((M_RC)) || check sqlite "$(sqlite3 "$SQ" "SELECT 'groups=' || count(*) || ' count=' || sum(c) || ' sum=' || sum(s) || ' min=' || sum(mn) || ' max=' || sum(mx) FROM r; DROP TABLE r;")" ;;
	esac
	rm -rf "$out" "$tmpd"
}

for size in "${SIZES[@]}"; do
	N=$(count_of "$size") || die "bad row count '$size'"
	for gs in $GROUPS_LIST; do
		G=$(count_of "$gs") || die "bad group count '$gs'"
		free=$(df -B1 --output=avail "$BENCH_TMP" | tail -n 1)
		need=$((N * 16 * 6 + (1 << 30)))
		if [[ "$AGG_PHASE" != run ]] && ((free < need)); then
			msg "skipping $N rows, $G groups: needs ~$((need >> 30)) GiB free in $BENCH_TMP, has $((free >> 30)) GiB"
			continue
		fi
		D=$BENCH_TMP/data
		IN=$D/kv-$N-$G.kv DB=$D/duck-$N-$G.duckdb SQ=$D/sqlite-$N-$G.db
		if [[ "$AGG_PHASE" == run ]] && [[ ! -s "$IN" ]]; then
			die "AGG_PHASE=run: no input $IN (run AGG_PHASE=prep first)"
		fi
		if [[ ! -s "$IN" ]]; then
			msg "$N rows, $G groups: generating"
			"$PEMS_RUN" gen --format kv --count "$N" --groups "$G" --seed 42 --quiet "$IN" ||
				die "pems-run gen failed"
		fi
		# untimed loads, outside the cgroups
		if ((have_duck)) && [[ ! -s "$DB" ]]; then
			msg "$N rows, $G groups: loading DuckDB"
			"$TOOL" csv "$IN" "$D/load.csv"
			duck load "$DB" "$D/load.csv" >"$L/duckdb-load-$N-$G.log" 2>&1 ||
				{ msg "DuckDB load failed (see $L/duckdb-load-$N-$G.log)"; rm -f "$DB"; }
			rm -f "$D/load.csv"
		fi
		if ((have_sqlite && N <= SQLITE_MAX)) && [[ ! -s "$SQ" ]]; then
			msg "$N rows, $G groups: loading sqlite"
			"$TOOL" csv "$IN" "$D/load.csv" --signed
			sqlite3 "$SQ" -cmd "PRAGMA journal_mode=OFF" -cmd "PRAGMA synchronous=OFF" \
				"CREATE TABLE t(key INTEGER, value INTEGER);" \
				".import --csv --skip 1 $D/load.csv t" >"$L/sqlite-load-$N-$G.log" 2>&1 ||
				{ msg "sqlite load failed (see $L/sqlite-load-$N-$G.log)"; rm -f "$SQ"; }
			rm -f "$D/load.csv"
		fi
		if [[ "$AGG_PHASE" == prep ]]; then
			msg "$N rows, $G groups: prepared in $D"
			continue
		fi
		SQ_TIMED_OUT=0
		for ((rep = 1; rep <= REPEAT; rep++)); do
			REF_TOTALS="" REF_ENGINE=""
			for e in $ENGINES; do
				run_engine "$e"
			done
		done
		[[ "${KEEP_DATA:-0}" == 1 ]] || rm -f "$IN" "$DB" "$DB.wal" "$SQ"
	done
done
((REPORT_ONLY)) || { rm -rf "$BENCH_TMP/tmp"; rmdir "$BENCH_TMP/data" "$BENCH_TMP" 2>/dev/null || true; }
[[ "$AGG_PHASE" != prep ]] || exit 0

# ---- summary, ratio table, plot ---------------------------------------------------
SUM=$RESULTS_DIR/aggregate-summary.csv
# bound: ">=" when every run of that engine and input timed out (secs =
# the largest cap: a lower bound on its time; sqlite only)
awk -F, 'NR > 1 && $11 == "ok" { k = $1 "," $2 "," $3; n[k]++; v[k, n[k]] = $6 }
NR > 1 && $11 == "timeout" { k = $1 "," $2 "," $3; if ($6 + 0 > to[k]) to[k] = $6 + 0 }
END {
	print "engine,rows,groups,runs,secs,mrows_per_sec,bound"
	for (k in to)
		if (!(k in n)) {
			split(k, f, ",")
			printf "%s,%s,%s,0,%.3f,%.2f,>=\n", f[1], f[2], f[3], to[k], f[2] / to[k] / 1e6
		}
	for (k in n) {
		m = n[k]
		for (i = 1; i <= m; i++) a[i] = v[k, i] + 0
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		split(k, f, ",")
		printf "%s,%s,%s,%d,%.3f,%.2f,\n", f[1], f[2], f[3], m, med, (med > 0 ? f[2] / med / 1e6 : 0)
	}
}' "$CSV" >"$SUM"

echo
echo "median secs of the GROUP BY; ratios = secs(peer) / secs(pems): > 1 = pems faster;"
echo ">= : the peer timed out (its secs are the cap), so the ratio is a lower bound"
awk -F, 'NR > 1 { t[$2 "," $3 "," $1] = $5; lbnd[$2 "," $3 "," $1] = $7; pt[$2 "," $3] = 1 }
function r(a, b, lb) { return (a != "" && b != "" && b > 0) ? sprintf("%s%.2f", lb, a / b) : "n/a" }
function v(x, lb) { return x != "" ? lb x : "n/a" }
END {
	printf "%11s %11s %9s %9s %9s | %9s %9s\n", "rows", "groups", "pems", "duckdb", "sqlite", "duck/pems", "sqlite/pems"
	n = 0
	for (k in pt) keys[++n] = k
	for (i = 2; i <= n; i++)
		for (j = i; j > 1; j--) {
			split(keys[j - 1], a, ","); split(keys[j], b, ",")
			if (a[1] + 0 > b[1] + 0 || (a[1] + 0 == b[1] + 0 && a[2] + 0 > b[2] + 0)) {
				x = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = x
			} else break
		}
	for (i = 1; i <= n; i++) {
		k = keys[i]; split(k, f, ",")
		p = t[k ",pems"]; d = t[k ",duckdb"]; s = t[k ",sqlite"]
		bd = lbnd[k ",duckdb"]; bs = lbnd[k ",sqlite"]
		printf "%11s %11s %9s %9s %9s | %9s %9s\n", f[1], f[2], v(p, ""), v(d, bd), v(s, bs),
			r(d, p, bd), r(s, p, bs)
	}
}' "$SUM" | tee "$RESULTS_DIR/aggregate-ratios.txt"

if command -v gnuplot >/dev/null 2>&1; then
	plot=""
	for e in pems duckdb sqlite; do
		for n in $(awk -F, -v e="$e" 'NR > 1 && $1 == e { print $2 }' "$SUM" | sort -un); do
			dat=$RESULTS_DIR/aggregate-$e-$n.dat
			awk -F, -v e="$e" -v n="$n" 'NR > 1 && $1 == e && $2 == n && $7 == "" { print ($3 > 0 ? $3 : n), $6 }' \
				"$SUM" | sort -g >"$dat"
			[[ -s "$dat" ]] &&
				plot+="${plot:+, }'$dat' using 1:2 with linespoints title '$e, $(awk -v n="$n" 'BEGIN { printf "%g M rows", n / 1e6 }')'"
			dat=$RESULTS_DIR/aggregate-$e-$n-timeout.dat
			awk -F, -v e="$e" -v n="$n" 'NR > 1 && $1 == e && $2 == n && $7 == ">=" { print ($3 > 0 ? $3 : n), $6 }' \
				"$SUM" | sort -g >"$dat"
			if [[ -s "$dat" ]]; then
				plot+="${plot:+, }'$dat' using 1:2 with points pt 9 ps 2 title '$e, $(awk -v n="$n" 'BEGIN { printf "%g M rows", n / 1e6 }'): timed out (at most)'"
			else
				rm -f "$dat"
			fi
		done
	done
	mem_t=$(awk -F, 'NR == 2 { m = $4 / 1048576; print (m >= 1024 ? m / 1024 "G" : m "M"); exit }' "$CSV")
	if [[ -n "$plot" ]]; then
		gnuplot <<-EOF 2>"$L/gnuplot-aggregate.log" || msg "gnuplot failed ($L/gnuplot-aggregate.log)"
			set terminal pngcairo size 900,560 noenhanced
			set output '$RESULTS_DIR/aggregate.png'
			set title 'GROUP BY key (count, sum, min, max, avg): memory $mem_t (cgroup +10%), $(nproc) cores'
			set xlabel 'groups (distinct keys)'
			set ylabel 'million input rows per second'
			set logscale x 10
			set logscale y 10
			set key outside right
			set grid
			plot $plot
		EOF
		[[ -s "$RESULTS_DIR/aggregate.png" ]] && msg "plot: $RESULTS_DIR/aggregate.png"
	fi
fi
msg "results: $CSV"
((nfail == 0))
