#!/bin/sh
# ctl.sh - control at run time (docs/always-on.md): `ktime ctl PID on|off|snapshot|reset|status`
# through the process's control FIFO, each command changing exactly what it should (counts
# asserted in the snapshots it writes): off counts launches as paused, on times them again,
# snapshot writes every format asked for now, reset starts the counts afresh without redoing
# the warmup; KTIME_START=paused; a command the library does not know, refused; refused for
# another user's process, for a process without ktime, and under the CUPTI timer (off); a
# process that is gone (its FIFO left by a SIGKILL) or that does not read its FIFO; the FIFO
# and its answers removed at exit; KTIME_CTL=0; the program's output and exit status as
# without ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${BUILD_DIR:=$E2E_BIN/../..}"
KTIME=$BUILD_DIR/tools/ktime
[ -x "$KTIME" ] || e2e_fail_setup "launcher not built: $KTIME (set BUILD_DIR)"
K="k_a=125000 k_b=250000"
XDG=$tmp/xdg
mkdir -m 700 "$XDG"
DIR=$XDG/ktime

# ctl NAME ARGS...: `ktime ctl ARGS...`, its stdout, stderr and status in $tmp/NAME.ctl.*
ctl() {
    _n=$1
    shift
    XDG_RUNTIME_DIR=$XDG "$KTIME" ctl "$@" >"$tmp/$_n.ctl.out" 2>"$tmp/$_n.ctl.err"
    echo $? >"$tmp/$_n.ctl.rc"
}

# ctl_ok NAME ARGS...: the command done (status 0), its answer on stdout.
ctl_ok() {
    ctl "$@"
    [ "$(cat "$tmp/$1.ctl.rc")" = 0 ] && return 0
    echo "ktime ctl $*: status $(cat "$tmp/$1.ctl.rc")"
    cat "$tmp/$1.ctl.err"
    return 1
}

# said NAME PATTERN: the answer (stdout or stderr) of ctl NAME matches.
said() {
    grep -q "$2" "$tmp/$1.ctl.out" "$tmp/$1.ctl.err" && return 0
    echo "ktime ctl said:"
    cat "$tmp/$1.ctl.out" "$tmp/$1.ctl.err"
    return 1
}

# counts REPORT KERNEL CALLS WARMUP TIMED PAUSED: the kernel's row holds exactly these.
counts() {
    _k="kernels[mangled=$2]"
    jc "$1" "$_k.calls" == "$3" && jc "$1" "$_k.warmup_skipped" == "$4" &&
        jc "$1" "$_k.timed" == "$5" && jc "$1" "$_k.paused" == "$6"
}

# ---- off, on, snapshot, reset, status: exact counts ----------------------------------------
J=$tmp/c.json
live_start c XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=2 KTIME_OUTPUT="$J" KTIME_PROM="$tmp/c.prom" -- $K
live_do c "launched k_a 5" launch k_a 5
live_do c "pid $LIVE_PID" pid
P=$LIVE_PID
check "status: done" ctl_ok st1 "$P" status
check "status: timing on, no report yet, no reset" said st1 "^ktime ctl: process $P: timing on; 0 reports written; 0 resets$"
check "the channel is a FIFO of this user's, mode 0600, in a 0700 directory" sh -c \
    "[ -p '$DIR/$P.ctl' ] && [ \"\$(stat -c %a '$DIR/$P.ctl')\" = 600 ] && [ \"\$(stat -c %a '$DIR')\" = 700 ]"
