#!/usr/bin/env bash
# Every GPU check in one call, for the GPU machine (a machine start costs minutes):
#
#   bash tests/gpu/all.sh BUILD         carry: ["build"]; results in $OUT
#
# 1. tests/gpu/run.sh BUILD: the programs of tests/gpu/build.sh against CUPTI (summary.md,
#    log.txt, gpu-results.tar.gz);
# 2. tests/gpu/libs.py: libraries, frameworks, NCCL on up to 2 GPUs, torch.profiler and
#    compute-sanitizer (libs.md);
# 3. tests/gpu/sanitizer_diag.sh: compute-sanitizer with ktime preloaded four ways
#    (sanitizer.txt, sanitizer-logs.tar.gz);
# 4. BUILD/bench/eventcost, if built: what the drain's driver calls cost (eventcost.txt).
# Prints the tables last. Exit 77 without a GPU.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 1
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
export OUT
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU"; exit 77; }
LIB=$BUILD/src/.libs/libktime.so
T0=$(date +%s)
stamp() { echo "[all.sh $(($(date +%s) - T0))s] $*"; }

stamp "1/4 run.sh"
GPU_TEST_BUDGET_S=${GPU_TEST_BUDGET_S:-300} bash "$HERE/run.sh" "$BUILD" >/dev/null 2>&1
stamp "2/4 libs.py"
python3 "$HERE/libs.py" --lib "$LIB" --gpu "$BUILD/gpu" --out "$OUT" \
    --sanitizer-app "$BUILD/smoke/saxpy_static" >"$OUT/libs.txt" 2>&1
stamp "3/4 compute-sanitizer, four ways"
SAN=$(mktemp -d)
OUT=$SAN bash "$HERE/sanitizer_diag.sh" "$LIB" "$BUILD/smoke/saxpy_static" >"$OUT/sanitizer.txt" 2>&1
tar -czf "$OUT/sanitizer-logs.tar.gz" -C "$SAN" . 2>/dev/null
if [ -x "$BUILD/bench/eventcost" ]; then
    stamp "4/4 eventcost"
    timeout 120 "$BUILD/bench/eventcost" >"$OUT/eventcost.txt" 2>&1
fi
stamp "done"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
sed -n '/^| workload/,/^$/p' "$OUT/summary.md" 2>/dev/null | head -n 20
sed -n "/^## Problems/,/^## Details/p" "$OUT/summary.md" 2>/dev/null | head -n 40
tail -n 14 "$OUT/libs.txt"
cat "$OUT/sanitizer.txt" "$OUT/eventcost.txt" 2>/dev/null
