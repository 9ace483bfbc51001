#!/bin/bash
# bench/run.sh - every benchmark, side by side with its peers (`make bench`).
#
#   BENCH_SCALE=small|full BUILD=build bash bench/run.sh
#
# Parts, in this order (BENCH_PARTS="io sort aggregate sgd budget ranks"
# picks some):
#   io         bench/io.sh: the pems I/O engine vs fio (the disk ceiling)
#   sort       bench/sort.sh: pems vs GNU sort vs STXXL vs the fio
#              ceiling, throughput vs input size at MEM
#   aggregate  bench/aggregate.sh (when present): pems vs DuckDB vs sqlite3
#   sgd        bench/sgd.sh: an SGD epoch vs one sequential scan (a C loop
#              doing the same SGD pass, and dd O_DIRECT)
#   budget     bench/budget.sh: time vs memory budget for a fixed input,
#              pems vs STXXL vs GNU sort
#   ranks      bench/ranks.sh: sort, aggregate, sgd at 1, 2, 4 MPI ranks
# then bench/report.sh: plots (throughput, budget, traffic, ranks .png)
# and the table of ratios against every peer (summary.txt).
#
#                 small (meant: < 10 min, 2 cores) full (hours; ~60 GB of disk)
#   io            512M                            4G
#   sort          256M 512M                       1G 4G 16G
#   aggregate     4M rows, 1e3 and 1e6 groups     100M rows, 1e3 1e7 1e8 groups
#   sgd           512M, 3 epochs                  8G, 3 epochs
#   budget        256M at 64M 128M 256M 512M      8G at 64M 256M 1G 4G 8G
#   ranks         128M each                       4G each
# Every contender runs in bench/cgrun.sh: page cache dropped, memory
# cgroup of its budget + 10 %.  MEM (default 1G) is the budget of sort,
# aggregate, sgd and ranks; SORT_SIZES, IO_SIZE, SGD_SIZE, BUDGET_SIZE,
# BUDGETS, RANKS_SIZE, AGG_ROWS, AGG_GROUPS override the table; BENCH_TMP (default
# /var/tmp/pems-bench) holds data and scratch; REPEAT etc. pass through.
# Results: RESULTS_ROOT/<part>/ (default bench/results/<part>/: each run
# replaces the part's current result; git keeps the history), and
# RESULTS_ROOT/suite/ for bench/report.sh's plots and ratio table.
# Runs scripts/deps.sh --bench first (Debian packages; the DuckDB peer
# comes from npm through bench/aggregate.sh).  Exit 1 if any part failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
export BUILD=${BUILD:-build}
export BENCH_SCALE=${BENCH_SCALE:-small}
export RESULTS_ROOT=${RESULTS_ROOT:-$PWD/bench/results}
export MEM=${MEM:-1G}
export BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench}
BENCH_PARTS=${BENCH_PARTS:-io sort aggregate sgd budget ranks}

case "$BENCH_SCALE" in
small) sort_sizes="256M 512M" io_size=512M sgd_size=512M budget_size=256M
	budgets="64M 128M 256M 512M" ranks_size=128M agg_rows=4M agg_groups="1e3 1e6" ;;
full) sort_sizes="1G 4G 16G" io_size=4G sgd_size=8G budget_size=8G
	budgets="64M 256M 1G 4G 8G" ranks_size=4G agg_rows=100M agg_groups="1e3 1e7 1e8" ;;
*)
	echo "bench/run.sh: error: BENCH_SCALE=$BENCH_SCALE: use small or full" >&2
	exit 2 ;;
esac
read -r -a SORT_SIZES <<<"${SORT_SIZES:-$sort_sizes}"
IO_SIZE=${IO_SIZE:-$io_size}
SGD_SIZE=${SGD_SIZE:-$sgd_size}
BUDGET_SIZE=${BUDGET_SIZE:-$budget_size}
export BUDGETS=${BUDGETS:-$budgets}
RANKS_SIZE=${RANKS_SIZE:-$ranks_size}
read -r -a AGG_ROWS <<<"${AGG_ROWS:-$agg_rows}"
export AGG_GROUPS=${AGG_GROUPS:-$agg_groups}

if ((EUID != 0)); then
	echo "bench/run.sh: error: benchmarks need root (cgroup memory limits, drop_caches)" >&2
	exit 1
fi
bash scripts/deps.sh --bench || exit 1
mkdir -p "$RESULTS_ROOT" "$BENCH_TMP" || exit 1

failed=()
T0=$SECONDS
run_part() {	# run_part NAME CMD...: if NAME is in BENCH_PARTS
	local name=$1 t0 rc
	shift
	[[ " $BENCH_PARTS " == *" $name "* ]] || return 0
	echo "=== $name (BENCH_SCALE=$BENCH_SCALE) ==="
	t0=$SECONDS
	RESULTS_DIR=$RESULTS_ROOT/$name "$@"
	rc=$?
	echo "=== $name: $([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0))s ==="
	((rc == 0)) || failed+=("$name")
}

run_part io bash bench/io.sh "$IO_SIZE" "$BENCH_TMP"
run_part sort bash bench/sort.sh "${SORT_SIZES[@]}"
if [[ -f bench/aggregate.sh ]]; then
	run_part aggregate bash bench/aggregate.sh "${AGG_ROWS[@]}"
elif [[ " $BENCH_PARTS " == *" aggregate "* ]]; then
	echo "=== aggregate: skipped: bench/aggregate.sh is not in this checkout yet ==="
fi
run_part sgd bash bench/sgd.sh "$SGD_SIZE"
run_part budget bash bench/budget.sh "$BUDGET_SIZE"
run_part ranks bash bench/ranks.sh "$RANKS_SIZE"

echo "=== summary ($((SECONDS - T0))s in all) ==="
bash bench/report.sh "$RESULTS_ROOT"
echo "results in $RESULTS_ROOT/<part>/ and $RESULTS_ROOT/suite/"
if ((${#failed[@]})); then
	echo "bench/run.sh: failed: ${failed[*]}" >&2
	exit 1
fi
