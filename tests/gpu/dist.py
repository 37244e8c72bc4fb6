#!/usr/bin/env python3
"""Multi-rank runs on two GPUs: a PyTorch DDP training loop under torchrun (NCCL) and, where the
machine has an MPI launcher, an mpi4py job, each under ktime with libkcount (the CUPTI counter)
beside it; and the DDP job once more under KTIME_TIMER=cupti (issue 19).

Checks (issue 12): one report per rank (KTIME_OUTPUT with %r and %p), with its rank and world
size; per rank and kernel, ktime's launches that ran equal CUPTI's records in the same process
(nothing lost), NCCL's kernels included; `ktime merge` of the ranks' reports equals the sums of
the per-rank files exactly (calls, timed, sum_us per kernel) and names the slowest and fastest
rank.

The CUPTI timer (issue 19, case ddp_cupti): torchrun --nproc-per-node 2 with KTIME_TIMER=cupti
and KTIME_OUTPUT=DIR/k-%r-%p.json. torchrun's own processes launch nothing and write no file:
DIR holds exactly the two ranks' reports; `ktime merge DIR/*.json` gives exactly 2 ranks
(0 and 1) timed by CUPTI and skips nothing; in each rank every launch that ran has its CUPTI
record (no kernel incomplete or dropped, no record dropped, every row's buckets add up), and
its kernels and counts equal libkcount's CUPTI records for the same rank. libkcount cannot run
in the same process as the CUPTI timer (ktime hands CUPTI over to any other CUPTI client and
times with events, timers.py says so), so that reference is the ddp case's libkcount run of
the same job, rank by rank (the workload is deterministic: same shapes and steps every run).

usage: dist.py --lib LIB --gpu BUILD/gpu --tool tools/ktime_tool.py --out DIR [--one-gpu]
Writes DIR/dist.md, DIR/dist-*.json (the merged reports); prints a PASS/FAIL table of every
check last. Exit 0 when every check passed, 1 otherwise; 77 with fewer than 2 GPUs, unless
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


def case(name, cmd, a, tmp, rows, problems, merged_out, kc_by_rank=None):
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
        if kc_by_rank is not None and kc:
            kc_by_rank[r.get("rank")] = {m: e["count"] for m, e in kc.items()}
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
    return bad


def launches_ran(k):
    """A kernel row's launches that ran, as CUPTI counts its records (node runs included)."""
    return k["calls"] - k.get("captured", 0) - k.get("failed", 0) + k.get("in_graph", 0)


