#!/usr/bin/env bash
# Calls/s through nginx's and HAProxy's gRPC proxies to three adloaderd replicas vs one replica
# direct, in one run (issues 13, 27). h2load (nghttp2-client) sends real gRPC Borrow calls (a
# slot that holds its lease: every call answers REUSED with the ~400-byte ad):
#   direct  one h2load, C connections x M streams, straight to replica A; then C*M
#           connections x 1 stream, one call at a time per connection as nginx sends them;
#   nginx   three h2load at once, C/3 connections each, to nginx (Examples/cluster's
#           configuration), each with an x-adloader-affinity key that nginx's ring maps to a
#           different replica, so all three serve;
#   haproxy the same three h2load to HAProxy (Examples/cluster/haproxy.cfg.template: HTTP/2
#           to the replicas, many calls per upstream connection), keys found through it.
#   proxyless no proxy: Benchmarks/ring-hash-load.py, three grpcio client processes whose
#           ring_hash policy routes each call by its affinity key (Examples/cluster/
#           ring_hash_client.py), C*M/3 calls in flight each, keys found through that ring;
#           its "proxy" column is the clients' own CPU per call (CPython's, an upper bound for
#           a compiled client). Needs the venv's grpcio (make venv); --no-proxyless skips it.
# Prints calls/s, the p99 of the calls' times (h2load --log-file) and CPU per call of each
# process (utime+stime from /proc/PID/stat over the
# measured window, divided by the calls answered in it). On a 2-CPU machine the three
# replicas, nginx and h2load share the same two CPUs: this shows the proxy's overhead, not
# scaling.
#
#   Benchmarks/cluster-load.sh [--conns C] [--streams M] [--duration S] [--runs N]
#                              [--adloaderd BIN] [--adloader BIN] [--out DIR] [--no-proxyless]
#
# Defaults: 30 x 10, 5 s, 1 run, .build/release/{adloaderd,adloader}. Only 127.0.0.1 is used;
# everything started stops on exit. Writes DIR/cluster-load.csv (default bench-results/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

CONNS=30
STREAMS=10
DURATION=5
RUNS=1
BIN=$ROOT/.build/release/adloaderd
CLI=$ROOT/.build/release/adloader
OUT=$ROOT/bench-results
PROXYLESS=1
PY=${PYTHON:-$ROOT/.venv/bin/python}
while [ $# -gt 0 ]; do
    case "$1" in
        --conns) CONNS=$2; shift ;;
        --streams) STREAMS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --runs) RUNS=$2; shift ;;
        --adloaderd) BIN=$2; shift ;;
        --adloader) CLI=$2; shift ;;
        --out) OUT=$2; shift ;;
        --no-proxyless) PROXYLESS=0 ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
