#!/bin/sh
# where.sh - where the GPU time went, on the fake driver and the fake CUPTI, with times computed
# by hand: the GPU busy and idle (FAKECUDA_IDLE_NS: the GPU waits 20 us before each kernel),
# communication (an NCCL kernel) against compute, per rank, and `ktime merge` of two ranks:
# their GPUs side by side and the rank that spent least in communication named. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$SRC/tools/ktime_tool.py
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || skip "ktime_tool.py" "no $PY"
KTIME_RENDER=$E2E_RENDER
[ -x "$KTIME_RENDER" ] || e2e_fail_setup "ktime-render not built: $KTIME_RENDER (set BUILD_DIR)"
export KTIME_RENDER
kt() { "$PY" "$TOOL" "$@"; }
A=$E2E_BIN/app_cudart
CUPTI=$FAKE_DIR/libcupti.so.13
NCCL=_Z23ncclDevKernel_AllReduceP11ncclDevComm

# Rank r: 10 NCCL kernels of (100 - 50 r) us and 10 compute kernels of 200 us, alternating on
# one stream, each 20 us after the one before: busy 3000 - 500 r us, 19 gaps of 20 us.
for r in 0 1; do
    run_ktime "r$r" KTIME_OUTPUT="$tmp/r$r.json" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" \
        FAKECUDA_IDLE_NS=20000 RANK=$r LOCAL_RANK=0 WORLD_SIZE=2 \
        "$A" --stream "$NCCL=$((100000 - 50000 * r)):10" kc=200000:10
done
d='gpu_busy.devices[device=0]'
w1() { jc "$tmp/r0.json" "$d.busy_ms" '~' 3.0 1e-9 && jc "$tmp/r0.json" "$d.span_ms" '~' 3.38 1e-9; }
check "rank 0: busy 3.000 ms of a 3.380 ms span" w1
check "rank 0: busy 88.757 % (3000 / 3380)" jc "$tmp/r0.json" "$d.busy_percent" '~' 88.7573964497 1e-6
w2() { jc "$tmp/r0.json" "$d.gaps.count" == 19 && jc "$tmp/r0.json" "$d.gaps.total_ms" '~' 0.38 1e-9 && jc "$tmp/r0.json" "$d.gaps.histogram.10us_to_100us.count" == 19 && jc "$tmp/r0.json" "$d.gaps.largest[0].gap_us" '~' 20 1e-6; }
check "rank 0: 19 gaps of 20 us, all in 10-100us, the largest 20 us" w2
w3() { jc "$tmp/r0.json" "$d.kernels" == 20 && jc "$tmp/r0.json" "$d.concurrency" '~' 1 1e-9; }
check "rank 0: 20 kernels, one at a time" w3
c='communication.devices[device=0]'
w4() { jc "$tmp/r0.json" "$c.comm_ms" '~' 1.0 1e-9 && jc "$tmp/r0.json" "$c.overlap_ms" '~' 0 1e-9 && jc "$tmp/r0.json" "$c.exposed_ms" '~' 1.0 1e-9 && jc "$tmp/r0.json" "$c.kernels" == 10; }
check "rank 0: communication 1.000 ms, none of it overlapping compute, all exposed" w4
w5() { jc "$tmp/r1.json" "$d.busy_ms" '~' 2.5 1e-9 && jc "$tmp/r1.json" "$d.span_ms" '~' 2.88 1e-9 && jc "$tmp/r1.json" "$c.comm_ms" '~' 0.5 1e-9; }
check "rank 1: busy 2.500 ms of 2.880, communication 0.500 ms" w5
check "a single report names no rank waiting least" jc "$tmp/r0.json" communication.least_waiting == null

