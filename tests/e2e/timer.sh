#!/bin/sh
# timer.sh - the CUPTI timer (KTIME_TIMER=cupti|both) and KTIME_SAMPLE, end to end against the
# fake driver and the fake CUPTI (tests/fake/README.md: kernel durations are exact, and both
# fakes count what they did in the count file, the independent count). KTIME_CUPTI_LIB always
# names the fake CUPTI (or a file that does not exist): a real CUPTI is never used. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime
CUPTI=$FAKE_DIR/libcupti.so.13
[ -f "$CUPTI" ] || e2e_fail_setup "fake CUPTI not built: $CUPTI (set FAKE_DIR)"
KCOUNT=$E2E_BIN/libkcount.so
[ -f "$KCOUNT" ] || e2e_fail_setup "libkcount.so not built: $KCOUNT"
A=$E2E_BIN/app_cudart
CAP=$E2E_BIN/app_capture
CLIENT=$E2E_BIN/app_cupti_client

# krun NAME [VAR=VALUE...] PROGRAM ARGS: run_ktime with the fake CUPTI, the report in
# $tmp/NAME.json (NAME.txt when NAME ends in _t), the fakes' counts in $tmp/NAME.cnt.
krun() {
    _kn=$1
    shift
    case $_kn in
        *_t) _ko=$tmp/$_kn.txt ;;
        *) _ko=$tmp/$_kn.json ;;
    esac
    rm -f "$_ko" "$tmp/$_kn.cnt"
    run_ktime "$_kn" KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$_ko" FAKECUDA_COUNT_FILE="$tmp/$_kn.cnt" "$@"
}

# --- assertions --------------------------------------------------------------------------

