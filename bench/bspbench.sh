#!/bin/bash
# bench/bspbench.sh - pems as a BSP machine in memory, in the classic
# style, beside Open MPI at the same p, in one run (issue 23):
#   bspbench      r, and g and l fitted over h-relations 0..H of 8-byte
#                 bsp_puts (bench/bspbench.c, a plain BSPlib program), on
#                 P VPs with k = P workers, contexts resident
#   mpi-barrier   MPI_Barrier at P ranks (bench/mpi/barrier.c)
#   alltoallv     pems_alltoallv (bsp_params a2a, v = P ranks) against
#                 MPI_Alltoallv (bench/mpi/alltoallv.c) at 64 KiB..64 MiB
#                 per rank
#
#   BUILD=build P=2 H=2048 ITERS=1000 bash bench/bspbench.sh
#
# Prints the bench= lines of each program (STYLE.md rule 10) and one
# summary line: bench=bspbench-vs-mpi p=.. l_us=.. barrier_us=..
# l_over_barrier=.. sweep_secs=..  Not a test: timings, no assertions.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
P=${P:-2}
H=${H:-2048}
ITERS=${ITERS:-1000}
A2A_SIZES=${A2A_SIZES:-64K,256K,1M,4M,16M,64M}
TMP=${BENCH_TMP:-$PWD/$BUILD/bench-tmp}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

err() { echo "bench/bspbench.sh: error: $*" >&2; exit 1; }
command -v mpicc >/dev/null 2>&1 || err "mpicc not found; install libopenmpi-dev"
make -s BUILD="$BUILD" "$BUILD/bench/bspbench" "$BUILD/bench/bsp_params" || err "cannot build"
mpicc -O2 -Wall -Wextra -o "$BUILD/bench/mpi_barrier" bench/mpi/barrier.c || err "cannot build mpi_barrier"
mpicc -O2 -Wall -Wextra -o "$BUILD/bench/mpi_alltoallv" bench/mpi/alltoallv.c || err "cannot build mpi_alltoallv"
mkdir -p "$TMP" || err "cannot create $TMP"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

t0=$(date +%s.%N)
bsp=$(PEMS_THREADS=$P PEMS_TMP=$TMP "$BUILD/bench/bspbench" "$P" "$H" "$ITERS" | grep '^bench=bspbench ')
t1=$(date +%s.%N)
echo "$bsp"
bar=$(mpirun --oversubscribe -np "$P" "$BUILD/bench/mpi_barrier" 20000 | grep '^bench=')
echo "$bar"
mpirun --oversubscribe -np "$P" -x PEMS_TMP="$TMP" "$BUILD/bench/bsp_params" a2a --sizes "$A2A_SIZES" \
	--tmp "$TMP" --points 2>/dev/null | grep '^bench='
mpirun --oversubscribe -np "$P" "$BUILD/bench/mpi_alltoallv" --sizes "$A2A_SIZES" --points | grep '^bench='
l=$(field l "$bsp")
b=$(field secs "$bar")
echo "bench=bspbench-vs-mpi p=$P l_us=${l%us} barrier_us=$(awk -v b="$b" 'BEGIN { printf "%.3f", b * 1e6 }')" \
	"l_over_barrier=$(awk -v l="${l%us}" -v b="$b" 'BEGIN { printf "%.1f", l / (b * 1e6) }')" \
	"sweep_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
