#!/bin/bash
# tests/run.sh - run the built test programs and print one line per test.
#
#   BUILD=build bash tests/run.sh [NAME...]     (make check / asan / ubsan)
#
# Runs every $BUILD/tests/check_* whose source tests/check_*.c exists, and
# every tests/test_*.sh (with bash).  NAME arguments restrict the run to those
# tests (e.g. `tests/run.sh check_io test_cli`).  Each test gets:
#   PEMS_TEST_TMP   a fresh scratch dir $BUILD/test-tmp/<label>, removed after
#                   (kept if PEMS_KEEP_TMP=1)
#   PEMS_RUN        $BUILD/pems-run (absolute path)
#   PEMS_BUILD      $BUILD (absolute path)
#   CK_DEFAULT_TIMEOUT=300 unless set (Check's per-test timeout, fork mode)
# check_mpi_* programs run under `mpirun --oversubscribe -np N` for each N in
# PEMS_TEST_NP (default "1 2 4"), with CK_FORK=no unless set (forking after
# MPI_Init is not safe); all ranks share PEMS_TEST_TMP.
#
# A test program that exits 77 is reported as SKIP; the reason shown is the
# last output line containing "skip" (any case), else its last line.
# Whole programs are also bounded by PEMS_TEST_TIMEOUT seconds (default 1800)
# so that a hung MPI job cannot eat the CI budget.
# Output of each run goes to $BUILD/test-logs/<label>.log; the tail of it is
# printed for failures (all of it with VERBOSE=1).
# Exit status: 0 if nothing failed, 1 otherwise (also if no test was found).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

export PEMS_BUILD=$BUILD
export PEMS_RUN=$BUILD/pems-run
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-300}
# Test cases with their own Check timeouts (check_io: 60 s) only guard
# against hangs; a machine loaded 20-fold (seen while several builds ran)
# stretched a signal-storm case past 60 s, so give them room.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-5}
# Sanitizer defaults (harmless for unsanitized builds); the caller's win.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Open MPI leaks by design at MPI_Finalize; suppress those (tests/lsan.supp).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/lsan.supp:print_suppressions=0}
TEST_TIMEOUT=${PEMS_TEST_TIMEOUT:-1800}
NPS=${PEMS_TEST_NP:-1 2 4}
LOGDIR=$BUILD/test-logs
TMPROOT=$BUILD/test-tmp
mkdir -p "$LOGDIR" "$TMPROOT" || exit 1

npass=0 nfail=0 nskip=0
failed=()

