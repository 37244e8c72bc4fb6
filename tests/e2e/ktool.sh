#!/bin/sh
# ktool.sh - tools/ktime_tool.py (`ktime report | merge | diff | plot`) on real reports from the
# fake driver: `report` prints a JSON report through ktime-render, the library's own writers,
# so its text and CSV are the library's of the same process (KTIME_ALSO_OUTPUT writes both),
# byte for byte, and its JSON the library's JSON: this checks that the JSON holds all of the
# report; merge is exact and order-free and refuses what cannot be merged; diff's verdicts and
# exit status; plot; malformed input gets one line and exit status 2, never a traceback; every
# tests/fixtures/*.json. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$SRC/tools/ktime_tool.py
# The system's python3 where there is one: a version manager's shim on the PATH (pyenv) can
# cost seconds a call, and this script makes hundreds.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
    skip "ktime_tool.py" "no $PY"
    finish
fi
# The tool prints reports with the build's ktime-render (the launcher would say where it is).
KTIME_RENDER=$E2E_RENDER
[ -x "$KTIME_RENDER" ] || e2e_fail_setup "ktime-render not built: $KTIME_RENDER (set BUILD_DIR)"
export KTIME_RENDER
kt() { "$PY" "$TOOL" "$@"; }
A=$E2E_BIN/app_cudart
CUPTI=$FAKE_DIR/libcupti.so.13

# --- the pure functions ------------------------------------------------------------------
kt --selftest >"$tmp/self.out" 2>&1
selftest_lines "$tmp/self.out" "selftest: "
check "selftest: exit status 0, no traceback" sh -c "kt() { '$PY' '$TOOL' \"\$@\"; }; kt --selftest >/dev/null 2>'$tmp/self.err' && ! grep -q Traceback '$tmp/self.err'"

# same_bytes WANT GOT: byte-identical files (a diff of the first lines otherwise).
same_bytes() {
    [ -s "$1" ] || { echo "missing or empty: $1"; return 1; }
    cmp -s "$1" "$2" && return 0
    echo "the library wrote $1, the tool $2:"
    diff "$1" "$2" | head -n 20
    return 1
}

# rendered LABEL: `ktime report` of each run's JSON equals the library's text and CSV of the
# same process, and its JSON the library's JSON (the same writers, from the model read back:
# what the JSON leaves out would show).
rendered() {
    kt report "$tmp/$1-t.json" >"$tmp/$1.tool.txt" 2>"$tmp/$1.tool.err"
    check "$1: ktime report of the JSON = the library's text of the same run, byte for byte" \
        same_bytes "$tmp/$1.txt" "$tmp/$1.tool.txt"
    kt report --format csv "$tmp/$1-c.json" >"$tmp/$1.tool.csv" 2>>"$tmp/$1.tool.err"
    check "$1: ktime report --format csv = the library's CSV of the same run, byte for byte" \
        same_bytes "$tmp/$1.csv" "$tmp/$1.tool.csv"
    kt report --format json "$tmp/$1-t.json" >"$tmp/$1.tool.json" 2>>"$tmp/$1.tool.err"
    check "$1: ktime report --format json = the library's JSON, byte for byte" \
        same_bytes "$tmp/$1-t.json" "$tmp/$1.tool.json"
    check "$1: nothing on the tool's stderr" empty "$tmp/$1.tool.err"
}

# pair LABEL [VAR=VALUE...] PROGRAM ARGS: two runs, each writing JSON and (KTIME_ALSO_OUTPUT)
# text or CSV, then `rendered`.
pair() {
    _l=$1
    shift
    run_ktime "$_l-t" KTIME_OUTPUT="$tmp/$_l-t.json" KTIME_ALSO_OUTPUT="$tmp/$_l.txt" "$@"
    run_ktime "$_l-c" KTIME_OUTPUT="$tmp/$_l-c.json" KTIME_ALSO_OUTPUT="$tmp/$_l.csv" "$@"
    rendered "$_l"
}

# --- report: the library's text and CSV, from its JSON ----------------------------------------
bad=$(printf 'k\377bad\342\202')
cafe=$(printf 'caf\303\251,"au_lait"')
long=$(awk 'BEGIN { s = "ns::deep::"; for (i = 0; i < 30; i++) s = s "Layer" i "_"; print s "kernel" }')
longu8=$(awk 'BEGIN { s = "k_"; for (i = 0; i < 50; i++) s = s "\303\251"; print s }')
longbad=$(awk 'BEGIN { s = "b_"; for (i = 0; i < 40; i++) s = s "x\377"; print s }')
pair names "$A" k_small=125000:40 "$bad=1000:12" 'k"q,x=3000:20' "$cafe=2000:11" \
    "$long=7000:9" "$longu8=8000:14" "$longbad=9000:15" _Z1fi=5000:12 _Z1ff=6000:12 _Z1gIiEvv=4000:16
check "names: the text has a Full names list (elided and look-alike names)" grep -q '^Full names$' "$tmp/names.txt"
check "names: the JSON keeps the bytes of names that are not UTF-8 (name_bytes, command_bytes)" \
    sh -c "grep -q '\"name_bytes\": \"6bff626164e282\"' '$tmp/names-t.json' && grep -q '\"command_bytes\"' '$tmp/names-t.json'"
# Control characters (escaped in the text and CSV), a backslash, and names a spreadsheet would
# take for formulas (a quote put before them in the CSV).
pair ctrl "$A" "$(printf 'nl\nnote     forged')=125000:12" "$(printf 'tab\t\033[1m\302\233x')=2000:9" \
    'back\slash=3000:8' "=cmd|' /C calc'!A0=4000:7" "+p=5000:6" "-m=6000:7" "@at=7000:8" "'q=8000:9" \
    "$(printf 'long\nname_'; awk 'BEGIN { for (i = 0; i < 30; i++) printf "Layer%d_", i }')=9000:10"
check "ctrl: the text and CSV have no raw control character" \
    sh -c "! grep -q \"\$(printf '[\t\033]')\" '$tmp/ctrl.txt' '$tmp/ctrl.csv' && ! grep -q '^note     forged' '$tmp/ctrl.txt'"
