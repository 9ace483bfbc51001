#!/bin/bash
# bench/model.sh - validate the BSP cost model (pems-run model,
# docs/cost-model.md) against real runs of sort (u64, rec100), aggregate
# (1000 and 10^7 groups) and sgd at p = 1, 2, 4 ranks (mpirun
# --oversubscribe: the ranks share the cores and the disk of this
# machine) and two sizes each, with one memory budget for the machine.
#
#   BUILD=build MODEL_TMP=/work/scratch/model HOLD="/work/wt/lock.sh quiet" bash bench/model.sh
#   bash bench/model.sh calibrate          only the calibration (one hold)
#   bash bench/model.sh calibrate-base     its first half: model calibrate,
#                                          setup_mpi, cpu_p (one hold)
#   bash bench/model.sh calibrate-base-pass K  the same, kept as pass K
#                                          (RESULTS_DIR/model-base.baseK.params)
#   bash bench/model.sh base-median        RESULTS_DIR/model-base.params: the
#                                          median of the kept base passes, per
#                                          figure (run before calibrate-mpi)
#   bash bench/model.sh calibrate-mpi      its second half: the cpu_alg,
#                                          cpu_step, overlap_p and lbusy lines,
#                                          appended to RESULTS_DIR's params
#   bash bench/model.sh calibrate-mpi-pass K   the same, kept as pass K
#                                          (RESULTS_DIR/model-base.mpiK.params)
#   bash bench/model.sh mpi-median         the params' calibrate-mpi lines: the
#                                          median of the kept passes, per line
#   bash bench/model.sh group CASE SIZE    only one group of runs (one hold)
#   bash bench/model.sh validate PARAMS    one validation round with a frozen
#                                          parameter file: PARAMS copied to
#                                          RESULTS_DIR (refused when FROZEN_MD5
#                                          is set and PARAMS' md5 differs), every
#                                          (case, size) group under $HOLD, the
#                                          report; never calibrates
#   bash bench/model.sh pool DIR ROUND...  DIR/pooled: every run of the ROUND
#                                          directories as one sample (report);
#                                          DIR/rounds.md, rounds.csv: each
#                                          point's error per round, the counts
#   bash bench/model.sh --report DIR       predict DIR's runs again with
#                                          DIR/model-base.params and the
#                                          current model; table, plot
#
# Environment (all optional):
#   CASES="sort-u64 sort-rec100 agg-1e3 agg-1e7 sgd"
#   SIZES="512M 1536M"  input sizes (every case)
#   NPS="1 2 4"         ranks
#   REPEAT=3            runs of each (case, size, p); medians are reported
#   WARMUP=1            one unrecorded p = 1 run of each new input first (0: none)
#   MEM_TOTAL=1G        --mem of the machine: each of p ranks gets MEM_TOTAL/p
#   MODEL_TMP=/work/scratch/model   inputs, outputs, scratch (one input at a
#                       time: about 3.2x the largest size for the sort)
#   BSP_CSV=...         bench/bsp-params.sh's medians (default:
#                       bench/results/bsp-params/bsp-params.csv)
#   PREWARM=1           before every mpirun of a run, of a calibration job
#                       and of the setup runs: build/bench/cpu_probe warm (2 GiB of
#                       huge pages touched and freed, 0.2-5 s), so that the
#                       run's huge-page faults land on guest memory the host
#                       still backs: on this VM a 2 MiB fault on a block the
#                       guest's free-page reporting gave back to the host
#                       costs about 20x one on a block just freed, and runs
#                       used up to 1.5x the CPU after an idle gap of a few
#                       seconds (bench/results/variance/).  Off
#                       by default.  The in-process kernels of `model
#                       calibrate` are not warmed.
#   HOLD="..."          run the calibration and each (case, size) group under
#                       this wrapper (e.g. "/work/wt/lock.sh quiet": each group
#                       is one hold of a few minutes)
#   RESULTS_DIR=bench/results/model
# Protocol: one full `model calibrate` (kernel rates from 1 GiB runs of
# the algorithms, disk, latency, setup) plus the setup of a tiny sort under
# mpirun -np P, then nothing is measured for the model again: each run is
# predicted from that one parameter file, the run's p and --mem, and the
# planner's v and k (the model calls the algorithms' planners; the
# prediction says whether the run chose the same).  Within a group the REPEAT
# repetitions go round p = 1, 2, 4, so that contenders run side by side.
# Writes to $RESULTS_DIR:
#   model-base.params  the calibration (calibrate-mpi adds cpu_alg, cpu_step,
#                      overlap_p, lbusy and '# busy-spin' lines)
#   model-runs.csv     case,algo,bytes,p,rep,predicted,measured,ratio,
#                      pred_cpu,meas_cpu,pred_io,meas_io,plan_matches
#   model.csv          case,bytes,p,runs,predicted,measured_median,
#                      error_pct (predicted/measured median - 1),
#                      measured_min,measured_max,io_ratio,cpu_ratio
#   model-table.md     the same as a markdown table
#   model.png          predicted against measured (gnuplot), +-20 % lines
#   model-steps.md     per-superstep predicted and measured seconds (medians)
#   model-projection.txt/.png  bench/model-project.sh: 1..1000 nodes
#   logs/model-CASE-SIZE-pP-rR.{json,txt,log}: each run's --stats-json,
#                      predict table and output
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUN=$BUILD/pems-run
CASES=${CASES:-sort-u64 sort-rec100 agg-1e3 agg-1e7 sgd}
SIZES=${SIZES:-512M 1536M}
NPS=${NPS:-1 2 4}
REPEAT=${REPEAT:-3}
MEM_TOTAL=${MEM_TOTAL:-1G}
TMP=${MODEL_TMP:-/work/scratch/model}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/bench/results/model}
HOLD=${HOLD:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export BUILD MODEL_TMP=$TMP RESULTS_DIR CASES SIZES NPS REPEAT MEM_TOTAL

err() { echo "bench/model.sh: error: $*" >&2; exit 1; }
prewarm() { [[ ${PREWARM:-0} == 0 ]] || "$BUILD/bench/cpu_probe" warm >/dev/null; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
BASE=$RESULTS_DIR/model-base.params
RUNS=$RESULTS_DIR/model-runs.csv
HDR="case,algo,bytes,p,rep,predicted,measured,ratio,pred_cpu,meas_cpu,pred_io,meas_io,plan_matches"

algo_of() { case $1 in sort-*) echo sort ;; agg-*) echo aggregate ;; *) echo sgd ;; esac; }
mem_of() { echo "$(($(numfmt --from=iec "$MEM_TOTAL") / $1))"; }

