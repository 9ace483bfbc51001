#!/bin/bash
# bench/sgd.sh - an SGD epoch of pems against one sequential scan of the
# same training file.
#
#   bash bench/sgd.sh [SIZE]       training data of about SIZE bytes (default 1G)
#
# Environment (all optional):
#   BUILD=build          pems-run and bench/sgd_scan are taken from here
#   MEM=1G               budget of every contender; each runs in
#                        bench/cgrun.sh with a cgroup limit of MEM + 10 %
#   BENCH_TMP=/var/tmp/pems-bench   data and scratch
#   RESULTS_DIR=bench/results/sgd   sgd.csv, sgd-summary.csv, logs/
#   EPOCHS=3 DIM=64      pems' epochs; features per row (rows = SIZE / (4 + 4*DIM))
#   REPEAT=1             rounds of all contenders (interleaved); medians
# Contenders, on one file from `pems-run gen --format dense --model linear
# --noise 0.5 --seed 42` (page cache dropped before each):
#   pems-sgd  pems-run sgd --model linear --sync local --epochs EPOCHS
#             --mem MEM; recorded per epoch (total / EPOCHS, start-up
#             included), note = the final train MSE
#   scan-c    build/bench/sgd_scan: the same mini-batch SGD (batch 64,
#             lr 0.05) in one plain C loop with a reader thread and
#             O_DIRECT: one epoch at the speed of a sequential read
#             overlapped with one core of arithmetic
#   scan-dd   dd bs=8M iflag=direct to /dev/null: the disk's sequential read
# Rows go to sgd.csv (bench/lib.sh format); ratios.csv gets
# scan-c/pems-sgd and scan-dd/pems-sgd (time per epoch: 1.0 = pems trains
# an epoch as fast as the peer scans the file once).
# Exit 0 if no contender failed, 1 otherwise.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
NAME=sgd.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
MEM=${MEM:-1G}
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/sgd}
EPOCHS=${EPOCHS:-3}
DIM=${DIM:-64}
REPEAT=${REPEAT:-1}
SIZE=${1:-1G}

MEM_B=$(to_bytes "$MEM") || die "bad MEM '$MEM'"
SIZE_B=$(to_bytes "$SIZE") || die "bad SIZE '$SIZE'"
LIMIT_B=$(awk -v m="$MEM_B" 'BEGIN { printf "%.0f", m * 1.1 }')
ROWS=$((SIZE_B / (4 + 4 * DIM)))
((ROWS > 0)) || die "SIZE $SIZE holds no row of dimension $DIM"
PEMS_RUN=$BUILD/pems-run
SCAN=$BUILD/bench/sgd_scan
[[ -x "$PEMS_RUN" && -x "$SCAN" ]] || die "$PEMS_RUN or $SCAN missing (make all)"

D=$BENCH_TMP/sgd
L=$RESULTS_DIR/logs
CSV=$RESULTS_DIR/sgd.csv
mkdir -p "$D" "$L" || die "cannot create $D or $L"
trap 'rm -rf "$D"' EXIT
[[ ${APPEND:-0} == 1 ]] || rm -f "$CSV"	# a run replaces the CSV
csv_header "$CSV"
NFAIL=0

free=$(df -B1 --output=avail "$BENCH_TMP" | tail -n 1)
((free > SIZE_B + (1 << 30))) || die "needs $(human $((SIZE_B + (1 << 30)))) free in $BENCH_TMP"
DATA=$D/train.dense
msg "generating $ROWS rows x $DIM features ($(human "$SIZE_B")) in $DATA"
"$PEMS_RUN" gen --format dense --model linear --count "$ROWS" --dim "$DIM" --noise 0.5 \
	--seed 42 --quiet "$DATA" >"$L/sgd-gen.log" 2>&1 || die "gen failed (see $L/sgd-gen.log)"
BYTES=$(stat -c %s "$DATA")

for ((rep = 1; rep <= REPEAT; rep++)); do
	log=$L/sgd-pems-$BYTES.r$rep.log
	cg_measure "$LIMIT_B" "$log" "$PEMS_RUN" sgd --model linear --data "$DATA" --format dense \
		--sync local --epochs "$EPOCHS" --mem "$MEM_B" --tmp "$D" --out "$D/model.txt" \
		--stats-json "$RESULTS_DIR/sgd-pems-$BYTES.r$rep.json"
	mse=$(sed -n 's/.*train MSE \([0-9.e+-]*\).*/\1/p' "$log" | tail -n 1)
	total=$M_SECS
	M_SECS=$(awk -v s="$M_SECS" -v e="$EPOCHS" 'BEGIN { printf "%.3f", s / e }')
	record "$CSV" sgd pems-sgd "$BYTES" "$MEM_B" 1 "$rep" "epochs=$EPOCHS total_secs=$total mse=$mse"

	log=$L/sgd-scan-c-$BYTES.r$rep.log
	cg_measure "$LIMIT_B" "$log" "$SCAN" --model linear --batch 64 --lr 0.05 "$DATA"
	record "$CSV" sgd scan-c "$BYTES" "$MEM_B" 1 "$rep" \
		"mse=$(sed -n 's/.* loss=\([0-9.e+-]*\).*/\1/p' "$log")"

	log=$L/sgd-scan-dd-$BYTES.r$rep.log
	cg_measure "$LIMIT_B" "$log" dd if="$DATA" of=/dev/null bs=8M iflag=direct
	record "$CSV" sgd scan-dd "$BYTES" "$MEM_B" 1 "$rep"
done

SUM=$RESULTS_DIR/sgd-summary.csv
bench_summary "$CSV" "$SUM"
ratio_rows "$SUM" sgd pems-sgd scan-c
ratio_rows "$SUM" sgd pems-sgd scan-dd
echo "time per epoch (median secs); ratio = peer / pems-sgd (1.0: an epoch as fast as the peer's single pass)"
grep '^sgd,' "$RESULTS_DIR/ratios.csv" | column -t -s,
((NFAIL == 0))
