#!/bin/sh
# streams.sh - the program's own streams and files are never damaged by ktime: a report
# file that is the program's stdout or stderr (/dev/stdout, /dev/stderr, /proc/self/fd/N,
# its own name, a hard link to it) is appended in place, after what the program printed,
# never replaced; a program that closed its stderr and reused descriptor 2 for a data file
# gets nothing of ktime's in it; a file size limit (ulimit -f) or a FIFO whose reader left
# never kills the program with SIGXFSZ or SIGPIPE. Each run is compared with the same run
# without ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB"

# warned NAME TEXT: one ktime warning on stderr that contains TEXT.
warned() {
    [ "$(grep -c '^ktime: warning:' "$tmp/$1.err")" = 1 ] && grep -F -q "$2" "$tmp/$1.err" && return 0
    echo "want one warning containing: $2"
    head -n 20 "$tmp/$1.err"
    return 1
}

# starts_with FILE PREFIX-FILE: FILE begins with the bytes of PREFIX-FILE.
starts_with() {
    _n=$(wc -c <"$2")
    head -c "$_n" "$1" | cmp -s - "$2" && return 0
    echo "$1 does not begin with the $_n bytes of $2:"
    head -c "$_n" "$1" | diff - "$2" | head -n 20
    return 1
}

# rest_of FILE PREFIX-FILE OUT: what FILE holds after PREFIX-FILE's length, into OUT.
rest_of() {
    tail -c +$(($(wc -c <"$2") + 1)) "$1" >"$3"
}

inode_of() { stat -c %i "$1"; }

# --- a report file that is the program's stdout or stderr -------------------------------
# Without ktime: the log's earlier line, then what the program printed.
printf 'earlier line of the log\n' >"$tmp/log.plain"
$TIMEOUT env LD_LIBRARY_PATH="$LDP" "$A" k=125000:20 >>"$tmp/log.plain" 2>"$tmp/plain.err"
echo $? >"$tmp/plain.rc"

# stdout_case NAME LABEL SPELLING: KTIME_OUTPUT=SPELLING, the program run >>log 2>NAME.err. The
# log is the earlier line, the program's output and then the whole JSON report: nothing
# lost, the same file (inode), nothing on stderr but the line saying where the report went.
stdout_case() {
    _n=$1
    _l=$2
    _s=$3
    printf 'earlier line of the log\n' >"$tmp/log"
    _ino=$(inode_of "$tmp/log")
    ln -f "$tmp/log" "$tmp/log.hard"
    (cd "$tmp" && $TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="$PRELOAD" KTIME_FORMAT=json \
        KTIME_OUTPUT="$_s" "$A" k=125000:20 >>"$tmp/log" 2>"$tmp/$_n.err")
    echo $? >"$tmp/$_n.rc"
    check "$_l >>log: the program's exit status" test "$(cat "$tmp/$_n.rc")" = "$(cat "$tmp/plain.rc")"
    check "$_l >>log: the earlier line and the program's output come first, whole" starts_with "$tmp/log" "$tmp/log.plain"
    rest_of "$tmp/log" "$tmp/log.plain" "$tmp/$_n.rest"
    check "$_l >>log: then the whole report (20 launches, 15 timed at 125 us)" exact "$tmp/$_n.rest" k 15 125
    check "$_l >>log: the same file, not replaced" test "$(inode_of "$tmp/log")" = "$_ino"
    check "$_l >>log: no temporary left" sh -c "! ls -A '$tmp' | grep -q '^\\..*\\.ktime-'"
    check "$_l >>log: no warning" sh -c "! grep -q '^ktime: warning' '$tmp/$_n.err'"
}
stdout_case o1 /dev/stdout /dev/stdout
stdout_case o2 /proc/self/fd/1 /proc/self/fd/1
stdout_case o3 "its own name" "$tmp/log"
stdout_case o4 "its own relative name" log
stdout_case o5 "a hard link to it" "$tmp/log.hard"
ln -sf "$tmp/log" "$tmp/log.sym"
stdout_case o6 "a symbolic link to it" "$tmp/log.sym"