# rows REPORT: every launch in exactly one bucket, whatever the timer. Per row:
#   calls (+ in_graph under KTIME_TIMER=cupti: a graph node's record is counted like a launch)
#     = warmup_skipped + captured + dropped + failed + timed + incomplete + unsampled + timed_by_nodes
# and every total is the sum over the rows (calls: launches_seen).
rows() {
    _rep=$1
    _bad=0
    _n=$(jv "$_rep" 'kernels|len')
    [ -n "$_n" ] || { echo "no kernels array in $_rep"; return 1; }
    _g=0
    [ "$(jv "$_rep" timer.used)" = cupti ] && _g=1
    _i=0
    while [ "$_i" -lt "$_n" ]; do
        _t=0
        for _q in warmup_skipped captured dropped failed timed incomplete unsampled timed_by_nodes; do
            _v=$(jv "$_rep" "kernels[$_i].$_q")
            [ -n "$_v" ] || { echo "kernels[$_i]: $_q missing"; _bad=1; _v=0; }
            _t=$((_t + _v))
        done
        _c=$(($(jv "$_rep" "kernels[$_i].calls") + _g * $(jv "$_rep" "kernels[$_i].in_graph")))
        if [ "$_c" != "$_t" ]; then
            echo "kernels[$_i] ($(jv "$_rep" "kernels[$_i].mangled")): calls$([ $_g = 1 ] && echo ' + in_graph') $_c != buckets $_t"
            _bad=1
        fi
        _i=$((_i + 1))
    done
    for _q in calls:launches_seen timed:timed warmup_skipped:warmup_skipped captured:captured dropped:dropped \
        failed:failed_launches incomplete:incomplete_at_exit unsampled:unsampled in_graph:in_graph \
        timed_by_nodes:timed_by_nodes cupti_timed:cupti_timed; do
        _s=$("$JCHECK" "$_rep" "kernels[].${_q%%:*}|sum" 2>/dev/null)
        if [ "${_s:-0}" != "$(jv "$_rep" "totals.${_q#*:}")" ]; then
            echo "sum of kernels[].${_q%%:*} = $_s, totals.${_q#*:} = $(jv "$_rep" "totals.${_q#*:}")"
            _bad=1
        fi
    done
    return $_bad
}

# footer TEXT N: the text report's "launches N seen: ..." line says N, and its buckets add up to N.
footer() {
    awk -v want="$2" '/^launches [0-9]+ seen: / {
        found = 1; n = $2; s = $0; sub(/^launches [0-9]+ seen: /, "", s)
        k = split(s, a, ", "); t = 0
        for (i = 1; i <= k; i++) { split(a[i], b, " "); t += b[1] }
        if (n != want) { print "footer says " n " launches, want " want; bad = 1 }
        if (t != n) { print "footer: " n " launches seen, its buckets add up to " t; bad = 1 }
    } END { if (!found) { print "no \"launches N seen\" line"; bad = 1 } exit bad }' "$1" || {
        cat "$1"
        return 1
    }
}

# hw_exact REPORT MANGLED DURATIONS N WARMUP [CUPTI_TIMED]: a kernel launched N times with
# durations cycling through DURATIONS (ns): its first WARMUP records are warmup and the rest are
# its samples, statistics exact (lib.sh's stats); all of them CUPTI's unless CUPTI_TIMED says.
hw_exact() {
    _rep=$1
    _k="kernels[mangled=$2]"
    _w=$5
    _ct=${6:-}
    # shellcheck disable=SC2046
    set -- $(stats "$3" "$4" "$5") # timed mean min max stddev sum m2
    _bad=0
    jc "$_rep" "$_k.warmup_skipped" == "$_w" || _bad=1
    jc "$_rep" "$_k.timed" == "$1" || _bad=1
    jc "$_rep" "$_k.cupti_timed" == "${_ct:-$1}" || _bad=1
    jc "$_rep" "$_k.mean_us" '~' "$2" 0.000001 || _bad=1
    jc "$_rep" "$_k.min_us" '~' "$3" 0.000001 || _bad=1
    jc "$_rep" "$_k.max_us" '~' "$4" 0.000001 || _bad=1
    jc "$_rep" "$_k.stddev_us" '~' "$5" 0.000001 || _bad=1
    jc "$_rep" "$_k.sum_us" '~' "$6" 0.000001 || _bad=1
    jc "$_rep" "$_k.m2_us2" '~' "$7" 0.0001 || _bad=1
    return $_bad
}

# ev_exact REPORT MANGLED N MIN MAX [SUM]: N launches timed with events, samples from MIN to
# MAX us (and summing to SUM); none from CUPTI. A sample the gate watchdog voided (dropped,
# gate_timeout: a launch held 5-10 ms behind its gate, as in a slowed-down run, e.g. under
# ThreadSanitizer) counts as one of the N; no other drop does.
ev_exact() {
    _k="kernels[mangled=$2]"
    _t=$(jv "$1" "$_k.timed")
    _d=$(jv "$1" "$_k.dropped")
    _bad=0
    [ $((${_t:-0} + ${_d:-0})) = "$3" ] || { echo "$2: $_t timed + $_d voided, want $3"; _bad=1; }
    jc "$1" totals.dropped == "$(jv "$1" totals.dropped_reasons.gate_timeout)" || _bad=1
    jc "$1" "$_k.cupti_timed" == 0 || _bad=1
    if [ "${_t:-0}" -gt 0 ]; then
        jc "$1" "$_k.min_us" == "$4" || _bad=1
        jc "$1" "$_k.max_us" == "$5" || _bad=1
    fi
    if [ "${_d:-0}" = 0 ] && [ -n "${6:-}" ]; then
        jc "$1" "$_k.sum_us" '~' "$6" 0.000001 || _bad=1
    fi
    return $_bad
}

# delivered COUNTFILE: the fake CUPTI made a record of every kernel the fake driver ran
# (launch_ok + graph_kernel) and delivered every one of them to a client.
delivered() {
    _bad=0
    for _k in $(awk '$1 == "launch_ok" && NF == 3 { print $2 }' "$1"); do
        _want=$(($(fcount "$1" launch_ok "$_k") + $(fcount "$1" graph_kernel "$_k")))
        _got=$(fcount "$1" cupti_delivered "$_k")
        [ "$_got" = "$_want" ] || { echo "$_k: fake CUPTI delivered $_got records, the driver ran $_want"; _bad=1; }
    done
    [ "$(fcount "$1" cupti_records)" = "$(fcount "$1" cupti_records_delivered)" ] || {
        echo "cupti_records $(fcount "$1" cupti_records), delivered $(fcount "$1" cupti_records_delivered)"
        _bad=1
    }
    return $_bad
}

# count_is COUNTFILE KEY [NAME] WANT
count_is() {
    _w=$(eval echo "\${$#}")
    if [ $# -eq 4 ]; then _v=$(fcount "$1" "$2" "$3"); else _v=$(fcount "$1" "$2"); fi
    [ "$_v" = "$_w" ] && return 0
    echo "count file: $2${4:+ $3} is $_v, want $_w"
    return 1
}

# stderr_is NAME LINE...: stderr holds exactly these lines (grep patterns, in order).
stderr_is() {
    _f=$tmp/$1.err
    shift
    _n=$(wc -l <"$_f")
    [ "$_n" -eq $# ] || { echo "stderr has $_n lines, want $#:"; cat "$_f"; return 1; }
    _i=1
    for _p in "$@"; do
        sed -n "${_i}p" "$_f" | grep -q -- "$_p" || { echo "stderr line $_i does not match '$_p':"; cat "$_f"; return 1; }
        _i=$((_i + 1))
    done
}

# within NAME LO HI: the run took LO to HI ms.
within() {
    _ms=$(cat "$tmp/$1.ms")
    [ "$_ms" -ge "$2" ] && [ "$_ms" -le "$3" ] && return 0
    echo "took $_ms ms, want $2 to $3"
    return 1
}

# ===================================================================== 1. KTIME_TIMER=cupti
PLAN="--stream kmix=125000,375000:40 k_small=125000:12 _Z6squarePfi=250000:7"
# shellcheck disable=SC2086
run_plain base "$A" $PLAN
# shellcheck disable=SC2086
krun c1 KTIME_TIMER=cupti "$A" $PLAN
R=$tmp/c1.json
check "cupti: same exit status and stdout" same_run base c1
check "cupti: nothing on stderr" empty "$tmp/c1.err"
check "cupti: timer requested cupti, used cupti, no note" sh -c "'$JCHECK' '$R' timer.requested == cupti && '$JCHECK' '$R' timer.used == cupti && '$JCHECK' '$R' timer.note == null"
check "cupti: timing_method cupti-activity" jc "$R" timing_method == cupti-activity
check "cupti: the library is the fake CUPTI named by KTIME_CUPTI_LIB" jc "$R" timer.cupti_library == "$CUPTI"
check "cupti: calls per kernel equal the fake driver's launches" counts_match "$R" "$tmp/c1.cnt"
check "cupti: the fake CUPTI delivered a record of every kernel that ran" delivered "$tmp/c1.cnt"
check "cupti: no CUDA event recorded, no launch gate" sh -c "[ \$(awk '\$1==\"event_record\"{print \$2}' '$tmp/c1.cnt') = 0 ] && [ \$(awk '\$1==\"stream_wait\"{print \$2}' '$tmp/c1.cnt') = 0 ]"
check "cupti: kmix (125/375 us cycling) x40: first 5 records warmup, 35 timed, mean 253.571 (over all 40: 250)" hw_exact "$R" kmix 125000,375000 40 5
check "cupti: k_small x12: 5 warmup, 7 timed exactly 125 us" hw_exact "$R" k_small 125000 12 5
check "cupti: square(float*, int) x7: 5 warmup, 2 timed exactly 250 us" hw_exact "$R" _Z6squarePfi 250000 7 5
check "cupti: mangled names are demangled" jc "$R" 'kernels[mangled=_Z6squarePfi].name' == "square(float*, int)"
check "cupti: every launch in exactly one bucket" rows "$R"
check "cupti: no drops, nothing incomplete" sh -c "'$JCHECK' '$R' timer.cupti_records_dropped == 0 && '$JCHECK' '$R' totals.incomplete_at_exit == 0 && '$JCHECK' '$R' totals.cupti_timed == 44"

# shellcheck disable=SC2086
krun c1_t KTIME_TIMER=cupti "$A" $PLAN
check "cupti, text: the header says CUPTI activity records" grep -q "GPU time per kernel, from CUPTI activity records$" "$tmp/c1_t.txt"
check "cupti, text: the method line" grep -q "^method   CUPTI activity records: the hardware's start and end of each kernel" "$tmp/c1_t.txt"
row=$(stats 125000,375000 40 5 | awk '{ printf "%.3f +40 +5 +%d +%.3f +[0-9.]+ +[0-9.]+ +%.3f +%.3f +%.3f", $6 / 1000, $1, $2, $3, $4, $5 }')
check "cupti, text: kmix row: 40 calls, 5 warmup, 35 timed, exact statistics" grep -Eq "^ +[0-9.]+ +$row  kmix\$" "$tmp/c1_t.txt"
check "cupti, text: no timer note, no hand-over line" sh -c "! grep -Eq '^(timer|timers) ' '$tmp/c1_t.txt'"
check "cupti, text: the footer's buckets add up to the 59 launches" footer "$tmp/c1_t.txt" 59

# shellcheck disable=SC2086
krun c0 KTIME_TIMER=cupti KTIME_WARMUP=0 "$A" $PLAN
check "cupti, KTIME_WARMUP=0: every record timed, kmix mean 250 over all 40" hw_exact "$tmp/c0.json" kmix 125000,375000 40 0
check "cupti, KTIME_WARMUP=0: square timed 7 of 7" hw_exact "$tmp/c0.json" _Z6squarePfi 250000 7 0
krun c2 KTIME_TIMER=cupti KTIME_WARMUP=2 "$A" kmix=125000,375000:9
check "cupti, KTIME_WARMUP=2: warmup is the first 2 records (125, 375): mean of the other 7 is 232.143" hw_exact "$tmp/c2.json" kmix 125000,375000 9 2

# ===================================================================== 2. KTIME_TIMER=both
krun b1 KTIME_TIMER=both "$A" kmix=125000,375000:40 k_small=125000:12
R=$tmp/b1.json
check "both: nothing on stderr" empty "$tmp/b1.err"
check "both: timer used both, timing_method cuda-events+cupti-activity" sh -c "'$JCHECK' '$R' timer.used == both && '$JCHECK' '$R' timing_method == cuda-events+cupti-activity"
check "both: calls equal the fake driver's" counts_match "$R" "$tmp/b1.cnt"
check "both: every launch in exactly one bucket" rows "$R"
check "both: two events per timed launch" events_balanced "$R" "$tmp/b1.cnt"
check "both: the fake CUPTI delivered every record" delivered "$tmp/b1.cnt"
for k in kmix:125000,375000 k_small:125000; do
    n=${k%%:*}
    # shellcheck disable=SC2046
    set -- $(stats "${k#*:}" "$([ "$n" = kmix ] && echo 40 || echo 12)" 5)
    check "both: $n: events timed $1 exactly (sum $6 us)" ev_exact "$R" "$n" "$1" "$3" "$4" "$6"
    check "both: $n: hardware timed $1, mean $2 (the same launches)" sh -c "'$JCHECK' '$R' 'kernels[mangled=$n].hw.timed' == $1 && '$JCHECK' '$R' 'kernels[mangled=$n].hw.mean_us' '~' $2 0.000001 && '$JCHECK' '$R' 'kernels[mangled=$n].hw.sum_us' '~' $6 0.000001"
    check "both: $n: the events' mean is $2 too: bias_us (events minus hardware) 0 in the fake" sh -c "'$JCHECK' '$R' 'kernels[mangled=$n].mean_us' '~' $2 0.000001 && '$JCHECK' '$R' 'kernels[mangled=$n].hw.bias_us' == 0"
done
krun b1_t KTIME_TIMER=both "$A" kmix=125000,375000:40 k_small=125000:12
check "both, text: the header names both timers" grep -q "from CUDA events and CUPTI activity records$" "$tmp/b1_t.txt"
check "both, text: the bias table" grep -q "^events against the hardware (CUPTI), per kernel" "$tmp/b1_t.txt"
m=$(stats 125000,375000 40 5 | awk '{ printf "%.3f", $2 }')
check "both, text: kmix: 35 timed, events mean $m, 35 hardware, $m, bias +0.000" grep -Eq "^ +35 +$m +35 +$m +\\+0\\.000  kmix\$" "$tmp/b1_t.txt"
check "both, text: k_small: 7, 125.000, 7, 125.000, +0.000" grep -Eq "^ +7 +125\\.000 +7 +125\\.000 +\\+0\\.000  k_small$" "$tmp/b1_t.txt"
check "both, text: the footer's buckets add up to the 52 launches" footer "$tmp/b1_t.txt" 52

# ===================================================================== 3. graphs, CUPTI timer
# app_capture --eager 2 4 10: cap_a x2 eagerly, then 4 launches captured (cap_a, cap_b, cap_a,
# cap_b) into a graph launched 10 times: cap_a and cap_b each run 20 times as graph nodes.
run_plain gbase "$CAP" --eager 2 4 10
krun g1 KTIME_TIMER=cupti "$CAP" --eager 2 4 10
R=$tmp/g1.json
check "graphs, cupti: same exit status and stdout" same_run gbase g1
check "graphs, cupti: nothing on stderr" empty "$tmp/g1.err"
check "graphs, cupti: calls equal the fake's, the graph row's its cuGraphLaunch count" counts_match "$R" "$tmp/g1.cnt"
check "graphs, cupti: the fake CUPTI delivered every record (graph nodes included)" delivered "$tmp/g1.cnt"
for k in cap_a cap_b; do
    check "graphs, cupti: $k: in_graph equals the fake's graph_kernel ($(fcount "$tmp/g1.cnt" graph_kernel $k))" \
        jc "$R" "kernels[mangled=$k].in_graph" == "$(fcount "$tmp/g1.cnt" graph_kernel $k)"
    check "graphs, cupti: $k: captured equals the fake's ($(fcount "$tmp/g1.cnt" launch_captured $k))" \
        jc "$R" "kernels[mangled=$k].captured" == "$(fcount "$tmp/g1.cnt" launch_captured $k)"
done
check "graphs, cupti: cap_a: 2 eager + 20 node records: 5 warmup, 17 timed exactly 125 us" hw_exact "$R" cap_a 125000 22 5
check "graphs, cupti: cap_b: 20 node records only: 5 warmup, 15 timed exactly 250 us" hw_exact "$R" cap_b 250000 20 5
G='kernels[kind=graph]'
check "graphs, cupti: one graph row, 10 calls: 5 warmup, 5 timed by their kernel nodes, no sample of its own" sh -c "'$JCHECK' '$R' '$G.calls' == 10 && '$JCHECK' '$R' '$G.warmup_skipped' == 5 && '$JCHECK' '$R' '$G.timed_by_nodes' == 5 && '$JCHECK' '$R' '$G.timed' == 0 && '$JCHECK' '$R' '$G.incomplete' == 0"
check "graphs, cupti: totals.in_graph 40" jc "$R" totals.in_graph == 40
check "graphs, cupti: every launch and node record in exactly one bucket" rows "$R"
krun g1_t KTIME_TIMER=cupti "$CAP" --eager 2 4 10
check "graphs, cupti, text: 40 kernel runs inside CUDA graphs, counted with the launches" grep -q "^graphs   40 kernel runs inside CUDA graphs, from CUPTI's records (counted below with the launches)$" "$tmp/g1_t.txt"
check "graphs, cupti, text: cap_a's row notes its graph runs" grep -Eq "  cap_a \\(20 in graphs, 2 captured\\)$" "$tmp/g1_t.txt"
check "graphs, cupti, text: the footer's buckets add up to 6 launches + 10 graph launches + 40 node runs" footer "$tmp/g1_t.txt" 56
krun g0 KTIME_TIMER=cupti "$CAP" 4 3
check "graphs, cupti: kernels that only ran in graphs get rows (calls 2, all captured; in_graph 6)" sh -c "'$JCHECK' '$tmp/g0.json' 'kernels[mangled=cap_a].calls' == 2 && '$JCHECK' '$tmp/g0.json' 'kernels[mangled=cap_a].captured' == 2 && '$JCHECK' '$tmp/g0.json' 'kernels[mangled=cap_a].in_graph' == 6"
check "graphs, cupti: ... 6 records each: 5 warmup, 1 timed" hw_exact "$tmp/g0.json" cap_b 250000 6 5
check "graphs, cupti: ... every launch in exactly one bucket" rows "$tmp/g0.json"
# With both timers the rows are the events': the graph is timed as one sample, and the node
# records are only the hardware's.
krun g2 KTIME_TIMER=both "$CAP" --eager 2 4 10
check "graphs, both: the graph row is timed by events: 5 samples of 750 us (125 + 250 + 125 + 250)" ev_exact "$tmp/g2.json" '"graph 1 (4 kernel nodes of 5)"' 5 750 750 3750
check "graphs, both: cap_a's hardware samples include its 20 node runs (17 after 5 warmup records)" jc "$tmp/g2.json" 'kernels[mangled=cap_a].hw.timed' == 17
check "graphs, both: every launch in exactly one bucket (node records are not launches here)" rows "$tmp/g2.json"
krun g2_t KTIME_TIMER=both "$CAP" --eager 2 4 10
check "graphs, both, text: the footer counts the 16 launches, not the node records" footer "$tmp/g2_t.txt" 16

# ===================================================================== 4. falling back to events
# fallback NAME WHY [VAR=VALUE...]: CUPTI cannot start; events time everything, exactly.
fallback() {
    _fn=$1
    _why=$2
    shift 2
    krun "$_fn" KTIME_TIMER=cupti "$@" "$A" k_small=125000:12 kmix=125000,375000:20
    _R=$tmp/$_fn.json
    check "$_fn: one warning: KTIME_TIMER=cupti: $_why; timed with events" stderr_is "$_fn" "^ktime: warning: KTIME_TIMER=cupti: .*$_why.*; timed with events$"
    check "$_fn: timer requested cupti, used events, the note says why" sh -c "'$JCHECK' '$_R' timer.requested == cupti && '$JCHECK' '$_R' timer.used == events && '$JCHECK' '$_R' timer.note has '$_why'"
    check "$_fn: timing_method cuda-events" jc "$_R" timing_method == cuda-events
    check "$_fn: calls equal the fake's" counts_match "$_R" "$tmp/$_fn.cnt"
    check "$_fn: events time k_small's 7 launches after warmup exactly" ev_exact "$_R" k_small 7 125 125 875
    check "$_fn: events time kmix's 15 launches after warmup exactly" ev_exact "$_R" kmix 15 125 375 3875
    check "$_fn: no sample from CUPTI" jc "$_R" totals.cupti_timed == 0
    check "$_fn: the fake saw two cuEventRecord per timed launch" events_balanced "$_R" "$tmp/$_fn.cnt"
    check "$_fn: every launch in exactly one bucket" rows "$_R"
}
fallback refused "CUPTI refused activity tracing (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)" \
    FAKECUPTI_FAIL=cuptiActivityEnable:CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
check "refused: the fake CUPTI made no record" count_is "$tmp/refused.cnt" cupti_records 0
fallback noregister "CUPTI refused activity tracing (CUPTI_ERROR_NOT_INITIALIZED)" \
    FAKECUPTI_FAIL=cuptiActivityRegisterCallbacks
krun refused_t KTIME_TIMER=cupti FAKECUPTI_FAIL=cuptiActivityEnable:CUPTI_ERROR_INSUFFICIENT_PRIVILEGES "$A" k_small=125000:12
check "refused, text: the header says CUDA events; a timer line says why" sh -c "grep -q 'from CUDA events\$' '$tmp/refused_t.txt' && grep -q '^timer    KTIME_TIMER=cupti: CUPTI refused activity tracing (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); timed with events\$' '$tmp/refused_t.txt'"

# KTIME_CUPTI_LIB names no file: ktime says so once and takes a libcupti the process already
# loaded (here the fake, preloaded).
rm -f "$tmp/badlib.json" "$tmp/badlib.cnt"
run_ktime badlib KTIME_TIMER=cupti KTIME_CUPTI_LIB="$tmp/no/libcupti.so.13" KTIME_OUTPUT="$tmp/badlib.json" \
    FAKECUDA_COUNT_FILE="$tmp/badlib.cnt" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB:$CUPTI" \
    "$A" k_small=125000:12
check "KTIME_CUPTI_LIB missing: one warning naming it, 'looking elsewhere'" stderr_is badlib "^ktime: warning: KTIME_CUPTI_LIB='$tmp/no/libcupti.so.13' could not be loaded (.*); looking elsewhere$"
check "KTIME_CUPTI_LIB missing: the libcupti already loaded is used" sh -c "'$JCHECK' '$tmp/badlib.json' timer.used == cupti && '$JCHECK' '$tmp/badlib.json' timer.cupti_library == '$CUPTI'"
check "KTIME_CUPTI_LIB missing: 7 records timed exactly" hw_exact "$tmp/badlib.json" k_small 125000 12 5

# No libcupti anywhere: the folder the fake driver is loaded from holds no libcupti, and a real
# one on this machine (the toolkit's, the loader's cache) is hidden in a private mount namespace,
# so that ktime's search finds nothing.
mkdir -p "$tmp/nocupti"
ln -sf "$FAKE_DIR/libcuda.so.1" "$tmp/nocupti/libcuda.so.1"
hide=
for f in $( (ldconfig -p 2>/dev/null | awk '/libcupti\.so/ { print $NF }'
    for d in "${CUDA_HOME:-/usr/local/cuda}/targets/x86_64-linux/lib" "${CUDA_HOME:-/usr/local/cuda}/lib64" \
        "${CUDA_HOME:-/usr/local/cuda}/lib"; do ls "$d"/libcupti.so* 2>/dev/null; done) | sort -u); do
    [ -e "$f" ] && hide="$hide $(readlink -f "$f")"
done
# shellcheck disable=SC2086
hide=$(echo $hide | tr ' ' '\n' | sort -u | tr '\n' ' ')
nolib_run=yes
sandbox=
if [ -n "$hide" ]; then
    for u in "unshare -m" "unshare -rm"; do
        # shellcheck disable=SC2086
        if $u sh -c 'for f; do mount --bind /dev/null "$f" || exit 1; done' sh $hide 2>/dev/null; then
            sandbox="$u sh -c 'for f in $hide; do env -u LD_PRELOAD mount --bind /dev/null \"\$f\" || exit 97; done; exec \"\$@\"' sh"
            break
        fi
    done
    [ -n "$sandbox" ] ||
        nolib_run="a real libcupti is installed ($hide) and no private mount namespace (unshare) could hide it from ktime"
fi
if [ "$nolib_run" = yes ]; then
    save_ldp=$LDP
    LDP=$tmp/nocupti:$E2E_BIN
    rm -f "$tmp/nolib.json" "$tmp/nolib.cnt"
    eval "run_ktime nolib KTIME_TIMER=cupti KTIME_CUPTI_LIB='$tmp/no/libcupti.so.13' KTIME_OUTPUT='$tmp/nolib.json' FAKECUDA_COUNT_FILE='$tmp/nolib.cnt' $sandbox '$A' k_small=125000:12"
    LDP=$save_ldp
    check "no libcupti: the program runs" rc_is nolib 0
    check "no libcupti: two warnings: KTIME_CUPTI_LIB, then: no libcupti could be loaded; timed with events" stderr_is nolib \
        "^ktime: warning: KTIME_CUPTI_LIB='$tmp/no/libcupti.so.13' could not be loaded" \
        "^ktime: warning: KTIME_TIMER=cupti: no libcupti could be loaded (set KTIME_CUPTI_LIB); timed with events$"
    check "no libcupti: timer used events, no library, the note says why" sh -c "'$JCHECK' '$tmp/nolib.json' timer.used == events && '$JCHECK' '$tmp/nolib.json' timer.cupti_library == null && '$JCHECK' '$tmp/nolib.json' timer.note has 'no libcupti could be loaded'"
    check "no libcupti: events time the 7 launches after warmup exactly" ev_exact "$tmp/nolib.json" k_small 7 125 125 875
else
    skip "no libcupti: timer falls back to events" "$nolib_run"
fi

# ===================================================================== 5. an injected tool
INJ=$tmp/libinjected_tool.so
krun inj KTIME_TIMER=cupti CUDA_INJECTION64_PATH="$INJ" "$A" k_small=125000:12 kmix=125000,375000:20
R=$tmp/inj.json
check "injected tool: one warning: it owns CUPTI; timed with events" stderr_is inj "^ktime: warning: KTIME_TIMER=cupti: a CUDA tool is injected (CUDA_INJECTION64_PATH=$INJ) and owns CUPTI; timed with events$"
check "injected tool: timer used events, the note names CUDA_INJECTION64_PATH, no libcupti loaded" sh -c "'$JCHECK' '$R' timer.used == events && '$JCHECK' '$R' timer.note has 'CUDA_INJECTION64_PATH=$INJ' && '$JCHECK' '$R' timer.cupti_library == null"
check "injected tool: ktime never called CUPTI" sh -c "! grep -q '^cupti_call ' '$tmp/inj.cnt'"
check "injected tool: calls equal the fake's" counts_match "$R" "$tmp/inj.cnt"
check "injected tool: events time k_small's 7 launches after warmup exactly" ev_exact "$R" k_small 7 125 125 875
check "injected tool: events time kmix's 15 launches after warmup exactly" ev_exact "$R" kmix 15 125 375 3875
check "injected tool: two events per timed launch" events_balanced "$R" "$tmp/inj.cnt"
krun injb KTIME_TIMER=both CUDA_INJECTION64_PATH="$INJ" "$A" k_small=125000:12
check "injected tool, KTIME_TIMER=both: events only (timing_method cuda-events)" sh -c "'$JCHECK' '$tmp/injb.json' timing_method == cuda-events && '$JCHECK' '$tmp/injb.json' timer.note has CUDA_INJECTION64_PATH"

# ===================================================================== 6. another CUPTI client
# app_cupti_client B A: ho_a (125 us) B times; then the program turns to CUPTI; then ho_a and
# ho_b (250 us) A times each. With B=20, A=30: ho_a 50 calls = 5 warmup + 15 records + 30 events;
# ho_b 30 calls = 5 warmup + 25 events.
handover() {
    _hn=$1
    _via=$2
    _what=$3
    shift 3
    krun "$_hn" KTIME_TIMER=cupti "$@" "$CLIENT" --via "$_via" 20 30
    _R=$tmp/$_hn.json
    check "$_hn: the program runs" rc_is "$_hn" 0
    check "$_hn: no ktime message on stderr" sh -c "! grep -q '^ktime:' '$tmp/$_hn.err'"
    check "$_hn: the note says $_what took CUPTI over and later launches were timed with events" jc "$_R" timer.note == \
        "another CUPTI client ($_what) took CUPTI over; later launches were timed with events"
    check "$_hn: calls equal the fake's" counts_match "$_R" "$tmp/$_hn.cnt"
    _v=$(jv "$_R" totals.dropped_reasons.gate_timeout)
    [ "${_v:-0}" = 0 ] || echo "# $_hn: $_v event samples voided by the gate watchdog (gate_timeout)"
    check "$_hn: ho_a: 5 warmup, 15 from CUPTI's records, 30 with events, all 125 us" sh -c "'$JCHECK' '$_R' 'kernels[mangled=ho_a].warmup_skipped' == 5 && '$JCHECK' '$_R' 'kernels[mangled=ho_a].cupti_timed' == 15 && [ \$(( \$('$JCHECK' '$_R' 'kernels[mangled=ho_a].timed') + \$('$JCHECK' '$_R' 'kernels[mangled=ho_a].dropped') )) = 45 ] && '$JCHECK' '$_R' 'kernels[mangled=ho_a].min_us' == 125 && '$JCHECK' '$_R' 'kernels[mangled=ho_a].max_us' == 125"
    check "$_hn: ho_b (after the hand-over only): 5 warmup, 25 with events, 250 us" sh -c "'$JCHECK' '$_R' 'kernels[mangled=ho_b].warmup_skipped' == 5 && '$JCHECK' '$_R' 'kernels[mangled=ho_b].cupti_timed' == 0 && [ \$(( \$('$JCHECK' '$_R' 'kernels[mangled=ho_b].timed') + \$('$JCHECK' '$_R' 'kernels[mangled=ho_b].dropped') )) = 25 ] && '$JCHECK' '$_R' 'kernels[mangled=ho_b].mean_us' == 250"
    check "$_hn: nothing counted twice, nothing lost (no incomplete; 15 from CUPTI, 55 with events)" sh -c "'$JCHECK' '$_R' totals.incomplete_at_exit == 0 && '$JCHECK' '$_R' totals.cupti_timed == 15 && '$JCHECK' '$_R' totals.dropped == ${_v:-0} && '$JCHECK' '$_R' totals.timed == $((70 - ${_v:-0}))"
    check "$_hn: every launch in exactly one bucket" rows "$_R"
    check "$_hn: events only after the hand-over (two per event-timed launch: 110)" count_is "$tmp/$_hn.cnt" event_record 110
    check "$_hn: the fake CUPTI delivered every record it made (none dropped, pending or lost)" sh -c \
        "grep -qx 'cupti_records_delivered $(fcount "$tmp/$_hn.cnt" cupti_records)' '$tmp/$_hn.cnt' && grep -qx 'cupti_records_dropped 0' '$tmp/$_hn.cnt' && grep -qx 'cupti_records_pending 0' '$tmp/$_hn.cnt' && grep -qx 'cupti_records_lost 0' '$tmp/$_hn.cnt'"
}
handover link link cuptiActivityRegisterCallbacks
check "link: ktime and the client together got a record of every kernel that ran" delivered "$tmp/link.cnt"
check "link: the client got every record made after it registered (30 + 30), and none of ktime's buffers" \
    sh -c "grep -qx 'client records ho_a 30' '$tmp/link.out' && grep -qx 'client records ho_b 30' '$tmp/link.out' && grep -qx 'client records other 0' '$tmp/link.out' && grep -qx 'client unknown_buffers 0' '$tmp/link.out' && grep -qx 'client dropped 0' '$tmp/link.out'"
krun link_t KTIME_TIMER=cupti "$CLIENT" --via link 20 30
check "link, text: a timer line says who took CUPTI over" grep -q "^timer    KTIME_TIMER=cupti: another CUPTI client (cuptiActivityRegisterCallbacks) took CUPTI over; later launches were timed with events$" "$tmp/link_t.txt"
check "link, text: which timer covered which launches" grep -q "^timers   15 of the timed launches from CUPTI's records, 55 with CUDA events (after the hand-over)$" "$tmp/link_t.txt"
check "link, text: the footer's buckets add up to the 80 launches" footer "$tmp/link_t.txt" 80
# A client that reaches CUPTI through dlopen + dlsym, not the linker.
handover dlsym dlsym cuptiActivityRegisterCallbacks
check "dlsym: ktime and the client together got a record of every kernel that ran" delivered "$tmp/dlsym.cnt"
check "dlsym: the client got every record made after it registered, and none of ktime's buffers" \
    sh -c "grep -qx 'client records ho_a 30' '$tmp/dlsym.out' && grep -qx 'client records ho_b 30' '$tmp/dlsym.out' && grep -qx 'client unknown_buffers 0' '$tmp/dlsym.out'"
# libkcount.so (tests/gpu/kcount.c) dlopened mid-run: its constructor becomes the client.
handover kcount "dlopen:$KCOUNT" cuptiActivityRegisterCallbacks KCOUNT_OUTPUT="$tmp/kcount.tsv"
check "kcount: it counted every kernel that ran after it registered (30 + 30), exact durations" sh -c \
    "grep -qx 'ho_a	30	30	3750000	125000	125000	125000.0' '$tmp/kcount.tsv' && grep -qx 'ho_b	30	30	7500000	250000	250000	250000.0' '$tmp/kcount.tsv' && grep -q '^# kcount .* records 60 incomplete 0 dropped 0\$' '$tmp/kcount.tsv'"
handover subscribe subscribe cuptiSubscribe
check "subscribe: ktime let go of CUPTI: records only of the 20 launches before" sh -c "grep -qx 'cupti_records 20' '$tmp/subscribe.cnt' && grep -qx 'cupti_delivered ho_a 20' '$tmp/subscribe.cnt'"
check "subscribe: the program's cuptiSubscribe succeeded" grep -qx "subscribe 0" "$tmp/subscribe.out"
# Another tool holds CUPTI's one subscriber slot (as Nsight does): ktime never subscribes, so its
# activity timer is not disturbed; a program that subscribes then gets 39, and ktime steps aside.
krun other KTIME_TIMER=cupti "FAKECUPTI_OTHER_SUBSCRIBER=Nsight Systems" "$A" k_small=125000:12
check "subscriber slot taken: nothing on stderr" empty "$tmp/other.err"
check "subscriber slot taken: ktime's CUPTI timer still times every record" sh -c "'$JCHECK' '$tmp/other.json' timer.used == cupti && '$JCHECK' '$tmp/other.json' timer.note == null"
check "subscriber slot taken: 7 records timed exactly" hw_exact "$tmp/other.json" k_small 125000 12 5
check "subscriber slot taken: ktime never called cuptiSubscribe" sh -c "! grep -q '^cupti_call cuptiSubscribe' '$tmp/other.cnt'"
handover other2 subscribe cuptiSubscribe "FAKECUPTI_OTHER_SUBSCRIBER=Nsight Systems"
check "other2: the program's cuptiSubscribe got CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)" grep -qx "subscribe 39" "$tmp/other2.out"
# libkcount.so preloaded: it registers in its constructor, before the first launch.
for order in kcount_first ktime_first; do
    case $order in
        kcount_first) pre=$KCOUNT:$KTIME_LIB ;;
        *) pre=$KTIME_LIB:$KCOUNT ;;
    esac
    if [ "$order" = kcount_first ] && [ -n "${E2E_PRELOAD_FIRST:-}" ]; then
        # libtsan's start-up looks its functions up with dlsym(RTLD_NEXT) through ktime, whose
        # lookup dlopens (RTLD_NOLOAD) the libraries after libtsan: that runs libkcount's
        # constructor, whose CUPTI call enters ktime's instrumented wrapper before
        # ThreadSanitizer is initialized (a crash in __tsan_func_entry).
        skip "kcount preloaded ($order)" "$E2E_PRELOAD_FIRST preloaded first: libkcount's constructor would run inside libtsan's initialization"
        continue
    fi
    rm -f "$tmp/$order.json" "$tmp/$order.cnt" "$tmp/$order.tsv"
    run_plain "$order" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$pre" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" \
        KCOUNT_OUTPUT="$tmp/$order.tsv" KTIME_OUTPUT="$tmp/$order.json" FAKECUDA_COUNT_FILE="$tmp/$order.cnt" \
        "$A" k_small=125000:12 kmix=125000,375000:20
    check "kcount preloaded ($order): one warning: another CUPTI client was there first; timed with events" \
        sh -c "[ \$(grep '^ktime:' '$tmp/$order.err' | grep -vc '^ktime: report written to ') = 1 ] && grep -q '^ktime: warning: KTIME_TIMER=cupti: another CUPTI client (a profiler or the program itself) was there first; timed with events\$' '$tmp/$order.err'"
    check "kcount preloaded ($order): timer used events, no sample from CUPTI" sh -c "'$JCHECK' '$tmp/$order.json' timer.used == events && '$JCHECK' '$tmp/$order.json' totals.cupti_timed == 0"
    check "kcount preloaded ($order): calls equal the fake's" counts_match "$tmp/$order.json" "$tmp/$order.cnt"
    check "kcount preloaded ($order): events time k_small's 7 launches after warmup exactly" ev_exact "$tmp/$order.json" k_small 7 125 125 875
    check "kcount preloaded ($order): events time kmix's 15 launches after warmup exactly" ev_exact "$tmp/$order.json" kmix 15 125 375 3875
    check "kcount preloaded ($order): kcount got every record (12 + 20)" sh -c \
        "grep -qx 'k_small	12	12	1500000	125000	125000	125000.0' '$tmp/$order.tsv' && grep -qx 'kmix	20	20	5000000	125000	375000	250000.0' '$tmp/$order.tsv'"
done

# ===================================================================== 7. dropped records
# FAKECUPTI_MAX_RECORDS=100: records past 100 undelivered ones are dropped until a flush, and
# ktime flushes only at exit: of 300 launches, 100 records come, 200 are dropped.
krun drop KTIME_TIMER=cupti FAKECUPTI_MAX_RECORDS=100 "$A" k_small=125000:300
R=$tmp/drop.json
check "dropped: nothing on stderr" empty "$tmp/drop.err"
check "dropped: cupti_records_dropped 200, as the fake counted" sh -c "'$JCHECK' '$R' timer.cupti_records_dropped == 200 && [ \$(awk '\$1==\"cupti_records_dropped\"{print \$2}' '$tmp/drop.cnt') = 200 ]"
check "dropped: calls 300 = 5 warmup + 95 timed + 200 incomplete" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_small].calls' == 300 && '$JCHECK' '$R' 'kernels[mangled=k_small].incomplete' == 200"
check "dropped: the 95 timed exactly" hw_exact "$R" k_small 125000 100 5
check "dropped: every launch in exactly one bucket" rows "$R"
krun drop_t KTIME_TIMER=cupti FAKECUPTI_MAX_RECORDS=100 "$A" k_small=125000:300
check "dropped, text: the cupti line counts the drops" grep -q "^cupti    200 records dropped by CUPTI; 0 times no free buffer (KTIME_CUPTI_BUFFER_MB)$" "$tmp/drop_t.txt"
check "dropped, text: the row notes 200 incomplete" grep -Eq "  k_small \\(200 incomplete\\)$" "$tmp/drop_t.txt"
check "dropped, text: the footer's buckets add up to the 300 launches" footer "$tmp/drop_t.txt" 300