pair flush KTIME_FLUSH_L2=1 "$A" k_small=125000:20
pair flush_none KTIME_FLUSH_L2=1 FAKECUDA_MEMALLOC_FAILS=1 "$A" k_small=125000:20
pair memops KTIME_WARMUP=3 "$E2E_BIN/app_memops" --stream 12 4000
pair memops_few "$E2E_BIN/app_memops" 8 4000
pair ranges KTIME_NVTX=1 LD_LIBRARY_PATH="$(dirname "$KTIME_LIB"):$LDP" "$E2E_BIN/app_ranges" --nvtx --extra-pop 12
pair driver "$E2E_BIN/app_driver" --stream k_small=125000:40 k_big=1000000:10 _Z6squarePfi=250000:20
pair twodev FAKECUDA_DEVICES=2 "$E2E_BIN/app_driver" --devices 2 k_d=125000:20 k_e=250000:1
check "twodev: the text has a line per GPU" grep -q 'on gpu 1$' "$tmp/twodev.txt"
pair threads "$E2E_BIN/app_threads" 4 400
pair threads_k "$E2E_BIN/app_threads" 4 64 --kernels 32
pair mixed "$A" --mixed kmix=125000,375000,90000:60 k_small=125000:12 k_three=3000:8
pair cupti KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" "$A" kmix=125000,375000:40 _Z6squarePfi=250000:7
pair both KTIME_TIMER=both KTIME_CUPTI_LIB="$CUPTI" "$A" kmix=125000,375000:40 k_small=125000:12
check "both: the text has the events-against-hardware table" grep -q '^events against the hardware' "$tmp/both.txt"
pair graphs_c KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" "$E2E_BIN/app_capture" --eager 2 4 10
pair graphs_b KTIME_TIMER=both KTIME_CUPTI_LIB="$CUPTI" "$E2E_BIN/app_capture" --eager 2 4 10
pair graphs_e "$E2E_BIN/app_capture" --eager 7 4 10
pair sample KTIME_SAMPLE=4 "$A" k_small=125000:400 kmix=125000,375000:200
# Schema 2's rows and lines: launch shapes (KTIME_GROUP=shape, some folded into other shapes),
# the capture range, the conditions read through the fake NVML (another process on the GPU).
pair shapes KTIME_GROUP=shape "$E2E_BIN/app_driver" --shapes 20 kA=10000,20000:45 kB=5000:12
check "shapes: the text has shape rows and other shapes" \
    sh -c "grep -q ' grid 8x1x1 block 256x1x1 smem 0\$' '$tmp/shapes.txt' && grep -q 'other shapes' '$tmp/shapes.txt'"
pair range KTIME_CAPTURE=profiler-api KTIME_WARMUP=2 "$A" --profiler 10:20 k_a=125000:25 k_b=250000:25
check "range: the text has the range line" grep -q '^capture  KTIME_CAPTURE=profiler-api' "$tmp/range.txt"
NVML=$FAKE_DIR/nvml/libnvidia-ml.so.1
if [ -f "$NVML" ]; then
    pair conditions KTIME_NVML_LIB="$NVML" CUDA_MPS_PIPE_DIRECTORY="$tmp/nomps" FAKE_NVML_OTHER_PIDS=$$ \
        "$A" k_small=125000:30
    check "conditions: the text has the conditions and the shared warning" \
        sh -c "grep -q '^conditions: gpu 0 shared with 1 other process' '$tmp/conditions.txt' && grep -q '^warning: gpu 0 was shared' '$tmp/conditions.txt'"
else
    skip "conditions: ktime report of a report with conditions" "fake NVML not built: $NVML"
fi
check "sample: the text says the totals are estimates" grep -q '^total   ~' "$tmp/sample.txt"
pair failed "$E2E_BIN/app_fail" 10 3
pair pool KTIME_WARMUP=0 KTIME_POOL_CAP=4 FAKECUDA_COMPLETE_DELAY_US=300000 "$A" --no-sync k=125000:50
check "pool: the text has the dropped line" grep -q '^dropped  pool_exhausted' "$tmp/pool.txt"
pair gateoff KTIME_GATE=0 "$A" k_small=125000:30
pair gatemem FAKECUDA_HOSTALLOC_FAILS=1 "$A" k_small=125000:30
check "gatemem: the text says in how many contexts gates could not be set up" \
    grep -q 'could not be set up in 1 of 1 contexts' "$tmp/gatemem.txt"
pair rank RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 "$A" k_small=125000:20
check "rank: the host line names the rank" grep -q ', rank 3 of 8 (local rank 1)$' "$tmp/rank.txt"
pair hung KTIME_EXIT_WAIT_MS=100 "$A" k=125000:3 hang_k=1:1
pair refused KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" \
    FAKECUPTI_FAIL=cuptiActivityEnable:CUPTI_ERROR_INSUFFICIENT_PRIVILEGES "$A" k_small=125000:12
check "refused: the text has the timer line" grep -q '^timer    KTIME_TIMER=cupti: ' "$tmp/refused.txt"
pair handover KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" "$E2E_BIN/app_cupti_client" --via link 20 30
pair cuptidrop KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" FAKECUPTI_MAX_RECORDS=100 "$A" k_small=125000:300
check "cuptidrop: the text has the cupti line" grep -q '^cupti    200 records dropped' "$tmp/cuptidrop.txt"

# The report on stderr (no KTIME_OUTPUT), JSON beside it.
run_ktime se KTIME_ALSO_OUTPUT="$tmp/se.json" "$A" k_small=125000:20 'x"y=2000:9'
kt report "$tmp/se.json" >"$tmp/se.tool.txt"
check "report on stderr: ktime report of the JSON = the library's stderr, byte for byte" \
    same_bytes "$tmp/se.err" "$tmp/se.tool.txt"

# --- report: --top, --sort, --filter --------------------------------------------------------
R=$tmp/mixed-t.json
kt report "$R" --top 2 --sort calls >"$tmp/top.txt"
check "--top 2 --sort calls: two rows, kmix (60 calls) first, then k_small" \
    sh -c "sed -n '/^  Time%/,/^shown/p' '$tmp/top.txt' | awk 'NR == 2 && \$12 != \"kmix\" { exit 1 } NR == 3 && \$12 != \"k_small\" { exit 1 } NR == 4 && \$1 != \"shown\" { exit 1 } END { exit NR != 4 }'"
check "--top 2 --sort calls: the text says what is shown" grep -q '^shown    2 of 3 kernels (sorted by calls, --top 2); ' "$tmp/top.txt"
check "--top 2 --sort calls: each row is the full report's row" \
    sh -c "sed -n '/^  Time%/,/^shown/p' '$tmp/top.txt' | sed '1d;\$d' | while IFS= read -r l; do grep -qxF \"\$l\" '$tmp/mixed.txt' || exit 1; done"
