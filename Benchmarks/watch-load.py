#!/usr/bin/env python3
"""Watch under load: server CPU per delivered event, gRPC watchers against framed watchers.

One release adloaderd; ProtocolLoadBench makes the events (framed Borrow + unshown Return pairs,
--rate calls/s in all, on ad unit "bench": each pair is a LEASED and a RETURNED event, plus
RECEIVED as the pool refills). Three phases of --duration seconds each, one after another on the same
daemon: no watchers; --watchers gRPC Watch streams of that ad unit (h2load, 10 connections);
the same number of framed Watch calls (raw sockets, one call each, drained). A reference
framed watcher counts the events of each phase (frames parsed), so the events delivered are
watchers x that count. Server CPU is utime+stime from /proc/PID/stat over the load window;
CPU per event = (phase CPU - the no-watcher phase's CPU) / events delivered.

    .venv/bin/python Benchmarks/watch-load.py [--watchers 100] [--rate 1000] [--duration 5]
        [--adloaderd .build/release/adloaderd] [--out bench-results]

Needs h2load (nghttp2-client) and .build/release/ProtocolLoadBench. Only 127.0.0.1 is used.
"""

import argparse
import os
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFACE = b"ADLOADER/1\r\n"
WATCH = "/adloader.v1.NativeAdLoader/Watch"
TCK = os.sysconf("SC_CLK_TCK")


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def watch_request(ad_unit):
    return field(2, ad_unit.encode())  # WatchRequest.ad_unit_id


def framed_watch(call_id, ad_unit):
    envelope = varint(1 << 3) + varint(call_id) + field(2, WATCH.encode()) + field(5, watch_request(ad_unit))
    return b"\x00" + struct.pack(">I", len(envelope)) + envelope


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class ReferenceWatcher(threading.Thread):
    """One framed Watch whose events are counted (frames with end false)."""

    def __init__(self, port, ad_unit):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(PREFACE + framed_watch(1, ad_unit))
        self.events = 0
        self.stopped = False

    def run(self):
        buffer = b""
        preface_read = False
        while not self.stopped:
            try:
                data = self.sock.recv(1 << 20)
            except OSError:
                return
            if not data:
                return
            buffer += data
            if not preface_read:
                if len(buffer) < len(PREFACE):
                    continue
                buffer = buffer[len(PREFACE):]
                preface_read = True
            offset = 0
            while len(buffer) - offset >= 5:
                length = struct.unpack_from(">I", buffer, offset + 1)[0]
                if len(buffer) - offset < 5 + length:
                    break
                self.events += 1
                offset += 5 + length
            buffer = buffer[offset:]

    def stop(self):
        self.stopped = True
        self.sock.close()


