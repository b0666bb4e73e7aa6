#!/usr/bin/env bash
# Heap allocations the daemon makes per call at steady state: a gRPC Borrow (h2load, 32
# connections x 10 streams, a Borrow whose slot holds its lease, as Benchmarks/grpc-load.sh
# sends) and a framed Borrow+Return call (ProtocolLoadBench, 32 x 16), counted by an LD_PRELOAD
# malloc counter (Benchmarks/MallocCount/malloc_count.c: malloc, calloc, realloc, memalign,
# posix_memalign, aligned_alloc) in one daemon run: a snapshot after a warm-up of CALLS/5 calls,
# another after CALLS more, the difference divided by CALLS.
#
#   Benchmarks/allocations-per-call.sh [--calls N] BIN [BIN...]
#
# Uses h2load (nghttp2-client), cc, and .build/release/ProtocolLoadBench for the framed row
# (`swift build -c release --product ProtocolLoadBench`, or LOADBENCH=PATH; the row is skipped
# without it).
# Only 127.0.0.1 is used.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CALLS=100000
if [ "${1:-}" = "--calls" ]; then CALLS=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--calls N] BIN [BIN...]" >&2; exit 2; }
command -v h2load > /dev/null || { echo "h2load missing (apt-get install nghttp2-client)" >&2; exit 1; }
TRANSPORTS="grpc framed"
LOADBENCH=${LOADBENCH:-$ROOT/.build/release/ProtocolLoadBench}
[ -x "$LOADBENCH" ] || { TRANSPORTS=grpc; echo "no $LOADBENCH: framed row skipped" >&2; }
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
cc -O2 -shared -fPIC -o "$WORK/malloc_count.so" Benchmarks/MallocCount/malloc_count.c -lpthread
. Benchmarks/per-call-setup.sh

snapshot() {  # -> the allocation count now
    rm -f "$WORK/counts"
    touch "$WORK/counts.req"
    for _ in $(seq 1 200); do [ -s "$WORK/counts" ] && break; sleep 0.02; done
    awk '{ print $2 }' "$WORK/counts"
}
grpc_calls() {  # PORT N
    h2load -n "$2" -c 32 -m 10 "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc" "http://127.0.0.1:$1$BORROW_PATH" \
        > "$WORK/h2load.out"
    grep -q "requests: $2 total, $2 started, $2 done, $2 succeeded" "$WORK/h2load.out" \
        || { cat "$WORK/h2load.out" >&2; echo "not every call succeeded" >&2; exit 1; }
}
framed_calls() {  # PORT N
    "$LOADBENCH" --port "$1" --connections 32 --depth 16 --warmup 0 \
        --duration 300 --max-calls "$2" --quiet > /dev/null
}
for bin in "$@"; do
    MALLOC_COUNT_FILE="$WORK/counts" LD_PRELOAD="$WORK/malloc_count.so" "$bin" --config "$WORK/adloaderd.json" \
        > "$WORK/daemon.out" 2> "$WORK/daemon.err" &
    pid=$!
    port=""
    for _ in $(seq 1 300); do
        port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/daemon.out" 2>/dev/null | cut -d: -f2 || true)
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { cat "$WORK/daemon.err" >&2; echo "daemon did not start" >&2; exit 1; }
    h2load -n 1 "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc" "http://127.0.0.1:$port$BORROW_PATH" > /dev/null
    sleep 0.5
    for transport in $TRANSPORTS; do
        "${transport}_calls" "$port" $((CALLS / 5))
        before=$(snapshot)
        "${transport}_calls" "$port" "$CALLS"
        after=$(snapshot)
        awk -v b="$before" -v a="$after" -v n="$CALLS" -v bin="$bin" -v t="$transport" \
            'BEGIN { printf "%s: %s: %.2f allocations per call (%d over %d calls)\n", bin, t, (a - b) / n, a - b, n }'
    done
    kill -TERM "$pid"
    wait "$pid" || true
done
