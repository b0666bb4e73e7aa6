"""The admin listener's limits: malformed, oversized, slow, non-GET and body-carrying requests,
too many connections. Each gets its HTTP error (or a closed connection) while a neighbour
keep-alive connection, and the framed service, are unaffected."""

import http.client
import socket
import time
import urllib.parse

import pytest

from adminhttp import connect, get, raw, try_get, wait_until

ARGS = [
    "--admin-max-request-size", "1KiB",
    "--admin-max-headers", "4",
    "--admin-request-timeout", "500ms",
]


class Neighbour:
    """A keep-alive connection that must keep working."""

    def __init__(self, base):
        url = urllib.parse.urlparse(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        self.requests = 0
        self.check()

    def check(self):
        self.conn.request("GET", "/healthz")
        response = self.conn.getresponse()
        assert response.status == 200 and response.read() == b"ok\n"
        self.requests += 1

    def close(self):
        self.conn.close()


@pytest.fixture
def admin(daemon):
    d = daemon(admin=True, args=ARGS)
    neighbour = Neighbour(d.admin)
    yield d
    neighbour.check()  # the same connection, still served
    neighbour.close()
    assert d.cli("stats").returncode == 0  # and the framed service too
    assert d.proc.poll() is None


def status_line(data):
    return data.split(b"\r\n", 1)[0].decode()


@pytest.mark.parametrize("request_bytes", [
    b"garbage\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
    bytes(range(256)),
])
def test_malformed_requests_get_400_and_close(admin, request_bytes):
    data, closed = raw(admin.admin, request_bytes)
    assert status_line(data) == "HTTP/1.1 400 Bad Request"
    assert b"Connection: close" in data
    assert closed


def test_an_oversized_request_head_gets_431_and_close(admin):
    data, closed = raw(admin.admin, b"GET /" + b"a" * 4000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_line(data) == "HTTP/1.1 431 Request Header Fields Too Large"
    assert closed


def test_too_many_header_lines_get_431(admin):
    headers = b"".join(b"X-%d: v\r\n" % i for i in range(5))
    data, closed = raw(admin.admin, b"GET / HTTP/1.1\r\n" + headers + b"\r\n")
    assert status_line(data) == "HTTP/1.1 431 Request Header Fields Too Large"
    assert closed


def test_a_request_body_gets_413(admin):
    data, closed = raw(admin.admin, b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
    assert status_line(data) == "HTTP/1.1 413 Content Too Large"
    assert closed


def test_other_methods_get_405_with_allow_and_the_connection_stays(admin):
    with connect(admin.admin) as s:
        s.sendall(b"DELETE /metrics HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n")
        data = b""
        while data.count(b"HTTP/1.1 ") < 2 or not data.endswith(b"ok\n"):
            chunk = s.recv(65536)
            assert chunk, data
            data += chunk
    assert status_line(data) == "HTTP/1.1 405 Method Not Allowed"
    assert b"Allow: GET\r\n" in data
    assert b"HTTP/1.1 200 OK" in data  # pipelined, answered in order on the same connection


def test_a_slow_request_gets_408_and_close_within_the_request_timeout(admin):
    with connect(admin.admin, timeout=5) as s:
        started = time.monotonic()
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        data = b""
        # Trickle a header byte every 50 ms: bytes do not extend the request timeout.
        s.settimeout(0.05)
        while time.monotonic() - started < 4:
            try:
                s.sendall(b"X")
            except (BrokenPipeError, ConnectionResetError):
                break
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        elapsed = time.monotonic() - started
    assert status_line(data) == "HTTP/1.1 408 Request Timeout", data
    assert 0.4 < elapsed < 3, elapsed


def test_an_idle_connection_is_closed_after_the_idle_timeout(daemon):
    d = daemon(admin=True, args=["--admin-idle-timeout", "300ms"])
    with connect(d.admin) as s:
        started = time.monotonic()
        assert s.recv(1) == b""
        assert 0.2 < time.monotonic() - started < 3


def test_connections_above_the_limit_are_closed_and_the_others_served(daemon):
    d = daemon(admin=True, args=["--admin-max-connections", "2"])
    first, second = Neighbour(d.admin), Neighbour(d.admin)
    with connect(d.admin) as third:
        try:
            third.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
            assert third.recv(100) == b""  # closed at once, nothing answered
        except (ConnectionResetError, BrokenPipeError):
            pass
    first.check()
    second.check()
    first.close()
    wait_until(lambda: (try_get(d.admin, "/healthz") or [0])[0] == 200, message="a slot freed")
    second.close()
    metrics = wait_until(lambda: try_get(d.admin, "/metrics"), message="/metrics")[2]
    # This scrape's connection, and the second's until the daemon has seen it close.
    assert "adloader_admin_connections 1\n" in metrics or "adloader_admin_connections 2\n" in metrics
