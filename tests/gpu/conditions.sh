#!/usr/bin/env bash
# conditions.sh - the run's conditions through the real NVML (issue 13), on a GPU machine.
#
#   bash tests/gpu/conditions.sh BUILD [OUT]     e.g.  bash tests/gpu/conditions.sh build
#
# BUILD holds libktime (BUILD/src/.libs/libktime.so or BUILD/.libs/libktime.so) and the GPU
# programs of tests/gpu/build.sh (BUILD/gpu/app_static). OUT (default ./gpu-out/conditions)
# gets every report and log. Three runs of app_static on GPU 0:
#   1. quiet: nothing else on the GPU -> conditions checked, no other process, no "shared"
#      warning (skipped when another process already uses the GPU before we start);
#   2. busy: a second app_static keeps the same GPU busy (about 20 s of 1 ms kernels) ->
#      the JSON counts at least one other process, names it (app_static, its pid) unless NVML's
#      pids are of another pid namespace, and the text report's warning says it was shared;
#   3. KTIME_NVML=0 -> "conditions: not checked (KTIME_NVML=0)".
# Prints one "ok"/"not ok" line per check and the conditions lines of each report. Exit 0 when
# every check passed, 1 when one failed (or the programs are missing), 77 without a GPU.
set -u

BUILD=${1:-}
OUT=${2:-gpu-out/conditions}
if [ -z "$BUILD" ]; then
    echo "usage: $0 BUILD [OUT]" >&2
    exit 1
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no GPU (nvidia-smi missing or failing): skipped"
    exit 77
fi
LIB=
for l in "$BUILD/src/.libs/libktime.so" "$BUILD/.libs/libktime.so"; do
    [ -f "$l" ] && LIB=$(cd "$(dirname "$l")" && pwd)/libktime.so && break
done
APP=$BUILD/gpu/app_static
if [ -z "$LIB" ] || [ ! -x "$APP" ]; then
    echo "libktime.so or $APP missing (build it: tests/gpu/build.sh $BUILD/gpu)" >&2
    exit 1
fi
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() {
    local d=$1
    shift
    if "$@" >"$OUT/.check" 2>&1; then ok "$d"; else bad "$d"; sed 's/^/# /' "$OUT/.check" | head -n 20; fi
}
# jq_py FILE EXPR: a Python expression over the report j (JSON); prints its value.
jq_py() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
run() { # NAME ENV... : app_static under ktime, a short plan, report in OUT/NAME.{json,txt}
    local name=$1
    shift
    env "$@" LD_PRELOAD="$LIB" KTIME_OUTPUT="$OUT/$name.json" "$APP" -n 400,200,80,30 -l 0 \
        >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
    env "$@" LD_PRELOAD="$LIB" KTIME_OUTPUT="$OUT/$name.txt" "$APP" -n 400,200,80,30 -l 0 \
        >/dev/null 2>>"$OUT/$name.err"
    echo "--- $name"
    grep -E '^(conditions|warning):' "$OUT/$name.txt"
}

nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,clocks.sm,clocks.max.sm \
    --format=csv >"$OUT/gpu.csv" 2>&1
cat "$OUT/gpu.csv"
before=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c '[0-9]')

# 1. quiet
run quiet
check "quiet: the program exits 0" test "$(cat "$OUT/quiet.rc")" = 0
check "quiet: conditions checked through NVML" test "$(jq_py "$OUT/quiet.json" 'j["conditions"]["checked"]')" = True
if [ "$before" -gt 0 ]; then
    echo "ok $((n += 1)) - quiet: no other process # SKIP $before process(es) already on the GPU"
else
    check "quiet: no other process on gpu 0" \
        test "$(jq_py "$OUT/quiet.json" 'j["conditions"]["devices"][0]["other_process_count"]')" = 0
    check "quiet, text: no 'shared' warning" sh -c "! grep -q '^warning: gpu 0 was shared' '$OUT/quiet.txt'"
    check "quiet, text: idle apart from this process" grep -q '^conditions: gpu 0 idle apart from this process' "$OUT/quiet.txt"
fi
check "quiet: SM clock range read" test "$(jq_py "$OUT/quiet.json" 'j["conditions"]["devices"][0]["clocks"]["sm_max_mhz"] or 0')" -gt 0

# 2. busy: a second process on the same GPU for the whole run
"$APP" -n 1,1,1,20000 -l 0 >"$OUT/busy-bg.out" 2>&1 &
BG=$!
trap 'kill $BG 2>/dev/null' EXIT
for _ in $(seq 1 100); do # until NVML lists it (its context is up), at most 10 s
    nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$BG" && break
    sleep 0.1
done
run busy
kill "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
R=$OUT/busy.json
check "busy: the program exits 0" test "$(cat "$OUT/busy.rc")" = 0
check "busy: at least one other process counted on gpu 0" \
    test "$(jq_py "$R" 'j["conditions"]["devices"][0]["other_process_count"]')" -ge 1
if [ "$(jq_py "$R" 'j["conditions"]["devices"][0]["pids_of_another_namespace"]')" = True ]; then
    echo "ok $((n += 1)) - busy: the other process named # SKIP NVML's pids are of another pid namespace"
else
    check "busy: the other process named by pid and name" \
        test "$(jq_py "$R" "[p['name'] for p in j['conditions']['devices'][0]['other_processes'] if p['pid'] == $BG]")" = "['app_static']"
    check "busy, text: the conditions line names it" grep -q "^conditions: gpu 0 shared with .*app_static pid $BG" "$OUT/busy.txt"
fi
check "busy, text: the 'shared' warning" grep -q '^warning: gpu 0 was shared with ' "$OUT/busy.txt"
check "busy: this process is not among the others" \
    test "$(jq_py "$R" '[p for p in (j["conditions"]["devices"][0]["other_processes"] or []) if p["pid"] == j["pid"]]')" = "[]"

# 3. off
run off KTIME_NVML=0
check "KTIME_NVML=0: not checked, says why" grep -q '^conditions: not checked (KTIME_NVML=0)$' "$OUT/off.txt"

echo "1..$n"
[ "$fails" = 0 ] && exit 0
exit 1
