#!/bin/sh
# cupti.sh - the fake CUPTI's own contract (cupti_selftest), and tests/gpu/kcount.c against it:
# its per-kernel counts and durations equal what the fake driver ran, alone and next to ktime.
# TAP. Needs libktime.so only for the last checks (skipped without it).
. "$(dirname "$0")/lib.sh"
[ -f "$FAKE_DIR/libcupti.so.13" ] || e2e_fail_setup "fake CUPTI not built: $FAKE_DIR/libcupti.so.13 (set FAKE_DIR)"
KCOUNT=$E2E_BIN/libkcount.so
[ -f "$KCOUNT" ] || e2e_fail_setup "libkcount.so not built: $KCOUNT"

# selftest NAME MODE [VAR=VALUE...]: runs cupti_selftest MODE and numbers its lines.
selftest() {
    _sn=$1
    _m=$2
    shift 2
    run_plain "$_sn" FAKECUPTI_COUNT_FILE="$tmp/$_sn.cnt" "$@" "$E2E_BIN/cupti_selftest" "$_m"
    selftest_lines "$tmp/$_sn.out" "cupti $_m: "
    check "cupti $_m: exits 0" rc_is "$_sn" 0
}

# has COUNTFILE LINE...: every LINE is in the count file.
has() {
    _f=$1
    shift
    for _l in "$@"; do
        grep -qx "$_l" "$_f" || { echo "no line '$_l' in:"; cat "$_f"; return 1; }
    done
}

# balanced COUNTFILE [PREFIX]: records made (+ inherited) = delivered + dropped + pending + lost,
# for the lines starting PREFIX ("child " for a forked child's).
balanced() {
    _c() { awk -v k="$2$3" '$0 ~ "^" k " [0-9]+$" { v = $NF } END { print v + 0 }' "$1"; }
    _r=$(($(_c "$1" "${2:-}" cupti_records) + $(_c "$1" "${2:-}" cupti_records_inherited)))
    _s=$(($(_c "$1" "${2:-}" cupti_records_delivered) + $(_c "$1" "${2:-}" cupti_records_dropped) + \
        $(_c "$1" "${2:-}" cupti_records_pending) + $(_c "$1" "${2:-}" cupti_records_lost)))
    [ "$_r" -gt 0 ] && [ "$_r" = "$_s" ] && return 0
    echo "${2:-}cupti_records (+ inherited) $_r, delivered + dropped + pending + lost = $_s"
    return 1
}

selftest basic basic
check "cupti basic: nothing on stderr" empty "$tmp/basic.err"
check "cupti basic: the count file adds up" balanced "$tmp/basic.cnt"
check "cupti basic: count lines for registrations, subscribers, drops, cuptiFinalize" has "$tmp/basic.cnt" \
    "cupti_registrations 6" "cupti_subscribers 2" "cupti_subscribe_refused 4" "cupti_records_dropped 2" \
    "cupti_records_lost 1" "cupti_finalize 1" "cupti_buffers_refused 2" "cupti_records_pending 0" \
    "cupti_call cuptiActivityRegisterCallbacks 7"

selftest maxrec maxrec FAKECUPTI_MAX_RECORDS=3
check "cupti maxrec: 2 records dropped, 6 delivered" has "$tmp/maxrec.cnt" "cupti_records 8" \
    "cupti_records_dropped 2" "cupti_records_delivered 6" "cupti_delivered k_small 3" "cupti_delivered _Z5k_bigPfi 3"

selftest fail fail FAKECUPTI_FAIL=cuptiActivityEnable:CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,cuptiSubscribe
check "cupti fail: failed calls counted" has "$tmp/fail.cnt" "cupti_failed cuptiActivityEnable 1" \
    "cupti_failed cuptiSubscribe 1" "cupti_records 0"
check "cupti fail: nothing on stderr" empty "$tmp/fail.err"

selftest other other "FAKECUPTI_OTHER_SUBSCRIBER=Nsight Systems"
selftest badknob other "FAKECUPTI_OTHER_SUBSCRIBER=Nsight Systems" FAKECUPTI_FAIL=cuptiNoSuchCall:35 \
    FAKECUPTI_MAX_RECORDS=lots
check "cupti: bad knob values warn on stderr and are ignored" sh -c \
    "grep -q \"FAKECUPTI_FAIL names 'cuptiNoSuchCall'\" '$tmp/badknob.err' && grep -q \"bad FAKECUPTI_MAX_RECORDS='lots'\" '$tmp/badknob.err'"

selftest fork fork
check "cupti fork: the hung child said so on stderr" grep -q "in a forked child" "$tmp/fork.err"

