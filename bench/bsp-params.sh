#!/bin/bash
# bench/bsp-params.sh - the BSP parameters of pems (bspbench style) for
# p = 1, 2, 4 ranks under mpirun.
#
#   BUILD=build BENCH_TMP=/work/scratch/mpi/bsp-params bash bench/bsp-params.sh
#
# For each p: superstep latency l of empty supersteps with v = p and
# v = 64; l and g fitted as secs = l + g*h (h = bytes each rank sends and
# receives per superstep) for
#   net   h-relations between VPs on different ranks, contexts resident
#         (v = p, and v = 64 with a budget that caches every context)
#   disk  the same with v = 64 VPs of mu = 4 MiB under M = 48 MiB per
#         rank, so contexts and messages spill
#   alltoallv-pems / alltoallv-mpi  pems_alltoallv with v = p against
#         plain MPI_Alltoallv (bench/mpi/alltoallv.c, built here with
#         mpicc), all ranks exchanging equal blocks, same bytes per rank;
#         the budget keeps the (64 MiB) contexts resident, so pems pays
#         for its message store, not for swapping
# The whole set runs REPEAT times (default 3).  Writes to $RESULTS_DIR:
#   bsp-params.csv       p,v,kind,l_sec,g_sec_per_byte,r2 (medians over
#                        the repeats, each of l, g and r2 on its own)
#   bsp-params-runs.csv  run,p,v,kind,l_sec,g_sec_per_byte,r2
#   bsp-params-points.csv  run,p,v,kind,h,secs (every fitted point: the
#                        median superstep time for that h)
#   bsp-params-alltoallv.csv  p,bytes_per_rank,pems_secs,mpi_secs,
#                        pems_over_mpi (throughput of pems_alltoallv over
#                        MPI_Alltoallv; medians over the repeats)
#   logs/bsp-params.log  the raw lines
# and prints the one-line-per-run `bench=bsp-params p=.. v=.. kind=..
# l=.. g=..` lines, then the medians.
# NPS (default "1 2 4"), REPS (timed supersteps per size, default 15),
# MPIRUN_ARGS (extra mpirun options, e.g. "--hostfile hosts --map-by node"
# for one rank per node on a cluster; BENCH_TMP then must exist on every
# node).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/bsp-params}
TMP=${BENCH_TMP:-/work/scratch/mpi/bsp-params}
NPS=${NPS:-1 2 4}
REPS=${REPS:-15}
REPEAT=${REPEAT:-3}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
BIN=$BUILD/bench/bsp_params
MPIBIN=$BUILD/bench/mpi_alltoallv
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

err() { echo "bench/bsp-params.sh: error: $*" >&2; exit 1; }
command -v mpirun >/dev/null 2>&1 || err "mpirun not found; install openmpi-bin"
command -v mpicc >/dev/null 2>&1 || err "mpicc not found; install libopenmpi-dev"
make -s BUILD="$BUILD" "$BIN" || err "cannot build $BIN"
mpicc -O2 -Wall -Wextra -o "$MPIBIN" bench/mpi/alltoallv.c || err "cannot build $MPIBIN"
mkdir -p "$RESULTS_DIR/logs" "$TMP" || err "cannot create $RESULTS_DIR or $TMP"

CSV=$RESULTS_DIR/bsp-params.csv
RUNS=$RESULTS_DIR/bsp-params-runs.csv
PTS=$RESULTS_DIR/bsp-params-points.csv
A2A=$RESULTS_DIR/bsp-params-alltoallv.csv
LOG=$RESULTS_DIR/logs/bsp-params.log
echo "run,p,v,kind,l_sec,g_sec_per_byte,r2" >"$RUNS"
echo "run,p,v,kind,h,secs" >"$PTS"
: >"$LOG"
failed=0
rep=0

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

