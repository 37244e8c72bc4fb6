#!/bin/sh
# tools/examples.sh - the example reports shown in README.md and docs/*.md, made by the built
# libktime under the tests' fake CUDA driver, so that the documentation shows real output.
#
# usage: tools/examples.sh [--check | --update] [BUILD_DIR]
#   --check (the default): make the examples afresh into a temporary folder and compare them
#       with docs/examples/*, and every block embedded in README.md and docs/*.md between
#       `<!-- example: docs/examples/FILE -->` and `<!-- /example -->` with its file; print a
#       diff and exit 1 on any difference. tests/e2e/examples.sh runs it in `make check`.
#   --update: write docs/examples/* and rewrite the embedded blocks in place.
# BUILD_DIR is the top build folder (default: build/ beside this script's tools/, or the
# variables below). Environment, as tests/e2e/lib.sh: KTIME_LIB (libktime.so), FAKE_DIR (the
# fake libcuda.so.1's folder), E2E_BIN (app_driver's folder), E2E_PRELOAD_FIRST (a sanitizer
# runtime to preload before libktime).
#
# What changes from run to run or machine to machine becomes a fixed placeholder: the pid
# (4242), the host (node7), the start and end times, the git revision libktime was built from
# (0123abc, and the `(git ...)` is shown even for a build outside git), the fake NVML's path and
# the time between its first and last reading. Everything else is what libktime wrote: the
# fake's kernels take exact simulated times, so the numbers are the same on every run. The
# launch calls' times are the host's own, which vary: the examples timed with events leave
# them out (KTIME_LAUNCH_TIMES=0); those timed with the fake CUPTI have its fixed ones.
set -u
mode=check
case "${1:-}" in
--check) shift ;;
--update) mode=update; shift ;;
-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
-*) echo "usage: tools/examples.sh [--check | --update] [BUILD_DIR]" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd) || exit 2
build=${1:-$src/build}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "examples: no build folder ${1:-$src/build}" >&2; exit 2; }
: "${KTIME_LIB:=$build/src/.libs/libktime.so}"
: "${FAKE_DIR:=$build/tests/fake}"
: "${E2E_BIN:=$build/tests/e2e}"
case $KTIME_LIB in /*) ;; *) KTIME_LIB=$PWD/$KTIME_LIB ;; esac
case $FAKE_DIR in /*) ;; *) FAKE_DIR=$PWD/$FAKE_DIR ;; esac
case $E2E_BIN in /*) ;; *) E2E_BIN=$PWD/$E2E_BIN ;; esac
app=$E2E_BIN/app_driver
nvml=$FAKE_DIR/nvml/libnvidia-ml.so.1
for f in "$KTIME_LIB" "$FAKE_DIR/libcuda.so.1" "$nvml" "$app"; do
    [ -f "$f" ] || { echo "examples: $f is not built (make -C BUILD_DIR check TESTS= builds it)" >&2; exit 2; }
done
command -v c++filt >/dev/null 2>&1 || { echo "examples: c++filt not found (binutils)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktime-examples.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run" "$tmp/out" || exit 2
# The program is run as ./app from an empty folder, so that its command line reads the same
# everywhere.
ln -s "$app" "$tmp/run/app" || exit 2

# Kernels with real C++ mangled names (as nvcc makes them), whose demangled names are what
# c++filt prints; durations in ns (a comma list cycles), then the number of launches.
SAXPY='_Z5saxpyIfEviT_PKS0_PS0_=12000,12500,13000:200'
GEMM='_ZN4gemm6kernelILi128ELi64EEEvPKfS2_Pfiii=250000:12'
SCALE='_Z5scalePfif=28000:50'
NCCL='_Z23ncclDevKernel_AllReduceP11ncclDevComm=60000:20'

# ex FILE [VAR=VALUE...] ./app ARGS...: run ./app ARGS under libktime, report to FILE.
ex() {
    _f=$1
    shift
    (cd "$tmp/run" && env -i PATH="$PATH" LD_LIBRARY_PATH="$FAKE_DIR:$E2E_BIN" \
        LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" \
        ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
        ${TSAN_OPTIONS:+TSAN_OPTIONS="$TSAN_OPTIONS"} \
        KTIME_NVML_LIB="$nvml" KTIME_NVML_INTERVAL_MS=60000 CUDA_MPS_PIPE_DIRECTORY="$tmp/nomps" \
        KTIME_LOG=quiet KTIME_LAUNCH_TIMES=0 KTIME_OUTPUT="$tmp/raw-$_f" "$@" >"$tmp/$_f.out" 2>"$tmp/$_f.err") ||
        { echo "examples: ./app $* failed:" >&2; cat "$tmp/$_f.err" >&2; exit 1; }
    [ -s "$tmp/raw-$_f" ] || { echo "examples: no report for $_f" >&2; exit 1; }
    sed -e 's/^\(ktime [^ :]*\)\( (git [^)]*)\)\{0,1\}: /\1 (git 0123abc): /' \
        -e 's/^pid      [0-9]*$/pid      4242/' \
        -e 's/^host     [^,]*/host     node7/' \
        -e 's/^\(  "ktime_build": \)"[^"]*"/\1"0123abc"/' \
        -e 's/^\(  "host": \)"[^"]*"/\1"node7"/' \
        -e 's/^\(  "pid": \)[0-9]*/\14242/' \
        -e 's/^\(  "start_time": \)"[^"]*"/\1"2026-11-25T08:14:24.145Z"/' \
        -e 's/^\(  "end_time": \)"[^"]*"/\1"2026-11-25T08:14:24.163Z"/' \
        -e 's|"library": "[^"]*libnvidia-ml.so.1"|"library": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"|' \
        -e 's/"duration_s": [0-9.]*/"duration_s": 0.012/' \
        "$tmp/raw-$_f" >"$tmp/out/$_f"
}