# The same with stdout and stderr both in the log (>>log 2>&1) and the stderr spellings;
# KTIME_LOG=quiet keeps "report written to" out of the log.
for sp in /dev/stderr /proc/self/fd/2; do
    printf 'earlier line of the log\n' >"$tmp/log"
    _ino=$(inode_of "$tmp/log")
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="$PRELOAD" KTIME_FORMAT=json KTIME_LOG=quiet \
        KTIME_OUTPUT="$sp" "$A" k=125000:20 >>"$tmp/log" 2>&1
    rc=$?
    check "$sp >>log 2>&1: the program's exit status" test "$rc" = "$(cat "$tmp/plain.rc")"
    check "$sp >>log 2>&1: the earlier line and the program's output come first, whole" starts_with "$tmp/log" "$tmp/log.plain"
    rest_of "$tmp/log" "$tmp/log.plain" "$tmp/e.rest"
    check "$sp >>log 2>&1: then the whole report" exact "$tmp/e.rest" k 15 125
    check "$sp >>log 2>&1: the same file, not replaced" test "$(inode_of "$tmp/log")" = "$_ino"
done

# stdout truncated by the shell (>log, no O_APPEND): the report follows the program's output.
$TIMEOUT env LD_LIBRARY_PATH="$LDP" "$A" k=125000:20 >"$tmp/t.plain" 2>/dev/null
$TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="$PRELOAD" KTIME_FORMAT=json KTIME_OUTPUT=/dev/stdout \
    "$A" k=125000:20 >"$tmp/t.log" 2>"$tmp/t.err"
check "/dev/stdout >log: the program's output first, whole" starts_with "$tmp/t.log" "$tmp/t.plain"
rest_of "$tmp/t.log" "$tmp/t.plain" "$tmp/t.rest"
check "/dev/stdout >log: then the whole report" exact "$tmp/t.rest" k 15 125

# A text report on /dev/stdout in a pipe: after the program's output too.
$TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="$PRELOAD" KTIME_OUTPUT=/dev/stdout \
    "$A" k=125000:20 2>"$tmp/p.err" | cat >"$tmp/p.log"
check "/dev/stdout | cat: the program's output first" starts_with "$tmp/p.log" "$tmp/t.plain"
check "/dev/stdout | cat: then the text report" sh -c "tail -n +2 '$tmp/p.log' | grep -q '^launches 20 seen: 15 timed'"

# KTIME_TRACE and KTIME_DUMP_SAMPLES on /dev/stdout: appended too, the log kept.
printf 'earlier line of the log\n' >"$tmp/log"
$TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="$PRELOAD" KTIME_OUTPUT="$tmp/tr.json" \
    KTIME_TRACE=/dev/stdout KTIME_DUMP_SAMPLES=/proc/self/fd/1 "$A" k=125000:20 >>"$tmp/log" 2>"$tmp/tr.err"
check "KTIME_TRACE and KTIME_DUMP_SAMPLES on stdout: the log's earlier line kept" \
    sh -c "head -n 1 '$tmp/log' | grep -qx 'earlier line of the log'"
check "... the program's output kept" grep -qx 'kernel k launched 20' "$tmp/log"
check "... the 15 samples appended" sh -c "[ \$(grep -c '^k	0	125.0000\$' '$tmp/log') = 15 ]"
check "... the trace appended" grep -q '"traceEvents"' "$tmp/log"
check "... no warning" sh -c "! grep -q '^ktime: warning' '$tmp/tr.err'"

# --- a program that closed its stderr and reused descriptor 2 for a data file ------------
S=$E2E_BIN/app_stdio
run_plain d0 "$S" "$tmp/data.plain" 20
check "app_stdio runs alone (descriptor 2 reused)" rc_is d0 0
# dcase NAME [VAR=VALUE...]: the data file holds exactly what the program wrote.
dcase() {
    _n=$1
    shift
    run_ktime "$_n" "$@" "$S" "$tmp/$_n.data" 20
    check "$_n: same exit status and stdout" same_run d0 "$_n"
    check "$_n: the data file holds only what the program wrote" cmp "$tmp/data.plain" "$tmp/$_n.data"
}
dcase d1                                    # the report to stderr
dcase d2 KTIME_LOG=debug                    # every message
dcase d3 KTIME_OUTPUT="$tmp/d3.json"        # "report written to"
check "d3: the report is in its file" exact "$tmp/d3.json" k 15 125
mkdir "$tmp/adir"
dcase d4 KTIME_OUTPUT="$tmp/adir"           # a warning, the report would follow on stderr
dcase d5 KTIME_OUTPUT=/dev/stderr           # the name now leads to the data file
dcase d6 KTIME_TRACE=/dev/stderr KTIME_ALSO_OUTPUT=/proc/self/fd/2 KTIME_OUTPUT="$tmp/d6.json"

