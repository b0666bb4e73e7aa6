"""The notice outbox end to end: the real daemon against the exchange stub, with billing notices
fired while the exchange is down or answering errors, then across a restart. Every notice is
delivered exactly once (OpenRTB 2.6: retried on anything but 200/204)."""

import collections
import json
import signal
import time

from openrtb_stub import Exchange
from test_openrtb import config, counts, wait_for

# Tries every 300 ms, 40 in all: the test's outage (a few seconds) is inside the window.
FAST_RETRY = {"noticeRetryInterval": "300ms", "noticeAttempts": 40}


def borrow_slots(d, count):
    leases = []
    for index in range(count):
        out = d.cli("--json", "borrow", "feed-native", "--loader", "feed", "--slot", "s%d" % index,
                    "--wait", "10000").stdout
        answer = json.loads(out)
        assert answer["outcome"] == "BORROW_OUTCOME_LEASED", answer
        leases.append(answer["lease"]["leaseId"])
    return leases


def source(d):
    return counts(json.loads(d.cli("--json", "stats").stdout)["sources"][0])


def bills_once(exchange, count, timeout=20):
    """Waits for `count` delivered billing notices; then checks none came twice."""
    assert wait_for(lambda: len(exchange.delivered_of("bill")) >= count, timeout=timeout), exchange.notices
    time.sleep(1.0)  # a duplicate would come within a few retry intervals
    delivered = exchange.delivered_of("bill")
    duplicates = [p for p, n in collections.Counter(delivered).items() if n > 1]
    assert not duplicates, "billing notices delivered twice: %s" % duplicates
    return delivered


def test_notices_fired_while_the_exchange_is_down_are_delivered_once_when_it_is_back(daemon):
    exchange = Exchange()
    try:
        d = daemon(config=config(exchange.url, source=FAST_RETRY, loader={"maximumRetainedAdvertisements": 10}))
        leases = borrow_slots(d, 10)
        exchange.stop()
        for lease in leases:
            d.cli("return", lease, "--shown")
        # Every notice failed at least once (connection refused) and waits for its next try.
        assert wait_for(lambda: source(d)["noticesRetried"] >= 10)
        assert source(d)["noticesPending"] == 10 and source(d)["noticesSent"] == 0
        exchange.start()
        delivered = bills_once(exchange, 10)
        assert len(delivered) == 10, "10 of 10 billing notices delivered after the outage"
        assert wait_for(lambda: source(d)["noticesPending"] == 0)
        s = source(d)
        assert s["noticesSent"] == 10 and s["noticesFailed"] == 0
    finally:
        exchange.stop()


def test_a_notice_answered_with_an_error_status_is_tried_again(daemon):
    exchange = Exchange()
    try:
        d = daemon(config=config(exchange.url, source=FAST_RETRY))
        (lease,) = borrow_slots(d, 1)
        exchange.notice_faults = [500, 503, 404]
        d.cli("return", lease, "--shown")
        (bill,) = bills_once(exchange, 1)
        assert exchange.notices_of("bill") == [bill] * 4, "three error answers, then delivered"
        s = source(d)
        assert s["noticesRetried"] == 3 and s["noticesSent"] == 1
    finally:
        exchange.stop()


def test_notices_left_undelivered_at_a_stop_are_sent_once_after_the_restart(daemon, tmp_path):
    exchange = Exchange()
    store = str(tmp_path / "pools.sqlite")
    settings = config(exchange.url, source=FAST_RETRY, loader={"maximumRetainedAdvertisements": 10})
    settings["poolStore"] = {"sqlitePath": store}
    try:
        first = daemon(config=settings)
        leases = borrow_slots(first, 6)
        for lease in leases[:2]:
            first.cli("return", lease, "--shown")
        assert wait_for(lambda: len(exchange.delivered_of("bill")) == 2)
        exchange.stop()
        for lease in leases[2:]:
            first.cli("return", lease, "--shown")
        assert wait_for(lambda: source(first)["noticesRetried"] >= 4)
        first.signal(signal.SIGTERM)
        assert first.wait() == 0
        exchange.start()
        second = daemon(config=settings)
        delivered = bills_once(exchange, 6)
        assert len(delivered) == 6, "the 2 delivered before the stop and the 4 left in the store, each once"
        assert "notices restored from the pool store" in second.log()
        # Also restored: the loss notices of the ads the stop dropped unshown (fired while the
        # exchange was down), each delivered once too.
        assert wait_for(lambda: source(second)["noticesRestored"] >= 4
                        and source(second)["noticesSent"] == source(second)["noticesRestored"]), json.dumps(source(second))
        losses = exchange.delivered_of("loss")
        assert len(losses) == len(set(losses)) == source(second)["noticesRestored"] - 4
        # A third start sends nothing again.
        second.signal(signal.SIGTERM)
        assert second.wait() == 0
        third = daemon(config=settings)
        time.sleep(1.0)
        assert source(third)["noticesRestored"] == 0
        assert len(exchange.delivered_of("bill")) == 6
    finally:
        exchange.stop()


