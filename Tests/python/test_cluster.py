"""Three daemons behind nginx's gRPC proxy, one Redis (issue 13), on loopback free ports.

nginx runs from Examples/cluster/nginx.conf.template (the shipped configuration) as the
current user, with its own prefix, pid file, logs and temporary directories in a temporary
directory, in the foreground (`daemon off`), and is stopped by the test. The daemons use
Examples/cluster/adloaderd.json; each one's instance name is its default, the bound
`127.0.0.1:PORT`, which is also how nginx's `server` lines and the CLI's --endpoints name it.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import pytest

import grpc_stubs
from conftest import CLI, ROOT, free_port

EXAMPLE = os.path.join(ROOT, "Examples", "cluster")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
AFFINITY = "x-adloader-affinity"
INSTANCE = "x-adloader-instance"

pytestmark = pytest.mark.skipif(not os.path.exists(NGINX), reason="nginx is not installed (make deps)")


def wait_for_port(port, proc, bound=10.0):
    deadline = time.monotonic() + bound
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {port}")
            time.sleep(0.02)


class Proxy:
    """A proxy in front of `ports`, from the example's template (Examples/cluster/NAME.template),
    in its own temporary directory; subclasses give the template and the command line."""

    template = ""

    def __init__(self, ports):
        self.tmp = tempfile.TemporaryDirectory(prefix=f"adloader-{self.template.split('.')[0]}-")
        self.prepare()
        self.port = free_port()
        with open(os.path.join(EXAMPLE, self.template)) as f:
            text = f.read()
        for name, value in [("@RUN_DIR@", self.tmp.name), ("@PORT@", self.port), ("@PORT_A@", ports[0]),
                            ("@PORT_B@", ports[1]), ("@PORT_C@", ports[2])]:
            text = text.replace(name, str(value))
        conf = os.path.join(self.tmp.name, self.template.replace(".template", ""))
        with open(conf, "w") as f:
            f.write(text)
        self.proc = subprocess.Popen(self.command(conf), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_for_port(self.port, self.proc)
        except RuntimeError:
            self.stop()
            raise
        self.endpoint = f"127.0.0.1:{self.port}"

    def prepare(self):
        pass

    def command(self, conf):
        raise NotImplementedError

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stderr.close()
        self.tmp.cleanup()


class Nginx(Proxy):
    """nginx in front of `ports`, from the example's template, in its own temporary prefix."""

    template = "nginx.conf.template"

    def prepare(self):
        # Run as root, nginx's workers drop to "nobody": they must reach the directory.
        os.chmod(self.tmp.name, 0o755)

    def command(self, conf):
        return [NGINX, "-p", self.tmp.name, "-e", os.path.join(self.tmp.name, "error.log"), "-c", conf,
                "-g", "daemon off;"]

    def log(self, name):
        with open(os.path.join(self.tmp.name, name), errors="replace") as f:
            return f.read()



HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


class HAProxy(Proxy):
    """HAProxy in front of `ports`, from the example's template (Examples/cluster/haproxy.cfg.template)."""

    template = "haproxy.cfg.template"

    def command(self, conf):
        return [HAPROXY, "-db", "-f", conf]


