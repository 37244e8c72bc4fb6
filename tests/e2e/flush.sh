#!/bin/sh
# flush.sh - KTIME_FLUSH_L2 (issue 13) on the fake driver: before each timed launch, on its
# stream and outside its interval, one memset of a scratch buffer twice the device's L2 (the
# fake's: 50 MiB); the fake's own counts of cuMemAlloc and cuMemsetD32Async against ktime's.
# Each memset takes FAKECUDA_MEMSET_NS (375 us) of its stream's simulated time: one inside an
# interval would show in the kernel's time, which stays exact. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
CUPTI=$FAKE_DIR/libcupti.so.13
BUF=104857600 # 2 x the fake's L2

# flushed LABEL N: the fake ran N memsets of BUF bytes, none into a capture, after one
# cuMemAlloc of BUF bytes; the report counts N flushes, none refused, one context.
flushed() {
    _c=$tmp/$1.cnt
    [ "$(fcount "$_c" memset32)" = "$2" ] || { echo "fake memsets $(fcount "$_c" memset32), want $2"; return 1; }
    _b=$(awk '$1 == "memset32_bytes" { print $2 }' "$_c")
    [ "$_b" = $(($2 * BUF)) ] || { echo "memset bytes $_b, want $(($2 * BUF))"; return 1; }
    [ "$(fcount "$_c" memset32_captured)" = 0 ] || { echo "a memset went into a capture"; return 1; }
    [ "$(fcount "$_c" mem_alloc)" = 1 ] && [ "$(fcount "$_c" mem_alloc_bytes)" = $BUF ] ||
        { echo "cuMemAlloc: $(fcount "$_c" mem_alloc) calls, $(fcount "$_c" mem_alloc_bytes) bytes"; return 1; }
    jc "$tmp/$1.json" flush_l2.flushes == "$2" && jc "$tmp/$1.json" flush_l2.refused == 0 &&
        jc "$tmp/$1.json" flush_l2.bytes == $BUF && jc "$tmp/$1.json" flush_l2.contexts == 1 &&
        jc "$tmp/$1.json" flush_l2.contexts_without_buffer == 0
}

