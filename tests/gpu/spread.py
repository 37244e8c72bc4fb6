#!/usr/bin/env python3
"""Run-to-run spread of kernel means, to read timers.py's 'means within 0.1 %' check against.

timers.py compares ktime's CUPTI-timer mean of a kernel with libkcount's mean from a separate
process (one CUPTI client at a time). This runs one program alternately under libkcount alone
and under ktime with KTIME_TIMER=cupti, REPS times each, and prints every kernel's mean (over
the records after the first KTIME_WARMUP, as timers.py takes them) per run: the spread between
two libkcount runs is what the cross-process comparison cannot tell apart from an error.

usage: spread.py --lib LIB --gpu BUILD/gpu [--reps 4] [--out DIR] [-- PROGRAM ARGS...]
       (default program: BUILD/gpu/app_paths)
Writes DIR/spread.md and prints it. Exit 77 without a GPU.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timers import WARMUP, need_gpu, kcount_kernels, ktime_kernels, load_all, run, short  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--out", default=os.environ.get("OUT", "spread-out"))
    ap.add_argument("cmd", nargs="*")
    a = ap.parse_args()
    need_gpu()
    lib, gpu = os.path.abspath(a.lib), os.path.abspath(a.gpu)
    cmd = a.cmd or [os.path.join(gpu, "app_paths")]
    tmp = tempfile.mkdtemp(prefix="ktime-spread.")
    means = {}  # mangled -> {"kcount": [...], "cupti": [...]}
    for i in range(a.reps):
        for tag in ("kcount", "cupti"):
            j = os.path.join(tmp, "%s-%d.%%p.json" % (tag, i))
            env = ({"LD_PRELOAD": os.path.join(gpu, "libkcount.so"), "KCOUNT_OUTPUT": j}
                   if tag == "kcount" else
                   {"LD_PRELOAD": lib, "KTIME_TIMER": "cupti", "KTIME_OUTPUT": j,
                    "KTIME_WARMUP": str(WARMUP)})
            rc, _, err, _ = run(cmd, env, tmp)
            if rc != 0:
                print("%s run %d: rc %s: %s" % (tag, i, rc, err.strip()[-200:]))
            docs = load_all(j.replace("%p", "*"))
            if tag == "kcount":
                for m, k in kcount_kernels(docs).items():
                    durs = [x for x in k["durs"][WARMUP:] if x is not None]
                    if durs:
                        means.setdefault(m, {"kcount": [], "cupti": []})["kcount"].append(
                            statistics.fmean(durs) / 1000.0)
            else:
                for m, k in ktime_kernels(docs).items():
                    if k["mean"] is not None:
                        means.setdefault(m, {"kcount": [], "cupti": []})["cupti"].append(k["mean"])
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    lines = ["# Run-to-run spread of kernel means (tests/gpu/spread.py)", "",
             "%s; %s UTC; %s; %d runs each, alternating" % (
                 smi, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), " ".join(
                     os.path.basename(c) for c in cmd), a.reps), "",
             "| kernel | libkcount means us | spread % | ktime CUPTI-timer means us | spread % "
             "| ktime median vs libkcount median % |",
             "| --- | --- | --- | --- | --- | --- |"]

    def spread(v):
        return 100 * (max(v) - min(v)) / statistics.median(v) if v else float("nan")

    for m, v in sorted(means.items()):
        kc, ct = v["kcount"], v["cupti"]
        rel = (100 * (statistics.median(ct) - statistics.median(kc)) / statistics.median(kc)
               if kc and ct else float("nan"))
        lines.append("| `%s` | %s | %.2f | %s | %.2f | %+.2f |" % (
            short(m, 40), " ".join("%.3f" % x for x in kc), spread(kc),
            " ".join("%.3f" % x for x in ct), spread(ct), rel))
    text = "\n".join(lines) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "spread.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
