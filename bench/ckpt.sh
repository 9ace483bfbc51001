#!/bin/bash
# bench/ckpt.sh - cost of superstep checkpoints and block checksums on the
# u64 sort (issue 8, acceptance 5: <= 5 % at 8 GiB).
#
#   bash bench/ckpt.sh [SIZE]          e.g. bash bench/ckpt.sh 8G
#   (env: MEM=1G REPS=3 MODES="..." BENCH_TMP=DIR BUILD=build;
#    REPS=0 only prints the scratch space needed and checks it)
#
# Sorts one input REPS times in each mode, the modes interleaved (defaults,
# every1, nockpt, nocrc, bare, defaults, ...) so that a noisy machine affects them
# alike; the page cache is dropped before every run (as root):
#   defaults  what a user gets: checkpoints at the first barrier 60 s
#             (PEMS_CHECKPOINT_SECS) after the last one, CRC-32C on every
#             spilled block
#   nockpt    --checkpoint-every off (no re-exec, scratch unlinked at once)
#   nocrc     PEMS_CHECKSUM=0 (checkpoints as in defaults)
#   bare      both off: the reference for the overhead figures
#   every1    a checkpoint at every barrier (the worst case; a sort shorter
#             than 60 s writes none with the defaults)
# One line per run:
#   algo=sort mode=M bytes=B mem=M secs=S cpu_secs=S ckpts=N ckpt_secs=S ctx_written=B msg_written=B peak_rss=B rep=R
# then per mode the median wall and CPU (user + sys) seconds and the
# overhead against bare (and the checkpoint and checksum shares: defaults
# vs nockpt, defaults vs nocrc).
# A run that writes no checkpoint (shorter than 60 s) measures only the
# re-exec and the scratch naming; the ckpts= field says how many it wrote.
#
# Scratch: the input (SIZE), the output (SIZE) and the sort's scratch
# (message logs about 1.1 x SIZE, contexts and the checkpoint state are
# small): the script needs 3.2 x SIZE free in BENCH_TMP (26 GiB at 8G) and
# refuses to start otherwise.  The input is kept for a later run (delete
# BENCH_TMP/ckpt-u64-SIZE.in when done); each output is deleted at once.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
NAME=bench/ckpt.sh
ROOT=$PWD
. bench/lib.sh
BUILD=${BUILD:-build}
case $BUILD in /*) RUN=$BUILD/pems-run ;; *) RUN=$PWD/$BUILD/pems-run ;; esac
SIZE=${1:-${SIZE:-1G}}
MEM=${MEM:-1G}
REPS=${REPS:-3}
T=${BENCH_TMP:-/tmp/pems-ckpt-bench}
MODES=${MODES:-defaults every1 nockpt nocrc bare}
[[ -x $RUN ]] || die "$RUN is not built (make)"
bytes=$(to_bytes "$SIZE") || die "bad SIZE '$SIZE' (e.g. 2G, 8G)"
count=$((bytes / 8))
bytes=$((count * 8))
mkdir -p "$T" || die "cannot create $T"
IN=$T/ckpt-u64-$SIZE.in
OUT=$T/ckpt-u64.out

# scratch check: what is missing of 3.2 x SIZE (the input counts if present)
need=$((bytes * 32 / 10))
have=0
[[ -f $IN ]] && have=$(stat -c %s "$IN")
free=$(($(df -P -B1 "$T" | awk 'NR == 2 { print $4 }') + have))
msg "SIZE=$SIZE ($bytes bytes) MEM=$MEM REPS=$REPS MODES='$MODES' in $T: needs $(human $need) of scratch, $(human $free) available"
((free >= need)) || die "not enough space in $T: need $(human $need) (input, output, message logs), have $(human $free); set BENCH_TMP"
((REPS >= 1)) || exit 0	# REPS=0: only say what it needs

if ((have != bytes)); then
	"$RUN" gen --format u64 --count "$count" --seed 1 --quiet "$IN" || die "gen failed"
fi

median() { tr ' ' '\n' | sort -n | awk 'NF { a[n++] = $1 } END { if (n) print a[int((n - 1) / 2)] }'; }
field() { sed -n "1s/.*\"$1\": \\([0-9]*\\).*/\\1/p" "$T/stats.json"; }	# top level: line 1

declare -A times cpus
for ((r = 1; r <= REPS; r++)); do
	for mode in $MODES; do
		env=() opt=()
		case $mode in
		defaults) ;;
		nockpt) opt=(--checkpoint-every off) ;;
		nocrc) env=(PEMS_CHECKSUM=0) ;;
		bare) opt=(--checkpoint-every off) env=(PEMS_CHECKSUM=0) ;;
		every1) opt=(--checkpoint-every 1) ;;
		*) die "unknown mode $mode (defaults nockpt nocrc bare every1)" ;;
		esac
		rm -rf "$OUT" "$OUT.pems-ckpt" "$T/stats.json"
		sync
		echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
		t0=${EPOCHREALTIME/[.,]/}
		/usr/bin/time -f "cpu %U %S" -o "$T/time" env "${env[@]}" PEMS_STATS=2 "$RUN" sort \
			--format u64 --mem "$MEM" --tmp "$T" "${opt[@]}" --stats-json "$T/stats.json" \
			--quiet "$IN" "$OUT" 2>"$T/stderr" || {
			tail -3 "$T/stderr" >&2
			die "sort failed ($mode)"
		}
		t1=${EPOCHREALTIME/[.,]/}
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
		cpu=$(awk '$1 == "cpu" { printf "%.2f", $2 + $3 }' "$T/time")
		nck=$(grep -c '^pems: checkpoint at' "$T/stderr")
		cks=$(awk '/^pems: checkpoint at/ { sub(/s,$/, "", $6); s += $6 } END { printf "%.3f", s }' "$T/stderr")
		echo "algo=sort mode=$mode bytes=$bytes mem=$MEM secs=$secs cpu_secs=$cpu ckpts=$nck ckpt_secs=$cks ctx_written=$(field ctx_written) msg_written=$(field msg_written) peak_rss=$(field peak_rss) rep=$r"
		grep '^pems: checkpoint at' "$T/stderr" | sed 's/^/# /'
		times[$mode]+="$secs "
		cpus[$mode]+="$cpu "
		rm -f "$OUT"
	done
done

declare -A med mcpu
for mode in $MODES; do
	med[$mode]=$(median <<<"${times[$mode]}")
	mcpu[$mode]=$(median <<<"${cpus[$mode]}")
done
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", (a / b - 1) * 100 }'; }
for mode in $MODES; do
	line="median mode=$mode secs=${med[$mode]} cpu_secs=${mcpu[$mode]} runs=$REPS"
	[[ -n ${med[bare]:-} ]] &&
		line+=" vs_bare: secs $(pct "${med[$mode]}" "${med[bare]}") cpu $(pct "${mcpu[$mode]}" "${mcpu[bare]}")"
	echo "$line"
done
share() {	# share LABEL A B
	[[ -n ${med[$2]:-} && -n ${med[$3]:-} ]] &&
		echo "$1 ($2 vs $3): secs $(pct "${med[$2]}" "${med[$3]}"), cpu $(pct "${mcpu[$2]}" "${mcpu[$3]}")"
	return 0
}
share "overhead of checkpoints+checksums" defaults bare
share "share of checkpoints" defaults nockpt
share "share of checksums" defaults nocrc
share "checkpoint at every barrier" every1 bare
exit 0
