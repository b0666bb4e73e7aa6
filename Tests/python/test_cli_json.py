"""`adloader --json`: every command's answer is the proto3 JSON mapping of its response message
(Proto/adloader/v1/adloader.proto), checked with protobuf's own parser (strict: an unknown field
or enum name fails) and printer (every field, as `always_print_fields_with_no_presence` writes
them). Commands without a response message refuse --json with a usage error."""

import json
import subprocess

import pytest
from google.protobuf import json_format

from adloader import pb
from conftest import CLI

CONFIG = {
    "sources": {"synthetic": {"latency": "2ms"}},
    "capStore": {"type": "memory"},
    "loaders": {
        "default": {},
        "rewarded": {"format": "rewarded", "numberOfAdvertisements": 2, "maximumRetainedAdvertisements": 2},
        "appopen": {"format": "appOpen", "numberOfAdvertisements": 2, "maximumRetainedAdvertisements": 2},
    },
}


def mapped(text, message_type):
    """The CLI's JSON parsed strictly into message_type, and checked to be exactly what
    protobuf prints for that message."""
    document = json.loads(text)
    message = json_format.Parse(text, message_type())
    printed = json_format.MessageToDict(message, always_print_fields_with_no_presence=True)
    assert document == printed, (document, printed)
    return document, message


def cli(d, *args, check=True):
    return d.cli("--json", *args, check=check)


def test_every_call_answers_in_the_proto_json_mapping(daemon):
    d = daemon(config=CONFIG)
    doc, _ = mapped(cli(d, "prefetch", "feed-native").stdout, pb.PrefetchResponse)
    assert doc["requested"] >= 1 and isinstance(doc["inFlight"], int)

    doc, borrowed = mapped(cli(d, "borrow", "feed-native", "--slot", "feed-42/position-7", "--wait", "2000").stdout,
                           pb.BorrowResponse)
    assert doc["outcome"] == "BORROW_OUTCOME_LEASED"
    lease = doc["lease"]
    # 64-bit integers are strings; times are int64 Unix milliseconds as the proto says.
    assert isinstance(lease["leaseId"], str) and int(lease["leaseId"]) == borrowed.lease.lease_id
    assert isinstance(lease["expiresAtUnixMs"], str) and int(lease["expiresAtUnixMs"]) > 1_700_000_000_000
    assert lease["slotKey"] == "feed-42/position-7"
    assert lease["ad"]["format"] == "AD_FORMAT_UNSPECIFIED" and lease["ad"]["headline"]
    assert int(lease["ad"]["loadedAtUnixMs"]) <= int(lease["ad"]["expiresAtUnixMs"])

    doc, again = mapped(cli(d, "borrow", "feed-native", "--slot", "feed-42/position-7").stdout, pb.BorrowResponse)
    assert doc["outcome"] == "BORROW_OUTCOME_REUSED" and again.lease.lease_id == borrowed.lease.lease_id
    # The renewed lease ends no sooner than the first answer said.
    assert again.lease.expires_at_unix_ms >= borrowed.lease.expires_at_unix_ms

    doc, _ = mapped(cli(d, "return", lease["leaseId"], "--shown").stdout, pb.ReturnResponse)
    assert doc == {"outcome": "RETURN_OUTCOME_CONSUMED"}

    doc, stats = mapped(cli(d, "stats").stdout, pb.StatsResponse)
    [pool] = [p for p in doc["pools"] if p["adUnitId"] == "feed-native"]
    assert pool["consumed"] == "1" and pool["borrowHits"] == "2" and pool["leased"] == 0
    assert doc["instance"] == d.endpoint and {l["name"] for l in doc["loaders"]} == {"default", "rewarded", "appopen"}

    doc, _ = mapped(cli(d, "disable", "rewarded").stdout, pb.SetLoaderEnabledResponse)
    assert doc == {"changed": True}
    doc, _ = mapped(cli(d, "enable", "rewarded").stdout, pb.SetLoaderEnabledResponse)
    assert doc == {"changed": True}

    doc, _ = mapped(cli(d, "borrow", "unit", "--loader", "rewarded", "--wait", "2000").stdout, pb.BorrowResponse)
    ad = doc["lease"]["ad"]
    assert ad["format"] == "AD_FORMAT_REWARDED" and ad["headline"] == ""
    assert ad["fullScreen"]["orientation"].startswith("ORIENTATION_")
    assert isinstance(ad["fullScreen"]["reward"]["amount"], str) and int(ad["fullScreen"]["reward"]["amount"]) > 0

    doc, _ = mapped(cli(d, "app-open", "splash", "--loader", "appopen", "--device", "d-1", "--session", "s-1",
                        "--utc-offset", "+05:30").stdout, pb.AppOpenResponse)
    assert doc["outcome"].startswith("APP_OPEN_OUTCOME_") and doc["reason"].startswith("APP_OPEN_REASON_")
    assert isinstance(doc["sessionCount"], int) and len(doc["day"]) == 10



def test_watch_prints_one_mapped_event_per_line(daemon):
    d = daemon(config=CONFIG)
    watch = subprocess.Popen([CLI, "--endpoint", d.endpoint, "--json", "watch", "--count", "2", "--kind", "leased,returned"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Events reach the watch once its call is registered: borrow and return until it has two.
        for _ in range(100):
            out = json.loads(cli(d, "borrow", "feed-native", "--wait", "2000").stdout)
            cli(d, "return", out["lease"]["leaseId"])
            try:
                watch.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                continue
        out_text, err = watch.communicate(timeout=10)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.communicate()
    assert watch.returncode == 0, err
    events = [mapped(line, pb.Event)[0] for line in out_text.splitlines()]
    assert len(events) == 2 and {e["kind"] for e in events} <= {"EVENT_KIND_LEASED", "EVENT_KIND_RETURNED"}, events
    for e in events:
        assert isinstance(e["atUnixMs"], str) and isinstance(e["leaseId"], str) and int(e["leaseId"]) > 0
        assert e["loader"] == "default" and e["adUnitId"] == "feed-native"


def test_reload_answers_the_reload_response(daemon, tmp_path):
    path = tmp_path / "adloaderd.json"
    path.write_text(json.dumps(CONFIG))
    d = daemon(args=["--config", str(path)])
    config = dict(CONFIG, loaders=dict(CONFIG["loaders"], video={"format": "interstitial"}))
    path.write_text(json.dumps(config))
    doc, _ = mapped(cli(d, "reload").stdout, pb.ReloadResponse)
    assert doc["added"] == ["video"] and doc["removed"] == [] and set(doc["unchanged"]) >= {"default"}


def test_a_status_prints_the_google_rpc_status_mapping(daemon):
    d = daemon(config=CONFIG)
    result = cli(d, "return", "12345", check=False)
    assert result.returncode == 1
    assert json.loads(result.stdout) == {"code": 5, "message": json.loads(result.stdout)["message"]}
    assert "never lent" in json.loads(result.stdout)["message"]
    assert "NOT_FOUND" in result.stderr  # and the readable line on stderr, as without --json


def test_commands_without_a_response_message_refuse_json(daemon):
    d = daemon(config=CONFIG)
    top = cli(d, "top", "--once", check=False)
    assert top.returncode == 2 and "top does not take --json" in top.stderr and top.stdout == ""
    run = cli(d, "examples", "run", "--all", check=False)
    assert run.returncode == 2 and "examples run does not take --json" in run.stderr
