"""Kernels first launched inside a CUDA graph capture, while their warmup is not used up (issue
14, bug 5): the captured launch must count as captured, not as warmup. torch.cuda.graph
captures on a side stream; sin/cos/mul/add have not run before it."""
from common import torch, done
x = torch.linspace(0, 1, 1 << 16, device="cuda")
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = torch.sin(x) * 3.0 + torch.cos(x)
for _ in range(20):
    g.replay()
for _ in range(12):
    z = torch.sin(x) * 3.0 + torch.cos(x)
done("capture_warmup", z + y)
