#!/bin/sh
# capture_warmup.sh - a launch into a capturing stream is counted as captured even while its
# kernel is still in warmup, and does not use up a warmup launch (issue 14): the capture
# wrappers count the captures open, and a warmup launch asks its stream only while one is.
# TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

C=$E2E_BIN/app_capture

# KTIME_WARMUP=5: a capture of 6 launches (cap_a, cap_b alternating: 3 of cap_a), the graph
# launched 7 times, then 10 ordinary launches of cap_a. cap_a: 13 calls, 3 captured, and its
# 5 warmup launches are the first 5 of the 10 ordinary ones, so 5 are timed. cap_b: 3 calls,
# all captured, no warmup. The graph row: 7 calls, 5 warmup, 2 timed (3 x 125 + 3 x 250 us).
for o in "" --ptds; do
    l="warmup 5, capture first${o:+ $o}"
    # shellcheck disable=SC2086
    run_plain b "$C" $o --after 10 6 7
    rm -f "$tmp/c.cnt"
    # shellcheck disable=SC2086
    run_ktime k KTIME_OUTPUT="$tmp/c.json" KTIME_WARMUP=5 FAKECUDA_COUNT_FILE="$tmp/c.cnt" "$C" $o --after 10 6 7
    R=$tmp/c.json
    check "$l: EndCapture succeeds, same stdout and exit status" same_run b k
    check "$l: nothing on stderr" empty "$tmp/k.err"
    check "$l: counts match the fake" counts_match "$R" "$tmp/c.cnt"
    check "$l: cap_a 13 calls" jc "$R" 'kernels[mangled=cap_a].calls' == 13
    check "$l: cap_a 3 captured (the fake saw 3 go into the capture)" \
        sh -c "'$JCHECK' '$R' 'kernels[mangled=cap_a].captured' == 3 && [ \"\$(awk '\$1==\"launch_captured\" && \$2==\"cap_a\" {print \$3}' '$tmp/c.cnt')\" = 3 ]"
    check "$l: cap_a 5 warmup: the captured launches used none" jc "$R" 'kernels[mangled=cap_a].warmup_skipped' == 5
    check "$l: cap_a 5 timed exactly" exact "$R" cap_a 5 125
    check "$l: cap_b 3 calls, 3 captured, no warmup, none timed" \
        sh -c "'$JCHECK' '$R' 'kernels[mangled=cap_b].calls' == 3 && '$JCHECK' '$R' 'kernels[mangled=cap_b].captured' == 3 && '$JCHECK' '$R' 'kernels[mangled=cap_b].warmup_skipped' == 0 && '$JCHECK' '$R' 'kernels[mangled=cap_b].timed' == 0"
    check "$l: the graph row: 7 calls, 5 warmup, 2 timed as 1125 us" \
        sh -c "'$JCHECK' '$R' 'kernels[kind=graph].calls' == 7 && '$JCHECK' '$R' 'kernels[kind=graph].warmup_skipped' == 5 && '$JCHECK' '$R' 'kernels[kind=graph].timed' == 2 && '$JCHECK' '$R' 'kernels[kind=graph].min_us' == 1125 && '$JCHECK' '$R' 'kernels[kind=graph].max_us' == 1125"
    check "$l: totals: 6 captured, 10 warmup, 7 timed" \
        sh -c "'$JCHECK' '$R' totals.captured == 6 && '$JCHECK' '$R' totals.warmup_skipped == 10 && '$JCHECK' '$R' totals.timed == 7"
    check "$l: every launch in exactly one bucket" accounting "$R"
    check "$l: no events recorded into the capture" events_balanced "$R" "$tmp/c.cnt"
done

# While the capture is open, another thread launches cap_a 8 times on a stream of its own
# that does not capture: those are ordinary launches, 5 warmup and 3 timed; the 3 launches of
# cap_a into the capture are captured, not warmup.
run_plain bt "$C" --launch-in-thread 8 6 0
rm -f "$tmp/t.cnt"
run_ktime kt KTIME_OUTPUT="$tmp/t.json" KTIME_WARMUP=5 FAKECUDA_COUNT_FILE="$tmp/t.cnt" "$C" --launch-in-thread 8 6 0
R=$tmp/t.json
check "warmup 5, another thread launches during the capture: same stdout and exit status" same_run bt kt
check "... counts match the fake" counts_match "$R" "$tmp/t.cnt"
check "... cap_a: 11 calls, 3 captured, 5 warmup, 3 timed exactly" \
    sh -c "'$JCHECK' '$R' 'kernels[mangled=cap_a].calls' == 11 && '$JCHECK' '$R' 'kernels[mangled=cap_a].captured' == 3 && '$JCHECK' '$R' 'kernels[mangled=cap_a].warmup_skipped' == 5"
check "... cap_a's 3 samples exact" exact "$R" cap_a 3 125
check "... every launch in exactly one bucket" accounting "$R"

# After the capture has ended, warmup launches no longer ask (nothing to assert from outside
# but the counts): 3 eager launches before any capture, then the capture, then 10 more.
run_plain be "$C" --eager 3 --after 10 6 1
run_ktime ke KTIME_OUTPUT="$tmp/e.json" KTIME_WARMUP=5 FAKECUDA_COUNT_FILE="$tmp/e.cnt" "$C" --eager 3 --after 10 6 1
R=$tmp/e.json
check "warmup 5, launches before and after the capture: same stdout and exit status" same_run be ke
check "... cap_a: 16 calls, 3 captured, 5 warmup, 8 timed exactly" \
    sh -c "'$JCHECK' '$R' 'kernels[mangled=cap_a].calls' == 16 && '$JCHECK' '$R' 'kernels[mangled=cap_a].captured' == 3 && '$JCHECK' '$R' 'kernels[mangled=cap_a].warmup_skipped' == 5"
check "... cap_a's 8 samples exact" exact "$R" cap_a 8 125
check "... counts match the fake" counts_match "$R" "$tmp/e.cnt"
check "... every launch in exactly one bucket" accounting "$R"

finish
