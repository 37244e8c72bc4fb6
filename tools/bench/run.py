#!/usr/bin/env python3
"""ktime overhead benchmark: runs the workloads of bench.cu / torch_loop.py under each
configuration, interleaved, and checks the results against ktime's overhead targets.

    python3 tools/bench/run.py --lib build/src/.libs/libktime.so --bin build/bench --out $OUT
    python3 tools/bench/run.py --analyze-only OUT/bench.json [--out DIR]   # no GPU needed
    python3 tools/bench/run.py --selftest                                   # no GPU needed

--bin is the folder tools/bench/build.sh filled (bench, libcuptitrace.so). Configurations:
  bare            nothing preloaded
  ktime-disabled  libktime with KTIME_DISABLE=1
  ktime-warmup    libktime with KTIME_WARMUP=1000000000 (every launch on the untimed path)
  ktime-timed     libktime with KTIME_WARMUP=0 (every launch timed; launch gates as by
                  default, KTIME_GATE=auto: only where the stream may be idle)
  ktime-gated     the same with KTIME_GATE=1 (every timed launch gated)
  ktime-nogate    the same with KTIME_GATE=0 (no launch gates)
  raw-events      no tool; bench itself records an event pair around each launch (--raw-events)
  cupti           libcuptitrace.so (CUPTI activity tracing of kernels, records only counted):
                  the raw tracer KTIME_TIMER=cupti is compared with
  ktime-cupti     libktime with KTIME_TIMER=cupti KTIME_WARMUP=0 (durations from CUPTI's
                  activity records, no events)
  ktime-both      libktime with KTIME_TIMER=both KTIME_WARMUP=0 (events and records: the
                  events' bias over the hardware, per kernel)
  ktime-sample16  libktime with KTIME_SAMPLE=16 KTIME_WARMUP=0 (events on about 1 launch in 16)
  torch.profiler  torch.profiler.profile(activities=[CPU, CUDA]) around the torch loop
The KTIME_TIMER / KTIME_SAMPLE configurations run only in the parts their targets need (mixed,
torch, pending).
Within each repetition every configuration runs once (the starting one rotates; the threads
part runs each once per thread count, --threads); medians over the repetitions are compared,
min/max and quartiles are kept. Every ktime run writes its JSON report to a temporary folder
and the launch counts in it are checked against what the program says it launched; a mismatch
is a loud failure (in the threads part, launches ktime counted but left untimed fail the
threads-contention target instead). Total wall time is kept under --budget-s
(default 450 s): parts that would not fit are shortened or skipped, and say so.

Writes OUT/bench.json (every raw number), OUT/bench.md (the tables, GPU, driver, date, command),
OUT/overhead.svg (plus overhead.png when matplotlib is importable) and, when the mixed part ran,
OUT/timers.svg (run time added against kernel duration, a line per timer). The final table is
printed last. Exit status: 0 all targets pass, 1 a target failed or was not measured,
2 a run or a sanity check failed, 77 no GPU.
"""
import argparse
import datetime
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import untimed_fake  # noqa: E402  (tools/bench/untimed_fake.py)

ALL_CONFIGS = ["bare", "ktime-disabled", "ktime-warmup", "ktime-timed", "ktime-gated",
               "ktime-nogate", "raw-events", "cupti", "ktime-cupti", "ktime-both", "ktime-sample16",
               "torch.profiler"]
KTIME_ENV = {
    "ktime-disabled": {"KTIME_DISABLE": "1"},
    "ktime-warmup": {"KTIME_WARMUP": "1000000000"},
    # timed, launch gates as by default (KTIME_GATE=auto: only where the stream may be idle)
    "ktime-timed": {"KTIME_WARMUP": "0"},
    # timed, every launch gated (KTIME_GATE=1)
    "ktime-gated": {"KTIME_WARMUP": "0", "KTIME_GATE": "1"},
    # timed, without launch gates (KTIME_GATE=0): the cost of the gate itself
    "ktime-nogate": {"KTIME_WARMUP": "0", "KTIME_GATE": "0"},
    # kernel durations from CUPTI activity records, no events on the launch path (issue 11)
    "ktime-cupti": {"KTIME_TIMER": "cupti", "KTIME_WARMUP": "0"},
    # events and records: the report gives the events' bias over the hardware per kernel
    "ktime-both": {"KTIME_TIMER": "both", "KTIME_WARMUP": "0"},
    # events on about one launch in 16, at random (every launch drawn: no warmup)
    "ktime-sample16": {"KTIME_SAMPLE": "16", "KTIME_WARMUP": "0"},
}
# configurations each workload runs under
WORKLOAD_CONFIGS = {
    "launch": ["bare", "ktime-disabled", "ktime-warmup", "ktime-timed", "ktime-gated",
               "ktime-nogate", "raw-events", "cupti"],
    "mixed": ["bare", "ktime-disabled", "ktime-warmup", "ktime-timed", "ktime-gated",
              "ktime-nogate", "raw-events", "cupti", "ktime-cupti", "ktime-both", "ktime-sample16"],
    "torch": ["bare", "ktime-timed", "ktime-gated", "ktime-nogate", "ktime-cupti", "torch.profiler"],
    "kernels": ["bare", "ktime-timed"],
    "exit": ["bare", "ktime-timed"],
    "pending": ["bare", "cupti", "ktime-cupti"],
    "threads": ["bare", "ktime-warmup", "raw-events", "ktime-timed", "ktime-nogate"],
    "long": ["ktime-timed"],
}
PARTS = ["untimed", "launch", "mixed", "torch", "kernels", "exit", "pending", "threads", "long"]
MIXED_SIZES = ("5", "10", "50", "500")  # us; bench mixed's parts, kernel kt_bench_spin<US>

# targets
UNTIMED_ADDED_NS = 50.0
TIMED_VS_RAW = 1.1
TORCH_RATIO = 1.3
LONG_KERNEL_SLOWDOWN = 0.01
DRAIN_CORE_FRACTION = 0.10
DRAIN_RATE = 200000.0
RSS_GROWTH_KB = 1024
PER_KERNEL_BYTES = 8192
EXIT_MS = 100.0
THREADS_CONTENTION = 1.1   # ratio to raw at the most threads / the same at the fewest
# issue 11: KTIME_TIMER=cupti over the raw CUPTI tracer, run time of back-to-back kernels
CUPTI_OVER_TRACER = (("10", 0.01), ("50", 0.005), ("500", 0.001))
TORCH_CUPTI_RATIO = 1.2
SAMPLE_SLOWDOWN = 0.05     # KTIME_SAMPLE=16, 10 us kernels, vs bare
SAMPLE_MEAN = 0.02         # KTIME_SAMPLE=16's mean of the 10 us kernel vs ktime-timed's
EXIT_WAIT_MS = 2000.0      # KTIME_EXIT_WAIT_MS's default: the report within it of main's return
CUPTI_BUFFER_MB = 8        # KTIME_CUPTI_BUFFER_MB's default: ktime's record buffers

T0 = time.monotonic()


def log(msg):
    print("[%6.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


# ---------------------------------------------------------------------------------------------
# statistics and analysis (pure: work on the data dict, so --analyze-only and --selftest use them)

def stat(values):
    v = sorted(x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x)))
    if not v:
        return None
    n = len(v)
    if n >= 2:
        q = statistics.quantiles(v, n=4, method="inclusive")
        q1, q3 = q[0], q[2]
    else:
        q1 = q3 = v[0]
    return {"n": n, "median": statistics.median(v), "min": v[0], "max": v[-1], "q1": q1, "q3": q3}


def metric(data, workload, config, key):
    """Values of RESULT key `key` over the successful runs of workload/config."""
    runs = data.get("runs", {}).get(workload, {}).get(config, [])
    out = []
    for r in runs:
        if r.get("ok") and isinstance(r.get("values", {}).get(key), (int, float)):
            out.append(float(r["values"][key]))
    return out


def med(data, workload, config, key):
    s = stat(metric(data, workload, config, key))
    return s["median"] if s else None


def threads_metric(data, config, nthreads, key="ns_per_launch"):
    """Values of `key` over the successful threads runs of `config` with `nthreads` threads
    (as the program reported it)."""
    return [float(r["values"][key]) for r in data.get("runs", {}).get("threads", {}).get(config, [])
            if r.get("ok") and r.get("values", {}).get("threads") == nthreads
            and isinstance(r["values"].get(key), (int, float))]


def paired_diffs(data, workload, config, key, base="bare"):
    """Per-repetition differences config - base (same repetition, interleaved)."""
    a = {r["rep"]: r["values"].get(key) for r in data.get("runs", {}).get(workload, {}).get(config, [])
         if r.get("ok")}
    b = {r["rep"]: r["values"].get(key) for r in data.get("runs", {}).get(workload, {}).get(base, [])
         if r.get("ok")}
    return [a[k] - b[k] for k in sorted(a) if k in b and isinstance(a[k], (int, float))
            and isinstance(b[k], (int, float))]


def paired_ratios(data, workload, config, key, base):
    """Per-repetition config / base - 1 (same repetition, interleaved)."""
    a = {r["rep"]: r["values"].get(key) for r in data.get("runs", {}).get(workload, {}).get(config, [])
         if r.get("ok")}
    b = {r["rep"]: r["values"].get(key) for r in data.get("runs", {}).get(workload, {}).get(base, [])
         if r.get("ok")}
    return [a[k] / b[k] - 1 for k in sorted(a) if k in b and isinstance(a[k], (int, float))
            and isinstance(b[k], (int, float)) and b[k]]


def mean_without_longest(data, workload, config, size):
    """Per run: the mean of kernel kt_bench_spin<size> without its longest sample, from the
    report's sum, max and count (a kernel's first launch may also load it)."""
    out = []
    for r in data.get("runs", {}).get(workload, {}).get(config, []):
        v = r.get("values", {})
        s_, m_, n_ = (v.get("spin%s_%s" % (size, k)) for k in ("sum_us", "max_us", "timed"))
        if r.get("ok") and all(isinstance(x, (int, float)) for x in (s_, m_, n_)) and n_ > 1:
            out.append((s_ - m_) / (n_ - 1))
    return out


def fallbacks(data, workload, config="ktime-cupti", want="cupti"):
    """Successful runs of `config` whose report says ktime timed with another timer than
    `want` (CUPTI could not start, or another client took it over): their figures do not
    measure KTIME_TIMER=want."""
    return sum(1 for r in data.get("runs", {}).get(workload, {}).get(config, [])
               if r.get("ok") and r.get("values", {}).get("ktime_timer_used", want) != want)


def fell_back(n, ok, detail):
    """A target's verdict and detail when n of its runs fell back to events: not measured."""
    if not n:
        return ok, detail
    return None, "%d run(s) timed with events, not CUPTI (see the sanity checks); %s" % (n, detail)


def fmt(x, spec="%.1f"):
    return "-" if x is None else spec % x


def target(tid, desc, measured, limit, ok, detail=""):
    return {"id": tid, "target": desc, "measured": measured, "limit": limit,
            "result": "n/a" if ok is None else ("PASS" if ok else "FAIL"), "detail": detail}


