"""An MPI job (mpi4py) with a GPU per rank: each rank runs PyTorch kernels on its GPU and the
ranks all-reduce a host copy of the result through MPI, 20 rounds. Rank 0 prints the sum.

usage: mpirun -np 2 python3 mpi_allreduce.py
"""
from mpi4py import MPI  # noqa: E402

import torch  # noqa: E402


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    t = torch.full((1 << 16,), float(rank + 1), device="cuda")
    for _ in range(20):
        t = torch.sin(t) * 2 + 1
        host = t.sum().item()
        total = comm.allreduce(host, op=MPI.SUM)
        t = t + total / (size * t.numel())
    torch.cuda.synchronize()
    if rank == 0:
        print("mpi world %d sum %.4e" % (size, float(t.double().sum())))


if __name__ == "__main__":
    main()
