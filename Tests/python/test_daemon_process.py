"""The Python harness itself: the real daemon starts, answers the CLI, and stops cleanly."""

import signal


def test_daemon_answers_cli_and_stops_on_sigterm(daemon):
    d = daemon()
    out = d.cli("borrow", "demo", "--wait", "2000").stdout
    assert "lease" in out.lower(), out
    d.signal(signal.SIGTERM)
    assert d.wait() == 0
