#!/usr/bin/env python3
"""What code a fuzz target runs, as one hash, and which recorded runs were on that code.

A target's "code id" hashes the git objects (`git rev-parse HEAD:PATH`) of its harness files
(Fuzz/AdLoaderFuzz/<Target>*.swift, the driver files every target shares, its Fuzz/<Target>/
entry and CLibFuzzer) and of every module in the dependency closure of the modules those files
import, as Package.swift declares them. A long run recorded with the same id ran on the same
source, however far main moved elsewhere. Package.swift, build flags, the toolchain and the
Debian libraries are not in the hash.

    Fuzz/code_id.py id TARGET...   one line per target: TARGET ID (ID+changes when the working
                                   tree differs from HEAD in one of its paths)
    Fuzz/code_id.py paths TARGET   the paths hashed, one per line
    Fuzz/code_id.py status         per target: its id, and the recorded runs of Fuzz/README.md
                                   ("Runs by make fuzz") on that id: the best one and the sum
                                   (`make fuzz-status`)
Standard library only; run from anywhere inside the repository.
"""

import hashlib
import os
import re
import subprocess
import sys

ROOT = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                      cwd=os.path.dirname(os.path.abspath(__file__)), check=True).stdout.strip()

# Target -> the harness files it runs (Fuzz/AdLoaderFuzz/NAME.swift and NAME+Seeds.swift each).
HARNESS = {
    "frame-decoder": ["FrameDecoderFuzz"],
    "envelope": ["EnvelopeFuzz", "ProtoScannerFuzz"],
    "proto-scanner": ["ProtoScannerFuzz", "EnvelopeFuzz"],
    "configuration": ["ConfigurationFuzz"],
    "http2-session": ["HTTP2SessionFuzz"],
    "bid-response": ["BidResponseFuzz"],
    "consent": ["ConsentFuzz"],
    "placement": ["PlacementFuzz"],
    "tls-session": ["TLSSessionFuzz"],
}
SHARED = ["FuzzDriver.swift", "FuzzFailure.swift", "FuzzFiles.swift", "FuzzTarget.swift"]
TARGET_CALL = re.compile(r"\.(target|executableTarget|systemLibrary|testTarget|plugin)\(")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, check=True).stdout


def package_targets():
    """name -> (source path, [dependency names]) from Package.swift's target calls."""
    text = open(os.path.join(ROOT, "Package.swift")).read()
    text = re.sub(r"//[^\n]*", "", text)
    targets = {}
    for match in TARGET_CALL.finditer(text):
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        call = text[match.end():i - 1]
        name = re.search(r'name:\s*"([^"]+)"', call)
        if not name:
            continue
        path = re.search(r'path:\s*"([^"]+)"', call)
        deps = re.search(r"dependencies:\s*\[([^\]]*)\]", call)
        folder = "Tests" if match.group(1) == "testTarget" else "Sources"
        targets[name.group(1)] = (path.group(1) if path else f"{folder}/{name.group(1)}",
                                  re.findall(r'"([^"]+)"', deps.group(1)) if deps else [])
    return targets


def paths(target):
    if target not in HARNESS:
        raise SystemExit(f"unknown fuzz target: {target} (targets: {' '.join(HARNESS)})")
    harness_dir = os.path.join(ROOT, "Fuzz/AdLoaderFuzz")
    files = [f"Fuzz/AdLoaderFuzz/{f}" for f in SHARED]
    for stem in HARNESS[target]:
        files += [f"Fuzz/AdLoaderFuzz/{f}" for f in sorted(os.listdir(harness_dir))
                  if f in (f"{stem}.swift", f"{stem}+Seeds.swift")]
    files += [f"Fuzz/{HARNESS[target][0]}", "Fuzz/CLibFuzzer"]
    imported = set()
    for f in files:
        full = os.path.join(ROOT, f)
        if os.path.isfile(full):
            imported |= set(re.findall(r"^\s*(?:@\w+\s+)*(?:public |internal |private )?import (\w+)",
                                       open(full).read(), re.M))
    known = package_targets()
    closure, todo = set(), [m for m in imported if m in known]
    while todo:
        module = todo.pop()
        if module in closure:
            continue
        closure.add(module)
        todo += [d for d in known[module][1] if d in known]
    return sorted(set(files) | {known[m][0] for m in closure})


def code_id(target):
    listed = paths(target)
    objects = {}
    for entry in git("ls-tree", "HEAD", "--", *listed).splitlines():
        meta, path = entry.split("\t", 1)
        objects[path] = meta.split()[2]
    lines = [f"{p}\t{objects.get(p, 'absent')}\n" for p in listed]
    digest = hashlib.sha1("".join(lines).encode()).hexdigest()[:12]
    dirty = git("status", "--porcelain", "--untracked-files=all", "--", *listed).strip()
    return digest + ("+changes" if dirty else "")


def recorded_runs():
    """(target, runs, code id, date, commit) of the rows that carry a code id."""
    rows = []
    for line in open(os.path.join(ROOT, "Fuzz/README.md")):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | date | target | runs | code | code id | exec/s | coverage | outcome |
        if len(cells) == 8 and re.fullmatch(r"\d{4}-\d\d-\d\d", cells[0]) and cells[7] == "no finding":
            runs = cells[2].replace(",", "")
            if runs.isdigit():
                rows.append((cells[1], int(runs), cells[4], cells[0], cells[3]))
    return rows


def status():
    rows = recorded_runs()
    goal = 10_000_000
    print(f"{'target':<14} {'code id':<20} {'best run':>12} {'sum':>12}  10 M on this code")
    for target in HARNESS:
        current = code_id(target)
        same = [r for r in rows if r[0] == target and r[2] == current and not current.endswith("+changes")]
        best = max((r[1] for r in same), default=0)
        total = sum(r[1] for r in same)
        verdict = "yes (one run)" if best >= goal else "yes (sum of runs)" if total >= goal else "no"
        print(f"{target:<14} {current:<20} {best:>12,} {total:>12,}  {verdict}")


def main(argv):
    if len(argv) >= 2 and argv[0] == "id":
        for target in argv[1:]:
            print(target, code_id(target))
    elif len(argv) == 2 and argv[0] == "paths":
        print("\n".join(paths(argv[1])))
    elif argv == ["status"]:
        status()
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
