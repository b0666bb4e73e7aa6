#!/bin/sh
# Runs integration cases of the catalog (`adloader examples list`) against a live daemon that
# serves Examples/adloaderd.json: the Swift ones through `adloader examples run`, the Python
# ones (gRPC, operator) with the project's .venv and stubs generated from Proto/, the shell
# ones with adloader on PATH. One PASS/FAIL line per case; exit 1 when one failed.
#
#   Examples/run.sh                 every case (what `make examples` does)
#   Examples/run.sh NAME...         the named cases (NAME as `adloader examples list --json` gives)
#
# Environment: ADLOADER_ENDPOINT (default 127.0.0.1:7411), ADLOADER_ADMIN (default
# http://127.0.0.1:7412, the operator cases), ADLOADER (the CLI, default .build/debug/adloader),
# PYTHON (default .venv/bin/python: `make venv`).
set -u
cd "$(dirname "$0")/.."
ADLOADER=${ADLOADER:-.build/debug/adloader}
PYTHON=${PYTHON:-.venv/bin/python}
export ADLOADER_ENDPOINT=${ADLOADER_ENDPOINT:-127.0.0.1:7411}
export ADLOADER_ADMIN=${ADLOADER_ADMIN:-http://127.0.0.1:7412}
export PATH="$(cd "$(dirname "$ADLOADER")" && pwd):$PATH"

# The catalog as lines "name<TAB>runner<TAB>file", in catalog order, filtered by the arguments.
catalog=$("$ADLOADER" examples list --json | "$PYTHON" -c '
import json, sys
wanted = sys.argv[1:]
cases = json.load(sys.stdin)
unknown = set(wanted) - {c["name"] for c in cases}
if unknown:
    sys.exit("no such case: " + ", ".join(sorted(unknown)))
for c in cases:
    if not wanted or c["name"] in wanted:
        print(c["name"], "swift" if c["runner"].startswith("adloader") else "file", c["file"], sep="\t")
' "$@") || exit 2

stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
"$PYTHON" -m grpc_tools.protoc -I Proto --python_out="$stubs" --grpc_python_out="$stubs" \
    Proto/adloader/v1/adloader.proto Proto/adloader/v1/service.proto || exit 2

failed=0
total=0
swift=$(printf '%s\n' "$catalog" | awk -F '\t' '$2 == "swift" { print $1 }')
if [ -n "$swift" ]; then
    # shellcheck disable=SC2086 # one word per name
    "$ADLOADER" --endpoint "$ADLOADER_ENDPOINT" examples run $swift || failed=$((failed + 1))
    total=$((total + $(printf '%s\n' "$swift" | wc -l)))
fi
for line in $(printf '%s\n' "$catalog" | awk -F '\t' '$2 == "file" { print $1 "|" $3 }'); do
    name=${line%%|*}
    file=${line#*|}
    total=$((total + 1))
    echo "$name  [$file]"
    case "$file" in
    *.py) PYTHONPATH="$stubs" timeout 60 "$PYTHON" "$file" ;;
    *.sh) timeout 60 sh "$file" ;;
    *) echo "unknown case file type: $file"; false ;;
    esac
    if [ $? = 0 ]; then echo "PASS $name"; else echo "FAIL $name"; failed=$((failed + 1)); fi
done
if [ "$failed" = 0 ]; then
    echo "examples: $total cases passed"
else
    echo "examples: FAILED (see the FAIL lines above; $total cases)"
    exit 1
fi
