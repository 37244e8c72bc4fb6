#!/usr/bin/env python3
"""ab.py - the launch path of two builds of libktime side by side, in one run on one GPU.

    python3 tools/bench/ab.py --bench build/bench/bench --a OLD/libktime.so --b NEW/libktime.so \
        [--name-a OLD --name-b NEW] [--reps 15] [--n 200000] [--warmup 20000] [--out DIR]

bench.cu's `launch` workload (back-to-back empty kernels on one stream) runs under each
configuration once per repetition, the starting one rotating:
  bare          nothing preloaded
  raw-events    no tool; bench records an event pair around each launch itself
  A-untimed     build A, KTIME_WARMUP=1000000000 (every launch on the untimed path)
  A-timed       build A, KTIME_WARMUP=0 (every launch timed; gates as by default)
  B-untimed, B-timed   the same for build B
Each run's ns per launch (bench's own loop time over N) is kept; per repetition the cost over
bare is the run's ns less bare's in that repetition. Printed last: the medians, quartiles and,
for each path, B's cost less A's with the spread of the paired differences over the repetitions,
against the noise of bare itself (its quartile range). Writes DIR/ab.json and DIR/ab.md.
Exit status: 0 measured, 2 a run failed.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys


def parse(text):
    vals = {}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            for tok in line.split()[1:]:
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    try:
                        vals[k] = float(v)
                    except ValueError:
                        vals[k] = v
    return vals


def quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 4:
        return xs[0], statistics.median(xs), xs[-1]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[1], q[2]


def gpu():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        return out.splitlines()[0] if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--a", required=True, help="libktime.so of build A (the reference)")
    ap.add_argument("--b", required=True, help="libktime.so of build B")
    ap.add_argument("--name-a", default="A")
    ap.add_argument("--name-b", default="B")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--warmup", type=int, default=20000)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if not k.startswith("KTIME_") and k != "LD_PRELOAD"}
    base["KTIME_OUTPUT"] = os.path.join(a.out, "ab-report.%p.json")
    configs = {
        "bare": ({}, []),
        "raw-events": ({}, ["--raw-events"]),
        "A-untimed": ({"LD_PRELOAD": a.a, "KTIME_WARMUP": "1000000000"}, []),
        "A-timed": ({"LD_PRELOAD": a.a, "KTIME_WARMUP": "0"}, []),
        "B-untimed": ({"LD_PRELOAD": a.b, "KTIME_WARMUP": "1000000000"}, []),
        "B-timed": ({"LD_PRELOAD": a.b, "KTIME_WARMUP": "0"}, []),
    }
    names = list(configs)
    data = {n: [] for n in names}
    for rep in range(a.reps):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for n in order:
            env, extra = configs[n]
            cmd = [a.bench, "launch", str(a.n), "--warmup", str(a.warmup)] + extra
            p = subprocess.run(cmd, env=dict(base, **env), capture_output=True, text=True, timeout=300)
            v = parse(p.stdout)
            if p.returncode != 0 or "ns_per_launch" not in v:
                sys.stderr.write("ab.py: %s failed (status %d): %s\n" % (n, p.returncode, p.stderr[-2000:]))
                return 2
            data[n].append(v["ns_per_launch"])
        print("rep %d: %s" % (rep, " ".join("%s=%.1f" % (n, data[n][-1]) for n in names)), flush=True)
    for f in os.listdir(a.out):
        if f.startswith("ab-report."):
            os.unlink(os.path.join(a.out, f))

    cost = {n: [data[n][i] - data["bare"][i] for i in range(a.reps)] for n in names}
    rows = []
    for n in names:
        q1, med, q3 = quartiles(data[n])
        c1, cmed, c3 = quartiles(cost[n])
        rows.append((n, med, q1, q3, cmed, c1, c3))
    diffs = {}
    for path in ("untimed", "timed"):
        d = [cost["B-" + path][i] - cost["A-" + path][i] for i in range(a.reps)]
        diffs[path] = quartiles(d)
    bq1, _, bq3 = quartiles(data["bare"])
    lines = ["# Launch path: %s against %s" % (a.name_b, a.name_a), "",
             "%s, GPU %s, bench launch %d (warmup %d), %d repetitions interleaved, starting "
             "configuration rotating. A = %s, B = %s." % (
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 gpu(), a.n, a.warmup, a.reps, a.name_a, a.name_b), "",
             "| configuration | ns/launch median | q1 | q3 | over bare, median | q1 | q3 |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % r)
    lines += ["", "| path | B's cost less A's, median of paired differences (ns) | q1 | q3 |",
              "| --- | ---: | ---: | ---: |"]
    for path, (q1, med, q3) in diffs.items():
        lines.append("| %s | %+.1f | %+.1f | %+.1f |" % (path, med, q1, q3))
    lines += ["", "Noise: bare's own quartile range over the repetitions is %.1f ns." % (bq3 - bq1)]
    text = "\n".join(lines) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "ab.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "ab.json"), "w") as f:
        json.dump({"args": vars(a), "ns_per_launch": data, "gpu": gpu()}, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
