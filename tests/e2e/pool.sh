#!/bin/sh
# pool.sh - slow-completing events: a background drain, and a small pool that overflows.
# FAKECUDA_COMPLETE_DELAY_US makes each event complete that long after it is recorded. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# Events complete 2 ms late; the program never synchronises: all must still be timed.
# Every launch gated (KTIME_GATE=1): with the auto gate, a launch whose thread is preempted
# for 2 ms between its start event and its check finds the start event fired, and drops the
# sample (gate_late), as it must; this test is about the drain.
run_plain b FAKECUDA_COMPLETE_DELAY_US=2000 "$A" --no-sync --no-unload k=125000:200
run_ktime k KTIME_OUTPUT="$tmp/d.json" KTIME_WARMUP=0 KTIME_GATE=1 FAKECUDA_COMPLETE_DELAY_US=2000 FAKECUDA_COUNT_FILE="$tmp/d.cnt" \
    "$A" --no-sync --no-unload k=125000:200
check "late events: same exit status and stdout" same_run b k
check "late events: all 200 timed exactly" exact "$tmp/d.json" k 200 125
check "late events: none dropped, none incomplete" \
    sh -c "'$JCHECK' '$tmp/d.json' totals.dropped == 0 && '$JCHECK' '$tmp/d.json' totals.incomplete_at_exit == 0"
check "late events: counts match the fake" counts_match "$tmp/d.json" "$tmp/d.cnt"

# The same with the program synchronising after each launch (events complete while it runs).
run_ktime k2 KTIME_OUTPUT="$tmp/e.json" KTIME_WARMUP=0 FAKECUDA_COMPLETE_DELAY_US=500 "$A" --sync-each k=125000:100
check "late events, synchronised program: all 100 timed exactly" exact "$tmp/e.json" k 100 125

# Pool of 4 pairs; events complete 300 ms late, so the 5th launch in flight finds no pair.
run_plain b3 FAKECUDA_COMPLETE_DELAY_US=300000 "$A" --no-sync k=125000:50
run_ktime k3 KTIME_OUTPUT="$tmp/p.json" KTIME_WARMUP=0 KTIME_POOL_CAP=4 FAKECUDA_COMPLETE_DELAY_US=300000 \
    FAKECUDA_COUNT_FILE="$tmp/p.cnt" "$A" --no-sync k=125000:50
R=$tmp/p.json
check "pool exhausted: same exit status and stdout" same_run b3 k3
check "pool exhausted: nothing on stderr" empty "$tmp/k3.err"
check "pool exhausted: some launches dropped for pool_exhausted" jc "$R" totals.dropped_reasons.pool_exhausted '>' 0
check "pool exhausted: some launches timed" jc "$R" 'kernels[mangled=k].timed' '>' 0
check "pool exhausted: at most 4 pairs in flight before the first completes" jc "$R" 'kernels[mangled=k].timed' '<=' 4
check "pool exhausted: the timed ones are exact" \
    sh -c "'$JCHECK' '$R' 'kernels[mangled=k].min_us' == 125 && '$JCHECK' '$R' 'kernels[mangled=k].max_us' == 125"
check "pool exhausted: none lost (calls = timed + dropped + warmup_skipped)" \
    sh -c "c=\$('$JCHECK' '$R' 'kernels[mangled=k].calls'); t=\$('$JCHECK' '$R' 'kernels[mangled=k].timed'); d=\$('$JCHECK' '$R' 'kernels[mangled=k].dropped'); w=\$('$JCHECK' '$R' 'kernels[mangled=k].warmup_skipped'); [ \"\$c\" = 50 ] && [ \$((t + d + w)) = 50 ] || { echo \"calls \$c timed \$t dropped \$d warmup \$w\"; exit 1; }"
check "pool exhausted: every launch in exactly one bucket" accounting "$R"
check "pool exhausted: the exit wait collected the pending pairs" jc "$R" totals.incomplete_at_exit == 0
check "pool exhausted: dropped launches recorded no events" events_balanced "$R" "$tmp/p.cnt"

finish
