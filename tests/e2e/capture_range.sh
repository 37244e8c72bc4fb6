#!/bin/sh
# capture_range.sh - KTIME_CAPTURE=profiler-api (issue 15): only launches between cuProfilerStart and
# cuProfilerStop are timed, the others counted as outside the range (after their warmup,
# which launches anywhere use up); the counts against the fake's; bad values. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart

# Launches alternate k_a, k_b (indices 0, 1, 2, ...): two ranges, [10, 20) and [30, 40).
run_plain b FAKECUDA_COUNT_FILE="$tmp/b.cnt" "$A" --profiler 10:20 --profiler 30:40 k_a=125000:25 k_b=250000:25
run_ktime k KTIME_CAPTURE=profiler-api KTIME_WARMUP=2 KTIME_OUTPUT="$tmp/r.json" \
    FAKECUDA_COUNT_FILE="$tmp/k.cnt" "$A" --profiler 10:20 --profiler 30:40 k_a=125000:25 k_b=250000:25
check "two ranges: same exit status and stdout" same_run b k
check "two ranges: nothing on stderr" empty "$tmp/k.err"
check "two ranges: every launch in one bucket" accounting "$tmp/r.json"
check "two ranges: calls are the fake's" counts_match "$tmp/r.json" "$tmp/k.cnt"
for k in k_a:125 k_b:250; do
    n=${k%%:*}
    check "$n: 10 timed (the 20 launches inside, half each), each exact" exact "$tmp/r.json" "$n" 10 "${k#*:}"
    check "$n: warmup 2 (its first launches, outside the range)" jc "$tmp/r.json" "kernels[mangled=$n].warmup_skipped" == 2
    check "$n: 13 outside the range" jc "$tmp/r.json" "kernels[mangled=$n].outside_range" == 13
done
check "two ranges: totals.outside_range 26" jc "$tmp/r.json" totals.outside_range == 26
check "two ranges: starts are the fake's cuProfilerStart calls" jc "$tmp/r.json" capture.starts == "$(fcount "$tmp/k.cnt" profiler_start)"
check "two ranges: stops are the fake's cuProfilerStop calls" jc "$tmp/r.json" capture.stops == "$(fcount "$tmp/k.cnt" profiler_stop)"
check "two ranges: the fake saw 2 of each" sh -c "[ $(fcount "$tmp/k.cnt" profiler_start) = 2 ] && [ $(fcount "$tmp/k.cnt" profiler_stop) = 2 ]"
check "two ranges: 2 ranges, closed at exit" sh -c "'$JCHECK' '$tmp/r.json' capture.ranges == 2 && '$JCHECK' '$tmp/r.json' capture.open_at_exit == false && '$JCHECK' '$tmp/r.json' capture.mode == profiler-api"
check "two ranges: events only inside" events_balanced "$tmp/r.json" "$tmp/k.cnt"

# The text report: the header line and the rows' counts; CSV: the column.
run_ktime t KTIME_CAPTURE=profiler-api KTIME_WARMUP=2 "$A" --profiler 10:20 --profiler 30:40 k_a=125000:25 k_b=250000:25
check "text: a range line in the header" grep -q '^capture  KTIME_CAPTURE=profiler-api: only launches between cuProfilerStart and cuProfilerStop are timed;' "$tmp/t.err"
check "text: 2 ranges (2 starts, 2 stops)" grep -q '^         2 ranges (2 starts, 2 stops)$' "$tmp/t.err"
check "text: each row says 13 outside range" sh -c "[ \$(grep -c '(13 outside range)' '$tmp/t.err') = 2 ]"
check "text: the footer counts them" grep -q '^launches 50 seen: 20 timed, 26 outside range, 4 warmup,' "$tmp/t.err"
run_ktime c KTIME_CAPTURE=profiler-api KTIME_WARMUP=2 KTIME_OUTPUT="$tmp/r.csv" "$A" --profiler 10:20 --profiler 30:40 k_a=125000:25 k_b=250000:25
check "CSV: outside_range, before the shape columns, 13 per kernel" \
    sh -c "head -n 1 '$tmp/r.csv' | tr -d '\r' | grep -q ',outside_range,grid,block,shared_bytes,paused,sampled_1_in\$' && [ \$(tr -d '\r' <'$tmp/r.csv' | awk -F, 'NR > 1 && \$(NF - 5) == 13' | wc -l) = 2 ]"

