#!/usr/bin/env bash
# The report features on one GPU, in one call (a machine start costs minutes):
#
#   bash tests/gpu/features.sh BUILD       carry: ["build"]; results in $OUT
#
# 1. tests/gpu/run.sh BUILD: the core suite against CUPTI (summary.md), after the launch
#    path's changes;
# 2. tests/gpu/reports.py: quantiles against the same run's raw samples, launch shapes, the
#    trace (reports.md, fixture-torch_mlp.json);
# 3. tests/gpu/capture_range.py: KTIME_CAPTURE=profiler-api with torch.cuda.profiler (range.txt);
# 4. tests/gpu/conditions.sh: NVML's conditions, quiet and with a second process (conditions.txt);
# 5. BUILD/gpu/api_timer: the timer API against CUPTI (api_timer.txt).
# Prints a table last. Exit 77 without a GPU.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 1
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
export OUT
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU"; exit 77; }
LIB=$BUILD/src/.libs/libktime.so
T0=$(date +%s)
stamp() { echo "[features.sh $(($(date +%s) - T0))s] $*"; }
declare -A RC

stamp "1/5 run.sh"
GPU_TEST_BUDGET_S=${GPU_TEST_BUDGET_S:-200} bash "$HERE/run.sh" "$BUILD" >"$OUT/run.txt" 2>&1
RC[run]=$?
stamp "2/5 reports.py"
timeout 300 python3 "$HERE/reports.py" --lib "$LIB" --gpu "$BUILD/gpu" --out "$OUT" >"$OUT/reports.txt" 2>&1
RC[reports]=$?
stamp "3/5 capture_range.py"
timeout 120 python3 "$HERE/capture_range.py" --lib "$LIB" --out "$OUT/range" >"$OUT/range.txt" 2>&1
RC[range]=$?
stamp "4/5 conditions.sh"
timeout 150 bash "$HERE/conditions.sh" "$BUILD" "$OUT/conditions" >"$OUT/conditions.txt" 2>&1
RC[conditions]=$?
stamp "5/5 api_timer"
LD_LIBRARY_PATH=$BUILD/src/.libs timeout 120 "$BUILD/gpu/api_timer" >"$OUT/api_timer.txt" 2>&1
RC[api_timer]=$?
stamp "done"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
sed -n '/^| workload/,/^$/p' "$OUT/summary.md" 2>/dev/null | head -n 20
sed -n "/^## Problems/,/^## Details/p" "$OUT/summary.md" 2>/dev/null | head -n 20
sed -n '/^| workload | timer/,/^largest/p' "$OUT/reports.md" 2>/dev/null
sed -n '/^## Problems/,$p' "$OUT/reports.md" 2>/dev/null | head -n 20
tail -n 3 "$OUT/range.txt"
grep -E '^(ok|not ok)|conditions:|warning:' "$OUT/conditions.txt" | head -n 30
tail -n 8 "$OUT/api_timer.txt"
echo
echo "| part | exit |"
echo "| --- | --- |"
for p in run reports range conditions api_timer; do echo "| $p | ${RC[$p]} |"; done