# run P ARGS...: one mpirun of ARGS, lines to the log and the CSVs
run() {
	local np=$1 out line
	shift
	rm -rf "${TMP:?}"/r*
	mkdir -p "$TMP"/r{0,1,2,3}
	# shellcheck disable=SC2086
	out=$(timeout 900 mpirun --oversubscribe --bind-to none $MPIRUN_ARGS -np "$np" "$@" --points 2>>"$LOG")
	local rc=$?
	printf '%s\n' "$out" >>"$LOG"
	if ((rc != 0)); then
		echo "bench/bsp-params.sh: p=$np $*: exit $rc (see $LOG)" >&2
		failed=1
		return
	fi
	while read -r line; do
		case "$line" in
		bench=bsp-params-point*)
			echo "$rep,$(field p "$line"),$(field v "$line"),$(field kind "$line"),$(field h "$line"),$(field secs "$line")" >>"$PTS" ;;
		bench=bsp-params\ *)
			echo "$line run=$rep"
			echo "$rep,$(field p "$line"),$(field v "$line"),$(field kind "$line"),$(field l "$line"),$(field g "$line"),$(field r2 "$line")" >>"$RUNS" ;;
		esac
	done <<<"$out"
}

A2A_SIZES=1M,4M,16M,32M
for ((rep = 1; rep <= REPEAT; rep++)); do
for np in $NPS; do
	common=(--tmp "$TMP/r%r" --reps "$REPS")
	run "$np" "$BIN" empty --v "$np" --mu 1M --mem 256M --steps 400 "${common[@]}"
	run "$np" "$BIN" empty --v 64 --mu 1M --mem 256M --steps 200 "${common[@]}"
	run "$np" "$BIN" hrel --kind net --v "$np" --mu 36M --mem 256M \
		--sizes 0,1M,2M,4M,8M,16M "${common[@]}"
	run "$np" "$BIN" hrel --kind net --v 64 --mu 4M --mem 640M \
		--sizes 0,64K,256K,512K,1M "${common[@]}"
	run "$np" "$BIN" hrel --kind disk --v 64 --mu 4M --mem 48M \
		--sizes 0,64K,256K,512K,1M "${common[@]}"
	run "$np" "$BIN" a2a --mu 72M --mem 512M --sizes "$A2A_SIZES" "${common[@]}"
	run "$np" "$MPIBIN" --sizes "$A2A_SIZES" --reps "$REPS"
done
done
rm -rf "${TMP:?}"/r*

# medians over the repeats (gawk-free: one sort per group)
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
echo "p,v,kind,l_sec,g_sec_per_byte,r2" >"$CSV"
tail -n +2 "$RUNS" | cut -d, -f2-4 | awk '!seen[$0]++' | while IFS=, read -r p v k; do
	rows=$(awk -F, -v p="$p" -v v="$v" -v k="$k" '$2 == p && $3 == v && $4 == k' "$RUNS")
	l=$(cut -d, -f5 <<<"$rows" | median)
	g=$(cut -d, -f6 <<<"$rows" | median)
	r2=$(cut -d, -f7 <<<"$rows" | median)
	echo "$p,$v,$k,$l,$g,$r2" >>"$CSV"
	echo "bench=bsp-params p=$p v=$v kind=$k l=$l g=$g r2=$r2 median_of=$REPEAT"
done
# throughput ratio pems_alltoallv / MPI_Alltoallv per p and size
echo "p,bytes_per_rank,pems_secs,mpi_secs,pems_over_mpi" >"$A2A"
awk -F, 'NR > 1 && $4 == "alltoallv-pems" { pe[$1 "," $2 "," $5] = $6 }
	 NR > 1 && $4 == "alltoallv-mpi" { mp[$1 "," $2 "," $5] = $6 }
	 END { for (k in pe) if (k in mp) { split(k, f, ","); print f[2] "," f[3] "," pe[k] "," mp[k] } }' \
	"$PTS" | sort -t, -k1,1n -k2,2n >"$RESULTS_DIR/.a2a.tmp"
cut -d, -f1,2 "$RESULTS_DIR/.a2a.tmp" | awk '!seen[$0]++' | while IFS=, read -r p b; do
	rows=$(awk -F, -v p="$p" -v b="$b" '$1 == p && $2 == b' "$RESULTS_DIR/.a2a.tmp")
	pe=$(cut -d, -f3 <<<"$rows" | median)
	mp=$(cut -d, -f4 <<<"$rows" | median)
	echo "$p,$b,$pe,$mp,$(awk -v a="$pe" -v b="$mp" 'BEGIN { printf "%.4f", b / a }')" >>"$A2A"
done
rm -f "$RESULTS_DIR/.a2a.tmp"
awk -F, 'NR > 1 { printf "bench=bsp-params-alltoallv p=%s bytes_per_rank=%s pems_over_mpi=%s\n", $1, $2, $5 }' "$A2A"
echo "results: $CSV"
exit "$failed"
