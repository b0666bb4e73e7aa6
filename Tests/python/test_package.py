"""The Debian package (issue 26, `make deb`): built by dev/build-deb.sh (here from the debug
binaries, which `make test` has built; `make deb` uses the release ones), installed with dpkg
into a fresh Debian 12 root (dev/debian-root.sh: debootstrap once, cached in .build/deb-root),
started there directly as its service user (no init runs in a chroot), called with the
installed CLI and from outside, stopped with SIGTERM; and `systemd-analyze verify` on the
installed unit. Needs root (chroot, mount)."""

import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import CLI, ROOT, free_port

BUILD_DEB = os.path.join(ROOT, "dev", "build-deb.sh")
DEBIAN_ROOT = os.path.join(ROOT, "dev", "debian-root.sh")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="installs into a chroot: needs root")


def run(*args, timeout=600, check=True, **kwargs):
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, **kwargs)
    if check:
        assert result.returncode == 0, f"{args}: {result.stdout}{result.stderr}"
    return result


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    return run(BUILD_DEB, "debug", str(out)).stdout.strip().splitlines()[-1]


@pytest.fixture
def root(package, tmp_path):
    path = tmp_path / "root"
    started = time.monotonic()
    made = run(DEBIAN_ROOT, package, str(path), timeout=1200)
    print(f"fresh root in {time.monotonic() - started:.1f} s {made.stderr.strip()}")
    proc = path / "proc"
    run("mount", "-t", "proc", "proc", str(proc))  # the Swift runtime reads its arguments there
    yield path
    run("umount", "-l", str(proc), check=False)
    shutil.rmtree(path, ignore_errors=True)


def chroot(root, *args, user=None, **kwargs):
    spec = ["--userspec", f"{user}:{user}"] if user else []
    return run("chroot", *spec, str(root), *args, **kwargs)


def test_the_package_installs_in_a_fresh_debian_root_and_the_daemon_serves_as_its_user(package, root):
    fields = run("dpkg-deb", "-f", package, "Package", "Depends").stdout
    assert "Package: adloaderd" in fields
    for dependency in ("libuv1", "libprotobuf-c1", "libnghttp2-14", "libcurl4", "libsqlite3-0", "libhiredis0.14",
                       "libhttp-parser2.9", "passwd", "procps"):
        assert dependency in fields, fields
    assert not (root / "usr" / "bin" / "adloaderd").exists()  # fresh: nothing of ours yet
    shutil.copy(package, root / "tmp" / "adloaderd.deb")
    started = time.monotonic()
    chroot(root, "dpkg", "-i", "/tmp/adloaderd.deb")
    print(f"dpkg -i in {time.monotonic() - started:.1f} s")
    assert "install ok installed" in chroot(root, "dpkg-query", "-W", "-f=${Status}", "adloaderd").stdout
    assert chroot(root, "getent", "passwd", "adloaderd").stdout.startswith("adloaderd:")
    assert chroot(root, "stat", "-c", "%U:%G %a", "/var/lib/adloaderd").stdout.strip() == "adloaderd:adloaderd 750"
    assert chroot(root, "stat", "-c", "%U:%G %a", "/etc/adloaderd/adloaderd.json").stdout.strip() == "root:adloaderd 640"
    conffiles = chroot(root, "dpkg-query", "-W", "-f=${Conffiles}", "adloaderd").stdout
    assert "/etc/adloaderd/adloaderd.json" in conffiles
    # The bundled Swift runtime resolves inside the root: nothing "not found".
    libraries = chroot(root, "ldd", "/usr/bin/adloaderd").stdout
    assert "not found" not in libraries and "/usr/lib/adloaderd/libswiftCore.so" in libraries, libraries

    # The unit, against the root's systemd.
    verify = run("systemd-analyze", f"--root={root}", "verify", "/lib/systemd/system/adloaderd.service", check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout + verify.stderr == "", verify.stderr  # an unknown key is only a warning

    # Started directly as the service user with the installed configuration (free ports: the
    # chroot shares the host's network).
    port, admin = free_port(), free_port()
    daemon = subprocess.Popen(
        ["chroot", "--userspec=adloaderd:adloaderd", str(root), "/usr/bin/adloaderd",
         "--config", "/etc/adloaderd/adloaderd.json", "--port", str(port), "--admin-port", str(admin),
         "--shutdown-grace-period", "1s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = daemon.stdout.readline()
        assert banner.startswith(f"adloaderd listening on 127.0.0.1:{port}"), (banner, daemon.stderr.read())
        endpoint = f"127.0.0.1:{port}"
        inside = chroot(root, "/usr/bin/adloader", "--endpoint", endpoint, "borrow", "feed", "--wait", "3000")
        assert "lease" in inside.stdout.lower(), inside.stdout
        outside = run(CLI, "--endpoint", endpoint, "--json", "stats")
        assert '"feed"' in outside.stdout
        # chroot execs the daemon: the process is the daemon, running as the package's user.
        uid = chroot(root, "id", "-u", "adloaderd").stdout.strip()
        assert run("ps", "-o", "uid=", "-p", str(daemon.pid)).stdout.strip() == uid
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
    log = daemon.stderr.read()
    assert '"message":"stopped"' in log, log
