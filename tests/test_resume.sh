#!/bin/bash
# test_resume.sh - superstep checkpoints and resume (docs/checkpoint.md).
#
# Kills `pems-run sort`, `aggregate`, `sgd` and a user BSPlib program
# (examples/steps) with SIGKILL at random moments, resumes each time with
# `pems-run resume DIR` (killing the resumed run too), and compares the
# output byte for byte with an uninterrupted run.  Then: resuming with a
# changed input or command line is refused, a corrupted manifest or state
# file is detected, and a finished run leaves nothing behind.
#
#   PEMS_RUN=build/pems-run PEMS_BUILD=build bash tests/test_resume.sh
#
# Long form, by hand (not in make check): runs each algorithm again and
# again (3 kills per run) until RESUME_TOTAL_KILLS kills were made, e.g.
#   RESUME_TOTAL_KILLS=30 RESUME_SORT_COUNT=256M RESUME_AGG_COUNT=128M \
#   RESUME_MEM=1G RESUME_TMP=/work/scratch/x bash tests/test_resume.sh sort aggregate
# and prints "total: kills K resumed runs R runs N identical I" per algorithm.
set -uo pipefail

RUN=${PEMS_RUN:?set PEMS_RUN}
BUILD=${PEMS_BUILD:?set PEMS_BUILD}
T=${RESUME_TMP:-${PEMS_TEST_TMP:-$(mktemp -d)}}
KILLS=${RESUME_KILLS:-3}	# per run
MEM=${RESUME_MEM:-64M}
WHAT=${*:-sort aggregate sgd steps held refusals}
export PEMS_QUIET=1
mkdir -p "$T" || exit 1
cd "$T" || exit 1
unset PEMS_CHECKPOINT_DIR PEMS_CHECKPOINT_EVERY

