"""/metrics scraped from the real daemon under a small load and parsed with prometheus_client
(both formats): names, types, label sets, and counters that move as calls are made."""

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

import json
import subprocess

from adminhttp import CLILoad, get
from conftest import BINARY, CLI, ROOT

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms"}},
    "loaders": {"default": {"maximumRetainedAdvertisements": 10}},
}

# name -> (type as prometheus_client reports it, label names of every sample but le)
EXPECTED = {
    "adloader_calls": ("counter", {"method", "code"}),
    "adloader_call_duration_seconds": ("histogram", {"method"}),
    "adloader_pool_available_ads": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_leased_ads": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_in_flight_ads": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_target_ads": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_idle": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_in_flight_requests": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_parked_borrows": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_borrows": ("counter", {"loader", "ad_unit", "result"}),
    "adloader_pool_ads_loaded": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_ads_expired": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_ads_consumed": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_ads_removed": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_upstream_requests": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_upstream_failures": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_leases_reclaimed": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_in_flight_target": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_held_back": ("gauge", {"loader", "ad_unit", "cap"}),
    "adloader_pool_held_back_seconds": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_round_trip_seconds": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_ads_per_request": ("gauge", {"loader", "ad_unit"}),
    "adloader_pool_ads_expired_on_arrival": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_memory_refused_ads": ("counter", {"loader", "ad_unit"}),
    "adloader_pool_ads_dropped_for_memory": ("counter", {"loader", "ad_unit"}),
    "adloader_upstream_requests": ("counter", {"source"}),
    "adloader_upstream_ads_received": ("counter", {"source"}),
    "adloader_upstream_failures": ("counter", {"source", "class"}),
    "adloader_upstream_request_duration_seconds": ("histogram", {"source"}),
    "adloader_upstream_in_flight_requests": ("gauge", {"source"}),
    "adloader_upstream_reachable": ("gauge", {"source"}),
    "adloader_source_notices": ("counter", {"source", "notice"}),
    "adloader_loader_enabled": ("gauge", {"loader"}),
    "adloader_loader_blocked_creatives": ("gauge", {"loader"}),
    "adloader_config_reloads": ("counter", {"result"}),
    "adloader_connections": ("gauge", set()),
    "adloader_transport_connections": ("gauge", {"transport"}),
    "adloader_connections_refused": ("counter", {"transport"}),
    "adloader_build_info": ("gauge", {"version", "build", "commit"}),
    "adloader_feeds_held": ("gauge", set()),
    "adloader_feed_positions_planned": ("counter", set()),
    "adloader_feed_positions_filled": ("counter", set()),
    "adloader_feed_coming_answers": ("counter", set()),
    "adloader_feed_positions_empty": ("counter", set()),
    "adloader_feed_separation_holds": ("counter", set()),
    "adloader_feeds_expired": ("counter", set()),
    "adloader_feeds_refused": ("counter", set()),
    "adloader_parked_borrows": ("gauge", set()),
    "adloader_open_calls": ("gauge", set()),
    "adloader_admin_connections": ("gauge", set()),
    "adloader_ready": ("gauge", set()),
    "adloader_cap_store_operations": ("counter", {"store", "operation", "result"}),
    "adloader_cap_store_up": ("gauge", {"store"}),
    # The pool store (on by default): what the start restored, and the journal's work.
    "adloader_pool_store_restored_ads": ("gauge", {"outcome"}),
    "adloader_pool_store_restored_leases": ("gauge", set()),
    "adloader_pool_store_journal_bytes": ("gauge", set()),
    "adloader_pool_store_journal_writes": ("counter", set()),
    "adloader_pool_store_write_failures": ("counter", set()),
    "adloader_event_loop_lag_seconds": ("histogram", set()),
    "process_resident_memory_bytes": ("gauge", set()),
    "process_open_fds": ("gauge", set()),
    "process_max_fds": ("gauge", set()),
    "process_cpu_seconds": ("counter", set()),
    "process_start_time_seconds": ("gauge", set()),
}


def scrape(d, accept=None):
    status, headers, body = get(d.admin, "/metrics", headers={"Accept": accept} if accept else None)
    assert status == 200, body
    return headers["content-type"], body


def by_name(families):
    return {f.name: f for f in families}


def value(families, name, suffix="", **labels):
    for sample in families[name].samples:
        if sample.name == name + suffix and all(sample.labels.get(k) == v for k, v in labels.items()):
            return sample.value
    return None


