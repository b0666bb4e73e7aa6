"""TLS on the TCP listener (issue 28): certificates made at test time with the `openssl`
command; grpcio secure channels and Python's ssl module as the clients; both transports over
TLS (the conformance suite through a byte-transparent TLS proxy); client certificates; reload of
the certificate and of the tokens without dropping a connection; garbage handshakes."""

import json
import os
import select
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time

import grpc
import pytest

import grpc_stubs
from adminhttp import get, wait_until
from conftest import BINARY

SERVICE = "adloader.v1.NativeAdLoader"


# -- certificates ---------------------------------------------------------------------------

def openssl(*args, cwd):
    run = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run


class PKI:
    """A CA and the certificates it signs, in one temporary directory (EC P-256, fast)."""

    def __init__(self, directory, name):
        self.dir = directory
        self.name = name
        self.ca = self.path(f"{name}-ca.pem")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.path(f"{name}-ca.key"), "-out", self.ca, "-days", "2",
                "-subj", f"/CN={name} test CA", cwd=directory)

    def path(self, file):
        return os.path.join(self.dir, file)

    def issue(self, stem, subject, san=None, days="2", client=False):
        """Signs a certificate; returns (certificate path, key path)."""
        key, csr, cert = self.path(stem + ".key"), self.path(stem + ".csr"), self.path(stem + ".pem")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", csr, "-subj", subject, cwd=self.dir)
        ext = self.path(stem + ".ext")
        with open(ext, "w") as f:
            if san:
                f.write(f"subjectAltName={san}\n")
            f.write(f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}\n")
        openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", self.path(f"{self.name}-ca.key"),
                "-CAcreateserial", "-out", cert, "-days", days, "-extfile", ext, cwd=self.dir)
        return cert, key


@pytest.fixture(scope="module")
def pki():
    with tempfile.TemporaryDirectory(prefix="adloaderd-tls-") as directory:
        good, other = PKI(directory, "good"), PKI(directory, "other")
        certs = {
            "server": good.issue("server", "/CN=adloaderd", san="IP:127.0.0.1,DNS:localhost"),
            "server2": good.issue("server2", "/CN=adloaderd-rotated", san="IP:127.0.0.1,DNS:localhost"),
            "expired": good.issue("expired", "/CN=adloaderd-expired", san="IP:127.0.0.1", days="-1"),
            "wrong-ca": other.issue("wrong-ca", "/CN=adloaderd-other", san="IP:127.0.0.1"),
            "wrong-host": good.issue("wrong-host", "/CN=elsewhere", san="DNS:elsewhere.example"),
            "client": good.issue("client", "/CN=feed-renderer/O=Feeds", client=True),
            "client-other": other.issue("client-other", "/CN=intruder", client=True),
        }
        yield type("Certs", (), {"dir": directory, "ca": good.ca, "other_ca": other.ca, **{
            k.replace("-", "_"): v for k, v in certs.items()}})


def read(path):
    with open(path, "rb") as f:
        return f.read()


def tls_args(cert, client_ca=None, client_auth=None, extra=()):
    args = ["--tls-cert", cert[0], "--tls-key", cert[1], *extra]
    if client_ca:
        args += ["--tls-client-ca", client_ca, "--tls-client-auth", client_auth]
    return args


def client_context(ca, cert=None, alpn=("h2",), check_hostname=True):
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = check_hostname
    if cert:
        context.load_cert_chain(cert[0], cert[1])
    if alpn:
        context.set_alpn_protocols(list(alpn))
    return context


def tls_connect(d, context, server_hostname="127.0.0.1"):
    raw = socket.create_connection((d.host, d.port), timeout=10)
    try:
        return context.wrap_socket(raw, server_hostname=server_hostname)
    except Exception:
        raw.close()
        raise


def secure_channel(d, ca, cert=None):
    credentials = grpc.ssl_channel_credentials(
        root_certificates=read(ca), private_key=read(cert[1]) if cert else None,
        certificate_chain=read(cert[0]) if cert else None)
    return grpc.secure_channel(f"127.0.0.1:{d.port}", credentials)


def borrow(channel, metadata=(), timeout=10):
    s = grpc_stubs.load()
    return s.grpc.NativeAdLoaderStub(channel).Borrow(
        s.pb.BorrowRequest(ad_unit_id="demo", wait_ms=2000), timeout=timeout, metadata=metadata)