class Cluster:
    def __init__(self, replicas, nginx, stubs):
        self.replicas = replicas
        self.nginx = nginx
        self.s = stubs
        self.channel = grpc.insecure_channel(nginx.endpoint)
        self.stub = stubs.grpc.NativeAdLoaderStub(self.channel)
        self.names = [d.endpoint for d in replicas]

    def stats(self, key, stub=None, timeout=5):
        """The instance that answers a Stats call for `key` through nginx (Stats and header agree)."""
        answer, call = (stub or self.stub).Stats.with_call(
            self.s.pb.StatsRequest(), metadata=[(AFFINITY, key)], timeout=timeout)
        header = dict(call.initial_metadata()).get(INSTANCE)
        assert header == answer.instance, (header, answer.instance)
        return answer.instance

    def borrow(self, key, slot, wait_ms=0, stub=None, timeout=5):
        answer, call = (stub or self.stub).Borrow.with_call(
            self.s.pb.BorrowRequest(ad_unit_id="feed-native", slot_key=slot, wait_ms=wait_ms),
            metadata=[(AFFINITY, key)], timeout=timeout)
        return answer, dict(call.initial_metadata()).get(INSTANCE)

    def cli_instance(self, key, endpoints=None):
        out = subprocess.run(
            [CLI, "--endpoints", ",".join(endpoints or self.names), "--affinity", key, "--json", "stats"],
            capture_output=True, text=True, timeout=30, check=True).stdout
        return json.loads(out)["instance"]


@pytest.fixture
def cluster(daemon, redis_server):
    args = ["--config", os.path.join(EXAMPLE, "adloaderd.json"), "--redis-port", str(redis_server),
            "--redis-timeout", "10s", "--shutdown-grace-period", "5s"]
    replicas = [daemon(args=args) for _ in range(3)]
    nginx = Nginx([d.port for d in replicas])
    c = Cluster(replicas, nginx, grpc_stubs.load())
    yield c
    c.channel.close()
    nginx.stop()


@pytest.fixture(params=["nginx", "haproxy"])
def proxy_cluster(request, daemon, redis_server):
    """The three replicas behind either proxy: the properties both must have."""
    proxy_type = {"nginx": Nginx, "haproxy": HAProxy}[request.param]
    binary = NGINX if request.param == "nginx" else HAPROXY
    if not os.path.exists(binary):
        pytest.skip(f"{request.param} is not installed (make deps)")
    args = ["--config", os.path.join(EXAMPLE, "adloaderd.json"), "--redis-port", str(redis_server),
            "--redis-timeout", "10s", "--shutdown-grace-period", "5s"]
    replicas = [daemon(args=args) for _ in range(3)]
    proxy = proxy_type([d.port for d in replicas])
    c = Cluster(replicas, proxy, grpc_stubs.load())
    c.proxy_name = request.param
    yield c
    c.channel.close()
    proxy.stop()


def wait_until(predicate, what, bound=20.0):
    """Polls `predicate` until true; fails after `bound` seconds."""
    deadline = time.monotonic() + bound
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def keys_by_instance(c, keys):
    owners = {}
    for key in keys:
        owners.setdefault(c.stats(key), []).append(key)
    return owners


def test_one_key_one_replica_one_lease_and_300_keys_spread(proxy_cluster):
    c = proxy_cluster
    for i in range(6):
        key = f"feed-{i}"
        first, where = c.borrow(key, f"{key}/position-7", wait_ms=3000)
        assert first.outcome == c.s.pb.BORROW_OUTCOME_LEASED, first
        for _ in range(3):
            again, landed = c.borrow(key, f"{key}/position-7")
            assert landed == where
            assert again.outcome == c.s.pb.BORROW_OUTCOME_REUSED and again.lease.lease_id == first.lease.lease_id
    owners = keys_by_instance(c, [f"user-{i}" for i in range(300)])
    counts = {name: len(owners.get(name, [])) for name in c.names}
    assert set(owners) == set(c.names), counts
    assert max(counts.values()) <= 150, counts


def test_framed_client_with_endpoints_picks_the_replica_nginx_picks(cluster):
    c = cluster
    keys = [f"feed-{i}" for i in range(24)]
    assert [c.cli_instance(k) for k in keys] == [c.stats(k) for k in keys]
    # The ring is keyed by the names as written, in nginx's order: agreement is not luck.
    assert len({c.stats(k) for k in keys}) == 3


