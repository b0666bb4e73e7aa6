"""Loop pauses with the pool store on and off at N pooled ads (BENCHMARKS.md section 9): for
each of store on and store off, one release daemon fills one pool of N synthetic ads, then
ProtocolLoadBench runs framed Borrow+Return at 32 x 16 for S seconds against another ad unit
of the same loader; the daemon's own loop-lag histogram (adloader_event_loop_lag_seconds, a
timer every 100 ms, read from /metrics before and after the load) gives the share of ticks
late by more than 1 ms, and the server CPU per call comes from ProtocolLoadBench. Then
kill -9 and a start on the same files time the journal's replay.
Usage: python3 Benchmarks/pool-store-pause.py [BIN_DIR] [N] [SECONDS]"""
import json, os, re, signal, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ROOT + "/.build/release")
# The CLI only fills and reads Stats: the debug one does when no release one was built.
CLI = BIN + "/adloader" if os.path.exists(BIN + "/adloader") else ROOT + "/.build/debug/adloader"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 10


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def lag(admin):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % admin, timeout=10).read().decode()
    buckets = {}
    for le, value in re.findall(r'adloader_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\d+)', text):
        buckets[le] = int(value)
    return buckets


def run(store_on):
    d = tempfile.mkdtemp(prefix="pool-pause-")
    admin = free_port()
    cfg = {"poolStore": {"sqlitePath": d + "/pools.sqlite"} if store_on else {"type": "off"},
           "admin": {"port": admin}, "log": {"level": "info"},
           "sources": {"synthetic": {"type": "synthetic", "latency": "1ms"}},
           "loaders": {"default": {"source": "synthetic", "sizing": "fixed", "numberOfAdvertisements": 5,
                                "maximumRetainedAdvertisements": N, "maximumConcurrentRequests": 512,
                                "lifetime": "1h", "leaseTimeout": "60s"}}}
    open(d + "/c.json", "w").write(json.dumps(cfg))

    def start():
        log = open(d + "/log", "ab")
        p = subprocess.Popen([BIN + "/adloaderd", "--config", d + "/c.json", "--port", "0"],
                             stdout=subprocess.PIPE, stderr=log, cwd=d)
        line = p.stdout.readline().decode()
        return p, int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])

    def cli(port, *a):
        return subprocess.run([CLI, "--endpoint", "127.0.0.1:%d" % port, *a],
                              capture_output=True, text=True).stdout

    p, port = start()
    started = time.time()
    cli(port, "prefetch", "unit", "--loader", "default")
    while time.time() - started < 600:
        pools = json.loads(cli(port, "--json", "stats", "--loader", "default"))["pools"]
        if pools and pools[0]["available"] >= N:
            break
        time.sleep(0.5)
    fill = time.time() - started
    before = lag(admin)
    out = subprocess.run([BIN + "/ProtocolLoadBench", "--port", str(port), "--connections", "32", "--depth", "16",
                          "--duration", str(SECONDS), "--ad-unit", "unit", "--server-pid", str(p.pid), "--quiet"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("ProtocolLoadBench failed: " + out.stdout[-500:] + out.stderr[-500:])
    out = out.stdout
    after = lag(admin)
    result = json.loads(out.strip().splitlines()[-1])
    ticks = after.get("+Inf", 0) - before.get("+Inf", 0)
    within = after.get("0.001", 0) - before.get("0.001", 0)
    journal = os.path.getsize(d + "/pools.sqlite.journal") if os.path.exists(d + "/pools.sqlite.journal") else 0
    # The largest lag during the load: the smallest bucket bound holding every tick of it.
    bounds = sorted((float(le), after[le] - before.get(le, 0)) for le in after if le != "+Inf")
    worst = next((le for le, count in bounds if count == ticks), float("inf"))
    print("store %s: %d ads pooled (filled in %.1f s), Borrow+Return 32x16: %s calls/s, server CPU %s us/call; "
          "loop-lag ticks %d, late > 1 ms: %d (%.2f %%), every one within %s s; journal %d B = %.0f B/ad"
          % ("on" if store_on else "off", N, fill, result.get("calls_per_s"), result.get("server_cpu_us_per_call"),
             ticks, ticks - within, 100.0 * (ticks - within) / max(ticks, 1), worst, journal, journal / N))
    if store_on:
        for line in open(d + "/log"):
            if "pool journal compacted" in line:
                print("  during the fill and the load: " + line.strip())
    if store_on:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p, port = start()
        time.sleep(1)
        p.send_signal(signal.SIGTERM)
        p.wait()
        for line in open(d + "/log"):
            if "pools recovered" in line or "pools suspended" in line:
                print("  " + line.strip())
    else:
        p.send_signal(signal.SIGTERM)
        p.wait()


run(True)
run(False)
