#!/bin/bash
# bench/variance.sh - why does the same pems command use 1.5x the CPU
# minutes apart?  Interleaves, for DURATION seconds, a fixed pure-CPU
# probe (build/bench/cpu_probe) with the sort runs of bench/model.sh (the
# same command lines: mpirun --oversubscribe --bind-to none -np P
# pems-run sort --mem 1G/P ...), and records for every run its wall,
# user and system CPU, perf's software counters, /proc/stat and
# /proc/vmstat deltas and the KiB the guest's free-page reporting handed
# back to the host (/sys/module/page_reporting/parameters/reported_kib).
#
#   HOLD="/work/wt/lock.sh quiet" bash bench/variance.sh [OUTDIR]
#
# Each batch (one hold of the machine lock, about 40 s): the fault and thp probes,
# then the four cases in a rotating order, each as: compute+mem probe,
# a gap of GAP0 or GAP1 seconds (alternating: each case gets both in
# each environment), the pems run, the probe
# again.  Page cache is never dropped (bench/model.sh does not either;
# the inputs are read with O_DIRECT).
#
# Environment: DURATION=2400  BUILD=build  VAR_TMP=/work/scratch/var
#   CASES="u64:1 rec100:1 u64:2 rec100:2"  (also agg1e7:P, the aggregate of
#             10^7 groups, and sgd:P, as bench/model.sh runs them)  GAP0=0 GAP1=4  PAUSE=5 (s between holds)
#   ENVS="-"  per batch, in turn, an environment for the pems runs
#             ("-": none; e.g. ENVS="- PEMS_NO_THP=1"; "WARM": none, but
#             cpu_probe warm, 2 GiB of huge pages touched and freed, right
#             before the run)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUN=$BUILD/pems-run
PROBE=$BUILD/bench/cpu_probe
TMP=${VAR_TMP:-/work/scratch/var}
OUT=${1:-$ROOT/bench/results/variance/raw}
DURATION=${DURATION:-2400}
CASES=${CASES:-u64:1 rec100:1 u64:2 rec100:2}
GAP0=${GAP0:-0} GAP1=${GAP1:-4} PAUSE=${PAUSE:-5}
ENVS=${ENVS:--}
HOLD=${HOLD:-}
MEM_TOTAL=$((1 << 30))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RK=/sys/module/page_reporting/parameters/reported_kib
mkdir -p "$OUT/json" "$TMP/scratch" || exit 1

# snap: one line of counters: /proc/stat cpu (jiffies), vmstat, reported_kib
snap() {
	awk '/^cpu / { printf "st_user=%s st_nice=%s st_sys=%s st_idle=%s st_iowait=%s st_irq=%s st_softirq=%s st_steal=%s ", $2, $3, $4, $5, $6, $7, $8, $9 }' /proc/stat
	awk '$1 ~ /^(pgfault|pgmajfault|thp_fault_alloc|thp_fault_fallback|compact_stall|allocstall_normal|allocstall_movable|pgfree|pgalloc_normal|pgalloc_dma32)$/ { printf "vm_%s=%s ", $1, $2 }' /proc/vmstat
	echo "rk=$(cat $RK 2>/dev/null || echo 0) t=$(date +%s.%N)"
}

inputs() {
	case " $CASES " in *" agg1e7:"*)
		[[ -s $TMP/in.agg1e7 ]] || "$RUN" gen --format kv --count $((512 << 20 >> 4)) --groups 10000000 --seed 42 --quiet "$TMP/in.agg1e7" || exit 1 ;;
	esac
	case " $CASES " in *" sgd:"*)
		[[ -s $TMP/in.sgd ]] || "$RUN" gen --format dense --model linear --count $(((512 << 20) / 260)) --dim 64 --noise 0.5 \
			--seed 42 --quiet "$TMP/in.sgd" || exit 1 ;;
	esac
	[[ -s $TMP/in.u64 ]] || "$RUN" gen --format u64 --count $((512 << 20 >> 3)) --seed 42 --quiet "$TMP/in.u64" || exit 1
	[[ -s $TMP/in.rec100 ]] || "$RUN" gen --format rec100 --count $(((512 << 20) / 100)) --seed 42 --quiet "$TMP/in.rec100" || exit 1
	sync
}

# job FMT, args FMT: the subcommand and its arguments (bench/model.sh's)
job() { case $1 in agg1e7) echo aggregate ;; sgd) echo sgd ;; *) echo sort ;; esac; }
args() {
	case $1 in
	agg1e7) echo "--agg count,sum $TMP/in.agg1e7 $TMP/out" ;;
	sgd) echo "--model linear --data $TMP/in.sgd --format dense --sync local --local-steps 64 --epochs 1 --out $TMP/out" ;;
	*) echo "--format $1 $TMP/in.$1 $TMP/out" ;;
	esac
}

