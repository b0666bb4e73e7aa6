#!/usr/bin/env bash
# Instructions the daemon executes per framed Borrow+Return call (callgrind), 32 connections x
# 16 in flight: the slope between a 100k- and a 200k-call run of the same binary, so start-up
# and the pool's first fill cancel out. Same daemon configuration as protocol-load.sh.
# With --store-on (framed only): the same with the pool store on (the default product: SQLite
# plus the write-through journal), a new store file per run so that no run restores another's.
# With --grpc: per gRPC Borrow instead (h2load, 32 connections x 10 streams, `-n` calls of a
# Borrow whose slot holds its lease, as Benchmarks/grpc-load.sh sends), same slope.
# With --grpc-plan: per gRPC Plan of one feed's window, positions 0-7 on screen and 3 ahead
# (issue 24): after the same first Borrow fills the pool, the first Plan lends positions 4 and 9
# and every later one answers and renews both leases; same h2load, same slope.
#
#   Benchmarks/callgrind-per-call.sh [--store-on|--grpc|--grpc-plan] BIN [BIN...]
#   Benchmarks/callgrind-per-call.sh --nghttpd     # the peer: nghttpd serving the 400-byte file
#                                                  # of ../shared/peers/gen_payloads.py, same h2load
#
# Each BIN is copied and its debug information stripped (valgrind 3.19 cannot read Swift 6.3's
# DWARF 5); the symbol table stays, so callgrind names the functions. Uses
# .build/release/ProtocolLoadBench (built first), or h2load (nghttp2-client) with --grpc.
# Only 127.0.0.1 is used. KEEP=DIR keeps the callgrind output files there and prints where the
# instructions per call go (Benchmarks/callgrind-breakdown.py: by object, top functions).
# CALLS=N runs N and 2N calls (default 100000). LOADBENCH=PATH uses that ProtocolLoadBench
# (not built then).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
GRPC=0
NGHTTPD=0
PLAN=0
STORE=0
if [ "${1:-}" = "--store-on" ]; then STORE=1; shift; fi
if [ "${1:-}" = "--grpc" ]; then GRPC=1; shift; fi
if [ "${1:-}" = "--grpc-plan" ]; then GRPC=1; PLAN=1; shift; fi
if [ "${1:-}" = "--nghttpd" ]; then GRPC=1; NGHTTPD=1; shift; set -- "$(command -v nghttpd)"; fi
[ $# -ge 1 ] || { echo "usage: $0 [--grpc|--grpc-plan] BIN [BIN...] | --nghttpd" >&2; exit 2; }
if [ "$NGHTTPD" = 1 ] && [ ! -f "${BUILD:-/tmp/adloader-peers}/www/ad.bin" ]; then
    # Without the file every request is a 404 and the run fails after the whole h2load.
    echo "${BUILD:-/tmp/adloader-peers}/www/ad.bin missing: run ../shared/peers/gen_payloads.py (BUILD=DIR; it needs grpcio-tools, as in .venv)" >&2
    exit 1
fi
if [ "$GRPC" = 1 ]; then
    command -v h2load > /dev/null || { echo "h2load missing (apt-get install nghttp2-client)" >&2; exit 1; }
elif [ -z "${LOADBENCH:-}" ]; then
    swift build -c release --product ProtocolLoadBench > /dev/null
fi
LOADBENCH=${LOADBENCH:-$ROOT/.build/release/ProtocolLoadBench}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
. Benchmarks/per-call-setup.sh
instructions() {  # BIN CALLS -> total Ir of the daemon
    local bin=$1 calls=$2 out="$WORK/cg.$RANDOM" pid port=""
    if [ "$NGHTTPD" = 1 ]; then
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --no-tls -d "${BUILD:-/tmp/adloader-peers}/www" \
            "$port" > "$WORK/daemon.out" 2> "$WORK/daemon.err" &
        pid=$!
        for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    else
        local config="$WORK/adloaderd.json"
        if [ "$STORE" = 1 ]; then
            # Named by the run's size ($RANDOM repeats in each $(...) subshell): each run starts
            # with an empty store, never restoring the pool the run before suspended.
            config="$WORK/adloaderd-store.$calls.json"
            rm -f "$config.sqlite"*
            sed "s|\"type\": \"off\"|\"sqlitePath\": \"$config.sqlite\"|" "$WORK/adloaderd.json" > "$config"
        fi
        valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --config "$config" \
            > "$WORK/daemon.out" 2> "$WORK/daemon.err" &
        pid=$!
        for _ in $(seq 1 600); do
            port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/daemon.out" 2>/dev/null | cut -d: -f2 || true)
            [ -n "$port" ] && break
            sleep 0.1
        done
    fi
    [ -n "$port" ] || { cat "$WORK/daemon.err" >&2; echo "daemon did not start" >&2; exit 1; }
    if [ "$NGHTTPD" = 1 ]; then
        h2load -n "$calls" -c 32 -m 10 "http://127.0.0.1:$port/ad.bin" > "$WORK/h2load.out"
        grep -q "requests: $calls total, $calls started, $calls done, $calls succeeded" "$WORK/h2load.out" \
            || { cat "$WORK/h2load.out" >&2; echo "not every request succeeded" >&2; exit 1; }
    elif [ "$GRPC" = 1 ]; then
        # The first Borrow finds the pool empty and starts its fill; the rest reuse the lease.
        h2load -n 1 "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc" "http://127.0.0.1:$port$BORROW_PATH" > /dev/null
        sleep 1
        local body="$WORK/borrow.grpc" path=$BORROW_PATH
        if [ "$PLAN" = 1 ]; then body="$WORK/plan.grpc"; path=$PLAN_PATH; fi
        h2load -n "$calls" -c 32 -m 10 "${GRPC_HEADERS[@]}" -d "$body" \
            "http://127.0.0.1:$port$path" > "$WORK/h2load.out"
        grep -q "requests: $calls total, $calls started, $calls done, $calls succeeded" "$WORK/h2load.out" \
            || { cat "$WORK/h2load.out" >&2; echo "not every call succeeded" >&2; exit 1; }
    else
        # --duration (at most 300 s) only bounds the run, --max-calls ends it; under valgrind on
        # a loaded machine 200k calls took longer, and a run cut short gave a negative slope:
        # a run that did not make every call fails.
        local json made
        json=$("$LOADBENCH" --port "$port" --connections 32 --depth 16 --warmup 0 \
            --duration 300 --max-calls "$calls" --quiet) || { echo "ProtocolLoadBench failed" >&2; return 1; }
        made=$(printf '%s' "$json" | sed -n 's/.*"calls":\([0-9]*\).*/\1/p')
        [ "${made:-0}" -ge "$calls" ] \
            || { echo "ProtocolLoadBench made ${made:-0} of $calls calls in its 300 s: fewer CALLS" >&2; return 1; }
    fi
    kill -TERM "$pid"
    wait "$pid" || true
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$out" "$KEEP/$(keep_name "$bin").$calls"; fi
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}
keep_name() { echo "callgrind.$(basename "$(dirname "$1")").store$STORE"; }
for bin in "$@"; do
    mkdir -p "$WORK/$(basename "$(dirname "$bin")")"
    copy="$WORK/$(basename "$(dirname "$bin")")/adloaderd"
    cp "$bin" "$copy"
    strip --strip-debug "$copy"
    n=${CALLS:-100000}
    small=$(instructions "$copy" "$n")
    large=$(instructions "$copy" $((2 * n)))
    echo "$bin: $(( (large - small) / n )) instructions per call ($n: $small, $((2 * n)): $large)"
    if [ -n "${KEEP:-}" ]; then
        python3 Benchmarks/callgrind-breakdown.py "$KEEP/$(keep_name "$copy").$n" "$KEEP/$(keep_name "$copy").$((2 * n))" \
            "$n" --functions "${FUNCTIONS:-25}"
    fi
done
