#!/bin/bash
# tests/test_style.sh - the style checkers find what they promise.
#
#   BUILD=build bash tests/run.sh test_style
#
# scripts/check-format.sh and scripts/check-structure.sh run on planted
# files in PEMS_TEST_TMP: each rule must report its violation, and clean
# files (a function of exactly 80 lines, a file of 1000) must pass. The
# tree itself is checked by `make check-format` (a prerequisite of make
# check) and `make check-structure`.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
T=${PEMS_TEST_TMP:-$(mktemp -d)}
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
expect() {	# expect OUTPUT RULE FILE: a line "RULE FILE..." in OUTPUT
	grep -q "^$2 $3" <<<"$1" || bad "no '$2' violation for $3"
}

# ---- check-format ------------------------------------------------------------
F=$T/format
mkdir -p "$F"
printf 'int a;\r\n' >"$F/crlf.c"
printf 'int a; \n' >"$F/trailing.c"
printf 'int a;' >"$F/nonl.c"
printf 'int a;\n\n' >"$F/blank.c"
printf 'void f(void)\n{\n    return;\n}\n' >"$F/indent.c"
printf 'void f(void)\n{\n\t \treturn;\n}\n' >"$F/tabspace.c"
printf 'int %s;\n' "$(printf 'x%.0s' {1..130})" >"$F/length.c"
printf 'const char *s = "%s";\n' "$(printf 'x%.0s' {1..130})" >"$F/string.c"
printf '/*\n * comment\n */\nint a;\n' >"$F/clean.c"
out=$(bash scripts/check-format.sh "$F"/*.c 2>&1) && bad "check-format passed planted violations"
for r in crlf trailing indent tabspace length; do expect "$out" "$r" "$F/$r.c"; done
expect "$out" eof "$F/nonl.c"
expect "$out" eof "$F/blank.c"
grep -q "string.c\|clean.c" <<<"$out" && bad "check-format flagged a clean file: $(grep 'string.c\|clean.c' <<<"$out")"
bash scripts/check-format.sh "$F/clean.c" "$F/string.c" >/dev/null 2>&1 || bad "check-format failed clean files"

# ---- check-structure -----------------------------------------------------------
S=$T/structure
mkdir -p "$S"/io "$S"/pems "$S"/bsp "$S"/algorithms/sort "$S"/cli "$S"/include
body() {	# body N: a function whose braces span N lines
	printf 'int f%s(int x)\n{\n' "$1"
	for ((i = 2; i < $1; i++)); do printf '\tx += %d; /* { */\n' "$i"; done
	printf '}\n'
}
{ body 80; echo; printf 'static const char *s = "}}}";\n'; } >"$S/pems/ok.c"
body 81 >"$S/pems/long.c"
for ((i = 0; i < 1001; i++)); do echo "int v$i;"; done >"$S/bsp/big.c"
for ((i = 0; i < 1000; i++)); do echo "int w$i;"; done >"$S/bsp/full.c"
echo 'int bsp_x;' >"$S/bsp/bsp_internal.h"
echo 'int pems_y;' >"$S/pems/runtime.h"
echo 'int pub;' >"$S/include/pems.h"
printf '#include "../pems/runtime.h"\n' >"$S/io/up.c"
printf '#include "bsp_internal.h"\n' >"$S/pems/down.c"
printf '#include "runtime.h"\n#include "pems.h"\n' >"$S/algorithms/sort/inner.c"
printf '#include "pems.h"\n' >"$S/cli/ok.c"
out=$(CHECK_ROOT=$S bash "$ROOT/scripts/check-structure.sh" /nonexistent 2>&1) &&
	bad "check-structure passed planted violations"
expect "$out" function "pems/long.c:2: f81() is 81 lines"
expect "$out" size "bsp/big.c: 1001 lines"
expect "$out" include "io/up.c:1"
expect "$out" include "pems/down.c:1"
expect "$out" include "algorithms/sort/inner.c:1"
n=$(grep -c . <<<"$(grep -E '^(size|function|include|call) ' <<<"$out")")
((n == 5)) || bad "check-structure reported $n violations, want 5: $out"

if ((fail)); then
	echo "$fail failure(s)"
	exit 1
fi
echo "ok"