def analyze(data):
    """Returns (summary dict, list of targets, launch rows) from the raw data."""
    summ = {}
    targets = []

    # --- launch ---------------------------------------------------------------------------
    rows = []
    bare = med(data, "launch", "bare", "ns_per_launch")
    raw = med(data, "launch", "raw-events", "ns_per_launch")
    raw_added = raw - bare if raw is not None and bare is not None else None
    summ["launch"] = {}
    for cfg in WORKLOAD_CONFIGS["launch"]:
        s = stat(metric(data, "launch", cfg, "ns_per_launch"))
        if s is None:
            continue
        added = s["median"] - bare if bare is not None else None
        pd = stat(paired_diffs(data, "launch", cfg, "ns_per_launch"))
        verdict, limit = "-", ""
        if cfg in ("ktime-disabled", "ktime-warmup") and added is not None and \
                not data.get("untimed_fake"):  # with it, the targets judge by the fake driver
            verdict = "PASS" if added <= UNTIMED_ADDED_NS else "FAIL"
            limit = "<= %.0f ns" % UNTIMED_ADDED_NS
        elif cfg == "ktime-timed" and added is not None and raw_added is not None:
            verdict = "PASS" if added <= TIMED_VS_RAW * raw_added else "FAIL"
            limit = "<= %.1f x raw (%.0f ns)" % (TIMED_VS_RAW, TIMED_VS_RAW * raw_added)
        row = {"config": cfg, "stat": s, "added": added,
               "paired_added_median": pd["median"] if pd else None,
               "ratio": s["median"] / bare if bare else None,
               "vs_raw": added / raw_added if added is not None and raw_added else None,
               "limit": limit, "result": verdict}
        rows.append(row)
        summ["launch"][cfg] = row
    # The untimed targets: from the fake-driver measurement when there is one (the GPU's own
    # launch varies more than the path costs), the GPU wall clock shown beside it.
    uf = data.get("untimed_fake")
    summ["untimed_fake"] = None
    if uf:
        summ["untimed_fake"] = {c: {"median": statistics.median(v), "min": min(v), "max": max(v),
                                    "paired_added": untimed_fake.paired_added(uf, c) if c != "bare" else 0.0}
                                for c, v in uf["ns"].items()}
    for cfg in ("ktime-disabled", "ktime-warmup"):
        r = summ["launch"].get(cfg)
        gpu = "GPU wall clock: %s (paired per-rep median %s)" % (
            fmt(r["added"], "%+.1f ns"), fmt(r["paired_added_median"], "%+.1f ns")) if r else "GPU wall clock: -"
        if uf:
            added = summ["untimed_fake"][cfg]["paired_added"]
            measured = "%+.1f ns (fake driver)" % added
            ok = added <= UNTIMED_ADDED_NS
            detail = "paired median over %d runs of %d launches through the fake driver on %s; %s" % (
                uf["reps"], uf["n"], uf["cpu"], gpu)
        else:
            added = r["added"] if r else None
            measured = fmt(added, "%.1f ns")
            ok = added <= UNTIMED_ADDED_NS if added is not None else None
            detail = gpu
        targets.append(target("untimed-" + cfg.split("-")[1],
                              "untimed launch (%s): added ns/launch vs bare" % cfg,
                              measured, "<= %.0f ns" % UNTIMED_ADDED_NS, ok, detail))
    r = summ["launch"].get("ktime-timed")
    ok = None
    if r and r["added"] is not None and raw_added is not None:
        ok = r["added"] <= TIMED_VS_RAW * raw_added
    targets.append(target(
        "timed-launch", "timed launch: (ktime-timed - bare) vs (raw-events - bare)",
        "%s vs raw %s (%s x)" % (fmt(r["added"] if r else None, "%.0f ns"), fmt(raw_added, "%.0f ns"),
                                fmt(r["vs_raw"] if r else None, "%.2f")),
        "<= %.1f x raw" % TIMED_VS_RAW, ok))

    # --- drain thread CPU -------------------------------------------------------------------
    frac = stat(metric(data, "launch", "ktime-timed", "drain_cpu_frac"))
    per = stat(metric(data, "launch", "ktime-timed", "drain_ns_per_launch"))
    rate = stat(metric(data, "launch", "ktime-timed", "launch_rate"))
    found = metric(data, "launch", "ktime-timed", "drain_found")
    d = {"cpu_frac": frac, "ns_per_launch": per, "launch_rate": rate}
    ok, measured, detail = None, "-", ""
    if frac and per and rate:
        proj = per["median"] * DRAIN_RATE * 1e-9
        d["projected_frac_at_200k"] = proj
        if rate["median"] >= DRAIN_RATE:
            ok = frac["median"] <= DRAIN_CORE_FRACTION
            measured = "%.1f %% of a core at %.0fk launches/s" % (100 * frac["median"],
                                                                   rate["median"] / 1e3)
        else:
            ok = proj <= DRAIN_CORE_FRACTION
            measured = "%.1f %% at %.0fk/s; %.0f ns CPU/launch -> %.1f %% projected at 200k/s" % (
                100 * frac["median"], rate["median"] / 1e3, per["median"], 100 * proj)
        detail = "source: %s" % ",".join(sorted(set(
            r["values"].get("drain_src", "?") for r in data["runs"]["launch"]["ktime-timed"]
            if r.get("ok"))))
    elif found and max(found) == 0:
        measured, detail = "thread 'ktime-drain' not found", "no drain thread in ktime-timed runs"
        ok = False
    b = data.get("drain_breakdown")
    if b and b.get("elapsed_calls"):
        n = float(b["elapsed_calls"])  # one per sample
        d["breakdown"] = dict(b, per_sample_ns={
            k: b[k + "_ms"] * 1e6 / n for k in ("pass_wall", "pass_cpu", "query", "elapsed", "other")})
    summ["drain"] = d
    targets.append(target("drain-cpu", "drain thread CPU at 200k timed launches/s", measured,
                          "<= %.0f %% of one core" % (100 * DRAIN_CORE_FRACTION), ok, detail))

    # --- mixed --------------------------------------------------------------------------------
    summ["mixed"] = {}
    for part in MIXED_SIZES:
        key = "us_per_iter_" + part
        b = med(data, "mixed", "bare", key)
        for cfg in WORKLOAD_CONFIGS["mixed"]:
            s = stat(metric(data, "mixed", cfg, key))
            if s is None:
                continue
            summ["mixed"].setdefault(part, {})[cfg] = {
                "stat": s, "slowdown": (s["median"] / b - 1) if b else None}
    for part in ("50", "500"):
        m = summ["mixed"].get(part, {}).get("ktime-timed")
        sl = m["slowdown"] if m else None
        bs = summ["mixed"].get(part, {}).get("bare")
        noise = ""
        if bs:
            noise = "bare spread (max-min)/median %.2f %%" % (
                100 * (bs["stat"]["max"] - bs["stat"]["min"]) / bs["stat"]["median"])
        targets.append(target("kernels-%sus" % part, "%s us kernels (132-block spin): slowdown" % part,
                              fmt(None if sl is None else 100 * sl, "%+.2f %%"),
                              "<= %.0f %%" % (100 * LONG_KERNEL_SLOWDOWN),
                              None if sl is None else sl <= LONG_KERNEL_SLOWDOWN, noise))

    # --- KTIME_TIMER=cupti, KTIME_SAMPLE=16, KTIME_TIMER=both (mixed part) -----------------------
    # ktime-cupti against the raw tracer (libcuptitrace.so: the same record kind, nothing on
    # top): what ktime adds to CUPTI's own cost, in run time of the back-to-back kernels.
    for part, lim in CUPTI_OVER_TRACER:
        m = summ["mixed"].get(part, {})
        kc, tr = m.get("ktime-cupti"), m.get("cupti")
        over = kc["stat"]["median"] / tr["stat"]["median"] - 1 if kc and tr else None
        pr = stat(paired_ratios(data, "mixed", "ktime-cupti", "us_per_iter_" + part, "cupti"))
        detail = "paired per-repetition median %s" % fmt(100 * pr["median"] if pr else None, "%+.3f %%")
        if tr is None:
            detail = "raw tracer (cupti) not measured; " + detail
        ok, detail = fell_back(fallbacks(data, "mixed"), None if over is None else over <= lim, detail)
        targets.append(target(
            "cupti-%sus" % part, "%s us kernels back to back: KTIME_TIMER=cupti over the raw CUPTI "
            "tracer (run time)" % part,
            "%s (vs bare: ktime-cupti %s, tracer %s)" % (
                fmt(None if over is None else 100 * over, "%+.3f %%"),
                fmt(None if not kc or kc["slowdown"] is None else 100 * kc["slowdown"], "%+.2f %%"),
                fmt(None if not tr or tr["slowdown"] is None else 100 * tr["slowdown"], "%+.2f %%")),
            "<= +%g %%" % (100 * lim), ok, detail))
    # KTIME_SAMPLE=16: the 10 us loop's run time, and the mean it reports against every launch
    # timed (ktime-timed) in the same run
    m = summ["mixed"].get("10", {})
    s16, kt = m.get("ktime-sample16"), m.get("ktime-timed")
    sl = s16["slowdown"] if s16 else None
    targets.append(target(
        "sample16-10us", "KTIME_SAMPLE=16: 10 us kernels back to back, slowdown vs bare",
        fmt(None if sl is None else 100 * sl, "%+.2f %%"), "<= +%.0f %%" % (100 * SAMPLE_SLOWDOWN),
        None if sl is None else sl <= SAMPLE_SLOWDOWN,
        "every launch timed (ktime-timed): %s" % fmt(
            None if not kt or kt["slowdown"] is None else 100 * kt["slowdown"], "%+.2f %%")))
    ms, mt = med(data, "mixed", "ktime-sample16", "spin10_mean_us"), med(data, "mixed", "ktime-timed",
                                                                         "spin10_mean_us")
    rel = ms / mt - 1 if ms is not None and mt else None
    ns_, nt_ = med(data, "mixed", "ktime-sample16", "spin10_timed"), med(data, "mixed", "ktime-timed",
                                                                        "spin10_timed")
    xs = stat(mean_without_longest(data, "mixed", "ktime-sample16", "10"))
    xt = stat(mean_without_longest(data, "mixed", "ktime-timed", "10"))
    xrel = xs["median"] / xt["median"] - 1 if xs and xt and xt["median"] else None
    summ["sample16_mean"] = {"sampled_us": ms, "every_us": mt, "rel": rel, "sampled_timed": ns_,
                             "every_timed": nt_, "rel_without_longest": xrel}
    targets.append(target(
        "sample16-mean", "KTIME_SAMPLE=16: reported mean of the 10 us kernel vs every launch timed "
        "(ktime-timed), medians",
        "%s vs %s (%s)" % (fmt(ms, "%.3f us"), fmt(mt, "%.3f us"),
                           fmt(None if rel is None else 100 * rel, "%+.2f %%")),
        "within %.0f %%" % (100 * SAMPLE_MEAN), None if rel is None else abs(rel) <= SAMPLE_MEAN,
        "samples per run %s vs %s; without each one's longest sample %s" % (
            fmt(ns_, "%.0f"), fmt(nt_, "%.0f"), fmt(None if xrel is None else 100 * xrel, "%+.2f %%"))))
    # KTIME_TIMER=both: the events' bias over the hardware per kernel length (evidence, no
    # target), beside the means the other timers report for the same kernels
    summ["both_bias"] = {}
    for part in MIXED_SIZES:
        b = stat(metric(data, "mixed", "ktime-both", "spin%s_hw_bias_us" % part))
        if b is None:
            continue
        summ["both_bias"][part] = {
            "bias_us": b,
            "events_mean_us": stat(metric(data, "mixed", "ktime-both", "spin%s_mean_us" % part)),
            "hw_mean_us": stat(metric(data, "mixed", "ktime-both", "spin%s_hw_mean_us" % part)),
            "events_timed": stat(metric(data, "mixed", "ktime-both", "spin%s_timed" % part)),
            "hw_timed": stat(metric(data, "mixed", "ktime-both", "spin%s_hw_timed" % part)),
            "cupti_mean_us": stat(metric(data, "mixed", "ktime-cupti", "spin%s_mean_us" % part)),
            "timed_mean_us": stat(metric(data, "mixed", "ktime-timed", "spin%s_mean_us" % part)),
            "sample16_mean_us": stat(metric(data, "mixed", "ktime-sample16", "spin%s_mean_us" % part))}

    # --- torch ----------------------------------------------------------------------------------
    summ["torch"] = {}
    tb = med(data, "torch", "bare", "us_per_op")
    for cfg in WORKLOAD_CONFIGS["torch"]:
        s = stat(metric(data, "torch", cfg, "us_per_op"))
        if s:
            summ["torch"][cfg] = {"stat": s, "ratio": s["median"] / tb if tb else None}
    rt = summ["torch"].get("ktime-timed", {}).get("ratio")
    rp = summ["torch"].get("torch.profiler", {}).get("ratio")
    # The floor of any tool that records an event pair around every launch: the bare op plus
    # what the pair cost on the CPU in the launch part of the same run (raw-events - bare).
    # Each op of the loop launches one kernel.
    floor = None
    lb, lr = med(data, "launch", "bare", "ns_per_launch"), med(data, "launch", "raw-events", "ns_per_launch")
    if tb and lb is not None and lr is not None:
        floor = (tb + (lr - lb) * 1e-3) / tb
        summ["torch_event_pair_floor_ratio"] = floor
    ok = None
    if rt is not None:
        ok = rt <= TORCH_RATIO and (rp is None or rt < rp)
    targets.append(target("torch", "PyTorch small-op loop: ktime-timed slowdown",
                          "%s x (torch.profiler %s x)" % (fmt(rt, "%.3f"), fmt(rp, "%.3f")),
                          "<= %.1f x and < profiler" % TORCH_RATIO, ok,
                          ("" if rp is not None else "torch.profiler not measured; ") +
                          "floor of an event pair per op (launch part's raw-events - bare added "
                          "to the bare op): %s x" % fmt(floor, "%.3f")))
    rc = summ["torch"].get("ktime-cupti", {}).get("ratio")
    ok = None
    if rc is not None:
        ok = rc <= TORCH_CUPTI_RATIO and (rp is None or rc < rp)
    ok, detail = fell_back(fallbacks(data, "torch"), ok,
                           ("torch.profiler not measured; " if rp is None else "") +
                           "ktime-timed (events) %s x" % fmt(rt, "%.3f"))
    targets.append(target("torch-cupti", "PyTorch small-op loop: KTIME_TIMER=cupti slowdown",
                          "%s x (torch.profiler %s x)" % (fmt(rc, "%.3f"), fmt(rp, "%.3f")),
                          "<= %.1f x and < profiler" % TORCH_CUPTI_RATIO, ok, detail))

    # --- memory ---------------------------------------------------------------------------------
    K = data.get("params", {}).get("kernels_k")
    mem = {}
    for cfg in WORKLOAD_CONFIGS["kernels"]:
        runs = [r for r in data.get("runs", {}).get("kernels", {}).get(cfg, []) if r.get("ok")]
        g = [r["values"]["rss_launched_kb"] - r["values"]["rss_pre_kb"] for r in runs
             if "rss_launched_kb" in r["values"] and "rss_pre_kb" in r["values"]]
        mem[cfg] = {"growth_kb": stat(g), "rss_kb": stat(metric(data, "kernels", cfg, "rss_kb")),
                    "load_s": stat(metric(data, "kernels", cfg, "load_s"))}
    per_kernel = None
    if K and mem.get("ktime-timed", {}).get("growth_kb") and mem.get("bare", {}).get("growth_kb"):
        per_kernel = (mem["ktime-timed"]["growth_kb"]["median"] -
                      mem["bare"]["growth_kb"]["median"]) * 1024.0 / K
    mem["per_kernel_bytes"] = per_kernel
    plain = None  # the same from the final RSS alone (includes ktime's fixed cost)
    if K and mem.get("ktime-timed", {}).get("rss_kb") and mem.get("bare", {}).get("rss_kb"):
        plain = (mem["ktime-timed"]["rss_kb"]["median"] - mem["bare"]["rss_kb"]["median"]) * 1024.0 / K
    mem["per_kernel_bytes_from_final_rss"] = plain
    summ["memory"] = mem
    targets.append(target("mem-per-kernel", "memory per distinct kernel (%s kernels)" % fmt(K, "%d"),
                          fmt(per_kernel, "%.0f B"), "<= %d B" % PER_KERNEL_BYTES,
                          None if per_kernel is None else per_kernel <= PER_KERNEL_BYTES,
                          "RSS growth (after launching - before loading), ktime-timed minus bare; "
                          "from final RSS alone %s" % fmt(plain, "%.0f B")))
    lr = [r for r in data.get("runs", {}).get("long", {}).get("ktime-timed", []) if r.get("ok")]
    growth = None
    if lr and "rss_mid_kb" in lr[0]["values"]:
        v = lr[0]["values"]
        growth = v["rss_end_kb"] - v["rss_mid_kb"]
        summ["long"] = {"n": v.get("n"), "rss_mid_at": v.get("rss_mid_at"),
                        "rss_mid_kb": v["rss_mid_kb"], "rss_end_kb": v["rss_end_kb"],
                        "growth_kb": growth, "ns_per_launch": v.get("ns_per_launch")}
    lp = data.get("params", {}).get("long_n_run")
    targets.append(target("rss-growth", "RSS growth, %s timed launches of 100 kernels vs after %s"
                          % (fmt(lp, "%d"), fmt(data.get("params", {}).get("long_rss_at"), "%d")),
                          fmt(growth, "%+d kB"), "<= %d kB" % RSS_GROWTH_KB,
                          None if growth is None else growth <= RSS_GROWTH_KB,
                          data.get("params", {}).get("long_note", "")))

    # --- exit ----------------------------------------------------------------------------------
    summ["exit"] = {}
    for cfg in WORKLOAD_CONFIGS["exit"]:
        s = stat(metric(data, "exit", cfg, "exit_ms"))
        if s:
            summ["exit"][cfg] = s
    e = summ["exit"].get("ktime-timed")
    eb = summ["exit"].get("bare")
    targets.append(target("exit", "main return -> process end, %s kernels, nothing in flight"
                          % fmt(data.get("params", {}).get("exit_k"), "%d"),
                          "%s (bare %s)" % (fmt(e["median"] if e else None, "%.1f ms"),
                                            fmt(eb["median"] if eb else None, "%.1f ms")),
                          "<= %.0f ms" % EXIT_MS, None if e is None else e["median"] <= EXIT_MS,
                          "max %s" % fmt(e["max"] if e else None, "%.1f ms")))
    # The bare program's own teardown (the CUDA runtime's) can exceed the limit by itself; what
    # ktime adds to it is judged on its own too.
    ea = e["median"] - eb["median"] if e and eb else None
    targets.append(target("exit-added", "exit: ktime-timed minus bare (medians)",
                          fmt(ea, "%+.1f ms"), "<= %.0f ms" % EXIT_MS,
                          None if ea is None else ea <= EXIT_MS, ""))

    # --- exit with activity records pending (bench pending N, KTIME_TIMER=cupti) ---------------
    p = data.get("params", {})
    wait_ms = p.get("exit_wait_ms") or EXIT_WAIT_MS
    pend = {}
    for cfg in WORKLOAD_CONFIGS["pending"]:
        runs = [r for r in data.get("runs", {}).get("pending", {}).get(cfg, []) if r.get("ok")]
        if not runs:
            continue
        pend[cfg] = {k: stat(metric(data, "pending", cfg, k)) for k in
                     ("report_ms", "exit_ms", "maxrss_kb", "hwm_kb", "ns_per_launch", "ktime_timed",
                      "ktime_incomplete", "ktime_cupti_dropped", "ktime_cupti_refused")}
        pend[cfg]["runs"] = len(runs)
    summ["pending"] = pend
    kruns = [r for r in data.get("runs", {}).get("pending", {}).get("ktime-cupti", []) if r.get("ok")]
    rms = [r["values"].get("report_ms") for r in kruns]
    got = [x for x in rms if isinstance(x, (int, float))]
    ok, measured, detail = None, "-", ""
    if kruns:
        ok = len(got) == len(kruns) and max(got) <= wait_ms
        measured = "max %s, median %s (%d of %d runs wrote one)" % (
            fmt(max(got) if got else None, "%.0f ms"),
            fmt(statistics.median(got) if got else None, "%.0f ms"),
            len(got), len(kruns))
        e = pend["ktime-cupti"]["exit_ms"]
        eb = pend.get("bare", {}).get("exit_ms")
        detail = "process ended %s after main's return (bare %s)" % (
            fmt(e["median"] if e else None, "%.0f ms"), fmt(eb["median"] if eb else None, "%.0f ms"))
    nfb = fallbacks(data, "pending")
    ok, detail = fell_back(nfb, ok, detail)
    targets.append(target(
        "exit-pending", "exit with %s launches unsynchronized (KTIME_TIMER=cupti): report written "
        "after main's return" % fmt(p.get("pending_n"), "%d"),
        measured, "<= %.0f ms (KTIME_EXIT_WAIT_MS), every run" % wait_ms, ok, detail))
    mk = {c: (pend.get(c, {}).get("maxrss_kb") or {}).get("median") for c in WORKLOAD_CONFIGS["pending"]}
    dk = mk["ktime-cupti"] - mk["bare"] if mk["ktime-cupti"] is not None and mk["bare"] is not None else None
    dt = mk["cupti"] - mk["bare"] if mk["cupti"] is not None and mk["bare"] is not None else None
    buf_kb = (p.get("cupti_buffer_mb") or CUPTI_BUFFER_MB) * 1024
    summ["pending_rss"] = {"ktime_cupti_added_kb": dk, "tracer_added_kb": dt, "buffers_kb": buf_kb}
    ok, detail = fell_back(nfb, None if dk is None or dt is None else dk <= dt + buf_kb,
                           "peak RSS of the whole process (wait4's ru_maxrss), exit included")
    targets.append(target(
        "exit-pending-rss", "exit with launches pending: peak RSS, ktime-cupti minus bare (medians)",
        "%s (raw tracer %s)" % (fmt(dk, "%+.0f kB"), fmt(dt, "%+.0f kB")),
        "<= the raw tracer's + %d kB (KTIME_CUPTI_BUFFER_MB)" % buf_kb, ok, detail))
    nok = sum(1 for r in kruns if r["values"].get("ktime_counts_ok") == 1)
    kp = pend.get("ktime-cupti", {})

    def mcell(k, spec="%.0f"):
        return fmt((kp.get(k) or {}).get("median"), spec)

    ok, detail = fell_back(nfb, None if not kruns else nok == len(kruns), "")
    targets.append(target(
        "exit-pending-counts", "exit with launches pending: the ktime-cupti report's counts add up",
        "%d of %d reports" % (nok, len(kruns)), "all", ok, detail +
        "launches = warmup + timed + captured + dropped + failed + incomplete (+ in graphs), "
        "incomplete >= CUPTI's dropped records; medians: timed %s, incomplete %s, CUPTI dropped "
        "%s, buffers refused %s" % (mcell("ktime_timed"), mcell("ktime_incomplete"),
                                    mcell("ktime_cupti_dropped"), mcell("ktime_cupti_refused"))))

    # --- threads --------------------------------------------------------------------------------
    # Per thread count: the median over repetitions of each run's per-thread median ns per
    # launch. The target is about ktime's own shared state: every thread launches the same
    # kernel, so all of them update one kernel-table entry (the worst case). With ktime-warmup
    # every launch takes that path and nothing else of ktime's, and the driver work is the bare
    # program's: its ratio to bare at the most threads must stay within THREADS_CONTENTION x its
    # ratio at the fewest. The timed configurations are shown beside it, with how many launches
    # they left untimed: when the GPU cannot keep up with event-bracketed launches from many
    # threads, raw-events waits for its ring while ktime drops (pool_exhausted) instead of
    # blocking the program, so their ratio to raw is not a contention measure.
    truns = data.get("runs", {}).get("threads", {})
    counts = sorted({r["values"]["threads"] for rs in truns.values() for r in rs
                     if r.get("ok") and isinstance(r.get("values", {}).get("threads"), int)})
    th = {"counts": counts, "by_threads": {}, "growth": {}}
    timed_cfgs = ("ktime-timed", "ktime-nogate")
    drops = []
    for n in counts:
        row = {}
        for cfg in WORKLOAD_CONFIGS["threads"]:
            s_ = stat(threads_metric(data, cfg, n))
            if s_ is None:
                continue
            row[cfg] = {"stat": s_,
                        "agg_ns_per_launch": stat(threads_metric(data, cfg, n, "agg_ns_per_launch")),
                        "wall_s": stat(threads_metric(data, cfg, n, "wall_s"))}
            if cfg in timed_cfgs:
                dr = threads_metric(data, cfg, n, "ktime_dropped")
                row[cfg]["dropped_max"] = max(dr) if dr else None
                row[cfg]["drain_cpu_frac"] = stat(threads_metric(data, cfg, n, "drain_cpu_frac"))
                if dr and max(dr) > 0:
                    drops.append("%s at %d threads: up to %d of %d launches untimed" % (
                        cfg, n, max(dr), max(threads_metric(data, cfg, n, "launches_total") or [0])))
        raw_med = row.get("raw-events", {}).get("stat", {}).get("median")
        bare_med = row.get("bare", {}).get("stat", {}).get("median")
        for cfg in timed_cfgs:
            m = row.get(cfg, {}).get("stat", {}).get("median")
            row[cfg + "_vs_raw"] = m / raw_med if m is not None and raw_med else None
        m = row.get("ktime-warmup", {}).get("stat", {}).get("median")
        row["ktime-warmup_vs_bare"] = m / bare_med if m is not None and bare_med else None
        th["by_threads"][str(n)] = row
    ok, measured, detail = None, "-", []
    if len(counts) >= 2:
        lo, hi = str(counts[0]), str(counts[-1])
        a = th["by_threads"][lo].get("ktime-warmup_vs_bare")
        b = th["by_threads"][hi].get("ktime-warmup_vs_bare")
        g = b / a if a and b is not None else None
        th["growth"]["ktime-warmup"] = g
        measured = "ktime-warmup / bare %s -> %s (%s x)" % (fmt(a, "%.3f"), fmt(b, "%.3f"),
                                                            fmt(g, "%.3f"))
        if g is not None:
            ok = g <= THREADS_CONTENTION
        detail.append("ratio: per-thread median ns per launch, ktime-warmup / bare")
        cpus = data.get("meta", {}).get("cpus")
        if isinstance(cpus, int) and counts[-1] + 1 > cpus:
            detail.append("%d launching threads and ktime's drain thread on %d CPUs" % (counts[-1], cpus))
    elif counts:
        detail.append("one thread count only (%d)" % counts[0])
    if drops:
        detail.append("timed configurations, for information: %s" % "; ".join(drops))
    summ["threads"] = th
    hi_lo = (counts[-1], counts[0]) if counts else (None, None)
    targets.append(target("threads-contention",
                          "no contention in ktime's shared state: untimed-path ratio to bare, "
                          "%s vs %s threads on one kernel" % (fmt(hi_lo[0], "%d"), fmt(hi_lo[1], "%d")),
                          measured, "<= %.1f x" % THREADS_CONTENTION, ok, "; ".join(detail)))

    # --- sanity -----------------------------------------------------------------------------------
    bad = [s for s in data.get("sanity", []) if not s.get("ok")]
    nchk = len(data.get("sanity", []))
    targets.append(target("sanity", "every run succeeded; ktime reports count the launches",
                          "%d of %d checks failed" % (len(bad), nchk), "0 failed",
                          None if nchk == 0 else not bad,
                          "; ".join(s["msg"] for s in bad[:3])))
    return summ, targets, rows


