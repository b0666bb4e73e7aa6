#!/usr/bin/env python3
"""The neighbour rule's measurement (Tests/python/neighbour.py) for several attacks against one
debug daemon, without pytest: baseline and attack p99 (median over windows) and their ratio.

    chrt -f 10 .venv/bin/python Benchmarks/h2-neighbour.py [ATTACK,...] [BINARY]

An ATTACK is module:function[:argument], e.g. h2_attacks:round_family:header-table (the
default: the three HTTP/2 families), or h2-neighbour:round_connect_close, a control that opens
and closes a connection. Run under SCHED_FIFO (chrt) on a shared machine: see BENCHMARKS.md 8.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "python"))
sys.path.insert(0, HERE)

DEFAULT = ("h2_attacks:round_family:made-you-reset,h2_attacks:round_family:header-table,"
           "h2_attacks:round_family:closed-window-or-not-reading")


def round_connect_close(host, port):
    """The control: a connection opened and closed at once, no abuse."""
    import h2_attacks
    h2_attacks.connect(host, port).close()
    time.sleep(0.001)


def main():
    import grpc
    import conftest
    import grpc_stubs
    import neighbour

    specs = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    if len(sys.argv) > 2:
        conftest.BINARY = sys.argv[2]
    d = conftest.Daemon(config={"sources": {"synthetic": {"latency": "5ms"}}, "loaders": {"default": {}}},
                        env={"ADLOADERD_LOG_LEVEL": "info"})
    try:
        s = grpc_stubs.load()
        channel = grpc.insecure_channel(d.endpoint)
        stub = s.grpc.NativeAdLoaderStub(channel)
        request = s.pb.BorrowRequest(ad_unit_id="neighbour", slot_key="cell-1", wait_ms=2000)
        stub.Borrow(request, timeout=10)
        for spec in specs.split(","):
            module, function, *args = spec.split(":")
            attacker = neighbour.Attacker(d, module, function, *args)
            try:
                r = neighbour.measure(d, lambda: stub.Borrow(request, timeout=10), attacker)
            finally:
                attacker.close()
            print(f"{spec:50} baseline {r.baseline * 1000:.2f} ms, attack {r.attack * 1000:.2f} ms, "
                  f"ratio {r.attack / r.baseline:.2f}; {r}", flush=True)
        channel.close()
    finally:
        d.stop()


if __name__ == "__main__":
    main()
