#!/usr/bin/env bash
# Instructions the daemon executes per framed Borrow+Return call (callgrind), 32 connections x
# 16 in flight: the slope between a 100k- and a 200k-call run of the same binary, so start-up
# and the pool's first fill cancel out. Same daemon configuration as protocol-load.sh.
#
#   Benchmarks/callgrind-per-call.sh BIN [BIN...]
#
# Each BIN is copied and stripped (valgrind 3.19 cannot read Swift 6.3's DWARF 5). Uses
# .build/release/ProtocolLoadBench (built first). Only 127.0.0.1 is used.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[ $# -ge 1 ] || { echo "usage: $0 BIN [BIN...]" >&2; exit 2; }
swift build -c release --product ProtocolLoadBench > /dev/null
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
cat > "$WORK/adloaderd.json" <<'JSON'
{ "listeners": { "host": "127.0.0.1", "port": 0 },
  "log": { "level": "warning" },
  "sources": { "synthetic": { "latency": "0ms", "fillRate": 1, "seed": 7 } },
  "loaders": { "default": { "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,
                            "leaseTimeout": "60s" } } }
JSON
instructions() {  # BIN CALLS -> total Ir of the daemon
    local bin=$1 calls=$2 out="$WORK/cg.$RANDOM" pid port=""
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --config "$WORK/adloaderd.json" \
        > "$WORK/daemon.out" 2> "$WORK/daemon.err" &
    pid=$!
    for _ in $(seq 1 600); do
        port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/daemon.out" 2>/dev/null | cut -d: -f2 || true)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$WORK/daemon.err" >&2; echo "daemon did not start" >&2; exit 1; }
    "$ROOT/.build/release/ProtocolLoadBench" --port "$port" --connections 32 --depth 16 --warmup 0 \
        --duration 300 --max-calls "$calls" --quiet > /dev/null
    kill -TERM "$pid"
    wait "$pid" || true
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}
for bin in "$@"; do
    cp "$bin" "$WORK/adloaderd"
    strip "$WORK/adloaderd"
    small=$(instructions "$WORK/adloaderd" 100000)
    large=$(instructions "$WORK/adloaderd" 200000)
    echo "$bin: $(( (large - small) / 100000 )) instructions per call (100k: $small, 200k: $large)"
done
