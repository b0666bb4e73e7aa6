"""Examples/cluster/cluster.sh as a user runs it: `start` with a custom CLUSTER_DIR, then
`status` and `stop` without it find that cluster (issue 26: status forgot a custom CLUSTER_DIR)."""

import os
import random
import shutil
import socket
import subprocess

import pytest

from conftest import BINARY, ROOT

SCRIPT = os.path.join(ROOT, "Examples", "cluster", "cluster.sh")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REDIS = shutil.which("redis-server")
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"

pytestmark = pytest.mark.skipif(not (os.path.exists(HAPROXY) and REDIS), reason="haproxy or redis-server missing (make deps)")


def free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def port_block(count):
    """A base port with `count` free ports from it (the script takes base..base+6)."""
    for _ in range(100):
        base = random.randrange(20000, 60000)
        if all(free(base + i) for i in range(count)):
            return base
    raise RuntimeError("no block of free ports")


def run(command, env):
    return subprocess.run([SCRIPT, command], env=env, capture_output=True, text=True, timeout=60)


def test_status_and_stop_find_a_cluster_started_with_a_custom_cluster_dir(tmp_path):
    base = port_block(8)
    cluster_dir = tmp_path / "my-cluster"
    pointer_dir = tmp_path / "tmp"
    pointer_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLUSTER_DIR"}
    env.update(TMPDIR=str(pointer_dir), CLUSTER_PORT=str(base), CLUSTER_REDIS_PORT=str(base + 7), ADLOADERD=BINARY,
               NGINX=NGINX)
    started = run("start", dict(env, CLUSTER_DIR=str(cluster_dir)))
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        status = run("status", env)  # no CLUSTER_DIR: the one `start` used
        assert status.returncode == 0, status.stderr
        assert f"cluster directory {cluster_dir}" in status.stdout
        for name in ("redis", "a", "b", "c", "haproxy"):  # the default proxy
            assert f"{name} running (pid " in status.stdout, status.stdout
        # CLUSTER_DIR, when given, still wins.
        elsewhere = run("status", dict(env, CLUSTER_DIR=str(tmp_path / "other")))
        assert "a stopped" in elsewhere.stdout and "a running" not in elsewhere.stdout
        stopped = run("stop", env)
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped haproxy" in stopped.stdout and "stopped a" in stopped.stdout
        after = run("status", env)
        assert "a running" not in after.stdout and "haproxy running" not in after.stdout
        assert not (pointer_dir / "adloader-cluster.dir").exists()
    finally:
        run("stop", dict(env, CLUSTER_DIR=str(cluster_dir)))
