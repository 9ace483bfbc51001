#!/bin/bash
# redteam.sh - the hand-run loops of issue 21 (docs/reliability.md); not
# in make check (tens of minutes).  tests/test_ownership.sh is the short,
# deterministic variant that make check runs.
#
#   PEMS_RUN=build/pems-run bash tests/redteam.sh [PART...]
#
# Parts (default: all):
#   owners   two jobs on one OUT, the same command twice (checkpoints on)
#            and two concurrent resumes of one checkpoint, each TRIES times
#            with the second started at a random delay: it must refuse
#            naming the first's PID within a second, the first must finish
#            with a verified output, the checkpoint must survive the
#            refused resume
#   sort     kill -9 / SIGTERM / SIGINT at random moments (resumed runs
#            too) until KILLS kills, then let it finish: the output must
#            equal an uninterrupted run's and verify; after every kill
#            nothing may be under OUT; after success only OUT is left
#   aggregate  the same for aggregate
# Environment: REDTEAM_TMP (scratch dir, default /work/scratch-redteam),
# REDTEAM_TRIES (10), REDTEAM_KILLS (20), REDTEAM_SORT_COUNT (128M u64
# records: 1 GiB), REDTEAM_AGG_COUNT (64M kv rows), REDTEAM_OWN_COUNT
# (32M u64 records for the owners part), REDTEAM_MEM (256M), REDTEAM_SEED.  Prints one summary line per
# part with counts and times; exit 0 when nothing failed.
set -uo pipefail

