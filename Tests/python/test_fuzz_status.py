"""Fuzz/code_id.py (issue 28): a fuzz target's code id changes exactly when code it compiles
changes, and `status` counts only the recorded runs on HEAD's code. Runs on a scratch clone of
the repository (git only; no build)."""

import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, cwd):
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def clone(tmp_path):
    path = str(tmp_path / "repo")
    run("git", "clone", "--quiet", "--shared", "--no-checkout", ROOT, path, cwd=str(tmp_path))
    head = run("git", "rev-parse", "HEAD", cwd=ROOT).strip()
    run("git", "checkout", "--quiet", head, cwd=path)
    # This working tree's own copy of the script and the README (they may be uncommitted here).
    for file in ["Fuzz/code_id.py", "Fuzz/README.md"]:
        with open(os.path.join(ROOT, file)) as source, open(os.path.join(path, file), "w") as target:
            target.write(source.read())
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "script", "--allow-empty",
        cwd=path)
    return path


def ids(path, *targets):
    out = run("python3", "Fuzz/code_id.py", "id", *targets, cwd=path)
    return dict(line.split() for line in out.splitlines())


def commit(path, file, text):
    with open(os.path.join(path, file), "a") as f:
        f.write(text)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "change", cwd=path)


def test_the_closure_follows_the_imports_and_package_swift(clone):
    envelope = run("python3", "Fuzz/code_id.py", "paths", "envelope", cwd=clone).split()
    assert "Sources/AdLoaderWire" in envelope and "Sources/CAdLoaderProto" in envelope
    assert "Fuzz/AdLoaderFuzz/EnvelopeFuzz.swift" in envelope
    assert "Sources/AdLoaderCore" not in envelope and "Sources/AdLoaderGRPC" not in envelope
    tls = run("python3", "Fuzz/code_id.py", "paths", "tls-session", cwd=clone).split()
    assert "Sources/AdLoaderTLS" in tls and "Sources/COpenSSL" in tls and "Sources/AdLoaderWire" not in envelope[:0]
    configuration = run("python3", "Fuzz/code_id.py", "paths", "configuration", cwd=clone).split()
    assert "Sources/AdLoaderDaemon" in configuration and "Sources/AdLoaderConfiguration" in configuration


def test_an_id_changes_only_with_the_code_the_target_compiles(clone):
    before = ids(clone, "envelope", "configuration", "tls-session")
    commit(clone, "Sources/AdLoaderCore/Exports.swift", "\n// a change in the core\n")
    after = ids(clone, "envelope", "configuration", "tls-session")
    assert after["envelope"] == before["envelope"]
    assert after["configuration"] != before["configuration"]
    assert after["tls-session"] != before["tls-session"]  # TLS depends on the core
    commit(clone, "Fuzz/AdLoaderFuzz/PlacementFuzz.swift", "\n// another target's harness\n")
    assert ids(clone, "envelope")["envelope"] == before["envelope"]
    # Uncommitted edits in a target's paths: marked, never counted.
    with open(os.path.join(clone, "Sources/AdLoaderWire", os.listdir(os.path.join(clone, "Sources/AdLoaderWire"))[0]),
              "a") as f:
        f.write("\n")
    assert ids(clone, "envelope")["envelope"] == before["envelope"] + "+changes"


def test_status_counts_rows_on_heads_code_only(clone):
    current = ids(clone, "envelope")["envelope"]
    readme = os.path.join(clone, "Fuzz/README.md")
    # Only the rows below: the README's own rows may already count on this code.
    text = "".join(line for line in open(readme) if not line.startswith("| 2026-"))
    marker = "<!-- Fuzz/run.sh appends rows above this line -->"
    rows = (f"| 2026-12-02 | envelope | 6,000,000 | abc1234 | {current} | 16000 | 1 / 2 | no finding |\n"
            f"| 2026-12-02 | envelope | 5,000,000 | abc1234 | {current} | 16000 | 1 / 2 | no finding |\n"
            f"| 2026-12-02 | envelope | 9,000,000 | abc1234 | 000000000000 | 16000 | 1 / 2 | no finding |\n"
            f"| 2026-12-02 | envelope | 9,000,000 | abc1234 | {current} | 16000 | 1 / 2 | FAILED (exit 1) |\n")
    with open(readme, "w") as f:
        f.write(text.replace(marker, rows + marker))
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "rows", cwd=clone)
    status = run("python3", "Fuzz/code_id.py", "status", cwd=clone)
    line = next(l for l in status.splitlines() if l.startswith("envelope "))
    assert "6,000,000" in line and "11,000,000" in line and line.endswith("yes (sum of runs)"), line
    line = next(l for l in status.splitlines() if l.startswith("frame-decoder "))
    assert line.split()[2:4] == ["0", "0"] and line.endswith("no"), line
