# Node use over time against the line: ONLINE, BE and the rest (kthreads,
# SYSTEM) stacked, per window, with the line drawn. tools/bench/report.py
# writes the data (t_s online_pct be_pct rest_pct) and params (line, title).
load params
set terminal png size 1000,420 noenhanced
set output outfile
set title title
set xlabel "s"
set ylabel "% of the node"
set yrange [0:100]
set key outside right top
set style fill solid 0.85 noborder
plot datafile using 1:($2+$3+$4) with filledcurves x1 lc rgb "#999999" title "rest", \
     '' using 1:($2+$3) with filledcurves x1 lc rgb "#e69f00" title "BE", \
     '' using 1:2 with filledcurves x1 lc rgb "#0072b2" title "ONLINE", \
     line with lines lw 2 dt 2 lc rgb "#d55e00" title sprintf("line %d%%", line)
