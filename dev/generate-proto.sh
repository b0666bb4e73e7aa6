#!/usr/bin/env bash
# Regenerates the committed protoc-c output from the message files in Proto/adloader/v1/
# (service.proto is left out: protoc-c cannot compile a method named Return).
# Usage: dev/generate-proto.sh [OUTPUT_TARGET_DIR]   (default: Sources/CAdLoaderProto)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-Sources/CAdLoaderProto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
protoc-c --c_out="$tmp" -I Proto Proto/adloader/v1/adloader.proto Proto/adloader/v1/frame.proto
mkdir -p "$out/include/adloader/v1"
for f in "$tmp"/adloader/v1/*.pb-c.c; do cp "$f" "$out/$(basename "$f")"; done
for f in "$tmp"/adloader/v1/*.pb-c.h; do cp "$f" "$out/include/adloader/v1/$(basename "$f")"; done