check "off: done" ctl_ok off "$P" off
check "off: says launches are counted, not timed" said off "timing off: launches are counted (paused), not timed"
live_do c "launched k_a 4" launch k_a 4
check "snapshot: done" ctl_ok s1 "$P" snapshot
check "snapshot: names the file" said s1 "snapshot 1 written: $J, $tmp/c.prom"
check "snapshot 1: 9 calls = 2 warmup + 3 timed + 4 paused" counts "$J" k_a 9 2 3 4
check "snapshot 1: timing off at the time" jc "$J" snapshot.paused == true
check "snapshot 1: seq 1, not final, on request" sh -c "'$JCHECK' '$J' snapshot.seq == 1 && '$JCHECK' '$J' snapshot.final == false && '$JCHECK' '$J' snapshot.interval_s == 0"
check "snapshot 1: the totals count the paused launches" jc "$J" totals.paused == 4
check "snapshot 1: every launch in one bucket" accounting "$J"
check "snapshot 1: Prometheus too: 4 paused, timing off" sh -c "[ \"\$('$E2E_BIN/promcheck' '$tmp/c.prom' ktime_launches_paused_total)\" = 4 ] && [ \"\$('$E2E_BIN/promcheck' '$tmp/c.prom' ktime_timing_on)\" = 0 ]"
check "off again: said so" sh -c "XDG_RUNTIME_DIR='$XDG' '$KTIME' ctl $P off | grep -q 'timing was off already'"
check "on: done" ctl_ok on "$P" on
check "on: says so" said on "^ktime ctl: process $P: timing on$"
live_do c "launched k_a 6" launch k_a 6
live_do c "launched k_b 3" launch k_b 3
check "snapshot 2: done" ctl_ok s2 "$P" snapshot
check "snapshot 2: k_a 15 calls: 2 warmup, 9 timed, 4 paused" counts "$J" k_a 15 2 9 4
check "snapshot 2: k_a's samples exact" exact "$J" k_a 9 125
check "snapshot 2: k_b 3 calls: 2 warmup, 1 timed" counts "$J" k_b 3 2 1 0
check "snapshot 2: seq 2, timing on" sh -c "'$JCHECK' '$J' snapshot.seq == 2 && '$JCHECK' '$J' snapshot.paused == false"
check "reset: done" ctl_ok rs "$P" reset
check "reset: says the warmup is not repeated" said rs "counts and samples reset (reset 1); the warmup is not repeated"
live_do c "launched k_a 2" launch k_a 2
check "snapshot 3: done" ctl_ok s3 "$P" snapshot
check "snapshot 3: k_a from the reset: 2 calls, both timed (no warmup again)" counts "$J" k_a 2 0 2 0
check "snapshot 3: k_a's samples exact" exact "$J" k_a 2 125
check "snapshot 3: k_b, not launched since, has no row" sh -c "! '$JCHECK' '$J' 'kernels[mangled=k_b]' >/dev/null 2>&1"
check "snapshot 3: the totals from the reset" sh -c "'$JCHECK' '$J' totals.launches_seen == 2 && '$JCHECK' '$J' totals.timed == 2 && '$JCHECK' '$J' totals.paused == 0 && '$JCHECK' '$J' totals.warmup_skipped == 0"
check "snapshot 3: one reset, counts since it" sh -c "'$JCHECK' '$J' snapshot.resets == 1 && [ \"\$('$JCHECK' '$J' snapshot.since)\" \\> \"\$('$JCHECK' '$J' start_time)\" ]"
check "snapshot 3: every launch in one bucket" accounting "$J"
check "status: the reports and the reset" sh -c "XDG_RUNTIME_DIR='$XDG' '$KTIME' ctl $P status | grep -qx 'ktime ctl: process $P: timing on; 3 reports written; 1 reset'"
# A line the library does not know, written to the FIFO by hand: refused in its answers.
printf 'x1 bogus\n' >"$DIR/$P.ctl"
check "an unknown command: refused, in the answers" wait_line "$DIR/$P.answers" "^x1 refused 'bogus' is not a command: on, off, snapshot, reset or status$" 10
check "an unknown command to ktime ctl: a usage error (2)" sh -c "XDG_RUNTIME_DIR='$XDG' '$KTIME' ctl $P bogus 2>/dev/null; [ \$? = 2 ]"
live_do c "launched k_b 4" launch k_b 4
live_end c
check "exit: status 0" rc_is c 0
check "exit: the final report after the reset: k_a 2, k_b 4 timed" sh -c "'$JCHECK' '$J' snapshot.final == true && '$JCHECK' '$J' snapshot.seq == 4 && '$JCHECK' '$J' 'kernels[mangled=k_b].timed' == 4 && '$JCHECK' '$J' 'kernels[mangled=k_a].calls' == 2"
check "exit: every launch in one bucket" accounting "$J"
check "exit: the FIFO and its answers are removed" sh -c "[ ! -e '$DIR/$P.ctl' ] && [ ! -e '$DIR/$P.answers' ]"
check "exit: nothing on stderr" empty "$tmp/c.err"
LIVE_BARE=1 live_start cbare -- $K
for _c in "launch k_a 5" "launch k_a 4" "launch k_a 6" "launch k_b 3" "launch k_a 2" "launch k_b 4"; do
    live_do cbare "launched ${_c#launch }" $_c