# KTIME_CUPTI_BUFFER_MB=1: four 256 KB buffers (about 1200 records each); 20000 launches fill
# them faster than the drain thread gives them back, and CUPTI drops what finds no buffer.
krun buf KTIME_TIMER=cupti KTIME_CUPTI_BUFFER_MB=1 KTIME_EXIT_WAIT_MS=5000 "$A" k_small=125000:20000
R=$tmp/buf.json
d=$(fcount "$tmp/buf.cnt" cupti_records_dropped)
echo "# KTIME_CUPTI_BUFFER_MB=1: the fake CUPTI dropped $d of 20000 records, refused $(fcount "$tmp/buf.cnt" cupti_buffers_refused) buffers"
check "tiny buffers: nothing on stderr" empty "$tmp/buf.err"
check "tiny buffers: cupti_records_dropped equals the fake's count ($d)" jc "$R" timer.cupti_records_dropped == "$d"
check "tiny buffers: cupti_buffers_refused equals the fake's count" jc "$R" timer.cupti_buffers_refused == "$(fcount "$tmp/buf.cnt" cupti_buffers_refused)"
check "tiny buffers: each dropped record is one incomplete launch; the rest timed exactly" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_small].incomplete' == $d && '$JCHECK' '$R' 'kernels[mangled=k_small].timed' == $((20000 - 5 - d)) && '$JCHECK' '$R' 'kernels[mangled=k_small].min_us' == 125 && '$JCHECK' '$R' 'kernels[mangled=k_small].max_us' == 125"
check "tiny buffers: every launch in exactly one bucket" rows "$R"
check "tiny buffers: the exit does not wait for records that were dropped (KTIME_EXIT_WAIT_MS=5000)" within buf 0 4000
run_ktime bufbad KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_CUPTI_BUFFER_MB=0 KTIME_OUTPUT="$tmp/bufbad.json" "$A" k_small=125000:12
check "KTIME_CUPTI_BUFFER_MB=0: one warning naming it and the default 8" one_warning "$tmp/bufbad.err" KTIME_CUPTI_BUFFER_MB 8
check "KTIME_CUPTI_BUFFER_MB=0: CUPTI still times" hw_exact "$tmp/bufbad.json" k_small 125000 12 5

