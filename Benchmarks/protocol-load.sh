#!/usr/bin/env bash
# Protocol load: adloaderd (Borrow+Return over the framed protocol, ProtocolLoadBench) side by
# side with redis GET of a 400-byte value (redis-benchmark), same connections and pipelining,
# same machine, same run. Prints medians and the ratio adloaderd / redis.
#
#   Benchmarks/protocol-load.sh [--smoke] [--runs N] [--duration S] [--pin] [--out DIR] [--adloaderd BIN]
#
#   --smoke      ~1 s of everything at tiny sizes, debug build, redis only if installed;
#                exits non-zero when the daemon cannot serve (for `make test`)
#   --runs N     repetitions of each configuration, medians reported (default 3)
#   --duration S measured seconds per run (default 5)
#   --pin        servers on CPU 0, load generators on CPU 1 (taskset); default: unpinned
#   --out DIR    results directory (default bench-results/, gitignored)
#   --adloaderd BIN  run this daemon binary instead of the one built here (before/after
#                comparisons: build another commit elsewhere and point at its binary)
#
# Writes DIR/protocol-load.csv (every run), DIR/protocol-load.json (medians and ratios) and,
# with gnuplot, DIR/protocol-load.png. Only 127.0.0.1 is used. Both servers stop on exit.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

SMOKE=0
RUNS=3
DURATION=5
WARMUP=1
PIN=0
OUT="$ROOT/bench-results"
DAEMON_BIN=""
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) SMOKE=1 ;;
        --runs) RUNS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --pin) PIN=1 ;;
        --out) OUT=$2; shift ;;
        --adloaderd) DAEMON_BIN=$2; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "protocol-load.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

say() { printf '%s\n' "$*" >&2; }
fail() { say "protocol-load.sh: FAILED: $*"; exit 1; }

CONFIGURATION=release
CONFIGS=("32 1" "32 16")
if [ "$SMOKE" = 1 ]; then
    # `make test` has just built the debug products: no release build in the smoke run.
    CONFIGURATION=debug
    RUNS=1
    DURATION=0.3
    WARMUP=0.2
    CONFIGS=("4 1" "4 8")
fi

apt_install() {
    say "installing $*"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null \
        || { apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null; }
}

HAVE_REDIS=1
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    if [ "$SMOKE" = 1 ]; then
        HAVE_REDIS=0
        say "smoke: redis-server/redis-benchmark not installed; skipping the redis side"
    else
        apt_install redis-server redis-tools
    fi
fi
HAVE_GNUPLOT=1
if ! command -v gnuplot >/dev/null; then
    if [ "$SMOKE" = 1 ]; then HAVE_GNUPLOT=0; else apt_install gnuplot-nox || HAVE_GNUPLOT=0; fi
fi

say "building ($CONFIGURATION)"
swift build -c "$CONFIGURATION" --product adloaderd >&2
swift build -c "$CONFIGURATION" --product ProtocolLoadBench >&2
BIN=$(swift build -c "$CONFIGURATION" --show-bin-path)
[ -x "$BIN/adloaderd" ] && [ -x "$BIN/ProtocolLoadBench" ] || fail "build products missing in $BIN"
[ -n "$DAEMON_BIN" ] || DAEMON_BIN="$BIN/adloaderd"
[ -x "$DAEMON_BIN" ] || fail "no daemon binary at $DAEMON_BIN"

WORK=$(mktemp -d /tmp/protocol-load.XXXXXX)
DAEMON_PID=""
REDIS_PID=""
stop() {
    local pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    stop "$DAEMON_PID"
    stop "$REDIS_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SERVER_CPU=()
CLIENT_CPU=()
if [ "$PIN" = 1 ]; then
    SERVER_CPU=(taskset -c 0)
    CLIENT_CPU=(taskset -c 1)
fi

# The daemon: synthetic demand answering at once, a pool far larger than the ads in flight
# (every borrowed ad is returned unshown, so it never drains), warnings only.
cat > "$WORK/adloaderd.json" <<'EOF'
{ "listeners": { "host": "127.0.0.1", "port": 0 },
  "log": { "level": "warning" },
  "sources": { "synthetic": { "latency": "0ms", "fillRate": 1, "seed": 7 } },
  "loaders": { "default": { "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,
                            "leaseTimeout": "60s" } } }
EOF
"${SERVER_CPU[@]}" "$DAEMON_BIN" --config "$WORK/adloaderd.json" > "$WORK/adloaderd.out" 2> "$WORK/adloaderd.err" &
DAEMON_PID=$!
PORT=""
for _ in $(seq 1 100); do
    PORT=$(grep -o '127\.0\.0\.1:[0-9]*' "$WORK/adloaderd.out" 2>/dev/null | head -1 | cut -d: -f2 || true)
    [ -n "$PORT" ] && break
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.1
done
[ -n "$PORT" ] || { cat "$WORK/adloaderd.err" >&2; fail "adloaderd did not start"; }
say "adloaderd ($DAEMON_BIN) pid $DAEMON_PID on 127.0.0.1:$PORT"

free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 20000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}
REDIS_PORT=""
if [ "$HAVE_REDIS" = 1 ]; then
    REDIS_PORT=$(free_port) || fail "no free port for redis"
    "${SERVER_CPU[@]}" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
        --daemonize no --logfile "$WORK/redis.log" &
    REDIS_PID=$!
    for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 || fail "redis-server did not start"
    # redis-benchmark's GET reads the key "key:__rand_int__": give it a 400-byte value.
    redis-cli -p "$REDIS_PORT" set 'key:__rand_int__' "$(head -c 400 /dev/zero | tr '\0' v)" >/dev/null
    say "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT"
