#!/bin/sh
# signal.sh - a program ended by SIGINT, SIGTERM or SIGHUP (left at their default action) ends
# as it would without ktime: the thread that takes the signal never returns into the program,
# the exit status is 128 + the signal, and the report is written first (by ktime's own thread,
# within KTIME_EXIT_WAIT_MS + 1 s) or one stderr line says why not. Each case is run without
# ktime too and compared. The 100-run cases are in signal_runs.sh. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
S=$E2E_BIN/app_signal
PRE="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB"

# wait_for FILE PATTERN: until a line of FILE matches (at most 20 s).
wait_for() {
    _i=0
    while ! grep -q "$2" "$1" 2>/dev/null && [ $_i -lt 2000 ]; do
        sleep 0.01
        _i=$((_i + 1))
    done
}

# run_killed NAME ENV...: runs app_cudart with a 10 s sleep at the end, sends SIGTERM once
# its counts are printed, and records its exit status in $tmp/NAME.rc.
run_killed() {
    _n=$1
    shift
    : >"$tmp/$_n.out"
    : >"$tmp/$_n.err"
    env LD_LIBRARY_PATH="$LDP" "$@" "$A" --sleep-ms 10000 k=125000:40 >>"$tmp/$_n.out" 2>>"$tmp/$_n.err" &
    _pid=$!
    wait_for "$tmp/$_n.out" "^launches"
    kill -TERM $_pid
    wait $_pid 2>/dev/null
    echo $? >"$tmp/$_n.rc"
}

# bg_signal NAME WHEN SIGNAL ENV... PROGRAM ARGS: runs PROGRAM in the background (ENV may
# hold LD_PRELOAD), sends SIGNAL (none: no signal) once a line of NAME's stdout or stderr
# matches WHEN (out:RE or err:RE), and records its exit status in $tmp/NAME.rc and the milliseconds from the signal to
# its end in $tmp/NAME.ms. With SECOND set (a signal), it waits for SECOND_WHEN (err:RE) after
# the first and sends SECOND, and times from that one.
bg_signal() {
    _n=$1
    _when=$2
    _sig=$3
    shift 3
    # Emptied here, not by the background job's redirections, which may come after the first
    # look (a file of an earlier run of the same NAME would pass for this one's).
    : >"$tmp/$_n.out"
    : >"$tmp/$_n.err"
    env LD_LIBRARY_PATH="$LDP" "$@" >>"$tmp/$_n.out" 2>>"$tmp/$_n.err" &
    _pid=$!
    wait_for "$tmp/$_n.${_when%%:*}" "${_when#*:}"
    _t0=$(e2e_now_ms)
    [ "$_sig" = none ] || kill -"$_sig" $_pid
    if [ -n "${SECOND:-}" ]; then
        wait_for "$tmp/$_n.${SECOND_WHEN%%:*}" "${SECOND_WHEN#*:}"
        _t0=$(e2e_now_ms)
        kill -"$SECOND" $_pid
    fi
    wait $_pid 2>/dev/null
    echo $? >"$tmp/$_n.rc"
    echo $(($(e2e_now_ms) - _t0)) >"$tmp/$_n.ms"
}

# ktime_lines ERRFILE: the number of lines of ktime's on it, other than "report written".
ktime_lines() { grep '^ktime:' "$1" | grep -vc '^ktime: report written to '; }

# one_line ERRFILE RE...: exactly one line of ktime's (other than "report written"), and it
# matches every RE.
one_line() {
    _f=$1
    shift
    [ "$(ktime_lines "$_f")" = 1 ] || { echo "$(ktime_lines "$_f") lines of ktime's, want 1:"; cat "$_f"; return 1; }
    for _re in "$@"; do
        grep '^ktime:' "$_f" | grep -q -- "$_re" || { echo "no '$_re' in:"; cat "$_f"; return 1; }
    done
}

# no_ktime_line ERRFILE: no line of ktime's on it (other than "report written"). The shell may
# say "Terminated" there, with ktime or without.
no_ktime_line() {
    [ "$(ktime_lines "$1")" = 0 ] && return 0
    cat "$1"
    return 1
}

# within NAME MS: NAME ended within MS ms of the signal.
within() {
    [ "$(cat "$tmp/$1.ms")" -lt "$2" ] && return 0
    echo "took $(cat "$tmp/$1.ms") ms, more than $2"
}

# ---- SIGTERM while the program sleeps after its launches (app_cudart)
run_killed bare
run_killed kt LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/s.json" KTIME_WARMUP=0
check "SIGTERM without ktime: exit status 143" sh -c "[ \"\$(cat '$tmp/bare.rc')\" = 143 ]"
check "SIGTERM with ktime: the same exit status (143)" sh -c "[ \"\$(cat '$tmp/kt.rc')\" = 143 ]"
check "SIGTERM with ktime: same stdout" cmp -s "$tmp/bare.out" "$tmp/kt.out"
check "SIGTERM with ktime: the report was written" jc "$tmp/s.json"
check "SIGTERM with ktime: all 40 launches timed" exact "$tmp/s.json" k 40 125