def test_python_client_ring_picks_the_replica_nginx_picks(cluster):
    """The Python client's ring (clients/python) against nginx itself, live: the same replica
    for each key as nginx's `hash $http_x_adloader_affinity consistent`."""
    from adloader import Client, ConsistentHashRing

    c = cluster
    keys = [f"user-{i}" for i in range(40)]
    via_nginx = [c.stats(k) for k in keys]
    ring = ConsistentHashRing(c.names)
    assert [c.names[ring.server(k)] for k in keys] == via_nginx
    assert len(set(via_nginx)) == 3
    with Client(c.names) as client:
        for key, expected in zip(keys[:12], via_nginx):
            assert client.stats(affinity=key).instance == expected


def test_sigkill_moves_only_the_dead_replicas_keys(cluster):
    c = cluster
    keys = [f"feed-{i}" for i in range(60)]
    before = {k: c.stats(k) for k in keys}
    victim = c.replicas[1]
    moved = [k for k in keys if before[k] == victim.endpoint]
    assert 5 <= len(moved) <= 35, len(moved)  # about a third
    others = [k for k in keys if k not in moved]
    failures, served = [], []
    stop = threading.Event()

    def keep_calling():  # the other keys, all the time, through nginx: never fail, never move
        while not stop.is_set():
            for k in others:
                try:
                    served.append(c.stats(k) == before[k])
                except grpc.RpcError as error:
                    failures.append((k, error.code(), error.details()))

    load = threading.Thread(target=keep_calling)
    load.start()
    try:
        victim.signal(signal.SIGKILL)
        victim.wait()
        killed_at = time.monotonic()
        after = {}
        for k in moved:  # each moved key is served by a survivor within a second of the kill
            while k not in after:
                try:
                    after[k] = c.stats(k, timeout=1)
                except grpc.RpcError:
                    pass
                assert time.monotonic() - killed_at < 1.0, f"{k} not served within 1 s of the kill"
        count = len(served)
        wait_until(lambda: len(served) >= count + 2 * len(others), "calls after the kill")
    finally:
        stop.set()
        load.join(timeout=30)
    assert not failures, failures[:5]
    assert all(served), "a key of a surviving replica moved"
    assert all(after[k] != victim.endpoint for k in moved)
    # The framed client, told of all three, walks the ring past the dead one as nginx does.
    assert {k: c.cli_instance(k) for k in moved[:8]} == {k: after[k] for k in moved[:8]}


