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
