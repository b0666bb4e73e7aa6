"""Shared fixtures for the Python tests: the real adloaderd started as a child process.

Each test that needs a daemon asks for the ``daemon`` fixture, a factory:
``d = daemon(config={...}, args=[...])`` starts ``.build/debug/adloaderd`` on port 0 with
that JSON configuration, waits (bounded) for its banner and returns a ``Daemon`` with
``host``, ``port``, ``endpoint``, ``pid`` and ``log()``. Every daemon is stopped (SIGTERM,
then SIGKILL after a bound) when the test ends. ADLOADERD overrides the binary's path.
``daemon(admin=True)`` also turns on the admin HTTP listener on a free port (0 means off for
it) and sets ``d.admin`` to its base URL, e.g. ``http://127.0.0.1:40123``.
"""

import json
import os
import select
import signal
import subprocess
import tempfile
import time

import pytest
import socket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("ADLOADERD", os.path.join(ROOT, ".build", "debug", "adloaderd"))
CLI = os.environ.get("ADLOADER", os.path.join(os.path.dirname(BINARY), "adloader"))
BANNER = "adloaderd listening on "
ADMIN_BANNER = "admin: "


def free_port():
    """A TCP port free right now on 127.0.0.1 (for the admin listener, where 0 means off)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One running adloaderd process."""

    def __init__(self, config=None, args=(), env=None, banner_timeout=20.0, admin=False):
        self.tmp = tempfile.TemporaryDirectory(prefix="adloaderd-py-")
        argv = [BINARY]
        if config is not None:
            path = os.path.join(self.tmp.name, "config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            argv += ["--config", path]
        args = list(args)
        if "--port" not in args:
            args += ["--port", "0"]
        if "--shutdown-grace-period" not in args:
            args += ["--shutdown-grace-period", "1s"]
        if admin and "--admin-port" not in args:
            args += ["--admin-port", str(free_port())]
        argv += args
        self.log_path = os.path.join(self.tmp.name, "stderr.log")
        self._log = open(self.log_path, "wb")
        full_env = dict(os.environ)
        full_env.setdefault("ADLOADERD_LOG_LEVEL", "debug")
        full_env.update(env or {})
        # In its own directory: files at relative default paths (the SQLite cap store) stay
        # out of the checkout and out of other tests' way.
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log, env=full_env,
                                     cwd=self.tmp.name)
        self.pid = self.proc.pid
        line = self._read_line(banner_timeout)
        if not line.startswith(BANNER):
            log = self.log()  # before stop() removes the temporary directory
            self.stop()
            raise RuntimeError(f"no banner from adloaderd: {line!r}; log: {log}")
        self.addresses = line[len(BANNER):].split(" and ")
        host, _, port = self.addresses[0].rpartition(":")
        self.host, self.port = host.strip("[]"), int(port)
        self.endpoint = f"{host}:{port}"
        self.admin = None
        if "--admin-port" in args:
            for _ in range(3):
                extra = self._read_line(banner_timeout)
                if extra.startswith(ADMIN_BANNER):
                    self.admin = extra[len(ADMIN_BANNER):].split("/ ")[0].rstrip("/")
                    break
            if self.admin is None:
                log = self.log()
                self.stop()
                raise RuntimeError(f"no admin banner from adloaderd; log: {log}")

    def _read_line(self, timeout):
        deadline = time.monotonic() + timeout
        data = b""
        fd = self.proc.stdout.fileno()
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                break
            chunk = os.read(fd, 1)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace").strip()

    def log(self):
        """The daemon's stderr (JSON log lines) so far."""
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def cli(self, *args, check=True, timeout=30):
        """Runs the adloader CLI against this daemon; returns the CompletedProcess."""
        return subprocess.run([CLI, "--endpoint", self.endpoint, *args], capture_output=True,
                              text=True, timeout=timeout, check=check)

    def signal(self, number):
        self.proc.send_signal(number)

    def wait(self, timeout=15):
        """Waits (bounded) for the process to exit; returns its status."""
        return self.proc.wait(timeout=timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self._log.close()
        self.tmp.cleanup()


@pytest.fixture
def daemon():
    started = []

    def start(config=None, args=(), env=None, admin=False):
        d = Daemon(config=config, args=args, env=env, admin=admin)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


@pytest.fixture
def redis_server():
    """A redis-server on a free loopback port, no persistence; killed after the test."""
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)
    yield port
    proc.kill()
    proc.wait(timeout=10)
