"""A rolling restart of three replicas behind HAProxy (Examples/cluster: its proxy configuration,
the default, and its adloaderd.json with the Redis cap store), each with its own SQLite pool
store, under steady paced load from several clients (issue 27).

Each replica in turn gets SIGTERM (it drains: GOAWAY, health NOT_SERVING, the listener closes,
the pools are suspended into its store), exits, and starts again on the same port and store
(the pools are restored). Meanwhile the clients borrow through the proxy, hold each lease a
while, and return it shown, with the Python client's lender retry (``replicas=``: a Return the
proxy sent to the wrong replica goes once more to the lender, waiting out its restart with the
client's UNAVAILABLE retry). Asserted, per restart:

- 0 failed calls (a call is failed when it raises after the client's retries, or a Return
  answers anything but CONSUMED);
- >= 99 % of the ads the victim suspended come back (Stats ``restoredAds``) and 100 % of its
  leases (``restoredLeases``), and every lease lent before the restart is returned CONSUMED;
- no upstream burst: the fleet's upstream requests (the synthetic source's, Stats
  ``upstreamRequests`` summed over the replicas) in the window after the restarted replica is
  back in HAProxy's ring are within 10 % of the window before its SIGTERM (plus ``slack`` for
  the short windows of ``make test``).

``ROLLING_WINDOW`` (seconds, default 4) sets the windows; ``make cluster-rolling`` runs it with
60 s windows (BENCHMARKS.md section 7). ``ROLLING_RATE``: borrows/s over the fleet (default 40).
``ROLLING_STORE=off`` runs the same with the pool store off (the control: the restarted
replica starts empty, its leases are lost): it reports and asserts nothing.
"""

import heapq
import json
import os
import re
import signal
import threading
import time

import grpc
import pytest

import grpc_stubs
from conftest import Daemon, free_port
from test_cluster import EXAMPLE, HAPROXY, HAProxy

WINDOW = float(os.environ.get("ROLLING_WINDOW", "4"))
RATE = float(os.environ.get("ROLLING_RATE", "40"))
STORE = os.environ.get("ROLLING_STORE", "sqlite")
WORKERS = 8
RETURNERS = 4
HOLD = 0.5  # seconds a lease is held before its Return


def slack(requests):
    """What the burst check allows beyond 10 %: nothing for minute windows; for the short windows
    of `make test` (about 32 requests, where one top-up more or less is 3 %, and a loaded
    machine delays the schedule: 4 s windows measured 33 -> 32, 33 -> 32, 31 -> 33) three
    standard deviations of a count."""
    return 0 if WINDOW >= 30 else 3 * requests ** 0.5


pytestmark = pytest.mark.skipif(not os.path.exists(HAPROXY), reason="haproxy is not installed (make deps)")

EXAMPLE_CONFIG = os.path.join(EXAMPLE, "adloaderd.json")


def stats(endpoint, s, timeout=5):
    # Its own subchannel: not one the load's lender retries share, in backoff after a restart.
    with grpc.insecure_channel(endpoint, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        return s.grpc.NativeAdLoaderStub(channel).Stats(s.pb.StatsRequest(), timeout=timeout)


def fleet_counter(endpoints, s, field):
    return sum(getattr(p, field) for e in endpoints for p in stats(e, s).pools)


def snapshot(endpoints, s):
    """Per replica: (upstream requests, available, target) summed over its pools."""
    out = []
    for e in endpoints:
        pools = stats(e, s).pools
        out.append(tuple(sum(getattr(p, f) for p in pools) for f in ("upstream_requests", "available", "target",
                                                                   "in_flight_target")))
    return out


class Load:
    """WORKERS threads borrowing through the proxy, RATE borrows/s in all on a fixed schedule
    (a slot missed is skipped, not made up later: no catch-up bursts), and RETURNERS threads
    returning each lease HOLD seconds after its Borrow, shown. The returners' client retries
    UNAVAILABLE for up to ~20 s: a Return whose lender is restarting waits for it."""

    def __init__(self, proxy, replicas, s):
        from adloader import Client, Retry

        self.s = s
        self.borrowers = [Client(proxy, replicas=replicas, timeout=10) for _ in range(WORKERS)]
        patient = Retry(attempts=100, initial_backoff=0.02, max_backoff=0.2)
        self.returners = [Client(proxy, replicas=replicas, retry=patient, timeout=10) for _ in range(RETURNERS)]
        self.failures, self.misses = [], 0
        self.borrows = self.returns = self.skipped = 0
        self.lock = threading.Lock()
        self.due = []  # (when, lease id, lease): a heap
        self.ready = threading.Condition(self.lock)
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.borrow, args=(w,)) for w in range(WORKERS)]
        self.threads += [threading.Thread(target=self.give_back, args=(r,)) for r in range(RETURNERS)]

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        with self.ready:
            self.ready.notify_all()
        for t in self.threads:
            t.join(timeout=60)
        for c in self.borrowers + self.returners:
            c.close()

    def borrow(self, worker):
        client = self.borrowers[worker]
        period = WORKERS / RATE
        due = time.monotonic() + worker * period / WORKERS
        i = 0
        while not self.stop.is_set():
            now = time.monotonic()
            if now < due:
                time.sleep(due - now)
                continue
            missed = int((now - due) / period)
            with self.lock:
                self.skipped += missed
            due += (missed + 1) * period
            key = f"user-{worker}-{i % 40}"
            i += 1
            try:
                lease = client.borrow_lease("feed-native", slot=f"{key}/cell-{i}", wait_ms=2000, affinity=key)
            except grpc.RpcError as error:
                with self.lock:
                    self.failures.append(("Borrow", key, error.code(), error.details()))
                continue
            with self.ready:
                self.borrows += 1
                if lease is None:
                    self.misses += 1
                else:
                    heapq.heappush(self.due, (time.monotonic() + HOLD, lease.lease_id, lease))
                    self.ready.notify()

    def give_back(self, returner):
        client = self.returners[returner]
        while True:
            with self.ready:
                while not self.due or (self.due[0][0] > time.monotonic() and not self.stop.is_set()):
                    if self.stop.is_set() and not self.due:
                        return
                    self.ready.wait(timeout=max(0.001, self.due[0][0] - time.monotonic()) if self.due else 0.1)
                _, _, lease = heapq.heappop(self.due)
            try:
                outcome = client.return_lease(lease, shown=True)
            except grpc.RpcError as error:
                with self.lock:
                    self.failures.append(("Return", lease.lease_id, error.code(), error.details()))
                continue
            with self.lock:
                self.returns += 1
                if outcome != "RETURN_OUTCOME_CONSUMED":
                    self.failures.append(("Return", lease.lease_id, outcome, ""))


