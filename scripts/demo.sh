#!/bin/bash
# scripts/demo.sh - a two-minute tour of pems (`make demo`).
#
#   BUILD=build bash scripts/demo.sh
#
# 1. hello    the classic BSPlib greeting over 16 virtual processors
# 2. inprod   inner product of two distributed vectors (Bisseling's bspinprod)
# 3. spill    64 VPs x 16 MiB = 1 GiB of contexts under a 128 MiB budget; each
#             VP fills its context, it goes to disk at the barrier, and is
#             checked after it comes back.  Run inside a 160 MiB cgroup
#             (bench/cgrun.sh) when root and cgroup-v1 are available.
# 4. sort     256 MiB of u64 keys sorted with --mem 128M, then verified.
# Scratch files go to $BUILD/demo-tmp (removed at the end).  Exit 1 on the
# first failing step.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PEMS_RUN=$BUILD/pems-run
DEMO=$BUILD/demo-tmp

for b in "$PEMS_RUN" "$BUILD/examples/hello" "$BUILD/examples/inprod" "$BUILD/examples/spill"; do
	[[ -x "$b" ]] || { echo "demo.sh: error: $b is not built; run make all" >&2; exit 1; }
done
rm -rf "$DEMO"
mkdir -p "$DEMO"
trap 'rm -rf "$DEMO"' EXIT
export PEMS_TMP=$DEMO

step() { printf '\n== %s\n' "$*"; }

step "1. hello: 16 VPs greet each other with bsp_put"
PEMS_PROCS=16 "$BUILD/examples/hello"

step "2. inprod: distributed inner product, 8 VPs"
PEMS_PROCS=8 "$BUILD/examples/inprod"

step "3. spill: 64 VPs x 16 MiB contexts (1 GiB) under a 128 MiB budget"
spill=(env PEMS_PROCS=64 PEMS_MU=16M PEMS_MEM=128M PEMS_STATS=1 "$BUILD/examples/spill")
if ((EUID == 0)) && PEMS_CG_NO_DROP=1 bash bench/cgrun.sh 160M -- true 2>/dev/null; then
	echo "(inside a 160 MiB memory cgroup; cg_peak_bytes is the most it ever held)"
	PEMS_CG_NO_DROP=1 bash bench/cgrun.sh 160M -- "${spill[@]}"
else
	echo "(no cgroup-v1 memory controller or not root: running without a memory cgroup)"
	"${spill[@]}"
fi

step "4. sort: 256 MiB of u64 keys with --mem 128M, then verify"
"$PEMS_RUN" gen --format u64 --count 32M --seed 7 --quiet "$DEMO/keys.u64"
"$PEMS_RUN" sort --format u64 --mem 128M --tmp "$DEMO" "$DEMO/keys.u64" "$DEMO/sorted.u64"
"$PEMS_RUN" verify --format u64 "$DEMO/sorted.u64" --against "$DEMO/keys.u64" --quiet

printf '\ndemo: all steps ok\n'
