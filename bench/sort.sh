#!/bin/bash
# bench/sort.sh - external sort: pems vs GNU sort vs STXXL vs the disk's ceiling.
#
#   bash bench/sort.sh [SIZE...]        sizes like 256M 1G 4G (default 1G)
#   bash bench/sort.sh --report DIR     redo DIR's ratio table and plot
#
# Environment (all optional):
#   BUILD=build         where pems-run is ($BUILD/pems-run) and where the
#                       STXXL driver is built ($BUILD/bench/stxxl_sort)
#   MEM=1G              memory budget given to every contender; each runs in
#                       bench/cgrun.sh with a cgroup limit of MEM + 10 %
#   BENCH_TMP=/var/tmp/pems-bench   scratch dir (inputs, outputs, temp files;
#                       all contenders and fio use the same disk)
#   RESULTS_DIR=bench/results/sort   sort.csv, sort.png, logs/ go here
#   IMPLS="pems pems-rec100 gnu-sort stxxl stxxl-rec100 ceiling"  contenders
#   FIO_SIZE=2G         bytes per fio job for the I/O ceiling
#   KEEP_DATA=1         keep generated inputs in $BENCH_TMP/data for reuse
#   APPEND=1            add to RESULTS_DIR/sort.csv instead of starting it
#                       afresh (e.g. a 16G point run later); the table and
#                       plot cover every row
#   REPEAT=1            runs per contender and size (interleaved with the
#                       other contenders on the same input); the ratio
#                       table and the plot use the median of the ok runs
#
# Contenders, for each SIZE (N bytes; inputs from `pems-run gen`, seed 42):
#   pems          pems-run sort --format u64 on N bytes of u64 keys
#   pems-rec100   pems-run sort --format rec100 on N bytes of 100-byte records
#   gnu-sort      LC_ALL=C sort -S MEM --parallel=2 on the ascii100 file: the
#                 same records as the rec100 file, as 100-byte text lines
#   stxxl         bench/stxxl_sort.cpp (stxxl::sorter) on the u64 file
#   stxxl-rec100  the same driver on the rec100 file (10-byte keys)
#   ceiling       2N/read_bw + 2N/write_bw with fio's O_DIRECT sequential
#                 bandwidths on the scratch disk (the ~4N bytes of traffic
#                 a 2-pass sort needs, at full speed)
#   ceiling-mixed 4N/mixed_bw, mixed_bw = the bytes per second of a fio read
#                 job and a write job running at once (as a sort's passes
#                 read and write at once): what the disk gives when both
#                 directions share it, not the sum of their separate speeds
# Every output is checked (untimed) with `pems-run verify --against`, then
# deleted with the contender's temporary files; each input is deleted
# once its contenders are done (unless KEEP_DATA=1), so the disk holds at
# most two inputs, one output and one contender's temporary files (~4N;
# ~3N when only that fits: GNU sort then runs in a round of its own).
# The ceiling is measured once per size, just before its contenders.
# A contender whose binary is missing is skipped with a message.  Each run
# prints one line:
#   algo=sort impl=… format=… bytes=… secs=… mbps=… rss=… cg_peak=… status=…
# (mbps = 10^6 bytes of input per second; rss = peak RSS bytes; cg_peak =
# peak cgroup charge including page cache), then a ratio table, a
# targets table (the time each target of issue 4 asks of pems, over the
# ceiling: below 1 means faster than the disk moves 4N bytes) and a
# throughput-vs-size plot (gnuplot) are written.
# Exit 0 if no contender failed (skips are fine), 1 otherwise.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
NAME=sort.sh
# shellcheck source=bench/lib.sh
. bench/lib.sh	# msg, die, to_bytes
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PEMS_RUN=${PEMS_RUN:-$BUILD/pems-run}
MEM=${MEM:-1G}
BENCH_TMP=${BENCH_TMP:-/var/tmp/pems-bench}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/sort}
IMPLS=${IMPLS:-pems pems-rec100 gnu-sort stxxl stxxl-rec100 ceiling}
FIO_SIZE=${FIO_SIZE:-2G}
REPEAT=${REPEAT:-1}
CGRUN=$ROOT/bench/cgrun.sh
REPORT_ONLY=0
if [[ "${1:-}" == --report ]]; then	# --report DIR: redo table+plot from DIR/sort.csv
	REPORT_ONLY=1
	RESULTS_DIR=${2:?usage: bench/sort.sh --report RESULTS_DIR}
	shift 2
