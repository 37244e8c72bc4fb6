#!/bin/sh
# ranges.sh - the program's own phases (issue 13) on the fake driver: ranges pushed with
# ktime_range_push/pop (app_ranges, linked with -lktime), and NVTX ranges with libktime as NVTX's
# tool (KTIME_NVTX=1 sets NVTX_INJECTION64_PATH; nvtxRangePushA and nvtxDomainRangePushEx with
# registered strings); each timed launch under its innermost (or outermost) range, exactly; the
# ranges' counts; launches outside every range; KTIME_CAPTURE=nvtx:NAME; another NVTX tool left in
# place; the launcher; ktime report renders the section from the JSON. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

LDP=$(dirname "$KTIME_LIB"):$LDP
R=$E2E_BIN/app_ranges
N=20 # iterations: k_fwd twice in "forward", k_bwd in "backward", k_opt in "step", k_out outside

# in_range REPORT RANGE KERNEL TIMED US: the range's row of KERNEL has TIMED samples of US each
# (within 0.01 us: the fake's clock read as float milliseconds; another kernel's time in the
# interval would add 50 us or more). RANGE "-": outside every range.
in_range() {
    _w="ranges.by_name[name=$2].kernels[mangled=$3]"
    [ "$2" = "-" ] && _w="ranges.by_name[name=null].kernels[mangled=$3]"
    jc "$1" "$_w.timed" == "$4" && jc "$1" "$_w.min_us" '~' "$5" 0.01 && jc "$1" "$_w.max_us" '~' "$5" 0.01
}

# innermost LABEL: every kernel under its innermost range, every range closed N times.
innermost() {
    _r=$tmp/$1.json
    in_range "$_r" forward k_fwd $((2 * N - 5)) 100 && in_range "$_r" backward k_bwd $((N - 5)) 200 &&
        in_range "$_r" step k_opt $((N - 5)) 50 && in_range "$_r" - k_out $((N - 5)) 10 &&
        jc "$_r" 'ranges.by_name[name=forward].closed' == $N &&
        jc "$_r" 'ranges.by_name[name=step].closed' == $N &&
        jc "$_r" 'ranges.by_name[name=backward].closed' == $N &&
        jc "$_r" 'ranges.by_name[name=step].open_at_exit' == 0 &&
        jc "$_r" 'ranges.by_name[name=step].wall_ms' '>' 0 &&
        jc "$_r" ranges.attribution == innermost
}

