#!/bin/bash
# bench/model-project.sh - the projection of docs/cost-model.md: sort,
# aggregate and sgd on 1..1000 nodes like this machine (pems-run model
# project), weak scaling at 8 GiB per node and strong scaling of a 1 TiB
# sort, at 10 Gbit/s (20 us) and 25 Gbit/s (5 us), each with the
# algorithms' terms of one rank here (--node-terms 1) and of two ranks
# sharing this machine (--node-terms 2: the CPU factors of p > 1).
#
#   bash bench/model-project.sh PARAMS [OUT.txt]
#
# Assumptions (docs/cost-model.md, "Projection"): one rank per node,
# --mem 4G per node, no other load, per-node disks like this VM's as PARAMS
# measured them (or READ_BW / WRITE_BW bytes/s); kernel rates, kscale,
# overlap_alg, agg_at, IOPS, the flush and the comm thread's polling from
# PARAMS; g = 8 / (network bit/s), l = l(1) + (p-1) * 2 us + 6 log2(p) * latency.
# Writes OUT.txt, and with gnuplot OUT.png (weak-scaling efficiency and the
# strong-scaling sort) and the OUT-*.dat series it plots.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RUN=${BUILD:-build}/pems-run
P=${1:?usage: bench/model-project.sh PARAMS [OUT.txt]}
OUT=${2:-/dev/stdout}
READ_BW=${READ_BW:-}
WRITE_BW=${WRITE_BW:-}
DISK=()
[[ -n $READ_BW ]] && DISK+=(--read-bw "$READ_BW")
[[ -n $WRITE_BW ]] && DISK+=(--write-bw "$WRITE_BW")
NODES=${NODES:-1,10,100,1000}
{
	echo "# pems-run model project, parameters $P (md5 $(md5sum <"$P" | cut -d' ' -f1)), disks ${READ_BW:-calibrated}/${WRITE_BW:-calibrated} bytes/s per node, --mem 4G"
	for net in "10 20e-6" "25 5e-6"; do
		set -- $net
		for nt in 1 2; do
			echo "# weak scaling, 8 GiB per node, $1 Gbit/s, latency $2 s, node terms $nt"
			for a in sort aggregate sgd; do
				"$RUN" model project "$a" --params "$P" --size-per-node 8G --mem 4G --nodes "$NODES" \
					"${DISK[@]}" --net-gbit "$1" --net-latency "$2" --node-terms "$nt"
			done
		done
	done
	for nt in 1 2; do
		echo "# strong scaling, sort of 1 TiB u64, 10 Gbit/s, latency 20e-6 s, node terms $nt"
		"$RUN" model project sort --params "$P" --size 1T --mem 4G --nodes "$NODES" "${DISK[@]}" \
			--node-terms "$nt"
	done
} >"$OUT"

# plot: weak-scaling efficiency (speedup / nodes) at 10 Gbit/s, and the
# strong-scaling sort's seconds, each with node terms 1 and 2
if [[ $OUT != /dev/stdout ]] && command -v gnuplot >/dev/null; then
	dat=${OUT%.txt}
	rm -f "$dat"-*.dat
	awk -v dat="$dat" '
		/^# weak scaling/ { kind = "weak"; net = $8; nt = $NF }
		/^# strong scaling/ { kind = "strong"; net = 10; nt = $NF }
		/^projection=/ && /fits=1/ { split($1, a, "="); split($2, n, "="); split($5, s, "=")
			split($6, sp, "=")
			if (kind == "weak")
				print n[2], sp[2] / n[2] * 100, s[2] > (dat "-" a[2] "-" net "-t" nt ".dat")
			else
				print n[2], s[2] > (dat "-strong-t" nt ".dat") }' "$OUT"
	gnuplot <<-GP || echo "bench/model-project.sh: gnuplot failed" >&2
		set terminal pngcairo size 1200,520
		set output "$dat.png"
		set multiplot layout 1,2 title "pems cost model: projection to 1..1000 nodes like this machine (one rank per node, --mem 4G, 10 Gbit/s)"
		set title "weak scaling, 8 GiB per node"
		set xlabel "nodes"
		set ylabel "efficiency (time on 1 node / time on n nodes), %"
		set logscale x
		set yrange [0:110]
		set key bottom left
		set grid
		plot "$dat-sort-10-t1.dat" with linespoints title "sort, terms of 1 rank" lw 2 lc 1 pt 7, \
		     "$dat-sort-10-t2.dat" with linespoints title "sort, terms of 2 ranks" dt 2 lc 1 pt 6, \
		     "$dat-aggregate-10-t1.dat" with linespoints title "aggregate (1 Mi groups), terms of 1 rank" lw 2 lc 2 pt 5, \
		     "$dat-aggregate-10-t2.dat" with linespoints title "aggregate, terms of 2 ranks" dt 2 lc 2 pt 4, \
		     "$dat-sgd-10-t1.dat" with linespoints title "sgd, terms of 1 rank" lw 2 lc 3 pt 9, \
		     "$dat-sgd-10-t2.dat" with linespoints title "sgd, terms of 2 ranks" dt 2 lc 3 pt 8
		set title "strong scaling, sort of 1 TiB u64"
		set ylabel "seconds"
		set logscale xy
		set autoscale y
		set key top right
		t1 = system("awk 'NR == 1 { print \$2 }' $dat-strong-t1.dat")
		plot t1 / x title "ideal (1 node / n)" dt 3 lc rgb "gray", \
		     "$dat-strong-t1.dat" with linespoints title "terms of 1 rank" lw 2 lc 1 pt 7, \
		     "$dat-strong-t2.dat" with linespoints title "terms of 2 ranks" dt 2 lc 1 pt 6
		unset multiplot
	GP
fi
