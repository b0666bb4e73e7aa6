"""The neighbour rule of the abuse tests (issue 28): while one peer abuses its own connection, a
well-behaved neighbour on another connection keeps its latency and the daemon keeps its memory.

An attack runs in its own process (``Attacker``, started with "spawn" so that it shares neither
the GIL nor grpcio's threads with the neighbour), over and over while it is switched on. The
neighbour measures windows of unary calls with the attack off and on, interleaved
(off, on, off, on, ..., off), so that the machine's noise (other builds on a shared 2-core box)
falls on both kinds alike. The rule, checked by ``assert_rule``:

- the median over the attack windows of each window's p99 is below twice the median over the
  baseline windows of theirs (a median of windows, not the best baseline window);
- the daemon's resident set (VmRSS in /proc/PID/status) never grows by 10 MiB or more over what
  it was after the warm-up, sampled after every window and while the attack runs;
- the attack ran: an attacking round started in every attack window.

While it measures, the three processes (this one with the neighbour's grpcio threads, the
daemon, the attacker) run under SCHED_FIFO when the system allows it (``Priority``): on a
2-core machine shared with other builds, CFS time slices otherwise put 4-15 ms stalls into
baseline and attack windows alike (measured: an attacker that sends nothing moved the ratio
between 0.9 and 1.8), and the rule measured the machine, not the daemon. The bound is the same
either way; ``Result`` says which way it was measured.
"""

import multiprocessing
import os
import statistics
import threading
import time

# How many windows of each kind, and how many calls per window (p99 of 400 = its 5th largest).
PAIRS = 6
CALLS_PER_WINDOW = 400
MAX_RSS_GROWTH_KIB = 10 * 1024


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def p99(samples):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _attacker_main(module, function, host, port, active, quit, busy, rounds, failures, args):
    """The attacker process: runs function(host, port, *args) over and over while `active`."""
    import importlib

    os.nice(5)  # the neighbour and the daemon come first; the attack must still run (asserted)
    attack = getattr(importlib.import_module(module), function)
    while not quit.is_set():
        busy.value = 0
        if not active.wait(0.05):
            continue
        busy.value = 1
        with rounds.get_lock():
            rounds.value += 1  # started: a round can last longer than a window
        try:
            attack(host, port, *args)
        except OSError:
            # A reset or refused connection is one of the ways the daemon defends itself.
            with failures.get_lock():
                failures.value += 1


class Attacker:
    """One attacking process; `function` in `module` is one round (open, abuse, close)."""

    def __init__(self, d, module, function, *args):
        context = multiprocessing.get_context("spawn")
        self.active = context.Event()
        self.quit = context.Event()
        self.busy = context.Value("q", 0)
        self.rounds = context.Value("q", 0)
        self.failures = context.Value("q", 0)
        self.process = context.Process(
            target=_attacker_main,
            args=(module, function, d.host, d.port, self.active, self.quit, self.busy, self.rounds, self.failures, args),
            daemon=True)
        self.process.start()

    def count(self):
        with self.rounds.get_lock():
            return self.rounds.value

    def start(self):
        before = self.count()
        self.active.set()
        # Bounded: the attack is on once its first round started.
        deadline = time.monotonic() + 2
        while self.count() == before and time.monotonic() < deadline:
            time.sleep(0.005)

    def stop(self):
        self.active.clear()
        # The round in progress ends (bounded; rounds are short) so that it does not spill into
        # the next baseline window.
        deadline = time.monotonic() + 5
        while self.busy.value and time.monotonic() < deadline:
            time.sleep(0.005)

    def close(self):
        self.active.clear()
        self.quit.set()
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class Priority:
    """SCHED_FIFO for every thread of the given processes while measuring, restored after;
    nothing when the system refuses (no CAP_SYS_NICE, RT throttling still leaves other tasks 5 %)."""

    def __init__(self, levels):
        """`levels`: (pid, SCHED_FIFO priority) pairs."""
        self.saved = []
        self.active = False
        try:
            for pid, level in levels:
                for task in os.listdir(f"/proc/{pid}/task"):
                    tid = int(task)
                    policy = os.sched_getscheduler(tid)
                    parameter = os.sched_getparam(tid)
                    os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(level))
                    self.saved.append((tid, policy, parameter))
            self.active = True
        except (PermissionError, OSError, AttributeError):
            self.restore()

    def restore(self):
        for tid, policy, parameter in reversed(self.saved):
            try:
                os.sched_setscheduler(tid, policy, parameter)
            except OSError:
                pass  # the thread ended
        self.saved = []


class Result:
    def __init__(self):
        self.baseline_p99s = []
        self.attack_p99s = []
        self.rounds_per_window = []
        self.rss_start = 0
        self.rss_max = 0
        self.real_time = False

    @property
    def baseline(self):
        return statistics.median(self.baseline_p99s)

    @property
    def attack(self):
        return statistics.median(self.attack_p99s)

    def __str__(self):
        ms = lambda xs: "[" + ", ".join(f"{x * 1000:.2f}" for x in xs) + "]"
        return (f"p99 ms baseline {ms(self.baseline_p99s)} median {self.baseline * 1000:.2f}; "
                f"attack {ms(self.attack_p99s)} median {self.attack * 1000:.2f}; "
                f"attack rounds per window {self.rounds_per_window}; "
                f"RSS {self.rss_start} KiB -> max {self.rss_max} KiB (+{self.rss_max - self.rss_start} KiB); "
                f"{'SCHED_FIFO' if self.real_time else 'normal priority (SCHED_FIFO refused)'}")


def measure(d, call, attacker, pairs=PAIRS, calls=CALLS_PER_WINDOW):
    """Runs the interleaved windows; `call()` is one neighbour unary call (it raises on failure)."""
    for _ in range(50):
        call()  # warm-up: connection, pools, allocator
    result = Result()
    # The neighbour and the daemon first; the attacker one level below (as its nice 5 does
    # under normal priority), and its rounds still have to run (asserted).
    priority = Priority([(os.getpid(), 10), (d.pid, 10), (attacker.process.pid, 9)])
    result.real_time = priority.active
    result.rss_start = rss_kib(d.pid)
    result.rss_max = result.rss_start
    sampling = threading.Event()

    def sample():
        while not sampling.wait(0.05):
            result.rss_max = max(result.rss_max, rss_kib(d.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        def window():
            latencies = []
            for _ in range(calls):
                started = time.perf_counter()
                call()
                latencies.append(time.perf_counter() - started)
            return p99(latencies)

        for i in range(pairs):
            result.baseline_p99s.append(window())
            before = attacker.count()
            attacker.start()
            result.attack_p99s.append(window())
            result.rounds_per_window.append(attacker.count() - before)
            attacker.stop()
            result.rss_max = max(result.rss_max, rss_kib(d.pid))
        result.baseline_p99s.append(window())
    finally:
        sampling.set()
        sampler.join(2)
        priority.restore()
    result.rss_max = max(result.rss_max, rss_kib(d.pid))
    return result


def assert_rule(result, min_rounds=1):
    """The neighbour rule (module docstring): the attack ran, RSS and p99 within their bounds."""
    print(result)
    assert all(r >= min_rounds for r in result.rounds_per_window), f"the attack did not run: {result}"
    assert result.rss_max - result.rss_start < MAX_RSS_GROWTH_KIB, f"daemon RSS grew by 10 MiB or more: {result}"
    assert result.attack < 2 * result.baseline, f"neighbour p99 more than doubled: {result}"
