"""The non-Swift clients against the real daemon: the Python package (clients/python, installed
into the venv by the Makefile as `pip install ./clients/python` would) and the Go example
(clients/go/borrow-return, built with Debian's Go and gRPC packages by `make go-example`)."""

import json
import os
import subprocess
import sys

import grpc
import pytest

import adloader
from adloader import Client, ConsistentHashRing, NoAdYet, Retry, pb
from adminhttp import get
from conftest import ROOT

GO_EXAMPLE = os.path.join(ROOT, ".build", "go", "bin", "borrow-return")
VECTORS = os.path.join(ROOT, "Tests", "AdLoaderClientTests", "fixtures", "ring-vectors.json")
FAST = {"sources": {"synthetic": {"latency": "2ms"}}}


def test_the_package_is_installed_not_read_from_the_checkout():
    here = os.path.dirname(adloader.__file__)
    assert "site-packages" in here, here
    assert os.path.exists(os.path.join(here, "py.typed"))
    assert os.path.exists(os.path.join(here, "v1", "adloader_pb2.pyi"))


def test_the_committed_stubs_are_what_the_protos_generate():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "clients", "python", "generate.py"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ring_gives_the_swift_rings_servers_for_the_shared_vectors():
    # The same file is checked by ConsistentHashRingTests (Swift): both rings give these owners.
    with open(VECTORS, encoding="utf-8") as f:
        table = json.load(f)
    checked = 0
    for entry in table["rings"]:
        ring = ConsistentHashRing(entry["servers"], entry["weights"])
        assert len(ring) == entry["points"]
        for vector in entry["vectors"]:
            assert ring.server(vector["key"]) == vector["server"], (entry["servers"], vector["key"][:20])
            assert ring.candidates(vector["key"]) == vector["candidates"], (entry["servers"], vector["key"][:20])
            checked += 1
    assert checked >= 300
    # What nginx 1.22.1 routed for feed-1..feed-20 over three replicas (as in the Swift test).
    ring = ConsistentHashRing(["127.0.0.1:17421", "127.0.0.1:17422", "127.0.0.1:17423"])
    nginx = [2, 1, 3, 1, 3, 1, 3, 2, 3, 1, 3, 1, 1, 3, 1, 1, 1, 2, 1, 1]
    assert [ring.server(f"feed-{i + 1}") + 1 for i in range(20)] == nginx
    assert ring.server("") is None and ring.candidates("") == [0, 1, 2]


def test_borrow_as_a_context_manager_returns_the_lease(daemon):
    d = daemon(config=FAST)
    with Client(d.endpoint) as client:
        with client.borrow("feed-native", slot="feed-42/position-7", wait_ms=2000) as first:
            assert first.lease_id > 0 and not first.reused
            assert first.ad.headline and first.ad.ad_unit_id == "feed-native"
            # The cell scrolled back inside the block: the same lease, renewed.
            again = client.borrow_lease("feed-native", slot="feed-42/position-7")
            assert again is not None and again.reused and again.lease_id == first.lease_id
            assert again.expires_at_unix_ms >= first.expires_at_unix_ms
        assert first.return_outcome == "RETURN_OUTCOME_BACK_IN_POOL"  # not marked shown

        with client.borrow("feed-native", wait_ms=2000) as shown:
            shown.shown = True
        assert shown.return_outcome == "RETURN_OUTCOME_CONSUMED"

        # A block that raises returns the lease unshown, and the error goes on.
        with pytest.raises(RuntimeError):
            with client.borrow("feed-native", wait_ms=2000) as failed:
                failed.shown = True
                raise RuntimeError("the cell failed to render")
        assert failed.return_outcome == "RETURN_OUTCOME_BACK_IN_POOL"

        stats = client.stats(ad_unit_id="feed-native")
        assert [(p.consumed, p.leased) for p in stats.pools] == [(1, 0)]
        assert client.last_instance == stats.instance != ""
        # A lease id the daemon never lent: the outcome says so through the status.
        with pytest.raises(grpc.RpcError) as never:
            client.return_lease(123456789)
        assert never.value.code() == grpc.StatusCode.NOT_FOUND


def test_an_empty_pool_raises_no_ad_yet(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "5s"}}})
    with Client(d.endpoint) as client:
        with pytest.raises(NoAdYet):
            with client.borrow("feed-native", wait_ms=0):
                pytest.fail("no lease was lent")