# model_args CASE: the job options of `model predict` (besides the run)
model_args() {
	case $1 in
	sort-u64) echo "--format u64" ;;
	sort-rec100) echo "--format rec100" ;;
	agg-1e3) echo "--groups 1000" ;;
	agg-1e7) echo "--groups 10000000" ;;
	sgd) echo "--dim 64 --local-steps 64 --epochs 1" ;;
	esac
}

# predict_run CASE BYTES P REP JSON: predict one stored run, one CSV line
predict_run() {
	local out line a f v
	a=$(algo_of "$1")
	# shellcheck disable=SC2046
	out=$("$RUN" model predict "$a" $(model_args "$1") --params "$BASE" --stats-json "$5") || return
	printf '%s\n' "$out" >"${5%.json}.txt"
	line=$(tail -1 <<<"$out")
	f() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
	v=$(grep -c "(as the planner's)" <<<"$out")
	echo "$1,$a,$2,$3,$4,$(f predicted_secs),$(f measured_secs),$(f ratio),$(f pred_cpu),$(f meas_cpu),$(f pred_io),$(f meas_io),$v" >>"$RUNS"
	echo "bench=model case=$1 bytes=$2 p=$3 rep=$4 predicted=$(f predicted_secs) measured=$(f measured_secs) ratio=$(f ratio) plan_matches=$v"
}

# setup_mpi: "setup_mpi P S" lines for the calibration: the seconds of a
# tiny sort (16 MiB) under mpirun -np P outside its supersteps (the less
# of three runs: a fixed cost)
setup_mpi() {
	local np i j=$TMP/tiny.json tiny=$TMP/tiny.u64
	"$RUN" gen --format u64 --count 2M --seed 1 --quiet "$tiny" || err "gen failed"
	for np in $NPS; do
		for i in 1 2 3; do
			rm -rf "${TMP:?}/scratch/"r*
			mkdir -p "$TMP/scratch/r"{0,1,2,3}
			prewarm
			mpirun --oversubscribe --bind-to none -np "$np" "$RUN" sort --format u64 \
				--mem "$(mem_of "$np")" --tmp "$TMP/scratch/r%r" --quiet --stats-json "$j" \
				"$tiny" "$TMP/tiny.out" || err "tiny sort at p=$np failed"
			grep -o '"secs": [0-9.]*' "$j" | awk '
				NR == 1 { t = $2; next } { t -= $2 } END { print (t > 0 ? t : 0) }'
		done | sort -g | head -1 | awk -v p="$np" '{ printf "setup_mpi %d %.6f\n", p, $1 }' >>"$BASE"
	done
	rm -f "$j" "$tiny" "$TMP/tiny.out"
}

# cpu_mpi: "cpu_p P F" lines for the calibration: the CPU seconds (every
# thread of every rank) of the partition and sort supersteps of a 1 GiB
# u64 sort under mpirun -np P (--mem MEM_TOTAL/P, as the runs), over the
# same at P = 1 (the less of two runs each): what P ranks sharing the
# cores cost beyond the kernels -- the comm threads' polling, MPI's
# copies, more threads than cores.  Seed and size differ from every
# validation input.
cpu_mpi() {
	local np i j=$TMP/cpu.json in=$TMP/cpu.u64 c1=
	"$RUN" gen --format u64 --count 128M --seed 7 --quiet "$in" || err "gen failed"
	sync "$in"
	for np in $NPS; do
		for i in 1 2; do
			rm -rf "${TMP:?}/scratch/"r*
			mkdir -p "$TMP/scratch/r"{0,1,2,3}
			prewarm
			mpirun --oversubscribe --bind-to none -np "$np" "$RUN" sort --format u64 \
				--mem "$(mem_of "$np")" --tmp "$TMP/scratch/r%r" --quiet --stats-json "$j" \
				"$in" "$TMP/cpu.out" || err "cpu sort at p=$np failed"
			rm -f "$TMP/cpu.out"
			python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); s = j["steps"]
print((s[2]["cpu"] + s[3]["cpu"]) * j["p"])' "$j"
		done | sort -g | head -1 >"$TMP/cpu.$np"
		[[ $np == 1 ]] && c1=$(cat "$TMP/cpu.1")
		[[ -n $c1 ]] && awk -v p="$np" -v c="$(cat "$TMP/cpu.$np")" -v c1="$c1" \
			'BEGIN { if (p > 1) printf "cpu_p %d %.4f\n", p, c / c1 }' >>"$BASE"
	done
	rm -f "$j" "$in" "$TMP"/cpu.[0-9]*
}

