#!/usr/bin/env bash
# The method's checks on one GPU, in one call (issue 13: memory operations, the L2 flush,
# ranges), and a short run of the core suite after the launch path's changes:
#
#   bash tests/gpu/method.sh BUILD       carry: ["build"]; results in $OUT
#
# 1. tests/gpu/memops.sh: memcpy/memset calls and bytes per kind against CUPTI (memops.txt);
# 2. tests/gpu/ranges.py: NVTX ranges from PyTorch, each range's kernels (ranges.txt);
# 3. tests/gpu/flush_l2.sh: KTIME_FLUSH_L2 slows an L2-resident kernel, every launch flushed
#    (flush_l2.txt);
# 4. tests/gpu/run.sh BUILD with a budget of CORE_BUDGET_S (90) seconds: the core suite's first
#    workloads against CUPTI (summary.md).
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
stamp() { echo "[method.sh $(($(date +%s) - T0))s] $*"; }
declare -A RC

stamp "1/4 memops.sh"
timeout 120 bash "$HERE/memops.sh" "$BUILD" "$OUT/memops" >"$OUT/memops.txt" 2>&1
RC[memops]=$?
stamp "2/4 ranges.py"
timeout 120 python3 "$HERE/ranges.py" --lib "$LIB" --out "$OUT/ranges" >"$OUT/ranges.txt" 2>&1
RC[ranges]=$?
stamp "3/4 flush_l2.sh"
timeout 120 bash "$HERE/flush_l2.sh" "$BUILD" "$OUT/flush_l2" >"$OUT/flush_l2.txt" 2>&1
RC[flush_l2]=$?
stamp "4/4 run.sh (core, ${CORE_BUDGET_S:-90} s)"
GPU_TEST_BUDGET_S=${CORE_BUDGET_S:-90} timeout 200 bash "$HERE/run.sh" "$BUILD" >"$OUT/run.txt" 2>&1
RC[run]=$?
stamp "done"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
for p in memops ranges flush_l2; do
    echo "== $p"
    grep -E '^(not ok|FAIL)' "$OUT/$p.txt" | head -n 15
    tail -n 12 "$OUT/$p.txt"
done
echo "== run.sh"
sed -n '/^| workload/,/^$/p' "$OUT/summary.md" 2>/dev/null | head -n 12
sed -n "/^## Problems/,/^## Details/p" "$OUT/summary.md" 2>/dev/null | head -n 12
echo
echo "| part | exit |"
echo "| --- | --- |"
for p in memops ranges flush_l2 run; do echo "| $p | ${RC[$p]} |"; done
