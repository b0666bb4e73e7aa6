"""Pools across a restart, in the spirit of memcached's t/restart.t: fill the pools and lease ads,
stop the real daemon (SIGTERM), wait past some ads' expiry, start it again on the same pool store:
every unexpired ad and lease is back byte for byte, every expired one is gone, Returns of the old
leases answer as they would have, and no loss notice was sent for a suspended ad."""

import json
import signal
import subprocess
import time

from conftest import BINARY
from openrtb_stub import Exchange
from test_openrtb import config, counts, wait_for


def settings(store, extra=None):
    loader = {"sizing": "fixed", "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 10,
              "minimumRemainingLife": "500ms", "leaseTimeout": "10m", "sweepInterval": "200ms"}
    return {
        "poolStore": {"sqlitePath": store},
        "loaders": {
            "long": dict(loader, source="synthetic", lifetime="1h"),
            "short": dict(loader, source="synthetic", lifetime="4s"),
        },
        **(extra or {}),
    }


def borrow(d, loader, slot):
    out = d.cli("--json", "borrow", "feed-native", "--loader", loader, "--slot", slot, "--wait", "10000").stdout
    return json.loads(out)


def pool(d, loader):
    pools = [counts(p) for p in json.loads(d.cli("--json", "stats").stdout)["pools"] if p["loader"] == loader]
    return pools[0] if pools else None


def test_restart_keeps_unexpired_ads_and_leases_byte_for_byte(daemon, tmp_path):
    store = str(tmp_path / "pools.sqlite")
    first = daemon(config=settings(store))
    leases = {}
    for loader in ("long", "short"):
        for index in range(4):
            answer = borrow(first, loader, "cell-%d" % index)
            assert answer["outcome"] == "BORROW_OUTCOME_LEASED", answer
            leases[(loader, index)] = answer["lease"]
        assert wait_for(lambda: pool(first, loader)["available"] == 6), pool(first, loader)
    shown = leases[("long", 3)]
    before = pool(first, "long")
    # A first start restored nothing, and says so.
    fresh = json.loads(first.cli("--json", "stats").stdout)["poolStore"]
    assert fresh["restoredFrom"] == "" and fresh["restoredAds"] == "0", fresh
    assert int(fresh["journalCommits"]) > 0 and int(fresh["journalBytes"]) > 0, fresh
    first.signal(signal.SIGTERM)
    assert first.wait() == 0
    log = first.log()
    assert "pools suspended into the pool store" in log
    assert '"ads":20' in log and '"leases":8' in log, log
    # Down past the short loader's 4 s life.
    time.sleep(4.5)
    second = daemon(config=settings(store))
    assert "pools restored from the pool store" in second.log()
    after = pool(second, "long")
    assert after["restoredAds"] == 10 and after["restoredLeases"] == 4
    assert after["leased"] == 4 and after["available"] >= before["available"]
    # Watch says what came back too: a Watch opened after the start begins with one RESTORED
    # event per restored pool (the restore ran before any call, so it is not missed).
    events = [json.loads(line) for line in second.cli(
        "--json", "watch", "--kind", "restored", "--count", "2", timeout=10).stdout.splitlines()]
    assert [(e["kind"], e["loader"], e["reason"]) for e in events] == \
        [("EVENT_KIND_RESTORED", "long", "suspension"), ("EVENT_KIND_RESTORED", "short", "suspension")], events
    assert [(e["count"], e["leases"], e["expired"]) for e in events] == [(10, 4, 0), (0, 0, 10)], events
    # The leases come back: the same slot gets the same lease and the same ad, byte for byte.
    for index in range(3):
        again = borrow(second, "long", "cell-%d" % index)
        assert again["outcome"] == "BORROW_OUTCOME_REUSED", again
        old = leases[("long", index)]
        assert again["lease"]["leaseId"] == old["leaseId"]
        assert again["lease"]["ad"] == old["ad"], "the ad differs after the restart"
    # A Return of a lease lent before the restart answers as it would have.
    returned = json.loads(second.cli("--json", "return", shown["leaseId"], "--shown").stdout)
    assert returned["outcome"] == "RETURN_OUTCOME_CONSUMED", returned
    # The short loader's ads and leases expired while the daemon was down: gone.
    short = pool(second, "short")
    assert short is None or (short["restoredAds"] == 0 and short["leased"] == 0)
    gone = second.cli("--json", "return", leases[("short", 0)]["leaseId"], check=False)
    assert gone.returncode != 0 and "NOT_FOUND" in (gone.stdout + gone.stderr)
    assert '"expired":10' in second.log(), second.log()
    # Every ad the store held is accounted for in Stats: 10 back (4 under their leases), 10 expired.
    store_stats = json.loads(second.cli("--json", "stats").stdout)["poolStore"]
    assert store_stats["restoredFrom"] == "suspension", store_stats
    assert (store_stats["restoredAds"], store_stats["restoredLeases"]) == ("10", "4"), store_stats
    assert (store_stats["expiredWhileDown"], store_stats["droppedAds"], store_stats["uncertainAds"]) \
        == ("10", "0", "0"), store_stats
    assert int(store_stats["downMs"]) >= 4500, store_stats
    text = second.cli("stats").stdout
    assert "pool store: restored from suspension, ads 10, leases 4, expired while down 10" in text, text


