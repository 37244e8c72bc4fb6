#!/bin/sh
# live.sh - ktime always on (docs/always-on.md). KTIME_INTERVAL rewrites the report, in every
# format asked for, while the program runs, so that a SIGKILLed job leaves its last snapshot:
# exact, whatever the timing (the launches the program made and synchronized before a snapshot
# began are all in it: the test waits for the snapshot after next). KTIME_SERIES's lines are
# valid JSON whose deltas add up to the report at exit. KTIME_PROM parses line by line against
# the Prometheus exposition format (promcheck, itself shown to refuse what breaks it), label
# values escaped, the label set bounded by KTIME_PROM_TOP. Snapshots never go to the program's
# stdout. The program's output and exit status are what they are without ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

PC=$E2E_BIN/promcheck
K="k_a=125000 k_b=250000 k_c=375000"
XDG=$tmp/xdg
mkdir -m 700 "$XDG"

# lines FILE: splits a JSON-lines file into $tmp/line.N (1, 2, ...); prints how many.
lines() {
    rm -f "$tmp"/line.*
    awk -v d="$tmp" '{ print > (d "/line." NR) }' "$1"
    wc -l <"$1" | tr -d ' '
}

# series_sum FILE KERNEL FIELD: FIELD of KERNEL summed over the series' lines.
series_sum() {
    _n=$(lines "$1")
    _s=0
    _i=1
    while [ "$_i" -le "$_n" ]; do
        _v=$("$JCHECK" "$tmp/line.$_i" "kernels[mangled=$2].$3" 2>/dev/null)
        _s=$(awk -v a="$_s" -v b="${_v:-0}" 'BEGIN { printf "%.6f", a + b }')
        _i=$((_i + 1))
    done
    awk -v s="$_s" 'BEGIN { printf "%.6f\n", s }'
}

# series_valid FILE: every line a JSON object of one process, seq counting up by one from the
# first, the first counted from zero.
series_valid() {
    _n=$(lines "$1")
    [ "$_n" -gt 0 ] || { echo "no lines"; return 1; }
    _i=1
    _prev=
    while [ "$_i" -le "$_n" ]; do
        "$JCHECK" "$tmp/line.$_i" || { echo "line $_i is not valid JSON"; return 1; }
        jc "$tmp/line.$_i" ktime_series == 1 || return 1
        _seq=$("$JCHECK" "$tmp/line.$_i" seq)
        if [ -n "$_prev" ] && [ "$_seq" != $((_prev + 1)) ]; then
            echo "line $_i: seq $_seq after $_prev"
            return 1
        fi
        _prev=$_seq
        _i=$((_i + 1))
    done
    jc "$tmp/line.1" from_zero == true
}

# near A B: the numbers A and B differ by at most 1e-6.
near() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; if (d > 1e-6) { print a " != " b; exit 1 } }'
}

# ---- the checker refuses what breaks the format -------------------------------------------
printf '# TYPE a counter\na{k="v"} 1\nb 2\na{k="w"} 3\n' >"$tmp/bad1.prom"
printf 'a{k="tab\\t"} 1\n' >"$tmp/bad2.prom"
printf '# TYPE s summary\ns 1\n' >"$tmp/bad3.prom"
printf 'a 1 1700000000000\n' >"$tmp/bad4.prom"
printf 'a{k="v"} 1\na{k="v"} 2\n' >"$tmp/bad5.prom"
printf '1a 1\n' >"$tmp/bad6.prom"
printf 'a one\n' >"$tmp/bad7.prom"
printf 'a 1' >"$tmp/bad8.prom"
printf 'a{k="v} 1\n' >"$tmp/bad9.prom"
printf 'a 1\n# TYPE a counter\n' >"$tmp/bad10.prom"
printf '# HELP a x\n# TYPE a gauge\n# a comment\na{k="q\\"b\\\\s\\n"} -1.5e-3\n\ns_x{quantile="0.5"} NaN\n' >"$tmp/good.prom"
check "promcheck: a valid file passes" "$PC" "$tmp/good.prom"
check "promcheck: a query unescapes label values" sh -c "[ \"\$('$PC' '$tmp/good.prom' a 'k=q\"b\\s
')\" = -1.5e-3 ]"
for _b in 1 2 3 4 5 6 7 8 9 10; do
    check "promcheck: bad$_b.prom refused" sh -c "'$PC' '$tmp/bad$_b.prom'; [ \$? = 1 ]"
done

