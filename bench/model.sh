#!/bin/bash
# bench/model.sh - validate the BSP cost model (pems-run model,
# docs/cost-model.md) against real runs of sort, aggregate and sgd at
# p = 1, 2, 4 ranks (mpirun --oversubscribe: the ranks share the cores
# and the disk of this machine) and two sizes each.
#
#   BUILD=build MODEL_TMP=/work/scratch/model bash bench/model.sh
#   bash bench/model.sh --report DIR      predict DIR's runs again (stored
#                                         --stats-json and calibrations,
#                                         the current model), table, plot;
#                                         KERNELS=FILE takes the kernel rates
#                                         from that full calibration
#
# Environment (all optional):
#   SIZES="1G 2G"     input sizes (every algorithm)
#   ALGOS="sort aggregate sgd"
#   NPS="1 2 4"       ranks
#   REPEAT=2          runs of each (algorithm, size, p)
#   REP_FIRST=1       number of the first repetition (to add runs to a
#                     results dir by a second invocation)
#   MEM=1G            --mem of every run (per rank)
#   MODEL_TMP=/work/scratch/model   inputs, outputs, scratch (one input
#                     at a time: about 4.5x the largest size)
#   BSP_CSV=...       bench/bsp-params.sh's medians (default: the newest
#                     bench/results/*/bsp-params.csv)
#   BASE_PARAMS=FILE  reuse this full calibration instead of making one
#   RESULTS_DIR=bench/results/<date>
# Protocol: one full `model calibrate` (kernel rates) first; then for each
# algorithm and size, REPEAT times: a quick `model calibrate --base`
# (CPU share under the other load, disk, latency, setup) and the time
# outside the supersteps of a 16 MiB sort under mpirun -np P (setup_mpi
# lines), the runs at every p, and the same calibration again; each run
# is predicted with the mean of the calibrations before and after it
# (the other helpers' load on this machine changes by minutes).  Nothing of
# a run is used to predict it except v, k, p and M (the planner's
# choices, which the model reproduces when not given).
# Writes to $RESULTS_DIR:
#   model-runs.csv   algo,bytes,p,rep,predicted,measured,ratio,params,
#                    pred_cpu,meas_cpu (core-s of the kernels; CPU s of
#                    the ranks), pred_io,meas_io (bytes read + written),
#                    pred_share,meas_share (cores the workers get in the
#                    model; CPU s / wall s of the run, all threads)
#   model.csv        algo,bytes,p,runs,predicted_median,measured_median,
#                    ratio_median,ratio_min,ratio_max
#   model-table.md   the same as a markdown table
#   model.png        predicted against measured (gnuplot), +-20 % lines
#   model-projection.txt  bench/model-project.sh: 1..1000 nodes
#   model-calibrations.csv  what every quick calibration measured
#   logs/model-*.txt the predict tables (per superstep) of every run
# and prints one line per run:
#   bench=model algo=.. bytes=.. p=.. rep=.. predicted=.. measured=.. ratio=..
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUN=$BUILD/pems-run
SIZES=${SIZES:-1G 2G}
ALGOS=${ALGOS:-sort aggregate sgd}
NPS=${NPS:-1 2 4}
REPEAT=${REPEAT:-2}
REP_FIRST=${REP_FIRST:-1}
MEM=${MEM:-1G}
TMP=${MODEL_TMP:-/work/scratch/model}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/$(date +%F)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

err() { echo "bench/model.sh: error: $*" >&2; exit 1; }

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

# predict_run ALGO BYTES P REP JSON CAL: predict one stored run, one CSV
# line to model-runs.csv and one bench= line
predict_run() {
	local out line pr me ra pc mc pi mi ps ms
	out=$("$RUN" model predict "$1" --params "$6" --stats-json "$5") || return
	printf '%s\n' "$out" >"${5%.json}.txt"
	line=$(tail -1 <<<"$out")
	pr=$(sed -n 's/.*predicted_secs=\([^ ]*\).*/\1/p' <<<"$line")
	me=$(sed -n 's/.*measured_secs=\([^ ]*\).*/\1/p' <<<"$line")
	ra=$(sed -n 's/.* ratio=\([^ ]*\).*/\1/p' <<<"$line")
	pc=$(sed -n 's/.*pred_cpu=\([^ ]*\).*/\1/p' <<<"$line")
	mc=$(sed -n 's/.*meas_cpu=\([^ ]*\).*/\1/p' <<<"$line")
	pi=$(sed -n 's/.*pred_io=\([^ ]*\).*/\1/p' <<<"$line")
	mi=$(sed -n 's/.*meas_io=\([^ ]*\).*/\1/p' <<<"$line")
	ps=$(sed -n 's/.*pred_share=\([^ ]*\).*/\1/p' <<<"$line")
	ms=$(sed -n 's/.*meas_share=\([^ ]*\).*/\1/p' <<<"$line")
	echo "$1,$2,$3,$4,$pr,$me,$ra,$(basename "$6"),$pc,$mc,$pi,$mi,$ps,$ms" >>"$RUNS"
	echo "bench=model algo=$1 bytes=$2 p=$3 rep=$4 predicted=$pr measured=$me ratio=$ra pred_cpu=$pc meas_cpu=$mc pred_io=$pi meas_io=$mi"
}