command -v h2load >/dev/null || { echo "h2load missing (apt-get install nghttp2-client)" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx missing (apt-get install nginx)" >&2; exit 1; }
command -v haproxy >/dev/null || { echo "haproxy missing (apt-get install haproxy)" >&2; exit 1; }
command -v nghttp >/dev/null || { echo "nghttp missing (apt-get install nghttp2-client)" >&2; exit 1; }
[ -x "$BIN" ] && [ -x "$CLI" ] || { echo "no $BIN or $CLI (make release)" >&2; exit 1; }
if [ "$PROXYLESS" = 1 ] && ! "$PY" -c 'import grpc' 2>/dev/null; then
    echo "$PY has no grpcio for the proxy-less row: make venv, PYTHON=..., or --no-proxyless" >&2; exit 1
fi
mkdir -p "$OUT"
WORK=$(mktemp -d)
chmod 755 "$WORK"  # nginx's workers (nobody, when started as root) read and write in it
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    # Keep the h2load and nginx logs of the last run for a look at failures.
    mkdir -p "$OUT/cluster-load-logs" && cp "$WORK"/*.log "$OUT/cluster-load-logs/" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
TCK=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
cpu_per_call() { awk -v t="$1" -v hz="$TCK" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", t / hz * 1e6 / n; else print "nan" }'; }

# BorrowRequest { ad_unit_id: "bench", slot_key: "cell-1" } with the 5-byte gRPC prefix.
printf '\x00\x00\x00\x00\x0f\x0a\x05bench\x1a\x06cell-1' > "$WORK/borrow.grpc"
GRPC=(-H 'content-type: application/grpc' -H 'te: trailers' -d "$WORK/borrow.grpc")
PATH_BORROW=/adloader.v1.NativeAdLoader/Borrow

ports=()
replicas=()
for i in 0 1 2; do
    port=$(free_port)
    "$BIN" --port "$port" --synthetic-latency 5ms --log-level warning --pool-store-path "$WORK/r$i-pools.sqlite" > "$WORK/r$i.out" 2> "$WORK/r$i.err" &
    pid=$!; PIDS+=("$pid"); replicas+=("$pid"); ports+=("$port")
done
for port in "${ports[@]}"; do wait_port "$port"; done
nginx_port=$(free_port)
sed -e "s|@RUN_DIR@|$WORK|g" -e "s|@PORT@|$nginx_port|g" -e "s|@PORT_A@|${ports[0]}|g" \
    -e "s|@PORT_B@|${ports[1]}|g" -e "s|@PORT_C@|${ports[2]}|g" \
    Examples/cluster/nginx.conf.template > "$WORK/nginx.conf"
# No access log under load: it is a disk write per call.
sed -i 's|^    access_log .*|    access_log off;|' "$WORK/nginx.conf"
nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" -g 'daemon off;' > /dev/null 2>&1 &
nginx_pid=$!; PIDS+=("$nginx_pid")
wait_port "$nginx_port"
worker=$(pgrep -P "$nginx_pid" | head -1)

# One affinity key per replica, found with the CLI's ring (the same as nginx's).
endpoints="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
keys=()
for i in 0 1 2; do
    for n in $(seq 0 200); do
        owner=$("$CLI" --endpoints "$endpoints" --affinity "feed-$n" --json stats | sed -n 's/.*"instance" : "\(.*\)".*/\1/p')
        if [ "$owner" = "127.0.0.1:${ports[$i]}" ]; then keys+=("feed-$n"); break; fi
    done
done
[ "${#keys[@]}" = 3 ] || { echo "no key found for every replica" >&2; exit 1; }
# Warm each replica's pool through nginx (the first Borrow finds it empty).
for key in "${keys[@]}"; do
    h2load -n 1 "${GRPC[@]}" -H "x-adloader-affinity: $key" "http://127.0.0.1:$nginx_port$PATH_BORROW" > /dev/null
done
sleep 0.3  # the pools' first batch arrives after the synthetic source's 5 ms

# HAProxy beside nginx, in front of the same replicas; its ring is its own: find one key per
# replica through it (Stats answers with the replica's x-adloader-instance header).
haproxy_port=$(free_port)
sed -e "s|@RUN_DIR@|$WORK|g" -e "s|@PORT@|$haproxy_port|g" -e "s|@PORT_A@|${ports[0]}|g" \
    -e "s|@PORT_B@|${ports[1]}|g" -e "s|@PORT_C@|${ports[2]}|g" \
    Examples/cluster/haproxy.cfg.template > "$WORK/haproxy.cfg"
haproxy -db -f "$WORK/haproxy.cfg" > "$WORK/haproxy.log" 2>&1 &
haproxy_pid=$!; PIDS+=("$haproxy_pid")
wait_port "$haproxy_port"
printf '\x00\x00\x00\x00\x00' > "$WORK/stats.grpc"
hkeys=()
for i in 0 1 2; do
    for n in $(seq 0 200); do
        owner=$(nghttp -n -v -H 'content-type: application/grpc' -H 'te: trailers' -H "x-adloader-affinity: feed-$n" \
            -d "$WORK/stats.grpc" "http://127.0.0.1:$haproxy_port/adloader.v1.NativeAdLoader/Stats" 2>/dev/null \
            | sed -n 's/.*x-adloader-instance: \([0-9.:]*\).*/\1/p' | head -1)
        if [ "$owner" = "127.0.0.1:${ports[$i]}" ]; then hkeys+=("feed-$n"); break; fi
    done
done
[ "${#hkeys[@]}" = 3 ] || { echo "no key found for every replica through HAProxy" >&2; exit 1; }
for key in "${hkeys[@]}"; do
    h2load -n 1 "${GRPC[@]}" -H "x-adloader-affinity: $key" "http://127.0.0.1:$haproxy_port$PATH_BORROW" > /dev/null
done
sleep 0.3

# Proxy-less: grpcio's ring is its own too (xxhash over the addresses): one key per replica
# found through it (Stats answers with the replica's instance name).
if [ "$PROXYLESS" = 1 ]; then
    rkeys=$(cd Examples/cluster && "$PY" -c '
import sys, grpc, ring_hash_client
endpoints, found = sys.argv[1].split(","), {}
with ring_hash_client.ring_hash_channel(endpoints) as ch:
    stats = ch.unary_unary("/adloader.v1.NativeAdLoader/Stats", request_serializer=bytes, response_deserializer=bytes)
    for n in range(400):
        key = f"feed-{n}"
        _, call = stats.with_call(b"", metadata=[(ring_hash_client.AFFINITY, key)], timeout=5)
        owner = dict(call.initial_metadata()).get("x-adloader-instance")
        found.setdefault(owner, key)
        if len(found) == len(endpoints):
            break
print(",".join(found[e] for e in endpoints))
' "$endpoints") || { echo "no key found for every replica through grpcio's ring" >&2; exit 1; }
fi

# rate_and_calls LOGFILE: "calls/s calls" from one h2load log.
rate_and_calls() {
    printf '%s %s\n' "$(sed -n 's/^finished in [0-9.]*s, \([0-9.]*\) req\/s.*/\1/p' "$1")" \
        "$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$1")"
}

# p99 in ms of the calls logged by h2load --log-file (third column: microseconds).
p99_ms() { cat "$@" | awk '{ print $3 }' | sort -n | awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int(NR * 0.99)] / 1000; else print "nan" }'; }

