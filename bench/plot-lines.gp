# bench/plot-lines.gp - one line per contender, from bench/report.sh.
#
#   gnuplot -e "dat='DIR/plot-budget'; impls='pems stxxl'; out='budget.png';
#               ttl='...'; xl='...'; yl='...'; logx=2; logy=0; ref=0; refname=''"
#           bench/plot-lines.gp
#
# Reads dat.'-'.IMPL.'.dat' (columns: x y) for every IMPL in impls;
# logx/logy > 0 set a log scale of that base; ref > 0 draws a dashed
# horizontal line y = ref labelled refname (the 4N bound, say).
set terminal pngcairo size 900,560 noenhanced
set output out
set title ttl
set xlabel xl
set ylabel yl
if (logx > 0) { set logscale x logx }
if (logy > 0) { set logscale y logy } else { set yrange [0:*] }
set key outside right
set grid
if (ref > 0) {
	plot for [i in impls] dat.'-'.i.'.dat' using 1:2 with linespoints lw 2 title i, \
	     ref with lines dt 2 lc rgb 'black' title refname
} else {
	plot for [i in impls] dat.'-'.i.'.dat' using 1:2 with linespoints lw 2 title i
}
