"""The integration-case catalog (Examples/README.md): every case runs and asserts its outcome
against a daemon started here with Examples/adloaderd.json, the exchange stub standing in for
the OpenRTB case's exchange; and the catalog lists every case file once, under its title."""

import glob
import json
import os
import re
import subprocess
import sys

from conftest import CLI, ROOT
from openrtb_stub import Exchange

EXAMPLES = os.path.join(ROOT, "Examples")
RUNNER_FILES = {"Swift/Example.swift", "Swift/ExampleRunner.swift", "Swift/Catalog.swift"}
KINDS = {"Swift", "gRPC", "CLI", "Operator"}
FORMATS = {"Native", "Interstitial", "Rewarded", "App-open"}


def catalog():
    result = subprocess.run([CLI, "examples", "list", "--json"], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(result.stdout)


def test_every_case_runs_and_passes_against_the_example_configuration(daemon):
    exchange = Exchange()
    try:
        d = daemon(args=["--config", os.path.join(EXAMPLES, "adloaderd.json"), "--openrtb-endpoint", exchange.url],
                   admin=True)
        env = dict(os.environ, ADLOADER_ENDPOINT=d.endpoint, ADLOADER_ADMIN=d.admin, ADLOADER=CLI,
                   PYTHON=sys.executable)
        run = subprocess.run([os.path.join(EXAMPLES, "run.sh")], env=env, capture_output=True, text=True, timeout=180)
        output = run.stdout + run.stderr
        assert run.returncode == 0, output
        passed = set(re.findall(r"^PASS ([\w-]+)", run.stdout, re.M))
        assert passed == {case["name"] for case in catalog()}, output
        assert "FAIL" not in run.stdout, output
    finally:
        exchange.stop()


def test_a_failing_case_fails_the_run(daemon):
    # Against a daemon without the examples' loaders every case must fail, not pass silently.
    d = daemon()
    env = dict(os.environ, ADLOADER_ENDPOINT=d.endpoint, ADLOADER=CLI, PYTHON=sys.executable)
    run = subprocess.run([os.path.join(EXAMPLES, "run.sh"), "swift-native-watch-events", "grpc-native-feed-borrow-per-cell"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.findall(r"^FAIL ([\w-]+)", run.stdout, re.M) == ["swift-native-watch-events", "grpc-native-feed-borrow-per-cell"]


def test_the_catalog_lists_every_case_file_once_under_its_title():
    cases = catalog()
    names = [case["name"] for case in cases]
    assert len(names) == len(set(names)), names
    listed = {os.path.relpath(case["file"], "Examples") for case in cases}
    assert len(listed) == len(cases), "one file per case"
    on_disk = {os.path.relpath(path, EXAMPLES) for pattern in ("Swift/*.swift", "Python/*.py", "CLI/*.sh")
               for path in glob.glob(os.path.join(EXAMPLES, pattern))} - RUNNER_FILES
    assert listed == on_disk, f"not in the catalog: {on_disk - listed}; missing: {listed - on_disk}"
    for case in cases:
        kind, format_ = case["title"].split(" ")[:2]
        assert kind in KINDS and format_ in FORMATS, f"{case['title']}: the title is [Kind] [Format] [Scenario]"
        with open(os.path.join(ROOT, case["file"])) as f:
            lines = [line for line in f.read().splitlines() if not line.startswith("#!")]
        first = re.sub(r"^(//|#)\s*", "", lines[0])
        assert first == case["title"], f"{case['file']} starts with {lines[0]!r}, not its title"
        with open(os.path.join(EXAMPLES, "README.md")) as f:
            assert f"| {case['title']} |" in f.read(), f"{case['title']}: not in the table of Examples/README.md"
        header = "\n".join(lines[:30])
        for part in ("Shows:", "Look at:", "Run:"):
            assert part in header, f"{case['file']}: its opening comment says what it shows, what to look at, how to run it"


def test_examples_list_and_run_refuse_bad_command_lines():
    def cli(*args):
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30)

    assert "Swift Native Watch events" in cli("examples", "list").stdout
    for args, message in [
        (["examples"], "examples needs list or run"),
        (["examples", "run"], "NAME... or --all"),
        (["examples", "run", "--all", "swift-native-watch-events"], "NAME... or --all"),
        (["examples", "run", "no-such-case"], 'no case named "no-such-case"'),
        (["examples", "run", "grpc-native-feed-borrow-per-cell"], "make examples"),
        (["examples", "frobnicate"], "unknown subcommand"),
    ]:
        result = cli(*args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