fails=0 passes=0
ok() { echo "ok: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Milliseconds since the epoch; timed() runs a command and sets ELAPSED.
ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
timed() {
	local t0
	t0=$(ms)
	"$@" || return 1
	ELAPSED=$(($(ms) - t0))
}

# Sleep a random time in [lo, hi] milliseconds (RANDOM-based, seed printed).
SEED=${RESUME_SEED:-$$}
RANDOM=$SEED
echo "random seed $SEED (RESUME_SEED=$SEED reproduces the kill times)"
rsleep() {	# rsleep LO_MS HI_MS
	local ms=$(($1 + RANDOM % ($2 - $1 + 1)))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

# run_killed NAME CKDIR OUT REF MS -- CMD...: start CMD, SIGKILL it after
# a random time in [MS/10, MS*9/10] (MS: the uninterrupted run's time), resume it (or start it again when no checkpoint was
# written yet), KILLS times, then let it finish; compare OUT with REF.
run_killed() {
	local name=$1 ck=$2 out=$3 ref=$4 hi=$5 pid rc kills=0 resumes=0
	shift 6
	rm -rf "$out" "$ck"
	"$@" >"$name.stdout" 2>"$name.stderr" &
	pid=$!
	while :; do
		if ((kills < KILLS)); then
			# every other kill comes after a checkpoint exists, so that
			# resumes are exercised even on a slow machine
			if ((kills % 2 == 0)); then
				while [[ ! -f $ck/manifest ]] && kill -0 "$pid" 2>/dev/null; do
					sleep 0.02
				done
				rsleep 0 $((hi / 2))
			else
				rsleep $((hi / 10)) $((hi * 9 / 10))
			fi
			if kill -9 "$pid" 2>/dev/null; then
				wait "$pid" 2>/dev/null
				kills=$((kills + 1))
				if [[ -f $ck/manifest ]]; then
					resumes=$((resumes + 1))
					"$RUN" resume "$ck" >"$name.stdout" 2>"$name.stderr" &
				else
					"$@" >"$name.stdout" 2>"$name.stderr" &
				fi
				pid=$!
				continue
			fi
		fi
		wait "$pid"
		rc=$?
		break
	done
	LAST_KILLS=$kills LAST_RESUMES=$resumes
	if ((rc != 0)); then
		fail "$name: exit $rc after $kills kills ($resumes resumes): $(tail -3 "$name.stderr")"
		return 1
	fi
	if [[ $ref == sha1:* ]]; then	# long form: the reference's digest only
		[[ sha1:$(sha1sum <"$out" | cut -d' ' -f1) == "$ref" ]]
	else
		cmp -s "$out" "$ref"
	fi
	if (($? != 0)); then
		fail "$name: output differs from the uninterrupted run after $kills kills ($resumes resumes)"
		return 1
	fi
	if [[ -e $ck ]] || compgen -G "pems-ckpt-*" >/dev/null; then
		fail "$name: the checkpoint or its scratch files are left after success: $(ls -d "$ck" pems-ckpt-* 2>/dev/null | head -3)"
		return 1
	fi
	ok "$name: kills: $kills resumed runs: $resumes identical: yes"
}

# repeat_killed ARGS...: run_killed until RESUME_TOTAL_KILLS kills (long form)
TOTAL=${RESUME_TOTAL_KILLS:-0}
repeat_killed() {
	local k=0 r=0 runs=0 same=0
	LAST_KILLS=0 LAST_RESUMES=0
	if ((TOTAL == 0)); then
		run_killed "$@"
		return
	fi
	while ((k < TOTAL && runs < 3 * TOTAL)); do
		runs=$((runs + 1))
		run_killed "$@" && same=$((same + 1))
		k=$((k + LAST_KILLS)) r=$((r + LAST_RESUMES))
	done
	echo "$1: total: kills $k resumed runs $r runs $runs identical $same"
}

want() { [[ " $WHAT " == *" $1 "* ]]; }

# RESUME_HASH=1 (long form): keep only the digest of a reference output,
# to save its disk space; prints what to pass as REF
refer() {
	if [[ ${RESUME_HASH:-0} == 1 ]]; then
		echo "sha1:$(sha1sum <"$1" | cut -d' ' -f1)"
		rm -f "$1"
	else
		echo "$1"
	fi
}

if want sort; then
	"$RUN" gen --format u64 --count "${RESUME_SORT_COUNT:-2M}" --seed 7 sort.in || exit 1
	timed "$RUN" sort --format u64 --mem "$MEM" --tmp . --checkpoint-every off sort.in sort.ref ||
		exit 1
	ms_ref=$ELAPSED
	ref=$(refer sort.ref)
	repeat_killed sort sort.out.pems-ckpt sort.out "$ref" "$ms_ref" -- \
		"$RUN" sort --format u64 --mem "$MEM" --tmp . --checkpoint-every 1 sort.in sort.out
fi

if want aggregate; then
	"$RUN" gen --format kv --count "${RESUME_AGG_COUNT:-2M}" --groups 50K --seed 3 agg.in || exit 1
	timed "$RUN" aggregate --agg count,sum,min,max --mem "$MEM" --tmp . --checkpoint-every off \
		agg.in agg.ref || exit 1
	ms_ref=$ELAPSED
	ref=$(refer agg.ref)
	repeat_killed aggregate agg.out.pems-ckpt agg.out "$ref" "$ms_ref" -- \
		"$RUN" aggregate --agg count,sum,min,max --mem "$MEM" --tmp . --checkpoint-every 1 \
		agg.in agg.out
fi

if want sgd; then
	"$RUN" gen --format dense --model linear --count 200K --dim 16 --noise 0.5 --seed 1 \
		sgd.in || exit 1
	sgd_args=(--model linear --data sgd.in --format dense --dim 16 --sync bsp --batch 256
		  --epochs 2 --mem "$MEM" --tmp .)
	timed "$RUN" sgd "${sgd_args[@]}" --checkpoint-every off --out sgd.ref || exit 1
	run_killed sgd sgd.out.pems-ckpt sgd.out sgd.ref "$ELAPSED" -- \
		"$RUN" sgd "${sgd_args[@]}" --checkpoint-every 1 --out sgd.out
fi

if want steps; then
	STEPS=$BUILD/examples/steps
	timed env PEMS_PROCS=8 PEMS_MEM="$MEM" PEMS_TMP="$PWD" "$STEPS" 30 5 >steps.ref || exit 1
	# the user program's output is its stdout; the resumed run's stdout
	# is the last one's
	run_killed steps ck.steps steps.stdout steps.ref "$ELAPSED" -- \
		env PEMS_PROCS=8 PEMS_MEM="$MEM" PEMS_TMP="$PWD" PEMS_CHECKPOINT_DIR=ck.steps \
		PEMS_CHECKPOINT_EVERY=1 "$STEPS" 30 5
fi

# Message chunks kept in memory across a barrier (pems/msg.c 7) are saved
# in the checkpoint's state file and kept in memory again on resume: stop
# examples/steps, sending 3 MiB per VP and superstep under a budget with
# room for them, right after a checkpoint, then resume it.
if want held; then
	STEPS=$BUILD/examples/steps
	held=(env PEMS_PROCS=4 PEMS_MEM=256M PEMS_TMP="$PWD" "$STEPS" 12 100 3072)
	"${held[@]}" >held.ref || exit 1
	rm -rf ck.held
	PEMS_CHECKPOINT_DIR=ck.held PEMS_CHECKPOINT_EVERY=1 "${held[@]}" >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		[[ -f ck.held/manifest ]] && grep -q '^superstep [3-9]' ck.held/manifest && break
		sleep 0.05
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	st=ck.held/$(awk '$1 == "state" { print $2 }' ck.held/manifest 2>/dev/null)
	size=$(stat -c %s "$st" 2>/dev/null || echo 0)
	if ((size < 4 * 3 * 1048576)); then
		fail "held: the state file has $size bytes, not the 12 MiB of messages kept in memory"
	elif ! "$RUN" resume ck.held >held.out 2>held.err; then
		fail "held: resume failed: $(tail -3 held.err)"
	elif ! cmp -s held.ref held.out; then
		fail "held: the resumed run printed $(cat held.out), not $(cat held.ref)"
	else
		ok "held: $size bytes of state with the kept messages; resumed to the same digest"
	fi
	rm -rf ck.held
fi

# Refusals: stop a run right after a checkpoint (SIGKILL while it sleeps
# in superstep 3 of examples/steps), then change something.
if want refusals; then
	STEPS=$BUILD/examples/steps
	stopped_run() {	# leave a checkpoint in ck.ref
		rm -rf ck.ref
		env SECRET_TOKEN=s3cr3t-t0ken PEMS_PROCS=4 PEMS_MEM="$MEM" PEMS_TMP="$PWD" PEMS_CHECKPOINT_DIR=ck.ref \
			PEMS_CHECKPOINT_EVERY=1 "$STEPS" 200 20 >/dev/null 2>&1 &
		local pid=$! i
		for ((i = 0; i < 1200; i++)); do	# a minute at most (a loaded machine)
			[[ -f ck.ref/manifest ]] && grep -q '^superstep [3-9]' ck.ref/manifest && break
			sleep 0.05
		done
		kill -9 $pid
		wait $pid 2>/dev/null
		[[ -f ck.ref/manifest ]]
	}
	expect_refusal() {	# expect_refusal WHAT PATTERN CMD...
		local what=$1 pat=$2 rc
		shift 2
		"$@" >refuse.out 2>&1
		rc=$?
		if ((rc == 1)) && grep -q -- "$pat" refuse.out; then
			ok "refused: $what ($(grep -m1 -- "$pat" refuse.out | cut -c1-120))"
		else
			fail "$what: expected exit 1 and '$pat', got exit $rc: $(head -3 refuse.out)"
		fi
	}

	# the manifest keeps no other variable (a token of the user's shell)
	# and the checkpoint is private; resume runs in a different, smaller
	# environment (the recorded PEMS_* come back, the layout is padded)
	if stopped_run; then
		modes=$(stat -c '%a %n' ck.ref ck.ref/* | grep -v '^700 ck.ref$' | grep -v '^600 ')
		nenv=$(grep -c '^env ' ck.ref/manifest)
		if grep -q s3cr3t ck.ref/*; then
			fail "secret: the checkpoint holds SECRET_TOKEN's value"
		elif [[ -n $modes ]]; then
			fail "secret: checkpoint files not private: $modes"
		elif ! env -i PATH="$PATH" "$RUN" resume ck.ref >steps.out 2>steps.err; then
			fail "secret: resume in a minimal environment failed: $(tail -2 steps.err)"
		else
			ok "secret: not in the manifest ($nenv env lines), files 0600, resumed under env -i"
		fi
	fi
	# a changed input is refused, before anything runs
	if stopped_run; then
		"$RUN" gen --format u64 --count 64K --seed 1 refuse.in
		# the sort's checkpoint records its input: change one byte of it
		rm -rf r.out.pems-ckpt
		"$RUN" sort --format u64 --mem "$MEM" --tmp . --checkpoint-every 1 refuse.in r.out \
			>/dev/null 2>&1 &
		pid=$!
		for ((i = 0; i < 200; i++)); do
			[[ -f r.out.pems-ckpt/manifest ]] && break
			sleep 0.02
		done
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		if [[ -f r.out.pems-ckpt/manifest ]]; then
			printf 'X' | dd of=refuse.in bs=1 seek=100 conv=notrunc status=none
			touch -d '2001-01-01' refuse.in
			expect_refusal "changed input" "changed since the checkpoint" \
				"$RUN" resume r.out.pems-ckpt
			# a different command line with --resume is refused
			expect_refusal "changed configuration" "command line differs" \
				"$RUN" sort --format u64 --mem 96M --tmp . --checkpoint-every 1 refuse.in \
				r.out --resume
		else
			ok "changed input: the sort finished before a checkpoint (machine too fast), skipped"
		fi
		rm -rf r.out.pems-ckpt pems-ckpt-* r.out r.out.pems-tmp

		# a changed configuration inside the environment (v) is refused
		sed -i 's/^env PEMS_PROCS=4$/env PEMS_PROCS=5/' ck.ref/manifest
		expect_refusal "edited manifest" "checksum mismatch" "$RUN" resume ck.ref
		stopped_run || fail "could not stop examples/steps after a checkpoint"
		# a damaged state file
		st=ck.ref/$(awk '$1 == "state" { print $2 }' ck.ref/manifest)
		b=$(od -An -tu1 -j200 -N1 "$st" | tr -d ' ')
		printf "\\x$(printf %02x $((b ^ 0xff)))" |
			dd of="$st" bs=1 seek=200 conv=notrunc status=none
		expect_refusal "corrupted state file" "is corrupt" "$RUN" resume ck.ref
		stopped_run || fail "could not stop examples/steps after a checkpoint"
		# a truncated manifest
		head -c 500 ck.ref/manifest >m.tmp && mv m.tmp ck.ref/manifest
		expect_refusal "truncated manifest" "the checkpoint cannot be used" "$RUN" resume ck.ref
		expect_refusal "no checkpoint" "no checkpoint in" "$RUN" resume nonexistent.ckpt
		rm -rf ck.ref pems-ckpt-*
	else
		fail "refusals: could not stop examples/steps after a checkpoint"
	fi
fi

echo "$passes passed, $fails failed"
((fails == 0))