# ===================================================================== 8. KTIME_SAMPLE
SPLAN="k_small=125000:2500 k_big=1000000:2500"
# shellcheck disable=SC2086
krun s4 KTIME_SAMPLE=4 "$A" $SPLAN
R=$tmp/s4.json
check "KTIME_SAMPLE=4: nothing on stderr" empty "$tmp/s4.err"
check "KTIME_SAMPLE=4: every launch counted (calls equal the fake's)" counts_match "$R" "$tmp/s4.cnt"
check "KTIME_SAMPLE=4: every launch in exactly one bucket (unsampled ones too)" rows "$R"
check "KTIME_SAMPLE=4: totals.sample 4" jc "$R" totals.sample == 4
for k in k_small:125 k_big:1000; do
    n=${k%%:*}
    t=$(jv "$R" "kernels[mangled=$n].timed")
    echo "# KTIME_SAMPLE=4: $n: $t of 2495 launches after warmup timed"
    check "KTIME_SAMPLE=4: $n: between 10% and 45% of the 2495 launches after warmup timed ($t)" sh -c "[ $t -ge 250 ] && [ $t -le 1123 ]"
    check "KTIME_SAMPLE=4: $n: every sample exactly ${k#*:} us" samples_exact "$R" "$n" "${k#*:}"
    u=$(jv "$R" "kernels[mangled=$n].unsampled")
    want=$(awk -v d="${k#*:}" -v n="$((t + u))" 'BEGIN { printf "%.6f", d * n / 1000 }')
    check "KTIME_SAMPLE=4: $n: total estimated: mean x (timed + $u unsampled) = $want ms" sh -c "'$JCHECK' '$R' 'kernels[mangled=$n].total_estimated' == true && [ $u -gt 0 ] && '$JCHECK' '$R' 'kernels[mangled=$n].total_ms' '~' $want 0.000001"
