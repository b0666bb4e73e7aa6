"""The dashboard at / in headless Chromium (Debian's `chromium`, driven over the DevTools
protocol): loaded against a daemon under load, it must draw charts with data; the test checks
the DOM and keeps a screenshot in .build/test-artifacts/dashboard.png."""

import base64
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest
import websocket

from adminhttp import CLILoad, wait_until
from conftest import ROOT

ARTIFACTS = os.path.join(ROOT, ".build", "test-artifacts")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """A headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, width=1440, height=900):
        if CHROMIUM is None:
            pytest.fail("chromium is not installed (it is in the Makefile's APT_PACKAGES: make deps)")
        self.profile = tempfile.TemporaryDirectory(prefix="adloaderd-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = self._devtools_port(timeout=60)
        pages = wait_until(lambda: [t for t in self._json(port, "/json/list") if t["type"] == "page"],
                           message="a page target")
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30)
        self.next_id = 0
        self.call("Emulation.setDeviceMetricsOverride",
                  width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _devtools_port(self, timeout):
        deadline = time.monotonic() + timeout
        text = b""
        fd = self.proc.stderr.fileno()
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                text += chunk
                match = re.search(rb"DevTools listening on ws://[^:]+:(\d+)/", text)
                if match:
                    return int(match.group(1))
        raise RuntimeError(f"chromium did not start: {text.decode(errors='replace')}")

    @staticmethod
    def _json(port, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return json.load(response)

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc.stderr.close()
        self.profile.cleanup()


def test_dashboard_draws_live_charts_under_load(daemon):
    config = {
        "sources": {"synthetic": {"latency": "20ms", "latencyJitter": "30ms"}},
        "loaders": {"default": {"maximumRetainedAdvertisements": 8, "numberOfAdvertisements": 3}},
    }
    d = daemon(config=config, admin=True, args=["--admin-sample-interval", "250ms"])
    units = ("feed-native", "feed-stories", "search-results")
    for unit in units:  # the pools exist from the first samples on
        d.cli("prefetch", unit)
    browser = Chromium()
    try:
        with CLILoad(d, ad_units=units) as load:
            load.wait_for(2)
            browser.call("Page.enable")
            browser.call("Page.navigate", url=d.admin + "/")
            # Wait (bounded) until every chart has a line of at least 6 points and the pools showed up.
            wait_until(lambda: browser.evaluate("""
                (() => {
                  const charts = [...document.querySelectorAll('figure.chart')];
                  const pools = document.querySelectorAll('#pools figure.chart').length;
                  return pools >= 3 && charts.length >= 12 && charts.every(f => Number(f.dataset.points) >= 6);
                })()"""), timeout=60, interval=0.25, message="charts with data")
            time.sleep(0.6)  # two more samples with the load still running, for the screenshot
            state = browser.evaluate("""
                (() => ({
                  status: document.getElementById('status').textContent,
                  samples: Number(document.body.dataset.samples),
                  pools: [...document.querySelectorAll('#pools figure')].map(f => f.dataset.pool),
                  server: [...document.querySelectorAll('#server figure')].map(f => f.dataset.chart),
                  errors: [...document.querySelectorAll('#errors figure')].map(f => f.dataset.chart),
                  identity: { instance: document.querySelector('.id-instance').textContent,
                              version: document.querySelector('.id-version').textContent },
                  // Each chart labels 0, half and max with its unit.
                  y_axes: [...document.querySelectorAll('figure.chart')].map(f => [...f.querySelectorAll(
                    'text.axis-y')].filter(t => t.textContent.endsWith(' ' + f.dataset.unit)).length),
                  tiles: Object.fromEntries([...document.querySelectorAll('.tile')].map(
                    t => [t.id, t.querySelector('.value').textContent])),
                  polylines: document.querySelectorAll('svg polyline.series').length,
                  config: [...document.querySelectorAll('#configuration tr')].map(r => r.cells[0].textContent),
                  width: document.documentElement.scrollWidth,
                  max_calls_per_second: Math.max(...[...document.querySelectorAll(
                    'figure[data-chart="calls"] polyline')].flatMap(p => p.getAttribute('points').split(' ')
                    .filter(Boolean).map(xy => 96 - Number(xy.split(',')[1])))),
                }))()""")
            shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        assert not load.errors
    finally:
        browser.close()

    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, "dashboard.png")
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    assert os.path.getsize(path) > 20_000

    assert state["status"] == "READY"
    assert state["samples"] >= 6
    assert set(state["pools"]) == {"default/feed-native", "default/feed-stories", "default/search-results"}
    assert state["server"] == ["calls", "latency", "hit", "upi", "waste", "lag"]
    assert state["errors"] == ["codes", "failures", "reclaimed"]
    # 4 lines per pool; lag draws p99 and max; codes at least OK, failures one per class, reclaimed.
    assert state["polylines"] >= 3 * 4 + 7 + 1 + 3 + 1
    assert state["identity"]["instance"] == d.endpoint and state["identity"]["version"]
    assert all(axes == 3 for axes in state["y_axes"]), state["y_axes"]
    assert state["tiles"]["tile-calls"] != "–", state["tiles"]
    assert state["max_calls_per_second"] > 0  # the load shows in the call-rate series
    assert state["tiles"]["tile-hit"].endswith("%"), state["tiles"]
    assert "loader default" in state["config"] and "listening" in state["config"]
    assert state["width"] <= 1440  # fits a laptop screen without horizontal scrolling


def test_dashboard_shows_the_error_and_identity_views_with_failures_injected(daemon):
    """Failures injected: a source failing half its requests, calls ending INVALID_ARGUMENT, leases never
    returned. The error views show them by status, by class and as reclaimed leases; the header
    names the replica. The screenshot (.build/test-artifacts/dashboard-errors.png) is the one in
    docs/dashboard.png."""
    config = {
        "listeners": {"instanceName": "replica-b"},
        "sources": {"synthetic": {"latency": "10ms", "latencyJitter": "20ms", "errorRate": 0.5}},
        "loaders": {"default": {"maximumRetainedAdvertisements": 6, "numberOfAdvertisements": 2, "leaseTimeout": "1s",
                                "retry": {"delay": "50ms", "multiplier": 1, "maximumCount": 1000}}},
    }
    d = daemon(config=config, admin=True, args=["--admin-sample-interval", "250ms"])
    units = ("feed-native", "feed-stories")
    for unit in units:
        d.cli("prefetch", unit)
    browser = Chromium()
    try:
        with CLILoad(d, ad_units=units) as load:
            load.wait_for(2)
            browser.call("Page.enable")
            browser.call("Page.navigate", url=d.admin + "/")
            for i in range(4):  # leases never returned: reclaimed after 1 s
                d.cli("borrow", "leaky", "--wait", "3000", check=False)
            for i in range(6):  # calls that fail: an unknown loader is INVALID_ARGUMENT
                d.cli("borrow", "feed-native", "--loader", "nope", check=False)

            def dashboard():
                return json.loads(urllib.request.urlopen(d.admin + "/dashboard.json", timeout=5).read())
            wait_until(lambda: sum(v or 0 for v in dashboard()["reclaimed"]) >= 1, timeout=30, message="reclaimed leases")
            wait_until(lambda: browser.evaluate("""
                (() => {
                  const codes = document.querySelector('figure[data-chart="codes"]');
                  const failures = document.querySelector('figure[data-chart="failures"] polyline[data-series="retryable"]');
                  return codes && codes.dataset.legend.includes("INVALID_ARGUMENT") && failures
                    && Number(failures.dataset.points) >= 6;
                })()"""), timeout=60, interval=0.25, message="the error views with data")
            def failing_state():
                # The tiles show the last sample: fail calls again until a tile shows red, and
                # read the page at that moment (on a loaded machine the wait above can outlast
                # the first failures' sample: the tiles were back at 0, and the test failed).
                for i in range(3):
                    d.cli("borrow", "feed-native", "--loader", "nope", check=False)
                state = browser.evaluate("""
                (() => ({
                  identity: Object.fromEntries(['instance', 'version', 'up', 'since'].map(
                    k => [k, document.querySelector('.id-' + k).textContent])),
                  codes: document.querySelector('figure[data-chart="codes"]').dataset.legend.split(','),
                  failures: document.querySelector('figure[data-chart="failures"]').dataset.legend.split(','),
                  tiles: Object.fromEntries([...document.querySelectorAll('.tile')].map(
                    t => [t.id, t.querySelector('.value').textContent])),
                  bad: [...document.querySelectorAll('.tile.bad')].map(t => t.id),
                  retryable_max: Math.max(...document.querySelector(
                    'figure[data-chart="failures"] polyline[data-series="retryable"]').getAttribute('points')
                    .split(' ').filter(Boolean).map(xy => 96 - Number(xy.split(',')[1]))),
                  units: [...document.querySelectorAll('#errors figure')].map(f => f.dataset.unit),
                }))()""")
                return state if state["bad"] else None
            state = wait_until(failing_state, timeout=60, interval=0.25, message="a red error tile")
            shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        assert not load.errors
    finally:
        browser.close()

    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, "dashboard-errors.png")
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    assert os.path.getsize(path) > 20_000

    assert state["identity"]["instance"] == "replica-b"
    assert state["identity"]["version"]
    assert re.fullmatch(r"\d+m \d+s", state["identity"]["up"]), state["identity"]
    assert state["identity"]["since"].endswith("Z")
    assert "OK" in state["codes"] and "INVALID_ARGUMENT" in state["codes"]
    assert state["failures"] == ["retryable", "unreachable", "final"]
    assert state["retryable_max"] > 0  # the injected failures show in the retryable line
    assert state["units"] == ["calls/s", "failures/s", "leases/interval"]
    assert state["tiles"]["tile-failures"] != "–", state["tiles"]
    assert state["bad"], state["tiles"]  # an error tile above zero is red
