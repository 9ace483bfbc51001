# tests/mpi_script.sh - the common prologue of the MPI test scripts
# (test_mpi_sort.sh, test_mpi_aggregate.sh, test_mpi_kill.sh), sourced
# after they set NAME:
#   RUN    pems-run (PEMS_RUN from tests/run.sh, else build/pems-run; exit 1
#          when it is not built)
#   T      scratch: PEMS_TEST_TMP, else a fresh dir under /work/scratch or
#          /tmp removed at exit
#   fail   0; die MSG prints "NAME: FAIL: MSG" and sets it to 1
#   now, secs T0   wall clock and seconds since T0 (any locale)
#   on_ranks NP LABEL CMD...   CMD alone or under mpirun (below)
# and lets Open MPI run as root.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN=${PEMS_RUN:-$ROOT/build/pems-run}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ ! -x "$RUN" ]]; then
	echo "$NAME: error: $RUN is not built (make all)" >&2
	exit 1
fi
if [[ -n "${PEMS_TEST_TMP:-}" ]]; then
	T=$PEMS_TEST_TMP
else
	base=/tmp
	[[ -d /work/scratch ]] && base=/work/scratch
	T=$(mktemp -d "$base/$NAME.XXXXXX") || exit 1
	trap 'rm -rf "$T"' EXIT
fi
mkdir -p "$T" || exit 1

fail=0
now() { echo "${EPOCHREALTIME/,/.}"; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
die() { echo "$NAME: FAIL: $*"; fail=1; }

# on_ranks NP LABEL CMD...: CMD alone (NP = 1) or under mpirun -np NP,
# killed after STEP_TIMEOUT seconds (set by the script), output in $T/log;
# the scratch dirs $T/s0 .. $T/s<NP-1> are made first.  Prints "  LABEL
# np=NP: exit RC, S s" and on failure pems' own lines (Open MPI's abort
# banner is long) and the log's tail.  Returns 0 if CMD exited 0.
on_ranks() {
	local np=$1 label=$2 t0 rc r
	shift 2
	for ((r = 0; r < np; r++)); do mkdir -p "$T/s$r"; done
	t0=$(now)
	if ((np == 1)); then
		timeout "$STEP_TIMEOUT" "$@" >"$T/log" 2>&1
	else
		timeout "$STEP_TIMEOUT" mpirun --oversubscribe --bind-to none -np "$np" \
			"$@" >"$T/log" 2>&1
	fi
	rc=$?
	echo "  $label np=$np: exit $rc, $(secs "$t0")s"
	if ((rc != 0)); then
		grep -a -m 8 'pems' "$T/log" | sed 's/^/    ! /'
		sed 's/^/    | /' "$T/log" | tail -n 20
		return 1
	fi
	return 0
}
