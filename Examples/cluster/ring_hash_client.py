"""A proxy-less gRPC client for three adloaderd replicas: grpcio's own ring_hash policy routes
each call by its `x-adloader-affinity` metadata, so one feed's borrows reach one replica with
no proxy in between (no proxy CPU, one hop less).

    GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY=true \\
        python Examples/cluster/ring_hash_client.py 127.0.0.1:7421,127.0.0.1:7422,127.0.0.1:7423 feed-42

Needs grpcio >= 1.69 (gRFC A76, `requestHashHeader`); in grpcio 1.85.1 it is still behind the
environment variable above, set before grpc is imported (without it every call fails
INTERNAL "hash attribute not present"). The ring is gRPC's (xxhash over the addresses), not
nginx's or HAProxy's: a fleet mixing proxy and proxy-less clients sees one key on up to two
replicas. Run from the repository root (it uses the test stubs generated from Proto/).
"""

import json
import os
import sys

os.environ.setdefault("GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY", "true")

import grpc  # noqa: E402  (after the environment variable)

AFFINITY = "x-adloader-affinity"


def ring_hash_channel(endpoints):
    """One channel over every replica; calls routed by their affinity metadata."""
    config = {"loadBalancingConfig": [{"ring_hash_experimental": {"requestHashHeader": AFFINITY}}]}
    return grpc.insecure_channel("ipv4:" + ",".join(endpoints), options=[("grpc.service_config", json.dumps(config))])


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "python"))
    import grpc_stubs

    endpoints, key = sys.argv[1].split(","), sys.argv[2]
    s = grpc_stubs.load()
    with ring_hash_channel(endpoints) as channel:
        stub = s.grpc.NativeAdLoaderStub(channel)
        answer = stub.Stats(s.pb.StatsRequest(), metadata=[(AFFINITY, key)], timeout=5)
        print(f"{key} -> {answer.instance}")


if __name__ == "__main__":
    main()
