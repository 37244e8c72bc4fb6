#!/bin/sh
# budget.sh - KTIME_BUDGET end to end against the fake driver (exact kernel durations): a
# workload of short kernels under KTIME_BUDGET=1 is sampled (each row's rate in the report), its
# totals estimated from samples that stand for 2^level launches and marked so, every launch in
# one bucket; a long kernel stays timed at every launch; the text, CSV and JSON round trip; bad
# values get one warning and the budget stays off. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime
A=$E2E_BIN/app_live
# A 15.625 us kernel (exact in float ms) and a 20 ms one. The long one first, alone, so that its
# length is known before the short ones share the budget; sleeps let the controller's windows
# pass between the bursts.
KERNELS="k_small=15625 k_long=20000000"
SCRIPT='launch k_long 13
sleep 60
launch k_small 2000
sleep 60
launch k_small 2000
launch k_long 20
sleep 60
launch k_small 2000
launch k_long 20
'
brun() {
    _bn=$1
    shift
    rm -f "$tmp/$_bn.json" "$tmp/$_bn.cnt"
    printf '%s' "$SCRIPT" | run_ktime "$_bn" KTIME_OUTPUT="$tmp/$_bn.json" FAKECUDA_COUNT_FILE="$tmp/$_bn.cnt" "$@" "$A" $KERNELS
}

# buckets REPORT: each row's calls are its warmup, captured, dropped, failed, timed,
# incomplete, unsampled, outside-range and paused launches, exactly.
buckets() {
    _n=$(jv "$1" 'kernels|len')
    [ -n "$_n" ] && [ "$_n" -gt 0 ] || { echo "no kernels in $1"; return 1; }
    _i=0
    while [ "$_i" -lt "$_n" ]; do
        _s=0
        for _q in warmup_skipped captured dropped failed timed incomplete unsampled outside_range paused; do
            _s=$((_s + $(jv "$1" "kernels[$_i].$_q")))
        done
        _c=$(jv "$1" "kernels[$_i].calls")
        [ "$_s" = "$_c" ] || { echo "kernels[$_i]: calls $_c, buckets $_s"; return 1; }
        _i=$((_i + 1))
    done
}

