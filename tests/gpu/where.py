#!/usr/bin/env python3
"""Where the GPU time went, on a real GPU (issue 22), against an independent CUPTI counter in
the same process (libkcount with KCOUNT_INTERVALS: every kernel record's start and end).

usage: where.py --bin DIR --lib LIB [--out DIR] [--part a|b|c|d|all]

DIR is tests/gpu/build.sh's output (where, libkcount.so). Checks, under KTIME_TIMER=cupti:
 (a) `where sleep 200`: 100 us kernels, each followed by a sync and a 100 us host sleep: ktime's
     busy % and idle gaps (count, total) within 1 point / 2 % of the same figures computed
     from the counter's records (the union of their intervals, from first start to last end), the counter and ktime each
     in a run of its own (one process holds one CUPTI activity client);
 (b) `where streams 100`: two streams of overlapping 100 us kernels: busy time equal to the
     union of the counter's intervals (within 2 %), and concurrency above 1.5;
 (c) NVTX ranges in PyTorch (tests/gpu/regions.py's workload) under KTIME_TIMER=cupti: every
     range holds the same timed counts as under the events timer;
 (d) a 2-rank DDP job (torchrun, 2 GPUs): each rank's NCCL time and its overlap with compute
     within 2 % of the same quantities from the counter's records of that rank.
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


def run(args, out, label, argv, env_extra):
    """The program twice: under the counter alone (its records: every kernel's start and end),
    then under ktime alone with KTIME_TIMER=cupti. One process holds one CUPTI activity client:
    ktime hands CUPTI over to a client that registers after it and times with events from
    then on, so the two cannot both read CUPTI's records in one process. The workloads are
    fixed sequences of kernels, syncs and sleeps, so both runs make the same schedule."""
    rep = os.path.join(out, label + ".json")
    ivf = os.path.join(out, label + ".iv")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KTIME_", "KCOUNT_"))}
    env = dict(base, KCOUNT_INTERVALS=ivf, KCOUNT_OUTPUT=os.path.join(out, label + ".kcount.json"),
               LD_PRELOAD=os.path.join(args.bin, "libkcount.so"))
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    check("%s: counter run: exit status 0" % label, p.returncode == 0, p.stderr[-400:])
    env = dict(base, KTIME_OUTPUT=rep, KTIME_TIMER="cupti", LD_PRELOAD=args.lib)
    env.update(env_extra)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    check("%s: ktime run: exit status 0" % label, p.returncode == 0, p.stderr[-400:])
    if p.stderr.strip():
        print("# %s: ktime's stderr: %s" % (label, p.stderr.strip()[-300:]))
    with open(rep) as f:
        return json.load(f), intervals(ivf)


def dev0(r, method="cupti"):
    b = r.get("gpu_busy") or {}
    return next((d for d in b.get("devices", []) if d["method"] == method), None)


def part_a(args, out):
    r, iv = run(args, out, "a", [os.path.join(args.bin, "where"), "sleep", "200"], {})
    busy, span, gaps = union([(a, b) for _, _, a, b, _ in iv])
    d = dev0(r)
    check("a: ktime has a cupti busy entry", d is not None)
    if not d:
        return
    pc = 100.0 * busy / span
    print("# a: counter busy %.2f %% of %.3f ms, %d gaps %.3f ms; ktime %.2f %%, %d gaps %.3f ms"
          % (pc, span / 1e6, len(gaps), sum(gaps) / 1e6, d["busy_percent"], d["gaps"]["count"],
             d["gaps"]["total_ms"]))
    check("a: busy % within 1 point of the counter's", abs(d["busy_percent"] - pc) <= 1.0)
    check("a: gaps: the counter's count", d["gaps"]["count"] == len(gaps))
    idle_pc = 100.0 * d["gaps"]["total_ms"] / d["span_ms"] if d.get("span_ms") else None
    check("a: idle % (the gaps' total over the span) within 1 point of the counter's",
          idle_pc is not None and abs(idle_pc - 100.0 * sum(gaps) / span) <= 1.0,
          "%s vs %.2f" % (idle_pc, 100.0 * sum(gaps) / span))


def part_b(args, out):
    r, iv = run(args, out, "b", [os.path.join(args.bin, "where"), "streams", "100"], {})
    busy, span, _ = union([(a, b) for _, _, a, b, _ in iv])
    d = dev0(r)
    check("b: ktime has a cupti busy entry", d is not None)
    if not d:
        return
    print("# b: counter union %.3f ms of %.3f ms kernel time; ktime busy %.3f ms, concurrency %.2f"
          % (busy / 1e6, sum(b - a for _, _, a, b, _ in iv) / 1e6, d["busy_ms"], d["concurrency"]))
    # Two runs: each kernel's length varies a little between them, so the union is compared
    # as a share of the run's own kernel time (half of it when the streams overlap fully).
    ksum = sum(b - a for _, _, a, b, _ in iv) / 1e6
    check("b: busy time over kernel time within 2 % of the counter's union over its kernel time",
          d.get("kernel_ms") and near(d["busy_ms"] / d["kernel_ms"], busy / 1e6 / ksum, 0.02),
          "%.4f vs %.4f" % (d["busy_ms"] / d["kernel_ms"] if d.get("kernel_ms") else -1, busy / 1e6 / ksum))
    check("b: concurrency stated, above 1.5", d["concurrency"] > 1.5)
    check("b: two streams", len(d["streams"]) >= 2)


def part_c(args, out):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import regions
    counts = {}
    for timer in ("events", "cupti"):
        rep = os.path.join(out, "c-%s.json" % timer)
        env = dict(os.environ, KTIME_OUTPUT=rep, KTIME_TIMER=timer, KTIME_NVTX="1", LD_PRELOAD=args.lib)
        p = subprocess.run([sys.executable, "-c", regions.WORKLOAD, "nvtx"], env=env,
                           capture_output=True, text=True, timeout=600)
        check("c: %s: exit status 0" % timer, p.returncode == 0, p.stderr[-400:])
        with open(rep) as f:
            r = json.load(f)
        counts[timer] = {(g["name"], k["mangled"]): k["timed"]
                         for g in (r.get("regions") or {}).get("ranges", []) for k in g["kernels"]}
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
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KTIME_", "KCOUNT_"))}
    base.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    # The counter's job, then ktime's (one CUPTI activity client a process: see run()).
    for label, env in (("counter", dict(base, KCOUNT_INTERVALS=os.path.join(out, "d-%p.iv"),
                                        KCOUNT_OUTPUT=os.path.join(out, "d-kcount-%p.json"),
                                        LD_PRELOAD=os.path.join(args.bin, "libkcount.so"))),
                       ("ktime", dict(base, KTIME_OUTPUT=os.path.join(out, "d-%r.json"),
                                      KTIME_TIMER="cupti", LD_PRELOAD=args.lib))):
        p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", script],
                           env=env, capture_output=True, text=True, timeout=900)
        check("d: %s's torchrun exit status 0" % label, p.returncode == 0, p.stderr[-400:])
    for rank in (0, 1):
        with open(os.path.join(out, "d-%d.json" % rank)) as f:
            r = json.load(f)
        ivs = [intervals(os.path.join(out, n)) for n in os.listdir(out) if n.startswith("d-") and n.endswith(".iv")]
        iv = next((x for x in ivs if x and any(d == rank for d, _, _, _, _ in x)), [])
        comm = [(a, b) for _, _, a, b, n in iv if COMM.search(n)]
        comp = [(a, b) for _, _, a, b, n in iv if not COMM.search(n)]
        c = next((e for e in (r.get("communication") or {}).get("devices", []) if e["method"] == "cupti"), None)
        check("d: rank %d: a communication entry" % rank, c is not None)
        if not c:
            continue
        ref_comm = sum(b - a for a, b in comm) / 1e6
        ref_ov = overlap(comm, comp) / 1e6
        print("# d: rank %d: counter NCCL %.3f ms, overlap %.3f ms; ktime %.3f, %.3f"
              % (rank, ref_comm, ref_ov, c["comm_ms"], c["overlap_ms"]))
        check("d: rank %d: NCCL time within 2 %%" % rank, near(c["comm_ms"], ref_comm, 0.02))
        check("d: rank %d: overlap within 2 %% (of the NCCL time)" % rank,
              abs(c["overlap_ms"] - ref_ov) <= 0.02 * max(ref_comm, 1e-9))


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
