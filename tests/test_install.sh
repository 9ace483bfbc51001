#!/bin/bash
# tests/test_install.sh - `make install PREFIX=...` gives a library that an
# out-of-tree BSP program builds against with pkg-config, and man pages that
# render; under mpirun, that program and the installed pems-run find the
# installed MPI plugin (lib/pems/libpems-mpi.so).  Run by tests/run.sh (PEMS_BUILD, PEMS_TEST_TMP; PEMS_SAN under
# make asan/ubsan).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${PEMS_BUILD:-$PWD/build}
TMP=${PEMS_TEST_TMP:-$BUILD/test-tmp/test_install}
PFX=$TMP/prefix
fail() { echo "test_install: FAIL: $*"; exit 1; }
mkdir -p "$TMP"
make -s install BUILD="$BUILD" PREFIX="$PFX" SAN="${PEMS_SAN:-}" >"$TMP/install.log" 2>&1 ||
	fail "make install: $(tail -5 "$TMP/install.log")"
for f in lib/libpems.a lib/libpems.so lib/libpems.so.0 lib/pems/libpems-mpi.so include/bsp.h include/pems.h \
	 bin/pems-run lib/pkgconfig/pems.pc share/man/man1/pems-run.1 share/man/man3/pems.3; do
	[[ -e "$PFX/$f" ]] || fail "missing $PFX/$f"
done
mkdir -p "$TMP/app" && cp examples/compat/inprod.c "$TMP/app/"
export PKG_CONFIG_PATH=$PFX/lib/pkgconfig
( cd "$TMP/app" && cc ${PEMS_SAN:-} inprod.c $(pkg-config --cflags --libs pems) -o inprod ) ||
	fail "out-of-tree build with pkg-config"
out=$(LD_LIBRARY_PATH=$PFX/lib PEMS_PROCS=4 PEMS_TMP=$TMP "$TMP/app/inprod" 2>&1 | grep -v "ASan\|False positive\|For details")
[[ "$out" == *" ok"* ]] || fail "inprod printed: $out"
# under mpirun the installed plugin is found: beside libpems.so (lib/pems/)
# for the program above, in ../lib/pems from bin/ for pems-run
if command -v mpirun >/dev/null 2>&1; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	mpi() {	# mpi LABEL CMD...: 2 ranks, both must load the installed plugin
		local label=$1 n
		shift
		rm -f "$TMP"/ld.*
		timeout --kill-after=10 120 mpirun --oversubscribe -np 2 env LD_LIBRARY_PATH="$PFX/lib" \
			PEMS_PROCS=4 PEMS_TMP="$TMP" LD_DEBUG=files LD_DEBUG_OUTPUT="$TMP/ld" "$@" \
			>"$TMP/mpi.log" 2>&1 || fail "$label under mpirun -np 2: $(tail -n 3 "$TMP/mpi.log")"
		n=$(grep -l "file=$PFX/[a-z/.]*/pems/libpems-mpi.so " "$TMP"/ld.* 2>/dev/null | wc -l)
		((n == 2)) || fail "$label under mpirun -np 2: $n ranks loaded $PFX/lib/pems/libpems-mpi.so, expected 2"
	}
	mpi inprod "$TMP/app/inprod"
	grep -q " ok" "$TMP/mpi.log" || fail "inprod under mpirun printed: $(cat "$TMP/mpi.log")"
	"$PFX/bin/pems-run" gen --format u64 --count 64K --quiet "$TMP/in" || fail "installed pems-run gen"
	mpi "pems-run sort" "$PFX/bin/pems-run" sort --format u64 --quiet --tmp "$TMP" "$TMP/in" "$TMP/out"
fi
if command -v man >/dev/null 2>&1; then
	for m in share/man/man1/pems-run.1 share/man/man3/pems.3; do
		man -l "$PFX/$m" 2>/dev/null | grep -q "NAME" || fail "man -l $m renders nothing"
	done
fi
make -s uninstall PREFIX="$PFX" >/dev/null 2>&1 || fail "make uninstall"
[[ -e "$PFX/lib/libpems.so" ]] && fail "uninstall left libpems.so"
[[ -e "$PFX/lib/pems" ]] && fail "uninstall left lib/pems"
echo "test_install: ok ($out)"
