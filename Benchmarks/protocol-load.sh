#!/usr/bin/env bash
# Protocol load: adloaderd (Borrow+Return over the framed protocol, ProtocolLoadBench) side by
# side with redis GET of a 400-byte value (redis-benchmark), same connections and pipelining,
# same machine, same run. Prints medians, the ratio adloaderd / redis, and each server's CPU
# per call: utime+stime from /proc/PID/stat over the measured window divided by the calls
# answered in it (independent of how much CPU the load generators take).
#
#   Benchmarks/protocol-load.sh [--smoke] [--runs N] [--duration S] [--pin] [--out DIR]
#                               [--adloaderd BIN [--adloaderd-label NAME]]...
#
#   --smoke      ~1 s of everything at tiny sizes, debug build, redis only if installed;
#                exits non-zero when the daemon cannot serve (for `make test`)
#   --runs N     repetitions of each configuration, medians reported (default 3)
#   --duration S measured seconds per run (default 5)
#   --pin        servers on CPU 0, load generators on CPU 1 (taskset); default: unpinned
#   --out DIR    results directory (default bench-results/, gitignored)
#   --adloaderd BIN  also run this daemon binary, in the same run, alternating with the one
#                built here and redis (before/after: build another commit elsewhere, point
#                here); may be given several times
#   --adloaderd-label NAME  how the tables name the binary given just before (default:
#                compared, compared2, ...)
#   --store-off  also run the binary built here with `--pool-store off`, labelled store-off
#                (the pool store's cost: every daemon else keeps its pool store, write-through
#                journal included, in its own file under the work directory)
#
# Writes DIR/protocol-load.csv (every run), DIR/protocol-load.json (medians and ratios) and,
# with gnuplot, DIR/protocol-load.png. Only 127.0.0.1 is used. All servers stop on exit.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