printf '%s' "$SCRIPT" | run_plain base "$A" $KERNELS
brun b1 KTIME_BUDGET=1 KTIME_ALSO_OUTPUT="$tmp/b1.txt"
R=$tmp/b1.json
check "KTIME_BUDGET=1: same exit status and stdout as without ktime" same_run base b1
check "KTIME_BUDGET=1: nothing on stderr" empty "$tmp/b1.err"
check "KTIME_BUDGET=1: calls per kernel equal the fake driver's launches" counts_match "$R" "$tmp/b1.cnt"
check "KTIME_BUDGET=1: every launch in exactly one bucket (unsampled ones too)" buckets "$R"
check "KTIME_BUDGET=1: the report's budget: percent 1, windows counted, an estimated cost" sh -c "'$JCHECK' '$R' budget.percent == 1 && [ \$('$JCHECK' '$R' budget.windows) -ge 1 ] && '$JCHECK' '$R' budget.estimated_percent '>' 0 && '$JCHECK' '$R' budget.wall_ms '>' 0"
s=kernels[mangled=k_small]
l=kernels[mangled=k_long]
n=$(jv "$R" "$s.sampled_1_in")
t=$(jv "$R" "$s.timed")
u=$(jv "$R" "$s.unsampled")
echo "# k_small: sampled 1 in $n at the end, $t timed, $u unsampled"
check "KTIME_BUDGET=1: the short kernel sampled (1 in $n at the end, $u of 6000 launches not timed)" sh -c "[ '$n' -ge 2 ] && [ '$u' -gt 0 ]"
want=$(awk -v n="$((t + u))" 'BEGIN { printf "%.6f", 15.625 * n / 1000 }')
check "KTIME_BUDGET=1: the short kernel's total estimated: 15.625 us x ($t timed + $u unsampled) = $want ms" sh -c "'$JCHECK' '$R' '$s.total_estimated' == true && '$JCHECK' '$R' '$s.total_ms' '~' $want 0.000001"
check "KTIME_BUDGET=1: every sample of the short kernel exactly 15.625 us" samples_exact "$R" k_small 15.625
check "KTIME_BUDGET=1: the long kernel timed at every launch past warmup (48 of 53), 1 in 1, nothing estimated" sh -c "'$JCHECK' '$R' '$l.sampled_1_in' == 1 && '$JCHECK' '$R' '$l.timed' == 48 && '$JCHECK' '$R' '$l.unsampled' == 0 && '$JCHECK' '$R' '$l.total_estimated' == false && '$JCHECK' '$R' '$l.total_ms' == 960"
check "KTIME_BUDGET=1: no events for the launches the draw left out" events_balanced "$R" "$tmp/b1.cnt"
check "KTIME_BUDGET=1, text: the budget line" grep -q "^budget   KTIME_BUDGET=1 %: ktime's estimated cost [0-9.]* % of the run ([0-9.]* ms of [0-9.]* ms, [0-9]* windows);$" "$tmp/b1.txt"
check "KTIME_BUDGET=1, text: the short kernel's row says its rate" grep -q "k_small (.*sampled 1 in $n[,)]" "$tmp/b1.txt"
check "KTIME_BUDGET=1, text: the sampled line and the total marked estimated" sh -c "grep -q '^sampled  $((u)) launches after warmup not timed (KTIME_BUDGET); Total ms and Time% are estimates' '$tmp/b1.txt' && grep -q '^total   ~ ' '$tmp/b1.txt'"
for f in text json csv; do
    "$E2E_RENDER" --format $f "$R" >"$tmp/b1.render.$f" 2>"$tmp/b1.render.err"
done
brun b1c KTIME_BUDGET=1 KTIME_ALSO_OUTPUT="$tmp/b1c.csv"
check "KTIME_BUDGET=1: ktime report of the JSON is the JSON, byte for byte" cmp "$R" "$tmp/b1.render.json"
check "KTIME_BUDGET=1: ktime report of the JSON is the library's text, byte for byte" cmp "$tmp/b1.txt" "$tmp/b1.render.text"
"$E2E_RENDER" --format csv "$tmp/b1c.json" >"$tmp/b1c.render.csv"
check "KTIME_BUDGET=1: ktime report --format csv of the JSON is the library's CSV, byte for byte" cmp "$tmp/b1c.csv" "$tmp/b1c.render.csv"
check "KTIME_BUDGET=1, CSV: the sampled_1_in column, 1 for the long kernel" sh -c "head -n 1 '$tmp/b1c.csv' | tr -d '\r' | grep -q ',sampled_1_in\$' && grep '^k_long,' '$tmp/b1c.csv' | tr -d '\r' | grep -q ',1\$'"

# Without a budget: no budget part, no rate on the rows, nothing sampled.
brun b0
check "no KTIME_BUDGET: budget null, no sampled_1_in, nothing unsampled" sh -c "'$JCHECK' '$tmp/b0.json' budget == null && ! grep -q sampled_1_in '$tmp/b0.json' && '$JCHECK' '$tmp/b0.json' totals.unsampled == 0"

# Bad values: one warning naming the variable and the default 0 kept, the budget off.
for v in abc -1 101 1.5 '5%'; do
    brun bbad KTIME_BUDGET="$v"
    check "KTIME_BUDGET='$v': one warning naming it and the default 0" one_warning "$tmp/bbad.err" KTIME_BUDGET 0
    check "KTIME_BUDGET='$v': the budget off, every launch past warmup timed" sh -c "'$JCHECK' '$tmp/bbad.json' budget == null && '$JCHECK' '$tmp/bbad.json' totals.unsampled == 0"
