#!/usr/bin/env python3
"""KTIME_BUDGET on a real GPU: what ktime costs under a budget of 1 %, and what the sampling does
to each kernel's mean.

usage: budget.py [--lib LIB] [--out DIR] [--runs 5] [--launches 200000] [--nvcc NVCC]
  LIB: default build/src/.libs/libktime.so of this checkout; DIR: default $OUT/budget when OUT
  is set, else /tmp/ktime-budget.

Builds DIR/budget_app (nvcc) from the program below: kernels that spin on %globaltimer for a
fixed time (10 us, and 1 ms), launched back to back on one stream, or by 8 threads onto one
shared stream (the burst case); it prints its own launch loop's wall time in ms.

Runs, interleaved RUNS times, each a separate process, for each of
  back-to-back: LAUNCHES x 10 us, then 100 x 1 ms;
  burst:        8 threads x LAUNCHES/8 x 10 us onto one stream:
bare (no ktime), events unsampled, events KTIME_BUDGET=1, cupti unsampled, cupti without its
launch records (KTIME_LAUNCH_TIMES=0, what the budget leaves off), cupti KTIME_BUDGET=1.
Checks (medians over the runs):
  - events + budget: run time <= bare + 1 %;
  - events + budget: each kernel's mean within 2 % of the events' unsampled mean;
  - the 1 ms kernel timed at every launch past warmup (sampled_1_in 1, unsampled 0);
  - burst, events + budget: launches left untimed for want of event pairs (pool_exhausted)
    under 5 % of the launches (the draw chooses what is left out, not the pool);
  - cupti + budget: run time <= bare + 1 %; each kernel's mean within 2 % of the unsampled
    CUPTI timer's (the records it makes are exact); launches incomplete at most 0.1 %.
Prints one "ok"/"not ok" line per check and a table; writes DIR/budget.md. Exit 0 when all
pass, 1 otherwise, 77 without nvcc or a GPU.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

APP = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#include <vector>
__global__ void spin10(unsigned long long ns) {
    unsigned long long t0, t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
__global__ void spin1ms(unsigned long long ns) {
    unsigned long long t0, t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
int main(int argc, char **argv) {
    long n = atol(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int i = 0; i < 50; i++) spin10<<<1, 32, 0, s>>>(10000);
    cudaStreamSynchronize(s);
    auto t0 = std::chrono::steady_clock::now();
    if (!strcmp(argv[1], "b2b")) {
        for (long i = 0; i < n; i++) spin10<<<1, 32, 0, s>>>(10000);
        for (int i = 0; i < 100; i++) spin1ms<<<1, 32, 0, s>>>(1000000);
    } else {
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; t++)
            ts.emplace_back([&] { for (long i = 0; i < n / threads; i++) spin10<<<1, 32, 0, s>>>(10000); });
        for (auto &t : ts) t.join();
    }
    cudaStreamSynchronize(s);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    printf("%.3f\n", ms);
    return cudaGetLastError() != cudaSuccess;
}
"""

CONFIGS = [
    ("bare", None),
    ("events", {"KTIME_TIMER": "events"}),
    ("events+budget", {"KTIME_TIMER": "events", "KTIME_BUDGET": "1"}),
    ("cupti", {"KTIME_TIMER": "cupti"}),
    # CUPTI without its launch records (what KTIME_BUDGET leaves off): their cost, in the table
    ("cupti-nolaunch", {"KTIME_TIMER": "cupti", "KTIME_LAUNCH_TIMES": "0"}),
    ("cupti+budget", {"KTIME_TIMER": "cupti", "KTIME_BUDGET": "1"}),
]