# cal_gen KIND FILE: a 1 GiB calibration input, seed 7 (every validation
# input is 512 MiB or 1.5 GiB, seed 42); kv with 10^6 groups (validation:
# 10^3 and 10^7)
cal_gen() {
	local b=$((1 << 30))
	case $1 in
	sort-u64) "$RUN" gen --format u64 --count $((b / 8)) --seed 7 --quiet "$2" ;;
	sort-rec100) "$RUN" gen --format rec100 --count $((b / 100)) --seed 7 --quiet "$2" ;;
	aggregate) "$RUN" gen --format kv --count $((b / 16)) --groups 1000000 --seed 7 --quiet "$2" ;;
	aggregate-pre) "$RUN" gen --format kv --count $((b / 16)) --groups 1000 --seed 7 --quiet "$2" ;;
	sgd) "$RUN" gen --format dense --model linear --count $((b / 260)) --dim 64 --noise 0.5 \
		--seed 7 --quiet "$2" ;;
	esac && sync "$2"
}

# cal_job KIND IN: the pems-run command line of a calibration run
cal_job() {
	case $1 in
	sort-u64) echo "sort --format u64 $2 $TMP/cal.out" ;;
	sort-rec100) echo "sort --format rec100 $2 $TMP/cal.out" ;;
	aggregate | aggregate-pre) echo "aggregate --agg count,sum $2 $TMP/cal.out" ;;
	sgd) echo "sgd --model linear --data $2 --format dense --sync local --local-steps 64 --epochs 1 --out $TMP/cal.out" ;;
	esac
}

# cal_model KIND: the job options of `model predict` for a calibration run
cal_model() {
	case $1 in
	sort-u64) echo "sort --format u64" ;;
	sort-rec100) echo "sort --format rec100" ;;
	aggregate) echo "aggregate --groups 1000000" ;;
	aggregate-pre) echo "aggregate --groups 1000" ;;
	sgd) echo "sgd --dim 64 --local-steps 64 --epochs 1" ;;
	esac
}

# cpu_alg_mpi: "cpu_alg KIND P F" lines: CPU seconds (every thread of
# every rank, all supersteps) of the rec100 sort, the aggregate (10^6
# groups: its rows pass raw), the pre-aggregating aggregate (10^3 groups,
# kind aggregate-pre: its load superstep hashes the rows into states;
# the model takes that superstep's factor for the rows it pre-aggregates)
# and the sgd on their 1 GiB calibration inputs under mpirun -np P over the same
# at P = 1 (the less of two runs each; after one unrecorded warm-up run
# of each input, whose first O_DIRECT pass the host's cache may not
# have seen).  The u64 sort keeps cpu_mpi's "cpu_p" lines.  The sgd's
# run JSONs stay in $TMP/cal-sgd-pP-iI.json for lbusy_mpi.
cpu_alg_mpi() {
	local kind np i in j c1 a
	drop_mpi_lines
	sed -i '/^# cpu_alg, /d' "$BASE"
	for kind in sort-u64 sort-rec100 aggregate aggregate-pre sgd; do
		in=$TMP/cal.$kind
		cal_gen "$kind" "$in" || err "gen $kind failed"
		c1=
		for np in 0 $NPS; do	# 0: the warm-up (p = 1, not recorded)
			for i in 1 2; do
				[[ $np == 0 && $i == 2 ]] && continue
				rm -rf "${TMP:?}/scratch/"r* "$TMP/cal.out" "$TMP/cal.out".*
				mkdir -p "$TMP/scratch/r"{0,1,2,3}
				j=$TMP/cal-$kind-p$np-i$i.json
				read -ra a <<<"$(cal_job "$kind" "$in")"
				prewarm
				mpirun --oversubscribe --bind-to none -np "$((np ? np : 1))" "$RUN" "${a[0]}" \
					--mem "$(mem_of "$((np ? np : 1))")" --tmp "$TMP/scratch/r%r" --quiet \
					--stats-json "$j" "${a[@]:1}" >/dev/null 2>&1 ||
					err "calibration $kind at p=$np failed"
				[[ $np == 0 ]] && continue
				python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
print(sum(s["cpu"] for s in j["steps"]) * j["p"])' "$j"
			done | sort -g | head -1 >"$TMP/cpu.$np"
			[[ $np == 0 ]] && continue
			[[ $np == 1 ]] && c1=$(cat "$TMP/cpu.1")
			awk -v k="$kind" -v p="$np" -v c="$(cat "$TMP/cpu.$np")" -v c1="$c1" \
				'BEGIN { if (p > 1) printf "cpu_alg %s %d %.4f\n", k, p, c / c1 }' >>"$BASE"
		done
		[[ $kind == sgd ]] || cpu_steps "$kind"
		kernel_check "$kind"
		overlap_a "$kind"
		rm -f "$in" "$in".weights "$TMP/cal.out" "$TMP/cal.out".* "$TMP"/cpu.[0-9]*
		[[ $kind == sgd ]] || rm -f "$TMP"/cal-"$kind"-p*.json
	done
	for np in $NPS; do
		[[ $np == 1 || ! -s $TMP/ovl.$np ]] && continue
		median <"$TMP/ovl.$np" | awk -v p="$np" '{ a = $1 < 0 ? 0 : $1 > 1 ? 1 : $1
			printf "overlap_p %d %.4f\n", p, a }' >>"$BASE"
	done
	for kind in sort-u64 sort-rec100 aggregate aggregate-pre sgd; do
		for np in $NPS; do
			[[ -s $TMP/ovlk.$kind.$np ]] || continue
			median <"$TMP/ovlk.$kind.$np" | awk -v k="$kind" -v p="$np" '{
				a = $1 < 0 ? 0 : $1 > 1 ? 1 : $1; printf "overlap_alg %s %d %.4f\n", k, p, a }' >>"$BASE"
		done
	done
	rm -f "$TMP"/ovl.* "$TMP"/ovlk.*
}