kt merge "$tmp/r0.json" "$tmp/r1.json" -o "$tmp/m.json" 2>"$tmp/merge.err"
check "merge: exit status 0" test -s "$tmp/m.json"
w6() { jc "$tmp/m.json" 'gpu_busy.devices[rank=0].busy_ms' '~' 3.0 1e-9 && jc "$tmp/m.json" 'gpu_busy.devices[rank=1].busy_ms' '~' 2.5 1e-9; }
check "merge: both ranks' GPUs side by side, each with its rank" w6
w7() { jc "$tmp/m.json" 'communication.devices[rank=1].comm_ms' '~' 0.5 1e-9 && jc "$tmp/m.json" communication.least_waiting == 1; }
check "merge: communication per rank, rank 1 (least) named" w7
kt report "$tmp/m.json" >"$tmp/m.txt" 2>"$tmp/mr.err"
check "merged text: the communication section per rank" sh -c "grep -q '^communication: ' '$tmp/m.txt' && [ \$(grep -c 'cupti: 10 kernels' '$tmp/m.txt') = 2 ]"
check "merged text: names the rank that waits least" grep -q '^least ' "$tmp/m.txt"
"$KTIME_RENDER" --format json "$tmp/m.json" >"$tmp/m2.json" 2>"$tmp/m2.err"
"$KTIME_RENDER" --format json "$tmp/m2.json" >"$tmp/m3.json" 2>>"$tmp/m2.err"
check "merged JSON: read back and written again without change" cmp -s "$tmp/m2.json" "$tmp/m3.json"
check "merged JSON: the ranks' busy time survives ktime-render" jc "$tmp/m2.json" 'gpu_busy.devices[rank=1].busy_ms' '~' 2.5 1e-9
# Each kernel's launch calls and queue times merged as its samples are: the counts added, the
# statistics pooled, the quantiles read from the histograms added (the fake CUPTI's launch
# records: a 2 us call and 3 us in the queue, for each of a rank's 5 launches past warmup).
w8() { jc "$tmp/m.json" 'kernels[name=kc].launch.timed' == 10 && jc "$tmp/m.json" 'kernels[name=kc].launch.sum_us' '~' 20 1e-9 && jc "$tmp/m.json" 'kernels[name=kc].launch.p99_us' '~' 2 1e-9 && jc "$tmp/m.json" 'kernels[name=kc].launch.histogram.buckets[0][2]' == 10; }
check "merge: launch calls of both ranks, 10 of 2 us, p99 from the histograms added" w8
w9() { jc "$tmp/m.json" 'kernels[name=kc].queue.timed' == 10 && jc "$tmp/m.json" 'kernels[name=kc].queue.mean_us' '~' 3 1e-9 && jc "$tmp/m.json" 'kernels[name=kc].queue_long' == false; }
check "merge: queue times of both ranks, 10 of 3 us" w9
# The ranks' balance tells the collectives' kernels by the reports' own KTIME_COMM: with
# KTIME_COMM=match:^kc$ the 200 us kernel kc is the collectives' (5 timed: 1.0 ms), the NCCL
# one compute; merged with rank 1 of the default pattern, each rank by its own.
for r in 0 1; do
    run_ktime "c$r" KTIME_OUTPUT="$tmp/c$r.json" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" \
        KTIME_COMM='match:^kc$' RANK=$r LOCAL_RANK=0 WORLD_SIZE=2 \
        "$A" --stream "$NCCL=$((100000 - 50000 * r)):10" kc=200000:10
done
kt merge "$tmp/c0.json" "$tmp/c1.json" -o "$tmp/mc.json" 2>"$tmp/mc.err"
w10() { jc "$tmp/mc.json" communication.pattern == '^kc$' && jc "$tmp/mc.json" 'balance.per_rank[rank=0].nccl_ms' '~' 1.0 1e-9 && jc "$tmp/mc.json" 'balance.per_rank[rank=1].nccl_ms' '~' 1.0 1e-9 && jc "$tmp/mc.json" 'balance.per_rank[rank=1].compute_ms' '~' 0.25 1e-9; }
check "balance: KTIME_COMM=match:^kc\$ makes kc the collectives' time (1.0 ms a rank), NCCL compute" w10
kt merge "$tmp/c0.json" "$tmp/r1.json" -o "$tmp/mx.json" 2>"$tmp/mx.err"
w11() { jc "$tmp/mx.json" communication.pattern == mixed && jc "$tmp/mx.json" 'balance.per_rank[rank=0].nccl_ms' '~' 1.0 1e-9 && jc "$tmp/mx.json" 'balance.per_rank[rank=1].nccl_ms' '~' 0.25 1e-9 && jc "$tmp/mx.json" 'balance.per_rank[rank=1].compute_ms' '~' 1.0 1e-9; }
check "balance: reports of different KTIME_COMM, each judged by its own; the pattern mixed" w11
# Ranges' busy time summed by name: app_ranges' "backward" is one 200 us kernel an iteration,
# 3 on rank 0 and 4 on rank 1.
for r in 0 1; do
    run_ktime "g$r" KTIME_OUTPUT="$tmp/g$r.json" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" \
        RANK=$r LOCAL_RANK=0 WORLD_SIZE=2 "$E2E_BIN/app_ranges" --runtime $((3 + r))
