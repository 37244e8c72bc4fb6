#!/usr/bin/env bash
# Checks tests/gpu/ on a machine without a GPU:
#   1. libkcount's real code against a fake libcupti (fake_cupti.c): counts, durations, JSON/TSV,
#      the exit path, a forked child, a process that never used CUDA, a failing enable;
#   2. run.sh and compare.py end to end, with a fake nvidia-smi, fake preload libraries and a
#      fake application (fakeapp.py) whose planted faults the summary table must show.
#
#   bash tests/gpu/selftest/selftest.sh [KCOUNT_SO]    (default build/gpu/libkcount.so)
# Prints "N passed, N failed"; exit 1 when anything failed.
# shellcheck disable=SC2016  # the bash -c snippets expand their own arguments
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GPUDIR=$(cd "$HERE/.." && pwd)
KCOUNT=${1:-build/gpu/libkcount.so}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CC=${CC:-gcc}
PY=${PYTHON:-python3}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
expect() { # DESCRIPTION CMD...
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}

if [ ! -f "$KCOUNT" ]; then
    echo "selftest: $KCOUNT not found: run tests/gpu/build.sh first" >&2
    exit 1
fi
KCOUNT=$(cd "$(dirname "$KCOUNT")" && pwd)/$(basename "$KCOUNT")
T=$(mktemp -d "${TMPDIR:-/tmp}/ktime-gpu-selftest.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

# ---- 1. libkcount against the fake CUPTI ----------------------------------------------------
$CC -O1 -g -std=gnu11 -Wall -fPIC -shared -Wl,-soname,libcupti.so.13 -I"$CUDA_HOME/include" \
    -o "$T/libcupti.so.13" "$HERE/fake_cupti.c" -lpthread || { echo "cannot build fake_cupti"; exit 1; }
$CC -O1 -g -std=gnu11 -Wall -o "$T/kcount_host" "$HERE/kcount_host.c" -ldl -lpthread ||
    { echo "cannot build kcount_host"; exit 1; }

# host MODE OUTPUT [VAR=VALUE...]: runs kcount_host with the fake CUPTI and libkcount preloaded
# (the fake comes first: its soname then satisfies libkcount's NEEDED entry, RPATH or not).
host() {
    local mode=$1 out=$2
    shift 2
    env -u KCOUNT_FLUSH_MS "$@" LD_PRELOAD="$T/libcupti.so.13:$KCOUNT" KCOUNT_OUTPUT="$out" \
        "$T/kcount_host" "$mode" >"$T/host.out" 2>"$T/host.err"
}

check_json() { # FILE PYTHON-ASSERTIONS (d = the document, k = kernels by name)
    "$PY" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["mangled"]: x for x in d["kernels"]}
try:
    exec(sys.argv[2])
except AssertionError as e:
    print("    assertion failed:", e, file=sys.stderr)
    sys.exit(1)
PY
}

host plain "$T/plain.json"
expect "kcount: plain run exits 0 and writes its report" test -s "$T/plain.json"
expect "kcount: counts, durations in launch order, incomplete records, escaping" check_json "$T/plain.json" '
a = k["_Z4kernAPf"]; b = k["kernel_b"]; p = k["_Z7pendingv"]
assert a["count"] == 100 and a["complete"] == 100, a["count"]
assert a["min_ns"] == 5000 and a["max_ns"] == 5200 and a["median_ns"] == 5100.0, a
assert a["durations_ns"][:4] == [5000, 5100, 5200, 5000], a["durations_ns"][:4]
assert a["sum_ns"] == sum(a["durations_ns"])
assert b["count"] == 11 and b["durations_ns"] == [1000000 + i for i in range(11)]
assert b["median_ns"] == 1000005.0
assert p["count"] == 1 and p["complete"] == 0 and p["durations_ns"] == [None]
assert "weird\"name\\\x01" in k, list(k)
assert d["records"] == 113 and d["incomplete"] == 1 and d["dropped"] == 0
assert d["report_via"] == "atexit" and d["final_flush_result"] == 0
assert d["periodic_flushes"] >= 1, d["periodic_flushes"]
assert d["command"][-1] == "plain", d["command"]
'
expect "kcount: one summary line on stderr, nothing on stdout but the program's" \
    bash -c '[ "$(grep -c "^kcount: 113 kernel records" "$1/host.err")" = 1 ] && [ "$(cat "$1/host.out")" = "kcount_host plain done" ]' _ "$T"

