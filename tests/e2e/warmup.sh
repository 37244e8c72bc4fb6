#!/bin/sh
# warmup.sh - KTIME_WARMUP per kernel, and exact statistics over known durations. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# --- the default and explicit warmups ----------------------------------------------------
run_plain b1 "$A" k=250000:100 k3=125000:3
run_ktime w5 KTIME_OUTPUT="$tmp/w5.json" KTIME_WARMUP=5 FAKECUDA_COUNT_FILE="$tmp/w5.cnt" "$A" k=250000:100 k3=125000:3
R=$tmp/w5.json
check "warmup 5: same exit status and stdout" same_run b1 w5
check "warmup 5: report says warmup 5" jc "$R" warmup == 5
check "warmup 5: 5 of 100 skipped" jc "$R" 'kernels[mangled=k].warmup_skipped' == 5
check "warmup 5: 95 timed, exactly 250 us each" exact "$R" k 95 250
check "warmup 5: sum_us 23750" jc "$R" 'kernels[mangled=k].sum_us' '~' 23750 0.0006
check "warmup 5: a kernel launched 3 times is still listed" jc "$R" 'kernels[mangled=k3].calls' == 3
check "warmup 5: ... with 3 skipped" jc "$R" 'kernels[mangled=k3].warmup_skipped' == 3
check "warmup 5: ... and 0 timed" jc "$R" 'kernels[mangled=k3].timed' == 0
check "warmup 5: totals" sh -c "'$JCHECK' '$R' totals.warmup_skipped == 8 && '$JCHECK' '$R' totals.timed == 95 && '$JCHECK' '$R' totals.launches_seen == 103"
check "warmup 5: counts match the fake" counts_match "$R" "$tmp/w5.cnt"
check "warmup 5: every launch in exactly one bucket" accounting "$R"
check "warmup 5: no events for warmup launches (190 records)" events_balanced "$R" "$tmp/w5.cnt"
check "warmup 5: the fake saw 190 cuEventRecord" sh -c "[ \$(awk '\$1==\"event_record\"{print \$2}' '$tmp/w5.cnt') = 190 ]"

run_ktime wd KTIME_OUTPUT="$tmp/wd.json" "$A" k=250000:100 k3=125000:3
check "unset KTIME_WARMUP means 5" jc "$tmp/wd.json" warmup == 5
check "unset KTIME_WARMUP: 95 timed" exact "$tmp/wd.json" k 95 250

run_ktime w0 KTIME_OUTPUT="$tmp/w0.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/w0.cnt" "$A" k=250000:100 k3=125000:3
check "warmup 0: same exit status and stdout" same_run b1 w0
check "warmup 0: report says warmup 0" jc "$tmp/w0.json" warmup == 0
check "warmup 0: all 100 timed" exact "$tmp/w0.json" k 100 250
check "warmup 0: k3 all 3 timed" exact "$tmp/w0.json" k3 3 125
check "warmup 0: nothing skipped" jc "$tmp/w0.json" totals.warmup_skipped == 0
check "warmup 0: 206 events recorded" events_balanced "$tmp/w0.json" "$tmp/w0.cnt"

run_ktime w1000 KTIME_OUTPUT="$tmp/wb.json" KTIME_WARMUP=1000 FAKECUDA_COUNT_FILE="$tmp/wb.cnt" "$A" k=250000:100
check "warmup larger than the run: all skipped" jc "$tmp/wb.json" 'kernels[mangled=k].warmup_skipped' == 100
check "warmup larger than the run: no events at all" sh -c "[ \$(awk '\$1==\"event_record\"{print \$2}' '$tmp/wb.cnt') = 0 ]"

# Warmup counts per kernel, not per process: interleaved kernels each skip their own first 5.
run_ktime pk KTIME_OUTPUT="$tmp/pk.json" KTIME_WARMUP=5 "$A" --mixed a=125000:10 b=250000:10 c=1000000:10
for k in a b c; do
    check "per-kernel warmup: $k skips 5, times 5" \
        sh -c "'$JCHECK' '$tmp/pk.json' 'kernels[mangled=$k].warmup_skipped' == 5 && '$JCHECK' '$tmp/pk.json' 'kernels[mangled=$k].timed' == 5"
done

# --- varying durations: exact mean, min, max, sample standard deviation -------------------
mixed_case() {  # DURS N WARMUP
    run_ktime mx KTIME_OUTPUT="$tmp/mx.json" KTIME_WARMUP="$3" "$A" "kmix=$1:$2"
    set -- $(stats "$1" "$2" "$3") "$1" "$2" "$3"
    _k='kernels[mangled=kmix]'
    _l="durations $8 x$9 warmup ${10}"
    check "$_l: timed $1" jc "$tmp/mx.json" "$_k.timed" == "$1"
    check "$_l: mean_us $2" jc "$tmp/mx.json" "$_k.mean_us" '~' "$2" 0.0006
    check "$_l: min_us $3" jc "$tmp/mx.json" "$_k.min_us" == "$3"
    check "$_l: max_us $4" jc "$tmp/mx.json" "$_k.max_us" == "$4"
    check "$_l: stddev_us $5 (n - 1)" jc "$tmp/mx.json" "$_k.stddev_us" '~' "$5" 0.0006
    check "$_l: sum_us $6" jc "$tmp/mx.json" "$_k.sum_us" '~' "$6" 0.0006
    check "$_l: m2_us2 $7" jc "$tmp/mx.json" "$_k.m2_us2" '~' "$7" 0.01
}
mixed_case 125000,375000 100 0
mixed_case 125000,375000 100 5
mixed_case 250000,500000,750000 3 0
mixed_case 125000,1000000,250000,62500 41 3
mixed_case 250000 1 0

finish
