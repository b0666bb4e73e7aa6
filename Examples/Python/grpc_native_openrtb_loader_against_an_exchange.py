# gRPC Native OpenRTB loader against an exchange
#
# Shows: loader "rtb" gets its ads from an OpenRTB 2.6 exchange (source "openrtb" in
# Examples/adloaderd.json; Prebid Server in production, here the exchange stub of the tests,
# Tests/python/openrtb_stub.py, serving bids made from real Prebid Server payloads). The feed
# code is the same as for any loader: Borrow, display, Return shown. Showing the ad makes the
# daemon fire the exchange's win/billing notice; Stats counts the source's requests, bids and
# notices.
# Look at: loader="rtb"; the ad's assets and trackers as the exchange sent them;
# StatsResponse.sources; notices_sent rising after the shown Return.
# Run: Examples/run.sh grpc-native-openrtb-loader-against-an-exchange, against a daemon whose
#      "openrtb" source reaches an exchange: start the stub first (it listens on the
#      configuration's default endpoint, 127.0.0.1:8000):
#      .venv/bin/python -c 'import sys, time; sys.path.insert(0, "Tests/python"); import openrtb_stub; openrtb_stub.Exchange(port=8000); time.sleep(86400)'
#      (or start adloaderd with --openrtb-endpoint URL of your exchange)
import os
import time
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

stub = service_pb2_grpc.NativeAdLoaderStub(grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411")))
ad_unit = f"rtb-feed-{uuid.uuid4().hex[:8]}"


def source():
    (rtb,) = [s for s in stub.Stats(pb.StatsRequest(loader="rtb"), timeout=3).sources if s.name == "openrtb"]
    return rtb


before = source()

# The first cell of the feed: the exchange auction runs while the Borrow waits (up to 3 s).
answer = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="rtb", slot_key="news/position-2", wait_ms=3000),
                     timeout=5)
assert answer.outcome == pb.BORROW_OUTCOME_LEASED, pb.BorrowOutcome.Name(answer.outcome)
ad = answer.lease.ad
print(f"    {ad.headline!r} by {ad.advertiser}: {ad.call_to_action}, image {ad.image.url}")
print(f"    click {ad.click_url}; {len(ad.impression_trackers)} impression tracker(s)")
assert ad.loader == "rtb" and ad.headline and ad.click_url, ad

# Displayed: the daemon tells the exchange (burl, else nurl) once, in the background.
outcome = stub.Return(pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True), timeout=3).outcome
assert outcome == pb.RETURN_OUTCOME_CONSUMED, pb.ReturnOutcome.Name(outcome)

deadline = time.monotonic() + 5
after = source()
while after.notices_sent <= before.notices_sent and time.monotonic() < deadline:
    time.sleep(0.05)
    after = source()
print(f"    source openrtb: {after.requests} requests, {after.bids} bids, {after.no_fills} no-fills, "
      f"{after.notices_sent} notices sent")
assert after.requests > before.requests and after.bids > before.bids, after
assert after.notices_sent > before.notices_sent, "the win notice of the shown ad reached the exchange"
