# lib.sh - shared helpers for ktime's end-to-end TAP scripts (POSIX sh; sourced, not run).
#
# Environment (set by `make check`; defaults assume the current folder is the top build dir):
#   KTIME_LIB  absolute path of libktime.so        (default: src/.libs/libktime.so)
#   FAKE_DIR   folder holding the fake libcuda.so.1 (default: tests/fake)
#   E2E_BIN    folder holding the test programs     (default: tests/e2e)
# A script sources this file, calls need_ktime (unless it runs without ktime), runs programs
# with run_plain / run_ktime, asserts with check / check_todo, and ends with finish.

e2e_fail_setup() { echo "Bail out! $*"; exit 99; }

: "${E2E_BIN:=$PWD/tests/e2e}"
: "${FAKE_DIR:=$PWD/tests/fake}"
: "${KTIME_LIB:=$PWD/src/.libs/libktime.so}"
JCHECK=$E2E_BIN/jcheck
[ -x "$JCHECK" ] || e2e_fail_setup "jcheck not built: $JCHECK (set E2E_BIN)"
[ -f "$FAKE_DIR/libcuda.so.1" ] || e2e_fail_setup "fake driver not built: $FAKE_DIR/libcuda.so.1 (set FAKE_DIR)"

# The developer's own settings must not leak into the tests.
for v in $(env | sed -n 's/^\(KTIME_[A-Z_]*\)=.*/\1/p; s/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p; s/^\(FAKECUPTI_[A-Z_]*\)=.*/\1/p; s/^\(KCOUNT_[A-Z_]*\)=.*/\1/p'); do
    [ "$v" = KTIME_LIB ] || unset "$v"
done
unset LD_PRELOAD

# The build's ktime-render, for scripts that run tools/ktime_tool.py directly (the launcher
# finds it itself): KTIME_RENDER=$E2E_RENDER python3 .../ktime_tool.py report ...
E2E_RENDER=${BUILD_DIR:-$E2E_BIN/../..}/tools/ktime-render

LDP=$FAKE_DIR:$E2E_BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Every program run gets a wall-clock limit so a hang fails the test instead of the CI job.
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT="timeout -k 5 ${E2E_TIMEOUT:-60}"
else
    TIMEOUT=
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktime-e2e.XXXXXX") || e2e_fail_setup "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

T=0

# ktime's control channels (ktime ctl) go to a directory of this script's, not to the user's
# /tmp/ktime-UID: a program a test kills leaves its FIFO there.
mkdir -m 700 "$tmp/run" || e2e_fail_setup "mkdir $tmp/run failed"
XDG_RUNTIME_DIR=$tmp/run
export XDG_RUNTIME_DIR

# An AddressSanitizer build (E2E_SANITIZER=asan, from make check): every report of ASan or
# LeakSanitizer from a program this script runs goes to a file in $tmp/san (log_path, one
# per process); UBSan's, next to ASan, ignore log_path and go to the program's stderr, which
# the scripts keep in $tmp. finish() turns either into a failed test. The options themselves
# (abort on the first error, leaks checked) come from Makefile.am; only the programs that
# get the sanitizer runtime (those run with libktime) read them.
if [ "${E2E_SANITIZER:-}" = asan ]; then
    mkdir "$tmp/san" || e2e_fail_setup "mkdir $tmp/san failed"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$tmp/san/asan"
    export ASAN_OPTIONS
fi

# FORK_ENV: what `run_ktime NAME $FORK_ENV ...` adds for a program that forks. Under
# AddressSanitizer, no leak check: GCC's LeakSanitizer (libasan 8) does not reset its
# allocator's locks in a forked child, and a child forked while one of ktime's threads was
# allocating hung in the leak check at exit. Empty otherwise.
FORK_ENV=
if [ "${E2E_SANITIZER:-}" = asan ]; then
    FORK_ENV="ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"
fi

need_ktime() {
    [ -f "$KTIME_LIB" ] || e2e_fail_setup "libktime.so not built: $KTIME_LIB (set KTIME_LIB)"
}