# overlap_a KIND: for each calibration run of KIND (cpu_alg_mpi's JSONs;
# cpu_step already in the parameters), each superstep (or loop of
# identical ones) whose disk and compute both take at least 0.1 s: the
# share of the lesser not hidden, (measured - predicted) / lesser + the
# overlap the prediction used, appended to $TMP/ovlk.KIND.P ("overlap_alg
# KIND P A" = their median: the calibration runs showed 0.1 for some
# algorithms where the sorts had 0.5) and, at p > 1 but for the sgd, to
# $TMP/ovl.P (overlap_p P, the fallback: the median over the algorithms)
overlap_a() {
	local np j out a0
	a0=$(awk '$1 == "overlap" { print $2 }' "$BASE")
	for np in $NPS; do
		for j in "$TMP"/cal-"$1"-p"$np"-i*.json; do
			# shellcheck disable=SC2046
			out=$("$RUN" model predict $(cal_model "$1") --params "$BASE" --stats-json "$j" \
				2>/dev/null) || continue
			awk -v a0="${a0:-0}" '$1 ~ /^[0-9-]+$/ && NF == 11 {
				c = $4 > $5 ? $4 : $5; s = $3 < c ? $3 : c
				if ($3 >= 0.1 && c >= 0.1) print a0 + ($10 - $9) / s }' <<<"$out"
		done >"$TMP/ovl.tmp"
		cat "$TMP/ovl.tmp" >>"$TMP/ovlk.$1.$np"
		[[ $np == 1 || $1 == sgd ]] || cat "$TMP/ovl.tmp" >>"$TMP/ovl.$np"
	done
	rm -f "$TMP/ovl.tmp"
}

# kernel_check KIND: the model's kernel core-seconds (the in-process
# kernel rates) against the CPU seconds of KIND's calibration runs at p = 1
# under mpirun, launched as the validation's runs are (pems-run, the
# sort's k = cores + 1 workers): each run's line appended to
# $RESULTS_DIR/model-kernel-check.txt, and "kscale KIND F", F = the mean
# over the runs of measured CPU / the model's, to $BASE (the aggregate of
# 10^3 groups is kscale aggregate-pre: the model applies it to the rows it
# pre-aggregates, kscale aggregate to the rest)
kernel_check() {
	local j
	for j in "$TMP"/cal-"$1"-p1-i*.json; do
		# shellcheck disable=SC2046
		"$RUN" model predict $(cal_model "$1") --params "$BASE" --stats-json "$j" 2>/dev/null |
			tail -1 | awk -v k="$1" -v t="$(date -u +%T)" '{ for (i = 1; i <= NF; i++) {
				split($i, a, "="); v[a[1]] = a[2] }
				printf "%s %s pred_cpu=%s meas_cpu=%s ratio=%.3f predicted=%s measured=%s\n", t, k,
					v["pred_cpu"], v["meas_cpu"], v["pred_cpu"] / v["meas_cpu"], v["predicted_secs"],
					v["measured_secs"] }'
	done >"$TMP/kchk"
	cat "$TMP/kchk" >>"$RESULTS_DIR/model-kernel-check.txt"
	awk -v k="$1" '{ split($4, a, "="); split($3, b, "="); if (b[2] > 0) { s += a[2] / b[2]; n++ } }
		END { if (n) printf "kscale %s %.4f\n", k, s / n }' "$TMP/kchk" >>"$BASE"
	rm -f "$TMP/kchk"
}

# cpu_steps KIND: "cpu_step KIND S P F" lines from cpu_alg_mpi's runs:
# the same ratio for each superstep S that holds at least 5 % of the CPU
# at p = 1 (the less of the two runs at each p, per superstep)
cpu_steps() {
	python3 - "$1" "$TMP" $NPS >>"$BASE" <<-'EOF'
		import glob, json, sys
		kind, tmp, nps = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
		def cpu(p):
		    runs = [json.load(open(f)) for f in glob.glob("%s/cal-%s-p%d-i*.json" % (tmp, kind, p))]
		    return [min(r["steps"][i]["cpu"] * r["p"] for r in runs) for i in range(len(runs[0]["steps"]))]
		c1 = cpu(1)
		for p in nps:
		    if p == 1:
		        continue
		    cp = cpu(p)
		    for i, (a, b) in enumerate(zip(c1, cp)):
		        if a >= 0.05 * sum(c1) and a > 0:
		            print("cpu_step %s %d %d %.4f" % (kind, i, p, b / a))
	EOF
}

