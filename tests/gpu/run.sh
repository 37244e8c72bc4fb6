#!/usr/bin/env bash
# ktime's GPU suite. Runs on the GPU machine, from the repository root:
#
#   bash tests/gpu/run.sh BUILD
#
# BUILD holds libktime.so (BUILD/.libs/ or BUILD/src/.libs/, or set KTIME_LIB) and the programs
# from tests/gpu/build.sh in BUILD/gpu/ (or set GPU_BIN). For each workload it runs the program
# bare, then with LD_PRELOAD="libkcount.so:libktime.so" (the CUPTI counter next to ktime), then
# with ktime and KTIME_DISABLE=1, and compares stdout, launch counts and mean times
# (tests/gpu/compare.py). Results go to $OUT (default ./gpu-out): summary.md, log.txt and
# gpu-results.tar.gz (every stdout, stderr and JSON). Exit 0 when the suite ran, whatever the
# checks found (the table says); 77 when there is no GPU; 1 when it could not run at all.
#
# Environment: OUT, KTIME_LIB, GPU_BIN, PYTHON (python3), KTIME_TEST_WARMUP (5),
# GPU_TEST_BUDGET_S (400: no new run starts after this many seconds).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${1:-build}
OUT=${OUT:-./gpu-out}
PYTHON=${PYTHON:-python3}
WARMUP=${KTIME_TEST_WARMUP:-5}
BUDGET_S=${GPU_TEST_BUDGET_S:-400}
START=$(date +%s)

mkdir -p "$OUT" || { echo "run.sh: cannot create $OUT" >&2; exit 1; }
OUT=$(cd "$OUT" && pwd)

log() { echo "[$(($(date +%s) - START))s] $*"; }

abspath() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }

write_short_summary() { # TITLE LINE...: a summary.md for runs that never reached compare.py
    {
        echo "# ktime GPU test results"
        echo
        printf '%s\n' "$@"
    } >"$OUT/summary.md"
}

find_ktime() {
    local c
    if [ -n "${KTIME_LIB:-}" ]; then
        [ -f "$KTIME_LIB" ] && abspath "$KTIME_LIB"
        return
    fi
    for c in "$BUILD/.libs/libktime.so" "$BUILD/src/.libs/libktime.so"; do
        if [ -f "$c" ]; then
            abspath "$c"
            return
        fi
    done
    c=$(find "$BUILD" -name libktime.so -path '*/.libs/*' -xtype f 2>/dev/null | head -n 1)
    [ -n "$c" ] || c=$(find "$BUILD" -name 'libktime.so*' -type f 2>/dev/null | head -n 1)
    [ -n "$c" ] && abspath "$c"
}