class FramedDrainers(threading.Thread):
    """N framed Watch calls whose answers are read and dropped."""

    def __init__(self, port, ad_unit, count):
        super().__init__(daemon=True)
        self.selector = selectors.DefaultSelector()
        self.socks = []
        for i in range(count):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(PREFACE + framed_watch(1, ad_unit))
            s.setblocking(False)
            self.selector.register(s, selectors.EVENT_READ)
            self.socks.append(s)
        self.bytes = 0
        self.stopped = False

    def run(self):
        while not self.stopped:
            for key, _ in self.selector.select(timeout=0.1):
                try:
                    data = key.fileobj.recv(1 << 20)
                except (BlockingIOError, OSError):
                    continue
                self.bytes += len(data)

    def stop(self):
        self.stopped = True
        time.sleep(0.2)
        for s in self.socks:
            s.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--adloaderd", default=os.path.join(ROOT, ".build", "release", "adloaderd"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    args = parser.parse_args()
    loadbench = os.path.join(ROOT, ".build", "release", "ProtocolLoadBench")
    for tool in (args.adloaderd, loadbench):
        if not os.access(tool, os.X_OK):
            sys.exit(f"missing {tool} (swift build -c release --product adloaderd / ProtocolLoadBench)")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp()
    config = os.path.join(work, "adloaderd.json")
    with open(config, "w") as f:
        f.write('{ "listeners": { "host": "127.0.0.1", "port": 0 }, "log": { "level": "warning" },'
                ' "sources": { "synthetic": { "latency": "0ms", "fillRate": 1, "seed": 7 } },'
                ' "loaders": { "default": { "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,'
                ' "leaseTimeout": "60s" } } }')
    daemon = subprocess.Popen([args.adloaderd, "--config", config, "--pool-store-path", os.path.join(work, "pools.sqlite")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    port = None
    for line in daemon.stdout:
        if "listening on 127.0.0.1:" in line:
            port = int(line.rsplit(":", 1)[1].split()[0])
            break
    if port is None:
        sys.exit("the daemon did not start")
    threading.Thread(target=lambda: [None for _ in daemon.stdout], daemon=True).start()
    body = os.path.join(work, "watch.grpc")
    with open(body, "wb") as f:
        message = watch_request("bench")
        f.write(b"\x00" + struct.pack(">I", len(message)) + message)

    rows = []
    try:
        for phase in ("none", "grpc", "framed"):
            reference = ReferenceWatcher(port, "bench")
            reference.start()
            watchers = None
            h2load = None
            if phase == "grpc":
                conns = min(10, args.watchers)
                h2load = subprocess.Popen(
                    ["h2load", "-c", str(conns), "-m", str((args.watchers + conns - 1) // conns), "-n",
                     str(args.watchers), "-D", str(int(args.duration + 3)), "-H", "content-type: application/grpc",
                     "-H", "te: trailers", "-d", body, f"http://127.0.0.1:{port}{WATCH}"],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            elif phase == "framed":
                watchers = FramedDrainers(port, "bench", args.watchers)
                watchers.start()
            time.sleep(1.0)
            before_events = reference.events
            before = ticks(daemon.pid)
            started = time.monotonic()
            subprocess.run([loadbench, "--port", str(port), "--connections", "4", "--depth", "4", "--rate",
                            str(args.rate), "--duration", str(args.duration), "--warmup", "0", "--ad-unit", "bench",
                            "--quiet"], check=True, stdout=subprocess.DEVNULL)
            after = ticks(daemon.pid)
            elapsed = time.monotonic() - started
            events = reference.events - before_events
            cpu_s = (after - before) / TCK
            detail = ""
            if h2load is not None:
                out, _ = h2load.communicate()
                traffic = next((l for l in out.splitlines() if l.startswith("traffic:")), "")
                detail = traffic.strip() or " / ".join(out.strip().splitlines()[-2:])
            if watchers is not None:
                watchers.stop()
                detail = f"{watchers.bytes} bytes drained"
            reference.stop()
            rows.append((phase, events, cpu_s, elapsed, detail))
            print(f"{phase:7s} events per watcher {events:8d}  server CPU {cpu_s:6.2f} s over {elapsed:5.2f} s  {detail}")
            time.sleep(0.5)
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
    base_rate = rows[0][2] / rows[0][3]
    with open(os.path.join(args.out, "watch-load.csv"), "w") as f:
        f.write("phase,watchers,events_per_watcher,server_cpu_s,seconds,events_delivered,server_cpu_us_per_event\n")
        for phase, events, cpu_s, elapsed, _ in rows:
            if phase == "none":
                f.write(f"{phase},0,{events},{cpu_s:.2f},{elapsed:.2f},{events},\n")
                continue
            delivered = events * args.watchers
            per_event = (cpu_s - base_rate * elapsed) / delivered * 1e6 if delivered else float("nan")
            print(f"{phase:7s} {args.watchers} watchers: {delivered} events delivered, "
                  f"{per_event:.2f} us server CPU per event above the no-watcher phase")
            f.write(f"{phase},{args.watchers},{events},{cpu_s:.2f},{elapsed:.2f},{delivered},{per_event:.2f}\n")
    print(f"results: {os.path.join(args.out, 'watch-load.csv')}")


if __name__ == "__main__":
    main()
