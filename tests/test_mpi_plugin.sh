#!/bin/bash
# tests/test_mpi_plugin.sh - Open MPI is loaded only under mpirun, through
# the plugin libpems-mpi.so (mpi/mpi_plugin.h, pems/transport.c 5).
#
#  - no program of the build links libmpi (pems-run, examples, tests);
#  - a one-rank run (pems-run sort, an example) never maps libmpi nor the
#    plugin (LD_DEBUG=files lists every object the loader opens);
#  - under mpirun -np 2 the plugin of this build is loaded and the job runs;
#    a copy of the program with a plugin beside it loads that one first;
#  - under mpirun, a plugin that cannot be loaded (missing, without its
#    entry point, of another interface version) ends every rank with exit
#    1 and "pems: error: cannot load the MPI transport PATH: WHY", and no
#    rank goes on as a one-rank job.
#
# Uses PEMS_RUN, PEMS_BUILD, PEMS_TEST_TMP from tests/run.sh; the mpirun
# parts are skipped (with the one-rank parts still run) without mpirun.
set -uo pipefail

NAME=test_mpi_plugin
. "$(dirname "${BASH_SOURCE[0]}")/mpi_script.sh"	# RUN, T, fail, die
BUILD=${PEMS_BUILD:-$ROOT/build}
PLUGIN=$BUILD/libpems-mpi.so
INPROD=$BUILD/examples/inprod
CC=${CC:-cc}
export PEMS_TMP=$T PEMS_PROCS=4

[[ -f "$PLUGIN" ]] || die "$PLUGIN is not built"

# 1. nothing links libmpi
for bin in "$RUN" "$INPROD" "$BUILD/tests/check_mpi_bsp" "$BUILD/libpems.so"; do
	[[ -e "$bin" ]] || { die "$bin is not built"; continue; }
	if grep -q 'libmpi\|libopen-pal' <<<"$(ldd "$bin")"; then
		die "$(basename "$bin") links Open MPI: $(ldd "$bin" | grep -o 'lib[a-z-]*mpi[^ ]*' | tr '\n' ' ')"
	fi
done
# ldd's output first: grep -q under pipefail can kill ldd with SIGPIPE
libs=$(ldd "$PLUGIN")
grep -q 'libmpi' <<<"$libs" || die "the plugin does not link libmpi"

# loaded FILE LOG: true if the loader's LD_DEBUG=files log opened FILE
loaded() { grep -q "file=[^ ]*$1" "$2"; }

# 2. one-rank runs map neither
"$RUN" gen --format u64 --quiet --count 128K "$T/in" >"$T/log" 2>&1 || die "gen: $(tail -n 2 "$T/log")"
env LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.sort" "$RUN" sort --format u64 --quiet \
	--tmp "$T" "$T/in" "$T/out" >"$T/log" 2>&1 || die "one-rank sort: $(tail -n 2 "$T/log")"
cat "$T"/ld.sort.* >"$T/ld.sort" 2>/dev/null
loaded libmpi "$T/ld.sort" && die "a one-rank pems-run sort loaded libmpi"
loaded libpems-mpi "$T/ld.sort" && die "a one-rank pems-run sort loaded the plugin"
grep -q 'file=' "$T/ld.sort" || die "LD_DEBUG=files logged nothing: the check above proves nothing"
out=$(env LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.inprod" "$INPROD" 2>&1)
[[ "$out" == *" ok"* ]] || die "inprod on one rank: $out"
cat "$T"/ld.inprod.* 2>/dev/null | grep -q 'libmpi' && die "a one-rank inprod loaded libmpi"

if ! command -v mpirun >/dev/null 2>&1; then
	echo "$NAME: mpirun not found: the mpirun checks are skipped"
	exit $fail
fi
MPIRUN=(timeout --kill-after=10 120 mpirun --oversubscribe -np 2)

# 3. under mpirun: this build's plugin, and a plugin beside the program first
rm -f "$T"/ld.mpi.*
out=$("${MPIRUN[@]}" env LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.mpi" "$INPROD" 2>&1)
[[ "$out" == *"p=4 "*" ok"* ]] || die "inprod under mpirun -np 2: $out"
n=$(grep -l "file=$PLUGIN " "$T"/ld.mpi.* 2>/dev/null | wc -l)
((n == 2)) || die "mpirun -np 2: $n ranks loaded $PLUGIN, expected 2"
mkdir -p "$T/bin" && cp "$INPROD" "$PLUGIN" "$T/bin/" || die "cannot copy to $T/bin"
rm -f "$T"/ld.mpi.*
out=$("${MPIRUN[@]}" env LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.mpi" "$T/bin/inprod" 2>&1)
[[ "$out" == *" ok"* ]] || die "a copy of inprod under mpirun -np 2: $out"
n=$(grep -l "file=$T/bin/libpems-mpi.so " "$T"/ld.mpi.* 2>/dev/null | wc -l)
((n == 2)) || die "the plugin beside the program was loaded by $n ranks, expected 2"

# 4. a plugin that cannot be loaded ends the job: exit 1, one clear line per rank
# broken LABEL PATH WHY-PATTERN
broken() {
	local label=$1 path=$2 why=$3 rc lines

	out=$("${MPIRUN[@]}" env PEMS_MPI_PLUGIN="$path" "$INPROD" 2>&1)
	rc=$?
	((rc != 0)) || die "$label: mpirun exited 0"
	[[ "$out" == *" ok"* ]] && die "$label: a rank ran on alone: $out"
	lines=$(grep -c "^pems: error: cannot load the MPI transport $path: $why" <<<"$out")
	((lines >= 1)) || die "$label: no 'cannot load the MPI transport' line matching '$why': $(head -n 5 <<<"$out")"
	echo "  $label: mpirun exit $rc, $lines error line(s)"
}
broken "missing plugin" "$T/none.so" ".*No such file"
printf 'int pems_mpi_plugin_not(void) { return 0; }\n' >"$T/noentry.c"
"$CC" -shared -fPIC -o "$T/noentry.so" "$T/noentry.c" || die "cannot build a test plugin"
broken "plugin without its entry" "$T/noentry.so" ".*undefined symbol: pems_mpi_plugin"
printf '%s\n' '#include "mpi_plugin.h"' \
	'static const struct pems_mpi_ops ops = { .version = 999, .size = sizeof(ops) };' \
	'__attribute__((visibility("default"))) const struct pems_mpi_ops *pems_mpi_plugin(void) { return &ops; }' \
	>"$T/oldver.c"
"$CC" -shared -fPIC -I"$ROOT/mpi" -o "$T/oldver.so" "$T/oldver.c" || die "cannot build a test plugin"
broken "plugin of another version" "$T/oldver.so" "its interface is version 999"
[[ $fail == 0 ]] && echo "$NAME: ok"
exit $fail
