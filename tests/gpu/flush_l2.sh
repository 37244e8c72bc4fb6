#!/usr/bin/env bash
# flush_l2.sh - KTIME_FLUSH_L2 on a GPU (issue 13).
#
#   bash tests/gpu/flush_l2.sh BUILD [OUT]      e.g.  bash tests/gpu/flush_l2.sh build
#
# BUILD holds libktime (BUILD/src/.libs/libktime.so) and BUILD/gpu/flush_l2
# (tests/gpu/build.sh). Runs flush_l2 (a kernel reading 16 MiB, which fits in L2, 300 times)
# four times: events and CUPTI timer, each without and with KTIME_FLUSH_L2=1, JSON reports in
# OUT (default ./gpu-out/flush_l2). Checks: with the flush, l2_read's mean (and median) is at
# least 15 % above the run without, under both timers; every launch past warmup got its flush
# (flushes = the kernels' launches past warmup, none refused); the buffer is at least the
# device's L2; the text header says so; stderr carries the one warning. One "ok"/"not ok" line
# per check, then a table. Exit 0 when all pass, 1 otherwise, 77 without a GPU.
set -u
BUILD=${1:-build}
OUT=${2:-gpu-out/flush_l2}
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
LIB=$(cd "$BUILD/src/.libs" 2>/dev/null && pwd)/libktime.so
APP=$BUILD/gpu/flush_l2
[ -f "$LIB" ] && [ -x "$APP" ] || { echo "missing $LIB or $APP" >&2; exit 1; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
LAUNCHES=300

for t in events cupti; do
    for f in 0 1; do
        env KTIME_TIMER=$t KTIME_FLUSH_L2=$f KTIME_OUTPUT="$OUT/$t-$f.json" KTIME_ALSO_OUTPUT="$OUT/$t-$f.txt" \
            LD_PRELOAD="$LIB" "$APP" 16 $LAUNCHES >"$OUT/$t-$f.out" 2>"$OUT/$t-$f.err"
        echo $? >"$OUT/$t-$f.rc"
    done
done

python3 - "$OUT" "$LAUNCHES" <<'PY'
import json, os, sys
out, launches = sys.argv[1], int(sys.argv[2])
n = fails = 0
def check(ok, what):
    global n, fails
    n += 1
    fails += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
rows = []
for t in ("events", "cupti"):
    reps = {}
    for f in ("0", "1"):
        rc = open(os.path.join(out, "%s-%s.rc" % (t, f))).read().strip()
        check(rc == "0", "%s flush=%s: exit status 0 (%s)" % (t, f, rc))
        try:
            reps[f] = json.load(open(os.path.join(out, "%s-%s.json" % (t, f))))
        except (OSError, ValueError) as e:
            check(False, "%s flush=%s: JSON report (%s)" % (t, f, e))
    if len(reps) < 2:
        continue
    k = {f: {x["mangled"]: x for x in reps[f]["kernels"]} for f in reps}
    a, b = k["0"].get("_Z7l2_readPK6float4mPf"), k["1"].get("_Z7l2_readPK6float4mPf")
    if not a or not b:
        check(False, "%s: l2_read in both reports" % t)
        continue
    ratio = b["mean_us"] / a["mean_us"]
    med = b["p50_us"] / a["p50_us"]
    rows.append((t, a["mean_us"], b["mean_us"], ratio, a["p50_us"], b["p50_us"], med))
    check(ratio >= 1.15 and med >= 1.15,
          "%s: l2_read with the flush is slower: mean %.2f -> %.2f us (x%.2f), median x%.2f"
          % (t, a["mean_us"], b["mean_us"], ratio, med))
    fl = reps["1"].get("flush_l2") or {}
    past = sum(x["calls"] - x["warmup_skipped"] for x in reps["1"]["kernels"])
    check(fl.get("flushes") == past and fl.get("refused") == 0,
          "%s: a flush for every launch past warmup: %s flushes, %s refused, %d launches past warmup"
          % (t, fl.get("flushes"), fl.get("refused"), past))
    check(reps["0"].get("flush_l2") is None, "%s: without KTIME_FLUSH_L2 the JSON says null" % t)
    txt = open(os.path.join(out, "%s-1.txt" % t)).read()
    check("cache    KTIME_FLUSH_L2:" in txt and "cold L2" in txt, "%s: the text header says the flush was on" % t)
    err = open(os.path.join(out, "%s-1.err" % t)).read()
    check(err.count("KTIME_FLUSH_L2=1") == 1, "%s: one warning on stderr" % t)
    l2 = int(open(os.path.join(out, "%s-1.out" % t)).read().split("L2 ")[1].split()[0])
    check(fl.get("bytes", 0) >= l2 > 0, "%s: buffer %s bytes >= L2 %d bytes" % (t, fl.get("bytes"), l2))
print()
print("| timer | l2_read mean us, warm | with KTIME_FLUSH_L2 | ratio | median warm | median flushed | ratio |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    print("| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |" % r)
print("%d passed, %d failed" % (n - fails, fails))
sys.exit(1 if fails else 0)
PY
