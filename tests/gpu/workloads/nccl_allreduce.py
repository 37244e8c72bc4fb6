import os
from common import torch, done
import torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(1 << 20, device="cuda")
for _ in range(20):
    dist.all_reduce(t)
    t = t * 0.5 + 1
done("nccl", t)
dist.destroy_process_group()
