#!/bin/sh
# tools/try.sh - ktime without a GPU: builds ktime and the tests' fake CUDA driver (a
# libcuda.so.1 whose kernels take exact, simulated times, and a fake NVML), then runs a small
# CUDA program on it under ktime, as a first run on a real GPU would be, and prints the report.
#
# usage: tools/try.sh [KTIME-OPTION...]
#   tools/try.sh                  the text report, on stderr
#   tools/try.sh -o run.json      the JSON report in run.json; then: build/tools/ktime report run.json
#   tools/try.sh -w 0 -f csv      any option of the ktime launcher (ktime --help)
# The program launches three kernels (saxpy 200 times, 12 to 13 us each; scale 50 times, 28 us;
# gemm 12 times, 250 us) on "Fake GPU 0". Build folder: build/ (or the source tree itself when
# ./configure was run there; KTIME_TRY_BUILD=DIR for another); the program is run as
# BUILD/try/app (KTIME_TRY_DIR=DIR: DIR/app). Nothing is installed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd) || exit 1
case ${1:-} in -h | --help) sed -n '2,15p' "$0"; exit 0 ;; esac

if [ -n "${KTIME_TRY_BUILD:-}" ]; then
    bld=$KTIME_TRY_BUILD
elif [ -f "$top/config.status" ]; then
    bld=$top
else
    bld=$top/build
fi
# The library, the launcher, the fake driver and NVML, and the program.
need="src/.libs/libktime.so tools/ktime tools/ktime-render tests/fake/libcuda.so.1 tests/fake/libcuda.so
      tests/fake/nvml/libnvidia-ml.so.1 tests/e2e/app_driver"
targets="all tests/fake/libcuda.so.1 tests/fake/libcuda.so tests/fake/nvml/libnvidia-ml.so.1 tests/e2e/app_driver"
if [ -z "${KTIME_TRY_NO_BUILD:-}" ]; then
    "$top/tools/deps.sh" || exit 1
    if [ ! -x "$top/configure" ]; then
        echo "try: autoreconf -fi" >&2
        (cd "$top" && autoreconf -fi >/dev/null 2>&1) || { echo "try: autoreconf failed" >&2; exit 1; }
    fi
    mkdir -p "$bld" || exit 1
    if [ ! -f "$bld/Makefile" ]; then
        echo "try: configuring in $bld" >&2
        (cd "$bld" && "$top/configure" -q ${CONFIGURE_FLAGS:-}) || exit 1
    fi
    echo "try: building ktime and the fake GPU in $bld" >&2
    # shellcheck disable=SC2086
    make -C "$bld" -j"$(nproc 2>/dev/null || echo 2)" $targets >"$bld/try-build.log" 2>&1 ||
        { tail -n 30 "$bld/try-build.log" >&2; echo "try: the build failed (all of it: $bld/try-build.log)" >&2; exit 1; }
fi
bld=$(cd "$bld" && pwd) || exit 1
for f in $need; do
    [ -e "$bld/$f" ] || { echo "try: $bld/$f is not built" >&2; exit 1; }
done

# Kernels with C++ names as nvcc makes them: NAME=DURATIONS_NS:LAUNCHES.
SAXPY='_Z5saxpyIfEviT_PKS0_PS0_=12000,12500,13000:200'
SCALE='_Z5scalePfif=28000:50'
GEMM='_ZN4gemm6kernelILi128ELi64EEEvPKfS2_Pfiii=250000:12'
echo "try: ktime $* ./app (three kernels on the fake GPU; no GPU is used)" >&2
run=${KTIME_TRY_DIR:-$bld/try}
mkdir -p "$run" && ln -sf "$bld/tests/e2e/app_driver" "$run/app" || exit 1
# The program's own output goes to stdout, the report (by default) to stderr.
LD_LIBRARY_PATH="$bld/tests/fake:$bld/tests/e2e${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    KTIME_NVML_LIB="${KTIME_NVML_LIB:-$bld/tests/fake/nvml/libnvidia-ml.so.1}" \
    "$bld/tools/ktime" "$@" "$run/app" "$SAXPY" "$SCALE" "$GEMM"
