#!/bin/sh
# threads.sh - 16 threads x 100 000 launches, and 8 threads x 2000 in each stream mode: nothing
# lost, nothing counted twice, and on per-thread streams every sample still exact. TAP.
# How many launches get timed depends on how fast ktime's event pool grows during the
# burst (launches that find no free pair are dropped as pool_exhausted); that number is
# printed as a diagnostic, not asserted.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_threads

# 16 threads x 100 000 launches on their own streams (16 x 5000 under ThreadSanitizer, which
# is slower by far): every one of the 1.6 M launches counted once, in exactly one bucket. Most
# are dropped as pool_exhausted: the fake runs no queue-depth limit, so the CPU runs 12 s of
# simulated GPU work ahead and more pairs are in flight than KTIME_POOL_CAP allows.
if [ -n "${E2E_PRELOAD_FIRST:-}" ]; then per=5000; else per=100000; fi
rm -f "$tmp/s.cnt"
run_plain sb "$A" 16 $per --stream
run_ktime sk KTIME_OUTPUT="$tmp/s.json" FAKECUDA_COUNT_FILE="$tmp/s.cnt" "$A" 16 $per --stream
check "16 threads x $per: same exit status and stdout" same_run sb sk
check "16 threads x $per: nothing on stderr" empty "$tmp/sk.err"
check "16 threads x $per: every launch seen" jc "$tmp/s.json" totals.launches_seen == $((16 * per))
check "16 threads x $per: calls equal the fake's counts" counts_match "$tmp/s.json" "$tmp/s.cnt"
check "16 threads x $per: every launch in exactly one bucket" accounting "$tmp/s.json"
check "16 threads x $per: two events per timed launch" events_balanced "$tmp/s.json" "$tmp/s.cnt"
echo "# 16 threads x $per: timed $(jv "$tmp/s.json" totals.timed), dropped $(jv "$tmp/s.json" totals.dropped), in $(cat "$tmp/sk.ms") ms (bare $(cat "$tmp/sb.ms" 2>/dev/null || echo ?) ms)"

for mode in --stream --ptds "--ex --ptds" "--ex --stream"; do
    # shellcheck disable=SC2086
    run_plain b "$A" 8 2000 $mode
    rm -f "$tmp/t.cnt"
    # shellcheck disable=SC2086
    run_ktime k KTIME_OUTPUT="$tmp/t.json" FAKECUDA_COUNT_FILE="$tmp/t.cnt" "$A" 8 2000 $mode
    check "threads $mode: same exit status and stdout" same_run b k
    check "threads $mode: nothing on stderr" empty "$tmp/k.err"
    check "threads $mode: 16000 launches seen" jc "$tmp/t.json" totals.launches_seen == 16000
    check "threads $mode: calls equal the fake's counts" counts_match "$tmp/t.json" "$tmp/t.cnt"
    check "threads $mode: thr_a samples all exactly 125 us" samples_exact "$tmp/t.json" thr_a 125
    check "threads $mode: thr_b samples all exactly 250 us" samples_exact "$tmp/t.json" thr_b 250
    check "threads $mode: 5 warmup launches per kernel" \
        sh -c "'$JCHECK' '$tmp/t.json' 'kernels[mangled=thr_a].warmup_skipped' == 5 && '$JCHECK' '$tmp/t.json' 'kernels[mangled=thr_b].warmup_skipped' == 5"
    echo "# threads $mode: timed $(jv "$tmp/t.json" totals.timed) of 15990, dropped $(jv "$tmp/t.json" totals.dropped) ($(jv "$tmp/t.json" totals.dropped_reasons))"
    check "threads $mode: every launch in exactly one bucket" accounting "$tmp/t.json"
    check "threads $mode: two events per timed launch" events_balanced "$tmp/t.json" "$tmp/t.cnt"
done

# All threads on one legacy stream: intervals overlap other threads' kernels, so only the
# counts are exact.
run_plain b "$A" 8 2000 --legacy
rm -f "$tmp/t.cnt"
run_ktime k KTIME_OUTPUT="$tmp/t.json" FAKECUDA_COUNT_FILE="$tmp/t.cnt" "$A" 8 2000 --legacy
check "threads sharing the legacy stream: same exit status and stdout" same_run b k
check "threads sharing the legacy stream: calls equal the fake's counts" counts_match "$tmp/t.json" "$tmp/t.cnt"
check "threads sharing the legacy stream: every launch in exactly one bucket" accounting "$tmp/t.json"
check "threads sharing the legacy stream: no sample shorter than its kernel" \
    sh -c "'$JCHECK' '$tmp/t.json' 'kernels[mangled=thr_a].min_us' '>=' 125 && '$JCHECK' '$tmp/t.json' 'kernels[mangled=thr_b].min_us' '>=' 250"

# 8 threads launch the same 256 kernels in the same order: they meet at each kernel's first
# launches. With KTIME_WARMUP=1 the first is the warmup, and the next ones, from several
# threads at once, are the kernel's first in the context: one of them, not each, is first
# there (otherwise another became a second warmup, as if in a further context). (Totals
# only: accounting runs jcheck a few times per kernel.)
run_plain mb "$A" 8 1024 --kernels 256
run_ktime mk KTIME_OUTPUT="$tmp/m.json" KTIME_WARMUP=1 "$A" 8 1024 --kernels 256
check "threads meeting at 256 kernels' first launches: same exit status and stdout" same_run mb mk
check "threads meeting at 256 kernels' first launches: 8192 launches seen, 256 rows" \
    sh -c "'$JCHECK' '$tmp/m.json' totals.launches_seen == 8192 && '$JCHECK' '$tmp/m.json' 'kernels|len' == 256"
check "threads meeting at 256 kernels' first launches: one warmup launch per kernel, no more" \
    sh -c "'$JCHECK' '$tmp/m.json' 'kernels[].warmup_skipped|max' == 1 && '$JCHECK' '$tmp/m.json' totals.warmup_skipped == 256"

finish
