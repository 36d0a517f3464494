# The trade-off a reader weighs: ONLINE's p99 request latency against the BE
# work done (share of the capacity under the line) and against node busy,
# one point per setup. tools/bench/report.py writes the data (setup,
# be_share_pct, node_busy_pct, request_p99_us) and params (alone_p99, line, level).
load params
set terminal png size 1100,480 noenhanced
set output outfile
set multiplot layout 1,2 title sprintf("ONLINE at %d%% of the CPUs, BE saturating: one point per setup", level)
set logscale y
set ylabel "ONLINE request p99, us (log)"
set key top left
set xlabel "BE work, % of the capacity under the line (over 100: BE ran over the line)"
plot datafile using 2:4 with points pt 7 ps 1.5 notitle, \
     '' using 2:4:1 with labels offset 0,1 notitle, \
     alone_p99 with lines dt 2 title "alone"
set xlabel "node busy, % of the CPUs (cgroup cpu.stat)"
set arrow 1 from line, graph 0 to line, graph 1 nohead dt 3
plot datafile using 3:4 with points pt 7 ps 1.5 notitle, \
     '' using 3:4:1 with labels offset 0,1 notitle, \
     alone_p99 with lines dt 2 title "alone"
unset multiplot