done
check "KTIME_SAMPLE=4: no events for unsampled launches" events_balanced "$R" "$tmp/s4.cnt"
# shellcheck disable=SC2086
krun s4_t KTIME_SAMPLE=4 "$A" $SPLAN
check "KTIME_SAMPLE=4, text: the sampled line" grep -q "^sampled  about 1 in 4 launches timed after warmup (KTIME_SAMPLE): [0-9]* not timed; Total ms and Time% are estimates, mean x launches$" "$tmp/s4_t.txt"
check "KTIME_SAMPLE=4, text: the total is marked estimated" grep -q "^total   ~ [0-9.]* ms in all$" "$tmp/s4_t.txt"
check "KTIME_SAMPLE=4, text: the footer's buckets (not sampled included) add up to the 5000 launches" footer "$tmp/s4_t.txt" 5000
# Launches the draw leaves untimed are still counted where they belong: failed, captured.
krun sfail KTIME_SAMPLE=4 KTIME_WARMUP=0 "$E2E_BIN/app_fail" 10 30
check "KTIME_SAMPLE=4: all 60 failed launches counted failed, none unsampled" sh -c "'$JCHECK' '$tmp/sfail.json' 'kernels[mangled=f_bad].failed' == 60 && '$JCHECK' '$tmp/sfail.json' 'kernels[mangled=f_bad].unsampled' == 0 && '$JCHECK' '$tmp/sfail.json' totals.failed_launches == 60"
check "KTIME_SAMPLE=4, failures: every launch in exactly one bucket" rows "$tmp/sfail.json"
krun scap KTIME_SAMPLE=4 KTIME_WARMUP=0 "$CAP" 40 10
check "KTIME_SAMPLE=4: all 40 launches into the capture counted captured" sh -c "'$JCHECK' '$tmp/scap.json' totals.captured == 40 && '$JCHECK' '$tmp/scap.json' 'kernels[mangled=cap_a].captured' == $(fcount "$tmp/scap.cnt" launch_captured cap_a)"
check "KTIME_SAMPLE=4, capture: every launch in exactly one bucket" rows "$tmp/scap.json"
# Under the CUPTI timer there is nothing to thin out: every record is a sample.
# shellcheck disable=SC2086
krun sc KTIME_SAMPLE=4 KTIME_TIMER=cupti "$A" $SPLAN
check "KTIME_SAMPLE=4, cupti: every record timed, nothing estimated" sh -c "'$JCHECK' '$tmp/sc.json' totals.sample == 1 && '$JCHECK' '$tmp/sc.json' totals.unsampled == 0 && '$JCHECK' '$tmp/sc.json' totals.cupti_timed == 4990"
check "KTIME_SAMPLE=4, cupti: k_big 2495 timed exactly" hw_exact "$tmp/sc.json" k_big 1000000 2500 5
krun scfail KTIME_SAMPLE=4 KTIME_TIMER=cupti KTIME_WARMUP=0 "$E2E_BIN/app_fail" 10 30
check "KTIME_SAMPLE=4, cupti: all 60 failed launches counted failed, none incomplete" sh -c "'$JCHECK' '$tmp/scfail.json' 'kernels[mangled=f_bad].failed' == 60 && '$JCHECK' '$tmp/scfail.json' totals.incomplete_at_exit == 0"
for v in 0 abc 4x -2; do
    run_ktime sbad KTIME_SAMPLE="$v" KTIME_OUTPUT="$tmp/sbad.json" "$A" k_small=125000:12
    check "KTIME_SAMPLE='$v': one warning naming it and the default 1" one_warning "$tmp/sbad.err" KTIME_SAMPLE 1
    check "KTIME_SAMPLE='$v': report says sample 1" jc "$tmp/sbad.json" totals.sample == 1
    check "KTIME_SAMPLE='$v': every launch after warmup timed" ev_exact "$tmp/sbad.json" k_small 7 125 125 875
