#!/bin/bash
# bench/model-project.sh - the projection of docs/cost-model.md: sort,
# aggregate and sgd on 1..1000 nodes like this machine (pems-run model
# project), weak scaling at 8 GiB per node and strong scaling of a 1 TiB
# sort, at 10 Gbit/s (20 us) and 25 Gbit/s (5 us).
#
#   bash bench/model-project.sh PARAMS [OUT]
#
# Assumptions (docs/cost-model.md): one rank per node, --mem 4G per node,
# no other load, per-node disks like this VM's as PARAMS measured them
# (or READ_BW / WRITE_BW bytes/s); kernel rates, IOPS, the flush and the
# comm thread's polling from PARAMS.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RUN=${BUILD:-build}/pems-run
P=${1:?usage: bench/model-project.sh PARAMS [OUT]}
OUT=${2:-/dev/stdout}
READ_BW=${READ_BW:-}
WRITE_BW=${WRITE_BW:-}
DISK=()
[[ -n $READ_BW ]] && DISK+=(--read-bw "$READ_BW")
[[ -n $WRITE_BW ]] && DISK+=(--write-bw "$WRITE_BW")
NODES=${NODES:-1,10,100,1000}
{
	echo "# pems-run model project, parameters $P, disks ${READ_BW:-calibrated}/${WRITE_BW:-calibrated} bytes/s per node, --mem 4G"
	for net in "10 20e-6" "25 5e-6"; do
		set -- $net
		echo "# weak scaling, 8 GiB per node, $1 Gbit/s, latency $2 s"
		for a in sort aggregate sgd; do
			"$RUN" model project "$a" --params "$P" --size-per-node 8G --mem 4G --nodes "$NODES" \
				"${DISK[@]}" --net-gbit "$1" --net-latency "$2"
		done
	done
	echo "# strong scaling, sort of 1 TiB u64, 10 Gbit/s, latency 20e-6 s"
	"$RUN" model project sort --params "$P" --size 1T --mem 4G --nodes "$NODES" "${DISK[@]}"
} >"$OUT"

# plot: weak-scaling efficiency (speedup / nodes) at 10 and 25 Gbit/s
if [[ $OUT != /dev/stdout ]] && command -v gnuplot >/dev/null; then
	dat=${OUT%.txt}
	awk '/^# weak scaling/ { net = ($8 == "10") ? 10 : 25 } /^# strong/ { net = 0 }
	     /^projection=/ && net && /fits=1/ { split($1, a, "="); split($2, n, "="); split($6, s, "=")
		print n[2], s[2] / n[2] * 100 > ("'"$dat"'-" a[2] "-" net ".dat") }' "$OUT"
	gnuplot <<-GP || echo "bench/model-project.sh: gnuplot failed" >&2
		set terminal pngcairo size 800,560
		set output "$dat.png"
		set title "pems cost model: weak scaling, 8 GiB per node (projection)"
		set xlabel "nodes"
		set ylabel "efficiency (time on 1 node / time on n nodes), %"
		set logscale x
		set yrange [0:110]
		set key bottom left
		set grid
		plot "$dat-sort-10.dat" with linespoints title "sort, 10 Gbit/s" lw 2, \
		     "$dat-sort-25.dat" with linespoints title "sort, 25 Gbit/s" dt 2, \
		     "$dat-aggregate-10.dat" with linespoints title "aggregate, 10 Gbit/s" lw 2, \
		     "$dat-aggregate-25.dat" with linespoints title "aggregate, 25 Gbit/s" dt 2, \
		     "$dat-sgd-10.dat" with linespoints title "sgd, 10 Gbit/s" lw 2, \
		     "$dat-sgd-25.dat" with linespoints title "sgd, 25 Gbit/s" dt 2
	GP
fi
