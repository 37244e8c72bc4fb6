#!/usr/bin/env python3
"""The job's verdict on two GPUs (issue 23, part 5): a 2-rank PyTorch DDP job under torchrun
(NCCL) in which rank 1 is made slower (each iteration it also spins --slow-cycles GPU cycles in
a compute kernel, torch.cuda._sleep, before its backward pass: rank 0 waits for it in DDP's
all-reduce), with KTIME_OUTPUT naming the rank (%r).

Part 1, a run to its end: rank 0 writes the job report at KTIME_OUTPUT with %r as "all". Checks:
the job's output and exit status as without ktime (rank 0's loss line); the job report is there,
2 of 2 ranks merged, none missing; its verdict is straggler and the slowest rank is 1, whose
compute time is over the median's and whose NCCL time is under it; the spin kernel's slowest
rank is 1; the job report equals `ktime merge` of the two ranks' reports, byte for byte; `ktime
report` of it names the straggler in its text.

Part 2, SIGKILL mid-run with KTIME_INTERVAL=1: the same job run until killed
(ddp_train.py --iters 0); once rank 0 has written a job report of the ranks' snapshots that
merges both ranks, the whole process group is SIGKILLed. Checks: each rank's report file is a
valid snapshot (final false); the job report file left is valid JSON, merges 2 ranks and names
rank 1 the straggler. Then tests/gpu/live_kill.py (the snapshots' exact checks, ktime ctl,
Prometheus, series) runs as it is, its table appended.

usage: straggler.py --lib LIB --ktime BUILD/tools/ktime [--promcheck BUILD/tests/e2e/promcheck]
                    [--torchrun /opt/torch/.venv/bin/torchrun] [--slow-cycles N] --out DIR
                    [--parts end,kill,live]
Writes DIR/straggler.md; prints a PASS/FAIL table last. Exit 0 when every check passed, 1
otherwise; 77 with fewer than 2 GPUs.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from live_kill import SPIN, gpus, load, wait, write_table  # noqa: E402  (the same job's helpers)


def base_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KTIME_", "KCOUNT_")) and k != "LD_PRELOAD"}
    env.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"})
    env.update(extra)
    return env


def job_cmd(a, iters, mark=None):
    """The job; iters 0 with a mark folder runs until killed (ddp_train.py's --mark)."""
    trun = [a.torchrun] if a.torchrun else [sys.executable, "-m", "torch.distributed.run"]
    return trun + ["--standalone", "--nproc-per-node", "2",
                   os.path.join(HERE, "workloads", "ddp_train.py"), "--iters", str(iters),
                   "--slow-rank", "1", "--slow-cycles", str(a.slow_cycles)] + \
        (["--mark", mark] if mark else [])


def verdict_checks(check, what, j):
    b = (j or {}).get("balance") or {}
    s = b.get("slowest") or {}
    check("%s: 2 of 2 ranks merged, none missing" % what,
          b.get("ranks") == 2 and b.get("world_size") == 2 and b.get("missing") == [],
          "ranks %s of %s, missing %s" % (b.get("ranks"), b.get("world_size"), b.get("missing")))
    check("%s: the verdict is straggler, rank 1" % what,
          b.get("verdict") == "straggler" and s.get("rank") == 1,
          "verdict %s, slowest %s; compute median %s ms, nccl median %s ms" % (
              b.get("verdict"), s, b.get("compute_median_ms"), b.get("nccl_median_ms")))


def part_end(a, d, check):
    env = base_env({"LD_PRELOAD": a.lib, "KTIME_OUTPUT": os.path.join(d, "job-%r.json"),
                    "KTIME_JOB_WAIT": "60"})
    plain = subprocess.run(job_cmd(a, a.iters), env=base_env({}), cwd=d, capture_output=True,
                           text=True, timeout=600)
    run = subprocess.run(job_cmd(a, a.iters), env=env, cwd=d, capture_output=True, text=True,
                         timeout=600)
    check("run to its end: exit status and rank 0's loss line as without ktime",
          run.returncode == plain.returncode == 0 and
          [l for l in run.stdout.splitlines() if l.startswith("ddp loss")] ==
          [l for l in plain.stdout.splitlines() if l.startswith("ddp loss")],
          "status %s / %s; stderr tail: %s" % (run.returncode, plain.returncode,
                                               run.stderr.strip()[-300:]))
    allp = os.path.join(d, "job-all.json")
    j = load(allp)
    check("run to its end: the job report at KTIME_OUTPUT with %r as all", j is not None, allp)
    verdict_checks(check, "run to its end", j)
    b = (j or {}).get("balance") or {}
    rows = {e.get("rank"): e for e in b.get("per_rank") or []}
    check("run to its end: rank 1 computes more, and spends less in NCCL kernels, than rank 0",
          1 in rows and 0 in rows and rows[1]["compute_ms"] > rows[0]["compute_ms"] and
          rows[1]["nccl_ms"] < rows[0]["nccl_ms"], "per rank: %s" % b.get("per_rank"))
    spin = [k for k in (j or {}).get("kernels", []) if SPIN in k.get("mangled", "")]
    check("run to its end: the spin kernel's slowest rank is 1",
          spin and spin[0].get("rank_spread", {}).get("slowest", {}).get("rank") == 1,
          "%s" % (spin[0].get("rank_spread") if spin else "no spin kernel"))
    m = subprocess.run([a.ktime, "merge", os.path.join(d, "job-0.json"),
                        os.path.join(d, "job-1.json"), "-o", os.path.join(d, "merged.json")],
                       capture_output=True, text=True, timeout=120)
    same = m.returncode == 0 and open(os.path.join(d, "merged.json"), "rb").read() == \
        open(allp, "rb").read() if j is not None else False
    check("run to its end: the job report is ktime merge of the ranks' reports, byte for byte",
          same, m.stderr.strip())
    t = subprocess.run([a.ktime, "report", allp], capture_output=True, text=True, timeout=120)
    check("run to its end: ktime report of it names rank 1 the straggler",
          "verdict  straggler: rank 1 " in t.stdout, t.stderr.strip()[-300:])


def part_kill(a, d, check):
    env = base_env({"LD_PRELOAD": a.lib, "KTIME_OUTPUT": os.path.join(d, "kill-%r.json"),
                    "KTIME_INTERVAL": "1", "KTIME_JOB_WAIT": "10"})
    with open(os.path.join(d, "kill.out"), "w") as out, \
            open(os.path.join(d, "kill.err"), "w") as err:
        job = subprocess.Popen(job_cmd(a, 0, d), env=env, cwd=d, stdout=out, stderr=err,
                               start_new_session=True)
    allp = os.path.join(d, "kill-all.json")
    try:
        up = wait(lambda: ((load(allp) or {}).get("balance") or {}).get("ranks") == 2 and
                  ((load(allp) or {}).get("balance") or {}).get("verdict") == "straggler", 240)
        check("SIGKILL: before it, rank 0's job report of the snapshots merges both ranks", up,
              "%s" % ((load(allp) or {}).get("balance")))
    finally:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        job.wait()
    check("SIGKILL: the job ended by it", job.returncode == -signal.SIGKILL,
          "status %s" % job.returncode)
    for rank in (0, 1):
        r = load(os.path.join(d, "kill-%d.json" % rank))
        s = (r or {}).get("snapshot") or {}
        check("SIGKILL: rank %d's report is a valid snapshot (final false)" % rank,
              r is not None and s.get("final") is False and r.get("rank") == rank,
              "snapshot %s" % s)
    verdict_checks(check, "SIGKILL: the job report left", load(allp))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--ktime", required=True)
    ap.add_argument("--promcheck")
    ap.add_argument("--torchrun", default="/opt/torch/.venv/bin/torchrun")
    ap.add_argument("--slow-cycles", type=int, default=4000000)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--out", default=os.environ.get("OUT", "straggler-out"))
    ap.add_argument("--parts", default="end,kill,live", help="which of end, kill, live to run")
    a = ap.parse_args()
    parts = a.parts.split(",")
    if gpus() < 2:
        print("fewer than 2 GPUs")
        sys.exit(77)
    a.lib, a.ktime = os.path.abspath(a.lib), os.path.abspath(a.ktime)
    if not (a.torchrun and os.access(a.torchrun, os.X_OK)):
        a.torchrun = shutil.which("torchrun")
    os.makedirs(a.out, exist_ok=True)
    d = tempfile.mkdtemp(prefix="ktime-straggler.")
    checks = []

    def check(desc, ok, detail=""):
        checks.append((desc, bool(ok), detail or ("ok" if ok else "failed")))

    if "end" in parts:
        part_end(a, d, check)
    if "kill" in parts:
        part_kill(a, d, check)
    if "live" in parts:
        live = [sys.executable, os.path.join(HERE, "live_kill.py"), "--lib", a.lib, "--ktime",
                a.ktime, "--out", a.out] + (["--promcheck", a.promcheck] if a.promcheck else [])
        lk = subprocess.run(live, capture_output=True, text=True, timeout=900)
        check("live_kill.py: every check passed (its table in live-kill.md)", lk.returncode == 0,
              lk.stdout.strip().splitlines()[-1] if lk.stdout.strip() else lk.stderr.strip()[-300:])
    sys.exit(write_table("The job's verdict: a 2-rank DDP job, rank 1 slower (tests/gpu/straggler.py)",
                         "; --slow-cycles %d" % a.slow_cycles, checks, d,
                         os.path.join(a.out, "straggler.md"), "straggler.py"))

if __name__ == "__main__":
    main()
