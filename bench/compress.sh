#!/bin/bash
# bench/compress.sh - what --compress does to disk traffic and time, and
# what the checksums of spilled blocks cost.
#
#   bash bench/compress.sh [JOB...]     JOB: sort-runs sort-random agg-random
#                                       aggregate sgd checksum throttle
#                                       (default: all but throttle)
#
# Environment (all optional):
#   BUILD=build           pems-run is $BUILD/pems-run
#   BENCH_TMP=/work/scratch/compress   inputs, outputs and scratch (one disk)
#   SORT_SIZE=2G          bytes of u64 keys to sort
#   KV_SIZE=2G            bytes of kv records for agg-random
#   MEM=256M              --mem of every run (SORT_SIZE/MEM = 8, as the
#                         8 GiB sort under --mem 1G); each run is in
#                         bench/cgrun.sh with a cgroup limit of MEM + 10 %
#   AGG_ROWS=40M          rows of the aggregate CSV (key,value text)
#   SGD_ROWS=200K SGD_DIM=1M   sparse LIBSVM rows (16 features each) and
#                         features for sgd
#   MODES="off zstd auto" --compress modes compared
#   REPEAT=3              runs per mode, interleaved; medians reported
#   DISK_MBPS=            if set: every run is throttled to this many MB/s
#                         (10^6 bytes/s) of reads and of writes on the
#                         scratch disk (bench/cgrun.sh --bps: a cgroup-v1
#                         blkio group; a slower disk on the same machine:
#                         the disk-bound case); PEMS_DISK_BW is set to
#                         match, for --compress auto
#   RESULTS=bench/results/compress/compress.md   the table of medians
#   WARMUP=0              runs of each job before its series, not recorded
#                         (the first run after other work on the machine
#                         pays for its leftovers -- 8 to 35 s instead of
#                         8 s here -- and the rotation gives it to the
#                         first mode)
#   KEEP_JSON=            if set, a directory: every run's --stats-json is
#                         kept there as JOB-MODE-N.json (per superstep:
#                         seconds, CPU, bytes; v, k, mem)
#
# Jobs:
#   sort-runs    pems-run sort of u64 keys in sorted runs: arithmetic
#                sequences of 1000..100000 keys from a random 48-bit base
#                with a random step 1..1000 (like timestamps or ids;
#                zstd -1 makes about 3.6x of them): compressible messages
#   sort-random  the same on uniform random keys: incompressible; auto
#                must stay within 3 % of off
#   agg-random   pems-run aggregate count,sum of kv records (gen --format
#                kv --groups 0: every 64-bit key distinct and random, values
#                uniform in +-10^6): all of it crosses the message store
#   aggregate    pems-run aggregate --input-format csv count,sum on CSV
#                text (1M groups)
#   sgd          pems-run sgd --sync bsp on sparse LIBSVM rows (dim SGD_DIM:
#                each VP's context holds the dense model and gradient
#                sums, written back at every superstep)
#   checksum     sort-random with PEMS_CHECKSUM=1 and =0 (compression off):
#                the cost of the CRC-32C of every spilled block
#   throttle     checks that DISK_MBPS (default 200) really limits the
#                traffic pems makes: fio with io_uring and O_DIRECT, 1 MiB
#                requests at queue depth 16, 512 MiB written then read,
#                inside and outside the throttled group; prints MB/s
# Every run prints one line:
#   algo=… data=… compress=… checksum=… secs=… disk_read=… disk_written=…
#   msg_written=… ctx_written=… rss=… status=…
# (disk_* = context + message bytes, the spilled traffic; file I/O of
# input and output is the same for every mode and not included), then a
# table of medians (markdown) goes to $RESULTS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${BUILD:-build}
RUN=$PWD/$BUILD/pems-run
TMP=${BENCH_TMP:-/work/scratch/compress}
SORT_SIZE=${SORT_SIZE:-2G}
MEM=${MEM:-256M}
AGG_ROWS=${AGG_ROWS:-40M}
KV_SIZE=${KV_SIZE:-2G}
SGD_ROWS=${SGD_ROWS:-200K}
SGD_DIM=${SGD_DIM:-1M}
MODES=${MODES:-off zstd auto}
REPEAT=${REPEAT:-3}
RESULTS=${RESULTS:-bench/results/compress/compress.md}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TIMEFORMAT='%U %S'
JOBS=${*:-sort-runs sort-random agg-random aggregate sgd checksum}

[[ -x "$RUN" ]] || { echo "compress.sh: error: $RUN missing; run make" >&2; exit 1; }
mkdir -p "$TMP/scratch" "$(dirname "$RESULTS")"
LINES=$TMP/lines.txt
: >"$LINES"
BPS=()
if [[ -n ${DISK_MBPS:-} ]]; then
	BPS=(--bps $((DISK_MBPS * 1000000)) --bps-dir "$TMP")
	export PEMS_DISK_BW=$((DISK_MBPS * 1000000))	# what auto compares with
