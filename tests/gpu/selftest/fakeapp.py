"""Stand-in for the GPU test programs, for checking run.sh and compare.py without a GPU.

Prints what the real programs print and, when preloaded "libraries" are named in LD_PRELOAD,
writes the reports they would write: a ktime JSON (docs/report-format.md) and a kcount JSON.
Each workload has a planted fault, so the summary table can be checked:
  static   all good                 shared   ktime misses 3 launches of one kernel
  ptds     ktime mean below CUPTI   driver   stdout differs under ktime
  driver -r: exits 3 under ktime (a crash at exit)
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


def main():
    wl = sys.argv[1]
    release = "-r" in sys.argv[2:]
    preload = os.environ.get("LD_PRELOAD", "")
    ktime_on = "libktime" in preload and os.environ.get("KTIME_DISABLE") != "1"
    kcount_on = "libkcount" in preload
    warmup = int(os.environ.get("KTIME_WARMUP", "5"))

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
