#!/bin/bash
# bench/report.sh - the plots and the ratio table of one `make bench` run.
#
#   bash bench/report.sh [RESULTS_ROOT]     default bench/results
#
# Reads what the parts wrote into RESULTS_ROOT/<part>/ (io, sort,
# aggregate, sgd, budget, ranks) and writes into RESULTS_ROOT/suite/:
#   traffic.csv        source,impl,bytes,mem,ranks,traffic_bytes,traffic_over_n
#                      for every pems sort run with a statistics JSON (bytes
#                      read + written: input, message store, contexts,
#                      output; the 2-pass bound is 4N)
#   throughput.png     sort: MB/s of input vs input size at the run's fixed budget
#                      (sort-summary.csv: every contender)
#   throughput-aggregate.png   the same for GROUP BY (bench/aggregate.sh's
#                      aggregate-summary.csv; one line per engine and number
#                      of groups)
#   throughput-sgd.png the same for an SGD epoch vs the scans (sgd-summary.csv)
#   budget.png         time vs memory budget for the fixed input (budget-summary.csv)
#   traffic.png        disk traffic / N of pems' sorts vs N, with the 4N bound
#   traffic-budget.png the same against the budget
#   ranks.png          time vs ranks per algorithm (ranks-summary.csv)
#   summary.txt        the ratio table, also printed: for each benchmark
#                      and case, peer time / pems time (> 1: pems faster;
#                      for the disk ceilings, the fraction of the ceiling
#                      pems reaches)
# Plots need gnuplot (skipped with a message without it); a missing input
# file skips its plot and its rows.  Exit 0.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
NAME=report.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh
B=${1:-${RESULTS_ROOT:-$ROOT/bench/results}}
[[ -d "$B" ]] || die "no results directory $B"
R=$B/suite
mkdir -p "$R" || die "cannot create $R"
P=$R/plot-data
mkdir -p "$P"

# ---- traffic.csv -----------------------------------------------------------
traffic_row() {	# traffic_row SOURCE IMPL MEM RANKS JSON
	local j=$5 n t
	n=$(jfield "$j" bytes)
	t=$(json_traffic "$j")
	awk -v s="$1" -v i="$2" -v n="$n" -v m="$3" -v p="$4" -v t="$t" \
		'BEGIN { if (n > 0) printf "%s,%s,%s,%s,%s,%s,%.3f\n", s, i, n, m, p, t, t / n }'
}
sort_mem() {	# sort_mem DIR: the budget recorded in DIR/sort.csv
	awk -F, 'NR == 2 { print $4; exit }' "$1/sort.csv" 2>/dev/null
}
TR=$R/traffic.csv
echo "source,impl,bytes,mem,ranks,traffic_bytes,traffic_over_n" >"$TR"
shopt -s nullglob
for j in "$B"/sort/pems-*.json "$B"/budget/runs/*/pems-*.json; do
	d=$(dirname "$j")
	impl=$(basename "$j" | sed 's/-[0-9]*\.r[0-9]*\.json$//')
	src=size
	[[ "$d" == */budget/runs/* ]] && src=budget
	traffic_row "$src" "$impl" "$(sort_mem "$d")" 1 "$j" >>"$TR"
done
for j in "$B"/ranks/ranks-sort-p*.json; do
	p=$(basename "$j" | sed 's/.*-p\([0-9]*\)\..*/\1/')
	m=$(awk -F, 'NR > 1 && $2 == "sort" { print $4; exit }' "$B/ranks/ranks.csv" 2>/dev/null)
	traffic_row ranks pems-rec100 "${m:-0}" "$p" "$j" >>"$TR"
done

# ---- plot data -------------------------------------------------------------
# dat NAME IMPL AWK-PROGRAM FILE: P/NAME-IMPL.dat from FILE, sorted by x;
# adds IMPL to the list in PLOT_IMPLS when it has points.
dat() {
	local f=$P/$1-$2.dat
	awk -F, -v i="$2" "$3" "$4" | sort -g >"$f"
	if [[ -s "$f" ]]; then PLOT_IMPLS+="${PLOT_IMPLS:+ }$2"; else rm -f "$f"; fi
}
GiB=1073741824
plot() {	# plot NAME OUT TITLE XLABEL YLABEL LOGX LOGY REF REFNAME
	[[ -n "$PLOT_IMPLS" ]] || return 0
	if ! command -v gnuplot >/dev/null; then
		msg "gnuplot not installed: no $2 (scripts/deps.sh --bench)"
		return 0
	fi
	gnuplot -e "dat='$P/$1'; impls='$PLOT_IMPLS'; out='$R/$2'; ttl='$3'; xl='$4'; yl='$5'; logx=$6; logy=$7; ref=$8; refname='$9'" \
		bench/plot-lines.gp 2>>"$R/logs/gnuplot-report.log" && msg "plot: $R/$2"
}
mkdir -p "$R/logs"
cores=$(nproc)