done

# ===================================================================== 9. fork
# app_fork 10 5 7: the parent launches fk_parent 10 times, forks (the child launches fk_child 5
# times and exits, running the inherited exit handlers), then 7 more. A child does not time or
# report (README, Limits): it must not flush CUPTI either (a flush in a forked child hangs).
for env in "" FAKECUDA_FORK_CHILD_FAILS=1; do
    l="fork${env:+ ($env)}"
    # shellcheck disable=SC2086
    run_plain fbase $env "$E2E_BIN/app_fork" 10 5 7
    rm -f "$tmp"/fork.*.json "$tmp/fork.cnt"
    # shellcheck disable=SC2086
    run_ktime fork $FORK_ENV $env KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/fork.%p.json" \
        FAKECUDA_COUNT_FILE="$tmp/fork.cnt" "$E2E_BIN/app_fork" --pidfile "$tmp/pid" 10 5 7
    check "$l: same exit status and stdout (the child did not hang)" same_run fbase fork
    check "$l: well within the time limit" within fork 0 10000
    check "$l: nothing on stderr" empty "$tmp/fork.err"
    check "$l: no flush in the child" sh -c "! grep -q cupti_child_flush '$tmp/fork.cnt'"
    check "$l: one report, the parent's" sh -c "[ \$(ls '$tmp'/fork.*.json | wc -l) = 1 ] && [ -f '$tmp/fork.$(cat "$tmp/pid").json' ]"
    R=$tmp/fork.$(cat "$tmp/pid").json
    check "$l: parent: 17 calls, 5 warmup records, 12 timed exactly by CUPTI" hw_exact "$R" fk_parent 125000 17 5
    check "$l: parent: the child's kernels are not in it" sh -c "! '$JCHECK' '$R' 'kernels[mangled=fk_child]' >/dev/null"
    check "$l: parent: every launch in exactly one bucket" rows "$R"
    check "$l: the parent's 17 records all delivered" sh -c "grep -qx 'cupti_records 17' '$tmp/fork.cnt' && grep -qx 'cupti_records_delivered 17' '$tmp/fork.cnt'"