# report.txt, .json, .csv: one run of three kernels, in each format.
ex report.txt ./app "$SAXPY" "$SCALE" "$GEMM"
ex report.json ./app "$SAXPY" "$SCALE" "$GEMM"
ex report.csv ./app "$SAXPY" "$SCALE" "$GEMM"
# report-gpus-shapes.txt: two GPUs (a row per GPU under each kernel; each kernel warms up once
# more on the second GPU, where its module loads) and KTIME_GROUP=shape (a row per launch shape).
ex report-gpus-shapes.txt FAKECUDA_DEVICES=2 KTIME_GROUP=shape ./app --devices 2 --shapes 2 "$SAXPY" "$SCALE"
# report-where.txt: the CUPTI timer (the fake CUPTI: each launch call 2 us, each kernel starting
# 3 us after its call returned), the GPU idle 20 us before each kernel, an NCCL kernel among
# the others, the launches' table (KTIME_LAUNCH_COLUMNS=1).
ex report-where.txt KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" KTIME_LAUNCH_TIMES=1 \
    KTIME_LAUNCH_COLUMNS=1 FAKECUDA_IDLE_NS=20000 ./app --stream "$SAXPY" "$NCCL" "$GEMM"

# The JSON's name/mangled pairs must be what c++filt says.
sed -n 's/^      "name": "\(.*\)",$/\1/p' "$tmp/out/report.json" >"$tmp/names"
sed -n 's/^      "mangled": "\(.*\)",$/\1/p' "$tmp/out/report.json" | c++filt >"$tmp/filt"
if ! [ -s "$tmp/names" ] || ! cmp -s "$tmp/names" "$tmp/filt"; then
    echo "examples: the JSON's demangled names differ from c++filt's:" >&2
    diff "$tmp/names" "$tmp/filt" >&2
    exit 1
fi

# embed DOC: DOC with each block between the markers replaced by its file, fenced.
embed() {
    awk -v src="$src" -v out="$tmp/out" '
    function fence(path,   n, lang, line, file) {
        n = split(path, p, "/"); file = p[n]
        lang = file; sub(/.*\./, "", lang); if (lang == "txt") lang = "text"
        print "```" lang
        while ((getline line < (out "/" file)) > 0) print line
        close(out "/" file)
        print "```"
    }
    skip && /^<!-- \/example -->$/ { skip = 0; print; next }
    skip { next }
    /^<!-- example: docs\/examples\/[^ ]* -->$/ {
        print; path = $3; fence(path); skip = 1; next
    }
    { print }
    END { if (skip) { print "examples: unclosed <!-- example --> block" > "/dev/stderr"; exit 1 } }
    ' "$1"
}

rc=0
mkdir -p "$tmp/docs"
for doc in "$src/README.md" "$src"/docs/*.md; do
    grep -q '^<!-- example: ' "$doc" || continue
    rel=${doc#"$src"/}
    # Every file a marker names must be one this script makes.
    for p in $(sed -n 's/^<!-- example: \(docs\/examples\/[^ ]*\) -->$/\1/p' "$doc"); do
        [ -f "$tmp/out/${p#docs/examples/}" ] || { echo "examples: $rel names $p, which is not made here" >&2; rc=1; }
    done
    embed "$doc" >"$tmp/docs/$(echo "$rel" | tr / _)" || rc=1
    if [ "$mode" = update ]; then
        cmp -s "$doc" "$tmp/docs/$(echo "$rel" | tr / _)" || { cp "$tmp/docs/$(echo "$rel" | tr / _)" "$doc" && echo "examples: updated $rel"; }
    elif ! cmp -s "$doc" "$tmp/docs/$(echo "$rel" | tr / _)"; then
        echo "examples: $rel's embedded examples differ from the generated ones (tools/examples.sh --update):"
        diff -u "$doc" "$tmp/docs/$(echo "$rel" | tr / _)"
        rc=1
    fi
done
if [ "$mode" = update ]; then
    mkdir -p "$src/docs/examples" || exit 2
    for f in "$tmp"/out/*; do
        b=${f##*/}
        cmp -s "$f" "$src/docs/examples/$b" || { cp "$f" "$src/docs/examples/$b" && echo "examples: updated docs/examples/$b"; }
    done
    exit $rc
fi
for f in "$tmp"/out/*; do
    b=${f##*/}
    if ! cmp -s "$src/docs/examples/$b" "$f"; then
        echo "examples: docs/examples/$b differs from the generated one (tools/examples.sh --update):"
        diff -u "$src/docs/examples/$b" "$f"
        rc=1
    fi
done
for f in "$src"/docs/examples/*; do
    [ -f "$f" ] || continue
    [ -f "$tmp/out/${f##*/}" ] || { echo "examples: docs/examples/${f##*/} is no longer generated; remove it"; rc=1; }
done
exit $rc
