#!/usr/bin/env python3
"""ktime always on, on two GPUs (issue 23): a 2-rank PyTorch DDP job under torchrun (NCCL) with
KTIME_INTERVAL=1, KTIME_PROM and KTIME_SERIES per rank, steered with `ktime ctl` while it runs,
then killed with SIGKILL mid-run (the whole process group, torchrun and both ranks).

The job (workloads/ddp_train.py --iters 0 --mark DIR) runs until killed; each iteration also
launches one spin kernel (torch.cuda._sleep), and every 10 iterations, once the GPU is done
with them, each rank writes how many it made to DIR/mark-RANK. The check is exact, whatever the
timing: once a rank's mark says M, the report's snapshot seq S is read; the snapshot after next
(S + 2) began after the marks were written, so it holds at least M spin kernels.

Checks, per rank: after the kill, its report file is valid JSON, a snapshot (final false) with
its rank and world size 2 and seq S + 2 or later, and holds at least M launches of the spin
kernel, every one timed or counted (every row's buckets add up to its calls); its Prometheus
file parses against the exposition format (promcheck, from the build); its series' lines are
valid JSON (the last may be cut short by the kill) and add up, kernel by kernel, to at most the
report's counts (the series' line is written after the report, within a snapshot).
And before the kill: `ktime ctl PID status` answers for each rank; `ktime ctl PID snapshot`
raises its seq.

usage: live_kill.py --lib LIB --ktime BUILD/tools/ktime [--promcheck BUILD/tests/e2e/promcheck]
                    --out DIR [--one-gpu]
Writes DIR/live-kill.md; prints a PASS/FAIL table last. Exit 0 when every check passed, 1
otherwise; 77 with fewer than 2 GPUs, unless --one-gpu (both ranks on GPU 0, gloo).
"""
import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SPIN = "spin_kernel"  # torch.cuda._sleep's kernel (its mangled name holds this)


def gpus():
    if not shutil.which("nvidia-smi"):
        return 0
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def seq_of(p):
    r = load(p)
    return (r or {}).get("snapshot", {}).get("seq", 0) if r else 0


def mark(d, rank):
    try:
        with open(os.path.join(d, "mark-%d" % rank)) as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0



def write_table(title, extra, checks, files, path, name):
    """The checks' table, headed by the date and the GPUs, to path and stdout; the exit
    status: 0 when every check passed."""
    npass = sum(1 for _, ok, _ in checks if ok)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    text = "\n".join(
        ["# " + title, "",
         "%s UTC; %s%s" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), smi.replace("\n", "; "),
                          extra), "",
         "| check | result | detail |", "| --- | --- | --- |"] +
        ["| %s | %s | %s |" % (c, "PASS" if ok else "FAIL", det.replace("|", "/")[:300])
         for c, ok, det in checks] +
        ["", "%s: %s (%d of %d checks passed); files in %s" % (
            name, "PASS" if npass == len(checks) else "FAIL", npass, len(checks), files)])
    with open(path, "w") as f:
        f.write(text + "\n")
    print(text)
    return 0 if checks and npass == len(checks) else 1

def wait(cond, limit_s):
    """Until cond() (at most limit_s: a bound for a failing run, not a timing)."""
    t = time.monotonic()
    while not cond():
        if time.monotonic() - t > limit_s:
            return False
        time.sleep(0.05)
    return True


def spin_calls(r):
    return sum(k["calls"] for k in r.get("kernels", []) if SPIN in k.get("mangled", ""))


