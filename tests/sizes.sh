#!/bin/sh
# sizes.sh - no file of src/ over 700 lines, no function over 100 (tests/sizes.py). TAP.
: "${SRC_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 is needed"
    exit 0
fi
exec python3 "$SRC_DIR/tests/sizes.py" "$SRC_DIR"
