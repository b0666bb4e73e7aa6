# Operator Native Metrics scrape
#
# Shows: what Prometheus sees at the admin listener's /metrics (adloaderd --admin-port PORT):
# per-pool gauges and counters labelled by loader and ad unit, calls by method and status.
# The case scrapes, makes one Prefetch and one Borrow over gRPC, scrapes again, and finds
# them counted: `adloader_calls_total{method=...,code="OK"}` and the pool's borrow hits up by
# one each. (A fixed ad unit: pools beyond --admin-max-pool-series, 500, share one series.)
# Look at: plain HTTP GET, Prometheus text format; the labels; OPERATIONS.md lists every metric.
# Run: Examples/run.sh operator-native-metrics-scrape, with ADLOADER_ADMIN=http://HOST:PORT
#      (default http://127.0.0.1:7412, the admin port of `make run`).
import os
import urllib.request

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

admin = os.environ.get("ADLOADER_ADMIN", "http://127.0.0.1:7412")
stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411")))
ad_unit = "operator-scrape"


def scrape():
    """{'name{labels}': value} of every sample in the Prometheus text format."""
    with urllib.request.urlopen(f"{admin}/metrics", timeout=5) as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain"), response.headers
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            samples[key] = float(value)
    return samples


CALLS = 'adloader_calls_total{{method="{}",code="OK"}}'
HITS = f'adloader_pool_borrows_total{{loader="feed",ad_unit="{ad_unit}",result="hit"}}'

before = scrape()
stub.Prefetch(pb.PrefetchRequest(ad_unit_id=ad_unit, loader="feed"), timeout=3)
lease = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", wait_ms=1000), timeout=3).lease
after = scrape()

for method in ("Prefetch", "Borrow"):
    key = CALLS.format(method)
    print(f"    {key} {before[key]:.0f} -> {after[key]:.0f}")
    assert after[key] >= before[key] + 1, key  # >=: other clients may call meanwhile
print(f"    {HITS} {before.get(HITS, 0):.0f} -> {after[HITS]:.0f}")
assert after[HITS] >= before.get(HITS, 0) + 1, HITS
for key in sorted(k for k in after if f'ad_unit="{ad_unit}"' in k and k.startswith("adloader_pool_") and "_ads{" in k):
    print(f"    {key} {after[key]:.0f}")
stub.Return(pb.ReturnRequest(lease_id=lease.lease_id, shown=False), timeout=3)
