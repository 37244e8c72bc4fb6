#!/usr/bin/env bash
# tools/test.sh - builds ktime in build/ (if needed) and runs every test that needs no GPU
# (`make check`: unit tests of the core, end-to-end tests through a fake CUDA driver), then
# the concurrency tests again against a ThreadSanitizer build of libktime (build-tsan/).
# Prints automake's summaries and, last, one line "N passed, N failed" over both.
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
# summarize LOG: prints automake's counts and the failed tests; sets $pass and $fail.
summarize() {
    grep -E '^(FAIL|ERROR|XPASS):' "$1"
    grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$1" | tail -7
    pass=$(grep -E '^# PASS:' "$1" | tail -1 | awk '{print $3}')
    fail=$(grep -E '^# (FAIL|ERROR|XPASS):' "$1" | tail -3 | awk '{s += $3} END {print s + 0}')
    skip=$(grep -E '^# SKIP:' "$1" | tail -1 | awk '{print $3}')
    pass=${pass:-0}
}

make -C build -j"$(nproc)" check >build/check.log 2>&1
rc=$?
summarize build/check.log
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
    tail -40 build/check.log
    fail=1
fi
total_pass=$pass total_fail=$fail total_skip=${skip:-0}
for f in $(grep -lE '^(FAIL|ERROR):' build/tests/*/*.log 2>/dev/null); do
    echo "---- $f"; tail -25 "$f"
done

# The same core and concurrency tests once more with libktime built with ThreadSanitizer
# (preloaded after libtsan): any data race in ktime fails them.
TSAN_TESTS="tests/unit/test_mpmc tests/unit/test_ktab tests/unit/test_drain tests/e2e/threads.sh
  tests/e2e/gate.sh tests/e2e/pool.sh tests/e2e/exit.sh tests/e2e/signal.sh tests/e2e/capture.sh"
echo "== ThreadSanitizer build"
mkdir -p build-tsan
if [ ! -f build-tsan/Makefile ]; then
    (cd build-tsan && ../configure -q --enable-tsan ${CONFIGURE_FLAGS:-}) || total_fail=$((total_fail + 1))
fi
if [ -f build-tsan/Makefile ] && make -C build-tsan -j"$(nproc)" >build-tsan/make.log 2>&1; then
    make -C build-tsan -j"$(nproc)" check TESTS="$(echo $TSAN_TESTS)" >build-tsan/check.log 2>&1
    rc=$?
    summarize build-tsan/check.log
    [ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1
    for f in $(grep -lE '^(FAIL|ERROR):' build-tsan/tests/*/*.log 2>/dev/null); do
        echo "---- $f"; tail -25 "$f"
    done
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
else
    echo "the ThreadSanitizer build failed"; tail -20 build-tsan/make.log 2>/dev/null
    total_fail=$((total_fail + 1))
fi

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" = 0 ]