# KTIME_SIGNALS=0: ktime leaves the signal alone; no report, same exit status.
run_killed off LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/off.json" KTIME_SIGNALS=0
check "KTIME_SIGNALS=0: exit status 143" sh -c "[ \"\$(cat '$tmp/off.rc')\" = 143 ]"
check "KTIME_SIGNALS=0: no report" absent "$tmp/off.json"

# ---- raise() after the launches: the program's next line is never printed
for sig in TERM INT HUP; do
    rm -f "$tmp/r.json"
    run_plain rb "$S" raise $sig 20
    run_ktime rk KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 "$S" raise $sig 20
    case $sig in TERM) st=143 ;; INT) st=130 ;; HUP) st=129 ;; esac
    check "raise(SIG$sig) without ktime: exit status $st" rc_is rb $st
    check "raise(SIG$sig) with ktime: the same exit status and stdout (nothing after raise)" same_run rb rk
    check "raise(SIG$sig) with ktime: the report was written, all 20 launches timed" exact "$tmp/r.json" k 20 125
    check "raise(SIG$sig) with ktime: no line of ktime's on stderr" no_ktime_line "$tmp/rk.err"
done

# ---- a signal the program handles itself, or ignores, is left to it: it runs on, and the
# report comes at its exit
for how in own-handler ignore; do
    rm -f "$tmp/o.json"
    run_plain ob "$S" raise TERM 20 --$how
    run_ktime ok KTIME_OUTPUT="$tmp/o.json" KTIME_WARMUP=0 "$S" raise TERM 20 --$how
    check "SIGTERM with the program's --$how: without ktime, it runs on (status 0)" rc_is ob 0
    check "SIGTERM with the program's --$how: with ktime, the same exit status and stdout" same_run ob ok
    check "SIGTERM with the program's --$how: the report written at exit" exact "$tmp/o.json" k 20 125
done

# ---- only warmup launches so far (the drain thread has not started): the report has them
rm -f "$tmp/w.json"
run_plain wb "$S" raise TERM 10
run_ktime wk KTIME_OUTPUT="$tmp/w.json" KTIME_WARMUP=100 "$S" raise TERM 10
check "SIGTERM after warmup launches only: same exit status (143) and stdout" same_run wb wk
check "SIGTERM after warmup launches only: the report was written" jc "$tmp/w.json"
check "SIGTERM after warmup launches only: its 10 calls, all warmup" \
    sh -c "'$JCHECK' '$tmp/w.json' 'kernels[mangled=k].calls' == 10 && '$JCHECK' '$tmp/w.json' 'kernels[mangled=k].warmup_skipped' == 10 && '$JCHECK' '$tmp/w.json' 'kernels[mangled=k].timed' == 0"

# ---- poll() in the loop: the signal never comes back to the program as EINTR
bg_signal pb out:"^step 0" TERM "$S" pollloop 10000
bg_signal pk out:"^step 0" TERM LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/p.json" KTIME_WARMUP=0 "$S" pollloop 10000
check "SIGTERM in poll(): without ktime, exit status 143" rc_is pb 143
check "SIGTERM in poll(): with ktime, the same exit status and stdout" same_run pb pk
check "SIGTERM in poll(): no EINTR reached the program" sh -c "! grep -q 'poll:' '$tmp/pk.err'"
check "SIGTERM in poll(): the report was written" jc "$tmp/p.json" 'kernels[mangled=k].calls' '>=' 4

# ---- the drain thread stuck in the driver: the report (with no timings, and a note saying
# so) is written within the wait, and the signal ends the program
bg_signal db out:"^launched" TERM FAKECUDA_HANG_QUERY_THREAD=ktime-drain "$S" sleep 20 10000 --no-sync
bg_signal dk err:"hangs on thread ktime-drain" TERM LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/d.json" \
    KTIME_EXIT_WAIT_MS=300 FAKECUDA_HANG_QUERY_THREAD=ktime-drain "$S" sleep 20 10000 --no-sync
check "drain thread stuck: same exit status (143) and stdout" same_run db dk
check "drain thread stuck: ended within KTIME_EXIT_WAIT_MS + 1 s (+ 5 s of margin)" within dk 6300
check "drain thread stuck: the report was written, its note says why there are no timings" \
    jc "$tmp/d.json" note has 'drain thread did not stop'
check "drain thread stuck: its 20 launches counted" jc "$tmp/d.json" 'kernels[mangled=k].calls' == 20
check "drain thread stuck: no line of ktime's on stderr" no_ktime_line "$tmp/dk.err"

