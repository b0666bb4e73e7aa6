#!/usr/bin/env python3
"""Issue 25's demand figures on the loopback exchange stub (Tests/python/openrtb_stub.py):

  formats  one daemon with a native, an interstitial, a rewarded and an app-open loader on one
           openrtb source; each format's ad unit gets Borrow + Return(shown) at the same rate
           at once; upstream requests per lent ad per format (the stub's BidRequests by tagid).
  classes  the same native loader with 16 consent classes configured (default + 15 classes of
           one GPP section each), Borrow + Return(shown) at the same total rate, the borrowers
           spread round robin over 1, 4 or 16 of the classes; a fresh daemon and stub per count;
           upstream requests per lent ad, and pools.

Every lent ad is shown once (showCountThreshold 1), so each pool refills in batches of
numberOfAdvertisements (5). Requests counted include each pool's first fill.

    Benchmarks/openrtb-demand.py [--bin DIR] [--seconds S] [--rate R] [--out DIR] [--smoke]

--bin: where adloaderd is (default .build/debug); --rate: Borrows per second per format, and
in all for the class runs (default 20); --seconds per run (default 60). Prints a table and
writes DIR/openrtb-demand.json and .txt (default bench-results/). Only 127.0.0.1 is used.
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
import grpc  # noqa: E402
import grpc_stubs  # noqa: E402

FORMATS = ["native", "interstitial", "rewarded", "appOpen"]
USNAT = "DBABLA~BVVqAAEABgA.QA"
GPP_CLASSES = list(range(7, 22))  # 15 classes, one GPP section id each


class Daemon:
    def __init__(self, bindir, config, tmp, name):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(config, f)
        self.log = open(os.path.join(tmp, name + ".err"), "wb")
        # In a directory of its own: the pool store's default file stays out of the checkout, and
        # no run restores the pools of the one before.
        home = os.path.join(tmp, name)
        os.makedirs(home)
        self.proc = subprocess.Popen([os.path.join(bindir, "adloaderd"), "--config", path, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=self.log, cwd=home)
        line = self.proc.stdout.readline().decode()
        if "listening on" not in line:
            raise SystemExit("adloaderd did not start: %r" % line)
        self.endpoint = "127.0.0.1:%d" % int(line.strip().split(" and ")[0].rsplit(":", 1)[1])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def source(exchange):
    return {"openrtb": {"type": "openrtb", "endpoint": exchange.url, "test": True, "appBundle": "com.example.bench",
                        "timeout": "1500ms"}}


def loader(fmt, classes=None):
    settings = {"source": "openrtb", "format": fmt, "numberOfAdvertisements": 5, "showCountThreshold": 1,
                "retry": {"delay": "100ms"}}
    if classes:
        settings["consent"] = {"classes": classes}
    return settings


def drive(endpoint, streams, rate, seconds):
    """streams: [(unit, loader, privacy or None)]; each stream Borrows at `rate`/s and Returns
    every lease shown. Returns {stream index: (borrows, lent)}."""
    s = grpc_stubs.load()
    results = {}
    deadline = time.monotonic() + seconds

    def run(index, unit, loader_name, privacy):
        channel = grpc.insecure_channel(endpoint)
        stub = s.grpc.NativeAdLoaderStub(channel)
        borrows = lent = 0
        interval = 1.0 / rate
        next_at = time.monotonic()
        while time.monotonic() < deadline:
            request = s.pb.BorrowRequest(ad_unit_id=unit, loader=loader_name, wait_ms=500)
            if privacy is not None:
                request.privacy.CopyFrom(privacy)
            try:
                answer = stub.Borrow(request, timeout=5)
                borrows += 1
                if answer.outcome == s.pb.BORROW_OUTCOME_LEASED:
                    lent += 1
                    stub.Return(s.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True), timeout=5)
            except grpc.RpcError:
                borrows += 1
            next_at += interval
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        channel.close()
        results[index] = (borrows, lent)

    threads = [threading.Thread(target=run, args=(i,) + tuple(stream)) for i, stream in enumerate(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def requests_by_unit(exchange):
    """{tagid: (BidRequests, imps)}."""
    counts = {}
    with exchange.lock:
        for _, body in exchange.requests:
            if isinstance(body, dict) and body.get("imp"):
                unit = body["imp"][0].get("tagid")
                requests, imps = counts.get(unit, (0, 0))
                counts[unit] = (requests + 1, imps + len(body["imp"]))
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "debug"))
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=float, default=20)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rate = 3, 5
    tmp = tempfile.mkdtemp(prefix="openrtb-demand-")
    report = {"seconds": args.seconds, "rate": args.rate, "formats": {}, "classes": {}}
    lines = []

    exchange = Exchange()
    exchange.strict = True
    try:
        d = Daemon(args.bin, {"log": {"level": "warning"}, "sources": source(exchange),
                              "loaders": {f: loader(f) for f in FORMATS}}, tmp, "formats")
        try:
            got = drive(d.endpoint, [("unit-" + f, f, None) for f in FORMATS], args.rate, args.seconds)
        finally:
            d.stop()
        by_unit = requests_by_unit(exchange)
        lines.append("format        borrows     lent  upstream  imps/request  per lent ad")
        for i, f in enumerate(FORMATS):
            borrows, lent = got[i]
            upstream, imps = by_unit.get("unit-" + f, (0, 0))
            report["formats"][f] = {"borrows": borrows, "lent": lent, "upstream_requests": upstream, "imps": imps,
                                    "upstream_per_lent_ad": round(upstream / lent, 4) if lent else None}
            lines.append("%-12s %8d %8d %9d  %12.2f  %11s" % (f, borrows, lent, upstream,
                                                              imps / upstream if upstream else 0,
                                                              "%.4f" % (upstream / lent) if lent else "-"))
        report["formats_invalid_requests"] = len(exchange.invalid)
    finally:
        exchange.stop()

    s = grpc_stubs.load()
    classes = {"default": {}}
    for sid in GPP_CLASSES:
        classes["gpp%d" % sid] = {"gpp": USNAT, "gppSectionIDs": [sid]}
    signals = [None] + [s.pb.PrivacySignals(gpp=USNAT, gpp_sid=[sid]) for sid in GPP_CLASSES]
    lines.append("")
    lines.append("classes in use  borrows     lent  upstream  imps/request  per lent ad  pools")
    for used in (1, 4, 16):
        exchange = Exchange()
        try:
            d = Daemon(args.bin, {"log": {"level": "warning"}, "sources": source(exchange),
                                  "loaders": {"feed": loader("native", classes)}}, tmp, "classes-%d" % used)
            try:
                # The same total rate, spread over `used` classes (one stream each).
                got = drive(d.endpoint, [("feed", "feed", signals[k]) for k in range(used)], args.rate / used,
                            args.seconds)
                stub = s.grpc.NativeAdLoaderStub(grpc.insecure_channel(d.endpoint))
                pools = len(stub.Stats(s.pb.StatsRequest(loader="feed"), timeout=10).pools)
            finally:
                d.stop()
            borrows = sum(b for b, _ in got.values())
            lent = sum(l for _, l in got.values())
            upstream, imps = requests_by_unit(exchange).get("feed", (0, 0))
            report["classes"][str(used)] = {"borrows": borrows, "lent": lent, "upstream_requests": upstream,
                                            "imps": imps,
                                            "upstream_per_lent_ad": round(upstream / lent, 4) if lent else None,
                                            "pools": pools, "invalid_requests": len(exchange.invalid)}
            lines.append("%14d %8d %8d %9d  %12.2f  %11s  %5d" % (
                used, borrows, lent, upstream, imps / upstream if upstream else 0,
                "%.4f" % (upstream / lent) if lent else "-", pools))
        finally:
            exchange.stop()
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "openrtb-demand.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "openrtb-demand.txt"), "w") as f:
        f.write(text + "\n")
    if any(v["lent"] == 0 for v in report["formats"].values()):
        raise SystemExit("a format lent nothing")


if __name__ == "__main__":
    main()
