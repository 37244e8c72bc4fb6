#!/bin/sh
# exit.sh - the report at exit: hung kernels, exit() from another thread, contexts torn down
# before exit. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# A kernel that never finishes: the exit wait must give up after KTIME_EXIT_WAIT_MS.
run_plain b "$A" --no-sync k=125000:10 hang_k=125000:1
run_ktime k KTIME_OUTPUT="$tmp/h.json" KTIME_WARMUP=0 KTIME_EXIT_WAIT_MS=200 FAKECUDA_COUNT_FILE="$tmp/h.cnt" \
    "$A" --no-sync k=125000:10 hang_k=125000:1
R=$tmp/h.json
check "hang: same exit status and stdout" same_run b k
check "hang: report written" jc "$R"
# The bound is the exit wait (200 ms) with room for a slow machine; under a sanitizer preloaded
# first, ThreadSanitizer alone sleeps 1 s at exit (its atexit_sleep_ms) while threads live.
lim=1500
[ -n "${E2E_PRELOAD_FIRST:-}" ] && lim=3000
check "hang: finished within the exit wait (< $lim ms)" sh -c "ms=\$(cat '$tmp/k.ms'); [ \"\$ms\" -lt $lim ] || { echo \"took \$ms ms\"; exit 1; }"
check "hang: incomplete_at_exit > 0" jc "$R" totals.incomplete_at_exit '>' 0
check "hang: the launch before the hang was timed exactly" exact "$R" k 1 125
check "hang: counts match the fake" counts_match "$R" "$tmp/h.cnt"
check "hang: the 9 launches after the hang are incomplete" jc "$R" 'kernels[mangled=k].incomplete' == 9
check "hang: the hung launch itself is incomplete" jc "$R" 'kernels[mangled=hang_k].incomplete' == 1
check "hang: incomplete_at_exit is 10" jc "$R" totals.incomplete_at_exit == 10
check "hang: every launch in exactly one bucket" accounting "$R"

run_ktime k2 KTIME_EXIT_WAIT_MS=0 KTIME_OUTPUT="$tmp/h0.json" "$A" --no-sync k=125000:10 hang_k=125000:1
check "hang with KTIME_EXIT_WAIT_MS=0: report written at once" jc "$tmp/h0.json"
check "hang with KTIME_EXIT_WAIT_MS=0: same exit status and stdout" same_run b k2

# exit(3) from a second thread while main waits in pthread_join.
run_plain b3 "$E2E_BIN/app_exit_thread" 50 10
run_ktime k3 KTIME_OUTPUT="$tmp/x.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/x.cnt" "$E2E_BIN/app_exit_thread" 50 10
check "exit from a thread: exit status 3 kept" rc_is k3 3
check "exit from a thread: same stdout" same_run b3 k3
check "exit from a thread: report written" jc "$tmp/x.json"
check "exit from a thread: counts match the fake" counts_match "$tmp/x.json" "$tmp/x.cnt"
check "exit from a thread: main thread's launches timed exactly" exact "$tmp/x.json" ex_main 50 125
check "exit from a thread: the exiting thread's launches timed exactly" exact "$tmp/x.json" ex_thread 10 250
check "exit from a thread: every launch in exactly one bucket" accounting "$tmp/x.json"

# Exit status of a program that returns non-zero on its own is kept too.
run_plain b4 "$A" k=125000:3 hang_k=1:1
run_ktime k4 KTIME_OUTPUT="$tmp/s.json" KTIME_EXIT_WAIT_MS=100 "$A" k=125000:3 hang_k=1:1
check "a failing program's exit status (1) is kept" same_run b4 k4

