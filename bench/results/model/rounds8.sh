#!/bin/bash
# the eighth pass's validation rounds on the frozen parameter file, PREWARM=1
S=/work/scratch/model8/src-e231643
R=/work/wt/model8/bench/results/2026-12-04-model8
P=$R/model-base.frozen.params
MD5=$(md5sum <"$P" | cut -d' ' -f1)
[[ $MD5 == "$(cat $R/frozen.md5)" ]] || { echo "md5 mismatch"; exit 1; }
export BUILD=$S/build MODEL_TMP=/work/scratch/model8 PREWARM=1
for n in ${ROUNDS:-1 2 3}; do
	if [[ $n -ge 4 && $(date -u +%H%M) > ${LAST_START:-1725} ]]; then
		echo "$(date -u +%T) round$n not started (after ${LAST_START:-1725})"; break
	fi
	mkdir -p $R/round$n
	echo "$(date -u +%T) round$n start"
	FROZEN_MD5=$MD5 HOLD="/work/wt/lock.sh quiet" RESULTS_DIR=$R/round$n \
		bash $S/bench/model.sh validate "$P" | tail -3
	echo "$(date -u +%T) round$n end"
done