done
live_end cbare
check "the program's output and exit status as without ktime" sh -c "grep -v '^pid ' '$tmp/c.out' >'$tmp/c.out2' && cmp '$tmp/c.out2' '$tmp/cbare.out' && [ \$(cat '$tmp/cbare.rc') = 0 ]"

# ---- KTIME_START=paused --------------------------------------------------------------------
live_start p XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=2 KTIME_START=paused KTIME_OUTPUT="$tmp/p.json" -- $K
live_do p "launched k_a 5" launch k_a 5
check "paused start: ktime ctl finds it (no launch timed yet)" ctl_ok pst "$LIVE_PID" status
check "paused start: timing off" said pst "timing off"
check "paused start: on" ctl_ok pon "$LIVE_PID" on
live_do p "launched k_a 4" launch k_a 4
live_end p
check "paused start: 9 calls = 2 warmup + 3 paused + 4 timed" counts "$tmp/p.json" k_a 9 2 4 3
check "paused start: the final report, no snapshot before: no snapshot member" sh -c "! '$JCHECK' '$tmp/p.json' snapshot >/dev/null 2>&1"
check "paused start: every launch in one bucket" accounting "$tmp/p.json"
run_ktime pnoctl KTIME_START=paused KTIME_CTL=0 KTIME_OUTPUT="$tmp/pnoctl.json" "$E2E_BIN/app_cudart" k=125000:8
check "KTIME_START=paused, KTIME_CTL=0: one warning" sh -c "[ \$(wc -l <'$tmp/pnoctl.err') = 1 ] && grep -q 'KTIME_START=paused with KTIME_CTL=0: nothing can switch timing on' '$tmp/pnoctl.err'"
check "KTIME_START=paused, KTIME_CTL=0: all paused after warmup" counts "$tmp/pnoctl.json" k 8 5 0 3

# ---- refusals --------------------------------------------------------------------------------
live_start r XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=0 KTIME_OUTPUT="$tmp/r.json" -- $K
live_do r "launched k_a 1" launch k_a 1
P=$LIVE_PID
ctl_ok rst "$P" status >/dev/null
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_RUNTIME_DIR="$XDG" \
        "$BUILD_DIR/tools/ktime-ctl" "$P" off >"$tmp/other.out" 2>"$tmp/other.err"
    echo $? >"$tmp/other.rc"
    check "another user: refused (status 1)" sh -c "[ \$(cat '$tmp/other.rc') = 1 ]"
    check "another user: says why" grep -q "^ktime ctl: process $P belongs to another user (uid 0); ktime ctl controls only your own processes$" "$tmp/other.err"
elif [ "$(id -u)" != 0 ] && [ "$(stat -c %u /proc/1)" != "$(id -u)" ]; then
    ctl other 1 off
    check "another user: refused (status 1)" sh -c "[ \$(cat '$tmp/other.ctl.rc') = 1 ]"
    check "another user: says why" said other "^ktime ctl: process 1 belongs to another user"
else
    skip "another user: refused" "no other user to be (not root, or no setpriv)"
    skip "another user: says why" "no other user to be"