# one_run N FMT P GAP ENV: probe, gap, the run under perf stat and time, probe
one_run() {
	local n=$1 fmt=$2 np=$3 gap=$4 env=$5 tag pre post s0 s1 json g w=
	local label=$5
	tag=$(printf 'r%04d' "$n")
	json=$OUT/json/$tag-$fmt-p$np.json
	rm -rf "${TMP:?}/scratch/"r* "$TMP/out" "$TMP/out".*
	mkdir -p "$TMP/scratch/r"{0,1,2,3}
	pre=$("$PROBE" compute mem)
	g=$(cat $RK 2>/dev/null || echo 0)
	sleep "$gap"
	# WARM: 2 GiB of huge pages touched and freed right before the run
	[[ $env == WARM ]] && w=$("$PROBE" warm) && env=-
	s0=$(snap)
	# shellcheck disable=SC2086,SC2046
	env ${env/#-/} perf stat -x, -o "$OUT/perf.tmp" \
		-e task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations \
		/usr/bin/time -f 'wall=%e usr=%U sys=%S minflt=%R majflt=%F ivcsw=%c vcsw=%w maxrss_kib=%M' -o "$OUT/time.tmp" \
		mpirun --oversubscribe --bind-to none -np "$np" "$RUN" $(job "$fmt") --mem $((MEM_TOTAL / np)) \
		--tmp "$TMP/scratch/r%r" --quiet --stats-json "$json" $(args "$fmt") \
		>"$OUT/run.log" 2>&1 || { echo "run $tag failed:"; cat "$OUT/run.log"; } >&2
	s1=$(snap)
	post=$("$PROBE" compute mem)
	{
		printf 'run n=%d tag=%s fmt=%s p=%d gap=%s env=%s g_rk=%s ' "$n" "$tag" "$fmt" "$np" "$gap" "$label" "$g"
		tr '\n' ' ' <"$OUT/time.tmp"
		awk -F, 'NF > 3 && $1 != "" { gsub(/-/, "_", $3); printf "perf_%s=%s ", $3, $1 }' "$OUT/perf.tmp"
		sed 's/\([a-z0-9_]*\)=/pre_\1=/g' <<<"${pre#probe }" | tr '\n' ' '
		sed 's/\([a-z0-9_]*\)=/post_\1=/g' <<<"${post#probe }" | tr '\n' ' '
		[[ -n $w ]] && sed 's/ sink=.*//' <<<"${w#probe}" | tr '\n' ' '
		sed 's/\([a-z0-9_]*\)=/a_\1=/g' <<<"$s0" | tr '\n' ' '
		sed 's/\([a-z0-9_]*\)=/b_\1=/g' <<<"$s1"
	} >>"$OUT/runs.txt"
}

# batch B: one hold
batch() {
	local b=$1 i k n gap env c fmt np
	read -ra cs <<<"$CASES"
	read -ra es <<<"$ENVS"
	env=${es[b % ${#es[@]}]}
	echo "batch $b start $(date -u +%T) env=$env" >>"$OUT/times.txt"
	echo "fault b=$b $(date -u +%FT%TZ) $(snap | sed 's/ t=.*//') $("$PROBE" fault thp) $(snap | sed 's/.*\(rk=\)/after_\1/')" >>"$OUT/faults.txt"
	for ((i = 0; i < ${#cs[@]}; i++)); do
		k=$(((i + b) % ${#cs[@]}))
		c=${cs[k]}
		fmt=${c%:*} np=${c#*:}
		n=$(($(wc -l <"$OUT/runs.txt" 2>/dev/null || echo 0) + 1))
		# the gap alternates within a batch and, for a given case and
		# environment, from one batch of that environment to the next
		# (the case's place i moves by the number of environments: odd)
		if ((${#es[@]} % 2)); then
			((i % 2)) && gap=$GAP1 || gap=$GAP0
		else
			(((i + b / ${#es[@]}) % 2)) && gap=$GAP1 || gap=$GAP0
		fi
		one_run "$n" "$fmt" "$np" "$gap" "$env"
	done
	echo "batch $b end $(date -u +%T)" >>"$OUT/times.txt"
}

case ${2:-} in
batch) batch "$3"; exit ;;
esac
[[ -x $PROBE && -x $RUN ]] || { echo "bench/variance.sh: build first (make)" >&2; exit 1; }
inputs
touch "$OUT/runs.txt"
end=$(($(date +%s) + DURATION))
b=$(($(grep -c '^batch .* start' "$OUT/times.txt" 2>/dev/null || echo 0)))
while (($(date +%s) < end)); do
	# shellcheck disable=SC2086
	$HOLD bash "$0" "$OUT" batch "$b"
	b=$((b + 1))
	sleep "$PAUSE"
done
rm -rf "${TMP:?}/scratch/"r* "$TMP/out" "$TMP/out".* "$OUT/perf.tmp" "$OUT/time.tmp" "$OUT/run.log"
