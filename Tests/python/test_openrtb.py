"""The openrtb demand source end to end: the real daemon against a loopback exchange stub
(openrtb_stub.Exchange) replaying prebid-server's payloads and injecting faults."""

import json
import os
import time
import urllib.parse

import pytest

from openrtb_stub import ROOT, Exchange, free_port

EXAMPLE = os.path.join(ROOT, "Examples", "openrtb.json")


def wait_for(predicate, timeout=20.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def config(endpoint, loader=None, source=None):
    source_settings = {"type": "openrtb", "endpoint": endpoint, "timeout": "800ms", "tmax": "500ms",
                       "appBundle": "com.example.news", "test": True}
    source_settings.update(source or {})
    loader_settings = {"source": "openrtb", "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 5,
                       "retry": {"delay": "200ms", "probeInterval": "300ms"}}
    loader_settings.update(loader or {})
    return {"sources": {"openrtb": source_settings}, "loaders": {"feed": loader_settings}}


def borrow(d, unit="feed-native", wait=10000):
    out = d.cli("--json", "borrow", unit, "--loader", "feed", "--wait", str(wait)).stdout
    return json.loads(out)


def counts(message):
    """A PoolStats or SourceStats of `--json stats` with its uint64 counters (JSON strings, as the
    proto3 JSON mapping writes 64-bit integers) as ints."""
    return {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in message.items()}


def stats(d):
    return [counts(p) for p in json.loads(d.cli("--json", "stats").stdout)["pools"]]


def pool(d, unit="feed-native"):
    return next((p for p in stats(d) if p["adUnitId"] == unit), None)


@pytest.fixture
def exchange():
    ex = Exchange()
    yield ex
    invalid = list(ex.invalid)
    ex.stop()
    # The stub validates every BidRequest like a strict exchange: none may have been refused.
    assert not invalid, invalid


def test_example_configuration_serves_fixture_ads_through_adloader_borrow(daemon, exchange):
    # Exactly as a user runs it, with the endpoint as a setting (the environment variable).
    d = daemon(args=["--config", EXAMPLE], env={"ADLOADERD_OPENRTB_ENDPOINT": exchange.url})
    answer = borrow(d)
    assert answer["outcome"] == "BORROW_OUTCOME_LEASED"
    ad = answer["lease"]["ad"]
    assert ad["headline"] == "Luxury Mars Cruises"
    assert ad["body"] == "Visit the planet in a luxury spaceship."
    assert ad["callToAction"] == "Book today"
    assert ad["starRating"] == 3.8 and ad["price"] == "FREE"
    assert ad["clickUrl"] == "http://www.iponweb.com/careers/"
    assert ad["image"]["url"].startswith("http://hb.improvedigital.com/")
    # The BidRequest the exchange received.
    headers, body = exchange.requests[0]
    assert headers["x-openrtb-version"] == "2.6"
    assert headers["content-type"] == "application/json"
    assert len(body["imp"]) == 5
    native = json.loads(body["imp"][0]["native"]["request"])
    assert native["ver"] == "1.2" and len(native["assets"]) == 8
    assert [a["id"] for a in native["assets"]] == list(range(1, 9))
    assert body["app"]["bundle"] == "com.example.news" and body["app"]["keywords"] == "news,sports"
    # A call without privacy signals: the default class (nothing restricted, no identifier).
    assert body["regs"]["gdpr"] == 0 and body["regs"]["coppa"] == 0 and "us_privacy" not in body["regs"]
    assert "user" not in body and "ip" not in body["device"] and body["source"]["tid"]
    assert body["test"] == 1 and body["cur"] == ["USD"]
    assert body["tmax"] == 1000
    assert len({b["id"] for _, b in exchange.requests}) == len(exchange.requests)


def test_billing_notice_once_with_macros_and_loss_notices_with_reason(daemon, exchange):
    # An ad is lent only with minimumRemainingLife left (default: the 5 min leaseTimeout).
    d = daemon(config=config(exchange.url, loader={"lifetime": "4s", "sweepInterval": "100ms",
                                                   "minimumRemainingLife": "1s",
                                                   "maximumRetainedAdvertisements": 5}))
    lease = borrow(d)["lease"]
    d.cli("return", lease["leaseId"], "--shown")
    bills = wait_for(lambda: exchange.notices_of("bill"))
    assert len(bills) == 1
    query = urllib.parse.parse_qs(urllib.parse.urlparse(bills[0]).query)
    assert query["price"] == ["0.01"] and query["imp"][0] in {"1", "2", "3", "4", "5"}
    assert query["bid"][0].startswith("bid-")
    # The other ads expire unshown: one loss notice each, reason 2, never for the shown one.
    losses = wait_for(lambda: len(exchange.notices_of("loss")) >= 4 and exchange.notices_of("loss"), timeout=20)
    time.sleep(0.3)
    losses = exchange.notices_of("loss")
    reasons = [urllib.parse.parse_qs(urllib.parse.urlparse(p).query) for p in losses]
    assert all(r["reason"] == ["2"] for r in reasons)
    bids = [r["bid"][0] for r in reasons]
    assert len(bids) == len(set(bids)), "a loss notice fired twice"
    assert query["bid"][0] not in bids
    assert exchange.notices_of("win") == [], "burl is fired instead of nurl"
    assert len(exchange.notices_of("bill")) == 1
    # Notices are counted in Stats, per source.
    source = lambda: counts(json.loads(d.cli("--json", "stats").stdout)["sources"][0])
    assert wait_for(lambda: source()["noticesSent"] >= 1 + len(losses))
    src = source()
    assert src["name"] == "openrtb"
    assert src["noticesFailed"] == 0 and src["noticesDropped"] == 0
    assert src["requests"] >= 1 and src["bids"] >= 5


def test_no_fill_forms_are_not_failures(daemon, exchange):
    exchange.faults = ["204", "empty-object", "nbr"]
    exchange.mode = "204"
    d = daemon(config=config(exchange.url))
    assert borrow(d, wait=300)["outcome"] == "BORROW_OUTCOME_NO_AD_YET"
    d.cli("prefetch", "feed-native", "--loader", "feed")
    d.cli("prefetch", "feed-native", "--loader", "feed")
    wait_for(lambda: len(exchange.requests) >= 3)
    p = pool(d)
    assert p["upstreamFailures"] == 0 and p["loaded"] == 0


def test_missing_required_asset_is_dropped_not_lent(daemon, exchange):
    exchange.mode = "missing-asset"
    d = daemon(config=config(exchange.url))
    assert borrow(d, wait=500)["outcome"] == "BORROW_OUTCOME_NO_AD_YET"
    assert pool(d)["loaded"] == 0
    assert wait_for(lambda: "required asset 1" in d.log())
    (src,) = map(counts, json.loads(d.cli("--json", "stats").stdout)["sources"])
    assert src["bidsDropped"] == 5 * src["requests"] and src["noFills"] == src["requests"] and src["bids"] == 0


@pytest.mark.parametrize("fault,message", [
    ("400", "Invalid request: imp[0].native.request.assets must have unique ids"),
    ("malformed", "malformed bid response"),
    ("html", "content-type"),
])
def test_final_failures_are_logged_once_and_not_retried(daemon, exchange, fault, message):
    exchange.mode = fault
    d = daemon(config=config(exchange.url))
    # Fail fast: the parked borrow ends as soon as the final failure makes any ad impossible.
    failed = d.cli("--json", "borrow", "feed-native", "--loader", "feed", "--wait", "10000", check=False)
    assert failed.returncode != 0 and "UNAVAILABLE" in failed.stderr and message in failed.stderr, failed
    wait_for(lambda: message in d.log())
    time.sleep(0.8)  # several retry delays: a final failure is not retried automatically
    assert len(exchange.requests) == 1
    lines = [l for l in d.log().splitlines() if message in l and "openrtb request failed" in l]
    assert len(lines) == 1
    assert pool(d)["upstreamFailures"] == 1


@pytest.mark.parametrize("fault", ["500", "slow-headers", "slow-body"])
def test_retryable_failures_are_retried_by_the_policy(daemon, exchange, fault):
    exchange.faults = [fault]
    exchange.delay = 1.5
    d = daemon(config=config(exchange.url, source={"timeout": "500ms"}))
    answer = borrow(d, wait=5000)
    assert answer["outcome"] == "BORROW_OUTCOME_LEASED"
    assert len(exchange.requests) >= 2  # 2 on an idle machine; a loaded one may time out again
    gap = exchange.times[1] - exchange.times[0]
    assert gap >= 0.2, gap  # retry.delay
    assert pool(d)["upstreamFailures"] == len(exchange.requests) - 1


def test_429_retry_after_is_honoured(daemon, exchange):
    exchange.faults = ["429"]
    d = daemon(config=config(exchange.url))
    assert borrow(d, wait=6000)["outcome"] == "BORROW_OUTCOME_LEASED"
    gap = exchange.times[1] - exchange.times[0]
    assert gap >= 1.9, "Retry-After: 2 beats retry.delay 200ms (%.2fs)" % gap


def test_outage_connection_refused_then_recovery_borrows_served_throughout(daemon, exchange):
    port = exchange.port
    # Fixed sizing: the prefetch fills the whole pool (a demand-sized one would ask one batch).
    d = daemon(config=config(exchange.url, loader={"maximumRetainedAdvertisements": 10, "numberOfAdvertisements": 5,
                                                   "sizing": "fixed"}))
    d.cli("prefetch", "feed-native", "--loader", "feed")
    assert wait_for(lambda: (pool(d) or {}).get("available", 0) >= 10)
    exchange.stop()  # connection refused from now on
    leases = []
    for _ in range(6):  # more than a batch missing: a top-up goes out, and fails
        answer = borrow(d, wait=200)
        assert answer["outcome"] == "BORROW_OUTCOME_LEASED", "borrows are served from the pool during the outage"
        leases.append(answer["lease"]["leaseId"])
    for lease in leases:
        d.cli("return", lease, "--shown")
    wait_for(lambda: pool(d)["upstreamFailures"] >= 2, timeout=20)
    failures = pool(d)["upstreamFailures"]
    assert "unreachable" in d.log()
    back = Exchange(port=port)
    try:
        wait_for(lambda: len(back.requests) >= 1, timeout=20)
        assert wait_for(lambda: pool(d)["available"] >= 9, timeout=20)
        assert borrow(d)["outcome"] == "BORROW_OUTCOME_LEASED"
        assert pool(d)["upstreamFailures"] >= failures
    finally:
        back.stop()


def _fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_fds_and_memory_flat_across_thousands_of_requests(daemon, exchange):
    # 16 pools of one ad living 40 ms: each expiry fires a loss notice and a new request
    # (about 10 s on an idle machine; the bounds allow for a loaded one).
    d = daemon(config=config(exchange.url, loader={"numberOfAdvertisements": 1, "maximumRetainedAdvertisements": 1,
                                                   "lifetime": "40ms", "sweepInterval": "20ms",
                                                   "minimumRemainingLife": "10ms"}),
               env={"ADLOADERD_LOG_LEVEL": "warning"})
    start_fds = _fds(d.pid)
    for unit in range(16):
        d.cli("prefetch", "u%d" % unit, "--loader", "feed")
    assert wait_for(lambda: len(exchange.requests) >= 300, timeout=60)
    rss = _rss_kib(d.pid)
    assert wait_for(lambda: len(exchange.requests) >= 2300, timeout=120)
    assert len(exchange.notices_of("loss")) >= 1500
    # Connections are bounded by what can be in flight at once, not by the requests sent: at
    # most one BidRequest per pool (16; the source's own cap, 256, does not bind) and the
    # notice client's 8, plus a few that curl may be replacing. A leak would hold thousands.
    assert _fds(d.pid) <= start_fds + 16 + 8 + 4, (start_fds, _fds(d.pid))
    assert _rss_kib(d.pid) <= rss + 8192, (rss, _rss_kib(d.pid))


def test_gzip_answers_are_decoded(daemon, exchange):
    exchange.mode = "gzip"
    d = daemon(config=config(exchange.url))
    assert borrow(d)["lease"]["ad"]["headline"] == "Luxury Mars Cruises"
    assert "gzip" in exchange.requests[0][0]["accept-encoding"]


def tcf(purposes, vendors=()):
    """A TCF v2 core segment with `purposes` consented and `vendors` as a bit field."""
    bits = []

    def put(value, width):
        bits.extend((value >> shift) & 1 for shift in range(width - 1, -1, -1))

    put(2, 6); put(1, 36); put(1, 36); put(7, 12); put(1, 12); put(1, 6); put(4, 6); put(13, 6)
    put(50, 12); put(2, 6); put(0, 1); put(0, 1); put(0, 12)
    for p in range(1, 25):
        put(1 if p in purposes else 0, 1)
    put(0, 24); put(0, 1); put(0, 6); put(0, 6)
    top = max(vendors, default=0)
    put(top, 16); put(0, 1)
    for v in range(1, top + 1):
        put(1 if v in vendors else 0, 1)
    put(0, 16); put(0, 1); put(0, 12)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    bits += [0] * (-len(bits) % 6)
    return "".join(alphabet[int("".join(map(str, bits[i:i + 6])), 2)] for i in range(0, len(bits), 6))


def test_consent_classes_each_buy_with_their_terms_and_lend_only_to_their_borrowers(daemon, exchange):
    import grpc
    import grpc_stubs

    stubs = grpc_stubs.load()
    eu = tcf({1, 2}, {10})
    classes = {"default": {}, "eu": {"gdpr": True, "consentString": eu},
               "limited": {"limitAdTracking": True, "usPrivacy": "1YYN"},
               "coppa": {"coppa": True, "limitAdTracking": True, "usPrivacy": "1YYN"}}
    # A floor under the fixture's 0.01 USD bid: sent as imp.bidfloor, and the bid (above it) kept.
    d = daemon(config=config(exchange.url, loader={"consent": {"classes": classes}, "bidFloor": 0.005},
                             source={"supplyChainASI": "news.example", "supplyChainSID": "pub-7"}))
    channel = grpc.insecure_channel(d.endpoint)
    stub = stubs.grpc.NativeAdLoaderStub(channel)
    pb = stubs.pb
    signals = {
        "default": None,
        "eu": pb.PrivacySignals(gdpr=pb.GDPR_APPLIES, tcf_consent=tcf({1, 2, 3}, {10, 11})),
        "limited": pb.PrivacySignals(att_status=pb.ATT_STATUS_DENIED),
        "coppa": pb.PrivacySignals(coppa=True),
    }
    lent = {}
    for name, privacy in signals.items():
        request = pb.BorrowRequest(ad_unit_id="feed-native", loader="feed", wait_ms=10000)
        if privacy is not None:
            request.privacy.CopyFrom(privacy)
        answer = stub.Borrow(request, timeout=15)
        assert answer.outcome == pb.BORROW_OUTCOME_LEASED, name
        lent[name] = answer.lease.ad.id
    # Every class bought with exactly its terms, never an identifier (the stub checks the rest).
    by_class = {}
    for _, body in exchange.requests:
        regs, user = body["regs"], body.get("user", {})
        key = ("eu" if regs["gdpr"] == 1 else "coppa" if regs["coppa"] == 1
               else "limited" if body["device"]["lmt"] == 1 else "default")
        by_class.setdefault(key, []).append(body)
        assert body["source"]["schain"]["nodes"] == [{"asi": "news.example", "sid": "pub-7", "hp": 1}]
        assert all(imp["bidfloor"] == 0.005 and imp["exp"] > 0 for imp in body["imp"])
        if key == "eu":
            assert user["consent"] == eu
        else:
            assert "user" not in body
        if key in ("limited", "coppa"):
            assert regs["us_privacy"] == "1YYN"
    assert set(by_class) == set(classes)
    assert len(set(lent.values())) == 4
    pools = {(p["adUnitId"], p.get("consentClass")) for p in stats(d)}
    assert {("feed-native", name) for name in classes} <= pools
    # No purpose 2: no auction, a clear status naming the rule, nothing asked upstream.
    before = len(exchange.requests)
    refused = pb.BorrowRequest(ad_unit_id="feed-native", loader="feed",
                               privacy=pb.PrivacySignals(gdpr=pb.GDPR_APPLIES, tcf_consent=tcf({1})))
    with pytest.raises(grpc.RpcError) as error:
        stub.Borrow(refused, timeout=5)
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "consent.requiredPurposes" in error.value.details()
    garbage = pb.BorrowRequest(ad_unit_id="feed-native", loader="feed",
                               privacy=pb.PrivacySignals(gdpr=pb.GDPR_APPLIES, tcf_consent="C!!"))
    with pytest.raises(grpc.RpcError) as error:
        stub.Borrow(garbage, timeout=5)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "privacy.tcf_consent" in error.value.details()
    assert len(exchange.requests) == before
    channel.close()