def test_a_suspended_openrtb_ad_sends_no_loss_notice_and_bills_once_after_the_restart(daemon, tmp_path):
    exchange = Exchange()
    store = str(tmp_path / "pools.sqlite")
    cfg = config(exchange.url, loader={"maximumRetainedAdvertisements": 5, "sizing": "fixed"})
    cfg["poolStore"] = {"sqlitePath": store}
    try:
        first = daemon(config=cfg)
        out = first.cli("--json", "borrow", "feed-native", "--loader", "feed", "--slot", "s", "--wait", "10000").stdout
        lease = json.loads(out)["lease"]
        assert wait_for(lambda: pool(first, "feed")["available"] == 4)
        first.signal(signal.SIGTERM)
        assert first.wait() == 0
        assert exchange.notices_of("loss") == [], "a suspended ad is not lost: no loss notice"
        second = daemon(config=cfg)
        requests = len(exchange.requests)
        returned = json.loads(second.cli("--json", "return", lease["leaseId"], "--shown").stdout)
        assert returned["outcome"] == "RETURN_OUTCOME_CONSUMED", returned
        bills = wait_for(lambda: exchange.delivered_of("bill"))
        assert len(bills) == 1 and lease["ad"]["id"] is not None
        time.sleep(0.5)
        assert len(exchange.delivered_of("bill")) == 1
        # The restored stock serves: no burst of requests to buy it again.
        p = pool(second, "feed")
        assert p["restoredAds"] == 5 and p["available"] >= 4 - 0
        assert len(exchange.requests) - requests <= 1
    finally:
        exchange.stop()


def test_a_second_daemon_on_the_same_store_refuses_to_start_naming_the_file_and_the_holder(daemon, tmp_path):
    store = str(tmp_path / "pools.sqlite")
    first = daemon(config=settings(store))
    assert borrow(first, "long", "cell-0")["outcome"] == "BORROW_OUTCOME_LEASED"
    path = tmp_path / "second.json"
    path.write_text(json.dumps(settings(store)))
    second = subprocess.run([BINARY, "--config", str(path), "--port", "0"], capture_output=True, text=True,
                            timeout=30, cwd=str(tmp_path))
    assert second.returncode != 0
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert store in lines[0] and ("pid %d" % first.pid) in lines[0], lines[0]
    assert "listening" not in second.stdout
    # The first one is unharmed: its lease is still there, and a clean stop suspends it.
    assert pool(first, "long")["leased"] == 1
    first.signal(signal.SIGTERM)
    assert first.wait() == 0
    # Its lock went with it (even kill -9 drops a flock): a new daemon starts on the store.
    third = daemon(config=settings(store))
    assert pool(third, "long")["restoredLeases"] == 1


def test_kill_9_after_a_compaction_while_serving_restores_every_lease_and_ad(daemon, tmp_path):
    """The journal compacted while calls came and went (its size set to the minimum, 64 KiB; a
    pool this small is copied by the loop and written as it is, BENCHMARKS.md 9.5), then more
    calls, then kill -9: the next start rebuilds the pool from the compacted journal, every
    lease held comes back under its id with its ad, and nothing in the journal is unknown, cut
    or unreadable."""
    import grpc
    import grpc_stubs

    store = str(tmp_path / "pools.sqlite")
    cfg = settings(store)
    cfg["poolStore"]["journalCompactionSize"] = "64KiB"
    first = daemon(config=cfg)
    held = {}
    for index in range(3):
        lease = borrow(first, "long", "held-%d" % index)["lease"]
        held["held-%d" % index] = (lease["leaseId"], lease["ad"]["id"])
    stubs = grpc_stubs.load()
    channel = grpc.insecure_channel(first.endpoint)
    stub = stubs.grpc.NativeAdLoaderStub(channel)

    def churn(calls):
        for index in range(calls):
            answer = stub.Borrow(stubs.pb.BorrowRequest(ad_unit_id="feed-native", loader="long",
                                                        slot_key="churn-%d" % index, wait_ms=2000), timeout=10)
            assert answer.lease.lease_id, answer
            stub.Return(stubs.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=False), timeout=10)

    # ~90 journal bytes a Borrow and Return: 64 KiB (and more than the checkpoint) in < 1,000.
    churn(1000)
    assert wait_for(lambda: '"from":"snapshot"' in first.log(), timeout=20), first.log()[-3000:]
    compacted = [json.loads(line) for line in first.log().splitlines() if "pool journal compacted" in line]
    assert compacted and all(c["tailBytes"] >= 0 and c["bytes"] > 0 for c in compacted), compacted
    # After the compaction: more calls, and one more lease held, all in the compacted journal's tail.
    churn(50)
    lease = borrow(first, "long", "held-after")["lease"]
    held["held-after"] = (lease["leaseId"], lease["ad"]["id"])
    channel.close()
    first.proc.kill()
    first.proc.wait(timeout=10)

    second = daemon(config=cfg)
    recovered = [json.loads(line) for line in second.log().splitlines()
                 if "pools recovered from the pool journal" in line]
    assert len(recovered) == 1, second.log()[-3000:]
    line = recovered[0]
    assert line["cutBytes"] == 0 and line["unknownRecords"] == 0 and line["uncertainAds"] == 0, line
    assert line["journalAds"] == 10 and line["journalLeases"] == 4, line
    for slot, (lease_id, ad) in held.items():
        back = borrow(second, "long", slot)
        assert back["outcome"] == "BORROW_OUTCOME_REUSED", (slot, back)
        assert back["lease"]["leaseId"] == lease_id and back["lease"]["ad"]["id"] == ad
    assert pool(second, "long")["available"] == 6, pool(second, "long")
