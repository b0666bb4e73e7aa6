"""`adloader top --once`: the pools at a glance, with rates over one interval."""

import re
import subprocess

from adminhttp import get, wait_until
from conftest import CLI


def test_top_once_shows_pools_rates_hit_ratio_and_waste(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}}, admin=True)
    d.cli("prefetch", "feed-native")
    top = subprocess.Popen([CLI, "--endpoint", d.endpoint, "top", "--once", "--interval", "3000"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Borrow only once top took its first snapshot (the daemon counted its Stats call).
        wait_until(lambda: 'adloader_calls_total{method="Stats",code="OK"} 1' in get(d.admin, "/metrics")[2],
                   message="top's first Stats call")
        for _ in range(2):
            d.cli("borrow", "feed-native", "--wait", "1000")
        out, err = top.communicate(timeout=30)
    finally:
        if top.poll() is None:
            top.kill()
            top.communicate()
    assert top.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("adloader top — " + d.endpoint)
    assert re.search(r"borrows/s \d+\.\d   hit ratio \d+%", lines[1]), lines[1]
    header = lines[3].split()
    assert header[:6] == ["LOADER", "AD", "UNIT", "AVAIL", "LEASED", "FLIGHT"]
    assert "HIT" in header and "WASTE" in header
    row = lines[4].split()
    assert row[:2] == ["default", "feed-native"]
    assert float(row[6]) > 0  # borrows per second during the load
    assert row[7].endswith("%")


def test_top_rejects_a_tiny_interval(daemon):
    d = daemon()
    result = d.cli("top", "--interval", "5", check=False)
    assert result.returncode == 2 and "--interval" in result.stderr