def table(headers, rows):
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
         for i, h in enumerate(headers)]
    out = ["| " + " | ".join(str(h).ljust(w[i]) for i, h in enumerate(headers)) + " |",
           "|" + "|".join("-" * (x + 2) for x in w) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) + " |")
    return "\n".join(out)


def render(data, summ, targets, rows):
    """The report as markdown; the last table is the final launch table."""
    meta = data.get("meta", {})
    p = data.get("params", {})
    L = []
    L.append("# ktime overhead benchmark")
    L.append("")
    L.append("- GPU: %s, driver %s" % (meta.get("gpu", "?"), meta.get("driver", "?")))
    L.append("- date: %s, host %s, %s CPUs" % (meta.get("date", "?"), meta.get("host", "?"),
                                                 meta.get("cpus", "?")))
    L.append("- command: `%s`" % meta.get("command", "?"))
    L.append("- libktime: `%s` (%s); bench: `%s`; torch %s" % (meta.get("lib", "?"),
                                                                  meta.get("ktime_build") or "build unknown",
                                                                  meta.get("bin", "?"),
                                                         meta.get("torch", "?")))
    other = ", ".join("%s %s" % (k[5:], v) for k, v in sorted(p.items())
                      if k.startswith("reps_") and v != p.get("reps"))
    L.append("- repetitions: %s%s (configurations interleaved, median reported); wall time %s s"
             % (p.get("reps", "?"), " (%s)" % other if other else "", fmt(meta.get("wall_s"), "%.0f")))
    if meta.get("notes"):
        for n in meta["notes"]:
            L.append("- note: %s" % n)
    L.append("")

    L.append("## Mixed kernels (us per iteration, %s blocks; slowdown vs bare)" % meta.get("blocks", "?"))
    L.append("")
    mrows = []
    for cfg in WORKLOAD_CONFIGS["mixed"]:
        cells = [cfg]
        for part in MIXED_SIZES:
            m = summ["mixed"].get(part, {}).get(cfg)
            if m:
                cells.append("%.3f [%.3f-%.3f] %s" % (m["stat"]["median"], m["stat"]["min"],
                                                      m["stat"]["max"],
                                                      fmt(None if m["slowdown"] is None else
                                                          100 * m["slowdown"], "%+.2f%%")))
            else:
                cells.append("-")
        mrows.append(cells)
    L.append(table(["config"] + ["%s us" % x for x in MIXED_SIZES], mrows))
    L.append("")

    bb = summ.get("both_bias") or {}
    if bb:
        L.append("## Events against the hardware (mixed part, KTIME_TIMER=both; us, medians over the "
                 "repetitions)")
        L.append("")
        L.append("Bias: the events' mean minus CUPTI's for the same kernel in the same run (evidence, "
                 "no target). Beside it, the mean each other timer reported for the kernel.")
        L.append("")

        def md(x, spec="%.3f"):
            return fmt(x["median"] if x else None, spec)

        brows = []
        for part in MIXED_SIZES:
            b = bb.get(part)
            if not b:
                continue
            brows.append(["kt_bench_spin<%s>" % part, md(b["events_mean_us"]), md(b["hw_mean_us"]),
                          "%s [%s to %s]" % (md(b["bias_us"], "%+.3f"), fmt(b["bias_us"]["min"], "%+.3f"),
                                             fmt(b["bias_us"]["max"], "%+.3f")),
                          "%s / %s" % (md(b["events_timed"], "%.0f"), md(b["hw_timed"], "%.0f")),
                          md(b["cupti_mean_us"]), md(b["timed_mean_us"]), md(b["sample16_mean_us"])])
        L.append(table(["kernel", "both: events", "both: hw", "bias [min to max]",
                        "both: samples (events / hw)", "ktime-cupti", "ktime-timed", "ktime-sample16"],
                       brows))
        L.append("")

    L.append("## PyTorch small-op loop (us per op)")
    L.append("")
    trows = [[cfg, "%.3f" % m["stat"]["median"], "%.3f-%.3f" % (m["stat"]["min"], m["stat"]["max"]),
              fmt(m["ratio"], "%.3f")] for cfg, m in summ["torch"].items()]
    L.append(table(["config", "us/op median", "min-max", "ratio"], trows))
    L.append("")

    L.append("## Memory and exit")
    L.append("")
    mm = summ["memory"]
    xrows = []
    for cfg in WORKLOAD_CONFIGS["kernels"]:
        m = mm.get(cfg, {})
        g, rs, ls = m.get("growth_kb"), m.get("rss_kb"), m.get("load_s")
        xrows.append(["kernels %s: %s" % (fmt(p.get("kernels_k"), "%d"), cfg),
                      "RSS %s kB, growth %s kB [%s-%s], load %s s" % (
                          fmt(rs["median"] if rs else None, "%d"), fmt(g["median"] if g else None, "%d"),
                          fmt(g["min"] if g else None, "%d"), fmt(g["max"] if g else None, "%d"),
                          fmt(ls["median"] if ls else None, "%.2f"))])
    if "long" in summ:
        lg = summ["long"]
        xrows.append(["long run ktime-timed", "%d launches (%.0f ns each): RSS %d kB after %d, %d kB at end"
                      % (lg["n"], lg.get("ns_per_launch") or 0, lg["rss_mid_kb"], lg["rss_mid_at"],
                         lg["rss_end_kb"])])
    for cfg, s in summ["exit"].items():
        xrows.append(["exit %s: %s" % (fmt(p.get("exit_k"), "%d"), cfg),
                      "%.1f ms [%.1f-%.1f]" % (s["median"], s["min"], s["max"])])
    d = summ["drain"]
    if d.get("cpu_frac"):
        xrows.append(["drain thread (launch, ktime-timed)",
                      "%.2f %% of a core, %.1f ns CPU/launch, %.0f launches/s" % (
                          100 * d["cpu_frac"]["median"], d["ns_per_launch"]["median"],
                          d["launch_rate"]["median"])])
    b = d.get("breakdown")
    if b:
        ps = b["per_sample_ns"]
        xrows.append(["drain breakdown (one KTIME_LOG=debug run, %d samples)" % b["elapsed_calls"],
                      "per sample: passes %.0f ns wall, %.0f ns CPU; cuEventElapsedTime %.0f ns "
                      "(%d calls), cuEventQuery %.0f ns (%d calls), rest of the pass %.0f ns"
                      % (ps["pass_wall"], ps["pass_cpu"], ps["elapsed"], b["elapsed_calls"],
                         ps["query"], b["queries"], ps["other"])])
    L.append(table(["what", "measured (median)"], xrows))
    L.append("")

    pend = summ.get("pending") or {}
    if pend:
        L.append("## Exit with launches pending (bench pending %s: no synchronize before main returns)"
                 % fmt(p.get("pending_n"), "%d"))
        L.append("")
        prow = []
        bare_rss = (pend.get("bare", {}).get("maxrss_kb") or {}).get("median")
        for cfg in WORKLOAD_CONFIGS["pending"]:
            x = pend.get(cfg)
            if not x:
                continue

            def cell(k, spec="%.0f"):
                v = x.get(k)
                return "-" if not v else "%s [%s-%s]" % (spec % v["median"], spec % v["min"], spec % v["max"])

            rss = (x.get("maxrss_kb") or {}).get("median")
            prow.append([cfg, x["runs"], cell("ns_per_launch"), cell("report_ms"), cell("exit_ms"),
                         fmt(rss, "%.0f"),
                         fmt(rss - bare_rss if rss is not None and bare_rss is not None and cfg != "bare"
                             else None, "%+.0f")])
        L.append(table(["config", "runs", "ns/launch", "report written (ms after main's return)",
                        "process end (ms)", "peak RSS kB", "vs bare kB"], prow))
        kp = pend.get("ktime-cupti")
        if kp:
            L.append("")
            L.append("ktime-cupti's reports (medians): %s timed, %s incomplete, %s records CUPTI dropped, "
                     "%s times no free buffer" % tuple(
                         fmt((kp.get(k) or {}).get("median"), "%.0f") for k in
                         ("ktime_timed", "ktime_incomplete", "ktime_cupti_dropped", "ktime_cupti_refused")))
        L.append("")

    th = summ.get("threads", {})
    if th.get("counts"):
        L.append("## Threads (bench threads T %s, each thread on its own stream; per-thread median "
                 "ns per launch)" % fmt(p.get("threads_n"), "%d"))
        L.append("")
        hrows = []
        for n in th["counts"]:
            row = th["by_threads"][str(n)]

            def cell(cfg):
                return fmt(row.get(cfg, {}).get("stat", {}).get("median"), "%.0f")

            hrows.append([n, cell("bare"), cell("ktime-warmup"), fmt(row.get("ktime-warmup_vs_bare"), "%.3f"),
                          cell("raw-events"), cell("ktime-timed"), cell("ktime-nogate"),
                          fmt(row.get("ktime-timed_vs_raw"), "%.3f"),
                          fmt(row.get("ktime-nogate_vs_raw"), "%.3f"),
                          "%s / %s" % (fmt(row.get("ktime-timed", {}).get("dropped_max"), "%d"),
                                       fmt(row.get("ktime-nogate", {}).get("dropped_max"), "%d"))])
        L.append(table(["threads", "bare", "ktime-warmup", "warmup/bare", "raw", "ktime", "nogate",
                        "ktime/raw", "nogate/raw", "untimed (ktime / nogate)"], hrows))
        L.append("")

    L.append("## Targets")
    L.append("")
    L.append(table(["target", "measured", "limit", "result", "detail"],
                   [[t["target"], t["measured"], t["limit"], t["result"], t["detail"]] for t in targets]))
    L.append("")

    L.append("## Launch overhead (bench launch %s, ns per launch; added = median - bare median)"
             % fmt(p.get("launch_n"), "%d"))
    L.append("")
    lrows = []
    for r in rows:
        s = r["stat"]
        lrows.append([r["config"], "%.1f" % s["median"], "%.1f-%.1f" % (s["min"], s["max"]),
                      fmt(r["added"], "%+.1f"), fmt(r["ratio"], "%.3f"), r["result"]])
    L.append(table(["config", "ns/launch median", "min-max", "added ns", "ratio", "pass/fail"], lrows))
    L.append("")
    uf = summ.get("untimed_fake")
    if uf:
        d = data["untimed_fake"]
        L.append("## Untimed path against the fake driver (%d launches x %d runs, %s; ns per launch)"
                 % (d["n"], d["reps"], d["cpu"]))
        L.append("")
        L.append(table(["config", "median", "min-max", "added (paired median)"],
                       [[c, "%.1f" % v["median"], "%.1f-%.1f" % (v["min"], v["max"]),
                         "-" if c == "bare" else "%+.1f" % v["paired_added"]] for c, v in uf.items()]))
        L.append("")
    return "\n".join(L)


