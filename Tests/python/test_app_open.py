"""AppOpen against the real daemon: counts that survive SIGKILL (SQLite, Redis), a daily cap
that holds across two daemons sharing one Redis, and Redis over TLS. Uses the CLI's --json
output."""

import json
import urllib.request
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(store, daily_cap=None):
    policy = {} if daily_cap is None else {"maximumShowsPerDay": daily_cap}
    return {
        "loaders": {"appopen": {"format": "appOpen", "maximumRetainedAdvertisements": 3,
                                "numberOfAdvertisements": 3, "appOpen": policy}},
        "sources": {"synthetic": {"latency": "1ms"}},
        "capStore": store,
    }


def app_open(d, device="device-1", session="session-1", *extra):
    out = d.cli("app-open", "splash", "--loader", "appopen", "--device", device, "--session", session,
                "--utc-offset", "+05:30", "--json", *extra).stdout
    return json.loads(out)


def app_open_ready(d, **kw):
    """AppOpen until the pool has an ad (bounded): the first call fills it."""
    deadline = time.monotonic() + 10
    while True:
        answer = app_open(d, **kw)
        if answer["outcome"] != "APP_OPEN_OUTCOME_NO_AD_READY" or time.monotonic() > deadline:
            return answer
        time.sleep(0.02)


def show_and_confirm(d, **kw):
    answer = app_open_ready(d, **kw)
    assert answer["outcome"] == "APP_OPEN_OUTCOME_SHOW", answer
    lease = answer["lease"]["leaseId"]
    assert answer["lease"]["ad"]["format"] == "AD_FORMAT_APP_OPEN"
    returned = json.loads(d.cli("return", lease, "--shown", "--json").stdout)
    assert returned["outcome"] == "RETURN_OUTCOME_CONSUMED", returned
    return answer


@pytest.fixture
def sqlite_path():
    with tempfile.TemporaryDirectory(prefix="adloaderd-caps-") as tmp:
        yield os.path.join(tmp, "caps.sqlite")


def test_sigkill_right_after_a_confirmed_show_keeps_the_count_sqlite(daemon, sqlite_path):
    store = {"type": "sqlite", "sqlitePath": sqlite_path}
    d = daemon(config=config(store))
    before = show_and_confirm(d)
    assert before["dailyCount"] == 0 and before["sessionCount"] == 0
    # The Return was answered: the count is committed. Kill at once, no shutdown.
    d.signal(signal.SIGKILL)
    assert d.wait() == -signal.SIGKILL
    again = daemon(config=config(store))
    after = app_open(again)
    assert after["dailyCount"] == 1 and after["sessionCount"] == 1, after


@pytest.mark.parametrize("synchronous", ["full", "normal"])
def test_sigkill_in_a_loop_never_loses_a_confirmed_show_sqlite(daemon, sqlite_path, synchronous):
    store = {"type": "sqlite", "sqlitePath": sqlite_path, "sqliteSynchronous": synchronous}
    for shown in range(3):
        d = daemon(config=config(store))
        answer = show_and_confirm(d, session=f"s{shown}")
        assert answer["dailyCount"] == shown, answer
        d.signal(signal.SIGKILL)
        d.wait()
    final = app_open(daemon(config=config(store)), session="last")
    assert final["dailyCount"] == 3, final


def test_sigkill_right_after_a_confirmed_show_keeps_the_count_redis(daemon, redis_server):
    # A generous timeout: these tests are about counts, and this machine may be busy.
    store = {"type": "redis", "redisPort": redis_server, "redisTimeout": "10s"}
    d = daemon(config=config(store))
    show_and_confirm(d)
    d.signal(signal.SIGKILL)
    d.wait()
    after = app_open(daemon(config=config(store)))
    assert after["dailyCount"] == 1 and after["sessionCount"] == 1, after