kt report "$tmp/mixed-c.json" --filter '^k_' --format csv >"$tmp/filt.csv"
check "--filter '^k_' --format csv: the header and the two k_ rows of the library's CSV of the run" \
    sh -c "[ \$(wc -l <'$tmp/filt.csv') = 3 ] && grep -v '^kmix' '$tmp/mixed.csv' | cmp -s - '$tmp/filt.csv'"
kt report "$R" --sort mean --format json >"$tmp/sorted.json"
check "--sort mean --format json: valid JSON, the slowest mean first" \
    sh -c "'$JCHECK' '$tmp/sorted.json' 'kernels[0].mangled' == kmix && '$JCHECK' '$tmp/sorted.json' 'kernels|len' == 3"
kt report "$R" --format json >"$tmp/same.json"
check "--format json: the same numbers as the library's JSON" \
    sh -c "for q in 'kernels[].timed|sum' 'kernels[0].m2_us2' 'kernels[1].p99_us' totals.timed_total_ms; do '$JCHECK' '$tmp/same.json' \"\$q\" == \"\$('$JCHECK' '$R' \"\$q\")\" || exit 1; done"
kt report "$R" --filter 'k_(small|three)$' --top 1 >"$tmp/ere.txt"
check "--filter is a POSIX extended regular expression: 'k_(small|three)\$' --top 1 keeps k_small" \
    sh -c "grep -q '^shown    1 of 3 kernels (--filter .k_(small|three).., --top 1); ' '$tmp/ere.txt' && grep -q '  k_small ' '$tmp/ere.txt' && ! grep -q '  k_three' '$tmp/ere.txt'"
kt report - <"$R" >"$tmp/stdin.txt" 2>"$tmp/stdin.err"
kt report "$R" >"$tmp/file.txt"
check "report -: reads the report from standard input, the same text as from the file" sh -c \
    "[ -s '$tmp/stdin.txt' ] && cmp -s '$tmp/file.txt' '$tmp/stdin.txt' && [ ! -s '$tmp/stdin.err' ]"
printf 'nope' | kt report - >"$tmp/stdinbad.out" 2>"$tmp/stdinbad.err"
echo $? >"$tmp/stdinbad.rc"
check "report - of something that is not JSON: exit 2, one line naming -" sh -c \
    "[ \$(cat '$tmp/stdinbad.rc') = 2 ] && [ \$(wc -l <'$tmp/stdinbad.err') = 1 ] && grep -q '^ktime report: -: not valid JSON' '$tmp/stdinbad.err'"
# Each subcommand's --help: what each argument means, its default, the exit statuses.
for sub in report merge diff plot; do
    kt "$sub" --help >"$tmp/h_$sub.out" 2>&1
    echo $? >"$tmp/h_$sub.rc"
    check "ktime $sub --help: exit 0, a description, defaults and the exit statuses" sh -c \
        "[ \$(cat '$tmp/h_$sub.rc') = 0 ] && grep -q '^usage: ktime $sub' '$tmp/h_$sub.out' && grep -q '^exit status:' '$tmp/h_$sub.out' && grep -q '^  2  a usage or input error' '$tmp/h_$sub.out' && [ \$(grep -c 'default' '$tmp/h_$sub.out') -ge 1 ] || { cat '$tmp/h_$sub.out'; exit 1; }"
done
check "ktime diff --help: exit status 1 is a regression" grep -q '^  1  at least one kernel regressed significantly' "$tmp/h_diff.out"
check "ktime report --help: FILE - is standard input" grep -q -- '- reads it from standard input' "$tmp/h_report.out"
KTIME_RENDER=$tmp/no-render kt report "$R" >"$tmp/norender.out" 2>"$tmp/norender.err"
echo $? >"$tmp/norender.rc"
check "no ktime-render: exit 2 and one line naming KTIME_RENDER" \
    sh -c "[ \$(cat '$tmp/norender.rc') = 2 ] && [ \$(wc -l <'$tmp/norender.err') = 1 ] && grep -q '^ktime report: KTIME_RENDER=.* is not an executable file' '$tmp/norender.err' && [ ! -s '$tmp/norender.out' ]"

# --- merge ---------------------------------------------------------------------------------
# Three ranks: rank 2 is slow in k_small; k_only runs on rank 1 only.
for r in 0 1 2; do
    d=125000
    [ $r = 2 ] && d=250000
    extra=
    [ $r = 1 ] && extra=k_only=7000:15
    run_ktime "m$r" KTIME_OUTPUT="$tmp/rank$r.json" RANK=$r LOCAL_RANK=$r WORLD_SIZE=3 \
        "$A" k_small=$d:40 kmix=100000,110000:30 $extra
done
kt merge "$tmp/rank0.json" "$tmp/rank1.json" "$tmp/rank2.json" -o "$tmp/m.json" 2>"$tmp/merge.err"
M=$tmp/m.json
check "merge: exit status 0, nothing on stderr, valid JSON" sh -c "'$JCHECK' '$M' && [ ! -s '$tmp/merge.err' ]"
sums_equal() {
    for q in calls timed warmup_skipped captured dropped failed incomplete ungated; do
        for k in k_small kmix; do
            s=0
            for r in 0 1 2; do s=$((s + $(jv "$tmp/rank$r.json" "kernels[mangled=$k].$q"))); done
            [ "$(jv "$M" "kernels[mangled=$k].$q")" = "$s" ] || { echo "$k.$q: merged $(jv "$M" "kernels[mangled=$k].$q"), sum $s"; return 1; }
        done
    done
    for q in launches_seen timed warmup_skipped captured dropped failed_launches incomplete_at_exit; do
        s=0
        for r in 0 1 2; do s=$((s + $(jv "$tmp/rank$r.json" "totals.$q"))); done
        [ "$(jv "$M" "totals.$q")" = "$s" ] || { echo "totals.$q: merged $(jv "$M" "totals.$q"), sum $s"; return 1; }
    done
}
check "merge: every count is the exact sum of the ranks' counts" sums_equal
check "merge: k_small 105 samples, sum 35 x (125 + 125 + 250) us" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=k_small].timed' == 105 && '$JCHECK' '$M' 'kernels[mangled=k_small].sum_us' '~' 17500 1e-6"
# 70 samples of 125 and 35 of 250: mean 500/3, M2 = 70 (125/3)^2 + 35 (250/3)^2.
check "merge: k_small mean and M2 by the pairwise formula (mean 166.667, M2 364583.33)" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=k_small].mean_us' '~' 166.66666666666666 1e-9 && '$JCHECK' '$M' 'kernels[mangled=k_small].m2_us2' '~' 364583.3333333333 1e-6"
check "merge: kmix's M2 equals its samples' to 0.01 (the events' float ms) (3 ranks x 25 samples of 100 and 110 us, alternating from the 6th)" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=kmix].timed' == 75 && '$JCHECK' '$M' 'kernels[mangled=kmix].m2_us2' '~' $(awk 'BEGIN { n = 0; for (r = 0; r < 3; r++) for (i = 5; i < 30; i++) { x = (i % 2) ? 110 : 100; v[n++] = x; s += x } m = s / n; for (i = 0; i < n; i++) q += (v[i] - m) ^ 2; printf "%.9f", q }') 0.01"
check "merge: the histogram holds every sample (bucket counts add up to timed)" \
    sh -c "[ \"\$('$PY' -c 'import json,sys; k=[k for k in json.load(open(sys.argv[1]))[\"kernels\"] if k[\"mangled\"]==\"k_small\"][0]; print(sum(b[2] for b in k[\"histogram\"][\"buckets\"]))' '$M')\" = 105 ]"
