#!/bin/sh
# gate.sh - launch gates: the stream waits on a host word before each timed launch's start
# event and ktime opens it once the launch is queued; a launch that blocks in the driver
# behind its own gate (a "lazy..." kernel of the fake, like a module loaded at launch) is
# freed by the gate watchdog, and its sample is dropped as gate_timeout. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
fval() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# Ordinary kernels: every timed launch is gated, every gate opened, samples exact.
run_plain b "$A" k=125000:60
run_ktime k KTIME_OUTPUT="$tmp/g.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/g.cnt" "$A" k=125000:60
check "gated: same exit status and stdout" same_run b k
check "gated: every launch after the first waited on a gate" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/g.cnt')\" = 59 ]"
check "gated: all 60 timed exactly, none dropped or incomplete" exact "$tmp/g.json" k 60 125
check "gated: nothing left incomplete" jc "$tmp/g.json" totals.incomplete_at_exit == 0

# A kernel's first launch in each new context is not gated either (after a reset the module
# loads again there, and that waits for the stream): 3 rounds of 20, 3 ungated.
run_plain rb "$E2E_BIN/app_reset" 3 20 release
run_ktime rk KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/r.cnt" "$E2E_BIN/app_reset" 3 20 release
check "new contexts: same exit status and stdout" same_run rb rk
check "new contexts: every launch but the first in each context waited on a gate" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/r.cnt')\" = 57 ]"
check "new contexts: all 60 timed exactly" exact "$tmp/r.json" k 60 125

# With a warmup, every timed launch is gated, the first one after the warmup included.
run_ktime kw KTIME_OUTPUT="$tmp/gw.json" KTIME_WARMUP=3 FAKECUDA_COUNT_FILE="$tmp/gw.cnt" "$A" k=125000:60
check "warmup 3: all 57 timed launches waited on a gate" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/gw.cnt')\" = 57 ]"
check "warmup 3: 57 timed exactly" exact "$tmp/gw.json" k 57 125

# KTIME_GATE=0: no stream waits at all, same numbers.
run_ktime k0 KTIME_OUTPUT="$tmp/g0.json" KTIME_WARMUP=0 KTIME_GATE=0 FAKECUDA_COUNT_FILE="$tmp/g0.cnt" \
    "$A" k=125000:60
check "KTIME_GATE=0: no stream waits" sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/g0.cnt')\" = 0 ]"
check "KTIME_GATE=0: all 60 timed exactly" exact "$tmp/g0.json" k 60 125

# A kernel whose launch waits for its stream: without the watchdog this deadlocks.
run_plain b2 "$A" lazyk=125000:6
start=$(date +%s)
run_ktime k2 KTIME_OUTPUT="$tmp/l.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/l.cnt" "$A" lazyk=125000:6
took=$(( $(date +%s) - start ))
R=$tmp/l.json
check "blocked launch: same exit status and stdout" same_run b2 k2
check "blocked launch: finished in seconds, not stuck (took ${took}s)" test "$took" -le 2
check "blocked launch: the fake saw launches blocked behind a gate" \
    sh -c "[ \"\$(awk '\$1 == \"lazy_blocked\" { print \$2 }' '$tmp/l.cnt')\" -ge 1 ]"
check "blocked launch: no launch timed out in the fake" \
    sh -c "[ \"\$(awk '\$1 == \"lazy_timeout\" { print \$2 }' '$tmp/l.cnt')\" = 0 ]"
check "blocked launch: the first launch is never gated, so it is timed" jc "$R" 'kernels[mangled=lazyk].timed' '>=' 1
check "blocked launch: the others dropped as gate_timeout" jc "$R" totals.dropped_reasons.gate_timeout == 5
check "blocked launch: every launch in exactly one bucket" accounting "$R"

finish