def test_two_daemons_sharing_one_redis_hold_one_daily_cap(daemon, redis_server):
    # A generous timeout: these tests are about counts, and this machine may be busy.
    store = {"type": "redis", "redisPort": redis_server, "redisTimeout": "10s"}
    a = daemon(config=config(store, daily_cap=2))
    b = daemon(config=config(store, daily_cap=2))
    show_and_confirm(a, session="s-a")
    second = show_and_confirm(b, session="s-b")
    assert second["dailyCount"] == 1, second
    # Both daemons now see the cap reached for this device, whatever the session.
    for d in (a, b):
        capped = app_open_ready(d, session="s-c")
        assert capped["outcome"] == "APP_OPEN_OUTCOME_SKIP" and capped["reason"] == "APP_OPEN_REASON_DAILY_CAP_REACHED", capped
        assert capped["dailyCount"] == 2 and capped["dailyCapReached"], capped
    # Another device is not capped.
    assert app_open_ready(a, device="device-2")["outcome"] == "APP_OPEN_OUTCOME_SHOW"


def test_a_redis_outage_refuses_to_show_and_recovers(daemon):
    port = free_port()
    store = {"type": "redis", "redisPort": port, "redisReconnectInterval": "100ms"}
    d = daemon(config=config(store), admin=True)
    down = app_open_ready(d)
    assert down["outcome"] == "APP_OPEN_OUTCOME_SKIP" and down["reason"] == "APP_OPEN_REASON_STORE_UNAVAILABLE", down
    assert down["storeUnavailable"]
    # The outage shows in the metrics and once in the log.
    metrics = urllib.request.urlopen(d.admin + "/metrics", timeout=5).read().decode()
    assert 'adloader_cap_store_up{store="redis"} 0' in metrics
    assert 'adloader_cap_store_operations_total{store="redis",operation="counts",result="error"}' in metrics
    assert d.log().count('"message":"cap store down: app-open counts unavailable"') == 1
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            answer = app_open(d)
            if answer["outcome"] == "APP_OPEN_OUTCOME_SHOW" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert answer["outcome"] == "APP_OPEN_OUTCOME_SHOW" and not answer["storeUnavailable"], answer
        metrics = urllib.request.urlopen(d.admin + "/metrics", timeout=5).read().decode()
        assert 'adloader_cap_store_up{store="redis"} 1' in metrics
        assert '"message":"cap store answers again"' in d.log()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_cli_readable_output_and_bad_input(daemon, sqlite_path):
    d = daemon(config=config({"type": "sqlite", "sqlitePath": sqlite_path}))
    app_open_ready(d)
    out = d.cli("app-open", "splash", "--loader", "appopen", "--device", "d", "--session", "s",
                "--event", "foreground", "--background", "10").stdout
    assert out.startswith("skip: below background threshold"), out
    assert "shows so far: 0 this session, 0 on " in out
    bad = d.cli("app-open", "splash", "--loader", "appopen", "--device", "d", "--session", "s",
                "--utc-offset", "+5:30", check=False)
    assert bad.returncode == 2 and "--utc-offset" in bad.stderr
    far = d.cli("app-open", "splash", "--loader", "appopen", "--device", "d", "--session", "s",
                "--utc-offset", "+99:00", check=False)
    assert far.returncode == 1 and "utc_offset_seconds: must be -64800...64800, got 356400" in far.stderr
    refused = d.cli("app-open", "splash", "--loader", "appopen", "--device", "", "--session", "s", check=False)
    assert refused.returncode == 1 and "device_id: must not be empty" in refused.stderr
    # The daemon still answers.
    assert app_open(d)["outcome"] == "APP_OPEN_OUTCOME_SHOW"


