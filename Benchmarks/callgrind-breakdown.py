#!/usr/bin/env python3
"""Where the instructions per call go: the slope between two callgrind runs of one binary
(N and 2N calls, as Benchmarks/callgrind-per-call.sh keeps them with KEEP=DIR), by object
(shared library or the daemon) and by function, from callgrind_annotate's self cost.

    Benchmarks/callgrind-breakdown.py SMALL LARGE CALLS [--functions K]

SMALL and LARGE are the callgrind output files of the N- and 2N-call runs; CALLS is N.
Functions are named when the binary kept its symbols (callgrind-per-call.sh strips debug
information only)."""
import re
import subprocess
import sys


def self_costs(path):
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", path], check=True, capture_output=True, text=True
    ).stdout
    costs = {}
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
        if match and "PROGRAM TOTALS" not in match.group(2):
            costs[match.group(2)] = costs.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    return costs


def main():
    args = sys.argv[1:]
    top = 40
    if "--functions" in args:
        index = args.index("--functions")
        top = int(args[index + 1])
        del args[index : index + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    small, large, calls = self_costs(args[0]), self_costs(args[1]), int(args[2])
    per_call = {name: (large.get(name, 0) - small.get(name, 0)) / calls for name in set(small) | set(large)}
    objects = {}
    for name, cost in per_call.items():
        match = re.search(r"\[([^\]]*)\]\s*$", name)
        obj = match.group(1).rsplit("/", 1)[-1] if match else "?"
        obj = re.sub(r"\.so[.\d]*$", "", obj)
        objects[obj] = objects.get(obj, 0) + cost
    print(f"instructions per call by object (total {sum(per_call.values()):.0f}):")
    for obj, cost in sorted(objects.items(), key=lambda item: -item[1]):
        if abs(cost) >= 20:
            print(f"  {cost:8.0f}  {obj}")
    print(f"top {top} functions (self cost per call):")
    for name, cost in sorted(per_call.items(), key=lambda item: -item[1])[:top]:
        short = re.sub(r"\s*\[[^\]]*\]\s*$", "", name).replace("???:", "")
        print(f"  {cost:8.0f}  {short[:160]}")


if __name__ == "__main__":
    main()
