#!/usr/bin/env python3
"""exit_diag.py BUILD [--reps N] [--k K]: where the time from main's return to the process's
end goes, on the GPU machine (carry BUILD; needs BUILD/bench from tools/bench/build.sh and
BUILD/src/.libs/libktime.so).

Runs `bench kernels K --launches 7 --exit-timer` (the benchmark's exit workload) N times under
each configuration, interleaved:

  bare            nothing preloaded
  ktime-disabled  KTIME_DISABLE=1: the library loaded, nothing done
  ktime-nogate    KTIME_WARMUP=0 KTIME_GATE=0: timed, no pinned gate memory, no watchdog
  ktime           KTIME_WARMUP=0 (default gates), KTIME_LOG=debug
  ktime-cap64     KTIME_WARMUP=0 KTIME_POOL_CAP=64: 64 event pairs instead of 1024 or more

and prints, per configuration, the median and range of the exit time (CLOCK_MONOTONIC after
the parent's wait() minus what the program printed just before returning) and, for ktime, the
median of each part of its own exit work as KTIME_LOG=debug reports it. What is left (ktime's
exit minus bare's minus ktime's own work) is the CUDA teardown of what ktime created: its
event pairs, its pinned gate words. Exit 77 without a GPU.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "bare": {},
    "ktime-disabled": {"KTIME_DISABLE": "1"},
    "ktime-nogate": {"KTIME_WARMUP": "0", "KTIME_GATE": "0"},
    "ktime": {"KTIME_WARMUP": "0", "KTIME_LOG": "debug"},
    "ktime-cap64": {"KTIME_WARMUP": "0", "KTIME_POOL_CAP": "64"},
}
EXIT_RE = re.compile(r"exit: ([0-9.]+) ms to stop the drain thread, ([0-9.]+) ms to drain, "
                     r"([0-9.]+) ms to build (\d+) rows, ([0-9.]+) ms to write")


def run(bench, lib, k, cfg, tmp, i):
    env = dict(os.environ)
    for v in [x for x in env if x.startswith("KTIME_")]:
        del env[v]
    if cfg != "bare":
        env["LD_PRELOAD"] = lib
        env["KTIME_OUTPUT"] = os.path.join(tmp, "%s-%d.json" % (cfg, i))
    env.update(CONFIGS[cfg])
    p = subprocess.Popen([bench, "kernels", str(k), "--launches", "7", "--exit-timer"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    t_end = time.monotonic_ns()
    m = re.search(r"main_return_ns=(\d+)", out)
    if p.returncode != 0 or not m:
        return {"rc": p.returncode, "err": err[-500:]}
    r = {"rc": 0, "exit_ms": (t_end - int(m.group(1))) * 1e-6}
    e = EXIT_RE.search(err)
    if e:
        r.update(stop=float(e.group(1)), drain=float(e.group(2)), build=float(e.group(3)),
                 write=float(e.group(5)))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--k", type=int, default=1000)
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "bench")
    lib = os.path.abspath(os.path.join(a.build, "src", ".libs", "libktime.so"))
    try:
        gpu = subprocess.call(["nvidia-smi", "-L"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) == 0
    except OSError:
        gpu = False
    if not gpu:
        print("no GPU")
        return 77
    tmp = tempfile.mkdtemp(prefix="ktime-exit-diag-")
    res = {c: [] for c in CONFIGS}
    names = list(CONFIGS)
    for i in range(a.reps):
        for j in range(len(names)):
            cfg = names[(i + j) % len(names)]  # rotate the starting configuration
            r = run(bench, lib, a.k, cfg, tmp, i)
            res[cfg].append(r)
            if r["rc"]:
                print("%s rep %d: rc %s %s" % (cfg, i, r["rc"], r.get("err", "")))
    print("bench kernels %d --launches 7 --exit-timer, %d repetitions; ms, median [min-max]"
          % (a.k, a.reps))
    base = None
    for cfg in names:
        xs = [r["exit_ms"] for r in res[cfg] if not r["rc"]]
        if not xs:
            print("%-15s no successful run" % cfg)
            continue
        med = statistics.median(xs)
        if cfg == "bare":
            base = med
        line = "%-15s exit %7.1f [%.1f-%.1f]" % (cfg, med, min(xs), max(xs))
        if base is not None and cfg != "bare":
            line += "  vs bare %+6.1f" % (med - base)
        parts = [k for k in ("stop", "drain", "build", "write") if any(k in r for r in res[cfg])]
        if parts:
            own = [sum(r[k] for k in parts) for r in res[cfg] if "stop" in r]
            line += "  ktime's own work %.2f (%s)" % (statistics.median(own), ", ".join(
                "%s %.2f" % (k, statistics.median([r[k] for r in res[cfg] if k in r])) for k in parts))
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