# measure_proxy NAME PORT PROXY_PID KEY_A KEY_B KEY_C: three h2load at once through the proxy,
# one key (one replica) each; calls/s, p99, replica and proxy CPU per call.
measure_proxy() {
    local name=$1 pport=$2 ppid=$3; shift 3
    local pkeys=("$@") per=$((CONNS / 3)) url="http://127.0.0.1:$pport$PATH_BORROW"
    local warmups=() loads=() r_before=0 r_after=0 p_before p_after i pid
    for key in "${pkeys[@]}"; do
        h2load -c "$per" -m "$STREAMS" -D 1 "${GRPC[@]}" -H "x-adloader-affinity: $key" "$url" > /dev/null 2>&1 &
        warmups+=("$!")
    done
    for pid in "${warmups[@]}"; do wait "$pid" || true; done
    for pid in "${replicas[@]}"; do r_before=$((r_before + $(ticks "$pid"))); done
    p_before=$(ticks "$ppid")
    for i in 0 1 2; do
        h2load -c "$per" -m "$STREAMS" -D "$DURATION" "${GRPC[@]}" -H "x-adloader-affinity: ${pkeys[$i]}" \
            --log-file "$WORK/$name-$i.calls" "$url" > "$WORK/$name-$i.log" 2>&1 &
        loads+=("$!")
    done
    for pid in "${loads[@]}"; do wait "$pid" || true; done
    for pid in "${replicas[@]}"; do r_after=$((r_after + $(ticks "$pid"))); done
    p_after=$(ticks "$ppid")
    local total_rate=0 total_calls=0 total_failed=0 rate calls failed
    for i in 0 1 2; do
        read -r rate calls < <(rate_and_calls "$WORK/$name-$i.log")
        failed=$(sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p' "$WORK/$name-$i.log")
        total_rate=$(awk -v a="$total_rate" -v b="${rate:-0}" 'BEGIN { printf "%.2f", a + b }')
        total_calls=$((total_calls + ${calls:-0})); total_failed=$((total_failed + ${failed:-0}))
    done
    local rcpu pcpu p99
    rcpu=$(cpu_per_call $((r_after - r_before)) "$total_calls")
    pcpu=$(cpu_per_call $((p_after - p_before)) "$total_calls")
    p99=$(p99_ms "$WORK/$name"-*.calls)
    rm -f "$WORK/$name"-*.calls
    printf '%-34s %4sx%-3s %10s calls/s  p99 %6s ms  replicas %5s us/call, %s %6s us/call  (%s calls, %s failed)\n' \
        "$name -> three replicas" "$CONNS" "$STREAMS" "$total_rate" "$p99" "$rcpu" "$name" "$pcpu" "$total_calls" "$total_failed"
    echo "$name,$CONNS,$STREAMS,$DURATION,$total_rate,$total_calls,$total_failed,$rcpu,$pcpu,$p99" >> "$OUT/cluster-load.csv"
}

# measure_proxyless: Benchmarks/ring-hash-load.py over the three replicas, one client process
# per key, the same calls in flight as the proxies get; a 1 s run first warms the channels.
measure_proxyless() {
    local per=$(( (CONNS * STREAMS + 2) / 3 )) r_before=0 r_after=0 pid summary
    "$PY" Benchmarks/ring-hash-load.py "$endpoints" "$rkeys" --concurrency "$per" --warmup 0 --duration 1 > /dev/null 2>&1 || true
    for pid in "${replicas[@]}"; do r_before=$((r_before + $(ticks "$pid"))); done
    "$PY" Benchmarks/ring-hash-load.py "$endpoints" "$rkeys" --concurrency "$per" --warmup 0 --duration "$DURATION" \
        > "$WORK/proxyless.log" 2>&1 || true
    for pid in "${replicas[@]}"; do r_after=$((r_after + $(ticks "$pid"))); done
    summary=$(tail -1 "$WORK/proxyless.log")
    local rate calls failed p99 ccpu rcpu
    read -r rate calls failed p99 ccpu < <("$PY" -c 'import json, sys; d = json.loads(sys.argv[1])
print(d["calls_per_s"], d["calls"], d["failed"], d["p99_ms"], d["client_cpu_us_per_call"])' "$summary") \
        || { echo "proxy-less run failed:"; cat "$WORK/proxyless.log"; return 0; }
    rcpu=$(cpu_per_call $((r_after - r_before)) "$calls")
    printf '%-34s %4sx%-3s %10s calls/s  p99 %6s ms  replicas %5s us/call, clients %6s us/call  (%s calls, %s failed)\n' \
        "proxy-less (grpcio ring_hash)" 3 "$per" "$rate" "$p99" "$rcpu" "$ccpu" "$calls" "$failed"
    echo "proxyless,3,$per,$DURATION,$rate,$calls,$failed,$rcpu,$ccpu,$p99" >> "$OUT/cluster-load.csv"
}

echo "setup,conns,streams,seconds,calls_per_s,calls,failed,replica_cpu_us_per_call,proxy_cpu_us_per_call,p99_ms" > "$OUT/cluster-load.csv"
for run in $(seq "$RUNS"); do
    # Direct: replica A alone, C x M; then C*M connections with one call at a time each, the way
    # nginx's gRPC proxy uses its upstream connections (same calls in flight).
    url="http://127.0.0.1:${ports[0]}$PATH_BORROW"
    for shape in "$CONNS $STREAMS" "$((CONNS * STREAMS)) 1"; do
        read -r c m <<< "$shape"
        h2load -c "$c" -m "$m" -D 1 "${GRPC[@]}" "$url" > /dev/null 2>&1 || true
        before=$(ticks "${replicas[0]}")
        h2load -c "$c" -m "$m" -D "$DURATION" "${GRPC[@]}" --log-file "$WORK/direct.calls" "$url" > "$WORK/direct.log" 2>&1 || true
        after=$(ticks "${replicas[0]}")
        read -r rate calls < <(rate_and_calls "$WORK/direct.log")
        failed=$(sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p' "$WORK/direct.log")
        cpu=$(cpu_per_call $((after - before)) "${calls:-0}")
        p99=$(p99_ms "$WORK/direct.calls"); rm -f "$WORK/direct.calls"
        printf '%-34s %4sx%-3s %10s calls/s  p99 %6s ms  replica %6s us/call  (%s calls, %s failed)\n' \
            "direct, one replica" "$c" "$m" "${rate:-?}" "$p99" "$cpu" "${calls:-?}" "${failed:-?}"
        echo "direct,$c,$m,$DURATION,$rate,$calls,$failed,$cpu,,$p99" >> "$OUT/cluster-load.csv"
    done

    measure_proxy nginx "$nginx_port" "$worker" "${keys[@]}"
    measure_proxy haproxy "$haproxy_port" "$haproxy_pid" "${hkeys[@]}"
    [ "$PROXYLESS" = 0 ] || measure_proxyless
done
echo "results: $OUT/cluster-load.csv"