# One throughput plot per algorithm: their rates differ by 10x, and one
# crowded plot with 15 lines read as noise.
PLOT_IMPLS=""
if [[ -f "$B/sort/sort-summary.csv" ]]; then
	mem=$(human "$(sort_mem "$B/sort")")
	for i in pems pems-rec100 gnu-sort stxxl stxxl-rec100 ceiling; do
		dat size "$i" 'NR > 1 && $1 == i { print $2 / '$GiB', $5 }' "$B/sort/sort-summary.csv"
	done
	plot size throughput.png "sort: throughput vs input size (budget ${mem:-?}, cgroup +10%, $cores cores)" \
		"input size (GiB)" "MB/s of input" 2 0 0 ""
fi
PLOT_IMPLS=""
# bench/aggregate.sh's summary: engine,rows,groups,runs,secs,mrows_per_sec
# (16-byte kv rows); one line per engine and number of groups.
AGG=$B/aggregate/aggregate-summary.csv
if [[ -f "$AGG" ]] && head -n 1 "$AGG" | grep -q '^engine,rows,groups,'; then
	for i in $(awk -F, 'NR > 1 { print $1 ":G=" $3 }' "$AGG" | sort -u); do
		dat agg-size "$i" 'NR > 1 && $1 ":G=" $3 == i && $5 > 0 { print $2 * 16 / '$GiB', $2 * 16 / $5 / 1e6 }' "$AGG"
	done
	plot agg-size throughput-aggregate.png "GROUP BY: throughput vs input size (kv rows; G = groups)" \
		"input size (GiB)" "MB/s of input" 2 0 0 ""
fi
PLOT_IMPLS=""
if [[ -f "$B/sgd/sgd-summary.csv" ]]; then
	for i in $(awk -F, 'NR > 1 { print $2 }' "$B/sgd/sgd-summary.csv" | sort -u); do
		dat sgd-size "$i" 'NR > 1 && $2 == i { print $3 / '$GiB', $8 }' "$B/sgd/sgd-summary.csv"
	done
	plot sgd-size throughput-sgd.png "SGD: MB/s per epoch vs input size (pems vs one sequential scan)" \
		"input size (GiB)" "MB/s of input per epoch" 2 0 0 ""
fi

PLOT_IMPLS=""
if [[ -f "$B/budget/budget-summary.csv" ]]; then
	n=$(awk -F, 'NR == 2 { print $3 }' "$B/budget/budget-summary.csv")
	for i in $(awk -F, 'NR > 1 { print $2 }' "$B/budget/budget-summary.csv" | sort -u); do
		dat budget "$i" 'NR > 1 && $2 == i { print $4 / 1048576, $7 }' "$B/budget/budget-summary.csv"
	done
	plot budget budget.png "time vs memory budget, input $(human "${n:-0}") (cgroup = budget + 10%, cold cache)" \
		"memory budget (MiB)" "seconds" 2 0 0 ""
fi

PLOT_IMPLS=""
for i in pems pems-rec100; do
	dat traffic "$i" 'NR > 1 && $1 == "size" && $2 == i { print $3 / '$GiB', $7 }' "$TR"
done
plot traffic traffic.png "disk traffic of pems sort / input size N (read + written)" \
	"input size N (GiB)" "traffic / N" 2 0 4 "4N (2-pass bound)"
PLOT_IMPLS=""
for i in pems pems-rec100; do
	dat traffic-budget "$i" 'NR > 1 && $1 == "budget" && $2 == i { print $4 / 1048576, $7 }' "$TR"
done
plot traffic-budget traffic-budget.png "disk traffic of pems sort / N against the budget (fixed N)" \
	"memory budget (MiB)" "traffic / N" 2 0 4 "4N (2-pass bound)"

