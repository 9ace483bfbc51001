#!/bin/bash
# bench/ab.sh - two builds of pems side by side: is a change within noise?
#
#   bash bench/ab.sh OLD_BUILD [NEW_BUILD]      (NEW_BUILD default: build)
#
# Runs the sort (u64 and rec100, SORT_SIZE bytes) and the aggregate (kv
# rows, AGG_ROWS rows over 1e3 and 1e7 groups) with both builds'
# pems-run, interleaved (old, new, old, new, ...) REPEAT times on the same
# inputs, each run in bench/cgrun.sh with a cgroup of MEM + 10 % and the
# page cache dropped.  Every output of the new build must be byte-identical
# to the old build's (the behaviour check of a refactoring); a difference
# fails the run.  One line per run on stdout:
#   ab CASE BUILD rep=R secs=S rss_kb=K md5=M
# then per case the median seconds of each build and new/old.
# Environment: MEM (1G), SORT_SIZE (1G), AGG_ROWS (100M), REPEAT (3),
# T (/var/tmp/pems-ab: inputs and outputs), RESULTS_DIR (bench/results/ab).
# Exit 1 if a run fails or an output differs.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD NAME=ab.sh
source bench/lib.sh
[[ $# -ge 1 ]] || { echo "usage: $0 OLD_BUILD [NEW_BUILD]" >&2; exit 2; }
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
OLD=$(abs "$1") NEW=$(abs "${2:-build}")
MEM=${MEM:-1G} SORT_SIZE=${SORT_SIZE:-1G} AGG_ROWS=${AGG_ROWS:-100M}
REPEAT=${REPEAT:-3} T=${T:-/var/tmp/pems-ab}
RESULTS_DIR=${RESULTS_DIR:-bench/results/ab}
for b in "$OLD" "$NEW"; do
	[[ -x $b/pems-run ]] || die "$b/pems-run not built"
done
MEMB=$(to_bytes "$MEM") || die "MEM $MEM: not a size"
CG=$((MEMB + MEMB / 10))
mkdir -p "$T/s" "$RESULTS_DIR" || die "cannot create $T"
OUTF=$RESULTS_DIR/ab.txt
: > "$OUTF"
fails=0

gen() {	# gen FILE ARGS...: make an input once with the new build
	[[ -s $1 ]] && return 0
	msg "gen ${*:2}"
	"$NEW/pems-run" gen "${@:2}" --seed 42 --quiet "$1" || die "gen failed"
}

one() {	# one CASE BUILD REP IN CMD ARGS...: pems-run CMD ARGS IN OUT in the cgroup
	local c=$1 b=$2 rep=$3 in=$4 out=$T/out.$1.$(basename "$2") line secs rss md5
	shift 4
	rm -f "$out"
	line=$(bash bench/cgrun.sh "$CG" -- "$b/pems-run" "$@" --quiet \
		--mem "$MEM" --tmp "$T/s" "$in" "$out" 2>&1 >/dev/null | tail -n 1)
	secs=$(sed -n 's/.*secs=\([0-9.]*\).*/\1/p' <<<"$line")
	rss=$(sed -n 's/.*rss_kb=\([0-9]*\).*/\1/p' <<<"$line")
	[[ $line == *rc=0* ]] || { msg "$c $b failed: $line"; fails=$((fails + 1)); }
	md5=$(md5sum < "$out" | cut -c1-32)
	echo "ab $c $(basename "$(dirname "$b")")/$(basename "$b") rep=$rep secs=$secs rss_kb=$rss md5=$md5" |
		tee -a "$OUTF"
}

gen "$T/in.u64" --format u64 --count "$(( $(to_bytes "$SORT_SIZE") / 8 ))"
gen "$T/in.rec100" --format rec100 --count "$(( $(to_bytes "$SORT_SIZE") / 100 ))"
gen "$T/in.kv1e3" --format kv --count "$AGG_ROWS" --groups 1000
gen "$T/in.kv1e7" --format kv --count "$AGG_ROWS" --groups 10000000

run_case() {	# run_case CASE IN CMD ARGS...
	local c=$1 r
	shift
	for ((r = 1; r <= REPEAT; r++)); do
		one "$c" "$OLD" "$r" "$@"
		one "$c" "$NEW" "$r" "$@"
	done
}
AGG=(aggregate --agg count,sum,min,max,avg --output-format kv)
run_case sort-u64 "$T/in.u64" sort --format u64
run_case sort-rec100 "$T/in.rec100" sort --format rec100
run_case agg-1e3 "$T/in.kv1e3" "${AGG[@]}"
run_case agg-1e7 "$T/in.kv1e7" "${AGG[@]}"

# Per case: medians, new/old, and whether every output matched.
summarize() {	# summarize AB_TXT OLD_LABEL
	awk -v old="$2" '
	function med(list,   a, n, i, j, x) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) {
			x = a[i]
			for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		split($5, s, "="); split($7, m, "=")
		k = $2 SUBSEP ($3 == old ? "old" : "new")
		t[k] = t[k] " " s[2]
		if (!($2 in md)) md[$2] = m[2]
		if (m[2] != md[$2]) diff[$2] = 1
		cases[$2] = 1
	}
	END {
		for (c in cases) {
			o = med(t[c, "old"]); n = med(t[c, "new"])
			printf "case=%s old_secs=%s new_secs=%s new/old=%.3f outputs=%s\n",
				c, o, n, n / o, diff[c] ? "DIFFER" : "identical"
		}
	}' "$1" | sort
}
summarize "$OUTF" "$(basename "$(dirname "$OLD")")/$(basename "$OLD")" |
	tee "$RESULTS_DIR/ab-summary.txt"
grep -q DIFFER "$RESULTS_DIR/ab-summary.txt" && fails=$((fails + 1))
exit $((fails > 0))