def overall(targets):
    n_pass = sum(1 for t in targets if t["result"] == "PASS")
    n_fail = sum(1 for t in targets if t["result"] == "FAIL")
    n_na = sum(1 for t in targets if t["result"] == "n/a")
    return n_pass, n_fail, n_na


def write_svg(path, rows):
    """Horizontal bars: added ns per launch per configuration, whiskers from min to max."""
    items = [r for r in rows if r["config"] != "bare" and r["added"] is not None]
    W, bar_h, gap, left, right, top = 760, 26, 12, 150, 90, 50
    H = top + len(items) * (bar_h + gap) + 50
    bare = None
    for r in rows:
        if r["config"] == "bare":
            bare = r["stat"]["median"]
    vals = [0.0, UNTIMED_ADDED_NS]
    for r in items:
        vals += [r["added"], r["stat"]["max"] - bare, r["stat"]["min"] - bare]
    lo, hi = min(vals), max(vals)
    hi = hi + 0.05 * (hi - lo or 1)
    lo = min(0.0, lo - 0.05 * (hi - lo or 1))

    def x(v):
        return left + (v - lo) / (hi - lo) * (W - left - right)

    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14" font-weight="bold">ktime: added host time per launch '
         'vs bare (ns, median; whiskers min-max)</text>' % left]
    s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>' % (x(0), top - 8, x(0), H - 40))
    s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="red" stroke-dasharray="4,3"/>'
             % (x(UNTIMED_ADDED_NS), top - 8, x(UNTIMED_ADDED_NS), H - 40))
    s.append('<text x="%.1f" y="%d" fill="red">%.0f ns</text>' % (x(UNTIMED_ADDED_NS) + 3, top - 12,
                                                                UNTIMED_ADDED_NS))
    colors = {"ktime-disabled": "#7fb3d5", "ktime-warmup": "#5499c7", "ktime-timed": "#1f618d",
              "ktime-gated": "#148f77", "ktime-nogate": "#76448a",
              "raw-events": "#a9a9a9", "cupti": "#e59866"}
    for i, r in enumerate(items):
        y = top + i * (bar_h + gap)
        a = r["added"]
        x0, x1 = sorted((x(0), x(a)))
        s.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 8, y + bar_h * 0.7, r["config"]))
        s.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                 % (x0, y, max(x1 - x0, 0.5), bar_h, colors.get(r["config"], "#888")))
        mn, mx = r["stat"]["min"] - bare, r["stat"]["max"] - bare
        s.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>'
                 % (x(mn), y + bar_h / 2, x(mx), y + bar_h / 2))
        s.append('<text x="%.1f" y="%d">%+.0f</text>' % (max(x1, x(mx)) + 4, y + bar_h * 0.7, a))
    # axis ticks
    step = 10 ** math.floor(math.log10(max(hi - lo, 1)))
    if (hi - lo) / step < 4:
        step /= 2
    t = math.ceil(lo / step) * step
    while t <= hi:
        s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>' % (x(t), H - 40, x(t), H - 35))
        s.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g</text>' % (x(t), H - 22, t))
        t += step
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


# The timers' plot: run time added against kernel duration, one line per timer (the mixed part).
TIMER_LINES = [("ktime-gated", "events, every launch gated (KTIME_GATE=1)", "#148f77", ""),
               ("ktime-timed", "events (default)", "#1f618d", ""),
               ("raw-events", "the program's own event pair", "#a9a9a9", "6,4"),
               ("ktime-sample16", "events, KTIME_SAMPLE=16", "#5499c7", ""),
               ("ktime-cupti", "KTIME_TIMER=cupti", "#e67e22", ""),
               ("cupti", "a bare CUPTI tracer", "#e59866", "6,4")]


def write_timers_svg(path, mixed):
    """Log-log lines: run time added over bare (%) against kernel duration (us), one line per
    timer, from the mixed part's medians. Returns False when fewer than two durations have a
    bare run."""
    durs = sorted(int(k) for k in mixed if "bare" in mixed[k])
    lines = []
    for cfg, label, color, dash in TIMER_LINES:
        pts = [(d, 100.0 * mixed[str(d)][cfg]["slowdown"]) for d in durs
               if cfg in mixed[str(d)] and mixed[str(d)][cfg].get("slowdown") is not None
               and mixed[str(d)][cfg]["slowdown"] > 0]
        if len(pts) >= 2:
            lines.append((label, color, dash, pts))
    if len(durs) < 2 or not lines:
        return False
    W, H, left, right, top, bottom = 760, 420, 70, 250, 40, 50
    ys = [y for _, _, _, pts in lines for _, y in pts]
    ylo, yhi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    xlo, xhi = math.log10(durs[0]), math.log10(durs[-1])

    def x(d):
        return left + (math.log10(d) - xlo) / (xhi - xlo) * (W - left - right)

    def y(v):
        return H - bottom - (math.log10(v) - ylo) / (yhi - ylo) * (H - top - bottom)

    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14" font-weight="bold">run time added over the bare '
         'program (%%, median) against kernel duration</text>' % left,
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top, left, H - bottom),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
         % (left, H - bottom, W - right, H - bottom)]
    for e in range(ylo, yhi + 1):
        v = 10.0 ** e
        s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y(v), W - right, y(v)))
        s.append('<text x="%d" y="%.1f" text-anchor="end" fill="#555">%g %%</text>' % (left - 6, y(v) + 4, v))
    for d in durs:
        s.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%d us</text>' % (x(d), H - bottom + 18, d))
    s.append('<text x="%.1f" y="%d" text-anchor="middle">back-to-back kernels of this duration</text>'
             % ((left + W - right) / 2, H - 12))
    for i, (label, color, dash, pts) in enumerate(lines):
        attrs = ' stroke-dasharray="%s"' % dash if dash else ""
        s.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                 % (color, attrs, " ".join("%.1f,%.1f" % (x(d), y(v)) for d, v in pts)))
        for d, v in pts:
            s.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(d), y(v), color))
        ly = top + 10 + i * 20
        s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                 % (W - right + 15, ly, W - right + 40, ly, color, attrs))
        s.append('<text x="%d" y="%d">%s</text>' % (W - right + 45, ly + 4, label))
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")
    return True


def write_png(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    items = [r for r in rows if r["config"] != "bare" and r["added"] is not None]
    bare = [r for r in rows if r["config"] == "bare"][0]["stat"]["median"]
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(items) + 1.5))
    names = [r["config"] for r in items]
    vals = [r["added"] for r in items]
    err = [[r["added"] - (r["stat"]["min"] - bare) for r in items],
           [(r["stat"]["max"] - bare) - r["added"] for r in items]]
    ax.barh(names, vals, xerr=err, color="#1f618d")
    ax.axvline(UNTIMED_ADDED_NS, color="red", linestyle="--", label="%.0f ns" % UNTIMED_ADDED_NS)
    ax.set_xlabel("added host time per launch vs bare (ns, median; min-max)")
    ax.invert_yaxis()
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def emit(data, outdir):
    """Analyzes, writes bench.json/bench.md/overhead.svg into outdir (if given), prints the tables
    (the final launch table last) and returns the exit status."""
    summ, targets, rows = analyze(data)
    data["summary"] = summ
    data["targets"] = targets
    md = render(data, summ, targets, rows)
    n_pass, n_fail, n_na = overall(targets)
    tail = "targets: %d pass, %d fail, %d not measured" % (n_pass, n_fail, n_na)
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "bench.json"), "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        with open(os.path.join(outdir, "bench.md"), "w") as f:
            f.write(md + "\n" + tail + "\n")
        if rows and any(r["config"] == "bare" for r in rows):
            write_svg(os.path.join(outdir, "overhead.svg"), rows)
            write_png(os.path.join(outdir, "overhead.png"), rows)
        write_timers_svg(os.path.join(outdir, "timers.svg"), summ.get("mixed") or {})
    print("", flush=True)
    print(md, flush=True)
    print(tail, flush=True)
    sanity_bad = any(not s.get("ok") for s in data.get("sanity", []))
    if sanity_bad:
        return 2
    return 0 if n_fail == 0 and n_na == 0 else 1


# ---------------------------------------------------------------------------------------------
# running

def parse_results(text):
    vals = {}
    for line in text.splitlines():
        if not line.startswith("RESULT "):
            continue
        for tok in line.split()[1:]:
            if "=" not in tok:
                continue
            k, v = tok.split("=", 1)
            try:
                vals[k] = int(v)
            except ValueError:
                try:
                    vals[k] = float(v)
                except ValueError:
                    vals[k] = v
    return vals


DRAIN_COUNTS_RE = re.compile(r"drain: (\d+) passes, (\d+) event queries \((\d+) found it pending\), "
                             r"(\d+) elapsed-time calls")
DRAIN_TIME_RE = re.compile(r"drain time: passes ([\d.]+) ms wall, ([\d.]+) ms CPU; in cuEventQuery "
                           r"([\d.]+) ms \(\d+ ns per call\); in cuEventElapsedTime ([\d.]+) ms")


def parse_drain_debug(text):
    """The two 'drain' lines libktime prints at exit with KTIME_LOG=debug, or None."""
    c, t = DRAIN_COUNTS_RE.search(text), DRAIN_TIME_RE.search(text)
    if not c or not t:
        return None
    passes, queries, pending, elapsed = (int(x) for x in c.groups())
    pass_ms, cpu_ms, query_ms, elapsed_ms = (float(x) for x in t.groups())
    return {"passes": passes, "queries": queries, "queries_pending": pending,
            "elapsed_calls": elapsed, "pass_wall_ms": pass_ms, "pass_cpu_ms": cpu_ms,
            "query_ms": query_ms, "elapsed_ms": elapsed_ms,
            "other_ms": max(pass_ms - query_ms - elapsed_ms, 0.0)}


def lib_build(path):
    """'ktime-build VERSION REV' as libktime embeds it (src/run/init.c), or None."""
    try:
        with open(path, "rb") as f:
            m = re.search(rb"ktime-build [0-9A-Za-z.+-]+ [0-9a-f]*(-dirty)?", f.read())
    except OSError:
        return None
    return m.group(0).decode() if m else None


def tail_of(path, n=15):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError:
        return ""


def wait_rusage(p, timeout):
    """Waits for child p with os.wait4, killing it after `timeout` s: (returncode, or "timeout"
    when it was killed for time; its peak RSS in kB, ru_maxrss; time.monotonic_ns() right after
    the wait). Popen.wait cannot give the child's own rusage."""
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def kill():
        with lock:
            if not state["done"]:
                state["fired"] = True
                try:
                    os.kill(p.pid, 9)  # not reaped before "done": the pid is still the child's
                except OSError:
                    pass

    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    timer.start()
    try:
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped yet
        t_end = time.monotonic_ns()
        with lock:
            state["done"] = True
    finally:
        timer.cancel()
    _, status, ru = os.wait4(p.pid, 0)
    if hasattr(os, "waitstatus_to_exitcode"):
        rc = os.waitstatus_to_exitcode(status)
    else:
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    p.returncode = rc  # reaped here: Popen must not wait for it again
    if state["fired"] and rc == -9:
        rc = "timeout"
    return rc, ru.ru_maxrss, t_end


def report_delay_ms(path, vals):
    """Milliseconds from main's return (the program's main_return_real_ns, CLOCK_REALTIME) to
    the last write of the report file at `path` (its mtime), or None."""
    real = vals.get("main_return_real_ns")
    if not path or not isinstance(real, int):
        return None
    try:
        return (os.stat(path).st_mtime_ns - real) * 1e-6
    except OSError:
        return None


SPIN_RE = re.compile(r"kt_bench_spin(?:<|ILi)(\d+)")


def spin_values(rep_json):
    """The mixed part's kernels (kt_bench_spin<US>) in a ktime report, as flat values:
    spinUS_mean_us, _timed, _unsampled, _max_us, _sum_us, and with KTIME_TIMER=both
    spinUS_hw_mean_us, _hw_timed, _hw_bias_us."""
    out = {}
    for k in rep_json.get("kernels") or []:
        m = SPIN_RE.search(k.get("mangled") or "") or SPIN_RE.search(k.get("name") or "")
        if not m or k.get("kind", "kernel") != "kernel":
            continue
        us = m.group(1)
        for key in ("mean_us", "timed", "unsampled", "max_us", "sum_us"):
            if isinstance(k.get(key), (int, float)) and not isinstance(k.get(key), bool):
                out["spin%s_%s" % (us, key)] = k[key]
        hw = k.get("hw")
        if isinstance(hw, dict):
            for key in ("mean_us", "timed", "bias_us"):
                if isinstance(hw.get(key), (int, float)) and not isinstance(hw.get(key), bool):
                    out["spin%s_hw_%s" % (us, key)] = hw[key]
    return out


