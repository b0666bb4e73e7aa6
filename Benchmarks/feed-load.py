#!/usr/bin/env python3
"""Feed load, wall clock, black box: the real adloaderd with its default configuration (only
the synthetic upstream's latency, fill and error rate set), fresh feed cells arriving at a fixed
rate on one ad unit. Each cell is one Borrow with its own slot key and a 250 ms wait; a cell
that got an ad returns it shown 1-3 s later. Prints, per rate, the share of cells that got an
ad, borrow latency percentiles, upstream requests and the pool's Stats at the end (in-flight
target, requests in flight, held back).

    Benchmarks/feed-load.py [--rates 40,120,300] [--duration S] [--bin DIR] [--out DIR] [--smoke]

Upstream: synthetic, 200 ms + 0..100 ms jitter, fill 0.9, 1 % errors (issue 20). --bin: where
adloaderd is (default .build/release); --smoke: 3 s at 20 cells/s from .build/debug. Runs gRPC
(the stock Python client, stubs generated from Proto/ with grpcio-tools, as in the tests) over
127.0.0.1 only; everything started stops on exit. Writes DIR/feed-load.json (default
bench-results/).
"""

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "python"))
import grpc_stubs  # noqa: E402

UNIT = "feed-main"


def start_daemon(bindir, tmp):
    config = {
        "sources": {"synthetic": {"latency": "200ms", "latencyJitter": "100ms", "fillRate": 0.9,
                                  "errorRate": 0.01}},
    }
    path = os.path.join(tmp, "feed-load.json")
    with open(path, "w") as f:
        json.dump(config, f)
    log = open(os.path.join(tmp, "feed-load.err"), "wb")
    proc = subprocess.Popen([os.path.join(bindir, "adloaderd"), "--config", path, "--port", "0",
                             "--pool-store-path", os.path.join(tmp, "feed-load-pools.sqlite")],
                            stdout=subprocess.PIPE, stderr=log)
    line = proc.stdout.readline().decode()
    if "listening on" not in line:
        proc.kill()
        raise SystemExit("adloaderd did not start: %r" % line)
    return proc, int(line.strip().rsplit(":", 1)[1]), log


async def run_rate(stubs, port, rate, duration, seed):
    import grpc
    pb = stubs.pb
    rng = random.Random(seed)
    async with grpc.aio.insecure_channel("127.0.0.1:%d" % port) as channel:
        client = stubs.grpc.NativeAdLoaderStub(channel)
        await client.Prefetch(pb.PrefetchRequest(ad_unit_id=UNIT))
        results = []
        tasks = set()

        async def cell(index):
            started = time.monotonic()
            try:
                answer = await client.Borrow(
                    pb.BorrowRequest(ad_unit_id=UNIT, slot_key="cell-%d-%d" % (rate, index), wait_ms=250),
                    timeout=5)
            except grpc.aio.AioRpcError as error:
                results.append((False, time.monotonic() - started, error.code().name))
                return
            got = answer.outcome in (pb.BORROW_OUTCOME_LEASED, pb.BORROW_OUTCOME_REUSED)
            results.append((got, time.monotonic() - started, ""))
            if got:
                await asyncio.sleep(1 + 2 * rng.random())
                try:
                    await client.Return(pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True), timeout=5)
                except grpc.aio.AioRpcError:
                    pass

        begin = time.monotonic()
        index = 0
        # Poisson arrivals at `rate` cells per second.
        next_at = begin
        while True:
            next_at += rng.expovariate(rate)
            if next_at - begin >= duration:
                break
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.ensure_future(cell(index))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            index += 1
        while tasks:
            await asyncio.gather(*list(tasks))
        elapsed = time.monotonic() - begin
        stats = await client.Stats(pb.StatsRequest())
    pool = next((p for p in stats.pools if p.ad_unit_id == UNIT), None)
    latencies = sorted(r[1] for r in results)

    def pct(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0

    errors = {}
    for r in results:
        if r[2]:
            errors[r[2]] = errors.get(r[2], 0) + 1
    return {
        "rate": rate, "cells": len(results), "seconds": round(elapsed, 1),
        "with_ad_pct": round(100.0 * sum(1 for r in results if r[0]) / max(1, len(results)), 2),
        "p50_ms": round(pct(0.5), 1), "p99_ms": round(pct(0.99), 1), "errors": errors,
        "upstream_requests": pool.upstream_requests if pool else 0,
        "in_flight_target": pool.in_flight_target if pool else 0,
        "requests_in_flight": pool.requests_in_flight if pool else 0,
        "target": pool.target if pool else 0,
        "held_back": pool.held_back if pool else "",
        "held_back_ms": pool.held_back_ms if pool else 0,
        "round_trip_ms": round(pool.round_trip_ms, 1) if pool else 0,
        "ads_per_request": round(pool.ads_per_request, 2) if pool else 0,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="40,120,300")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--bin", default=None)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    bindir = args.bin or os.path.join(ROOT, ".build", "debug" if args.smoke else "release")
    if args.smoke:
        rates, args.duration = [20.0], 3.0
    stubs = grpc_stubs.load()
    rows = []
    with tempfile.TemporaryDirectory(prefix="feed-load-") as tmp:
        for rate in rates:
            # A fresh daemon per rate: each rate starts from an empty pool, as after a deploy.
            proc, port, log = start_daemon(bindir, tmp)
            try:
                rows.append(asyncio.run(run_rate(stubs, port, rate, args.duration, seed=int(rate))))
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                log.close()
    header = ["cells/s", "cells", "with ad %", "p50 ms", "p99 ms", "upstream req", "round trip ms",
              "ads/req", "in-flight target", "in flight", "target", "held back", "errors"]
    print("feed load: adloaderd defaults, synthetic upstream 200+0..100 ms, fill 0.9, 1 %% errors; "
          "Borrow wait 250 ms, shown return after 1-3 s; %.0f s per rate" % args.duration)
    print(" | ".join(header))
    for r in rows:
        print(" | ".join(str(x) for x in [
            "%g" % r["rate"], r["cells"], r["with_ad_pct"], r["p50_ms"], r["p99_ms"], r["upstream_requests"],
            r["round_trip_ms"], r["ads_per_request"], r["in_flight_target"], r["requests_in_flight"], r["target"],
            r["held_back"] or "-", r["errors"] or "-"]))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "feed-load.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if args.smoke and rows[0]["with_ad_pct"] < 50:
        raise SystemExit("feed-load smoke: only %s %% of cells got an ad" % rows[0]["with_ad_pct"])


if __name__ == "__main__":
    main()