# -- a framed-protocol client (PROTOCOL.md 2-4) over any socket -----------------------------

_frame_pb2 = None


def frame_pb2():
    global _frame_pb2
    if _frame_pb2 is None:
        import importlib
        import sys
        from grpc_tools import protoc
        out = tempfile.mkdtemp(prefix="adloader-frame-")
        proto = os.path.join(grpc_stubs.PROTO)
        assert protoc.main(["protoc", f"-I{proto}", f"--python_out={out}",
                            os.path.join(proto, "adloader/v1/frame.proto")]) == 0
        sys.path.insert(0, out)
        _frame_pb2 = importlib.import_module("adloader.v1.frame_pb2")
    return _frame_pb2


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {count} bytes")
        data += chunk
    return data


def framed_call(sock, method, message, call_id=1, token=None):
    """One unary call; returns (status, response bytes)."""
    f = frame_pb2()
    request = f.RequestFrame(call_id=call_id, method=f"/{SERVICE}/{method}", message=message.SerializeToString())
    if token:
        request.metadata.add(key="authorization", value=f"Bearer {token}")
    body = request.SerializeToString()
    sock.sendall(b"\x00" + struct.pack(">I", len(body)) + body)
    while True:
        flags, length = struct.unpack(">BI", recv_exact(sock, 5))
        response = f.ResponseFrame.FromString(recv_exact(sock, length))
        if response.call_id == call_id and (response.end or response.message):
            if response.end and not response.message:
                return response.status, None
            if response.message:
                payload = response.message
                if not response.end:
                    # A unary answer ends with a status frame after the message.
                    flags, length = struct.unpack(">BI", recv_exact(sock, 5))
                    end = f.ResponseFrame.FromString(recv_exact(sock, length))
                    return end.status, payload
                return response.status, payload


def framed_open(sock):
    sock.sendall(b"ADLOADER/1\r\n")
    assert recv_exact(sock, 12) == b"ADLOADER/1\r\n"


# -- both transports over TLS ---------------------------------------------------------------

def test_grpc_over_tls_negotiates_h2_and_tls13(daemon, pki):
    d = daemon(args=tls_args(pki.server), admin=True)
    with secure_channel(d, pki.ca) as channel:
        assert borrow(channel).lease.lease_id > 0
    with tls_connect(d, client_context(pki.ca)) as sock:
        assert sock.selected_alpn_protocol() == "h2"
        assert sock.version() == "TLSv1.3"
    # TLS 1.2 is still accepted (the floor), with ALPN too.
    context = client_context(pki.ca)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    with tls_connect(d, context) as sock:
        assert sock.version() == "TLSv1.2" and sock.selected_alpn_protocol() == "h2"
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_tls_handshakes_total{result="completed"} 3' in metrics, metrics
    assert 'adloader_tls_handshakes_by_version_total{version="TLSv1.2"} 1' in metrics
    # Cleartext on the TLS port is not served: a framed preface gets no framed answer.
    with socket.create_connection((d.host, d.port), timeout=5) as plain:
        plain.sendall(b"ADLOADER/1\r\n")
        answer = plain.recv(100)
        assert not answer.startswith(b"ADLOADER/1"), answer


def test_a_tls_1_1_client_is_refused_with_a_protocol_version_alert(daemon, pki):
    d = daemon(args=tls_args(pki.server))
    context = client_context(pki.ca)
    context.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
    context.maximum_version = ssl.TLSVersion.TLSv1_1
    try:
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
    except ssl.SSLError:
        pass
    with pytest.raises(ssl.SSLError) as error:
        tls_connect(d, context)
    assert "PROTOCOL_VERSION" in str(error.value).upper() or "NO_PROTOCOLS" in str(error.value).upper(), error.value


def test_framed_protocol_over_tls(daemon, pki):
    s = grpc_stubs.load()
    d = daemon(args=tls_args(pki.server))
    # A framed client offers ALPN adloader/1 (or nothing): the sniffer routes on the plaintext.
    for alpn in [("adloader/1",), None]:
        with tls_connect(d, client_context(pki.ca, alpn=alpn)) as sock:
            assert sock.selected_alpn_protocol() == (alpn[0] if alpn else None)
            framed_open(sock)
            status, payload = framed_call(sock, "Borrow", s.pb.BorrowRequest(ad_unit_id="demo", wait_ms=2000))
            assert status == 0
            assert s.pb.BorrowResponse.FromString(payload).lease.lease_id > 0


