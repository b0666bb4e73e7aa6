#!/usr/bin/env python3
"""Server CPU per call of Plan (8 visible positions + 3 ahead) against per-cell Borrow for the
same screens, one daemon, one run: utime + stime of the daemon from /proc/PID/stat before and
after each phase, divided by the calls (and by the screens). Usage:
    plan-cpu.py ADLOADERD [SCREENS]   (grpcio from the Makefile's venv; loopback only)"""

import json
import os
import subprocess
import tempfile
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python", "src"))
import grpc  # noqa: E402
from adloader.v1 import adloader_pb2 as pb, service_pb2_grpc as rpc  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main():
    daemon, screens = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    # The per-call benchmarks' configuration (Benchmarks/per-call-setup.sh): an upstream that
    # answers at once with every ad, a pool that may hold 4,096, so neither phase runs dry.
    config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"listeners": {"host": "127.0.0.1", "port": 0}, "log": {"level": "warning"},
               "sources": {"synthetic": {"latency": "0ms", "fillRate": 1, "seed": 7}},
               "loaders": {"default": {"numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,
                                       "leaseTimeout": "60s"}}}, config)
    config.close()
    proc = subprocess.Popen([daemon, "--config", config.name],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        endpoint = line.split("listening on ")[1].split()[0]
        stub = rpc.NativeAdLoaderStub(grpc.insecure_channel(endpoint))
        stub.Prefetch(pb.PrefetchRequest(ad_unit_id="feed", count=2000), timeout=10)
        time.sleep(1)  # the pool is stocked before timing
        # Plan: each feed scrolls 10 screens of 8 positions, 3 ahead.
        before = cpu(proc.pid)
        ads = 0
        for i in range(screens):
            feed, screen = divmod(i, 10)
            first = screen * 8
            answer = stub.Plan(pb.PlanRequest(feed_id=f"f{feed}", ad_unit_id="feed", first_visible=first,
                                              last_visible=first + 7, ahead=3), timeout=10)
            for p in answer.positions:
                if p.state == pb.PLANNED_STATE_AD and first <= p.position <= first + 7:
                    ads += 1
                    stub.Return(pb.ReturnRequest(lease_id=p.lease.lease_id, shown=True), timeout=10)
        plan_cpu = cpu(proc.pid) - before
        plan_calls = screens + ads
        # Per-cell Borrow for the same ad cells (one every 5 positions from 4: 8/5 per screen).
        before = cpu(proc.pid)
        cells = 0
        returns = 0
        for i in range(screens):
            feed, screen = divmod(i, 10)
            for position in range(screen * 8, screen * 8 + 8):
                if position % 5 == 4:
                    cells += 1
                    b = stub.Borrow(pb.BorrowRequest(ad_unit_id="feed", slot_key=f"b{feed}/{position}"), timeout=10)
                    if b.outcome == pb.BORROW_OUTCOME_LEASED:
                        returns += 1
                        stub.Return(pb.ReturnRequest(lease_id=b.lease.lease_id, shown=True), timeout=10)
        borrow_cpu = cpu(proc.pid) - before
        borrow_calls = cells + returns
        print(f"screens {screens}: Plan {screens} calls + {ads} shown Returns, server CPU {plan_cpu * 1e6 / screens:.0f} us per "
              f"screen ({plan_cpu * 1e6 / plan_calls:.0f} us per call); per-cell Borrow {cells} calls + {returns} shown "
              f"Returns, {borrow_cpu * 1e6 / screens:.0f} us per screen ({borrow_cpu * 1e6 / borrow_calls:.0f} us per call); "
              f"clock ticks of {1e6 / TICKS:.0f} us")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        os.unlink(config.name)


if __name__ == "__main__":
    main()
