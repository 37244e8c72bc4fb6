"""Stand-in for the GPU test programs, for checking run.sh and compare.py without a GPU.

Prints what the real programs print and, when preloaded "libraries" are named in LD_PRELOAD,
writes the reports they would write: a ktime JSON (docs/report-format.md) and a kcount JSON.
Each workload has a planted fault, so the summary table can be checked:
  static   all good                 shared   ktime misses 3 launches of one kernel
  ptds     ktime mean below CUPTI   driver   stdout differs under ktime
  driver -r: exits 3 under ktime (a crash at exit)
  paths    all good: a kernel run as a 5-node graph replayed 60 times (CUPTI sees the nodes,
           ktime the 3 captured launches and a graph row) and a kernel on 2 GPUs
usage: fakeapp.py WORKLOAD [args...]
"""
import json
import os
import sys

WARMUP_NS = 80000
KERNELS = [  # mangled, expect key, count, hardware ns
    ("_Z8ktg_spinILi0EEvPjy", "ktg_spinILi0E", 200, 5600),
    ("_Z8ktg_spinILi1EEvPjy", "ktg_spinILi1E", 100, 50400),
    ("_Z8ktg_spinILi3EEvPjy", "ktg_spinILi3E", 15, 1000300),
]


def paths(warmup, ktime_on, kcount_on):
    """The paths workload: graph lines and per-device counts, all consistent."""
    print("expect kp_nodeILi0E 180\ngraph kp_node 60 5\nexpect kp_multi 300")
    print("expect_device kp_multi 0 150\nexpect_device kp_multi 1 150\nchecksum 00ff")
    sys.stdout.flush()
    node, multi = "_Z7kp_nodeILi0EEvPjy", "_Z8kp_multiPjy"
    if kcount_on and os.environ.get("KCOUNT_OUTPUT"):
        ks = []
        for m, n, ns, per in ((node, 180, 11000, {"0": 180}), (multi, 300, 10400, {"0": 150, "1": 150})):
            durs = [ns] * n
            ks.append({"mangled": m, "count": n, "complete": n, "sum_ns": sum(durs),
                       "min_ns": ns, "max_ns": ns, "median_ns": float(ns), "per_device": per,
                       "durations_ns": durs})
        with open(os.environ["KCOUNT_OUTPUT"], "w") as f:
            json.dump({"tool": "kcount", "report_via": "atexit", "final_flush_result": 0,
                       "records": 480, "incomplete": 0, "dropped": 0, "kernels": ks}, f)
    if ktime_on and os.environ.get("KTIME_OUTPUT"):
        def row(m, kind, calls, timed, mean, per):
            return {"name": m, "mangled": m, "kind": kind, "devices": [p["device"] for p in per],
                    "calls": calls, "warmup_skipped": calls - timed if kind == "kernel" else min(calls, warmup),
                    "captured": 0, "dropped": 0, "failed": 0, "incomplete": 0, "timed": timed,
                    "total_ms": (mean or 0) * timed / 1000.0, "percent": 0.0, "mean_us": mean,
                    "min_us": mean, "max_us": mean, "stddev_us": 0.0, "sum_us": (mean or 0) * timed,
                    "m2_us2": 0.0, "per_device": per}
        w = min(300, warmup)
        ks = [row(node, "kernel", 3, 0, None, []),
              row(multi, "kernel", 300, 300 - w, 14.5,
                  [{"device": 0, "timed": 150 - w}, {"device": 1, "timed": 150}]),
              row("graph 1 (5 kernel nodes of 5)", "graph", 60, 60 - min(60, warmup), 90.0,
                  [{"device": 0, "timed": 60 - min(60, warmup)}])]
        ks[0]["warmup_skipped"] = 3
        doc = {"schema_version": 1, "command": [os.environ.get("FAKE_ARGV0", sys.argv[0])],
               "warmup": warmup, "kernels": ks,
               "totals": {"launches_seen": 363, "dropped": 0, "incomplete_at_exit": 0,
                          "captured": 0, "failed_launches": 0}}
        with open(os.environ["KTIME_OUTPUT"], "w") as f:
            json.dump(doc, f, indent=2)
    return 0


