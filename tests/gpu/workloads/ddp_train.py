"""A PyTorch DDP training loop for torchrun (NCCL): an MLP, forward, backward (DDP's gradient
all-reduce), SGD step; 30 iterations on each rank's GPU. Rank 0 prints the final loss.

usage: torchrun --standalone --nproc-per-node 2 ddp_train.py [--iters N] [--mark DIR]
                                                             [--slow-rank R --slow-cycles C]
With DDP_BACKEND=gloo (a machine of one GPU, where NCCL cannot put two ranks on one device),
the ranks share GPU 0 and all-reduce through gloo.
--mark DIR (live_kill.py): each iteration also launches one spin kernel (torch.cuda._sleep),
and every 10 iterations, once the GPU is done with them, the rank writes how many it made to
DIR/mark-RANK (replaced whole); --iters 0 then runs until it is killed.
--slow-rank R (straggler.py): rank R also spins C GPU clock cycles each iteration before its
backward pass (torch.cuda._sleep, a compute kernel), so that the other ranks wait for it in
DDP's all-reduce.
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
    ap.add_argument("--mark")
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-cycles", type=int, default=2000000)
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
    it = 0
    while it < a.iters or (a.mark and a.iters == 0):
        x = torch.randn(256, 512, device="cuda", generator=g)
        y = torch.randint(0, 10, (256,), device="cuda", generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        if rank == a.slow_rank:
            torch.cuda._sleep(a.slow_cycles)
        opt.zero_grad()
        loss.backward()
        opt.step()
        it += 1
        if a.mark:
            torch.cuda._sleep(1000)  # one spin kernel per iteration: a count to check
            if it % 10 == 0:
                torch.cuda.synchronize()
                tmp = os.path.join(a.mark, ".mark-%d" % rank)
                with open(tmp, "w") as f:
                    f.write("%d\n" % it)
                os.replace(tmp, os.path.join(a.mark, "mark-%d" % rank))
    torch.cuda.synchronize()
    if rank == 0:
        print("ddp loss %.4f" % float(loss))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
