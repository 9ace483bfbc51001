#!/bin/bash
# bench/ranks.sh - the bundled algorithms at 1, 2 and 4 ranks (mpirun) on
# this machine, the total budget fixed.
#
#   bash bench/ranks.sh [SIZE]        input bytes of each algorithm (default 4G)
#
# Environment (all optional):
#   NPS="1 2 4"      rank counts
#   MEM=1G           budget of the whole job: each rank gets --mem MEM/p and
#                    the job (mpirun and every rank) runs in one memory
#                    cgroup of MEM + 10 % (bench/cgrun.sh, cold cache)
#   ALGOS="sort aggregate sgd"
#   EPOCHS=2         sgd epochs
#   BUILD, BENCH_TMP, RESULTS_DIR, REPEAT=1   as for the other scripts
#   MPIRUN_ARGS      extra mpirun options (a hostfile on a cluster)
# Worker threads per rank: --threads max(1, cores / p), so the job never
# asks for more computing threads than the machine has.
#   sort       pems-run sort --format rec100 on SIZE bytes; output verified
#              against the input (`pems-run verify --against`)
#   aggregate  pems-run aggregate --agg count,sum,min,max,avg on SIZE bytes
#              of kv rows (1M groups); the CSV must equal the 1-rank output
#   sgd        pems-run sgd --model linear --sync local on SIZE bytes of
#              dense rows (dim 64); the model must equal the 1-rank model
#              (pems' sgd is bit-identical for any number of ranks)
# Writes ranks.csv (bench/lib.sh format, impl = the algorithm, ranks = p),
# ranks-summary.csv, the JSON statistics, and ratios.csv rows "ranks":
# time at 1 rank / time at p ranks.  Exit 0 if every run worked and
# agreed, 1 otherwise.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
NAME=ranks.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
MEM=${MEM:-1G}
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/ranks}
NPS=${NPS:-1 2 4}
ALGOS=${ALGOS:-sort aggregate sgd}
EPOCHS=${EPOCHS:-2}
REPEAT=${REPEAT:-1}
SIZE=${1:-4G}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

MEM_B=$(to_bytes "$MEM") || die "bad MEM '$MEM'"
SIZE_B=$(to_bytes "$SIZE") || die "bad SIZE '$SIZE'"
LIMIT_B=$(awk -v m="$MEM_B" 'BEGIN { printf "%.0f", m * 1.1 }')
PEMS_RUN=$BUILD/pems-run
[[ -x "$PEMS_RUN" ]] || die "$PEMS_RUN missing (make all)"
command -v mpirun >/dev/null || die "mpirun missing (scripts/deps.sh installs openmpi-bin)"
CORES=$(nproc)

D=$BENCH_TMP/ranks
L=$RESULTS_DIR/logs
CSV=$RESULTS_DIR/ranks.csv
mkdir -p "$D" "$L" || die "cannot create $D or $L"
trap 'rm -rf "$D"' EXIT
rm -f "$CSV"
csv_header "$CSV"
NFAIL=0
free=$(df -B1 --output=avail "$BENCH_TMP" | tail -n 1)
((free > 3 * SIZE_B + (1 << 30))) || die "needs $(human $((3 * SIZE_B + (1 << 30)))) free in $BENCH_TMP"

# gen_input ALGO: the input of ALGO in $IN (about SIZE bytes)
gen_input() {
	case "$1" in
	sort) IN=$D/in.rec100
		"$PEMS_RUN" gen --format rec100 --count $((SIZE_B / 100)) --seed 42 --quiet "$IN" ;;
	aggregate) IN=$D/in.kv
		"$PEMS_RUN" gen --format kv --count $((SIZE_B / 16)) --groups 1M --seed 42 --quiet "$IN" ;;
	sgd) IN=$D/in.dense
		"$PEMS_RUN" gen --format dense --model linear --count $((SIZE_B / 260)) --dim 64 \
			--noise 0.5 --seed 42 --quiet "$IN" ;;
	esac >"$L/ranks-gen-$1.log" 2>&1
}

