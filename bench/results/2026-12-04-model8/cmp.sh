#!/bin/bash
# not a validation: the rounds' runs predicted again (bench/model.sh --report on copies)
#   cmp.sh seventh ROUND...   with the seventh pass's frozen file
#   cmp.sh latfloor ROUND...  with this pass's frozen file, lat 1e-09 -> 1e-15 (is 1e-09 a zero?)
S=/work/scratch/model8/src-e231643
R=/work/wt/model8/bench/results/2026-12-04-model8
export BUILD=$S/build MODEL_TMP=/work/scratch/model8
what=$1; shift
for n in "$@"; do
	d=/work/scratch/model8/cmp-$what/$n
	rm -rf "$d"; mkdir -p "$(dirname $d)"; cp -r $R/$n "$d"
	case $what in
	seventh) cp /work/main/bench/results/2026-12-04-model7/model-base.frozen.params "$d/model-base.params" ;;
	latfloor) sed -i 's/^lat               1e-09/lat               1e-15/' "$d/model-base.params"; grep '^lat' "$d/model-base.params" | cut -c1-40 ;;
	esac
	rm -f "$d/model.csv" "$d/model-table.md"
	bash $S/bench/model.sh --report "$d" >/dev/null 2>&1 || echo "report $n failed"
done
