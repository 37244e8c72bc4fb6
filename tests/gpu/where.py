#!/usr/bin/env python3
"""Where the GPU time went, on a real GPU: ktime's busy time, gaps, communication and overlap
against the same quantities computed here, independently, from the CUPTI kernel records of the
same process (KTIME_TRACE: every kernel's start and end as CUPTI gave them, KTIME_WARMUP=0 so
that every record is in it), and against an independent CUPTI counter (libkcount with
KCOUNT_INTERVALS) in a run of its own: one process holds one CUPTI activity client, and ktime
hands CUPTI over to a client that registers after it, so the counter cannot read the records
of ktime's own process. The same-process figures are the checks; the counter's run is printed
beside them (its kernels' lengths differ a little from run to run).

usage: where.py --bin DIR --lib LIB [--out DIR] [--part a|b|c|d|all]

DIR is tests/gpu/build.sh's output (where, libkcount.so). Checks, under KTIME_TIMER=cupti:
 (a) `where sleep 200`: 100 us kernels, each followed by a sync and a 100 us host sleep: ktime's
     busy % and idle % within 1 point of the records' (the union of their intervals, from the
     first start to the last end), the same number of gaps;
 (b) `where streams 100`: two streams of overlapping 100 us kernels: busy time equal to the
     union of the records' intervals (within 2 %), about half their sum, and concurrency above
     1.5;
 (c) NVTX ranges in PyTorch (tests/gpu/ranges.py's workload) under KTIME_TIMER=cupti: every
     range holds the same timed counts as under the events timer;
 (d) a 2-rank DDP job (torchrun, 2 GPUs): each rank's NCCL time and its overlap with compute
     within 2 % of the same quantities from that rank's records.
Prints one "ok"/"not ok" line per check; exits 0 or 1, 77 without a GPU (or torch for c, d).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

COMM = re.compile(r"nccl|nvshmem|msccl|rccl", re.I)
failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s - %s%s" % ("ok" if ok else "not ok", what, (": " + detail) if detail and not ok else ""))
    failures += not ok


def near(a, b, rel):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(b), 1e-12)


def intervals(path):
    """The counter's kernel records: [(device, stream, start, end, name)]."""
    out = []
    with open(path) as f:
        for line in f:
            d, s, a, b, name = line.rstrip("\n").split(" ", 4)
            out.append((int(d), int(s), int(a), int(b), name))
    return out


def union(iv):
    """Busy time (ns), span (ns) and the gaps (ns) of intervals [(start, end)]."""
    iv = sorted(iv)
    busy, gaps, cur_a, cur_b = 0, [], None, None
    for a, b in iv:
        if cur_b is None:
            cur_a, cur_b = a, b
        elif a > cur_b:
            busy += cur_b - cur_a
            gaps.append(a - cur_b)
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    span = max(b for _, b in iv) - iv[0][0] if iv else 0
    return busy, span, gaps


def overlap(x, y):
    """Time (ns) the unions of x and y run at once."""
    bx, _, _ = union(x)
    by, _, _ = union(y)
    bxy, _, _ = union(x + y)
    return bx + by - bxy


def trace_intervals(path):
    """The kernel records of ktime's trace: [(device, stream, start, end, name)], in ns."""
    with open(path) as f:
        t = json.load(f)
    return [(int(e["pid"]), int(e["tid"]), round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000),
             e["name"]) for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]


def counter_run(args, out, label, argv, env_extra=None):
    """The program under the counter alone: its records, every kernel's start and end."""
    ivf = os.path.join(out, label + ".iv")
    env = dict(clean_env(), KCOUNT_INTERVALS=ivf, KCOUNT_OUTPUT=os.path.join(out, label + ".kcount.json"),
               LD_PRELOAD=os.path.join(args.bin, "libkcount.so"))
    env.update(env_extra or {})
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    check("%s: counter run: exit status 0" % label, p.returncode == 0, p.stderr[-400:])
    return intervals(ivf) if p.returncode == 0 else []


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("KTIME_", "KCOUNT_"))}


def run(args, out, label, argv, env_extra):
    """The program under ktime with KTIME_TIMER=cupti and its trace (the same process's
    records), then under the counter alone."""
    rep = os.path.join(out, label + ".json")
    tr = os.path.join(out, label + ".trace.json")
    env = dict(clean_env(), KTIME_OUTPUT=rep, KTIME_TIMER="cupti", KTIME_WARMUP="0", KTIME_TRACE=tr,
               LD_PRELOAD=args.lib)
    env.update(env_extra)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    check("%s: ktime run: exit status 0" % label, p.returncode == 0, p.stderr[-400:])
    if p.stderr.strip():
        print("# %s: ktime's stderr: %s" % (label, p.stderr.strip()[-300:]))
    with open(rep) as f:
        r = json.load(f)
    return r, trace_intervals(tr), counter_run(args, out, label + "-counter", argv)


