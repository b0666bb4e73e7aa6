"""The feed plan end to end: the real daemon, a feed backend scrolling a feed down and back
through Plan over gRPC (grpcio), the CLI's `adloader plan`, and the feed counters in Stats
and /metrics; bad windows and placement overrides get INVALID_ARGUMENT naming the field."""

import json
import re

import grpc
import pytest
from google.protobuf import json_format

import adminhttp
import grpc_stubs

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms", "seed": 3}},
    "loaders": {
        "default": {
            "placement": {"fixed": [{"section": 0, "position": 1}], "repeating": {"interval": 4}},
            "separation": {"advertiserDomain": 6, "category": None, "creativeOncePerFeed": True},
        }
    },
}


@pytest.fixture
def served(daemon):
    stubs = grpc_stubs.load()
    d = daemon(config=CONFIG, admin=True)
    channel = grpc.insecure_channel(d.endpoint)
    yield d, stubs, stubs.grpc.NativeAdLoaderStub(channel)
    channel.close()


def plan(s, stub, feed, first, last, ahead=3, unit="feed-home"):
    return stub.Plan(s.pb.PlanRequest(feed_id=feed, ad_unit_id=unit, first_visible=first, last_visible=last, ahead=ahead),
                     timeout=10)


def ads(answer, s):
    return {p.position: p.lease for p in answer.positions if p.state == s.pb.PLANNED_STATE_AD}


def test_a_feed_backend_scrolls_down_and_back(served):
    d, s, stub = served
    stub.Prefetch(s.pb.PrefetchRequest(ad_unit_id="feed-home", count=20), timeout=10)
    # Wait (bounded) for the prefetch's answers: a Borrow parks until an ad arrives.
    waited = stub.Borrow(s.pb.BorrowRequest(ad_unit_id="feed-home", wait_ms=5000), timeout=10)
    assert waited.outcome == s.pb.BORROW_OUTCOME_LEASED
    stub.Return(s.pb.ReturnRequest(lease_id=waited.lease.lease_id, shown=False), timeout=10)
    first = plan(s, stub, "user-1/home", 0, 7)
    assert first.created
    assert [p.position for p in first.positions] == [1, 5, 9]
    shown = ads(first, s)
    assert shown, "the first screen got ads"
    assert all(lease.slot_key == f"user-1/home#{pos}" for pos, lease in shown.items())
    down = plan(s, stub, "user-1/home", 8, 15)
    assert [p.position for p in down.positions] == [9, 13, 17]
    if 9 in shown:
        assert ads(down, s)[9].lease_id == shown[9].lease_id, "the look-ahead's ad is the one shown"
    back = plan(s, stub, "user-1/home", 0, 7)
    assert not back.created
    again = ads(back, s)
    for pos, lease in shown.items():
        assert again[pos].lease_id == lease.lease_id and again[pos].ad.id == lease.ad.id, "scrolling back: the same ads"
    for p in back.positions:
        if p.position not in shown:
            assert p.state == s.pb.PLANNED_STATE_EMPTY, "a position rendered without an ad stays empty"
    # Separation: no advertiser twice within 6 positions (positions 1, 5 are 4 apart).
    everything = {**ads(down, s), **again}
    ordered = sorted(everything.items())
    for (p, a), (q, b) in zip(ordered, ordered[1:]):
        if q - p < 6:
            assert a.ad.advertiser != b.ad.advertiser, (p, q, a.ad.advertiser)
    # The feed backend bills what it showed: Return shown ends the lease; the plan still answers the ad.
    pos, lease = next(iter(shown.items()))
    stub.Return(s.pb.ReturnRequest(lease_id=lease.lease_id, shown=True), timeout=10)
    assert ads(plan(s, stub, "user-1/home", 0, 7), s)[pos].ad.id == lease.ad.id
    feeds = stub.Stats(s.pb.StatsRequest(), timeout=10).feeds
    assert feeds.feeds_held == 1
    assert feeds.positions_planned == 5 and feeds.positions_filled >= len(shown)
    _, _, metrics = adminhttp.get(d.admin, "/metrics")
    assert re.search(r"^adloader_feeds_held 1$", metrics, re.M), metrics[-2000:]
    assert re.search(r"^adloader_feed_positions_planned_total 5$", metrics, re.M)
    assert "adloader_feed_separation_holds_total" in metrics