class TLSProxy:
    """Cleartext on a local port, TLS to the daemon, bytes copied both ways: lets the
    cleartext-only conformance suite (`adloader conformance`) run against a TLS listener."""

    def __init__(self, target_port, context):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target_port = target_port
        self.context = context
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            # Each connection's TLS handshake in its own thread: the suite opens connections at
            # once, and a loaded machine must not serialise their handshakes behind one another.
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    def serve(self, client):
        try:
            upstream = self.context.wrap_socket(
                socket.create_connection(("127.0.0.1", self.target_port), timeout=30), server_hostname="127.0.0.1")
        except OSError:
            client.close()
            return
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        upstream.settimeout(None)
        # One thread per connection for both directions: an OpenSSL session must not be read
        # and written from two threads at once.
        try:
            while True:
                ready = [upstream] if upstream.pending() else select.select([client, upstream], [], [])[0]
                for source in ready:
                    if source is upstream:
                        # Readable is not application data: TLS 1.3 session tickets come after
                        # the handshake, and a blocking read of them waited for the daemon's
                        # answer to a preface this thread had not forwarded yet (a 5 s stall of
                        # the suite's check, now and then).
                        upstream.setblocking(False)
                        try:
                            data = upstream.recv(65536)
                        except ssl.SSLWantReadError:
                            continue
                        finally:
                            upstream.setblocking(True)
                    else:
                        data = source.recv(65536)
                    if not data:
                        raise EOFError
                    (upstream if source is client else client).sendall(data)
        except (OSError, EOFError, ValueError):
            pass
        for sock in (client, upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self):
        self.closed = True
        self.listener.close()


@pytest.mark.parametrize("transport", ["framed", "grpc"])
def test_conformance_over_tls(daemon, pki, transport):
    """The conformance suite's checks over TLS, both transports: every byte of every check goes
    through the daemon's TLS layer (the suite speaks cleartext to a local TLS proxy)."""
    config = {
        "loaders": {"default": {}, "parking": {"source": "slow"}, "appopen": {"format": "appOpen"}},
        "sources": {"synthetic": {}, "slow": {"type": "synthetic", "latency": "60s"}},
        "capStore": {"type": "memory"},
    }
    d = daemon(config=config, args=tls_args(pki.server))
    proxy = TLSProxy(d.port, client_context(pki.ca, alpn=("h2",) if transport == "grpc" else None))
    try:
        run = subprocess.run(
            [os.path.join(os.path.dirname(BINARY), "adloader"), "--endpoint", f"127.0.0.1:{proxy.port}",
             "conformance", "--transport", transport, "--parking-loader", "parking"],
            capture_output=True, text=True, timeout=180)
    finally:
        proxy.close()
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    problems = [line for line in d.log().splitlines() if '"level":"warning"' in line or '"level":"error"' in line
                or "TLS" in line or "read failed" in line]
    assert " 0 failed" in summary, (summary, failed, run.stderr[-2000:], problems[-15:])
    for check in ["borrow-return.round-trip", "watch.round-trip", "appopen.round-trip", "serverinfo.round-trip"]:
        assert any(line.startswith("PASS  " + check + " ") for line in run.stdout.splitlines()), (check, run.stdout)


# -- what a TLS client expects from bad certificates ----------------------------------------

@pytest.mark.parametrize("cert, hostname, expected", [
    ("expired", "127.0.0.1", "certificate has expired"),
    ("wrong_ca", "127.0.0.1", "unable to get local issuer certificate"),
    ("wrong_host", "127.0.0.1", "IP address mismatch"),
])
def test_bad_server_certificates_fail_the_clients_verification(daemon, pki, cert, hostname, expected):
    d = daemon(args=tls_args(getattr(pki, cert)))
    with pytest.raises(ssl.SSLCertVerificationError) as error:
        tls_connect(d, client_context(pki.ca), server_hostname=hostname)
    assert expected in error.value.verify_message, error.value.verify_message
    with secure_channel(d, pki.ca) as channel:
        with pytest.raises(grpc.RpcError) as rpc:
            borrow(channel, timeout=5)
        assert rpc.value.code() == grpc.StatusCode.UNAVAILABLE, rpc.value
    # The daemon is unharmed: a client that does not verify still gets served.
    with tls_connect(d, _unverified()) as sock:
        framed_open(sock)
    assert "TLS handshake failed" in d.log()