fi

# bench C D RATE LABEL: one ProtocolLoadBench run; prints its JSON line.
bench() {
    local args=(--port "$PORT" --connections "$1" --depth "$2" --duration "$DURATION" --warmup "$WARMUP"
        --label "$4" --quiet)
    [ "$3" != 0 ] && args+=(--rate "$3")
    local line
    line=$("${CLIENT_CPU[@]}" "$BIN/ProtocolLoadBench" "${args[@]}") || { say "$line"; fail "ProtocolLoadBench ${args[*]}"; }
    kill -0 "$DAEMON_PID" 2>/dev/null || fail "adloaderd exited during the run"
    printf '%s\n' "$line" | grep '^{"bench"' | tail -1
}

# redis C D: one redis-benchmark GET run sized to last about DURATION; prints "rps p50 p99" (ms).
redis_run() {
    local per_second=$((100000 * $2))
    [ "$per_second" -gt 1500000 ] && per_second=1500000
    local n
    n=$(awk -v r="$per_second" -v d="$DURATION" 'BEGIN { n = int(r * d); if (n < 2000) n = 2000; print n }')
    local text
    text=$("${CLIENT_CPU[@]}" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t get -d 400 -c "$1" -P "$2" -n "$n" 2>&1 \
        | tr '\r' '\n') || fail "redis-benchmark"
    local rps lat
    rps=$(printf '%s\n' "$text" | awk '/throughput summary:/ { print $3 }' | tail -1)
    # "latency summary (msec):" then a header (avg min p50 p95 p99 max) and the values.
    lat=$(printf '%s\n' "$text" | awk '/latency summary/ { getline; getline; print $3, $5 }' | tail -1)
    [ -n "$rps" ] || { printf '%s\n' "$text" | tail -5 >&2; fail "could not read redis-benchmark's output"; }
    echo "$rps $lat"
}

