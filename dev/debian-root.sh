#!/usr/bin/env bash
# A fresh Debian 12 root for the package test (Tests/python/test_package.py):
#
#   dev/debian-root.sh PACKAGE.deb DIR
#
# makes DIR a minimal Debian bookworm (debootstrap --variant=minbase) holding the packages the
# .deb depends on, and systemd (whose unit files `systemd-analyze verify` checks the unit
# against), and nothing of the build machine. debootstrap runs once per dependency list:
# its result is kept as .build/deb-root/bookworm-<hash>.tar and DIR is unpacked from that (a few
# seconds); the first run downloads and unpacks Debian's packages (minutes). Needs root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deb=$1
dir=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "debian-root: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debian-root: debootstrap is missing (make deps)" >&2; exit 1; }
# The dependency names, without version constraints or alternatives' tails.
include=$( (dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/[(|].*//' -e 's/ //g'; echo systemd) | grep -v '^$' | sort -u | paste -sd,)
cache=$root/.build/deb-root
tarball=$cache/bookworm-$(echo "$include" | sha256sum | cut -c1-16).tar
if [ ! -s "$tarball" ]; then
    mkdir -p "$cache"
    work=$(mktemp -d "$cache/debootstrap.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    started=$(date +%s)
    debootstrap --variant=minbase --include="$include" bookworm "$work/root" "$mirror" >"$work/log" 2>&1 ||
        { tail -20 "$work/log" >&2; exit 1; }
    rm -rf "$work/root/var/cache/apt/archives/"*.deb
    tar -C "$work/root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    echo "debian-root: debootstrap took $(($(date +%s) - started)) s; cached as $tarball" >&2
fi
mkdir -p "$dir"
tar -C "$dir" -xf "$tarball"