# --- kcount (tests/gpu/kcount.c) against the fake --------------------------------------------
# kcount_matches TSV COUNTFILE: kcount counted, per kernel, every kernel the fake driver ran
# (launches that ran plus graph kernel nodes) and nothing else; the fake CUPTI delivered as many.
kcount_matches() {
    _bad=0
    [ -s "$1" ] || { echo "no kcount report $1"; return 1; }
    for _k in $(awk '$1 == "launch_ok" && NF == 3 { print $2 }' "$2"); do
        _want=$(($(fcount "$2" launch_ok "$_k") + $(fcount "$2" graph_kernel "$_k")))
        _got=$(awk -F'\t' -v k="$_k" '$1 == k { print $2 }' "$1")
        _cupti=$(fcount "$2" cupti_delivered "$_k")
        if [ "${_got:-0}" != "$_want" ] || [ "$_cupti" != "$_want" ]; then
            echo "kernel $_k: kcount ${_got:-none}, fake CUPTI delivered $_cupti, the fake driver ran $_want"
            _bad=1
        fi
    done
    for _k in $(awk -F'\t' '!/^#/ && $1 != "mangled" { print $1 }' "$1"); do
        [ "$(fcount "$2" launch_ok "$_k")" -gt 0 ] || [ "$(fcount "$2" graph_kernel "$_k")" -gt 0 ] || {
            echo "kcount has kernel $_k, which the fake never ran"
            _bad=1
        }
    done
    grep -q "^# kcount .* incomplete 0 dropped 0$" "$1" || { head -n 1 "$1"; _bad=1; }
    balanced "$2" || _bad=1
    [ $_bad = 0 ] || cat "$1"
    return $_bad
}

# kcount_run NAME PROGRAM ARGS...: the program with libkcount.so preloaded.
kcount_run() {
    _kn=kc_$1
    shift
    run_plain "$_kn" LD_PRELOAD="$KCOUNT" KCOUNT_OUTPUT="$tmp/$_kn.tsv" FAKECUDA_COUNT_FILE="$tmp/$_kn.cnt" "$@"
    check "kcount ${_kn#kc_}: the program runs" rc_is "$_kn" 0
    check "kcount ${_kn#kc_}: counts per kernel equal the fake driver's" kcount_matches "$tmp/$_kn.tsv" "$tmp/$_kn.cnt"
}

kcount_run driver "$E2E_BIN/app_driver" k_a=125000:10 k_b=250000:5
check "kcount driver: exact durations (sum, min, max)" sh -c \
    "grep -qx 'k_a	10	10	1250000	125000	125000	125000.0' '$tmp/kc_driver.tsv' && grep -qx 'k_b	5	5	1250000	250000	250000	250000.0' '$tmp/kc_driver.tsv'"
# app_cudart dlopens libcuda.so.1 after kcount's constructor enabled CUPTI
kcount_run cudart "$E2E_BIN/app_cudart" --ptds k_small=125000:10 k_big=1000000,250000:4 _Z6squarePfi=250000:3
check "kcount cudart: a cycling duration's sum and median" grep -qx 'k_big	4	4	2500000	250000	1000000	625000.0' \
    "$tmp/kc_cudart.tsv"
kcount_run capture "$E2E_BIN/app_capture" --eager 2 4 3
kcount_run threads "$E2E_BIN/app_threads" 4 100 --stream
kcount_run fork "$E2E_BIN/app_fork" 10 5 7
check "kcount fork: the child's inherited handler does not flush; its 5 records and the parent's 10 stay pending" \
    sh -c "! grep -q child_flush '$tmp/kc_fork.cnt' && grep -qx 'child cupti_records 5' '$tmp/kc_fork.cnt' && grep -qx 'child cupti_records_inherited 10' '$tmp/kc_fork.cnt' && grep -qx 'child cupti_records_pending 15' '$tmp/kc_fork.cnt'"
check "kcount fork: the child's count lines add up" balanced "$tmp/kc_fork.cnt" "child "

# Next to ktime, in both preload orders (as tests/gpu/run.sh does on the GPU): both count right.
for order in kcount_first ktime_first; do
    if [ ! -f "$KTIME_LIB" ]; then
        skip "kcount next to ktime ($order)" "libktime.so not built"
        continue
    fi
    case $order in
        kcount_first) pre=$KCOUNT:$KTIME_LIB ;;
        *) pre=$KTIME_LIB:$KCOUNT ;;
    esac
    run_plain "kt_$order" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$pre" KCOUNT_OUTPUT="$tmp/kt_$order.tsv" \
        KTIME_OUTPUT="$tmp/kt_$order.json" FAKECUDA_COUNT_FILE="$tmp/kt_$order.cnt" \
        "$E2E_BIN/app_cudart" --ptds k_small=125000:10 k_big=1000000,250000:4
    check "kcount next to ktime ($order): the program runs" rc_is "kt_$order" 0
    check "kcount next to ktime ($order): kcount's counts equal the fake driver's" \
        kcount_matches "$tmp/kt_$order.tsv" "$tmp/kt_$order.cnt"
    check "kcount next to ktime ($order): ktime's counts equal the fake driver's" \
        counts_match "$tmp/kt_$order.json" "$tmp/kt_$order.cnt"
done

finish