field() { printf '%s\n' "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mkdir -p "$OUT"
CSV="$OUT/protocol-load.csv"
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "time,server,connections,depth,rate,run,calls_per_s,p50_us,p99_us,p999_us,pinned" > "$CSV"

declare -A A_RPS A_P50 A_P99 A_P999 R_RPS R_P50 R_P99
for config in "${CONFIGS[@]}"; do
    read -r C D <<< "$config"
    say "== $C connections x $D in flight, $RUNS runs of ${DURATION}s"
    for run in $(seq 1 "$RUNS"); do
        line=$(bench "$C" "$D" 0 "${C}x${D}")
        A_RPS[$config]+=" $(field "$line" calls_per_s)"; A_P50[$config]+=" $(field "$line" p50_us)"
        A_P99[$config]+=" $(field "$line" p99_us)"; A_P999[$config]+=" $(field "$line" p999_us)"
        echo "$STAMP,adloaderd,$C,$D,0,$run,$(field "$line" calls_per_s),$(field "$line" p50_us),$(field "$line" p99_us),$(field "$line" p999_us),$PIN" >> "$CSV"
        say "   adloaderd run $run: $(field "$line" calls_per_s) calls/s, p99 $(field "$line" p99_us) us"
        if [ "$HAVE_REDIS" = 1 ]; then
            read -r rps p50 p99 <<< "$(redis_run "$C" "$D")"
            p50us=$(awk -v v="$p50" 'BEGIN { printf "%.1f", v * 1000 }'); p99us=$(awk -v v="$p99" 'BEGIN { printf "%.1f", v * 1000 }')
            R_RPS[$config]+=" $rps"; R_P50[$config]+=" $p50us"; R_P99[$config]+=" $p99us"
            echo "$STAMP,redis,$C,$D,0,$run,$rps,$p50us,$p99us,,$PIN" >> "$CSV"
            say "   redis     run $run: $rps GET/s, p99 $p99us us"
        fi
    done
done

# Half load: open loop at half the unpipelined maximum just measured; latency counted from
# the intended send time (up to 16 in flight per connection so bursts are not refused).
read -r C1 D1 <<< "${CONFIGS[0]}"
MAX=$(printf '%s' "${A_RPS[${CONFIGS[0]}]}" | median)
HALF=$(awk -v m="$MAX" 'BEGIN { printf "%d", m / 2 }')
HALF_DEPTH=16; [ "$SMOKE" = 1 ] && HALF_DEPTH=4
HALF_RPS=""; HALF_P50=""; HALF_P99=""; HALF_P999=""
say "== half load: $HALF calls/s open loop over $C1 connections"
for run in $(seq 1 "$RUNS"); do
    line=$(bench "$C1" "$HALF_DEPTH" "$HALF" "half")
    HALF_RPS+=" $(field "$line" calls_per_s)"; HALF_P50+=" $(field "$line" p50_us)"
    HALF_P99+=" $(field "$line" p99_us)"; HALF_P999+=" $(field "$line" p999_us)"
    echo "$STAMP,adloaderd,$C1,$HALF_DEPTH,$HALF,$run,$(field "$line" calls_per_s),$(field "$line" p50_us),$(field "$line" p99_us),$(field "$line" p999_us),$PIN" >> "$CSV"
    say "   adloaderd run $run: $(field "$line" calls_per_s) calls/s, p99 $(field "$line" p99_us) us"
done

# Summary: medians, ratios, targets.
JSON="$OUT/protocol-load.json"
DAT="$WORK/plot.dat"
: > "$DAT"
{
    echo
    echo "protocol-load ($( [ "$PIN" = 1 ] && echo "servers on CPU 0, clients on CPU 1" || echo unpinned ), medians of $RUNS x ${DURATION}s, $(nproc) CPUs)"
    printf '%-14s %12s %9s %9s %10s %12s %9s %9s %8s\n' config "adl calls/s" "p50 us" "p99 us" "p99.9 us" "redis GET/s" "p50 us" "p99 us" ratio
} >&2
printf '{"bench":"protocol-load","time":"%s","pinned":%s,"runs":%s,"duration_s":%s,"configs":[' "$STAMP" "$PIN" "$RUNS" "$DURATION" > "$JSON"
sep=""
for config in "${CONFIGS[@]}"; do
    read -r C D <<< "$config"
    a=$(printf '%s' "${A_RPS[$config]}" | median); a50=$(printf '%s' "${A_P50[$config]}" | median)
    a99=$(printf '%s' "${A_P99[$config]}" | median); a999=$(printf '%s' "${A_P999[$config]}" | median)
    r=0; r50=0; r99=0; ratio=null
    if [ "$HAVE_REDIS" = 1 ]; then
        r=$(printf '%s' "${R_RPS[$config]}" | median); r50=$(printf '%s' "${R_P50[$config]}" | median)
        r99=$(printf '%s' "${R_P99[$config]}" | median)
        ratio=$(awk -v a="$a" -v r="$r" 'BEGIN { printf "%.2f", (r > 0 ? a / r : 0) }')
    fi
    printf '%-14s %12.0f %9s %9s %10s %12.0f %9s %9s %8s\n' "${C}x${D}" "$a" "$a50" "$a99" "$a999" "$r" "$r50" "$r99" "$ratio" >&2
    printf '%s{"connections":%s,"depth":%s,"adloaderd":{"calls_per_s":%s,"p50_us":%s,"p99_us":%s,"p999_us":%s},"redis":{"get_per_s":%s,"p50_us":%s,"p99_us":%s},"ratio":%s}' \
        "$sep" "$C" "$D" "$a" "$a50" "$a99" "$a999" "$r" "$r50" "$r99" "$ratio" >> "$JSON"
    sep=","
    echo "\"${C}x${D}\" $a $r" >> "$DAT"
done
h=$(printf '%s' "$HALF_RPS" | median); h50=$(printf '%s' "$HALF_P50" | median)
h99=$(printf '%s' "$HALF_P99" | median); h999=$(printf '%s' "$HALF_P999" | median)
printf '%-14s %12.0f %9s %9s %10s   (open loop at %s calls/s = half of the %sx%s maximum)\n' "half load" "$h" "$h50" "$h99" "$h999" "$HALF" "$C1" "$D1" >&2
printf '],"half_load":{"rate":%s,"calls_per_s":%s,"p50_us":%s,"p99_us":%s,"p999_us":%s}}\n' "$HALF" "$h" "$h50" "$h99" "$h999" >> "$JSON"
say "results: $CSV, $JSON"

if [ "$HAVE_GNUPLOT" = 1 ] && [ "$SMOKE" = 0 ]; then
    gnuplot <<EOF 2>/dev/null && say "plot: $OUT/protocol-load.png" || say "gnuplot failed; no plot"
set terminal png size 800,480
set output "$OUT/protocol-load.png"
set title "Borrow+Return calls/s (adloaderd) vs GET/s (redis), medians of $RUNS"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "calls per second"
set yrange [0:*]
set key top left
plot "$DAT" using 2:xtic(1) title "adloaderd", "" using 3 title "redis GET 400 B"
EOF
fi
if [ "$SMOKE" = 1 ]; then say "protocol-load smoke: ok"; fi
