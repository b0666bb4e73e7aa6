#!/usr/bin/env bash
# Cap-store latency (BENCHMARKS.md, "App-open cap stores"): starts a redis-server on a free
# loopback port (no persistence), runs Benchmarks/CapStoreLatency in release mode against
# memory, SQLite (synchronous FULL and NORMAL, on the working directory's disk) and Redis,
# and stops the server.   Usage: Benchmarks/cap-store-latency.sh [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
swift build -c release --product CapStoreLatency >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
redis=$!
trap 'kill -9 $redis 2>/dev/null || true; wait $redis 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
mkdir -p .build/cap-store-latency
.build/release/CapStoreLatency --count "$count" --dir .build/cap-store-latency/run --redis-port "$port"
