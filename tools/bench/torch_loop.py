#!/usr/bin/env python3
"""PyTorch small-op loop for ktime's overhead benchmark (tools/bench/run.py runs it).

Each iteration does `x = x * 1.0001 + 0.5; x = torch.relu(x)` on a 64-element CUDA tensor: three
tiny elementwise kernels, so the loop is bound by the CPU cost of launching them. After a warm-up,
the loop is timed with time.perf_counter() around it and a torch.cuda.synchronize() at its end.

    python3 torch_loop.py [--iters N] [--warmup W] [--profiler] [--fast-exit]

--profiler   runs warm-up and loop inside torch.profiler.profile(activities=[CPU, CUDA]); only
             the loop is timed (the profiler's start-up and trace processing are not).
--fast-exit  after printing the result, leave with os._exit(0): skips the profiler's trace
             processing at the end of the `with` block, which takes seconds and measures nothing.
             (Never used for ktime runs: ktime writes its report at a normal exit.)

Prints one line: RESULT workload=torch us_per_op=... us_per_iter=... iters=... ops_per_iter=3
kernels_expected=... (every kernel launch the loop and warm-up made).
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--profiler", action="store_true")
    ap.add_argument("--fast-exit", action="store_true")
    a = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        print("torch_loop: cannot import torch: %s" % e, file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch_loop: no CUDA device", file=sys.stderr)
        return 77
    ops_per_iter = 3

    def loop(x, n):
        for _ in range(n):
            x = x * 1.0001 + 0.5
            x = torch.relu(x)
        return x

    x = torch.zeros(64, device="cuda")
    torch.cuda.synchronize()
    prof = None
    if a.profiler:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    x = loop(x, a.warmup)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    x = loop(x, a.iters)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    checksum = float(x.sum().item())
    dt = t1 - t0
    print(
        "RESULT workload=torch iters=%d warmup_iters=%d ops_per_iter=%d us_per_op=%.4f "
        "us_per_iter=%.4f loop_s=%.6f kernels_expected=%d profiler=%d checksum=%.6g torch=%s"
        % (a.iters, a.warmup, ops_per_iter, dt * 1e6 / (a.iters * ops_per_iter),
           dt * 1e6 / a.iters, dt, (a.iters + a.warmup) * ops_per_iter, 1 if prof else 0,
           checksum, torch.__version__.replace(" ", "_")),
        flush=True,
    )
    if a.fast_exit:
        sys.stderr.flush()
        os._exit(0)
    if prof is not None:
        prof.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
