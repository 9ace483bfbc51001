#!/bin/bash
# tests/test_faults.sh - injected I/O faults end every job cleanly.
#
# For `pems-run sort`, `aggregate`, `sgd` and a plain BSP program
# (examples/spill, whose contexts really go to disk), runs the job once
# with a fault that never fires to learn how many reads and writes it
# makes, then once per fault (PEMS_IO_FAULT, io/io_fault.c): EIO on a
# read, EIO on a write, ENOSPC, a short write (and a short read), at the
# first request, in the middle, on given files (scratch contexts, the
# message store, the output) and from some point on.  Each faulted run
# must
#   - end within $LIMIT seconds (no hang) with exit status 1,
#   - say why on stderr ("error: ... Input/output error", "No space left
#     on device", "short ..."),
#   - leave nothing under the final output name and no temporary output,
#   - leave the input unchanged (size, mtime; checksum after each job)
#     and no scratch files in its --tmp directory.
# With mpirun, the sort is also faulted at 2 ranks (the other rank must
# end too).
#
#   PEMS_FAULTS_LONG=1  more fault points per job (hand-run form)
#
# Uses PEMS_RUN, PEMS_BUILD and PEMS_TEST_TMP from tests/run.sh.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PEMS_BUILD:-$ROOT/build}
RUN=${PEMS_RUN:-$BUILD/pems-run}
SPILL=$BUILD/examples/spill
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
LIMIT=${PEMS_FAULTS_LIMIT:-60}
LONG=${PEMS_FAULTS_LONG:-0}

for b in "$RUN" "$SPILL"; do
	if [[ ! -x "$b" ]]; then
		echo "test_faults: error: $b is not built (make all)" >&2
		exit 1
	fi
done
if [[ -n "${PEMS_TEST_TMP:-}" ]]; then
	T=$PEMS_TEST_TMP
else
	T=$(mktemp -d "${TMPDIR:-/tmp}/test_faults.XXXXXX") || exit 1
fi
S=$T/scratch
mkdir -p "$S" || exit 1
unset PEMS_IO_FAULT

nrun=0 nfail=0
fail() { echo "test_faults: FAIL: $*"; nfail=$((nfail + 1)); }
stamp() { stat -c '%s %Y' "$1"; }

# OUT "-": the job has no output file.
# run_ok NAME OUT CMD...: the fault-free run; sets READS and WRITES.
run_ok() {
	local name=$1 out=$2 log=$T/$1.ok.log
	shift 2
	[[ "$out" == - ]] && out=$T/no-output
	rm -f "$out"
	if ! PEMS_IO_FAULT=any:eio:999999999999 timeout "$LIMIT" "$@" >"$log" 2>&1; then
		fail "$name: the run without faults failed"
		sed 's/^/    | /' "$log" | tail -n 20
		return 1
	fi
	READS=$(sed -n 's/.*PEMS_IO_FAULT: .* (\([0-9]*\) reads.*/\1/p' "$log" | tail -n 1)
	WRITES=$(sed -n 's/.*reads, \([0-9]*\) writes).*/\1/p' "$log" | tail -n 1)
	if [[ -z "$READS" || -z "$WRITES" ]]; then
		fail "$name: no request count in its log"
		return 1
	fi
	rm -f "$out"
	echo "test_faults: $name: $READS reads, $WRITES writes without faults"
}