RUN=${PEMS_RUN:?set PEMS_RUN}
case "$RUN" in /*) ;; *) RUN=$PWD/$RUN ;; esac
T=${REDTEAM_TMP:-/work/scratch-redteam}
TRIES=${REDTEAM_TRIES:-10}
KILLS=${REDTEAM_KILLS:-20}
SORT_COUNT=${REDTEAM_SORT_COUNT:-128M}
OWN_COUNT=${REDTEAM_OWN_COUNT:-32M}
AGG_COUNT=${REDTEAM_AGG_COUNT:-64M}
MEM=${REDTEAM_MEM:-256M}
WHAT=${*:-owners sort aggregate}
mkdir -p "$T" && cd "$T" || exit 1
unset PEMS_CHECKPOINT_DIR PEMS_CHECKPOINT_EVERY PEMS_QUIET
SEED=${REDTEAM_SEED:-$$}
RANDOM=$SEED
echo "redteam: seed $SEED (REDTEAM_SEED), in $T"

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
want() { [[ " $WHAT " == *" $1 "* ]]; }
ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
rsleep() {	# rsleep LO_MS HI_MS
	local m=$(($1 + RANDOM % ($2 - $1 + 1)))
	sleep "$(printf '%d.%03d' $((m / 1000)) $((m % 1000)))"
}
# nothing of a job for OUT but OUT itself (and no scratch in .)
leftovers() { ls -d "$1".* pems-ckpt-* pems-[0-9]* 2>/dev/null | tr '\n' ' '; }

[[ -f sort.in ]] || "$RUN" gen --quiet --format u64 --count "$SORT_COUNT" sort.in || exit 1
[[ -f own.in ]] || "$RUN" gen --quiet --format u64 --count "$OWN_COUNT" own.in || exit 1
[[ -f agg.in ]] || "$RUN" gen --quiet --format kv --count "$AGG_COUNT" --groups 1000000 \
	--skew zipf:1.1 agg.in || exit 1
SORT=(sort --format u64 --mem "$MEM" --tmp . sort.in)
AGG=(aggregate --agg count,sum,min,max,avg --mem "$MEM" --tmp . agg.in)
CK=(--checkpoint-every 1)	# the kill loops resume from every superstep
OWN=(sort --format u64 --mem "$MEM" --tmp . own.in)

# ---- owners ----

# second JOBPID CMD...: run the second job; sets SECOND_MS, SECOND_RC,
# SECOND_OK (refused naming JOBPID)
second() {
	local pid=$1 t0
	shift
	t0=$(ms)
	"$@" >second.out 2>&1
	SECOND_RC=$?
	SECOND_MS=$(($(ms) - t0))
	SECOND_OK=0
	((SECOND_RC == 1)) && grep -q "another job (PID $pid)" second.out && SECOND_OK=1
}

# one_owner_try KIND: one try of KIND (out, twice, resume)
one_owner_try() {
	local kind=$1 out=own.$1 pid rc alive kept first=("$RUN" "${OWN[@]}")
	rm -rf "$out" "$out".*
	case $kind in
	out) first+=(--checkpoint-every off "$out") ;;
	*) first+=(--checkpoint-every 1 "$out") ;;
	esac
	if [[ $kind == resume ]]; then
		"${first[@]}" >/dev/null 2>&1 &
		pid=$!
		while [[ ! -f $out.pems-ckpt/manifest ]] && kill -0 $pid 2>/dev/null; do sleep 0.02; done
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		[[ -f $out.pems-ckpt/manifest ]] || { NOTRY=$((NOTRY + 1)); return; }
		first=("$RUN" resume "$out.pems-ckpt")
	fi
	"${first[@]}" >first.out 2>&1 &
	pid=$!
	rsleep 0 2000
	kept=1
	if [[ $kind == resume ]]; then
		second $pid "$RUN" resume "$out.pems-ckpt"
		[[ -f $out.pems-ckpt/manifest ]] || ! kill -0 $pid 2>/dev/null || kept=0
	else
		second $pid "${first[@]}"
	fi
	alive=0
	kill -0 $pid 2>/dev/null && alive=1
	wait $pid 2>/dev/null
	rc=$?
	if ((!SECOND_OK && !alive)); then
		NOTRY=$((NOTRY + 1))	# the first may have finished already: not a try
		return
	fi
	TRIED=$((TRIED + 1))
	SURVIVED=$((SURVIVED + kept))
	((SECOND_MS > MAXMS)) && MAXMS=$SECOND_MS
	((SECOND_OK)) || fail "owners $kind: second job: exit $SECOND_RC: $(head -2 second.out)"
	((SECOND_MS < 1000)) || fail "owners $kind: the second job took $SECOND_MS ms to refuse"
	if ((rc != 0)) || ! "$RUN" verify --format u64 "$out" --against own.in >/dev/null 2>&1; then
		fail "owners $kind: first job exit $rc or output not verified: $(tail -2 first.out)"
	elif [[ -n $(leftovers "$out") ]]; then
		fail "owners $kind: left behind: $(leftovers "$out")"
	fi
}

if want owners; then
	for kind in out twice resume; do
		TRIED=0 NOTRY=0 MAXMS=0 SURVIVED=0
		t0=$(ms)
		while ((TRIED < TRIES && NOTRY < 3 * TRIES)); do
			one_owner_try $kind
		done
		echo "owners $kind: $TRIED tries (the second refused, slowest after $MAXMS ms), $NOTRY not concurrent, checkpoint kept by every refused resume: $([[ $kind == resume ]] && echo "$SURVIVED/$TRIED" || echo n/a), $((($(ms) - t0) / 1000)) s"
	done
fi

# ---- kills ----

# kill_cycle NAME OUT REF VERIFY-CMD -- CMD...: run CMD, send KILL / TERM
# / INT at random moments (resumes too) while KILLS is not reached, then
# let it finish; OUT must equal REF and verify, nothing else may be left
kill_cycle() {
	local name=$1 out=$2 ref=$3 vcmd=$4 pid sig rc hi
	local sigs=(KILL TERM INT)
	shift 5
	rm -rf "$out" "$out".* pems-ckpt-*
	hi=$((REFMS * 9 / 10))
	"$@" "$out" >"$name.log" 2>&1 &
	pid=$!
	while :; do
		if ((KILLED < KILLS)); then
			rsleep $((REFMS / 50)) "$hi"
			sig=${sigs[RANDOM % 3]}
			if kill -"$sig" $pid 2>/dev/null; then
				wait $pid 2>/dev/null
				rc=$?
				((rc == 0)) && break	# it finished before the signal
				KILLED=$((KILLED + 1))
				# OUT appears only whole (renamed after the fsync)
				if [[ -e $out ]] && ! cmp -s "$out" "$ref"; then
					fail "$name: a partial $out after a $sig (kill $KILLED)"
				fi
				if [[ -f $out.pems-ckpt/manifest ]]; then
					RESUMES=$((RESUMES + 1))
					"$RUN" resume "$out.pems-ckpt" >>"$name.log" 2>&1 &
				else
					RERUNS=$((RERUNS + 1))
					"$@" "$out" >>"$name.log" 2>&1 &
				fi
				pid=$!
				continue
			fi
		fi
		wait $pid 2>/dev/null
		rc=$?
		((rc == 0)) || fail "$name: the last run exited $rc: $(tail -3 "$name.log")"
		break
	done
	CYCLES=$((CYCLES + 1))
	if ! cmp -s "$out" "$ref"; then
		fail "$name: output differs from the uninterrupted run's (cycle $CYCLES)"
	elif ! eval "$vcmd" >/dev/null 2>&1; then
		fail "$name: output does not verify (cycle $CYCLES)"
	elif [[ -n $(leftovers "$out") ]]; then
		fail "$name: left behind after success: $(leftovers "$out")"
	else
		GOOD=$((GOOD + 1))
	fi
}

kill_loop() {	# kill_loop NAME ...: kill_cycle until KILLS signals were sent
	local t0
	KILLED=0 RESUMES=0 RERUNS=0 CYCLES=0 GOOD=0
	t0=$(ms)
	while ((KILLED < KILLS)); do
		kill_cycle "$@"
	done
	echo "$1: $KILLED signals (KILL/TERM/INT at random), $RESUMES resumes, $RERUNS fresh starts, $CYCLES runs to the end: $GOOD identical, verified, nothing left; $((($(ms) - t0) / 1000)) s"
}

reference() {	# reference REF CMD...: an uninterrupted run; sets REFMS
	local t0
	rm -rf "$1" "$1".*
	t0=$(ms)
	"${@:2}" --checkpoint-every off "$1" >/dev/null 2>&1 || { fail "reference $1"; return 1; }
	REFMS=$(($(ms) - t0))
	echo "reference $1: $REFMS ms"
}

if want sort; then
	reference sort.ref "$RUN" "${SORT[@]}" &&
		kill_loop sort sort.out sort.ref \
			"\"$RUN\" verify --format u64 sort.out --against sort.in" -- "$RUN" "${SORT[@]}" "${CK[@]}"
fi
if want aggregate; then
	reference agg.ref "$RUN" "${AGG[@]}" &&
		kill_loop aggregate agg.out agg.ref "cmp agg.out agg.ref" -- "$RUN" "${AGG[@]}" "${CK[@]}"
fi

echo "redteam: $fails failure(s)"
((fails == 0))
