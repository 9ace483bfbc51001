#!/bin/bash
# test_compress.sh - every structure the bundled algorithms spill comes
# back intact with --compress on (docs/formats.md, spilled blocks).
#
# For sort (message chunks), aggregate on CSV (message chunks of parsed
# rows) and sgd on sparse LIBSVM (VP contexts: the dense model and
# gradient sums): a run with --compress zstd must write the same output
# as one with --compress off, and its --stats-json must show that the
# spilled blocks were stored compressed (stored < raw) and that the disk
# saw less.  `auto` on random keys must leave them raw (and give the same
# output).  Checkpoints of compressed runs: sort and sgd with
# --compress zstd --checkpoint-every 1 are killed (SIGKILL) once a
# checkpoint past superstep 1 exists -- so it holds compressed context
# blocks or message chunks -- and resumed with `pems-run resume`; the
# output must equal the uncompressed run's.  (Corrupted compressed blocks:
# tests/check_spill.c.)
#
#   PEMS_RUN=build/pems-run bash tests/test_compress.sh
set -uo pipefail

RUN=${PEMS_RUN:?set PEMS_RUN}
T=${PEMS_TEST_TMP:-$(mktemp -d)}
export PEMS_QUIET=1
unset PEMS_COMPRESS PEMS_CHECKPOINT_DIR PEMS_CHECKPOINT_EVERY PEMS_DISK_BW
mkdir -p "$T/s" || exit 1
cd "$T" || exit 1

fails=0 passes=0
ok() { echo "ok: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# js FILE KEY: a top-level number of a --stats-json file
js() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | awk '{ print $2 }'; }

# run NAME MODE CMD...: run pems-run CMD with --compress MODE, stats in NAME.MODE.json
run() {
	local name=$1 mode=$2
	shift 2
	if ! "$RUN" "$@" --tmp s --compress "$mode" --stats-json "$name.$mode.json" \
		>"$name.$mode.log" 2>&1; then
		fail "$name --compress $mode: exit $?: $(tail -3 "$name.$mode.log")"
		return 1
	fi
}

# compare NAME KIND OUT_OFF OUT_ZSTD: same output; KIND (ctx|msg) blocks
# stored compressed under zstd, and the disk saw the stored bytes, not the
# raw ones (the off run may spill a different amount: compression takes
# its buffers from M, which changes v or mu)
compare() {
	local name=$1 kind=$2 raw st woff wz
	if ! cmp -s "$3" "$4"; then
		fail "$name: output with --compress zstd differs from --compress off"
		return
	fi
	raw=$(js "$name.zstd.json" "${kind}_raw") st=$(js "$name.zstd.json" "${kind}_stored")
	woff=$(js "$name.off.json" "${kind}_written") wz=$(js "$name.zstd.json" "${kind}_written")
	if [[ -z $raw || -z $st || $raw == 0 ]]; then
		fail "$name: nothing of kind $kind spilled (raw '$raw'): the test does not test"
	elif ((st * 10 > raw * 9)); then
		fail "$name: $kind blocks stored as $st of $raw raw bytes: not compressed"
	elif ((wz * 10 > raw * 9)); then
		fail "$name: $kind blocks of $raw raw bytes stored as $st, but $wz bytes written"
	else
		ok "$name: identical output; $kind $raw raw bytes stored as $st, written $wz ($woff with off)"
	fi
}

# killed_resume NAME CKDIR MINSTEP REF OUT CMD...: run CMD, SIGKILL it once
# CKDIR/manifest names superstep >= MINSTEP, resume; OUT must equal REF
killed_resume() {
	local name=$1 ck=$2 min=$3 ref=$4 out=$5 pid i step=0
	shift 5
	rm -rf "$ck" "$out"
	"$RUN" "$@" >"$name.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 3000; i++)); do	# a minute at most (a loaded machine)
		if [[ -f $ck/manifest ]]; then
			step=$(awk '$1 == "superstep" { print $2; exit }' "$ck/manifest")
			((step >= min)) && break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	if ! kill -9 "$pid" 2>/dev/null; then
		wait "$pid"
		fail "$name: finished (exit $?) before a checkpoint past superstep $((min - 1)); make the input larger"
		return
	fi
	wait "$pid" 2>/dev/null
	if ! "$RUN" resume "$ck" >>"$name.log" 2>&1; then
		fail "$name: resume from the checkpoint of superstep $step failed: $(tail -3 "$name.log")"
	elif ! cmp -s "$ref" "$out"; then
		fail "$name: killed after superstep $step and resumed: output differs"
	else
		ok "$name: killed after the checkpoint of superstep $step, resumed: identical output"
	fi
}

# sort: message chunks of sorted keys (compressible)
"$RUN" gen --quiet --format u64 --count 4M --skew sorted --seed 3 sort.in || exit 1
for m in off zstd; do
	run sort "$m" sort --format u64 --mem 48M sort.in "sort.$m.out"
done
compare sort msg sort.off.out sort.zstd.out

# auto on random keys: sampled, found incompressible, left raw
"$RUN" gen --quiet --format u64 --count 4M --seed 5 rand.in || exit 1
for m in off auto; do
	run rand "$m" sort --format u64 --mem 48M rand.in "rand.$m.out"
done
raw=$(js rand.auto.json msg_raw) st=$(js rand.auto.json msg_stored)
if ! cmp -s rand.off.out rand.auto.out; then
	fail "auto: output differs from --compress off"
elif [[ -z $raw || $raw == 0 || $st != "$raw" ]]; then
	fail "auto on random keys: messages $raw raw bytes stored as $st (want raw)"
else
	ok "auto on random keys: identical output; $raw message bytes left raw"
fi

# aggregate on CSV text: the parsed rows cross the message store
awk 'BEGIN { srand(11); print "key,value"
	for (i = 0; i < 400000; i++) printf "%d,%d\n", int(rand() * 100000), int(rand() * 2001) - 1000 }' \
	>agg.csv
export PEMS_MSG_HOLD=0	# through the disk even where --mem could keep them (msg.c 7)
for m in off zstd; do
	run agg "$m" aggregate --input-format csv --agg count,sum,min,max --mem 64M agg.csv "agg.$m.out"
done
unset PEMS_MSG_HOLD
compare agg msg agg.off.out agg.zstd.out

# sgd on sparse LIBSVM rows: contexts (dense model, gradient sums) spill
"$RUN" gen --quiet --format libsvm --model logistic --count 20000 --dim 65536 --nnz 16 \
	--seed 7 sgd.svm || fail "gen libsvm"
sgd_args=(sgd --model logistic --format libsvm --data sgd.svm --dim 65536 --sync bsp --batch 64
	  --epochs 1 --mem 80M)
for m in off zstd; do
	run sgd "$m" "${sgd_args[@]}" --out "sgd.$m.out"
done
compare sgd ctx sgd.off.out sgd.zstd.out

# checkpoints of compressed runs, killed and resumed
killed_resume sort-resume sort.ck.out.pems-ckpt 2 sort.off.out sort.ck.out \
	sort --format u64 --mem 48M --tmp s --compress zstd --checkpoint-every 1 sort.in sort.ck.out
killed_resume sgd-resume sgd.ck.out.pems-ckpt 3 sgd.off.out sgd.ck.out \
	"${sgd_args[@]}" --tmp s --compress zstd --checkpoint-every 1 --out sgd.ck.out

echo "$passes passed, $fails failed"
((fails == 0))
