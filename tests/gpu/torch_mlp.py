"""PyTorch eager MLP, forward + backward + SGD step, for ktime's GPU tests.

Deterministic (fixed seeds, float32 without TF32, deterministic algorithms, fixed cuBLAS
workspace), so stdout is the same with and without a preloaded tool. stdout carries only the
result checksums, rounded; the exact hash of the final weights goes to stderr, so a run can
also be checked bit for bit.

usage: python3 torch_mlp.py [--iters N] [--batch B] [--width W] [--layers L] [--linger-ms MS]
                           [--device cpu]
exit 77 when PyTorch or a CUDA device is missing.
"""
import argparse
import hashlib
import os
import sys
import time

# cuBLAS reads this when it creates its handle: it must be set before torch touches CUDA.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def bit_fingerprint(torch, t):
    """Bytes that change when any bit of float32 tensor t (on the CPU) changes."""
    try:
        return t.contiguous().numpy().tobytes()
    except Exception:  # PyTorch without NumPy
        bits = t.contiguous().view(-1).view(torch.int32).to(torch.int64)
        idx = torch.arange(bits.numel(), dtype=torch.int64)
        mixed = int(((bits + 2147483648) * (idx % 1000003 + 1)).sum())
        return ("%d:%d" % (bits.numel(), mixed)).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--linger-ms", type=int, default=250,
                    help="sleep after the final synchronize, before exit")
    ap.add_argument("--device", default="cuda",
                    help="'cpu' only to check this script on a machine without a GPU")
    args = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        print("torch_mlp: PyTorch is not importable: %s" % e, file=sys.stderr)
        return 77
    on_gpu = args.device != "cpu"
    if on_gpu and not torch.cuda.is_available():
        print("torch_mlp: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77

    torch.manual_seed(1234)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)

    dev = torch.device("cuda", 0) if on_gpu else torch.device("cpu")
    print("torch_mlp: torch %s, CUDA %s, device %s"
          % (torch.__version__, torch.version.cuda,
             torch.cuda.get_device_name(dev) if on_gpu else "cpu"),
          file=sys.stderr)

    # Parameters and data are made on the CPU from fixed seeds, then copied: their values do not
    # depend on the GPU's random number generator.
    mods = []
    for _ in range(args.layers):
        mods += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    mods.append(torch.nn.Linear(args.width, args.width))
    model = torch.nn.Sequential(*mods).to(dev)
    gen = torch.Generator().manual_seed(42)
    x = torch.randn(args.batch, args.width, generator=gen).to(dev)
    y = torch.randn(args.batch, args.width, generator=gen).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    loss = None
    for _ in range(args.iters):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    if on_gpu:
        torch.cuda.synchronize()

    with torch.no_grad():
        params = [p.detach().float().cpu() for p in model.parameters()]
    wsum = sum(float(p.double().sum()) for p in params)
    wabs = sum(float(p.double().abs().sum()) for p in params)
    exact = hashlib.sha256()
    for p in params:
        exact.update(bit_fingerprint(torch, p))

    print("torch_mlp: layers %d width %d batch %d iters %d"
          % (args.layers, args.width, args.batch, args.iters))
    print("loss %.6e" % float(loss))
    print("weight_sum %.6e" % wsum)
    print("weight_abs_sum %.6e" % wabs)
    print("torch_mlp: exact-weights-sha256 %s" % exact.hexdigest(), file=sys.stderr)
    sys.stdout.flush()

    if args.linger_ms > 0:
        time.sleep(args.linger_ms / 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