PLOT_IMPLS=""
if [[ -f "$B/ranks/ranks-summary.csv" ]]; then
	for i in $(awk -F, 'NR > 1 { print $2 }' "$B/ranks/ranks-summary.csv" | sort -u); do
		dat ranks "$i" 'NR > 1 && $2 == i { print $5, $7 }' "$B/ranks/ranks-summary.csv"
	done
	plot ranks ranks.png "time vs MPI ranks on this machine (total budget fixed, $cores cores)" \
		"ranks" "seconds" 2 0 0 ""
fi

# ---- the ratio table ---------------------------------------------------------
{
	echo "bench,case,pems,peer,pems_secs,peer_secs,ratio"
	if [[ -f "$B/io/io.csv" ]]; then	# MB/s: ratio = pems / fio (fraction of fio)
		awk -F, 'NR > 1 { k = $4 "," $5; v[$3, k] = v[$3, k] " " $8; ks[k] = 1 }
		function med(s,    a, n, i, j, x) {
			n = split(s, a, " ")
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
			return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0 }
		END { for (k in ks) { split(k, f, ",")
			p = med(v["pems-uring", k]); q = med(v["fio-io_uring", k])
			if (p > 0 && q > 0)
				printf "io,%s QD=%s (MB/s),pems-uring,fio-io_uring,%.0f,%.0f,%.2f\n", f[2], f[1], p, q, p / q } }' \
			"$B/io/io.csv" | sort -t, -k2,2V
	fi
	if [[ -f "$B/sort/sort-summary.csv" ]]; then
		awk -F, -v m="$(sort_mem "$B/sort")" '
		function hb(x) { x += 0; return x >= 1e9 ? sprintf("%.3gG", x / 1073741824) : sprintf("%.3gM", x / 1048576) }
		NR > 1 { t[$1, $2] = $4; b[$2] = 1 }
		END { split("pems stxxl|pems-rec100 stxxl-rec100|pems-rec100 gnu-sort|pems ceiling|pems-rec100 ceiling", pr, "|")
			for (n in b) for (i in pr) { split(pr[i], q, " ")
				if ((q[1], n) in t && (q[2], n) in t && t[q[1], n] > 0)
					printf "sort,N=%s M=%s,%s,%s,%.2f,%.2f,%.2f\n", hb(n), hb(m), q[1], q[2],
						t[q[1], n], t[q[2], n], t[q[2], n] / t[q[1], n] } }' \
			"$B/sort/sort-summary.csv" | sort -t, -k2,2V -k4,4
	fi
	if [[ -f "$AGG" ]] && head -n 1 "$AGG" | grep -q '^engine,rows,groups,'; then
		awk -F, -v m="$(awk -F, 'NR == 2 { print $4; exit }' "$B/aggregate/aggregate.csv" 2>/dev/null)" '
		function hb(x) { x += 0; return x >= 1e9 ? sprintf("%.3gG", x / 1073741824) : sprintf("%.3gM", x / 1048576) }
		NR > 1 { t[$1, $2 "," $3] = $5; k[$2 "," $3] = 1 }
		END { for (c in k) { split(c, f, ",")
			split("duckdb sqlite", q, " ")
			for (i = 1; i <= 2; i++)
				if (("pems", c) in t && (q[i], c) in t && t["pems", c] > 0)
					printf "aggregate,rows=%gM groups=%g M=%s,pems,%s,%.2f,%.2f,%.2f\n", f[1] / 1e6, f[2],
						hb(m + 0), q[i], t["pems", c], t[q[i], c], t[q[i], c] / t["pems", c] } }' \
			"$AGG" | sort -t, -k2,2V -k4,4
	fi
	for f in "$B"/sgd/ratios.csv "$B"/budget/ratios.csv "$B"/ranks/ratios.csv; do
		[[ -f "$f" ]] && awk 'NR > 1' "$f"
	done
} >"$R/summary.csv"
{
	echo "ratio = peer secs / pems secs (> 1: pems faster; ceiling: fraction of the disk's 4N ceiling reached;"
	echo "io: pems MB/s / fio MB/s; ranks: time at 1 rank / time at p ranks)"
	column -t -s, "$R/summary.csv"
} | tee "$R/summary.txt"
exit 0
