#!/usr/bin/env python3
"""Issue 12's report features on a real GPU: quantiles against the same run's raw samples,
launch shapes, and the trace.

For each workload, one run under ktime per timer (events, cupti) with KTIME_DUMP_SAMPLES (every
sample of the run), KTIME_TRACE and KTIME_GROUP=shape, JSON report. Checks, per kernel with at
least 10 samples: p50/p90/p99 within 1 % of the exact quantiles (rank floor(q * (n - 1))) of the
dumped samples of the same run, and the dump holds exactly `timed` samples; the shapes' timed
plus other_shapes' equal timed; the trace has a slice per timed sample that was placed
(otherData.unplaced counts the others), every slice well formed, slices of one stream never
overlapping (events: 0.5 us resolution).

usage: reports.py --lib LIB --gpu BUILD/gpu --out DIR
Writes DIR/reports.md (and keeps one events report as DIR/fixture-torch_mlp.json for the offline
tools' tests). Exit 77 without a GPU; 1 when a check fails.
"""
import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timers import HERE, WARMUP, need_gpu, run, short  # noqa: E402

WORKLOADS = [("static", ["app_static"]), ("driver", ["app_driver"]),
             ("paths", ["app_paths", "-s", "cluster,coop,streams,rtc"]),
             ("torch_mlp", [os.path.join(HERE, "torch_mlp.py")]),
             ("triton", [os.path.join(HERE, "workloads", "triton_add.py")])]
QS = (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99))


def one(path):
    with open(path) as f:
        return json.load(f)


def dumped(pattern):
    """mangled -> sorted samples (us), from every dump file of the run."""
    s = {}
    for p in glob.glob(pattern):
        with open(p) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                name, _dev, us = line.rstrip("\n").split("\t")
                s.setdefault(name, []).append(float(us))
    for v in s.values():
        v.sort()
    return s