def test_unavailable_is_retried_with_backoff_and_then_raised(daemon):
    d = daemon(config=FAST, admin=True)
    pauses = []
    with Client(d.endpoint, retry=Retry(attempts=3, sleep=pauses.append)) as client:
        assert client.set_loader_enabled("default", False)  # its borrows end UNAVAILABLE
        with pytest.raises(grpc.RpcError) as refused:
            client.borrow_lease("feed-native")
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert len(pauses) == 2 and all(0.005 < p < 0.15 for p in pauses), pauses
        metrics = get(d.admin, "/metrics")[2]
        assert 'adloader_calls_total{method="Borrow",code="UNAVAILABLE"} 3' in metrics

        # A retry that finds the loader enabled again succeeds (the pause re-enables it).
        def pause(seconds):
            pauses.append(seconds)
            Client(d.endpoint).set_loader_enabled("default", True)

        with Client(d.endpoint, retry=Retry(attempts=3, sleep=pause)) as retrying:
            lease = retrying.borrow_lease("feed-native", wait_ms=2000)
            assert lease is not None
            assert retrying.return_lease(lease) == "RETURN_OUTCOME_BACK_IN_POOL"
        assert len(pauses) == 3

    # Other codes are not retried.
    with Client(d.endpoint, retry=Retry(attempts=3, sleep=pauses.append)) as client:
        with pytest.raises(grpc.RpcError) as bad:
            client.borrow_lease("")
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(pauses) == 3


def test_several_replicas_each_key_goes_to_its_ring_owner(daemon):
    replicas = [daemon(config=FAST) for _ in range(3)]
    endpoints = [r.endpoint for r in replicas]
    ring = ConsistentHashRing(endpoints)
    with Client(endpoints) as client:
        for key in ("feed-1", "feed-2", "feed-3", "feed-4", "feed-5", "feed-6"):
            lease = client.borrow_lease("feed-native", affinity=key, wait_ms=2000)
            assert lease is not None and lease.endpoint == endpoints[ring.server(key)]
            # The instance answering is the owner (default instance name: its host:port).
            assert client.last_instance == endpoints[ring.server(key)]
            assert client.return_lease(lease) == "RETURN_OUTCOME_BACK_IN_POOL"


def test_the_go_example_borrows_and_returns(daemon):
    assert os.access(GO_EXAMPLE, os.X_OK), "build it with `make go-example` (make pytest does)"
    d = daemon(config=FAST)
    result = subprocess.run([GO_EXAMPLE, "-endpoint", d.endpoint, "-slot", "feed-42/position-7", "-shown"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["borrowOutcome"] == "BORROW_OUTCOME_LEASED"
    assert int(answer["leaseId"]) > 0 and answer["headline"]
    assert answer["returnOutcome"] == "RETURN_OUTCOME_CONSUMED"
    assert answer["instance"] == d.endpoint
    with Client(d.endpoint) as client:
        [pool] = client.stats(ad_unit_id="feed-native").pools
        assert pool.consumed == 1 and pool.leased == 0 and pool.borrow_hits == 1


def test_the_go_example_says_why_it_fails(daemon):
    d = daemon(config=FAST)
    result = subprocess.run([GO_EXAMPLE, "-endpoint", d.endpoint, "-ad-unit", ""],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "Borrow:" in result.stderr and "InvalidArgument" in result.stderr, result.stderr


JAVA_CLASSPATH = os.path.join(ROOT, ".build", "java", "classpath")


def java(*args):
    assert os.path.exists(JAVA_CLASSPATH), "build it with `make java-example` (make pytest does)"
    with open(JAVA_CLASSPATH) as f:
        classpath = f.read().strip()
    return subprocess.run(["java", "-cp", classpath, "BorrowReturn", *args], capture_output=True, text=True,
                          timeout=60)


def test_the_java_example_borrows_and_returns(daemon):
    d = daemon(config=FAST)
    result = java(d.endpoint, "feed-native", "--shown")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["borrow"]["outcome"] == "BORROW_OUTCOME_LEASED"
    assert int(answer["borrow"]["lease"]["leaseId"]) > 0 and answer["borrow"]["lease"]["ad"]["headline"]
    assert answer["return"] == {"outcome": "RETURN_OUTCOME_CONSUMED"}
    with Client(d.endpoint) as client:
        [pool] = client.stats(ad_unit_id="feed-native").pools
        assert pool.consumed == 1 and pool.leased == 0


def test_the_java_example_says_why_it_fails(daemon):
    d = daemon(config=FAST)
    result = java(d.endpoint, "")
    assert result.returncode == 1
    assert "INVALID_ARGUMENT" in result.stderr, result.stderr