def main():
    wl = sys.argv[1]
    release = "-r" in sys.argv[2:]
    preload = os.environ.get("LD_PRELOAD", "")
    ktime_on = "libktime" in preload and os.environ.get("KTIME_DISABLE") != "1"
    kcount_on = "libkcount" in preload
    warmup = int(os.environ.get("KTIME_WARMUP", "5"))
    if wl == "paths":
        return paths(warmup, ktime_on, kcount_on)

    print("ktime gpu test app (fake %s)" % wl)
    for m, key, n, ns in KERNELS:
        print("expect %s %d" % (key, n))
    checksum = "0123456789abcdef"
    if wl == "driver" and ktime_on and not release:
        checksum = "fedcba9876543210"
    print("checksum %s" % checksum)
    sys.stdout.flush()

    if kcount_on and os.environ.get("KCOUNT_OUTPUT"):
        ks = []
        for m, key, n, ns in KERNELS:
            durs = [WARMUP_NS if i < warmup else ns + (i % 3) * 10 for i in range(n)]
            s = sorted(durs)
            ks.append({"mangled": m, "count": n, "complete": n, "sum_ns": sum(durs),
                       "min_ns": s[0], "max_ns": s[-1], "median_ns": float(s[n // 2]),
                       "durations_ns": durs})
        doc = {"tool": "kcount", "format_version": 1, "pid": os.getpid(),
               "command": sys.argv, "report_via": "atexit", "final_flush_result": 0,
               "records": sum(k["count"] for k in ks), "incomplete": 0, "dropped": 0,
               "kernels": ks}
        with open(os.environ["KCOUNT_OUTPUT"], "w") as f:
            json.dump(doc, f)

    if ktime_on and os.environ.get("KTIME_OUTPUT"):
        ks = []
        for m, key, n, ns in KERNELS:
            calls = n - 3 if (wl == "shared" and key == "ktg_spinILi1E") else n
            timed = calls - min(calls, warmup)
            post = [ns + (i % 3) * 10 for i in range(warmup, calls)]
            bias = -2000 if wl == "ptds" and key == "ktg_spinILi0E" else 4100
            mean_us = (sum(post) / len(post) + bias) / 1000.0
            ks.append({"name": m, "mangled": m, "devices": [0], "calls": calls,
                       "warmup_skipped": min(calls, warmup), "captured": 0, "dropped": 0,
                       "failed": 0, "timed": timed, "total_ms": mean_us * timed / 1000.0,
                       "percent": 0.0, "mean_us": mean_us, "min_us": mean_us - 0.1,
                       "max_us": mean_us + 0.1, "stddev_us": 0.05, "sum_us": mean_us * timed,
                       "m2_us2": 1.0, "per_device": []})
        doc = {"schema_version": 1, "ktime_version": "0.1.0",
               "command": [os.environ.get("FAKE_ARGV0", sys.argv[0])] + sys.argv[2:],
               "pid": os.getpid(),
               "timing_method": "cuda-events", "warmup": warmup,
               "devices": [{"ordinal": 0, "name": "Fake GPU", "driver_version": 13000}],
               "kernels": ks,
               "totals": {"launches_seen": sum(k["calls"] for k in ks),
                          "timed": sum(k["timed"] for k in ks),
                          "warmup_skipped": sum(k["warmup_skipped"] for k in ks),
                          "captured": 0, "dropped": 0,
                          "dropped_reasons": {"pool_exhausted": 0, "event_error": 0,
                                              "no_context": 0, "shutdown": 0},
                          "failed_launches": 0, "incomplete_at_exit": 0,
                          "timed_total_ms": 1.0}}
        with open(os.environ["KTIME_OUTPUT"], "w") as f:
            json.dump(doc, f, indent=2)
    if release and ktime_on:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
