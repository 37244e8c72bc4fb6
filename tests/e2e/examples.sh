#!/bin/sh
# examples.sh - the example reports in README.md and docs/*.md are what the built libktime
# writes: tools/examples.sh makes them afresh under the fake driver and compares them with
# docs/examples/* and with the blocks embedded in the docs (fix: tools/examples.sh --update).
. "$(dirname "$0")/lib.sh"
need_ktime
SRC=${SRC_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# The build folder this check runs in (any: a VPATH build, make distcheck's), not <source>/build.
BLD=${BUILD_DIR:-$(cd "$E2E_BIN/../.." && pwd)}
export KTIME_LIB FAKE_DIR E2E_BIN
[ -n "${E2E_PRELOAD_FIRST:-}" ] && export E2E_PRELOAD_FIRST
if ! command -v c++filt >/dev/null 2>&1; then
    skip "the documentation's example reports are what libktime writes" "no c++filt (binutils)"
    finish
fi
check "the documentation's example reports are what libktime writes (else: tools/examples.sh --update)" \
    sh "$SRC/tools/examples.sh" --check "$BLD"
check "README.md's first screen shows the generated report" \
    grep -q '^<!-- example: docs/examples/report.txt -->$' "$SRC/README.md"
check "docs/report-format.md shows the generated JSON and CSV" \
    sh -c "grep -q '^<!-- example: docs/examples/report.json -->\$' '$SRC/docs/report-format.md' && grep -q '^<!-- example: docs/examples/report.csv -->\$' '$SRC/docs/report-format.md'"
check "docs/text-format.md shows the generated text reports" \
    sh -c "grep -q '^<!-- example: docs/examples/report.txt -->\$' '$SRC/docs/text-format.md' && grep -q '^<!-- example: docs/examples/report-gpus-shapes.txt -->\$' '$SRC/docs/text-format.md'"
finish
