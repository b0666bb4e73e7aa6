"""The README's first-session samples and the start banner hold against the real CLI and
daemon (issue 26's papercuts): the banner's first command names a loader that exists and
works, the PATH line names the directory `make run` builds into, the stats sample has the
columns the CLI prints, and the reuse sample shows a renewed lease end, as the daemon does."""

import os
import re
import shlex
import subprocess

from conftest import CLI, ROOT

README = os.path.join(ROOT, "README.md")


def readme():
    with open(README, encoding="utf-8") as f:
        return f.read()


def banner_command(d):
    line = d._read_line(10)  # the line after "adloaderd listening on ..."
    assert line.startswith("try: adloader "), line
    return shlex.split(line[len("try: adloader "):])


def test_the_banner_suggests_a_loader_that_exists_and_the_command_works(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}, "loaders": {"feed": {}, "splash": {"format": "appOpen"}}})
    args = banner_command(d)
    assert args[:2] == ["--endpoint", d.endpoint] and "--loader" in args and "feed" in args, args
    result = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stdout.startswith("leased lease "), (args, result.stderr)


def test_the_banner_of_app_open_loaders_suggests_an_app_open_call_that_works(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}, "capStore": {"type": "memory"},
                       "loaders": {"splash": {"format": "appOpen"}}})
    args = banner_command(d)
    assert "app-open" in args, args
    result = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and re.match(r"(show|skip|no ad ready)", result.stdout), (args, result)


def test_the_path_line_names_the_directory_make_run_builds():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    run = re.search(r"^run: (\w+)\n\t(\S+)/adloaderd ", makefile, re.M)
    assert run, "the Makefile's run target"
    directory = run.group(2)
    paths = re.findall(r"export PATH=\$PWD/(\S+?):\$PATH", readme())
    assert paths and all(p == directory for p in paths), (paths, directory)
    with open(os.path.join(ROOT, "Examples", "CLI", "cli_native_feed_from_a_shell.sh"), encoding="utf-8") as f:
        assert f"export PATH=$PWD/{directory}:$PATH after `make run`" in f.read()


def test_the_stats_sample_has_the_columns_the_cli_prints(daemon):
    d = daemon(config={"sources": {"synthetic": {"latency": "2ms"}}})
    d.cli("prefetch", "feed-native")
    printed = d.cli("stats").stdout.splitlines()
    sample = readme().split("    $ adloader stats\n", 1)[1].splitlines()
    assert sample[0].split() == printed[0].split()
    assert re.fullmatch(r"    instance \S+:\d+", sample[2]) and printed[-1] == f"instance {d.endpoint}"


def test_the_reuse_sample_shows_the_renewed_lease_end():
    text = readme()
    leased = re.search(r"leased lease (\d+) for slot (\S+), returns by (\S+)", text)
    reused = re.search(r"reused lease (\d+) for slot (\S+), returns by (\S+)", text)
    assert leased and reused and leased.group(1, 2) == reused.group(1, 2)
    assert reused.group(3) > leased.group(3)  # ISO times of one day compare as text
