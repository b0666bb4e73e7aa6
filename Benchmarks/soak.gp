# RSS over time of soak runs: gnuplot -e "dir='DIR'; runs='hour-before hour-after'; out='FILE.png'" Benchmarks/soak.gp
# Each run is DIR/soak-RUN.csv (seconds,rss_kib,fds,stats_ms,calls) written by SoakBench.
set terminal pngcairo size 900,420 font ",10"
set output out
set datafile separator ","
set key top left
set grid
set xlabel "minutes"
set ylabel "RSS (MiB)"
set yrange [0:*]
if (!exists("title")) title = "adloaderd RSS under the soak load"
set title title
plot for [r in runs] dir."/soak-".r.".csv" every ::1 using ($1/60):($2/1024) with lines lw 2 title r
