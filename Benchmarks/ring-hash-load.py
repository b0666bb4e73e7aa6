#!/usr/bin/env python3
"""Proxy-less load on three adloaderd replicas (issue 27): grpcio's own ring_hash policy routes
each gRPC Borrow by its x-adloader-affinity key (Examples/cluster/ring_hash_client.py's channel),
so there is no proxy process at all. One client process per key, each with CONCURRENCY calls in
flight on one channel (grpc.aio), the request pre-encoded and the answer left undecoded, so the
client's Python cost per call is as low as grpcio allows.

    ring-hash-load.py ENDPOINTS KEYS [--concurrency N] [--duration S] [--warmup S] [--log DIR]

ENDPOINTS: host:port,host:port,...; KEYS: comma-separated affinity keys (cluster-load.sh picks
one per replica through this same ring). Prints one line per key process and, last, a JSON
summary line: calls, failed, calls_per_s, p99_ms, client_cpu_us_per_call (the client processes'
utime+stime over the measured window: what a proxy-less fleet pays in its clients instead of a
proxy, here in CPython). Replica CPU is measured by the caller from /proc. Only the given
endpoints (loopback in cluster-load.sh) are contacted; each process stops after S seconds.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import sys
import time

os.environ.setdefault("GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY", "true")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Examples", "cluster"))

import grpc  # noqa: E402  (after the environment variable)
import ring_hash_client  # noqa: E402

BORROW = "/adloader.v1.NativeAdLoader/Borrow"
# BorrowRequest { ad_unit_id: "bench", slot_key: "cell-1" }: a slot that holds its lease, so
# every call after the first answers REUSED with the ad (as cluster-load.sh's h2load sends).
REQUEST = b"\x0a\x05bench\x1a\x06cell-1"


def identity(b):
    return b


async def drive(endpoints, key, concurrency, warmup, duration):
    """(calls, failed, latencies in seconds) of the measured window."""
    options = json.dumps(
        {"loadBalancingConfig": [{"ring_hash_experimental": {"requestHashHeader": ring_hash_client.AFFINITY}}]}
    )
    async with grpc.aio.insecure_channel(
        "ipv4:" + ",".join(endpoints), options=[("grpc.service_config", options)]
    ) as channel:
        call = channel.unary_unary(BORROW, request_serializer=identity, response_deserializer=identity)
        metadata = ((ring_hash_client.AFFINITY, key),)
        await call(REQUEST, metadata=metadata, timeout=10)  # fills the replica's pool
        loop = asyncio.get_running_loop()
        start = loop.time()
        measure_from, stop = start + warmup, start + warmup + duration
        latencies, failed = [], 0

        async def worker():
            nonlocal failed
            while True:
                t0 = loop.time()
                if t0 >= stop:
                    return
                try:
                    await call(REQUEST, metadata=metadata, timeout=10)
                    ok = True
                except grpc.RpcError:
                    ok = False
                t1 = loop.time()
                if t0 >= measure_from:
                    if ok:
                        latencies.append(t1 - t0)
                    else:
                        failed += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return len(latencies), failed, latencies


def child(endpoints, key, concurrency, warmup, duration, out):
    before = resource.getrusage(resource.RUSAGE_SELF)
    calls, failed, latencies = asyncio.run(drive(endpoints, key, concurrency, warmup, duration))
    after = resource.getrusage(resource.RUSAGE_SELF)
    # CPU of the whole process, warm-up included: scaled to the measured window below.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out.put((key, calls, failed, latencies, cpu * duration / (duration + warmup)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("endpoints")
    parser.add_argument("keys")
    parser.add_argument("--concurrency", type=int, default=100, help="calls in flight per key process")
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    args = parser.parse_args()
    endpoints, keys = args.endpoints.split(","), args.keys.split(",")
    out = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(target=child, args=(endpoints, k, args.concurrency, args.warmup, args.duration, out))
        for k in keys
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=args.warmup + args.duration + 60) for _ in procs]
    for p in procs:
        p.join(timeout=10)
    calls = sum(r[1] for r in results)
    failed = sum(r[2] for r in results)
    latencies = sorted(x for r in results for x in r[3])
    cpu = sum(r[4] for r in results)
    for key, n, f, _, c in results:
        print(f"{key}: {n} calls, {f} failed, {n / args.duration:.0f} calls/s, client {c:.2f} s CPU")
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan")
    print(json.dumps({
        "calls": calls,
        "failed": failed,
        "calls_per_s": round(calls / args.duration, 2),
        "p99_ms": round(p99, 2),
        "client_cpu_us_per_call": round(cpu * 1e6 / calls, 2) if calls else None,
    }))
    return 0 if calls and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
