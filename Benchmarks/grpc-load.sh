#!/usr/bin/env bash
# gRPC load, side by side in one run: every row of issue 22's target table.
# 1. h2load (nghttp2-client) sending real gRPC calls over h2c to adloaderd's gRPC transport
#    (Borrow of a slot that holds its lease: every call answers REUSED with the ~400-byte ad),
#    to the C++ gRPC callback server of ../shared/peers (Borrow returning a ~400-byte ad), and
#    nghttpd serving a 400-byte static file, with the same connections x streams; and the same
#    adloaderd over the framed protocol (ProtocolLoadBench, Borrow + Return pairs, same
#    connections x calls in flight). Each server is warmed up WARMUP seconds (default 3) with
#    the same load, then measured: calls/s and server CPU per call (utime+stime from
#    /proc/PID/stat over the measured window, divided by the calls answered in it).
# 2. Single-connection latency: one h2load connection, one stream, client and server pinned
#    to one CPU (taskset -c 0), adloaderd's gRPC Borrow against the C++ gRPC server's: p50 and
#    p99 of h2load's per-request log (--log-file), LATENCY seconds each after a 1 s warm-up.
# 3. Counts that do not depend on the machine's load (skipped with --no-counts): heap
#    allocations per gRPC Borrow and per framed call (Benchmarks/allocations-per-call.sh,
#    ALLOC_CALLS calls), instructions per gRPC Borrow, per nghttpd static request and per
#    framed call (Benchmarks/callgrind-per-call.sh, CG_CALLS and twice as many; framed
#    FRAMED_CG_CALLS and twice as many).
# 4. A summary: medians of the rounds and the ratios of the targets.
#
#   Benchmarks/grpc-load.sh [--conns C] [--streams M] [--duration S] [--runs N] [--warmup S]
#                           [--latency-duration S] [--adloaderd BIN] [--out DIR]
#                           [--no-counts] [--cg-calls N] [--framed-cg-calls N] [--alloc-calls N]
#
# Peers: the C++ server is built by ../shared/peers/grpc_cpp/build.sh and its payloads by
# ../shared/peers/gen_payloads.py into $BUILD (default /tmp/adloader-peers); a peer whose
# binary is missing is skipped. adloaderd defaults to .build/release/adloaderd (built by
# `swift build -c release --product adloaderd`; ProtocolLoadBench likewise, or LOADBENCH=PATH).
# Only 127.0.0.1 is used; every server stops on exit. Writes, in DIR (default
# Benchmarks/results/issue22):
# grpc-load.csv (one row per server and round), grpc-latency.csv, allocations.txt,
# callgrind.txt, grpc-summary.csv (the target table) and grpc-load.txt (everything printed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

CONNS=32
STREAMS=10
DURATION=5
RUNS=1
WARMUP=3
LATENCY=5
COUNTS=1
CG_CALLS=20000
FRAMED_CG_CALLS=100000
ALLOC_CALLS=100000
BIN=$ROOT/.build/release/adloaderd
LOADBENCH=${LOADBENCH:-$ROOT/.build/release/ProtocolLoadBench}
export LOADBENCH
OUT=$ROOT/Benchmarks/results/issue22
PEERS_SRC=$ROOT/../shared/peers
[ -d "$PEERS_SRC" ] || PEERS_SRC=/work/shared/peers
BUILD=${BUILD:-/tmp/adloader-peers}
while [ $# -gt 0 ]; do
    case "$1" in
        --conns) CONNS=$2; shift ;;
        --streams) STREAMS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --runs) RUNS=$2; shift ;;
        --latency-duration) LATENCY=$2; shift ;;
        --warmup) WARMUP=$2; shift ;;
        --no-counts) COUNTS=0 ;;
        --cg-calls) CG_CALLS=$2; shift ;;
        --framed-cg-calls) FRAMED_CG_CALLS=$2; shift ;;
        --alloc-calls) ALLOC_CALLS=$2; shift ;;
        --adloaderd) BIN=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