def ktime_report_check(workload, cfg, vals, rj, want_kernels=None):
    """Checks one ktime JSON report (rj) against what the program says it launched (vals) and
    copies its counts into vals. Returns the list of problems (empty: it counted every launch).

    Every configuration: launches_seen is what the program launched (launch, mixed, kernels,
    exit, pending, threads) or at least the kernels it expected (torch). Events (ktime-timed,
    -gated, -both): every launch timed but those dropped as gate_late (threads: timed + dropped).
    KTIME_TIMER=cupti: "timed" comes from CUPTI's records; timed + warmup is every launch, and
    nothing is incomplete but in the pending part, where main returns with launches in flight
    (records CUPTI dropped are incomplete too, so incomplete >= timer.cupti_records_dropped).
    KTIME_TIMER=both: also CUPTI's records of every launch (hw.timed). KTIME_SAMPLE: timed + the
    launches left unsampled. The reports of the configurations of issue 11 (ktime-cupti, -both,
    -sample16) must add up, but in the torch part: launches = warmup + timed + captured +
    dropped + failed + incomplete + unsampled (in cupti mode, launches + kernel runs in graphs).
    """
    t = rj.get("totals") or {}
    tm = rj.get("timer") or {}
    seen, timed = t.get("launches_seen"), t.get("timed")
    method = rj.get("timing_method", "cuda-events")
    cupti_mode = method == "cupti-activity"
    both_mode = method == "cuda-events+cupti-activity"
    vals["ktime_launches_seen"] = seen
    vals["ktime_timed"] = timed
    vals["ktime_kernels"] = len(rj.get("kernels", []))
    vals["ktime_dropped"] = t.get("dropped")
    vals["ktime_incomplete"] = t.get("incomplete_at_exit")
    vals["ktime_timing_method"] = method
    vals["ktime_timer_used"] = tm.get("used", "events")
    for k in ("in_graph", "unsampled", "sample", "warmup_skipped", "captured", "failed_launches"):
        if k in t:
            vals["ktime_" + k] = t[k]
    if tm:
        vals["ktime_cupti_dropped"] = tm.get("cupti_records_dropped")
        vals["ktime_cupti_refused"] = tm.get("cupti_buffers_refused")
    vals.update(spin_values(rj))
    # KTIME_GATE=auto drops a sample whose start event fired before its launch was queued
    # (gate_late): counted, never timed
    late = (t.get("dropped_reasons") or {}).get("gate_late") or 0
    vals["ktime_gate_late"] = late
    vals["ktime_ungated"] = t.get("ungated")
    problems = []
    env = KTIME_ENV.get(cfg, {})
    want_timer = env.get("KTIME_TIMER", "events")
    if tm.get("requested", "events") != want_timer or tm.get("used", "events") != want_timer:
        problems.append("KTIME_TIMER=%s: timer requested %s, used %s (%s)" % (
            want_timer, tm.get("requested"), tm.get("used"), tm.get("note")))
    want_method = {"events": "cuda-events", "cupti": "cupti-activity",
                   "both": "cuda-events+cupti-activity"}[want_timer]
    if method != want_method:
        problems.append("timing_method %s, want %s" % (method, want_method))
    every_timed = cfg in ("ktime-timed", "ktime-gated", "ktime-both")  # events, no sampling
    sample = int(env.get("KTIME_SAMPLE", "1"))
    if sample > 1 and t.get("sample") != sample:
        problems.append("totals.sample %s, want %d" % (t.get("sample"), sample))
    if workload == "torch":
        exp = vals.get("kernels_expected", 0)
        if seen is None or seen < exp:
            problems.append("launches_seen %s < %s expected" % (seen, exp))
        if every_timed and (timed or 0) + late < exp:
            problems.append("timed %s + gate_late %s < %s expected" % (timed, late, exp))
        if cupti_mode and (timed or 0) + (t.get("warmup_skipped") or 0) < exp:
            problems.append("CUPTI: timed %s + warmup %s < %s expected" % (
                timed, t.get("warmup_skipped"), exp))
    else:
        exp = vals.get("launches_total")
        if seen != exp:
            problems.append("launches_seen %s != %s launched" % (seen, exp))
        if every_timed and (timed or 0) + late != exp and workload != "threads":
            problems.append("timed %s + gate_late %s != %s launched" % (timed, late, exp))
        # records of kernels run inside graphs are timed too (in_graph), not launches
        if cupti_mode and workload != "pending" and exp is not None and \
                (timed or 0) + (t.get("warmup_skipped") or 0) != exp + (t.get("in_graph") or 0):
            problems.append("CUPTI: timed %s + warmup %s != %s launched + %s in graphs" % (
                timed, t.get("warmup_skipped"), exp, t.get("in_graph") or 0))
        if workload == "threads" and cfg != "ktime-warmup" and \
                (timed or 0) + (t.get("dropped") or 0) != exp:
            problems.append("timed %s + dropped %s != %s launched" % (timed, t.get("dropped"), exp))
        if cfg == "ktime-warmup" and (timed != 0 or t.get("warmup_skipped") != exp):
            problems.append("warmup config: timed %s (want 0), warmup_skipped %s (want %s)"
                            % (timed, t.get("warmup_skipped"), exp))
        if want_kernels is not None and vals["ktime_kernels"] != want_kernels:
            problems.append("%d kernels in the report, want %d" % (vals["ktime_kernels"], want_kernels))
    if both_mode:
        hw_timed = sum((k.get("hw") or {}).get("timed") or 0 for k in rj.get("kernels") or []
                       if k.get("kind", "kernel") == "kernel")
        vals["ktime_hw_timed"] = hw_timed
        if workload != "torch" and hw_timed != vals.get("launches_total"):
            problems.append("both: %s CUPTI records (hw.timed) != %s launched" % (
                hw_timed, vals.get("launches_total")))
        if workload == "torch" and hw_timed < vals.get("kernels_expected", 0):
            problems.append("both: %s CUPTI records (hw.timed) < %s expected" % (
                hw_timed, vals.get("kernels_expected")))
    # bench's launches all go through ktime's wrappers (PyTorch's may not: its part checks only
    # that the expected kernels were seen and timed)
    if cfg in ("ktime-cupti", "ktime-both", "ktime-sample16") and workload != "torch":
        parts = [t.get(k) for k in ("warmup_skipped", "timed", "captured", "dropped",
                                    "failed_launches", "incomplete_at_exit")]
        lhs = (seen or 0) + ((t.get("in_graph") or 0) if cupti_mode else 0)
        rhs = sum(x or 0 for x in parts) + (t.get("unsampled") or 0)
        adds_up = seen is not None and None not in parts and lhs == rhs
        if not adds_up:
            problems.append("counts do not add up: launches_seen %s%s != warmup %s + timed %s + "
                            "captured %s + dropped %s + failed %s + incomplete %s + unsampled %s" % (
                                seen, " + in_graph %s" % t.get("in_graph") if cupti_mode else "",
                                *parts, t.get("unsampled")))
        if cupti_mode and (t.get("incomplete_at_exit") or 0) < (tm.get("cupti_records_dropped") or 0):
            adds_up = False
            problems.append("incomplete %s < %s records CUPTI dropped" % (
                t.get("incomplete_at_exit"), tm.get("cupti_records_dropped")))
        vals["ktime_counts_ok"] = 1 if adds_up else 0
        if sample > 1 and not (t.get("unsampled") or 0) > 0:
            problems.append("KTIME_SAMPLE=%d left no launch unsampled" % sample)
    if workload == "threads":
        vals["ktime_dropped_reasons"] = t.get("dropped_reasons")
        if t.get("incomplete_at_exit"):
            problems.append("incomplete %s" % t.get("incomplete_at_exit"))
    elif (every_timed or cfg == "ktime-sample16") and \
            ((t.get("dropped") or 0) - late or t.get("incomplete_at_exit")):
        problems.append("dropped %s (%s), incomplete %s" % (t.get("dropped"), t.get("dropped_reasons"),
                                                             t.get("incomplete_at_exit")))
    elif cupti_mode and workload != "pending" and t.get("incomplete_at_exit"):
        problems.append("CUPTI: incomplete %s (records missing after a synchronized end)"
                        % t.get("incomplete_at_exit"))
    return problems


