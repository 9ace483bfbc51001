#!/bin/bash
# bench/budget.sh - time against the memory budget, for one fixed input:
# pems sort vs STXXL vs GNU sort at every budget.
#
#   bash bench/budget.sh [SIZE]        input size (default 8G)
#
# Environment (all optional):
#   BUDGETS="64M 256M 1G 4G 8G"   the budgets M; every contender runs in a
#                        memory cgroup of M + 10 % (bench/cgrun.sh)
#   IMPLS="pems-rec100 stxxl-rec100 gnu-sort"   contenders, as named in
#                        bench/sort.sh (also: pems stxxl on u64 keys)
#   BUILD, BENCH_TMP, RESULTS_DIR, REPEAT   as for bench/sort.sh
# For each input format in use (rec100 for pems-rec100 and stxxl-rec100,
# ascii100 -- the same records as text lines -- for gnu-sort, u64 for pems
# and stxxl) the input is generated once and sorted at every budget by
# bench/sort.sh (MEM = the budget, KEEP_DATA=1, its results in
# RESULTS_DIR/runs/<format>-<budget>/): cold cache, cgroup, verified
# output, pems' statistics JSON kept.  Disk: about 3 x SIZE at a time.
# A contender refusing a budget as too small for the input (pems' sample
# sort makes a single pass, so its M must grow with about sqrt(N); the
# STXXL driver wants 88 MiB or more; exit 1 "is too small") is recorded
# as status=refused, and a peer killed by the cgroup's OOM killer as
# status=oom: results, not failures.  pems exceeding its budget is a
# failure.
# Writes budget.csv (bench/lib.sh format, note = the format),
# budget-summary.csv, and ratios.csv rows "budget" (peer / pems at each
# budget).  Exit 0 if no contender failed, 1 otherwise.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
NAME=budget.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/budget}
BUDGETS=${BUDGETS:-64M 256M 1G 4G 8G}
IMPLS=${IMPLS:-pems-rec100 stxxl-rec100 gnu-sort}
SIZE=${1:-8G}
SIZE_B=$(to_bytes "$SIZE") || die "bad SIZE '$SIZE'"
N=$((SIZE_B / 800 * 800))	# as bench/sort.sh rounds it
export BENCH_TMP BUILD=${BUILD:-build}

CSV=$RESULTS_DIR/budget.csv
mkdir -p "$RESULTS_DIR" || die "cannot create $RESULTS_DIR"
rm -f "$CSV"
csv_header "$CSV"
NFAIL=0

# collect DIR FORMAT: DIR/sort.csv rows into budget.csv; a pems run that
# refused the budget becomes status=refused.
collect() {
	local dir=$1 fmt=$2
	awk -F, -v fmt="$fmt" -v dir="$dir" '
	NR > 1 && $1 != "ceiling" {
		rep = ++n[$1]; st = $11
		if ($1 ~ /^(pems|stxxl)/ && st == "fail(rc=1)") {
			lf = dir "/logs/" $1 "-" $3 ".r" rep ".log"
			while ((getline line < lf) > 0)
				if (line ~ /is too small/) st = "refused"
			close(lf)
		}
		if ($1 !~ /^pems/ && st ~ /oom/)
			st = "oom"	# a peer over its cgroup: a result, not a suite failure
		printf "budget,%s,%s,%s,1,%d,%s,%s,%s,%s,%s,%s,%s\n",
			$1, $3, $4, rep, $6, $7, $8, $9, $10, st, fmt
	}' "$dir/sort.csv" >>"$CSV"
}

for group in "u64:pems stxxl" "rec100:pems-rec100 stxxl-rec100" "ascii100:gnu-sort"; do
	fmt=${group%%:*}
	impls=""
	for impl in ${group#*:}; do
		[[ " $IMPLS " == *" $impl "* ]] && impls+="${impls:+ }$impl"
	done
	[[ -n "$impls" ]] || continue
	for m in $BUDGETS; do
		dir=$RESULTS_DIR/runs/$fmt-$m
		msg "$fmt input $(human "$N"), budget $m: $impls"
		IMPLS=$impls MEM=$m KEEP_DATA=1 RESULTS_DIR=$dir bash bench/sort.sh "$N"
		if [[ -f "$dir/sort.csv" ]]; then
			collect "$dir" "$fmt"
		else
			msg "bench/sort.sh wrote no $dir/sort.csv"
			NFAIL=$((NFAIL + 1))
		fi
	done
	rm -f "$BENCH_TMP/data/$fmt-$N.in"
done
rmdir "$BENCH_TMP/data" 2>/dev/null || true

# Failures are counted from the rows (sort.sh's own status counts refusals).
NFAIL=$((NFAIL + $(awk -F, 'NR > 1 && $12 !~ /^(ok|skip|refused|oom)$/' "$CSV" | wc -l)))
SUM=$RESULTS_DIR/budget-summary.csv
bench_summary "$CSV" "$SUM"
ratio_rows "$SUM" budget pems stxxl
ratio_rows "$SUM" budget pems-rec100 stxxl-rec100
ratio_rows "$SUM" budget pems-rec100 gnu-sort
echo "time vs budget, input $(human "$N") (median secs; ratio = peer / pems: > 1 = pems faster)"
awk -F, 'NR > 1 { printf "%-13s M=%-6s %s\n", $2, ($4 >= 1073741824 ? $4 / 1073741824 "G" : $4 / 1048576 "M"), \
	($12 == "ok" ? $7 " s" : $12) }' "$CSV"
grep '^budget,' "$RESULTS_DIR/ratios.csv" | column -t -s,
((NFAIL == 0))