def suspended(log):
    """(ads, leases) of the last "pools suspended into the pool store" line of a daemon's log."""
    lines = [line for line in log.splitlines() if "pools suspended into the pool store" in line]
    assert lines, log[-3000:]
    fields = dict(re.findall(r'"(ads|leases)":(\d+)', lines[-1]))
    return int(fields["ads"]), int(fields["leases"])


def test_rolling_restart_behind_haproxy_fails_no_call_keeps_pools_and_leases_and_sends_no_burst(
        tmp_path, redis_server):
    s = grpc_stubs.load()
    ports = [free_port() for _ in range(3)]

    def start(index):
        store = ["--pool-store", "off"] if STORE == "off" else \
            ["--pool-store-path", str(tmp_path / f"replica-{index}.sqlite")]
        return Daemon(args=["--config", EXAMPLE_CONFIG, "--port", str(ports[index]), "--redis-port",
                            str(redis_server), "--shutdown-grace-period", "5s", *store])

    replicas = [start(i) for i in range(3)]
    names = [d.endpoint for d in replicas]
    proxy = HAProxy(ports)
    load = Load(proxy.endpoint, names, s)
    results = []
    try:
        # A key of each replica, as HAProxy routes it (to see a restarted replica back in the ring).
        owner_key = {}
        with grpc.insecure_channel(proxy.endpoint) as channel:
            stub = s.grpc.NativeAdLoaderStub(channel)

            def owner(key):
                return stub.Stats(s.pb.StatsRequest(), metadata=[("x-adloader-affinity", key)], timeout=5).instance

            for i in range(200):
                owner_key.setdefault(owner(f"probe-{i}"), f"probe-{i}")
            assert set(owner_key) == set(names), owner_key
            load.start()
            time.sleep(max(2.0, WINDOW))  # the pools warm up to the load
            for index in range(3):
                victim = replicas[index]
                print("rolling: at the start of the window before", snapshot(names, s))
                before_start = fleet_counter(names, s, "upstream_requests")
                consumed_start = fleet_counter(names, s, "consumed")
                time.sleep(WINDOW)
                before = fleet_counter(names, s, "upstream_requests") - before_start
                consumed_before = fleet_counter(names, s, "consumed") - consumed_start
                down_at = time.monotonic()
                victim.signal(signal.SIGTERM)
                assert victim.wait(timeout=30) == 0
                ads, leases = suspended(victim.log()) if STORE != "off" else (0, 0)
                victim.stop()
                replicas[index] = start(index)
                pools = stats(names[index], s).pools
                restored_ads = sum(p.restored_ads for p in pools)
                restored_leases = sum(p.restored_leases for p in pools)
                deadline = time.monotonic() + 20
                while owner(owner_key[names[index]]) != names[index]:  # HAProxy's check marks it up
                    assert time.monotonic() < deadline, "the restarted replica never came back into the ring"
                    time.sleep(0.05)
                back_after = time.monotonic() - down_at
                print("rolling: at the start of the window after", snapshot(names, s))
                after_start = fleet_counter(names, s, "upstream_requests")
                consumed_start = fleet_counter(names, s, "consumed")
                time.sleep(WINDOW)
                after = fleet_counter(names, s, "upstream_requests") - after_start
                print("rolling: at its end", snapshot(names, s))
                consumed_after = fleet_counter(names, s, "consumed") - consumed_start
                results.append(dict(replica=names[index], ads=ads, restored_ads=restored_ads, leases=leases,
                                    restored_leases=restored_leases, before=before, after=after,
                                    consumed_before=consumed_before, consumed_after=consumed_after,
                                    back_after=round(back_after, 2)))
                print(f"rolling: {results[-1]}")
    finally:
        load.finish()
        proxy.stop()
        for d in replicas:
            d.stop()
    print(f"rolling: window {WINDOW} s, store {STORE}, {load.borrows} borrows ({load.misses} no ad yet, "
          f"{load.skipped} slots skipped), {load.returns} returns, {len(load.failures)} failed")
    if STORE == "off":  # the control: what a restart without the store costs, reported only
        print(f"rolling (store off): failed calls {load.failures[:3]}")
        return
    assert not load.failures, load.failures[:10]
    assert load.borrows >= 0.8 * RATE * (3 * (2 * WINDOW + 1)), load.borrows  # the load kept its pace
    for r in results:
        assert r["ads"] > 0 and r["restored_ads"] >= 0.99 * r["ads"], r
        assert r["restored_leases"] == r["leases"], r
        assert abs(r["after"] - r["before"]) <= 0.10 * r["before"] + slack(r["before"]), r


