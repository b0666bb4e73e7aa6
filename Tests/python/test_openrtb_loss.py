"""Loss notices and their reason codes end to end: the real daemon against the strict exchange
stub (openrtb_stub.Exchange), which records every notice GET. Each way a bid is lost sends its
``lurl`` once, with the OpenRTB 2.6 loss reason code in ``${AUCTION_LOSS}``: bids dropped while
the response is read (outbid 102, wrong medium 204, no markup 7, no price 9, bad native markup 3),
an ad lost to a dropped pool (1000, adloaderd's own code), expired (2) and invalidated (200)
are covered in test_openrtb.py and test_control.py."""

import json
import os
import urllib.parse

import pytest

from openrtb_stub import BAD_BID_KINDS, Exchange
from test_openrtb import borrow, config, pool, wait_for


@pytest.fixture
def exchange():
    ex = Exchange()
    yield ex
    invalid = list(ex.invalid)
    ex.stop()
    assert not invalid, invalid


def losses(exchange):
    """(bid id, [reason values]) of every loss notice the stub received."""
    found = []
    for path in exchange.notices_of("loss"):
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query, keep_blank_values=True)
        found.append((query["bid"][0], query["reason"]))
    return found


def test_bids_dropped_while_reading_the_response_send_their_loss_codes(daemon, exchange):
    exchange.mode = "bad-bids"
    d = daemon(config=config(exchange.url))
    # The only usable bid of each response (the first imp's higher one) is lent.
    answer = borrow(d)
    assert answer["outcome"] == "BORROW_OUTCOME_LEASED", answer
    expected = dict(BAD_BID_KINDS)
    kind_of = lambda bid: bid[len("bad-"):bid.rindex("-")]
    assert wait_for(lambda: {kind_of(b) for b, _ in losses(exchange)} >= set(expected)), losses(exchange)
    seen = {}
    for bid, reason in losses(exchange):
        assert bid.startswith("bad-"), "a kept bid got a loss notice: %s" % bid
        kind = kind_of(bid)
        assert reason == [str(expected[kind])], (bid, reason)
        seen.setdefault(kind, 0)
        seen[kind] += 1
    assert set(seen) == set(expected), seen
    # Each dropped bid is told once: as many notices as distinct bids.
    ids = [bid for bid, _ in losses(exchange)]
    assert len(ids) == len(set(ids)), "a loss notice fired twice"
    source = json.loads(d.cli("--json", "stats").stdout)["sources"][0]
    assert int(source["bidsDropped"]) >= len(ids)


def test_ads_lost_to_a_dropped_pool_send_code_1000(daemon, exchange):
    d = daemon(config=config(exchange.url))
    d.cli("prefetch", "feed-native", "--loader", "feed")
    assert wait_for(lambda: (pool(d) or {}).get("available") == 5), pool(d)
    assert losses(exchange) == []
    # Disabling the loader drops its pools: each unshown ad is lost with code 1000, once.
    d.cli("disable", "feed")
    assert wait_for(lambda: len(losses(exchange)) >= 5), losses(exchange)
    found = losses(exchange)
    assert len(found) == 5 and all(reason == ["1000"] for _, reason in found), found
    assert len({bid for bid, _ in found}) == 5
    # A reload that removes the loader does the same for the pool refilled after enabling it.
    d.cli("enable", "feed")
    d.cli("prefetch", "feed-native", "--loader", "feed")
    assert wait_for(lambda: (pool(d) or {}).get("available") == 5), pool(d)
    changed = config(exchange.url)
    changed["loaders"] = {"other": changed["loaders"]["feed"]}
    with open(os.path.join(d.tmp.name, "config.json"), "w") as f:
        json.dump(changed, f)
    d.cli("reload")
    assert wait_for(lambda: len(losses(exchange)) >= 10), losses(exchange)
    later = losses(exchange)[5:]
    assert len(later) == 5 and all(reason == ["1000"] for _, reason in later), later


@pytest.mark.parametrize("fault", ["slow-headers", "malformed", "503", "slow-body", "bad-bids"])
def test_every_stub_fault_leaves_the_daemon_serving_from_its_pool(daemon, exchange, fault):
    # A stocked pool (fixed sizing: the prefetch fills it), then the exchange misbehaves: every
    # borrow is still lent from the pool while the top-ups fail.
    exchange.delay = 3.0
    d = daemon(config=config(exchange.url, loader={"maximumRetainedAdvertisements": 10, "sizing": "fixed"},
                             source={"timeout": "1s"}))
    d.cli("prefetch", "feed-native", "--loader", "feed")
    assert wait_for(lambda: (pool(d) or {}).get("available", 0) >= 10)
    exchange.mode = fault
    served = 0
    for _ in range(7):  # more than a batch missing: top-ups go out and fail
        answer = borrow(d, wait=200)
        assert answer["outcome"] == "BORROW_OUTCOME_LEASED", (fault, answer)
        d.cli("return", answer["lease"]["leaseId"], "--shown")
        served += 1
    assert served == 7
    assert wait_for(lambda: len(exchange.requests) >= 2), "the top-up went out"
