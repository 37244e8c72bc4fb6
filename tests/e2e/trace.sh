#!/bin/sh
# trace.sh - KTIME_TRACE: a Chrome/Perfetto trace of the timed launches. Against the fake
# driver's simulated clock: a slice per timed sample, each as long as the fake's duration, in
# stream order without overlap, named, with its launch shape; a process per GPU and a thread
# per stream; the same from the CUPTI timer's records; KTIME_TRACE_MAX caps it (the rest
# counted); an unwritable path costs one warning and nothing else. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime
CUPTI=$FAKE_DIR/libcupti.so.13
[ -f "$CUPTI" ] || e2e_fail_setup "fake CUPTI not built: $CUPTI (set FAKE_DIR)"
A=$E2E_BIN/app_driver
PLAN="kA=10000,20000:25 kB=5000:12"

# slices TRACE REPORT: the trace's structure (Trace Event Format: every event has name, ph,
# pid; slices ts, dur, tid; metadata args.name), a slice per timed sample with the kernel's
# name and shape, durations as the fake's, and on each thread slices that never overlap.
slices() {
    python3 - "$1" "$2" <<'PY'
import json, sys
t, r = (json.load(open(p)) for p in sys.argv[1:3])
ev = t["traceEvents"]
bad = []
for e in ev:
    if not {"name", "ph", "pid"} <= e.keys():
        bad.append("event without name/ph/pid: %r" % e)
    elif e["ph"] == "X" and not ({"ts", "dur", "tid", "args"} <= e.keys()):
        bad.append("slice without ts/dur/tid/args: %r" % e)
    elif e["ph"] == "M" and "name" not in e.get("args", {}):
        bad.append("metadata without args.name: %r" % e)
    elif e["ph"] not in ("X", "M"):
        bad.append("unexpected ph %r" % e["ph"])
x = [e for e in ev if e["ph"] == "X"]
want = {k["mangled"]: k["timed"] for k in r["kernels"]}
got = {}
for e in x:
    got[e["args"]["mangled"]] = got.get(e["args"]["mangled"], 0) + 1
if got != want:
    bad.append("slices per kernel %r, report's timed %r" % (got, want))
durs = {"kA": (10.0, 20.0), "kB": (5.0,)}
for e in x:
    if not any(abs(e["dur"] - d) < 0.002 for d in durs.get(e["name"], ())):
        bad.append("slice %s of %.3f us" % (e["name"], e["dur"]))
    if "grid" not in e["args"] or not e["args"]["grid"].endswith("x1x1"):
        bad.append("slice without its grid: %r" % e)
    if e["ts"] < 0:
        bad.append("negative ts %r" % e)
tracks = {}
for e in x:
    tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"]))
for k, v in tracks.items():
    v.sort()
    for a, b in zip(v, v[1:]):
        if b[0] < a[0] + a[1] - 0.002:
            bad.append("overlap on %r: %r then %r" % (k, a, b))
names = {(e["pid"], e.get("tid")) for e in ev if e["ph"] == "M"}
for k in tracks:
    if (k[0], None) not in names or k not in names:
        bad.append("track %r has no process or thread name" % (k,))
print("\n".join(bad[:10]) or "ok")
sys.exit(1 if bad else 0)
PY
}

if ! command -v python3 >/dev/null 2>&1; then
    skip "KTIME_TRACE" "no python3 to read the trace"
    finish
fi

run_ktime ev KTIME_TRACE="$tmp/ev-%p.trace.json" KTIME_OUTPUT="$tmp/ev.json" "$A" --shapes 3 $PLAN
t=$(ls "$tmp"/ev-*.trace.json 2>/dev/null | head -n 1)
check "events: a trace, named with the pid" test -n "$t"
check "events: the trace is valid JSON" jc "$t"
check "events: a slice per timed sample (27)" jc "$t" 'traceEvents[ph=X]|count' == 27
check "events: nothing dropped or unplaced" sh -c "'$JCHECK' '$t' otherData.dropped == 0 && '$JCHECK' '$t' otherData.unplaced == 0"
check "events: slices named, shaped, as long as the fake's kernels, in stream order" slices "$t" "$tmp/ev.json"
check "events: one GPU, one stream" sh -c "[ \$('$JCHECK' '$t' 'traceEvents[name=process_name]|count') = 1 ] && [ \$('$JCHECK' '$t' 'traceEvents[name=thread_name]|count') = 1 ]"

run_ktime two FAKECUDA_DEVICES=2 KTIME_TRACE="$tmp/two.trace.json" KTIME_OUTPUT="$tmp/two.json" "$A" --devices 2 --stream --shapes 3 $PLAN
check "two GPUs: a process per GPU" jc "$tmp/two.trace.json" 'traceEvents[name=process_name]|count' == 2
check "two GPUs: slices as the fake's, in stream order" slices "$tmp/two.trace.json" "$tmp/two.json"

run_ktime cu KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_TRACE="$tmp/cu.trace.json" KTIME_OUTPUT="$tmp/cu.json" "$A" --shapes 3 $PLAN
check "cupti: the CUPTI timer was used" jc "$tmp/cu.json" timer.used == cupti
check "cupti: a slice per timed record (27)" jc "$tmp/cu.trace.json" 'traceEvents[ph=X]|count' == 27
check "cupti: slices as the fake's, in stream order" slices "$tmp/cu.trace.json" "$tmp/cu.json"

run_ktime cap KTIME_TRACE_MAX=10 KTIME_TRACE="$tmp/cap.trace.json" KTIME_OUTPUT="$tmp/cap.json" "$A" $PLAN
check "KTIME_TRACE_MAX=10: 10 slices" jc "$tmp/cap.trace.json" 'traceEvents[ph=X]|count' == 10
check "KTIME_TRACE_MAX=10: the other 17 counted as dropped" jc "$tmp/cap.trace.json" otherData.dropped == 17
check "KTIME_TRACE_MAX=10: one warning says so" sh -c "[ \$(grep -c 'not in the trace (KTIME_TRACE_MAX)' '$tmp/cap.err') = 1 ]"
check "KTIME_TRACE_MAX=10: the report is whole (27 timed)" jc "$tmp/cap.json" totals.timed == 27

run_ktime bad KTIME_TRACE=/nonexistent/dir/t.json KTIME_OUTPUT="$tmp/bad.json" "$A" $PLAN
check "an unwritable KTIME_TRACE: one warning" sh -c "[ \$(grep -c '' '$tmp/bad.err') = 1 ] && grep -q '^ktime: warning: KTIME_TRACE' '$tmp/bad.err'"
check "an unwritable KTIME_TRACE: the program's status and the report as usual" sh -c \
    "[ \$(cat '$tmp/bad.rc') = 0 ] && '$JCHECK' '$tmp/bad.json' totals.timed == 27"
mkdir "$tmp/none" && cd "$tmp/none" || exit 1
run_ktime none KTIME_OUTPUT="$tmp/none.json" "$A" $PLAN
cd - >/dev/null || exit 1
check "no KTIME_TRACE: the program's directory stays empty" sh -c "[ -z \"\$(ls -A '$tmp/none')\" ] && '$JCHECK' '$tmp/none.json' totals.timed == 27"
finish
