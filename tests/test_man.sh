#!/bin/bash
# tests/test_man.sh - the man pages are current with the code.
#
#   BUILD=build bash tests/run.sh test_man
#
# Fails when
#   - a command listed by `pems-run --help` has no subsection in
#     man/pems-run.1, or a long option shown by a command's --help (and
#     by the help of gen's formats and of model's subcommands) appears
#     nowhere in man/pems-run.1;
#   - a function declared PEMS_API in include/bsp.h or include/pems.h has
#     no signature in man/pems.3 (its name followed by "(");
#   - a PEMS_* environment variable named in the product code is in
#     neither man page.
# Uses PEMS_RUN from tests/run.sh.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RUN=${PEMS_RUN:-build/pems-run}
[[ -x $RUN ]] || { echo "skip: $RUN not built"; exit 77; }

fail=0 nopt=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# man source as text: no font escapes, \- as -
text() { sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\(em/--/g' "$1"; }
man1=$(text man/pems-run.1)
man3=$(text man/pems.3)
has_word() {	# has_word TEXT WORD: WORD not inside a longer option or name
	grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" <<<"$1"
}

# ---- pems-run(1): commands and options --------------------------------------
cmds=$("$RUN" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[[ -n $cmds ]] || bad "pems-run --help lists no commands"
helps=()
for c in $cmds; do
	grep -qE "^\.SS $c\$" man/pems-run.1 || bad "command $c has no '.SS $c' in man/pems-run.1"
	helps+=("$c")
done
# helps that describe more options than the command's own: each
# `--format NAME` a command's help names (gen's kv, dense, ...) has its
# own, and model's subcommands
for c in $cmds; do
	for f in $("$RUN" "$c" --help 2>&1 | grep -oE -- '--format [a-z0-9|]+' |
		cut -d' ' -f2 | tr '|' '\n' | sort -u); do
		"$RUN" "$c" --format "$f" --help >/dev/null 2>&1 && helps+=("$c --format $f")
	done
done
helps+=("model calibrate" "model predict" "model project")
for h in "${helps[@]}"; do
	# shellcheck disable=SC2086 # h is words
	out=$("$RUN" $h --help 2>&1) || bad "pems-run $h --help exits $?"
	for o in $(grep -oE -- '--[a-z]([a-z0-9-]*[a-z0-9])?' <<<"$out" | sort -u); do
		nopt=$((nopt + 1))
		has_word "$man1" "$o" || bad "pems-run $h: option $o is not in man/pems-run.1"
	done
done

# ---- pems(3): every exported function ---------------------------------------
nfn=0
for f in $(grep -hoE 'PEMS_API[^(]*\(' include/bsp.h include/pems.h |
	grep -v '__attribute__' | sed -E 's/.*[^a-z_0-9]([a-z_][a-z_0-9]*) *\($/\1/' | sort -u); do
	nfn=$((nfn + 1))
	grep -qE "(^|[^a-z_0-9])$f\(" <<<"$man3" || bad "function $f() has no signature in man/pems.3"
done
((nfn > 50)) || bad "found only $nfn exported functions in include/ (parse error?)"

# ---- environment variables ------------------------------------------------------
nenv=0
for v in $(git grep -hoE '"PEMS_[A-Z0-9_]+"' -- io pems bsp algorithms gen model cli mpi include 2>/dev/null |
	tr -d '"' | sort -u); do
	nenv=$((nenv + 1))
	has_word "$man3$man1" "$v" || bad "environment variable $v is in neither man page"
done

echo "checked: $(wc -w <<<"$cmds") commands, $nopt options in ${#helps[@]} helps," \
	"$nfn functions, $nenv environment variables"
if ((fail)); then
	echo "$fail failure(s)"
	exit 1
fi
echo "ok"
exit 0