def test_metrics_parse_with_expected_names_types_and_labels_and_counters_move(daemon):
    d = daemon(config=CONFIG, admin=True)
    before_type, before_text = scrape(d)
    assert before_type.startswith("text/plain; version=0.0.4")
    before = by_name(parse_text(before_text))
    assert value(before, "adloader_calls", "_total", method="Borrow", code="OK") == 0

    # A small load: borrows and shown returns through the CLI, plus a call that fails.
    with CLILoad(d, ad_units=("feed-native", "feed-video")) as load:
        load.wait_for(12)
    assert not load.errors
    assert d.cli("borrow", "x" * 5000, check=False).returncode == 1  # INVALID_ARGUMENT
    # Calls the transport refuses before the service: an unknown method (the conformance check).
    assert d.cli("conformance", "--only", "call.unknown-method-unimplemented").returncode == 0

    _, text = scrape(d)
    after = by_name(parse_text(text))
    for name, (kind, labels) in EXPECTED.items():
        assert name in after, f"missing {name}"
        assert after[name].type == kind, (name, after[name].type)
        assert after[name].documentation, name
        assert after[name].samples, name
        for sample in after[name].samples:
            assert set(sample.labels) - {"le"} == labels, (name, sample.labels)
            if "method" in labels:
                assert sample.labels["method"] in {"Prefetch", "Borrow", "Return", "Stats", "Watch", "AppOpen",
                                                   "SetLoaderEnabled", "Reload", "ServerInfo", "Plan", "_unknown"}
    unexpected = set(after) - set(EXPECTED)
    assert not unexpected, unexpected

    borrows = value(after, "adloader_calls", "_total", method="Borrow", code="OK")
    returns = value(after, "adloader_calls", "_total", method="Return", code="OK")
    assert borrows >= 6 and returns >= 1, (borrows, returns)
    assert value(after, "adloader_calls", "_total", method="Borrow", code="INVALID_ARGUMENT") == 1
    assert value(after, "adloader_calls", "_total", method="_unknown", code="UNIMPLEMENTED") >= 1
    assert value(after, "adloader_call_duration_seconds", "_count", method="Borrow") == borrows + 1
    pools = {s.labels["ad_unit"] for s in after["adloader_pool_available_ads"].samples}
    assert pools == {"feed-native", "feed-video"}
    # Demand sizing: the target follows the borrow rate, bounded by maximumRetainedAdvertisements.
    assert 1 <= value(after, "adloader_pool_target_ads", loader="default", ad_unit="feed-native") <= 10
    assert value(after, "adloader_pool_idle", loader="default", ad_unit="feed-native") == 0
    hits = sum(value(after, "adloader_pool_borrows", "_total", ad_unit=u, result="hit") for u in pools)
    assert hits >= 1
    assert value(after, "adloader_upstream_requests", "_total", source="synthetic") >= 2
    assert value(after, "adloader_upstream_request_duration_seconds", "_count", source="synthetic") >= 1
    assert value(after, "adloader_source_notices", "_total", source="synthetic", notice="shown") == returns
    assert value(after, "adloader_upstream_reachable", source="synthetic") == 1
    assert value(after, "adloader_ready") == 1
    # No appOpen loader: no store is opened, and none is down.
    assert value(after, "adloader_cap_store_up", store="none") == 1
    # A first start restored nothing; the load was journalled, and no write failed.
    assert value(after, "adloader_pool_store_restored_ads", outcome="restored") == 0
    assert value(after, "adloader_pool_store_journal_writes", "_total") >= 1
    assert value(after, "adloader_pool_store_journal_bytes") > 0
    assert value(after, "adloader_pool_store_write_failures", "_total") == 0
    assert value(after, "adloader_event_loop_lag_seconds", "_count") >= 1
    assert value(after, "process_resident_memory_bytes") > 1_000_000
    assert 3 < value(after, "process_open_fds") < value(after, "process_max_fds")

    # Another scrape: counters never go back.
    _, again_text = scrape(d)
    again = by_name(parse_text(again_text))
    for name, (kind, _) in EXPECTED.items():
        if kind != "counter":
            continue
        for sample in after[name].samples:
            assert value(again, name, "_total", **sample.labels) >= sample.value, (name, sample.labels)


def test_openmetrics_when_accept_asks_for_it(daemon):
    d = daemon(config=CONFIG, admin=True)
    d.cli("borrow", "feed-native", "--wait", "1000")
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    content_type, text = scrape(d, accept)
    assert content_type.startswith("application/openmetrics-text; version=1.0.0")
    assert text.endswith("# EOF\n")
    families = by_name(parse_openmetrics(text))  # strict: raises on any format error
    assert families["adloader_calls"].type == "counter"
    assert families["adloader_call_duration_seconds"].type == "histogram"
    assert value(families, "adloader_calls", "_total", method="Borrow", code="OK") == 1


def test_healthz_and_unknown_paths(daemon):
    d = daemon(admin=True)
    assert get(d.admin, "/healthz")[0] == 200
    status, _, body = get(d.admin, "/nope")
    assert status == 404 and "/metrics" in body


def test_one_version_in_both_binaries_server_info_and_build_info(daemon):
    """`adloaderd --version`, `adloader --version`, the ServerInfo call and adloader_build_info
    say the same version (one source: BuildInfo.version)."""
    daemon_version = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True).stdout.split()
    cli_version = subprocess.run([CLI, "--version"], capture_output=True, text=True, check=True).stdout.split()
    assert daemon_version[0] == "adloaderd" and cli_version[0] == "adloader"
    assert daemon_version[1:] == cli_version[1:], (daemon_version, cli_version)
    version = daemon_version[1]
    d = daemon(config=CONFIG, admin=True)
    info = json.loads(d.cli("--json", "server-info").stdout)
    assert info["version"] == version
    assert info["instance"] == d.endpoint
    assert "framed" in info["features"] and "grpc" in info["features"] and "admin" in info["features"]
    assert info["features"] == sorted(info["features"])
    _, text = scrape(d)
    families = by_name(parse_text(text))
    assert value(families, "adloader_build_info", version=version) == 1
    # The commit, taken at build time (Plugins/GitCommitPlugin): the checkout's HEAD, as 12 hex
    # digits, in --version, ServerInfo's build and the metric alike.
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    commit = head.stdout.strip() if head.returncode == 0 else "unknown"
    assert daemon_version[-1] == commit + ")", daemon_version
    assert info["build"].endswith(", commit " + commit), info["build"]
    assert value(families, "adloader_build_info", version=version, commit=commit) == 1
