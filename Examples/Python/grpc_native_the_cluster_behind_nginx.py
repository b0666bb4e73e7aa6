# gRPC Native The cluster behind nginx
#
# Shows: three adloaderd replicas behind nginx's gRPC proxy, one Redis for the app-open caps
# (Examples/cluster/cluster.sh starts and stops them all). A feed backend sends its affinity
# key as `x-adloader-affinity` metadata: every call with the same key lands on the same
# replica, so a cell borrowed again gets its lease back (REUSED) through the proxy; different
# keys spread over the replicas. Unlike the other cases it starts its own cluster (on free
# loopback ports, in a temporary directory) instead of using the catalog's daemon.
# Look at: the metadata on each call; the `x-adloader-instance` header of the answer (which
# replica answered: its host:port); StatsResponse.instance (the same name).
# Run: Examples/run.sh grpc-native-the-cluster-behind-nginx   (needs nginx and redis-server:
#      make deps; the daemon binary: adloaderd on PATH or ADLOADERD, e.g. .build/debug/adloaderd)
import os
import random
import shutil
import socket
import subprocess
import tempfile
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

here = os.path.dirname(os.path.abspath(__file__))
cluster_sh = os.path.join(here, "..", "cluster", "cluster.sh")


def free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


# cluster.sh takes nginx's port and puts the replicas on the next 3, their admin ports on the 3
# after; Redis gets its own. Pick a block that is free right now.
base = next(p for p in (random.randrange(20000, 60000, 10) for _ in range(100)) if all(free(p + i) for i in range(8)))
env = dict(os.environ, CLUSTER_DIR=tempfile.mkdtemp(prefix="adloader-cluster-"), CLUSTER_PORT=str(base),
           CLUSTER_REDIS_PORT=str(base + 7), ADLOADERD=os.environ.get("ADLOADERD") or shutil.which("adloaderd"))
subprocess.run(["bash", cluster_sh, "start"], env=env, check=True, stdout=subprocess.DEVNULL, timeout=60)
try:
    stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(f"127.0.0.1:{base}"))

    def borrow(key, slot):
        """A Borrow through nginx for affinity key `key`; returns (answer, the replica that answered)."""
        answer, call = stub.Borrow.with_call(
            pb.BorrowRequest(ad_unit_id="feed", slot_key=slot, wait_ms=2000),
            metadata=[("x-adloader-affinity", key)], timeout=5)
        return answer, dict(call.initial_metadata())["x-adloader-instance"]

    # One user's feed: its key is the user id. The cell at position 4 is rendered, then again.
    user = f"user-{uuid.uuid4().hex[:8]}"
    first, replica = borrow(user, f"{user}/position-4")
    assert first.outcome == pb.BORROW_OUTCOME_LEASED, pb.BorrowOutcome.Name(first.outcome)
    again, replica_again = borrow(user, f"{user}/position-4")
    assert replica_again == replica, (replica, replica_again)
    assert again.outcome == pb.BORROW_OUTCOME_REUSED and again.lease.lease_id == first.lease.lease_id, again
    print(f"    {user}: replica {replica}, lease {first.lease.lease_id} reused on the second render")

    # Many users spread over the three replicas (consistent hashing on the key, in nginx).
    replicas = {borrow(f"user-{i}", f"user-{i}/position-4")[1] for i in range(30)}
    assert len(replicas) == 3, replicas
    print(f"    30 users answered by {sorted(replicas)}")

    # Stats names the replica too; the lease is returned where it was lent (same key).
    stats, call = stub.Stats.with_call(pb.StatsRequest(), metadata=[("x-adloader-affinity", user)], timeout=5)
    assert stats.instance == replica, (stats.instance, replica)
    returned = stub.Return(pb.ReturnRequest(lease_id=first.lease.lease_id, shown=True),
                           metadata=[("x-adloader-affinity", user)], timeout=5)
    assert returned.outcome == pb.RETURN_OUTCOME_CONSUMED, returned
finally:
    subprocess.run(["bash", cluster_sh, "stop"], env=env, stdout=subprocess.DEVNULL, timeout=60)
    shutil.rmtree(env["CLUSTER_DIR"], ignore_errors=True)