# lbusy_mpi: "lbusy P S" lines: what a training superstep of the
# calibration sgd (cpu_alg_mpi's runs: 1 GiB, seed 7, 64 local steps,
# --mem MEM_TOTAL/P) took under mpirun -np P beyond the model's
# prediction of it without l (disk, compute with cpu_alg, chain), per
# superstep, plus the idle l(P): the superstep latency of a loop of short
# supersteps with every worker busy (median of the two runs; at least
# the idle l).  Also "# busy-spin" comment lines: bench/bsp_params busy,
# the same loop with the work a spin of the sgd's CPU per VP and
# superstep and no I/O, which says how much of it is the barrier itself.
lbusy_mpi() {
	local np i j out l n
	for np in $NPS; do
		l=$(awk -v p="$np" '$1 == "bsp" && $2 == p { print $3 }' "$BASE")
		for i in 1 2; do
			j=$TMP/cal-sgd-p$np-i$i.json
			out=$("$RUN" model predict sgd --dim 64 --local-steps 64 --epochs 1 \
				--params "$BASE" --stats-json "$j") || err "predict $j failed"
			awk '$2 == "train" { split($1, r, "-"); n = r[2] - r[1] + 1
				print ($(NF - 1) - $(NF - 2)) / n }' <<<"$out"
		done | median | awk -v p="$np" -v l="${l:-0}" \
			'{ x = $1 + l; printf "lbusy %d %.6f\n", p, (x > l ? x : l) }' >>"$BASE"
		n=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); s = j["steps"][1:-1]
print("%.0f" % (1e6 * sum(x["cpu"] for x in s) * j["p"] / len(s) / j["v"]))' "$TMP/cal-sgd-p$np-i1.json")
		mpirun --oversubscribe --bind-to none -np "$np" "$BUILD/bench/bsp_params" busy --v 16 \
			--threads 2 --work "$n" --steps 200 --tmp "$TMP/scratch/r0" |
			sed 's/^/# busy-spin /' >>"$BASE"
	done
	rm -f "$TMP"/cal-sgd-p*.json
}

calibrate_base() {
	BSP_CSV=${BSP_CSV:-$ROOT/bench/results/bsp-params/bsp-params.csv}
	[[ -f $BSP_CSV ]] || err "no bsp-params.csv; run bench/bsp-params.sh first"
	echo "bench/model.sh: full calibration ($BSP_CSV)" >&2
	"$RUN" model calibrate --tmp "$TMP/scratch" --bsp-params "$BSP_CSV" --out "$BASE" ||
		err "calibration failed"
	setup_mpi
	cpu_mpi
}

# the calibrate-mpi lines of $BASE (cpu_alg, cpu_step, overlap_p,
# overlap_alg, kscale, lbusy, busy-spin comments); drop_mpi_lines
# deletes them
MPI_KEYS='cpu_alg|cpu_step|overlap_p|overlap_alg|kscale|lbusy|# busy-spin'
mpi_lines() { grep -E "^($MPI_KEYS) " "$BASE"; }
drop_mpi_lines() { sed -i -E "/^($MPI_KEYS) /d" "$BASE"; }

# mpi_median: replace $BASE's calibrate-mpi lines by the median of each
# line over the passes kept by calibrate-mpi-pass (the CPU of mpirun runs
# on this VM moved by up to 1.7x between passes a few minutes apart)
mpi_median() {
	local f=("$RESULTS_DIR"/model-base.mpi[0-9].params)
	[[ -f ${f[0]} ]] || err "no model-base.mpiK.params; run calibrate-mpi-pass K first"
	drop_mpi_lines
	echo "# the calibrate-mpi lines below: the median over ${#f[@]} passes (model-base.mpiK.params)" >>"$BASE"
	python3 - "${f[@]}" >>"$BASE" <<-'EOF'
		import statistics, sys
		keys, vals = [], {}
		for path in sys.argv[1:]:
		    for line in open(path):
		        w = line.split()
		        if not w or w[0] == "#":
		            continue
		        k = " ".join(w[:-1])
		        if k not in vals:
		            keys.append(k)
		            vals[k] = []
		        vals[k].append(float(w[-1]))
		for k in keys:
		    print("%s %.6g" % (k, statistics.median(vals[k])))
	EOF
}

# base_median: $BASE as the median of the kept calibrate-base passes
# (model-base.baseK.params), figure by figure: one calibration's kernel
# rates and disk test moved by 10-35 % from the next on this VM (the
# fourth validation), and that error became a constant on every
# prediction.  The layout and comments are the first pass's.
base_median() {
	local f=("$RESULTS_DIR"/model-base.base[0-9].params)
	[[ -f ${f[0]} ]] || err "no model-base.baseK.params; run calibrate-base-pass K first"
	python3 - "${f[@]}" >"$BASE" <<-'EOF'
		import statistics, sys
		def parse(line):
		    body, _, comment = line.rstrip("\n").partition("#")
		    w = body.split()
		    if not w or w[0] in ("pems-model", "date"):
		        return None, None, None
		    n = 2 if w[0] in ("agg_at", "bsp") else len(w) - 1	# agg_at X M W, bsp P L G: two figures
		    return " ".join(w[:n]), [float(x) for x in w[n:]], comment
		vals, dates = {}, []
		for path in sys.argv[1:]:
		    for line in open(path):
		        if line.startswith("date "):
		            dates.append(line.split()[1])
		        k, v, _ = parse(line)
		        if k is not None:
		            vals.setdefault(k, []).append(v)
		for line in open(sys.argv[1]):
		    k, v, c = parse(line)
		    if line.startswith("date "):
		        print(line, end="")
		        print("# every figure below: the median over %d calibrate-base passes (%s)"
		              % (len(sys.argv) - 1, ", ".join(dates)))
		        continue
		    if k is None or len(vals[k]) != len(sys.argv) - 1:
		        if k is None:
		            print(line, end="")
		        continue	# a figure not in every pass: left out
		    med = [statistics.median(x[i] for x in vals[k]) for i in range(len(v))]
		    txt = ("%-17s %s" if " " not in k else "%s %s") % (k, " ".join("%.6g" % x for x in med))
		    print(txt + ("\t#" + c if c else ""))
	EOF
}