# ---- a SIGKILL mid-run leaves the last snapshot, exact ------------------------------------
live_start kill XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=0 KTIME_INTERVAL=1 KTIME_OUTPUT="$tmp/kill.json" \
    KTIME_ALSO_OUTPUT="$tmp/kill.csv" KTIME_PROM="$tmp/kill.prom" KTIME_SERIES="$tmp/kill.jsonl" -- $K
check "kill: the program launches" live_do kill "launched k_a 30" launch k_a 30
check "kill: a first snapshot while it runs" wait_seq "$tmp/kill.json" 1
check "kill: more launches" live_do kill "launched k_b 12" launch k_b 12
S=$(snap_seq "$tmp/kill.json")
# Snapshot S+1 may have begun before the launches were done; S+2 began after S+1 was written.
check "kill: the snapshot after next" wait_seq "$tmp/kill.json" $((S + 2))
kill -9 "$LIVE_PID"
exec 9>&-
wait "$LIVE_PID"
check "kill: ended by SIGKILL (137)" [ $? = 137 ]
R=$tmp/kill.json
check "kill: the report file is valid JSON" "$JCHECK" "$R"
check "kill: a snapshot, not the final report" jc "$R" snapshot.final == false
check "kill: snapshot seq $((S + 2)) or later" jc "$R" snapshot.seq '>=' $((S + 2))
check "kill: interval_s 1" jc "$R" snapshot.interval_s == 1
check "kill: nothing reset, nothing paused" sh -c "'$JCHECK' '$R' snapshot.resets == 0 && '$JCHECK' '$R' snapshot.paused == false"
check "kill: k_a's 30 launches, each 125 us" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_a].calls' == 30"
check "kill: k_a exact" exact "$R" k_a 30 125
check "kill: k_b's 12 launches, each 250 us" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_b].calls' == 12"
check "kill: k_b exact" exact "$R" k_b 12 250
check "kill: every launch in one bucket" accounting "$R"
check "kill: no k_c (never launched)" sh -c "! '$JCHECK' '$R' 'kernels[mangled=k_c]' >/dev/null 2>&1"
check "kill: the CSV snapshot too (KTIME_ALSO_OUTPUT): k_a 30 calls, 30 timed" sh -c \
    "tr -d '\r' <'$tmp/kill.csv' | awk -F, '\$2 == \"k_a\" && \$5 == 30 && \$11 == 30 { ok = 1 } END { exit !ok }'"
check "kill: the Prometheus file parses" "$PC" "$tmp/kill.prom"
check "kill: Prometheus: k_a's launches" sh -c "[ \"\$('$PC' '$tmp/kill.prom' ktime_kernel_launches_total kernel=k_a)\" = 30 ]"
check "kill: Prometheus: k_b's timed launches on gpu 0" sh -c "[ \"\$('$PC' '$tmp/kill.prom' ktime_kernel_timed_launches_total kernel=k_b gpu=0)\" = 12 ]"
check "kill: Prometheus: k_b's GPU seconds" near "$("$PC" "$tmp/kill.prom" ktime_kernel_gpu_seconds_total kernel=k_b gpu=0)" 0.003
check "kill: Prometheus: k_a's median" near "$("$PC" "$tmp/kill.prom" ktime_kernel_duration_seconds kernel=k_a gpu=0 quantile=0.5)" 0.000125
check "kill: Prometheus: not final" sh -c "[ \"\$('$PC' '$tmp/kill.prom' ktime_snapshot_final)\" = 0 ]"
check "kill: Prometheus: the host label" sh -c "[ \"\$('$PC' --count '$tmp/kill.prom' ktime_kernel_launches_total host=\$(hostname))\" = 2 ]"
check "kill: the series' lines are valid, counting up" series_valid "$tmp/kill.jsonl"
check "kill: the series' calls of k_a add up to 30" near "$(series_sum "$tmp/kill.jsonl" k_a calls)" 30
check "kill: the series' timed of k_b add up to 12" near "$(series_sum "$tmp/kill.jsonl" k_b timed)" 12
check "kill: the series' GPU time of k_b adds up to 3000 us" near "$(series_sum "$tmp/kill.jsonl" k_b sum_us)" 3000
check "kill: an interval's own median (k_b: 250 us)" sh -c "grep -q '\"mangled\": \"k_b\", \"kind\": \"kernel\", \"calls\": 12, \"timed\": 12, \"sum_us\": 3000, \"p50_us\": 250, \"p99_us\": 250}' '$tmp/kill.jsonl'"
check "kill: no line says final" sh -c "! grep -q '\"final\": true' '$tmp/kill.jsonl'"

