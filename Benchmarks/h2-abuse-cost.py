#!/usr/bin/env python3
"""Daemon CPU per attacking connection, and the longest stall a neighbour saw, for each HTTP/2
abuse round of Tests/python/h2_attacks.py (issue 28): where the neighbour's p99 goes.

    Benchmarks/h2-abuse-cost.py [--binary .build/debug/adloaderd] [--rounds 20] [variant ...]

For each variant: ROUNDS attacking connections one after the other (the attacker in its own
process, as in the tests), first alone (the daemon's utime+stime from /proc/PID/stat per round),
then again while a neighbour thread sends one gRPC Borrow at a time on its own connection (its
median and max latency during the rounds, and its median with no attack just before). CPU per round does not depend on the machine's load; the latencies do.
"""

import argparse
import multiprocessing
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "python"))

import grpc  # noqa: E402

import conftest  # noqa: E402
import grpc_stubs  # noqa: E402
import h2_attacks as attacks  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
VARIANTS = [name for family in attacks.FAMILIES.values() for name, _ in family]
ARGS = {name: args for family in attacks.FAMILIES.values() for name, args in family}
for kind in attacks.MADE_YOU_RESET:
    ARGS[f"round_made_you_reset:{kind}"] = (kind,)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def attack_rounds(host, port, function, args, rounds):
    for _ in range(rounds):
        try:
            getattr(attacks, function)(host, port, *args)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(HERE, "..", ".build", "debug", "adloaderd"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("variants", nargs="*")
    options = parser.parse_args()
    conftest.BINARY = options.binary
    names = options.variants or VARIANTS + [f"round_made_you_reset:{k}" for k in attacks.MADE_YOU_RESET[1:]]
    d = conftest.Daemon(config={"sources": {"synthetic": {"latency": "5ms"}}, "loaders": {"default": {}}},
                        env={"ADLOADERD_LOG_LEVEL": "info"})
    try:
        s = grpc_stubs.load()
        channel = grpc.insecure_channel(d.endpoint)
        stub = s.grpc.NativeAdLoaderStub(channel)
        request = s.pb.BorrowRequest(ad_unit_id="neighbour", slot_key="cell-1", wait_ms=2000)
        stub.Borrow(request, timeout=10)
        context = multiprocessing.get_context("spawn")
        print(f"{'variant':45} {'CPU ms/round':>12} {'idle p50':>9} {'attack p50':>10} {'attack max':>10}")
        for name in names:
            function = name.split(":")[0]
            args = ARGS[name]

            def calls(stop, out):
                while not stop.is_set():
                    started = time.perf_counter()
                    stub.Borrow(request, timeout=10)
                    out.append(time.perf_counter() - started)

            idle = []
            stop = threading.Event()
            t = threading.Thread(target=calls, args=(stop, idle))
            t.start()
            time.sleep(0.5)
            stop.set()
            t.join()
            # The attack alone: the daemon's CPU per attacking connection.
            attacker = context.Process(target=attack_rounds, args=(d.host, d.port, function, args, options.rounds))
            before = cpu_seconds(d.pid)
            attacker.start()
            attacker.join()
            spent = cpu_seconds(d.pid) - before
            # The attack again, with the neighbour calling meanwhile.
            during = []
            stop = threading.Event()
            t = threading.Thread(target=calls, args=(stop, during))
            attacker = context.Process(target=attack_rounds, args=(d.host, d.port, function, args, options.rounds))
            t.start()
            attacker.start()
            attacker.join()
            stop.set()
            t.join()
            print(f"{name:45} {spent * 1000 / options.rounds:12.2f} {statistics.median(idle) * 1000:9.2f} "
                  f"{statistics.median(during) * 1000:10.2f} {max(during) * 1000:10.2f}  ({len(during)} calls)",
                  flush=True)
        channel.close()
    finally:
        d.stop()


if __name__ == "__main__":
    main()