class Runner:
    def __init__(self, a):
        self.a = a
        self.bench = os.path.join(a.bin, "bench")
        self.tracer = os.path.join(a.bin, "libcuptitrace.so")
        self.torch_loop = os.path.join(HERE, "torch_loop.py")
        self.tmp = tempfile.mkdtemp(prefix="ktime-bench-")
        self.deadline = T0 + a.budget_s
        self.data = {"meta": {}, "params": {}, "runs": {}, "sanity": [], "warmup_runs": []}
        self.seq = 0
        self.cupti_warned = False
        base = dict(os.environ)
        for k in list(base):
            if k.startswith("KTIME_") or k.startswith("CUPTITRACE_") or k == "LD_PRELOAD":
                del base[k]
        if base.pop("CUDA_LAUNCH_BLOCKING", None) is not None:
            self.note("CUDA_LAUNCH_BLOCKING was set in the environment; removed for the runs")
        base["PYTHONUNBUFFERED"] = "1"
        self.base_env = base

    def note(self, msg):
        log("note: " + msg)
        self.data["meta"].setdefault("notes", []).append(msg)

    def left(self):
        return self.deadline - time.monotonic()

    def sanity(self, workload, cfg, rep, ok, msg):
        self.data["sanity"].append({"workload": workload, "config": cfg, "rep": rep, "ok": ok, "msg": msg})
        if not ok:
            log("!!!! SANITY FAILURE: %s" % msg)

    def variants(self, workload):
        """The runs of one configuration in one repetition: one per thread count for threads."""
        return self.a.threads if workload == "threads" else [None]

    def command(self, workload, cfg, variant=None):
        a = self.a
        if workload == "launch":
            c = [self.bench, "launch", str(a.launch_n), "--warmup", str(a.launch_warmup)]
        elif workload == "mixed":
            n5, n50, n500 = a.mixed.split(",")
            c = [self.bench, "mixed", "--n5", n5, "--n10", str(a.mixed_n10), "--n50", n50,
                 "--n500", n500]
        elif workload == "torch":
            c = [a.python, self.torch_loop, "--iters", str(a.torch_iters)]
            if cfg == "torch.profiler":
                c += ["--profiler", "--fast-exit"]
        elif workload == "kernels":
            c = [self.bench, "kernels", str(a.kernels_k), "--launches", str(a.kernels_launches)]
        elif workload == "exit":
            c = [self.bench, "kernels", str(a.exit_k), "--launches", str(a.kernels_launches),
                 "--exit-timer"]
        elif workload == "pending":
            c = [self.bench, "pending", str(a.pending_n), "--warmup", str(a.pending_warmup)]
        elif workload == "long":
            c = [self.bench, "launch", str(self.long_n), "--distinct", "100", "--warmup",
                 str(a.launch_warmup), "--rss-at", str(a.long_rss_at)]
        elif workload == "threads":
            c = [self.bench, "threads", str(variant), str(a.threads_n), "--warmup",
                 str(a.threads_warmup)]
        else:
            raise ValueError(workload)
        if cfg == "raw-events":
            c.append("--raw-events")
        return c

    def run_one(self, workload, cfg, rep, cmd=None, timeout=None, record=True, variant=None,
                extra_env=None):
        self.seq += 1
        tag = "%03d-%s%s-%s-r%d" % (self.seq, workload, "" if variant is None else "-%s" % variant,
                                    cfg.replace(".", "_"), rep)
        cmd = cmd or self.command(workload, cfg, variant)
        env = dict(self.base_env)
        report = None
        if cfg.startswith("ktime-"):
            env["LD_PRELOAD"] = self.a.lib
            env.update(KTIME_ENV[cfg])
            report = os.path.join(self.tmp, tag + ".ktime.json")
            env["KTIME_OUTPUT"] = report
            env.update(extra_env or {})
        elif cfg == "cupti":
            env["LD_PRELOAD"] = self.tracer
            report = os.path.join(self.tmp, tag + ".cupti.json")
            env["CUPTITRACE_OUTPUT"] = report
        out = os.path.join(self.tmp, tag + ".out")
        err = os.path.join(self.tmp, tag + ".err")
        if timeout is None:
            timeout = self.a.run_timeout
        timeout = max(5.0, min(timeout, self.left() + 30))
        maxrss = None
        t_start = time.monotonic_ns()
        with open(out, "wb") as fo, open(err, "wb") as fe:
            p = subprocess.Popen(cmd, env=env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)
            if workload == "pending":  # the child's own peak RSS, its exit included
                rc, maxrss, t_end = wait_rusage(p, timeout)
            else:
                try:
                    rc = p.wait(timeout=timeout)
                    t_end = time.monotonic_ns()
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    t_end = time.monotonic_ns()
                    rc = "timeout"
        with open(out, "rb") as f:
            vals = parse_results(f.read().decode("utf-8", "replace"))
        if maxrss is not None and vals:
            vals["maxrss_kb"] = maxrss
        delay = report_delay_ms(report, vals)
        if delay is not None:
            vals["report_ms"] = delay  # the report's last write after main's return
        r = {"rep": rep, "rc": rc, "wall_s": (t_end - t_start) * 1e-9, "values": vals,
             "cmd": cmd, "tag": tag}
        if variant is not None:
            r["variant"] = variant
        r["ok"] = rc == 0 and bool(vals)
        if "main_return_ns" in vals:
            vals["exit_ms"] = (t_end - vals["main_return_ns"]) * 1e-6
        if not r["ok"]:
            log("run FAILED (rc %s): %s %s\n%s" % (rc, cfg, " ".join(cmd), tail_of(err)))
            self.keep_failed(tag)
        if record:
            if rc == 77:
                r["ok"] = False
            wname = workload if variant is None else "%s %s" % (workload, variant)
            self.sanity(workload, cfg, rep, r["ok"], "%s %s rep %d: rc %s%s" % (
                wname, cfg, rep, rc, "" if vals or rc != 0 else ", no RESULT line"))
            if r["ok"]:
                self.check_report(workload, cfg, rep, vals, report, tag, wname)
            self.data["runs"].setdefault(workload, {}).setdefault(cfg, []).append(r)
        return r

    def keep_failed(self, tag):
        d = os.path.join(self.a.out, "failed")
        os.makedirs(d, exist_ok=True)
        for fn in os.listdir(self.tmp):
            if fn.startswith(tag):
                src = os.path.join(self.tmp, fn)
                if os.path.getsize(src) < 8 << 20:
                    shutil.copy(src, d)

    def check_report(self, workload, cfg, rep, vals, report, tag, wname=None):
        """ktime's report must count exactly the launches the program made (launch, mixed,
        kernels, exit, pending, long, threads) or at least the expected ones (torch); see
        ktime_report_check. In the threads part a launch ktime left untimed (dropped) is a
        result, not a broken run: the threads-contention target reports it."""
        where = "%s %s rep %d" % (wname or workload, cfg, rep)
        if cfg == "ktime-disabled":
            ok = not os.path.exists(report)
            self.sanity(workload, cfg, rep, ok, "%s: KTIME_DISABLE=1 %s a report" % (
                where, "wrote" if not ok else "wrote no"))
            return
        if cfg == "cupti":
            try:
                with open(report) as f:
                    c = json.load(f)
            except (OSError, ValueError) as e:
                self.sanity(workload, cfg, rep, False, "%s: no CUPTI tracer output (%s)" % (where, e))
                return
            vals["cupti_kernel_records"] = c.get("kernel_records")
            vals["cupti_dropped"] = c.get("dropped")
            exp = vals.get("launches_total")
            got = c.get("kernel_records") or 0
            # no records at all: CUPTI did not trace, the comparison is void (a failure); fewer
            # than launched: records lost at exit or dropped, which does not change the cost
            self.sanity(workload, cfg, rep, got > 0, "%s: CUPTI saw %s kernel records, program "
                        "launched %s" % (where, got, exp))
            if got > 0 and exp is not None and got < exp and not self.cupti_warned:
                self.cupti_warned = True
                self.note("the CUPTI tracer counted %d of %d kernels in %s (dropped %s); the tracing "
                          "cost is still measured" % (got, exp, where, c.get("dropped")))
            return
        if not cfg.startswith("ktime-"):
            return
        try:
            with open(report) as f:
                rep_json = json.load(f)
        except (OSError, ValueError) as e:
            self.sanity(workload, cfg, rep, False, "%s: no usable ktime report (%s)" % (where, e))
            self.keep_failed(tag)
            return
        want_k = None
        if workload in ("kernels", "exit"):
            want_k = (self.a.kernels_k if workload == "kernels" else self.a.exit_k) + 1
        problems = ktime_report_check(workload, cfg, vals, rep_json, want_k)
        seen, timed = vals.get("ktime_launches_seen"), vals.get("ktime_timed")
        self.sanity(workload, cfg, rep, not problems, "%s: ktime report: %s" % (
            where, "; ".join(problems) if problems else "launches_seen %s, timed %s: ok" % (seen, timed)))
        if problems:
            self.keep_failed(tag)

    def part(self, workload, reps, est_run_s):
        cfgs = [c for c in WORKLOAD_CONFIGS[workload] if c in self.configs]
        if not cfgs:
            return
        variants = self.variants(workload)
        runs = len(cfgs) * len(variants)  # per repetition
        # fewer repetitions (down to 3) to leave the later parts their minimum; parts earlier in
        # PARTS have priority: when 3 repetitions do not fit beside the reserve, they still run
        # if they fit at all, and the later parts shrink or are skipped
        need = est_run_s * runs * reps
        while reps > 3 and need > self.left() - self.reserve(workload):
            reps -= 1
            need = est_run_s * runs * reps
        if need > self.left():
            self.note("part %s skipped: needs about %.0f s, %.0f s left" % (workload, need, self.left()))
            return
        if reps != self.a.part_reps.get(workload, self.a.reps):
            self.note("part %s: %d repetitions (budget)" % (workload, reps))
        log("== %s: %d configs x %d reps%s (about %.0f s)" % (
            workload, len(cfgs), reps,
            "" if variants == [None] else " x %d thread counts" % len(variants), need))
        self.data["params"]["reps_" + workload] = reps
        for rep in range(reps):
            order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
            for variant in variants:
                for cfg in order:
                    r = self.run_one(workload, cfg, rep, variant=variant)
                    v = r["values"]
                    keys = {"launch": ["ns_per_launch", "drain_cpu_frac"],
                            "mixed": ["us_per_iter_5", "us_per_iter_10", "us_per_iter_50",
                                      "us_per_iter_500"],
                            "pending": ["ns_per_launch", "report_ms", "exit_ms", "maxrss_kb",
                                        "ktime_incomplete"],
                            "torch": ["us_per_op"], "kernels": ["rss_pre_kb", "rss_launched_kb", "load_s"],
                            "exit": ["exit_ms"],
                            "threads": ["ns_per_launch", "agg_ns_per_launch", "ktime_dropped"]}[workload]
                    shown = " ".join("%s=%s" % (k, ("%.5g" % v[k]) if isinstance(v.get(k), float) else v[k])
                                     for k in keys if k in v)
                    log("%s rep %d/%d %-15s %s  (%.1f s)" % (
                        workload if variant is None else "%s %s" % (workload, variant), rep + 1, reps,
                        cfg, shown or "no result", r["wall_s"]))

    def reserve(self, workload):
        """Seconds kept back for the parts after this one (their minimum)."""
        rest = PARTS[PARTS.index(workload) + 1:]
        return sum(self.min_cost.get(p, 0) for p in rest if p in self.a.parts)

    def main(self):
        a = self.a
        self.configs = set(ALL_CONFIGS)
        if not os.path.exists(self.tracer):
            self.note("libcuptitrace.so not in --bin: configuration cupti skipped")
            self.configs.discard("cupti")
        meta = self.data["meta"]
        meta.update(gpu_info())
        meta["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        meta["host"] = platform.node()
        meta["cpus"] = os.cpu_count()
        meta["command"] = " ".join([os.path.basename(sys.executable)] + sys.argv)
        meta["lib"] = a.lib
        meta["ktime_build"] = lib_build(a.lib)
        meta["bin"] = a.bin
        try:
            with open(os.path.join(a.bin, "BUILD-INFO.txt")) as f:
                meta["build_info"] = f.read()
        except OSError:
            pass
        p = self.data["params"]
        p.update({"reps": a.reps, "launch_n": a.launch_n, "launch_warmup": a.launch_warmup,
                  "mixed": a.mixed, "torch_iters": a.torch_iters, "kernels_k": a.kernels_k,
                  "kernels_launches": a.kernels_launches, "exit_k": a.exit_k, "long_n": a.long_n,
                  "long_rss_at": a.long_rss_at, "budget_s": a.budget_s, "parts": a.parts,
                  "mixed_n10": a.mixed_n10, "pending_n": a.pending_n,
                  "pending_warmup": a.pending_warmup, "exit_wait_ms": EXIT_WAIT_MS,
                  "cupti_buffer_mb": CUPTI_BUFFER_MB,
                  "threads": a.threads, "threads_n": a.threads_n, "threads_warmup": a.threads_warmup})
        log("GPU: %s, driver %s; budget %.0f s; tmp %s" % (meta.get("gpu"), meta.get("driver"),
                                                           a.budget_s, self.tmp))

        # warm-up round: one bare run of each workload (page cache, JIT cache of the generated
        # PTX, torch import), timed to plan the budget
        est = {}
        if "untimed" in a.parts:
            self.untimed_part()
        log("== warm-up round (not measured)")
        wl = {"launch": [self.bench, "launch", "20000", "--warmup", "1000"],
              "mixed": self.command("mixed", "bare"),
              "kernels": self.command("kernels", "bare"),
              "exit": self.command("exit", "bare"),
              "pending": self.command("pending", "bare"),
              "torch": [a.python, self.torch_loop, "--iters", str(a.torch_iters)],
              "threads": self.command("threads", "bare", max(a.threads))}
        for w in ("launch", "mixed", "kernels", "exit", "pending", "torch", "threads"):
            if w not in a.parts and not (w == "launch" and "long" in a.parts):
                continue
            r = self.run_one(w, "bare", -1, cmd=wl[w], record=False)
            self.data["warmup_runs"].append({"workload": w, "rc": r["rc"], "wall_s": r["wall_s"],
                                             "values": r["values"]})
            log("warm-up %-8s rc %s  %.1f s" % (w, r["rc"], r["wall_s"]))
            if w == "torch" and not r["ok"]:
                self.note("torch loop failed in the warm-up run (rc %s): part torch skipped" % r["rc"])
                a.parts = [x for x in a.parts if x != "torch"]
                continue
            if r["rc"] == 77 or (w == "launch" and not r["ok"]):
                log("bench does not run on this GPU; giving up")
                sys.exit(2 if r["rc"] != 77 else 77)
            if w == "torch" and r["ok"]:
                meta["torch"] = r["values"].get("torch")
            if w == "mixed" and r["ok"]:
                meta["blocks"] = r["values"].get("blocks")
            est[w] = r["wall_s"]
        wv = {w["workload"]: w["values"] for w in self.data["warmup_runs"]}
        if "launch" in est:
            # the warm-up launch run was 21k launches: start-up and exit = wall - launch time;
            # scale the launches to launch_n + launch_warmup, the slower configs ~1.6x
            ns = wv["launch"].get("ns_per_launch", 5000.0)
            fixed = max(est["launch"] - 21000 * ns * 1e-9, 0.2)
            est["launch"] = fixed + ns * 1e-9 * (a.launch_n + a.launch_warmup) * 1.6
        if "threads" in est:
            # the warm-up run was bare at the most threads: the longest bare run; the other
            # configurations are slower (~1.6x), the runs with fewer threads shorter
            est["threads"] *= 1.6
            if max(a.threads) + 1 > (os.cpu_count() or 0):
                self.note("threads: %d launching threads and ktime's drain thread on %s CPUs"
                          % (max(a.threads), os.cpu_count()))
        if "pending" in est:
            # the warm-up run was bare; under CUPTI the launches are slower (~1.2-1.3x), and
            # ktime-cupti's exit may wait up to KTIME_EXIT_WAIT_MS: on average over the three
            # configurations about 1.2x bare plus a third of the wait
            est["pending"] = est["pending"] * 1.2 + EXIT_WAIT_MS * 1e-3 / 3
        if "kernels" in est and est["kernels"] > 20:
            self.note("kernels %d took %.0f s in the warm-up run (PTX JIT?); load_s is in bench.json"
                      % (a.kernels_k, est["kernels"]))
        self.min_cost = {w: 3 * len(WORKLOAD_CONFIGS[w]) * len(self.variants(w)) * est.get(w, 2.0) * 1.3
                         for w in est}
        self.min_cost["long"] = 40.0

        for w in PARTS:
            if w not in a.parts:
                continue
            if w == "untimed":
                continue  # measured through the fake driver before the warm-up round
            if w == "long":
                self.long_part()
                continue
            self.part(w, a.part_reps.get(w, a.reps), est.get(w, 2.0) * 1.3)
            if w == "launch" and self.left() > est.get(w, 2.0) * 1.3 + self.reserve(w):
                self.drain_breakdown()

        meta["wall_s"] = time.monotonic() - T0
        if not a.keep_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            log("run files kept in %s" % self.tmp)
        log("all runs done in %.0f s; results in %s" % (meta["wall_s"], a.out))
        return emit(self.data, a.out)

    def untimed_part(self):
        """ktime's untimed path against the fake driver of the test suite (untimed_fake.py):
        the GPU's own launch varies more between repetitions than the whole path costs."""
        build = self.a.fake_build
        if not build:
            self.note("untimed: no --fake-build (a built tree with its tests): part skipped")
            return
        log("== untimed: ktime's untimed path against the fake driver (%s)" % build)
        try:
            self.data["untimed_fake"] = untimed_fake.measure(build, self.a.untimed_n,
                                                             max(self.a.reps, 9), log=log)
        except RuntimeError as e:
            self.note("untimed: %s: part skipped" % e)

    def drain_breakdown(self):
        """One more ktime-timed launch run, with KTIME_LOG=debug: where the drain thread's time
        goes (its passes, and the driver calls inside them, as libktime times them itself).
        Kept apart from the measured runs: the timing adds clock reads to the drain."""
        log("== drain breakdown: launch, ktime-timed, KTIME_LOG=debug (not a measured run)")
        r = self.run_one("launch", "ktime-timed", -1, record=False, extra_env={"KTIME_LOG": "debug"})
        try:
            with open(os.path.join(self.tmp, r["tag"] + ".err"), encoding="utf-8", errors="replace") as f:
                err = f.read()
        except OSError:
            err = ""
        b = parse_drain_debug(err)
        if b is None:
            self.note("drain breakdown: no 'drain time' line from KTIME_LOG=debug (rc %s)" % r["rc"])
            return
        b["launches"] = r["values"].get("launches_total")
        b["drain_cpu_s"] = r["values"].get("drain_cpu_s")
        self.data["drain_breakdown"] = b
        log("drain breakdown: %s" % json.dumps(b, sort_keys=True))

    def long_part(self):
        a = self.a
        ns = med(self.data, "launch", "ktime-timed", "ns_per_launch_incl_sync") or 6000.0
        avail = self.left() - 15.0
        n = int(min(a.long_n, avail / (ns * 1e-9 * 1.15)))
        n = (n // 100000) * 100000
        if n < max(10 * a.long_rss_at, 1000000):
            self.note("long RSS run skipped: %.0f s left, %.0f ns per timed launch" % (self.left(), ns))
            self.data["params"]["long_n_run"] = None
            return
        self.long_n = n
        self.data["params"]["long_n_run"] = n
        if n < a.long_n:
            msg = "long RSS run shortened to %d launches (budget; %.0f ns per timed launch)" % (n, ns)
            self.note(msg)
            self.data["params"]["long_note"] = msg
        log("== long: ktime-timed, launch %d --distinct 100 (about %.0f s)" % (n, n * ns * 1e-9))
        r = self.run_one("long", "ktime-timed", 0, timeout=self.left() + 10)
        v = r["values"]
        log("long: RSS %s kB after %s, %s kB at end (%.1f s)" % (v.get("rss_mid_kb"), v.get("rss_mid_at"),
                                                                 v.get("rss_end_kb"), r["wall_s"]))


def gpu_info():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,persistence_mode,"
                            "clocks.sm,clocks.max.sm", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if q.returncode != 0 or not q.stdout.strip():
        return {}
    first = [x.strip() for x in q.stdout.strip().splitlines()[0].split(",")]
    info = {"gpu": first[0], "driver": first[1] if len(first) > 1 else "?",
            "gpu_count": len(q.stdout.strip().splitlines())}
    if len(first) >= 5:
        info.update({"persistence_mode": first[2], "sm_clock_at_start": first[3],
                     "sm_clock_max": first[4]})
    return info


# ---------------------------------------------------------------------------------------------
# self-test: synthetic data through the analysis

def synthetic(seed=1, good=True):
    rnd = random.Random(seed)
    data = {"meta": {"gpu": "SYNTHETIC H100", "driver": "580.00", "date": "selftest",
                     "command": "run.py --selftest", "blocks": 132, "torch": "0"},
            "params": {"reps": 5, "launch_n": 200000, "kernels_k": 10000, "exit_k": 1000,
                       "long_n_run": 10000000, "long_rss_at": 100000, "threads": [1, 4, 16],
                       "threads_n": 20000, "mixed_n10": 10000, "pending_n": 1000000,
                       "exit_wait_ms": 2000.0, "cupti_buffer_mb": 8},
            "runs": {}, "sanity": []}
    base_ns = {"bare": 3200, "ktime-disabled": 3210, "ktime-warmup": 3230 if good else 3290,
               "ktime-timed": 4750 if good else 5200, "raw-events": 4700, "cupti": 3900}

    def add(w, cfg, rep, vals):
        data["runs"].setdefault(w, {}).setdefault(cfg, []).append(
            {"rep": rep, "rc": 0, "ok": True, "wall_s": 1.0, "values": vals})
        data["sanity"].append({"workload": w, "config": cfg, "rep": rep, "ok": True, "msg": "ok"})

    for rep in range(5):
        for cfg, ns in base_ns.items():
            v = {"ns_per_launch": ns + rnd.uniform(-8, 8), "launch_rate": 1e9 / ns}
            if cfg == "ktime-timed":
                v.update({"drain_found": 1, "drain_cpu_frac": 0.06, "drain_ns_per_launch": 290.0,
                          "drain_src": "schedstat", "ns_per_launch_incl_sync": ns + 5})
            add("launch", cfg, rep, v)
        for cfg in WORKLOAD_CONFIGS["mixed"]:
            f = {"ktime-timed": 1.004 if good else 1.03, "cupti": 1.002,
                 "ktime-cupti": 1.0025 if good else 1.02, "ktime-sample16": 1.001}.get(cfg, 1.0)
            # the 10 us loop: every launch timed costs an event pair (+30 %), one in 16 +2 %
            f10 = {"ktime-timed": 1.3, "ktime-both": 1.3, "ktime-gated": 1.4, "ktime-nogate": 1.3,
                   "raw-events": 1.3, "ktime-sample16": 1.02 if good else 1.08}.get(cfg, f)
            v = {"us_per_iter_5": 7.0 * f, "us_per_iter_10": 11.3 * f10,
                 "us_per_iter_50": 51.5 * f + rnd.uniform(0, .01), "us_per_iter_500": 501.6 * f}
            # the per-kernel figures ktime's reports give (run.py's spin_values)
            hw = {"5": 5.4, "10": 10.4, "50": 50.4, "500": 500.4}
            n = {"5": 5020, "10": 10020, "50": 2020, "500": 420}
            for us in MIXED_SIZES:
                mean = {"ktime-cupti": hw[us], "ktime-sample16": hw[us] + 3.0 + (0.05 if good else 0.6)
                        if us == "10" else hw[us] + 3.0}.get(cfg, hw[us] + 3.0)
                cnt = n[us] // 16 if cfg == "ktime-sample16" else n[us]
                if cfg.startswith("ktime-") and cfg not in ("ktime-disabled", "ktime-warmup"):
                    v.update({"spin%s_mean_us" % us: mean, "spin%s_timed" % us: cnt,
                              "spin%s_max_us" % us: mean + 200.0,
                              "spin%s_sum_us" % us: mean * cnt})
                if cfg == "ktime-both":
                    v.update({"spin%s_hw_mean_us" % us: hw[us], "spin%s_hw_timed" % us: n[us],
                              "spin%s_hw_bias_us" % us: 3.0 + rnd.uniform(-.2, .2)})
            add("mixed", cfg, rep, v)
        for cfg, us in (("bare", 8.0), ("ktime-timed", 9.6), ("ktime-cupti", 9.2 if good else 10.4),
                        ("torch.profiler", 14.0)):
            add("torch", cfg, rep, {"us_per_op": us + rnd.uniform(-.05, .05)})
        for cfg, rss, rep_ms in (("bare", 480000, None), ("cupti", 540000, 300.0),
                                 ("ktime-cupti", 530000 if good else 620000,
                                  (420.0 + rep) if good else 2600.0)):
            v = {"ns_per_launch": 3300.0, "launches_total": 1001000, "main_return_ns": 1,
                 "exit_ms": (rep_ms or 150.0) + 40.0, "maxrss_kb": rss + rep, "hwm_kb": rss - 1000}
            if rep_ms is not None:
                v["report_ms"] = rep_ms
            if cfg == "ktime-cupti":
                v.update({"ktime_timed": 1000000, "ktime_incomplete": 1000, "ktime_cupti_dropped": 0,
                          "ktime_cupti_refused": 0, "ktime_counts_ok": 1 if good or rep else 0})
            add("pending", cfg, rep, v)
        if rep < 3:
            add("kernels", "bare", rep, {"rss_pre_kb": 300000, "rss_launched_kb": 420000, "rss_kb": 420000,
                                         "load_s": 0.5})
            add("kernels", "ktime-timed", rep, {"rss_pre_kb": 302000,
                                                "rss_launched_kb": 422000 + (30000 if good else 90000),
                                                "rss_kb": 452000, "load_s": 0.5})
        for n in (1, 4, 16):
            # per-thread ns per launch; the driver's own contention slows every configuration
            # alike, ktime's (bad data) only ktime's
            slow = 1.0 + 0.02 * (n - 1)
            for cfg, ns in (("bare", 3200), ("ktime-warmup", 3230), ("raw-events", 4700),
                            ("ktime-timed", 4750), ("ktime-nogate", 4650)):
                f = slow * (1.25 if not good and cfg == "ktime-warmup" and n == 16 else 1.0)
                v = {"threads": n, "n": 20000, "ns_per_launch": ns * f + rnd.uniform(-8, 8),
                     "agg_ns_per_launch": ns * f / n, "wall_s": ns * f * 20000e-9,
                     "launches_total": n * 25000}
                if cfg.startswith("ktime-"):
                    v.update({"ktime_dropped": 0, "drain_cpu_frac": 0.05 * n})
                add("threads", cfg, rep, v)
        add("exit", "bare", rep, {"exit_ms": 20.0 + rep, "main_return_ns": 1})
        add("exit", "ktime-timed", rep, {"exit_ms": 31.0 + rep if good else 150.0, "main_return_ns": 1})
    add("long", "ktime-timed", 0, {"n": 10000000, "rss_mid_at": 100000, "rss_mid_kb": 400000,
                                   "rss_end_kb": 400300 if good else 409000, "ns_per_launch": 4800})
    data["drain_breakdown"] = parse_drain_debug(
        "ktime: debug: drain: 900 passes, 20000 event queries (100 found it pending), 200000 "
        "elapsed-time calls\nktime: debug: drain time: passes 60.000 ms wall, 58.000 ms CPU; in "
        "cuEventQuery 4.000 ms (200 ns per call); in cuEventElapsedTime 36.000 ms (180 ns per call)\n")
    return data


def fake_ktime_report(timer="events", seen=1000, timed=1000, warmup=0, captured=0, dropped=0,
                      late=0, failed=0, incomplete=0, unsampled=0, sample=1, in_graph=0,
                      cupti_dropped=0, used=None, note=None, kernels=None):
    """A ktime JSON report as report.c writes it, for the selftest (the fields run.py reads)."""
    method = {"events": "cuda-events", "cupti": "cupti-activity",
              "both": "cuda-events+cupti-activity"}[used or timer]
    return {"schema_version": 1, "timing_method": method,
            "timer": {"requested": timer, "used": used or timer, "note": note,
                      "cupti_library": None if timer == "events" else "/usr/local/cuda/lib64/libcupti.so.13",
                      "cupti_records_dropped": cupti_dropped, "cupti_buffers_refused": 0},
            "kernels": kernels or [],
            "totals": {"launches_seen": seen, "timed": timed, "ungated": 0, "warmup_skipped": warmup,
                       "captured": captured, "dropped": dropped,
                       "dropped_reasons": {"pool_exhausted": dropped - late, "gate_late": late},
                       "failed_launches": failed, "incomplete_at_exit": incomplete,
                       "in_graph": in_graph, "unsampled": unsampled, "sample": sample,
                       "timed_total_ms": 1.0}}


def spin_kernel(us, timed, mean, hw=None, unsampled=0):
    k = {"name": "void kt_bench_spin<%d>(int*)" % us, "mangled": "_Z13kt_bench_spinILi%dEEvPi" % us,
         "kind": "kernel", "calls": timed, "timed": timed, "unsampled": unsampled,
         "total_estimated": bool(unsampled), "mean_us": mean, "max_us": mean + 100.0,
         "sum_us": mean * timed, "in_graph": 0, "cupti_timed": 0}
    if hw:
        k["hw"] = dict(hw)
    return k


def selftest_reports():
    """ktime_report_check on synthetic reports: the cupti-mode fields, sampling, both."""
    failures = []

    def check(name, workload, cfg, vals, rj, want_problem):
        v = dict(vals)
        probs = ktime_report_check(workload, cfg, v, rj)
        text = "; ".join(probs)
        if (want_problem is None and probs) or (want_problem is not None and want_problem not in text):
            failures.append("report check %s: got %r, want %s" % (
                name, text, "none" if want_problem is None else repr(want_problem)))
        return v

    mixed = {"launches_total": 1000}
    # events: every launch timed but gate_late; one short is a problem
    check("events ok", "mixed", "ktime-timed", mixed,
          fake_ktime_report(timed=997, dropped=3, late=3), None)
    check("events short", "launch", "ktime-timed", mixed,
          fake_ktime_report(timed=990, dropped=3, late=3), "timed 990 + gate_late 3 != 1000 launched")
    # KTIME_TIMER=cupti: timed from records, the spin kernels' means read by length
    v = check("cupti ok", "mixed", "ktime-cupti", mixed,
              fake_ktime_report("cupti", kernels=[spin_kernel(10, 600, 10.4), spin_kernel(500, 400, 500.4)]),
              None)
    if v.get("spin10_mean_us") != 10.4 or v.get("spin500_timed") != 400 or v.get("ktime_counts_ok") != 1 \
            or v.get("ktime_timer_used") != "cupti":
        failures.append("report check cupti ok: values %r" % v)
    check("cupti, incomplete outside pending", "mixed", "ktime-cupti", mixed,
          fake_ktime_report("cupti", timed=990, incomplete=10),
          "CUPTI: timed 990 + warmup 0 != 1000 launched")
    check("cupti fell back to events", "mixed", "ktime-cupti", mixed,
          fake_ktime_report("cupti", used="events", note="no libcupti could be loaded"),
          "timer requested cupti, used events (no libcupti could be loaded)")
    check("cupti graphs", "mixed", "ktime-cupti", {"launches_total": 900},
          fake_ktime_report("cupti", seen=900, timed=1000, in_graph=100), None)
    check("cupti graphs, a record short", "mixed", "ktime-cupti", {"launches_total": 900},
          fake_ktime_report("cupti", seen=900, timed=999, in_graph=100, incomplete=1),
          "CUPTI: timed 999 + warmup 0 != 900 launched + 100 in graphs")
    # the pending part: incomplete allowed, the counts must add up, dropped records incomplete
    pend = {"launches_total": 1001000}
    v = check("pending ok", "pending", "ktime-cupti", pend,
              fake_ktime_report("cupti", seen=1001000, timed=990000, incomplete=11000,
                                cupti_dropped=5000), None)
    if v.get("ktime_counts_ok") != 1 or v.get("ktime_cupti_dropped") != 5000:
        failures.append("report check pending ok: values %r" % v)
    v = check("pending, counts off", "pending", "ktime-cupti", pend,
              fake_ktime_report("cupti", seen=1001000, timed=990000, incomplete=10000),
              "counts do not add up: launches_seen 1001000 + in_graph 0 != warmup 0 + timed 990000")
    if v.get("ktime_counts_ok") != 0:
        failures.append("report check pending, counts off: counts_ok %r" % v.get("ktime_counts_ok"))
    check("pending, dropped not incomplete", "pending", "ktime-cupti", pend,
          fake_ktime_report("cupti", seen=1001000, timed=991000, incomplete=10000, cupti_dropped=20000),
          "incomplete 10000 < 20000 records CUPTI dropped")
    check("pending, seen short", "pending", "ktime-cupti", pend,
          fake_ktime_report("cupti", seen=1000000, timed=1000000), "launches_seen 1000000 != 1001000")
    # torch: at least the expected kernels, from records
    check("torch cupti ok", "torch", "ktime-cupti", {"kernels_expected": 31500},
          fake_ktime_report("cupti", seen=31510, timed=31510), None)
    check("torch cupti short", "torch", "ktime-cupti", {"kernels_expected": 31500},
          fake_ktime_report("cupti", seen=31510, timed=31000, incomplete=510),
          "CUPTI: timed 31000 + warmup 0 < 31500 expected")
    # KTIME_TIMER=both: events as ktime-timed, and a record of every launch with the bias
    hw = {"timed": 600, "mean_us": 10.4, "bias_us": 3.1}
    v = check("both ok", "mixed", "ktime-both", mixed,
              fake_ktime_report("both", timed=999, dropped=1, late=1,
                                kernels=[spin_kernel(10, 599, 13.5, hw),
                                         spin_kernel(50, 400, 53.4, dict(hw, timed=400))]), None)
    if v.get("spin10_hw_bias_us") != 3.1 or v.get("spin50_hw_timed") != 400:
        failures.append("report check both ok: values %r" % v)
    check("both, records missing", "mixed", "ktime-both", mixed,
          fake_ktime_report("both", kernels=[spin_kernel(10, 1000, 13.5, dict(hw, timed=900))]),
          "both: 900 CUPTI records (hw.timed) != 1000 launched")
    # KTIME_SAMPLE=16: timed + unsampled
    v = check("sample ok", "mixed", "ktime-sample16", mixed,
              fake_ktime_report(timed=60, unsampled=938, dropped=2, late=2, sample=16,
                                kernels=[spin_kernel(10, 60, 13.45, unsampled=938)]), None)
    if v.get("spin10_unsampled") != 938 or v.get("ktime_sample") != 16:
        failures.append("report check sample ok: values %r" % v)
    check("sample not set", "mixed", "ktime-sample16", mixed,
          fake_ktime_report(timed=1000, sample=1), "totals.sample 1, want 16")
    check("sample counts off", "mixed", "ktime-sample16", mixed,
          fake_ktime_report(timed=60, unsampled=900, sample=16), "counts do not add up")
    # a report from before issue 11 (no timer object) is still an events report
    old = fake_ktime_report(timed=1000)
    del old["timer"], old["timing_method"]
    check("pre-issue-11 report", "mixed", "ktime-timed", mixed, old, None)
    return failures


def selftest_running(tmp):
    """The parts of running that need no GPU: commands, wait_rusage, the report's delay."""
    import types
    failures = []
    fake = types.SimpleNamespace(a=types.SimpleNamespace(mixed="5000,2000,300", mixed_n10=10000,
                                                         pending_n=1000000, pending_warmup=1000),
                                 bench="B")
    got = [Runner.command(fake, "mixed", "ktime-cupti"), Runner.command(fake, "pending", "ktime-cupti")]
    if got != [["B", "mixed", "--n5", "5000", "--n10", "10000", "--n50", "2000", "--n500", "300"],
               ["B", "pending", "1000000", "--warmup", "1000"]]:
        failures.append("mixed/pending commands: %s" % got)
    if KTIME_ENV["ktime-cupti"].get("KTIME_TIMER") != "cupti" or \
            KTIME_ENV["ktime-both"].get("KTIME_TIMER") != "both" or \
            KTIME_ENV["ktime-sample16"].get("KTIME_SAMPLE") != "16":
        failures.append("KTIME_ENV of the issue-11 configurations")
    # wait_rusage: exit status, the child's own peak RSS, the kill at the timeout
    code = "import sys; b = bytearray(64 << 20); sys.exit(3)"
    p = subprocess.Popen([sys.executable, "-c", code])
    rc, rss, t_end = wait_rusage(p, 60)
    if rc != 3 or not isinstance(rss, int) or rss < 64 * 1024 or p.returncode != 3 or \
            not isinstance(t_end, int):
        failures.append("wait_rusage: rc %r, maxrss %r kB, returncode %r" % (rc, rss, p.returncode))
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    t0 = time.monotonic()
    rc, rss, _ = wait_rusage(p, 0.5)
    if rc != "timeout" or time.monotonic() - t0 > 10:
        failures.append("wait_rusage at the timeout: rc %r after %.1f s" % (rc, time.monotonic() - t0))
    # the report's delay: its mtime after main_return_real_ns (CLOCK_REALTIME)
    path = os.path.join(tmp, "report-delay.json")
    real = time.time_ns()
    with open(path, "w") as f:
        f.write("{}")
    os.utime(path, ns=(real + 1500 * 1000000, real + 1500 * 1000000))
    dl = report_delay_ms(path, {"main_return_real_ns": real})
    if dl is None or abs(dl - 1500.0) > 1e-6 or report_delay_ms(path, {}) is not None or \
            report_delay_ms(os.path.join(tmp, "absent"), {"main_return_real_ns": real}) is not None:
        failures.append("report_delay_ms: %r" % dl)
    v = parse_results("RESULT workload=pending launches_total=1001000 "
                      "main_return_real_ns=1790000000123456789 main_return_ns=123456789012\n")
    if v.get("main_return_real_ns") != 1790000000123456789 or v.get("launches_total") != 1001000:
        failures.append("parse_results, pending: %s" % v)
    return failures


def selftest():
    tmp = tempfile.mkdtemp(prefix="ktime-bench-selftest-")
    failures = []
    # 1. a run where everything meets its target
    d = synthetic(good=True)
    rc = emit(d, os.path.join(tmp, "good"))
    res = {t["id"]: t["result"] for t in d["targets"]}
    want = {"untimed-disabled": "PASS", "untimed-warmup": "PASS", "timed-launch": "PASS",
            "drain-cpu": "PASS", "kernels-50us": "PASS", "kernels-500us": "PASS", "torch": "PASS",
            "mem-per-kernel": "PASS", "rss-growth": "PASS", "exit": "PASS", "exit-added": "PASS",
            "threads-contention": "PASS", "sanity": "PASS", "cupti-10us": "PASS",
            "cupti-50us": "PASS", "cupti-500us": "PASS", "sample16-10us": "PASS",
            "sample16-mean": "PASS", "torch-cupti": "PASS", "exit-pending": "PASS",
            "exit-pending-rss": "PASS", "exit-pending-counts": "PASS"}
    if res != want or rc != 0:
        failures.append("good data: rc %s, %s" % (rc, res))
    with open(os.path.join(tmp, "good", "bench.md"), encoding="utf-8") as f:
        if ("drain breakdown (one KTIME_LOG=debug run, 200000 samples) | per sample: passes 300 ns "
                "wall, 290 ns CPU; cuEventElapsedTime 180 ns (200000 calls), cuEventQuery 20 ns "
                "(20000 calls), rest of the pass 100 ns") not in f.read():
            failures.append("good data: no drain breakdown row in bench.md")
    # the PyTorch target states the event-pair floor: bare op 8.0 us + (raw 4700 - bare 3200 ns)
    tt = [t for t in d["targets"] if t["id"] == "torch"]
    fl = re.search(r"floor of an event pair per op .*: ([0-9.]+) x", tt[0]["detail"]) if tt else None
    if not fl or not 1.18 <= float(fl.group(1)) <= 1.20:
        failures.append("torch target: no event-pair floor of about 1.19 x in %r" % (tt[0] if tt else None))
    if parse_drain_debug("ktime: debug: drain: 1 passes") is not None:
        failures.append("parse_drain_debug accepted a partial line")
    # 1b. the untimed targets follow the fake-driver measurement when there is one
    d = synthetic(good=True)
    d["untimed_fake"] = {"n": 1000, "reps": 3, "cpu": "test CPU (1 CPUs)",
                         "ns": {"bare": [100.0, 101.0, 99.0], "ktime-disabled": [103.0, 104.0, 102.0],
                                "ktime-warmup": [170.0, 171.0, 169.0]}}
    emit(d, os.path.join(tmp, "fake"))
    res = {t["id"]: (t["result"], t["measured"]) for t in d["targets"]}
    if res.get("untimed-disabled") != ("PASS", "+3.0 ns (fake driver)") or \
            res.get("untimed-warmup") != ("FAIL", "+70.0 ns (fake driver)"):
        failures.append("untimed from the fake driver: %s" % res)
    with open(os.path.join(tmp, "fake", "bench.md"), encoding="utf-8") as f:
        if "## Untimed path against the fake driver (1000 launches x 3 runs, test CPU" not in f.read():
            failures.append("no fake-driver table in bench.md")
    # 2. a run that misses targets
    d = synthetic(good=False)
    d["sanity"].append({"workload": "launch", "config": "ktime-timed", "rep": 0, "ok": False,
                        "msg": "launch ktime-timed rep 0: ktime report: timed 1 != 2 launched"})
    rc = emit(d, os.path.join(tmp, "bad"))
    res = {t["id"]: t["result"] for t in d["targets"]}
    for k in ("untimed-warmup", "timed-launch", "kernels-50us", "kernels-500us", "mem-per-kernel",
              "rss-growth", "exit", "threads-contention", "sanity", "cupti-10us", "cupti-50us",
              "cupti-500us", "sample16-10us", "sample16-mean", "torch-cupti", "exit-pending",
              "exit-pending-rss", "exit-pending-counts"):
        if res.get(k) != "FAIL":
            failures.append("bad data: %s is %s, want FAIL" % (k, res.get(k)))
    if res.get("untimed-disabled") != "PASS":
        failures.append("bad data: untimed-disabled is %s" % res.get("untimed-disabled"))
    if rc != 2:
        failures.append("bad data: rc %s, want 2" % rc)
    # 3. drain projection below 200k launches/s; missing parts are n/a
    d = synthetic(good=True)
    for r in d["runs"]["launch"]["ktime-timed"]:
        r["values"]["launch_rate"] = 150000.0
        r["values"]["drain_ns_per_launch"] = 600.0
    del d["runs"]["torch"]
    del d["runs"]["long"]
    rc = emit(d, None)
    res = {t["id"]: t["result"] for t in d["targets"]}
    if res.get("drain-cpu") != "FAIL" or res.get("torch") != "n/a" or res.get("rss-growth") != "n/a":
        failures.append("partial data: %s" % res)
    if rc != 1:
        failures.append("partial data: rc %s, want 1" % rc)
    # 3b. threads: the target follows the untimed path's ratio to bare; launches the timed
    # configurations left untimed are reported, not failed; one thread count only is n/a
    d = synthetic(good=True)
    for r in d["runs"]["threads"]["ktime-timed"]:
        if r["values"]["threads"] == 16:
            r["values"]["ktime_dropped"] = 1234
    emit(d, None)
    t = [t for t in d["targets"] if t["id"] == "threads-contention"][0]
    if t["result"] != "PASS" or "1234 of 400000 launches untimed" not in t["detail"]:
        failures.append("threads with drops: %s / %s" % (t["result"], t["detail"]))
    d = synthetic(good=True)
    for r in d["runs"]["threads"]["ktime-warmup"]:
        if r["values"]["threads"] == 16:
            r["values"]["ns_per_launch"] *= 1.2
    emit(d, None)
    t = [t for t in d["targets"] if t["id"] == "threads-contention"][0]
    if t["result"] != "FAIL" or "-> 1.2" not in t["measured"]:
        failures.append("threads, untimed path contended: %s / %s" % (t["result"], t["measured"]))
    d = synthetic(good=True)
    for cfg in d["runs"]["threads"]:
        d["runs"]["threads"][cfg] = [r for r in d["runs"]["threads"][cfg] if r["values"]["threads"] == 4]
    emit(d, None)
    t = [t for t in d["targets"] if t["id"] == "threads-contention"][0]
    if t["result"] != "n/a":
        failures.append("threads, one count only: %s" % t["result"])
    # 3c. the threads commands run.py would run
    import types
    fake = types.SimpleNamespace(a=types.SimpleNamespace(threads=[1, 4, 16], threads_n=20000,
                                                         threads_warmup=5000), bench="B")
    got = [Runner.command(fake, "threads", c, 16) for c in ("bare", "raw-events")]
    if got != [["B", "threads", "16", "20000", "--warmup", "5000"],
               ["B", "threads", "16", "20000", "--warmup", "5000", "--raw-events"]]:
        failures.append("threads commands: %s" % got)
    if Runner.variants(fake, "threads") != [1, 4, 16] or Runner.variants(fake, "launch") != [None]:
        failures.append("threads variants")
    # 3d. issue 11: the targets' figures and the new tables
    d = synthetic(good=True)
    emit(d, os.path.join(tmp, "good11"))
    res = {t["id"]: t for t in d["targets"]}
    if not re.match(r"\+0\.0[0-9]{2} % \(vs bare: ktime-cupti \+0\.25 %, tracer \+0\.20 %\)$",
                    res["cupti-500us"]["measured"]):
        failures.append("cupti-500us measured: %r" % res["cupti-500us"]["measured"])
    if res["sample16-mean"]["measured"] != "13.450 us vs 13.400 us (+0.37 %)" or \
            "samples per run 626 vs 10020" not in res["sample16-mean"]["detail"]:
        failures.append("sample16-mean: %r / %r" % (res["sample16-mean"]["measured"],
                                                   res["sample16-mean"]["detail"]))
    if res["exit-pending"]["measured"] != "max 424 ms, median 422 ms (5 of 5 runs wrote one)" or \
            res["exit-pending-rss"]["measured"] != "+50000 kB (raw tracer +60000 kB)":
        failures.append("exit-pending: %r, %r" % (res["exit-pending"]["measured"],
                                                 res["exit-pending-rss"]["measured"]))
    b10 = d["summary"]["both_bias"].get("10", {})
    if not b10 or not 2.8 <= b10["bias_us"]["median"] <= 3.2 or b10["hw_mean_us"]["median"] != 10.4:
        failures.append("both_bias: %r" % b10)
    with open(os.path.join(tmp, "good11", "bench.md"), encoding="utf-8") as f:
        md = f.read()
    for want_md in (r"## Events against the hardware \(mixed part, KTIME_TIMER=both",
                    r"\| kt_bench_spin<10> +\| 13\.400 +\| 10\.400 +\| \+2\.9",
                    r"## Exit with launches pending \(bench pending 1000000",
                    r"\| ktime-cupti +\| 5 +\| 3300 \[3300-3300\] +\| 422 \[420-424\] +\|",
                    r"\| config +\| 5 us +\| 10 us +\| 50 us +\| 500 us +\|"):
        if not re.search(want_md, md):
            failures.append("bench.md lacks %r" % want_md)
    # the raw tracer missing: its targets are not measured; the sampled mean off by itself fails
    d = synthetic(good=True)
    del d["runs"]["mixed"]["cupti"]
    del d["runs"]["pending"]["cupti"]
    for r in d["runs"]["mixed"]["ktime-sample16"]:
        r["values"]["spin10_mean_us"] *= 1.05
    emit(d, None)
    res = {t["id"]: t["result"] for t in d["targets"]}
    if [res[k] for k in ("cupti-10us", "cupti-50us", "cupti-500us", "exit-pending-rss",
                         "sample16-10us", "sample16-mean", "exit-pending")] != \
            ["n/a", "n/a", "n/a", "n/a", "PASS", "FAIL", "PASS"]:
        failures.append("no raw tracer / sampled mean off: %s" % res)
    # one ktime-cupti pending run without a report: the exit target fails
    d = synthetic(good=True)
    del d["runs"]["pending"]["ktime-cupti"][2]["values"]["report_ms"]
    emit(d, None)
    t = [t for t in d["targets"] if t["id"] == "exit-pending"][0]
    if t["result"] != "FAIL" or "4 of 5 runs" not in t["measured"]:
        failures.append("exit-pending, a run without a report: %s / %s" % (t["result"], t["measured"]))
    # ktime fell back to events in a ktime-cupti run: its targets are not measured
    d = synthetic(good=True)
    d["runs"]["mixed"]["ktime-cupti"][1]["values"]["ktime_timer_used"] = "events"
    d["runs"]["pending"]["ktime-cupti"][0]["values"]["ktime_timer_used"] = "events"
    emit(d, None)
    res = {t["id"]: t for t in d["targets"]}
    if [res[k]["result"] for k in ("cupti-10us", "cupti-500us", "torch-cupti", "exit-pending",
                                   "exit-pending-rss", "exit-pending-counts")] != \
            ["n/a", "n/a", "PASS", "n/a", "n/a", "n/a"] or \
            not res["cupti-10us"]["detail"].startswith("1 run(s) timed with events, not CUPTI"):
        failures.append("fallback to events: %s" % {k: (t["result"], t["detail"]) for k, t in res.items()
                                                    if k.startswith(("cupti", "exit-p"))})
    failures += selftest_reports()
    failures += selftest_running(tmp)
    # 4. round trip through bench.json (--analyze-only)
    with open(os.path.join(tmp, "good", "bench.json")) as f:
        d2 = json.load(f)
    _, t2, _ = analyze(d2)
    if [t["result"] for t in t2] != [want[t["id"]] for t in t2]:
        failures.append("round trip through bench.json changed the results")
    # 5. parsing
    v = parse_results("noise\nRESULT a=1 b=2.5 c=x\nRESULT main_return_ns=123456789012\n")
    if v != {"a": 1, "b": 2.5, "c": "x", "main_return_ns": 123456789012}:
        failures.append("parse_results: %s" % v)
    for fn in ("bench.json", "bench.md", "overhead.svg", "timers.svg"):
        if not os.path.exists(os.path.join(tmp, "good", fn)):
            failures.append("missing output " + fn)
    try:
        import xml.etree.ElementTree as ET
        root = ET.parse(os.path.join(tmp, "good", "overhead.svg")).getroot()
        if not root.tag.endswith("svg") or len(root.findall("{http://www.w3.org/2000/svg}rect")) != 6:
            failures.append("overhead.svg: unexpected content")
    except (OSError, ET.ParseError) as e:
        failures.append("overhead.svg does not parse: %s" % e)
    try:
        root = ET.parse(os.path.join(tmp, "good", "timers.svg")).getroot()
        got = [p.get("stroke") for p in root.findall("{http://www.w3.org/2000/svg}polyline")]
        if got != [c for _, _, c, _ in TIMER_LINES]:
            failures.append("timers.svg: lines %s" % got)
    except (OSError, ET.ParseError) as e:
        failures.append("timers.svg does not parse: %s" % e)
    print("", flush=True)
    if failures:
        print("SELFTEST FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("selftest ok (outputs in %s)" % tmp)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="libktime.so")
    ap.add_argument("--fake-build", help="built tree with its tests, for the untimed part "
                    "(default: the tree of --lib when it is BUILD/src/.libs/libktime.so)")
    ap.add_argument("--untimed-n", type=int, default=4000000, help="launches per untimed run")
    ap.add_argument("--bin", help="folder with bench and libcuptitrace.so (tools/bench/build.sh OUTDIR)")
    ap.add_argument("--out", help="folder for bench.json, bench.md, overhead.svg")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--part-reps", default="", metavar="PART=N,...",
                    help="repetitions for some parts instead of --reps, e.g. torch=9 (a noisy part)")
    ap.add_argument("--budget-s", type=float, default=450.0, help="total wall-time budget (s)")
    ap.add_argument("--parts", default=",".join(PARTS), help="subset of " + ",".join(PARTS) +
                    " (issue 11's targets: mixed,torch,pending)")
    ap.add_argument("--launch-n", type=int, default=200000)
    ap.add_argument("--launch-warmup", type=int, default=20000)
    ap.add_argument("--mixed", default="5000,2000,300", help="iterations of the 5,50,500 us parts")
    ap.add_argument("--mixed-n10", type=int, default=10000,
                    help="iterations of the mixed part's 10 us kernel (KTIME_TIMER/KTIME_SAMPLE targets)")
    ap.add_argument("--pending-n", type=int, default=1000000,
                    help="pending part: launches left unsynchronized when main returns")
    ap.add_argument("--pending-warmup", type=int, default=1000,
                    help="pending part: synchronized warm-up launches before them")
    ap.add_argument("--torch-iters", type=int, default=10000)
    ap.add_argument("--kernels-k", type=int, default=10000)
    ap.add_argument("--kernels-launches", type=int, default=7)
    ap.add_argument("--exit-k", type=int, default=1000)
    ap.add_argument("--long-n", type=int, default=10000000)
    ap.add_argument("--long-rss-at", type=int, default=100000)
    ap.add_argument("--threads", default="1,4,16", help="thread counts of the threads part")
    ap.add_argument("--threads-n", type=int, default=20000, help="threads part: launches per thread")
    ap.add_argument("--threads-warmup", type=int, default=5000,
                    help="threads part: warm-up launches per thread")
    ap.add_argument("--run-timeout", type=float, default=180.0, help="per run (s)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for torch_loop.py")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 reps (a smoke test)")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--analyze-only", metavar="BENCH_JSON")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()

    if a.selftest:
        return selftest()
    if a.analyze_only:
        with open(a.analyze_only) as f:
            data = json.load(f)
        return emit(data, a.out)
    if not (a.lib and a.bin and a.out):
        ap.error("--lib, --bin and --out are required (or --analyze-only / --selftest)")
    a.parts = [p for p in a.parts.split(",") if p]
    try:
        a.part_reps = {k: int(v) for k, v in (x.split("=") for x in a.part_reps.split(",") if x)}
    except ValueError:
        ap.error("--part-reps: want PART=N,... (e.g. torch=9)")
    if any(k not in PARTS or v < 1 for k, v in a.part_reps.items()):
        ap.error("--part-reps: parts are %s, repetitions at least 1" % ",".join(PARTS))
    if not a.fake_build and a.lib:
        tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.lib))))
        if a.lib.endswith(os.path.join("src", ".libs", "libktime.so")) and \
                os.path.exists(os.path.join(tree, "tests", "e2e", "app_cudart")):
            a.fake_build = tree
    bad = [p for p in a.parts if p not in PARTS]
    if bad:
        ap.error("unknown parts: %s" % ",".join(bad))
    try:
        a.threads = sorted({int(x) for x in a.threads.split(",") if x.strip()})
    except ValueError:
        ap.error("--threads: a comma-separated list of thread counts, e.g. 1,4,16")
    if not a.threads or a.threads[0] < 1 or a.threads[-1] > 1024:
        ap.error("--threads: thread counts from 1 to 1024")
    if a.mixed_n10 < 0 or a.pending_n < 1 or a.pending_warmup < 0:
        ap.error("--mixed-n10 and --pending-warmup: 0 or more; --pending-n: 1 or more")
    if a.quick:
        a.reps = min(a.reps, 3)
        a.launch_n, a.launch_warmup = 50000, 5000
        a.mixed, a.torch_iters = "1000,400,60", 2000
        a.mixed_n10, a.pending_n = 2000, 100000
        a.kernels_k, a.long_n = 2000, 1000000
        a.threads_n, a.threads_warmup = 5000, 1000
    a.lib = os.path.abspath(a.lib)
    a.bin = os.path.abspath(a.bin)
    a.out = os.path.abspath(a.out)
    for path in (a.lib, os.path.join(a.bin, "bench")):
        if not os.path.exists(path):
            print("run.py: %s not found" % path, file=sys.stderr)
            return 2
    if not gpu_info():
        print("run.py: no NVIDIA GPU (nvidia-smi found none); nothing to measure", file=sys.stderr)
        return 77
    os.makedirs(a.out, exist_ok=True)
    return Runner(a).main()


if __name__ == "__main__":
    sys.exit(main())
