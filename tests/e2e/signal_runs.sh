#!/bin/sh
# signal_runs.sh - SIGTERM, many times over, at many points: raised by the program after its
# launches, and sent from outside at a random point of a loop of launches, synchronizations,
# writes and sleeps. Every run, with ktime as without: exit status 143, not one line written
# after the signal, and (with ktime) a report or exactly one line of ktime's saying why not.
# SIGNAL_RUNS runs of each (default 100; 20 under a sanitizer), and a fifth as many without
# ktime. TAP.
#
# "After the signal" is exact, not a matter of timing: the looping program is stopped
# (SIGSTOP) at a random moment, its lines counted, SIGTERM sent, and the program continued
# (SIGCONT). The kernel delivers the pending SIGTERM before the program runs another
# instruction of its own, so any line past the count was written after the signal.
. "$(dirname "$0")/lib.sh"
need_ktime

S=$E2E_BIN/app_signal
PRE="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB"
RUNS=${SIGNAL_RUNS:-100}
[ -n "${E2E_PRELOAD_FIRST:-}" ] && [ -z "${SIGNAL_RUNS:-}" ] && RUNS=20
BARE=$((RUNS / 5))

# note FILE LINE: keeps a diagnostic line (the first 20 of them) for a failed check.
note() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt 20 ] && echo "$2" >>"$1"; return 0; }

# ktime_lines ERRFILE: the number of lines of ktime's on it, other than "report written".
ktime_lines() { grep '^ktime:' "$1" | grep -vc '^ktime: report written to '; }

# report_or_line RUN REPORT ERRFILE CALLS_MIN CALLS_MAX: a report whose kernel k has between
# CALLS_MIN and CALLS_MAX calls, or no report and exactly one line of ktime's. Notes a failure
# in $tmp/why.
report_or_line() {
    if [ -e "$2" ]; then
        _c=$("$JCHECK" "$2" 'kernels[mangled=k].calls' 2>/dev/null)
        if [ -z "$_c" ] || [ "$_c" -lt "$4" ] || [ "$_c" -gt "$5" ]; then
            note "$tmp/why" "run $1: report with k calls '$_c', want $4..$5"
            return 1
        fi
        [ "$(ktime_lines "$3")" = 0 ] && return 0
        note "$tmp/why" "run $1: a report and ktime's lines: $(grep '^ktime:' "$3" | head -n 3)"
        return 1
    fi
    [ "$(ktime_lines "$3")" = 1 ] && return 0
    note "$tmp/why" "run $1: no report, and $(ktime_lines "$3") lines of ktime's: $(grep '^ktime:' "$3" | head -n 3)"
    return 1
}

# ---- raise(SIGTERM) after 20 launches (app_signal raise): the line after raise is never written
run_plain rb "$S" raise TERM 20
check "raise: without ktime, exit status 143" rc_is rb 143
check "raise: without ktime, no line after raise" sh -c "[ \"\$(cat '$tmp/rb.out')\" = 'launched 20' ]"
: >"$tmp/why"
bad_rc=0 bad_out=0 bad_rep=0 reports=0
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f "$tmp/r.json"
    run_ktime rk KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 "$S" raise TERM 20
    [ "$(rc_of rk)" = 143 ] || { bad_rc=$((bad_rc + 1)); note "$tmp/why" "run $i: exit status $(rc_of rk)"; }
    cmp -s "$tmp/rb.out" "$tmp/rk.out" || { bad_out=$((bad_out + 1)); note "$tmp/why" "run $i: stdout $(tr '\n' '|' <"$tmp/rk.out")"; }
    report_or_line $i "$tmp/r.json" "$tmp/rk.err" 20 20 || bad_rep=$((bad_rep + 1))
    [ -e "$tmp/r.json" ] && reports=$((reports + 1))
    i=$((i + 1))
done
echo "# raise: $reports of $RUNS runs wrote the report"
check "raise, $RUNS runs with ktime: exit status 143 every time" sh -c "[ $bad_rc = 0 ] || { cat '$tmp/why'; exit 1; }"
check "raise, $RUNS runs with ktime: stdout as without ktime, nothing after raise, every time" sh -c "[ $bad_out = 0 ] || { cat '$tmp/why'; exit 1; }"
check "raise, $RUNS runs with ktime: a report of the 20 calls, or one line of ktime's saying why, every time" sh -c "[ $bad_rep = 0 ] || { cat '$tmp/why'; exit 1; }"

