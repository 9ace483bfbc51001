#!/bin/bash
# test_mpi_resume.sh - checkpoints and resume of a job of several MPI ranks
# (docs/checkpoint.md, "Several ranks").
#
# Runs `mpirun -np NP pems-run sort` and the BSPlib program examples/steps
# with a checkpoint at every barrier, SIGKILLs the job's ranks at random
# moments (every other kill: all ranks at once, else one rank, whose death
# makes mpirun end the others), resumes with `mpirun -np NP pems-run resume
# DIR` (and kills the resumed job too), until KILLS kills were made; then
# the output must be byte-identical to an uninterrupted single-process run
# and no checkpoint or scratch file may be left.  Also: resuming with
# another number of ranks, or without mpirun, is refused with exit 1 and
# the checkpoint stays usable.  Ranks are found by PID among mpirun's
# children (pgrep -P), never by name.
#
#   PEMS_RUN=build/pems-run PEMS_BUILD=build bash tests/test_mpi_resume.sh [sort] [steps] [refusals]
#
# Knobs (long form, by hand): MPI_RESUME_KILLS (per run, default 3),
# MPI_RESUME_RUNS (runs per program, default 1), MPI_RESUME_NP (2),
# MPI_RESUME_COUNT (u64 records of the sort, 4M), MPI_RESUME_MEM (64M),
# MPI_RESUME_TMP (scratch dir), RESUME_SEED (kill times).  Exit 77 without
# mpirun.
set -uo pipefail

RUN=${PEMS_RUN:?set PEMS_RUN}
BUILD=${PEMS_BUILD:?set PEMS_BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! command -v mpirun >/dev/null 2>&1; then
	echo "test_mpi_resume: skip: mpirun not found; install openmpi-bin"
	exit 77
fi
# AddressSanitizer and ThreadSanitizer replace malloc by an allocator
# whose size-class regions all threads share, so what Open MPI's threads
# allocate while a rank starts moves the runtime's tables: a rank's
# layout does not replay and resume is refused (checkpoint.c 5 relies on
# glibc's per-thread arenas).  UBSan keeps glibc malloc.
case " ${PEMS_SAN:-} " in
*sanitize=address* | *sanitize=thread*)
	echo "test_mpi_resume: skip: under ASan/TSan a rank's memory layout does not replay (shared allocator regions); checkpoints of several ranks need glibc malloc"
	exit 77 ;;
esac
T=${MPI_RESUME_TMP:-${PEMS_TEST_TMP:-$(mktemp -d)}}
KILLS=${MPI_RESUME_KILLS:-3}
RUNS=${MPI_RESUME_RUNS:-1}
NP=${MPI_RESUME_NP:-2}
MEM=${MPI_RESUME_MEM:-64M}
WHAT=${*:-sort steps refusals}
MPI=(mpirun --oversubscribe --bind-to none -np "$NP")
export PEMS_QUIET=1
mkdir -p "$T" && cd "$T" || exit 1
unset PEMS_CHECKPOINT_DIR PEMS_CHECKPOINT_EVERY

fails=0 passes=0
ok() { echo "ok: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
want() { [[ " $WHAT " == *" $1 "* ]]; }

SEED=${RESUME_SEED:-$$}
RANDOM=$SEED
echo "random seed $SEED (RESUME_SEED=$SEED reproduces the kill times)"
ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
rsleep() {	# rsleep LO_MS HI_MS
	local m=$(($1 + RANDOM % ($2 - $1 + 1)))
	sleep "$(printf '%d.%03d' $((m / 1000)) $((m % 1000)))"
}

# kill_ranks MPIRUN_PID N: SIGKILL all of its ranks (N even) or one (N odd)
kill_ranks() {
	local kids
	kids=$(pgrep -P "$1")
	[[ -n $kids ]] || return 1
	if (($2 % 2 == 0)); then
		kill -9 $kids 2>/dev/null
	else
		kill -9 "$(shuf -n 1 -e $kids --random-source=<(yes "$RANDOM"))" 2>/dev/null
	fi
}

# reap MPIRUN_PID: wait for mpirun after killing ranks.  Open MPI 4.1.4's
# mpirun can deadlock in PMIx_server_finalize (a mutex of the PMIx library
# never released) when a rank died while it was still connecting to the
# PMIx server: its ranks are gone (zombies) and it never exits.  After 30 s
# such an mpirun is SIGKILLed and counted (HUNG); a rank that is still alive
# then is a pems failure (a job must end when one of its ranks dies).
HUNG=0
reap() {
	local i p st live=
	for ((i = 0; i < 300; i++)); do
		st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
		[[ -z $st || $st == Z ]] && break
		sleep 0.1
	done
	if [[ -n $st && $st != Z ]]; then
		for p in $(pgrep -P "$1"); do
			st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)
			[[ -n $st && $st != Z ]] && live+=" $p"
		done
		if [[ -n $live ]]; then
			fail "ranks$live still run 30 s after a rank of their job was killed"
			kill -9 $live 2>/dev/null
		else
			echo "note: mpirun $1 hung after its ranks died (Open MPI's PMIx finalize deadlock): SIGKILL"
			HUNG=$((HUNG + 1))
		fi
		kill -9 "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
}

