#!/bin/sh
# tools.sh - the benchmark's own code, without a GPU: run.py's analysis against synthetic
# data (--selftest: every target's pass/fail logic, the tables, the drain breakdown parser),
# and tools/bench/untimed_fake.py end to end through the fake driver. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

TOOLS=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
if ! command -v python3 >/dev/null 2>&1; then
    skip "run.py --selftest" "no python3"
    skip "untimed_fake.py through the fake driver" "no python3"
    finish
fi
check "run.py --selftest: every target's logic on synthetic data" \
    sh -c "python3 '$TOOLS/run.py' --selftest >'$tmp/st.out' 2>&1 && grep -q '^selftest ok' '$tmp/st.out'"
# A small run: it must measure all three configurations (no number is asserted: a timed test
# would fail on a busy machine).
check "untimed_fake.py through the fake driver: a row per configuration" \
    sh -c "python3 '$TOOLS/untimed_fake.py' --build '$E2E_BIN/../..' --n 20000 --reps 1 \
             ${E2E_PRELOAD_FIRST:+--preload-first '$E2E_PRELOAD_FIRST'} >'$tmp/uf.out' 2>&1 &&
           grep -q '^| bare | ' '$tmp/uf.out' && grep -q '^| ktime-disabled | ' '$tmp/uf.out' &&
           grep -q '^| ktime-warmup | ' '$tmp/uf.out'"
finish
