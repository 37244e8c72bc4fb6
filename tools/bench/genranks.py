#!/usr/bin/env python3
"""genranks.py - a job's rank reports, generated: N JSON reports of K kernels each, laid out as
libktime writes them (schema 2), for measuring `ktime merge` at scale (docs/performance.md,
"Merging many ranks") and for the tests of the merge.

    genranks.py --ranks N --kernels K --out DIR [--buckets B] [--samples S] [--nccl M]
                [--slow-rank R] [--slow-factor F] [--job ID] [--seed S]

Writes DIR/rank-00000.json ... one per rank (RANK r of WORLD_SIZE N, host node<r // 8>, GPU
r % 8). Kernel k's samples sit in B consecutive buckets of the library's histogram around a
mean of its own (2 us to 2 ms), slightly different per rank; sum, M2, min, max, mean and the
quantiles are those of the bucket values, so every report is consistent (its counts add up, its
M2 is its samples'). The last M kernels are NCCL's (ncclDevKernel_...); --slow-rank R makes rank
R's other kernels F times longer (default 1.5) and its NCCL kernels wait F times less, as a
straggler's would. Python 3 standard library only.
"""

import argparse
import math
import os
import random

GAMMA = 1.02
FIRST_EDGE = 0.05


def edge(i):
    return 0.0 if i == 0 else FIRST_EDGE * GAMMA ** (i - 1)


def bucket_of(x):
    if x < FIRST_EDGE:
        return 0
    return min(999, 1 + int(math.log(x / FIRST_EDGE) / math.log(GAMMA)))


def value(i):
    """A sample's value in bucket i: its geometric middle (what the quantiles read)."""
    return FIRST_EDGE / 2 if i == 0 else edge(i) * math.sqrt(GAMMA)


def num(x):
    return repr(float(x))


def quantile(buckets, n, q, lo, hi):
    rank = math.floor(q * (n - 1))
    seen = 0
    for i, c in buckets:
        seen += c
        if seen > rank:
            return min(max(value(i), lo), hi)
    return hi


def stats(buckets):
    """(n, sum, m2, mean, min, max) of the samples of buckets [(i, count)]."""
    n = sum(c for _, c in buckets)
    s = sum(c * value(i) for i, c in buckets)
    mean = s / n
    m2 = sum(c * (value(i) - mean) ** 2 for i, c in buckets)
    return n, s, m2, mean, value(buckets[0][0]), value(buckets[-1][0])


def hist_json(buckets):
    return ('{ "gamma": %s, "first_edge_us": %s, "buckets": [%s] }'
            % (num(GAMMA), num(FIRST_EDGE),
               ", ".join("[%d, %s, %d]" % (i, num(edge(i)), c) for i, c in buckets)))


def kernel_json(name, buckets, calls, warmup, device, whole_us):
    n, s, m2, mean, lo, hi = stats(buckets)
    sd = math.sqrt(m2 / (n - 1)) if n > 1 else 0.0
    pct = 100.0 * s / whole_us
    q = [num(quantile(buckets, n, p, lo, hi)) for p in (0.5, 0.9, 0.99)]
    h = hist_json(buckets)
    st = ('"total_ms": %s, "percent": %s, "mean_us": %s, "min_us": %s, "max_us": %s, '
          '"stddev_us": %s, "sum_us": %s, "m2_us2": %s, "p50_us": %s, "p90_us": %s, "p99_us": %s'
          % (num(s / 1000), num(pct), num(mean), num(lo), num(hi), num(sd), num(s), num(m2), *q))
    return """    {
      "name": "%(name)s",
      "mangled": "%(name)s",
      "kind": "kernel",
      "devices": [%(dev)d],
      "calls": %(calls)d,
      "warmup_skipped": %(warm)d,
      "captured": 0,
      "dropped": 0,
      "failed": 0,
      "incomplete": 0,
      "timed": %(n)d,
      "ungated": 0,
      "total_ms": %(total)s,
      "total_estimated": false,
      "unsampled": 0,
      "timed_by_nodes": 0,
      "outside_range": 0,
      "percent": %(pct)s,
      "mean_us": %(mean)s,
      "min_us": %(lo)s,
      "max_us": %(hi)s,
      "stddev_us": %(sd)s,
      "p50_us": %(p50)s,
      "p90_us": %(p90)s,
      "p99_us": %(p99)s,
      "few_samples": false,
      "histogram": %(h)s,
      "sum_us": %(s)s,
      "m2_us2": %(m2)s,
      "in_graph": 0,
      "cupti_timed": 0,
      "near_floor": false,
      "per_device": [
        { "device": %(dev)d, "timed": %(n)d, "sum_us": %(s)s, "m2_us2": %(m2)s, "min_us": %(lo)s, "max_us": %(hi)s, "p50_us": %(p50)s, "p90_us": %(p90)s, "p99_us": %(p99)s, "mean_us": %(mean)s, "stddev_us": %(sd)s, "percent": %(pct)s }
      ],
      "shapes": [
        { "grid": [64, 1, 1], "block": [256, 1, 1], "shared_bytes": 0, "timed": %(n)d, %(st)s,
          "histogram": %(h)s }
      ],
      "other_shapes": null
    }""" % dict(name=name, dev=device, calls=calls, warm=warmup, n=n, total=num(s / 1000),
                pct=num(pct), mean=num(mean), lo=num(lo), hi=num(hi), sd=num(sd), p50=q[0],
                p90=q[1], p99=q[2], h=h, s=num(s), m2=num(m2), st=st)


