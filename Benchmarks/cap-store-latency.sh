#!/usr/bin/env bash
# Cap-store latency and the loop's longest pause (BENCHMARKS.md, "App-open cap stores"):
# starts a redis-server on a free loopback port (no persistence), builds
# Benchmarks/CapStoreLatency in release mode, and runs
#   1. each store's call latency (memory, SQLite FULL and NORMAL on the working directory's
#      disk, Redis asynchronous round trip);
#   2. the loop's iterations while a timer sends 2 calls/ms to the asynchronous Redis store,
#      with Redis normal, paused (CLIENT PAUSE: no replies, every call times out) and down
#      (killed: nothing listening), beside hiredis' blocking API (the store before) in the
#      same state.
# With a third argument `tls`: Redis on its TLS port only (certificates made with openssl in
# .build/cap-store-latency/tls), the asynchronous store over TLS, the same three states (the
# blocking peer has no TLS and is not run).
# Usage: Benchmarks/cap-store-latency.sh [COUNT] [SECONDS] [tls]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
seconds=${2:-3}
mode=${3:-plain}
swift build -c release --product CapStoreLatency >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p .build/cap-store-latency
server_tls=()
cli_tls=()
bench_tls=()
if [ "$mode" = tls ]; then
    dir=.build/cap-store-latency/tls
    mkdir -p "$dir"
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
    openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 1 -subj /CN=bench-ca 2>/dev/null
    openssl req "${ec[@]}" -keyout "$dir/server.key" -out "$dir/server.csr" -subj /CN=bench-redis 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -out "$dir/server.pem" -days 1 -extfile "$dir/server.ext" 2>/dev/null
    server_tls=(--port 0 --tls-port "$port" --tls-cert-file "$dir/server.pem" --tls-key-file "$dir/server.key"
        --tls-ca-cert-file "$dir/ca.pem" --tls-auth-clients no)
    cli_tls=(--tls --cacert "$dir/ca.pem")
    bench_tls=(--tls-ca "$dir/ca.pem")
else
    server_tls=(--port "$port")
fi
start_redis() {
    redis-server "${server_tls[@]}" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
    redis=$!
    for _ in $(seq 100); do redis-cli -p "$port" "${cli_tls[@]}" ping >/dev/null 2>&1 && break; sleep 0.05; done
}
start_redis
trap 'kill -9 $redis 2>/dev/null || true; wait $redis 2>/dev/null || true' EXIT
bench=.build/release/CapStoreLatency
$bench --count "$count" --dir .build/cap-store-latency/run --redis-port "$port" "${bench_tls[@]}"
$bench --scenario normal --seconds "$seconds" --redis-port "$port" "${bench_tls[@]}"
# WRITE, not ALL: ALL would pause the CLIENT UNPAUSE below too (EVALSHA is paused either way).
redis-cli -p "$port" "${cli_tls[@]}" client pause 600000 WRITE >/dev/null
$bench --scenario paused --seconds "$seconds" --redis-port "$port" "${bench_tls[@]}"
redis-cli -p "$port" "${cli_tls[@]}" client unpause >/dev/null || true
kill -9 "$redis" || true
wait "$redis" 2>/dev/null || true
$bench --scenario down --seconds "$seconds" --redis-port "$port" "${bench_tls[@]}"