def test_banner_format_is_refused_with_its_reason(tmp_path):
    from conftest import BINARY
    path = tmp_path / "banner.json"
    path.write_text(json.dumps({"loaders": {"b": {"format": "banner"}}}))
    run = subprocess.run([BINARY, "--config", str(path), "--port", "0"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert "loaders.b.format: banner is not a pooled format" in run.stderr, run.stderr


def test_the_synthetic_source_serves_every_format_through_borrow(daemon):
    formats = ["native", "interstitial", "rewarded", "appOpen"]
    d = daemon(config={"loaders": {f: {"format": f} for f in formats},
                       "sources": {"synthetic": {"latency": "1ms"}}})
    for f in formats:
        answer = json.loads(d.cli("borrow", "unit", "--loader", f, "--wait", "2000", "--json").stdout)
        assert answer["outcome"] == "BORROW_OUTCOME_LEASED", answer
        ad = answer["lease"]["ad"]
        if f == "native":
            assert "fullScreen" not in ad and ad["headline"], ad
            assert ad["format"] == "AD_FORMAT_UNSPECIFIED", ad  # as the server sends native ads
            continue
        assert ad["format"] == {"interstitial": "AD_FORMAT_INTERSTITIAL", "rewarded": "AD_FORMAT_REWARDED",
                                "appOpen": "AD_FORMAT_APP_OPEN"}[f], ad
        creative = ad["fullScreen"]
        assert ad["headline"] == ""  # the proto mapping prints every field; native ones are empty
        assert creative.get("markup") or creative.get("videoUrl"), creative
        assert ("reward" in creative) == (f == "rewarded"), creative
        if f == "rewarded":
            assert int(creative["reward"]["amount"]) > 0 and creative["reward"]["type"]


@pytest.mark.parametrize("synchronous", ["normal", "full"])
def test_app_open_over_grpc_with_the_stock_client(daemon, sqlite_path, synchronous):
    """AppOpen, the full-screen oneof and the counting Return through real gRPC (stubs
    generated from Proto/); with synchronous full the store answers from its worker thread."""
    import grpc
    import grpc_stubs
    s = grpc_stubs.load()
    d = daemon(config=config({"type": "sqlite", "sqlitePath": sqlite_path, "sqliteSynchronous": synchronous},
                             daily_cap=1))
    channel = grpc.insecure_channel(d.endpoint)
    try:
        stub = s.grpc.NativeAdLoaderStub(channel)
        request = s.pb.AppOpenRequest(device_id="g-1", session_id="s-1", event=s.pb.APP_OPEN_EVENT_LAUNCH,
                                      utc_offset_seconds=-28800, ad_unit_id="splash", loader="appopen")
        deadline = time.monotonic() + 10
        answer = stub.AppOpen(request, timeout=10)
        while answer.outcome == s.pb.APP_OPEN_OUTCOME_NO_AD_READY and time.monotonic() < deadline:
            time.sleep(0.02)
            answer = stub.AppOpen(request, timeout=10)
        assert answer.outcome == s.pb.APP_OPEN_OUTCOME_SHOW and answer.reason == s.pb.APP_OPEN_REASON_COLD_START
        ad = answer.lease.ad
        assert ad.format == s.pb.AD_FORMAT_APP_OPEN and ad.WhichOneof("creative") == "full_screen"
        assert ad.full_screen.WhichOneof("media") in ("markup", "video_url") and ad.headline == ""
        returned = stub.Return(s.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=True), timeout=10)
        assert returned.outcome == s.pb.RETURN_OUTCOME_CONSUMED
        capped = stub.AppOpen(request, timeout=10)
        assert capped.outcome == s.pb.APP_OPEN_OUTCOME_SKIP
        assert capped.reason == s.pb.APP_OPEN_REASON_DAILY_CAP_REACHED and capped.daily_cap_reached
        assert capped.daily_count == 1 and capped.session_count == 1
        with pytest.raises(grpc.RpcError) as refused:
            stub.AppOpen(s.pb.AppOpenRequest(device_id="g-1", session_id="s-1", ad_unit_id="splash",
                                             loader="appopen"), timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "event: must be LAUNCH (1) or FOREGROUND (2), got 0" in refused.value.details()
    finally:
        channel.close()


def grpc_stub(d):
    import grpc
    import grpc_stubs
    s = grpc_stubs.load()
    channel = grpc.insecure_channel(d.endpoint)
    return s, channel, s.grpc.NativeAdLoaderStub(channel)


def launch(s, device, session="s-1", first=False):
    return s.pb.AppOpenRequest(device_id=device, session_id=session, event=s.pb.APP_OPEN_EVENT_LAUNCH,
                               first_launch=first, ad_unit_id="splash", loader="appopen")


def fill_pool(s, stub):
    """A SHOW for a device of its own, once the pool has an ad (bounded); returns its answer."""
    deadline = time.monotonic() + 10
    while True:
        answer = stub.AppOpen(launch(s, "filler"), timeout=10)
        if answer.outcome != s.pb.APP_OPEN_OUTCOME_NO_AD_READY or time.monotonic() > deadline:
            return answer
        time.sleep(0.02)


@pytest.mark.parametrize("kind", ["sqlite-full", "redis"])
def test_decisions_in_flight_for_one_device_show_once_under_a_cap_of_one(daemon, sqlite_path, redis_server, kind):
    """A SHOW counts from its decision: calls for one device in flight together (with the
    SQLite store on its worker thread they all read the store before any decision) give one
    SHOW; the rest are refused naming the cap, with the reservation reported."""
    store = ({"type": "sqlite", "sqlitePath": sqlite_path, "sqliteSynchronous": "full"} if kind == "sqlite-full"
             else {"type": "redis", "redisPort": redis_server, "redisTimeout": "10s"})
    cfg = config(store)
    cfg["loaders"]["appopen"]["appOpen"] = {"maximumShowsPerSession": 1, "reservationTimeout": "2s"}
    cfg["loaders"]["appopen"]["maximumRetainedAdvertisements"] = 8
    cfg["loaders"]["appopen"]["numberOfAdvertisements"] = 4
    d = daemon(config=cfg)
    s, channel, stub = grpc_stub(d)
    try:
        assert fill_pool(s, stub).outcome == s.pb.APP_OPEN_OUTCOME_SHOW
        futures = [stub.AppOpen.future(launch(s, "device-x"), timeout=10) for _ in range(6)]
        answers = [f.result() for f in futures]
        shows = [a for a in answers if a.outcome == s.pb.APP_OPEN_OUTCOME_SHOW]
        refused = [a for a in answers if a.outcome == s.pb.APP_OPEN_OUTCOME_SKIP]
        assert len(shows) == 1 and len(refused) == 5, [(a.outcome, a.reason) for a in answers]
        for a in refused:
            assert a.reason == s.pb.APP_OPEN_REASON_SESSION_CAP_REACHED and a.session_cap_reached, a
            assert a.session_count == 0 and a.session_reserved == 1, a
        # Never returned shown: the reservation ends at its bound (2 s), and the device may be
        # asked again (waited for with a bound, not slept).
        deadline = time.monotonic() + 10
        while True:
            again = stub.AppOpen(launch(s, "device-x"), timeout=10)
            if again.outcome == s.pb.APP_OPEN_OUTCOME_SHOW or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert again.outcome == s.pb.APP_OPEN_OUTCOME_SHOW and again.session_reserved == 0, again
        # Confirmed: counted once in the store, the cap then holds on the count itself.
        returned = stub.Return(s.pb.ReturnRequest(lease_id=again.lease.lease_id, shown=True), timeout=10)
        assert returned.outcome == s.pb.RETURN_OUTCOME_CONSUMED
        capped = stub.AppOpen(launch(s, "device-x"), timeout=10)
        assert capped.reason == s.pb.APP_OPEN_REASON_SESSION_CAP_REACHED, capped
        assert capped.session_count == 1 and capped.session_reserved == 0, capped
    finally:
        channel.close()


def test_cold_starts_can_be_turned_off_apart_from_first_launches(daemon, sqlite_path):
    cfg = config({"type": "sqlite", "sqlitePath": sqlite_path})
    cfg["loaders"]["appopen"]["appOpen"] = {"showOnColdStart": False}
    d = daemon(config=cfg)
    s, channel, stub = grpc_stub(d)
    try:
        deadline = time.monotonic() + 10
        first = stub.AppOpen(launch(s, "d-1", first=True), timeout=10)
        while first.outcome == s.pb.APP_OPEN_OUTCOME_NO_AD_READY and time.monotonic() < deadline:
            time.sleep(0.02)
            first = stub.AppOpen(launch(s, "d-1", first=True), timeout=10)
        assert first.outcome == s.pb.APP_OPEN_OUTCOME_SHOW and first.reason == s.pb.APP_OPEN_REASON_FIRST_LAUNCH
        assert first.first_launch and not first.cold_start
        cold = stub.AppOpen(launch(s, "d-1", session="s-2"), timeout=10)
        assert cold.outcome == s.pb.APP_OPEN_OUTCOME_SKIP, cold
        assert cold.reason == s.pb.APP_OPEN_REASON_COLD_START_EXCLUDED and cold.cold_start and not cold.first_launch
        hot = stub.AppOpen(s.pb.AppOpenRequest(device_id="d-1", session_id="s-2", event=s.pb.APP_OPEN_EVENT_FOREGROUND,
                                               background_seconds=600, ad_unit_id="splash", loader="appopen"),
                           timeout=10)
        assert hot.outcome == s.pb.APP_OPEN_OUTCOME_SHOW and hot.reason == s.pb.APP_OPEN_REASON_HOT_START
    finally:
        channel.close()
    # The CLI says it too.
    out = app_open(d, "d-2", "s-1")
    assert out["reason"] == "APP_OPEN_REASON_COLD_START_EXCLUDED" and out["coldStart"], out


def test_prefetch_fills_to_the_callers_count_beyond_the_demand_target(daemon):
    d = daemon(config={"loaders": {"feed": {"maximumRetainedAdvertisements": 50, "numberOfAdvertisements": 5}},
                       "sources": {"synthetic": {"latency": "1ms"}}})
    plain = json.loads(d.cli("prefetch", "u-plain", "--loader", "feed", "--json").stdout)
    counted = json.loads(d.cli("prefetch", "u-count", "--loader", "feed", "--count", "14", "--json").stdout)
    assert plain["requested"] < 14 and counted["requested"] == 14, (plain, counted)
    beyond = d.cli("prefetch", "u-count", "--loader", "feed", "--count", "51", check=False)
    assert beyond.returncode == 1, beyond
    assert 'count: must be 0...50 (loader "feed" maximumRetainedAdvertisements), got 51' in beyond.stderr, beyond.stderr
    help_text = d.cli("--help").stdout
    assert "prefetch AD_UNIT [--loader NAME] [--count N]" in help_text


def test_the_stores_speak_mutual_tls_to_a_redis_on_its_tls_port_and_an_untrusted_redis_refuses_to_show(
        daemon, tmp_path):
    """capStore.redisTLS (issue 27): the cap store and the Redis pool store over TLS to a
    redis-server listening on its TLS port only and asking for client certificates; a daemon
    that does not trust Redis' CA decides with the store unavailable and logs why."""
    from test_tls import PKI
    good, other = PKI(str(tmp_path), "redis"), PKI(str(tmp_path), "other")
    server_cert, server_key = good.issue("redis", "/CN=redis", san="IP:127.0.0.1")
    client_cert, client_key = good.issue("adloaderd", "/CN=adloaderd", client=True)
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--tls-cert-file", server_cert, "--tls-key-file",
         server_key, "--tls-ca-cert-file", good.ca, "--tls-auth-clients", "yes", "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cli = ["redis-cli", "-p", str(port), "--tls", "--cacert", good.ca, "--cert", client_cert, "--key", client_key]
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(cli + ["PING"], capture_output=True, text=True).stdout.strip() != "PONG":
            assert time.monotonic() < deadline, "redis-server did not start with TLS"
            time.sleep(0.05)
        store = {"type": "redis", "redisPort": port, "redisTimeout": "10s", "redisTLS": True,
                 "redisTLSCAFile": good.ca, "redisTLSCertificateFile": client_cert, "redisTLSKeyFile": client_key}
        d = daemon(config=config(store), args=["--pool-store", "redis", "--instance-name", "tls-replica"])
        show_and_confirm(d)
        again = app_open_ready(d, session="session-2")
        assert again["dailyCount"] == 1 and not again["storeUnavailable"], again
        day_keys = subprocess.run(cli + ["--scan", "--pattern", "adloader:appopen:*:d:*"], capture_output=True,
                                  text=True).stdout.split()
        assert len(day_keys) == 1, day_keys
        assert subprocess.run(cli + ["GET", day_keys[0]], capture_output=True, text=True).stdout.strip() == "1"
        # A clean stop writes the pools through the same TLS settings.
        d.signal(signal.SIGTERM)
        assert d.wait() == 0
        assert subprocess.run(cli + ["EXISTS", "adloader:pools:{tls-replica}"], capture_output=True,
                              text=True).stdout.strip() == "1"
        untrusting = daemon(config=config(dict(store, redisTLSCAFile=other.ca)))
        down = app_open_ready(untrusting)
        assert down["outcome"] == "APP_OPEN_OUTCOME_SKIP", down
        assert down["reason"] == "APP_OPEN_REASON_STORE_UNAVAILABLE", down
        assert "TLS handshake failed" in untrusting.log() and "certificate verify failed" in untrusting.log()
    finally:
        proc.kill()
        proc.wait(timeout=10)
