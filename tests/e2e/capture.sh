#!/bin/sh
# capture.sh - stream capture must keep working under ktime; captured launches are
# reported as captured, graph launches are counted. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

for o in "" --ptds; do
    l="capture${o:+ $o}"
    # shellcheck disable=SC2086
    run_plain b "$E2E_BIN/app_capture" $o --eager 7 6 10
    rm -f "$tmp/c.cnt"
    # shellcheck disable=SC2086
    run_ktime k KTIME_OUTPUT="$tmp/c.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/c.cnt" "$E2E_BIN/app_capture" $o --eager 7 6 10
    R=$tmp/c.json
    check "$l: EndCapture succeeds, same stdout and exit status" same_run b k
    check "$l: stdout says end_capture CUDA_SUCCESS" grep -qx 'end_capture CUDA_SUCCESS' "$tmp/k.out"
    check "$l: nothing on stderr" empty "$tmp/k.err"
    check "$l: counts match the fake" counts_match "$R" "$tmp/c.cnt"
    check "$l: cap_a 3 captured" jc "$R" 'kernels[mangled=cap_a].captured' == 3
    check "$l: cap_b 3 captured" jc "$R" 'kernels[mangled=cap_b].captured' == 3
    check "$l: captured counts equal the fake's" \
        sh -c "[ \$('$JCHECK' '$R' 'kernels[mangled=cap_a].captured') = \$(awk '\$1==\"launch_captured\" && \$2==\"cap_a\"{print \$3}' '$tmp/c.cnt') ]"
    check "$l: eager cap_a launches timed exactly" exact "$R" cap_a 7 125
    check "$l: cap_b never timed" jc "$R" 'kernels[mangled=cap_b].timed' == 0
    check "$l: totals.captured 6" jc "$R" totals.captured == 6
    check "$l: every launch in exactly one bucket" accounting "$R"
    check "$l: no events recorded into the capture" events_balanced "$R" "$tmp/c.cnt"
    # A cuGraphLaunch is one row of kind "graph", timed as a whole: 3 x 125 + 3 x 250 us.
    check "$l: one graph row" jc "$R" 'kernels[kind=graph]|count' == 1
    check "$l: the graph row counts the 10 graph launches" jc "$R" 'kernels[kind=graph].calls' == 10
    check "$l: each graph launch timed as one 1125 us sample" \
        sh -c "'$JCHECK' '$R' 'kernels[kind=graph].timed' == 10 && '$JCHECK' '$R' 'kernels[kind=graph].min_us' == 1125 && '$JCHECK' '$R' 'kernels[kind=graph].max_us' == 1125"
    check "$l: the graph is labelled by its kernel nodes (6 of 7)" jc "$R" 'kernels[kind=graph].name' has '6 kernel nodes of 7'
    check "$l: the other rows are of kind kernel" jc "$R" 'kernels[kind=kernel]|count' == 2
done

# The capture stays open 100 ms: anything ktime recorded into it and then queries from its
# drain thread meanwhile would invalidate it (cuEventQuery on such an event: 907).
run_plain bh "$E2E_BIN/app_capture" --hold 100 --eager 3 6 4
run_ktime kh KTIME_OUTPUT="$tmp/h.json" KTIME_WARMUP=0 "$E2E_BIN/app_capture" --hold 100 --eager 3 6 4
check "capture held open 100 ms: EndCapture still succeeds" same_run bh kh
check "capture held open 100 ms: 6 captured" jc "$tmp/h.json" totals.captured == 6

# Another thread releases the primary context while the capture is held and timed pairs are
# still pending: ktime folds them in on that thread, whose queries must not break the capture
# (it runs them in the thread-local capture mode).
run_plain br "$E2E_BIN/app_capture" --release-in-thread --hold 50 --eager 3 6 4
run_ktime kr KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=300000 \
    "$E2E_BIN/app_capture" --release-in-thread --hold 50 --eager 3 6 4
check "context released in another thread during a capture: EndCapture still succeeds" same_run br kr
check "... the 3 eager launches and 4 graph launches timed, the 6 captured ones counted" \
    sh -c "'$JCHECK' '$tmp/r.json' totals.timed == 7 && '$JCHECK' '$tmp/r.json' totals.captured == 6"

# The program exits while another thread holds a global-mode capture and timed pairs are still
# pending: ktime's exit drain runs on the exiting thread, in the thread-local capture mode, and
# must leave the capture alone (the program's own atexit handler, run after ktime's, looks).
run_plain be FAKECUDA_ATEXIT_DEINIT=0 "$E2E_BIN/app_capture" --exit-capturing --eager 3 6 0
run_ktime ke KTIME_OUTPUT="$tmp/e.json" KTIME_WARMUP=0 FAKECUDA_ATEXIT_DEINIT=0 \
    FAKECUDA_COMPLETE_DELAY_US=300000 "$E2E_BIN/app_capture" --exit-capturing --eager 3 6 0
check "exit while another thread captures: the capture is still active after ktime's exit" \
    grep -qx 'capture_at_exit active' "$tmp/ke.out"
check "... same output as without ktime" same_run be ke
check "... the 3 pending eager launches timed at exit, the 6 captured counted" \
    sh -c "'$JCHECK' '$tmp/e.json' totals.timed == 3 && '$JCHECK' '$tmp/e.json' totals.captured == 6 && '$JCHECK' '$tmp/e.json' totals.incomplete_at_exit == 0"

# Another thread launches on a busy stream of its own while the capture is held: with
# KTIME_GATE=auto its launches go ungated and each is checked with a cuEventQuery on that
# thread, which must not break the capture (it runs in the relaxed capture mode).
run_plain bt "$E2E_BIN/app_capture" --launch-in-thread 40 --hold 20 --eager 3 6 4
run_ktime kt KTIME_OUTPUT="$tmp/t.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=300000 \
    "$E2E_BIN/app_capture" --launch-in-thread 40 --hold 20 --eager 3 6 4
check "launches checked in another thread during a capture: EndCapture still succeeds" same_run bt kt
check "... 3 + 40 eager and 4 graph launches timed, the 6 captured counted" \
    sh -c "'$JCHECK' '$tmp/t.json' totals.timed == 47 && '$JCHECK' '$tmp/t.json' totals.captured == 6"
check "... most of the thread's launches were ungated (checked by query)" jc "$tmp/t.json" totals.ungated '>=' 20

# Capture with warmup still pending: the launches must not be bracketed either.
run_plain b2 "$E2E_BIN/app_capture" 6 2
run_ktime k2 KTIME_OUTPUT="$tmp/w.json" KTIME_WARMUP=2 "$E2E_BIN/app_capture" 6 2
check "capture during warmup: EndCapture succeeds" same_run b2 k2
check "capture during warmup: every launch in exactly one bucket" accounting "$tmp/w.json"

finish
