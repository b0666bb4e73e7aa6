"""Logs that tell (issue 26): a failing or empty demand source warns, rate limited, by failure
class, and says when it recovers; readiness changes are logged with their reason; a loader that
could never be served is refused at start, naming its keys. The real daemon, its real stderr."""

import json
import subprocess
import time

import pytest

from adminhttp import get, wait_until
from conftest import BINARY
from openrtb_stub import Exchange, free_port


def lines(d, message=None):
    out = []
    for raw in d.log().splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if message is None or line.get("message") == message:
            out.append(line)
    return out


def metric(d, text):
    """The value of the sample line starting with `text` in /metrics."""
    for line in get(d.admin, "/metrics")[2].splitlines():
        if line.startswith(text + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_a_failing_source_warns_by_class_at_most_once_per_interval(daemon):
    config = {
        "log": {"warningInterval": "1s"},
        "sources": {"synthetic": {"errorRate": 1.0, "latency": "1ms"}},
        # Fast retries: many failures per interval.
        "loaders": {"default": {"retry": {"delay": "20ms", "multiplier": 1, "jitter": 0, "maximumCount": 1000}}},
    }
    d = daemon(config=config, admin=True)
    d.cli("prefetch", "feed-native")
    first = wait_until(lambda: lines(d, "demand source failing"), message="a failing warning")[0]
    assert first["level"] == "warning"
    assert first["source"] == "synthetic" and first["class"] == "retryable"
    assert first["failures"] == 1 and first["error"]
    started = time.monotonic()
    # The second warning comes after the interval and counts the failures in between.
    second = wait_until(lambda: lines(d, "demand source failing")[1:], timeout=10, message="a second warning")[0]
    elapsed = time.monotonic() - started
    assert second["failures"] > 5, second
    assert second["failuresSinceRecovery"] == 1 + second["failures"]
    # Many more failures: the lines stay bounded by the time, not by the failures.
    name = 'adloader_upstream_failures_total{source="synthetic",class="retryable"}'
    wait_until(lambda: metric(d, name) >= 150, timeout=20, message="150 failures")
    warnings = lines(d, "demand source failing")
    failures = metric(d, name)
    elapsed = time.monotonic() - started
    assert failures > 10 * len(warnings), (failures, warnings)
    assert len(warnings) <= 2 + elapsed / 1.0, (elapsed, warnings)
    assert sum(w["failures"] for w in warnings) <= failures


def test_an_unreachable_exchange_logs_not_ready_then_ready_with_the_reason(daemon):
    port = free_port()
    config = {
        "sources": {"exchange": {"type": "openrtb", "endpoint": f"http://127.0.0.1:{port}/openrtb2/auction",
                                 "timeout": "500ms", "connectTimeout": "200ms", "appBundle": "com.example"}},
        "loaders": {"feed": {"source": "exchange", "retry": {"delay": "100ms", "probeInterval": "200ms"}}},
    }
    d = daemon(config=config, admin=True)
    d.cli("prefetch", "feed-native", "--loader", "feed")
    failing = wait_until(lambda: lines(d, "demand source failing"), message="an unreachable warning")[0]
    assert failing["source"] == "exchange" and failing["class"] == "unreachable"
    not_ready = wait_until(lambda: lines(d, "not ready"), message="a not-ready line")[0]
    assert not_ready["level"] == "info"
    assert not_ready["reason"] == "every demand source unreachable (exchange)"
    assert get(d.admin, "/readyz")[0] == 503
    exchange = Exchange(port=port)
    try:
        ready = wait_until(lambda: lines(d, "ready"), timeout=20, message="a ready line")[0]
        assert ready["was"] == "every demand source unreachable (exchange)"
        recovered = wait_until(lambda: lines(d, "demand source recovered"), message="a recovered line")[0]
        assert recovered["source"] == "exchange" and "unreachable" in recovered["after"]
        assert get(d.admin, "/readyz")[0] == 200
        assert len(lines(d, "not ready")) == 1  # one line per change, not per probe
    finally:
        exchange.stop()


def test_an_exchange_that_stops_bidding_warns_stopped_filling_and_then_recovered(daemon):
    exchange = Exchange()
    exchange.mode = "204"
    config = {
        "log": {"warningInterval": "1s"},
        "sources": {"exchange": {"type": "openrtb", "endpoint": exchange.url, "timeout": "800ms",
                                 "appBundle": "com.example"}},
        "loaders": {"feed": {"source": "exchange", "numberOfAdvertisements": 1, "maximumRetainedAdvertisements": 1,
                             "retry": {"delay": "20ms", "multiplier": 1, "jitter": 0}}},
    }
    try:
        d = daemon(config=config, admin=True)
        # Each Borrow with a short wait asks again; five empty answers in a row is "stopped filling".
        def empty():
            d.cli("borrow", "feed-native", "--loader", "feed", "--wait", "50", check=False)
            return lines(d, "demand source stopped filling")
        warning = wait_until(empty, timeout=20, message="a stopped-filling warning")[0]
        assert warning["level"] == "warning" and warning["source"] == "exchange"
        assert warning["emptyAnswersInARow"] >= 5
        assert not lines(d, "demand source failing")  # a no-bid is not a failure
        exchange.mode = "ok"
        d.cli("borrow", "feed-native", "--loader", "feed", "--wait", "5000")
        recovered = wait_until(lambda: lines(d, "demand source recovered"), message="a recovered line")[0]
        assert recovered["after"] == "noFill"
    finally:
        exchange.stop()


def test_the_drain_is_logged_as_not_ready_draining(daemon):
    import signal

    d = daemon(admin=True)
    d.signal(signal.SIGTERM)
    assert d.wait() == 0
    assert [line["reason"] for line in lines(d, "not ready")] == ["draining"]


@pytest.mark.parametrize("fmt,key", [("interstitial", "interstitialMedia"), ("rewarded", "rewardedMedia"),
                                     ("appOpen", "appOpenMedia")])
def test_a_full_screen_loader_its_openrtb_source_cannot_request_is_refused_at_start_naming_the_keys(tmp_path, fmt, key):
    config = {
        "sources": {"rtb": {"type": "openrtb", "endpoint": "http://127.0.0.1:9/openrtb2/auction", key: []}},
        "loaders": {"default": {}, "fullscreen": {"source": "rtb", "format": fmt}},
    }
    path = tmp_path / "adloaderd.json"
    path.write_text(json.dumps(config))
    run = subprocess.run([BINARY, "--config", str(path), "--port", "0"], capture_output=True, text=True, timeout=20)
    assert run.returncode == 2, run.stderr
    assert "loaders.fullscreen.format" in run.stderr
    assert '"rtb" (type openrtb) delivers only native' in run.stderr
    assert "sources.rtb.%s" % key in run.stderr
    assert "could never be served" in run.stderr
