"""dev/check-imports.py: passes on the tree, fails on a file that breaks a module rule, naming it.

Each case copies nothing: it builds a small tree in a temporary directory (Sources/<Module>/X.swift)
and runs the script on it with --root, as `make check-imports` runs it on the repository.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "dev", "check-imports.py")


def run(root):
    return subprocess.run([sys.executable, SCRIPT, "--root", str(root)], capture_output=True, text=True, timeout=60)


def tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_repository_passes():
    result = run(ROOT)
    assert result.returncode == 0, result.stderr
    assert "check-imports: ok" in result.stdout


@pytest.mark.parametrize(
    "rel, text, rule",
    [
        # The core imports no C module, no I/O module, no Foundation.
        ("Sources/AdLoaderCore/Pool.swift", "import AdLoaderTime\nimport CLibUV\n", "the domain is pure Swift"),
        ("Sources/AdLoaderCore/Pool.swift", "import AdLoaderUV\n", "the domain is pure Swift"),
        ("Sources/AdLoaderCore/Pool.swift", "@preconcurrency import Foundation\n", "the domain is pure Swift"),
        # Time imports nothing.
        ("Sources/AdLoaderTime/Clock.swift", "import Glibc\n", "time is dependency-free"),
        # Transports do not import each other; the service no transport.
        ("Sources/AdLoaderFramed/Conn.swift", "import AdLoaderGRPC\n", "never another transport"),
        ("Sources/AdLoaderGRPC/Conn.swift", "public import AdLoaderAdmin\n", "never another transport"),
        ("Sources/AdLoaderService/S.swift", "import AdLoaderUV\n", "no transport, no libuv"),
        # The wire format knows no I/O.
        ("Sources/AdLoaderWire/W.swift", "import AdLoaderUV\n", "the wire format is pure"),
        # The wire and the client library speak the model, never the core (issue 21 seam 5).
        ("Sources/AdLoaderWire/W.swift", "public import AdLoaderModel\nimport AdLoaderCore\n", "no core"),
        ("Sources/AdLoaderClient/C.swift", "import AdLoaderWire\npublic import AdLoaderCore\n", "not the core"),
        # The model is plain values: no core, no C.
        ("Sources/AdLoaderModel/Ad.swift", "import AdLoaderCore\n", "the model is plain values"),
        ("Sources/AdLoaderModel/Ad.swift", "import CAdLoaderProto\n", "the model is plain values"),
        # Only executables reach the daemon; the CLI is a client.
        ("Sources/adloader/Main.swift", "import AdLoaderDaemon\n", "the CLI is a client"),
        ("Examples/Swift/Case.swift", "import AdLoaderService\n", "examples use the client library"),
        # A C module stays internal to its wrapper.
        ("Sources/AdLoaderUV/Loop.swift", "public import CLibUV\n", "a C module is imported internal"),
        # A new module says what it may import.
        ("Sources/AdLoaderNew/N.swift", "import AdLoaderCore\n", "has no import rule"),
    ],
)
def test_a_violating_file_fails_naming_file_line_and_rule(tmp_path, rel, text, rule):
    root = tree(tmp_path, {rel: "// a file\n" + text, "Sources/AdLoaderCore/Ok.swift": "import AdLoaderTime\n"})
    result = run(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert rel in result.stderr
    assert rule in result.stderr
    assert "break the module rules" in result.stderr
    # The allowed file is not reported.
    assert "Ok.swift" not in result.stderr


def test_allowed_imports_and_comments_pass(tmp_path):
    root = tree(
        tmp_path,
        {
            "Sources/AdLoaderCore/A.swift": "public import AdLoaderTime\n/*\nimport CLibUV\n*/\n// import AdLoaderUV\n",
            "Sources/AdLoaderUV/Loop.swift": "internal import CLibUV\nimport AdLoaderTime\nimport Glibc\n",
            "Sources/AdLoaderGRPC/G.swift": "import AdLoaderService\ninternal import CNghttp2\n",
            "Sources/CLibUV/shim.swift": "import Whatever\n",
        },
    )
    result = run(root)
    assert result.returncode == 0, result.stderr
    assert "ok (4 files)" in result.stdout
