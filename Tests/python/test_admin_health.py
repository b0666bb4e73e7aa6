"""/healthz and /readyz: unready while the daemon drains and while every source is unreachable."""

import signal
import socket

from adminhttp import get, wait_until


def test_readyz_turns_unready_during_a_drain_while_healthz_stays_ok(daemon):
    d = daemon(admin=True, args=["--shutdown-grace-period", "10s"])
    assert get(d.admin, "/readyz")[:1] == (200,)
    # A client that keeps its connection open holds the drain open (up to the grace period).
    client = socket.create_connection((d.host, d.port), timeout=5)
    client.sendall(b"ADLOADER/1\r\n")  # the preface (PROTOCOL.md 2)
    assert client.recv(12) == b"ADLOADER/1\r\n"
    d.signal(signal.SIGTERM)
    status, _, body = wait_until(
        lambda: (lambda r: r if r[0] == 503 else None)(get(d.admin, "/readyz")), message="/readyz 503")
    assert "draining" in body
    assert get(d.admin, "/healthz")[0] == 200
    _, _, metrics = get(d.admin, "/metrics")
    assert "\nadloader_ready 0\n" in metrics
    client.close()
    assert d.wait() == 0


def test_readyz_turns_unready_while_every_source_is_unreachable(daemon):
    config = {
        "sources": {"synthetic": {"unreachableRate": 1.0, "latency": "1ms"}},
        "loaders": {"default": {"retry": {"probeInterval": "200ms"}}},
    }
    d = daemon(config=config, admin=True)
    assert get(d.admin, "/readyz")[0] == 200  # never asked yet: not known to be unreachable
    d.cli("prefetch", "feed-native")
    status, _, body = wait_until(
        lambda: (lambda r: r if r[0] == 503 else None)(get(d.admin, "/readyz")), message="/readyz 503")
    assert "every demand source unreachable (synthetic)" in body
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_upstream_reachable{source="synthetic"} 0' in metrics
    assert 'adloader_upstream_failures_total{source="synthetic",class="unreachable"}' in metrics


def test_one_reachable_source_keeps_the_daemon_ready(daemon):
    config = {
        "sources": {
            "down": {"type": "synthetic", "unreachableRate": 1.0, "latency": "1ms"},
            "up": {"type": "synthetic", "latency": "1ms"},
        },
        "loaders": {"a": {"source": "down"}, "b": {"source": "up"}},
    }
    d = daemon(config=config, admin=True)
    d.cli("prefetch", "feed", "--loader", "a")
    d.cli("prefetch", "feed", "--loader", "b")
    wait_until(lambda: 'adloader_upstream_reachable{source="down"} 0' in get(d.admin, "/metrics")[2],
               message="source down unreachable")
    status, _, body = get(d.admin, "/readyz")
    assert status == 200, body
