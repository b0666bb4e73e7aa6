# gRPC Native Feed borrow per cell
#
# Shows: a feed backend in Python with stock grpcio, no adloader library: each ad cell of a
# page borrows with its slot key and a wait, the page is rendered, the cells that were
# displayed are returned shown and the others unshown. A cell that is rendered again (the
# user scrolled back) gets the same lease: REUSED.
# Look at: the stubs generated from Proto/ (adloader_pb2, service_pb2_grpc); `timeout=` (the
# gRPC deadline, longer than wait_ms); BorrowResponse.outcome; ReturnResponse.outcome.
# Run: Examples/run.sh grpc-native-feed-borrow-per-cell   (generates the stubs, needs .venv:
#      make venv), or by hand with the stubs on PYTHONPATH:
#      python -m grpc_tools.protoc -I Proto --python_out=S --grpc_python_out=S \
#          Proto/adloader/v1/adloader.proto Proto/adloader/v1/service.proto
#      PYTHONPATH=S ADLOADER_ENDPOINT=127.0.0.1:7411 .venv/bin/python Examples/Python/grpc_native_feed_borrow_per_cell.py
import os
import uuid

import grpc
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc

channel = grpc.insecure_channel(os.environ.get("ADLOADER_ENDPOINT", "127.0.0.1:7411"))
stub = service_pb2_grpc.NativeAdLoaderStub(channel)
ad_unit = f"py-feed-{uuid.uuid4().hex[:8]}"  # fresh per run: the case does not depend on what the daemon served before

# The page has ad cells at positions 4, 9 and 14; each waits up to 1 s for its ad.
leases = {}
for position in (4, 9, 14):
    answer = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", slot_key=f"page-1/position-{position}",
                                          wait_ms=1000), timeout=3)
    assert answer.outcome == pb.BORROW_OUTCOME_LEASED, f"position {position}: {pb.BorrowOutcome.Name(answer.outcome)}"
    leases[position] = answer.lease
    print(f"    position {position}: {answer.lease.ad.headline!r} by {answer.lease.ad.advertiser}")
assert len({lease.ad.id for lease in leases.values()}) == 3, "three cells, three different ads"

# The page is rendered again (a scroll-back): the cell at position 9 gets its lease back.
again = stub.Borrow(pb.BorrowRequest(ad_unit_id=ad_unit, loader="feed", slot_key="page-1/position-9"), timeout=3)
assert again.outcome == pb.BORROW_OUTCOME_REUSED and again.lease.lease_id == leases[9].lease_id, again

# Positions 4 and 9 were displayed; the user left before 14 came into view.
for position, lease in leases.items():
    shown = position != 14
    outcome = stub.Return(pb.ReturnRequest(lease_id=lease.lease_id, shown=shown), timeout=3).outcome
    print(f"    position {position}: returned shown={shown} -> {pb.ReturnOutcome.Name(outcome)}")
    expected = pb.RETURN_OUTCOME_CONSUMED if shown else pb.RETURN_OUTCOME_BACK_IN_POOL
    assert outcome == expected, f"position {position}: {pb.ReturnOutcome.Name(outcome)}"

# Errors are gRPC statuses: a lease returned twice is NOT_FOUND.
try:
    stub.Return(pb.ReturnRequest(lease_id=leases[4].lease_id, shown=True), timeout=3)
    raise AssertionError("a second Return must fail")
except grpc.RpcError as error:
    assert error.code() == grpc.StatusCode.NOT_FOUND, error
    print(f"    returned twice: {error.code().name}: {error.details()}")
