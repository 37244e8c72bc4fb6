"""NCCL all-reduce across every GPU up to 2, one process per GPU (torch.multiprocessing spawn):
each process is a fresh interpreter that inherits LD_PRELOAD, so each writes its own reports
(KTIME_OUTPUT / KCOUNT_OUTPUT with %p). Rank 0 prints the world size and the checksum."""
import os
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast on shared hosts
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29541")


def worker(rank, world):
    from common import torch, done
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    t = torch.full((1 << 20,), float(rank + 1), device="cuda")
    for _ in range(20):
        dist.all_reduce(t)
        t = t / world + 1
    torch.cuda.synchronize()
    if rank == 0:
        print("world %d" % world)
        done("nccl_2gpu", t)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    import subprocess
    import torch.multiprocessing as mp
    # Count GPUs without initialising CUDA in this parent process.
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    world = max(1, min(2, sum(1 for l in out.splitlines() if l.startswith("GPU "))))
    mp.spawn(worker, args=(world,), nprocs=world, join=True)
    sys.stdout.flush()
