#!/usr/bin/env bash
# Builds the Debian package of adloaderd from built binaries (`make deb`: the release build).
#
#   dev/build-deb.sh [release|debug] [OUT_DIR]    # default: release, .build/deb
#
# The package holds /usr/bin/adloaderd and /usr/bin/adloader, the Swift runtime libraries they
# load (from the toolchain, which no Debian package provides) in /usr/lib/adloaderd with the
# binaries' RUNPATH pointed there (patchelf), the systemd unit, a default configuration
# /etc/adloaderd/adloaderd.json (a conffile), the state directory /var/lib/adloaderd (owned by the
# service user the postinst creates) and the docs. Depends lists the Debian packages owning every
# other shared library the binaries link (found with ldd and dpkg -S), passwd (useradd in the
# postinst) and procps (the unit's ExecReload=/bin/kill), so the package installs
# on a Debian 12 that has none of the build tools. Prints the path of the .deb.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}
out=${2:-$root/.build/deb}
bin=$root/.build/$config
for tool in dpkg-deb patchelf ldd dpkg; do
    command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (make deps)" >&2; exit 1; }
done
for product in adloaderd adloader; do
    [ -x "$bin/$product" ] || { echo "build-deb: no $bin/$product (swift build -c $config --product $product)" >&2; exit 1; }
done

sha=$(git -C "$root" rev-parse --short=10 HEAD 2>/dev/null || echo unknown)
version=${ADLOADERD_DEB_VERSION:-0.1.0+git$(git -C "$root" log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0).$sha}
arch=$(dpkg --print-architecture)
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib/adloaderd" "$stage/lib/systemd/system" \
    "$stage/etc/adloaderd" "$stage/var/lib/adloaderd" "$stage/usr/share/doc/adloaderd"

install -m 0755 "$bin/adloaderd" "$bin/adloader" "$stage/usr/bin/"
# The Debian package owning a library: by the path ldd gave, or resolved (usrmerge puts the
# same file under /lib and /usr/lib, and dpkg knows one of them).
owner_of() {
    local owner
    owner=$(dpkg -S "$1" 2>/dev/null || dpkg -S "$(readlink -f "$1")" 2>/dev/null ||
        dpkg -S "${1#/usr}" 2>/dev/null || dpkg -S "/usr$1" 2>/dev/null || true)
    [ -n "$owner" ] || { echo "build-deb: no Debian package owns $1" >&2; return 1; }
    owner=${owner%%:*}
    echo "${owner%%,*}"
}
# Shared libraries: the toolchain's (bundled) and Debian's (Depends).
depends=()
for binary in "$stage/usr/bin/adloaderd" "$stage/usr/bin/adloader"; do
    while read -r path; do
        case "$path" in
        /lib/* | /usr/lib/* | /lib64/*)
            # Depends names only what the binary itself needs (its packages pull the rest).
            if patchelf --print-needed "$binary" | grep -qx "$(basename "$path")"; then depends+=("$(owner_of "$path")"); fi
            ;;
        *) [ -e "$stage/usr/lib/adloaderd/$(basename "$path")" ] || install -m 0644 "$path" "$stage/usr/lib/adloaderd/" ;;
        esac
    done < <(ldd "$binary" | awk '/=> \// { print $3 }')
done
# The bundled libraries' own toolchain dependencies (they find each other by $ORIGIN).
for lib in "$stage"/usr/lib/adloaderd/*.so*; do
    while read -r path; do
        case "$path" in
        /lib/* | /usr/lib/* | /lib64/*)
            if patchelf --print-needed "$lib" | grep -qx "$(basename "$path")"; then depends+=("$(owner_of "$path")"); fi
            ;;
        *) [ -e "$stage/usr/lib/adloaderd/$(basename "$path")" ] || install -m 0644 "$path" "$stage/usr/lib/adloaderd/" ;;
        esac
    done < <(ldd "$lib" | awk '/=> \// { print $3 }')
done
for binary in "$stage/usr/bin/adloaderd" "$stage/usr/bin/adloader"; do
    patchelf --set-rpath /usr/lib/adloaderd "$binary"
done
for lib in "$stage"/usr/lib/adloaderd/*.so*; do patchelf --set-rpath '$ORIGIN' "$lib"; done
depends_line=$(printf '%s\n' "${depends[@]}" passwd procps | sort -u | paste -sd, | sed 's/,/, /g')

install -m 0644 "$root/deploy/debian/adloaderd.service" "$stage/lib/systemd/system/"
install -m 0640 "$root/deploy/debian/adloaderd.json" "$stage/etc/adloaderd/"
install -m 0644 "$root/README.md" "$root/OPERATIONS.md" "$root/SCALING.md" "$stage/usr/share/doc/adloaderd/"
for script in postinst prerm postrm; do install -m 0755 "$root/deploy/debian/$script" "$stage/DEBIAN/"; done
echo /etc/adloaderd/adloaderd.json >"$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: adloaderd
Version: $version
Architecture: $arch
Maintainer: adloaderd maintainers <adloaderd@localhost>
Installed-Size: $size
Depends: $depends_line
Section: net
Priority: optional
Homepage: https://example.invalid/adloaderd
Description: pooled native ads for feeds over gRPC and a framed protocol
 adloaderd keeps pools of native (and full-screen) ads loaded from a demand source
 (synthetic, or an OpenRTB 2.6 exchange) and lends them to feed-rendering backends
 under leases. This package holds the daemon, the adloader CLI, a systemd unit
 running it as the adloaderd user in a sandbox, and a default configuration in
 /etc/adloaderd. Built from $config binaries of commit $sha.
CONTROL
mkdir -p "$out"
deb=$out/adloaderd_${version}_${arch}.deb
rm -f "$out"/adloaderd_*.deb
dpkg-deb --root-owner-group -Zgzip -z1 --build "$stage" "$deb" >/dev/null
echo "$deb"