# job ALGO P OUT: the command line of ALGO at P ranks
job() {
	local algo=$1 p=$2 out=$3 t=$((CORES / $2))
	((t > 0)) || t=1
	# shellcheck disable=SC2086
	echo mpirun --oversubscribe --bind-to none ${MPIRUN_ARGS:-} -np "$p" "$PEMS_RUN" "$algo"
	case "$algo" in
	sort) echo --format rec100 "$IN" "$out" ;;
	aggregate) echo --agg count,sum,min,max,avg "$IN" "$out" ;;
	sgd) echo --model linear --data "$IN" --format dense --sync local --epochs "$EPOCHS" --out "$out" ;;
	esac
	echo --mem $((MEM_B / p)) --threads "$t" --tmp "$D/tmp" --quiet \
		--stats-json "$RESULTS_DIR/ranks-$algo-p$p.r$rep.json"
}

# check ALGO P OUT: sort output verified; aggregate and sgd equal to 1 rank
check() {
	local algo=$1 p=$2 out=$3
	if [[ "$algo" == sort ]]; then
		"$PEMS_RUN" verify --format rec100 "$out" --against "$IN" --quiet >>"$log" 2>&1
	elif [[ ! -f "$D/ref-$algo" ]]; then
		cp "$out" "$D/ref-$algo"
	else
		cmp "$out" "$D/ref-$algo" >>"$log" 2>&1
	fi
}

for algo in $ALGOS; do
	msg "$algo: generating about $(human "$SIZE_B") of input"
	gen_input "$algo" || die "gen for $algo failed (see $L/ranks-gen-$algo.log)"
	bytes=$(stat -c %s "$IN")
	for ((rep = 1; rep <= REPEAT; rep++)); do
		for p in $NPS; do
			log=$L/ranks-$algo-p$p.r$rep.log
			out=$D/out-$algo
			rm -rf "$out" "$out".tmp.* "$D/tmp"
			mkdir -p "$D/tmp"
			# shellcheck disable=SC2046
			cg_measure "$LIMIT_B" "$log" $(job "$algo" "$p" "$out")
			note=threads=$((CORES / p > 0 ? CORES / p : 1))
			if [[ "$M_STATUS" == ok ]] && ! check "$algo" "$p" "$out"; then
				msg "$algo at $p ranks: output wrong (see $log)"
				M_STATUS=wrong
			fi
			[[ "$algo" == sgd ]] && note+=" epochs=$EPOCHS"
			record "$CSV" ranks "$algo" "$bytes" "$MEM_B" "$p" "$rep" "$note"
		done
	done
	rm -rf "$IN" "$D/out-$algo" "$D/ref-$algo" "$D/tmp"
done

SUM=$RESULTS_DIR/ranks-summary.csv
bench_summary "$CSV" "$SUM"
# ratios: time at 1 rank / time at p ranks (the "peer" is p = 1)
[[ -s "$RESULTS_DIR/ratios.csv" ]] || echo "bench,case,pems,peer,pems_secs,peer_secs,ratio" >"$RESULTS_DIR/ratios.csv"
awk -F, '$1 != "ranks"' "$RESULTS_DIR/ratios.csv" >"$RESULTS_DIR/ratios.tmp"
awk -F, 'function hb(x) { x += 0; return x >= 1e9 ? sprintf("%.3gG", x / 1073741824) : sprintf("%.3gM", x / 1048576) }
	NR > 1 { t[$2, $5] = $7; b[$2] = $3; m[$2] = $4; if ($5 > 1) ps[$2, $5] = 1 }
	END { for (k in ps) { split(k, f, SUBSEP); a = f[1]; p = f[2]
		if (!((a, 1) in t) || t[a, p] <= 0) continue
		printf "ranks,%s N=%s M=%s,%s p=%s,%s p=1,%.2f,%.2f,%.2f\n", a, hb(b[a]), hb(m[a]), a, p, a,
			t[a, p], t[a, 1], t[a, 1] / t[a, p] } }' "$SUM" | sort >>"$RESULTS_DIR/ratios.tmp"
mv "$RESULTS_DIR/ratios.tmp" "$RESULTS_DIR/ratios.csv"
echo "time at p ranks (median secs; ratio = time at 1 rank / time at p ranks)"
grep '^ranks,' "$RESULTS_DIR/ratios.csv" | column -t -s,
((NFAIL == 0))