check "merge: k_small's median within 1 % of 125 us and its p99 250 us (from the merged histogram)" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=k_small].p50_us' '~' 125 1.25 && '$JCHECK' '$M' 'kernels[mangled=k_small].p99_us' '~' 250 2.5"
check "merge: k_only, on rank 1 alone, is kept with its own numbers" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=k_only].timed' == 10 && '$JCHECK' '$M' 'kernels[mangled=k_only].ranks|len' == 1"
check "merge: merged_from lists the 3 inputs with host, rank and pid" \
    sh -c "'$JCHECK' '$M' 'merged_from|len' == 3 && '$JCHECK' '$M' 'merged_from[2].rank' == 2 && '$JCHECK' '$M' 'merged_from[0].pid|type' == number"
check "merge: k_small per rank, and the spread: slowest rank 2 (8.75 ms), fastest 4.375 ms, ratio 2" \
    sh -c "'$JCHECK' '$M' 'kernels[mangled=k_small].ranks|len' == 3 && '$JCHECK' '$M' 'kernels[mangled=k_small].rank_spread.slowest.rank' == 2 &&
           '$JCHECK' '$M' 'kernels[mangled=k_small].rank_spread.slowest.total_ms' '~' 8.75 1e-9 &&
           '$JCHECK' '$M' 'kernels[mangled=k_small].rank_spread.fastest.total_ms' '~' 4.375 1e-9 &&
           '$JCHECK' '$M' 'kernels[mangled=k_small].rank_spread.ratio' '~' 2 1e-12"
check "merge: the devices of one host and ordinal are one device" jc "$M" 'devices|len' == 1
check "merge: every launch in exactly one bucket" accounting "$M"
kt merge "$tmp/rank2.json" "$tmp/rank0.json" "$tmp/rank1.json" >"$tmp/m2.json"
check "merge: another order gives the same file, byte for byte" cmp "$M" "$tmp/m2.json"
kt report "$M" >"$tmp/m.txt" 2>&1
check "report of a merged file: the spread table names rank 2 as k_small's slowest, 50 % over the mean of the ranks" \
    sh -c "grep -q '^load balance' '$tmp/m.txt' && grep -Eq '^ +3 +8\\.750 +2 +4\\.375 +[01] +2\\.000 +\\+50\\.0%  k_small\$' '$tmp/m.txt'"
check "report of a merged file: the header says 3 reports merged" grep -q '^merged   3 reports (ranks 0, 1, 2)' "$tmp/m.txt"
kt report --format csv "$M" >"$tmp/m.csv"
check "report --format csv of a merged file: a row per kernel" sh -c "[ \$(grep -c ',all,' '$tmp/m.csv') = 3 ]"

# merge_refused LABEL WANT-WORDS FILES...: exit status 2, one line "ktime merge: ..." naming it.
merge_refused() {
    _w=$1
    shift
    kt merge "$@" >"$tmp/mr.out" 2>"$tmp/mr.err"
    _rc=$?
    [ $_rc = 2 ] || { echo "exit status $_rc, want 2"; cat "$tmp/mr.err"; return 1; }
    [ "$(wc -l <"$tmp/mr.err")" = 1 ] || { echo "stderr is not one line:"; cat "$tmp/mr.err"; return 1; }
    grep -q "^ktime merge: .*$_w" "$tmp/mr.err" || { echo "no 'ktime merge: ...$_w':"; cat "$tmp/mr.err"; return 1; }
    [ ! -s "$tmp/mr.out" ] || { echo "stdout not empty"; return 1; }
}
run_ktime w2 KTIME_OUTPUT="$tmp/w2.json" KTIME_WARMUP=2 "$A" k_small=125000:20
check "merge refuses another warmup: exit 2, one line" merge_refused 'different warmup settings' "$tmp/rank0.json" "$tmp/w2.json"
check "merge refuses another timer: exit 2, one line" merge_refused 'different timers' "$tmp/rank0.json" "$tmp/cupti-t.json"
sed 's/^  "schema_version": 2,/  "schema_version": 1,/' "$tmp/rank1.json" >"$tmp/v1.json"
cp "$tmp/rank1.json" "$tmp/v2.json"
check "merge refuses another schema version: exit 2, one line" merge_refused 'different schema versions' "$tmp/rank0.json" "$tmp/v1.json"
check "merge refuses a merged report as input: exit 2, one line" merge_refused 'merged report' "$M" "$tmp/rank0.json"
# Empty reports (a job's launcher and helpers, which launched nothing) are skipped with a
# note: they decide neither the timer nor the count of ranks. Two ranks under the CUPTI
# timer and an empty report, which says cuda-events and has another warmup.
run_ktime me KTIME_OUTPUT="$tmp/empty.json" KTIME_WARMUP=3 "$A" k_idle=1000:0
run_ktime me2 KTIME_OUTPUT="$tmp/empty2.json" KTIME_WARMUP=3 "$E2E_BIN/app_nocuda"
for r in 0 1; do
    run_ktime "mc$r" KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/crank$r.json" \
        RANK=$r WORLD_SIZE=2 "$A" k_small=125000:$((40 + 10 * r))
