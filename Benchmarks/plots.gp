# PNG plots of the benchmark results; run by Benchmarks/run.sh as: gnuplot -e "dir='bench-results'" Benchmarks/plots.gp
if (!exists("dir")) dir = "bench-results"
set terminal pngcairo size 720,420 font ",10"
set datafile separator ","
set key top left
set grid

# Feed scroll: time until the cell has its ad, by percentile of ad-cell appearances.
set output dir."/feedscroll-delays.png"
set datafile separator whitespace
set title "Feed scroll: time until an ad cell has its ad (virtual ms; gaps = never while visible)"
set xlabel "percentile of ad-cell appearances"
set ylabel "ms"
set xrange [0:100]
set yrange [-10:350]
plot dir."/feedscroll-delays.dat" using 1:2 with lines lw 2 title "no reuse", \
     "" using 1:3 with lines lw 2 title "reuse, no prefetch", \
     "" using 1:4 with lines lw 2 title "adloaderd"

# Feed scroll: adloaderd by maximumRetainedAdvertisements.
set output dir."/feedscroll-retained.png"
set datafile separator ","
set title "Feed scroll: adloaderd by maximumRetainedAdvertisements (same trace)"
set key at graph 0.97,0.35 right
set xlabel "maximumRetainedAdvertisements"
set logscale x
set xrange [*:*]
set yrange [0:105]
set ylabel "%"
set y2label "upstream requests per impression"
set y2range [0:1.5]
set y2tics
set ytics nomirror
plot dir."/feedscroll.csv" using (strcol(1) eq "sweep" ? $3 : 1/0):($8 * 100) with linespoints lw 2 title "hit ratio %", \
     "" using (strcol(1) eq "sweep" ? $3 : 1/0):($18 * 100) with linespoints lw 2 title "expired unshown %", \
     "" using (strcol(1) eq "sweep" ? $3 : 1/0):16 axes x1y2 with linespoints lw 2 title "requests / impression (right)"
unset y2label
unset y2tics
set ytics mirror

# Core scaling: sweep pauses.
set output dir."/corescaling-sweep.png"
set title "Core: longest loop pause of one sweep (wall time, one pool)"
set xlabel "ads retained"
set ylabel "ms"
set logscale xy
set yrange [*:*]
set key top right
plot dir."/corescaling.csv" using 1:($8 / 1000) every ::1 with linespoints lw 2 title "nothing expires (max)", \
     "" using 1:11 every ::1 with linespoints lw 2 title "1% expires (longest callback)", \
     "" using 1:13 every ::1 with linespoints lw 2 title "all expire, with refill requests (longest callback)", \
     1 with lines dt 2 lc rgb "gray" title "1 ms"

# Core scaling: memory and borrow cost.
set output dir."/corescaling-memory.png"
set title "Core: resident memory per ad and borrow+return cost"
unset logscale y
set logscale x
set ylabel "bytes per ad"
set y2label "ns per borrow+return"
set y2tics
set ytics nomirror
set yrange [0:*]
set y2range [0:*]
plot dir."/corescaling.csv" using 1:2 every ::1 with linespoints lw 2 title "content (RSS)", \
     "" using 1:4 every ::1 with linespoints lw 2 title "pool beyond content (RSS)", \
     1536 with lines dt 2 lc rgb "gray" title "target 1.5 KiB", \
     "" using 1:15 every ::1 axes x1y2 with linespoints lw 2 title "borrow+return ns (right)"
