"""A PyTorch DDP training loop for torchrun (NCCL): an MLP, forward, backward (DDP's gradient
all-reduce), SGD step; 30 iterations on each rank's GPU. Rank 0 prints the final loss.

usage: torchrun --standalone --nproc-per-node 2 ddp_train.py [--iters N]
With DDP_BACKEND=gloo (a machine of one GPU, where NCCL cannot put two ranks on one device),
the ranks share GPU 0 and all-reduce through gloo.
"""
import argparse
import os

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast on shared hosts
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=30)
    a = ap.parse_args()
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    local = local % torch.cuda.device_count()
    torch.cuda.set_device(local)
    dist.init_process_group(os.environ.get("DDP_BACKEND", "nccl"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda()
    ddp = DDP(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator(device="cuda").manual_seed(rank)
    for _ in range(a.iters):
        x = torch.randn(256, 512, device="cuda", generator=g)
        y = torch.randint(0, 10, (256,), device="cuda", generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    if rank == 0:
        print("ddp loss %.4f" % float(loss))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
