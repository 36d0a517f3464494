# ONLINE latency percentiles per setup (tools/bench/report.py writes the data:
# setup, wakeup p50, p99, p99.9, request p99, in microseconds).
set terminal png size 1000,520 noenhanced
set output outfile
set title "tm-probe latency with BE saturating (30% ONLINE load), microseconds, log scale"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [10:*]
set ylabel "us"
set xtics rotate by -20
set key top left
plot datafile using 2:xtic(1) title "wakeup p50", '' using 3 title "wakeup p99", \
     '' using 4 title "wakeup p99.9", '' using 5 title "request p99"
