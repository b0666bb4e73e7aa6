# gRPC Native Feed plan scrolling down and back
#
# Shows: a feed backend in Python with stock grpcio that lets the service plan the feed: one
# Plan call per screen (the positions on screen plus 3 of look-ahead) answers which positions
# carry an ad and, for each, its lease, "coming" (not on screen yet, no ad yet) or "empty" (on
# screen without an ad). The feed scrolls down and back up: the positions keep their answers —
# the same lease and ad on the way back, and a position rendered empty never gets an ad later,
# even once the pool has ads. Neighbouring ads never share an advertiser (the loader's
# separation rules: advertiser domains 10 positions apart, so next to each other with an ad
# every 5 positions). The shown ads are returned shown, as for Borrow.
# Look at: PlanRequest (feed_id, first_visible, last_visible, ahead); PlannedPosition.state;
# how the backend renders AD and skips EMPTY; Return of what was shown.
# Run: Examples/run.sh grpc-native-feed-plan-scrolling-down-and-back   (generates the stubs,
#      needs .venv: make venv), or by hand with the stubs on PYTHONPATH:
#      python -m grpc_tools.protoc -I Proto --python_out=S --grpc_python_out=S \
#          Proto/adloader/v1/adloader.proto Proto/adloader/v1/service.proto
#      PYTHONPATH=S ADLOADER_ENDPOINT=127.0.0.1:7411 .venv/bin/python Examples/Python/grpc_native_feed_plan_scrolling_down_and_back.py
import os
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

channel = grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411"))
stub = service_pb2_grpc.NativeAdLoaderStub(channel)
ad_unit = f"py-plan-{uuid.uuid4().hex[:8]}"  # fresh per run: its pool starts empty
feed = f"user-{uuid.uuid4().hex[:8]}/home"   # one user's scroll through one feed


def screen(first, last):
    """One Plan call for the positions first..last on screen and 3 ahead: {position: PlannedPosition}."""
    answer = stub.Plan(pb.PlanRequest(feed_id=feed, ad_unit_id=ad_unit, loader="feed", first_visible=first,
                                      last_visible=last, ahead=3), timeout=3)
    states = {p.position: p for p in answer.positions}
    for p in answer.positions:
        on_screen = first <= p.position <= last
        what = f"{p.lease.ad.headline!r} by {p.lease.ad.advertiser}" if p.state == pb.PLANNED_STATE_AD else ""
        print(f"    {first:2}-{last:2}: position {p.position:2} {'on screen' if on_screen else 'ahead    '} "
              f"{pb.PlannedState.Name(p.state)} {what}")
    return states


# Screen 1 (positions 0-7, ad positions 4 and, ahead, 9): the pool of a new ad unit is empty, so
# position 4 is rendered without an ad (EMPTY) and 9, not on screen yet, is COMING.
first = screen(0, 7)
assert first[4].state == pb.PLANNED_STATE_EMPTY, first[4]
assert first[9].state == pb.PLANNED_STATE_COMING, first[9]

# The call started a top-up. Wait (bounded) until ads are in: a Borrow parks until one arrives;
# give it back unshown, so it stays in the pool.
waited = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", slot_key="warm-up", wait_ms=2000), timeout=5)
assert waited.outcome == pb.BORROW_OUTCOME_LEASED, pb.BorrowOutcome.Name(waited.outcome)
stub.Return(pb.ReturnRequest(lease_id=waited.lease.lease_id, shown=False), timeout=3)

# Scroll down: screens 8-15 and 16-23. Position 9 was coming: now it gets its ad.
down = {**screen(8, 15), **screen(16, 23)}
assert down[9].state == pb.PLANNED_STATE_AD, down[9]
shown = {pos: p.lease for pos, p in down.items() if p.state == pb.PLANNED_STATE_AD and pos <= 23}
empty = {pos for pos, p in down.items() if p.state == pb.PLANNED_STATE_EMPTY} | {4}

# Scroll back up to the top, then down again: every position keeps its answer.
for first_visible in (16, 8, 0, 8, 16):
    again = screen(first_visible, first_visible + 7)
    for pos, p in again.items():
        if pos in shown:
            assert p.state == pb.PLANNED_STATE_AD, f"position {pos} lost its ad: {p}"
            assert p.lease.lease_id == shown[pos].lease_id and p.lease.ad.id == shown[pos].ad.id, \
                f"position {pos}: scrolling back must show the same ad"
        if pos in empty:
            assert p.state == pb.PLANNED_STATE_EMPTY, f"position {pos} was rendered empty and got {p}"

# Separation: ads 5 positions apart never share an advertiser (the loader's rule is 10 positions).
ordered = sorted(shown.items())
for (p, a), (q, b) in zip(ordered, ordered[1:]):
    if q - p < 10:
        assert a.ad.advertiser != b.ad.advertiser, f"positions {p} and {q}: both {a.ad.advertiser}"

# The backend bills what the user saw: a shown Return consumes the ad; the plan still answers
# the same ad for its position (the user may scroll back to it).
for pos, lease in shown.items():
    outcome = stub.Return(pb.ReturnRequest(lease_id=lease.lease_id, shown=True), timeout=3).outcome
    assert outcome == pb.RETURN_OUTCOME_CONSUMED, pb.ReturnOutcome.Name(outcome)
back = screen(8, 15)
assert back[9].lease.ad.id == shown[9].ad.id, "after the Return, scrolling back still shows the same ad"
print(f"    {len(shown)} ads placed, {len(empty)} positions rendered empty; both kept across the scroll back")
