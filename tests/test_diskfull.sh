#!/bin/bash
# tests/test_diskfull.sh - sort, aggregate and sgd on a full disk.
#
# In a private mount namespace (unshare -m, as check_errors.c does; skip
# when that is not allowed) a 64 MiB tmpfs stands for a small disk.
# Inputs stay on the test's own directory; a filler file takes part of
# the small disk where a case needs less free space.  Cases:
#   sort-out-small  16 MiB of output, 8 MiB free: refused before any work
#   sort-out-fills  a filler takes the free space once the temporary
#                   output exists: the output's blocks are allocated when
#                   it is created (algorithms/output.c), so the sort must
#                   either finish with a verified output or, when the
#                   filler won the race to the blocks, fail as below
#   sort-tmp        scratch on the small disk: refused before any work
#   agg-out         the CSV output (about 5 MiB) outgrows 1 MiB free
#   agg-tmp         the message store outgrows the disk (fallocate)
#   sgd-out         the model file and loss log on a disk with no space
#   sgd-model       the model file alone
# Each must exit with status 1 within $LIMIT seconds, say "no space" /
# "No space left on device" / "needs about ... free" on stderr, leave
# nothing under the final output name and no temporary output, leave the
# input unchanged (md5sum) and no scratch files.
#
# Uses PEMS_RUN and PEMS_TEST_TMP from tests/run.sh; needs about 30 MiB
# in PEMS_TEST_TMP.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN=${PEMS_RUN:-$ROOT/build/pems-run}
LIMIT=${PEMS_DISKFULL_LIMIT:-120}

if [[ ! -x "$RUN" ]]; then
	echo "test_diskfull: error: $RUN is not built (make all)" >&2
	exit 1
fi
if [[ -z "${PEMS_DISKFULL_NS:-}" ]]; then
	if ! unshare -m --propagation private true 2>/dev/null; then
		echo "test_diskfull: skip: cannot create a private mount namespace (needs root)"
		exit 77
	fi
	PEMS_DISKFULL_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi

