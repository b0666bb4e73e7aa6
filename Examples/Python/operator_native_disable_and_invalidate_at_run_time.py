# Operator Native Disable and invalidate at run time
#
# Shows: the run-time control an operator (or a feed backend) has over a running daemon,
# over gRPC. A lent ad whose creative is bad is returned with `invalidate` and a reason: the
# ad is removed, the loader stops lending its creative (for its invalidationBlockTime) and the
# source is told; Stats counts the loader's blocked creatives. Then the whole loader is
# disabled (its ads dropped, borrows refused UNAVAILABLE, Stats shows it disabled) and enabled
# again, after which it lends as before.
# Look at: ReturnRequest(invalidate=True, invalidate_reason=...) -> RETURN_OUTCOME_INVALIDATED;
# SetLoaderEnabled(loader, enabled) -> changed; StatsResponse.loaders (enabled,
# blocked_creatives). With auth.tokens set these calls need a token like any call. The CLI
# does the same: `adloader return LEASE --invalidate "bad creative"`, `adloader disable feed`,
# `adloader enable feed`, and `adloader reload` (or SIGHUP) re-reads the configuration file.
# Run: Examples/run.sh operator-native-disable-and-invalidate-at-run-time (the loader
#      "control" of Examples/adloaderd.json, kept apart so that other cases are not disturbed).
import os
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411")))
loader = "control"
ad_unit = f"ops-{uuid.uuid4().hex[:8]}"  # fresh per run


def status():
    """The loader's LoaderStatus in Stats (listed whether or not it has pools)."""
    return next(l for l in stub.Stats(pb.StatsRequest(loader=loader), timeout=3).loaders if l.name == loader)


def borrow():
    return stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader=loader, wait_ms=1000), timeout=3)


# 1. A user reports the ad in a cell: return its lease with invalidate and a reason.
lent = borrow()
assert lent.outcome == pb.BORROW_OUTCOME_LEASED, lent
answer = stub.Return(pb.ReturnRequest(lease_id=lent.lease.lease_id, invalidate=True, invalidate_reason="bad creative"),
                     timeout=3)
assert answer.outcome == pb.RETURN_OUTCOME_INVALIDATED, answer
print(f"    invalidated ad {lent.lease.ad.id} ({lent.lease.ad.headline!r}): {pb.ReturnOutcome.Name(answer.outcome)}")
print(f"    loader {loader}: {status().blocked_creatives} creative(s) blocked")
assert status().blocked_creatives >= 1

# A reason is required: a bad request is refused and changes nothing.
try:
    stub.Return(pb.ReturnRequest(lease_id=borrow().lease.lease_id, invalidate=True), timeout=3)
    raise AssertionError("an invalidate without a reason must fail")
except grpc.RpcError as error:
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
    print(f"    without a reason: {error.code().name}: {error.details()}")

# 2. Stop the whole loader (e.g. its exchange misbehaves), then start it again.
try:
    changed = stub.SetLoaderEnabled(pb.SetLoaderEnabledRequest(loader=loader, enabled=False), timeout=3).changed
    assert changed and not status().enabled
    print(f"    disabled {loader}: changed={changed}, Stats enabled={status().enabled}")
    try:
        borrow()
        raise AssertionError("a disabled loader must refuse borrows")
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.UNAVAILABLE, error
        print(f"    borrow while disabled: {error.code().name}: {error.details()}")
finally:
    stub.SetLoaderEnabled(pb.SetLoaderEnabledRequest(loader=loader, enabled=True), timeout=3)
assert status().enabled
again = borrow()
assert again.outcome == pb.BORROW_OUTCOME_LEASED, again
print(f"    enabled {loader} again: borrow -> {pb.BorrowOutcome.Name(again.outcome)}")
stub.Return(pb.ReturnRequest(lease_id=again.lease.lease_id), timeout=3)