command -v h2load >/dev/null || { echo "h2load missing (apt-get install nghttp2-client)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "no adloaderd at $BIN (swift build -c release --product adloaderd)" >&2; exit 1; }
mkdir -p "$OUT"
# Everything printed also goes to grpc-load.txt.
exec > >(tee "$OUT/grpc-load.txt") 2>&1
STARTED=$(date +%s)
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
    echo "adloaderd: $BIN"
    echo "nproc: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo || true
    echo "load before: $(cat /proc/loadavg)"
    swift --version 2>/dev/null | head -1 || true
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
TCK=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# The load daemon's configuration, as protocol-load.sh's (section 1): synthetic demand, a pool of
# at most 4,096 ads. With the built-in loader the framed step's Borrow + unshown Return pairs
# (~250k a second, every ad back at once) raised the demand-sized pool to ~500k ads in 20 s;
# its pool store journal then outgrew the compaction (a replay above 4,096 ads), framed rounds
# fell to 8k calls/s, and the next round's daemon restored it all while it was measured.
cat > "$WORK/adloaderd.json" <<'JSON'
{ "log": { "level": "warning" },
  "sources": { "synthetic": { "latency": "5ms", "fillRate": 1, "seed": 7 } },
  "loaders": { "default": { "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,
                            "leaseTimeout": "60s" } } }
JSON

# BorrowRequest { ad_unit_id: "bench", slot_key: "cell-1" } with the 5-byte gRPC prefix.
printf '\x00\x00\x00\x00\x0f\x0a\x05bench\x1a\x06cell-1' > "$WORK/borrow.grpc"

# measure NAME PID URL [h2load args...]: WARMUP seconds of the same load, then DURATION measured.
measure() {
    local name=$1 pid=$2 url=$3
    shift 3
    h2load -c "$CONNS" -m "$STREAMS" -D "$WARMUP" "$@" "$url" > /dev/null 2>&1 || true
    local before after log calls rate
    before=$(ticks "$pid")
    log=$(h2load -c "$CONNS" -m "$STREAMS" -D "$DURATION" "$@" "$url" 2>&1)
    after=$(ticks "$pid")
    calls=$(printf '%s\n' "$log" | sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p')
    rate=$(printf '%s\n' "$log" | sed -n 's/^finished in [0-9.]*s, \([0-9.]*\) req\/s.*/\1/p')
    local failed
    failed=$(printf '%s\n' "$log" | sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p')
    local cpu_us
    cpu_us=$(awk -v t="$((after - before))" -v hz="$TCK" -v n="${calls:-0}" 'BEGIN { if (n > 0) printf "%.2f", t / hz * 1e6 / n; else print "nan" }')
    printf '%-22s %4sx%-3s %12s calls/s  %8s us CPU/call  (%s calls, %s failed)\n' "$name" "$CONNS" "$STREAMS" "${rate:-?}" "$cpu_us" "${calls:-?}" "${failed:-?}"
    echo "$name,$CONNS,$STREAMS,$DURATION,${rate:-},${calls:-},$cpu_us" >> "$OUT/grpc-load.csv"
}

GRPC_HEADERS=(-H 'content-type: application/grpc' -H 'te: trailers')
echo "server,conns,streams,seconds,calls_per_s,calls,server_cpu_us_per_call" > "$OUT/grpc-load.csv"
for run in $(seq "$RUNS"); do
    # adloaderd, gRPC transport.
    port=$(free_port)
    # A store of its own per round: no round restores the pools of the one before.
    "$BIN" --config "$WORK/adloaderd.json" --port "$port" --pool-store-path "$WORK/load-pools-$run.sqlite" \
        > "$WORK/adloaderd.out" 2> "$WORK/adloaderd.err" &
    pid=$!; PIDS+=("$pid")
    wait_port "$port"
    h2load -n 1 "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc" "http://127.0.0.1:$port/adloader.v1.NativeAdLoader/Borrow" > /dev/null
    sleep 0.2  # the first Borrow lent nothing yet (the pool was empty): let it fill
    measure "adloaderd gRPC Borrow" "$pid" "http://127.0.0.1:$port/adloader.v1.NativeAdLoader/Borrow" \
        "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc"
    # The same daemon over the framed protocol, same connections x calls in flight
    # (ProtocolLoadBench: Borrow + unshown Return pairs, each a call), for the CPU-per-call ratio.
    if [ -x "$LOADBENCH" ]; then
        json=$("$LOADBENCH" --port "$port" --connections "$CONNS" --depth "$STREAMS" --duration "$DURATION" \
            --warmup "$WARMUP" --server-pid "$pid" --quiet --label framed || true)
        rate=$(printf '%s' "$json" | sed -n 's/.*"calls_per_s":\([0-9.]*\).*/\1/p')
        calls=$(printf '%s' "$json" | sed -n 's/.*"calls":\([0-9]*\).*/\1/p')
        cpu_us=$(printf '%s' "$json" | sed -n 's/.*"server_cpu_us_per_call":\([0-9.]*\).*/\1/p')
        printf '%-22s %4sx%-3s %12s calls/s  %8s us CPU/call  (%s calls)\n' "adloaderd framed B+R" "$CONNS" "$STREAMS" \
            "${rate:-?}" "${cpu_us:-?}" "${calls:-?}"
        echo "adloaderd framed Borrow+Return,$CONNS,$STREAMS,$DURATION,${rate:-},${calls:-},${cpu_us:-}" >> "$OUT/grpc-load.csv"
    fi
    kill "$pid"; wait "$pid" 2>/dev/null || true

    # The C++ gRPC callback server.
    if [ -x "$BUILD/grpc_cpp/grpc_cpp_server" ] && [ -f "$BUILD/req.grpc" ]; then
        port=$(free_port)
        "$BUILD/grpc_cpp/grpc_cpp_server" "$port" > /dev/null 2>&1 &
        pid=$!; PIDS+=("$pid")
        wait_port "$port"
        measure "C++ gRPC callback" "$pid" "http://127.0.0.1:$port/anchors.AdService/Borrow" \
            "${GRPC_HEADERS[@]}" -d "$BUILD/req.grpc"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    else
        echo "C++ gRPC peer skipped: build it with $PEERS_SRC/grpc_cpp/build.sh and $PEERS_SRC/gen_payloads.py" >&2
    fi

    # nghttpd, a 400-byte static file over h2c.
    if command -v nghttpd > /dev/null && [ -f "$BUILD/www/ad.bin" ]; then
        port=$(free_port)
        nghttpd --no-tls -d "$BUILD/www" "$port" > /dev/null 2>&1 &
        pid=$!; PIDS+=("$pid")
        wait_port "$port"
        measure "nghttpd static 400 B" "$pid" "http://127.0.0.1:$port/ad.bin"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    else
        echo "nghttpd peer skipped (nghttp2-server, and $PEERS_SRC/gen_payloads.py for the file)" >&2
    fi
done
# latency NAME URL BODY: one connection, one stream, pinned with the server to CPU 0.
latency() {
    local name=$1 url=$2 body=$3
    taskset -c 0 h2load -c 1 -m 1 -D 1 "${GRPC_HEADERS[@]}" -d "$body" "$url" > /dev/null 2>&1 || true
    rm -f "$WORK/latency.log"
    local log
    log=$(taskset -c 0 h2load -c 1 -m 1 -D "$LATENCY" "${GRPC_HEADERS[@]}" -d "$body" --log-file="$WORK/latency.log" "$url" 2>&1)
    local failed
    failed=$(printf '%s\n' "$log" | sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p')
    # Column 3: microseconds from the request's start to the end of its response.
    sort -n -k3 "$WORK/latency.log" | awk -v name="$name" -v failed="${failed:-?}" -v out="$OUT/grpc-latency.csv" '
        { v[NR] = $3 }
        END {
            if (NR == 0) { print name ": no requests" > "/dev/stderr"; exit }
            p50 = v[int(NR * 0.50 + 0.5) > 0 ? int(NR * 0.50 + 0.5) : 1]
            p99 = v[int(NR * 0.99 + 0.5) > 0 ? int(NR * 0.99 + 0.5) : 1]
            printf "%-22s 1x1 pinned  %8d calls  p50 %6d us  p99 %6d us  (%s failed)\n", name, NR, p50, p99, failed
            printf "%s,%d,%d,%d\n", name, NR, p50, p99 >> out
        }'
}
echo "server,calls,p50_us,p99_us" > "$OUT/grpc-latency.csv"
port=$(free_port)
taskset -c 0 "$BIN" --port "$port" --synthetic-latency 5ms --log-level warning --pool-store-path "$WORK/pinned-pools.sqlite" > "$WORK/adloaderd.out" 2> "$WORK/adloaderd.err" &
pid=$!; PIDS+=("$pid")
wait_port "$port"
h2load -n 1 "${GRPC_HEADERS[@]}" -d "$WORK/borrow.grpc" "http://127.0.0.1:$port/adloader.v1.NativeAdLoader/Borrow" > /dev/null
sleep 0.2
latency "adloaderd gRPC Borrow" "http://127.0.0.1:$port/adloader.v1.NativeAdLoader/Borrow" "$WORK/borrow.grpc"
kill "$pid"; wait "$pid" 2>/dev/null || true
if [ -x "$BUILD/grpc_cpp/grpc_cpp_server" ] && [ -f "$BUILD/req.grpc" ]; then
    port=$(free_port)
    taskset -c 0 "$BUILD/grpc_cpp/grpc_cpp_server" "$port" > /dev/null 2>&1 &
    pid=$!; PIDS+=("$pid")
    wait_port "$port"
    latency "C++ gRPC callback" "http://127.0.0.1:$port/anchors.AdService/Borrow" "$BUILD/req.grpc"
    kill "$pid"; wait "$pid" 2>/dev/null || true
fi

if [ "$COUNTS" = 1 ]; then
    echo "allocations per call ($ALLOC_CALLS calls after a warm-up of $((ALLOC_CALLS / 5))):"
    Benchmarks/allocations-per-call.sh --calls "$ALLOC_CALLS" "$BIN" | tee "$OUT/allocations.txt"
    echo "instructions per call (callgrind, slope of $CG_CALLS and $((2 * CG_CALLS)) calls; framed: $FRAMED_CG_CALLS and $((2 * FRAMED_CG_CALLS))):"
    {
        CALLS=$CG_CALLS Benchmarks/callgrind-per-call.sh --grpc "$BIN" | sed 's/^/grpc /'
        CALLS=$CG_CALLS Benchmarks/callgrind-per-call.sh --nghttpd | sed 's/^/nghttpd /'
        # More framed calls: at ~6k instructions a call, 20k and 40k calls left the slope to
        # the daemon's start-up noise (two runs of one binary gave 6.7k and 12.5k).
        if [ -x "$LOADBENCH" ]; then
            CALLS=$FRAMED_CG_CALLS Benchmarks/callgrind-per-call.sh "$BIN" | sed 's/^/framed /'
        fi
    } | tee "$OUT/callgrind.txt"
fi

# The target table: medians over the rounds, and the ratios.
python3 - "$OUT" "$COUNTS" <<'PY'
import csv, re, statistics, sys
out, counts = sys.argv[1], sys.argv[2] == "1"
rows = {}
for row in csv.DictReader(open(f"{out}/grpc-load.csv")):
    rows.setdefault(row["server"], []).append(row)
def median(server, field):
    values = [float(r[field]) for r in rows.get(server, []) if r[field] not in ("", "nan")]
    return statistics.median(values) if values else None
latency = {r["server"]: r for r in csv.DictReader(open(f"{out}/grpc-latency.csv"))}
def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else ""
def fmt(v, digits=2):
    return "" if v is None else f"{v:.{digits}f}"
grpc, cpp, nghttpd, framed = "adloaderd gRPC Borrow", "C++ gRPC callback", "nghttpd static 400 B", "adloaderd framed Borrow+Return"
summary = []
for server in (grpc, cpp, nghttpd, framed):
    summary.append((f"{server}: calls/s (median of {len(rows.get(server, []))})", fmt(median(server, "calls_per_s"), 0), ""))
    summary.append((f"{server}: server CPU per call, us", fmt(median(server, "server_cpu_us_per_call")), ""))
summary.append(("gRPC Borrow CPU per call / nghttpd static CPU per request", ratio(median(grpc, "server_cpu_us_per_call"), median(nghttpd, "server_cpu_us_per_call")), "<= 1.5"))
summary.append(("gRPC Borrow calls/s / C++ gRPC server calls/s", ratio(median(grpc, "calls_per_s"), median(cpp, "calls_per_s")), ">= 2"))
for server in (grpc, cpp):
    if server in latency:
        summary.append((f"{server}: pinned 1x1 p50 us", latency[server]["p50_us"], "adloaderd below C++" if server == grpc else ""))
        summary.append((f"{server}: pinned 1x1 p99 us", latency[server]["p99_us"], ""))
if counts:
    for line in open(f"{out}/allocations.txt"):
        m = re.search(r": (grpc|framed): ([\d.]+) allocations per call", line)
        if m:
            summary.append((f"heap allocations per {m.group(1)} call", m.group(2), "<= 20" if m.group(1) == "grpc" else ""))
    instructions = {}
    for line in open(f"{out}/callgrind.txt"):
        m = re.match(r"(grpc|nghttpd|framed) .*: (\d+) instructions per call", line)
        if m:
            instructions[m.group(1)] = int(m.group(2))
    for kind, label in (("grpc", "gRPC Borrow"), ("nghttpd", "nghttpd static request"), ("framed", "framed Borrow+Return call")):
        if kind in instructions:
            summary.append((f"instructions per {label}", str(instructions[kind]), "no worse than before" if kind == "framed" else ""))
    if "grpc" in instructions and "nghttpd" in instructions:
        summary.append(("gRPC Borrow instructions / nghttpd's", ratio(instructions["grpc"], instructions["nghttpd"]), "<= 1.5"))
with open(f"{out}/grpc-summary.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["measure", "value", "target"])
    writer.writerows(summary)
width = max(len(m) for m, _, _ in summary)
print("summary (grpc-summary.csv):")
for measure, value, target in summary:
    print(f"  {measure:<{width}}  {value:>10}  {target}")
PY
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
echo "wall time: $(( $(date +%s) - STARTED )) s" | tee -a "$OUT/machine.txt"
echo "results in $OUT: grpc-load.csv grpc-latency.csv allocations.txt callgrind.txt grpc-summary.csv grpc-load.txt machine.txt"