calibrate() {
	calibrate_base
	cpu_alg_mpi
	lbusy_mpi
}

# gen CASE SIZE FILE
gen() {
	local b
	b=$(numfmt --from=iec "$2")
	case $1 in
	sort-u64) "$RUN" gen --format u64 --count $((b / 8)) --seed 42 --quiet "$3" ;;
	sort-rec100) "$RUN" gen --format rec100 --count $((b / 100)) --seed 42 --quiet "$3" ;;
	agg-1e3) "$RUN" gen --format kv --count $((b / 16)) --groups 1000 --seed 42 --quiet "$3" ;;
	agg-1e7) "$RUN" gen --format kv --count $((b / 16)) --groups 10000000 --seed 42 --quiet "$3" ;;
	sgd) "$RUN" gen --format dense --model linear --count $((b / 260)) --dim 64 --noise 0.5 \
		--seed 42 --quiet "$3" ;;
	esac
}

# job CASE IN: the pems-run arguments after the subcommand
job() {
	case $1 in
	sort-u64) echo "--format u64 $2 $TMP/out" ;;
	sort-rec100) echo "--format rec100 $2 $TMP/out" ;;
	agg-*) echo "--agg count,sum $2 $TMP/out" ;;
	sgd) echo "--model linear --data $2 --format dense --sync local --local-steps 64 --epochs 1 --out $TMP/out" ;;
	esac
}

# group CASE SIZE: REPEAT rounds of p = NPS, each run predicted
group() {
	local c=$1 size=$2 in=$TMP/in.$1.$2 bytes rep np json log
	[[ -f $BASE ]] || err "no $BASE; run 'bench/model.sh calibrate' first"
	echo "group $c $size: start $(date -u +%T)" >>"$RESULTS_DIR/times.txt"
	gen "$c" "$size" "$in" || err "gen $c $size failed"
	# on the disk before the first run: an O_DIRECT read of dirty page-cache
	# pages first waits for their writeback (it cost the first run 1.8 s)
	sync "$in" || err "sync $in failed"
	bytes=$(stat -c %s "$in")
	# one unrecorded run at p = 1 first (WARMUP=0: none), as the calibration
	# jobs get: the first run over a freshly written input took up to 2x
	# the CPU in its reading superstep (the fifth validation)
	if [[ ${WARMUP:-1} != 0 ]]; then
		rm -rf "${TMP:?}/scratch/"r* "$TMP/out" "$TMP/out".*
		mkdir -p "$TMP/scratch/r"{0,1,2,3}
		prewarm
		# shellcheck disable=SC2046
		mpirun --oversubscribe --bind-to none -np 1 "$RUN" "$(algo_of "$c")" --mem "$(mem_of 1)" \
			--tmp "$TMP/scratch/r%r" --quiet $(job "$c" "$in") >/dev/null 2>&1 ||
			echo "bench/model.sh: warm-up of $c $size failed" >&2
	fi
	for ((rep = 1; rep <= REPEAT; rep++)); do
		for np in $NPS; do
			rm -rf "${TMP:?}/scratch/"r* "$TMP/out" "$TMP/out".*
			mkdir -p "$TMP/scratch/r"{0,1,2,3}
			json=$RESULTS_DIR/logs/model-$c-$size-p$np-r$rep.json
			log=${json%.json}.log
			prewarm
			# shellcheck disable=SC2046
			if ! mpirun --oversubscribe --bind-to none -np "$np" "$RUN" "$(algo_of "$c")" \
				--mem "$(mem_of "$np")" --tmp "$TMP/scratch/r%r" --quiet --stats-json "$json" \
				$(job "$c" "$in") >"$log" 2>&1; then
				echo "bench/model.sh: $c $size p=$np failed (see $log)" >&2
				continue
			fi
			predict_run "$c" "$bytes" "$np" "$rep" "$json"
		done
	done
	rm -f "$in" "$in".weights "$TMP/out" "$TMP/out".*
	rm -rf "${TMP:?}/scratch/"r*
	echo "group $c $size: end $(date -u +%T)" >>"$RESULTS_DIR/times.txt"
}

# validate PARAMS: one round of every group, predicted from PARAMS as is
validate() {
	local c size sum
	sum=$(md5sum <"$1" | cut -d' ' -f1)
	[[ -z ${FROZEN_MD5:-} || $sum == "$FROZEN_MD5" ]] ||
		err "$1 has md5 $sum, not the frozen $FROZEN_MD5"
	[[ -f $BASE ]] && ! cmp -s "$1" "$BASE" && err "$BASE exists and differs from $1"
	cp "$1" "$BASE" || err "cannot copy $1"
	echo "round $(basename "$RESULTS_DIR"): params $1 md5 $sum, start $(date -u +%FT%TZ)" >>"$RESULTS_DIR/times.txt"
	for c in $CASES; do
		for size in $SIZES; do
			echo "group $c $size: queued $(date -u +%T)" >>"$RESULTS_DIR/times.txt"
			# shellcheck disable=SC2086
			$HOLD bash "$0" group "$c" "$size"
			echo "group $c $size: done $(date -u +%T)" >>"$RESULTS_DIR/times.txt"
		done
	done
	echo "round $(basename "$RESULTS_DIR"): end $(date -u +%FT%TZ)" >>"$RESULTS_DIR/times.txt"
	report
}

