"""torch.profiler beside ktime's CUPTI timer (issue 11): 100 kernels before, 100 inside and 100
after a profiler block. The profiler must see every kernel inside its block; ktime hands CUPTI
over when Kineto registers its buffers, and times the rest with events.
Prints the number of 'ktp_marker' kernels the profiler recorded."""
from common import torch, done
from torch.profiler import profile, ProfilerActivity
x = torch.randn(1 << 14, device="cuda")


def step():
    global x
    x = torch.tanh(x) * 0.5  # tanh: the marker kernel, 100 times per phase


for _ in range(100):
    step()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(100):
        step()
    torch.cuda.synchronize()
for _ in range(100):
    step()
names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler tanh kernels:", sum(1 for n in names if "tanh" in n))
done("profiler_handover", x)
