#!/bin/sh
# gate_memory.sh - launch gates asked for but impossible: no pinned memory for them (issue 14).
# The fake's FAKECUDA_HOSTALLOC_FAILS=N fails the first N cuMemHostAlloc calls. The report
# must say what happened: the text report's gate line gets "(KTIME_GATE=auto, but launch
# gates could not be set up in N of M contexts ...)"; the JSON report has
# launch_gate_requested and launch_gate_unavailable_contexts, and launch_gate_mode is "off"
# when no context got gates. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
D=$E2E_BIN/app_driver
fval() { awk -v k="$2" '$1 == k && NF == 2 { print $2 }' "$1"; }

# One context, no pinned memory: nothing gated, the report says gates are off, and why.
run_plain b "$A" k=125000:30
run_ktime j KTIME_OUTPUT="$tmp/j.json" KTIME_WARMUP=0 FAKECUDA_HOSTALLOC_FAILS=1 FAKECUDA_COUNT_FILE="$tmp/j.cnt" \
    "$A" k=125000:30
R=$tmp/j.json
check "no pinned memory: same exit status and stdout" same_run b j
check "no pinned memory: one warning says the context's launches are not gated" \
    sh -c "[ \"\$(grep -c '^ktime: warning: no pinned memory for launch gates' '$tmp/j.err')\" = 1 ] && [ \"\$(grep -c '^ktime: warning:' '$tmp/j.err')\" = 1 ]"
check "no pinned memory: no stream waits" test "$(fval "$tmp/j.cnt" stream_wait)" = 0
check "no pinned memory: all 30 timed exactly" exact "$R" k 30 125
check "no pinned memory: JSON launch_gate_mode is off" jc "$R" launch_gate_mode == off
check "no pinned memory: JSON launch_gate is false" jc "$R" launch_gate == false
check "no pinned memory: JSON launch_gate_requested is auto" jc "$R" launch_gate_requested == auto
check "no pinned memory: JSON launch_gate_unavailable_contexts is 1" jc "$R" launch_gate_unavailable_contexts == 1

run_ktime t KTIME_OUTPUT="$tmp/t.txt" KTIME_WARMUP=0 FAKECUDA_HOSTALLOC_FAILS=1 "$A" k=125000:30
check "no pinned memory, text: the gate line says off" \
    grep -q '^gate     off: a launch reaching an idle stream also counts its submission time$' "$tmp/t.txt"
check "no pinned memory, text: and why" \
    grep -q '^         (KTIME_GATE=auto, but launch gates could not be set up in 1 of 1 contexts: no pinned memory; their launches were not gated)$' "$tmp/t.txt"

# KTIME_GATE=1 asked for, the same.
run_ktime j1 KTIME_OUTPUT="$tmp/j1.json" KTIME_WARMUP=0 KTIME_GATE=1 FAKECUDA_HOSTALLOC_FAILS=1 "$A" k=125000:30
check "KTIME_GATE=1, no pinned memory: mode off, requested on, 1 context without gates" \
    sh -c "'$JCHECK' '$tmp/j1.json' launch_gate_mode == off && '$JCHECK' '$tmp/j1.json' launch_gate_requested == on && '$JCHECK' '$tmp/j1.json' launch_gate_unavailable_contexts == 1"

# Two devices, the first context's allocation fails, the second's succeeds: gates in one of
# two contexts; the mode stays auto and the report says 1 of 2.
run_plain b2 FAKECUDA_DEVICES=2 "$D" --devices 2 k_d=125000:20
run_ktime j2 KTIME_OUTPUT="$tmp/j2.json" KTIME_WARMUP=0 FAKECUDA_DEVICES=2 FAKECUDA_HOSTALLOC_FAILS=1 \
    FAKECUDA_COUNT_FILE="$tmp/j2.cnt" "$D" --devices 2 k_d=125000:20
R=$tmp/j2.json
check "one of two contexts without pinned memory: same exit status and stdout" same_run b2 j2
check "one of two contexts without pinned memory: mode auto, requested auto, 1 context without gates" \
    sh -c "'$JCHECK' '$R' launch_gate_mode == auto && '$JCHECK' '$R' launch_gate == true && '$JCHECK' '$R' launch_gate_requested == auto && '$JCHECK' '$R' launch_gate_unavailable_contexts == 1"
check "one of two contexts without pinned memory: some launches gated (in the other context)" \
    test "$(fval "$tmp/j2.cnt" stream_wait)" -gt 0
check "one of two contexts without pinned memory: every launch in exactly one bucket" accounting "$R"
run_ktime t2 KTIME_OUTPUT="$tmp/t2.txt" KTIME_WARMUP=0 FAKECUDA_DEVICES=2 FAKECUDA_HOSTALLOC_FAILS=1 \
    "$D" --devices 2 k_d=125000:20
check "one of two contexts without pinned memory, text: the gate line says auto, and 1 of 2" \
    sh -c "grep -q '^gate     auto: ' '$tmp/t2.txt' && grep -q '^         (KTIME_GATE=auto, but launch gates could not be set up in 1 of 2 contexts: no pinned memory; their launches were not gated)\$' '$tmp/t2.txt'"

# Pinned memory there: the JSON says so (requested auto, 0 contexts without gates), the text
# report has no such line.
run_ktime ok KTIME_OUTPUT="$tmp/ok.json" KTIME_WARMUP=0 "$A" k=125000:30
check "pinned memory there: mode auto, requested auto, 0 contexts without gates" \
    sh -c "'$JCHECK' '$tmp/ok.json' launch_gate_mode == auto && '$JCHECK' '$tmp/ok.json' launch_gate_requested == auto && '$JCHECK' '$tmp/ok.json' launch_gate_unavailable_contexts == 0"
run_ktime okt KTIME_OUTPUT="$tmp/ok.txt" KTIME_WARMUP=0 "$A" k=125000:30
check "pinned memory there, text: no 'could not be set up' line" sh -c "! grep -q 'could not be set up' '$tmp/ok.txt'"

# KTIME_GATE=0 with no pinned memory: nothing was asked for, nothing to say.
run_ktime j0 KTIME_OUTPUT="$tmp/j0.json" KTIME_WARMUP=0 KTIME_GATE=0 FAKECUDA_HOSTALLOC_FAILS=1 "$A" k=125000:30
check "KTIME_GATE=0: mode off, requested off, 0 contexts without gates, no warning" \
    sh -c "'$JCHECK' '$tmp/j0.json' launch_gate_mode == off && '$JCHECK' '$tmp/j0.json' launch_gate_requested == off && '$JCHECK' '$tmp/j0.json' launch_gate_unavailable_contexts == 0 && ! grep -q warning '$tmp/j0.err'"

finish