fi
check "another user's attempt changed nothing: timing on" sh -c "XDG_RUNTIME_DIR='$XDG' '$KTIME' ctl $P status | grep -q 'timing on'"
sleep 100 &
SP=$!
ctl nok "$SP" status
check "a process without ktime: refused (status 1)" sh -c "[ \$(cat '$tmp/nok.ctl.rc') = 1 ]"
check "a process without ktime: says so" said nok "^ktime ctl: process $SP does not run under ktime (no libktime in it)$"
kill "$SP"
wait "$SP" 2>/dev/null
ctl dead "$SP" status
check "no such process: refused" sh -c "[ \$(cat '$tmp/dead.ctl.rc') = 1 ] && grep -q '^ktime ctl: no process $SP$' '$tmp/dead.ctl.err'"
check "a bad pid: usage (2)" sh -c "XDG_RUNTIME_DIR='$XDG' '$KTIME' ctl 12x status 2>/dev/null; [ \$? = 2 ]"
# Killed: its FIFO stays, and ktime ctl says the process is gone.
kill -9 "$P"
exec 9>&-
wait "$P" 2>/dev/null
check "SIGKILL: the FIFO is left behind" test -p "$DIR/$P.ctl"
ctl gone "$P" status
check "SIGKILL: ktime ctl says there is no such process" sh -c "[ \$(cat '$tmp/gone.ctl.rc') = 1 ] && grep -q '^ktime ctl: no process $P$' '$tmp/gone.ctl.err'"
# A process under ktime that does not listen (KTIME_CTL=0), at the pid of a stale FIFO.
live_start n XDG_RUNTIME_DIR="$XDG" KTIME_CTL=0 KTIME_OUTPUT="$tmp/n.json" -- $K
live_do n "launched k_a 7" launch k_a 7
check "KTIME_CTL=0: no FIFO made" test ! -e "$DIR/$LIVE_PID.ctl"
ctl noctl --wait 1 "$LIVE_PID" status
check "KTIME_CTL=0: no channel, said so" sh -c "[ \$(cat '$tmp/noctl.ctl.rc') = 1 ] && grep -q 'has no ktime control channel (KTIME_CTL=0, or no kernel launched yet)' '$tmp/noctl.ctl.err'"
mkfifo -m 600 "$DIR/$LIVE_PID.ctl"
ctl stale "$LIVE_PID" status
check "a FIFO nobody reads: refused, saying so" sh -c "[ \$(cat '$tmp/stale.ctl.rc') = 1 ] && grep -q 'has no reader: its process is gone, or its ktime stopped' '$tmp/stale.ctl.err'"
rm -f "$DIR/$LIVE_PID.ctl"
live_end n
check "KTIME_CTL=0: the report as usual" exact "$tmp/n.json" k_a 2 125
# The CUPTI timer records every kernel: off is refused, the rest works.
live_start cu XDG_RUNTIME_DIR="$XDG" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" \
    KTIME_WARMUP=0 KTIME_OUTPUT="$tmp/cu.json" -- $K
live_do cu "launched k_a 3" launch k_a 3
ctl cuoff "$LIVE_PID" off
check "KTIME_TIMER=cupti: off refused (status 1), saying why" sh -c "[ \$(cat '$tmp/cuoff.ctl.rc') = 1 ] && grep -q 'refused: timing cannot be switched off under KTIME_TIMER=cupti (CUPTI records every kernel)' '$tmp/cuoff.ctl.err'"
check "KTIME_TIMER=cupti: status still works" ctl_ok cust "$LIVE_PID" status
live_end cu
check "KTIME_TIMER=cupti: every launch timed" jc "$tmp/cu.json" 'kernels[mangled=k_a].timed' == 3
run_ktime cupaused KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" KTIME_START=paused \
    KTIME_OUTPUT="$tmp/cupaused.json" "$E2E_BIN/app_cudart" k=125000:8
check "KTIME_START=paused under CUPTI: one warning, timed from the start" sh -c "grep -q 'KTIME_START=paused needs KTIME_TIMER=events' '$tmp/cupaused.err' && '$JCHECK' '$tmp/cupaused.json' 'kernels[mangled=k].timed' == 3"
finish