done
kt merge "$tmp/g0.json" "$tmp/g1.json" -o "$tmp/mg.json" 2>"$tmp/mg.err"
w12() { jc "$tmp/mg.json" 'gpu_busy.ranges[name=backward].busy_ms' '~' 1.4 1e-9 && jc "$tmp/mg.json" 'gpu_busy.ranges[name=backward].intervals' == 7 && jc "$tmp/mg.json" 'gpu_busy.ranges[0].name' == backward && jc "$tmp/mg.json" 'gpu_busy.devices[]|count' == 2; }
check "merge: ranges' busy time summed by name (backward 0.6 + 0.8 ms), largest first" w12
# Past --rank-rows, each GPU's entry stays but its streams do not.
kt merge --rank-rows 1 "$tmp/r0.json" "$tmp/r1.json" -o "$tmp/m1.json" 2>"$tmp/m1.err"
w13() { jc "$tmp/m1.json" 'gpu_busy.devices[rank=1].busy_ms' '~' 2.5 1e-9 && jc "$tmp/m1.json" 'gpu_busy.devices[rank=1].streams|len' == 0 && jc "$tmp/m.json" 'gpu_busy.devices[rank=1].streams|len' == 1 && jc "$tmp/m1.json" communication.least_waiting == 1; }
check "merge past --rank-rows: each GPU's busy time, no streams; least_waiting kept" w13
# ktime plot: each GPU's span cut into compute alone, communication overlapping compute,
# communication exposed and idle, the parts computed by hand (rank 0: 2.0, 0, 1.0, 0.38 ms).
bars() { "$PY" -c "import importlib.util as u, json, sys
s = u.spec_from_file_location('kt', '$TOOL'); m = u.module_from_spec(s); s.loader.exec_module(m)
print(json.dumps([[l, [float(round(v, 9)) for v in p]] for l, p in m.busy_bars(json.load(open(sys.argv[1])))]))" "$1"; }
bars "$tmp/r0.json" >"$tmp/bars0" 2>&1
bars "$tmp/m.json" >"$tmp/barsm" 2>&1
check "plot's parts of rank 0's GPU: 2.0 ms compute alone, 1.0 communication exposed, 0.38 idle" \
    grep -qxF '[["gpu 0 (cupti)", [2.0, 0.0, 1.0, 0.38]]]' "$tmp/bars0"
check "plot's parts of the merged report: a bar per rank" \
    grep -qxF '[["rank 0 gpu 0 (cupti)", [2.0, 0.0, 1.0, 0.38]], ["rank 1 gpu 0 (cupti)", [2.0, 0.0, 0.5, 0.38]]]' "$tmp/barsm"
if "$PY" -c 'import matplotlib' 2>/dev/null; then
    kt plot "$tmp/r0.json" -o "$tmp/p.svg" 2>/dev/null
    check "plot: a report with gpu_busy draws its busy bar under the kernels" \
        sh -c "grep -q 'where the GPU time went' '$tmp/p.svg' && grep -q 'communication exposed' '$tmp/p.svg' && grep -q 'share of GPU time' '$tmp/p.svg'"
    kt plot "$tmp/m.json" -o "$tmp/pm.svg" 2>/dev/null
    check "plot: a merged report, the heatmap and a busy bar per rank" \
        sh -c "grep -q 'total / mean across ranks' '$tmp/pm.svg' && grep -q 'rank 1 gpu 0 (cupti)' '$tmp/pm.svg'"
else
    skip "plot: a report with gpu_busy" "matplotlib not installed (apt-get install python3-matplotlib)"
    skip "plot: a merged report with gpu_busy" "matplotlib not installed"
fi
finish