def case_cupti(cmd, a, tmp, kc_by_rank, checks, merged_out):
    """The DDP job under KTIME_TIMER=cupti with KTIME_OUTPUT=k-%r-%p.json (module docstring).
    Appends (check, passed, detail) to checks."""
    name = "ddp_cupti"
    d = os.path.join(tmp, name)
    os.makedirs(d)
    env = {"LD_PRELOAD": a.lib, "KTIME_TIMER": "cupti", "KTIME_WARMUP": str(WARMUP),
           "KTIME_OUTPUT": os.path.join(d, "k-%r-%p.json"),
           "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
    if a.one_gpu:
        env["DDP_BACKEND"] = "gloo"
    rc, out, err, secs = run(cmd, env, d, timeout=300)
    with open(os.path.join(a.out, "dist-%s.err.txt" % name), "w") as f:
        f.write(err)

    def check(what, ok, detail=""):
        checks.append(("%s: %s" % (name, what), bool(ok), detail))

    check("exit status 0", rc == 0, "rc %s%s" % (rc, "" if rc == 0 else "; " + err.strip()[-200:]))
    files = sorted(os.listdir(d))
    want = [f for f in files if f.startswith(("k-0-", "k-1-")) and f.endswith(".json")]
    check("exactly 2 files, k-0-PID.json and k-1-PID.json (torchrun's processes write none)",
          len(files) == 2 and len(want) == 2 and want[0].startswith("k-0-") and
          want[1].startswith("k-1-"), " ".join(files) or "no file")
    reps = []
    for f in files:
        try:
            reps.append((os.path.join(d, f), load(os.path.join(d, f))))
        except (OSError, ValueError) as e:
            check("%s is a JSON report" % f, False, str(e))
    for p, r in reps:
        t = r.get("timer") or {}
        check("%s: timed by CUPTI (timer used cupti, cupti-activity)" % os.path.basename(p),
              t.get("used") == "cupti" and r.get("timing_method") == "cupti-activity",
              "used %s, timing_method %s, note %s" % (t.get("used"), r.get("timing_method"),
                                                      t.get("note")))
    # ktime merge of the directory, as a user types it.
    merged = os.path.join(a.out, "dist-%s-merged.json" % name)
    mrc = subprocess.run([sys.executable, a.tool, "merge"] + sorted(glob.glob(os.path.join(d, "*.json"))) +
                         ["-o", merged], capture_output=True, text=True)
    m = load(merged) if mrc.returncode == 0 and os.path.exists(merged) else {}
    ranks = [e.get("rank") for e in m.get("merged_from", [])]
    check("ktime merge DIR/*.json: exit 0, nothing skipped",
          mrc.returncode == 0 and not mrc.stderr.strip(),
          "rc %d %s" % (mrc.returncode, mrc.stderr.strip()[-200:]))
    check("ktime merge: exactly 2 ranks, 0 and 1, timed by CUPTI",
          sorted(ranks, key=str) == [0, 1] and m.get("timing_method") == "cupti-activity",
          "ranks %s, timing_method %s" % (ranks, m.get("timing_method")))
    if m:
        txt = subprocess.run([sys.executable, a.tool, "report", merged, "--top", "8"],
                             capture_output=True, text=True)
        merged_out.append("### %s: `ktime report %s --top 8`\n\n```\n%s```\n" % (
            name, os.path.basename(merged), txt.stdout if txt.returncode == 0 else txt.stderr))
    for p, r in reps:
        rank = r.get("rank")
        ks = [k for k in r.get("kernels", []) if k.get("kind") != "graph"]
        bad = []
        for k in ks:
            b = sum(k.get(f, 0) for f in ("warmup_skipped", "captured", "dropped", "failed", "timed",
                                          "incomplete", "unsampled", "timed_by_nodes"))
            if b != k["calls"] + k.get("in_graph", 0):
                bad.append("%s: buckets %d != calls + in_graph %d" % (short(k["mangled"], 40), b,
                                                                     k["calls"] + k.get("in_graph", 0)))
            if k.get("incomplete") or k.get("dropped"):
                bad.append("%s: incomplete %s, dropped %s" % (short(k["mangled"], 40),
                                                             k.get("incomplete"), k.get("dropped")))
        t, tm = r.get("totals", {}), r.get("timer") or {}
        if t.get("incomplete_at_exit") or tm.get("cupti_records_dropped") or tm.get("cupti_buffers_refused"):
            bad.append("incomplete_at_exit %s, records dropped %s, buffers refused %s" % (
                t.get("incomplete_at_exit"), tm.get("cupti_records_dropped"), tm.get("cupti_buffers_refused")))
        check("rank %s: every launch that ran has its CUPTI record (%d kernels)" % (rank, len(ks)),
              ks and not bad, "; ".join(bad[:3]) or "ok")
        ref = kc_by_rank.get(rank)
        if not ref:
            check("rank %s: kernels equal libkcount's CUPTI records" % rank, False,
                  "no libkcount counts for rank %s (the ddp case did not give them)" % rank)
            continue
        got = {}
        for k in ks:
            got[k["mangled"]] = got.get(k["mangled"], 0) + launches_ran(k)
        diff = ["%s: ktime %d, CUPTI %d" % (short(mg, 40), got.get(mg, 0), ref.get(mg, 0))
                for mg in sorted(set(got) | set(ref)) if got.get(mg, 0) != ref.get(mg, 0)]
        check("rank %s: kernels equal libkcount's CUPTI records (%d kernels, %d launches)" % (
            rank, len(ref), sum(ref.values())), not diff, "; ".join(diff[:3]) or "equal")
    for p, _ in reps:
        shutil.copy(p, os.path.join(a.out, "dist-%s-%s" % (name, os.path.basename(p))))


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
    # build tree: build/tools/ktime-render), which the launcher would have named.
    build = os.path.dirname(os.path.dirname(os.path.dirname(a.lib)))
    os.environ.setdefault("KTIME_RENDER", os.path.join(build, "tools", "ktime-render"))
    a.kcount = os.path.join(a.gpu, "libkcount.so")
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ktime-dist.")
    rows, problems, merged_out, checks = [], [], [], []
    torchrun = shutil.which("torchrun")
    trun = [torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"]
    ddp = trun + ["--standalone", "--nproc-per-node", "2", os.path.join(HERE, "workloads", "ddp_train.py")]
    kc_by_rank = {}
    bad = case("ddp", ddp, a, tmp, rows, problems, merged_out, kc_by_rank)
    checks.append(("ddp: one report per rank, each equal to libkcount's CUPTI records, merge = "
                   "the ranks' sums", not bad, "; ".join(bad[:2]) or "ok"))
    case_cupti(ddp, a, tmp, kc_by_rank, checks, merged_out)
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun:
        bad = case("mpi", [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                     "-x", "LD_PRELOAD", "-x", "KTIME_OUTPUT", "-x", "KTIME_WARMUP",
                     "-x", "KCOUNT_OUTPUT", sys.executable,
                     os.path.join(HERE, "workloads", "mpi_allreduce.py")], a, tmp, rows, problems,
             merged_out)
        checks.append(("mpi: one report per rank, each equal to libkcount's CUPTI records, merge "
                       "= the ranks' sums", not bad, "; ".join(bad[:2]) or "ok"))
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
        "process; `ktime merge` against the per-rank sums. `ddp_cupti` (the Checks table "
        "below): the DDP job under libktime alone with `KTIME_TIMER=cupti` and "
        "`KTIME_OUTPUT=k-%r-%p.json`, each rank against the ddp run's libkcount records of "
        "the same rank.", "",
        "| job | command | rank reports | kernels (all ranks) | kernels not matching CUPTI "
        "| top kernel's rank spread | problems |", "| --- | --- | --- | --- | --- | --- | --- |"] +
        rows + ["", "## Problems", ""] + (["- " + p for p in problems] or ["none"]) +
        ["", "## The merged reports", ""] + merged_out)
    npass = sum(1 for _, ok, _ in checks if ok)
    table = "\n".join(["## Checks", "", "| check | result | detail |", "| --- | --- | --- |"] +
                      ["| %s | %s | %s |" % (c, "PASS" if ok else "FAIL", det.replace("|", "/")[:200])
                       for c, ok, det in checks] +
                      ["", "dist.py: %s (%d of %d checks passed)" % (
                          "PASS" if npass == len(checks) else "FAIL", npass, len(checks))])
    text += "\n" + table + "\n"
    with open(os.path.join(a.out, "dist.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if checks and npass == len(checks) else 1)


if __name__ == "__main__":
    main()
