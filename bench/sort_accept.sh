#!/bin/bash
# bench/sort_accept.sh - acceptance runs of `pems-run sort` (hand-run; the
# default big part takes minutes and ~4x its size in scratch space).
#
#   bash bench/sort_accept.sh [big] [skews] [same]
#
#   big    gen + sort + verify --against of BIG_SIZE (8G) of u64 and of
#          rec100 under --mem BIG_MEM (1G); each sort under
#          /usr/bin/time -v and --stats-json: seconds, peak RSS, and the
#          disk traffic (ctx + msg + file bytes, read and written) over the
#          input size
#   skews  every --skew kind (uniform zipf dup sorted reverse equal) of both
#          formats at SKEW_SIZE (1G) under --mem SKEW_MEM (128M), verified
#   same   SAME_SIZE (512M) of each format sorted with --io uring, aio,
#          sync and --procs 16, 64, 256 at --mem SAME_MEM (512M): every
#          output must be byte-identical (md5), and verify
# One line per run: accept <part> <format> <case> secs=… rss=… traffic=…N ok|FAIL
# Exit status: the number of failed runs (0: all accepted).  verify's lines
# go to $ACCEPT_TMP/verify.log.
# Environment: BUILD (build), ACCEPT_TMP (/var/tmp/pems-sort-accept: inputs,
# outputs and pems scratch), the sizes and budgets above.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
PEMS_RUN=${BUILD:-build}/pems-run
T=${ACCEPT_TMP:-/var/tmp/pems-sort-accept}
BIG_SIZE=${BIG_SIZE:-8G} BIG_MEM=${BIG_MEM:-1G}
SKEW_SIZE=${SKEW_SIZE:-1G} SKEW_MEM=${SKEW_MEM:-128M}
SAME_SIZE=${SAME_SIZE:-512M} SAME_MEM=${SAME_MEM:-512M}
NAME=sort_accept
source bench/lib.sh
[[ -x $PEMS_RUN ]] || die "$PEMS_RUN not built (make)"
mkdir -p "$T/tmp" || die "cannot create $T"
fails=0

recsize() { [[ $1 == u64 ]] && echo 8 || echo 100; }

# gen FORMAT SIZE SKEW OUT: SIZE bytes rounded down to whole records
gen() {
	local n=$(($(to_bytes "$2") / $(recsize "$1")))
	"$PEMS_RUN" gen --format "$1" --count "$n" --seed 42 --skew "$3" --quiet "$4"
}

# sorted PART FORMAT CASE IN OUT ARGS...: sort, verify against IN, one line
sorted() {
	local part=$1 fmt=$2 case=$3 in=$4 out=$5 tv=$T/time.txt js=$T/stats.json status
	shift 5
	rm -f "$out" "$js"
	if /usr/bin/time -v -o "$tv" "$PEMS_RUN" sort --format "$fmt" --tmp "$T/tmp" \
		--quiet --stats-json "$js" "$@" "$in" "$out" &&
		"$PEMS_RUN" verify --format "$fmt" --against "$in" --quiet "$out" >>"$T/verify.log"; then
		status=ok
	else
		status=FAIL fails=$((fails + 1))
	fi
	report "$js" "$tv" "$part" "$fmt" "$case" "$status"
	[[ $status == ok ]]
}

# report STATS.json TIME.txt PART FORMAT CASE STATUS: the run's line (a
# run refused before it wrote statistics has no secs, traffic or v)
report() {
	local js=$1 tv=$2 n=0 io=0 secs=0 v='?' rss
	if [[ -s $js ]]; then
		n=$(jfield "$js" bytes) io=$(json_traffic "$js")
		secs=$(jfield "$js" secs) v=$(jfield "$js" v)
	fi
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tv")
	awk -v part="$3" -v fmt="$4" -v c="$5" -v st="$6" -v s="$secs" -v r="$rss" \
		-v io="$io" -v n="$n" -v v="$v" 'BEGIN {
		printf "accept %s %s %s secs=%.2f rss=%.0fMiB traffic=%.2fN v=%s %s\n",
			part, fmt, c, s, r / 1024, (n > 0 ? io / n : 0), v, st }'
}

part_big() {
	local fmt
	for fmt in u64 rec100; do
		gen "$fmt" "$BIG_SIZE" uniform "$T/big.in" || die "gen failed"
		sorted big "$fmt" "$BIG_SIZE" "$T/big.in" "$T/big.out" --mem "$BIG_MEM"
		rm -f "$T/big.in" "$T/big.out"
	done
}

part_skews() {
	local fmt skew
	for fmt in u64 rec100; do
		for skew in uniform zipf dup sorted reverse equal; do
			gen "$fmt" "$SKEW_SIZE" "$skew" "$T/skew.in" || die "gen failed"
			sorted skews "$fmt" "$skew" "$T/skew.in" "$T/skew.out" --mem "$SKEW_MEM"
		done
	done
	rm -f "$T/skew.in" "$T/skew.out"
}

part_same() {
	local fmt c ref sum
	for fmt in u64 rec100; do
		gen "$fmt" "$SAME_SIZE" uniform "$T/same.in" || die "gen failed"
		ref=
		for c in "--io uring" "--io aio" "--io sync" "--procs 16" "--procs 64" "--procs 256"; do
			# shellcheck disable=SC2086 # $c is two words on purpose
			sorted same "$fmt" "${c// /=}" "$T/same.in" "$T/same.out" --mem "$SAME_MEM" $c ||
				continue
			sum=$(md5sum <"$T/same.out" | cut -d' ' -f1)
			ref=${ref:-$sum}
			if [[ $sum != "$ref" ]]; then
				echo "accept same $fmt ${c// /=} md5 $sum differs from $ref FAIL"
				fails=$((fails + 1))
			fi
		done
		echo "accept same $fmt md5 $ref"
	done
	rm -f "$T/same.in" "$T/same.out"
}

(($#)) || set -- big skews same
for p in "$@"; do
	case $p in
	big) part_big ;;
	skews) part_skews ;;
	same) part_same ;;
	*) die "unknown part $p (big, skews, same)" ;;
	esac
done
echo "accept: $fails failed"
exit "$fails"