fi
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(1G)

MEM_B=$(to_bytes "$MEM") || die "bad MEM '$MEM'"
LIMIT_B=$(awk -v m="$MEM_B" 'BEGIN { printf "%.0f", m * 1.1 }')
FIO_B=$(to_bytes "$FIO_SIZE") || die "bad FIO_SIZE '$FIO_SIZE'"
has_impl() { [[ " $IMPLS " == *" $1 "* ]]; }

CSV=$RESULTS_DIR/sort.csv
nfail=0
if ((REPORT_ONLY)); then
	[[ -f "$CSV" ]] || die "no $CSV"
	SIZES=()
	IMPLS=""
	mkdir -p "$RESULTS_DIR/logs"
else
	mkdir -p "$BENCH_TMP/data" "$RESULTS_DIR/logs" || die "cannot create $BENCH_TMP or $RESULTS_DIR"
	if [[ "${APPEND:-0}" != 1 || ! -s "$CSV" ]]; then
		echo "impl,format,bytes,mem,limit,secs,mbps,rss_bytes,cg_peak_bytes,rc,status" >"$CSV"
	fi
fi

# ---- contenders' binaries --------------------------------------------------
have_pems=0
if [[ -x "$PEMS_RUN" ]]; then
	have_pems=1
elif ((!REPORT_ONLY)); then
	msg "skipping pems: $PEMS_RUN not built (make all)"
fi

STXXL_BIN=$BUILD/bench/stxxl_sort
have_stxxl=0
if has_impl stxxl || has_impl stxxl-rec100; then
	if [[ ! -f /usr/include/stxxl.h ]]; then
		msg "skipping stxxl: libstxxl-dev not installed (scripts/deps.sh --bench)"
	elif [[ -x "$STXXL_BIN" && "$STXXL_BIN" -nt bench/stxxl_sort.cpp ]]; then
		have_stxxl=1
	else
		mkdir -p "$(dirname "$STXXL_BIN")"
		# shellcheck disable=SC2046
		if g++ -O2 -fopenmp -Wall -Wextra -o "$STXXL_BIN" bench/stxxl_sort.cpp \
			$(pkg-config --cflags --libs stxxl 2>/dev/null || echo -lstxxl) \
			2>"$RESULTS_DIR/logs/stxxl-build.log"; then
			have_stxxl=1
		else
			msg "skipping stxxl: build failed, see $RESULTS_DIR/logs/stxxl-build.log"
		fi
	fi
fi

# ---- input data -------------------------------------------------------------
# gen FORMAT BYTES OUT: `pems-run gen` (deterministic, seed 42) if it works,
# else a stand-in: u64/rec100 from /dev/urandom, ascii100 as base64 lines of
# 99 chars + '\n'.  The pems-generated rec100 and ascii100 files hold the
# same keys.  An existing OUT of the right size is reused (KEEP_DATA=1).
gen() {
	local fmt=$1 bytes=$2 out=$3 rs=100
	[[ "$fmt" == u64 ]] && rs=8
	[[ -s "$out" && $(stat -c %s "$out") == "$bytes" ]] && return 0
	if ((have_pems)) && "$PEMS_RUN" gen --format "$fmt" --count "$((bytes / rs))" --seed 42 \
		--quiet "$out" >"$RESULTS_DIR/logs/gen-$fmt-$bytes.log" 2>&1 &&
		[[ $(stat -c %s "$out" 2>/dev/null) == "$bytes" ]]; then
		return 0
	fi
	((have_pems)) && msg "pems-run gen --format $fmt failed (see logs/gen-$fmt-$bytes.log); using a stand-in generator"
	rm -f "$out"
	case "$fmt" in
	u64|rec100) head -c "$bytes" /dev/urandom >"$out" ;;
	ascii100) (set +o pipefail; base64 -w 99 /dev/urandom | head -c "$bytes" >"$out") ;;
	esac
}

