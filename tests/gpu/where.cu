// where: the GPU workloads of tests/gpu/where.py (where the GPU time went).
//   where sleep N   N kernels of 100 us, each followed by a stream sync and a 100 us host sleep
//   where streams N N rounds of two 100 us kernels, one on each of two streams, overlapping
// Each kernel spins on the GPU's global timer for 100 us.
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__global__ void spin100(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: where sleep|streams N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    cudaStream_t a, b;
    if (cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    if (strcmp(argv[1], "sleep") == 0) {
        struct timespec ts = { 0, 100000 };
        for (int i = 0; i < n; i++) {
            spin100<<<1, 1, 0, a>>>(100000ull);
            cudaStreamSynchronize(a);
            nanosleep(&ts, NULL);
        }
    } else {
        for (int i = 0; i < n; i++) {
            spin100<<<1, 1, 0, a>>>(100000ull);
            spin100<<<1, 1, 0, b>>>(100000ull);
            cudaDeviceSynchronize();
        }
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
