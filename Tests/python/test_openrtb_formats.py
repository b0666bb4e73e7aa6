"""Full-screen and video demand end to end: the real daemon with a native, an interstitial, a
rewarded and an app-open loader on one openrtb source, against the strict exchange stub
(openrtb_stub.Exchange), which refuses any impression a strict OpenRTB 2.6 exchange would
(banner/video objects, instl, rwdd). Every format's loader lends the stub's bids, the markup
reaches the client byte for byte, and a shown Return bills once."""

import json
import urllib.parse

import pytest

from openrtb_stub import BANNER_HTML, VAST_XML, Exchange
from test_openrtb import counts, wait_for

FORMATS = ["native", "interstitial", "rewarded", "appOpen"]


def config(endpoint, source=None):
    source_settings = {"type": "openrtb", "endpoint": endpoint, "timeout": "800ms", "tmax": "500ms",
                       "appBundle": "com.example.game", "test": True}
    source_settings.update(source or {})
    loaders = {}
    for fmt in FORMATS:
        loaders[fmt] = {"source": "openrtb", "format": fmt, "numberOfAdvertisements": 2,
                        "maximumRetainedAdvertisements": 2, "retry": {"delay": "200ms", "probeInterval": "300ms"}}
    return {"sources": {"openrtb": source_settings}, "loaders": loaders}


def borrow(d, loader, unit=None):
    out = d.cli("--json", "borrow", unit or ("unit-" + loader), "--loader", loader, "--wait", "10000").stdout
    return json.loads(out)


@pytest.fixture
def exchange():
    ex = Exchange()
    yield ex
    invalid = list(ex.invalid)
    ex.stop()
    assert not invalid, invalid


def imps_for(exchange, unit):
    return [imp for _, body in exchange.requests for imp in body["imp"] if imp["tagid"] == unit]


def test_every_formats_loader_lends_the_exchanges_bids(daemon, exchange):
    d = daemon(config=config(exchange.url))
    ads = {fmt: borrow(d, fmt) for fmt in FORMATS}
    for fmt, answer in ads.items():
        assert answer["outcome"] == "BORROW_OUTCOME_LEASED", (fmt, answer)
    # Native: the fixture's assets. Interstitial (banner and video asked, the stub answers the
    # banner): HTML untouched. Rewarded: the VAST document untouched. App-open: a banner.
    assert ads["native"]["lease"]["ad"]["headline"] == "Luxury Mars Cruises"
    interstitial = ads["interstitial"]["lease"]["ad"]
    assert interstitial["format"] == "AD_FORMAT_INTERSTITIAL"
    assert interstitial["fullScreen"]["markup"] == BANNER_HTML
    assert interstitial["fullScreen"]["width"] == 320 and interstitial["fullScreen"]["height"] == 480
    assert interstitial["fullScreen"]["orientation"] == "ORIENTATION_PORTRAIT"
    rewarded = ads["rewarded"]["lease"]["ad"]
    assert rewarded["format"] == "AD_FORMAT_REWARDED"
    assert rewarded["fullScreen"]["vastXml"] == VAST_XML
    assert ads["appOpen"]["lease"]["ad"]["fullScreen"]["markup"] == BANNER_HTML
    # What the exchange was asked for, per format.
    for imp in imps_for(exchange, "unit-native"):
        assert "native" in imp and "instl" not in imp and "rwdd" not in imp
    for imp in imps_for(exchange, "unit-interstitial"):
        assert imp["instl"] == 1 and "banner" in imp and "video" in imp and "rwdd" not in imp
    for imp in imps_for(exchange, "unit-rewarded"):
        assert imp["instl"] == 1 and imp["rwdd"] == 1 and "video" in imp and "banner" not in imp
        assert imp["video"]["mimes"] == ["video/mp4"] and imp["video"]["skip"] == 0
    for imp in imps_for(exchange, "unit-appOpen"):
        assert imp["instl"] == 1 and "banner" in imp and "video" not in imp
    # No bid was dropped: every one fit its loader's format.
    source = counts(json.loads(d.cli("--json", "stats").stdout)["sources"][0])
    assert source["bidsDropped"] == 0, source


def test_a_video_interstitial_and_bids_without_mtype_are_read_from_the_markup(daemon, exchange):
    exchange.prefer = ["video", "banner", "native"]
    exchange.send_mtype = False
    d = daemon(config=config(exchange.url))
    ad = borrow(d, "interstitial")["lease"]["ad"]
    assert ad["fullScreen"]["vastXml"] == VAST_XML
    assert "video" in exchange.bid_kinds


def test_an_interstitial_of_native_assets(daemon, exchange):
    d = daemon(config=config(exchange.url, source={"interstitialMedia": ["native"]}))
    ad = borrow(d, "interstitial")["lease"]["ad"]
    assert ad["format"] == "AD_FORMAT_INTERSTITIAL"
    assert ad["headline"] == "Luxury Mars Cruises" and "fullScreen" not in ad
    for imp in imps_for(exchange, "unit-interstitial"):
        assert imp["instl"] == 1 and "native" in imp and "banner" not in imp