# ---- the series adds up to the report at exit ---------------------------------------------
live_start sum XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=2 KTIME_INTERVAL=1 KTIME_OUTPUT="$tmp/sum.json" \
    KTIME_SERIES="$tmp/sum.jsonl" -- $K
live_do sum "launched k_a 10" launch k_a 10
check "sum: a first snapshot" wait_seq "$tmp/sum.json" 1
live_do sum "launched k_b 5" launch k_b 5
live_do sum "launched k_a 3" launch k_a 3
S=$(snap_seq "$tmp/sum.json")
check "sum: another snapshot" wait_seq "$tmp/sum.json" $((S + 1))
live_do sum "launched k_c 4" launch k_c 4
live_end sum
R=$tmp/sum.json
check "sum: exit status 0" rc_is sum 0
check "sum: the final report says so" jc "$R" snapshot.final == true
check "sum: its seq is the series' last" sh -c "[ \"\$(tail -n 1 '$tmp/sum.jsonl' | sed 's/.*\"seq\": \\([0-9]*\\),.*/\\1/')\" = \"\$('$JCHECK' '$R' snapshot.seq)\" ]"
check "sum: the series' lines are valid, counting up" series_valid "$tmp/sum.jsonl"
check "sum: the last line is the final one" sh -c "tail -n 1 '$tmp/sum.jsonl' | grep -q '\"final\": true'"
for _k in k_a k_b k_c; do
    for _f in calls timed sum_us; do
        check "sum: $_k's $_f over the lines is the report's" near \
            "$(series_sum "$tmp/sum.jsonl" $_k $_f)" "$(jv "$R" "kernels[mangled=$_k].$_f")"
    done
done
check "sum: k_a 13 calls, 11 timed (warmup 2)" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_a].calls' == 13 && '$JCHECK' '$R' 'kernels[mangled=k_a].timed' == 11"
check "sum: every launch in one bucket" accounting "$R"
# ktime plot's reading of the series (its plot needs matplotlib; its table does not): each
# kernel's totals are the report's, and a last line cut short is left out, said on stderr.
if command -v python3 >/dev/null 2>&1; then
    : "${SRC_DIR:=$(dirname "$0")/../..}"
    cp "$tmp/sum.jsonl" "$tmp/cut.jsonl"
    printf '{"ktime_series": 1, "pid": 1, "kern' >>"$tmp/cut.jsonl"
    python3 - "$SRC_DIR/tools" "$tmp/cut.jsonl" >"$tmp/py.out" 2>"$tmp/py.err" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ktime_tool
lines = ktime_tool.load_series(sys.argv[2])
times, busy, p50, p99, totals, n = ktime_tool.series_table(lines, 2)
for m in sorted(totals):
    print(m, totals[m]["calls"], totals[m]["timed"], "%.3f" % totals[m]["sum_us"])
print("intervals", n, len(times), sorted(busy))
PY
    for _k in k_a k_b k_c; do
        check "ktime plot's table: $_k's totals are the report's" grep -qx \
            "$_k $(jv "$tmp/sum.json" "kernels[mangled=$_k].calls") $(jv "$tmp/sum.json" "kernels[mangled=$_k].timed") $(awk -v s="$(jv "$tmp/sum.json" "kernels[mangled=$_k].sum_us")" 'BEGIN { printf "%.3f", s }')" "$tmp/py.out"
    done
    # k_b before k_c: as much GPU time (750 us), seen first.
    check "ktime plot's table: every line an interval, the top 2 kernels and the rest" grep -qx \
        "intervals $(wc -l <"$tmp/sum.jsonl" | tr -d ' ') $(wc -l <"$tmp/sum.jsonl" | tr -d ' ') \['(other kernels)', 'k_a', 'k_b'\]" "$tmp/py.out"
    check "ktime plot: a last line cut short is left out, said once" grep -q "its last line is cut short (the process was killed while writing it); left out" "$tmp/py.err"
else
    skip "ktime plot's table" "no python3"
fi
# The same commands without ktime: the same output and exit status.
LIVE_BARE=1 live_start sumbare -- $K
for _c in "launch k_a 10" "launch k_b 5" "launch k_a 3" "launch k_c 4"; do
    live_do sumbare "launched ${_c#launch }" $_c
done
live_end sumbare
check "sum: the program's output and exit status as without ktime" same_run sumbare sum

