"""Issue 20 against the exchange stub, the real daemon with its defaults: short-lived bids are
lent, not dropped; a 503 with Retry-After holds back every path that sends requests."""

import json
import threading
import time

import grpc
import pytest

import grpc_stubs
from openrtb_stub import Exchange


def config(endpoint):
    # The defaults but for the source: no loader setting at all beyond its source.
    return {"sources": {"openrtb": {"type": "openrtb", "endpoint": endpoint, "test": True,
                                    "appBundle": "com.example.news"}},
            "loaders": {"feed": {"source": "openrtb"}}}


def pool_stats(d, unit="feed-native"):
    """The pool's Stats over gRPC (every proto field, new ones included)."""
    s = grpc_stubs.load()
    with grpc.insecure_channel(d.endpoint) as channel:
        answer = s.grpc.NativeAdLoaderStub(channel).Stats(s.pb.StatsRequest(), timeout=10)
    return next((p for p in answer.pools if p.ad_unit_id == unit), None)


@pytest.fixture
def exchange():
    ex = Exchange()
    yield ex
    ex.stop()


def test_bids_living_300s_are_lent_with_the_defaults(daemon, exchange):
    # A Prebid adapter TTL: every bid says "exp": 300, shorter than the default 1 h lifetime.
    # The default minimum remaining life follows it (a quarter: 75 s), so they are lent.
    exchange.exp = 300
    d = daemon(config=config(exchange.url))
    s = grpc_stubs.load()
    with grpc.insecure_channel(d.endpoint) as channel:
        stub = s.grpc.NativeAdLoaderStub(channel)
        for cell in range(40):
            answer = stub.Borrow(s.pb.BorrowRequest(ad_unit_id="feed-native", loader="feed", slot_key="c%d" % cell,
                                                    wait_ms=5000), timeout=10)
            assert answer.outcome == s.pb.BORROW_OUTCOME_LEASED, answer
            # The lease ends with its ad at the latest: at most 300 s after it was bought.
            assert answer.lease.expires_at_unix_ms - time.time() * 1000 <= 300_000
            assert answer.lease.ad.expires_at_unix_ms - time.time() * 1000 <= 300_000
    pool = pool_stats(d)
    assert pool.expired == 0 and pool.expired_on_arrival == 0, pool
    assert pool.minimum_remaining_life_ms == 75_000, pool
    assert pool.borrow_hits == 40 and pool.loaded >= 40, pool
    assert not exchange.notices_of("loss")
    assert "arrive with less than the minimum remaining life" not in d.log()


def test_an_explicit_minimum_above_the_bid_life_is_counted_and_logged_once(daemon, exchange):
    exchange.exp = 300
    cfg = config(exchange.url)
    cfg["loaders"]["feed"]["minimumRemainingLife"] = "301s"
    d = daemon(config=cfg)
    d.cli("prefetch", "feed-native", "--loader", "feed")
    deadline = time.monotonic() + 20
    pool = None
    while time.monotonic() < deadline:
        pool = pool_stats(d)
        if pool and pool.expired_on_arrival >= 5:
            break
        time.sleep(0.1)
    assert pool and pool.expired_on_arrival >= 5 and pool.expired >= 5, pool
    d.cli("prefetch", "feed-native", "--loader", "feed")
    time.sleep(0.5)
    log = d.log()
    assert log.count("arrive with less than the minimum remaining life") == 1, log
    assert "loaders.feed.minimumRemainingLife" in log


