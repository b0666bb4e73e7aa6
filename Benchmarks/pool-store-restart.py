"""Suspend/restore cost of the pool store (BENCHMARKS.md section 8): fills one pool of N synthetic
ads, leases 100, stops (SIGTERM), measures the file, starts again on it, prints the daemon's own
log lines. Usage: python3 Benchmarks/pool-store-restart.py [BIN_DIR] [N]"""
import json, os, signal, subprocess, sys, time, tempfile
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else ROOT + "/.build/debug"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
d = tempfile.mkdtemp(prefix="durable-bench-")
cfg = {"poolStore": {"sqlitePath": d + "/pools.sqlite"},
       "sources": {"synthetic": {"type": "synthetic", "latency": "1ms"}},
       "loaders": {"bulk": {"source": "synthetic", "sizing": "fixed", "numberOfAdvertisements": 5,
                            "maximumRetainedAdvertisements": N, "maximumConcurrentRequests": 512, "lifetime": "1h"}}}
open(d + "/c.json", "w").write(json.dumps(cfg))
def start():
    log = open(d + "/log", "ab")
    p = subprocess.Popen([BIN + "/adloaderd", "--config", d + "/c.json", "--port", "0"], stdout=subprocess.PIPE, stderr=log, cwd=d)
    line = p.stdout.readline().decode()
    return p, line.split("listening on ")[1].split()[0]
def cli(ep, *a):
    return subprocess.run([BIN + "/adloader", "--endpoint", ep, *a], capture_output=True, text=True).stdout
p, ep = start()
cli(ep, "prefetch", "unit", "--loader", "bulk")
deadline = time.time() + 600
while time.time() < deadline:
    s = json.loads(cli(ep, "--json", "stats", "--loader", "bulk"))["pools"]
    if s and s[0]["available"] >= N: break
    time.sleep(1)
print("filled", s[0]["available"])
for i in range(100):
    cli(ep, "borrow", "unit", "--loader", "bulk", "--slot", "s%d" % i)
rss = open("/proc/%d/status" % p.pid).read().split("VmRSS:")[1].split()[0]
print("rss_kib", rss)
p.send_signal(signal.SIGTERM); p.wait()
size = os.path.getsize(d + "/pools.sqlite") + (os.path.getsize(d + "/pools.sqlite-wal") if os.path.exists(d + "/pools.sqlite-wal") else 0)
print("store_bytes", size, "per_ad", size / N)
p, ep = start()
time.sleep(1)
p.send_signal(signal.SIGTERM); p.wait()
for line in open(d + "/log"):
    if "pools suspended" in line or "pools restored" in line: print(line.strip())
