#!/bin/bash
# bench/ckpt.sh - cost of superstep checkpoints on the u64 sort.
#
#   SIZE=8G MEM=1G BENCH_TMP=/scratch REPS=3 BUILD=build bash bench/ckpt.sh
#
# Sorts one input REPS times in each mode, the modes interleaved (off,
# auto, every 1, off, ...) so that a noisy machine affects them alike:
#   off    --checkpoint-every off (no re-exec, scratch unlinked at once)
#   auto   the default: a checkpoint at the first barrier 60 s after the
#          last one (PEMS_CHECKPOINT_SECS)
#   every1 a checkpoint at every barrier (the worst case)
# One line per run:
#   algo=sort mode=auto bytes=... secs=... ckpts=N ckpt_secs=... ctx_written=... msg_written=...
# and the median seconds per mode with the ratio to off.  Needs about
# 2*SIZE + SIZE*1.1 free in BENCH_TMP (input, output, message logs); the
# output of each run is deleted before the next.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
RUN=$PWD/$BUILD/pems-run
SIZE=${SIZE:-1G}
MEM=${MEM:-1G}
REPS=${REPS:-3}
T=${BENCH_TMP:-/tmp/pems-ckpt-bench}
MODES=${MODES:-off auto every1}
mkdir -p "$T" || exit 1
IN=$T/ckpt-u64-$SIZE.in
OUT=$T/ckpt-u64.out

count=$(numfmt --from=iec "$SIZE")
count=$((count / 8))
if [[ ! -f $IN ]] || (($(stat -c %s "$IN") != count * 8)); then
	"$RUN" gen --format u64 --count "$count" --seed 1 --quiet "$IN" || exit 1
fi

declare -A times
for ((r = 1; r <= REPS; r++)); do
	for mode in $MODES; do
		case $mode in
		off) opt=(--checkpoint-every off) ;;
		auto) opt=() ;;
		every1) opt=(--checkpoint-every 1) ;;
		*) echo "bench/ckpt.sh: unknown mode $mode" >&2; exit 2 ;;
		esac
		rm -rf "$OUT" "$OUT.pems-ckpt"
		sync
		echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
		t0=${EPOCHREALTIME/[.,]/}
		PEMS_STATS=2 "$RUN" sort --format u64 --mem "$MEM" --tmp "$T" "${opt[@]}" \
			--stats-json "$T/stats.json" --quiet "$IN" "$OUT" 2>"$T/stderr" || {
			echo "bench/ckpt.sh: sort failed ($mode):" >&2
			tail -3 "$T/stderr" >&2
			exit 1
		}
		t1=${EPOCHREALTIME/[.,]/}
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
		ckw=$(grep -o '"ctx_written": [0-9]*' "$T/stats.json" | head -1 | grep -o '[0-9]*$')
		mw=$(grep -o '"msg_written": [0-9]*' "$T/stats.json" | head -1 | grep -o '[0-9]*$')
		nck=$(grep -c '^pems: checkpoint at' "$T/stderr")
		cks=$(awk '/^pems: checkpoint at/ { s += $6 } END { printf "%.3f", s }' "$T/stderr")
		echo "algo=sort mode=$mode bytes=$((count * 8)) mem=$MEM secs=$secs ckpts=$nck ckpt_secs=$cks ctx_written=$ckw msg_written=$mw rep=$r"
		grep '^pems: checkpoint at' "$T/stderr" | sed 's/^/# /'
		times[$mode]+="$secs "
		rm -f "$OUT"
	done
done
base=$(tr ' ' '\n' <<<"${times[off]:-}" | sort -n | awk 'NF { a[n++] = $1 } END { if (n) print a[int((n - 1) / 2)] }')
for mode in $MODES; do
	med=$(tr ' ' '\n' <<<"${times[$mode]}" | sort -n | awk 'NF { a[n++] = $1 } END { print a[int((n - 1) / 2)] }')
	if [[ -n $base ]]; then
		echo "median mode=$mode secs=$med ratio_to_off=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.3f", a / b }')"
	else
		echo "median mode=$mode secs=$med"
	fi
done
