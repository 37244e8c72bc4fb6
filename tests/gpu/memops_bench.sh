#!/usr/bin/env bash
# memops_bench.sh - what ktime adds to a memory operation, against the raw cost of timing it
# with an event pair, in one run (issue 13).
#
#   bash tests/gpu/memops_bench.sh BUILD [REPS]      e.g.  bash tests/gpu/memops_bench.sh build 5
#
# Runs `BUILD/gpu/memops bench 20000` REPS times (default 5) in each configuration, rotated: bare;
# under ktime (KTIME_MEMOPS on, every copy past warmup timed); ktime with KTIME_WARMUP=10^9 (the
# untimed path: the call classified and counted); ktime with KTIME_MEMOPS=0. Prints the median
# CPU ns per call of a 4-byte cudaMemcpyAsync from pinned memory and of a synchronous 4-byte
# DtoH cudaMemcpy, what each configuration adds to bare, and the raw cost of an event pair
# around the copy made by the program itself (the bare run's second loop). Exit 77 without a GPU.
set -u
BUILD=${1:-build}
REPS=${2:-5}
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
LIB=$(cd "$BUILD/src/.libs" && pwd)/libktime.so
APP=$BUILD/gpu/memops
TMP=$(mktemp -d)
configs="bare ktime untimed memops0"
for r in $(seq 1 "$REPS"); do
    for c in $configs; do
        case $c in
        bare) env "$APP" bench 20000 ;;
        ktime) env LD_PRELOAD="$LIB" KTIME_LOG=quiet "$APP" bench 20000 ;;
        untimed) env LD_PRELOAD="$LIB" KTIME_LOG=quiet KTIME_WARMUP=1000000000 "$APP" bench 20000 ;;
        memops0) env LD_PRELOAD="$LIB" KTIME_LOG=quiet KTIME_MEMOPS=0 "$APP" bench 20000 ;;
        esac >"$TMP/$c.$r" 2>&1
    done
    configs="${configs#* } ${configs%% *}" # rotate
done
python3 - "$TMP" "$REPS" <<'PY'
import os, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
def med(c, key):
    v = []
    for r in range(1, reps + 1):
        for line in open(os.path.join(tmp, "%s.%d" % (c, r))):
            w = line.split()
            if len(w) == 2 and w[0] == key:
                v.append(float(w[1]))
    return statistics.median(v) if v else float("nan")
b_async, b_sync = med("bare", "async_ns"), med("bare", "sync_dtoh_ns")
raw = med("bare", "async_events_ns") - b_async
print("| configuration | async 4 B HtoD, ns/call | added | sync 4 B DtoH, ns/call | added |")
print("| --- | ---: | ---: | ---: | ---: |")
for c, label in (("bare", "bare"), ("ktime", "ktime, copies timed"), ("untimed", "ktime, untimed path (KTIME_WARMUP=10^9)"),
                 ("memops0", "ktime, KTIME_MEMOPS=0")):
    a, s = med(c, "async_ns"), med(c, "sync_dtoh_ns")
    print("| %s | %.0f | %+.0f | %.0f | %+.0f |" % (label, a, a - b_async, s, s - b_sync))
print()
print("raw cost of the program's own event pair around each async copy: %+.0f ns per call "
      "(the floor of timing a copy with events); ktime timing it: %.2fx that" %
      (raw, (med("ktime", "async_ns") - b_async) / raw if raw > 0 else float("nan")))
print("medians of %d runs of 20000 calls each (2000 synchronous)" % reps)
PY
rm -rf "$TMP"