def dev0(r, method="cupti"):
    b = r.get("gpu_busy") or {}
    return next((d for d in b.get("devices", []) if d["method"] == method), None)


def part_a(args, out):
    r, iv, civ = run(args, out, "a", [os.path.join(args.bin, "where"), "sleep", "200"], {})
    busy, span, gaps = union([(a, b) for _, _, a, b, _ in iv])
    d = dev0(r)
    check("a: ktime has a cupti busy entry", d is not None)
    if not d or not span:
        return
    pc = 100.0 * busy / span
    cb, cs, cg = union([(a, b) for _, _, a, b, _ in civ]) if civ else (0, 0, [])
    print("# a: records busy %.2f %% of %.3f ms, %d gaps %.3f ms; ktime %.2f %%, %d gaps %.3f ms"
          % (pc, span / 1e6, len(gaps), sum(gaps) / 1e6, d["busy_percent"], d["gaps"]["count"],
             d["gaps"]["total_ms"]))
    if cs:
        print("# a: the counter's own run: busy %.2f %% of %.3f ms, %d gaps" % (100.0 * cb / cs, cs / 1e6, len(cg)))
    check("a: busy % within 1 point of the records'", abs(d["busy_percent"] - pc) <= 1.0,
          "%.2f vs %.2f" % (d["busy_percent"], pc))
    check("a: gaps: the records' count", d["gaps"]["count"] == len(gaps), "%d vs %d" % (d["gaps"]["count"], len(gaps)))
    idle_pc = 100.0 * d["gaps"]["total_ms"] / d["span_ms"] if d.get("span_ms") else None
    check("a: idle % (the gaps' total over the span) within 1 point of the records'",
          idle_pc is not None and abs(idle_pc - 100.0 * sum(gaps) / span) <= 1.0,
          "%s vs %.2f" % (idle_pc, 100.0 * sum(gaps) / span))
    check("a: busy % not the naive 50 % (syncs and sleeps lengthen the gaps)", d["busy_percent"] < 45.0,
          "%.2f" % d["busy_percent"])


def part_b(args, out):
    r, iv, civ = run(args, out, "b", [os.path.join(args.bin, "where"), "streams", "100"], {})
    busy, span, _ = union([(a, b) for _, _, a, b, _ in iv])
    d = dev0(r)
    check("b: ktime has a cupti busy entry", d is not None)
    if not d:
        return
    ksum = sum(b - a for _, _, a, b, _ in iv) / 1e6
    print("# b: records' union %.3f ms of %.3f ms kernel time; ktime busy %.3f ms, concurrency %.2f"
          % (busy / 1e6, ksum, d["busy_ms"], d["concurrency"]))
    if civ:
        cb, _, _ = union([(a, b) for _, _, a, b, _ in civ])
        print("# b: the counter's own run: union %.3f ms of %.3f ms kernel time"
              % (cb / 1e6, sum(b - a for _, _, a, b, _ in civ) / 1e6))
    check("b: busy time within 2 % of the union of the records", near(d["busy_ms"], busy / 1e6, 0.02),
          "%.4f vs %.4f" % (d["busy_ms"], busy / 1e6))
    check("b: the union about half the kernels' sum (they overlap)", 0.45 <= busy / 1e6 / ksum <= 0.6,
          "%.3f" % (busy / 1e6 / ksum))
    check("b: concurrency stated, above 1.5", d["concurrency"] > 1.5)
    check("b: two streams", len(d["streams"]) >= 2)


def part_c(args, out):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import ranges as workload
    counts = {}
    for timer in ("events", "cupti"):
        rep = os.path.join(out, "c-%s.json" % timer)
        env = dict(os.environ, KTIME_OUTPUT=rep, KTIME_TIMER=timer, KTIME_NVTX="1", LD_PRELOAD=args.lib)
        p = subprocess.run([sys.executable, "-c", workload.WORKLOAD, "nvtx"], env=env,
                           capture_output=True, text=True, timeout=600)
        check("c: %s: exit status 0" % timer, p.returncode == 0, p.stderr[-400:])
        with open(rep) as f:
            r = json.load(f)
        counts[timer] = {(g["name"], k["mangled"]): k["timed"]
                         for g in (r.get("ranges") or {}).get("by_name", []) for k in g["kernels"]}
    check("c: ranges under cupti hold the events timer's counts", counts["cupti"] == counts["events"] and counts["cupti"],
          "%r vs %r" % (counts["cupti"], counts["events"]))


DDP = r"""
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank()
torch.cuda.set_device(r)
m = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda(), device_ids=[r])
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device="cuda")
for _ in range(50):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
torch.cuda.synchronize()
dist.destroy_process_group()
"""


