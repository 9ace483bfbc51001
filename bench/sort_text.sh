#!/bin/bash
# bench/sort_text.sh - text sort, side by side (issue 24, acceptance 2 and 3):
# pems-run sort vs GNU sort vs DuckDB on one file of text lines, every
# contender in the same memory cgroup (bench/cgrun.sh: page cache dropped
# before each run), outputs compared, and the fio ceiling of the disk
# measured in the same run.
#
#   bash bench/sort_text.sh [SIZE]        (default 256M; the acceptance: 8G)
#
# Input: `pems-run gen --format lines --size SIZE` (NAME,INT,DEC,WORDS,
# 20..300 bytes a line), sorted with KEYS (-t, -k2,2n -k1,1):
#   pems    pems-run sort --mem MEM KEYS IN OUT (--stats-json: traffic;
#           workers chosen for the cores, WORKERS pins them)
#   pipe    cat IN | pems-run sort --mem MEM KEYS - - | sha1sum
#   gnu     LC_ALL=C sort -S MEM --parallel=THREADS -T SCRATCH KEYS -o OUT IN
#   duckdb  COPY (SELECT * FROM read_csv(IN) ORDER BY INT, NAME, DEC, WORDS)
#           TO OUT, memory_limit DUCK_MEM (default 3/4 of the cgroup: the
#           rest for the process beside its buffer pool), threads THREADS
#           (bench/sort_text_duckdb.js; @duckdb/node-api installed into
#           bench/.node when missing)
#   fio     sequential O_DIRECT io_uring 1 MiB read and write of SIZE in the
#           scratch dir: the 4N ceiling = 2 * (SIZE/read + SIZE/write)
# Every output must have GNU sort's sha1.  One line per run on stdout:
#   sort_text IMPL bytes=... secs=... mbps=... rss=... cg_peak=... traffic=...N sha1=ok|DIFF
# and the ratios (gnu/pems, duckdb/pems, ceiling/pems) with the issue's
# targets (>= 5, >= 2, >= 0.6); rows also go to $RESULTS_DIR/sort_text.csv.
# Exit status: 1 if an output differs or a run fails, else 0.
# Environment: BUILD (build), T (/var/tmp/pems-sort-text: input, outputs,
# scratch), MEM (1G), CG (1.1G), THREADS (2: GNU --parallel, DuckDB
# threads), WORKERS (pems --threads; unset: its choice), KEYS, ENGINES ("pems pipe
# gnu duckdb fio"), DUCK_MEM, RESULTS_DIR (bench/results/sort-text).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD NAME=sort_text
source bench/lib.sh
SIZE=${1:-256M}
BUILD=${BUILD:-build} PEMS_RUN=$ROOT/${BUILD:-build}/pems-run
T=${T:-/var/tmp/pems-sort-text} MEM=${MEM:-1G} CG=${CG:-1.1G} THREADS=${THREADS:-2}
KEYS=${KEYS:--t, -k2,2n -k1,1}
# pems picks its workers for the machine's cores (one more than the cores
# when the budget allows, to cover its reads and writes); WORKERS=N
# pins them
WORKERS_OPT=${WORKERS:+--threads $WORKERS}
ENGINES=${ENGINES:-pems pipe gnu duckdb fio}
RESULTS_DIR=${RESULTS_DIR:-bench/results/sort-text}
NODE_DIR=${NODE_DIR:-$ROOT/bench/.node}
CGB=$(to_bytes "$CG") || die "CG $CG: not a size"
DUCK_MEM=${DUCK_MEM:-$((CGB * 3 / 4 / 1048576))MB}
[[ -x $PEMS_RUN ]] || die "$PEMS_RUN not built (make)"
mkdir -p "$T/s" "$RESULTS_DIR/logs" || die "cannot create $T"
CSV=$RESULTS_DIR/sort_text.csv
csv_header "$CSV"
fails=0
has() { [[ " $ENGINES " == *" $1 "* ]]; }

IN=$T/in.txt
BYTES=$(to_bytes "$SIZE") || die "SIZE $SIZE: not a size"
if [[ ! -s $IN || $(stat -c %s "$IN") -lt $BYTES ]]; then
	msg "gen --format lines --size $SIZE"
	"$PEMS_RUN" gen --format lines --size "$SIZE" --quiet "$IN" || die "gen failed"
fi
N=$(stat -c %s "$IN")

# row IMPL LOG [TRAFFIC_N] [SHA1]: the line and the csv row of a cg_measure
row() {
	local impl=$1 log=$2 tr=${3:-} sha=${4:-} mbps
	mbps=$(awk -v n="$N" -v s="$M_SECS" 'BEGIN { printf "%.1f", (s > 0 ? n / s / 1e6 : 0) }')
	echo "sort_text $impl bytes=$N secs=$M_SECS mbps=$mbps rss=$((M_RSS >> 20))MiB" \
		"cg_peak=$((M_PEAK >> 20))MiB${tr:+ traffic=${tr}N}${sha:+ sha1=$sha} $M_STATUS"
	echo "sort_text,$impl,$N,$(to_bytes "$MEM"),1,1,$M_SECS,$mbps,$M_RSS,$M_PEAK,$M_RC,$M_STATUS,${sha}" >>"$CSV"
	[[ $M_STATUS == ok ]] || fails=$((fails + 1))
}