# run_fault NAME SPEC IN OUT CMD...: one faulted run and its checks.
run_fault() {
	local name=$1 spec=$2 in=$3 out=$4 log=$T/fault.log before rc t0 secs
	shift 4
	[[ "$out" == - ]] && out=$T/no-output	# a job without an output file
	nrun=$((nrun + 1))
	before=$(stamp "$in")
	rm -f "$out" "$out.pems-tmp"
	t0=$EPOCHREALTIME
	PEMS_IO_FAULT=$spec timeout -k 5 "$LIMIT" "$@" >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="${t0/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.2f", b - a }')
	local what="$name PEMS_IO_FAULT=$spec"
	if ((rc == 124 || rc == 137)); then
		fail "$what: still running after ${LIMIT}s (hang)"
	elif ((rc != 1)); then
		fail "$what: exit status $rc, expected 1"
	elif ! grep -Eqi 'error: .*(Input/output error|No space left on device|short)' "$log"; then
		fail "$what: no clear message"
	fi
	[[ -e "$out" ]] && fail "$what: output $out exists after the failure"
	[[ -e "$out.pems-tmp" ]] && fail "$what: temporary output $out.pems-tmp left behind"
	[[ "$(stamp "$in")" == "$before" ]] || fail "$what: input $in changed"
	if [[ -n "$(ls -A "$S")" ]]; then
		fail "$what: scratch files left: $(ls -A "$S" | head -n 3 | tr '\n' ' ')"
		rm -rf "${S:?}"/*
	fi
	echo "test_faults: $what: exit $rc in ${secs}s: $(grep -m 1 'error:' "$log")"
	if ((nfail)) && [[ "${VERBOSE:-0}" == 1 ]]; then
		sed 's/^/    | /' "$log" | tail -n 10
	fi
}

# faults NAME IN OUT CMD...: the fault points of one job, plus the
# specs in EXTRA (an array: faults aimed at given files).
faults() {
	local name=$1 in=$2 out=$3 base sum spec
	shift 3
	run_ok "$name" "$out" "$@" || return
	sum=$(md5sum <"$in")
	local r=$READS w=$WRITES specs=()
	base=$(basename "$out")
	# request counts vary a little between runs (timing): points near
	# the end are sticky ('+') so that they always fire
	((r > 0)) && specs+=("read:eio:1" "read:eio:$((r / 2 + 1))" "read:eio:$((r > 8 ? r - 5 : 1))+"
		"read:short:$((r > 8 ? r - 5 : 1))+")
	((w > 0)) && specs+=("write:eio:1" "write:eio:$((w / 2 + 1))" "write:enospc:$((w / 2 + 1))"
		"write:enospc:$((w / 3 + 1))+" "write:short:1" "write:short:$((w / 2 + 1))")
	# the output file
	[[ "$out" != - ]] && specs+=("write:eio:1:$base.pems-tmp" "write:short:1+:$base.pems-tmp")
	specs+=("${EXTRA[@]}")
	if ((LONG)); then
		((r > 0)) && specs+=("read:eio:$r" "read:eio:$((r / 4 + 1))+" "read:short:1")
		((w > 0)) && specs+=("write:eio:$(((w * 9) / 10))" "write:short:$((w / 4 + 1))+"
			"write:enospc:1" "any:eio:$(((r + w) / 3 + 1))")
	fi
	local seen=" "
	for spec in "${specs[@]}"; do
		[[ "$seen" == *" $spec "* ]] && continue	# small jobs: points coincide
		seen+="$spec "
		run_fault "$name" "$spec" "$in" "$out" "$@"
	done
	[[ "$(md5sum <"$in")" == "$sum" ]] || fail "$name: input $in changed (checksum)"
}

RT=(--mem 48M --tmp "$S" --quiet)
# every message chunk goes to the disk, to be faulted there, even where
# --mem has room to keep it in memory (pems/msg.c invariant 7)
export PEMS_MSG_HOLD=0

# inputs (written without faults)
"$RUN" gen --format u64 --count 1M --seed 3 --quiet "$T/in.u64" >/dev/null || exit 1
"$RUN" gen --format kv --count 256K --groups 200K --seed 3 --quiet "$T/rows.kv" >/dev/null || exit 1
"$RUN" gen --format dense --model linear --count 20K --dim 16 --noise 0.5 --seed 3 --quiet \
	"$T/train.bin" >/dev/null || exit 1

# the message store (scratch files pems-PID-msgW.P)
EXTRA=("read:eio:1:msg" "read:short:2:msg" "write:eio:3:msg" "write:short:1+:msg")
faults sort "$T/in.u64" "$T/out.u64" \
	"$RUN" sort --format u64 --procs 16 "${RT[@]}" "$T/in.u64" "$T/out.u64"
EXTRA=("write:eio:1:msg" "read:eio:2:msg")
faults aggregate "$T/rows.kv" "$T/groups.csv" \
	"$RUN" aggregate --agg count,sum,avg --procs 16 "${RT[@]}" "$T/rows.kv" "$T/groups.csv"
EXTRA=("read:eio:1:train.bin")
faults sgd "$T/train.bin" "$T/model.txt" \
	"$RUN" sgd --model linear --data "$T/train.bin" --format dense --dim 16 --epochs 2 \
	--procs 8 "${RT[@]}" --out "$T/model.txt"
# a plain BSP program: every context goes to disk and back (pems-PID-ctx)
EXTRA=("read:eio:2:ctx" "read:short:1+:ctx" "write:short:3:ctx")
faults spill "$SPILL" - env PEMS_PROCS=16 PEMS_MU=2M PEMS_MEM=32M PEMS_TMP="$S" "$SPILL"

if command -v mpirun >/dev/null 2>&1; then
	MPI=(mpirun --oversubscribe --bind-to none -np 2 -x PEMS_IO_FAULT)
	run_fault sort-np2 "write:eio:5:msg" "$T/in.u64" "$T/out.u64" \
		"${MPI[@]}" "$RUN" sort --format u64 --procs 16 "${RT[@]}" "$T/in.u64" "$T/out.u64"
	run_fault sort-np2 "read:eio:1+:msg" "$T/in.u64" "$T/out.u64" \
		"${MPI[@]}" "$RUN" sort --format u64 --procs 16 "${RT[@]}" "$T/in.u64" "$T/out.u64"
else
	echo "test_faults: mpirun not found: 2-rank cases not run"
fi

echo "test_faults: $nrun faulted runs, $nfail failures"
((nfail == 0))
