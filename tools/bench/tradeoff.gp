# The trade-off a reader weighs: ONLINE's p99 request latency against the BE
# work done (share of the capacity under the line) and against node busy,
# one point per setup. tools/bench/report.py writes the data (setup,
# be_share_pct, node_busy_pct, request_p99_us) and params (alone_p99, line,
# level, setups: the data's setups in order).
# Each setup has a point style of its own, named in the key: setups close
# together (eevdf-idle, eevdf-weight1 and scx_flatcg all near 97% busy)
# would overprint labels written beside their points.
load params
n = words(setups)
# distinct on white (gnuplot's fifth default, yellow, is hard to see)
colours = "#9400d3 #009e73 #56b4e9 #e69f00 #d55e00 #0072b2 #000000 #cc79a7"
col(i) = word(colours, (i - 1) % 8 + 1)
set terminal png size 1100,520 noenhanced
set output outfile
set multiplot layout 1,2 title sprintf("ONLINE at %d%% of the CPUs, BE saturating: one point per setup", level)
# room above and below every point and alone's line (a range of one
# value, all p99s alike, is empty on a log axis); around alone's line only
# where no setup has a point (every run of the level failed, which the
# report lists: the plot must not stop the bench before it names them)
lo = alone_p99 / 1.5
hi = alone_p99 * 1.5
if (n > 0) {
	stats datafile using 4 nooutput
	lo = (STATS_min < alone_p99 ? STATS_min : alone_p99) / 1.5
	hi = (STATS_max > alone_p99 ? STATS_max : alone_p99) * 1.5
}
set yrange [lo:hi]
set logscale y
set ylabel "ONLINE request p99, us (log)"
set key outside bottom center horizontal maxcols 4 samplen 1
set xlabel "BE work, % of the capacity under the line (over 100: BE ran over the line)"
plot for [i=1:n] datafile every ::(i-1)::(i-1) using 2:4 with points pt (i+3) ps 2 lw 2 lc rgb col(i) title word(setups, i), \
     alone_p99 with lines dt 2 lc rgb "gray40" title "alone"
set xlabel "node busy, % of the CPUs (cgroup cpu.stat)"
set arrow 1 from line, graph 0 to line, graph 1 nohead dt 3
set label 1 sprintf(" line %d%%", line) at line, graph 0.95 left
plot for [i=1:n] datafile every ::(i-1)::(i-1) using 3:4 with points pt (i+3) ps 2 lw 2 lc rgb col(i) title word(setups, i), \
     alone_p99 with lines dt 2 lc rgb "gray40" title "alone"
unset multiplot
