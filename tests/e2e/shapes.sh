#!/bin/sh
# shapes.sh - a kernel's samples by launch shape (grid, block, dynamic shared memory): exact
# per shape against the fake driver's known durations, through cuLaunchKernel, cuLaunchKernelEx
# and cuLaunchCooperativeKernel, and from the CUPTI timer's records (fake CUPTI); bounded (the
# shapes past the most timed folded into other_shapes, nothing lost); KTIME_GROUP=shape puts
# them in the text and CSV. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime
CUPTI=$FAKE_DIR/libcupti.so.13
[ -f "$CUPTI" ] || e2e_fail_setup "fake CUPTI not built: $CUPTI (set FAKE_DIR)"
A=$E2E_BIN/app_driver
DURS=10000,20000
N=25
NSH=3
PLAN="kA=$DURS:$N kB=5000:12"

# shape_exact DURS N WARMUP NSHAPES S: "timed sum_us" of the launches j (WARMUP <= j < N) of
# shape S = j % NSHAPES, their durations cycling through DURS (ns) by j.
shape_exact() {
    awk -v durs="$1" -v n="$2" -v w="$3" -v m="$4" -v s="$5" 'BEGIN {
        k = split(durs, d, ",")
        for (j = w; j < n; j++) if (j % m == s) { c++; sum += d[(j % k) + 1] / 1000.0 }
        printf "%d %.6f\n", c, sum
    }'
}

# per_shape LABEL REPORT: kA's three shapes, each exact; together all of kA's samples.
per_shape() {
    for _s in 0 1 2; do
        set -- "$1" "$2" $(shape_exact $DURS $N 5 $NSH $_s)
        _g=$((8 * (1 + _s))) _m=$((64 * _s))
        _q="kernels[mangled=kA].shapes[shared_bytes=$_m]"
        check "$1: kA's shape $_s has grid ($_g, 1, 1)" jc "$2" "$_q.grid[0]" == $_g
        check "$1: kA's shape $_s has block (256, 1, 1)" jc "$2" "$_q.block[]|sum" == 258
        check "$1: kA's shape $_s: $3 samples" jc "$2" "$_q.timed" == "$3"
        check "$1: kA's shape $_s: $4 us in all" jc "$2" "$_q.sum_us" '~' "$4" 0.01
        check "$1: kA's shape $_s: its histogram holds its samples" jc "$2" "$_q.histogram.buckets[][2]|sum" == "$3"
    done
    check "$1: kA has its three shapes" jc "$2" 'kernels[mangled=kA].shapes|len' == 3
    check "$1: the shapes hold every sample of kA" \
        sh -c "[ \"\$('$JCHECK' '$2' 'kernels[mangled=kA].shapes[].timed|sum')\" = \"\$('$JCHECK' '$2' 'kernels[mangled=kA].timed')\" ]"
    check "$1: no other shapes" jc "$2" 'kernels[mangled=kA].other_shapes' == null
    check "$1: kB, launched 12 times, has 3 shapes too" jc "$2" 'kernels[mangled=kB].shapes[].timed|sum' == 7
}

for how in plain ex coop; do
    case $how in plain) opt= ;; *) opt=--$how ;; esac
    run_ktime $how KTIME_OUTPUT="$tmp/$how.json" "$A" $opt --shapes $NSH $PLAN
    check "$how: the program ran" sh -c "[ \$(cat '$tmp/$how.rc') = 0 ]"
    check "$how: schema_version 2" jc "$tmp/$how.json" schema_version == 2
    per_shape "$how" "$tmp/$how.json"
done

run_ktime cu KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/cu.json" "$A" --shapes $NSH $PLAN
check "cupti: the CUPTI timer was used" jc "$tmp/cu.json" timer.used == cupti
per_shape cupti "$tmp/cu.json"

# More shapes than are told apart: the most timed shown, the others folded and counted,
# nothing lost.
run_ktime many KTIME_OUTPUT="$tmp/many.json" "$A" --shapes 40 kM=1000:400
check "40 shapes: 8 shown" jc "$tmp/many.json" 'kernels[mangled=kM].shapes|len' == 8
check "40 shapes: the rest are other shapes, some never told apart" jc "$tmp/many.json" 'kernels[mangled=kM].other_shapes.untracked' == true
check "40 shapes: shown + other = every sample (395)" sh -c \
    "[ \$(( \$('$JCHECK' '$tmp/many.json' 'kernels[mangled=kM].shapes[].timed|sum') + \$('$JCHECK' '$tmp/many.json' 'kernels[mangled=kM].other_shapes.timed') )) = 395 ]"

# The text and CSV: shape rows only with KTIME_GROUP=shape.
run_ktime tx KTIME_OUTPUT="$tmp/tx.txt" "$A" --shapes $NSH $PLAN
check "text, KTIME_GROUP unset: no shape rows" sh -c "! grep -q ' grid [0-9]' '$tmp/tx.txt'"
run_ktime ts KTIME_GROUP=shape KTIME_OUTPUT="$tmp/ts.txt" "$A" --shapes $NSH $PLAN
set -- $(shape_exact $DURS $N 5 $NSH 1)
check "text, KTIME_GROUP=shape: the header says so" grep -q '^shapes   under each kernel' "$tmp/ts.txt"
check "text, KTIME_GROUP=shape: six shape rows" sh -c "[ \$(grep -c ' grid [0-9]*x1x1 block 256x1x1 smem [0-9]*\$' '$tmp/ts.txt') = 6 ]"
check "text, KTIME_GROUP=shape: kA's grid 16 row, $1 samples" sh -c \
    "grep -E '^ +[0-9.]+ +[0-9.]+ +$1 +[0-9.]+ .* grid 16x1x1 block 256x1x1 smem 64\$' '$tmp/ts.txt'"
run_ktime cs KTIME_GROUP=shape KTIME_OUTPUT="$tmp/cs.csv" "$A" --shapes $NSH $PLAN
check "CSV, KTIME_GROUP=shape: a row per shape, grid, block and shared_bytes before paused and sampled_1_in, last" sh -c \
    "[ \$(grep -c ',[0-9]*x1x1,256x1x1,[0-9]*,,.\$' '$tmp/cs.csv') = 6 ]"
check "CSV: the header ends grid,block,shared_bytes,paused,sampled_1_in" sh -c "head -n 1 '$tmp/cs.csv' | grep -q ',grid,block,shared_bytes,paused,sampled_1_in.\$'"
run_ktime bad KTIME_GROUP=kernel KTIME_OUTPUT="$tmp/bad.txt" "$A" --shapes $NSH $PLAN
check "KTIME_GROUP=kernel: one warning, name used" one_warning "$tmp/bad.err" KTIME_GROUP name
check "KTIME_GROUP=kernel: no shape rows" sh -c "! grep -q ' grid [0-9]' '$tmp/bad.txt'"
finish
