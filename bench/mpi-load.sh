#!/bin/bash
# bench/mpi-load.sh - what loading Open MPI costs a one-rank run with a cold
# page cache: pems-run of two builds side by side, e.g. one that links
# libmpi (before the plugin) and one that loads it only under mpirun.
#
#   bash bench/mpi-load.sh OLD_PEMS_RUN NEW_PEMS_RUN [SIZE] [REPS]
#
# Writes a u64 input of SIZE (default 64M) bytes to $DIR (default
# /work/scratch/mpi-load, else /tmp/pems-mpi-load), then REPS (default 7)
# rounds; each round runs both binaries, in alternating order, twice:
# `pems-run --version` (nothing but exec, dynamic loading and exit) and
# `pems-run sort --format u64` of the input, each after
# `sync; echo 3 > /proc/sys/vm/drop_caches`.  One line per run:
#   bench=mpi-load bin=old|new what=version|sort bytes=B secs=S majflt=F
#         read=R mpi_cached=C
# F and R are the process's major page faults and bytes read from the
# file systems (GNU time %F, %I x 512), and C how many bytes of libmpi
# were still in the page cache after the drop (fincore: pages that some
# running process maps cannot be dropped, and then the old binary's
# start is not cold; check it is 0).
# then the medians: bench=mpi-load-median bin=... what=... runs=N secs=S
# Needs root (drop_caches).  Run it under /work/wt/lock.sh quiet.
set -uo pipefail

NAME=mpi-load
die() { echo "$NAME: error: $*" >&2; exit 1; }
(($# >= 2)) || die "usage: bench/mpi-load.sh OLD_PEMS_RUN NEW_PEMS_RUN [SIZE] [REPS]"
OLD=$1 NEW=$2 SIZE=${3:-64M} REPS=${4:-7}
[[ -x "$OLD" && -x "$NEW" ]] || die "$OLD or $NEW is not executable"
((EUID == 0)) || die "needs root to drop the page cache"
base=/tmp
[[ -d /work/scratch ]] && base=/work/scratch
DIR=${DIR:-$base/mpi-load}
LIBMPI=$(ldd "$OLD" | awk '$1 ~ /^libmpi\.so/ { print $3 }')
[[ -n "$LIBMPI" ]] || LIBMPI=$(ldconfig -p | awk '$1 ~ /^libmpi\.so\./ { print $NF; exit }')
command -v fincore >/dev/null || die "fincore not found (util-linux)"

mkdir -p "$DIR/tmp" || die "cannot create $DIR"
trap 'rm -rf "$DIR/in" "$DIR/out" "$DIR/tmp" "$DIR/time"' EXIT

bytes=$(numfmt --from=iec "$SIZE") || die "bad SIZE $SIZE"
"$NEW" gen --format u64 --count $((bytes / 8)) --quiet "$DIR/in" || die "gen failed"
ROWS=$DIR/rows
: >"$ROWS"

cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# one BIN LABEL WHAT: a cold run, one line
one() {
	local bin=$1 label=$2 what=$3 t0 t1 rc cached
	cold
	cached=$(fincore --bytes --noheadings --output RES "$LIBMPI")
	t0=$EPOCHREALTIME
	if [[ $what == version ]]; then
		/usr/bin/time -f "%F %I" -o "$DIR/time" "$bin" --version >/dev/null
	else
		/usr/bin/time -f "%F %I" -o "$DIR/time" "$bin" sort --format u64 --quiet \
			--tmp "$DIR/tmp" "$DIR/in" "$DIR/out"
	fi
	rc=$?
	t1=$EPOCHREALTIME
	((rc == 0)) || die "$label $what exited $rc"
	read -r flt blk <"$DIR/time"
	awk -v l="$label" -v w="$what" -v b="$bytes" -v a="$t0" -v z="$t1" -v c="$cached" \
		-v f="$flt" -v i="$blk" \
		'BEGIN { printf "bench=mpi-load bin=%s what=%s bytes=%s secs=%.3f majflt=%d read=%d mpi_cached=%d\n",
			 l, w, b, z - a, f, i * 512, c }' |
		tee -a "$ROWS"
	rm -f "$DIR/out"
}

for ((r = 0; r < REPS; r++)); do
	for what in version sort; do
		if ((r % 2 == 0)); then
			one "$OLD" old $what; one "$NEW" new $what
		else
			one "$NEW" new $what; one "$OLD" old $what
		fi
	done
done
for what in version sort; do
	for label in old new; do
		for key in secs majflt read; do
			grep " bin=$label what=$what " "$ROWS" | sed "s/.* $key=//; s/ .*//" | sort -g |
				awk '{ v[NR] = $1 } END { printf "%s ", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
		done | awk -v l="$label" -v w="$what" -v n="$REPS" \
			'{ printf "bench=mpi-load-median bin=%s what=%s runs=%d secs=%.3f majflt=%d read=%d\n", l, w, n, $1, $2, $3 }'
	done
done