# ---- the report's writer stuck in the driver (a lock the interrupted thread holds): the
# program still ends within KTIME_EXIT_WAIT_MS + 1 s, by its signal, with one line saying why
STUCK="FAKECUDA_HANG_QUERY_THREAD=ktime-signal FAKECUDA_COMPLETE_DELAY_US=60000000"
rm -f "$tmp/x.json"
run_plain xb $STUCK "$S" raise TERM 20 --no-sync
run_ktime xk KTIME_OUTPUT="$tmp/x.json" KTIME_EXIT_WAIT_MS=300 $STUCK "$S" raise TERM 20 --no-sync
check "writer stuck: same exit status (143) and stdout" same_run xb xk
check "writer stuck: ended within KTIME_EXIT_WAIT_MS + 1 s (+ 5 s of margin)" within xk 6300
check "writer stuck: no report" absent "$tmp/x.json"
check "writer stuck: one line of ktime's says why (the driver; the wait's bound)" \
    one_line "$tmp/xk.err" '^ktime: warning: SIGTERM: no report' 'within 1300 ms' 'CUDA driver'
check "writer stuck: its stderr line is a complete line" sh -c "[ \"\$(tail -c 1 '$tmp/xk.err' | od -An -c | tr -d ' ')\" = '\\n' ]"

# ---- the interrupted thread holds stderr's stdio lock, which the report (to stderr) needs:
# the program ends within KTIME_EXIT_WAIT_MS + 1 s, by its signal, with one line saying why
run_plain lb "$S" raise TERM 20 --lock-stderr
run_ktime lk KTIME_EXIT_WAIT_MS=300 "$S" raise TERM 20 --lock-stderr
check "stderr locked by the interrupted thread: same exit status (143) and stdout" same_run lb lk
check "stderr locked by the interrupted thread: ended within KTIME_EXIT_WAIT_MS + 1 s (+ 5 s of margin)" \
    sh -c "[ \$(cat '$tmp/lk.ms') -lt 6300 ]"
check "stderr locked by the interrupted thread: one line of ktime's says why (a lock, such as stderr's)" \
    one_line "$tmp/lk.err" '^ktime: warning: SIGTERM: no report' "stderr's"

# ---- a second signal while the report is being written ends the program at once, by that
# signal (the writer is stuck, and the wait would last 31 s). Not under ThreadSanitizer: it
# holds a signal that comes while a handler runs until that handler returns, and ktime's never
# does.
TSAN=
case "${E2E_PRELOAD_FIRST:-}" in *libtsan*) TSAN=1 ;; esac
for pair in TERM:INT INT:TERM HUP:HUP; do
    if [ -n "$TSAN" ]; then
        skip "a second signal during the report (SIG${pair%:*}, then SIG${pair#*:})" \
            "ThreadSanitizer delivers no signal while a handler runs"
        continue
    fi
    first=${pair%:*}
    SECOND=${pair#*:}
    SECOND_WHEN="err:hangs on thread ktime-signal"
    case $SECOND in TERM) st=143 ;; INT) st=130 ;; HUP) st=129 ;; esac
    rm -f "$tmp/2.json"
    bg_signal 2k out:"^launched" none LD_PRELOAD="$PRE" KTIME_OUTPUT="$tmp/2.json" KTIME_EXIT_WAIT_MS=30000 \
        $STUCK "$S" raise $first 20 --no-sync
    check "SIG$SECOND during SIG$first's report: ends the program by SIG$SECOND (status $st)" rc_is 2k $st
    check "SIG$SECOND during SIG$first's report: at once (within 5 s, not the 31 s wait)" within 2k 5000
    check "SIG$SECOND during SIG$first's report: nothing after raise on stdout" sh -c "[ \"\$(cat '$tmp/2k.out')\" = 'launched 20' ]"
    check "SIG$SECOND during SIG$first's report: one line of ktime's says so" \
        one_line "$tmp/2k.err" "^ktime: warning: SIG$SECOND: it came while the report for SIG$first was being written"
done
unset SECOND SECOND_WHEN

# ---- exit() racing with a signal: another thread raises SIGTERM 0 and 300 ms after main
# returned, while ktime's exit report waits (up to 2 s) for a kernel that never ends. Whichever
# comes first, the report is written once, whole, and the signal ends the program.
for ms in 0 300; do
    rm -f "$tmp/e.json"
    run_ktime ek KTIME_OUTPUT="$tmp/e.json" KTIME_WARMUP=0 KTIME_EXIT_WAIT_MS=2000 \
        "$S" exitrace 20 $ms --hang
    check "SIGTERM $ms ms into exit: exit status 143" rc_is ek 143
    check "SIGTERM $ms ms into exit: the report was written, the 20 launches timed" exact "$tmp/e.json" k 20 125
    check "SIGTERM $ms ms into exit: the hung kernel counted incomplete" jc "$tmp/e.json" 'kernels[mangled=hang_k].incomplete' == 1
    check "SIGTERM $ms ms into exit: no line of ktime's on stderr" no_ktime_line "$tmp/ek.err"
done

finish
