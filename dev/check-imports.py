#!/usr/bin/env python3
"""Which module may import which (`make check-imports`, part of `make test`).

Every Swift file under Sources/<Module>/ (and Examples/Swift, the AdLoaderExamples module) is read
for its import lines; each import must be allowed by its module's row below. A violation prints
the file, the line, the import and the rule it breaks, and the script exits 1. A module without a
row is a violation too: a new module says what it may import when it is added.

The rows are the layering of ARCHITECTURE.md: the core imports no C module and no I/O module,
the time module nothing at all, a transport no other transport, the service no transport and no
socket, only executables the daemon; C modules only in their one wrapper module, never
`public`ly (a shim's names do not leak into a module's interface).

    dev/check-imports.py [--root DIR]
"""

import argparse
import pathlib
import re
import sys

# Modules any module of ours may import unless its row says `system=False`.
SYSTEM = {"Glibc", "Darwin", "Foundation", "Dispatch", "Synchronization"}

# The C shims and generated code: each belongs to the modules that wrap it.
C_MODULES = {"CLibUV", "CProtobufC", "CAdLoaderProto", "CNghttp2", "CCurl", "CSQLite", "CHiredis", "CHTTPParser",
             "CLibFuzzer", "COpenSSL"}

TRANSPORTS = {"AdLoaderFramed", "AdLoaderGRPC", "AdLoaderAdmin"}
IO = TRANSPORTS | {"AdLoaderUV", "AdLoaderHTTP", "AdStores"}

# module: (modules of ours and C modules it may import, whether it may import system modules, the rule)
RULES = {
    "AdLoaderTime": (set(), False, "time is dependency-free: it imports nothing, not even Glibc"),
    "AdLoaderModel": ({"AdLoaderTime"}, False,
                      "the model is plain values: it imports time only (no C, no I/O, no Foundation, no core)"),
    "AdLoaderCore": ({"AdLoaderTime", "AdLoaderModel"}, False,
                     "the domain is pure Swift: it imports time and the model only (no C, no I/O, no Foundation)"),
    "AdLoaderJSON": (set(), True, "the JSON document type is dependency-free"),
    "AdLoaderLogging": (set(), True, "logging is dependency-free"),
    "AdLoaderMetrics": (set(), True, "metrics are dependency-free"),
    "AdLoaderArguments": (set(), True, "argument scanning is dependency-free"),
    "AdLoaderBuild": (set(), False, "the build's commit is dependency-free (only the daemon and the CLI import it)"),
    # The wire speaks the model's values, never the loader: the core is not allowed (the client
    # library, a product, links the wire and must not link the whole loader).
    "AdLoaderWire": ({"AdLoaderTime", "AdLoaderModel", "CAdLoaderProto", "CProtobufC"}, True,
                     "the wire format is pure: frames and messages of the model, no core, no I/O, no service"),
    "AdLoaderUV": ({"AdLoaderTime", "CLibUV"}, True,
                   "the libuv wrappers know libuv and time, not the domain"),
    "AdLoaderHTTP": ({"AdLoaderTime", "AdLoaderUV", "CCurl"}, True,
                     "the HTTP client knows libuv and libcurl, not the domain"),
    "AdSources": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderConfiguration"}, True,
                  "demand sources see the core's source protocol and declare their configuration keys only"),
    "AdLoaderOpenRTB": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderJSON", "AdLoaderHTTP", "AdLoaderLogging",
                         "AdLoaderConfiguration"}, True,
                        "OpenRTB demand uses the HTTP client, never a transport or libcurl itself"),
    # TLS is a byte stream under the transports and under the Redis client alike (AdLoaderTLS
    # imports no transport and no store): the stores use its client context, never OpenSSL itself.
    "AdStores": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderUV", "AdLoaderTLS", "CSQLite", "CHiredis"}, True,
                 "the cap stores know the core's store protocol, libuv, TLS streams and their databases"),
    "AdLoaderService": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderWire", "AdLoaderLogging"}, True,
                        "the service knows what a method means, not bytes on a socket: no transport, no libuv"),
    "AdLoaderFramed": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderWire", "AdLoaderService", "AdLoaderUV",
                        "AdLoaderLogging"}, True,
                       "a transport knows bytes and the service, never another transport"),
    "AdLoaderGRPC": ({"AdLoaderTime", "AdLoaderWire", "AdLoaderService", "AdLoaderUV", "AdLoaderLogging",
                      "CNghttp2", "CAdLoaderProto"}, True,
                     "a transport knows bytes and the service, never another transport or the core"),
    "AdLoaderTLS": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderUV", "AdLoaderLogging", "COpenSSL"}, True,
                    "TLS is a byte stream under the transports: libuv and OpenSSL, never a transport"),
    "AdLoaderAdmin": ({"AdLoaderTime", "AdLoaderUV", "AdLoaderLogging", "CHTTPParser"}, True,
                      "the admin listener serves the daemon's routes: no other transport, no domain"),
    "AdLoaderConfiguration": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderJSON", "AdLoaderLogging"}, True,
                              "the configuration framework parses values: no I/O, no transport"),
    "AdLoaderOperations": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderWire", "AdLoaderService", "AdLoaderUV",
                            "AdLoaderLogging", "AdLoaderMetrics", "AdLoaderTLS"}, True,
                           "operations (metrics, dashboard) observe the service and core, not a transport"),
    "AdLoaderDaemon": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderWire", "AdSources", "AdLoaderUV",
                        "AdLoaderLogging", "AdLoaderService", "AdLoaderFramed", "AdLoaderGRPC", "AdLoaderArguments",
                        "AdLoaderJSON", "AdLoaderHTTP", "AdLoaderOpenRTB", "AdLoaderAdmin", "AdLoaderMetrics",
                        "AdStores", "AdLoaderConfiguration", "AdLoaderOperations", "AdLoaderBuild", "AdLoaderTLS"}, True,
                       "the composition root may know every module of ours, but no C module"),
    # The client library (a product): the wire format, the model and its own sockets.
    "AdLoaderClient": ({"AdLoaderTime", "AdLoaderModel", "AdLoaderWire", "COpenSSL"}, True,
                       "the client library knows the wire format, the model and OpenSSL (its TLS), not the core, "
                       "the service, transports or libuv"),
    "AdLoaderConformance": ({"AdLoaderTime", "AdLoaderModel", "AdLoaderWire", "AdLoaderLogging", "CNghttp2"}, True,
                            "the conformance suite speaks raw frames and the model, never the core or the "
                            "server's modules"),
    "AdLoaderTestSupport": ({"AdLoaderTime", "AdLoaderCore", "AdLoaderWire", "AdLoaderService", "AdLoaderFramed",
                             "AdLoaderUV", "AdLoaderLogging"}, True,
                            "test doubles stand in for I/O; they never reach the daemon"),
    "AdLoaderExamples": ({"AdLoaderTime", "AdLoaderClient", "AdLoaderCore", "AdLoaderWire"}, True,
                         "examples use the client library, as an integrator would"),
    "adloaderd": ({"AdLoaderDaemon"}, True, "the daemon executable parses nothing itself: it calls the daemon"),
    "adloader": ({"AdLoaderTime", "AdLoaderArguments", "AdLoaderClient", "AdLoaderConformance", "AdLoaderCore",
                  "AdLoaderExamples", "AdLoaderWire", "AdLoaderBuild"}, True,
                 "the CLI is a client: never the daemon, a transport or libuv"),
}

IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?P<access>public |package |internal |fileprivate |private )?"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?(?P<module>\w+)")


def module_files(root):
    """(module, path) for every Swift file the rules cover."""
    sources = root / "Sources"
    if sources.is_dir():
        for folder in sorted(p for p in sources.iterdir() if p.is_dir()):
            for path in sorted(folder.rglob("*.swift")):
                yield folder.name, path
    examples = root / "Examples" / "Swift"
    if examples.is_dir():
        for path in sorted(examples.rglob("*.swift")):
            yield "AdLoaderExamples", path


def violations(root):
    found = []
    for module, path in module_files(root):
        rel = path.relative_to(root)
        if module not in RULES:
            if module not in C_MODULES:
                found.append(f"{rel}: module {module} has no import rule: add its row to dev/check-imports.py")
            continue
        allowed, system, rule = RULES[module]
        in_block_comment = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            if in_block_comment:
                in_block_comment = "*/" not in stripped
                continue
            if stripped.startswith("/*"):
                in_block_comment = "*/" not in stripped
                continue
            match = IMPORT.match(line)
            if not match:
                continue
            imported = match.group("module")
            access = (match.group("access") or "").strip()
            where = f"{rel}:{number}: {module} imports {imported}"
            if imported in SYSTEM or imported == "Testing":
                if not system:
                    found.append(f"{where}: not allowed: {rule}")
            elif imported not in allowed:
                found.append(f"{where}: not allowed: {rule}")
            elif imported in C_MODULES and access in ("public", "package"):
                found.append(f"{where} as {access}: a C module is imported internal: its names stay in {module}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    found = violations(args.root)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"check-imports: {len(found)} import(s) break the module rules (dev/check-imports.py)", file=sys.stderr)
        return 1
    print(f"check-imports: ok ({sum(1 for _ in module_files(args.root))} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