# with_kernels CAL KERNELS OUT: CAL with the kernel rates of KERNELS
KEYS_KERNEL="sort_part_u64 sort_part_rec100 sort_local_u64 sort_local_rec100 agg_raw agg_hash agg_merge agg_write sgd qsort_ns vp_secs"
with_kernels() {
	awk -v keys="$KEYS_KERNEL" 'BEGIN { n = split(keys, k, " "); for (i = 1; i <= n; i++) want[k[i]] = 1 }
	     FNR == NR { if ($1 in want) v[$1] = $0; next }
	     ($1 in want) && ($1 in v) { print v[$1]; next } { print }' "$2" "$1" >"$3"
}

# repredict DIR: model-runs.csv again from DIR/logs (with KERNELS=FILE:
# the kernel rates of that full calibration in every group's parameters)
repredict() {
	local j b a sz np r cal
	RUNS=$1/model-runs.csv
	echo "algo,bytes,p,rep,predicted,measured,ratio,params,pred_cpu,meas_cpu,pred_io,meas_io,pred_share,meas_share" >"$RUNS"
	for j in "$1"/logs/model-*-p*-r*.json; do
		b=$(basename "$j" .json)
		IFS=- read -r _ a sz np r <<<"$b"
		cal=$1/logs/model-$a-$sz-$r.params
		[[ -f $cal ]] || continue
		if [[ -n ${KERNELS:-} ]]; then
			with_kernels "$cal" "$KERNELS" "$cal.k"
			cal=$cal.k
		fi
		predict_run "$a" "$(grep -o '"bytes": [0-9]*' "$j" | head -1 | cut -d' ' -f2)" \
			"${np#p}" "${r#r}" "$j" "$cal"
	done
}

