#!/bin/bash
# bench/io.sh - the pems I/O engine vs fio: sequential O_DIRECT throughput.
#
#   bash bench/io.sh [SIZE [DIR]]     SIZE like 4G (default), DIR the scratch
#                                     directory (default /var/tmp/pems-bench)
#
# Environment (all optional):
#   BUILD=build               where io_bench is ($BUILD/bench/io_bench)
#   RESULTS_DIR=bench/results/io   io.csv goes there (replaced; APPEND=1 adds)
#   ENGINES="uring aio sync"  pems backends to measure
#   QDS="1 4 16"              queue depths
#   REPS=1                    runs of each configuration (the ratio uses
#                             the median)
#   NOTHP=0                   1: also run pems-uring with PEMS_NO_THP=1
#                             (buffers on 4 KiB pages, as before 2026-12-03)
#                             as engine pems-uring-nothp
#   FIO_HUGE=0                1: also run fio with its buffers on 2 MiB
#                             hugetlb pages (iomem=shmhuge), as engine
#                             fio-io_uring-huge; reserves vm.nr_hugepages
#                             for the run (root) and restores it on exit
#
# On one file of SIZE bytes in DIR (written once, unmeasured, so that every
# measured write overwrites allocated blocks), with 1 MiB O_DIRECT requests
# and the page cache dropped before every run (`sync; echo 3 >
# /proc/sys/vm/drop_caches`, needs root):
#   pems-<engine>  io_bench --op write, then --op read, at each QD
#   pems-<engine>  io_bench --op mixed at QD 16: read the first half while
#                  writing the second (what a context swap does)
#   fio-io_uring   fio ioengine=io_uring direct=1 bs=1M rw=write / rw=read
#                  at each QD; and rw=rw rwmixread=50 at QD 16 as a loose
#                  peer of mixed (fio interleaves both on one stream)
# Each run prints one line
#   bench=io engine=… qd=… op=write|read|mixed bytes=… secs=… mbps=…
# (mbps = 10^6 bytes per second), appended to $RESULTS_DIR/io.csv; at the
# end the ratio of each pems engine to fio-io_uring (and to
# fio-io_uring-huge) is printed per QD and op.
# pems allocates its request buffers with pems_io_alloc, which puts them
# on transparent huge pages; fio's default buffers are 4 KiB pages (see
# bench/README.md for why that matters on a virtio disk).
# The file is deleted on exit.  Exit 0 if every run worked, 1 otherwise.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IO_BENCH=$BUILD/bench/io_bench
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/io}
ENGINES=${ENGINES:-uring aio sync}
QDS=${QDS:-1 4 16}
REPS=${REPS:-1}
NOTHP=${NOTHP:-0}
FIO_HUGE=${FIO_HUGE:-0}
SIZE=${1:-4G}
DIR=${2:-/var/tmp/pems-bench}

msg() { echo "io.sh: $*" >&2; }
die() { msg "error: $*"; exit 1; }

[[ -x $IO_BENCH ]] || die "$IO_BENCH not found; build it with 'make $BUILD/bench/io_bench'"
[[ $SIZE =~ ^[0-9]+[KkMmGgTt]?$ ]] || die "bad SIZE '$SIZE'; use e.g. 4G"
mkdir -p "$DIR" "$RESULTS_DIR"
FILE=$DIR/pems-io-bench.$$
CSV=$RESULTS_DIR/io.csv
OLD_HUGEPAGES=
cleanup() {
	rm -f "$FILE"
	[[ -z $OLD_HUGEPAGES ]] || echo "$OLD_HUGEPAGES" >/proc/sys/vm/nr_hugepages
}
trap cleanup EXIT
HAVE_FIO=1
command -v fio >/dev/null || { HAVE_FIO=0; msg "fio not found; skipping the fio runs (install the Debian package fio)"; }
# a run replaces the CSV (APPEND=1: adds to it)
[[ ${APPEND:-0} == 1 && -f $CSV ]] || echo "date,host,engine,qd,op,bytes,secs,mbps" >"$CSV"
if ((FIO_HUGE && HAVE_FIO)); then
	# fio's buffers: bs * iodepth plus alignment, in 2 MiB pages
	want=0
	for qd in $QDS 16; do
		if ((qd > want)); then want=$qd; fi
	done
	want=$((want / 2 + 4))
	OLD_HUGEPAGES=$(cat /proc/sys/vm/nr_hugepages)
	if ! { echo $((OLD_HUGEPAGES + want)) >/proc/sys/vm/nr_hugepages; } 2>/dev/null ||
	   (($(awk '/HugePages_Free/ {print $2}' /proc/meminfo) < want)); then
		msg "cannot reserve $want huge pages; skipping fio-io_uring-huge"
		FIO_HUGE=0
	fi
fi

