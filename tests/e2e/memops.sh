#!/bin/sh
# memops.sh - memory operations timed apart from kernels (issue 13), on the fake driver: copies
# and sets through the exported symbols and through cuGetProcAddress, on the legacy, a created
# and the per-thread stream; calls and bytes per kind against the fake's own counts; exact
# intervals (a copy takes 2 us + 1 ns per 10 bytes of the fake's time, a set 375 us), so a
# kernel's interval that held a copy would show it; synchronous copies never held by a gate;
# warmup per kind; the CUPTI timer; KTIME_MEMOPS=0. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

M=$E2E_BIN/app_memops
CUPTI=$FAKE_DIR/libcupti.so.13
N=20          # iterations: 2 HtoD, 2 DtoH, 2 DtoD, 2 sets, 1 peer copy each
B=1000000     # bytes per operation: a copy takes 2 + 100 = 102 us

# kind_counts REPORT COUNTFILE: each kind's calls and bytes are the fake's.
kind_counts() {
    _bad=0
    for _p in HtoD:htod DtoH:dtoh DtoD:dtod peer:peer memset:memset; do
        _k=${_p%%:*}
        _f=${_p#*:}
        _c=$(fcount "$2" "copy_$_f")
        _b=$(fcount "$2" "copy_${_f}_bytes")
        [ "$(jv "$1" "memops[kind=$_k].calls")" = "$_c" ] ||
            { echo "$_k: ktime $(jv "$1" "memops[kind=$_k].calls") calls, the fake $_c"; _bad=1; }
        [ "$(jv "$1" "memops[kind=$_k].bytes")" = "$_b" ] ||
            { echo "$_k: ktime $(jv "$1" "memops[kind=$_k].bytes") bytes, the fake $_b"; _bad=1; }
    done
    return $_bad
}

# near REPORT PATH US: within 0.01 us of US (the fake's clock in float milliseconds; a copy or
# set in an interval would add 102 us or more).
near() { jc "$1" "$2" '~' "$3" 0.01; }

# memop_exact REPORT KIND TIMED US: TIMED samples of KIND, each US, and their bytes.
memop_exact() {
    _m="memops[kind=$2]"
    jc "$1" "$_m.timed" == "$3" && near "$1" "$_m.min_us" "$4" && near "$1" "$_m.max_us" "$4" &&
        near "$1" "$_m.mean_us" "$4" && jc "$1" "$_m.timed_bytes" == $(($3 * B)) &&
        jc "$1" "$_m.gb_per_s" '~' "$(awk -v b=$B -v u="$4" 'BEGIN { printf "%.9f", b / u / 1000 }')" 1e-4
}

# kernel_exact REPORT TIMED: k_mem's TIMED samples, each 100 us.
kernel_exact() {
    jc "$1" "kernels[mangled=k_mem].timed" == "$2" && near "$1" "kernels[mangled=k_mem].min_us" 100 &&
        near "$1" "kernels[mangled=k_mem].max_us" 100
}

# all_exact LABEL WARMUP: every kind exact, and the kernel around them.
all_exact() {
    _r=$tmp/$1.json
    memop_exact "$_r" HtoD $((2 * N - $2)) 102 && memop_exact "$_r" DtoH $((2 * N - $2)) 102 &&
        memop_exact "$_r" DtoD $((2 * N - $2)) 102 && memop_exact "$_r" peer $((N - $2)) 102 &&
        memop_exact "$_r" memset $((2 * N - $2)) 375 && kernel_exact "$_r" $((2 * N - $2))
}

# pairs_only REPORT COUNTFILE: the fake recorded two events per timed launch and per timed
# memory operation, none more.
pairs_only() {
    _want=$(($(jv "$1" totals.timed) + $(jv "$1" 'memops[kind=HtoD].timed') + $(jv "$1" 'memops[kind=DtoH].timed') +
        $(jv "$1" 'memops[kind=DtoD].timed') + $(jv "$1" 'memops[kind=peer].timed') + $(jv "$1" 'memops[kind=memset].timed')))
    [ "$(fcount "$2" event_record)" = $((2 * _want)) ] ||
        { echo "fake: $(fcount "$2" event_record) cuEventRecord calls, want $((2 * _want))"; return 1; }
}

run_plain p "$M" $N $B
for mode in legacy:"" stream:--stream ptsz:--ptsz proc:--proc procptsz:"--proc --ptsz --stream"; do
    m=${mode%%:*}
    run_ktime "$m" KTIME_OUTPUT="$tmp/$m.json" FAKECUDA_COUNT_FILE="$tmp/$m.cnt" "$M" ${mode#*:} $N $B
    check "$m: same exit status and stdout as without ktime" same_run p "$m"
    check "$m: calls and bytes of each kind are the fake's" kind_counts "$tmp/$m.json" "$tmp/$m.cnt"
    check "$m: every kind exact (copies 102 us, sets 375 us), k_mem exact (100 us): no copy inside a kernel's interval" \
        all_exact "$m" 5
    check "$m: no synchronous copy made behind a closed gate (the fake's count)" \
        sh -c "[ \$(awk '\$1 == \"copy_sync_gated\" { print \$2 }' '$tmp/$m.cnt') = 0 ]"
    check "$m: kernel calls are the fake's" counts_match "$tmp/$m.json" "$tmp/$m.cnt"
done
check "synchronous HtoD copies are the ungated ones (one per iteration, past warmup)" \
    sh -c "[ \$('$JCHECK' '$tmp/legacy.json' 'memops[kind=HtoD].ungated') -ge $((N - 5)) ] && '$JCHECK' '$tmp/stream.json' 'memops[kind=DtoD].ungated' == 0"
check "the memory operations are not in the kernels' totals" \
    sh -c "'$JCHECK' '$tmp/legacy.json' totals.launches_seen == $((2 * N)) && '$JCHECK' '$tmp/legacy.json' totals.timed == $((2 * N - 5))"

# --- the text's section, warmup per kind ------------------------------------------------------
run_ktime t KTIME_WARMUP=3 "$M" $N $B
check "text: the section's header and its columns" \
    sh -c "grep -q '^memory operations: copies and sets, each between an event pair on its stream' '$tmp/t.err' && grep -q '^    Total ms     Calls  Warmup     Timed     Mean us      Med us      Min us      Max us     Total MB      GB/s  Kind\$' '$tmp/t.err'"
check "text: HtoD's row (40 calls, 3 warmup, 37 timed of 102 us, 40 MB, 9.80 GB/s)" \
    grep -q '^       3.774        40       3        37     102.000     102.000     102.000     102.000       40.000      9.80  HtoD$' "$tmp/t.err"
check "text: the peer copies' row" grep -q '^       1.734        20       3        17 .*  peer$' "$tmp/t.err"
run_ktime tj KTIME_WARMUP=3 KTIME_OUTPUT="$tmp/tj.json" "$M" $N $B
check "KTIME_WARMUP=3: three of each kind skipped" \
    sh -c "for k in HtoD DtoH DtoD peer memset; do '$JCHECK' '$tmp/tj.json' \"memops[kind=\$k].warmup_skipped\" == 3 || exit 1; done"

# --- the CUPTI timer: kernels from CUPTI, memory operations still with events -----------------
run_ktime cu KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/cu.json" \
    FAKECUDA_COUNT_FILE="$tmp/cu.cnt" "$M" $N $B
check "cupti: same stdout and exit status" same_run p cu
check "cupti: kernels timed by CUPTI, exact" \
    sh -c "'$JCHECK' '$tmp/cu.json' timer.used == cupti && '$JCHECK' '$tmp/cu.json' 'kernels[mangled=k_mem].min_us' == 100 && '$JCHECK' '$tmp/cu.json' 'kernels[mangled=k_mem].max_us' == 100"
check "cupti: memory operations timed with events, exact, counts the fake's" \
    sh -c "'$JCHECK' '$tmp/cu.json' 'memops[kind=HtoD].timed' == $((2 * N - 5)) && '$JCHECK' '$tmp/cu.json' 'memops[kind=memset].mean_us' '~' 375 0.01"
check "cupti: calls and bytes are the fake's" kind_counts "$tmp/cu.json" "$tmp/cu.cnt"
check "cupti: two events per timed memory operation, none for kernels" \
    sh -c "[ \$(awk '\$1 == \"event_record\" { print \$2 }' '$tmp/cu.cnt') = \$((2 * ($(($(jv "$tmp/cu.json" 'memops[kind=HtoD].timed') + $(jv "$tmp/cu.json" 'memops[kind=DtoH].timed') + $(jv "$tmp/cu.json" 'memops[kind=DtoD].timed') + $(jv "$tmp/cu.json" 'memops[kind=peer].timed') + $(jv "$tmp/cu.json" 'memops[kind=memset].timed')))))) ]"

# --- KTIME_MEMOPS=0 ---------------------------------------------------------------------------
run_ktime off KTIME_MEMOPS=0 KTIME_OUTPUT="$tmp/off.json" FAKECUDA_COUNT_FILE="$tmp/off.cnt" "$M" $N $B
check "KTIME_MEMOPS=0: same stdout and exit status" same_run p off
check "KTIME_MEMOPS=0: memops is null, the kernel still exact" \
    sh -c "'$JCHECK' '$tmp/off.json' memops == null && '$JCHECK' '$tmp/off.json' 'kernels[mangled=k_mem].mean_us' '~' 100 0.01"
check "KTIME_MEMOPS=0: two events per timed launch only" events_balanced "$tmp/off.json" "$tmp/off.cnt"
run_ktime offt KTIME_MEMOPS=0 "$M" $N $B
check "KTIME_MEMOPS=0: no section in the text" sh -c "! grep -q '^memory operations' '$tmp/offt.err'"
run_ktime bad KTIME_MEMOPS=sometimes KTIME_OUTPUT="$tmp/bad.json" "$M" 2 4000
check "KTIME_MEMOPS=sometimes: a warning naming it, and on" \
    sh -c "grep -q '^ktime: warning: KTIME_MEMOPS' '$tmp/bad.err' && '$JCHECK' '$tmp/bad.json' 'memops[kind=HtoD].calls' == 4"

# --- copies into a stream capture: counted as captured, never timed -----------------------------
run_plain cp "$M" --capture 7 $N $B
run_ktime cap KTIME_OUTPUT="$tmp/cap.json" FAKECUDA_COUNT_FILE="$tmp/cap.cnt" "$M" --capture 7 $N $B
check "capture: same stdout and exit status" same_run cp cap
check "capture: 7 of each kind captured, as the fake counted 21; the rest as without a capture" \
    sh -c "'$JCHECK' '$tmp/cap.json' 'memops[kind=HtoD].captured' == 7 && '$JCHECK' '$tmp/cap.json' 'memops[kind=DtoD].captured' == 7 && '$JCHECK' '$tmp/cap.json' 'memops[kind=memset].captured' == 7 && [ \$(awk '\$1 == \"copy_captured\" { print \$2 }' '$tmp/cap.cnt') = 21 ] && '$JCHECK' '$tmp/cap.json' 'memops[kind=HtoD].timed' == $((2 * N - 5)) && '$JCHECK' '$tmp/cap.json' 'memops[kind=HtoD].calls' == $((2 * N + 7))"
check "capture: no event recorded into the capture (two per timed launch or copy, the fake's count)" \
    pairs_only "$tmp/cap.json" "$tmp/cap.cnt"

# --- a program with copies and no kernel in flight: a report all the same ---------------------
run_ktime few KTIME_OUTPUT="$tmp/few.json" "$M" 3 4000
run_ktime fewt "$M" 3 4000
check "few calls: flagged as few samples in the text" grep -q ' HtoD (few samples)$' "$tmp/fewt.err"
check "few calls: ktime report renders the JSON's section the same" \
    sh -c "KTIME_RENDER='$E2E_RENDER' '${PYTHON:-python3}' '$(cd "$(dirname "$0")/../.." && pwd)/tools/ktime_tool.py' report '$tmp/few.json' | grep -q ' HtoD (few samples)\$'"

finish