def part_d(args, out):
    script = os.path.join(out, "ddp.py")
    with open(script, "w") as f:
        f.write(DDP)
    base = dict(clean_env(), NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
                NVSHMEM_DISABLE_NVLS="1")
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", script]
    env = dict(base, KTIME_OUTPUT=os.path.join(out, "d-%r.json"), KTIME_TRACE=os.path.join(out, "d-%r.trace.json"),
               KTIME_TIMER="cupti", KTIME_WARMUP="0", LD_PRELOAD=args.lib)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    check("d: ktime's torchrun exit status 0", p.returncode == 0, p.stderr[-400:])
    merged = os.path.join(out, "d-merged.json")
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "ktime_tool.py")
    m = subprocess.run([sys.executable, tool, "merge", os.path.join(out, "d-0.json"), os.path.join(out, "d-1.json"),
                        "-o", merged], capture_output=True, text=True)
    check("d: ktime merge of the two ranks", m.returncode == 0, m.stderr[-300:])
    least = None
    if m.returncode == 0:
        with open(merged) as f:
            least = (json.load(f).get("communication") or {}).get("least_waiting")
    comm_by_rank = {}
    for rank in (0, 1):
        with open(os.path.join(out, "d-%d.json" % rank)) as f:
            r = json.load(f)
        iv = trace_intervals(os.path.join(out, "d-%d.trace.json" % rank))
        comm = [(a, b) for _, _, a, b, n in iv if COMM.search(n)]
        comp = [(a, b) for _, _, a, b, n in iv if not COMM.search(n)]
        c = next((e for e in (r.get("communication") or {}).get("devices", []) if e["method"] == "cupti"), None)
        check("d: rank %d: a communication entry" % rank, c is not None)
        if not c:
            continue
        ref_comm = sum(b - a for a, b in comm) / 1e6
        ref_ov = overlap(comm, comp) / 1e6
        comm_by_rank[rank] = c["comm_ms"]
        print("# d: rank %d: records: %d NCCL kernels, %.3f ms, overlap %.3f ms; ktime %d, %.3f ms, %.3f ms"
              % (rank, len(comm), ref_comm, ref_ov, c["kernels"], c["comm_ms"], c["overlap_ms"]))
        check("d: rank %d: NCCL kernels: the records' count" % rank, c["kernels"] == len(comm),
              "%d vs %d" % (c["kernels"], len(comm)))
        check("d: rank %d: NCCL time within 2 %% of the records'" % rank, near(c["comm_ms"], ref_comm, 0.02),
              "%.3f vs %.3f" % (c["comm_ms"], ref_comm))
        check("d: rank %d: overlap within 2 %% (of the NCCL time) of the records'" % rank,
              abs(c["overlap_ms"] - ref_ov) <= 0.02 * max(ref_comm, 1e-9), "%.3f vs %.3f" % (c["overlap_ms"], ref_ov))
    if len(comm_by_rank) == 2 and least is not None:
        print("# d: merged: least_waiting %s (NCCL ms by rank %s)" % (least, comm_by_rank))
    # The counter's own job, for the record (its NCCL time varies from run to run).
    cenv = dict(base, KCOUNT_INTERVALS=os.path.join(out, "d-%p.iv"), KCOUNT_OUTPUT=os.path.join(out, "d-kcount-%p.json"),
                LD_PRELOAD=os.path.join(args.bin, "libkcount.so"))
    p = subprocess.run(argv, env=cenv, capture_output=True, text=True, timeout=900)
    check("d: the counter's torchrun exit status 0", p.returncode == 0, p.stderr[-400:])
    for n in sorted(x for x in os.listdir(out) if x.startswith("d-") and x.endswith(".iv")):
        iv = intervals(os.path.join(out, n))
        comm = [(a, b) for _, _, a, b, nm in iv if COMM.search(nm)]
        comp = [(a, b) for _, _, a, b, nm in iv if not COMM.search(nm)]
        print("# d: counter's run %s: %d NCCL kernels, %.3f ms, overlap %.3f ms"
              % (n, len(comm), sum(b - a for a, b in comm) / 1e6, overlap(comm, comp) / 1e6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out")
    ap.add_argument("--part", default="all")
    args = ap.parse_args()
    if not shutil.which("nvidia-smi") or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode:
        print("# no GPU")
        return 77
    out = args.out or tempfile.mkdtemp(prefix="ktime-where-")
    os.makedirs(out, exist_ok=True)
    parts = "abcd" if args.part == "all" else args.part
    for p in parts:
        if p in "cd":
            try:
                import torch  # noqa: F401
            except ImportError:
                print("# %s: no torch, skipped" % p)
                continue
        {"a": part_a, "b": part_b, "c": part_c, "d": part_d}[p](args, out)
    print("# %d failed; reports in %s" % (failures, out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