def buckets_ok(r):
    keys = ("warmup_skipped", "captured", "dropped", "failed", "timed", "incomplete",
            "outside_range", "paused")
    return all(sum(k.get(x, 0) for x in keys) == k["calls"] for k in r.get("kernels", []))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--ktime", required=True)
    ap.add_argument("--promcheck")
    ap.add_argument("--out", default=os.environ.get("OUT", "live-out"))
    ap.add_argument("--one-gpu", action="store_true")
    a = ap.parse_args()
    if gpus() < 1 or (gpus() < 2 and not a.one_gpu):
        print("fewer than 2 GPUs")
        sys.exit(77)
    a.lib, a.ktime = os.path.abspath(a.lib), os.path.abspath(a.ktime)
    os.makedirs(a.out, exist_ok=True)
    d = tempfile.mkdtemp(prefix="ktime-live.")
    xdg = os.path.join(d, "xdg")
    os.mkdir(xdg, 0o700)
    checks = []

    def check(desc, ok, detail=""):
        checks.append((desc, bool(ok), detail or ("ok" if ok else "failed")))

    torchrun = shutil.which("torchrun")
    trun = [torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"]
    cmd = trun + ["--standalone", "--nproc-per-node", "2",
                  os.path.join(HERE, "workloads", "ddp_train.py"), "--iters", "0", "--mark", d]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KTIME_", "KCOUNT_")) and k != "LD_PRELOAD"}
    env.update({"LD_PRELOAD": a.lib, "KTIME_WARMUP": "5", "KTIME_INTERVAL": "1",
                "KTIME_OUTPUT": os.path.join(d, "live-%r.json"),
                "KTIME_PROM": os.path.join(d, "live-%r.prom"),
                "KTIME_SERIES": os.path.join(d, "live-%r.jsonl"),
                "XDG_RUNTIME_DIR": xdg,
                "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"})
    if a.one_gpu:
        env["DDP_BACKEND"] = "gloo"
    with open(os.path.join(d, "job.out"), "w") as out, open(os.path.join(d, "job.err"), "w") as err:
        job = subprocess.Popen(cmd, env=env, cwd=d, stdout=out, stderr=err, start_new_session=True)
    reports = [os.path.join(d, "live-%d.json" % r) for r in (0, 1)]
    try:
        up = wait(lambda: all(seq_of(p) >= 2 for p in reports) and mark(d, 0) and mark(d, 1), 180)
        check("the job runs: both ranks' snapshots (seq 2 or more) and marks", up,
              "seqs %s, marks %s" % ([seq_of(p) for p in reports], [mark(d, 0), mark(d, 1)]))
        if not up:
            raise RuntimeError("the job did not come up")
        # ktime ctl on the running ranks.
        for rank, p in enumerate(reports):
            pid = (load(p) or {}).get("pid")
            cenv = dict(os.environ, XDG_RUNTIME_DIR=xdg)
            st = subprocess.run([a.ktime, "ctl", str(pid), "status"], env=cenv, capture_output=True,
                                text=True, timeout=30)
            check("rank %d: ktime ctl status answers (timing on)" % rank,
                  st.returncode == 0 and "timing on" in st.stdout, (st.stdout + st.stderr).strip())
            before = seq_of(p)
            sn = subprocess.run([a.ktime, "ctl", str(pid), "snapshot"], env=cenv, capture_output=True,
                                text=True, timeout=30)
            check("rank %d: ktime ctl snapshot writes one" % rank,
                  sn.returncode == 0 and seq_of(p) > before, (sn.stdout + sn.stderr).strip())
        # The exact part: marks M, then the snapshot after next.
        marks = [mark(d, r) for r in (0, 1)]
        seqs = [seq_of(p) for p in reports]
        ok = wait(lambda: all(seq_of(p) >= s + 2 for p, s in zip(reports, seqs)), 60)
        check("both ranks wrote the snapshot after next", ok,
              "marks %s; seqs %s -> %s" % (marks, seqs, [seq_of(p) for p in reports]))
    except RuntimeError:
        marks, seqs = [0, 0], [0, 0]
    finally:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        job.wait()
    check("the job ended by SIGKILL", job.returncode == -signal.SIGKILL, "status %s" % job.returncode)
    for rank, p in enumerate(reports):
        r = load(p)
        check("rank %d: its report file is valid JSON" % rank, r is not None, p)
        if r is None:
            continue
        s = r.get("snapshot") or {}
        check("rank %d: a snapshot (final false), rank %d of 2" % (rank, rank),
              s.get("final") is False and r.get("rank") == rank and r.get("world_size") == 2,
              "snapshot %s, rank %s, world_size %s" % (s, r.get("rank"), r.get("world_size")))
        check("rank %d: seq %d or later" % (rank, seqs[rank] + 2), s.get("seq", 0) >= seqs[rank] + 2,
              "seq %s" % s.get("seq"))
        n = spin_calls(r)
        check("rank %d: at least the %d spin kernels made before (mark)" % (rank, marks[rank]),
              marks[rank] > 0 and n >= marks[rank], "%d spin launches in the snapshot" % n)
        check("rank %d: every row's buckets add up to its calls" % rank, buckets_ok(r))
        prom = os.path.join(d, "live-%d.prom" % rank)
        if a.promcheck:
            pc = subprocess.run([a.promcheck, prom], capture_output=True, text=True)
            check("rank %d: the Prometheus file parses (promcheck)" % rank, pc.returncode == 0,
                  pc.stderr.strip())
        else:
            check("rank %d: the Prometheus file is there" % rank, os.path.exists(prom), prom)
        lines, bad = [], 0
        try:
            with open(os.path.join(d, "live-%d.jsonl" % rank)) as f:
                for line in f:
                    try:
                        lines.append(json.loads(line))
                    except ValueError:
                        bad += 1
        except OSError:
            pass
        sums = {}
        for e in lines:
            for k in e.get("kernels", []):
                sums[k["mangled"]] = sums.get(k["mangled"], 0) + k["calls"]
        calls = {k["mangled"]: k["calls"] for k in r.get("kernels", [])}
        over = [m for m in sums if sums[m] > calls.get(m, 0)]
        check("rank %d: the series' lines are JSON (at most the last cut short)" % rank,
              lines and bad <= 1, "%d lines, %d not JSON" % (len(lines), bad))
        check("rank %d: the series adds up to at most the report's counts" % rank, not over,
              "over: %s" % over[:3])
    sys.exit(write_table("ktime always on: a 2-rank DDP job killed with SIGKILL (tests/gpu/live_kill.py)",
                         "; --one-gpu" if a.one_gpu else "", checks, d,
                         os.path.join(a.out, "live-kill.md"), "live_kill.py"))

if __name__ == "__main__":
    main()
