# One tunable of the tuning sweep (tools/bench/tuning.py writes the data:
# value, then median/min/max of wakeup p99, request p99, BE CPU, node busy,
# busy p10, busy p90 and the line).
set terminal png size 1200,400 noenhanced
set output outfile
set multiplot layout 1,3 title sprintf("%s: median of the repeats, bars = their range", tunable)
if (logx) set logscale x
set xlabel tunable
set key top left
set title "ONLINE latency (light service)"
set ylabel "us"
set logscale y
plot datafile using 1:5:6:7 with yerrorlines title "request p99", \
     '' using 1:2:3:4 with yerrorlines title "wakeup p99"
unset logscale y
set title "BE CPU (BE cgroup cpu.stat)"
set ylabel "% of the node"
set yrange [0:*]
plot datafile using 1:8:9:10 with yerrorlines title "BE"
set title "node busy (root cpu.stat)"
set yrange [0:100]
set key bottom right
plot datafile using 1:14:17 with filledcurves fs transparent solid 0.2 title "p10-p90 (medians)", \
     '' using 1:11:12:13 with yerrorlines title "busy over the run", \
     '' using 1:20 with lines dt 2 title "line"
unset multiplot