host fork "$T/fork.json"
expect "kcount: a forked child writes nothing; the parent's report is complete" check_json "$T/fork.json" '
assert d["records"] == 113, d["records"]
'
expect "kcount: exactly one report line after a fork" \
    bash -c '[ "$(grep -c "kernel records" "$1/host.err")" = 1 ]' _ "$T"

rm -f "$T/none.json"
host none "$T/none.json"
expect "kcount: a process that never used CUDA writes no report" test ! -e "$T/none.json"

host many "$T/many.json"
expect "kcount: 20000 launches over several buffers, exit handler re-registered" check_json "$T/many.json" '
assert k["_Z4kernAPf"]["count"] == 20000
assert d["buffers_requested"] >= 3 and d["atexit_registrations"] >= 3, (d["buffers_requested"], d["atexit_registrations"])
'

host thread "$T/thread.json"
expect "kcount: launches from two threads" check_json "$T/thread.json" '
assert k["_Z4kernAPf"]["count"] == 600 and k["_Z6threadv"]["count"] == 500
'

host plain "$T/noflusher.json" KCOUNT_FLUSH_MS=0
expect "kcount: KCOUNT_FLUSH_MS=0: no flusher, the exit flush still delivers all" check_json "$T/noflusher.json" '
assert d["records"] == 113 and d["periodic_flushes"] == 0 and d["flush_period_ms"] == 0
'

host plain "$T/bad.json" KCOUNT_FLUSH_MS=abc
expect "kcount: a bad KCOUNT_FLUSH_MS is reported once and the default used" \
    bash -c 'grep -q "KCOUNT_FLUSH_MS=.abc. is not" "$1/host.err" && test -s "$1/bad.json"' _ "$T"

host plain "$T/k.%p.tsv"
expect "kcount: TSV output and %p in the file name" \
    bash -c 'f=$(ls "$1"/k.*.tsv) && head -n 2 "$f" | tail -n 1 | grep -q "^mangled	count	complete" && grep -q "^_Z4kernAPf	100	100	509900	5000	5200	5100.0$" "$f"' _ "$T"

host plain "$T/dropped.json" FAKE_CUPTI_DROPPED=3
expect "kcount: dropped records are counted" check_json "$T/dropped.json" 'assert d["dropped"] == 3'

rm -f "$T/fail.json"
host plain "$T/fail.json" FAKE_CUPTI_ENABLE_FAIL=1
rc=$?
expect "kcount: a failing cuptiActivityEnable warns, writes nothing, leaves the program alone" \
    bash -c '[ "$0" = 0 ] && grep -q "cuptiActivityEnable(CONCURRENT_KERNEL) failed" "$1/host.err" && test ! -e "$1/fail.json"' "$rc" "$T"

host plain "$T/disabled.json" KCOUNT_DISABLE=1
expect "kcount: KCOUNT_DISABLE=1 does nothing" test ! -e "$T/disabled.json"

# compare.py on the JSON libkcount really writes, next to a hand-made ktime report
mkdir -p "$T/cmp/real"
echo same >"$T/cmp/real/bare.out"
echo same >"$T/cmp/real/both.out"
cp "$T/plain.json" "$T/cmp/real/both.kcount.json"
"$PY" - "$T/cmp/real/both.ktime.json" <<'PY'
import json, sys
def k(name, calls, warm, mean):
    timed = calls - warm
    return {"name": name, "mangled": name, "devices": [0], "calls": calls, "warmup_skipped": warm,
            "captured": 0, "dropped": 0, "failed": 0, "timed": timed,
            "total_ms": (mean or 0) * timed / 1000, "percent": 0, "mean_us": mean,
            "min_us": mean, "max_us": mean, "stddev_us": 0, "sum_us": (mean or 0) * timed,
            "m2_us2": 0, "per_device": []}
