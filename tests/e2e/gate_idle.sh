#!/bin/sh
# gate_idle.sh - the gate watchdog sleeps while no gate is in use, and the first gated launch
# after an idle spell wakes it (issue 14). Before, it looked at the gates every 5 ms for the
# whole run: about 200 passes per idle second. KTIME_LOG=debug prints at exit
# "ktime: debug: gate watchdog: N passes, M sleeps". TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# watchdog NAME MAX_PASSES MIN_SLEEPS: the debug line's counts are within the bounds.
watchdog() {
    _l=$(grep 'ktime: debug: gate watchdog: ' "$tmp/$1.err")
    _p=$(echo "$_l" | sed -n 's/.*gate watchdog: \([0-9]*\) passes, \([0-9]*\) sleeps.*/\1/p')
    _s=$(echo "$_l" | sed -n 's/.*gate watchdog: \([0-9]*\) passes, \([0-9]*\) sleeps.*/\2/p')
    echo "gate watchdog: ${_p:-?} passes, ${_s:-?} sleeps (want fewer than $2 passes, at least $3 sleeps)"
    [ -n "$_p" ] && [ -n "$_s" ] && [ "$_p" -lt "$2" ] && [ "$_s" -ge "$3" ]
}

fval() { awk -v k="$2" '$1 == k && NF == 2 { print $2 }' "$1"; }

# 20 gated launches, 1 s idle, 20 more, then 200 ms idle before the exit. Every launch but
# the first is gated (KTIME_GATE=1): the watchdog sleeps after the first 20 (sleep 1), is woken
# by the 21st, sleeps again in the last 200 ms (sleep 2). Awake all the time, it would make
# about 250 passes.
run_plain b "$A" --idle-after 20 1000 --sleep-ms 200 k=125000:40
run_ktime k KTIME_OUTPUT="$tmp/i.json" KTIME_WARMUP=0 KTIME_GATE=1 KTIME_LOG=debug FAKECUDA_COUNT_FILE="$tmp/i.cnt" \
    "$A" --idle-after 20 1000 --sleep-ms 200 k=125000:40
check "idle second: same exit status and stdout" same_run b k
check "idle second: the watchdog slept, was woken, slept again (fewer than 40 passes, at least 2 sleeps)" \
    watchdog k 40 2
check "idle second: every launch but the first gated, before and after the idle spell" \
    test "$(fval "$tmp/i.cnt" stream_wait)" = 39
check "idle second: all 40 timed exactly" exact "$tmp/i.json" k 40 125
check "idle second: no gate held open by the watchdog" jc "$tmp/i.json" totals.dropped_reasons.gate_timeout == 0
# The debug line is how this is seen: say what it was.
echo "# $(grep 'gate watchdog: ' "$tmp/k.err" | sed 's/^ktime: debug: //')"

# The first gated launch after the idle spell blocks in the driver behind its own gate (a
# "lazy" kernel of the fake, like a module loaded at launch): only the watchdog can let it
# go, so it must have been woken. Launch order: k, lazyk, k, (1 s idle), lazyk, then 18 k.
run_plain b2 "$A" --idle-after 3 1000 --sleep-ms 200 k=125000:20 lazyk=125000:2
run_ktime k2 KTIME_OUTPUT="$tmp/l.json" KTIME_WARMUP=0 KTIME_GATE=1 KTIME_LOG=debug FAKECUDA_COUNT_FILE="$tmp/l.cnt" \
    "$A" --idle-after 3 1000 --sleep-ms 200 k=125000:20 lazyk=125000:2
check "blocked launch after an idle second: same exit status and stdout" same_run b2 k2
check "blocked launch after an idle second: the fake saw it blocked behind its gate" \
    test "$(fval "$tmp/l.cnt" lazy_blocked)" -ge 1
check "blocked launch after an idle second: the woken watchdog let it go (no timeout in the fake)" \
    test "$(fval "$tmp/l.cnt" lazy_timeout)" = 0
check "blocked launch after an idle second: its sample dropped as gate_timeout" \
    jc "$tmp/l.json" totals.dropped_reasons.gate_timeout == 1
check "blocked launch after an idle second: k's 20 launches timed exactly" exact "$tmp/l.json" k 20 125
check "blocked launch after an idle second: the watchdog slept and was woken (fewer than 40 passes, at least 2 sleeps)" \
    watchdog k2 40 2
check "blocked launch after an idle second: every launch in exactly one bucket" accounting "$tmp/l.json"
echo "# $(grep 'gate watchdog: ' "$tmp/k2.err" | sed 's/^ktime: debug: //')"

# The same seen from outside, without ktime's own counters: the watchdog thread's voluntary
# context switches (each 5 ms nap is one) over half a second of the program's idle spell.
wakeups() { # PID: the ktime-gatewatch thread's voluntary context switches so far
    for _t in /proc/"$1"/task/*; do
        if [ "$(cat "$_t/comm" 2>/dev/null)" = ktime-gatewatch ]; then
            awk '/^voluntary_ctxt_switches:/ { print $2 }' "$_t/status"
            return
        fi
    done
}
env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" KTIME_OUTPUT="$tmp/o.json" \
    KTIME_WARMUP=0 KTIME_GATE=1 "$A" --idle-after 20 2000 k=125000:40 >"$tmp/o.out" 2>"$tmp/o.err" &
opid=$!
(sleep 30 && kill -9 "$opid") >/dev/null 2>&1 &
gpid=$!
sleep 0.5
w0=$(wakeups "$opid")
sleep 0.5
w1=$(wakeups "$opid")
wait "$opid"
echo "$?" >"$tmp/o.rc"
kill "$gpid" 2>/dev/null
check "idle, seen from outside: the program ran" rc_is o 0
check "idle, seen from outside: the watchdog thread woke at most twice in 500 ms (was ${w0:-?} then ${w1:-?}; awake every 5 ms would be 100)" \
    sh -c "[ -n '$w0' ] && [ -n '$w1' ] && [ \$(($w1 - $w0)) -le 2 ]"

finish
