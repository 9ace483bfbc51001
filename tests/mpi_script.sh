# tests/mpi_script.sh - the common prologue of the MPI test scripts
# (test_mpi_sort.sh, test_mpi_aggregate.sh), sourced after they set NAME:
#   RUN    pems-run (PEMS_RUN from tests/run.sh, else build/pems-run; exit 1
#          when it is not built)
#   T      scratch: PEMS_TEST_TMP, else a fresh dir under /work/scratch or
#          /tmp removed at exit
#   fail   0; die MSG prints "NAME: FAIL: MSG" and sets it to 1
#   now, secs T0   wall clock and seconds since T0 (any locale)
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
