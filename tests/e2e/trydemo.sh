#!/bin/sh
# trydemo.sh - tools/try.sh, README's "try it without a GPU": on this build (not built again),
# it runs its program on the fake GPU under the build's launcher and prints the report: the
# three kernels with their exact simulated times; launcher options pass through (-o run.json).
# TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${BUILD_DIR:=$E2E_BIN/../..}"
: "${SRC_DIR:=$(dirname "$0")/../..}"
TRY=$SRC_DIR/tools/try.sh

# As launcher.sh: under AddressSanitizer the program needs libasan first in LD_PRELOAD.
KENV=
if [ -n "${E2E_PRELOAD_FIRST:-}" ]; then
    KENV="LD_PRELOAD=$E2E_PRELOAD_FIRST"
    [ "${E2E_SANITIZER:-}" = asan ] && KENV="$KENV ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"
fi
run_try() { # NAME ARGS...
    _n=$1
    shift
    # shellcheck disable=SC2086
    (cd "$tmp" && $TIMEOUT env KTIME_TRY_BUILD="$BUILD_DIR" KTIME_TRY_NO_BUILD=1 KTIME_TRY_DIR="$tmp/try" $KENV sh "$TRY" "$@" \
        >"$tmp/$_n.out" 2>"$tmp/$_n.err")
    echo $? >"$tmp/$_n.rc"
}
row() { # NAME REGEX: a line of the report on stderr matches
    grep -qE "$2" "$tmp/$1.err" && return 0
    echo "no line matching '$2' in:"
    cat "$tmp/$1.err"
    return 1
}

run_try t
check "tools/try.sh: exit status 0" sh -c "[ \$(cat '$tmp/t.rc') = 0 ] || { cat '$tmp/t.err'; exit 1; }"
check "the program's own output on stdout" sh -c \
    "grep -qx 'kernel _Z5saxpyIfEviT_PKS0_PS0_ launched 200' '$tmp/t.out' && ! grep -q '^ktime' '$tmp/t.out'"
check "the report on stderr, on the fake GPU" row t '^gpu 0    Fake GPU 0, driver CUDA'
check "saxpy<float>: 200 calls, 5 warmup, 195 timed, mean 12.500 us" \
    row t '^ +[0-9.]+ +2\.438 +200 +5 +195 +12\.500 .*  saxpy<float>$'
check "gemm::kernel<128, 64>: 12 calls, 7 timed of exactly 250 us, few samples" \
    row t '^ +[0-9.]+ +1\.750 +12 +5 +7 +250\.000 .*  gemm::kernel<128, 64> \(few samples\)$'
check "scale: 45 timed of exactly 28 us" row t '^ +[0-9.]+ +1\.260 +50 +5 +45 +28\.000 .*  scale$'
check "the conditions, from the fake NVML" row t '^conditions: gpu 0 idle apart from this process'
check "the footer: 262 launches, 247 timed" row t '^launches 262 seen: 247 timed, 15 warmup'
run_try j -o run.json
check "tools/try.sh -o run.json: the JSON report where it was run" sh -c \
    "[ \$(cat '$tmp/j.rc') = 0 ] && '$JCHECK' '$tmp/run.json' 'kernels|len' == 3 && '$JCHECK' '$tmp/run.json' totals.launches_seen == 262"
run_try h --help
check "tools/try.sh --help: what it does, exit 0" sh -c \
    "[ \$(cat '$tmp/h.rc') = 0 ] && grep -q 'ktime without a GPU' '$tmp/h.out'"
finish
