"""`adloader top`: the pools at a glance, with rates over one interval; every line fits the
terminal (80 columns when not a terminal), and q quits the live view."""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

from adminhttp import get, wait_until
from conftest import CLI


def test_top_once_shows_pools_rates_hit_ratio_and_waste(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}}, admin=True)
    d.cli("prefetch", "feed-native")
    top = subprocess.Popen([CLI, "--endpoint", d.endpoint, "top", "--once", "--interval", "3000"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Borrow only once top took its first snapshot (the daemon counted its Stats call).
        wait_until(lambda: 'adloader_calls_total{method="Stats",code="OK"} 1' in get(d.admin, "/metrics")[2],
                   message="top's first Stats call")
        for _ in range(2):
            d.cli("borrow", "feed-native", "--wait", "1000")
        out, err = top.communicate(timeout=30)
    finally:
        if top.poll() is None:
            top.kill()
            top.communicate()
    assert top.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("adloader top — " + d.endpoint)
    assert re.search(r"borrows/s \d+\.\d  hit ratio \d+%", lines[1]), lines[1]
    assert lines[2].startswith("waste ")
    header = lines[4].split()
    assert header == ["POOL", "AVAIL", "LEASED", "FLIGHT", "PARKED", "BORROW/S", "HIT", "UP/S", "WASTED", "WASTE"]
    row = lines[5].split()
    assert row[0] == "default/feed-native"
    assert float(row[5]) > 0  # borrows per second during the load
    assert row[6].endswith("%")
    assert max(len(line) for line in lines) <= 80, [len(line) for line in lines]


def test_top_rejects_a_tiny_interval(daemon):
    d = daemon()
    result = d.cli("top", "--interval", "5", check=False)
    assert result.returncode == 2 and "--interval" in result.stderr


def test_top_fits_80_columns_with_long_names(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}},
                       "loaders": {"a-loader-with-a-rather-long-name": {}}})
    unit = "an-ad-unit-whose-name-alone-is-longer-than-the-pool-column-can-hold"
    d.cli("prefetch", unit, "--loader", "a-loader-with-a-rather-long-name")
    out = d.cli("top", "--once", "--interval", "200").stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, [(len(line), line) for line in lines]
    [row] = [line for line in lines if line.startswith("a-loader")]
    assert "…" in row.split()[0]  # the name is cut, the numbers stay
    assert len(row.split()) == 10


def test_top_live_view_quits_on_q_and_restores_the_terminal(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}})
    d.cli("prefetch", "feed-native")
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    before = termios.tcgetattr(child)
    top = subprocess.Popen([CLI, "--endpoint", d.endpoint, "top", "--interval", "200"],
                           stdin=child, stdout=child, stderr=child, close_fds=True)
    try:
        screen = b""
        deadline = time.monotonic() + 20
        while b"default/feed-native" not in screen and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                screen += os.read(main, 65536)
        assert b"default/feed-native" in screen, screen
        os.write(main, b"q")
        assert top.wait(timeout=10) == 0
    finally:
        if top.poll() is None:
            top.kill()
            top.wait()
    text = screen.decode(errors="replace").replace("\x1b[H\x1b[2J", "\n")
    assert max(len(line) for line in text.replace("\r", "").split("\n")) <= 80
    assert "q quits" in text
    # Echo and line mode are back after q.
    after = termios.tcgetattr(child)
    assert after[3] & termios.ECHO and after[3] & termios.ICANON
    assert after[3] == before[3]
    os.close(main)
    os.close(child)