# check IMPL FMT IN OUT LOG: `pems-run verify` OUT against IN (untimed); on
# a mismatch mark the last CSV row "wrong".  No-op without pems-run.
check() {
	local impl=$1 fmt=$2 in=$3 out=$4 log=$5
	((have_pems)) || return 0
	if ! "$PEMS_RUN" verify --format "$fmt" "$out" --against "$in" --quiet >>"$log" 2>&1; then
		msg "$impl output FAILED verification (see $log)"
		sed -i '$ s/,ok$/,wrong/' "$CSV"
		nfail=$((nfail + 1))
	fi
}

# ---- one measured run -------------------------------------------------------
# measure IMPL FORMAT BYTES LOG CMD...: run CMD in the cgroup, print+record.
# Sets M_RC (bench/lib.sh cg_measure).
measure() {
	local impl=$1 fmt=$2 bytes=$3 log=$4
	shift 4
	M_CAP=0 cg_measure "$LIMIT_B" "$log" "$@"
	report "$impl" "$fmt" "$bytes" "$M_SECS" "$M_RSS" "$M_PEAK" "$M_RC" "$M_STATUS"
}

report() {	# report IMPL FORMAT BYTES SECS RSS PEAK RC STATUS
	local mbps
	mbps=$(awk -v b="$3" -v s="$4" 'BEGIN { if (s > 0) printf "%.1f", b / s / 1e6; else print "0" }')
	echo "algo=sort impl=$1 format=$2 bytes=$3 secs=$4 mbps=$mbps rss=$5 cg_peak=$6 mem=$MEM_B status=$8"
	echo "$1,$2,$3,$MEM_B,$LIMIT_B,$4,$mbps,$5,$6,$7,$8" >>"$CSV"
	[[ "$8" == ok || "$8" == skip* ]] || nfail=$((nfail + 1))
}

skip() {	# skip IMPL FORMAT BYTES WHY
	msg "skipping $1 at $3 bytes: $4"
	echo "$1,$2,$3,$MEM_B,$LIMIT_B,,,,,,skip" >>"$CSV"
}

# ---- I/O ceiling (once per size, just before its contenders) ----------------
# measure_ceiling: sets READ_BW, WRITE_BW, MIXED_BW (bytes/s; 0 = none).  The
# disk of a VM changes speed between half hours, so each size gets the
# ceiling of its own window rather than the one of the invocation's start.
READ_BW=0 WRITE_BW=0 MIXED_BW=0	# bytes/s
have_fio=0
if has_impl ceiling; then
	if command -v fio >/dev/null 2>&1; then
		have_fio=1
	else
		msg "skipping ceiling: fio not installed (scripts/deps.sh --bench)"
	fi
fi
fio_file=$BENCH_TMP/fio.dat
fio_job() {	# fio_job RW -> prints bandwidth in bytes/s (terse v3)
	local rw=$1 out
	out=$("$CGRUN" "$LIMIT_B" -- fio --name=ceiling --filename="$fio_file" \
		--rw="$rw" --bs=8M --size="$FIO_B" --direct=1 --ioengine=libaio \
		--iodepth=4 --numjobs=1 --end_fsync=1 --minimal --terse-version=3 \
		2>>"$RESULTS_DIR/logs/fio.log")
	echo "$out" >>"$RESULTS_DIR/logs/fio.log"
	# field 7: read bw KiB/s, field 48: write bw KiB/s
	awk -F';' -v rw="$rw" '$1 == 3 { printf "%.0f\n", (rw == "read" ? $7 : $48) * 1024; exit }' <<<"$out"
}
fio_mixed() {	# a read and a write job at once -> their bytes per second
	local out
	out=$("$CGRUN" "$LIMIT_B" -- fio --bs=8M --size="$FIO_B" --direct=1 \
		--ioengine=libaio --iodepth=4 --end_fsync=1 --group_reporting \
		--minimal --terse-version=3 \
		--name=mixed-r --filename="$fio_file" --rw=read \
		--name=mixed-w --filename="$fio_file.w" --rw=write \
		2>>"$RESULTS_DIR/logs/fio.log")
	echo "$out" >>"$RESULTS_DIR/logs/fio.log"
	awk -F';' '$1 == 3 { printf "%.0f\n", ($7 + $48) * 1024; exit }' <<<"$out"
}
measure_ceiling() {
	((have_fio)) || return 0
	WRITE_BW=$(fio_job write || echo 0)
	READ_BW=$(fio_job read || echo 0)
	MIXED_BW=$(fio_mixed || echo 0)
	rm -f "$fio_file" "$fio_file.w"
	if [[ -z "$READ_BW" || -z "$WRITE_BW" || "$READ_BW" == 0 || "$WRITE_BW" == 0 ]]; then
		msg "fio failed (see $RESULTS_DIR/logs/fio.log); no ceiling"
		READ_BW=0 WRITE_BW=0
		nfail=$((nfail + 1))
	else
		msg "disk ceiling (fio O_DIRECT 8 MiB sequential): read $((READ_BW / 1000000)) MB/s, write $((WRITE_BW / 1000000)) MB/s, both at once $((${MIXED_BW:-0} / 1000000)) MB/s"
	fi
}