# run_killed NAME CKDIR OUT REF MS -- CMD...: start CMD under mpirun, kill
# its ranks KILLS times (even kills after a checkpoint exists, odd ones at
# a random moment in [MS/10, MS*9/10]), resuming after each; compare.
run_killed() {
	local name=$1 ck=$2 out=$3 ref=$4 hi=$5 pid rc kills=0 resumes=0 i
	shift 6
	rm -rf "$out" "$ck" "$out.pems-tmp" pems-ckpt-*
	"${MPI[@]}" "$@" >"$name.stdout" 2>"$name.stderr" &
	pid=$!
	while :; do
		if ((kills < KILLS)); then
			if ((kills % 2 == 0)); then
				for ((i = 0; i < 6000; i++)); do	# 60 s at most
					[[ -f $ck/manifest ]] || ! kill -0 "$pid" 2>/dev/null && break
					sleep 0.01
				done
				rsleep 0 $((hi / 3))
			else
				rsleep $((hi / 10)) $((hi * 9 / 10))
			fi
			if kill -0 "$pid" 2>/dev/null && kill_ranks "$pid" "$kills"; then
				reap "$pid"
				kills=$((kills + 1))
				if [[ -f $ck/manifest ]]; then
					resumes=$((resumes + 1))
					"${MPI[@]}" "$RUN" resume "$ck" >"$name.stdout" 2>"$name.stderr" &
				else	# killed before the first checkpoint: start again
					"${MPI[@]}" "$@" >"$name.stdout" 2>"$name.stderr" &
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
		fail "$name: exit $rc after $kills kills ($resumes resumes): $(grep -m3 'pems' "$name.stderr")"
		return 1
	fi
	if ! cmp -s "$out" "$ref"; then
		fail "$name: output differs from the uninterrupted run after $kills kills ($resumes resumes)"
		return 1
	fi
	if [[ -e $ck ]] || compgen -G "pems-ckpt-*" >/dev/null; then
		fail "$name: the checkpoint or its scratch files are left after success: $(ls -d "$ck" pems-ckpt-* 2>/dev/null | head -3)"
		return 1
	fi
	ok "$name: $NP ranks, kills: $kills resumed runs: $resumes identical: yes"
}

repeat_killed() {
	local k=0 r=0 n same=0
	for ((n = 1; n <= RUNS; n++)); do
		run_killed "$@" && same=$((same + 1))
		k=$((k + LAST_KILLS)) r=$((r + LAST_RESUMES))
	done
	((RUNS > 1)) && echo "$1: total: kills $k resumed runs $r runs $RUNS identical $same"
	return 0
}

if want sort; then
	"$RUN" gen --format u64 --count "${MPI_RESUME_COUNT:-4M}" --seed 11 sort.in || exit 1
	t0=$(ms)
	"$RUN" sort --format u64 --mem "$MEM" --tmp . --checkpoint-every off sort.in sort.ref ||
		exit 1
	ms_ref=$(($(ms) - t0 + 500))	# the job under mpirun takes longer to start
	repeat_killed sort sort.out.pems-ckpt sort.out sort.ref "$ms_ref" -- \
		"$RUN" sort --format u64 --mem "$MEM" --tmp . --checkpoint-every 1 sort.in sort.out
fi

if want steps; then
	STEPS=$BUILD/examples/steps
	t0=$(ms)
	env PEMS_PROCS=8 PEMS_MEM="$MEM" PEMS_TMP="$PWD" "$STEPS" 40 10 >steps.ref || exit 1
	ms_ref=$(($(ms) - t0 + 500))
	# VP 0 (rank 0) prints the digest: the last job's stdout
	repeat_killed steps ck.steps steps.stdout steps.ref "$ms_ref" -- \
		env PEMS_PROCS=8 PEMS_MEM="$MEM" PEMS_TMP="$PWD" PEMS_CHECKPOINT_DIR=ck.steps \
		PEMS_CHECKPOINT_EVERY=1 "$STEPS" 40 10
fi

if want refusals; then
	STEPS=$BUILD/examples/steps
	rm -rf ck.ref
	"${MPI[@]}" env PEMS_PROCS=4 PEMS_MEM="$MEM" PEMS_TMP="$PWD" PEMS_CHECKPOINT_DIR=ck.ref \
		PEMS_CHECKPOINT_EVERY=1 "$STEPS" 60 20 >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		[[ -f ck.ref/manifest ]] && grep -q '^superstep [3-9]' ck.ref/manifest && break
		sleep 0.05
	done
	kill_ranks "$pid" 0
	reap "$pid"
	if [[ -f ck.ref/manifest ]]; then
		expect_refusal() {	# expect_refusal WHAT PATTERN CMD...
			local what=$1 pat=$2 rc
			shift 2
			"$@" >refuse.out 2>&1
			rc=$?
			if ((rc != 0)) && grep -q -- "$pat" refuse.out; then
				ok "refused: $what ($(grep -m1 -- "$pat" refuse.out | cut -c1-150))"
			else
				fail "$what: expected a failure and '$pat', got exit $rc: $(head -3 refuse.out)"
			fi
		}
		expect_refusal "more ranks" "written by $NP ranks and this job has $((NP + 1))" \
			mpirun --oversubscribe --bind-to none -np $((NP + 1)) "$RUN" resume ck.ref
		expect_refusal "no mpirun" "written by $NP ranks and this job has 1" \
			"$RUN" resume ck.ref
		# the refusals left it usable: resume it to the end
		if "${MPI[@]}" "$RUN" resume ck.ref >steps2.out 2>&1 && [[ ! -e ck.ref ]]; then
			ok "the refused checkpoint still resumes ($(tail -1 steps2.out))"
		else
			fail "resume after the refusals: $(grep -m3 pems steps2.out)"
		fi
	else
		fail "refusals: could not stop examples/steps under mpirun after a checkpoint"
	fi
	rm -rf ck.ref pems-ckpt-*
fi

((HUNG)) && echo "mpirun hung and was killed after $HUNG of the kills (Open MPI, see reap)"
echo "$passes passed, $fails failed"
((fails == 0))
