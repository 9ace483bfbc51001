#!/bin/bash
# old/new pems-run sort of 64 MiB u64 through bench/cgrun.sh (drops caches, memory group), alternating
cd /work/wt/mpiplug || exit 1
D=/work/scratch/mpiplug/cg; mkdir -p $D/tmp
OLD=/work/scratch/mpiplug/before/build/pems-run NEW=/work/wt/mpiplug/build/pems-run
$NEW gen --format u64 --count 8M --quiet $D/in
for r in 1 2 3 4 5 6 7; do
	if ((r % 2)); then order="old new"; else order="new old"; fi
	for v in $order; do
		bin=$OLD; [[ $v == new ]] && bin=$NEW
		line=$(bash bench/cgrun.sh 1G -- $bin sort --format u64 --quiet --tmp $D/tmp $D/in $D/out 2>&1 >/dev/null | grep secs=)
		echo "bin=$v $line"
		rm -f $D/out
	done
done
rm -rf $D