doc = {"schema_version": 1, "command": ["kcount_host", "plain"], "pid": 1, "warmup": 5,
       "kernels": [k("_Z4kernAPf", 100, 5, 9.1), k("kernel_b", 11, 5, 1004.0),
                   k("_Z7pendingv", 1, 1, None), k("weird\"name\\\u0001", 1, 1, None)],
       "totals": {"launches_seen": 113}}
doc["kernels"][2]["timed"] = doc["kernels"][3]["timed"] = 0
json.dump(doc, open(sys.argv[1], "w"))
PY
printf 'workload\tkind\trc\tseconds\tprog\tstdout\tstderr\tktime_json\tkcount_json\tref_stdout\n' >"$T/cmp/runs.tsv"
printf 'real\tbare\t0\t1\tkcount_host\treal/bare.out\t-\t-\t-\t-\n' >>"$T/cmp/runs.tsv"
printf 'real\tboth\t0\t1\tkcount_host\treal/both.out\t-\treal/both.ktime.json\treal/both.kcount.json\treal/bare.out\n' >>"$T/cmp/runs.tsv"
"$PY" "$GPUDIR/compare.py" "$T/cmp" --summary "$T/cmp/summary.md" >"$T/cmp/out.txt" 2>&1
expect "compare.py reads libkcount's own JSON: names (escaped too) join, warmup left out" \
    bash -c '[ "$(tail -n 1 "$1/cmp/out.txt")" = "| real | 4 | 113 | 113 | 0 | yes | pass 2/2 | 1 (see details) |" ] && grep -q "CUPTI incomplete = 1" "$1/cmp/summary.md"' _ "$T"

# ---- 2. run.sh and compare.py with fakes ----------------------------------------------------
mkdir -p "$T/fakebin" "$T/build/.libs" "$T/build/gpu"
cat >"$T/fakebin/nvidia-smi" <<'SH'
#!/bin/sh
case "$*" in
*-L*) echo "GPU 0: Fake H100 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
*--query-gpu*) echo "name, driver_version, clocks.current.sm [MHz], clocks.max.sm [MHz]"; echo "Fake H100, 580.00, 345 MHz, 1980 MHz" ;;
*) echo "fake nvidia-smi" ;;
esac
SH
chmod +x "$T/fakebin/nvidia-smi"
echo 'int ktime_fake_marker;' >"$T/empty.c"
$CC -shared -fPIC -o "$T/build/.libs/libktime.so" "$T/empty.c"
$CC -shared -fPIC -o "$T/build/gpu/libkcount.so" "$T/empty.c"
for app in static shared ptds driver paths; do
    printf '#!/bin/sh\nFAKE_ARGV0="$0" exec %s %s %s "$@"\n' "$PY" "$HERE/fakeapp.py" "$app" >"$T/build/gpu/app_$app"
    chmod +x "$T/build/gpu/app_$app"
done

(cd "$T" && PATH="$T/fakebin:$PATH" OUT="$T/out" bash "$GPUDIR/run.sh" build >"$T/run.log" 2>&1)
rc=$?
expect "run.sh: exits 0 when checks fail" test "$rc" = 0
expect "run.sh: at most 8 files in OUT: summary.md, log.txt, gpu-results.tar.gz" \
    bash -c '[ "$(ls "$1/out" | tr "\n" " ")" = "gpu-results.tar.gz log.txt summary.md " ]' _ "$T"
expect "run.sh: the tarball holds every run's outputs and JSON" \
    bash -c 'tar -tzf "$1/out/gpu-results.tar.gz" | grep -q "static/both.ktime.json" && tar -tzf "$1/out/gpu-results.tar.gz" | grep -q "static/both.kcount.json" && tar -tzf "$1/out/gpu-results.tar.gz" | grep -q "runs.tsv"' _ "$T"
row() { grep -E "^\| $1 \|" "$T/run.log" | tail -n 1; }
expect "table comes last in the log" bash -c 'tail -n 1 "$1/run.log" | grep -q "^| driver_ctx_release |"' _ "$T"
expect "static: 3 kernels, counts equal, identical output, bias pass" \
    bash -c '[[ "$1" == "| static | 3 | 315 | 315 | 0 | yes | pass 3/3 | - |" ]]' _ "$(row static)"
