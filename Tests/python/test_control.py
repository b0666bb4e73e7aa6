"""Run-time control end to end against the real daemon: disable / enable a loader, invalidate a
lent ad's creative (with the OpenRTB loss notice), reload the configuration by the Reload call
and by SIGHUP; garbage refused with clear statuses and the rest of the service unharmed."""

import json
import os
import signal
import time
import urllib.parse

import grpc
import pytest

import grpc_stubs
from openrtb_stub import Exchange
from test_openrtb import config as openrtb_config

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms", "fillRate": 1}},
    "loaders": {
        "default": {"sizing": "fixed", "maximumRetainedAdvertisements": 10, "minimumRemainingLife": "0s"},
        "second": {"sizing": "fixed", "maximumRetainedAdvertisements": 5},
    },
}


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


@pytest.fixture
def stubs():
    return grpc_stubs.load()


@pytest.fixture
def served(daemon, stubs):
    d = daemon(config=CONFIG)
    channel = grpc.insecure_channel(d.endpoint)
    yield d, stubs, stubs.grpc.NativeAdLoaderStub(channel)
    channel.close()


def config_path(d):
    return os.path.join(d.tmp.name, "config.json")


def write_config(d, config):
    with open(config_path(d), "w") as f:
        f.write(config if isinstance(config, str) else json.dumps(config))


def lease(s, stub, unit="feed", loader="", slot=""):
    answer = stub.Borrow(s.pb.BorrowRequest(ad_unit_id=unit, loader=loader, slot_key=slot, wait_ms=2000), timeout=10)
    assert answer.outcome == s.pb.BORROW_OUTCOME_LEASED
    return answer.lease


def pool(s, stub, unit="feed", loader="default"):
    pools = stub.Stats(s.pb.StatsRequest(loader=loader, ad_unit_id=unit), timeout=10).pools
    return pools[0] if pools else None


def settled(s, stub, unit="feed", loader="default"):
    """The pool once nothing is in flight (its top-ups answered), to compare before and after."""
    assert wait_for(lambda: pool(s, stub, unit, loader).in_flight == 0)
    return pool(s, stub, unit, loader)


def loaders(s, stub):
    return {l.name: l for l in stub.Stats(s.pb.StatsRequest(), timeout=10).loaders}


# ---- disable / enable ----

def test_disable_enable_round_trip_over_grpc_and_the_cli(served):
    d, s, stub = served
    held = lease(s, stub)
    answer = stub.SetLoaderEnabled(s.pb.SetLoaderEnabledRequest(loader="default", enabled=False), timeout=10)
    assert answer.changed
    assert not loaders(s, stub)["default"].enabled
    with pytest.raises(grpc.RpcError) as refused:
        stub.Borrow(s.pb.BorrowRequest(ad_unit_id="feed"), timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "disabled" in refused.value.details()
    # The lent ad stays with its cell; its return says it was removed.
    back = stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id), timeout=10)
    assert back.outcome == s.pb.RETURN_OUTCOME_REMOVED
    # The other loader is untouched.
    lease(s, stub, loader="second")
    text = d.cli("stats").stdout
    assert "NO (disabled)" in text
    assert "already disabled" in d.cli("disable", "default").stdout
    assert "enabled" in d.cli("enable", "default").stdout
    assert loaders(s, stub)["default"].enabled
    lease(s, stub)


def test_set_loader_enabled_refuses_garbage_and_serves_on(served):
    d, s, stub = served
    for name, details in [("", "loader: must name a loader"), ("nope", 'loader: unknown loader "nope"'),
                          ("x" * 200, "loader: must be at most 128 bytes, got 200")]:
        with pytest.raises(grpc.RpcError) as refused:
            stub.SetLoaderEnabled(s.pb.SetLoaderEnabledRequest(loader=name, enabled=False), timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details() == details
    result = d.cli("disable", "nope", check=False)
    assert result.returncode == 1 and "unknown loader" in result.stderr
    assert all(l.enabled for l in loaders(s, stub).values())
    lease(s, stub)


# ---- invalidate ----

def test_invalidate_removes_the_ad_blocks_its_creative_and_refuses_garbage(served):
    d, s, stub = served
    held = lease(s, stub)
    for reason, details in [("", "invalidate_reason: required with invalidate"),
                            ("x" * 1025, "invalidate_reason: must be at most 1024 bytes, got 1025")]:
        with pytest.raises(grpc.RpcError) as refused:
            stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id, invalidate=True, invalidate_reason=reason), timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details().startswith(details)
    with pytest.raises(grpc.RpcError) as refused:
        stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id, invalidate_reason="why"), timeout=10)
    assert refused.value.details() == "invalidate_reason: set without invalidate"
    # The lease survived the refusals; now invalidate it for real.
    answer = stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id, invalidate=True, invalidate_reason="bad creative"),
                         timeout=10)
    assert answer.outcome == s.pb.RETURN_OUTCOME_INVALIDATED
    assert loaders(s, stub)["default"].blocked_creatives == 1
    creative = held.ad.image.url.rsplit("-", 1)[0]  # the synthetic creative id: its image asset
    for _ in range(30):
        other = lease(s, stub)
        assert other.ad.image.url.rsplit("-", 1)[0] != creative
        stub.Return(s.pb.ReturnRequest(lease_id=other.lease_id), timeout=10)
    # The CLI's --invalidate.
    again = lease(s, stub)
    out = d.cli("return", str(again.lease_id), "--invalidate", "offensive").stdout
    assert "invalidated" in out
    assert loaders(s, stub)["default"].blocked_creatives == 2
    with pytest.raises(grpc.RpcError) as gone:
        stub.Return(s.pb.ReturnRequest(lease_id=again.lease_id), timeout=10)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


