"""Regenerates the committed gRPC stubs in src/adloader/v1 from Proto/adloader/v1 with
grpcio-tools (the version pinned in Tests/python/requirements.txt); `make proto` runs it.

    python clients/python/generate.py           # rewrite the stubs
    python clients/python/generate.py --check   # exit 1, naming the files, when they are stale

Tests/python/test_clients.py runs the check, so a .proto change without `make proto` fails
`make test`.
"""

import filecmp
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROTO = os.path.join(ROOT, "Proto")
OUT = os.path.join(HERE, "src")
FILES = ["adloader/v1/adloader.proto", "adloader/v1/frame.proto", "adloader/v1/service.proto"]
GENERATED = ["adloader_pb2.py", "adloader_pb2.pyi", "frame_pb2.py", "frame_pb2.pyi", "service_pb2.py",
             "service_pb2.pyi", "service_pb2_grpc.py", "adloader_pb2_grpc.py", "frame_pb2_grpc.py"]


def generate(out: str) -> None:
    from grpc_tools import protoc

    args = ["protoc", f"-I{PROTO}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}"]
    if protoc.main(args + [os.path.join(PROTO, f) for f in FILES]) != 0:
        raise SystemExit("grpc_tools.protoc failed on Proto/")


def main() -> int:
    target = os.path.join(OUT, "adloader", "v1")
    if "--check" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            generate(tmp)
            fresh = os.path.join(tmp, "adloader", "v1")
            stale = [name for name in GENERATED
                     if not os.path.exists(os.path.join(target, name))
                     or not filecmp.cmp(os.path.join(fresh, name), os.path.join(target, name), shallow=False)]
        if stale:
            print("stale generated stubs in clients/python/src/adloader/v1 (run `make proto`): " + ", ".join(stale))
            return 1
        return 0
    generate(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
