#!/usr/bin/env bash
# Runs the adloaderd benchmarks and writes their results to bench-results/ (gitignored).
#
#   Benchmarks/run.sh            release build, every step at full size, plots, summary (make bench)
#   Benchmarks/run.sh --smoke    debug build, tiny runs of every benchmark, no plots (make bench-smoke)
#   Benchmarks/run.sh feedscroll corescaling plots    only the steps named
#
# Steps, in order: protocol (part 1, not written yet), feedscroll, corescaling, openrtb, plots.
# A new benchmark is one more step_<name> function and one more name in ALL_STEPS.
# OUT=dir changes the output directory. Numbers on a shared machine are noisy: compare runs
# made on the same machine, and read BENCHMARKS.md for how they were made.
set -euo pipefail
cd "$(dirname "$0")/.."

SMOKE=0
STEPS=()
for argument in "$@"; do
    case "$argument" in
        --smoke) SMOKE=1 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) STEPS+=("$argument") ;;
    esac
done
ALL_STEPS=(protocol feedscroll corescaling openrtb plots)
[ ${#STEPS[@]} -gt 0 ] || STEPS=("${ALL_STEPS[@]}")

if [ "$SMOKE" = 1 ]; then
    CONFIG=debug
    OUT=${OUT:-bench-results/smoke}
    SIZE_FLAGS=(--smoke)
else
    CONFIG=release
    OUT=${OUT:-bench-results}
    SIZE_FLAGS=()
fi
BIN=.build/$CONFIG
mkdir -p "$OUT"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

build() {
    for product in "$@"; do
        local log
        if ! log=$(swift build -c "$CONFIG" --product "$product" 2>&1); then
            echo "$log" >&2
            echo "build of $product failed" >&2
            exit 1
        fi
        echo "$log" | grep -E "warning: .*Benchmarks/|Build of product" || true
    done
}

describe_machine() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
        echo "nproc: $(nproc)"
        echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
        echo "kernel: $(uname -r)"
        echo "swift: $(swift --version 2>&1 | head -1)"
        echo "build: $CONFIG"
    } > "$OUT/machine.txt"
    cat "$OUT/machine.txt"
}

# Part 1 of issue 4: protocol load against the daemon, side by side with redis-benchmark
# (Benchmarks/protocol-load.sh: builds, starts both servers on loopback, stops them on exit).
# Its table (calls/s, latency, server CPU per call) is kept in protocol-load.txt for the summary.
step_protocol() {
    echo "== protocol load: adloaderd vs redis GET"
    if [ "$SMOKE" = 1 ]; then
        Benchmarks/protocol-load.sh --smoke --out "$OUT" 2>&1 | tee "$OUT/protocol-load.txt"
    else
        Benchmarks/protocol-load.sh --out "$OUT" 2>&1 | tee "$OUT/protocol-load.txt"
    fi
}

# Issue 9: a minute of Borrow + Return(shown) against the openrtb source on the loopback
# exchange stub, beside the synthetic source (Benchmarks/openrtb-load.py).
step_openrtb() {
    echo "== openrtb load: upstream requests per lent ad, notices, memory and fds"
    if [ "$SMOKE" = 1 ]; then
        python3 Benchmarks/openrtb-load.py --smoke --out "$OUT" 2>&1 | tee "$OUT/openrtb-load.txt"
    else
        python3 Benchmarks/openrtb-load.py --out "$OUT" 2>&1 | tee "$OUT/openrtb-load.txt"
    fi
}

step_feedscroll() {
    build FeedScrollBench
    echo "== feed-scroll simulation"
    "$BIN/FeedScrollBench" "${SIZE_FLAGS[@]}" --out "$OUT" | tee "$OUT/feedscroll.txt"
    echo "== feed-scroll simulation, plan mode: the same trace through per-cell Borrow and through Plan"
    "$BIN/FeedScrollBench" "${SIZE_FLAGS[@]}" --plan | tee "$OUT/feedscroll-plan.txt"
    if [ "$SMOKE" = 0 ]; then
        echo "== feed-scroll simulation, low traffic (500 users in 2 h), same pool size"
        "$BIN/FeedScrollBench" --users 500 --retained 4000 --sweep 100,500,1000,4000 --warmup 3600 \
            --label feedscroll-lowtraffic --out "$OUT" | tee "$OUT/feedscroll-lowtraffic.txt"
    fi
}

step_corescaling() {
    build CoreScalingBench
    echo "== core scaling"
    "$BIN/CoreScalingBench" "${SIZE_FLAGS[@]}" --out "$OUT" | tee "$OUT/corescaling.txt"
}

step_plots() {
    [ "$SMOKE" = 0 ] || return 0
    if ! command -v gnuplot >/dev/null; then
        echo "== installing gnuplot-nox"
        $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq gnuplot-nox >/dev/null
    fi
    echo "== plots"
    gnuplot -e "dir='$OUT'" Benchmarks/plots.gp
    ls "$OUT"/*.png
}

summary() {
    echo
    echo "== summary ($OUT)"
    if [ -f "$OUT/protocol-load.txt" ]; then
        echo "-- protocol-load.txt"
        sed -n '/^protocol-load (/,/^(half load/p' "$OUT/protocol-load.txt"
    fi
    for file in feedscroll.txt corescaling.txt; do
        [ -f "$OUT/$file" ] || continue
        echo "-- $file"
        sed -n '/^targets/,/^$/p' "$OUT/$file"
    done
}

describe_machine
for step in "${STEPS[@]}"; do
    case " ${ALL_STEPS[*]} " in *" $step "*) "step_$step" ;; *) echo "unknown step $step (steps: ${ALL_STEPS[*]})" >&2; exit 2 ;; esac
done
summary