def test_invalidate_tells_the_openrtb_exchange_with_a_loss_notice(daemon):
    exchange = Exchange()
    try:
        d = daemon(config=openrtb_config(exchange.url, loader={"minimumRemainingLife": "0s"}))
        answer = json.loads(d.cli("--json", "borrow", "feed-native", "--loader", "feed", "--wait", "10000").stdout)
        lease_id = answer["lease"]["leaseId"]
        out = json.loads(d.cli("--json", "return", lease_id, "--invalidate", "bad creative").stdout)
        assert out["outcome"] == "RETURN_OUTCOME_INVALIDATED"
        # Every stub bid has the fixture's crid: the lent ad and its 4 siblings are dropped, each
        # with a loss notice of reason 200 (creative filtered).
        losses = wait_for(lambda: len(exchange.notices_of("loss")) >= 5 and exchange.notices_of("loss"))
        reasons = [urllib.parse.parse_qs(urllib.parse.urlparse(p).query)["reason"] for p in losses]
        assert reasons and all(r == ["200"] for r in reasons)
        # Ads of the creative arriving later are dropped too: nothing of it is lent.
        later = json.loads(d.cli("--json", "borrow", "feed-native", "--loader", "feed", "--wait", "500").stdout)
        assert later["outcome"] == "BORROW_OUTCOME_NO_AD_YET"
    finally:
        exchange.stop()


# ---- reload ----

def test_reload_adds_removes_and_changes_loaders_keeping_an_unchanged_pool(served):
    d, s, stub = served
    held = lease(s, stub)
    before = settled(s, stub)
    config = json.loads(json.dumps(CONFIG))
    del config["loaders"]["second"]
    config["loaders"]["third"] = {"sizing": "fixed", "maximumRetainedAdvertisements": 5}
    write_config(d, config)
    answer = stub.Reload(s.pb.ReloadRequest(), timeout=10)
    assert list(answer.added) == ["third"] and list(answer.removed) == ["second"]
    assert list(answer.unchanged) == ["default"]
    after = pool(s, stub)
    assert (after.available, after.leased, after.loaded) == (before.available, before.leased, before.loaded)
    assert set(loaders(s, stub)) == {"default", "third"}
    lease(s, stub, loader="third")
    # A change of sizing keeps the pool and its leases; the lease is still returnable.
    config["loaders"]["default"]["leaseTimeout"] = "2m"
    write_config(d, config)
    out = d.cli("reload").stdout
    assert "changed, pools and leases kept: default" in out
    assert pool(s, stub).leased == 1
    back = stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id), timeout=10)
    assert back.outcome == s.pb.RETURN_OUTCOME_BACK_IN_POOL
    # A change of request drops that loader's pool; the unchanged loader "third" keeps its pool
    # and its lease, which stays returnable.
    third = lease(s, stub, loader="third")
    third_before = settled(s, stub, loader="third")
    config["loaders"]["default"]["keywords"] = ["sports"]
    write_config(d, config)
    answer = stub.Reload(s.pb.ReloadRequest(), timeout=10)
    assert list(answer.changed_dropping_pools) == ["default"] and list(answer.unchanged) == ["third"]
    assert pool(s, stub) is None
    third_after = pool(s, stub, loader="third")
    assert (third_after.available, third_after.leased, third_after.loaded) == (
        third_before.available, third_before.leased, third_before.loaded)
    assert stub.Return(s.pb.ReturnRequest(lease_id=third.lease_id), timeout=10).outcome == \
        s.pb.RETURN_OUTCOME_BACK_IN_POOL
    lease(s, stub)


