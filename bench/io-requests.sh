#!/bin/bash
# bench/io-requests.sh - what the block layer makes of 1 MiB direct I/O:
# device requests and requeues per MiB for pems' buffers and fio's.
#
#   bash bench/io-requests.sh [SIZE [DIR]]    SIZE like 512M (default),
#                                             DIR the scratch directory
#
# Environment (all optional): BUILD=build, QDS="1 4 16", OPS="read write",
# DEV (the disk under DIR, found with df), RESULTS_DIR (io-requests.csv).
#
# Throughput on a shared VM disk varies 2-3x from run to run; these counts
# do not.  For each contender, op and queue depth, `perf record` takes the
# block tracepoints of the whole machine while it moves SIZE bytes of one
# file with 1 MiB O_DIRECT requests (page cache dropped first):
#   pems-uring        io_bench, buffers from pems_io_alloc (huge pages)
#   pems-uring-nothp  the same with PEMS_NO_THP=1 (4 KiB pages, the engine
#                     before 2026-12-03)
#   fio-io_uring      fio 3.x, its default buffers (4 KiB pages)
# Only requests that start inside the file's extents (filefrag) are
# counted, so other jobs on the disk do not.  Per MiB moved it prints:
#   issued    requests handed to the driver (a 1 MiB bio split in two
#             counts 2; neighbours merged into one request count 1)
#   requeued  of those, bounced back because the device queue was full
#             (virtio ring out of descriptors) and issued again later
# Needs root, perf (Debian: linux-perf), fio and filefrag (e2fsprogs).  Exit 0 on success.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IO_BENCH=$BUILD/bench/io_bench
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/io}
QDS=${QDS:-1 4 16}
OPS=${OPS:-read write}
SIZE=${1:-512M}
DIR=${2:-/var/tmp/pems-bench}

msg() { echo "io-requests.sh: $*" >&2; }
die() { msg "error: $*"; exit 1; }

[[ -x $IO_BENCH ]] || die "$IO_BENCH not found; run make"
command -v perf >/dev/null || die "perf not found (Debian package linux-perf)"
command -v fio >/dev/null || die "fio not found (Debian package fio)"
((EUID == 0)) || die "needs root (system-wide block tracepoints, drop_caches)"
mkdir -p "$DIR" "$RESULTS_DIR"
DEV=${DEV:-$(df --output=source "$DIR" | tail -1)}
MAJMIN=$(stat -L -c '%t,%T' "$DEV" 2>/dev/null) || die "cannot stat $DEV; set DEV"
MAJMIN="$((16#${MAJMIN%,*})),$((16#${MAJMIN#*,}))"
FILE=$DIR/pems-io-requests.$$
TMP=$(mktemp -d)
trap 'rm -rf "$FILE" "$TMP"' EXIT
CSV=$RESULTS_DIR/io-requests.csv
# a run replaces the CSV (APPEND=1: adds to it)
[[ ${APPEND:-0} == 1 && -f $CSV ]] || echo "date,host,engine,qd,op,mib,issued_per_mib,requeued_per_mib" >"$CSV"


# The file's sectors on the disk ("start end" lines, 512-byte units).
extents() {
	local part=0 name
	name=$(basename "$(readlink -f "$DEV")")
	[[ -r /sys/class/block/$name/start ]] && part=$(cat "/sys/class/block/$name/start")
	filefrag -b512 -e "$FILE" | awk -v p="$part" -F'[:. ]+' '
		$2 ~ /^[0-9]+$/ && NF >= 7 { print $5 + p, $6 + p + 1 }'
}

# count: read `perf script` output on stdin, print "issued requeued" for
# requests that start inside the file's extents ($TMP/extents).
count() {
	awk -v dev="$MAJMIN" '
	FNR == NR { lo[NR] = $1; hi[NR] = $2; next_ = NR; next }
	{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^block:block_rq_(issue|requeue):$/) break
		if (i > NF || $(i + 1) != dev) next
		for (j = i + 2; j <= NF; j++)
			if ($j == "+") break
		s = $(j - 1)
		for (k = 1; k <= next_; k++)
			if (s >= lo[k] && s < hi[k]) {
				n[$i]++
				break
			}
	}
	END { printf "%d %d\n", n["block:block_rq_issue:"], n["block:block_rq_requeue:"] }
	' "$TMP/extents" -
}

run() {	# run ENGINE QD OP COMMAND...
	local engine=$1 qd=$2 op=$3 mib=$MIB iss req
	shift 3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	perf record -q -a -o "$TMP/perf.data" -e block:block_bio_queue \
		-e block:block_rq_issue -e block:block_rq_requeue -- "$@" >/dev/null 2>&1 ||
		die "$engine qd=$qd $op failed"
	read -r iss req < <(perf script -i "$TMP/perf.data" 2>/dev/null | count)
	((iss > 0)) || die "$engine qd=$qd $op: no requests traced"
	awk -v e="$engine" -v q="$qd" -v o="$op" -v m="$mib" -v i="$iss" -v r="$req" 'BEGIN {
		printf "engine=%s qd=%s op=%s mib=%d issued_per_mib=%.2f requeued_per_mib=%.2f\n",
		       e, q, o, m, i / m, r / m }'
	echo "$(date +%F),$(uname -n),$engine,$qd,$op,$mib,$(awk -v m="$mib" -v i="$iss" -v r="$req" \
		'BEGIN { printf "%.3f,%.3f", i / m, r / m }')" >>"$CSV"
}

"$IO_BENCH" -e uring -q 16 -o write -s "$SIZE" "$FILE" >/dev/null || die "cannot write $FILE"
extents >"$TMP/extents"
[[ -s $TMP/extents ]] || die "cannot map $FILE to sectors (filefrag)"
MIB=$(( $(stat -c %s "$FILE") >> 20 ))

for op in $OPS; do
	for qd in $QDS; do
		run pems-uring "$qd" "$op" "$IO_BENCH" -e uring -q "$qd" -o "$op" -s "$SIZE" "$FILE"
		run pems-uring-nothp "$qd" "$op" env PEMS_NO_THP=1 \
			"$IO_BENCH" -e uring -q "$qd" -o "$op" -s "$SIZE" "$FILE"
		run fio-io_uring "$qd" "$op" fio --name=io --filename="$FILE" --size="$SIZE" \
			--ioengine=io_uring --direct=1 --bs=1M --iodepth="$qd" --rw="$op" \
			--fallocate=none --numjobs=1
	done
done
msg "results in $CSV"