# --- a file size limit: SIGXFSZ never kills the program ---------------------------------
# 300 kernels with long names: a report of hundreds of KB, past a limit of a few KB. The
# program's stdout goes to /dev/null, its stderr to a pipe (which the limit does not touch).
BIG=$(awk 'BEGIN { for (i = 0; i < 300; i++)
    printf "k_%s_%03d=125000:1 ", "a_kernel_name_long_enough_that_three_hundred_rows_overflow_any_pipe_buffer", i }')
limited() {
    (
        ulimit -f 8
        # shellcheck disable=SC2086
        $TIMEOUT env LD_LIBRARY_PATH="$LDP" "$@" $BIG 2>&1 >/dev/null
        echo $? >"$tmp/lim.rc"
    ) | cat
}
limited "$A" >"$tmp/x0.err"
cp "$tmp/lim.rc" "$tmp/x0.rc"
printf 'old report\n' >"$tmp/x.json"
limited env LD_PRELOAD="$PRELOAD" KTIME_FORMAT=json KTIME_OUTPUT="$tmp/x.json" "$A" >"$tmp/x1.err"
cp "$tmp/lim.rc" "$tmp/x1.rc"
check "ulimit -f: the program's exit status as without ktime ($(cat "$tmp/x0.rc"))" \
    test "$(cat "$tmp/x1.rc")" = "$(cat "$tmp/x0.rc")"
check "ulimit -f: one warning, File too large" \
    warned x1 "writing KTIME_OUTPUT '$tmp/x.json' failed (File too large); the file is left as it was; the report follows on stderr"
sed -n '/^{$/,$p' "$tmp/x1.err" >"$tmp/x1.json"
check "ulimit -f: the whole report on stderr" jc "$tmp/x1.json" totals.launches_seen == 300
check "ulimit -f: the old report left whole" sh -c "[ \"\$(cat '$tmp/x.json')\" = 'old report' ]"
check "ulimit -f: no temporary left" sh -c "! ls -A '$tmp' | grep -q '^\\..*\\.ktime-'"

# The trace and the samples past the limit too.
limited env LD_PRELOAD="$PRELOAD" KTIME_OUTPUT="$tmp/x.json" KTIME_TRACE="$tmp/x.trace" \
    KTIME_DUMP_SAMPLES="$tmp/x.samples" "$A" >"$tmp/x2.err"
check "ulimit -f, the trace and samples too: the exit status as without ktime" \
    test "$(cat "$tmp/lim.rc")" = "$(cat "$tmp/x0.rc")"

# --- a FIFO whose reader leaves after 10 bytes: SIGPIPE never kills the program ----------
mkfifo "$tmp/short.json"
$TIMEOUT head -c 10 "$tmp/short.json" >"$tmp/short.got" &
rpid=$!
# shellcheck disable=SC2086
run_plain q0 "$A" --sleep-ms 300 $BIG
# shellcheck disable=SC2086
run_ktime q1 KTIME_FORMAT=json KTIME_OUTPUT="$tmp/short.json" "$A" --sleep-ms 300 $BIG
wait "$rpid"
check "FIFO whose reader left: same exit status and stdout" same_run q0 q1
check "FIFO whose reader left: one warning, Broken pipe" \
    warned q1 "writing KTIME_OUTPUT '$tmp/short.json' failed (Broken pipe)"
sed -n '/^{$/,$p' "$tmp/q1.err" >"$tmp/q1.json"
check "FIFO whose reader left: the whole report follows on stderr" jc "$tmp/q1.json" totals.launches_seen == 300

finish
