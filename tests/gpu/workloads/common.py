"""Shared set-up for the library workloads: fixed seeds, deterministic math, one checksum line."""
import os
import torch

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def done(name, t):
    torch.cuda.synchronize()
    print("%s checksum %.4e" % (name, float(t.detach().double().abs().sum().cpu())), flush=True)