# pool DIR ROUND...: the rounds' runs as one sample in DIR/pooled (the
# same parameter file: checked), and DIR/rounds.{csv,md}: per point the
# prediction and each round's error, per round the points within 20 %
pool() {
	local dir=$1 r n=0 j b
	shift
	rm -rf "$dir/pooled"
	mkdir -p "$dir/pooled/logs" || err "cannot create $dir/pooled"
	for r in "$@"; do
		cmp -s "$r/model-base.params" "$1/model-base.params" ||
			err "$r/model-base.params differs from $1's"
	done
	cp "$1/model-base.params" "$dir/pooled/" || exit 1
	rm -f "$dir"/rounds-*.dat
	for r in "$@"; do	# rep R of round k becomes rep (k-1)*REPEAT+R
		for j in "$r"/logs/model-*-p*-r*.json; do
			b=$(basename "$j" .json)
			cp "$j" "$dir/pooled/logs/${b%-r*}-r$((n * REPEAT + ${b##*-r})).json"
		done
		n=$((n + 1))
	done
	python3 - "$dir" "$@" <<-'PY'
		import csv, os, sys
		out, rounds = sys.argv[1], sys.argv[2:]
		names = [os.path.basename(r.rstrip("/")) for r in rounds]
		pts, err = {}, {}
		for r, nm in zip(rounds, names):
		    for row in csv.DictReader(open(os.path.join(r, "model.csv"))):
		        k = (row["case"], int(row["bytes"]), int(row["p"]))
		        pts[k] = float(row["predicted"])
		        with open(os.path.join(out, "rounds-%s.dat" % nm), "a") as d:
		            d.write("%s %s\n" % (row["measured_median"], row["predicted"]))
		        err.setdefault(k, {})[nm] = float(row["error_pct"])
		keys = sorted(pts)
		with open(os.path.join(out, "rounds.csv"), "w") as f:
		    f.write("case,bytes,p,predicted," + ",".join("error_pct_" + n for n in names) + "\n")
		    for k in keys:
		        f.write("%s,%d,%d,%.4f,%s\n" % (k + (pts[k],) + (",".join("%.1f" % err[k][n] if n in err[k] else "" for n in names),)))
		with open(os.path.join(out, "rounds.md"), "w") as f:
		    f.write("| case | input | p | predicted s | " + " | ".join(names) + " |\n")
		    f.write("|---|---:|---:|---:|" + "---:|" * len(names) + "\n")
		    for k in keys:
		        f.write("| %s | %.2f GiB | %d | %.2f | " % (k[0], k[1] / 2**30, k[2], pts[k]) +
		                " | ".join(("**%+.1f %%**" if abs(err[k][n]) > 20 else "%+.1f %%") % err[k][n]
		                           if n in err[k] else "-" for n in names) + " |\n")
		    f.write("| within 20 % | | | | " + " | ".join(
		        "%d of %d" % (sum(abs(err[k][n]) <= 20 for k in keys if n in err[k]),
		                      sum(n in err[k] for k in keys)) for n in names) + " |\n")
		    f.write("| largest error | | | | " + " | ".join(
		        "%+.1f %%" % max((err[k][n] for k in keys if n in err[k]), key=abs) for n in names) + " |\n")
	PY
	gnuplot <<-EOF || echo "bench/model.sh: gnuplot failed" >&2
		set terminal pngcairo size 860,680
		set output "$dir/rounds.png"
		set xrange [0.4:12]
		set yrange [0.4:12]
		set title "pems cost model: predicted vs measured median, each round (30 points a round)"
		set xlabel "measured seconds (median of 3 runs)"
		set ylabel "predicted seconds"
		set logscale xy
		set key top left
		set grid
		f(x) = x
		plot f(x) title "predicted = measured" lw 2 lc rgb "black", \\
		     1.2 * x title "+20 %" dt 2 lc rgb "gray", 0.8 * x title "-20 %" dt 2 lc rgb "gray"$(
			pt=5; for r in "$@"; do n=$(basename "$r")
				printf ', \\\n     "%s" using 1:2 title "%s" pt %d ps 1.3' "$dir/rounds-$n.dat" "$n" $((pt += 1)); done)
	EOF
}

