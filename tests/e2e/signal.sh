#!/bin/sh
# signal.sh - a program ended by SIGTERM (left at its default action) still gets its report:
# ktime writes it from its own thread, then lets the signal end the program as it would
# have. The exit status is the signal's, as without ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# run_killed NAME ENV...: runs app_cudart with a 10 s sleep at the end, sends SIGTERM once
# its counts are printed, and records its exit status in $tmp/NAME.rc.
run_killed() {
    _n=$1
    shift
    env LD_LIBRARY_PATH="$FAKE_DIR" "$@" "$A" --sleep-ms 10000 k=125000:40 >"$tmp/$_n.out" 2>"$tmp/$_n.err" &
    _pid=$!
    _i=0
    while ! grep -q "^launches" "$tmp/$_n.out" 2>/dev/null && [ $_i -lt 100 ]; do
        sleep 0.05
        _i=$((_i + 1))
    done
    kill -TERM $_pid
    wait $_pid
    echo $? >"$tmp/$_n.rc"
}

run_killed bare
run_killed kt LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" KTIME_OUTPUT="$tmp/s.json" KTIME_WARMUP=0
check "SIGTERM without ktime: exit status 143" sh -c "[ \"\$(cat '$tmp/bare.rc')\" = 143 ]"
check "SIGTERM with ktime: the same exit status (143)" sh -c "[ \"\$(cat '$tmp/kt.rc')\" = 143 ]"
check "SIGTERM with ktime: same stdout" cmp -s "$tmp/bare.out" "$tmp/kt.out"
check "SIGTERM with ktime: the report was written" jc "$tmp/s.json"
check "SIGTERM with ktime: all 40 launches timed" exact "$tmp/s.json" k 40 125

# KTIME_SIGNALS=0: ktime leaves the signal alone; no report, same exit status.
run_killed off LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" KTIME_OUTPUT="$tmp/off.json" KTIME_SIGNALS=0
check "KTIME_SIGNALS=0: exit status 143" sh -c "[ \"\$(cat '$tmp/off.rc')\" = 143 ]"
check "KTIME_SIGNALS=0: no report" absent "$tmp/off.json"

finish