def report(a, r, rnd, kernels):
    host, dev = "node%d" % (r // 8), r % 8
    rows = []
    for name, mean_us, nccl in kernels:
        f = 1.0
        if a.slow_rank == r:
            f = 1.0 / a.slow_factor if nccl else a.slow_factor
        mid = bucket_of(mean_us * f * rnd.uniform(0.97, 1.03))
        lo = max(1, mid - a.buckets // 2)
        counts = [max(1, int(a.samples / a.buckets * rnd.uniform(0.5, 1.5))) for _ in range(a.buckets)]
        rows.append((name, [(lo + j, c) for j, c in enumerate(counts)]))
    whole = sum(stats(b)[1] for _, b in rows)
    rows.sort(key=lambda e: (-stats(e[1])[1], e[0]))
    ks, timed, calls = [], 0, 0
    for name, b in rows:
        n = sum(c for _, c in b)
        timed += n
        calls += n + 5
        ks.append(kernel_json(name, b, n + 5, 5, 0, whole))
    t0 = 1795000000 + r % 7
    return """{
  "schema_version": 2,
  "ktime_version": "0.1.0",
  "ktime_build": "genranks",
  "command": ["python3", "train.py"],
  "host": "%(host)s",
  "rank": %(rank)d,
  "local_rank": %(local)d,
  "world_size": %(ws)d,
  %(job)s"start_time": "2026-11-20T10:00:0%(s0)d.000Z",
  "end_time": "2026-11-20T11:00:0%(s0)d.000Z",
  "pid": %(pid)d,
  "timing_method": "cuda-events",
  "launch_gate": true,
  "launch_gate_mode": "auto",
  "launch_gate_requested": "auto",
  "launch_gate_unavailable_contexts": 0,
  "contexts": 1,
  "warmup": 5,
  "group": "name",
  "timer": { "requested": "events", "used": "events", "note": null, "cupti_library": null, "cupti_records_dropped": 0, "cupti_buffers_refused": 0 },
  "capture": null,
  "flush_l2": null,
  "devices": [
    { "ordinal": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-%(uuid)s", "driver_version": 13000, "driver": "580.00", "floor_events_us": 2.5, "floor_hw_us": null }
  ],
  "conditions": null,
  "kernels": [
%(kernels)s
  ],
  "memops": null,
  "ranges": null,
  "totals": {
    "launches_seen": %(calls)d,
    "timed": %(timed)d,
    "ungated": 0,
    "warmup_skipped": %(warm)d,
    "captured": 0,
    "dropped": 0,
    "dropped_reasons": { "pool_exhausted": 0, "event_error": 0, "no_context": 0, "table_full": 0, "shutdown": 0, "gate_timeout": 0, "gate_late": 0 },
    "failed_launches": 0,
    "incomplete_at_exit": 0,
    "in_graph": 0,
    "timed_by_nodes": 0,
    "cupti_timed": 0,
    "unsampled": 0,
    "outside_range": 0,
    "sample": 1,
    "timed_total_ms": %(total)s
  }
}
""" % dict(host=host, rank=r, local=dev, ws=a.ranks, s0=t0 % 7, pid=10000 + r,
           job='"job": "%s",\n  ' % a.job if a.job else "",
           uuid="%08x-0000-0000-0000-%012x" % (r // 8, dev), kernels=",\n".join(ks), calls=calls,
           timed=timed, warm=5 * len(rows), total=num(whole / 1000))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--kernels", type=int, default=100)
    p.add_argument("--buckets", type=int, default=16, help="histogram buckets per kernel")
    p.add_argument("--samples", type=int, default=1000, help="about this many samples per kernel")
    p.add_argument("--nccl", type=int, default=4, help="how many of the kernels are NCCL's")
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-factor", type=float, default=1.5)
    p.add_argument("--job", default="")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rnd = random.Random(a.seed)
    kernels = []
    for k in range(a.kernels):
        nccl = k >= a.kernels - a.nccl
        name = ("ncclDevKernel_AllReduce_Sum_f32_RING_LL_%d" % k) if nccl else ("kernel_%03d" % k)
        kernels.append((name, 2.0 * 1000 ** rnd.random(), nccl))
    width = max(5, len(str(a.ranks - 1)))
    for r in range(a.ranks):
        with open(os.path.join(a.out, "rank-%0*d.json" % (width, r)), "w") as f:
            f.write(report(a, r, random.Random(a.seed * 1000003 + r), kernels))


if __name__ == "__main__":
    main()