done

# ===================================================================== 10. records pending at exit
# --no-sync: the program exits with its last kernels' records still in CUPTI's buffer (the fake
# completes a buffer only when it is full or flushed): the exit flush brings them.
krun pend KTIME_TIMER=cupti KTIME_EXIT_WAIT_MS=5000 "$A" --no-sync k_small=125000:30 kmix=125000,375000:20
R=$tmp/pend.json
check "pending at exit: nothing on stderr" empty "$tmp/pend.err"
check "pending at exit: every record came with the exit flush (one buffer, completed then; ktime flushed only at exit)" sh -c \
    "grep -qx 'cupti_buffers_completed 1' '$tmp/pend.cnt' && grep -qx 'cupti_flush 2' '$tmp/pend.cnt' && grep -qx 'cupti_flush_forced 1' '$tmp/pend.cnt' && grep -qx 'cupti_records_pending 0' '$tmp/pend.cnt'"
check "pending at exit: the fake CUPTI delivered every record" delivered "$tmp/pend.cnt"
check "pending at exit: k_small 25 timed exactly" hw_exact "$R" k_small 125000 30 5
check "pending at exit: kmix 15 timed exactly" hw_exact "$R" kmix 125000,375000 20 5
check "pending at exit: every launch in exactly one bucket" rows "$R"
check "pending at exit: no wait for KTIME_EXIT_WAIT_MS (5000)" within pend 0 4000
# The records never come (every flush fails): ktime waits KTIME_EXIT_WAIT_MS for them, no more,
# and counts those launches incomplete.
krun lost KTIME_TIMER=cupti KTIME_EXIT_WAIT_MS=400 FAKECUPTI_FAIL=cuptiActivityFlushAll "$A" --no-sync k_small=125000:30
R=$tmp/lost.json
check "records never come: the program exits 0" rc_is lost 0
check "records never come: ktime waited KTIME_EXIT_WAIT_MS (400), not much longer" within lost 400 4400
check "records never come: 5 warmup, 25 incomplete, none timed" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_small].warmup_skipped' == 5 && '$JCHECK' '$R' 'kernels[mangled=k_small].incomplete' == 25 && '$JCHECK' '$R' 'kernels[mangled=k_small].timed' == 0"
check "records never come: every launch in exactly one bucket" rows "$R"
check "records never come: the fake still holds the 30 records" count_is "$tmp/lost.cnt" cupti_records_pending 30

finish