def test_503_with_retry_after_holds_back_every_path(daemon, exchange):
    # Every answer is 503 with Retry-After: 5; 20 borrows a second (each would top up) and a
    # prefetch now and then for 11 s: no request sooner than 5 s after a 503.
    exchange.mode = "503"
    d = daemon(config=config(exchange.url))
    stop = time.monotonic() + 11

    def cells(worker):
        n = 0
        while time.monotonic() < stop:
            d.cli("--json", "borrow", "feed-native", "--loader", "feed", "--slot", "w%d-%d" % (worker, n),
                  "--wait", "50", check=False)
            n += 1
            time.sleep(0.05)

    threads = [threading.Thread(target=cells, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    while time.monotonic() < stop:
        d.cli("prefetch", "feed-native", "--loader", "feed", check=False)
        time.sleep(1)
    for t in threads:
        t.join()
    with exchange.lock:
        times = list(exchange.times)
    assert times, "no request at all"
    # Requests sent together (the first top-up's batches) form one burst; bursts must be at
    # least 5 s apart (the 503's Retry-After), whatever sent them.
    bursts = [times[0]]
    for t in times[1:]:
        if t - bursts[-1] > 0.2:
            bursts.append(t)
    gaps = [b - a for a, b in zip(bursts, bursts[1:])]
    assert len(bursts) >= 2, times
    assert all(g >= 4.9 for g in gaps), gaps
    assert len(times) <= 3 * len(bursts) + 10, (len(times), bursts)


def test_requests_do_not_wait_behind_a_connection_being_opened(daemon, exchange):
    # An exchange answering in 0.9 s, four pools asking at once on a fresh daemon: each request
    # gets its own connection at once (no PIPEWAIT on plain HTTP), so none is cut by the 1.5 s
    # timeout, and only requests the exchange received are counted as sent.
    exchange.mode = "slow-headers"
    exchange.delay = 0.9
    d = daemon(config=config(exchange.url))
    s = grpc_stubs.load()
    with grpc.insecure_channel(d.endpoint) as channel:
        stub = s.grpc.NativeAdLoaderStub(channel)
        for unit in range(4):
            stub.Prefetch(s.pb.PrefetchRequest(ad_unit_id="u%d" % unit, loader="feed"), timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            answer = stub.Stats(s.pb.StatsRequest(), timeout=10)
            if sum(p.loaded for p in answer.pools) >= 20:
                break
            time.sleep(0.1)
    assert sum(p.upstream_failures for p in answer.pools) == 0, answer.pools
    assert sum(p.loaded for p in answer.pools) >= 20, answer.pools
    sent = sum(src.requests for src in answer.sources)
    assert sent == len(exchange.requests), (sent, len(exchange.requests))


def test_the_sources_in_flight_cap_binding_is_logged_naming_the_source(daemon, exchange):
    # A slow exchange and a source cap of 1: the prefetches of three ad units queue behind the
    # first BidRequest; the warning names this source's setting (once a minute at most).
    exchange.mode = "slow-headers"
    exchange.delay = 0.5
    cfg = config(exchange.url)
    cfg["sources"]["openrtb"]["maximumConcurrentRequests"] = 1
    d = daemon(config=cfg)
    for unit in ("u-1", "u-2", "u-3"):
        d.cli("prefetch", unit, "--loader", "feed")
    deadline = time.monotonic() + 10
    while "the source's in-flight cap binds" not in d.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = d.log()
    assert log.count("the source's in-flight cap binds") == 1, log
    assert '"setting":"sources.openrtb.maximumConcurrentRequests"' in log, log


def test_the_memory_budget_makes_room_for_a_pool_with_demand_from_idle_pools(daemon, exchange):
    # limits.maximumAds 20, fixed pools of 10: two pools fill the budget and go idle (1 s);
    # a third pool with demand gets its 10 from the idle pools' unleased ads, each dropped
    # with a loss notice to the exchange and counted memory_dropped (and removed).
    cfg = config(exchange.url)
    cfg["limits"] = {"maximumAds": 20}
    cfg["loaders"]["feed"].update({"sizing": "fixed", "maximumRetainedAdvertisements": 10, "idleTimeout": "1s"})
    d = daemon(config=cfg)

    def wait_for(unit, predicate):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pool = pool_stats(d, unit)
            if pool and predicate(pool):
                return pool
            time.sleep(0.1)
        raise AssertionError("%s: %s" % (unit, pool_stats(d, unit)))

    for unit in ("a", "x"):
        d.cli("prefetch", unit, "--loader", "feed")
        wait_for(unit, lambda p: p.available == 10)
    time.sleep(1.2)  # both idle
    d.cli("prefetch", "c", "--loader", "feed")
    wait_for("c", lambda p: p.available == 10 and p.memory_refused == 0)
    a, x = pool_stats(d, "a"), pool_stats(d, "x")
    assert a.memory_dropped + x.memory_dropped == 10, (a, x)
    assert a.available + x.available == 10
    assert a.removed == a.memory_dropped and x.removed == x.memory_dropped
    deadline = time.monotonic() + 10
    while len(exchange.notices_of("loss")) < 10 and time.monotonic() < deadline:
        time.sleep(0.1)
    losses = exchange.notices_of("loss")
    assert len(losses) == 10 and all("reason=1" in n for n in losses), losses  # 1: internal error