@pytest.mark.parametrize("content, details", [
    ("{ not json", "config:"),
    (json.dumps({"loaders": {"default": {"numberOfAdvertisements": 9}}}), "loaders.default.numberOfAdvertisements"),
    (json.dumps({"loaders": {"default": {"source": "nowhere"}}}), "loaders.default.source"),
    (json.dumps({"loaders": {"default": {}}, "limits": {"maxConnections": 5}}), "limits.maxConnections"),
    (json.dumps({"loaders": {"default": {}}, "sources": {"extra": {"type": "synthetic"}}}), "sources.extra"),
    (None, "cannot read"),
])
def test_a_refused_reload_names_the_reason_and_the_old_configuration_serves_on(served, content, details):
    d, s, stub = served
    held = lease(s, stub)
    before = settled(s, stub)
    if content is None:
        os.remove(config_path(d))
    else:
        write_config(d, content)
    with pytest.raises(grpc.RpcError) as refused:
        stub.Reload(s.pb.ReloadRequest(), timeout=10)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.details().startswith("configuration refused, the running one is unchanged: ")
    assert details in refused.value.details()
    result = d.cli("reload", check=False)
    assert result.returncode == 1 and details in result.stderr
    assert set(loaders(s, stub)) == {"default", "second"}
    assert pool(s, stub).available == before.available
    assert stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id), timeout=10).outcome == s.pb.RETURN_OUTCOME_BACK_IN_POOL
    lease(s, stub, loader="second")


def test_sighup_reloads_and_a_bad_file_is_logged_not_applied(served):
    d, s, stub = served
    held = lease(s, stub)
    config = json.loads(json.dumps(CONFIG))
    config["loaders"]["third"] = {}
    write_config(d, config)
    d.signal(signal.SIGHUP)
    assert wait_for(lambda: "third" in loaders(s, stub))
    assert '"configuration reloaded"' in d.log() or "configuration reloaded" in d.log()
    write_config(d, "{ garbled")
    d.signal(signal.SIGHUP)
    assert wait_for(lambda: "configuration reload refused" in d.log())
    refused = [json.loads(line) for line in d.log().splitlines() if "configuration reload refused" in line]
    assert refused[-1]["trigger"] == "SIGHUP" and refused[-1]["setting"] == "config"
    assert set(loaders(s, stub)) == {"default", "second", "third"}
    assert stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id), timeout=10).outcome == s.pb.RETURN_OUTCOME_BACK_IN_POOL


def test_control_calls_need_the_token_like_every_call(daemon, stubs):
    d = daemon(config=dict(CONFIG, auth={"tokens": ["s3cret"], "requireOnLoopback": True}))
    channel = grpc.insecure_channel(d.endpoint)
    try:
        stub = stubs.grpc.NativeAdLoaderStub(channel)
        for call, request in [(stub.Reload, stubs.pb.ReloadRequest()),
                              (stub.SetLoaderEnabled, stubs.pb.SetLoaderEnabledRequest(loader="default"))]:
            with pytest.raises(grpc.RpcError) as refused:
                call(request, timeout=10)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        answer = stub.Reload(stubs.pb.ReloadRequest(), timeout=10, metadata=[("authorization", "Bearer s3cret")])
        assert sorted(answer.unchanged) == ["default", "second"]
        assert d.cli("--token", "s3cret", "disable", "second").returncode == 0
    finally:
        channel.close()


def test_control_actions_show_in_the_metrics(daemon, stubs):
    from prometheus_client.parser import text_string_to_metric_families as parse_text
    from adminhttp import get

    d = daemon(config=CONFIG, admin=True)
    channel = grpc.insecure_channel(d.endpoint)
    try:
        s, stub = stubs, stubs.grpc.NativeAdLoaderStub(channel)
        held = lease(s, stub)
        stub.Return(s.pb.ReturnRequest(lease_id=held.lease_id, invalidate=True, invalidate_reason="bad"), timeout=10)
        stub.SetLoaderEnabled(s.pb.SetLoaderEnabledRequest(loader="second", enabled=False), timeout=10)
        stub.Reload(s.pb.ReloadRequest(), timeout=10)
        write_config(d, "{")
        with pytest.raises(grpc.RpcError):
            stub.Reload(s.pb.ReloadRequest(), timeout=10)
        status, _, body = get(d.admin, "/metrics")
        assert status == 200
        samples = {(x.name, tuple(sorted(x.labels.items()))): x.value
                   for f in parse_text(body) for x in f.samples}
        assert samples[("adloader_loader_enabled", (("loader", "default"),))] == 1
        assert samples[("adloader_loader_enabled", (("loader", "second"),))] == 0
        assert samples[("adloader_loader_blocked_creatives", (("loader", "default"),))] == 1
        assert samples[("adloader_config_reloads_total", (("result", "applied"),))] == 1
        assert samples[("adloader_config_reloads_total", (("result", "refused"),))] == 1
        assert samples[("adloader_calls_total", (("code", "FAILED_PRECONDITION"), ("method", "Reload")))] == 1
    finally:
        channel.close()