fi
LIMIT=$(awk -v m="$MEM" 'BEGIN { u = substr(m, length(m)); v = substr(m, 1, length(m) - 1);
	f = u == "G" ? 1024 : u == "M" ? 1 : 1 / 1024; printf "%dM", v * f * 1.1 }')

count() { awk -v s="$1" 'BEGIN { u = substr(s, length(s)); v = substr(s, 1, length(s) - 1);
	m = u == "G" ? 2^30 : u == "M" ? 2^20 : u == "K" ? 2^10 : 1; if (m == 1) v = s; printf "%d", v * m }'; }

gen_inputs() {
	local job=$1
	case $job in
	sort-runs) [[ -f $TMP/runs.u64 ]] ||
		python3 - "$(count "$SORT_SIZE")" "$TMP/runs.u64" <<'PY'
import random, sys
from array import array
random.seed(7)
left = int(sys.argv[1]) // 8
with open(sys.argv[2], 'wb') as f:
    while left:
        n = min(left, random.randint(1000, 100000))
        base, step = random.getrandbits(48), random.randint(1, 1000)
        array('Q', range(base, base + n * step, step)).tofile(f)
        left -= n
PY
		;;
	sort-random|checksum) [[ -f $TMP/random.u64 ]] ||
		"$RUN" gen --quiet --format u64 --count $(($(count "$SORT_SIZE") / 8)) --seed 7 "$TMP/random.u64" ;;
	agg-random) [[ -f $TMP/random.kv ]] ||
		"$RUN" gen --quiet --format kv --groups 0 --count $(($(count "$KV_SIZE") / 16)) --seed 7 "$TMP/random.kv" ;;
	aggregate) [[ -f $TMP/rows.csv ]] ||
		awk -v n="$(count "$AGG_ROWS")" 'BEGIN { srand(7); print "key,value";
			for (i = 0; i < n; i++) printf "%d,%d\n", int(rand() * 1000000), int(rand() * 2000001) - 1000000 }' >"$TMP/rows.csv" ;;
	sgd) [[ -f $TMP/train.svm ]] ||
		# 16 nonzero features per row on average, a logistic model
		"$RUN" gen --quiet --format libsvm --model logistic --nnz 16 --seed 7 \
			--count "$SGD_ROWS" --dim "$(count "$SGD_DIM")" "$TMP/train.svm" ;;
	esac
}

# one JOB MODE CHECKSUM: run it in the cgroup, print its line
one() {
	local job=$1 mode=$2 sum=$3 json=$TMP/stats.json out rc line cmd cpu
	rm -f "$json" "$TMP"/out.*
	case $job in
	sort-runs) cmd=(sort --format u64 "$TMP/runs.u64" "$TMP/out.u64") ;;
	sort-random|checksum) cmd=(sort --format u64 "$TMP/random.u64" "$TMP/out.u64") ;;
	agg-random) cmd=(aggregate --agg count,sum "$TMP/random.kv" "$TMP/out.csv") ;;
	aggregate) cmd=(aggregate --input-format csv --agg count,sum "$TMP/rows.csv" "$TMP/out.csv") ;;
	sgd) cmd=(sgd --model logistic --format libsvm --data "$TMP/train.svm" --dim "$(count "$SGD_DIM")"
		  --sync bsp --batch 256 --epochs 1 --out "$TMP/out.model") ;;
	esac
	# bash's time: user + sys of the whole tree (cgrun, time, pems-run)
	set +e
	{ time env PEMS_CHECKSUM=$sum bash bench/cgrun.sh "${BPS[@]}" "$LIMIT" -- "$RUN" "${cmd[@]}" --quiet \
		--mem "$MEM" --tmp "$TMP/scratch" --compress "$mode" --stats-json "$json" \
		>/dev/null 2>"$TMP/err.txt"; } 2>"$TMP/time.txt"
	rc=$?
	set -e
	out=$(cat "$TMP/err.txt")
	cpu=$(awk '{ print $1 + $2 }' "$TMP/time.txt")
	line=$(python3 - "$json" "$job" "$mode" "$sum" "$rc" "$out" "$cpu" <<'PY'
import json, os, re, sys
path, job, mode, csum, rc, out, cpu = sys.argv[1:]
m = dict(re.findall(r'(\w+)=(\S+)', out.splitlines()[-1] if out.strip() else ''))
try:
    s = json.load(open(path))
except Exception:
    s = {}
g = lambda k: int(s.get(k, 0))
print(f"algo={job.split('-')[0]} data={job} compress={mode} checksum={csum} disk_mbps={os.environ.get('DISK_MBPS') or 'full'} secs={m.get('secs', '?')} cpu={cpu} "
      f"disk_read={g('ctx_read') + g('msg_read')} disk_written={g('ctx_written') + g('msg_written')} "
      f"msg_written={g('msg_written')} ctx_written={g('ctx_written')} spill_raw={g('ctx_raw') + g('msg_raw')} "
      f"spill_stored={g('ctx_stored') + g('msg_stored')} rss={int(m.get('rss_kb', 0)) * 1024} "
      f"status={'ok' if rc == '0' else 'rc' + rc}")
PY
)
	if [[ -n ${KEEP_JSON:-} && -f $json ]]; then
		mkdir -p "$KEEP_JSON"
		cp "$json" "$KEEP_JSON/$job-$mode-$(grep -c "data=$job compress=$mode " "$LINES").json"
	fi
	echo "$line" | tee -a "$LINES"
	[[ $rc == 0 ]] || echo "$out" | tail -5 >&2
}

