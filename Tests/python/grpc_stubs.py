"""Python stubs generated from Proto/ with grpcio-tools, once per test session, into a
temporary directory (never committed): ``load()`` returns a namespace with the modules."""

import importlib
import os
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO = os.path.join(ROOT, "Proto")
FILES = [
    "adloader/v1/adloader.proto",
    "adloader/v1/service.proto",
    "grpc/health/v1/health.proto",
]
_loaded = None
_tmp = None


def load():
    global _loaded, _tmp
    if _loaded is not None:
        return _loaded
    from grpc_tools import protoc

    _tmp = tempfile.TemporaryDirectory(prefix="adloader-stubs-")
    args = ["protoc", f"-I{PROTO}", f"--python_out={_tmp.name}", f"--grpc_python_out={_tmp.name}"] + [
        os.path.join(PROTO, f) for f in FILES
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("grpc_tools.protoc failed on Proto/")
    # The generated packages are namespace packages; "grpc.health.v1" would clash with
    # grpcio's own "grpc", so health_pb2 is imported from its directory and the health calls
    # go through the generic channel methods (no health_pb2_grpc).
    sys.path.insert(0, _tmp.name)
    adloader_pb2 = importlib.import_module("adloader.v1.adloader_pb2")
    service_pb2_grpc = importlib.import_module("adloader.v1.service_pb2_grpc")
    sys.path.insert(0, os.path.join(_tmp.name, "grpc", "health", "v1"))
    health_pb2 = importlib.import_module("health_pb2")
    _loaded = types.SimpleNamespace(pb=adloader_pb2, grpc=service_pb2_grpc, health=health_pb2)
    return _loaded
