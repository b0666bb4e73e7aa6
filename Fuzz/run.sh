#!/usr/bin/env bash
# Builds the libFuzzer targets (release, ASan, libFuzzer; own scratch path .build-fuzz) and
# runs them. See Fuzz/README.md.
#
#   Fuzz/run.sh                 every target for FUZZ_SECONDS (default 300) each (make fuzz)
#   Fuzz/run.sh --smoke         every target for FUZZ_SMOKE_SECONDS (default 4) each, from the
#                               committed seeds only (make fuzz-smoke, part of make test)
#   Fuzz/run.sh envelope ...    only the targets named; extra libFuzzer flags in FUZZ_FLAGS
#   FUZZ_RUNS=10000000 make fuzz each target to that many executions (libFuzzer -runs), with no
#                               time bound unless FUZZ_SECONDS is also given
#   FUZZ_NICE=0 Fuzz/run.sh ... at normal priority (default nice 10, which a loaded machine starves)
#   Fuzz/run.sh --status        per target: the code id of HEAD and the best and summed runs
#                               recorded on that code (make fuzz-status; builds nothing)
#
# A long run (not the smoke) appends a row to the "Runs by make fuzz" table of Fuzz/README.md:
# date, target, executions, the commit fuzzed ("+changes" when the tree differed from it), the
# target's code id (Fuzz/code_id.py: a hash of its harness and of every module it compiles, so a
# run stays valid while main changes elsewhere), exec/s, coverage and the outcome. Commit the row.
#
# Long runs keep their corpus in .build-fuzz/corpus/<target> (grown from Fuzz/corpus/<target>)
# and write crashes to .build-fuzz/findings/<target>/ (not artifacts/: SwiftPM owns and empties
# <scratch>/artifacts on every build, which took a running fuzzer's crash directory away); the
# last lines per run are appended to
# .build-fuzz/results.txt. Exit status is non-zero when a target fails (crash, leak, timeout).
set -euo pipefail
cd "$(dirname "$0")/.."

SMOKE=0
TARGETS=()
for argument in "$@"; do
    case "$argument" in
        --smoke) SMOKE=1 ;;
        --status) exec python3 Fuzz/code_id.py status ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) TARGETS+=("$argument") ;;
    esac
done
ALL_TARGETS=(frame-decoder envelope proto-scanner configuration http2-session bid-response consent placement tls-session)
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")

product() {
    case "$1" in
        frame-decoder) echo FrameDecoderFuzz ;;
        envelope) echo EnvelopeFuzz ;;
        proto-scanner) echo ProtoScannerFuzz ;;
        configuration) echo ConfigurationFuzz ;;
        http2-session) echo HTTP2SessionFuzz ;;
        bid-response) echo BidResponseFuzz ;;
        consent) echo ConsentFuzz ;;
        placement) echo PlacementFuzz ;;
        tls-session) echo TLSSessionFuzz ;;
        *) echo "unknown fuzz target: $1 (targets: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
    esac
}

SCRATCH=.build-fuzz
# -sanitize=fuzzer,address in one flag: with SwiftPM's --sanitize, swiftc keeps only the last
# one and Swift code goes without ASan. The toolchain's own clang, lld and compiler-rt do the
# linking, so nothing beyond the toolchain is needed. Products one at a time: the executables
# with a main.swift do not link with libFuzzer's main.
SWIFT_FLAGS=(-c release --scratch-path "$SCRATCH" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
    -Xswiftc -use-ld=lld)
for target in "${TARGETS[@]}"; do
    p=$(product "$target")
    if ! log=$(nice -n 5 swift build "${SWIFT_FLAGS[@]}" --product "$p" 2>&1); then
        echo "$log" >&2
        echo "fuzz build of $p failed" >&2
        exit 1
    fi
    echo "$log" | grep -E "warning: " || true
done
BIN=$(swift build "${SWIFT_FLAGS[@]}" --show-bin-path)

# Symbolized ASan reports; leaks are checked by libFuzzer after each input. The Swift runtime's
# backtracer is off: under ASan it reports its own memory probing as a second crash.
export SWIFT_BACKTRACE=enable=no
SYMBOLIZER=$(dirname "$(readlink -f "$(command -v swift)")")/llvm-symbolizer
[ -x "$SYMBOLIZER" ] && export ASAN_SYMBOLIZER_PATH="$SYMBOLIZER"
# ASan records no stack per allocation (malloc_context_size=0): every check stays, only a
# report's "allocated here / freed here" stacks are missing, and a saved reproducer replayed
# with ASAN_OPTIONS= (the defaults) prints them. Measured on bid-response, 5,000 runs from the
# seeds: 11.1 CPU s with the defaults, 6.5 with this (1.7x the executions per CPU second).
export ASAN_OPTIONS=${ASAN_OPTIONS-malloc_context_size=0}

RUNS_EACH=
if [ "$SMOKE" = 1 ]; then
    SECONDS_EACH=${FUZZ_SMOKE_SECONDS:-4}
elif [ -n "${FUZZ_RUNS:-}" ]; then
    case "$FUZZ_RUNS" in *[!0-9]*|'') echo "FUZZ_RUNS must be a count of executions, got $FUZZ_RUNS" >&2; exit 2 ;; esac
    RUNS_EACH=$FUZZ_RUNS
    SECONDS_EACH=${FUZZ_SECONDS:-0}  # 0: no time bound
