#!/bin/sh
# fail.sh - launches that fail return the driver's error unchanged and are counted as
# failed, not timed. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

run_plain b "$E2E_BIN/app_fail" 10 3
rm -f "$tmp/f.cnt"
run_ktime k KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/f.cnt" "$E2E_BIN/app_fail" 10 3
R=$tmp/r.json
check "failed launches: the program sees CUDA_ERROR_INVALID_VALUE (same stdout, exit 0)" same_run b k
check "failed launches: counts match the fake" counts_match "$R" "$tmp/f.cnt"
check "failed launches: f_bad 6 failed" jc "$R" 'kernels[mangled=f_bad].failed' == 6
check "failed launches: f_bad none timed" jc "$R" 'kernels[mangled=f_bad].timed' == 0
check "failed launches: totals.failed_launches 6" jc "$R" totals.failed_launches == 6
check "failed launches: f_ok timed exactly" exact "$R" f_ok 10 125
check "failed launches: every launch in exactly one bucket" accounting "$R"

run_plain b2 "$E2E_BIN/app_fail" --null --dead-stream 10 3
rm -f "$tmp/f2.cnt"
run_ktime k2 KTIME_OUTPUT="$tmp/r2.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/f2.cnt" \
    "$E2E_BIN/app_fail" --null --dead-stream 10 3
check "NULL function and destroyed stream: errors reach the program unchanged" same_run b2 k2
check "NULL function and destroyed stream: report written" jc "$tmp/r2.json"
check "NULL function and destroyed stream: f_ok calls equal the fake's (11)" jc "$tmp/r2.json" 'kernels[mangled=f_ok].calls' == 11
check "NULL function and destroyed stream: f_ok's 10 good launches timed exactly" exact "$tmp/r2.json" f_ok 10 125

finish
