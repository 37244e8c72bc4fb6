#!/usr/bin/env python3
"""KTIME_CAPTURE=profiler-api on a real GPU (issue 15): a small PyTorch loop marks part of its
work with torch.cuda.profiler.start()/stop() (cudaProfilerStart/Stop, which call the driver's
cuProfilerStart/Stop); under libktime with KTIME_CAPTURE=profiler-api and a JSON report, the
kernels launched inside are timed and those outside counted as outside the range.

usage: capture_range.py --lib LIB [--out DIR]

The workload: 60 x.add_(1) before the range, then inside it 30 x.add_(1) and 20 x.mul_(2),
then 40 x.add_(1) after. Checks, on the JSON report: one range (1 start, 1 stop, closed at
exit); the add kernel (130 calls): 5 warmup, all used up before the range, so its 30 launches
inside are each timed (or dropped/incomplete, which the report accounts for) and the other 95
outside the range; the mul kernel (20 calls, inside only): 5 warmup there, 15 timed, none
outside; every row's buckets add up to its calls. Prints one line, PASS or FAIL with the
reasons; exits 0 or 1, and 77 without torch or a GPU.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

WORKLOAD = r"""
import torch
x = torch.zeros(1 << 16, device="cuda")
torch.cuda.synchronize()
for _ in range(60):
    x.add_(1)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(30):
    x.add_(1)
for _ in range(20):
    x.mul_(2)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
for _ in range(40):
    x.add_(1)
torch.cuda.synchronize()
print("done")
"""

BUCKETS = ("warmup_skipped", "captured", "dropped", "failed", "timed", "incomplete",
           "outside_range")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("capture_range.py: SKIP (no torch)")
        return 77
    if not shutil.which("nvidia-smi") or \
            subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        print("capture_range.py: SKIP (no GPU)")
        return 77
    out = a.out or tempfile.mkdtemp(prefix="ktime-range-")
    os.makedirs(out, exist_ok=True)
    report = os.path.join(out, "range.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KTIME_") and k != "LD_PRELOAD"}
    env.update({"LD_PRELOAD": os.path.abspath(a.lib), "KTIME_CAPTURE": "profiler-api",
                "KTIME_WARMUP": "5", "KTIME_OUTPUT": report})
    p = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True, text=True,
                       timeout=300)
    bad = []
    if p.returncode != 0 or "done" not in p.stdout:
        bad.append(f"workload exit {p.returncode}: {p.stderr.strip()[-300:]}")
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        print(f"capture_range.py: FAIL (no report: {e}; {'; '.join(bad)})")
        return 1
    rng = r.get("capture") or {}
    if (rng.get("starts"), rng.get("stops"), rng.get("ranges"), rng.get("open_at_exit")) != \
            (1, 1, 1, False):
        bad.append(f"capture {rng}, want 1 start, 1 stop, 1 range, closed")
    for k in r.get("kernels", []):
        s = sum(k.get(b, 0) for b in BUCKETS)
        if s != k["calls"]:
            bad.append(f"{k['name'][:60]}: buckets add up to {s}, calls {k['calls']}")
    add = [k for k in r.get("kernels", []) if k["calls"] == 130]
    mul = [k for k in r.get("kernels", []) if k["calls"] == 20 and "mul" in k["name"].lower()]
    if len(add) != 1:
        bad.append(f"{len(add)} kernels with 130 calls (the add), want 1")
    else:
        k = add[0]
        inside = k["timed"] + k["dropped"] + k["incomplete"]
        if k["warmup_skipped"] != 5 or inside != 30 or k["outside_range"] != 95 or k["timed"] < 1:
            bad.append(f"add: warmup {k['warmup_skipped']}, timed {k['timed']} (+{k['dropped']} "
                       f"dropped, {k['incomplete']} incomplete), outside {k['outside_range']}; "
                       "want 5, 30 inside, 95 outside")
    if len(mul) != 1:
        bad.append(f"{len(mul)} mul kernels with 20 calls, want 1")
    else:
        k = mul[0]
        inside = k["timed"] + k["dropped"] + k["incomplete"]
        if k["warmup_skipped"] != 5 or inside != 15 or k["outside_range"] != 0 or k["timed"] < 1:
            bad.append(f"mul: warmup {k['warmup_skipped']}, timed {k['timed']}, outside "
                       f"{k['outside_range']}; want 5, 15 inside, 0 outside")
    if bad:
        print("capture_range.py: FAIL (" + "; ".join(bad) + f"; report {report})")
        return 1
    print(f"capture_range.py: PASS (1 range; add 30 inside timed, 95 outside; mul 15 timed; report {report})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
