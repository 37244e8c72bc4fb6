#!/usr/bin/env python3
"""Issue 12's multi-rank runs on two GPUs: a PyTorch DDP training loop under torchrun (NCCL)
and, where the machine has an MPI launcher, an mpi4py job, each under ktime with libkcount (the
CUPTI counter) beside it.

Checks: one report per rank (KTIME_OUTPUT with %r and %p), with its rank and world size; per
rank and kernel, ktime's launches that ran equal CUPTI's records in the same process (nothing
lost), NCCL's kernels included; `ktime merge` of the ranks' reports equals the sums of the
per-rank files exactly (calls, timed, sum_us per kernel) and names the slowest and fastest rank.

usage: dist.py --lib LIB --gpu BUILD/gpu --tool tools/ktime_tool.py --out DIR [--one-gpu]
Writes DIR/dist.md, DIR/dist-*.json (the merged reports). Exit 77 with fewer than 2 GPUs, unless
--one-gpu: then both ranks share GPU 0 and DDP all-reduces through gloo (NCCL refuses two ranks
on one device), so there are no NCCL kernels to find; everything else is checked the same.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timers import HERE, WARMUP, kcount_kernels, run, short  # noqa: E402


def gpus():
    if not shutil.which("nvidia-smi"):
        return 0
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def load(p):
    with open(p) as f:
        return json.load(f)


def case(name, cmd, a, tmp, rows, problems, merged_out):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    env = {"LD_PRELOAD": "%s:%s" % (a.kcount, a.lib), "KTIME_WARMUP": str(WARMUP),
           "KTIME_OUTPUT": os.path.join(d, "%s-r%%r-%%p.json" % name),
           "KCOUNT_OUTPUT": os.path.join(d, "kc-%p.json"),
           "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
    if a.one_gpu:
        env["DDP_BACKEND"] = "gloo"
    rc, out, err, secs = run(cmd, env, d, timeout=300)
    reps = [(p, load(p)) for p in sorted(glob.glob(os.path.join(d, name + "-r*.json")))]
    ranked = [(p, r) for p, r in reps if r.get("kernels")]
    bad = []
    if rc != 0:
        bad.append("rc %s; stderr %s" % (rc, err.strip()[-400:]))
    ranks = sorted(str(r.get("rank")) for _, r in ranked)
    if ranks != ["0", "1"]:
        bad.append("reports with kernels from ranks %s, want 0 and 1 (%d files)" % (ranks, len(reps)))
    lost = nccl = 0
    for p, r in ranked:
        if r.get("world_size") != 2:
            bad.append("%s: world_size %r" % (os.path.basename(p), r.get("world_size")))
        kc = kcount_kernels([load(x) for x in glob.glob(os.path.join(d, "kc-%d.json" % r["pid"]))])
        if not kc:
            bad.append("rank %s: no libkcount report for pid %d" % (r.get("rank"), r["pid"]))
            continue
        kt = {k["mangled"]: k for k in r["kernels"] if k.get("kind") != "graph"}
        for m in sorted(set(kc) | set(kt)):
            c = kc.get(m, {}).get("count", 0)
            k = kt.get(m)
            v = (k["calls"] - k["captured"] - k["failed"] + k.get("in_graph", 0)) if k else 0
            if c != v:
                lost += 1
                bad.append("rank %s: %s: CUPTI %d, ktime %d" % (r.get("rank"), short(m, 50), c, v))
        nccl += sum(1 for m in kt if "nccl" in m.lower())
        t = r["totals"]
        if t.get("dropped") or t.get("incomplete_at_exit"):
            bad.append("rank %s: dropped %s, incomplete %s" % (r.get("rank"), t.get("dropped"),
                                                             t.get("incomplete_at_exit")))
    if name == "ddp" and ranked and nccl < len(ranked) and not a.one_gpu:
        bad.append("NCCL kernels in %d of %d rank reports" % (nccl, len(ranked)))
    # ktime merge: the job's view, exactly the sums of the ranks.
    merged = os.path.join(a.out, "dist-%s-merged.json" % name)
    mrc = subprocess.run([sys.executable, a.tool, "merge"] + [p for p, _ in reps] + ["-o", merged],
                         capture_output=True, text=True)
    spread = "-"
    if mrc.returncode != 0 or not os.path.exists(merged):
        bad.append("ktime merge: rc %d: %s" % (mrc.returncode, mrc.stderr.strip()[-300:]))
    else:
        m = load(merged)
        sums = {}
        for _, r in reps:
            for k in r.get("kernels", []):
                e = sums.setdefault(k["mangled"], [0, 0, 0.0])
                e[0] += k["calls"]
                e[1] += k["timed"]
                e[2] += k.get("sum_us") or 0.0
        got = {k["mangled"]: k for k in m.get("kernels", [])}
        for mg, (calls, timed, su) in sums.items():
            k = got.get(mg)
            if not k or k["calls"] != calls or k["timed"] != timed or \
                    abs((k.get("sum_us") or 0.0) - su) > 1e-9 * max(1.0, abs(su)):
                bad.append("merge: %s: %r, ranks sum to calls %d timed %d sum_us %.6f" % (
                    short(mg, 40), k and (k["calls"], k["timed"], k.get("sum_us")), calls, timed, su))
        if set(got) != set(sums):
            bad.append("merge: kernels %d, ranks' union %d" % (len(got), len(sums)))
        top = m["kernels"][0] if m.get("kernels") else {}
        rs = top.get("rank_spread")
        if not rs:
            bad.append("merge: no rank_spread on the top kernel")
        else:
            spread = json.dumps(rs)
        txt = subprocess.run([sys.executable, a.tool, "report", merged, "--top", "8"],
                             capture_output=True, text=True)
        merged_out.append("### %s: `ktime report %s --top 8`\n\n```\n%s```\n" % (
            name, os.path.basename(merged), txt.stdout if txt.returncode == 0 else txt.stderr))
    rows.append("| %s | %s | %d | %d | %d | %s | %s |" % (
        name, " ".join(os.path.basename(c) for c in cmd[:4]), len(ranked),
        sum(len(r["kernels"]) for _, r in ranked), lost, spread[:120], "; ".join(bad[:2]) or "ok"))
    problems += ["%s: %s" % (name, b) for b in bad[:12]]
    for p, _ in reps:
        shutil.copy(p, a.out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "dist-out"))
    ap.add_argument("--one-gpu", action="store_true")
    a = ap.parse_args()
    if gpus() < 1 or (gpus() < 2 and not a.one_gpu):
        print("fewer than 2 GPUs")
        sys.exit(77)
    a.lib, a.gpu, a.tool = (os.path.abspath(x) for x in (a.lib, a.gpu, a.tool))
    # `ktime report` prints through the build's ktime-render (build/src/.libs/libktime.so's
    # build tree: build/src/ktime-render), which the launcher would have named.
    os.environ.setdefault("KTIME_RENDER", os.path.join(os.path.dirname(os.path.dirname(a.lib)),
                                                       "ktime-render"))
    a.kcount = os.path.join(a.gpu, "libkcount.so")
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ktime-dist.")
    rows, problems, merged_out = [], [], []
    torchrun = shutil.which("torchrun")
    trun = [torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"]
    case("ddp", trun + ["--standalone", "--nproc-per-node", "2",
                        os.path.join(HERE, "workloads", "ddp_train.py")], a, tmp, rows, problems,
         merged_out)
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun:
        case("mpi", [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                     "-x", "LD_PRELOAD", "-x", "KTIME_OUTPUT", "-x", "KTIME_WARMUP",
                     "-x", "KCOUNT_OUTPUT", sys.executable,
                     os.path.join(HERE, "workloads", "mpi_allreduce.py")], a, tmp, rows, problems,
             merged_out)
    else:
        problems.append("mpi: no mpirun or mpiexec on this machine; the MPI case did not run")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    text = "\n".join([
        "# Multi-rank runs under ktime on two GPUs (tests/gpu/dist.py)", "",
        "%s UTC; %s%s" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), smi.replace("\n", "; "),
                         "; --one-gpu: both ranks on GPU 0, DDP through gloo" if a.one_gpu else ""), "",
        "Each run with `LD_PRELOAD=libkcount.so:libktime.so`, `KTIME_OUTPUT=NAME-r%r-%p.json`; "
        "launches checked per rank and kernel against libkcount's CUPTI records of the same "
        "process; `ktime merge` against the per-rank sums.", "",
        "| job | command | rank reports | kernels (all ranks) | kernels not matching CUPTI "
        "| top kernel's rank spread | problems |", "| --- | --- | --- | --- | --- | --- | --- |"] +
        rows + ["", "## Problems", ""] + (["- " + p for p in problems] or ["none"]) +
        ["", "## The merged reports", ""] + merged_out)
    with open(os.path.join(a.out, "dist.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if rows and not [p for p in problems if not p.startswith("mpi: no mpirun")] else 1)


if __name__ == "__main__":
    main()