T=${PEMS_TEST_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/test_diskfull.XXXXXX")}
F=$T/small		# the 64 MiB disk
S=$T/scratch		# scratch on the real disk
mkdir -p "$F" "$S" || exit 1
if ! mount -t tmpfs -o size=64m pems-test-full "$F"; then
	echo "test_diskfull: skip: cannot mount a tmpfs: mount failed"
	exit 77
fi
trap 'umount "$F" 2>/dev/null' EXIT
unset PEMS_IO_FAULT

nfail=0
fail() { echo "test_diskfull: FAIL: $*"; nfail=$((nfail + 1)); }
clean_small() { rm -rf "${F:?}"/* "${S:?}"/*; }
# fill_small MIB: leave about MIB MiB free on the small disk
fill_small() {
	local free
	free=$(df -B1M --output=avail "$F" | tail -n 1)
	if ((free > $1)); then
		head -c "$((free - $1))M" /dev/zero >"$F/filler.$1" 2>/dev/null
	fi
}

# check NAME RC LOG IN OUT SCRATCH: the checks after a failed run.
check() {
	local name=$1 rc=$2 log=$3 in=$4 out=$5 scratch=$6
	if ((rc == 124 || rc == 137)); then
		fail "$name: still running after ${LIMIT}s (hang)"
	elif ((rc != 1)); then
		fail "$name: exit status $rc, expected 1"
	fi
	grep -Eqi 'error: .*(no space left|needs about .* free)' "$log" ||
		fail "$name: no clear message"
	[[ -e "$out" ]] && fail "$name: output $out exists"
	[[ -e "$out.pems-tmp" ]] && fail "$name: temporary output $out.pems-tmp left behind"
	[[ "$(md5sum <"$in")" == "${SUM[$in]}" ]] || fail "$name: input $in changed"
	[[ -z "$(ls -A "$scratch")" ]] ||
		fail "$name: files left in scratch dir: $(ls -A "$scratch" | head -n 3 | tr '\n' ' ')"
	echo "test_diskfull: $name: exit $rc: $(grep -m 1 -i 'error:' "$log")"
}

declare -A SUM
"$RUN" gen --format u64 --count 2M --seed 5 --quiet "$T/in.u64" >/dev/null || exit 1
"$RUN" gen --format kv --count 256K --groups 100K --seed 5 --quiet "$T/rows.kv" >/dev/null || exit 1
"$RUN" gen --format dense --model linear --count 20K --dim 16 --noise 0.5 --seed 5 --quiet \
	"$T/train.bin" >/dev/null || exit 1
for f in in.u64 rows.kv train.bin; do SUM[$T/$f]=$(md5sum <"$T/$f"); done
RT=(--mem 64M --quiet)

clean_small
fill_small 8
timeout -k 5 "$LIMIT" "$RUN" sort --format u64 "${RT[@]}" --tmp "$S" "$T/in.u64" "$F/out.u64" \
	>"$T/log" 2>&1
check sort-out-small $? "$T/log" "$T/in.u64" "$F/out.u64" "$S"

# 16 MiB fit at the start; a filler takes the rest once the output exists
clean_small
fill_small 20
timeout -k 5 "$LIMIT" "$RUN" sort --format u64 "${RT[@]}" --tmp "$S" "$T/in.u64" "$F/out.u64" \
	>"$T/log" 2>&1 &
pid=$!
for ((i = 0; i < 2000; i++)); do
	[[ -e "$F/out.u64.pems-tmp" ]] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.005
done
head -c 64M /dev/zero >"$F/filler" 2>/dev/null
wait "$pid"
rc=$?
if ((rc == 0)); then
	# the output's space was taken before the filler: it must be whole
	if "$RUN" verify --format u64 --quiet "$F/out.u64" --against "$T/in.u64" >"$T/vlog" 2>&1; then
		echo "test_diskfull: sort-out-fills: exit 0, output verified (its space was reserved)"
	else
		fail "sort-out-fills: exit 0 but the output does not verify: $(head -n 2 "$T/vlog")"
	fi
	rm -f "$F/out.u64"
else
	check sort-out-fills "$rc" "$T/log" "$T/in.u64" "$F/out.u64" "$S"
fi

clean_small
timeout -k 5 "$LIMIT" "$RUN" sort --format u64 "${RT[@]}" --tmp "$F" "$T/in.u64" "$T/out.u64" \
	>"$T/log" 2>&1
check sort-tmp $? "$T/log" "$T/in.u64" "$T/out.u64" "$F"

clean_small
fill_small 1
timeout -k 5 "$LIMIT" "$RUN" aggregate --agg count,sum,min,max,avg "${RT[@]}" --tmp "$S" \
	"$T/rows.kv" "$F/groups.csv" >"$T/log" 2>&1
check agg-out $? "$T/log" "$T/rows.kv" "$F/groups.csv" "$S"

clean_small
# PEMS_MSG_HOLD=0: the chunks go to the disk even where --mem could keep them (msg.c 7)
timeout -k 5 "$LIMIT" env PEMS_MSG_HOLD=0 "$RUN" aggregate --agg count,sum "${RT[@]}" --tmp "$F" \
	"$T/rows.kv" "$T/groups.csv" >"$T/log" 2>&1
check agg-tmp $? "$T/log" "$T/rows.kv" "$T/groups.csv" "$F"

clean_small
fill_small 0
timeout -k 5 "$LIMIT" "$RUN" sgd --model linear --data "$T/train.bin" --format dense --dim 16 \
	"${RT[@]}" --tmp "$S" --out "$F/model.txt" --loss-log "$F/loss.csv" >"$T/log" 2>&1
rc=$?
[[ -e "$F/loss.csv" ]] && fail "sgd-out: loss log $F/loss.csv exists"
[[ -e "$F/loss.csv.pems-tmp" ]] && fail "sgd-out: $F/loss.csv.pems-tmp left behind"
check sgd-out "$rc" "$T/log" "$T/train.bin" "$F/model.txt" "$S"

clean_small
fill_small 0
timeout -k 5 "$LIMIT" "$RUN" sgd --model linear --data "$T/train.bin" --format dense --dim 16 \
	"${RT[@]}" --tmp "$S" --out "$F/model.txt" >"$T/log" 2>&1
check sgd-model $? "$T/log" "$T/train.bin" "$F/model.txt" "$S"

clean_small
rm -f "$T"/*.u64 "$T/rows.kv" "$T/train.bin"
echo "test_diskfull: $nfail failures"
((nfail == 0))