def _unverified():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def test_client_certificates_required(daemon, pki):
    d = daemon(args=tls_args(pki.server, client_ca=pki.ca, client_auth="required"), admin=True)
    # No certificate: TLS 1.3 ends the handshake on the client's side first; the server's
    # "certificate required" alert arrives with the first read.
    with pytest.raises(ssl.SSLError) as error:
        with tls_connect(d, client_context(pki.ca, alpn=None)) as sock:
            framed_open(sock)
    assert "CERTIFICATE_REQUIRED" in str(error.value).upper(), error.value
    # A certificate another CA signed: "unknown ca".
    with pytest.raises(ssl.SSLError) as error:
        with tls_connect(d, client_context(pki.ca, cert=pki.client_other, alpn=None)) as sock:
            framed_open(sock)
    assert "UNKNOWN_CA" in str(error.value).upper(), error.value
    with secure_channel(d, pki.ca) as channel:
        with pytest.raises(grpc.RpcError) as rpc:
            borrow(channel, timeout=5)
        assert rpc.value.code() == grpc.StatusCode.UNAVAILABLE
    # The CA's client certificate: served on both transports; the subject names the caller.
    with secure_channel(d, pki.ca, cert=pki.client) as channel:
        assert borrow(channel).lease.lease_id > 0
    with tls_connect(d, client_context(pki.ca, cert=pki.client, alpn=None)) as sock:
        framed_open(sock)
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_tls_handshakes_by_caller_total{caller="O=Feeds,CN=feed-renderer"} 2' in metrics, metrics
    assert 'adloader_tls_handshakes_total{result="failed"}' in metrics
    assert "(O=Feeds,CN=feed-renderer)" in d.log()


def test_client_certificates_optional(daemon, pki):
    d = daemon(args=tls_args(pki.server, client_ca=pki.ca, client_auth="optional"))
    with secure_channel(d, pki.ca) as channel:
        assert borrow(channel).lease.lease_id > 0
    with secure_channel(d, pki.ca, cert=pki.client) as channel:
        assert borrow(channel).lease.lease_id > 0