expect "shared: the missed launches show as 1 mismatched kernel and an expect note" \
    bash -c '[[ "$1" == "| shared | 3 | 315 | 312 | 1 | yes | pass 3/3 | 1 (see details) |" ]]' _ "$(row shared)"
expect "ptds: ktime below CUPTI fails the bias check" \
    bash -c '[[ "$1" == "| ptds | 3 | 315 | 315 | 0 | yes | FAIL 1/3 |"* ]]' _ "$(row ptds)"
expect "driver: changed stdout is caught" \
    bash -c '[[ "$1" == "| driver | 3 | 315 | 315 | 0 | NO (both: NO) | pass 3/3 |"* ]]' _ "$(row driver)"
expect "paths: graph nodes and a kernel on 2 GPUs compare clean" \
    bash -c '[[ "$1" == "| paths | 2 | 480 | 303 | 0 | yes | pass 1/1 | - |" ]]' _ "$(row paths)"
expect "torch_mlp: without PyTorch the program says 77 and nothing else runs" \
    bash -c 'grep -q "torch_mlp/bare: EXIT 77" "$1/run.log" && ! grep -q "torch_mlp/both" "$1/run.log"' _ "$T"
expect "static_ktime_first and static_kcount_only rows" \
    bash -c '[[ "$1" == "| static_ktime_first | 3 | 315 | 315 | 0 | yes | pass 3/3 | - |" ]] && [[ "$2" == "| static_kcount_only | 3 | 315 | - | - | yes | - | - |" ]]' _ "$(row static_ktime_first)" "$(row static_kcount_only)"
expect "driver_ctx_release: a failing run is reported" \
    bash -c '[[ "$1" == *"| 1 (see details) |" ]] && grep -q "driver_ctx_release: both run exit 3" "$2/out/summary.md"' _ "$(row driver_ctx_release)" "$T"
expect "summary.md: header, problems and per-kernel details" \
    bash -c 'grep -q "Fake H100, 580.00" "$1" && grep -q "count mismatch _Z8ktg_spinILi1EEvPjy: CUPTI 100, ktime 97" "$1" && grep -q "expected ktg_spinILi1E x100: ktime 97 in 1 kernel(s)" "$1" && grep -q "| \`_Z8ktg_spinILi3EEvPjy\` | 15 | 15 | 5 | 10 | 1000.31 | 1000.31 | 1004.41 | 4.10 | 20.0 | pass |" "$1"' _ "$T/out/summary.md"

(cd "$T" && PATH="$T/fakebin:$PATH" OUT="$T/out2" GPU_TEST_BUDGET_S=0 bash "$GPUDIR/run.sh" build >"$T/run2.log" 2>&1)
expect "run.sh: with no time left every run is skipped and the table still comes" \
    bash -c '[ "$0" = 0 ] && grep -q "static/bare: SKIPPED" "$1/run2.log" && grep -q "^| static |" "$1/run2.log"' "$?" "$T"

(cd "$T" && PATH="$T/fakebin:$PATH" OUT="$T/out3" bash "$GPUDIR/run.sh" nonexistent >"$T/run3.log" 2>&1)
expect "run.sh: a missing build folder exits 1 with a summary" \
    bash -c '[ "$0" = 1 ] && grep -q "not found" "$1/out3/summary.md"' "$?" "$T"

mkdir -p "$T/nogpu"
printf '#!/bin/sh\nexit 9\n' >"$T/nogpu/nvidia-smi"
chmod +x "$T/nogpu/nvidia-smi"
(cd "$T" && PATH="$T/nogpu:$PATH" OUT="$T/out4" bash "$GPUDIR/run.sh" build >"$T/run4.log" 2>&1)
expect "run.sh: no GPU exits 77" bash -c '[ "$0" = 77 ] && grep -q SKIP "$1/out4/summary.md"' "$?" "$T"