SMOKE=0
RUNS=3
DURATION=5
WARMUP=1
PIN=0
OUT="$ROOT/bench-results"
COMPARE_BINS=()
COMPARE_LABELS=()
STORE_OFF=0
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) SMOKE=1 ;;
        --runs) RUNS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --pin) PIN=1 ;;
        --out) OUT=$2; shift ;;
        --adloaderd)
            COMPARE_BINS+=("$2")
            if [ ${#COMPARE_BINS[@]} -gt 1 ]; then COMPARE_LABELS+=("compared${#COMPARE_BINS[@]}"); else COMPARE_LABELS+=(compared); fi
            shift ;;
        --adloaderd-label)
            [ ${#COMPARE_LABELS[@]} -gt 0 ] || { echo "protocol-load.sh: --adloaderd-label before any --adloaderd" >&2; exit 2; }
            COMPARE_LABELS[$((${#COMPARE_LABELS[@]} - 1))]=$2; shift ;;
        --store-off) STORE_OFF=1 ;;
        -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
for i in "${!COMPARE_BINS[@]}"; do
    [ -x "${COMPARE_BINS[$i]}" ] || fail "no daemon binary at ${COMPARE_BINS[$i]}"
    case "${COMPARE_LABELS[$i]}" in
        adloaderd|redis|*[!A-Za-z0-9._-]*|"") fail "--adloaderd-label: letters, digits, . _ -; not adloaderd or redis" ;;
    esac
    for j in "${!COMPARE_LABELS[@]}"; do
        [ "$j" -le "$i" ] || [ "${COMPARE_LABELS[$j]}" != "${COMPARE_LABELS[$i]}" ] || fail "label ${COMPARE_LABELS[$i]} given twice"
    done
done
TICKS_PER_SECOND=$(getconf CLK_TCK)

WORK=$(mktemp -d /tmp/protocol-load.XXXXXX)
if [ "$STORE_OFF" = 1 ]; then
    # The same binary, pool store off: exec keeps the pid whose CPU is read.
    printf '#!/bin/sh\nexec "%s" "$@" --pool-store off\n' "$BIN/adloaderd" > "$WORK/adloaderd-store-off"
    chmod +x "$WORK/adloaderd-store-off"
    COMPARE_BINS+=("$WORK/adloaderd-store-off")
    COMPARE_LABELS+=(store-off)
fi
declare -A PID_OF PORT_OF
REDIS_PID=""
stop() {
    local pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    local name
    for name in "${!PID_OF[@]}"; do stop "${PID_OF[$name]}"; done
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
# start_daemon NAME BIN: starts a daemon, records its pid and port under NAME.
start_daemon() {
    local name=$1 bin=$2 pid port=""
    "${SERVER_CPU[@]}" "$bin" --config "$WORK/adloaderd.json" --pool-store-path "$WORK/$name-pools.sqlite" \
        > "$WORK/$name.out" 2> "$WORK/$name.err" &
    pid=$!
    PID_OF[$name]=$pid
    for _ in $(seq 1 100); do
        port=$(grep -o '127\.0\.0\.1:[0-9]*' "$WORK/$name.out" 2>/dev/null | head -1 | cut -d: -f2 || true)
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$WORK/$name.err" >&2; fail "$name ($bin) did not start"; }
    PORT_OF[$name]=$port
    say "$name ($bin) pid $pid on 127.0.0.1:$port"
}
DAEMONS=(adloaderd)
start_daemon adloaderd "$BIN/adloaderd"
for i in "${!COMPARE_BINS[@]}"; do
    DAEMONS+=("${COMPARE_LABELS[$i]}")
    start_daemon "${COMPARE_LABELS[$i]}" "${COMPARE_BINS[$i]}"
done

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

# bench NAME C D RATE LABEL: one ProtocolLoadBench run against daemon NAME; prints its JSON line.
bench() {
    local name=$1
    local args=(--port "${PORT_OF[$name]}" --server-pid "${PID_OF[$name]}" --connections "$2" --depth "$3"
        --duration "$DURATION" --warmup "$WARMUP" --label "$5" --quiet)
    [ "$4" != 0 ] && args+=(--rate "$4")
    local line
    line=$("${CLIENT_CPU[@]}" "$BIN/ProtocolLoadBench" "${args[@]}") || { say "$line"; fail "ProtocolLoadBench against $name: ${args[*]}"; }
    kill -0 "${PID_OF[$name]}" 2>/dev/null || fail "$name exited during the run"
    printf '%s\n' "$line" | grep '^{"bench"' | tail -1
}

# counters PID: "utime stime syscr syscw" of a process: clock ticks (fields 14 and 15 of
# /proc/PID/stat, counted after the command name, which is in parentheses) and the read and
# write system calls of /proc/PID/io (0 0 when that cannot be read).
counters() {
    local ticks io
    ticks=$(sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12, $13 }')
    io=$(awk '/^syscr:/ { r = $2 } /^syscw:/ { w = $2 } END { print r + 0, w + 0 }' "/proc/$1/io" 2>/dev/null || echo 0 0)
    echo "$ticks $io"
}

# redis C D: one redis-benchmark GET run sized to last about DURATION; prints
# "rps p50 p99 cpu user sys calls/read calls/write" (latencies in ms; cpu, user, sys:
# redis-server's µs per GET over the run; calls per read and write system call).
redis_run() {
    local per_second=$((100000 * $2))
    [ "$per_second" -gt 1500000 ] && per_second=1500000
    local n
    n=$(awk -v r="$per_second" -v d="$DURATION" 'BEGIN { n = int(r * d); if (n < 2000) n = 2000; print n }')
    local text before after
    before=$(counters "$REDIS_PID")
    text=$("${CLIENT_CPU[@]}" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t get -d 400 -c "$1" -P "$2" -n "$n" 2>&1 \
        | tr '\r' '\n') || fail "redis-benchmark"
    after=$(counters "$REDIS_PID")
    local rps lat per_call
    rps=$(printf '%s\n' "$text" | awk '/throughput summary:/ { print $3 }' | tail -1)
    # "latency summary (msec):" then a header (avg min p50 p95 p99 max) and the values.
    lat=$(printf '%s\n' "$text" | awk '/latency summary/ { getline; getline; print $3, $5 }' | tail -1)
    [ -n "$rps" ] || { printf '%s\n' "$text" | tail -5 >&2; fail "could not read redis-benchmark's output"; }
    per_call=$(printf '%s %s\n' "$before" "$after" | awk -v hz="$TICKS_PER_SECOND" -v n="$n" '{
        u = ($5 - $1) * 1e6 / hz / n; s = ($6 - $2) * 1e6 / hz / n
        r = $7 - $3; w = $8 - $4
        printf "%.3f %.3f %.3f %.2f %.2f", u + s, u, s, (r > 0 ? n / r : 0), (w > 0 ? n / w : 0) }')
    echo "$rps $lat $per_call"
}

field() { printf '%s\n' "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2; }
median() { tr ' ' '\n' | awk NF | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# spread: "min-max" of a list, to show how far the runs differ.
spread() { tr ' ' '\n' | awk NF | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR == 0) print "-"; else printf "%s-%s", lo, hi }'; }

mkdir -p "$OUT"
CSV="$OUT/protocol-load.csv"
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "time,server,connections,depth,rate,run,calls_per_s,p50_us,p99_us,p999_us,pinned,server_cpu_us_per_call,server_user_us_per_call,server_sys_us_per_call,server_calls_per_read,server_calls_per_write" > "$CSV"

# Results: space-separated lists per "server|config".
declare -A RPS P50 P99 P999 CPU USR SYS CPR CPW

# record NAME KEY C D RATE RUN LINE: keeps one ProtocolLoadBench result and writes its CSV row.
record() {
    local name=$1 key=$2 line=$7
    local rps p50 p99 p999 cpu usr sys cpr cpw
    rps=$(field "$line" calls_per_s); p50=$(field "$line" p50_us); p99=$(field "$line" p99_us)
    p999=$(field "$line" p999_us); cpu=$(field "$line" server_cpu_us_per_call)
    usr=$(field "$line" server_user_us_per_call); sys=$(field "$line" server_sys_us_per_call)
    cpr=$(field "$line" server_calls_per_read); cpw=$(field "$line" server_calls_per_write)
    RPS[$name|$key]+=" $rps"; P50[$name|$key]+=" $p50"; P99[$name|$key]+=" $p99"; P999[$name|$key]+=" $p999"
    CPU[$name|$key]+=" $cpu"; USR[$name|$key]+=" $usr"; SYS[$name|$key]+=" $sys"; CPR[$name|$key]+=" $cpr"; CPW[$name|$key]+=" $cpw"
    echo "$STAMP,$name,$3,$4,$5,$6,$rps,$p50,$p99,$p999,$PIN,$cpu,$usr,$sys,$cpr,$cpw" >> "$CSV"
    say "   $(printf '%-13s' "$name") run $6: $rps calls/s, p99 $p99 us, server cpu $cpu us/call (user $usr, sys $sys), $cpr calls/read"
}

SERVERS=("${DAEMONS[@]}")
[ "$HAVE_REDIS" = 1 ] && SERVERS+=(redis)
for config in "${CONFIGS[@]}"; do
    read -r C D <<< "$config"
    say "== $C connections x $D in flight, $RUNS runs of ${DURATION}s"
    for run in $(seq 1 "$RUNS"); do
        # Rotate the order each run, so no server always follows the same one.
        count=${#SERVERS[@]}
        for i in $(seq 0 $((count - 1))); do
            name=${SERVERS[$(((i + run - 1) % count))]}
            if [ "$name" = redis ]; then
                read -r rps p50 p99 cpu usr sys cpr cpw <<< "$(redis_run "$C" "$D")"
                p50us=$(awk -v v="$p50" 'BEGIN { printf "%.1f", v * 1000 }'); p99us=$(awk -v v="$p99" 'BEGIN { printf "%.1f", v * 1000 }')
                RPS[redis|$config]+=" $rps"; P50[redis|$config]+=" $p50us"; P99[redis|$config]+=" $p99us"
                CPU[redis|$config]+=" $cpu"; USR[redis|$config]+=" $usr"; SYS[redis|$config]+=" $sys"
                CPR[redis|$config]+=" $cpr"; CPW[redis|$config]+=" $cpw"
                echo "$STAMP,redis,$C,$D,0,$run,$rps,$p50us,$p99us,,$PIN,$cpu,$usr,$sys,$cpr,$cpw" >> "$CSV"
                say "   redis         run $run: $rps GET/s, p99 $p99us us, server cpu $cpu us/GET (user $usr, sys $sys), $cpr GETs/read"
            else
                record "$name" "$config" "$C" "$D" 0 "$run" "$(bench "$name" "$C" "$D" 0 "${C}x${D}")"
            fi
        done
    done
done

# Half load: open loop at half the unpipelined maximum of the daemon built here, the same
# rate for every daemon; latency counted from the intended send time (up to 16 in flight per
# connection so bursts are not refused).
read -r C1 D1 <<< "${CONFIGS[0]}"
MAX=$(printf '%s' "${RPS[adloaderd|${CONFIGS[0]}]}" | median)
HALF=$(awk -v m="$MAX" 'BEGIN { printf "%d", m / 2 }')
HALF_DEPTH=16; [ "$SMOKE" = 1 ] && HALF_DEPTH=4
say "== half load: $HALF calls/s open loop over $C1 connections"
for run in $(seq 1 "$RUNS"); do
    count=${#DAEMONS[@]}
    for i in $(seq 0 $((count - 1))); do
        name=${DAEMONS[$(((i + run - 1) % count))]}
        record "$name" half "$C1" "$HALF_DEPTH" "$HALF" "$run" "$(bench "$name" "$C1" "$HALF_DEPTH" "$HALF" half)"
    done
done

# Summary: medians, ratios to redis, CPU per call.
JSON="$OUT/protocol-load.json"
DAT="$WORK/plot.dat"
: > "$DAT"
{
    echo
    echo "protocol-load ($( [ "$PIN" = 1 ] && echo "servers on CPU 0, clients on CPU 1" || echo unpinned ), medians of $RUNS x ${DURATION}s, $(nproc) CPUs)"
    echo "cpu us/call: the server's utime+stime over the measured window / calls answered in it"
    echo "calls/rd, calls/wr: calls answered per read and per write system call of the server (/proc/PID/io)"
    printf '%-10s %-13s %10s %8s %8s %9s %11s %6s %6s %8s %8s %8s %9s   %s\n' config server "calls/s" "p50 us" "p99 us" "p99.9 us" \
        "cpu us/call" user sys calls/rd calls/wr "x redis" "cpu/redis" "calls/s of the runs"
} >&2
# median_of ARRAY KEY: the median of one list.
median_of() { local -n list=$1; printf '%s' "${list[$2]:-}" | median; }
# json_median ARRAY KEY: the median, or null when nothing was measured (redis: no p99.9, user, sys).
json_median() {
    local -n values=$1
    if [ -n "${values[$2]:-}" ]; then printf '%s' "${values[$2]}" | median; else echo null; fi
}
# json_server NAME KEY: the medians of one server as a JSON object.
json_server() {
    local k="$1|$2"
    printf '{"calls_per_s":%s,"p50_us":%s,"p99_us":%s,"p999_us":%s,"server_cpu_us_per_call":%s,"server_user_us_per_call":%s,"server_sys_us_per_call":%s,"server_calls_per_read":%s,"server_calls_per_write":%s}' \
        "$(json_median RPS "$k")" "$(json_median P50 "$k")" "$(json_median P99 "$k")" "$(json_median P999 "$k")" \
        "$(json_median CPU "$k")" "$(json_median USR "$k")" "$(json_median SYS "$k")" "$(json_median CPR "$k")" "$(json_median CPW "$k")"
}
# row LABEL NAME KEY: one line of the table; ratios against redis's medians for KEY when known.
row() {
    local k="$2|$3"
    local a a50 a99 a999 ac au as cpr cpw ratio=- cratio=- r rc
    a=$(median_of RPS "$k"); a50=$(median_of P50 "$k"); a99=$(median_of P99 "$k"); a999=$(median_of P999 "$k")
    ac=$(median_of CPU "$k"); au=$(median_of USR "$k"); as=$(median_of SYS "$k"); cpr=$(median_of CPR "$k"); cpw=$(median_of CPW "$k")
    if [ "$2" != redis ] && [ -n "${RPS[redis|$3]:-}" ]; then
        r=$(median_of RPS "redis|$3"); rc=$(median_of CPU "redis|$3")
        ratio=$(awk -v a="$a" -v r="$r" 'BEGIN { printf "%.2f", (r > 0 ? a / r : 0) }')
        cratio=$(awk -v a="$ac" -v r="$rc" 'BEGIN { printf "%.2f", (r > 0 ? a / r : 0) }')
    fi
    [ "$2" = redis ] && a999=-
    printf '%-10s %-13s %10.0f %8s %8s %9s %11s %6s %6s %8s %8s %8s %9s   %s\n' "$1" "$2" "$a" "$a50" "$a99" "$a999" "$ac" "$au" "$as" \
        "$cpr" "$cpw" "$ratio" "$cratio" "$(printf '%s' "${RPS[$k]:-}" | spread)" >&2
}
printf '{"bench":"protocol-load","time":"%s","pinned":%s,"runs":%s,"duration_s":%s,"compared":%s,"configs":[' "$STAMP" "$PIN" \
    "$RUNS" "$DURATION" "[$( [ ${#COMPARE_LABELS[@]} -eq 0 ] || printf '"%s",' "${COMPARE_LABELS[@]}" | sed 's/,$//' )]" > "$JSON"
sep=""
for config in "${CONFIGS[@]}"; do
    read -r C D <<< "$config"
    for name in "${SERVERS[@]}"; do row "${C}x${D}" "$name" "$config"; done
    printf '%s{"connections":%s,"depth":%s' "$sep" "$C" "$D" >> "$JSON"
    for name in "${SERVERS[@]}"; do printf ',"%s":%s' "$name" "$(json_server "$name" "$config")" >> "$JSON"; done
    printf '}' >> "$JSON"
    sep=","
    {
        printf '"%sx%s"' "$C" "$D"
        for name in "${SERVERS[@]}"; do printf ' %s' "$(median_of RPS "$name|$config")"; done
        echo
    } >> "$DAT"
done
for name in "${DAEMONS[@]}"; do row "half load" "$name" half; done
say "(half load: open loop at $HALF calls/s = half of adloaderd's ${C1}x${D1} median, up to $HALF_DEPTH in flight per connection)"
printf '],"half_load":{"rate":%s' "$HALF" >> "$JSON"
for name in "${DAEMONS[@]}"; do printf ',"%s":%s' "$name" "$(json_server "$name" half)" >> "$JSON"; done
printf '}}\n' >> "$JSON"
say "results: $CSV, $JSON"

if [ "$HAVE_GNUPLOT" = 1 ] && [ "$SMOKE" = 0 ]; then
    columns=""
    for i in "${!SERVERS[@]}"; do
        title=${SERVERS[$i]}; [ "$title" = redis ] && title="redis GET 400 B"
        if [ -z "$columns" ]; then columns="\"$DAT\" using 2:xtic(1) title \"$title\""
        else columns+=", \"\" using $((i + 2)) title \"$title\""; fi
    done
    gnuplot <<GNUPLOT 2>/dev/null && say "plot: $OUT/protocol-load.png" || say "gnuplot failed; no plot"
set terminal png size 800,480
set output "$OUT/protocol-load.png"
set title "Borrow+Return calls/s (adloaderd) vs GET/s (redis), medians of $RUNS"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "calls per second"
set yrange [0:*]
set key top left
plot $columns
GNUPLOT
fi
if [ "$SMOKE" = 1 ]; then say "protocol-load smoke: ok"; fi