report() {
	local dir=$1 runs=$1/model-runs.csv f
	[[ -f $runs ]] || err "no $runs"
	# the calibrations (logs/ is not kept in git): one line each
	echo "calibration,load,poll,read_bw,write_bw,fwrite_bw,iops,lat,setup,setup_mpi_1,setup_mpi_2,setup_mpi_4" >"$dir/model-calibrations.csv"
	for f in "$dir"/logs/model-*.params.before "$dir"/logs/model-*.params.after; do
		[[ -f $f ]] || continue
		awk -v n="$(basename "$f")" '$1 == "setup_mpi" { v["setup_mpi_" $2] = $3; next } { v[$1] = $2 }
			END { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", n, v["load"], v["poll"], v["read_bw"],
			      v["write_bw"], v["fwrite_bw"], v["iops"], v["lat"], v["setup"], v["setup_mpi_1"],
			      v["setup_mpi_2"], v["setup_mpi_4"] }' "$f" >>"$dir/model-calibrations.csv"
	done
	echo "algo,bytes,p,runs,predicted_median,measured_median,ratio_median,ratio_min,ratio_max,io_ratio_median,cpu_ratio_median,pred_share_median,meas_share_median" >"$dir/model.csv"
	tail -n +2 "$runs" | cut -d, -f1-3 | awk '!seen[$0]++' | while IFS=, read -r a b p; do
		rows=$(awk -F, -v a="$a" -v b="$b" -v p="$p" '$1 == a && $2 == b && $3 == p' "$runs")
		n=$(wc -l <<<"$rows")
		pr=$(cut -d, -f5 <<<"$rows" | median)
		me=$(cut -d, -f6 <<<"$rows" | median)
		ra=$(cut -d, -f7 <<<"$rows" | median)
		lo=$(cut -d, -f7 <<<"$rows" | sort -g | head -1)
		hi=$(cut -d, -f7 <<<"$rows" | sort -g | tail -1)
		io=$(awk -F, '$12 > 0 { print $11 / $12 }' <<<"$rows" | median)
		cp=$(awk -F, '$10 > 0 { print $9 / $10 }' <<<"$rows" | median)
		ps=$(cut -d, -f13 <<<"$rows" | median)
		ms=$(cut -d, -f14 <<<"$rows" | median)
		echo "$a,$b,$p,$n,$pr,$me,$ra,$lo,$hi,$io,$cp,$ps,$ms" >>"$dir/model.csv"
	done
	{
		echo "| algorithm | input | p | runs | predicted s | measured s | predicted/measured | range | disk bytes pred/meas | kernel core-s / CPU s | cores: model / run |"
		echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"
		tail -n +2 "$dir/model.csv" | awk -F, '{ printf "| %s | %.2f GiB | %s | %s | %.1f | %.1f | %.2f | %.2f - %.2f | %.3f | %.2f | %.2f / %.2f |\n", $1, $2 / 1073741824, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 }'
	} >"$dir/model-table.md"
	for a in sort aggregate sgd; do
		awk -F, -v a="$a" 'NR > 1 && $1 == a { print $6, $5 }' "$dir/model-runs.csv" >"$dir/model-$a.dat"
	done
	gnuplot <<-EOF || echo "bench/model.sh: gnuplot failed" >&2
		set terminal pngcairo size 800,640
		set output "$dir/model.png"
		set title "pems cost model: predicted vs measured (p = 1, 2, 4; every run)"
		set xlabel "measured seconds"
		set ylabel "predicted seconds"
		set logscale xy
		set key top left
		set grid
		f(x) = x
		plot f(x) title "predicted = measured" lw 2 lc rgb "black", \
		     1.2 * x title "+20 %" dt 2 lc rgb "gray", 0.8 * x title "-20 %" dt 2 lc rgb "gray", \
		     "$dir/model-sort.dat" using 1:2 title "sort u64" pt 7 ps 1.2, \
		     "$dir/model-aggregate.dat" using 1:2 title "aggregate (kv, 1M groups)" pt 5 ps 1.2, \
		     "$dir/model-sgd.dat" using 1:2 title "sgd (dense, d = 64)" pt 9 ps 1.4
	EOF
	cat "$dir/model-table.md"
}

if [[ "${1:-}" == --report ]]; then
	repredict "${2:?usage: bench/model.sh --report RESULTS_DIR}"
	report "$2"
	exit 0
fi