# fio's MB/s for one direction, in the throttled group or not
fio_mbps() {
	local rw=$1 f=$TMP/fio.bin out
	shift
	out=$(PEMS_CG_NO_DROP=1 bash bench/cgrun.sh "$@" 1G -- fio --name=t --filename="$f" \
		--size=512M --bs=1M --direct=1 --ioengine=io_uring --iodepth=16 --rw="$rw" \
		--output-format=terse --terse-version=3 2>/dev/null)
	# terse v3: field 7 read KiB/s, field 48 write KiB/s
	echo "$out" | awk -F';' -v rw="$rw" '{ printf "%.0f", (rw == "read" ? $7 : $48) * 1.024 / 1000 }'
}
throttle_check() {
	local mbps=${DISK_MBPS:-200} rw
	command -v fio >/dev/null || { echo "compress.sh: error: throttle needs fio" >&2; exit 1; }
	for rw in write read; do
		echo "throttle: fio io_uring O_DIRECT $rw: unthrottled $(fio_mbps $rw) MB/s," \
			"--bps ${mbps} MB/s: $(fio_mbps $rw --bps $((mbps * 1000000)) --bps-dir "$TMP") MB/s" |
			tee -a "$TMP/throttle.txt"
	done
	rm -f "$TMP/fio.bin"
}

for job in $JOBS; do
	if [[ $job == throttle ]]; then
		throttle_check
		continue
	fi
	gen_inputs "$job"
	for ((r = 0; r < ${WARMUP:-0}; r++)); do
		read -ra ms <<<"$MODES"
		LINES=/dev/null KEEP_JSON= one "$job" "${ms[0]}" 1 >/dev/null
	done
	for ((r = 0; r < REPEAT; r++)); do
		if [[ $job == checksum ]]; then
			one "$job" off 1
			one "$job" off 0
		else
			# rotate the order so that no mode always runs first
			read -ra ms <<<"$MODES"
			for ((i = 0; i < ${#ms[@]}; i++)); do
				one "$job" "${ms[(i + r) % ${#ms[@]}]}" 1
			done
		fi
	done
done

python3 - "$LINES" "$RESULTS" <<'PY'
import re, statistics, sys, subprocess, datetime
lines = [dict(re.findall(r'(\w+)=(\S+)', l)) for l in open(sys.argv[1]) if l.strip()]
if not lines:
    sys.exit(0)
groups = {}
for l in lines:
    if l.get('status') != 'ok':
        continue
    groups.setdefault((l['data'] + (' @' + l['disk_mbps'] + ' MB/s' if l.get('disk_mbps', 'full') != 'full' else ''),
                       l['compress'], l['checksum']), []).append(l)
med = lambda g, k: statistics.median(float(x[k]) for x in g)
out = [f"compress.sh, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, "
       f"{subprocess.getoutput('nproc')} CPUs, {subprocess.getoutput('uname -r')}", "",
       "| data | compress | checksum | runs | secs (median) | cpu secs (median) | spilled read | spilled written | written / off | stored / raw | secs / off |",
       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
for (data, mode, cs), g in groups.items():
    base = groups.get((data, 'off', '1')) or g
    w = med(g, 'disk_written'); wb = med(base, 'disk_written')
    raw = med(g, 'spill_raw') if all('spill_raw' in x for x in g) else 0
    st = med(g, 'spill_stored') if raw else 0
    out.append(f"| {data} | {mode} | {'on' if cs == '1' else 'off'} | {len(g)} | {med(g, 'secs'):.2f} | {med(g, 'cpu'):.2f} | "
               f"{med(g, 'disk_read') / 2**20:.0f} MiB | {w / 2**20:.0f} MiB | {w / wb if wb else 1:.3f} | "
               f"{st / raw if raw else float('nan'):.3f} | {med(g, 'secs') / med(base, 'secs'):.3f} |")
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
PY