# No start at all: nothing timed. A range left open: timed to the end.
run_ktime none KTIME_CAPTURE=profiler-api KTIME_OUTPUT="$tmp/none.json" "$A" k=125000:30
check "no cuProfilerStart: nothing timed" jc "$tmp/none.json" totals.timed == 0
check "no cuProfilerStart: all but warmup outside the range" jc "$tmp/none.json" 'kernels[mangled=k].outside_range' == 25
check "no cuProfilerStart: 0 ranges" jc "$tmp/none.json" capture.ranges == 0
run_ktime open KTIME_CAPTURE=profiler-api KTIME_OUTPUT="$tmp/open.json" "$A" --profiler 20:-1 k=125000:30
check "a range left open: timed to the end" exact "$tmp/open.json" k 10 125
check "a range left open: 15 outside (after 5 warmup)" jc "$tmp/open.json" 'kernels[mangled=k].outside_range' == 15
check "a range left open: open_at_exit" jc "$tmp/open.json" capture.open_at_exit == true
# Warmup is used up by launches anywhere: a steady-state range is timed from its first launch.
run_ktime ss KTIME_CAPTURE=profiler-api KTIME_OUTPUT="$tmp/ss.json" "$A" --profiler 10:20 k=125000:30
check "a range after warmup: all 10 launches in it timed" exact "$tmp/ss.json" k 10 125
check "a range after warmup: 5 warmup, 15 outside" sh -c "'$JCHECK' '$tmp/ss.json' 'kernels[mangled=k].warmup_skipped' == 5 && '$JCHECK' '$tmp/ss.json' 'kernels[mangled=k].outside_range' == 15"
# A start inside a range opens nothing new.
run_ktime twice KTIME_CAPTURE=profiler-api KTIME_OUTPUT="$tmp/tw.json" "$A" --profiler 10:30 --profiler 20:30 k=125000:30
check "start twice, stop once: 2 starts, 1 range, 20 timed" sh -c "'$JCHECK' '$tmp/tw.json' capture.starts == 2 && '$JCHECK' '$tmp/tw.json' capture.ranges == 1 && '$JCHECK' '$tmp/tw.json' totals.timed == 20"

# Without KTIME_CAPTURE the profiler calls change nothing.
run_ktime off KTIME_OUTPUT="$tmp/off.json" "$A" --profiler 10:20 k=125000:30
check "KTIME_CAPTURE unset: every launch after warmup timed" exact "$tmp/off.json" k 25 125
check "KTIME_CAPTURE unset: range null, nothing outside" sh -c "'$JCHECK' '$tmp/off.json' capture == null && '$JCHECK' '$tmp/off.json' totals.outside_range == 0"

# Bad values: a warning, and every launch timed.
for v in bogus '' 'nvtx:'; do
    run_ktime bad KTIME_CAPTURE="$v" KTIME_OUTPUT="$tmp/bad.json" "$A" --profiler 10:20 k=125000:30
    check "KTIME_CAPTURE='$v': one warning naming it" sh -c "[ \$(wc -l <'$tmp/bad.err') = 1 ] && grep -q '^ktime: warning: KTIME_CAPTURE=' '$tmp/bad.err'"
    check "KTIME_CAPTURE='$v': every launch timed" exact "$tmp/bad.json" k 25 125
done
check "KTIME_CAPTURE=nvtx: (no NAME): said to name no range" grep -q 'names no range' "$tmp/bad.err"

# With CUPTI (the fake libcupti): each launch made inside the range carries ktime's external
# correlation id to its records; the others' records are those launches, outside the range.
run_ktime cupti KTIME_CAPTURE=profiler-api KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" KTIME_WARMUP=2 KTIME_OUTPUT="$tmp/cu.json" \
    FAKECUDA_COUNT_FILE="$tmp/cu.cnt" "$A" --profiler 10:20 --profiler 30:40 k_a=125000:25 k_b=250000:25
check "KTIME_TIMER=cupti: same exit status and stdout, nothing on stderr" sh -c "[ \$(cat '$tmp/cupti.rc') = \$(cat '$tmp/b.rc') ] && cmp -s '$tmp/b.out' '$tmp/cupti.out' && [ ! -s '$tmp/cupti.err' ]"
check "KTIME_TIMER=cupti: timed by CUPTI, the range kept" sh -c "'$JCHECK' '$tmp/cu.json' timer.used == cupti && '$JCHECK' '$tmp/cu.json' capture.mode == profiler-api && '$JCHECK' '$tmp/cu.json' capture.ranges == 2"
check "KTIME_TIMER=cupti: every launch in one bucket" accounting "$tmp/cu.json"
for k in k_a:125 k_b:250; do
    n=${k%%:*}
    check "KTIME_TIMER=cupti: $n: 10 timed, each exact, as with events" exact "$tmp/cu.json" "$n" 10 "${k#*:}"
    check "KTIME_TIMER=cupti: $n: warmup 2, 13 outside the range" sh -c "'$JCHECK' '$tmp/cu.json' 'kernels[mangled=$n].warmup_skipped' == 2 && '$JCHECK' '$tmp/cu.json' 'kernels[mangled=$n].outside_range' == 13"
done

finish