want() {	# want NAME: true if NAME was selected on the command line
	local n=$1 a
	shift
	(($# == 0)) && return 0
	for a in "$@"; do [[ "$a" == "$n" ]] && return 0; done
	return 1
}

now() { echo "${EPOCHREALTIME/,/.}"; }	# seconds.micro, any locale
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
t_all=$(now)

report() {	# report STATUS LABEL SECS [REASON]
	local st=$1 label=$2 secs=$3 why=${4:-}
	printf '%-4s %-40s %8ss%s\n' "$st" "$label" "$secs" "${why:+  ($why)}"
}

# run_one LABEL CMD...: run CMD with a scratch dir, log, classify.
run_one() {
	local label=$1 log rc t0 secs why tmp
	shift
	log=$LOGDIR/$label.log
	tmp=$TMPROOT/$label
	rm -rf "$tmp" && mkdir -p "$tmp" || { report FAIL "$label" 0 "cannot create $tmp"; nfail=$((nfail + 1)); failed+=("$label"); return; }
	t0=$(now)
	PEMS_TEST_TMP=$tmp timeout --kill-after=30 "$TEST_TIMEOUT" "$@" </dev/null >"$log" 2>&1
	rc=$?
	secs=$(secs_since "$t0")
	[[ "${PEMS_KEEP_TMP:-0}" == 1 ]] || rm -rf "$tmp"
	if ((rc == 0)); then
		report PASS "$label" "$secs"
		npass=$((npass + 1))
	elif ((rc == 77)); then
		why=$(grep -i 'skip' "$log" | tail -n 1)
		[[ -n "$why" ]] || why=$(tail -n 1 "$log")
		report SKIP "$label" "$secs" "${why:0:160}"
		nskip=$((nskip + 1))
	else
		if ((rc == 124 || rc == 137)); then
			why="exit $rc: timed out after ${TEST_TIMEOUT}s?"
		elif ((rc > 128)); then
			why="killed by signal $((rc - 128))"
		else
			why="exit $rc"
		fi
		report FAIL "$label" "$secs" "$why; log: ${log#"$ROOT"/}"
		nfail=$((nfail + 1))
		failed+=("$label")
		if [[ "${VERBOSE:-0}" == 1 ]]; then
			sed 's/^/    | /' "$log"
		else
			tail -n 40 "$log" | sed 's/^/    | /'
		fi
	fi
	if [[ "${VERBOSE:-0}" == 1 ]] && ((rc == 0 || rc == 77)); then
		sed 's/^/    | /' "$log"
	fi
}

found=0
shopt -s nullglob
have_mpirun=0
command -v mpirun >/dev/null 2>&1 && have_mpirun=1

for src in tests/check_*.c; do
	name=$(basename "$src" .c)
	want "$name" "$@" || continue
	bin=$BUILD/tests/$name
	found=$((found + 1))
	if [[ ! -x "$bin" ]]; then
		report FAIL "$name" 0 "not built: $bin missing (run make all-tests)"
		nfail=$((nfail + 1)); failed+=("$name")
		continue
	fi
	if [[ "$name" == check_mpi_* ]]; then
		if ((!have_mpirun)); then
			report SKIP "$name" 0 "mpirun not found; install openmpi-bin"
			nskip=$((nskip + 1))
			continue
		fi
		for np in $NPS; do
			# Full unwinding lets LSan attribute Open MPI's allocations to
			# its libraries; keep MCA components loaded for the same reason.
			CK_FORK=${CK_FORK:-no} \
			OMPI_MCA_mca_base_component_disable_dlclose=1 \
			PMIX_MCA_mca_base_component_disable_dlclose=1 \
			ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0 \
			run_one "$name.np$np" mpirun --oversubscribe --bind-to none \
				-np "$np" "$bin"
		done
	else
		run_one "$name" "$bin"
	fi
done

# Built programs whose source is gone are stale: say so, do not run them.
for bin in "$BUILD"/tests/check_*; do
	name=$(basename "$bin")
	[[ -f "$bin" && -x "$bin" && "$name" != *.* ]] || continue
	[[ -f "tests/$name.c" ]] && continue
	want "$name" "$@" || continue
	report SKIP "$name" 0 "stale binary, tests/$name.c no longer exists"
	nskip=$((nskip + 1))
done

for sh in tests/test_*.sh; do
	name=$(basename "$sh" .sh)
	want "$name" "$@" || continue
	found=$((found + 1))
	# shell tests may start MPI jobs (test_mpi_*.sh): the same leak
	# attribution settings as the MPI programs above
	OMPI_MCA_mca_base_component_disable_dlclose=1 \
	PMIX_MCA_mca_base_component_disable_dlclose=1 \
	ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0 \
	run_one "$name" bash "$sh"
done

total=$(secs_since "$t_all")
if ((found == 0)); then
	echo "tests/run.sh: error: no tests found (tests/check_*.c, tests/test_*.sh)${*:+ matching: $*}" >&2
	exit 1
fi
echo "----"
printf 'tests: %d passed, %d failed, %d skipped in %ss (BUILD=%s)\n' \
	"$npass" "$nfail" "$nskip" "$total" "${BUILD#"$ROOT"/}"
if ((nfail)); then
	echo "failed: ${failed[*]}"
	exit 1
fi
exit 0