# Contexts torn down by the program while its events are still pending (they complete 100 ms
# after recording and the program does not synchronise): cudaDeviceReset
# (cuDevicePrimaryCtxReset), cuCtxDestroy, and releasing the last reference to the primary
# context (which destroys it too). The launches before the teardown must still be timed.
teardown_case() {  # LABEL STRICT PROGRAM ARGS...
    _l=$1
    _strict=$2
    shift 2
    rm -f "$tmp/r.cnt" "$tmp/r.json"
    run_plain b5 FAKECUDA_COMPLETE_DELAY_US=100000 "$@"
    run_ktime k5 KTIME_OUTPUT="$tmp/r.json" FAKECUDA_COMPLETE_DELAY_US=100000 FAKECUDA_COUNT_FILE="$tmp/r.cnt" "$@"
    check "$_l: same exit status and stdout" same_run b5 k5
    check "$_l: nothing on stderr" empty "$tmp/k5.err"
    check "$_l: counts match the fake" counts_match "$tmp/r.json" "$tmp/r.cnt"
    check "$_l: every launch in exactly one bucket" accounting "$tmp/r.json"
    if [ "$_strict" = strict ]; then
        check "$_l: the launches before the teardown are timed exactly" exact "$tmp/r.json" k 15 125
    else
        check_todo "$_strict" "$_l: the launches before the teardown are timed exactly" exact "$tmp/r.json" k 15 125
    fi
}
teardown_case "cuDevicePrimaryCtxReset with events pending" strict "$A" --no-sync --reset k=125000:20
teardown_case "cuCtxDestroy with events pending" strict "$E2E_BIN/app_driver" --no-sync --create-ctx k=125000:20
teardown_case "last cuDevicePrimaryCtxRelease with events pending" \
    "nothing tells the last release from the others, and ktime does not make every release wait for the GPU: what is pending then is counted incomplete" \
    "$A" --no-sync --release k=125000:20

# Rounds of launches with a reset between them: the primary context comes back (the fake,
# like the driver, may hand out the same handle) and timing resumes each time.
run_plain rsb "$E2E_BIN/app_reset" 3 20
run_ktime rsk KTIME_OUTPUT="$tmp/rs.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/rs.cnt" "$E2E_BIN/app_reset" 3 20
check "reset between rounds: same exit status and stdout" same_run rsb rsk
check "reset between rounds: all 60 launches timed exactly" exact "$tmp/rs.json" k 60 125
check "reset between rounds: nothing dropped" jc "$tmp/rs.json" totals.dropped == 0

# The same with each other way a primary context ends (cudaDeviceReset on CUDA 13 does not come
# through cuDevicePrimaryCtxReset_v2): the old pool's events must never be touched again, even
# though the new context has the old handle.
for how in reset_v1 release release_v1; do
    rm -f "$tmp/rs.cnt" "$tmp/rs.json"
    run_plain rsb "$E2E_BIN/app_reset" 3 20 $how
    run_ktime rsk KTIME_OUTPUT="$tmp/rs.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/rs.cnt" "$E2E_BIN/app_reset" 3 20 $how
    check "$how between rounds: same exit status and stdout" same_run rsb rsk
    check "$how between rounds: all 60 launches timed exactly" exact "$tmp/rs.json" k 60 125
    check "$how between rounds: nothing dropped" jc "$tmp/rs.json" totals.dropped == 0
    check "$how between rounds: counts match the fake" counts_match "$tmp/rs.json" "$tmp/rs.cnt"
done

# More contexts over the process's life than ktime keeps pools for (256): the rest are
# counted as dropped (no_context) with one warning, and never retried launch after launch.
run_plain mcb "$E2E_BIN/app_manyctx" 300 3
run_ktime mck KTIME_OUTPUT="$tmp/mc.json" KTIME_WARMUP=0 KTIME_POOL_CAP=4 "$E2E_BIN/app_manyctx" 300 3
check "300 contexts: same exit status and stdout" same_run mcb mck
check "300 contexts: one warning, however many launches find no pool" \
    sh -c "[ \"\$(grep -c '^ktime: warning:' '$tmp/mck.err')\" = 1 ]"
check "300 contexts: the launches of the first 256 timed exactly" exact "$tmp/mc.json" k 768 125
check "300 contexts: the other 132 dropped for no_context" jc "$tmp/mc.json" totals.dropped_reasons.no_context == 132
check "300 contexts: every launch in exactly one bucket" accounting "$tmp/mc.json"

finish