done
kt merge "$tmp/empty.json" "$tmp/crank0.json" "$tmp/crank1.json" "$tmp/empty2.json" -o "$tmp/mc.json" 2>"$tmp/mc.err"
echo $? >"$tmp/mc.rc"
check "merge with empty reports: exit 0, 2 ranks merged, timer cupti-activity" \
    sh -c "[ \$(cat '$tmp/mc.rc') = 0 ] && '$JCHECK' '$tmp/mc.json' 'merged_from|len' == 2 && '$JCHECK' '$tmp/mc.json' 'merged_from[0].rank' == 0 && '$JCHECK' '$tmp/mc.json' 'merged_from[1].rank' == 1 && '$JCHECK' '$tmp/mc.json' timing_method == cupti-activity"
check "merge with empty reports: the ranks' launches only (40 + 50)" jc "$tmp/mc.json" 'kernels[mangled=k_small].calls' == 90
check "merge with empty reports: one note per empty report on stderr, naming it" \
    sh -c "[ \$(wc -l <'$tmp/mc.err') = 2 ] && grep -qx 'ktime merge: $tmp/empty.json: skipped, an empty report (no CUDA launches in pid [0-9]*)' '$tmp/mc.err' && grep -q '^ktime merge: $tmp/empty2.json: skipped' '$tmp/mc.err'"
kt report "$tmp/mc.json" >"$tmp/mc.txt"
check "merge with empty reports: the text says 2 reports (ranks 0, 1)" grep -q '^merged   2 reports (ranks 0, 1) ' "$tmp/mc.txt"
kt merge "$tmp/rank2.json" "$tmp/empty.json" "$tmp/rank0.json" "$tmp/rank1.json" >"$tmp/m3e.json" 2>/dev/null
check "merge: an empty report among the ranks changes nothing, byte for byte" cmp "$M" "$tmp/m3e.json"
check "merge of empty reports only: exit 2, one line" merge_refused 'every input is an empty report' "$tmp/empty.json" "$tmp/empty2.json"
# The same report twice would count its launches twice: refused (the same file, or a copy: the
# same host, pid and start time).
check "merge refuses the same file twice: exit 2, one line" merge_refused \
    "$tmp/rank1.json and $tmp/rank1.json are the same report (pid [0-9]* on [^ ]*, started [^)]*): give each report once, or its launches count twice" \
    "$tmp/rank0.json" "$tmp/rank1.json" "$tmp/rank1.json"
check "merge refuses a copy of a report beside it: exit 2, one line" merge_refused \
    "$tmp/rank1.json and $tmp/v2.json are the same report" "$tmp/rank1.json" "$tmp/v2.json"
kt merge - "$tmp/rank0.json" <"$tmp/rank1.json" >"$tmp/mstdin.json" 2>"$tmp/mstdin.err"
check "merge: - reads a report from standard input" sh -c \
    "'$JCHECK' '$tmp/mstdin.json' 'merged_from|len' == 2 && [ ! -s '$tmp/mstdin.err' ]"
sed 's/^  "pid": \([0-9]*\),/  "pid": 1\1,/' "$tmp/v2.json" >"$tmp/v2b.json"
check "merge of schema 2 reports (unknown fields carried): exit 0" sh -c "kt() { '$PY' '$TOOL' \"\$@\"; }; kt merge '$tmp/v2.json' '$tmp/v2b.json' >'$tmp/v22.json' && '$JCHECK' '$tmp/v22.json' schema_version == 2"
# Schema 2's per-kernel shapes (a list of blocks of statistics) merge block by block.
"$PY" - "$tmp/rank0.json" "$tmp/s2.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["schema_version"] = 2
for k in r["kernels"]:
    k["shapes"] = [{"grid": [4, 1, 1], "block": [128, 1, 1], "shared_bytes": 0, "calls": k["calls"],
                    "timed": k["timed"], "sum_us": k["sum_us"], "m2_us2": k["m2_us2"],
                    "mean_us": k["mean_us"], "min_us": k["min_us"], "max_us": k["max_us"]}]
json.dump(r, open(sys.argv[2], "w"))
r["pid"] += 1
json.dump(r, open(sys.argv[2] + ".b", "w"))
EOF
kt merge "$tmp/s2.json" "$tmp/s2.json.b" >"$tmp/s22.json" 2>&1
check "merge, schema 2 shapes: one shape per launch shape, its counts and sums added, its key kept" \
    sh -c "'$JCHECK' '$tmp/s22.json' 'kernels[mangled=k_small].shapes|len' == 1 &&
           '$JCHECK' '$tmp/s22.json' 'kernels[mangled=k_small].shapes[0].timed' == 70 &&
           '$JCHECK' '$tmp/s22.json' 'kernels[mangled=k_small].shapes[0].sum_us' '~' 8750 1e-6 &&
           '$JCHECK' '$tmp/s22.json' 'kernels[mangled=k_small].shapes[0].shared_bytes' == 0 &&
           '$JCHECK' '$tmp/s22.json' 'kernels[mangled=k_small].shapes[0].grid[0]' == 4"

# --- diff ----------------------------------------------------------------------------------
run_ktime db KTIME_OUTPUT="$tmp/base.json" "$A" k_small=125000:40 k_big=1000000:20 gone=5000:20 \
    kvar=100000,110000:40 k_few=125000:10
run_ktime dn KTIME_OUTPUT="$tmp/new.json" "$A" k_small=137500:40 k_big=1000000:20 newk=9000:20 \
    kvar=101000,111000:40 k_few=250000:10
kt diff "$tmp/base.json" "$tmp/new.json" >"$tmp/diff.txt" 2>"$tmp/diff.err"
echo $? >"$tmp/diff.rc"
check "diff: k_small 10 % slower is a regression: exit status 1" sh -c "[ \$(cat '$tmp/diff.rc') = 1 ] && [ ! -s '$tmp/diff.err' ]"
check "diff: the table marks k_small REGRESSION, +10.00 % in mean and median" \
    grep -Eq '^ +125\.000 +137\.500 +\+10\.00% +125\.000 +137\.500 +\+10\.00% +0  REGRESSION +k_small$' "$tmp/diff.txt"