# check IMPL FILE: sha1 against GNU sort's output
REF=
check() {
	local s
	s=$(sha1sum <"$2" | cut -d' ' -f1)
	[[ -z $REF ]] && { echo "$s"; return; }
	[[ $s == "$REF" ]] && echo ok || { echo DIFF; fails=$((fails + 1)); }
}

declare -A SECS
if has gnu || [[ ! -s $T/gnu.out ]]; then
	# shellcheck disable=SC2086 # KEYS is several words on purpose
	cg_measure "$CG" "$RESULTS_DIR/logs/gnu.log" env LC_ALL=C sort -S "$MEM" \
		--parallel="$THREADS" -T "$T/s" $KEYS -o "$T/gnu.out" "$IN"
	has gnu && row gnu "$RESULTS_DIR/logs/gnu.log" "" "reference"
	SECS[gnu]=$M_SECS
fi
REF=$(sha1sum <"$T/gnu.out" | cut -d' ' -f1)

if has pems; then
	rm -f "$T/pems.json"
	# shellcheck disable=SC2086
	cg_measure "$CG" "$RESULTS_DIR/logs/pems.log" "$PEMS_RUN" sort --mem "$MEM" \
		$WORKERS_OPT --tmp "$T/s" --quiet --stats-json "$T/pems.json" $KEYS \
		"$IN" "$T/pems.out"
	tr=$( [[ -s $T/pems.json ]] && awk -v t="$(json_traffic "$T/pems.json")" -v n="$N" \
		'BEGIN { printf "%.2f", t / n }')
	row pems "$RESULTS_DIR/logs/pems.log" "$tr" "$(check pems "$T/pems.out")"
	SECS[pems]=$M_SECS
	rm -f "$T/pems.out"
fi

if has pipe; then
	# shellcheck disable=SC2086
	cg_measure "$CG" "$RESULTS_DIR/logs/pipe.log" bash -c "cat '$IN' | '$PEMS_RUN' sort \
		--mem $MEM $WORKERS_OPT --tmp '$T/s' --quiet $KEYS - - | sha1sum >'$T/pipe.sha1'"
	s=$(cut -d' ' -f1 "$T/pipe.sha1")
	[[ $s == "$REF" ]] && s=ok || { s=DIFF; fails=$((fails + 1)); }
	row pipe "$RESULTS_DIR/logs/pipe.log" "" "$s"
fi

if has duckdb; then
	if ! command -v node >/dev/null; then
		msg "skipping duckdb: node not installed"
	else
		if [[ ! -d $NODE_DIR/node_modules/@duckdb/node-api ]]; then
			msg "installing @duckdb/node-api into $NODE_DIR"
			mkdir -p "$NODE_DIR"
			(cd "$NODE_DIR" && npm install --no-audit --no-fund --silent @duckdb/node-api) \
				>"$RESULTS_DIR/logs/npm.log" 2>&1 || msg "npm install failed"
		fi
		rm -f "$T/duck.out"
		cg_measure "$CG" "$RESULTS_DIR/logs/duckdb.log" env NODE_PATH="$NODE_DIR/node_modules" \
			node bench/sort_text_duckdb.js "$IN" "$T/duck.out" "$T/s" "$DUCK_MEM" "$THREADS"
		row "duckdb(memory_limit=$DUCK_MEM)" "$RESULTS_DIR/logs/duckdb.log" "" \
			"$( [[ -s $T/duck.out ]] && check duckdb "$T/duck.out" || echo missing)"
		SECS[duckdb]=$M_SECS
		rm -f "$T/duck.out"
	fi
fi

# fio MODE: MB/s of sequential 1 MiB O_DIRECT io_uring transfers of N bytes
fio_mbps() {
	fio --name=ceil --filename="$T/s/fio.bin" --rw="$1" --bs=1M --size="$N" --direct=1 \
		--ioengine=io_uring --iodepth=8 --output-format=terse 2>/dev/null |
		awk -F';' -v m="$1" '{ print (m == "read" ? $7 : $48) / 1024 }'
}
if has fio && command -v fio >/dev/null; then
	sync
	w=$(fio_mbps write) r=$(fio_mbps read)
	rm -f "$T/s/fio.bin"
	ceil=$(awk -v n="$N" -v r="$r" -v w="$w" 'BEGIN { printf "%.2f", 2 * (n / 1048576 / r + n / 1048576 / w) }')
	echo "sort_text fio read=${r}MiB/s write=${w}MiB/s ceiling_4N_secs=$ceil"
	SECS[fio]=$ceil
fi

ratio() {	# ratio NAME PEER TARGET: peer secs / pems secs
	[[ -n ${SECS[pems]:-} && -n ${SECS[$2]:-} ]] || return 0
	awk -v a="${SECS[$2]}" -v b="${SECS[pems]}" -v n="$1" -v t="$3" 'BEGIN {
		r = (b > 0 ? a / b : 0)
		printf "sort_text ratio %s=%.2f (target >= %s) %s\n", n, r, t, (r >= t ? "met" : "NOT met") }'
}
ratio gnu/pems gnu 5
ratio duckdb/pems duckdb 2
ratio ceiling/pems fio 0.6
rm -f "$T/gnu.out"
exit $((fails > 0))