DROP_WARNED=0
drop_caches() {
	sync
	if ! { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
		((DROP_WARNED)) || msg "cannot drop caches (not root?); results may include cached data"
		DROP_WARNED=1
	fi
}

FAILED=0
record() {	# record LINE: print it and append it to the CSV
	local line=$1 engine qd op bytes secs mbps
	echo "$line"
	engine=$(sed -n 's/.* engine=\([^ ]*\).*/\1/p' <<<"$line")
	qd=$(sed -n 's/.* qd=\([^ ]*\).*/\1/p' <<<"$line")
	op=$(sed -n 's/.* op=\([^ ]*\).*/\1/p' <<<"$line")
	bytes=$(sed -n 's/.* bytes=\([^ ]*\).*/\1/p' <<<"$line")
	secs=$(sed -n 's/.* secs=\([^ ]*\).*/\1/p' <<<"$line")
	mbps=$(sed -n 's/.* mbps=\([^ ]*\).*/\1/p' <<<"$line")
	echo "$(date +%F),$(uname -n),$engine,$qd,$op,$bytes,$secs,$mbps" >>"$CSV"
}

pems_run() {	# pems_run ENGINE QD OP [nothp]
	local out
	drop_caches
	if out=$(if [[ ${4:-} == nothp ]]; then export PEMS_NO_THP=1; fi
		 "$IO_BENCH" -e "$1" -q "$2" -o "$3" -s "$SIZE" "$FILE"); then
		[[ ${4:-} == nothp ]] && out=${out/engine=pems-$1 /engine=pems-$1-nothp }
		record "$out"
	else
		msg "io_bench -e $1 -q $2 -o $3 ${4:-} failed"
		FAILED=1
	fi
}

# fio --minimal (terse v3): field 6/9 read KiB/runtime ms, 47/50 write.
fio_run() {	# fio_run QD RW OP [huge]
	local out engine=fio-io_uring mem=()
	if [[ ${4:-} == huge ]]; then
		engine=fio-io_uring-huge
		mem=(--iomem=shmhuge --hugepage-size=2M)
	fi
	drop_caches
	if ! out=$(fio --name=io --filename="$FILE" --size="$SIZE" \
			--ioengine=io_uring --direct=1 --bs=1M --iodepth="$1" \
			--rw="$2" --rwmixread=50 --fallocate=none --numjobs=1 \
			"${mem[@]}" --output-format=terse --terse-version=3); then
		msg "fio iodepth=$1 rw=$2 ${4:-} failed"
		FAILED=1
		return
	fi
	record "$(awk -F';' -v qd="$1" -v op="$3" -v engine="$engine" '{
		kib = $6 + $47; ms = ($9 > $50) ? $9 : $50
		printf "bench=io engine=%s qd=%s op=%s bytes=%.0f secs=%.3f mbps=%.1f\n",
		       engine, qd, op, kib * 1024, ms / 1000, kib * 1024 / (ms / 1000) / 1e6
	}' <<<"$out")"
}

START=$(date +%s)
msg "preparing $SIZE in $FILE"
"$IO_BENCH" -e uring -q 16 -o write -s "$SIZE" "$FILE" >/dev/null ||
	die "cannot write $FILE"

for ((rep = 0; rep < REPS; rep++)); do
	for qd in $QDS; do
		for engine in $ENGINES; do
			pems_run "$engine" "$qd" write
			pems_run "$engine" "$qd" read
		done
		if ((NOTHP)); then
			pems_run uring "$qd" write nothp
			pems_run uring "$qd" read nothp
		fi
		if ((HAVE_FIO)); then
			fio_run "$qd" write write
			fio_run "$qd" read read
		fi
		if ((FIO_HUGE)); then
			fio_run "$qd" write write huge
			fio_run "$qd" read read huge
		fi
	done
	for engine in $ENGINES; do
		pems_run "$engine" 16 mixed
	done
	((HAVE_FIO)) && fio_run 16 rw mixed
	((FIO_HUGE)) && fio_run 16 rw mixed huge
	true
done

# The ratios use the rows this run appended (the last NROWS of the CSV)
# and the median over REPS: this is a shared VM disk, and single runs
# vary by a factor of two.
NQ=$(wc -w <<<"$QDS"); NE=$(wc -w <<<"$ENGINES")
NROWS=$(( REPS * ( NQ * (2 * NE + 2 * NOTHP + 2 * HAVE_FIO + 2 * FIO_HUGE) \
	+ NE + HAVE_FIO + FIO_HUGE ) ))
if ((HAVE_FIO)); then
	echo "ratio of each pems engine to fio (median mbps over $REPS runs):"
	tail -n "$NROWS" "$CSV" | awk -F, '
		function median(k,    i, j, t, a, m) {
			m = n[k]
			for (i = 1; i <= m; i++) a[i] = v[k, i]
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		{ k = $3 "," $4 "," $5; v[k, ++n[k]] = $8; e[$3] = 1; q[$4] = 1; o[$5] = 1 }
		END {
			for (en in e) for (qd in q) for (op in o) for (f = 1; f <= 2; f++) {
				if (en !~ /^pems-/)
					continue
				fio = f == 1 ? "fio-io_uring" : "fio-io_uring-huge"
				a = en "," qd "," op; b = fio "," qd "," op
				if (!n[a] || !n[b])
					continue
				ma = median(a); mb = median(b)
				if (mb > 0)
					printf "ratio engine=%s qd=%s op=%s pems=%.1f %s=%.1f ratio=%.3f\n",
					       en, qd, op, ma, fio, mb, ma / mb
			}
		}' | sort -t' ' -k2,2 -k4,4 -k3.4n -k6,6
fi
msg "done in $(( $(date +%s) - START )) s; results in $CSV"
exit "$FAILED"
