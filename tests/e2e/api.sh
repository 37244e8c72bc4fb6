#!/bin/sh
# api.sh - the timer API of include/ktime.h (ktime_cpu_timer, ktime_gpu_timer) in programs
# linked with -lktime, run four ways: linked only, with libktime also preloaded, and both
# with KTIME_DISABLE=1. TAP.
#   - app_api cpu / gpu / app_api_nodrv assert the API's contract themselves (their "ok -"
#     lines become TAP lines here): exact GPU intervals from the fake's simulated kernel
#     times, error codes, not ready, capture, no driver;
#   - here: the timers' events are not in ktime's report (no extra rows or launches, every
#     launch in one bucket, ktime's samples still exact, the fake's event records = ktime's
#     two per timed launch + the timers' own), and the example tools/example/timer_example.
. "$(dirname "$0")/lib.sh"
need_ktime

# The programs need libktime.so (linked with -lktime): the loader finds it beside KTIME_LIB.
LDP=$(dirname "$KTIME_LIB"):$LDP
EX_BIN=${E2E_BIN%/tests/e2e}/tools/example

# run_linked NAME [VAR=VALUE...] PROGRAM [ARGS...]: run_plain, for a program linked with
# libktime: in a sanitizer build libktime needs the sanitizer's runtime loaded first, which
# run_ktime preloads and run_plain does not.
run_linked() {
    _rn=$1
    shift
    run_plain "$_rn" ${E2E_PRELOAD_FIRST:+LD_PRELOAD=$E2E_PRELOAD_FIRST} "$@"
}

# api_records NAME: the cuEventRecord calls of the timers, as app_api printed them.
api_records() { sed -n 's/^api_event_records //p' "$tmp/$1.out"; }

# events_with_api REPORT COUNTFILE NAME: the fake's cuEventRecord calls are ktime's (two per
# timed launch, as events_balanced counts them) plus the timers' own, no more.
events_with_api() {
    _t=$(jv "$1" totals.timed)
    _i=$(jv "$1" totals.incomplete_at_exit)
    _g=$(jv "$1" totals.dropped_reasons.gate_timeout)
    _a=$(api_records "$3")
    _e=$(fcount "$2" event_record)
    _want=$((2 * (${_t:-0} + ${_i:-0} + ${_g:-0}) + ${_a:-0}))
    [ -n "$_a" ] && [ "$_e" = "$_want" ] && return 0
    echo "fake saw $_e cuEventRecord calls; report: $_t timed, $_i incomplete, ${_g:-0} gate_timeout; timers: '$_a' (want $_want)"
    return 1
}

# only_api_records COUNTFILE NAME: with ktime off, every cuEventRecord is the timers'.
only_api_records() {
    _a=$(api_records "$2")
    _e=$(fcount "$1" event_record)
    [ -n "$_a" ] && [ "$_e" = "$_a" ] && return 0
    echo "fake saw $_e cuEventRecord calls, the timers made '$_a'"
    return 1
}

# The kernels of app_api gpu and how long each takes (us).
gpu_kernels_exact() {
    samples_exact "$1" api_k 250 && samples_exact "$1" api_j 125
}