# ---- the runs ---------------------------------------------------------------
# run_impl IMPL IN: one measured run of IMPL on input IN at size N (uses
# N, OUT, TMPD, L, rep from the loops), then the untimed output check.
# free_run NAME: the first run number from $rep up with neither NAME.rK.json
# nor logs/NAME.rK.log yet, so that APPEND=1 runs keep earlier runs' files
free_run() {
	local k=$rep
	while [[ -e $RESULTS_DIR/$1.r$k.json || -e $L/$1.r$k.log ]]; do k=$((k + 1)); done
	echo "$k"
}
run_impl() {
	local impl=$1 in=$2 r fmt log
	r=$(free_run "$impl-$N")
	log=$L/$impl-$N.r$r.log
	rm -rf "$OUT" "$OUT".tmp.* "$TMPD"	# (an OOM-killed run may leave OUT.tmp.*)
	mkdir -p "$TMPD"
	case "$impl" in
	pems|pems-rec100)
		fmt=u64
		[[ "$impl" == pems-rec100 ]] && fmt=rec100
		if ((!have_pems)); then
			skip "$impl" "$fmt" "$N" "pems-run not built"
			return 0
		fi
		measure "$impl" "$fmt" "$N" "$log" \
			"$PEMS_RUN" sort --format "$fmt" --mem "$MEM_B" --tmp "$TMPD" \
			"$in" "$OUT" --quiet --stats-json "$RESULTS_DIR/$impl-$N.r$r.json"
		((M_RC)) || check "$impl" "$fmt" "$in" "$OUT" "$log" ;;
	gnu-sort)
		measure gnu-sort ascii100 "$N" "$log" \
			env LC_ALL=C sort -S "${MEM_B}b" --parallel=2 -T "$TMPD" -o "$OUT" "$in"
		((M_RC)) || check gnu-sort ascii100 "$in" "$OUT" "$log" ;;
	stxxl|stxxl-rec100)
		fmt=u64
		[[ "$impl" == stxxl-rec100 ]] && fmt=rec100
		if ((!have_stxxl)); then
			skip "$impl" "$fmt" "$N" "STXXL driver not available"
			return 0
		fi
		measure "$impl" "$fmt" "$N" "$log" \
			"$STXXL_BIN" --format "$fmt" "$MEM_B" "$TMPD" "$in" "$OUT"
		((M_RC)) || check "$impl" "$fmt" "$in" "$OUT" "$log" ;;
	esac
	# free the disk at once: at 16 GiB input + output + temp is ~50 GB
	rm -rf "$OUT" "$OUT".tmp.* "$TMPD"
	return 0
}

# input_of IMPL: the input file IMPL sorts at size N
input_of() {
	case "$1" in
	pems|stxxl) echo "$BENCH_TMP/data/u64-$N.in" ;;
	gnu-sort) echo "$BENCH_TMP/data/ascii100-$N.in" ;;
	*) echo "$BENCH_TMP/data/rec100-$N.in" ;;
	esac
}

