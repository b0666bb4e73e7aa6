# Plot of Benchmarks/results/grpc-load-medians.csv (server,calls_per_s,server_cpu_us_per_call); run from the repository root: gnuplot Benchmarks/grpc-load.gp
set terminal pngcairo size 900,380 font ",10"
set output 'Benchmarks/results/grpc-load.png'
set datafile separator ","
set multiplot layout 1,2 title "gRPC over HTTP/2, 32 connections x 10 streams, h2load (medians of 3 x 5 s, one run)"
set style data histograms
set style fill solid 0.8
set boxwidth 0.7
set grid ytics
set xtics rotate by -20 font ",9"
set ylabel "calls/s (thousands)"
set title "throughput"
plot 'Benchmarks/results/grpc-load-medians.csv' every ::1 using ($2/1000):xtic(1) notitle lc rgb "#3070b0"
set ylabel "server CPU per call (us)"
set title "server CPU per call"
plot 'Benchmarks/results/grpc-load-medians.csv' every ::1 using 3:xtic(1) notitle lc rgb "#c05020"
unset multiplot
