#!/bin/bash
# tests/test_compat.sh - plain BSPlib programs (examples/compat/*.c, written
# as for MulticoreBSP for C or BSPonMPI: only <bsp.h>, plain malloc, no pems
# extensions) compile against the installed surface alone and print their
# "ok" line at p = 1, 4 and 64, and under other thread counts, I/O backends
# and budgets.
#
#   BUILD=build bash tests/run.sh test_compat
#
# Uses PEMS_BUILD (libpems.a) and PEMS_TEST_TMP (scratch) from tests/run.sh.
# The link line is the documented one (docs/api.md, README): no Open MPI
# on it (libpems.a loads the MPI plugin under mpirun only).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${PEMS_BUILD:-$PWD/build}
TMP=${PEMS_TEST_TMP:-$(mktemp -d)}
CC=${CC:-cc}
BIN=$TMP/bin
mkdir -p "$BIN" "$TMP/scratch" || exit 1

fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

progs=()
for src in examples/compat/*.c; do
	name=$(basename "$src" .c)
	# only the BSPlib surface: no pems header, no pems_ names
	if grep -Eq '#include *[<"](pems|runtime)\.h|pems_[a-z]' "$src"; then
		bad "$name: uses pems extensions"
		continue
	fi
	if grep -E '#include' "$src" | grep -vqE '<(bsp|stdio|stdlib|string|stdint|stddef|math)\.h>'; then
		bad "$name: includes more than <bsp.h> and the C library: $(grep '#include' "$src" | tr '\n' ' ')"
		continue
	fi
	# PEMS_SAN: the sanitizer flags the library was built with (make asan/ubsan)
	if ! $CC -Wall -Wextra -Werror ${PEMS_SAN:-} -Iinclude "$src" "$BUILD/libpems.a" \
		-luring -laio -lzstd -lpthread -lm -o "$BIN/$name" 2>"$TMP/$name.cc.log"; then
		bad "$name: does not compile with cc -Iinclude $src libpems.a ...:"
		sed 's/^/    /' "$TMP/$name.cc.log"
		continue
	fi
	ok
	progs+=("$name")
done
((${#progs[@]} >= 3)) || bad "expected at least 3 programs in examples/compat, built ${#progs[@]}"

# run NAME P ARGS -- ENV...: exactly one stdout line "NAME: p=P ... ok",
# nothing on stderr, exit 0
run() {
	local name=$1 p=$2 args=$3 out err rc label
	shift 3
	label="$name p=$p${args:+ args=$args}${*:+ $*}"
	out=$TMP/$name.out err=$TMP/$name.err
	env PEMS_PROCS="$p" PEMS_TMP="$TMP/scratch" "$@" \
		timeout --kill-after=10 120 "$BIN/$name" $args >"$out" 2>"$err"
	rc=$?
	# ASan's warnings about the VP stack switches are not the program's
	sed -i -e '/==WARNING: ASan/d' -e '/^False positive error reports may follow/d' \
		-e '/^For details see https:\/\/github.com\/google\/sanitizers\/issues\/189/d' "$err"
	if ((rc != 0)); then
		bad "$label: exit $rc; stderr: $(head -c 400 "$err")"
	elif [[ -s "$err" ]]; then
		bad "$label: stderr: $(head -c 400 "$err")"
	elif [[ $(wc -l <"$out") -ne 1 ]]; then
		bad "$label: expected one line, got: $(head -c 400 "$out")"
	elif ! grep -Eq "^$name: p=$p .* ok\$" "$out"; then
		bad "$label: $(cat "$out")"
	else
		ok
		echo "$label: $(cat "$out")"
	fi
}

for name in "${progs[@]}"; do
	for p in 1 4 64; do
		run "$name" "$p" ""
	done
	# other thread counts, backends and a small budget
	run "$name" 7 "" PEMS_THREADS=1 PEMS_IO=sync PEMS_MU=1M PEMS_MEM=64M
	run "$name" 64 "" PEMS_THREADS=2 PEMS_IO=aio PEMS_MU=1M PEMS_MEM=40M
	# fewer items than processes: empty local parts
	run "$name" 64 10 PEMS_THREADS=2 PEMS_IO=uring
done

echo "test_compat: $pass passed, $fail failed"
((fail == 0))