# ---- the text report's snapshot line; KTIME_PROM_TOP; label values escaped -----------------
live_start top XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=0 KTIME_INTERVAL=1 KTIME_OUTPUT="$tmp/top.txt" \
    KTIME_PROM="$tmp/top.prom" KTIME_PROM_TOP=1 -- $K 'q"u\ote=125000'
live_do top "launched k_c 10" launch k_c 10
live_do top "launched k_b 5" launch k_b 5
live_do top "launched k_a 4" launch k_a 4
check "text: a snapshot line while it runs" wait_line "$tmp/top.txt" '^snapshot [0-9]* at [0-9T:.-]*Z, while the program runs$'
live_end top
check "text: the final report's line" grep -q '^snapshot [0-9]*, the final report (at exit)$' "$tmp/top.txt"
check "top: the Prometheus file parses" "$PC" "$tmp/top.prom"
check "top: KTIME_PROM_TOP=1: k_c and the rest, two series" sh -c "[ \"\$('$PC' --count '$tmp/top.prom' ktime_kernel_launches_total)\" = 2 ]"
check "top: k_c, the most GPU time, has its own" sh -c "[ \"\$('$PC' '$tmp/top.prom' ktime_kernel_launches_total kernel=k_c)\" = 10 ]"
check "top: the rest in (other kernels): 9 launches" sh -c "[ \"\$('$PC' '$tmp/top.prom' ktime_kernel_launches_total 'kernel=(other kernels)')\" = 9 ]"
check "top: and their GPU time" near "$("$PC" "$tmp/top.prom" ktime_kernel_gpu_seconds_total 'kernel=(other kernels)' gpu=0)" 0.00175
check "top: the final file says so" sh -c "[ \"\$('$PC' '$tmp/top.prom' ktime_snapshot_final)\" = 1 ]"
live_start esc XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=0 KTIME_PROM="$tmp/esc.prom" -- 'q"u\ote=125000' k_a=125000
live_do esc 'launched q"u\\ote 3' launch 'q"u\ote' 3
live_end esc
check "escaped: the file parses" "$PC" "$tmp/esc.prom"
check "escaped: the quote and backslash in a label value" grep -qF 'kernel="q\"u\\ote"} 3' "$tmp/esc.prom"
check "escaped: read back as the kernel's name" sh -c "[ \"\$('$PC' '$tmp/esc.prom' ktime_kernel_launches_total 'kernel=q\"u\\ote')\" = 3 ]"
check "KTIME_PROM alone: written at exit, no snapshot in it before" sh -c "[ \"\$('$PC' '$tmp/esc.prom' ktime_snapshot_seq)\" = 1 ]"
check "KTIME_PROM alone: the report on stderr has no snapshot line" sh -c "! grep -q '^snapshot' '$tmp/esc.err'"

# ---- snapshots never go to the program's stdout ----------------------------------------------
live_start so XDG_RUNTIME_DIR="$XDG" KTIME_WARMUP=0 KTIME_INTERVAL=1 KTIME_OUTPUT=/dev/stdout -- $K
live_do so "launched k_a 2" launch k_a 2
check "stdout: a second passes" live_do so "slept 1500" sleep 1500
live_end so
check "stdout: one warning, naming it" sh -c "[ \$(wc -l <'$tmp/so.err') = 1 ] && grep -q \"^ktime: warning: KTIME_OUTPUT '/dev/stdout' is the program's stdout or stderr.*no snapshots written there\" '$tmp/so.err'"
check "stdout: the report once, at exit, after the program's lines" sh -c "[ \$(grep -c '^ktime .*GPU time per kernel' '$tmp/so.out') = 1 ] && head -n 2 '$tmp/so.out' | tail -n 1 | grep -q '^slept 1500\$'"

# ---- nothing to write snapshots to ----------------------------------------------------------
run_ktime none XDG_RUNTIME_DIR="$XDG" KTIME_INTERVAL=5 "$E2E_BIN/app_cudart" k=125000:3
check "KTIME_INTERVAL with the report on stderr: one warning" sh -c "grep -c '^ktime: warning: KTIME_INTERVAL=5: the report goes to stderr at exit, so there is nothing to write snapshots to' '$tmp/none.err' | grep -qx 1"
run_ktime plain KTIME_OUTPUT="$tmp/plain.json" "$E2E_BIN/app_cudart" k=125000:3
check "no KTIME_INTERVAL: no snapshot member" sh -c "! '$JCHECK' '$tmp/plain.json' snapshot >/dev/null 2>&1"
finish