def test_sigterm_drain_stops_routing_and_fails_no_call(cluster):
    c = cluster
    s = c.s
    victim = c.replicas[2]
    keys = [f"feed-{i}" for i in range(30)]
    before = {k: c.stats(k) for k in keys}
    victim_keys = [k for k in keys if before[k] == victim.endpoint]
    assert victim_keys
    # Health straight from the victim: NOT_SERVING as the drain starts.
    direct = grpc.insecure_channel(victim.endpoint)
    health = direct.unary_stream(
        "/grpc.health.v1.Health/Watch", request_serializer=s.health.HealthCheckRequest.SerializeToString,
        response_deserializer=s.health.HealthCheckResponse.FromString)
    updates = health(s.health.HealthCheckRequest(service="adloader.v1.NativeAdLoader"), timeout=20)
    assert next(updates).status == s.health.HealthCheckResponse.SERVING
    # No retry policy: a call nginx wrote on a kept-alive connection before it read the GOAWAY
    # is served by the replica (it drains only once nginx acknowledged the PING after it).
    # (Fleet clients may still retry UNAVAILABLE for the listener-close race counted below.)
    channel = grpc.insecure_channel(c.nginx.endpoint)
    stub = s.grpc.NativeAdLoaderStub(channel)
    failures, landed = [], []
    exited = threading.Event()
    stop = threading.Event()

    def keep_borrowing(worker):
        i = 0
        while not stop.is_set():
            k = keys[(worker * 7 + i) % len(keys)]
            i += 1
            started_after_exit = exited.is_set()
            try:
                answer, where = c.borrow(k, f"{k}/slot-{worker}", stub=stub, timeout=10)
                landed.append((started_after_exit, k, where))
            except grpc.RpcError as error:
                failures.append((k, error.code(), error.details()))

    workers = [threading.Thread(target=keep_borrowing, args=(w,)) for w in range(4)]
    for w in workers:
        w.start()
    try:
        wait_until(lambda: len(landed) >= 100, "calls before the signal")  # in flight everywhere
        victim.signal(signal.SIGTERM)
        assert next(updates).status == s.health.HealthCheckResponse.NOT_SERVING
        assert victim.wait() == 0
        exited.set()
        count = len(landed)
        wait_until(lambda: len(landed) >= count + 200, "calls after the drain")
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=30)
        channel.close()
        direct.close()
    errors = [line for line in c.nginx.log("error.log").splitlines() if "upstream" in line]
    access = c.nginx.log("access.log")
    # No call refused by the draining replica (it serves what nginx wrote before reading the
    # GOAWAY). What remains is the listener's close racing nginx's connect: a connection nginx
    # opened as the listener closed (still in the kernel's accept queue) is reset, and nginx
    # answers 502 for the call it already wrote on it (PROTOCOL.md 12); rare (about 1 run in 15),
    # one call.
    refused = access.count("grpc_status=14")
    raced = [f for f in failures if f[1] == grpc.StatusCode.UNAVAILABLE and "502" in f[2]]
    print(f"drain: {len(landed)} calls, {refused} refused by the replica, {len(raced)} 502 (listener close)")
    assert refused == 0 and len(raced) == len(failures) <= 2, (failures[:5], errors[-5:])
    assert all("reset by peer" in line for line in errors if "[error]" in line and "response header" in line), errors[-5:]
    after = [(k, where) for done, k, where in landed if done]
    assert after and all(where != victim.endpoint for _, where in after)
    assert {k for k, _ in after} & set(victim_keys)  # its keys are served elsewhere now
    # Nothing but the victim's keys moved.
    assert all(c.stats(k) == before[k] for k in keys if k not in victim_keys)


def test_app_open_daily_cap_holds_across_replicas(cluster):
    c = cluster
    s = c.s
    # One affinity key per replica (the cap is per device, whatever the key).
    owners = keys_by_instance(c, [f"user-{i}" for i in range(30)])
    keys = [owners[name][0] for name in c.names]

    def app_open(key, session):
        request = s.pb.AppOpenRequest(device_id="device-1", session_id=session, event=s.pb.APP_OPEN_EVENT_LAUNCH,
                                      ad_unit_id="splash", loader="appopen")
        deadline = time.monotonic() + 10
        while True:  # the first call of a pool fills it
            answer, call = c.stub.AppOpen.with_call(request, metadata=[(AFFINITY, key)], timeout=5)
            if answer.outcome != s.pb.APP_OPEN_OUTCOME_NO_AD_READY or time.monotonic() > deadline:
                return answer, dict(call.initial_metadata()).get(INSTANCE)
            time.sleep(0.02)

    for shown, key in enumerate(keys[:2]):  # the example's cap: 2 a day
        answer, where = app_open(key, f"session-{shown}")
        assert where == c.names[shown]
        assert answer.outcome == s.pb.APP_OPEN_OUTCOME_SHOW and answer.daily_count == shown, answer
        # The Return goes where the lease is: the same affinity key.
        returned = c.stub.Return(s.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True),
                                 metadata=[(AFFINITY, key)], timeout=5)
        assert returned.outcome == s.pb.RETURN_OUTCOME_CONSUMED
    for key in keys:  # every replica, the third one included, sees the cap reached
        answer, _ = app_open(key, "session-2")
        assert answer.outcome == s.pb.APP_OPEN_OUTCOME_SKIP, answer
        assert answer.reason == s.pb.APP_OPEN_REASON_DAILY_CAP_REACHED and answer.daily_count == 2, answer


