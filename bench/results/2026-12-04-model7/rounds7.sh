#!/bin/bash
# the seventh pass's validation rounds on the frozen parameter file
S=/work/scratch/model/src-7cdb903
R=/work/wt/model7/bench/results/2026-12-04-model7
P=$R/model-base.frozen.params
MD5=$(md5sum <"$P" | cut -d' ' -f1)
[[ $MD5 == "$(cat $R/frozen.md5)" ]] || { echo "md5 mismatch"; exit 1; }
export BUILD=$S/build MODEL_TMP=/work/scratch/model
for n in ${ROUNDS:-1 2 3}; do
	if [[ $n -ge 4 && $(date -u +%H%M) > ${LAST_START:-0703} ]]; then
		echo "$(date -u +%T) round$n not started (after ${LAST_START:-0703})"; break
	fi
	mkdir -p $R/round$n
	echo "$(date -u +%T) round$n start"
	FROZEN_MD5=$MD5 HOLD="/work/wt/lock.sh quiet" RESULTS_DIR=$R/round$n \
		bash $S/bench/model.sh validate "$P" | tail -3
	echo "$(date -u +%T) round$n end"
done
