#!/usr/bin/env bash
# tools/test.sh - builds ktime in build/ (if needed) and runs every test that needs no GPU
# (`make check`: unit tests of the core, end-to-end tests through a fake CUDA driver), then
# the wheel (`pip wheel .` installed into a fresh virtual environment, tests/e2e/pip.sh) and
# `make distcheck` (the tarball builds, installs and passes make check elsewhere), then the
# concurrency tests again against a ThreadSanitizer build of libktime (build-tsan/), and
# the whole of `make check` against an AddressSanitizer + UBSan build (build-asan/), and the
# fuzz targets for a short while (build-fuzz/).
# A source tree configured in place (./configure run at the top) is built and tested there
# instead of in build/, and the other builds are configured from a clean copy of its sources
# (build-src/, `make distdir`): autoconf refuses a second build of a configured tree.
# Prints automake's summaries, then "N skipped" and, last, one line "N passed, N failed" over all.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
if [ ! -x configure ]; then
    autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }
fi
total_pass=0 total_fail=0 total_skip=0
main=build src=$top
if [ -f config.status ]; then
    main=.
fi

# summarize LOG: prints automake's counts and the failed tests; sets $pass, $fail, $skip.
summarize() {
    grep -E '^(FAIL|ERROR|XPASS):' "$1"
    grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$1" | tail -7
    pass=$(grep -E '^# PASS:' "$1" | tail -1 | awk '{print $3}')
    fail=$(grep -E '^# (FAIL|ERROR|XPASS):' "$1" | tail -3 | awk '{s += $3} END {print s + 0}')
    skip=$(grep -E '^# SKIP:' "$1" | tail -1 | awk '{print $3}')
    pass=${pass:-0} skip=${skip:-0}
}

# run_build DIR CONFIGURE-ARGS [TESTS]: configures DIR (once, from $src; again when it was
# configured from other sources), builds it, runs `make check` there (only TESTS when given)
# and adds its counts to the totals. A build that fails is one failure.
run_build() {
    local dir=$1 args=$2 rc
    mkdir -p "$dir"
    if [ "$dir" != . ] && [ -f "$dir/Makefile" ] &&
        [ "$(sed -n 's/^abs_top_srcdir = //p' "$dir/Makefile")" != "$src" ]; then
        echo "$dir was configured from other sources: configured again from $src"
        rm -rf "$dir" && mkdir -p "$dir"
    fi
    if [ ! -f "$dir/Makefile" ]; then
        # shellcheck disable=SC2086
        (cd "$dir" && "$src/configure" -q $args ${CONFIGURE_FLAGS:-}) || {
            echo "configure failed in $dir"; total_fail=$((total_fail + 1)); return; }
    fi
    if ! make -C "$dir" -j"$(nproc)" >"$dir/make.log" 2>&1; then
        echo "the build in $dir failed"; tail -30 "$dir/make.log"
        total_fail=$((total_fail + 1))
        return
    fi
    if [ $# -ge 3 ]; then
        make -C "$dir" -j"$(nproc)" check TESTS="$3" >"$dir/check.log" 2>&1
    else
        make -C "$dir" -j"$(nproc)" check >"$dir/check.log" 2>&1
    fi
    rc=$?
    summarize "$dir/check.log"
    if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
        tail -40 "$dir/check.log"
        fail=1
    fi
    for f in $(grep -lE '^(FAIL|ERROR):' "$dir"/tests/*/*.log 2>/dev/null); do
        echo "---- $f"; tail -25 "$f"
    done
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    total_skip=$((total_skip + skip))
}

# summarize_into_totals LOG RC: a run outside run_build, its counts added (a failure with no
# failed test, such as distcheck's clean-up, counts as one).
summarize_into_totals() {
    summarize "$1"
    if [ "$2" != 0 ] && [ "$fail" = 0 ]; then
        tail -40 "$1"
        fail=1
    fi
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    total_skip=$((total_skip + skip))
}

if [ $main = . ]; then
    echo "== the source tree, configured in place"
else
    echo "== build/"
fi
run_build $main ""

# The wheel: pip wheel . with the distribution's Python, installed into a fresh venv, its ktime
# run on the fake driver (a minute: it builds ktime again, as pip does).
echo "== pip wheel into a fresh virtual environment (tests/e2e/pip.sh)"
make -C $main check TESTS=tests/e2e/pip.sh >"$main/pip-check.log" 2>&1
summarize_into_totals "$main/pip-check.log" $?
for f in $(grep -lE '^(FAIL|ERROR):' "$main"/tests/e2e/pip.log 2>/dev/null); do
    echo "---- $f"; tail -25 "$f"
done

# make distcheck: the tarball has everything, builds out of tree with its sources read-only,
# passes make check there, installs and uninstalls, and leaves nothing behind.
echo "== make distcheck"
make -C $main distcheck >"$main/distcheck.log" 2>&1
summarize_into_totals "$main/distcheck.log" $?

# The other builds are VPATH builds: of a tree configured in place, from a clean copy.
if [ $main = . ]; then
    rm -rf build-src
    if make distdir distdir="$top/build-src" >build-src.log 2>&1; then
        src=$top/build-src
    else
        tail -20 build-src.log
        echo "make distdir failed: the other builds cannot be configured"
        echo "$total_skip skipped"
        echo "$total_pass passed, $((total_fail + 1)) failed"
        exit 1
    fi
fi

# The core and concurrency tests once more with libktime built with ThreadSanitizer
# (preloaded after libtsan): any data race in ktime fails them.
TSAN_TESTS="tests/unit/test_mpmc tests/unit/test_ktab tests/unit/test_drain tests/unit/test_rangestack
  tests/unit/test_context tests/unit/test_live tests/e2e/threads.sh
  tests/e2e/gate.sh tests/e2e/pool.sh tests/e2e/exit.sh tests/e2e/signal.sh tests/e2e/signal_runs.sh
  tests/e2e/capture.sh"
echo "== ThreadSanitizer build (build-tsan/)"
run_build build-tsan --enable-tsan "$(echo $TSAN_TESTS)"

# Everything once more with libktime and the unit tests built with AddressSanitizer and
# UBSan (libasan preloaded first): any invalid access, leak or undefined behaviour in ktime
# fails the test that ran into it.
echo "== AddressSanitizer + UBSan build (build-asan/)"
run_build build-asan --enable-asan

# The fuzz targets (tests/fuzz/README.md): each over its corpus, then for FUZZ_SECONDS
# (default 5) of new inputs, side by side. With clang's libFuzzer when clang can link it;
# otherwise the same sources with a seeded random-input driver, built by the default compiler.
echo "== fuzz targets (build-fuzz/)"
fuzz_cc=
if command -v clang >/dev/null 2>&1 &&
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
    clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
    fuzz_cc=CC=clang
fi
run_build build-fuzz "--enable-fuzz $fuzz_cc" tests/fuzz/fuzz.sh

echo "$total_skip skipped"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
