"""`adloader top --once`: the pools at a glance, with rates over one interval."""

import re

from adminhttp import CLILoad


def test_top_once_shows_pools_rates_hit_ratio_and_waste(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}})
    d.cli("prefetch", "feed-native")
    with CLILoad(d, ad_units=("feed-native",)) as load:
        load.wait_for(4)
        out = d.cli("top", "--once", "--interval", "1000").stdout
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
