# gRPC Rewarded OpenRTB video over an exchange
#
# Shows: loader "rtbrewarded" (format rewarded, source "openrtb" in Examples/adloaderd.json)
# buys rewarded video from an OpenRTB 2.6 exchange: each impression asks for `instl: 1`,
# `rwdd: 1` and an unskippable `video`; the winning bid's VAST document reaches the app byte
# for byte in `full_screen.vast_xml`, for its VAST player. The user watches it; the app returns
# the lease shown with the device's IP and user agent, and the daemon fires the exchange's
# billing notice once, with those forwarded (X-Forwarded-For, User-Agent).
# Look at: ad.format == AD_FORMAT_REWARDED; ad.full_screen.vast_xml; ReturnRequest.device_ip and
# device_user_agent; StatsResponse.sources notices_sent after the shown Return.
# Run: Examples/run.sh grpc-rewarded-openrtb-video-over-an-exchange, against a daemon whose
#      "openrtb" source reaches an exchange (the tests' stub on 127.0.0.1:8000, as for
#      "gRPC Native OpenRTB loader against an exchange").
import os
import time
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411")))
ad_unit = f"rewarded-level-end-{uuid.uuid4().hex[:8]}"


def source():
    (rtb,) = [s for s in stub.Stats(pb.StatsRequest(loader="rtbrewarded"), timeout=3).sources if s.name == "openrtb"]
    return rtb


before = source()

# The level ends and the player taps "watch a video for 10 coins": borrow one, waiting for the auction.
answer = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="rtbrewarded", slot_key="level-3/reward",
                                      wait_ms=3000), timeout=5)
assert answer.outcome == pb.BORROW_OUTCOME_LEASED, pb.BorrowOutcome.Name(answer.outcome)
ad = answer.lease.ad
assert ad.format == pb.AD_FORMAT_REWARDED, pb.AdFormat.Name(ad.format)
assert ad.WhichOneof("creative") == "full_screen" and ad.full_screen.WhichOneof("media") == "vast_xml", ad
vast = ad.full_screen.vast_xml
print(f"    rewarded video {ad.id}: VAST, {len(vast.encode())} bytes, {ad.full_screen.width}x{ad.full_screen.height}")
assert "<VAST" in vast and "<MediaFile" in vast, vast[:200]

# Watched to the end: reward the user, then return the lease shown, naming the device.
outcome = stub.Return(pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True, device_ip="203.0.113.7",
                                       device_user_agent="Mozilla/5.0 (Linux; Android 14) ExampleGame/3.1"),
                      timeout=3).outcome
assert outcome == pb.RETURN_OUTCOME_CONSUMED, pb.ReturnOutcome.Name(outcome)

deadline = time.monotonic() + 5
after = source()
while after.notices_sent <= before.notices_sent and time.monotonic() < deadline:
    time.sleep(0.05)
    after = source()
print(f"    source openrtb: {after.requests} requests, {after.bids} bids, {after.notices_sent} notices sent")
assert after.notices_sent > before.notices_sent, "the billing notice of the watched video reached the exchange"

# A header-injection attempt in the device fields is refused, and bills nothing.
other = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="rtbrewarded", wait_ms=3000), timeout=5)
assert other.outcome == pb.BORROW_OUTCOME_LEASED, pb.BorrowOutcome.Name(other.outcome)
try:
    stub.Return(pb.ReturnRequest(lease_id=other.lease.lease_id, shown=True, device_user_agent="x\r\nX-Evil: 1"),
                timeout=3)
    raise AssertionError("a user agent with CR LF was accepted")
except grpc.RpcError as error:
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "device_user_agent" in error.details(), error
stub.Return(pb.ReturnRequest(lease_id=other.lease.lease_id, shown=False), timeout=3)