repredict() {
	local j b c sz np r
	echo "$HDR" >"$RUNS"
	for j in "$RESULTS_DIR"/logs/model-*-p*-r*.json; do
		b=$(basename "$j" .json)
		b=${b#model-}
		r=${b##*-r}; b=${b%-r*}
		np=${b##*-p}; b=${b%-p*}
		sz=${b##*-}; c=${b%-*}
		predict_run "$c" "$(grep -o '"bytes": [0-9]*' "$j" | head -1 | cut -d' ' -f2)" \
			"$np" "$r" "$j" >/dev/null
	done
}

report() {
	local dir=$RESULTS_DIR c a b p rows n pr me lo hi io cp
	[[ -f $RUNS ]] || err "no $RUNS"
	echo "case,bytes,p,runs,predicted,measured_median,error_pct,measured_min,measured_max,io_ratio,cpu_ratio" >"$dir/model.csv"
	tail -n +2 "$RUNS" | cut -d, -f1,3,4 | sort -t, -k1,1 -k2,2n -k3,3n | awk '!seen[$0]++' |
	while IFS=, read -r c b p; do
		rows=$(awk -F, -v c="$c" -v b="$b" -v p="$p" '$1 == c && $3 == b && $4 == p' "$RUNS")
		n=$(wc -l <<<"$rows")
		pr=$(cut -d, -f6 <<<"$rows" | median)
		me=$(cut -d, -f7 <<<"$rows" | median)
		lo=$(cut -d, -f7 <<<"$rows" | sort -g | head -1)
		hi=$(cut -d, -f7 <<<"$rows" | sort -g | tail -1)
		io=$(awk -F, '$12 > 0 { print $11 / $12 }' <<<"$rows" | median)
		cp=$(awk -F, '$10 > 0 { print $9 / $10 }' <<<"$rows" | median)
		echo "$c,$b,$p,$n,$pr,$me,$(awk -v a="$pr" -v b="$me" 'BEGIN { printf "%.1f", (a / b - 1) * 100 }'),$lo,$hi,$io,$cp" >>"$dir/model.csv"
	done
	{
		echo "| case | input | p | runs | predicted s | measured s (median) | error | measured min - max | disk bytes pred/meas | kernel core-s / CPU s |"
		echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
		tail -n +2 "$dir/model.csv" | awk -F, '{ printf "| %s | %.2f GiB | %s | %s | %.2f | %.2f | %+.1f %% | %.2f - %.2f | %.3f | %.2f |\n", $1, $2 / 1073741824, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
		awk -F, 'NR > 1 { n++; e = $7 < 0 ? -$7 : $7; if (e <= 20) ok++; if (e > w) w = e }
			 END { printf "\n%d of %d points within 20 %%; largest error %.1f %%.\n", ok, n, w }' "$dir/model.csv"
	} >"$dir/model-table.md"
	for c in $CASES; do
		awk -F, -v c="$c" 'NR > 1 && $1 == c { print $6, $5, $3 }' "$dir/model.csv" >"$dir/model-$c.dat"
	done
	gnuplot <<-EOF || echo "bench/model.sh: gnuplot failed" >&2
		set terminal pngcairo size 860,680
		set output "$dir/model.png"
		set title "pems cost model: predicted vs measured (medians; p = 1, 2, 4; 512 MiB and 1.5 GiB)"
		set xlabel "measured seconds (median)"
		set ylabel "predicted seconds"
		set logscale xy
		set key top left
		set grid
		f(x) = x
		plot f(x) title "predicted = measured" lw 2 lc rgb "black", \
		     1.2 * x title "+20 %" dt 2 lc rgb "gray", 0.8 * x title "-20 %" dt 2 lc rgb "gray"$(series)
	EOF
	steps_report >"$dir/model-steps.md"
	cat "$dir/model-table.md"
}

# the plot's point series: one per case that has points
series() {
	local c t pt=5
	for c in $CASES; do
		[[ -s $RESULTS_DIR/model-$c.dat ]] || continue
		case $c in
		sort-u64) t="sort u64" ;; sort-rec100) t="sort rec100" ;;
		agg-1e3) t="aggregate, 10^3 groups" ;; agg-1e7) t="aggregate, 10^7 groups" ;;
		*) t="sgd (dense, d = 64)" ;;
		esac
		printf ', \\\n     "%s" using 1:2 title "%s" pt %d ps 1.4' "$RESULTS_DIR/model-$c.dat" "$t" $((pt += 2))
	done
}

# per superstep: predicted and measured seconds of rep 1 of every point
steps_report() {
	local t
	echo "Per superstep (run r1 of each point): predicted / measured seconds; 'bound' is the"
	echo "term of the max the model found largest."
	echo
	for t in "$RESULTS_DIR"/logs/model-*-r1.txt; do
		[[ -f $t ]] || continue
		echo "#### $(basename "$t" -r1.txt | sed 's/^model-//')"
		echo '```'
		sed -n '/^superstep/,/^ *total/p' "$t"
		echo '```'
	done
}

[[ -x $RUN ]] || err "$RUN not built; run make"
mkdir -p "$RESULTS_DIR/logs" "$TMP/scratch" || err "cannot create $RESULTS_DIR or $TMP"
[[ -f $RUNS ]] || echo "$HDR" >"$RUNS"
case ${1:-all} in
--report) RESULTS_DIR=${2:?usage: bench/model.sh --report DIR}; BASE=$RESULTS_DIR/model-base.params
	RUNS=$RESULTS_DIR/model-runs.csv; repredict; report; exit 0 ;;
calibrate) calibrate; exit 0 ;;
calibrate-base) calibrate_base; exit 0 ;;
calibrate-base-pass) BASE=$RESULTS_DIR/model-base.base${2:?K}.params; calibrate_base; exit 0 ;;
base-median) base_median; exit 0 ;;
calibrate-mpi) cpu_alg_mpi; lbusy_mpi; exit 0 ;;
calibrate-mpi-pass) cpu_alg_mpi; lbusy_mpi
	mpi_lines >"$RESULTS_DIR/model-base.mpi${2:?K}.params"; exit 0 ;;
mpi-median) mpi_median; exit 0 ;;
group) group "${2:?CASE}" "${3:?SIZE}"; exit 0 ;;
validate) validate "${2:?PARAMS}"; exit 0 ;;
pool) shift; [[ $# -ge 2 ]] || err "usage: bench/model.sh pool DIR ROUND..."; pool "$@"
	RESULTS_DIR=$1/pooled; BASE=$RESULTS_DIR/model-base.params; RUNS=$RESULTS_DIR/model-runs.csv
	repredict; report; exit 0 ;;
all) ;;
*) err "usage: bench/model.sh [calibrate | group CASE SIZE | validate PARAMS | --report DIR]" ;;
esac
command -v mpirun >/dev/null || err "mpirun not found; install openmpi-bin"
# shellcheck disable=SC2086
$HOLD bash "$0" calibrate || exit 1
for c in $CASES; do
	for size in $SIZES; do
		# shellcheck disable=SC2086
		$HOLD bash "$0" group "$c" "$size"
	done
done
BUILD=$BUILD bash "$ROOT/bench/model-project.sh" "$BASE" "$RESULTS_DIR/model-projection.txt"
report
