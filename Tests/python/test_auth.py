"""Token auth on both transports: `authorization: Bearer <token>` metadata, UNAUTHENTICATED
without a valid one; open on loopback unless required; non-loopback refused without tokens."""

import subprocess

import grpc
import pytest

import grpc_stubs
from conftest import BINARY

TOKENS = {"auth": {"tokens": ["s3cret-one", "s3cret-two"], "requireOnLoopback": True}}


def borrow(stub, s, metadata=()):
    return stub.Borrow(s.pb.BorrowRequest(ad_unit_id="demo", wait_ms=2000), timeout=10, metadata=metadata)


def test_grpc_calls_need_a_valid_token(daemon):
    s = grpc_stubs.load()
    d = daemon(config=TOKENS)
    with grpc.insecure_channel(d.endpoint) as channel:
        stub = s.grpc.NativeAdLoaderStub(channel)
        for metadata in [(), (("authorization", "Bearer wrong"),), (("authorization", "s3cret-one"),),
                         (("authorization", "Bearer s3cret-on"),), (("authorization", "Bearer s3cret-one2"),)]:
            with pytest.raises(grpc.RpcError) as error:
                borrow(stub, s, metadata)
            assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED, metadata
        assert borrow(stub, s, (("authorization", "Bearer s3cret-one"),)).lease.lease_id > 0
        assert borrow(stub, s, (("authorization", "bearer s3cret-two"),)).lease.lease_id > 0


def test_framed_cli_needs_a_valid_token(daemon):
    d = daemon(config=TOKENS)
    refused = d.cli("borrow", "demo", "--wait", "2000", check=False)
    assert refused.returncode != 0 and "UNAUTHENTICATED" in (refused.stdout + refused.stderr).upper()
    wrong = d.cli("--token", "nope", "borrow", "demo", "--wait", "2000", check=False)
    assert wrong.returncode != 0 and "invalid token" in (wrong.stdout + wrong.stderr)
    assert "lease" in d.cli("--token", "s3cret-two", "borrow", "demo", "--wait", "2000").stdout.lower()


def test_tokens_are_not_needed_on_loopback_by_default(daemon):
    s = grpc_stubs.load()
    d = daemon(config={"auth": {"tokens": ["s3cret"]}})
    with grpc.insecure_channel(d.endpoint) as channel:
        assert borrow(s.grpc.NativeAdLoaderStub(channel), s).lease.lease_id > 0
    assert "lease" in d.cli("borrow", "demo", "--wait", "2000").stdout.lower()


def test_a_non_loopback_address_without_tokens_is_refused():
    run = subprocess.run([BINARY, "--host", "0.0.0.0", "--port", "0"], capture_output=True, text=True, timeout=20)
    assert run.returncode == 2
    assert "--insecure" in run.stderr and "auth.tokens" in run.stderr


def test_health_answers_without_a_token_and_everything_else_keeps_auth(daemon):
    """An orchestrator's probe (Kubernetes gRPC and HTTP probes) sends no token: the gRPC health
    service and the admin /healthz /readyz answer without one; reflection and the service do not."""
    import urllib.request

    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    s = grpc_stubs.load()
    d = daemon(config=TOKENS, admin=True)
    with grpc.insecure_channel(d.endpoint) as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=s.health.HealthCheckRequest.SerializeToString,
            response_deserializer=s.health.HealthCheckResponse.FromString)
        serving = s.health.HealthCheckResponse.SERVING
        assert check(s.health.HealthCheckRequest(service=""), timeout=10).status == serving
        assert check(s.health.HealthCheckRequest(service="adloader.v1.NativeAdLoader"), timeout=10).status == serving
        watch = channel.unary_stream(
            "/grpc.health.v1.Health/Watch",
            request_serializer=s.health.HealthCheckRequest.SerializeToString,
            response_deserializer=s.health.HealthCheckResponse.FromString)
        updates = watch(s.health.HealthCheckRequest(service=""), timeout=10)
        assert next(updates).status == serving
        updates.cancel()
        with pytest.raises(grpc.RpcError) as error:
            borrow(s.grpc.NativeAdLoaderStub(channel), s)
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as error:
            ProtoReflectionDescriptorDatabase(channel).get_services()
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    for path in ("/healthz", "/readyz"):
        with urllib.request.urlopen(d.admin + path, timeout=10) as response:
            assert response.status == 200, path
