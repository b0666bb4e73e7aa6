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
# Usage: Benchmarks/cap-store-latency.sh [COUNT] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
seconds=${2:-3}
swift build -c release --product CapStoreLatency >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_redis() {
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
    redis=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
}
start_redis
trap 'kill -9 $redis 2>/dev/null || true; wait $redis 2>/dev/null || true' EXIT
mkdir -p .build/cap-store-latency
bench=.build/release/CapStoreLatency
$bench --count "$count" --dir .build/cap-store-latency/run --redis-port "$port"
$bench --scenario normal --seconds "$seconds" --redis-port "$port"
# WRITE, not ALL: ALL would pause the CLIENT UNPAUSE below too (EVALSHA is paused either way).
redis-cli -p "$port" client pause 600000 WRITE >/dev/null
$bench --scenario paused --seconds "$seconds" --redis-port "$port"
redis-cli -p "$port" client unpause >/dev/null || true
kill -9 "$redis" || true
wait "$redis" 2>/dev/null || true
$bench --scenario down --seconds "$seconds" --redis-port "$port"
