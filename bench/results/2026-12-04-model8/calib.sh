#!/bin/bash
# the eighth pass's calibration: ONE base pass, its median, ONE mpi pass, its median; PREWARM=1
S=/work/scratch/model8/src-e231643
export BUILD=$S/build RESULTS_DIR=/work/wt/model8/bench/results/2026-12-04-model8 MODEL_TMP=/work/scratch/model8
export BSP_CSV=$S/bench/results/2026-12-03-model/bsp-params.csv PREWARM=1
NB=${NB:-1} NM=${NM:-1}
log() { echo "$(date -u +%T) $*" | tee -a $RESULTS_DIR/calibration-times.txt; }
for k in $(seq ${B0:-1} $NB); do
	log "base pass $k queued"
	/work/wt/lock.sh quiet bash -c "echo \$(date -u +%T) base pass $k start >> $RESULTS_DIR/calibration-times.txt; bash $S/bench/model.sh calibrate-base-pass $k" || { log "base pass $k failed"; exit 1; }
	log "base pass $k end"
done
bash $S/bench/model.sh base-median || exit 1
log "base-median written"
awk '$1 == "lat" && $2 > 0 { ok = 1 } END { exit !ok }' $RESULTS_DIR/model-base.params || { log "base-median lat not positive: stop"; exit 1; }
for k in $(seq ${M0:-1} $NM); do
	log "mpi pass $k queued"
	/work/wt/lock.sh quiet bash -c "echo \$(date -u +%T) mpi pass $k start >> $RESULTS_DIR/calibration-times.txt; bash $S/bench/model.sh calibrate-mpi-pass $k" || { log "mpi pass $k failed"; exit 1; }
	log "mpi pass $k end"
done
bash $S/bench/model.sh mpi-median || exit 1
log "mpi-median written"