def run(app, lib, env_add, args, out_json):
    env = dict(os.environ)
    if env_add is not None:
        env.update(env_add)
        env["LD_PRELOAD"] = lib
        env["KTIME_OUTPUT"] = out_json
    p = subprocess.run([app] + args, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{args} {env_add}: exit {p.returncode}: {p.stderr[-2000:]}")
    rep = None
    if env_add is not None:
        with open(out_json) as f:
            rep = json.load(f)
    return float(p.stdout.split()[-1]), rep, p.stderr


def kernel(rep, part):
    return next(k for k in rep["kernels"] if part in k["mangled"])


def main():
    ap = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--lib", default=os.path.join(root, "build", "src", ".libs", "libktime.so"))
    ap.add_argument("--out", default=os.path.join(os.environ["OUT"], "budget") if os.environ.get("OUT")
                    else "/tmp/ktime-budget")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    a = ap.parse_args()
    if not os.path.isfile(a.lib):
        print(f"budget.py: no {a.lib} (build ktime first, or pass --lib)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    if not shutil.which(a.nvcc) or not shutil.which("nvidia-smi"):
        print("skip: no nvcc or no GPU")
        return 77
    src, app = os.path.join(a.out, "budget_app.cu"), os.path.join(a.out, "budget_app")
    with open(src, "w") as f:
        f.write(APP)
    subprocess.run([a.nvcc, "-O2", "-std=c++17", "-o", app, src], check=True)
    lib = os.path.abspath(a.lib)
    cases = {"b2b": ["b2b", str(a.launches)], "burst": ["burst", str(a.launches), "8"]}
    res = {(c, n): [] for c in cases for n, _ in CONFIGS}
    for r in range(a.runs):
        for c, args in cases.items():
            for n, env in CONFIGS:
                out = os.path.join(a.out, f"{c}-{n}-{r}.json")
                res[(c, n)].append(run(app, lib, env, args, out))
    fails, lines = 0, []

    def check(ok, what):
        nonlocal fails
        fails += not ok
        print(("ok - " if ok else "not ok - ") + what)

    med = {k: statistics.median(x[0] for x in v) for k, v in res.items()}
    for c in cases:
        for n, _ in CONFIGS:
            lines.append(f"| {c} | {n} | {med[(c, n)]:.1f} | {100 * (med[(c, n)] / med[(c, 'bare')] - 1):+.2f} % |")
    b = med[("b2b", "bare")]
    check(med[("b2b", "events+budget")] <= 1.01 * b,
          f"events, KTIME_BUDGET=1: {med[('b2b', 'events+budget')]:.1f} ms <= bare {b:.1f} ms + 1 %")
    check(med[("b2b", "cupti+budget")] <= 1.01 * b,
          f"cupti, KTIME_BUDGET=1: {med[('b2b', 'cupti+budget')]:.1f} ms <= bare {b:.1f} ms + 1 %")
    for part in ("spin10", "spin1ms"):
        un = statistics.median(kernel(x[1], part)["mean_us"] for x in res[("b2b", "events")])
        bu = statistics.median(kernel(x[1], part)["mean_us"] for x in res[("b2b", "events+budget")])
        check(abs(bu / un - 1) <= 0.02, f"events, {part}: mean {bu:.3f} us under the budget, {un:.3f} us unsampled (within 2 %)")
    last = res[("b2b", "events+budget")][-1][1]
    k1 = kernel(last, "spin1ms")
    check(k1.get("sampled_1_in") == 1 and k1["unsampled"] == 0,
          f"events, KTIME_BUDGET=1: the 1 ms kernel timed at every launch ({k1['timed']} timed, {k1['unsampled']} unsampled)")
    k10 = kernel(last, "spin10")
    print(f"# spin10: sampled 1 in {k10.get('sampled_1_in')}, {k10['timed']} timed, {k10['unsampled']} unsampled;"
          f" budget {json.dumps(last.get('budget'))}")
    cb = res[("b2b", "cupti+budget")][-1][1]
    b = cb.get("budget") or {}
    inc = sum(k["incomplete"] for k in cb["kernels"])
    print(f"# cupti+budget: records on 1/{b.get('cupti_on_1_in')} of the time at the end, "
          f"{b.get('unrecorded')} launches unrecorded of {cb['totals']['launches_seen']}, "
          f"{inc} incomplete; budget {json.dumps(b)}")
    # Under the budget CUPTI's records are on for part of the time: the records it makes are
    # exact, so each kernel's mean stays the unsampled CUPTI timer's.
    # The lever is time: a kernel whose every launch fell in an off part has no record (the
    # 1 ms kernels are launched in one burst at the end); such a run is said, not averaged in.
    for part in ("spin10", "spin1ms"):
        un = statistics.median(kernel(x[1], part)["mean_us"] for x in res[("b2b", "cupti")])
        got = [kernel(x[1], part) for x in res[("b2b", "cupti+budget")]]
        means = [k["mean_us"] for k in got if k["timed"] > 0]
        none = sum(1 for k in got if k["timed"] == 0)
        if none:
            print(f"# cupti+budget, {part}: no record in {none} of {len(got)} runs (its launches all in an off part)")
        if part == "spin10" or means:
            bu = statistics.median(means) if means else 0.0
            check(abs(bu / un - 1) <= 0.02, f"cupti, {part}: mean {bu:.3f} us under the budget (runs with records), {un:.3f} us unsampled (within 2 %)")
    check(inc <= 0.001 * cb["totals"]["launches_seen"],
          f"cupti, KTIME_BUDGET=1: launches incomplete at most 0.1 % ({inc}): switching CUPTI off loses no record of a launch made while on")
    for n in ("events", "events+budget"):
        rep = res[("burst", n)][-1][1]
        pe = rep["totals"]["dropped_reasons"]["pool_exhausted"]
        launches = rep["totals"]["launches_seen"]
        print(f"# burst, {n}: {pe} of {launches} launches pool_exhausted, {rep['totals']['unsampled']} unsampled")
        if n == "events+budget":
            check(pe <= 0.05 * launches, f"burst, events, KTIME_BUDGET=1: pool_exhausted {pe} under 5 % of {launches}")
    table = "| case | config | median ms | vs bare |\n| --- | --- | --- | --- |\n" + "\n".join(lines)
    with open(os.path.join(a.out, "budget.md"), "w") as f:
        f.write(table + "\n")
    print(table)
    print(f"{fails} of the checks failed" if fails else "all checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