else
    SECONDS_EACH=${FUZZ_SECONDS:-300}
fi
BOUND=(-max_total_time="$SECONDS_EACH")
[ -n "$RUNS_EACH" ] && BOUND+=(-runs="$RUNS_EACH")
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no -- Sources Fuzz Package.swift 2>/dev/null)" ] || COMMIT="$COMMIT+changes"

# Each target's code id, taken before the runs (a tree edited meanwhile does not change it).
declare -A CODE_ID=()
if [ "$SMOKE" != 1 ]; then
    while read -r name id; do CODE_ID[$name]=$id; done < <(python3 Fuzz/code_id.py id "${TARGETS[@]}")
fi

# CHILD_CPU: the CPU seconds (user + system) this shell's finished children have used so far
# (bash's `times`). Not $(child_cpu): in a subshell `times` sees no children; so it goes to a file.
child_cpu() {
    times > "$SCRATCH/times.$$"
    CHILD_CPU=$(tail -1 "$SCRATCH/times.$$" \
        | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] } print n }')
    rm -f "$SCRATCH/times.$$"
}

# Appends one row to the results table of Fuzz/README.md (before its marker line); under a lock,
# for runs of several targets side by side.
record() {
    local row="| $(date -u +%Y-%m-%d) | $1 | $2 | $COMMIT | ${CODE_ID[$1]} | $3 | $4 | $5 |"
    local readme=Fuzz/README.md marker='<!-- Fuzz/run.sh appends rows above this line -->'
    grep -qF "$marker" "$readme" || return 0
    (
        flock 9
        awk -v row="$row" -v marker="$marker" '$0 == marker { print row } { print }' "$readme" > "$readme.tmp.$$" \
            && mv "$readme.tmp.$$" "$readme"
    ) 9> "$SCRATCH/readme.lock"
}
read -r -a EXTRA <<< "${FUZZ_FLAGS:-}"
mkdir -p "$SCRATCH/findings"
failed=0
for target in "${TARGETS[@]}"; do
    p=$(product "$target")
    seeds=Fuzz/corpus/$target
    artifacts=$SCRATCH/findings/$target/
    mkdir -p "$artifacts"
    dictionary=()
    [ -f "Fuzz/dictionaries/$target.dict" ] && dictionary=(-dict="Fuzz/dictionaries/$target.dict")
    if [ "$SMOKE" = 1 ]; then
        # A scratch corpus: the run starts from the seeds and leaves nothing behind.
        work=$(mktemp -d)
    else
        work=$SCRATCH/corpus/$target
        mkdir -p "$work"
    fi
    log=$SCRATCH/$target.log
    [ "$SMOKE" = 1 ] && log=$SCRATCH/$target.smoke.log  # a long run's log stays for its row
    status=0
    child_cpu
    cpu_before=$CHILD_CPU
    # Frame decoder inputs are fed three ways with checks at every byte: short inputs keep it
    # fast (the input layout repeats the stream to reach big ones).
    max_len=4096
    [ "$target" = frame-decoder ] && max_len=1024
    nice -n "${FUZZ_NICE:-10}" "$BIN/$p" "${BOUND[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
        -print_final_stats=1 -artifact_prefix="$artifacts" "${dictionary[@]}" ${EXTRA[@]+"${EXTRA[@]}"} \
        "$work" "$seeds" > "$log" 2>&1 || status=$?
    child_cpu
    cpu=$(awk -v a="$cpu_before" -v b="$CHILD_CPU" 'BEGIN { printf "%.1f", b - a }')
    [ "$SMOKE" = 1 ] && rm -rf "$work"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    # Executions per CPU second: steadier than per wall second on a shared machine.
    per_cpu=$(awk -v r="${runs:-0}" -v c="$cpu" 'BEGIN { if (c > 0) printf "%d", r / c; else print "?" }')
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed -E 's/^#[0-9]+[[:space:]]+DONE[[:space:]]+//; s/ exec\/s.*//' || true)
    coverage=$(echo "$done_line" | sed -nE 's/.*cov: ([0-9]+) ft: ([0-9]+).*/\1 \/ \2/p')
    bound="${SECONDS_EACH}s"
    [ -n "$RUNS_EACH" ] && bound="$RUNS_EACH runs asked"
    summary="$target: ${runs:-?} runs ($bound), ${speed:-?} exec/s, $per_cpu per CPU s (${cpu} s), ${done_line:-no DONE line}"
    if [ "$status" != 0 ]; then
        failed=1
        echo "FAILED $summary (exit $status); log: $log" >&2
        grep -E "ERROR: |Fatal error|Swift runtime failure|SUMMARY|Test unit written" "$log" | head -8 >&2 || true
    else
        echo "$summary"
    fi
    if [ "$SMOKE" != 1 ]; then
        echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $COMMIT ${CODE_ID[$target]} $summary" >> "$SCRATCH/results.txt"
        outcome="no finding"
        [ "$status" = 0 ] || outcome="FAILED (exit $status), see $artifacts"
        runs_shown=$(printf "%'d" "${runs:-0}" 2>/dev/null || echo "${runs:-?}")
        record "$target" "$runs_shown" "${speed:-?} ($per_cpu per CPU s)" "${coverage:-?}" "$outcome"
    fi
done
exit $failed
