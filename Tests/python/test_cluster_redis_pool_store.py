"""The Redis pool store (`poolStore.type` `redis`, issue 27): a replica's pools in the fleet's
Redis under `adloader:pools:{INSTANCE}`, written at a clean stop and read at the next start, so
a restart in another directory (another disk, the same instance name) gets its pools and
leases back. Against a real redis-server started by the test (conftest `redis_server`).
Also: a blob that does not decode starts the daemon empty, with one log line; Redis down at
the start, or an instance name that is not known before binding, refuse the start naming the
setting."""

import json
import signal
import subprocess

from conftest import BINARY, Daemon, free_port
from test_openrtb import counts, wait_for


def loaders():
    loader = {"sizing": "fixed", "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 10,
              "leaseTimeout": "10m"}
    return {"loaders": {"long": dict(loader, source="synthetic", lifetime="1h")}}


def redis(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10,
                          check=True).stdout.strip()


def start(redis_port, port, extra=()):
    return Daemon(config=loaders(), args=["--pool-store", "redis", "--redis-port", str(redis_port), "--port", str(port),
                                          *extra])


def borrow(d, slot):
    return json.loads(d.cli("--json", "borrow", "feed-native", "--loader", "long", "--slot", slot, "--wait",
                            "10000").stdout)


def pool(d):
    pools = [counts(p) for p in json.loads(d.cli("--json", "stats").stdout)["pools"] if p["loader"] == "long"]
    return pools[0] if pools else None


def test_a_restart_in_another_directory_gets_its_pools_and_leases_back_from_redis(redis_server):
    port = free_port()
    key = f"adloader:pools:{{127.0.0.1:{port}}}"
    first = start(redis_server, port)
    leases = [borrow(first, f"cell-{i}")["lease"] for i in range(3)]
    assert wait_for(lambda: pool(first)["available"] == 7), pool(first)
    assert redis(redis_server, "EXISTS", key) == "0"  # nothing written while it serves
    first.signal(signal.SIGTERM)
    assert first.wait() == 0
    assert '"ads":10' in first.log() and '"leases":3' in first.log(), first.log()[-2000:]
    assert int(redis(redis_server, "STRLEN", key)) > 1000
    first.stop()  # its directory is gone: only Redis holds the pools
    second = start(redis_server, port)
    assert "pools restored from the pool store" in second.log(), second.log()[-2000:]
    after = pool(second)
    assert after["restoredAds"] == 10 and after["restoredLeases"] == 3, after
    for i, old in enumerate(leases):
        again = borrow(second, f"cell-{i}")
        assert again["outcome"] == "BORROW_OUTCOME_REUSED", again
        assert again["lease"]["leaseId"] == old["leaseId"] and again["lease"]["ad"] == old["ad"]
    assert redis(redis_server, "EXISTS", key) == "0"  # taken: a crash now never restores it twice
    returned = json.loads(second.cli("--json", "return", leases[0]["leaseId"], "--shown").stdout)
    assert returned["outcome"] == "RETURN_OUTCOME_CONSUMED", returned
    second.stop()


def test_garbage_under_the_key_starts_empty_with_one_log_line(redis_server):
    port = free_port()
    key = f"adloader:pools:{{127.0.0.1:{port}}}"
    for garbage in ["\x01", "\x07not ours", "\x01" + "\xff" * 40]:
        redis(redis_server, "SET", key, garbage)
        d = start(redis_server, port)
        assert "suspended pools unreadable, starting empty" in d.log(), d.log()[-2000:]
        assert borrow(d, "cell")["outcome"] == "BORROW_OUTCOME_LEASED"
        d.stop()


def test_redis_down_or_no_instance_name_refuses_the_start_naming_the_setting(redis_server):
    dead = free_port()
    done = subprocess.run([BINARY, "--pool-store", "redis", "--redis-port", str(dead), "--port",
                           str(free_port())], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "poolStore.type" in done.stderr and "cannot connect" in done.stderr, done.stderr
    done = subprocess.run([BINARY, "--pool-store", "redis", "--redis-port", str(redis_server), "--port", "0"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "listeners.instanceName" in done.stderr, done.stderr