check "diff: k_big unchanged (p 1)" grep -Eq ' +\+0\.00% +1  same +k_big$' "$tmp/diff.txt"
check "diff: k_few (5 samples) doubled but is not a regression: too few samples" grep -Eq 'few samples +k_few$' "$tmp/diff.txt"
check "diff: kvar +1 % is not significant" grep -Eq '  same +kvar$' "$tmp/diff.txt"
check "diff: new and vanished kernels listed" \
    sh -c "grep -A1 '^new kernels' '$tmp/diff.txt' | grep -q 'newk\$' && grep -A1 '^vanished kernels' '$tmp/diff.txt' | grep -q 'gone\$'"
check "diff: the total line and the verdict" \
    sh -c "grep -q '^total    ' '$tmp/diff.txt' && grep -q '^verdict  1 kernel regressed significantly beyond 5%' '$tmp/diff.txt'"
kt diff "$tmp/base.json" "$tmp/new.json" --format json >"$tmp/diff.json"
check "diff --format json: regressions 1, k_small's p 0 and Welch's test named" \
    sh -c "'$JCHECK' '$tmp/diff.json' regressions == 1 && '$JCHECK' '$tmp/diff.json' 'kernels[mangled=k_small].p' == 0 &&
           '$JCHECK' '$tmp/diff.json' test has Welch && '$JCHECK' '$tmp/diff.json' 'kernels[mangled=k_few].enough_samples' == false &&
           '$JCHECK' '$tmp/diff.json' 'vanished_kernels[0].mangled' == gone && '$JCHECK' '$tmp/diff.json' 'new_kernels[0].mangled' == newk"
check "diff --format json: kvar's p from Welch's test between 0.01 and 1" \
    sh -c "'$JCHECK' '$tmp/diff.json' 'kernels[mangled=kvar].p' '>' 0.01 && '$JCHECK' '$tmp/diff.json' 'kernels[mangled=kvar].p' '<' 1"
check "diff --threshold 15%: a 10 % change passes, exit 0" sh -c "'$PY' '$TOOL' diff '$tmp/base.json' '$tmp/new.json' --threshold 15% >/dev/null"
check "diff NEW BASE: k_small faster, exit 0" sh -c "'$PY' '$TOOL' diff '$tmp/new.json' '$tmp/base.json' >'$tmp/rdiff.txt' && grep -Eq '  faster +k_small\$' '$tmp/rdiff.txt'"
kt diff "$tmp/base.json" "$tmp/w2.json" >/dev/null 2>"$tmp/dw.err"
echo $? >"$tmp/dw.rc"
check "diff refuses another warmup: exit 2, one line 'ktime diff: ...'" \
    sh -c "[ \$(cat '$tmp/dw.rc') = 2 ] && [ \$(wc -l <'$tmp/dw.err') = 1 ] && grep -q '^ktime diff: .*different warmup settings' '$tmp/dw.err'"
check "diff --alpha 2: a usage error, exit 2" sh -c "'$PY' '$TOOL' diff '$tmp/base.json' '$tmp/new.json' --alpha 2 2>/dev/null; [ \$? = 2 ]"

# --- malformed input -----------------------------------------------------------------------
# bad_input LABEL FILE: report, merge and diff each exit 2 with one line on stderr, no traceback.
bad_input() {
    for _c in report merge diff; do
        if [ $_c = diff ]; then set -- "$1" "$2" "$tmp/base.json"; fi
        if [ $_c = diff ]; then kt diff "$2" "$3" >"$tmp/bad.out" 2>"$tmp/bad.err"; else kt $_c "$2" >"$tmp/bad.out" 2>"$tmp/bad.err"; fi
        _rc=$?
        [ $_rc = 2 ] || { echo "$_c: exit status $_rc, want 2"; cat "$tmp/bad.err"; return 1; }
        [ "$(wc -l <"$tmp/bad.err")" = 1 ] || { echo "$_c: stderr is not one line:"; head -n 20 "$tmp/bad.err"; return 1; }
        grep -q "^ktime $_c: " "$tmp/bad.err" || { echo "$_c: no 'ktime $_c:' prefix:"; cat "$tmp/bad.err"; return 1; }
        ! grep -q Traceback "$tmp/bad.err" || return 1
        [ ! -s "$tmp/bad.out" ] || { echo "$_c: stdout not empty"; return 1; }
    done
    echo "ok: $(cat "$tmp/bad.err")"
}
R=$tmp/names-t.json
head -c $(($(wc -c <"$R") / 2)) "$R" >"$tmp/trunc.json"
check "truncated JSON: one line, exit 2" bad_input trunc "$tmp/trunc.json"
# Wherever the cut falls (inside a string, a number, a word, after a comma), it says truncated;
# the report's contents vary from run to run, so a single cut point would test a different case
# each time.
says_truncated() {
    _n=$(wc -c <"$R")
    for _tn in 1 2 3 4 5 6 7 8 9; do
        for _off in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do
            head -c $((_n * _tn / 10 + _off)) "$R" >"$tmp/cut.json"
            "$PY" "$TOOL" report "$tmp/cut.json" 2>&1 | grep -q 'truncated' ||
                { echo "cut at $((_n * _tn / 10 + _off)) of $_n bytes:"; "$PY" "$TOOL" report "$tmp/cut.json"; return 1; }
        done
    done
}
check "... and it says truncated, at 180 cut points" says_truncated
check "a corrupt JSON (a stray word after a comma) says not valid JSON, not truncated" \
    sh -c "printf '{\"schema_version\": 2, x \"a\": 1}\\n' >'$tmp/corrupt.json'; '$PY' '$TOOL' report '$tmp/corrupt.json' 2>&1 | grep -q 'not valid JSON'"
check "a text report: one line, exit 2" bad_input text "$tmp/names.txt"
: >"$tmp/empty.json"
check "an empty file: one line, exit 2" bad_input empty "$tmp/empty.json"
check "a missing file: one line, exit 2" bad_input missing "$tmp/no-such.json"
sed 's/^  "schema_version": 2,/  "schema_version": 99,/' "$R" >"$tmp/v99.json"
check "schema_version 99: one line, exit 2" bad_input v99 "$tmp/v99.json"
check "... and it names the schema version" sh -c "'$PY' '$TOOL' report '$tmp/v99.json' 2>&1 | grep -q 'schema_version 99 is not one this tool reads'"
echo '{"hello": 1}' >"$tmp/other.json"
check "JSON that is not a ktime report: one line, exit 2" bad_input other "$tmp/other.json"
echo '[1, 2, 3]' >"$tmp/list.json"
check "a JSON list: one line, exit 2" bad_input list "$tmp/list.json"
sed 's/^      "timed": [0-9]*,/      "timed": "many",/' "$R" >"$tmp/type.json"
check "a count that is a string: one line naming it, exit 2" \
    sh -c "kt() { '$PY' '$TOOL' \"\$@\"; }; kt report '$tmp/type.json' 2>&1 >/dev/null | grep -q 'kernels\\[0\\]\\.timed is .many., not a count'"
