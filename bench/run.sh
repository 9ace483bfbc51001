#!/bin/bash
# bench/run.sh - all benchmarks (`make bench`).
#
#   BENCH_SCALE=small|full BUILD=build bash bench/run.sh
#
# small (default, < 10 min on 2 cores): io at 1G; sort at 256M and 1G with
# MEM=1G.  full: io at 4G; sort at 1G, 4G and 16G with MEM=1G (needs ~50 GB
# free in BENCH_TMP, and long).  MEM, BENCH_TMP, IMPLS, ... pass through to the
# scripts (see bench/sort.sh).  Results go to bench/results/<date>/ (one
# RESULTS_DIR shared by all benchmarks of this run).
# Runs scripts/deps.sh --bench first, then each benchmark it knows that
# exists: bench/io.sh, bench/sort.sh.  Exit 1 if any benchmark failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
export BUILD=${BUILD:-build}
export BENCH_SCALE=${BENCH_SCALE:-small}
export RESULTS_DIR=${RESULTS_DIR:-$PWD/bench/results/$(date +%F)}

case "$BENCH_SCALE" in
small) SORT_SIZES=(256M 1G) IO_SIZE=1G ;;
full) SORT_SIZES=(1G 4G 16G) IO_SIZE=4G ;;
*)
	echo "bench/run.sh: error: BENCH_SCALE=$BENCH_SCALE: use small or full" >&2
	exit 2 ;;
esac
export MEM=${MEM:-1G}

if ((EUID != 0)); then
	echo "bench/run.sh: error: benchmarks need root (cgroup memory limits, drop_caches)" >&2
	exit 1
fi
bash scripts/deps.sh --bench || exit 1
mkdir -p "$RESULTS_DIR" || exit 1

failed=()
run_bench() {	# run_bench NAME CMD...
	local name=$1 t0 rc
	shift
	echo "=== $name (BENCH_SCALE=$BENCH_SCALE) ==="
	t0=$SECONDS
	"$@"
	rc=$?
	echo "=== $name: $([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0))s ==="
	((rc == 0)) || failed+=("$name")
}

if [[ -f bench/io.sh ]]; then
	run_bench io bash bench/io.sh "$IO_SIZE" "${BENCH_TMP:-/var/tmp/pems-bench}"
else
	echo "bench/run.sh: bench/io.sh not present, skipping io"
fi
run_bench sort bash bench/sort.sh "${SORT_SIZES[@]}"

echo "results in $RESULTS_DIR"
if ((${#failed[@]})); then
	echo "bench/run.sh: failed: ${failed[*]}" >&2
	exit 1
fi