def pool_totals(endpoint, s):
    """A replica's pools summed: the counters that say whether its ads were harmed."""
    pools = stats(endpoint, s).pools
    return {f: sum(getattr(p, f) for p in pools)
            for f in ("removed", "expired", "memory_dropped", "leases_reclaimed", "restored_ads", "restored_leases")}


def test_replica_killed_under_load_moves_its_share_only_and_comes_back_from_its_journal(tmp_path, redis_server):
    """SIGKILL of one replica behind HAProxy under the same load: the keys that move are exactly
    its own (its share of HAProxy's ring, measured over 300 keys), the survivors' pools lose no
    ad, no call fails (Returns of its leases wait for it), and started again on its store it
    replays its journal: its leases come back (every one of them is returned CONSUMED) and so
    do its keys."""
    s = grpc_stubs.load()
    ports = [free_port() for _ in range(3)]

    def start(index):
        return Daemon(args=["--config", EXAMPLE_CONFIG, "--port", str(ports[index]), "--redis-port",
                            str(redis_server), "--pool-store-path", str(tmp_path / f"replica-{index}.sqlite")])

    replicas = [start(i) for i in range(3)]
    names = [d.endpoint for d in replicas]
    proxy = HAProxy(ports)
    load = Load(proxy.endpoint, names, s)
    keys = [f"user-{i}" for i in range(300)]
    try:
        with grpc.insecure_channel(proxy.endpoint) as channel:
            stub = s.grpc.NativeAdLoaderStub(channel)

            def owner(key):
                return stub.Stats(s.pb.StatsRequest(), metadata=[("x-adloader-affinity", key)], timeout=5).instance

            before = {k: owner(k) for k in keys}
            victim = 1
            share = sum(1 for k in keys if before[k] == names[victim]) / len(keys)
            assert 0.15 <= share <= 0.5, share
            load.start()
            time.sleep(2.0)
            survivors = [n for i, n in enumerate(names) if i != victim]
            harmed_before = {n: pool_totals(n, s) for n in survivors}
            replicas[victim].signal(signal.SIGKILL)
            replicas[victim].wait()
            killed_at = time.monotonic()
            replicas[victim].stop()
            deadline = time.monotonic() + 20
            while any(owner(k) == names[victim] for k in keys[:60]):  # redispatched, then out of the ring
                assert time.monotonic() < deadline
                time.sleep(0.1)
            after = {k: owner(k) for k in keys}
            out_after = time.monotonic() - killed_at
            moved = {k for k in keys if after[k] != before[k]}
            time.sleep(1.0)
            harmed_after = {n: pool_totals(n, s) for n in survivors}
            replicas[victim] = start(victim)
            log = replicas[victim].log()
            back = pool_totals(names[victim], s)
            deadline = time.monotonic() + 20
            while {k: owner(k) for k in keys[:60]} != {k: before[k] for k in keys[:60]}:
                assert time.monotonic() < deadline, "its keys never came back"
                time.sleep(0.1)
            time.sleep(1.0)
    finally:
        load.finish()
        proxy.stop()
        for d in replicas:
            d.stop()
    print(f"replica loss: share of HAProxy's ring {share:.3f}, share of keys moved {len(moved) / len(keys):.3f}, "
          f"all its keys served by the others {out_after:.2f} s after the kill; restarted: {back}; "
          f"load: {load.borrows} borrows ({load.misses} no ad yet), {load.returns} returns, "
          f"{len(load.failures)} failed")
    assert moved == {k for k in keys if before[k] == names[victim]}
    for n in survivors:
        assert harmed_after[n] == harmed_before[n], (n, harmed_before[n], harmed_after[n])
    assert "journal" in log and back["restored_ads"] > 0 and back["restored_leases"] > 0, (back, log[-2000:])
    assert not load.failures, load.failures[:10]