ok() {
    T=$((T + 1))
    echo "ok $T - $1"
}

# not_ok DESC [DIAGNOSTIC-FILE]
not_ok() {
    T=$((T + 1))
    echo "not ok $T - $1"
    if [ -n "$2" ] && [ -s "$2" ]; then sed 's/^/# /' "$2" | head -n 40; fi
}

# check DESC COMMAND...: one TAP line, ok when COMMAND exits 0; its output is the diagnostic.
check() {
    _d=$1
    shift
    if "$@" >"$tmp/.check" 2>&1; then
        ok "$_d"
    else
        echo "command: $*" >>"$tmp/.check"
        not_ok "$_d" "$tmp/.check"
    fi
}

# check_todo REASON DESC COMMAND...: like check, but a failure is an expected failure (TAP
# TODO): for behaviour the contract wants but does not demand; it never fails the suite.
check_todo() {
    _r=$1
    _d=$2
    shift 2
    T=$((T + 1))
    if "$@" >"$tmp/.check" 2>&1; then
        echo "ok $T - $_d # TODO $_r"
    else
        echo "not ok $T - $_d # TODO $_r"
        sed 's/^/# /' "$tmp/.check" | head -n 20
    fi
}

skip() {
    T=$((T + 1))
    echo "ok $T - $1 # SKIP $2"
}

