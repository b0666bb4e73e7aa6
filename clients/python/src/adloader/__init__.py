"""Python client of adloaderd: the generated gRPC stubs (``adloader.v1``), a small typed
wrapper (``Client``: borrow as a context manager that returns the lease, retry of
UNAVAILABLE, the affinity key on every call) and nginx's consistent-hash ring
(``ConsistentHashRing``), the same as the Swift client's."""

from adloader.client import Client, Lease, NoAdYet, Retry, replica_index
from adloader.ring import ConsistentHashRing
from adloader.v1 import adloader_pb2 as pb

__all__ = ["Client", "ConsistentHashRing", "Lease", "NoAdYet", "Retry", "pb", "replica_index"]
