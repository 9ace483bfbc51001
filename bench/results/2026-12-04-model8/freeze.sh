#!/bin/bash
# freeze the calibration: copy, md5 into frozen.md5 and PROTOCOL.md, commit (before any validation run)
R=/work/wt/model8/bench/results/2026-12-04-model8
cd $R || exit 1
awk '$1 == "lat" && $2 > 0 { ok = 1 } END { exit !ok }' model-base.params || { echo "lat not positive: not frozen"; exit 1; }
cp model-base.params model-base.frozen.params
MD5=$(md5sum <model-base.frozen.params | cut -d' ' -f1)
echo $MD5 > frozen.md5
cat >> PROTOCOL.md <<EON

**Frozen, $(date -u +%FT%TZ)** (before any validation run):
\`model-base.frozen.params\` = the median of calibrate-base passes 1-3 with calibrate-mpi pass 2
(times in calibration-times.txt), md5 \`$MD5\`. The rounds run
\`rounds8.sh\` (ROUNDS="1 2 3"; an extra round 4 only under the 17:25 rule above).
EON
git -C /work/wt/model8 add bench/results/2026-12-04-model8
git -C /work/wt/model8 commit -qm "bench/results/2026-12-04-model8: calibration (median of three base passes, one mpi pass, PREWARM=1) frozen as model-base.frozen.params, md5 $MD5, before any validation run" || exit 1
git -C /work/wt/model8 log --oneline -1
