from common import torch, done
from torch.profiler import profile, ProfilerActivity
x = torch.randn(256, 256, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(30):
        x = torch.relu(x @ x) * 0.01
    torch.cuda.synchronize()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler recorded CUDA kernels:", "yes" if len(kernels) > 0 else "NO")
done("profiler", x)