done
brun bs KTIME_BUDGET=1 KTIME_SAMPLE=4
check "KTIME_BUDGET=1 KTIME_SAMPLE=4: one warning, KTIME_SAMPLE ignored (totals.sample 1)" sh -c "[ \$(wc -l <'$tmp/bs.err') = 1 ] && grep -q 'KTIME_SAMPLE=4 is ignored' '$tmp/bs.err' && '$JCHECK' '$tmp/bs.json' totals.sample == 1 && '$JCHECK' '$tmp/bs.json' budget.percent == 1"
# Under CUPTI the lever is the share of the time its kernel records are on: whatever the
# machine's pace made of the duty, every launch is in one bucket, the launches made while the
# records were off are the rows' unsampled ones and the budget's unrecorded, and every record
# is exact.
brun bc KTIME_BUDGET=1 KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" FAKECUPTI_COUNT_FILE="$tmp/bc.cupti.cnt"
R=$tmp/bc.json
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: same exit status and stdout as without ktime" same_run base bc
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: nothing on stderr" empty "$tmp/bc.err"
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: timed by CUPTI, the budget's lever CUPTI's records (cupti_on_1_in a number)" sh -c "'$JCHECK' '$R' timer.used == cupti && '$JCHECK' '$R' budget.percent == 1 && '$JCHECK' '$R' budget.cupti_on_1_in '>=' 1"
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: every launch in exactly one bucket" buckets "$R"
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: the rows' unsampled launches are the budget's unrecorded ones" sh -c "[ \$(( \$('$JCHECK' '$R' '$s.unsampled') + \$('$JCHECK' '$R' '$l.unsampled') )) = \$('$JCHECK' '$R' budget.unrecorded) ] && [ \$('$JCHECK' '$R' totals.unsampled) = \$('$JCHECK' '$R' budget.unrecorded) ]"
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: every record of the short kernel exactly 15.625 us" samples_exact "$R" k_small 15.625
echo "# cupti: on 1/$(jv "$R" budget.cupti_on_1_in) of the time at the end, $(jv "$R" budget.unrecorded) launches unrecorded"
# CUPTI's launch records (launch and queue times) cost every launch call: off under a budget
# unless KTIME_LAUNCH_TIMES is set; on without a budget.
check "KTIME_BUDGET=1 KTIME_TIMER=cupti: no launch records (no kernel's launch times), no busy time (its records would have holes)" \
    sh -c "'$JCHECK' '$R' '$s.launch' == null && ! grep -q 'cupti_call cuptiActivityEnableDriverApi' '$tmp/bc.cupti.cnt' && '$JCHECK' '$R' gpu_busy == null"
brun bcl KTIME_BUDGET=1 KTIME_TIMER=cupti KTIME_LAUNCH_TIMES=1 KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13"
check "KTIME_BUDGET=1 KTIME_LAUNCH_TIMES=1 KTIME_TIMER=cupti: the launch records, asked for" \
    sh -c "'$JCHECK' '$tmp/bcl.json' '$s.launch.timed' '>' 0"
brun cl KTIME_TIMER=cupti KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13"
check "KTIME_TIMER=cupti without a budget: the launch records and the busy time" sh -c "'$JCHECK' '$tmp/cl.json' '$s.launch.timed' '>' 0 && '$JCHECK' '$tmp/cl.json' 'gpu_busy.devices[device=0].busy_ms' '>' 0"
brun bb KTIME_BUDGET=1 KTIME_TIMER=both KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13"
check "KTIME_BUDGET=1 KTIME_TIMER=both: one warning, the budget off, every launch timed" sh -c "[ \$(wc -l <'$tmp/bb.err') = 1 ] && grep -q 'KTIME_BUDGET=1 works with KTIME_TIMER=events or cupti' '$tmp/bb.err' && '$JCHECK' '$tmp/bb.json' budget == null && '$JCHECK' '$tmp/bb.json' totals.unsampled == 0"
finish
