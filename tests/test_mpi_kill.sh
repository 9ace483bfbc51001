#!/bin/bash
# tests/test_mpi_kill.sh - a rank that dies ends the whole job, promptly and
# without leaving output under the final name.
#
# Starts `mpirun -np 2 pems-run sort` on a 512 MiB u64 file (a few seconds
# of work here), waits until the sort is under way (its temporary output
# exists, so MPI is up on both ranks), then SIGKILLs rank 1's process --
# found by PID among mpirun's children through OMPI_COMM_WORLD_RANK in its
# environment, never by name.  Asserts that
#   - the whole job ends within 10 s of the kill, with non-zero status,
#   - stderr names the rank that died,
#   - no file exists under the final output name, and no rank survives.
# A temporary output (OUT.pems-tmp) left behind is reported, not failed:
# rank 1 cannot clean up after SIGKILL and the others are ended by mpirun.
#
# Uses PEMS_RUN and PEMS_TEST_TMP from tests/run.sh.  Needs about 1.5 GiB
# of scratch.  Exit 77 (skip) without mpirun.
set -uo pipefail

COUNT=${PEMS_KILL_COUNT:-64M}	# u64 records: 512 MiB
DEADLINE=10			# seconds from the kill to the end of the job

if ! command -v mpirun >/dev/null 2>&1; then
	echo "test_mpi_kill: skip: mpirun not found; install openmpi-bin"
	exit 77
fi
NAME=test_mpi_kill
. "$(dirname "${BASH_SOURCE[0]}")/mpi_script.sh"	# RUN, T, fail, now, secs, die
mkdir -p "$T/s0" "$T/s1" || exit 1

alive() { kill -0 "$1" 2>/dev/null; }
running() {	# running PID...: true if one of them exists and is not a zombie
	local p st
	for p in "$@"; do
		st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)
		[[ -n "$st" && "$st" != Z ]] && return 0
	done
	return 1
}

in=$T/kill.in
out=$T/kill.out
err=$T/mpirun.err
mpid=

# the ranks: mpirun's children that carry a world rank
rank_pids() {	# rank_pids MPIRUN_PID -> "pid rank" lines
	local c r
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		r=$(tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null |
		    sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
		[[ -n "$r" ]] && echo "$c $r"
	done
}

cleanup() {	# whatever we started and is still running, by PID
	local p
	if [[ -n "$mpid" ]] && alive "$mpid"; then
		for p in $(rank_pids "$mpid" | cut -d' ' -f1); do kill -KILL "$p" 2>/dev/null; done
		kill -KILL "$mpid" 2>/dev/null
		wait "$mpid" 2>/dev/null
	fi
	rm -f "$in" "$out" "$out.pems-tmp"
	rm -rf "$T/s0" "$T/s1"
	[[ -n "${PEMS_TEST_TMP:-}" ]] || rm -rf "$T"
}
trap cleanup EXIT	# replaces mpi_script.sh's: also ends the job we started

if ! "$RUN" gen --format u64 --count "$COUNT" --seed 3 --quiet "$in" >"$T/gen.log" 2>&1; then
	echo "test_mpi_kill: FAIL: gen: $(tail -n 3 "$T/gen.log")"
	exit 1
fi
echo "input: $(stat -c %s "$in") bytes"

t_start=$(now)
mpirun --oversubscribe --bind-to none -np 2 \
	"$RUN" sort --format u64 --procs 16 --mem 256M --tmp "$T/s%r" --quiet "$in" "$out" \
	</dev/null >"$T/mpirun.out" 2>"$err" &
mpid=$!

# wait until both ranks run and the sort has created its temporary output
victim=
for ((i = 0; i < 300; i++)); do
	if ! alive "$mpid"; then
		break
	fi
	victim=$(rank_pids "$mpid" | awk '$2 == 1 { print $1 }')
	if [[ -n "$victim" && -e "$out.pems-tmp" ]] && (($(rank_pids "$mpid" | wc -l) == 2)); then
		break
	fi
	victim=
	sleep 0.1
done
if [[ -z "$victim" ]]; then
	if alive "$mpid"; then
		die "the sort did not get under way within 30 s"
	else
		wait "$mpid"
		die "the job ended (exit $?) before it could be killed"
		sed 's/^/    | /' "$err" | tail -n 15
	fi
	exit 1
fi
sleep 1		# into the middle of the sort
if ! alive "$mpid" || ! alive "$victim"; then
	wait "$mpid"
	die "the job ended by itself (exit $?) $(secs "$t_start")s after the start, before the kill"
	sed 's/^/    | /' "$err" | tail -n 15
	exit 1
fi
others=$(rank_pids "$mpid" | awk '$2 != 1 { print $1 }')
echo "killing rank 1 (pid $victim) $(secs "$t_start")s after the start"
t_kill=$(now)
kill -KILL "$victim"

# the whole job (mpirun and every rank) must end within the deadline
while running "$mpid" $others; do
	if (($(awk -v a="$t_kill" -v b="$(now)" 'BEGIN { print (b - a > '"$DEADLINE"') }'))); then
		break
	fi
	sleep 0.05
done
if running "$mpid" $others; then
	die "the job is still running ${DEADLINE}s after rank 1 was killed (mpirun $mpid, ranks $others)"
	exit 1
fi
wait "$mpid"
rc=$?
mpid=
echo "job ended $(secs "$t_kill")s after the kill, exit status $rc"
((rc != 0)) || die "mpirun exited 0 although rank 1 was killed"
if ! grep -Eqi 'rank 1([^0-9]|$)' "$err"; then
	die "stderr does not name rank 1:"
	sed 's/^/    | /' "$err" | tail -n 15
else
	echo "stderr: $(grep -Ei 'rank 1([^0-9]|$)' "$err" | head -n 1)"
fi
[[ ! -e "$out" ]] || die "a file exists under the final output name $out"
if [[ -e "$out.pems-tmp" ]]; then
	echo "note: the temporary output $out.pems-tmp ($(stat -c %s "$out.pems-tmp") bytes) was left behind"
fi
if ((fail)); then
	echo "test_mpi_kill: FAILED"
	exit 1
fi
echo "test_mpi_kill: ok"
exit 0
