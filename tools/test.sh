#!/usr/bin/env bash
# tools/test.sh - builds ktime in build/ (if needed) and runs every test that needs no GPU
# (`make check`: unit tests of the core, end-to-end tests through a fake CUDA driver).
# Prints automake's summary and, last, one line "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
if [ ! -x configure ]; then
    autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }
fi
mkdir -p build
if [ ! -f build/Makefile ]; then
    (cd build && ../configure -q ${CONFIGURE_FLAGS:-}) || { echo "configure failed"; echo "0 passed, 1 failed"; exit 1; }
fi
make -C build -j"$(nproc)" >build/make.log 2>&1 || { tail -30 build/make.log; echo "0 passed, 1 failed"; exit 1; }
make -C build -j"$(nproc)" check >build/check.log 2>&1
rc=$?
grep -E '^(FAIL|ERROR|XPASS):' build/check.log
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' build/check.log | tail -7
pass=$(grep -E '^# PASS:' build/check.log | tail -1 | awk '{print $3}')
fail=$(grep -E '^# (FAIL|ERROR|XPASS):' build/check.log | tail -3 | awk '{s += $3} END {print s + 0}')
pass=${pass:-0}
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
    tail -40 build/check.log
    fail=1
fi
for f in $(grep -lE '^(FAIL|ERROR):' build/tests/*/*.log 2>/dev/null); do
    echo "---- $f"; tail -25 "$f"
done
skip=$(grep -E '^# SKIP:' build/check.log | tail -1 | awk '{print $3}')
echo "$pass passed, $fail failed${skip:+, $skip skipped}"
[ "$fail" = 0 ]