# run_case WORKLOAD KIND REF TIMEOUT_S CMD...
#   KIND: bare | both | both_rev | disable | kcount (see compare.py); REF: the stdout (relative
#   to WORK) this run's stdout must equal, or "-". Appends one row to runs.tsv; never fails.
run_case() {
    local wl=$1 kind=$2 ref=$3 tmo=$4
    shift 4
    local d="$WORK/$wl" prog kj="-" cj="-" rc secs t0 left
    mkdir -p "$d"
    prog=$(basename "$1")
    local envs=(-u LD_PRELOAD -u KTIME_DISABLE -u KTIME_OUTPUT -u KTIME_WARMUP -u KTIME_FORMAT
        -u KCOUNT_OUTPUT -u KCOUNT_DISABLE -u KCOUNT_FLUSH_MS)
    case $kind in
    bare) ;;
    both | both_rev)
        if [ "$kind" = both ]; then
            envs+=("LD_PRELOAD=$KCOUNT:$KTIME")
        else
            envs+=("LD_PRELOAD=$KTIME:$KCOUNT")
        fi
        envs+=("KTIME_OUTPUT=$d/$kind.ktime.json" "KTIME_WARMUP=$WARMUP"
            "KCOUNT_OUTPUT=$d/$kind.kcount.json")
        kj="$wl/$kind.ktime.json"
        cj="$wl/$kind.kcount.json"
        ;;
    disable)
        envs+=("LD_PRELOAD=$KTIME" KTIME_DISABLE=1 "KTIME_OUTPUT=$d/$kind.ktime.json"
            "KTIME_WARMUP=$WARMUP")
        ;;
    kcount)
        envs+=("LD_PRELOAD=$KCOUNT" "KCOUNT_OUTPUT=$d/$kind.kcount.json")
        cj="$wl/$kind.kcount.json"
        ;;
    esac

    left=$((BUDGET_S - ($(date +%s) - START)))
    if [ "$left" -lt 20 ]; then
        rc=skip
        secs=0
        : >"$d/$kind.out"
        echo "skipped: time budget spent" >"$d/$kind.err"
        log "$wl/$kind: SKIPPED (time budget)"
    else
        [ "$tmo" -gt $((left - 10)) ] && tmo=$((left - 10))
        t0=$(date +%s.%N)
        (cd "$d" && timeout -k 10 "$tmo" env "${envs[@]}" "$@" >"$d/$kind.out" 2>"$d/$kind.err")
        rc=$?
        secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ "$rc" -eq 0 ]; then
            log "$wl/$kind: ok (${secs}s)"
        else
            log "$wl/$kind: EXIT $rc (${secs}s)$([ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && echo ' TIMEOUT')"
            tail -n 8 "$d/$kind.err" | sed 's/^/    stderr: /'
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$kind" "$rc" "$secs" "$prog" \
        "$wl/$kind.out" "$wl/$kind.err" "$kj" "$cj" "$ref" >>"$WORK/runs.tsv"
    LAST_RC=$rc
}

# workload NAME TIMEOUT_S CMD...: bare, then both and disable (without libktime: kcount alone).
workload() {
    local wl=$1 tmo=$2
    shift 2
    if [ ! -x "$1" ] && ! command -v "$1" >/dev/null 2>&1; then
        log "$wl: SKIPPED: $1 not found"
        mkdir -p "$WORK/$wl"
        printf '%s\tbare\tmissing\t0\t%s\t-\t-\t-\t-\t-\n' "$wl" "$(basename "$1")" >>"$WORK/runs.tsv"
        return
    fi
    run_case "$wl" bare - "$tmo" "$@"
    if [ "$LAST_RC" = 77 ]; then
        log "$wl: the program reports it cannot run here (77); nothing more to run"
        return
    fi
    if [ -n "$KTIME" ]; then
        run_case "$wl" both "$wl/bare.out" "$tmo" "$@"
        run_case "$wl" disable "$wl/bare.out" "$tmo" "$@"
    else
        run_case "$wl" kcount "$wl/bare.out" "$tmo" "$@"
    fi
}