# ---- SIGTERM at a random point of a loop (app_signal loop 1000: 4 launches, a
# synchronization, a line, a 1 ms sleep, for ever)

# stop_at_random NAME RUN ENV...: starts the loop, waits for its first line, lets it run a
# random 0 to 30 ms (the same for run RUN in every invocation), stops it, counts its lines into
# $tmp/NAME.lines, sends SIGTERM and continues it; its exit status goes to $tmp/NAME.rc.
stop_at_random() {
    _n=$1
    _r=$2
    shift 2
    # Emptied here, not by the background job's redirection, which may come after the first
    # look below: the previous run's lines would then pass for this one's.
    : >"$tmp/$_n.out"
    env LD_LIBRARY_PATH="$LDP" "$@" "$S" loop 1000 >>"$tmp/$_n.out" 2>"$tmp/$_n.err" &
    _pid=$!
    _i=0
    while ! grep -q '^step' "$tmp/$_n.out" 2>/dev/null && [ $_i -lt 2000 ]; do
        sleep 0.01
        _i=$((_i + 1))
    done
    sleep "$(awk -v r="$_r" 'BEGIN { srand(r + 1); printf "%.3f", rand() * 0.030 }')"
    kill -STOP $_pid
    # Stopped once its state says so ("T"): every write it made is in the file by then.
    _i=0
    while _st=$(cut -d' ' -f3 "/proc/$_pid/stat" 2>/dev/null) && [ "$_st" != T ] && [ $_i -lt 10000 ]; do
        _i=$((_i + 1))
    done
    wc -l <"$tmp/$_n.out" >"$tmp/$_n.lines"
    kill -TERM $_pid
    kill -CONT $_pid
    wait $_pid 2>/dev/null
    echo $? >"$tmp/$_n.rc"
}

# loop_ok NAME RUN: exit status 143, not a line more than when it was stopped, the last line
# whole. Notes a failure in $tmp/why.
loop_ok() {
    _ok=0
    [ "$(rc_of "$1")" = 143 ] || { note "$tmp/why" "run $2: exit status $(rc_of "$1")"; _ok=1; }
    _l=$(wc -l <"$tmp/$1.out")
    if [ "$_l" != "$(cat "$tmp/$1.lines")" ]; then
        note "$tmp/why" "run $2: $(cat "$tmp/$1.lines") lines when stopped, $_l at the end"
        _ok=1
    fi
    if [ -s "$tmp/$1.out" ] && [ "$(tail -c 1 "$tmp/$1.out" | od -An -c | tr -d ' ')" != '\n' ]; then
        note "$tmp/why" "run $2: the last line is cut"
        _ok=1
    fi
    return $_ok
}

: >"$tmp/why"
bad=0
i=0
while [ $i -lt "$BARE" ]; do
    stop_at_random lb $i
    loop_ok lb $i || bad=$((bad + 1))
    i=$((i + 1))
done
check "loop, $BARE runs without ktime: exit status 143, no line after the signal" sh -c "[ $bad = 0 ] || { cat '$tmp/why'; exit 1; }"

: >"$tmp/why"
bad=0 bad_rep=0 reports=0
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f "$tmp/l.json"
    stop_at_random lk $i LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/l.json" KTIME_WARMUP=0
    loop_ok lk $i || bad=$((bad + 1))
    # k's calls: 4 per step written, and up to 4 more of the step the signal cut short.
    steps=$(wc -l <"$tmp/lk.out")
    report_or_line $i "$tmp/l.json" "$tmp/lk.err" $((4 * steps)) $((4 * steps + 4)) || bad_rep=$((bad_rep + 1))
    [ -e "$tmp/l.json" ] && reports=$((reports + 1))
    i=$((i + 1))
done
echo "# loop: $reports of $RUNS runs wrote the report"
check "loop, $RUNS runs with ktime: exit status 143, no line after the signal, every time" sh -c "[ $bad = 0 ] || { cat '$tmp/why'; exit 1; }"
check "loop, $RUNS runs with ktime: a report of every launch made, or one line of ktime's saying why, every time" sh -c "[ $bad_rep = 0 ] || { cat '$tmp/why'; exit 1; }"

finish