def test_the_cli_plans_a_window(served):
    d, s, stub = served
    out = d.cli("plan", "cli-feed", "--visible", "0-7", "--ahead", "3").stdout
    assert "feed cli-feed, positions 0-7 + 3 ahead: 3 ad positions (new feed)" in out, out
    assert re.search(r"^  1: ", out, re.M) and re.search(r"^  9 \(ahead\): ", out, re.M), out
    again = d.cli("plan", "cli-feed", "--visible", "0-7", "--ahead", "3", "--json").stdout
    assert json.loads(again)["created"] is False, again
    bad = d.cli("plan", "cli-feed", "--visible", "7-0", check=False)
    assert bad.returncode == 2 and "LAST (0) is before FIRST (7)" in bad.stderr
    # `adloader stats` shows the feed counters: a line in text, the FeedStats message in --json.
    stats = d.cli("stats").stdout
    assert re.search(r"^feeds held 1, positions planned 3, filled \d+, rendered empty \d+, coming answers \d+, "
                     r"separation holds \d+, feeds expired 0, refused 0, guarantees lost 0$", stats, re.M), stats
    text = d.cli("stats", "--json").stdout
    printed = json_format.MessageToDict(json_format.Parse(text, s.pb.StatsResponse()),
                                        always_print_fields_with_no_presence=True)
    assert json.loads(text) == printed, "the proto3 JSON mapping of StatsResponse"
    feeds = json.loads(text)["feeds"]
    assert feeds["feedsHeld"] == "1" and feeds["positionsPlanned"] == "3", feeds
    assert set(feeds) == {"feedsHeld", "positionsPlanned", "positionsFilled", "comingAnswers", "positionsEmpty",
                          "separationHolds", "feedsExpired", "feedsRefused", "guaranteesLost"}, feeds


@pytest.mark.parametrize("request_fields, field", [
    (dict(feed_id="", first_visible=0, last_visible=3), "feed_id"),
    (dict(feed_id="f", first_visible=4, last_visible=3), "last_visible"),
    (dict(feed_id="f", first_visible=0, last_visible=3, ahead=10_000), "visible"),
    (dict(feed_id="f", first_visible=0, last_visible=3, ahead=2, placement=dict(repeating_interval=1)),
     "placement.repeatingInterval"),
    (dict(feed_id="f", first_visible=0, last_visible=3, placement=dict(repeating_interval=3, maximum_ads=9999)),
     "placement.maximumAdsPerFeed"),
])
def test_bad_windows_are_refused_naming_the_field(served, request_fields, field):
    d, s, stub = served
    fields = dict(request_fields)
    if "placement" in fields:
        fields["placement"] = s.pb.PlacementRules(**fields["placement"])
    with pytest.raises(grpc.RpcError) as raised:
        stub.Plan(s.pb.PlanRequest(ad_unit_id="feed-home", **fields), timeout=10)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in raised.value.details(), raised.value.details()


def test_plan_lends_from_the_consent_class_of_its_privacy_signals(served):
    # PlanRequest.privacy (field 8) as on Borrow (PROTOCOL.md 7.10): a COPPA feed is lent from
    # the coppa class's pool, never the default one; its class is taken at its first call.
    d, s, stub = served
    stub.Prefetch(s.pb.PrefetchRequest(ad_unit_id="feed-kids", count=10), timeout=10)  # the default class only
    waited = stub.Borrow(s.pb.BorrowRequest(ad_unit_id="feed-kids", wait_ms=5000), timeout=10)
    stub.Return(s.pb.ReturnRequest(lease_id=waited.lease.lease_id, shown=False), timeout=10)
    coppa = s.pb.PrivacySignals(coppa=True)
    first = stub.Plan(s.pb.PlanRequest(feed_id="kid-1", ad_unit_id="feed-kids", first_visible=0, last_visible=3,
                                       ahead=3, privacy=coppa), timeout=10)
    assert [(p.position, p.state) for p in first.positions] == [(1, s.pb.PLANNED_STATE_EMPTY),
                                                                (5, s.pb.PLANNED_STATE_COMING)], first
    # The call asked for coppa ads: wait (bounded) for one with a parked coppa Borrow, give it back.
    waited = stub.Borrow(s.pb.BorrowRequest(ad_unit_id="feed-kids", wait_ms=5000, privacy=coppa), timeout=10)
    assert waited.outcome == s.pb.BORROW_OUTCOME_LEASED, waited
    stub.Return(s.pb.ReturnRequest(lease_id=waited.lease.lease_id, shown=False), timeout=10)
    second = stub.Plan(s.pb.PlanRequest(feed_id="kid-1", ad_unit_id="feed-kids", first_visible=4, last_visible=7,
                                        privacy=coppa), timeout=10)
    assert second.positions[0].state == s.pb.PLANNED_STATE_AD, second
    leased = {p.consent_class: p.leased for p in stub.Stats(s.pb.StatsRequest(ad_unit_id="feed-kids"), timeout=10).pools}
    assert leased["coppa"] == 1 and leased[""] == 0, leased  # Stats names the default class ""
    # Other signals for the same feed: INVALID_ARGUMENT naming privacy and the feed's class.
    for other in (None, s.pb.PrivacySignals(limit_ad_tracking=True)):
        with pytest.raises(grpc.RpcError) as raised:
            stub.Plan(s.pb.PlanRequest(feed_id="kid-1", ad_unit_id="feed-kids", first_visible=4, last_visible=7,
                                       privacy=other), timeout=10)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "privacy" in raised.value.details() and "coppa" in raised.value.details(), raised.value.details()
