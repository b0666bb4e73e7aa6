"""Small helpers for the admin HTTP tests: GET with http.client, raw sockets, a CLI load."""

import http.client
import json
import socket
import subprocess
import threading
import time
import urllib.parse


def get(base, path, headers=None, timeout=5):
    """GET base+path on a fresh connection; returns (status, headers dict, body text)."""
    url = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read().decode()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def try_get(base, path):
    """Like get(), but None when the connection fails (refused, reset)."""
    try:
        return get(base, path)
    except OSError:
        return None


def raw(base, data, timeout=5, read=True):
    """Sends raw bytes on a new connection; returns (everything read until close, socket closed?)."""
    url = urllib.parse.urlparse(base)
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as s:
        s.sendall(data)
        if not read:
            return b"", False
        s.shutdown(socket.SHUT_WR)  # the server may close at once instead of lingering
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return b"".join(chunks), False
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)


def connect(base, timeout=5):
    url = urllib.parse.urlparse(base)
    return socket.create_connection((url.hostname, url.port), timeout=timeout)


def wait_until(predicate, timeout=15, interval=0.05, message="condition"):
    """Polls predicate() until it returns something truthy (returned), bounded by timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(interval)


class CLILoad:
    """Borrows and returns (shown) through the CLI in a background thread until stopped."""

    def __init__(self, daemon, ad_units=("feed-native",), wait_ms=500):
        self.daemon = daemon
        self.ad_units = ad_units
        self.wait_ms = wait_ms
        self.calls = 0
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=30)

    def wait_for(self, calls, timeout=30):
        """Waits (bounded) until the load made `calls` calls."""
        wait_until(lambda: self.calls >= calls or self.errors, timeout=timeout, message=f"{calls} calls")

    def _run(self):
        i = 0
        while not self._stop.is_set():
            unit = self.ad_units[i % len(self.ad_units)]
            i += 1
            try:
                out = self.daemon.cli("--json", "borrow", unit, "--wait", str(self.wait_ms), check=False)
                self.calls += 1
                lease = _lease_id(out.stdout)
                if lease:
                    self.daemon.cli("return", lease, "--shown", check=False)
                    self.calls += 1
            except (subprocess.SubprocessError, OSError) as error:
                self.errors.append(error)


def _lease_id(text):
    """The lease id of `adloader --json borrow`'s answer, or None (no ad yet, error)."""
    try:
        document = json.loads(text)
    except ValueError:
        return None
    lease = document.get("lease") if isinstance(document, dict) else None
    return lease.get("leaseId") if isinstance(lease, dict) else None
