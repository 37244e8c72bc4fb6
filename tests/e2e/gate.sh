#!/bin/sh
# gate.sh - launch gates: the stream waits on a host word before each timed launch's start
# event and ktime opens it once the launch is queued; a launch that blocks in the driver
# behind its own gate (a "lazy..." kernel of the fake, like a module loaded at launch) is
# freed by the gate watchdog, and its sample is dropped as gate_timeout. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
fval() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# KTIME_GATE=auto (the default) on a stream the GPU keeps up with (the fake completes events
# at once): every timed launch is gated, every gate opened, samples exact.
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

# KTIME_GATE=auto on a busy stream (events complete 100 ms after recording: the GPU is behind).
# The first launch is never gated; launches 2..18 are, and the 16th gated launch with a
# previous one to look at (launch 18) finds that one still pending; 19..60 go ungated, each
# checked to be queued before its start event fired: all 60 timed exactly.
run_ktime ka KTIME_OUTPUT="$tmp/a.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=100000 \
    FAKECUDA_COUNT_FILE="$tmp/a.cnt" "$A" k=125000:60
check "auto, busy stream: same exit status and stdout" same_run b ka
check "auto, busy stream: 17 launches gated" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/a.cnt')\" = 17 ]"
check "auto, busy stream: all 60 timed exactly" exact "$tmp/a.json" k 60 125
check "auto, busy stream: 43 of them ungated (42 checked, and the first)" jc "$tmp/a.json" totals.ungated == 43
check "auto, busy stream: report says auto" jc "$tmp/a.json" launch_gate_mode == auto
# (the exit drain also queries from the program's thread, after main returns: at least)
check "auto, busy stream: at least 43 queries on the program's thread (1 probe, 42 checks)" \
    sh -c "[ \"\$(awk '\$1 == \"event_query_app\" { print \$2 }' '$tmp/a.cnt')\" -ge 43 ]"

# The same, but the GPU catches up after 60 event records (30 launches): launch 31 goes
# ungated and finds its start event already fired, so its sample is dropped (gate_late) and
# the stream is gated again: launches 32..60 gated (their probes find the GPU idle).
run_ktime kc KTIME_OUTPUT="$tmp/c.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=100000 \
    FAKECUDA_COMPLETE_DELAY_RECORDS=60 FAKECUDA_COUNT_FILE="$tmp/c.cnt" "$A" k=125000:60
check "auto, stream goes idle: same exit status and stdout" same_run b kc
check "auto, stream goes idle: 17 + 29 launches gated" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/c.cnt')\" = 46 ]"
check "auto, stream goes idle: one sample dropped as gate_late" jc "$tmp/c.json" totals.dropped_reasons.gate_late == 1
check "auto, stream goes idle: the other 59 timed exactly" exact "$tmp/c.json" k 59 125
check "auto, stream goes idle: 13 ungated (12 checked, and the first)" jc "$tmp/c.json" totals.ungated == 13
check "auto, stream goes idle: every launch in exactly one bucket" accounting "$tmp/c.json"

# auto on a stream the GPU keeps up with: the probes back off. 600 launches, 599 gated; the
# previous stop event is looked at by launches 18, 50, 114, 242 and 498 (after 16, 32, 64,
# 128 and 256 gated launches), each finding the GPU idle: 5 queries, not 37 (one every 16),
# plus the few the exit drain may make from the program's thread after main returns.
run_ktime kb KTIME_OUTPUT="$tmp/b.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/b.cnt" "$A" k=125000:600
check "auto, idle stream: 599 launches gated" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/b.cnt')\" = 599 ]"
check "auto, idle stream: the probes back off to every 256th launch (5 to 15 queries)" \
    sh -c "q=\$(awk '\$1 == \"event_query_app\" { print \$2 }' '$tmp/b.cnt'); [ \"\$q\" -ge 5 ] && [ \"\$q\" -le 15 ]"
check "auto, idle stream: all 600 timed exactly" exact "$tmp/b.json" k 600 125

# auto, a busy stream the program synchronizes every 30 launches: the first launch after the
# synchronize finds the stream's previous stop event completed and is gated (no gate_late; an
# ungated launch there would, on a GPU, find its start event fired and lose the sample every
# time). Launches 2..18 gated, 19..30 ungated, 31 gated after the synchronize, then 16 more
# gated launches (32..47; launch 47's probe finds launch 46 pending), 48..60 ungated.
run_plain bs "$A" --sync-every 30 k=125000:60
run_ktime ks KTIME_OUTPUT="$tmp/s.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=100000 \
    FAKECUDA_COUNT_FILE="$tmp/s.cnt" "$A" --sync-every 30 k=125000:60
check "auto, synchronize in a busy phase: same exit status and stdout" same_run bs ks
check "auto, synchronize in a busy phase: the launch after it gated again (17 + 17 gated)" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/s.cnt')\" = 34 ]"
check "auto, synchronize in a busy phase: all 60 timed exactly, 26 ungated" \
    sh -c "'$JCHECK' '$tmp/s.json' totals.ungated == 26 && '$JCHECK' '$tmp/s.json' totals.dropped == 0"
check "auto, synchronize in a busy phase: samples exact" exact "$tmp/s.json" k 60 125

# KTIME_GATE=1: every launch gated, busy stream or not.
run_ktime k1 KTIME_OUTPUT="$tmp/g1.json" KTIME_WARMUP=0 KTIME_GATE=1 FAKECUDA_COMPLETE_DELAY_US=100000 \
    FAKECUDA_COUNT_FILE="$tmp/g1.cnt" "$A" k=125000:60
check "KTIME_GATE=1, busy stream: every launch after the first gated" \
    sh -c "[ \"\$(awk '\$1 == \"stream_wait\" { print \$2 }' '$tmp/g1.cnt')\" = 59 ]"
check "KTIME_GATE=1, busy stream: all 60 timed exactly, 1 ungated (the first)" \
    sh -c "'$JCHECK' '$tmp/g1.json' totals.ungated == 1 && '$JCHECK' '$tmp/g1.json' totals.timed == 60"
check "KTIME_GATE=1: report says on" jc "$tmp/g1.json" launch_gate_mode == on

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