check "... and for merge and diff too" bad_input type "$tmp/type.json"
printf '{"schema_version": 1, "name": "\377"}' >"$tmp/latin.json"
check "bytes that are not UTF-8: one line, exit 2" bad_input latin "$tmp/latin.json"
"$PY" -c 'print("[" * 100000 + "]" * 100000)' >"$tmp/deep.json"
check "JSON nested 100000 deep: one line, exit 2" bad_input deep "$tmp/deep.json"
# NaN and Infinity are not JSON (RFC 8259): refused on reading, never written.
sed 's/^      "sum_us": [0-9.e+-]*,/      "sum_us": NaN,/' "$R" >"$tmp/nan.json"
check "NaN in a report: one line, exit 2" bad_input nan "$tmp/nan.json"
check "... and it says NaN is not a JSON number" \
    sh -c "'$PY' '$TOOL' report '$tmp/nan.json' 2>&1 | grep -q 'not valid JSON (NaN is not a JSON number'"
# A nested field missing: named, not a KeyError.
"$PY" - "$tmp/shapes-t.json" "$tmp/noshape.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
del r["kernels"][0]["shapes"][0]["timed"]
json.dump(r, open(sys.argv[2], "w"))
EOF
check "a launch shape without 'timed': one line, exit 2" bad_input noshape "$tmp/noshape.json"
check "... naming it" sh -c "'$PY' '$TOOL' report '$tmp/noshape.json' 2>&1 | grep -q 'noshape.json: not a ktime report: kernels.0..shapes.0. has no .timed.'"
# Every field of a report with ranges, launch shapes and both timers, of its merge with a second
# rank, and of one with memory operations, broken in turn (tests/e2e/ktool_malformed.py).
for r in 0 1; do
    run_ktime "rich$r" KTIME_OUTPUT="$tmp/rich$r.json" RANK=$r WORLD_SIZE=2 KTIME_NVTX=1 \
        KTIME_GROUP=shape KTIME_TIMER=both KTIME_CUPTI_LIB="$CUPTI" \
        LD_LIBRARY_PATH="$(dirname "$KTIME_LIB"):$LDP" "$E2E_BIN/app_ranges" --nvtx --extra-pop $((12 + r))
done
kt merge "$tmp/rich0.json" "$tmp/rich1.json" -o "$tmp/richm.json" 2>"$tmp/richm.err"
"$PY" "$SRC/tests/e2e/ktool_malformed.py" "$TOOL" "$tmp/rich0.json" "$tmp/richm.json" \
    "$tmp/memops-t.json" >"$tmp/malformed.out" 2>&1
selftest_lines "$tmp/malformed.out" "broken reports: "
check "broken reports: the checker ran on all three, no traceback" \
    sh -c "[ \$(grep -c -e '^ok - ' -e '^not ok - ' '$tmp/malformed.out') = 3 ] && ! grep -q Traceback '$tmp/malformed.out'"
# An empty kernel list (a real report with its kernels taken out).
"$PY" - "$tmp/rank0.json" "$tmp/nok.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["kernels"] = []
r["pid"] += 1  # another process's, so that merge takes it beside rank0.json
for k in r["totals"]:
    if isinstance(r["totals"][k], int):
        r["totals"][k] = 0
r["totals"]["timed_total_ms"] = 0
json.dump(r, open(sys.argv[2], "w"))
EOF
kt report "$tmp/nok.json" >"$tmp/nok.txt" 2>&1
check "an empty kernel list: report says (no kernel launches)" sh -c "grep -qx '(no kernel launches)' '$tmp/nok.txt'"
check "an empty kernel list: merge and diff work (exit 0)" \
    sh -c "'$PY' '$TOOL' merge '$tmp/nok.json' '$tmp/rank0.json' >'$tmp/nokm.json' && '$PY' '$TOOL' diff '$tmp/nok.json' '$tmp/nok.json' >/dev/null && '$JCHECK' '$tmp/nokm.json' 'kernels|len' == 2"
check "no arguments: usage, exit 2" sh -c "'$PY' '$TOOL' report 2>/dev/null; [ \$? = 2 ]"

# --- every report of this script and every fixture -------------------------------------------
# adds_up REPORT: every launch in exactly one bucket, whatever the timer (timer.sh's rows):
#   calls (+ in_graph under KTIME_TIMER=cupti) = warmup_skipped + captured + dropped + failed
#     + timed + incomplete + unsampled + timed_by_nodes
# and the totals are the sums over the rows (launches_seen and dropped also count table_full,
# whose launches belong to no row; incomplete_at_exit at most the rows' incomplete).
adds_up() {
    "$PY" - "$1" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
g = 1 if (r.get("timer") or {}).get("used") == "cupti" else 0
for k in r["kernels"]:
    b = sum(k.get(q, 0) for q in ("warmup_skipped", "captured", "dropped", "failed", "timed",
                                  "incomplete", "unsampled", "timed_by_nodes"))
    if k["calls"] + g * k.get("in_graph", 0) != b:
        bad.append("%s: calls %d (+ in_graph) != buckets %d" % (k["mangled"], k["calls"], b))
t = r["totals"]
full = (t.get("dropped_reasons") or {}).get("table_full", 0)
for kq, tq, extra in (("calls", "launches_seen", full), ("timed", "timed", 0),
                      ("warmup_skipped", "warmup_skipped", 0), ("captured", "captured", 0),
                      ("dropped", "dropped", full), ("failed", "failed_launches", 0),
                      ("unsampled", "unsampled", 0), ("in_graph", "in_graph", 0)):
    s = sum(k.get(kq, 0) for k in r["kernels"]) + extra
    if tq in t and t[tq] != s:
        bad.append("totals.%s %d != sum of kernels' %s %d" % (tq, t[tq], kq, s))
if t.get("incomplete_at_exit", 0) > sum(k.get("incomplete", 0) for k in r["kernels"]):
    bad.append("totals.incomplete_at_exit > the rows' incomplete")
if sum((t.get("dropped_reasons") or {}).values()) != t.get("dropped", 0):
    bad.append("totals.dropped != the sum of dropped_reasons")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
}

