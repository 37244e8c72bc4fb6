#!/bin/sh
# shutdown.sh - launches other threads make while the report is being written (issue 14):
# counted per kernel as dropped (shutdown), and every launch still in exactly one bucket.
# Four threads launch back to back while main calls exit(); nothing is synchronised. TAP.
#
# What can be asserted against the fake's counts (which freeze when the fake's own exit
# handler, run after ktime's, deinitializes it):
#   - every launch that had returned when exit() began is in the report (the program notes
#     them in an exit handler that runs before ktime's);
#   - the report never has more of a kernel than the fake saw, but for one launch per
#     launching thread: ktime counts a launch when it enters the wrapper, the fake when it
#     gets there, and a thread descheduled in between may reach the fake only after it was
#     deinitialized (the launch fails, uncounted there);
#   - the fake counts more than the report: launches after the report was gathered.
. "$(dirname "$0")/lib.sh"
need_ktime

P=$E2E_BIN/app_exit_launch
NT=4

# bounds NAME: the report's calls per thread kernel against the program's and the fake's
# counts (see above); prints the figures.
bounds() {
    _r=$tmp/$1.json
    _bad=0
    _i=0
    while [ "$_i" -lt "$NT" ]; do
        _k=sd_t$_i
        _got=$(jv "$_r" "kernels[mangled=$_k].calls")
        _fake=$(fcount "$tmp/$1.cnt" launch "$_k")
        _before=$(awk -v k="$_k" '$1 == "before_exit" && $2 == k { print $3 }' "$tmp/$1.out")
        _ok=$(awk -v k="$_k" '$1 == "launched" && $2 == k { print $3 }' "$tmp/$1.out")
        echo "$_k: returned before exit() $_before, in the report $_got, the fake saw $_fake, returned success $_ok"
        if [ -z "$_got" ] || [ -z "$_before" ] || [ "$_got" -lt "$_before" ]; then
            echo "  $_k: launches that had returned before exit() are missing from the report"
            _bad=1
        fi
        if [ -z "$_got" ] || [ "$_got" -gt $((_fake + 1)) ]; then
            echo "  $_k: the report has more than the fake saw, plus one in flight"
            _bad=1
        fi
        _i=$((_i + 1))
    done
    return $_bad
}

# figures NAME: one diagnostic line.
figures() {
    _r=$tmp/$1.json
    _seen=$(jv "$_r" totals.launches_seen)
    _fake=$(awk '$1 == "launch" && NF == 3 { s += $3 } END { print s + 0 }' "$tmp/$1.cnt")
    _before=$(awk '$1 == "before_exit" { s += $3 } END { print s + 0 }' "$tmp/$1.out")
    echo "# $1: returned before exit() $_before; report: launches_seen $_seen, shutdown" \
        "$(jv "$_r" totals.dropped_reasons.shutdown), incomplete $(jv "$_r" totals.incomplete_at_exit);" \
        "the fake saw $_fake ($((_fake - _seen)) after the report was gathered)"
}

# Pairs complete 100 ms after they are recorded: ktime's exit waits for the last of them
# while the threads go on launching, so launches certainly arrive during the report.
run_ktime p1 KTIME_OUTPUT="$tmp/p1.json" FAKECUDA_COMPLETE_DELAY_US=100000 FAKECUDA_COUNT_FILE="$tmp/p1.cnt" \
    "$P" --threads $NT --min 2000
check "pending pairs at exit: exit status 0" rc_is p1 0
check "pending pairs at exit: report written" jc "$tmp/p1.json"
check "pending pairs at exit: launches during the report counted as shutdown" \
    jc "$tmp/p1.json" totals.dropped_reasons.shutdown '>' 0
check "pending pairs at exit: every launch in exactly one bucket" accounting "$tmp/p1.json"
check "pending pairs at exit: each thread's kernel within the program's and the fake's counts" bounds p1
figures p1

# Nothing pending: the report is written at once, with launches in flight as it begins.
for n in 1 2 3; do
    run_ktime q$n KTIME_OUTPUT="$tmp/q$n.json" FAKECUDA_COUNT_FILE="$tmp/q$n.cnt" "$P" --threads $NT --min 1000
    check "nothing pending, run $n: exit status 0" rc_is q$n 0
    check "nothing pending, run $n: every launch in exactly one bucket" accounting "$tmp/q$n.json"
    check "nothing pending, run $n: each thread's kernel within the program's and the fake's counts" bounds q$n
    figures q$n
done

# Many kernels in the table (a longer report), the fake never deinitialized (its counts then
# freeze only at its destructor, after every exit handler).
run_ktime m1 KTIME_OUTPUT="$tmp/m1.json" FAKECUDA_ATEXIT_DEINIT=0 FAKECUDA_COUNT_FILE="$tmp/m1.cnt" \
    "$P" --threads $NT --kernels 200 --min 1000
check "200 kernels, driver alive to the end: exit status 0" rc_is m1 0
check "200 kernels, driver alive to the end: every launch in exactly one bucket" accounting "$tmp/m1.json"
check "200 kernels, driver alive to the end: each thread's kernel within the program's and the fake's counts" bounds m1
check "200 kernels, driver alive to the end: the 201 kernels main launched once each" \
    sh -c "'$JCHECK' '$tmp/m1.json' 'kernels|len' == 205 && [ \"\$('$JCHECK' '$tmp/m1.json' 'kernels[].calls' | grep -c '^1\$')\" = 201 ]"
figures m1

finish
