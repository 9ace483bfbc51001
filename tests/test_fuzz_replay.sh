#!/bin/bash
# tests/test_fuzz_replay.sh - rerun the stored fuzz corpus of every target.
#
# $PEMS_BUILD/fuzz/replay-TARGET (tests/fuzz/replay.c linked with
# tests/fuzz/fuzz_TARGET.c, built by `make all-tests` with the build's
# compiler and sanitizers) feeds each file of tests/fuzz/corpus/TARGET/
# to the target's entry function: the inputs libFuzzer found, crash
# reproducers among them, must all run through without a crash or a
# sanitizer report.  Parsers print usage and data errors; those go to a
# log that is shown only on failure.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PEMS_BUILD:-$ROOT/build}
T=${PEMS_TEST_TMP:-$(mktemp -d)}
fail=0

for dir in "$ROOT"/tests/fuzz/corpus/*/; do
	t=$(basename "$dir")
	bin=$BUILD/fuzz/replay-$t
	if [[ ! -x "$bin" ]]; then
		echo "test_fuzz_replay: FAIL: $bin is not built (make all-tests)"
		fail=1
		continue
	fi
	if "$bin" "$dir" >"$T/$t.out" 2>"$T/$t.err"; then
		echo "test_fuzz_replay: $t: $(tail -n 1 "$T/$t.out")"
	else
		echo "test_fuzz_replay: FAIL: $t: exit $?"
		tail -n 30 "$T/$t.err" | sed 's/^/    | /'
		fail=1
	fi
done
exit $fail