@pytest.mark.parametrize("args, message", [
    (["--affinity", "k", "stats"], "--affinity needs --endpoints"),
    (["--endpoints", "127.0.0.1:1,127.0.0.1:1", "stats"], "listed twice"),
    (["--endpoints", "127.0.0.1:1", "--endpoint", "127.0.0.1:2", "stats"], "not both"),
    (["--endpoints", "unix:/tmp/x", "stats"], "only HOST:PORT"),
    (["--endpoints", "", "stats"], "no endpoints"),
    (["--endpoints", "127.0.0.1:1", "examples", "list"], "give --endpoint"),
])
def test_cli_endpoints_usage_errors(args, message):
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_cli_endpoints_none_reachable_exits_3():
    dead = [free_port(), free_port()]
    done = subprocess.run([CLI, "--endpoints", ",".join(f"127.0.0.1:{p}" for p in dead), "--affinity", "k", "stats"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and "no endpoint reachable" in done.stderr, done.stderr


def loader_enabled(endpoint, loader="default"):
    out = subprocess.run([CLI, "--endpoint", endpoint, "--json", "stats"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return {entry["name"]: entry["enabled"] for entry in json.loads(out)["loaders"]}[loader]


def test_fleet_control_reaches_every_replica_and_reports_each_answer(cluster):
    """disable/enable/reload with --endpoints go to every replica; each one's answer is printed."""
    endpoints = ",".join(cluster.names)
    run = lambda *args: subprocess.run([CLI, "--endpoints", endpoints, *args], capture_output=True, text=True,
                                       timeout=30)
    done = run("--json", "disable", "default")
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert [a["endpoint"] for a in answers] == cluster.names
    assert all(a["ok"] and a["changed"] for a in answers), answers
    assert [loader_enabled(name) for name in cluster.names] == [False, False, False]
    # Again: every replica says nothing changed.
    again = run("disable", "default")
    assert again.returncode == 0 and again.stdout.count("was already disabled") == 3, again.stdout
    enabled = run("enable", "default")
    assert enabled.returncode == 0 and enabled.stdout.count(": loader default enabled") == 3, enabled.stdout
    assert [loader_enabled(name) for name in cluster.names] == [True, True, True]
    reloaded = run("--json", "reload")
    assert reloaded.returncode == 0, reloaded.stderr
    assert all(a["ok"] and "default" in a["unchanged"] for a in json.loads(reloaded.stdout))
    # One replica gone: the others still switch; it is named UNREACHABLE and the exit says so.
    cluster.replicas[1].proc.kill()
    cluster.replicas[1].proc.wait(timeout=10)
    partial = run("disable", "default")
    assert partial.returncode == 3, partial.stdout + partial.stderr
    lines = partial.stdout.splitlines()
    assert lines[1].startswith(cluster.names[1] + ": UNREACHABLE"), lines
    assert lines[0] == f"{cluster.names[0]}: loader default disabled" and lines[2].endswith("loader default disabled")
    # An unknown loader: each reachable replica answers its status (exit 3: one is still down).
    unknown = run("--json", "enable", "nope")
    assert unknown.returncode == 3
    assert [a["code"] for a in json.loads(unknown.stdout)] == ["INVALID_ARGUMENT", "UNREACHABLE", "INVALID_ARGUMENT"], \
        unknown.stdout


def test_replica_loss_moves_exactly_its_share_and_keeps_the_others_leases(proxy_cluster):
    """One replica SIGKILLed: the keys that move are exactly the ones it owned (its share of the
    ring, measured over 300 keys), and the survivors' leases are untouched."""
    c = proxy_cluster
    keys = [f"user-{i}" for i in range(300)]
    before = {k: c.stats(k) for k in keys}
    victim = c.replicas[2]
    share = sum(1 for k in keys if before[k] == victim.endpoint) / len(keys)
    assert 0.15 <= share <= 0.5, share
    # A lease on each surviving replica, held across the loss.
    survivors_keys = [k for k in keys if before[k] != victim.endpoint][:6]
    leases = {}
    for k in survivors_keys:
        answer, where = c.borrow(k, f"{k}/cell", wait_ms=3000)
        assert answer.outcome == c.s.pb.BORROW_OUTCOME_LEASED and where == before[k], (answer, where)
        leases[k] = answer.lease.lease_id
    victim.signal(signal.SIGKILL)
    victim.wait()

    def settled():
        try:
            return all(c.stats(k, timeout=2) != victim.endpoint for k in keys)
        except grpc.RpcError:
            return False
    wait_until(settled, "every key served by a survivor")
    after = {k: c.stats(k) for k in keys}
    moved = {k for k in keys if after[k] != before[k]}
    print(f"{c.proxy_name}: victim's share of the ring {share:.3f}, share of keys moved {len(moved) / len(keys):.3f}")
    assert moved == {k for k in keys if before[k] == victim.endpoint}
    for k, lease in leases.items():
        answer, where = c.borrow(k, f"{k}/cell")
        assert answer.outcome == c.s.pb.BORROW_OUTCOME_REUSED and answer.lease.lease_id == lease, answer


def test_proxyless_ring_hash_client_is_sticky_and_spreads(cluster):
    """grpcio's ring_hash policy keyed by x-adloader-affinity (Examples/cluster/ring_hash_client.py):
    one key, one replica, every call; keys spread over all three; no proxy involved."""
    code = (
        "import sys, json; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import ring_hash_client, grpc_stubs\n"
        "s = grpc_stubs.load()\n"
        "ch = ring_hash_client.ring_hash_channel(sys.argv[3].split(','))\n"
        "stub = s.grpc.NativeAdLoaderStub(ch)\n"
        "owners = {}\n"
        "for i in range(90):\n"
        "    k = f'user-{i}'\n"
        "    owners[k] = sorted({stub.Stats(s.pb.StatsRequest(), metadata=[('x-adloader-affinity', k)], timeout=5).instance"
        " for _ in range(4)})\n"
        "print(json.dumps(owners))\n")
    out = subprocess.run([sys.executable, "-c", code, EXAMPLE,
                          os.path.join(ROOT, "Tests", "python"), ",".join(cluster.names)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    owners = json.loads(out.stdout)
    assert all(len(v) == 1 for v in owners.values()), owners
    counts = {name: sum(1 for v in owners.values() if v == [name]) for name in cluster.names}
    assert all(n >= 10 for n in counts.values()), counts


def test_proxyless_load_script_drives_every_replica_without_failures(cluster):
    """Benchmarks/ring-hash-load.py (cluster-load.sh's proxy-less row), one second small: every
    key's process makes calls, none fails, and the summary it prints is what the script reads."""
    bench = os.path.join(ROOT, "Benchmarks", "ring-hash-load.py")
    out = subprocess.run([sys.executable, bench, ",".join(cluster.names), "feed-1,feed-2,feed-3",
                          "--concurrency", "4", "--warmup", "0", "--duration", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["calls"] > 0 and summary["failed"] == 0, summary
    assert summary["client_cpu_us_per_call"] > 0 and summary["p99_ms"] > 0, summary
    per_key = [line for line in out.stdout.splitlines() if line.startswith("feed-")]
    assert len(per_key) == 3 and all(": 0 calls" not in line for line in per_key), per_key


def replica_index(name):
    """LeaseReplica.index(forInstance:): 1 + FNV-1a 32 of the name, mod 4095 (PROTOCOL.md 7.3)."""
    h = 0x811C9DC5
    for byte in name.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return 1 + h % 4095


def test_a_return_sent_to_the_wrong_replica_names_the_lender_and_the_cli_retries_there(cluster):
    c = cluster
    lender, other = c.replicas[0], c.replicas[1]
    direct = grpc.insecure_channel(lender.endpoint)
    wrong = grpc.insecure_channel(other.endpoint)
    try:
        stub = c.s.grpc.NativeAdLoaderStub(direct)
        answer = stub.Borrow(c.s.pb.BorrowRequest(ad_unit_id="feed-native", slot_key="cell-1", wait_ms=3000), timeout=5)
        assert answer.outcome == c.s.pb.BORROW_OUTCOME_LEASED, answer
        lease = answer.lease.lease_id
        assert lease >> 52 == replica_index(lender.endpoint), (hex(lease), lender.endpoint)
        with pytest.raises(grpc.RpcError) as error:
            c.s.grpc.NativeAdLoaderStub(wrong).Return(c.s.pb.ReturnRequest(lease_id=lease), timeout=5)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND
        assert (f"lease {lease} was lent by replica {replica_index(lender.endpoint)}, "
                f"not this one (replica {replica_index(other.endpoint)})") in error.value.details()
        # The CLI, connected by affinity to the other replica, follows the answer to the lender.
        key = next(f"k-{i}" for i in range(500) if c.cli_instance(f"k-{i}") == other.endpoint)
        out = subprocess.run([CLI, "--endpoints", ",".join(c.names), "--affinity", key, "return", str(lease)],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert "back in the pool" in out.stdout or "BACK_IN_POOL" in out.stdout, out.stdout
        # Now it is returned: the lender says so.
        with pytest.raises(grpc.RpcError) as again:
            stub.Return(c.s.pb.ReturnRequest(lease_id=lease), timeout=5)
        assert "already returned" in again.value.details()
    finally:
        direct.close()
        wrong.close()


def test_python_client_and_cli_invalidate_and_return_on_the_lender(cluster):
    """Plain and invalidating Returns that reach the wrong replica are sent once more to the
    lender: by the Python client (its replica list, or `replicas=` behind a proxy) and by
    `adloader --endpoints ... return ID --invalidate REASON`."""
    from adloader import Client, replica_index as client_index

    c = cluster
    lender, other = c.replicas[0], c.replicas[1]
    assert all(client_index(name) == replica_index(name) for name in c.names)
    key = next(f"k-{i}" for i in range(500) if c.stats(f"k-{i}") == other.endpoint)  # nginx sends it to `other`
    direct = grpc.insecure_channel(lender.endpoint)
    try:
        stub = c.s.grpc.NativeAdLoaderStub(direct)
        leases = []
        for cell in range(3):
            answer = stub.Borrow(c.s.pb.BorrowRequest(ad_unit_id="feed-native", slot_key=f"cell-{cell}", wait_ms=3000),
                                 timeout=5)
            assert answer.outcome == c.s.pb.BORROW_OUTCOME_LEASED, answer
            leases.append(answer.lease.lease_id)
    finally:
        direct.close()
    # The client's own ring sends the key to `other`; the lender answers.
    with Client(c.names, affinity=key) as client:
        assert client.endpoint_for(key) == other.endpoint
        assert client.return_lease(leases[0]) == "RETURN_OUTCOME_BACK_IN_POOL"
    # Through the proxy (which sends the key to `other`), told the replicas.
    with Client(c.nginx.endpoint, affinity=key, replicas=c.names) as client:
        assert client.return_lease(leases[1], invalidate="bad creative") == "RETURN_OUTCOME_INVALIDATED"
    # Without the replica list the wrong replica's answer stands.
    with Client(c.nginx.endpoint, affinity=key) as client:
        with pytest.raises(grpc.RpcError) as error:
            client.return_lease(leases[2], invalidate="bad creative")
        assert error.value.code() == grpc.StatusCode.NOT_FOUND and "was lent by replica" in error.value.details()
    out = subprocess.run([CLI, "--endpoints", ",".join(c.names), "--affinity", key, "--json", "return", str(leases[2]),
                          "--invalidate", "bad creative"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "RETURN_OUTCOME_INVALIDATED" in out.stdout, out.stdout
