"""Upstream budgets in the real daemon: a source's request-rate budget holds its requests to
the rate, the daemon keeps serving meanwhile, and a budget out of range is refused at start
with the key named."""

import json
import subprocess
import time


def stats(d):
    return json.loads(d.cli("--json", "stats").stdout)


def upstream_requests(d):
    return sum(int(pool.get("upstreamRequests", 0)) for pool in stats(d)["pools"])


def test_a_source_budget_holds_requests_to_its_rate(daemon):
    # Fixed pools of 100 ads want 20 requests each at once; the budget lets 2 go per second.
    d = daemon(config={
        "sources": {"synthetic": {"latency": "1ms", "maximumRequestsPerSecond": 2}},
        "loaders": {"feed": {"sizing": "fixed", "maximumRetainedAdvertisements": 100,
                             "maximumConcurrentRequests": 100}},
    })
    started = time.monotonic()
    d.cli("prefetch", "a", "--loader", "feed")
    d.cli("prefetch", "b", "--loader", "feed")
    # The pools fill as tokens come; borrows are served meanwhile.
    out = d.cli("borrow", "a", "--loader", "feed", "--wait", "3000").stdout
    assert "lease" in out.lower(), out
    time.sleep(1.0)
    sent = upstream_requests(d)
    elapsed = time.monotonic() - started
    # Full bucket (2) plus 2 per second of the loop's clock, which runs no faster than ours.
    assert 2 <= sent <= 2 + 2 * elapsed + 1, (sent, elapsed)
    assert sent < 40


def test_a_budget_out_of_range_is_refused_naming_the_key(tmp_path):
    from conftest import BINARY
    for bad in [0, -1, 1e300, "fast", True]:
        path = tmp_path / "budget.json"
        path.write_text(json.dumps({"sources": {"synthetic": {"maximumRequestsPerSecond": bad}}}))
        run = subprocess.run([BINARY, "--config", str(path), "--port", "0"], capture_output=True, text=True,
                             timeout=30)
        assert run.returncode == 2, (bad, run.stderr)
        assert "sources.synthetic.maximumRequestsPerSecond" in run.stderr, (bad, run.stderr)
