#!/usr/bin/env python3
"""What the shared Redis carries for app-open caps (SCALING.md): starts redis-server and one
adloaderd (Examples/cluster/adloaderd.json, loader "appopen") on free loopback ports, makes
DEVICES devices each open the app once and confirm the show (AppOpen + Return shown, through
the stock gRPC client), and prints Redis' keys, memory and commands per device.

    .venv/bin/python Benchmarks/redis-footprint.py [DEVICES]   (default 2000; make venv first)

ADLOADERD overrides the daemon binary (default .build/release/adloaderd, else debug).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "python"))
import grpc  # noqa: E402
import grpc_stubs  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, check=True).stdout


def info(port, section, field):
    for line in redis(port, "INFO", section).splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
    raise KeyError(field)


def eval_calls(port):
    for line in redis(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_eval:"):
            return int(line.split("calls=")[1].split(",")[0])
    return 0


def wait_port(port):
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main():
    devices = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    binary = os.environ.get("ADLOADERD") or next(
        p for p in (os.path.join(ROOT, ".build", c, "adloaderd") for c in ("release", "debug")) if os.path.exists(p))
    redis_port, port = free_port(), free_port()
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_port(redis_port)
            procs.append(subprocess.Popen(
                [binary, "--config", os.path.join(ROOT, "Examples", "cluster", "adloaderd.json"), "--port", str(port),
                 "--redis-port", str(redis_port), "--log-level", "warning",
                 "--pool-store-path", os.path.join(tmp, "pools-%d.sqlite" % port)],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w")))
            wait_port(port)
            s = grpc_stubs.load()
            stub = s.grpc.NativeAdLoaderStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
            memory_before = info(redis_port, "memory", "used_memory")
            calls_before = info(redis_port, "stats", "total_commands_processed")
            evals_before = eval_calls(redis_port)
            app_opens = 0
            shown = 0
            for n in range(devices):
                request = s.pb.AppOpenRequest(
                    device_id=f"{n:08x}-8f1c-4c1e-9d55-0242ac120002", session_id=f"session-{n}",
                    event=s.pb.APP_OPEN_EVENT_LAUNCH, ad_unit_id="splash", loader="appopen", utc_offset_seconds=3600)
                for _ in range(200):  # the pool refills as shows consume it
                    answer = stub.AppOpen(request, timeout=5)
                    app_opens += 1
                    if answer.outcome != s.pb.APP_OPEN_OUTCOME_NO_AD_READY:
                        break
                    time.sleep(0.005)
                if answer.outcome == s.pb.APP_OPEN_OUTCOME_SHOW:
                    stub.Return(s.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True), timeout=5)
                    shown += 1
            memory = info(redis_port, "memory", "used_memory") - memory_before
            calls = info(redis_port, "stats", "total_commands_processed") - calls_before
            evals = eval_calls(redis_port) - evals_before
            keys = int(redis(redis_port, "DBSIZE").strip())
            sample = [redis(redis_port, "--scan", "--pattern", pattern).split()[0] for pattern in ("*:d:*", "*:s:*")]
            ttls = {k: int(redis(redis_port, "PTTL", k).strip()) for k in sample}
            sizes = {k: int(redis(redis_port, "MEMORY", "USAGE", k).strip()) for k in sample}
            print(json.dumps({
                "devices": devices, "shown": shown, "keys": keys, "bytes": memory,
                "bytes_per_device": round(memory / devices, 1), "app_open_calls": app_opens,
                "evals": evals, "redis_commands_with_script_calls": calls,
                "sample_keys_ttl_ms": ttls, "sample_keys_memory_usage": sizes,
            }, indent=2))
        finally:
            for p in reversed(procs):
                p.terminate()
                p.wait(timeout=15)


if __name__ == "__main__":
    main()
