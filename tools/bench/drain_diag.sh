#!/usr/bin/env bash
# drain_diag.sh BUILD: where the drain thread's time goes, on the GPU machine (carry BUILD).
#   1. BUILD/bench/eventcost: the driver calls alone, synchronized and unsynchronized pairs;
#   2. bench threads T 20000 (T = 1, 4, 16) under libktime with KTIME_WARMUP=0 and
#      KTIME_LOG=debug: pool growth, the drain's counters and time breakdown, the report's
#      totals (how many launches were timed, dropped and why).
# Output on stdout; exit 77 without a GPU.
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
LIB=$BUILD/src/.libs/libktime.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || exit 77
echo "== eventcost"
timeout 120 "$BUILD/bench/eventcost" 20000
TMP=$(mktemp -d)
for T in 1 4 16; do
    for GATE in auto 1 0; do
        echo "== bench threads $T 20000, KTIME_GATE=$GATE"
        env LD_PRELOAD="$LIB" KTIME_WARMUP=0 KTIME_GATE=$GATE KTIME_LOG=debug \
            KTIME_OUTPUT="$TMP/t$T-$GATE.json" timeout 60 "$BUILD/bench/bench" threads "$T" 20000 \
            >"$TMP/t$T-$GATE.out" 2>"$TMP/t$T-$GATE.err"
        echo "rc $?"
        grep -o 'ns_per_launch=[^ ]*\|wall_s=[^ ]*\|drain_cpu_s=[^ ]*' "$TMP/t$T-$GATE.out" | tr '\n' ' '
        echo
        grep -E 'grown|drain' "$TMP/t$T-$GATE.err" | tail -n 8
        python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print({k: t[k] for k in ("launches_seen","timed","dropped","dropped_reasons","incomplete_at_exit")})' "$TMP/t$T-$GATE.json"
    done
done
rm -rf "$TMP"
