"""The pool journal's compaction at N pooled ads (BENCHMARKS.md section 9.2): one release daemon
fills one pool of N synthetic ads through `adloader prefetch` (the fill's arrivals alone pass
the 64 MiB compaction threshold at 100,000 ads), then waits (bounded) for the daemon's `pool
journal compacted` line, which gives the whole compaction's time on its thread (`ms`) and the
loop's part of it (`loopUs`: starting the thread, then copying the last frames written
meanwhile and renaming; from branch durable6 on, `loopMaxUs`: the longest of those parts, and
`loopCpuUs`: the loop thread's CPU time in them, apart from waits and preemption, and
`loopBlocked`/`loopPreempted`: the loop thread's voluntary/involuntary context switches in them).
The loop-lag histogram (a timer every 100 ms) is read before the fill and after the compaction. Then SIGTERM and a start time the suspension and the restore.
Usage: python3 Benchmarks/pool-store-compaction.py [BIN_DIR] [N]"""
import json, os, re, signal, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ROOT + "/.build/release")
CLI = BIN + "/adloader" if os.path.exists(BIN + "/adloader") else ROOT + "/.build/debug/adloader"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def lag(admin):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % admin, timeout=10).read().decode()
    return {le: int(v) for le, v in re.findall(r'adloader_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\d+)', text)}


d = tempfile.mkdtemp(prefix="pool-compaction-")
admin = free_port()
cfg = {"poolStore": {"sqlitePath": d + "/pools.sqlite"}, "admin": {"port": admin}, "log": {"level": "info"},
       "sources": {"synthetic": {"type": "synthetic", "latency": "1ms"}},
       "loaders": {"default": {"source": "synthetic", "sizing": "fixed", "numberOfAdvertisements": 5,
                               "maximumRetainedAdvertisements": N, "maximumConcurrentRequests": 512,
                               "lifetime": "1h", "leaseTimeout": "60s"}}}
open(d + "/c.json", "w").write(json.dumps(cfg))


def start():
    p = subprocess.Popen([BIN + "/adloaderd", "--config", d + "/c.json", "--port", "0"],
                         stdout=subprocess.PIPE, stderr=open(d + "/log", "ab"), cwd=d)
    line = p.stdout.readline().decode()
    return p, int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])


def lines(message):
    return [json.loads(l) for l in open(d + "/log") if message in l]


p, port = start()
before = lag(admin)
started = time.time()
subprocess.run([CLI, "--endpoint", "127.0.0.1:%d" % port, "prefetch", "unit", "--loader", "default"],
               capture_output=True)


def available():
    out = subprocess.run([CLI, "--endpoint", "127.0.0.1:%d" % port, "--json", "stats", "--loader", "default"],
                         capture_output=True, text=True).stdout
    pools = json.loads(out)["pools"] if out else []
    return pools[0]["available"] if pools else 0


# Until the pool is full and a compaction ended after it (at 1M ads several run during the fill).
full_at = None
while time.time() - started < 1800:
    if full_at is None and available() >= N:
        full_at = time.time()
        compactions = len(lines("pool journal compacted"))
    # One that ends after the fill, or none within a minute (without load no history grows).
    if full_at is not None and (len(lines("pool journal compacted")) > compactions or time.time() - full_at > 60):
        break
    time.sleep(1)
if full_at is not None:
    print("%d ads pooled in %.1f s" % (N, full_at - started))
after = lag(admin)
ticks = after.get("+Inf", 0) - before.get("+Inf", 0)
bounds = sorted((float(le), after[le] - before.get(le, 0)) for le in after if le != "+Inf")
worst = next((le for le, count in bounds if count == ticks), float("inf"))
late = ticks - (after.get("0.001", 0) - before.get("0.001", 0))
print("%d ads: %.1f s from the prefetch to the end of the first compaction after the fill; loop-lag ticks %d, late > 1 ms: %d,"
      " every one within %s s" % (N, time.time() - started, ticks, late, worst))
for line in lines("pool journal compacted"):
    # loopMaxUs (the loop's longest single part) and loopCpuUs (the loop thread's CPU time in
    # its parts) are logged from branch durable6 on.
    print("  compaction: %d B checkpoint + %d B written meanwhile (%d B copied by the loop), %d ms on its"
          " thread, %d us on the loop (longest part %s us, loop CPU %s us, blocked %s / preempted %s times)"
          % (line["bytes"], line["tailBytes"], line["loopTailBytes"], line["ms"], line["loopUs"],
             line.get("loopMaxUs", "-"), line.get("loopCpuUs", "-"), line.get("loopBlocked", "-"),
             line.get("loopPreempted", "-")))
p.send_signal(signal.SIGTERM)
p.wait()
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("pools.sqlite"))
p, port = start()
p.send_signal(signal.SIGTERM)
p.wait()
for line in lines("pools suspended") + lines("pools restored"):
    print("  %s: ads %s, bytes %s, %s ms" % (line["message"], line.get("ads"), line.get("bytes", "-"), line["ms"]))
print("  store files after the first stop: %d B = %.0f B/ad" % (size, size / N))
