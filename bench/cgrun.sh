#!/bin/bash
# bench/cgrun.sh - run one command under a cgroup-v1 memory limit, measured.
#
#   bench/cgrun.sh [--bps RATE [--bps-dir DIR]] LIMIT -- CMD [ARGS...]
#
# LIMIT is bytes with an optional K/M/G/T suffix (binary: 1G = 2^30; a
# fraction like 1.1G is allowed).  The script
#   1. drops the page cache (sync; echo 3 > /proc/sys/vm/drop_caches) so that
#      every contender starts cold (PEMS_CG_NO_DROP=1 skips this),
#   2. creates a fresh memory group pems-bench-<pid> under the memory group
#      this script runs in (the v1 root /sys/fs/cgroup/memory when run from
#      a root shell) with memory.limit_in_bytes=LIMIT and, if present,
#      memory.memsw.limit_in_bytes=LIMIT (so swap cannot hide usage),
#   3. forks a child that moves itself into the group's cgroup.procs and
#      execs `/usr/bin/time -v CMD ARGS...` (time's report goes to a file,
#      the command's stdout/stderr pass through untouched),
#   4. prints one line on stderr:
#        cg_peak_bytes=<memory.max_usage_in_bytes> rss_kb=<max RSS> secs=<wall> rc=<exit>
#      cg_peak_bytes counts page cache charged to the group as well as
#      anonymous memory; rss_kb is the command's own peak resident set,
#   5. moves itself back to its original group, removes the group and exits
#      with the command's status (128+N if killed by signal N, e.g. 137 after
#      an OOM kill inside the group; the line then also says oom_kills=N).
# With --bps RATE (bytes/s, K/M/G suffixes as LIMIT) the command also runs
# in a fresh cgroup-v1 blkio group pems-bench-<pid> whose
# blkio.throttle.read_bps_device and write_bps_device limit the disk that
# holds DIR (--bps-dir; default the current directory) to RATE each way:
# a slower disk on the same machine.  Direct I/O is charged to the group,
# whether issued by read/write, libaio or io_uring (bench/compress.sh
# throttle verifies this with fio); buffered writes flushed later by the
# kernel's writeback threads are not (cgroup v1), so measure O_DIRECT
# traffic.  PEMS_CGROUP_BLKIO overrides the controller's mount point.
# Needs root and the cgroup-v1 memory controller (PEMS_CGROUP_MEM overrides
# its mount point).  Exit 125 if the group cannot be set up.
set -euo pipefail

die() { echo "cgrun.sh: error: $*" >&2; exit 125; }
usage() { echo "usage: $0 [--bps RATE [--bps-dir DIR]] LIMIT -- CMD [ARGS...]   (LIMIT, RATE like 1073741824, 512M, 1.1G)" >&2; exit 2; }

