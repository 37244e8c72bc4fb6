#!/bin/sh
# layers.sh - libktime's layers call one way (src/layers.txt): tests/layers.py reads the
# built objects' symbols (nm) and fails on a call up a layer or files calling each other in a
# circle. TAP.
: "${SRC_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${BUILD_DIR:=$PWD}"
if ! command -v python3 >/dev/null 2>&1 || ! command -v nm >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 and nm are needed"
    exit 0
fi
exec python3 "$SRC_DIR/tests/layers.py" "$SRC_DIR" "$BUILD_DIR"
