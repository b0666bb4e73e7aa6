#!/usr/bin/env python3
"""TLS cost, side by side in one run: adloaderd with --tls-cert against nghttpd with the same
key and certificate (BENCHMARKS.md, "TLS").

- Handshakes: HANDSHAKES serial TLS 1.3 handshakes (ALPN h2, one new connection each, closed
  after the handshake) against each server; server CPU per handshake (utime+stime from
  /proc/PID/stat over the run, divided by the handshakes) and the client's wall time per one.
- Calls: h2load over TLS (https, 32 connections x 10 streams, DURATION seconds after a warm-up
  second) sending gRPC Borrow to adloaderd (a slot that holds its lease: every call answers
  REUSED with the ~400-byte ad) and GET of a 400-byte static file to nghttpd; and the same
  adloaderd Borrow over h2c (cleartext) for what TLS adds per call. Server CPU per call as above.

    Benchmarks/tls-load.py [--adloaderd BIN] [--duration S] [--handshakes N] [--runs R]

The certificate (EC P-256, SAN 127.0.0.1) is made with the `openssl` command in a temporary
directory. Only 127.0.0.1 is used; every server stops on exit. Needs h2load and nghttpd
(nghttp2-client, nghttp2-server).
"""

import argparse
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TCK = os.sysconf("SC_CLK_TCK")
GRPC_HEADERS = ["-H", "content-type: application/grpc", "-H", "te: trailers"]
# BorrowRequest { ad_unit_id: "bench", slot_key: "cell-1" } with the 5-byte gRPC prefix.
BORROW = b"\x00\x00\x00\x00\x0f\x0a\x05bench\x1a\x06cell-1"


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def make_certificate(directory):
    key, cert = os.path.join(directory, "server.key"), os.path.join(directory, "server.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=bench",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def handshakes(port, count):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    started = time.perf_counter()
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                assert tls.version() == "TLSv1.3" and tls.selected_alpn_protocol() == "h2"
    return (time.perf_counter() - started) / count


def h2load(url, duration, extra):
    subprocess.run(["h2load", "-c", "32", "-m", "10", "-D", "1", *extra, url], capture_output=True)
    run = subprocess.run(["h2load", "-c", "32", "-m", "10", "-D", str(duration), *extra, url],
                         capture_output=True, text=True)
    succeeded = re.search(r"requests: .* (\d+) succeeded", run.stdout)
    rate = re.search(r"finished in [0-9.]+s, ([0-9.]+) req/s", run.stdout)
    return int(succeeded.group(1)) if succeeded else 0, float(rate.group(1)) if rate else 0.0


def measure_calls(name, pid, url, duration, extra=()):
    before = ticks(pid)
    calls, rate = h2load(url, duration, list(extra))
    after = ticks(pid)
    cpu = (after - before) / TCK * 1e6 / calls if calls else float("nan")
    print(f"{name:34} {rate:>10.0f} calls/s  {cpu:7.2f} us server CPU/call  ({calls} calls)", flush=True)
    return rate, cpu


def measure_handshakes(name, pid, port, count):
    before = ticks(pid)
    wall = handshakes(port, count)
    after = ticks(pid)
    cpu = (after - before) / TCK * 1e6 / count
    print(f"{name:34} {wall * 1e6:>10.0f} us wall/handshake  {cpu:7.1f} us server CPU/handshake  ({count})", flush=True)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adloaderd", default=os.path.join(ROOT, ".build", "release", "adloaderd"))
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--handshakes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="tls-load-")
    cert, key = make_certificate(work)
    www = os.path.join(work, "www")
    os.makedirs(www)
    with open(os.path.join(www, "ad.bin"), "wb") as f:
        f.write(os.urandom(400))
    processes = []
    try:
        tls_port, plain_port, nghttpd_port = free_port(), free_port(), free_port()
        common = ["--synthetic-latency", "5ms", "--log-level", "warning"]
        tls = subprocess.Popen([args.adloaderd, "--port", str(tls_port), "--tls-cert", cert, "--tls-key", key, *common,
                                "--pool-store-path", os.path.join(work, "tls-pools.sqlite")],
                               stdout=subprocess.DEVNULL)
        plain = subprocess.Popen([args.adloaderd, "--port", str(plain_port), *common,
                                  "--pool-store-path", os.path.join(work, "plain-pools.sqlite")], stdout=subprocess.DEVNULL)
        nghttpd = subprocess.Popen(["nghttpd", "-d", www, str(nghttpd_port), key, cert],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes += [tls, plain, nghttpd]
        for port in (tls_port, plain_port, nghttpd_port):
            wait_port(port)
        borrow = os.path.join(work, "borrow.grpc")
        with open(borrow, "wb") as f:
            f.write(BORROW)
        grpc = [*GRPC_HEADERS, "-d", borrow]
        # The slot's first Borrow waits for an ad; every later one is REUSED.
        for port, scheme in [(tls_port, "https"), (plain_port, "http")]:
            subprocess.run(["h2load", "-n", "1", *grpc, f"{scheme}://127.0.0.1:{port}/adloader.v1.NativeAdLoader/Borrow"],
                           capture_output=True)
        time.sleep(0.2)
        for port, scheme in [(tls_port, "https"), (plain_port, "http")]:
            subprocess.run(["h2load", "-n", "1", *grpc, f"{scheme}://127.0.0.1:{port}/adloader.v1.NativeAdLoader/Borrow"],
                           capture_output=True)
        for run in range(args.runs):
            print(f"-- run {run + 1}", flush=True)
            measure_handshakes("adloaderd TLS handshake", tls.pid, tls_port, args.handshakes)
            measure_handshakes("nghttpd TLS handshake", nghttpd.pid, nghttpd_port, args.handshakes)
            measure_calls("adloaderd gRPC Borrow over TLS", tls.pid,
                          f"https://127.0.0.1:{tls_port}/adloader.v1.NativeAdLoader/Borrow", args.duration, grpc)
            measure_calls("adloaderd gRPC Borrow over h2c", plain.pid,
                          f"http://127.0.0.1:{plain_port}/adloader.v1.NativeAdLoader/Borrow", args.duration, grpc)
            measure_calls("nghttpd static 400 B over TLS", nghttpd.pid,
                          f"https://127.0.0.1:{nghttpd_port}/ad.bin", args.duration)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