BPS_ARG= BPS_DIR=.
while [[ ${1:-} == --bps || ${1:-} == --bps-dir ]]; do
	(($# >= 2)) || usage
	if [[ $1 == --bps ]]; then BPS_ARG=$2; else BPS_DIR=$2; fi
	shift 2
done
(($# >= 3)) || usage
LIMIT_ARG=$1
[[ "$2" == "--" ]] || usage
shift 2

to_bytes() {	# to_bytes 1.1G -> 1181116006
	awk -v s="$1" 'BEGIN {
		if (s !~ /^[0-9]+(\.[0-9]+)?[KkMmGgTt]?[Bb]?$/) exit 1
		sub(/[Bb]$/, "", s)
		m = 1; u = substr(s, length(s), 1)
		if (u ~ /[Kk]/) m = 1024; else if (u ~ /[Mm]/) m = 1024^2
		else if (u ~ /[Gg]/) m = 1024^3; else if (u ~ /[Tt]/) m = 1024^4
		if (m > 1) s = substr(s, 1, length(s) - 1)
		printf "%.0f\n", s * m }'
}
LIMIT=$(to_bytes "$LIMIT_ARG") || die "bad LIMIT '$LIMIT_ARG': want bytes with optional K/M/G/T suffix"
((LIMIT >= 1048576)) || die "LIMIT $LIMIT_ARG is below 1 MiB"

BPS=
if [[ -n $BPS_ARG ]]; then
	BPS=$(to_bytes "$BPS_ARG") || die "bad --bps '$BPS_ARG': want bytes/s with optional K/M/G suffix"
	((BPS >= 1048576)) || die "--bps $BPS_ARG is below 1 MiB/s"
fi

CGMEM=${PEMS_CGROUP_MEM:-/sys/fs/cgroup/memory}
[[ -f "$CGMEM/memory.limit_in_bytes" ]] ||
	die "no cgroup-v1 memory controller at $CGMEM (set PEMS_CGROUP_MEM)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time missing: run scripts/deps.sh (package 'time')"

# Our own memory group, relative to the controller root ("/" for the root).
ORIG_REL=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
[[ -n "$ORIG_REL" ]] || ORIG_REL=/
ORIG=$CGMEM${ORIG_REL%/}
[[ -f "$ORIG/cgroup.procs" ]] || ORIG=$CGMEM
CG=$ORIG/pems-bench-$$

# blkio_dev DIR: MAJ:MIN of the whole disk holding DIR (throttling rules
# apply to disks, not partitions)
blkio_dev() {
	local dev
	dev=$(findmnt -no MAJ:MIN -T "$1" | tr -d ' ') && [[ -n $dev ]] || return 1
	if [[ -e /sys/dev/block/$dev/partition ]]; then
		dev=$(cat "$(readlink -f "/sys/dev/block/$dev")/../dev") || return 1
	fi
	echo "$dev"
}
BLK=
if [[ -n $BPS ]]; then
	CGBLK=${PEMS_CGROUP_BLKIO:-/sys/fs/cgroup/blkio}
	[[ -f "$CGBLK/blkio.throttle.read_bps_device" ]] ||
		die "no cgroup-v1 blkio controller at $CGBLK (set PEMS_CGROUP_BLKIO)"
	BDEV=$(blkio_dev "$BPS_DIR") || die "cannot find the disk holding $BPS_DIR"
	BLK=$CGBLK/pems-bench-$$
fi

TIMEF=$(mktemp "${TMPDIR:-/tmp}/cgrun-time.XXXXXX")
cleanup() {
	local pid
	rm -f "$TIMEF"
	if [[ -n $BLK && -d $BLK ]]; then
		while read -r pid; do
			echo "$pid" >"$CGBLK/cgroup.procs" 2>/dev/null || true
		done <"$BLK/cgroup.procs" 2>/dev/null || true
		rmdir "$BLK" 2>/dev/null || echo "cgrun.sh: warning: could not remove $BLK" >&2
	fi
	[[ -d "$CG" ]] || return 0
	# Anything still inside (there should be nothing) goes back home.
	while read -r pid; do
		echo "$pid" >"$ORIG/cgroup.procs" 2>/dev/null || true
	done <"$CG/cgroup.procs" 2>/dev/null || true
	rmdir "$CG" 2>/dev/null || echo "cgrun.sh: warning: could not remove $CG" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "${PEMS_CG_NO_DROP:-0}" != 1 ]]; then
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null ||
		echo "cgrun.sh: warning: cannot drop page cache (not root?); timings are warm" >&2
fi

mkdir "$CG" || die "cannot create $CG (need root)"
echo "$LIMIT" >"$CG/memory.limit_in_bytes" || die "cannot set $CG/memory.limit_in_bytes=$LIMIT"
if [[ -f "$CG/memory.memsw.limit_in_bytes" ]]; then
	echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes" ||
		die "cannot set $CG/memory.memsw.limit_in_bytes=$LIMIT"
fi

if [[ -n $BLK ]]; then
	mkdir "$BLK" || die "cannot create $BLK (need root)"
	echo "$BDEV $BPS" >"$BLK/blkio.throttle.read_bps_device" &&
		echo "$BDEV $BPS" >"$BLK/blkio.throttle.write_bps_device" ||
		die "cannot throttle $BDEV to $BPS bytes/s in $BLK"
fi

# The child joins the group(s) and becomes /usr/bin/time; the parent (this
# shell) stays outside so that it can report even after an OOM kill.
set +e
(
	echo "$BASHPID" >"$CG/cgroup.procs" || exit 125
	[[ -z $BLK ]] || echo "$BASHPID" >"$BLK/cgroup.procs" || exit 125
	exec /usr/bin/time -v -o "$TIMEF" -- "$@"
)
rc=$?
set -e

# GNU time exits with the command's status, or 128+signal if it was killed;
# its report says which ("Command terminated by signal N").
sig=$(sed -n 's/^Command terminated by signal \([0-9]*\).*/\1/p' "$TIMEF" | head -n 1)
[[ -n "$sig" ]] && rc=$((128 + sig))
rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$TIMEF")
secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {
	n = split($2, t, ":"); s = 0
	for (i = 1; i <= n; i++) s = s * 60 + t[i]
	printf "%.2f", s }' "$TIMEF")
peak=$(cat "$CG/memory.max_usage_in_bytes")
ooms=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control" 2>/dev/null)
if ((rc == 125)) && [[ ! -s "$TIMEF" ]]; then
	echo "cgrun.sh: error: could not move into $CG or start /usr/bin/time" >&2
fi
printf 'cg_peak_bytes=%s rss_kb=%s secs=%s rc=%s%s\n' "$peak" "${rss_kb:-0}" \
	"${secs:-0}" "$rc" "$( [[ -n "$ooms" && "$ooms" != 0 ]] && echo " oom_kills=$ooms")" >&2
exit "$rc"