# structural LABEL FILE: loads, renders as text and CSV, merges with itself (counts doubled),
# diffs against itself with no regression, and adds up (accounting).
structural() {
    kt report "$2" >"$tmp/st.txt" || return 1
    kt report --format csv "$2" >"$tmp/st.csv" || return 1
    # Merged with its twin from another process (the same report, another pid).
    "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); r["pid"] = (r.get("pid") or 0) + 1; json.dump(r, open(sys.argv[2], "w"))' "$2" "$tmp/st2.json" || return 1
    kt merge "$2" "$tmp/st2.json" -o "$tmp/st.json" || return 1
    _c=$(jv "$2" totals.launches_seen)
    [ "$(jv "$tmp/st.json" totals.launches_seen)" = $((2 * _c)) ] || { echo "merged with its twin: launches_seen not doubled"; return 1; }
    kt diff "$2" "$2" >"$tmp/st.diff" || { echo "diff against itself: exit $?"; return 1; }
    adds_up "$2" && adds_up "$tmp/st.json"
}
for f in "$tmp"/names-t.json "$tmp"/twodev-c.json "$tmp"/both-t.json "$tmp"/graphs_c-t.json "$tmp"/sample-t.json \
    "$tmp"/memops-t.json "$tmp"/ranges-t.json; do
    check "structural: $(basename "$f")" structural x "$f"
done
nfix=0
for f in "$SRC"/tests/fixtures/*.json; do
    [ -e "$f" ] || continue
    nfix=$((nfix + 1))
    check "fixture $(basename "$f"): loads, renders, merges with its twin, diffs against itself, adds up" structural x "$f"
done
[ $nfix -gt 0 ] || skip "fixtures" "no tests/fixtures/*.json"

# --- plot ----------------------------------------------------------------------------------
# The message without matplotlib: a matplotlib that cannot be imported, ahead on the path.
mkdir -p "$tmp/nompl/matplotlib"
echo 'raise ImportError("no matplotlib here")' >"$tmp/nompl/matplotlib/__init__.py"
PYTHONPATH="$tmp/nompl" "$PY" "$TOOL" plot "$tmp/names-t.json" -o "$tmp/x.png" >/dev/null 2>"$tmp/nompl.err"
echo $? >"$tmp/nompl.rc"
PYEXE=$("$PY" -c 'import sys; print(sys.executable)')
PYVER=$("$PY" -c 'import sys; print(sys.version.split()[0])')
check "plot without matplotlib: exit 2, one line naming the Python tried and what to install" \
    sh -c "[ \$(cat '$tmp/nompl.rc') = 2 ] && [ \$(wc -l <'$tmp/nompl.err') = 1 ] && grep -qxF \"ktime plot: needs matplotlib, which $PYEXE (Python $PYVER) cannot import (no matplotlib here): pip install matplotlib for it, apt-get install python3-matplotlib, or set KTIME_PYTHON to a Python that has it\" '$tmp/nompl.err' || { cat '$tmp/nompl.err'; exit 1; }"
# The first python that has matplotlib: python3 on the PATH, or Debian's.
PLOTPY=
for p in "$PY" /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' 2>/dev/null; then PLOTPY=$p; break; fi
done
if [ -z "$PLOTPY" ]; then
    for x in "report as a bar chart" "merged report as a heatmap" "diff as bars" "fixtures"; do
        skip "plot: $x" "matplotlib not installed (apt-get install python3-matplotlib)"
    done
else
    echo "# plot with $PLOTPY"
    pl() { "$PLOTPY" "$TOOL" plot "$@"; }
    pl "$tmp/mixed-t.json" -o "$tmp/p.svg" 2>"$tmp/p.err"
    check "plot: a report as a bar chart, an SVG that names its top kernel" \
        sh -c "grep -q '<svg' '$tmp/p.svg' && grep -q kmix '$tmp/p.svg' && grep -q 'share of GPU time' '$tmp/p.svg'"
    pl "$tmp/mixed-t.json" -o "$tmp/p.png" 2>>"$tmp/p.err"
    check "plot: a PNG, non-trivial" sh -c "head -c 8 '$tmp/p.png' | od -c | grep -q 'P   N   G' && [ \$(wc -c <'$tmp/p.png') -gt 5000 ]"
    pl "$M" -o "$tmp/m.svg" 2>>"$tmp/p.err"
    check "plot: a merged report as a rank x kernel heatmap" sh -c "grep -q 'total / mean across ranks' '$tmp/m.svg' && grep -q k_small '$tmp/m.svg'"
    pl "$tmp/base.json" "$tmp/new.json" -o "$tmp/d.svg" 2>>"$tmp/p.err"
    pl "$tmp/diff.json" -o "$tmp/d2.svg" 2>>"$tmp/p.err"
    check "plot: BASE NEW, and a saved diff, as the per-kernel change" \
        sh -c "grep -q 'change in mean' '$tmp/d.svg' && grep -q k_small '$tmp/d.svg' && grep -q 'change in mean' '$tmp/d2.svg'"
    check "plot: one line on stderr per picture, saying where it was written" sh -c \
        "[ \$(wc -l <'$tmp/p.err') = 5 ] && grep -qx 'ktime plot: report plot written to $tmp/p.svg' '$tmp/p.err' && grep -qx 'ktime plot: merged plot written to $tmp/m.svg' '$tmp/p.err' && grep -qx 'ktime plot: diff plot written to $tmp/d2.svg' '$tmp/p.err' || { cat '$tmp/p.err'; exit 1; }"
    pl "$tmp/mixed-t.json" -o - >"$tmp/pstd.png" 2>"$tmp/pstd.err"
    check "plot -o -: a PNG on standard output, no file named -, nothing on stderr" sh -c \
        "head -c 8 '$tmp/pstd.png' | od -c | grep -q 'P   N   G' && [ ! -e ./- ] && [ ! -s '$tmp/pstd.err' ]"
    ok_fix=0
    for f in "$SRC"/tests/fixtures/*.json; do
        [ -e "$f" ] || continue
        pl "$f" -o "$tmp/fx.png" 2>"$tmp/fx.err" && [ -s "$tmp/fx.png" ] || { cat "$tmp/fx.err"; ok_fix=1; }
    done
    if [ $nfix -gt 0 ]; then
        check "plot: every fixture ($nfix)" [ $ok_fix = 0 ]
    else
        skip "plot: every fixture" "no tests/fixtures/*.json"
    fi
fi

finish
