#!/bin/sh
# quantiles.sh - the median, p90 and p99 of each kernel's samples, and the histogram they come
# from, against the exact quantiles of the fake driver's known durations; with the events
# timer and with the CUPTI timer (fake CUPTI). A kernel with fewer than 10 samples is flagged.
# TAP.
. "$(dirname "$0")/lib.sh"
need_ktime
CUPTI=$FAKE_DIR/libcupti.so.13
[ -f "$CUPTI" ] || e2e_fail_setup "fake CUPTI not built: $CUPTI (set FAKE_DIR)"
A=$E2E_BIN/app_cudart
DURS=1000,2000,3000,4000,5000,6000,7000,8000,9000,100000
PLAN="kq=$DURS:205 kf=500000:8"

# exact_q DURS N WARMUP Q: the sample of rank floor(Q * (n - 1)) of launches WARMUP..N-1
# cycling through DURS (ns), in us.
exact_q() {
    awk -v durs="$1" -v n="$2" -v w="$3" -v q="$4" 'BEGIN {
        k = split(durs, d, ",")
        for (i = w; i < n; i++) v[++c] = d[(i % k) + 1] / 1000.0
        for (i = 2; i <= c; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        printf "%.6f\n", v[int(q * (c - 1)) + 1]
    }'
}

# quantiles LABEL REPORT: kq's p50, p90 and p99 within 1 % of the exact ones; the histogram
# holds every sample; kf (3 samples) flagged, kq not.
quantiles() {
    for _q in 50 90 99; do
        _x=$(exact_q $DURS 205 5 "0.$_q")
        _tol=$(awk -v x="$_x" 'BEGIN { printf "%.6f", x / 100 }')
        check "$1: kq p$_q within 1 % of the exact $_x us" jc "$2" "kernels[mangled=kq].p${_q}_us" '~' "$_x" "$_tol"
    done
    check "$1: kq's histogram holds its 200 samples" jc "$2" 'kernels[mangled=kq].histogram.buckets[][2]|sum' == 200
    check "$1: kq's histogram: 10 buckets, one per duration" jc "$2" 'kernels[mangled=kq].histogram.buckets|len' == 10
    check "$1: kq has enough samples" jc "$2" 'kernels[mangled=kq].few_samples' == false
    check "$1: kf, 3 samples, is flagged" jc "$2" 'kernels[mangled=kf].few_samples' == true
    check "$1: kf's quantiles are its one duration" jc "$2" 'kernels[mangled=kf].p99_us' == 500
}

run_ktime ev KTIME_OUTPUT="$tmp/ev.json" "$A" $PLAN
check "events: the program ran" sh -c "[ \$(cat '$tmp/ev.rc') = 0 ]"
check "events: report is valid JSON" jc "$tmp/ev.json"
quantiles events "$tmp/ev.json"

run_ktime cu KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/cu.json" "$A" $PLAN
check "cupti: the CUPTI timer was used" jc "$tmp/cu.json" timer.used == cupti
quantiles cupti "$tmp/cu.json"

# KTIME_DUMP_SAMPLES: every sample of the same run, one line each; the report's quantiles
# agree with the exact ones of the dumped samples.
# dump_q FILE KERNEL Q: the sample of rank floor(Q * (n - 1)) of KERNEL's dumped samples.
dump_q() {
    awk -F '\t' -v k="$2" '$1 == k { print $3 }' "$1" | sort -g |
        awk -v q="$3" '{ v[NR] = $1 } END { printf "%.6f\n", v[int(q * (NR - 1)) + 1] }'
}
for t in events cupti; do
    run_ktime d$t KTIME_TIMER=$t KTIME_CUPTI_LIB="$CUPTI" KTIME_DUMP_SAMPLES="$tmp/d$t-%p.txt" \
        KTIME_OUTPUT="$tmp/d$t.json" "$A" $PLAN
    f=$(ls "$tmp"/d$t-*.txt 2>/dev/null | head -n 1)
    check "$t, KTIME_DUMP_SAMPLES: a file named with the pid (%p)" test -n "$f"
    check "$t, KTIME_DUMP_SAMPLES: one header line" sh -c "head -n 1 '$f' | grep -q '^# ktime samples of pid [0-9]*: kernel'"
    check "$t, KTIME_DUMP_SAMPLES: a line per timed sample of kq (200)" sh -c "[ \$(grep -c '^kq	0	' '$f') = 200 ]"
    check "$t, KTIME_DUMP_SAMPLES: a line per timed sample of kf (3)" sh -c "[ \$(grep -c '^kf	0	' '$f') = 3 ]"
    for _q in 50 90 99; do
        _x=$(dump_q "$f" kq "0.$_q")
        _tol=$(awk -v x="$_x" 'BEGIN { printf "%.6f", x / 100 }')
        check "$t: kq's p$_q within 1 % of the dumped samples' ($_x us)" jc "$tmp/d$t.json" "kernels[mangled=kq].p${_q}_us" '~' "$_x" "$_tol"
    done
done
run_ktime dbad KTIME_DUMP_SAMPLES=/nonexistent/dir/d.txt KTIME_OUTPUT="$tmp/dbad.json" "$A" $PLAN
check "KTIME_DUMP_SAMPLES unwritable: one warning, the report as usual" sh -c \
    "grep -q '^ktime: warning: KTIME_DUMP_SAMPLES' '$tmp/dbad.err' && [ \$(grep -c '' '$tmp/dbad.err') = 1 ] && '$JCHECK' '$tmp/dbad.json' totals.timed == 203"

run_ktime tx KTIME_OUTPUT="$tmp/tx.txt" "$A" $PLAN
med=$(exact_q $DURS 205 5 0.5)
check "text: Med us and p99 us columns after Mean us" grep -Eq '^ +Time% +Total ms +Calls +Warmup +Timed +Mean us +Med us +p99 us +Min us' "$tmp/tx.txt"
check "text: kq's median is printed (within 1 % of $med)" sh -c "awk '\$NF == \"kq\" { m = \$7 } END { exit !(m >= $med * 0.99 && m <= $med * 1.01) }' '$tmp/tx.txt'"
check "text: kf is marked 'few samples'" grep -Eq ' kf \(few samples\)$' "$tmp/tx.txt"

finish