main() {
    log "ktime GPU suite: build '$BUILD', results to $OUT"
    if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L; then
        log "no GPU (nvidia-smi -L failed): SKIP"
        write_short_summary "SKIP: no GPU (nvidia-smi -L failed) on $(uname -n), $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
        return 77
    fi
    if [ ! -d "$BUILD" ]; then
        log "build folder '$BUILD' not found (pass it as the first argument; carry it)"
        write_short_summary "ERROR: build folder '$BUILD' not found"
        return 1
    fi
    BUILD=$(cd "$BUILD" && pwd)
    GPU=${GPU_BIN:-$BUILD/gpu}
    KTIME=$(find_ktime)
    KCOUNT=$GPU/libkcount.so
    if [ ! -f "$KCOUNT" ]; then
        log "libkcount.so not found in $GPU: run tests/gpu/build.sh $GPU here first"
        write_short_summary "ERROR: $KCOUNT not found (tests/gpu/build.sh not run?)"
        return 1
    fi
    if [ -z "$KTIME" ]; then
        log "WARNING: libktime.so not found under $BUILD: running the CUPTI counter alone"
    fi
    # The interpreter itself, not a wrapper script: only the process under test gets LD_PRELOAD.
    PYEXE=$("$PYTHON" -c 'import sys; print(sys.executable)' 2>/dev/null)
    [ -n "$PYEXE" ] && [ -x "$PYEXE" ] || PYEXE=$PYTHON
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/ktime-gpu.XXXXXX") || return 1
    printf 'workload\tkind\trc\tseconds\tprog\tstdout\tstderr\tktime_json\tkcount_json\tref_stdout\n' \
        >"$WORK/runs.tsv"

    {
        echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
        echo "host: $(uname -n) ($(uname -srm))"
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
        echo "libktime: ${KTIME:-NOT FOUND}"
        # The build the library says it is (its git revision): the checkout on this machine
        # may not be the one the library was built from.
        [ -n "${KTIME:-}" ] && { grep -a -o -m1 'ktime-build [^[:cntrl:]]*' "$KTIME" || echo "ktime-build unknown"; }
        echo "libkcount: $KCOUNT"
        echo "python: $PYEXE ($("$PYEXE" --version 2>&1))"
        echo "warmup: KTIME_WARMUP=$WARMUP"
        [ -f "$GPU/BUILD-INFO.txt" ] && sed 's/^/gpu build: /' "$GPU/BUILD-INFO.txt"
    } >"$WORK/env.txt" 2>&1
    cat "$WORK/env.txt"
    for lib in "$KCOUNT" ${KTIME:+"$KTIME"}; do
        if ldd "$lib" >"$WORK/ldd-$(basename "$lib").txt" 2>&1; then
            grep -F "not found" "$WORK/ldd-$(basename "$lib").txt" | sed "s|^|WARNING: $(basename "$lib"): |"
        fi
    done

    # A C run takes a few seconds, a PyTorch run well under a minute; the timeouts only bound a
    # hang, and the budget check in run_case keeps the whole suite within GPU_TEST_BUDGET_S.
    workload static 45 "$GPU/app_static"
    workload shared 45 "$GPU/app_shared"
    workload ptds 45 "$GPU/app_ptds" -t 2
    workload driver 45 "$GPU/app_driver"
    workload paths 90 "$GPU/app_paths"
    workload torch_mlp 180 "$PYEXE" "$HERE/torch_mlp.py"
    # Extras: the preload order reversed; the counter alone; a context destroyed before exit.
    if [ -n "$KTIME" ] && [ -x "$GPU/app_static" ]; then
        run_case static_ktime_first both_rev static/bare.out 45 "$GPU/app_static"
    fi
    if [ -x "$GPU/app_static" ]; then
        run_case static_kcount_only kcount static/bare.out 45 "$GPU/app_static"
    fi
    if [ -x "$GPU/app_driver" ]; then
        run_case driver_ctx_release bare - 45 "$GPU/app_driver" -r
        if [ -n "$KTIME" ]; then
            run_case driver_ctx_release both driver_ctx_release/bare.out 45 "$GPU/app_driver" -r
        else
            run_case driver_ctx_release kcount driver_ctx_release/bare.out 45 "$GPU/app_driver" -r
        fi
    fi

    echo "after the runs: $(nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1)" |
        tee -a "$WORK/env.txt"

    log "comparing"
    "$PYTHON" "$HERE/compare.py" "$WORK" --summary "$OUT/summary.md" --header "$WORK/env.txt" \
        >"$WORK/compare.txt" 2>&1
    local crc=$?
    if [ "$crc" -ne 0 ] || [ ! -s "$OUT/summary.md" ]; then
        echo "compare.py failed (exit $crc)" >>"$WORK/compare.txt"
        [ -s "$OUT/summary.md" ] || write_short_summary "ERROR: compare.py failed (exit $crc); see log.txt" \
            '```' "$(cat "$WORK/compare.txt")" '```'
    fi
    cp "$OUT/summary.md" "$WORK/summary.md" 2>/dev/null
    if tar -czf "$OUT/gpu-results.tar.gz" -C "$WORK" . 2>"$WORK/tar.err"; then
        log "details: $OUT/gpu-results.tar.gz ($(du -k "$OUT/gpu-results.tar.gz" | cut -f1) KiB), $OUT/summary.md"
    else
        log "WARNING: tar failed: $(cat "$WORK/tar.err")"
    fi
    log "done"
    echo
    cat "$WORK/compare.txt" # the summary table comes last
    rm -rf "$WORK"
    return 0
}

main "$@" 2>&1 | tee "$OUT/log.txt"
exit "${PIPESTATUS[0]}"
