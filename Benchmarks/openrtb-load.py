#!/usr/bin/env python3
"""OpenRTB load: Borrow + Return(shown) against adloaderd with an openrtb source on the
loopback exchange stub (Tests/python/openrtb_stub.py), side by side with the same load on a
synthetic source, same machine, same run. Every lent ad is consumed, so the pool refills from
upstream: upstream requests per lent ad should be near 1/numberOfAdvertisements, and every
consumed ad fires one billing notice. RSS and open file descriptors of each daemon are sampled
every 5 s.

    Benchmarks/openrtb-load.py [--duration S] [--rate R] [--batch N] [--bin DIR] [--smoke] [--out DIR]

--bin: where adloaderd, adloader and ProtocolLoadBench are (default .build/release, built
first); --smoke: 3 s at a low rate from .build/debug. Prints a table and writes
DIR/openrtb-load.json (default bench-results/). Only 127.0.0.1 is used; everything started stops on exit.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "python"))
from openrtb_stub import Exchange  # noqa: E402


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


class Daemon:
    def __init__(self, bindir, config, tmp, name):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(config, f)
        self.log = open(os.path.join(tmp, name + ".err"), "wb")
        self.proc = subprocess.Popen([os.path.join(bindir, "adloaderd"), "--config", path, "--port", "0",
                                      "--pool-store-path", os.path.join(tmp, name + "-pools.sqlite")],
                                     stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if "listening on" not in line:
            raise SystemExit("adloaderd did not start: %r" % line)
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.pid = self.proc.pid
        self.samples = []
        self.bindir = bindir

    def sample(self):
        self.samples.append((time.monotonic(), rss_kib(self.pid), fds(self.pid)))

    def stats(self):
        out = subprocess.run([os.path.join(self.bindir, "adloader"), "--endpoint", "127.0.0.1:%d" % self.port,
                              "--json", "stats"], capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def loader(source, batch):
    return {"default": {"source": source, "numberOfAdvertisements": batch, "maximumRetainedAdvertisements": 50,
                        "showCountThreshold": 1, "retry": {"delay": "100ms"}}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--rate", type=float, default=800)
    # The framed transport keeps the encodings of the last 16,384 lent ads (EncodedAdCache):
    # memory grows until that cache is full, then stays. The warmup lends more than that
    # at the default rate, so the measured minute shows the steady state.
    parser.add_argument("--warmup", type=float, default=50)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--bin", default=None)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    args = parser.parse_args()
    if args.smoke:
        args.duration, args.rate, args.warmup = 3, 50, 1
    config = "debug" if args.smoke else "release"
    bindir = args.bin or os.path.join(ROOT, ".build", config)
    if args.bin is None:
        for product in ("adloaderd", "adloader", "ProtocolLoadBench"):
            subprocess.run(["swift", "build", "-c", config, "--product", product], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
    exchange = Exchange()
    tmp = tempfile.mkdtemp(prefix="openrtb-load-")
    daemons = {}
    results = {}
    try:
        daemons["openrtb"] = Daemon(bindir, {
            "log": {"level": "warning"},
            "sources": {"openrtb": {"type": "openrtb", "endpoint": exchange.url, "test": True,
                                    "appBundle": "com.example.bench"}},
            "loaders": loader("openrtb", args.batch)}, tmp, "openrtb")
        daemons["synthetic"] = Daemon(bindir, {
            "log": {"level": "warning"},
            "sources": {"synthetic": {"latency": "0ms", "fillRate": 1, "seed": 7}},
            "loaders": loader("synthetic", args.batch)}, tmp, "synthetic")
        stop = threading.Event()

        def sampler():
            while not stop.wait(5 if not args.smoke else 1):
                for d in daemons.values():
                    d.sample()

        for name, d in daemons.items():
            d.sample()
        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        # Both loads at once: the same run, the same machine state.
        runs = {}
        for name, d in daemons.items():
            runs[name] = subprocess.Popen(
                [os.path.join(bindir, "ProtocolLoadBench"), "--port", str(d.port), "--connections", "4",
                 "--rate", str(args.rate), "--duration", str(args.duration), "--warmup", str(args.warmup), "--shown",
                 "--server-pid", str(d.pid), "--quiet", "--label", name], stdout=subprocess.PIPE, text=True)
        for name, run in runs.items():
            out, _ = run.communicate(timeout=args.duration + args.warmup + 120)
            if run.returncode != 0:
                raise SystemExit("ProtocolLoadBench against %s failed: %s" % (name, out))
            results[name] = {"load": json.loads(out.strip().splitlines()[-1])}
        time.sleep(1)  # notices of the last shows
        stop.set()
        thread.join()
        for name, d in daemons.items():
            d.sample()
            stats = d.stats()
            pools = stats["pools"]
            lent = sum(int(p["borrowHits"]) for p in pools)
            upstream = sum(int(p["upstreamRequests"]) for p in pools)
            # The measured window: from the end of the warmup to the end of the load.
            start = d.samples[0][0] + args.warmup
            window = [x for x in d.samples if x[0] >= start] or d.samples
            first, last = window[0], window[-1]
            results[name].update({
                "lent": lent, "upstream_requests": upstream,
                "upstream_per_lent_ad": round(upstream / lent, 4) if lent else None,
                "consumed": sum(int(p["consumed"]) for p in pools),
                "upstream_failures": sum(int(p["upstreamFailures"]) for p in pools),
                "sources": stats.get("sources", []),
                "rss_kib_first_last": [first[1], last[1]], "rss_kib_max": max(x[1] for x in window),
                "fds_first_last": [first[2], last[2]], "fds_max": max(x[2] for x in window),
                "samples_s_rss_kib_fds": [(round(t - d.samples[0][0], 1), r, n) for t, r, n in d.samples],
            })
        results["stub"] = {"auction_requests": len(exchange.requests), "bill_notices": len(exchange.notices_of("bill"))}
    finally:
        for d in daemons.values():
            d.stop()
        exchange.stop()
    print("%-10s %8s %9s %8s %10s %8s %9s %22s %8s" % (
        "source", "calls/s", "no ad yet", "lent", "upstream", "per ad", "notices", "RSS KiB measured", "fds"))
    for name in ("openrtb", "synthetic"):
        r = results[name]
        notices = sum(int(s.get("noticesSent", 0)) for s in r["sources"]) if r["sources"] else "-"
        print("%-10s %8.0f %9d %8d %10d %8.4f %9s %10d→%-11d %3d→%d" % (
            name, r["load"]["calls_per_s"], r["load"]["no_ad_yet"], r["lent"], r["upstream_requests"],
            r["upstream_per_lent_ad"] or 0, notices, r["rss_kib_first_last"][0], r["rss_kib_first_last"][1],
            r["fds_first_last"][0], r["fds_first_last"][1]))
    print("stub: %d auction requests, %d billing notices" % (results["stub"]["auction_requests"], results["stub"]["bill_notices"]))
    out = args.out
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "openrtb-load.json"), "w") as f:
        json.dump(results, f, indent=1)
    if results["openrtb"]["lent"] == 0:
        raise SystemExit("no ad lent from the openrtb source")


if __name__ == "__main__":
    main()