# ---- 3. compare.py on a report the real libktime writes (under the project's fake driver) ----
# Optional: needs a built libktime and tests/fake, tests/e2e; skipped when they are not there.
ROOT=$(cd "$GPUDIR/../.." && pwd)
KTIME_SO=${KTIME_SO:-$ROOT/build/src/.libs/libktime.so}
mkdir -p "$T/fk/w/real"
if [ -f "$KTIME_SO" ] && [ -f "$ROOT/tests/fake/fakecuda.c" ] && [ -f "$ROOT/tests/e2e/app_driver.c" ] &&
    $CC -O1 -std=gnu11 -fPIC -shared -Wl,-soname,libcuda.so.1 -I"$CUDA_HOME/include" \
        -o "$T/fk/libcuda.so.1" "$ROOT/tests/fake/fakecuda.c" -lpthread -ldl >"$T/fk/build.log" 2>&1 &&
    $CC -std=gnu11 -I"$CUDA_HOME/include" -I"$ROOT/tests/e2e" -o "$T/fk/app_driver" \
        "$ROOT/tests/e2e/app_driver.c" "$ROOT/tests/e2e/apputil.c" -L"$T/fk" -l:libcuda.so.1 \
        -lpthread >>"$T/fk/build.log" 2>&1; then
    plan=("_Z3fooPf=5000,5100:100" "kern_b=200000:20" "tiny=1000:3")
    (cd "$T/fk" && LD_LIBRARY_PATH="$T/fk" ./app_driver "${plan[@]}" >w/real/bare.out 2>/dev/null)
    (cd "$T/fk" && LD_LIBRARY_PATH="$T/fk" LD_PRELOAD="$KTIME_SO" KTIME_WARMUP=5 \
        KTIME_OUTPUT="$T/fk/w/real/both.ktime.json" ./app_driver "${plan[@]}" >w/real/both.out 2>w/real/both.err)
    # what CUPTI would have said: the fake's exact kernel times, 0.5 us shorter than the events
    "$PY" - "$T/fk/w/real/both.kcount.json" <<'PY'
import json, sys
def kern(name, durs):
    durs = [d - 500 for d in durs]
    s = sorted(durs)
    return {"mangled": name, "count": len(durs), "complete": len(durs), "sum_ns": sum(durs),
            "min_ns": s[0], "max_ns": s[-1], "median_ns": float(s[len(s) // 2]), "durations_ns": durs}
doc = {"tool": "kcount", "report_via": "atexit", "final_flush_result": 0, "records": 123,
       "incomplete": 0, "dropped": 0,
       "kernels": [kern("_Z3fooPf", [5000 if i % 2 == 0 else 5100 for i in range(100)]),
                   kern("kern_b", [200000] * 20), kern("tiny", [1000] * 3)]}
json.dump(doc, open(sys.argv[1], "w"))
PY
    printf 'workload\tkind\trc\tseconds\tprog\tstdout\tstderr\tktime_json\tkcount_json\tref_stdout\n' >"$T/fk/w/runs.tsv"
    printf 'real\tbare\t0\t1\tapp_driver\treal/bare.out\t-\t-\t-\t-\n' >>"$T/fk/w/runs.tsv"
    printf 'real\tboth\t0\t1\tapp_driver\treal/both.out\treal/both.err\treal/both.ktime.json\treal/both.kcount.json\treal/bare.out\n' >>"$T/fk/w/runs.tsv"
    "$PY" "$GPUDIR/compare.py" "$T/fk/w" --summary "$T/fk/w/summary.md" >"$T/fk/w/out.txt" 2>&1
    expect "compare.py reads the report the real libktime writes" \
        bash -c '[ "$(tail -n 1 "$1")" = "| real | 3 | 123 | 123 | 0 | yes | pass 2/2 (0 of 110 ungated) | - |" ] || { cat "$1"; false; }' _ "$T/fk/w/out.txt"
else
    echo "skip compare.py on a real ktime report (no libktime at $KTIME_SO, or the fake driver did not build)"
fi

if [ "$fail" -ne 0 ]; then
    echo "--- run.log"
    cat "$T/run.log"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
