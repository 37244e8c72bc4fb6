#!/usr/bin/env python3
"""untimed_fake.py: ktime's added wall time per untimed launch, against the fake driver.

On a GPU the launch itself costs 3 to 4 us and varies by 300 to 650 ns between repetitions,
more than ktime's whole untimed path (tools/bench/run.py cannot resolve the 50 ns target
there). Through the fake driver of the test suite a launch costs under 100 ns and the driver
work is the same with and without ktime, so the difference is ktime's own: interposition
(KTIME_DISABLE=1) and the warmup path (every launch within KTIME_WARMUP). Runs on any machine,
no GPU:

    python3 tools/bench/untimed_fake.py --build build [--n 4000000] [--reps 9] [--preload-first LIB]

BUILD is a configured and built tree (`make check` builds the fake driver and the test
programs). Each repetition runs every configuration, rotated, twice: N launches and 1 launch;
the difference over N - 1 takes out process start and exit. Prints the median per
configuration, the added ns per launch against bare, and the CPU it ran on. --preload-first
names a library preloaded before libktime, as a sanitizer build of it needs its runtime
(the test suite runs this against its AddressSanitizer build too).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

CONFIGS = {
    "bare": {},
    "ktime-disabled": {"KTIME_DISABLE": "1"},
    "ktime-warmup": {"KTIME_WARMUP": "1000000000", "KTIME_OUTPUT": os.devnull},
}


def run_s(app, n, env):
    t0 = time.perf_counter()
    r = subprocess.run([app, "k=0:%d" % n], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    t = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s" % (app, r.returncode,
                                                     r.stderr.decode(errors="replace")[-300:]))
    return t


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def measure(build, n=4000000, reps=9, log=None, preload_first=None):
    """Runs the measurement; returns {"n", "reps", "cpu", "ns": {config: [ns per launch]}}
    (one value per repetition, in repetition order), or raises RuntimeError when the build
    lacks the fake driver or its programs."""
    b = os.path.abspath(build)
    app = os.path.join(b, "tests", "e2e", "app_cudart")
    lib = os.path.join(b, "src", ".libs", "libktime.so")
    fake = [os.path.join(b, "tests", "fake", ".libs"), os.path.join(b, "tests", "fake")]
    for p in (app, lib):
        if not os.path.exists(p):
            raise RuntimeError("%s not found: build the tree and its tests (make check)" % p)
    base = dict(os.environ)
    base["LD_LIBRARY_PATH"] = ":".join(fake + [base.get("LD_LIBRARY_PATH", "")])
    for k in [k for k in base if k.startswith("KTIME_")]:
        del base[k]
    base.pop("LD_PRELOAD", None)
    envs = {}
    for cfg, extra in CONFIGS.items():
        e = dict(base, **extra)
        if cfg != "bare":
            e["LD_PRELOAD"] = preload_first + ":" + lib if preload_first else lib
        envs[cfg] = e
    names = list(CONFIGS)
    per = {c: [] for c in names}
    for rep in range(reps):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for cfg in order:
            t_n = run_s(app, n, envs[cfg])
            t_1 = run_s(app, 1, envs[cfg])
            per[cfg].append((t_n - t_1) / (n - 1) * 1e9)
        if log:
            log("untimed (fake driver) rep %d/%d: %s" % (rep + 1, reps, " ".join(
                "%s=%.1f" % (c, per[c][-1]) for c in names)))
    return {"n": n, "reps": reps, "cpu": "%s (%d CPUs)" % (cpu_name(), os.cpu_count() or 0),
            "ns": per}


def paired_added(res, cfg):
    """Median over repetitions of (cfg - bare) ns per launch, runs of one repetition paired."""
    d = [x - y for x, y in zip(res["ns"][cfg], res["ns"]["bare"])]
    return statistics.median(d) if d else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=4000000, help="launches per run")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--preload-first", metavar="LIB",
                    help="a library to preload before libktime (a sanitizer's runtime)")
    a = ap.parse_args()
    try:
        res = measure(a.build, a.n, a.reps, preload_first=a.preload_first)
    except RuntimeError as e:
        sys.exit("untimed_fake: %s" % e)
    per = res["ns"]
    bare = statistics.median(per["bare"])
    print("untimed_fake: %d launches x %d repetitions, fake driver, %s, %s" % (
        a.n, a.reps, res["cpu"], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    print("| config | ns per launch (median) | min-max | added vs bare | paired added (median) |")
    print("| --- | ---: | --- | ---: | ---: |")
    for c in per:
        v = per[c]
        print("| %s | %.1f | %.1f-%.1f | %+.1f | %s |" % (
            c, statistics.median(v), min(v), max(v), statistics.median(v) - bare,
            "-" if c == "bare" else "%+.1f" % paired_added(res, c)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