for size in "${SIZES[@]}"; do
	N=$(to_bytes "$size") || die "bad size '$size'"
	N=$((N / 800 * 800))	# whole u64 keys and whole 100-byte records
	((N > 0)) || die "size '$size' is too small"
	free=$(df -B1 --output=avail "$BENCH_TMP" | tail -n 1)
	if ((free < 3 * N + (1 << 30))); then
		msg "skipping size $size: needs ~$((((3 * N) >> 30) + 1)) GiB free in $BENCH_TMP, has $((free >> 30)) GiB"
		continue
	fi
	OUT=$BENCH_TMP/out
	TMPD=$BENCH_TMP/tmp
	L=$RESULTS_DIR/logs
	measure_ceiling
	# Contenders on the same records run interleaved REPEAT times, so
	# each round of GNU sort, STXXL and pems sees the same window of this
	# VM's disk and CPU.  GNU sort joins the rec100 round when the disk
	# holds both inputs (~4N: rec100 and ascii100 inputs, output, temp
	# files); else it runs in a round of its own (~3N, one input).
	groups=("u64:pems stxxl")
	if ((free >= 4 * N + (1 << 30))); then
		groups+=("rec100 ascii100:pems-rec100 stxxl-rec100 gnu-sort")
	else
		groups+=("rec100:pems-rec100 stxxl-rec100" "ascii100:gnu-sort")
	fi
	for group in "${groups[@]}"; do
		impls=()
		for impl in ${group#*:}; do
			if has_impl "$impl"; then impls+=("$impl"); fi
		done
		((${#impls[@]})) || continue
		fmts=()
		for fmt in ${group%%:*}; do
			for impl in "${impls[@]}"; do
				if [[ $(input_of "$impl") == */$fmt-$N.in ]]; then fmts+=("$fmt"); break; fi
			done
		done
		for fmt in "${fmts[@]}"; do
			msg "size $size ($N bytes): generating $fmt input"
			gen "$fmt" "$N" "$BENCH_TMP/data/$fmt-$N.in"
		done
		for ((rep = 1; rep <= REPEAT; rep++)); do
			for impl in "${impls[@]}"; do
				run_impl "$impl" "$(input_of "$impl")"
			done
		done
		if [[ "${KEEP_DATA:-0}" != 1 ]]; then
			for fmt in "${fmts[@]}"; do rm -f "$BENCH_TMP/data/$fmt-$N.in"; done
		fi
	done
	if has_impl ceiling && ((READ_BW > 0)); then
		secs=$(awk -v n="$N" -v r="$READ_BW" -v w="$WRITE_BW" 'BEGIN { printf "%.2f", 2 * n / r + 2 * n / w }')
		report ceiling - "$N" "$secs" 0 0 0 ok
		if ((${MIXED_BW:-0} > 0)); then
			secs=$(awk -v n="$N" -v m="$MIXED_BW" 'BEGIN { printf "%.2f", 4 * n / m }')
			report ceiling-mixed - "$N" "$secs" 0 0 0 ok
		fi
	fi
	rm -rf "$OUT" "$OUT".tmp.* "$TMPD"
done
rmdir "$BENCH_TMP/data" "$BENCH_TMP" 2>/dev/null || true

# ---- summary, ratio table, plot ---------------------------------------------
# sort-summary.csv: impl,bytes,runs,median secs,median MB/s over the ok runs.
SUM=$RESULTS_DIR/sort-summary.csv
awk -F, 'NR > 1 && $11 == "ok" { k = $1 "," $3; n[k]++; v[k, n[k]] = $6 }
END {
	print "impl,bytes,runs,secs,mbps"
	for (k in n) {
		m = n[k]
		for (i = 1; i <= m; i++) a[i] = v[k, i] + 0
		for (i = 2; i <= m; i++)	# insertion sort (mawk has no asort)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		split(k, f, ",")
		printf "%s,%s,%d,%.2f,%.1f\n", f[1], f[2], m, med, (med > 0 ? f[2] / med / 1e6 : 0)
	}
}' "$CSV" >"$SUM"

# ratio X/pems = secs(X) / secs(pems): > 1 means pems is faster;
# ceiling/pems = the fraction of the I/O ceiling pems reaches.
echo
echo "median secs; ratios = secs(other) / secs(pems): >1 = pems faster; ceil/pems = fraction of the I/O ceiling"
awk -F, 'NR > 1 { t[$2 "," $1] = $4; sz[$2] = 1 }
function r(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "n/a" }
function v(x) { return x != "" ? x : "n/a" }
END {
	printf "%11s %7s %7s %7s %7s %7s %7s %7s | %8s %8s %8s | %8s %8s %8s %8s\n", "bytes",
		"pems", "p-rec", "gnu", "stxxl", "s-rec", "ceil", "c-mix",
		"stxxl/p", "ceil/p", "gnu/p", "gnu/p-r", "s-rec/p-r", "ceil/p-r", "cmix/p-r"
	n = 0
	for (b in sz) keys[++n] = b	# kept as strings: b + 0 prints 4.29497e+09 and misses t[]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && keys[j - 1] + 0 > keys[j] + 0; j--) { x = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = x }
	for (i = 1; i <= n; i++) {
		b = keys[i]
		p = t[b ",pems"]; pr = t[b ",pems-rec100"]; g = t[b ",gnu-sort"]
		s = t[b ",stxxl"]; sr = t[b ",stxxl-rec100"]; c = t[b ",ceiling"]; cm = t[b ",ceiling-mixed"]
		printf "%11s %7s %7s %7s %7s %7s %7s %7s | %8s %8s %8s | %8s %8s %8s %8s\n", b,
			v(p), v(pr), v(g), v(s), v(sr), v(c), v(cm),
			r(s, p), r(c, p), r(g, p), r(g, pr), r(sr, pr), r(c, pr), r(cm, pr)
	}
	# What each target asks of pems, and whether a sort moving the 4N
	# bytes of two passes could do it on this disk: the time it needs over
	# the ceiling time (< 1 = faster than fio reads and writes the 4N).
	printf "\ntargets: the time pems must beat; /ceil = that time over the ceiling (< 1: below the disk ceiling for 4N bytes)\n"
	printf "%11s %9s %7s %9s %7s %9s %7s\n", "bytes", "gnu/5", "/ceil", "s-rec/2", "/ceil", "stxxl/2", "/ceil"
	for (i = 1; i <= n; i++) {
		b = keys[i]
		g = t[b ",gnu-sort"]; s = t[b ",stxxl"]; sr = t[b ",stxxl-rec100"]; c = t[b ",ceiling"]
		printf "%11s %9s %7s %9s %7s %9s %7s\n", b,
			(g != "" ? sprintf("%.2f", g / 5) : "n/a"), r(g != "" ? g / 5 : "", c),
			(sr != "" ? sprintf("%.2f", sr / 2) : "n/a"), r(sr != "" ? sr / 2 : "", c),
			(s != "" ? sprintf("%.2f", s / 2) : "n/a"), r(s != "" ? s / 2 : "", c)
	}
}' "$SUM" | tee "$RESULTS_DIR/sort-ratios.txt"

if command -v gnuplot >/dev/null 2>&1; then
	plot=""
	for impl in pems pems-rec100 gnu-sort stxxl stxxl-rec100 ceiling ceiling-mixed; do
		dat=$RESULTS_DIR/sort-$impl.dat
		awk -F, -v i="$impl" 'NR > 1 && $1 == i { print $2 / 1073741824, $5 }' "$SUM" |
			sort -g >"$dat"
		if [[ -s "$dat" ]]; then
			plot+="${plot:+, }'$dat' using 1:2 with linespoints title '$impl'"
		else
			rm -f "$dat"
		fi
	done
	# budget and repeat count as recorded (also right for --report)
	mem_t=$(awk -F, 'NR == 2 { m = $4 / 1048576; print (m >= 1024 ? m / 1024 "G" : m "M"); exit }' "$CSV")
	runs_t=$(awk -F, 'NR > 1 && $3 > r { r = $3 } END { print r + 0 }' "$SUM")
	if [[ -n "$plot" ]]; then
		gnuplot <<-EOF 2>"$RESULTS_DIR/logs/gnuplot.log" || msg "gnuplot failed (logs/gnuplot.log)"
			set terminal pngcairo size 900,560 noenhanced
			set output '$RESULTS_DIR/sort.png'
			set title 'external sort: memory budget $mem_t (cgroup limit +10%), $(nproc) cores, median of $runs_t run(s)'
			set xlabel 'input size (GiB)'
			set ylabel 'throughput (MB/s of input)'
			set logscale x 2
			set yrange [0:*]
			set key outside right
			set grid
			plot $plot
		EOF
		[[ -s "$RESULTS_DIR/sort.png" ]] && msg "plot: $RESULTS_DIR/sort.png"
	fi
fi
msg "results: $CSV"
((nfail == 0))