def check_trace(t, doc, timer, bad):
    ev = t.get("traceEvents", [])
    x = [e for e in ev if e.get("ph") == "X"]
    for e in ev:
        if not {"name", "ph", "pid"} <= e.keys() or \
                (e["ph"] == "X" and not {"ts", "dur", "tid", "args"} <= e.keys()):
            bad.append("trace: malformed event %r" % e)
            break
    timed = sum(k["timed"] for k in doc["kernels"])
    od = t.get("otherData", {})
    if len(x) + od.get("unplaced", 0) + od.get("dropped", 0) != timed:
        bad.append("trace: %d slices + %d unplaced + %d dropped != %d timed" % (
            len(x), od.get("unplaced", 0), od.get("dropped", 0), timed))
    tracks, overlaps = {}, 0
    for e in x:
        tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"]))
    tol = 0.6 if timer == "events" else 0.001
    for v in tracks.values():
        v.sort()
        overlaps += sum(1 for a, b in zip(v, v[1:]) if b[0] < a[0] + a[1] - tol)
    if overlaps:
        bad.append("trace: %d overlapping slices on one stream" % overlaps)
    return len(x), od.get("unplaced", 0), len(tracks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "reports-out"))
    a = ap.parse_args()
    need_gpu()
    lib, gpu = os.path.abspath(a.lib), os.path.abspath(a.gpu)
    tmp = tempfile.mkdtemp(prefix="ktime-reports.")
    os.makedirs(a.out, exist_ok=True)
    rows, qrows, problems, worst = [], [], [], 0.0
    for name, argv in WORKLOADS:
        cmd = ([os.path.join(gpu, argv[0])] + argv[1:]) if not argv[0].endswith(".py") \
            else [sys.executable] + argv
        for timer in ("events", "cupti"):
            d = os.path.join(tmp, "%s-%s" % (name, timer))
            os.makedirs(d)
            rc, out, err, secs = run(cmd, {
                "LD_PRELOAD": lib, "KTIME_TIMER": timer, "KTIME_WARMUP": str(WARMUP),
                "KTIME_OUTPUT": os.path.join(d, "r.%p.json"), "KTIME_GROUP": "shape",
                "KTIME_DUMP_SAMPLES": os.path.join(d, "s.%p.txt"),
                "KTIME_TRACE": os.path.join(d, "t.%p.json")}, d)
            bad = []
            reps = sorted(glob.glob(os.path.join(d, "r.*.json")))
            if rc != 0 or not reps:
                problems.append("%s/%s: rc %s, %d reports; stderr %s" % (name, timer, rc, len(reps),
                                                                        err.strip()[-300:]))
                continue
            # A Python workload may start helper processes: the one that launched is the report
            # with kernels.
            docs = [one(p) for p in reps]
            doc = max(docs, key=lambda x: len(x.get("kernels", [])))
            pid = doc["pid"]
            samples = dumped(os.path.join(d, "s.%d.txt" % pid))
            nq = nshapes = 0
            for k in doc["kernels"]:
                if k.get("kind") == "graph":
                    continue
                s = samples.get(k["mangled"], [])
                if len(s) != k["timed"]:
                    bad.append("%s: %d dumped samples, %d timed" % (short(k["mangled"], 50), len(s),
                                                                   k["timed"]))
                    continue
                shaped = sum(x["timed"] for x in k.get("shapes", [])) + \
                    (k["other_shapes"]["timed"] if k.get("other_shapes") else 0)
                if shaped != k["timed"]:
                    bad.append("%s: shapes hold %d of %d samples" % (short(k["mangled"], 50),
                                                                     shaped, k["timed"]))
                nshapes += len(k.get("shapes", []))
                if len(s) < 10:
                    continue
                nq += 1
                cells = []
                for key, q in QS:
                    exact = s[int(math.floor(q * (len(s) - 1)))]
                    err_pc = 100 * (k[key] - exact) / exact if exact else 0.0
                    worst = max(worst, abs(err_pc))
                    if abs(err_pc) > 1.0 + 1e-6:
                        bad.append("%s: %s %.4f, exact %.4f (%+.3f %%)" % (
                            short(k["mangled"], 50), key, k[key], exact, err_pc))
                    cells.append("%.3f / %.3f (%+.2f %%)" % (k[key], exact, err_pc))
                if name in ("torch_mlp", "static") or len(qrows) < 6:
                    qrows.append("| %s | %s | `%s` | %d | %s |" % (name, timer, short(k["mangled"], 40),
                                                                   len(s), " | ".join(cells)))
            tpath = os.path.join(d, "t.%d.json" % pid)
            nslices = unplaced = ntracks = 0
            if os.path.exists(tpath):
                nslices, unplaced, ntracks = check_trace(one(tpath), doc, timer, bad)
            else:
                bad.append("no trace file")
            if name == "torch_mlp" and timer == "events":
                shutil.copy(reps[reps.index(next(p for p in reps if one(p)["pid"] == pid))],
                            os.path.join(a.out, "fixture-torch_mlp.json"))
            rows.append("| %s | %s | %d | %d | %d | %d | %d (%d unplaced), %d tracks | %s |" % (
                name, timer, len(doc["kernels"]), sum(k["timed"] for k in doc["kernels"]), nq,
                nshapes, nslices, unplaced, ntracks, "; ".join(bad[:3]) or "ok"))
            problems += ["%s/%s: %s" % (name, timer, b) for b in bad[:10]]
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()
    text = "\n".join([
        "# Quantiles, shapes and the trace on a GPU (tests/gpu/reports.py)", "",
        "%s; %s UTC; warmup %d; each run with KTIME_DUMP_SAMPLES, KTIME_TRACE, KTIME_GROUP=shape" % (
            smi[0] if smi else "?", time.strftime("%Y-%m-%d %H:%M", time.gmtime()), WARMUP), "",
        "| workload | timer | kernels | timed | kernels checked (>= 10 samples) | shapes | trace slices "
        "| problems |", "| --- | --- | --- | --- | --- | --- | --- | --- |"] + rows + [
        "", "Quantiles against the exact ones of the same run's dumped samples (ktime / exact):", "",
        "| workload | timer | kernel | samples | p50 us | p90 us | p99 us |",
        "| --- | --- | --- | --- | --- | --- | --- |"] + qrows + [
        "", "largest quantile difference: %.3f %% (bound 1 %%)" % worst, "",
        "## Problems", ""] + (["- " + p for p in problems] or ["none"]) + [""])
    with open(os.path.join(a.out, "reports.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if rows and not problems else 1)


if __name__ == "__main__":
    main()
