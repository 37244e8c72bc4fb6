#!/usr/bin/env bash
# Runs app_paths one part at a time under ktime alone, the CUPTI counter alone, and both, to
# find which part and which tool a failure belongs to; for the first crash, a backtrace from
# cuda-gdb. usage: bash tests/gpu/paths_diag.sh BUILD   (prints one line per run)
set -u
B=$(cd "${1:-build}" && pwd)
APP=$B/gpu/app_paths
KT=$B/src/.libs/libktime.so
KC=$B/gpu/libkcount.so
T=$(mktemp -d)
first=
for part in reset cluster coop graph streams rtc multi; do
    for mode in ktime kcount both; do
        case $mode in
        ktime) pre=$KT ;;
        kcount) pre=$KC ;;
        both) pre=$KC:$KT ;;
        esac
        timeout 60 env LD_PRELOAD="$pre" KTIME_OUTPUT="$T/$part-$mode.json" KTIME_LOG=debug \
            KCOUNT_OUTPUT="$T/$part-$mode.kc.json" "$APP" -s "$part" -l 0 >"$T/$part-$mode.out" 2>"$T/$part-$mode.err"
        rc=$?
        echo "paths $part $mode: rc $rc $(grep -c '^expect' "$T/$part-$mode.out") expect lines; $(grep -v 'ktime: debug' "$T/$part-$mode.err" | tail -n 2 | tr '\n' ' ')"
        if [ "$rc" -ge 128 ] && [ -z "$first" ]; then
            first="$part $pre"
        fi
    done
done
if [ -n "$first" ] && command -v cuda-gdb >/dev/null; then
    set -- $first
    echo "== backtrace: part $1, LD_PRELOAD=$2"
    timeout 120 cuda-gdb -q -batch -ex "set environment LD_PRELOAD=$2" -ex "set environment KTIME_LOG=debug" \
        -ex run -ex bt -ex "info threads" --args "$APP" -s "$1" -l 0 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -n 60
fi