def test_required_client_certificates_allow_a_non_loopback_bind_without_tokens(pki):
    """Validation: a non-loopback host needs tokens, required client certificates or --insecure."""
    refused = subprocess.run([BINARY, "--host", "0.0.0.0", "--port", "0", *tls_args(pki.server)],
                             capture_output=True, text=True, timeout=20)
    assert refused.returncode == 2 and "tls.clientAuth" in refused.stderr, refused.stderr
    proc = subprocess.Popen([BINARY, "--host", "0.0.0.0", "--port", "0",
                             *tls_args(pki.server, client_ca=pki.ca, client_auth="required")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("adloaderd listening on 0.0.0.0:")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)


# -- garbage, truncated and slow handshakes --------------------------------------------------

def test_garbage_and_truncated_client_hellos_are_closed_and_the_daemon_is_unharmed(daemon, pki):
    d = daemon(args=tls_args(pki.server, extra=["--tls-handshake-timeout", "500ms"]), admin=True)
    # A real ClientHello's first bytes, to truncate.
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    hello_object = client_context(pki.ca).wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        hello_object.do_handshake()
    hello = outgoing.read()
    assert hello[:1] == b"\x16"
    cases = [
        ("garbage", os.urandom(4096)),
        ("http", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("record header claiming 16 KiB, 2000 bytes of it, then silence", b"\x16\x03\x01\x40\x00" + b"\xff" * 2000),
        ("record longer than TLS allows", b"\x16\x03\x01\xff\xff" + b"\x00" * 100),
        ("handshake that is not a ClientHello", b"\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00"),
        ("ClientHello cut short then silence", hello[: len(hello) // 2]),
        ("record header only", hello[:5]),
    ]
    for name, data in cases:
        started = time.monotonic()
        with socket.create_connection((d.host, d.port), timeout=5) as sock:
            sock.sendall(data)
            received = b""
            while True:
                try:
                    chunk = sock.recv(4096)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                received += chunk
        # Closed within the handshake timeout (plus slack); an alert record at most.
        assert time.monotonic() - started < 4, name
        assert received == b"" or received[:1] == b"\x15", (name, received[:20])
    _, _, metrics = get(d.admin, "/metrics")
    # Incomplete input waits for the timeout; input that cannot be TLS fails at once.
    assert 'adloader_tls_handshakes_total{result="timed_out"} 3' in metrics, metrics
    assert 'adloader_tls_handshakes_total{result="failed"} 4' in metrics, metrics
    assert "adloader_tls_handshakes_pending 0" in metrics
    with secure_channel(d, pki.ca) as channel:
        assert borrow(channel).lease.lease_id > 0


# -- start-up errors --------------------------------------------------------------------------

def test_start_up_errors_name_the_setting_and_the_file(pki):
    missing = os.path.join(pki.dir, "missing.pem")
    not_pem = os.path.join(pki.dir, "server.ext")
    cases = [
        (["--tls-cert", missing, "--tls-key", pki.server[1]], "tls.certificateFile", "No such file"),
        (["--tls-cert", pki.server[0], "--tls-key", missing], "tls.keyFile", "No such file"),
        (["--tls-cert", pki.server[0], "--tls-key", pki.client[1]], "tls.keyFile", "does not match"),
        (["--tls-cert", not_pem, "--tls-key", pki.server[1]], "tls.certificateFile", "not a PEM"),
        (["--tls-cert", pki.server[0]], "tls.keyFile", "is required"),
        ([*tls_args(pki.server), "--tls-client-auth", "required"], "tls.clientCAFile", "is required"),
        ([*tls_args(pki.server), "--tls-client-ca", missing, "--tls-client-auth", "required"],
         "tls.clientCAFile", "No such file"),
    ]
    for args, field, message in cases:
        run = subprocess.run([BINARY, "--port", "0", *args], capture_output=True, text=True, timeout=20)
        assert run.returncode == 2, (args, run.stderr)
        assert f"bad configuration: {field}:" in run.stderr and message in run.stderr, (args, run.stderr)


# -- reload: certificate and tokens -----------------------------------------------------------

def peer_common_name(d, ca):
    with tls_connect(d, client_context(ca, alpn=None)) as sock:
        return dict(x[0] for x in sock.getpeercert()["subject"])["commonName"]


def test_reload_swaps_the_certificate_without_dropping_connections(daemon, pki):
    live_cert, live_key = os.path.join(pki.dir, "live.pem"), os.path.join(pki.dir, "live.key")
    for source, target in [(pki.server[0], live_cert), (pki.server[1], live_key)]:
        with open(target, "wb") as f:
            f.write(read(source))
    d = daemon(config={"tls": {"certificateFile": live_cert, "keyFile": live_key}}, admin=True)
    assert peer_common_name(d, pki.ca) == "adloaderd"
    s = grpc_stubs.load()
    # One gRPC connection and one framed connection, open across the reload.
    channel = secure_channel(d, pki.ca)
    assert borrow(channel).lease.lease_id > 0
    framed = tls_connect(d, client_context(pki.ca, alpn=None))
    framed_open(framed)
    # A broken file first: the reload is refused, the running certificate kept.
    with open(live_key, "wb") as f:
        f.write(read(pki.client[1]))
    d.signal(signal.SIGHUP)
    wait_until(lambda: "configuration reload refused" in d.log() or None, message="reload refused")
    assert "tls.keyFile" in d.log()
    assert peer_common_name(d, pki.ca) == "adloaderd"
    for source, target in [(pki.server2[0], live_cert), (pki.server2[1], live_key)]:
        with open(target, "wb") as f:
            f.write(read(source))
    d.signal(signal.SIGHUP)
    wait_until(lambda: '"tls":"reloaded"' in d.log().replace(" ", "") or None, message="reload applied")
    assert peer_common_name(d, pki.ca) == "adloaderd-rotated"
    # The connections made before still work, on the certificate they were made with.
    assert borrow(channel).lease.lease_id > 0
    status, _ = framed_call(framed, "Borrow", s.pb.BorrowRequest(ad_unit_id="demo", wait_ms=2000), call_id=3)
    assert status == 0
    framed.close()
    channel.close()
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_config_reloads_total{result="applied"} 1' in metrics


def test_tokens_reload_adds_and_removes_without_restart(daemon, pki):
    directory = tempfile.mkdtemp(prefix="adloaderd-tokens-")
    token_file = os.path.join(directory, "ops.token")
    with open(token_file, "w") as f:
        f.write("ops-secret-1\n")
    config_path = os.path.join(directory, "config.json")
    base = {"auth": {"namedTokens": {"feed": "feed-secret"}, "tokenFiles": {"ops": token_file},
                     "requireOnLoopback": True}}
    with open(config_path, "w") as f:
        json.dump(base, f)
    d = daemon(args=["--config", config_path, *tls_args(pki.server)], admin=True)
    with secure_channel(d, pki.ca) as channel:
        assert borrow(channel, (("authorization", "Bearer feed-secret"),)).lease.lease_id > 0
        assert borrow(channel, (("authorization", "Bearer ops-secret-1"),)).lease.lease_id > 0
        framed = tls_connect(d, client_context(pki.ca, alpn=None))
        framed_open(framed)
        s = grpc_stubs.load()
        assert framed_call(framed, "Stats", s.pb.StatsRequest(), call_id=1, token="feed-secret")[0] == 0
        # Rotate: the file gets a new token, the feed token is removed from the configuration.
        with open(token_file, "w") as f:
            f.write("ops-secret-2\n")
        with open(config_path, "w") as f:
            json.dump({"auth": {"tokenFiles": {"ops": token_file}, "requireOnLoopback": True}}, f)
        d.signal(signal.SIGHUP)
        wait_until(lambda: '"tokens":"ops"' in d.log().replace(" ", "") or None, message="tokens reloaded")
        # The same open connections: the removed tokens' next calls are UNAUTHENTICATED.
        for token in ["feed-secret", "ops-secret-1"]:
            with pytest.raises(grpc.RpcError) as error:
                borrow(channel, (("authorization", f"Bearer {token}"),))
            assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert framed_call(framed, "Stats", s.pb.StatsRequest(), call_id=3, token="feed-secret")[0] == 16
        assert framed_call(framed, "Stats", s.pb.StatsRequest(), call_id=5, token="ops-secret-2")[0] == 0
        assert borrow(channel, (("authorization", "Bearer ops-secret-2"),)).lease.lease_id > 0
        framed.close()
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_calls_by_caller_total{caller="feed"} 2' in metrics, metrics
    assert 'adloader_calls_by_caller_total{caller="ops"} 3' in metrics, metrics


def test_a_token_file_that_cannot_be_read_is_a_start_up_error(pki):
    run = subprocess.run([BINARY, "--port", "0", "--config", "/dev/stdin"], input=json.dumps(
        {"auth": {"tokenFiles": {"ops": "/nonexistent/ops.token"}}}), capture_output=True, text=True, timeout=20)
    assert run.returncode == 2 and "auth.tokenFiles.ops" in run.stderr, run.stderr


# -- the admin listener beyond loopback -------------------------------------------------------

def test_admin_listener_beyond_loopback_needs_tokens(daemon):
    from conftest import free_port
    refused = subprocess.run([BINARY, "--port", "0", "--admin-host", "0.0.0.0", "--admin-port", str(free_port())],
                             capture_output=True, text=True, timeout=20)
    assert refused.returncode == 2 and "admin.host" in refused.stderr, refused.stderr
    d = daemon(config={"auth": {"tokens": ["adm1n"]}}, args=["--admin-host", "0.0.0.0", "--admin-port", str(free_port())])
    assert d.admin is not None
    url = d.admin.replace("0.0.0.0", "127.0.0.1")
    assert get(url, "/metrics")[0] == 401
    assert get(url, "/healthz")[0] == 200 and get(url, "/readyz")[0] == 200
    status, _, body = get(url, "/metrics", headers={"Authorization": "Bearer adm1n"})
    assert status == 200 and "adloader_build_info" in body


# -- the Swift client library and the adloader CLI over TLS ---------------------------------

def cli(d, *args):
    return d.cli(*args, check=False, timeout=60)


def test_the_cli_speaks_tls_and_checks_the_servers_certificate(daemon, pki):
    d = daemon(args=tls_args(pki.server), admin=True)
    done = cli(d, "--tls-ca", pki.ca, "borrow", "demo", "--wait", "2000")
    assert done.returncode == 0 and "lease" in done.stdout, done.stderr
    done = cli(d, "--tls-ca", pki.ca, "--json", "stats")
    assert done.returncode == 0 and json.loads(done.stdout)["pools"], done.stderr
    # The certificate names 127.0.0.1 and localhost: --tls-server-name picks the one checked.
    assert cli(d, "--tls-ca", pki.ca, "--tls-server-name", "localhost", "server-info").returncode == 0
    done = cli(d, "--tls-ca", pki.ca, "--tls-server-name", "elsewhere.example", "server-info")
    assert done.returncode == 3 and "hostname mismatch" in done.stderr, done.stderr
    # Another CA: refused by the client, before any call.
    done = cli(d, "--tls-ca", pki.other_ca, "server-info")
    assert done.returncode == 3 and "not accepted for 127.0.0.1" in done.stderr, done.stderr
    assert "unable to get local issuer certificate" in done.stderr, done.stderr
    # The system's CAs (--tls alone) do not know the test CA either.
    done = cli(d, "--tls", "server-info")
    assert done.returncode == 3 and "not accepted" in done.stderr, done.stderr
    # Cleartext against the TLS port: the connection ends, exit 3.
    done = cli(d, "server-info")
    assert done.returncode == 3, (done.stdout, done.stderr)
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_tls_handshakes_total{result="completed"} 3' in metrics, metrics
    assert 'adloader_tls_handshakes_by_version_total{version="TLSv1.3"} 3' in metrics, metrics


@pytest.mark.parametrize("cert,name,expected", [
    ("expired", None, "certificate has expired"),
    ("wrong_ca", None, "unable to get local issuer certificate"),
    ("wrong_host", None, "IP address mismatch"),
    ("wrong_host", "elsewhere.example", None),
])
def test_the_cli_refuses_bad_server_certificates(daemon, pki, cert, name, expected):
    d = daemon(args=tls_args(getattr(pki, cert)))
    extra = ["--tls-server-name", name] if name else []
    done = cli(d, "--tls-ca", pki.ca, *extra, "server-info")
    if expected is None:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode == 3 and expected in done.stderr, done.stderr


def test_the_cli_presents_a_client_certificate(daemon, pki):
    d = daemon(args=tls_args(pki.server, client_ca=pki.ca, client_auth="required"), admin=True)
    # Without one, TLS 1.3 completes the client's side; the server's alert ends the first call.
    done = cli(d, "--tls-ca", pki.ca, "server-info")
    assert done.returncode == 3 and "certificate required" in done.stderr, done.stderr
    done = cli(d, "--tls-ca", pki.ca, "--tls-cert", pki.client_other[0], "--tls-key", pki.client_other[1],
               "server-info")
    assert done.returncode == 3 and "unknown ca" in done.stderr, done.stderr
    done = cli(d, "--tls-ca", pki.ca, "--tls-cert", pki.client[0], "--tls-key", pki.client[1],
               "borrow", "demo", "--wait", "2000")
    assert done.returncode == 0 and "lease" in done.stdout, done.stderr
    _, _, metrics = get(d.admin, "/metrics")
    assert 'adloader_tls_handshakes_by_caller_total{caller="O=Feeds,CN=feed-renderer"} 1' in metrics, metrics


def test_the_cli_tls_options_are_checked(daemon, pki):
    d = daemon(args=tls_args(pki.server))
    done = cli(d, "--tls-cert", pki.client[0], "server-info")
    assert done.returncode == 2 and "--tls-cert and --tls-key go together" in done.stderr, done.stderr
    done = subprocess.run([os.path.join(os.path.dirname(BINARY), "adloader"), "--unix", "/tmp/x.sock", "--tls",
                           "server-info"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "TCP" in done.stderr, done.stderr
    done = cli(d, "--tls-ca", "/nonexistent/ca.pem", "server-info")
    assert done.returncode == 3 and "cannot read the CA file /nonexistent/ca.pem" in done.stderr, done.stderr
    done = cli(d, "--tls-ca", pki.ca, "--tls-cert", pki.client[0], "--tls-key", pki.server[1], "server-info")
    assert done.returncode == 3 and "is not the PEM private key" in done.stderr, done.stderr
    done = cli(d, "--tls-ca", pki.ca, "conformance")
    assert done.returncode == 2 and "--tls" in done.stderr, done.stderr


def test_the_cli_over_tls_against_a_cleartext_daemon_says_so(daemon, pki):
    d = daemon()
    done = cli(d, "--tls-ca", pki.ca, "server-info")
    assert done.returncode == 3 and "TLS" in done.stderr, done.stderr
