#!/bin/bash
# the seventh pass's calibration: 3 base passes, the median, 3 mpi passes, the median
S=/work/scratch/model/src-7cdb903
export BUILD=$S/build RESULTS_DIR=/work/wt/model7/bench/results/2026-12-04-model7 MODEL_TMP=/work/scratch/model
export BSP_CSV=$S/bench/results/2026-12-03-model/bsp-params.csv
NB=${NB:-3} NM=${NM:-3}
log() { echo "$(date -u +%T) $*" | tee -a $RESULTS_DIR/calibration-times.txt; }
for k in $(seq 1 $NB); do
	log "base pass $k queued"
	/work/wt/lock.sh quiet bash -c "echo \$(date -u +%T) base pass $k start >> $RESULTS_DIR/calibration-times.txt; bash $S/bench/model.sh calibrate-base-pass $k" || { log "base pass $k failed"; exit 1; }
	log "base pass $k end"
done
bash $S/bench/model.sh base-median || exit 1
log "base-median written"
for k in $(seq 1 $NM); do
	log "mpi pass $k queued"
	/work/wt/lock.sh quiet bash -c "echo \$(date -u +%T) mpi pass $k start >> $RESULTS_DIR/calibration-times.txt; bash $S/bench/model.sh calibrate-mpi-pass $k" || { log "mpi pass $k failed"; exit 1; }
	log "mpi pass $k end"
done
bash $S/bench/model.sh mpi-median || exit 1
log "mpi-median written"