finish() {
    if [ "${E2E_SANITIZER:-}" = asan ]; then
        # Files of ASan's, and whatever holds a report on a program's stderr.
        _f=$( (ls "$tmp"/san/* 2>/dev/null; grep -rlE 'runtime error: |^==[0-9]+==ERROR: ' "$tmp" --exclude-dir=san) | sort -u)
        if [ -z "$_f" ]; then
            ok "no AddressSanitizer, LeakSanitizer or UBSan report"
        else
            T=$((T + 1))
            echo "not ok $T - no AddressSanitizer, LeakSanitizer or UBSan report"
            for _g in $_f; do
                echo "# ---- $_g"
                sed 's/^/# /' "$_g" | head -n 60
            done
        fi
    fi
    echo "1..$T"
    exit 0
}

# run_plain NAME [VAR=VALUE...] PROGRAM [ARGS...]: runs against the fake without ktime.
# run_ktime NAME [VAR=VALUE...] PROGRAM [ARGS...]: the same with libktime.so preloaded.
# Results: $tmp/NAME.out, $tmp/NAME.err, $tmp/NAME.rc, $tmp/NAME.ms (wall time); run_ktime
# also $tmp/NAME.written, the "ktime: report written to PATH" lines, taken out of NAME.err.
run_plain() {
    _n=$1
    shift
    _t0=$(e2e_now_ms)
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
    echo $? >"$tmp/$_n.rc"
    echo $(($(e2e_now_ms) - _t0)) >"$tmp/$_n.ms"
}

run_ktime() {
    _n=$1
    shift
    _t0=$(e2e_now_ms)
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
    echo $? >"$tmp/$_n.rc"
    # The line a report to a file is announced with goes to NAME.written, so that "nothing
    # on stderr" keeps meaning no warning (silent.sh checks the line).
    grep '^ktime: report written to ' "$tmp/$_n.err" >"$tmp/$_n.written"
    grep -v '^ktime: report written to ' "$tmp/$_n.err" >"$tmp/$_n.err2"
    mv "$tmp/$_n.err2" "$tmp/$_n.err"
    echo $(($(e2e_now_ms) - _t0)) >"$tmp/$_n.ms"
}

e2e_now_ms() {
    _s=$(date +%s%N 2>/dev/null)
    case $_s in
        *N | '') echo $(($(date +%s) * 1000)) ;;
        *) echo $((_s / 1000000)) ;;
    esac
}

rc_of() { cat "$tmp/$1.rc"; }

# selftest_lines FILE PREFIX: a TAP line for each "ok - ..." / "not ok - ..." line of a fake's
# self-test output (selfcheck.h), its description prefixed PREFIX.
selftest_lines() {
    while IFS= read -r _line; do
        case $_line in
            "ok - "*) ok "$2${_line#ok - }" ;;
            "not ok - "*) T=$((T + 1)); echo "not ok $T - $2${_line#not ok - }" ;;
        esac
    done <"$1"
}

# --- assertions usable as check commands -------------------------------------------------

# same_run BASE KTIME: same exit status and byte-identical stdout.
same_run() {
    if [ "$(rc_of "$1")" != "$(rc_of "$2")" ]; then
        echo "exit status $(rc_of "$1") without ktime, $(rc_of "$2") with it"
        echo "stderr with ktime:"
        head -n 20 "$tmp/$2.err"
        return 1
    fi
    if ! cmp -s "$tmp/$1.out" "$tmp/$2.out"; then
        echo "stdout differs:"
        diff "$tmp/$1.out" "$tmp/$2.out" | head -n 20
        return 1
    fi
}

# rc_is NAME CODE
rc_is() {
    [ "$(rc_of "$1")" = "$2" ] && return 0
    echo "exit status $(rc_of "$1"), want $2"
    echo "stderr:"
    head -n 20 "$tmp/$1.err"
    return 1
}

# empty FILE
empty() {
    [ ! -s "$1" ] && return 0
    echo "not empty: $1"
    head -n 20 "$1"
    return 1
}

# absent FILE
absent() {
    [ ! -e "$1" ] && return 0
    echo "exists: $1"
    head -n 20 "$1"
    return 1
}

# jc FILE QUERY OP VALUE [TOL]: jcheck assertion.
jc() { "$JCHECK" "$@"; }

# jv FILE QUERY: print a value (first match), nothing if none.
jv() { "$JCHECK" "$1" "$2" 2>/dev/null | head -n 1; }

# fcount COUNTFILE KEY [NAME]: a count the fake wrote at exit (0 when absent).
fcount() {
    if [ $# -ge 3 ]; then
        awk -v k="$2" -v n="$3" '$1 == k && $2 == n && NF == 3 { v = $3 } END { print v + 0 }' "$1"
    else
        awk -v k="$2" '$1 == k && NF == 2 { v = $2 } END { print v + 0 }' "$1"
    fi
}

# counts_match REPORT COUNTFILE: ktime's calls per kernel equal the fake's launch counts, its
# graph rows' calls add up to the fake's cuGraphLaunch count, and totals.launches_seen is the
# sum of both (launches of an invalid function handle are not compared).
counts_match() {
    _rep=$1
    _cf=$2
    _bad=0
    [ -s "$_cf" ] || { echo "fake count file $_cf is empty"; return 1; }
    _sum=0
    for _k in $(awk '$1 == "launch" && NF == 3 { print $2 }' "$_cf"); do
        _want=$(fcount "$_cf" launch "$_k")
        _sum=$((_sum + _want))
        _got=$(jv "$_rep" "kernels[mangled=$_k].calls")
        if [ "$_got" != "$_want" ]; then
            echo "kernel $_k: ktime calls '${_got:-missing}', the fake saw $_want launches"
            _bad=1
        fi
    done
    _n=$(jv "$_rep" 'kernels|len')
    _i=0
    _g=0
    while [ "$_i" -lt "${_n:-0}" ]; do
        if [ "$(jv "$_rep" "kernels[$_i].kind")" = graph ]; then
            _g=$((_g + $(jv "$_rep" "kernels[$_i].calls")))
        else
            _k=$(jv "$_rep" "kernels[$_i].mangled")
            if [ "$(fcount "$_cf" launch "$_k")" = 0 ]; then
                echo "kernel '$_k' is in the report but the fake never saw it launched"
                _bad=1
            fi
        fi
        _i=$((_i + 1))
    done
    _want=$(fcount "$_cf" graph_launch)
    if [ "$_g" != "$_want" ]; then
        echo "graph rows have $_g calls, the fake saw $_want cuGraphLaunch"
        _bad=1
    fi
    _sum=$((_sum + _want))
    _got=$(jv "$_rep" totals.launches_seen)
    if [ "$_got" != "$_sum" ]; then
        echo "totals.launches_seen '${_got:-missing}', the fake saw $_sum launches"
        _bad=1
    fi
    return $_bad
}

# accounting REPORT: every launch is in exactly one bucket.
#   each row:  calls = warmup_skipped + captured + dropped + failed + timed + incomplete +
#              outside_range + paused
#   totals:    each bucket is the sum over rows (failed: failed_launches; calls:
#              launches_seen); dropped = sum of dropped_reasons; incomplete_at_exit is at
#              most the rows' incomplete (which also counts launches whose context died)
accounting() {
    _rep=$1
    _bad=0
    _n=$(jv "$_rep" 'kernels|len')
    [ -n "$_n" ] || { echo "no kernels array"; return 1; }
    _i=0
    while [ "$_i" -lt "$_n" ]; do
        _t=0
        for _q in warmup_skipped captured dropped failed timed incomplete outside_range paused; do
            _v=$(jv "$_rep" "kernels[$_i].$_q")
            [ -n "$_v" ] || { echo "kernels[$_i]: $_q missing"; _bad=1; _v=0; }
            _t=$((_t + _v))
        done
        _c=$(jv "$_rep" "kernels[$_i].calls")
        if [ "$_c" != "$_t" ]; then
            echo "kernels[$_i] ($(jv "$_rep" "kernels[$_i].mangled")): calls $_c != warmup_skipped+captured+dropped+failed+timed+incomplete+outside_range+paused = $_t"
            _bad=1
        fi
        _i=$((_i + 1))
    done
    for _q in warmup_skipped:warmup_skipped captured:captured dropped:dropped failed:failed_launches timed:timed \
        outside_range:outside_range paused:paused calls:launches_seen; do
        _kq=${_q%%:*}
        _tq=${_q#*:}
        _s=$("$JCHECK" "$_rep" "kernels[].$_kq|sum" 2>/dev/null)
        if [ "$_s" != "$(jv "$_rep" "totals.$_tq")" ]; then
            echo "sum of kernels[].$_kq = $_s, totals.$_tq = $(jv "$_rep" "totals.$_tq")"
            _bad=1
        fi
    done
    _s=$("$JCHECK" "$_rep" 'kernels[].incomplete|sum' 2>/dev/null)
    _v=$(jv "$_rep" totals.incomplete_at_exit)
    if [ -z "$_v" ] || [ "$_v" -gt "${_s:-0}" ]; then
        echo "totals.incomplete_at_exit '$_v' > sum of kernels[].incomplete $_s"
        _bad=1
    fi
    _ds=0
    for _q in $("$JCHECK" "$_rep" 'totals.dropped_reasons|keys' 2>/dev/null); do
        _ds=$((_ds + $(jv "$_rep" "totals.dropped_reasons.$_q")))
    done
    if [ "$_ds" != "$(jv "$_rep" totals.dropped)" ]; then
        echo "totals.dropped $(jv "$_rep" totals.dropped) != sum of dropped_reasons $_ds"
        _bad=1
    fi
    return $_bad
}

# exact REPORT MANGLED TIMED DURATION_US: TIMED samples, all exactly DURATION_US.
exact() {
    _rep=$1
    _k="kernels[mangled=$2]"
    _bad=0
    jc "$_rep" "$_k.timed" == "$3" || _bad=1
    if [ "$3" -gt 0 ]; then
        jc "$_rep" "$_k.min_us" == "$4" || _bad=1
        jc "$_rep" "$_k.max_us" == "$4" || _bad=1
        jc "$_rep" "$_k.mean_us" == "$4" || _bad=1
        jc "$_rep" "$_k.stddev_us" == 0 || _bad=1
        jc "$_rep" "$_k.m2_us2" == 0 || _bad=1
        _s=$(awk -v n="$3" -v d="$4" 'BEGIN { printf "%.6f", n * d }')
        jc "$_rep" "$_k.sum_us" '~' "$_s" 0.0006 || _bad=1
        _s=$(awk -v n="$3" -v d="$4" 'BEGIN { printf "%.9f", n * d / 1000 }')
        jc "$_rep" "$_k.total_ms" '~' "$_s" 0.0006 || _bad=1
    fi
    return $_bad
}

# samples_exact REPORT MANGLED DURATION_US: at least one sample, and every sample exactly
# DURATION_US (however many were timed).
samples_exact() {
    _rep=$1
    _k="kernels[mangled=$2]"
    _bad=0
    jc "$_rep" "$_k.timed" '>' 0 || _bad=1
    jc "$_rep" "$_k.min_us" == "$3" || _bad=1
    jc "$_rep" "$_k.max_us" == "$3" || _bad=1
    jc "$_rep" "$_k.mean_us" == "$3" || _bad=1
    jc "$_rep" "$_k.stddev_us" == 0 || _bad=1
    _s=$(awk -v n="$(jv "$_rep" "$_k.timed")" -v d="$3" 'BEGIN { printf "%.6f", n * d }')
    jc "$_rep" "$_k.sum_us" '~' "$_s" 0.0006 || _bad=1
    return $_bad
}

# events_balanced REPORT COUNTFILE: the fake recorded exactly two events per timed launch.
events_balanced() {
    # Two records per pair that reached the GPU: timed samples, pairs still pending at exit,
    # and samples voided by the gate watchdog (a launch held past 5-10 ms in its gate
    # window, which a slowed-down run, e.g. under ThreadSanitizer, can produce).
    _t=$(jv "$1" totals.timed)
    _i=$(jv "$1" totals.incomplete_at_exit)
    _g=$(jv "$1" totals.dropped_reasons.gate_timeout)
    _e=$(fcount "$2" event_record)
    _want=$((2 * (${_t:-0} + ${_i:-0} + ${_g:-0})))
    [ "$_e" = "$_want" ] && return 0
    echo "fake saw $_e cuEventRecord calls, report has $_t timed, $_i incomplete and ${_g:-0} gate_timeout (want $_want)"
    return 1
}

# one_warning ERRFILE VAR DEFAULT: stderr is exactly one line, starting "ktime:", naming
# VAR and the default in force.
one_warning() {
    _n=$(wc -l <"$1")
    _bad=0
    [ "$_n" -eq 1 ] || { echo "stderr has $_n lines, want 1"; _bad=1; }
    head -n 1 "$1" | grep -q '^ktime:' || { echo "stderr does not start with 'ktime:'"; _bad=1; }
    grep -q "$2" "$1" || { echo "warning does not name $2"; _bad=1; }
    grep -qw -- "$3" "$1" || { echo "warning does not give the default $3"; _bad=1; }
    [ $_bad = 0 ] || { echo "stderr:"; head -n 10 "$1"; }
    return $_bad
}

# stats DURATIONS N WARMUP: expected statistics (in µs) of a kernel whose durations (ns,
# comma-separated) cycle per launch, launched N times with the first WARMUP not timed.
# Prints: timed mean min max stddev sum m2
stats() {
    awk -v durs="$1" -v n="$2" -v w="$3" 'BEGIN {
        k = split(durs, d, ",")
        for (i = w; i < n; i++) {
            x = d[(i % k) + 1] / 1000.0
            c++; s += x
            if (c == 1 || x < lo) lo = x
            if (c == 1 || x > hi) hi = x
            v[c] = x
        }
        if (c == 0) { print "0 0 0 0 0 0 0"; exit }
        m = s / c
        for (i = 1; i <= c; i++) m2 += (v[i] - m) ^ 2
        sd = c > 1 ? sqrt(m2 / (c - 1)) : 0
        printf "%d %.9f %.9f %.9f %.9f %.9f %.9f\n", c, m, lo, hi, sd, s, m2
    }'
}

# sorted_by_total REPORT: kernels are sorted by total_ms, largest first.
sorted_by_total() {
    "$JCHECK" "$1" 'kernels[].total_ms' | awk 'NR > 1 && $1 > prev { bad = 1; print "total_ms " $1 " after " prev } { prev = $1 } END { exit bad }'
}

# --- programs that run on: app_live, driven through a FIFO ---------------------------------

# live_start NAME [VAR=VALUE...] -- KERNEL=NS...: app_live in the background with libktime
# preloaded (no ktime with LIVE_BARE=1), its commands coming through the FIFO $tmp/NAME.in,
# held open on descriptor 9 (one such program at a time); $LIVE_PID its pid. Output in
# $tmp/NAME.out and .err.
live_start() {
    _n=$1
    shift
    _env=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        _env="$_env $1"
        shift
    done
    [ "$1" = -- ] && shift
    rm -f "$tmp/$_n.in"
    mkfifo "$tmp/$_n.in" || e2e_fail_setup "mkfifo $tmp/$_n.in failed"
    : >"$tmp/$_n.out"
    : >"$tmp/$_n.err"
    if [ "${LIVE_BARE:-0}" = 1 ]; then
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$LDP" $_env "$E2E_BIN/app_live" "$@" <"$tmp/$_n.in" \
            >>"$tmp/$_n.out" 2>>"$tmp/$_n.err" &
    else
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" \
            $_env "$E2E_BIN/app_live" "$@" <"$tmp/$_n.in" >>"$tmp/$_n.out" 2>>"$tmp/$_n.err" &
    fi
    LIVE_PID=$!
    exec 9>"$tmp/$_n.in"
}

# live_cmd COMMAND...: one command line to the program.
live_cmd() {
    echo "$*" >&9
}

# wait_line FILE PATTERN [SECONDS]: until a line of FILE matches (at most SECONDS, default
# 30: a bound for a failing run, not a timing); false when none did.
wait_line() {
    _i=0
    while ! grep -q "$2" "$1" 2>/dev/null; do
        [ $_i -lt $((${3:-30} * 100)) ] || return 1
        sleep 0.01
        _i=$((_i + 1))
    done
}

# live_do NAME COMMAND... EXPECT: sends the command and waits for the program's line EXPECT.
live_do() {
    _n=$1
    _want=$2
    shift 2
    _before=$(grep -c -x "$_want" "$tmp/$_n.out")
    live_cmd "$@"
    _i=0
    while [ "$(grep -c -x "$_want" "$tmp/$_n.out")" -le "$_before" ]; do
        [ $_i -lt 3000 ] || { echo "no '$_want' from the program"; return 1; }
        sleep 0.01
        _i=$((_i + 1))
    done
}

# live_end NAME: ends its input, waits for it; its exit status in $tmp/NAME.rc.
live_end() {
    exec 9>&-
    wait "$LIVE_PID"
    echo $? >"$tmp/$1.rc"
    grep '^ktime: report written to ' "$tmp/$1.err" >"$tmp/$1.written"
    grep -v '^ktime: report written to ' "$tmp/$1.err" >"$tmp/$1.err2"
    mv "$tmp/$1.err2" "$tmp/$1.err"
}

# snap_seq FILE: the JSON report's snapshot.seq, 0 when there is none (yet).
snap_seq() {
    _s=$("$JCHECK" "$1" snapshot.seq 2>/dev/null)
    echo "${_s:-0}"
}

# wait_seq FILE N: until FILE's snapshot.seq is at least N (at most 30 s); false if never.
wait_seq() {
    _i=0
    while [ "$(snap_seq "$1")" -lt "$2" ]; do
        [ $_i -lt 3000 ] || { echo "$1: snapshot.seq $(snap_seq "$1"), waited for $2"; return 1; }
        sleep 0.01
        _i=$((_i + 1))
    done
}
