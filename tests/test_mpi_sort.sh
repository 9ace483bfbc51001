#!/bin/bash
# tests/test_mpi_sort.sh - pems-run sort under mpirun gives the same bytes
# as on one rank.
#
# For u64 (uniform and a 16-key duplicate-heavy input) and rec100 (stable:
# equal keys keep input order) files of about 20 MB, and one u64 file of
# 128 MB (enough message chunks in flight between ranks at once to catch
# transport reordering): sort without mpirun,
# then with `mpirun -np 2` and `-np 4` (--procs 16 --mem 256M, per-rank
# scratch --tmp DIR/s%r), and check that the outputs are byte-identical,
# that `pems-run verify --against` accepts them, and that no temporary
# output or scratch file is left behind.  Text: 8 MiB of lines (keys,
# -u) and of CSV sorted at 1, 2 and 4 ranks give the same bytes (lines:
# those of LC_ALL=C sort).
#
# Uses PEMS_RUN and PEMS_TEST_TMP from tests/run.sh (defaults: build/pems-run
# and a fresh dir under /work/scratch/mpi or /tmp).  Exit 77 (skip) without
# mpirun.
set -uo pipefail

if ! command -v mpirun >/dev/null 2>&1; then
	echo "test_mpi_sort: skip: mpirun not found; install openmpi-bin"
	exit 77
fi

NAME=test_mpi_sort
. "$(dirname "${BASH_SOURCE[0]}")/mpi_script.sh"	# RUN, T, fail, now, secs, die, on_ranks
STEP_TIMEOUT=${PEMS_MPI_STEP_TIMEOUT:-180}

# sort_with NP FMT IN OUT: NP=1 runs without mpirun
sort_with() {
	on_ranks "$1" "sort $2 $(basename "$3")" "$RUN" sort --format "$2" --procs 16 \
		--mem 256M --tmp "$T/s%r" --quiet "$3" "$4"
}

# check FMT NAME GEN-ARGS...: gen, sort at 1/2/4 ranks, compare, verify
check() {
	local fmt=$1 name=$2 np out left
	shift 2
	local in=$T/$name.in

	if ! "$RUN" gen --format "$fmt" --quiet "$@" "$in" >"$T/log" 2>&1; then
		die "gen $fmt $*: $(tail -n 3 "$T/log")"
		return
	fi
	echo "$name: $(stat -c %s "$in") bytes ($fmt $*)"
	if ! sort_with 1 "$fmt" "$in" "$T/$name.out1"; then
		die "$name: sort on one rank failed"
		return
	fi
	for np in 2 4; do
		out=$T/$name.out$np
		if ! sort_with "$np" "$fmt" "$in" "$out"; then
			die "$name: sort with mpirun -np $np failed"
			continue
		fi
		if ! cmp "$T/$name.out1" "$out"; then
			die "$name: output of -np $np differs from the one-rank output"
		fi
		if ! "$RUN" verify --format "$fmt" --quiet "$out" --against "$in" >"$T/log" 2>&1; then
			die "$name: verify of -np $np output: $(tail -n 2 "$T/log")"
		fi
		rm -f "$out"
	done
	if ! "$RUN" verify --format "$fmt" --quiet "$T/$name.out1" --against "$in" >"$T/log" 2>&1; then
		die "$name: verify of the one-rank output: $(tail -n 2 "$T/log")"
	fi
	left=$(find "$T" -name '*.pems-tmp*' -o -path "$T/s*/*" -type f | head -n 5)
	[[ -z "$left" ]] || die "$name: files left behind: $left"
	rm -f "$in" "$T/$name.out1"
}

check u64 u64-uniform --count 2560K --seed 7
check u64 u64-dup --count 512K --seed 8 --skew dup
check rec100 rec100-uniform --count 200K --seed 9
check u64 u64-128M --count 16M --seed 10

# check_text FMT NAME SORT-ARGS...: 8 MiB of gen text sorted at 1/2/4
# ranks, each output equal to the one-rank one (and lines to LC_ALL=C sort)
check_text() {
	local fmt=$1 name=$2 np in=$T/$2.in
	shift 2
	"$RUN" gen --format "$fmt" --size 8M --quiet "$in" >"$T/log" 2>&1 || { die "gen $fmt"; return; }
	for np in 1 2 4; do
		if ! on_ranks "$np" "sort $name" "$RUN" sort --format "$fmt" --procs 16 --mem 256M \
			--tmp "$T/s%r" --quiet "$@" "$in" "$T/$name.out$np"; then
			die "$name: sort with $np ranks failed"
		elif ((np > 1)) && ! cmp "$T/$name.out1" "$T/$name.out$np"; then
			die "$name: output of -np $np differs from the one-rank output"
		fi
	done
	if [[ $fmt == lines ]] && ! LC_ALL=C sort "$@" "$in" | cmp - "$T/$name.out1"; then
		die "$name: differs from LC_ALL=C sort $*"
	fi
	rm -f "$in" "$T/$name".out*
}

check_text lines lines-keys -t, -k2,2n -k1,1
check_text lines lines-unique -u -t, -k1,1
check_text csv csv-price --key price:num:desc --key name

rm -rf "$T"/s[0-9]* "$T/log"
if ((fail)); then
	echo "test_mpi_sort: FAILED"
	exit 1
fi
echo "test_mpi_sort: ok"
exit 0