for how in linked preloaded linked_disabled preloaded_disabled; do
    case $how in
        linked) run=run_linked off= ;;
        preloaded) run=run_ktime off= ;;
        linked_disabled) run=run_linked off=KTIME_DISABLE=1 ;;
        preloaded_disabled) run=run_ktime off=KTIME_DISABLE=1 ;;
    esac
    # shellcheck disable=SC2086  # $off is one word or none
    set -- $off

    # --- the CPU timer ---
    $run cpu_$how "$@" KTIME_OUTPUT="$tmp/cpu_$how.json" "$E2E_BIN/app_api" cpu
    selftest_lines "$tmp/cpu_$how.out" "$how: "
    check "$how: app_api cpu exits 0" rc_is cpu_$how 0
    if [ -n "$off" ]; then
        check "$how: app_api cpu: nothing on stderr, no report (no CUDA used)" \
            sh -c "[ ! -s '$tmp/cpu_$how.err' ] && [ ! -e '$tmp/cpu_$how.json' ]"
    else
        # No CUDA used: the empty report asked for (KTIME_OUTPUT), and at most the line saying so.
        check "$how: app_api cpu: an empty report (no CUDA used), and only the line saying so" \
            sh -c "'$JCHECK' '$tmp/cpu_$how.json' 'kernels|len' == 0 &&
                   ! grep -v '^ktime: no CUDA launches seen' '$tmp/cpu_$how.err'"
    fi

    # --- the GPU timer ---
    $run gpu_$how "$@" KTIME_OUTPUT="$tmp/gpu_$how.json" FAKECUDA_COUNT_FILE="$tmp/gpu_$how.cnt" \
        "$E2E_BIN/app_api" gpu
    selftest_lines "$tmp/gpu_$how.out" "$how: "
    check "$how: app_api gpu exits 0" rc_is gpu_$how 0
    if [ -n "$off" ]; then
        check "$how: no report, nothing on stderr" \
            sh -c "[ ! -s '$tmp/gpu_$how.err' ] && [ ! -e '$tmp/gpu_$how.json' ]"
        check "$how: every event record the fake saw is the timers'" only_api_records "$tmp/gpu_$how.cnt" gpu_$how
    else
        rep=$tmp/gpu_$how.json
        check "$how: a report is written (ktime is in the process)" jc "$rep" schema_version == 2
        check "$how: the report's rows and launches are the program's kernels, no more" \
            counts_match "$rep" "$tmp/gpu_$how.cnt"
        check "$how: five kernels, none of them the timers' events" jc "$rep" 'kernels|len' == 5
        check "$how: every launch in exactly one bucket" accounting "$rep"
        check "$how: ktime's samples exact beside the timers' events (api_k 250 us, api_j 125 us)" \
            gpu_kernels_exact "$rep"
        check "$how: the fake's event records are ktime's two per timed launch plus the timers'" \
            events_with_api "$rep" "$tmp/gpu_$how.cnt" gpu_$how
    fi

    # --- no driver at first, then one dlopened ---
    $run nodrv_$how "$@" KTIME_OUTPUT="$tmp/nodrv_$how.json" "$E2E_BIN/app_api_nodrv"
    selftest_lines "$tmp/nodrv_$how.out" "$how: "
    check "$how: app_api_nodrv exits 0" rc_is nodrv_$how 0
    if [ -n "$off" ]; then
        check "$how: app_api_nodrv: no report" absent "$tmp/nodrv_$how.json"
    else
        check "$how: app_api_nodrv: ktime timed the kernels launched after the early KTIME_ERR_NO_DRIVER (5 of 10, 250 us)" \
            exact "$tmp/nodrv_$how.json" api_late 5 250
    fi
done

# Events that complete 20 ms after they are recorded: waiting and polling still give the
# exact intervals, ktime's too.
run_ktime gpu_delay FAKECUDA_COMPLETE_DELAY_US=20000 KTIME_OUTPUT="$tmp/gpu_delay.json" \
    FAKECUDA_COUNT_FILE="$tmp/gpu_delay.cnt" "$E2E_BIN/app_api" gpu
selftest_lines "$tmp/gpu_delay.out" "preloaded, events late: "
check "preloaded, events late: app_api gpu exits 0" rc_is gpu_delay 0
check "preloaded, events late: counts" counts_match "$tmp/gpu_delay.json" "$tmp/gpu_delay.cnt"
check "preloaded, events late: every launch in exactly one bucket" accounting "$tmp/gpu_delay.json"
check "preloaded, events late: the fake's event records are ktime's plus the timers'" \
    events_with_api "$tmp/gpu_delay.json" "$tmp/gpu_delay.cnt" gpu_delay
run_linked gpu_delay_off KTIME_DISABLE=1 FAKECUDA_COMPLETE_DELAY_US=20000 "$E2E_BIN/app_api" gpu
selftest_lines "$tmp/gpu_delay_off.out" "disabled, events late: "
check "disabled, events late: app_api gpu exits 0" rc_is gpu_delay_off 0

# --- the example -------------------------------------------------------------------------
# The fake's module images are text: a kernel of 125 us, launched 8 times.
printf 'example_spin=125000' >"$tmp/spin.mod"
run_linked example KTIME_OUTPUT="$tmp/example.json" "$EX_BIN/timer_example" \
    "$tmp/spin.mod" example_spin 8
check "timer_example runs" rc_is example 0
check "timer_example prints the GPU timer's exact time: 8 x 125 us = 1 ms" \
    grep -qx 'gpu 1.000 ms in all, 125.000 us per launch (CUDA events on the stream)' "$tmp/example.out"
check "timer_example prints the CPU timer's time" \
    grep -qE '^cpu [0-9]+\.[0-9]{3} ms \(launching and waiting, CLOCK_MONOTONIC\)$' "$tmp/example.out"
check "timer_example: ktime, linked in, times its kernel as usual (3 of 8 after warmup, 125 us)" \
    exact "$tmp/example.json" example_spin 3 125
check "timer_example: nothing on stderr but the line naming the report" \
    sh -c "! grep -v '^ktime: report written to $tmp/example.json\$' '$tmp/example.err'"
run_linked example_bad "$EX_BIN/timer_example" "$tmp/spin.mod" no_such_kernel
check "timer_example with a kernel the module lacks: exit 1 and a message" \
    sh -c "[ \"\$(cat '$tmp/example_bad.rc')\" = 1 ] && grep -q 'cuModuleGetFunction failed' '$tmp/example_bad.err'"

finish