# app_ranges is linked with libktime: in a sanitizer build its runtime must come first.
run_plain p ${E2E_PRELOAD_FIRST:+LD_PRELOAD=$E2E_PRELOAD_FIRST} "$R" $N
for how in api:"" nvtx:--nvtx domain:--domain; do
    h=${how%%:*}
    run_ktime "$h" KTIME_NVTX=1 KTIME_OUTPUT="$tmp/$h.json" FAKECUDA_COUNT_FILE="$tmp/$h.cnt" "$R" ${how#*:} $N
    check "$h: same exit status and stdout as without ktime" same_run p "$h"
    check "$h: each kernel under its innermost range, exact; each range closed $N times" innermost "$h"
    check "$h: the kernels' own rows unchanged" sh -c "'$JCHECK' '$tmp/$h.json' 'kernels[mangled=k_fwd].timed' == $((2 * N - 5)) && '$JCHECK' '$tmp/$h.json' 'kernels[mangled=k_fwd].mean_us' '~' 100 0.01"
    check "$h: calls are the fake's" counts_match "$tmp/$h.json" "$tmp/$h.cnt"
done
# The CUPTI timer: each launch made in a range carries it to its records (an external
# correlation id): the same ranges, the same samples, exactly. Through the runtime too: as with
# the real libcupti, a runtime launch's kernels carry the runtime call's correlation, so the
# range must be pushed before the runtime is entered (ktime's cudaLaunchKernel), not in the
# driver call inside it.
run_plain prt ${E2E_PRELOAD_FIRST:+LD_PRELOAD=$E2E_PRELOAD_FIRST} "$R" --runtime $N
run_ktime rt KTIME_NVTX=1 KTIME_OUTPUT="$tmp/rt.json" "$R" --nvtx --runtime $N
check "rt: events, runtime launches: same exit status and stdout as without ktime" same_run prt rt
check "rt: events, runtime launches: each kernel under its innermost range" innermost rt
for how in api:"" nvtx:--nvtx rt:"--nvtx --runtime" chev:"--nvtx --chevrons"; do
    h=cu${how%%:*}
    run_ktime "$h" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" KTIME_NVTX=1 KTIME_OUTPUT="$tmp/$h.json" FAKECUDA_COUNT_FILE="$tmp/$h.cnt" "$R" ${how#*:} $N
    check "$h: same exit status and stdout as without ktime" same_run p "$h"
    check "$h: timed by CUPTI" jc "$tmp/$h.json" timer.used == cupti
    check "$h: each kernel under its innermost range, as with events" innermost "$h"
    check "$h: calls are the fake's" counts_match "$tmp/$h.json" "$tmp/$h.cnt"
done
check "NVTX: ktime is NVTX's tool" jc "$tmp/nvtx.json" ranges.nvtx == "ktime is NVTX's tool (NVTX_INJECTION64_PATH)"
check "API without NVTX: the ranges all the same" jc "$tmp/api.json" 'ranges.by_name[name=forward].closed' == $N

# --- outermost, and a pop too many -------------------------------------------------------------
run_ktime out KTIME_NVTX=1 KTIME_RANGES=outermost KTIME_OUTPUT="$tmp/out.json" "$R" --nvtx --extra-pop $N
check "outermost: every kernel of a step under step" \
    sh -c "'$JCHECK' '$tmp/out.json' ranges.attribution == outermost && '$JCHECK' '$tmp/out.json' 'ranges.by_name[name=step].timed' == $((4 * N - 15)) && '$JCHECK' '$tmp/out.json' 'ranges.by_name[name=forward].timed' == 0"
check "a pop with no range open is counted, not fatal" \
    sh -c "'$JCHECK' '$tmp/out.json' ranges.unmatched_pops == 1 && [ \$(cat '$tmp/out.rc') = 0 ]"

# --- without NVTX injection: NVTX calls are no-ops, the report says so ------------------------
run_ktime plain KTIME_OUTPUT="$tmp/plain.json" "$R" --nvtx $N
check "no KTIME_NVTX: no ranges from NVTX (ranges null)" jc "$tmp/plain.json" ranges == null
run_ktime other KTIME_NVTX=1 NVTX_INJECTION64_PATH=/nonexistent/libother.so KTIME_OUTPUT="$tmp/other.json" "$R" --nvtx $N
check "another tool named in NVTX_INJECTION64_PATH: left alone, no ranges, exit 0" \
    sh -c "'$JCHECK' '$tmp/other.json' ranges == null && [ \$(cat '$tmp/other.rc') = 0 ]"
run_ktime none KTIME_OUTPUT="$tmp/none.json" "$E2E_BIN/app_cudart" k_a=125000:10
check "a program with no range: ranges is null" jc "$tmp/none.json" ranges == null
run_ktime nonet "$E2E_BIN/app_cudart" k_a=125000:10
check "a program with no range: no ranges section" sh -c "! grep -q '^ranges:' '$tmp/nonet.err'"

# --- the text, and ktime report ----------------------------------------------------------------
run_ktime t KTIME_NVTX=1 KTIME_OUTPUT="$tmp/t.json" KTIME_ALSO_OUTPUT="$tmp/t.txt" "$R" --nvtx $N
check "text: the section's header" grep -q '^ranges: each timed launch under the innermost range open on its thread' "$tmp/t.txt"
check "text: the forward range's line and its kernel" \
    sh -c "grep -q '^range    \"forward\": $N closed, [0-9.]* ms of wall time; $((2 * N - 5)) timed launches, 3.500 ms of GPU time\$' '$tmp/t.txt' && grep -q '^ 100.00        3.500        35     100.000 .*  k_fwd\$' '$tmp/t.txt'"
check "text: launches outside every range" grep -q '^range    outside every range; 15 timed launches, 0.150 ms of GPU time$' "$tmp/t.txt"
PY=${PYTHON:-python3}
TOOL=$(cd "$(dirname "$0")/../.." && pwd)/tools/ktime_tool.py
check "ktime report renders the same text from the JSON" sh -c "KTIME_RENDER='$E2E_RENDER' '$PY' '$TOOL' report '$tmp/t.json' | diff - '$tmp/t.txt'"
check "ktime merge of two runs adds each range's samples" \
    sh -c "KTIME_RENDER='$E2E_RENDER' '$PY' '$TOOL' merge '$tmp/t.json' '$tmp/nvtx.json' -o '$tmp/m.json' && '$JCHECK' '$tmp/m.json' 'ranges.by_name[name=forward].kernels[mangled=k_fwd].timed' == $((4 * N - 10)) && '$JCHECK' '$tmp/m.json' 'ranges.by_name[name=forward].closed' == $((2 * N))"

# --- KTIME_CAPTURE=nvtx:NAME --------------------------------------------------------------------
run_ktime rg KTIME_NVTX=1 KTIME_CAPTURE=nvtx:forward KTIME_OUTPUT="$tmp/rg.json" "$R" --nvtx $N
check "KTIME_CAPTURE=nvtx:forward: only k_fwd timed, the others counted outside the range" \
    sh -c "'$JCHECK' '$tmp/rg.json' 'kernels[mangled=k_fwd].timed' == $((2 * N - 5)) && '$JCHECK' '$tmp/rg.json' 'kernels[mangled=k_bwd].timed' == 0 && '$JCHECK' '$tmp/rg.json' 'kernels[mangled=k_bwd].outside_range' == $((N - 5))"
check "KTIME_CAPTURE=nvtx:forward: the range's pushes and pops" \
    sh -c "'$JCHECK' '$tmp/rg.json' capture.mode == nvtx:forward && '$JCHECK' '$tmp/rg.json' capture.ranges == $N && '$JCHECK' '$tmp/rg.json' capture.starts == $N && '$JCHECK' '$tmp/rg.json' capture.stops == $N"
run_ktime rgc KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" KTIME_NVTX=1 KTIME_CAPTURE=nvtx:forward KTIME_OUTPUT="$tmp/rgc.json" "$R" --nvtx $N
check "KTIME_CAPTURE=nvtx:forward with CUPTI: the same samples and counts as with events" \
    sh -c "'$JCHECK' '$tmp/rgc.json' timer.used == cupti && '$JCHECK' '$tmp/rgc.json' 'kernels[mangled=k_fwd].timed' == $((2 * N - 5)) && '$JCHECK' '$tmp/rgc.json' 'kernels[mangled=k_fwd].mean_us' '~' 100 0.01 && '$JCHECK' '$tmp/rgc.json' 'kernels[mangled=k_bwd].timed' == 0 && '$JCHECK' '$tmp/rgc.json' 'kernels[mangled=k_bwd].outside_range' == $((N - 5))"
run_ktime rgt KTIME_NVTX=1 KTIME_CAPTURE=nvtx:forward "$R" --nvtx $N
check "KTIME_CAPTURE=nvtx:forward: the header's range line" \
    grep -q '^capture  KTIME_CAPTURE=nvtx:forward: only launches while a range forward is open (on any thread) are timed;$' "$tmp/rgt.err"
# The settings' earlier names still work: KTIME_RANGE, KTIME_REGION (earlier names).
run_ktime rgo KTIME_NVTX=1 KTIME_RANGE=nvtx:forward KTIME_REGION=outermost KTIME_OUTPUT="$tmp/rgo.json" "$R" --nvtx $N # earlier names
check "KTIME_RANGE and KTIME_REGION, the earlier names: read, no message" \
    sh -c "'$JCHECK' '$tmp/rgo.json' capture.mode == nvtx:forward && '$JCHECK' '$tmp/rgo.json' ranges.attribution == outermost && '$JCHECK' '$tmp/rgo.json' 'kernels[mangled=k_fwd].timed' == $((2 * N - 5)) && [ ! -s '$tmp/rgo.err' ]"

# A report written with the keys' earlier names ("range", "regions" and its "ranges") renders
# and merges as the same report with today's keys.
sed -e 's/^  "capture": {/  "range": {/' -e 's/^  "ranges": {/  "regions": {/' -e 's/^  "by_name": \[/  "ranges": [/' \
    -e 's/"by_name": \[/"ranges": [/' "$tmp/rg.json" >"$tmp/rg-old.json"
check "the earlier keys: the old report has them, not today's" \
    sh -c "grep -q '\"range\": {' '$tmp/rg-old.json' && grep -q '\"regions\": {' '$tmp/rg-old.json' && ! grep -q '\"capture\"\\|\"by_name\"' '$tmp/rg-old.json'"
for f in text csv json; do
    check "the earlier keys: ktime-render --format $f prints the same" \
        sh -c "'$E2E_RENDER' --format $f '$tmp/rg-old.json' >'$tmp/old.$f' && '$E2E_RENDER' --format $f '$tmp/rg.json' >'$tmp/new.$f' && cmp '$tmp/old.$f' '$tmp/new.$f'"
done
check "the earlier keys: ktime report of the JSON is the library's text" \
    sh -c "KTIME_RENDER='$E2E_RENDER' '$PY' '$TOOL' report '$tmp/rg-old.json' | cmp - '$tmp/new.text'"
# ktime merge refuses the same report twice: the old-key copy as another process's (its pid).
sed -E 's/^(  "pid": )([0-9]+)/\11\2/' "$tmp/rg-old.json" >"$tmp/rg-old2.json"
check "the earlier keys: ktime merge of an old and a new report adds their ranges" \
    sh -c "KTIME_RENDER='$E2E_RENDER' '$PY' '$TOOL' merge '$tmp/rg-old2.json' '$tmp/rg.json' -o '$tmp/mo.json' && '$JCHECK' '$tmp/mo.json' 'ranges.by_name[name=forward].closed' == $((2 * N)) && '$JCHECK' '$tmp/mo.json' 'kernels[mangled=k_fwd].timed' == $((4 * N - 10)) && ! grep -q '\"regions\"' '$tmp/mo.json'"
run_ktime rge KTIME_CAPTURE=nvtx: KTIME_OUTPUT="$tmp/rge.json" "$R" $N
check "KTIME_CAPTURE=nvtx: (no name): a warning, every launch timed" \
    sh -c "grep -q '^ktime: warning: KTIME_CAPTURE=.nvtx:. names no range' '$tmp/rge.err' && '$JCHECK' '$tmp/rge.json' capture == null"

# --- the launcher makes libktime NVTX's tool --------------------------------------------------
KT=${E2E_BIN%/tests/e2e}/tools/ktime
if [ -x "$KT" ]; then
    run_plain l ${E2E_PRELOAD_FIRST:+LD_PRELOAD=$E2E_PRELOAD_FIRST} KTIME_LIBRARY="$KTIME_LIB" "$KT" -o "$tmp/l.json" "$R" --nvtx $N
    check "launcher: NVTX ranges without setting anything" jc "$tmp/l.json" 'ranges.by_name[name=forward].closed' == $N
    run_plain l0 ${E2E_PRELOAD_FIRST:+LD_PRELOAD=$E2E_PRELOAD_FIRST} KTIME_NVTX=0 KTIME_LIBRARY="$KTIME_LIB" "$KT" -o "$tmp/l0.json" "$R" --nvtx $N
    check "launcher: KTIME_NVTX=0 keeps NVTX out" jc "$tmp/l0.json" ranges == null
else
    skip "launcher: NVTX ranges without setting anything" "no $KT"
    skip "launcher: KTIME_NVTX=0 keeps NVTX out" "no $KT"
fi

finish
