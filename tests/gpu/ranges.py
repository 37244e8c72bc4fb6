#!/usr/bin/env python3
"""Ranges on a real GPU (issue 13): a PyTorch loop marks its phases with torch.cuda.nvtx
(range_push/range_pop, NVTX through libktime as NVTX's tool, KTIME_NVTX=1) and, in a second
run, with ktime_range_push/pop called through ctypes; KTIME_CAPTURE=nvtx:backward in a third;
and, where the nvtx package is installed, with nvtx.annotate in a domain of its own.

usage: ranges.py --lib LIB [--out DIR]

The workload, 40 iterations: range "step" { range "forward" { 3 x.mul_(2) }  range "backward"
{ 2 x.add_(1) }  1 x.sqrt_() }, then 1 x.neg_() outside every range (four distinct kernels).
Checks, on each JSON report: ranges forward, backward and step closed 40 times, each with wall
time; every mul sample in forward, every add sample in backward, every sqrt sample in step,
every neg sample outside every range (the kernels' timed counts in their ranges equal their rows' timed); the
NVTX run says ktime is NVTX's tool. With KTIME_CAPTURE=nvtx:backward only the add kernel is timed
(the others counted outside the range). Prints one "ok"/"not ok" line per check and a summary;
exits 0 or 1, and 77 without torch or a GPU.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

WORKLOAD = r"""
import ctypes, os, sys, torch
how = sys.argv[1]
if how == "api":
    lib = ctypes.CDLL(os.environ["KTIME_LIB_PATH"])
    push = lambda n: lib.ktime_range_push(n.encode())
    pop = lib.ktime_range_pop
elif how == "annotate":  # the nvtx package: a domain of its own, registered strings
    import nvtx
    stack = []
    def push(n):
        r = nvtx.annotate(n, domain="ktime-test")
        r.__enter__()
        stack.append(r)
    def pop():
        stack.pop().__exit__(None, None, None)
else:
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
x = torch.ones(1 << 16, device="cuda")
torch.cuda.synchronize()
for _ in range(40):
    push("step")
    push("forward")
    for _ in range(3):
        x.mul_(2)
    pop()
    push("backward")
    for _ in range(2):
        x.add_(1)
    pop()
    x.sqrt_()
    pop()
    x.neg_()
torch.cuda.synchronize()
print("done")
"""

n = fails = 0


def check(ok, what):
    global n, fails
    n += 1
    fails += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))


def kernel_with(rep, word):
    ks = [k for k in rep["kernels"] if word in k["name"].lower()]
    return ks[0] if len(ks) == 1 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("ranges.py: SKIP (no torch)")
        return 77
    if not shutil.which("nvidia-smi") or \
            subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        print("ranges.py: SKIP (no GPU)")
        return 77
    out = a.out or tempfile.mkdtemp(prefix="ktime-ranges-")
    os.makedirs(out, exist_ok=True)
    lib = os.path.abspath(a.lib)
    script = os.path.join(out, "workload.py")
    with open(script, "w") as f:
        f.write(WORKLOAD)
    runs = [("nvtx", "nvtx", {"KTIME_NVTX": "1"}), ("api", "api", {}),
            ("capture", "nvtx", {"KTIME_NVTX": "1", "KTIME_CAPTURE": "nvtx:backward"})]
    try:
        import nvtx  # noqa: F401
        runs.append(("annotate", "annotate", {"KTIME_NVTX": "1"}))
    except ImportError:
        print("# no nvtx package: nvtx.annotate not tried")
    reps = {}
    for label, how, extra in runs:
        env = dict(os.environ, LD_PRELOAD=lib, KTIME_LIB_PATH=lib,
                   KTIME_OUTPUT=os.path.join(out, label + ".json"),
                   KTIME_ALSO_OUTPUT=os.path.join(out, label + ".txt"), **extra)
        p = subprocess.run([sys.executable, script, how], env=env, capture_output=True, text=True,
                           timeout=120)
        with open(os.path.join(out, label + ".err"), "w") as f:
            f.write(p.stderr)
        check(p.returncode == 0 and "done" in p.stdout, "%s: exit 0 (%d)" % (label, p.returncode))
        try:
            reps[label] = json.load(open(os.path.join(out, label + ".json")))
        except (OSError, ValueError) as e:
            check(False, "%s: JSON report (%s)" % (label, e))
    if reps.get("nvtx"):
        print("# kernels: " + "; ".join(k["name"][:70] for k in reps["nvtx"]["kernels"]))
    for label in ("nvtx", "api", "annotate"):
        rep = reps.get(label)
        if not rep:
            continue
        rg = rep.get("ranges")
        if not isinstance(rg, dict):
            check(False, "%s: the report has ranges" % label)
            continue
        by = {g["name"]: g for g in rg["by_name"]}
        check(all(by.get(r, {}).get("closed") == 40 and by[r].get("wall_ms", 0) > 0
                  for r in ("step", "forward", "backward")),
              "%s: step, forward, backward closed 40 times each, with wall time (%s)"
              % (label, {r: (by.get(r, {}).get("closed"), round(by.get(r, {}).get("wall_ms", 0), 3))
                         for r in ("step", "forward", "backward")}))
        for word, rname in (("mulfunctor", "forward"), ("_add", "backward"), ("sqrt", "step"),
                            ("neg", None)):
            k = kernel_with(rep, word)
            g = by.get(rname)
            inside = [x for x in (g or {}).get("kernels", []) if k and x["mangled"] == k["mangled"]]
            elsewhere = sum(x["timed"] for gg in rg["by_name"] if gg is not g
                            for x in gg.get("kernels", []) if k and x["mangled"] == k["mangled"])
            ok = bool(k) and len(inside) == 1 and inside[0]["timed"] == k["timed"] > 0 and elsewhere == 0
            check(ok, "%s: every %s sample under %s (%s of %s timed; %d elsewhere)"
                  % (label, word, rname or "no range", inside[0]["timed"] if inside else None,
                     k["timed"] if k else None, elsewhere))
    if reps.get("nvtx"):
        check((reps["nvtx"].get("ranges") or {}).get("nvtx", "").startswith("ktime is NVTX's tool"),
              "nvtx: ktime is NVTX's tool (%r)" % (reps["nvtx"].get("ranges") or {}).get("nvtx"))
    rep = reps.get("capture")
    if rep:
        add, mul = kernel_with(rep, "_add"), kernel_with(rep, "mulfunctor")
        rgm = rep.get("capture") or {}
        check(bool(add) and add["timed"] > 0 and add["outside_range"] == 0 and bool(mul) and
              mul["timed"] == 0 and mul["outside_range"] > 0 and rgm.get("ranges") == 40,
              "KTIME_CAPTURE=nvtx:backward: add timed (%s), mul only outside the range (%s), %s ranges"
              % (add and add["timed"], mul and mul["outside_range"], rgm.get("ranges")))
    print("ranges.py: %d checks, %d failed" % (n, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