[[ -x $RUN ]] || err "$RUN not built; run make"
command -v mpirun >/dev/null || err "mpirun not found; install openmpi-bin"
BSP_CSV=${BSP_CSV:-$(ls -1 "$ROOT"/bench/results/*/bsp-params.csv 2>/dev/null | tail -1)}
[[ -f $BSP_CSV ]] || err "no bsp-params.csv; run bench/bsp-params.sh first"
mkdir -p "$RESULTS_DIR/logs" "$TMP/scratch" || err "cannot create $RESULTS_DIR or $TMP"
RUNS=$RESULTS_DIR/model-runs.csv
[[ -f $RUNS ]] || echo "algo,bytes,p,rep,predicted,measured,ratio,params,pred_cpu,meas_cpu,pred_io,meas_io,pred_share,meas_share" >"$RUNS"
BASE=$RESULTS_DIR/model-base.params

if [[ -n ${BASE_PARAMS:-} ]]; then	# reuse a full calibration
	[[ $BASE_PARAMS -ef $BASE ]] || cp "$BASE_PARAMS" "$BASE" || err "cannot copy $BASE_PARAMS"
else
	echo "bench/model.sh: full calibration ($BSP_CSV)" >&2
	"$RUN" model calibrate --tmp "$TMP/scratch" --bsp-params "$BSP_CSV" --out "$BASE" ||
		err "calibration failed"
fi

bytes_of() { numfmt --from=iec "$1"; }

# quick_cal OUT [nosetup]: calibrate --base, then setup_mpi
quick_cal() {
	"$RUN" model calibrate --base "$BASE" --tmp "$TMP/scratch" --size 512M \
		--out "$1" 2>/dev/null || err "quick calibration failed"
	[[ -n ${2:-} ]] || setup_mpi "$1"
}

# mean_params A B OUT: the mean of two parameter files, value by value
mean_params() {
	awk 'FNR == 1 && NR == 1 { print; next } FNR == 1 || /^#/ || /^date/ { next }
	     { k = ($1 == "bsp" || $1 == "setup_mpi") ? $1 " " $2 : $1
	       if (!(k in n)) order[++no] = k
	       n[k]++; for (i = 2; i <= NF; i++) v[k, i] += $i; nf[k] = NF }
	     END { print "date mean-of-two"
		   for (o = 1; o <= no; o++) { k = order[o]; split(k, kk, " "); line = kk[1]
			for (i = 2; i <= nf[k]; i++) line = line " " v[k, i] / n[k]
			print line } }' "$1" "$2" >"$3"
}

# setup_mpi CAL: append "setup_mpi P S" to CAL for every P: the seconds
# of a tiny sort (16 MiB) under mpirun -np P outside its supersteps (the
# less of two runs: a fixed cost, spikes are other load)
TINY=$TMP/tiny.u64
"$RUN" gen --format u64 --count 2M --seed 1 --quiet "$TINY" || err "gen failed"
setup_mpi() {
	local np i j=$TMP/tiny.json
	for np in $NPS; do
		for i in 1 2; do
			rm -rf "${TMP:?}/scratch/"r*
			mkdir -p "$TMP/scratch/r"{0,1,2,3}
			mpirun --oversubscribe --bind-to none -np "$np" "$RUN" sort --format u64 --mem "$MEM" \
				--tmp "$TMP/scratch/r%r" --quiet --stats-json "$j" "$TINY" "$TMP/tiny.out" ||
				err "tiny sort at p=$np failed"
			grep -o '"secs": [0-9.]*' "$j" | awk '
				NR == 1 { t = $2; next } { t -= $2 } END { print (t > 0 ? t : 0) }'
		done | sort -g | head -1 | awk -v p="$np" '{ printf "setup_mpi %d %.6f\n", p, $1 }' >>"$1"
	done
	rm -f "$j" "$TMP/tiny.out"
}

# gen ALGO SIZE FILE
gen() {
	local b
	b=$(bytes_of "$2")
	case $1 in
	sort) "$RUN" gen --format u64 --count $((b / 8)) --seed 42 --quiet "$3" ;;
	aggregate) "$RUN" gen --format kv --count $((b / 16)) --groups 1M --seed 42 --quiet "$3" ;;
	sgd) "$RUN" gen --format dense --model linear --count $((b / 260)) --dim 64 --noise 0.5 \
		--seed 42 --quiet "$3" ;;
	esac
}

# job ALGO IN: the pems-run arguments (after the subcommand)
job() {
	case $1 in
	sort) echo "--format u64 $2 $TMP/out" ;;
	aggregate) echo "--agg count,sum $2 $TMP/out" ;;
	sgd) echo "--model linear --data $2 --format dense --sync local --local-steps 64 --epochs 1 --out $TMP/out" ;;
	esac
}

PENDING=$RESULTS_DIR/.pending.$$
for algo in $ALGOS; do
	for size in $SIZES; do
		in=$TMP/in.$algo.$size
		gen "$algo" "$size" "$in" || err "gen $algo $size failed"
		bytes=$(stat -c %s "$in")
		for ((rep = REP_FIRST; rep < REP_FIRST + REPEAT; rep++)); do
			cal=$RESULTS_DIR/logs/model-$algo-$size-r$rep.params
			quick_cal "$cal.before"
			: >"$PENDING"
			for np in $NPS; do
				rm -rf "${TMP:?}/scratch/"r* "$TMP/out" "$TMP/out".*
				mkdir -p "$TMP/scratch/r"{0,1,2,3}
				json=$RESULTS_DIR/logs/model-$algo-$size-p$np-r$rep.json
				# shellcheck disable=SC2046
				if ! mpirun --oversubscribe --bind-to none -np "$np" "$RUN" "$algo" \
					--mem "$MEM" --tmp "$TMP/scratch/r%r" --quiet --stats-json "$json" \
					$(job "$algo" "$in") >"$RESULTS_DIR/logs/model-$algo-$size-p$np-r$rep.log" 2>&1; then
					echo "bench/model.sh: $algo $size p=$np failed (see logs)" >&2
					continue
				fi
				echo "$np $json" >>"$PENDING"
			done
			quick_cal "$cal.after" nosetup
			mean_params "$cal.before" "$cal.after" "$cal"
			while read -r np json; do
				predict_run "$algo" "$bytes" "$np" "$rep" "$json" "$cal"
			done <"$PENDING"
		done
		rm -f "$in" "$in".weights "$TMP/out" "$TMP/out".*
		rm -rf "${TMP:?}/scratch/"r*
	done
done
rm -f "$TINY"

BUILD=$BUILD bash "$ROOT/bench/model-project.sh" "$BASE" "$RESULTS_DIR/model-projection.txt"
report "$RESULTS_DIR"