# --- the legacy stream, a created stream, the per-thread stream ------------------------------
run_plain p FAKECUDA_COUNT_FILE="$tmp/p.cnt" "$A" k_a=125000:20 k_b=250000:20
for mode in legacy:"" stream:--stream ptds:--ptds; do
    m=${mode%%:*}
    run_ktime "$m" KTIME_FLUSH_L2=1 KTIME_OUTPUT="$tmp/$m.json" FAKECUDA_COUNT_FILE="$tmp/$m.cnt" \
        "$A" ${mode#*:} k_a=125000:20 k_b=250000:20
    check "$m: same exit status and stdout as without ktime" same_run p "$m"
    check "$m: k_a's 15 samples exact (125 us): the flush is outside the interval" exact "$tmp/$m.json" k_a 15 125
    check "$m: k_b's 15 samples exact (250 us)" exact "$tmp/$m.json" k_b 15 250
    check "$m: 30 flushes of 100 MiB, the fake's count, one buffer" flushed "$m" 30
    check "$m: calls are the fake's" counts_match "$tmp/$m.json" "$tmp/$m.cnt"
done
check "stderr: one warning, that the flush slows the program" \
    sh -c "[ \$(wc -l <'$tmp/legacy.err') = 1 ] && grep -q '^ktime: warning: KTIME_FLUSH_L2=1: each timed launch first overwrites a buffer twice the size of L2' '$tmp/legacy.err'"

# --- the text header, and off by default ------------------------------------------------------
run_ktime t KTIME_FLUSH_L2=1 "$A" k_a=125000:20
check "text: a cache line says the buffer and the flushes" \
    grep -q "^cache    KTIME_FLUSH_L2: 100.0 MiB overwritten on the launch's stream before each timed launch,\$" "$tmp/t.err"
check "text: ... cold L2 (15 flushes)" grep -q '^         outside its interval: samples start with a cold L2 (15 flushes)$' "$tmp/t.err"
run_ktime off KTIME_OUTPUT="$tmp/off.json" FAKECUDA_COUNT_FILE="$tmp/off.cnt" "$A" k_a=125000:20
check "unset: no memset, no allocation" sh -c "[ \$(awk '\$1 == \"memset32\" || \$1 == \"mem_alloc\" { s += \$2 } END { print s + 0 }' '$tmp/off.cnt') = 0 ]"
check "unset: flush_l2 is null" jc "$tmp/off.json" flush_l2 == null
run_ktime offt "$A" k_a=125000:20
check "unset: no cache line" sh -c "! grep -q '^cache ' '$tmp/offt.err'"
run_ktime bad KTIME_FLUSH_L2=maybe KTIME_OUTPUT="$tmp/bad.json" "$A" k_a=125000:20
check "KTIME_FLUSH_L2=maybe: a warning naming it, and off" \
    sh -c "grep -q '^ktime: warning: KTIME_FLUSH_L2' '$tmp/bad.err' && '$JCHECK' '$tmp/bad.json' flush_l2 == null"

# --- no buffer: timed warm, said --------------------------------------------------------------
run_plain p1 "$A" k_a=125000:20
run_ktime nomem KTIME_FLUSH_L2=1 FAKECUDA_MEMALLOC_FAILS=1 KTIME_OUTPUT="$tmp/nomem.json" \
    FAKECUDA_COUNT_FILE="$tmp/nomem.cnt" "$A" k_a=125000:20
check "no scratch buffer: same stdout, exit 0" same_run p1 nomem
check "no scratch buffer: still timed, exact" exact "$tmp/nomem.json" k_a 15 125
check "no scratch buffer: no memset, 0 flushes, 1 context without a buffer" \
    sh -c "[ \$(awk '\$1 == \"memset32\" { print \$2 }' '$tmp/nomem.cnt') = 0 ] && '$JCHECK' '$tmp/nomem.json' flush_l2.flushes == 0 && '$JCHECK' '$tmp/nomem.json' flush_l2.contexts_without_buffer == 1"
check "no scratch buffer: a warning names the device" grep -q '^ktime: warning: KTIME_FLUSH_L2: no scratch buffer for device 0' "$tmp/nomem.err"
run_ktime nomemt KTIME_FLUSH_L2=1 FAKECUDA_MEMALLOC_FAILS=1 "$A" k_a=125000:20
check "no scratch buffer: the header says the samples are warm" \
    grep -q '^cache    KTIME_FLUSH_L2: on, but no context had a scratch buffer: samples are warm (0 flushes)$' "$tmp/nomemt.err"

# --- two GPUs: a buffer in each context -------------------------------------------------------
run_ktime two KTIME_FLUSH_L2=1 FAKECUDA_DEVICES=2 KTIME_OUTPUT="$tmp/two.json" FAKECUDA_COUNT_FILE="$tmp/two.cnt" \
    "$E2E_BIN/app_driver" --devices 2 k_d=125000:20
check "two GPUs: 2 buffers, flushes = timed samples, exact" \
    sh -c "[ \$(awk '\$1 == \"mem_alloc\" { print \$2 }' '$tmp/two.cnt') = 2 ] && '$JCHECK' '$tmp/two.json' flush_l2.contexts == 2 && [ \$(awk '\$1 == \"memset32\" { print \$2 }' '$tmp/two.cnt') = \$('$JCHECK' '$tmp/two.json' totals.timed) ] && '$JCHECK' '$tmp/two.json' 'kernels[mangled=k_d].min_us' == 125 && '$JCHECK' '$tmp/two.json' 'kernels[mangled=k_d].max_us' == 125"

# --- never into a capture ---------------------------------------------------------------------
run_plain cp "$E2E_BIN/app_capture" --eager 12 --after 12 4 10
run_ktime cap KTIME_FLUSH_L2=1 KTIME_OUTPUT="$tmp/cap.json" FAKECUDA_COUNT_FILE="$tmp/cap.cnt" \
    "$E2E_BIN/app_capture" --eager 12 --after 12 4 10
check "capture: same stdout and exit status" same_run cp cap
check "capture: no memset into the capture; one per timed launch outside it" \
    sh -c "[ \$(awk '\$1 == \"memset32_captured\" { print \$2 }' '$tmp/cap.cnt') = 0 ] && [ \$(awk '\$1 == \"memset32\" { print \$2 }' '$tmp/cap.cnt') = \$('$JCHECK' '$tmp/cap.json' totals.timed) ]"

# --- CUPTI: no events, the flush all the same -------------------------------------------------
run_ktime cu KTIME_FLUSH_L2=1 KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/cu.json" \
    FAKECUDA_COUNT_FILE="$tmp/cu.cnt" "$A" k_a=125000:20 k_b=250000:20
check "cupti: same stdout and exit status" same_run p cu
check "cupti: timed by CUPTI, exact" sh -c "'$JCHECK' '$tmp/cu.json' timer.used == cupti && '$JCHECK' '$tmp/cu.json' 'kernels[mangled=k_a].min_us' == 125 && '$JCHECK' '$tmp/cu.json' 'kernels[mangled=k_b].max_us' == 250"
check "cupti: 30 flushes (every launch past warmup), the fake's count" flushed cu 30
run_ktime cucap KTIME_FLUSH_L2=1 KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" FAKECUDA_COUNT_FILE="$tmp/cucap.cnt" \
    "$E2E_BIN/app_capture" --eager 12 4 10
check "cupti, capture: no memset into the capture" sh -c "[ \$(awk '\$1 == \"memset32_captured\" { print \$2 }' '$tmp/cucap.cnt') = 0 ] && [ \$(cat '$tmp/cucap.rc') = 0 ]"

finish