def test_a_billing_notice_sent_after_a_restart_keeps_the_device_headers_of_its_show(daemon, tmp_path):
    exchange = Exchange()
    store = str(tmp_path / "pools.sqlite")
    settings = config(exchange.url, source=FAST_RETRY, loader={"maximumRetainedAdvertisements": 5})
    settings["poolStore"] = {"sqlitePath": store}
    ip, agent = "2001:db8::42", "Mozilla/5.0 (Linux; Android 14; Pixel 8) Feed/3.1"
    try:
        first = daemon(config=settings)
        shown, plain = borrow_slots(first, 2)
        exchange.stop()
        first.cli("return", shown, "--shown", "--device-ip", ip, "--user-agent", agent)
        first.cli("return", plain, "--shown")
        # Both wait for their next try while the exchange is down: stored between tries.
        assert wait_for(lambda: source(first)["noticesRetried"] >= 2)
        first.signal(signal.SIGTERM)
        assert first.wait() == 0
        assert exchange.notices_of("bill") == []
        exchange.start()
        second = daemon(config=settings)
        delivered = bills_once(exchange, 2)
        assert len(delivered) == 2 and source(second)["noticesRestored"] >= 2
        headers = [h for path, h in exchange.notice_headers if path.startswith("/notice/bill")]
        with_device = [h for h in headers if h.get("x-forwarded-for") == ip]
        assert len(with_device) == 1, headers
        assert with_device[0]["x-device-ip"] == ip
        assert with_device[0]["user-agent"] == agent and with_device[0]["x-device-user-agent"] == agent
        # The other show named no device: its notice carries none (the sender's own agent).
        (other,) = [h for h in headers if h.get("x-forwarded-for") != ip]
        assert "x-forwarded-for" not in other and "x-device-user-agent" not in other, other
    finally:
        exchange.stop()


def test_an_unusable_pool_store_is_one_log_line_and_the_daemon_starts_empty(daemon, tmp_path):
    store = tmp_path / "pools.sqlite"
    store.write_bytes(b"this is not a SQLite database, just garbage " * 100)
    d = daemon(config={"poolStore": {"sqlitePath": str(store)}})
    log = d.log()
    lines = [line for line in log.splitlines() if "pool store unusable" in line]
    assert len(lines) == 1, log
    assert "moved aside" in lines[0]
    assert any(p.name.startswith("pools.sqlite.unusable-") for p in tmp_path.iterdir())
    # The new store works: the daemon serves.
    assert json.loads(d.cli("--json", "borrow", "feed-native", "--wait", "5000").stdout)["outcome"] == "BORROW_OUTCOME_LEASED"


def test_the_pool_store_can_be_turned_off(daemon):
    d = daemon(args=["--pool-store", "off"])
    assert "pool store open" not in d.log()
    assert json.loads(d.cli("--json", "borrow", "feed-native", "--wait", "5000").stdout)["outcome"] == "BORROW_OUTCOME_LEASED"


def test_a_pool_store_of_another_format_version_is_moved_aside(daemon, tmp_path):
    import sqlite3
    store = tmp_path / "pools.sqlite"
    db = sqlite3.connect(str(store))
    db.execute("CREATE TABLE notices (source TEXT, id INTEGER, url TEXT, attempts INTEGER)")
    db.execute("INSERT INTO notices VALUES ('openrtb', 1, 'http://127.0.0.1:9/notice/bill', 0)")
    db.execute("PRAGMA application_id=%d" % 0x41444C50)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    d = daemon(config={"poolStore": {"sqlitePath": str(store)}})
    lines = [line for line in d.log().splitlines() if "pool store unusable" in line]
    assert len(lines) == 1 and "version 99" in lines[0], d.log()
    fresh = sqlite3.connect(str(store))
    assert fresh.execute("PRAGMA user_version").fetchone()[0] == 3
    assert fresh.execute("SELECT count(*) FROM notices").fetchone()[0] == 0, "nothing of the old file restored"
    fresh.close()
