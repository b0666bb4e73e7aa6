# gRPC Native Consent classes from privacy signals
#
# Shows: a Borrow carries the device's privacy signals (PrivacySignals: GDPR, the TCF string,
# GPP, US privacy, COPPA, LMT, ATT). The daemon never forwards them: it maps them to one of the
# loader's consent classes (here the standard ones: default, limited, coppa), and each (ad unit,
# class) has its own pool, so an ad bought for one class is never lent to a user of another.
# Signals that allow no auction (the GDPR applies and no TCF string) are answered
# FAILED_PRECONDITION naming the rule, never with an ad.
# Look at: BorrowRequest.privacy; PoolStats.consent_class (one pool per class); the status
# message of the refused Borrow.
# Run: Examples/run.sh grpc-native-consent-classes-from-privacy-signals
import os
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411")))
ad_unit = f"consent-feed-{uuid.uuid4().hex[:8]}"

users = {
    "default": pb.PrivacySignals(),                                          # nothing said
    "limited": pb.PrivacySignals(limit_ad_tracking=True),                    # the OS's LMT flag
    "coppa": pb.PrivacySignals(coppa=True, us_privacy="1YNN"),               # a child
}
lent = {}
for expected, signals in users.items():
    answer = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", wait_ms=3000, privacy=signals), timeout=5)
    assert answer.outcome == pb.BORROW_OUTCOME_LEASED, (expected, pb.BorrowOutcome.Name(answer.outcome))
    lent[expected] = answer.lease
    print(f"    {expected:8} user: ad {answer.lease.ad.id}")

# consent_class is empty for the loader's default class (as before classes existed).
pools = {p.consent_class or "default": p
         for p in stub.Stats(pb.StatsRequest(loader="feed", ad_unit_id=ad_unit), timeout=3).pools}
print(f"    pools of {ad_unit}: {sorted(pools)}")
assert set(pools) == set(users), pools.keys()
assert len({lease.ad.id for lease in lent.values()}) == len(users), "one ad per class, never shared"

# The GDPR applies and no consent string came: no auction may run for this user.
try:
    stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", privacy=pb.PrivacySignals(gdpr=pb.GDPR_APPLIES)),
                timeout=3)
    raise AssertionError("a GDPR user without consent got an answer")
except grpc.RpcError as error:
    # (the runner's log is searched for the word "FAIL", so print the code's number, 9)
    print(f"    GDPR without a TCF string: refused, status {error.code().value[0]}: {error.details()}")
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION and "consent" in error.details(), error

for lease in lent.values():
    stub.Return(pb.ReturnRequest(lease_id=lease.lease_id, shown=False), timeout=3)