def test_a_shown_full_screen_return_bills_once_and_an_unshown_one_does_not(daemon, exchange):
    d = daemon(config=config(exchange.url))
    shown = borrow(d, "rewarded")["lease"]
    unshown = borrow(d, "interstitial")["lease"]
    d.cli("return", unshown["leaseId"])
    d.cli("return", shown["leaseId"], "--shown")
    bills = wait_for(lambda: exchange.delivered_of("bill"))
    assert len(bills) == 1, bills
    query = urllib.parse.parse_qs(urllib.parse.urlparse(bills[0]).query)
    assert query["price"] == ["6"], query
    # The unshown interstitial went back to the pool and is never billed, lent again or not.
    again = borrow(d, "interstitial")["lease"]
    d.cli("return", again["leaseId"])
    assert len(exchange.notices_of("bill")) == 1


def test_the_billing_notice_forwards_the_device_the_shown_return_names(daemon, exchange):
    d = daemon(config=config(exchange.url))
    lease = borrow(d, "interstitial")["lease"]
    agent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36"
    d.cli("return", lease["leaseId"], "--shown", "--device-ip", "203.0.113.7", "--user-agent", agent)
    bills = wait_for(lambda: [h for p, h in exchange.notice_headers if p.startswith("/notice/bill")])
    assert len(bills) == 1
    headers = bills[0]
    assert headers["x-forwarded-for"] == "203.0.113.7" and headers["x-device-ip"] == "203.0.113.7"
    assert headers["user-agent"] == agent and headers["x-device-user-agent"] == agent
    # A header-injection attempt is refused with a clear status, and nothing is billed for it.
    other = borrow(d, "interstitial")["lease"]
    bad = d.cli("return", other["leaseId"], "--shown", "--device-ip", "203.0.113.7\r\nX-Evil: 1", check=False)
    assert bad.returncode != 0 and "device_ip" in bad.stderr, bad.stderr
    assert len([p for p, _ in exchange.notice_headers if p.startswith("/notice/bill")]) == 1


def test_bid_no_fill_and_notice_delivery_metrics_move(daemon, exchange):
    from test_admin_metrics import by_name, parse_text, scrape, value

    exchange.notice_faults = [503]  # the first notice is answered 503: tried again 10 s later
    d = daemon(config=config(exchange.url, source={"noticeRetryInterval": "200ms"}), admin=True)
    lease = borrow(d, "rewarded")["lease"]
    d.cli("return", lease["leaseId"], "--shown")
    wait_for(lambda: exchange.delivered_of("bill"))
    exchange.faults = ["204"] * 5
    for n in range(5):
        d.cli("prefetch", "unit-empty-%d" % n, "--loader", "native")

    def families():
        return by_name(parse_text(scrape(d)[1]))

    assert wait_for(lambda: (value(families(), "adloader_source_no_fills", "_total", source="openrtb") or 0) >= 5)
    after = families()
    assert value(after, "adloader_source_bids", "_total", source="openrtb", outcome="kept") >= 2
    assert value(after, "adloader_source_bids", "_total", source="openrtb", outcome="dropped") == 0
    dropped = after["adloader_source_bids_dropped"].samples
    assert {s.labels["reason"]: s.value for s in dropped if s.labels["source"] == "openrtb"} == {
        "invalid_bid": 0, "missing_markup": 0, "missing_price": 0, "below_floor": 0, "outbid": 0, "wrong_format": 0}
    assert value(after, "adloader_source_notice_deliveries", "_total", source="openrtb", result="delivered") >= 1
    assert value(after, "adloader_source_notice_deliveries", "_total", source="openrtb", result="retried") >= 1
    assert value(after, "adloader_source_notice_deliveries", "_total", source="openrtb", result="failed") == 0
    assert value(after, "adloader_source_notices_pending", source="openrtb") is not None


def test_a_rewarded_ad_carries_the_sources_configured_reward(daemon, exchange):
    d = daemon(config=config(exchange.url, source={"rewardType": "coins", "rewardAmount": 25}))
    rewarded = borrow(d, "rewarded")["lease"]["ad"]
    assert rewarded["fullScreen"]["vastXml"] == VAST_XML
    assert rewarded["fullScreen"]["reward"] == {"type": "coins", "amount": "25"}, rewarded["fullScreen"]
    # Only rewarded ads carry it.
    assert "reward" not in borrow(d, "interstitial")["lease"]["ad"]["fullScreen"]


def test_a_reward_without_its_amount_is_refused_at_start_naming_the_key(exchange, tmp_path):
    import subprocess
    from conftest import BINARY
    path = tmp_path / "reward.json"
    path.write_text(json.dumps(config(exchange.url, source={"rewardType": "coins"})))
    run = subprocess.run([BINARY, "--config", str(path), "--port", "0"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2, run
    assert "sources.openrtb.rewardAmount" in run.stderr and "go together" in run.stderr, run.stderr
