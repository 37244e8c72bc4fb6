// flush_l2.cu - a kernel whose data fits in L2, for KTIME_FLUSH_L2's GPU test (issue 13).
//
// l2_read sums a buffer of MB MiB (default 16: well inside an H100's or H200's L2) with a
// grid-stride loop. Run back to back on one stream, each launch finds the buffer in L2 from
// the launch before; with KTIME_FLUSH_L2=1 ktime overwrites a larger buffer before each timed
// launch, so the same kernel reads from memory and takes measurably longer. A second kernel,
// l2_touch, runs as often (a row to check that every timed launch got its flush).
// tests/gpu/flush_l2.sh runs it with and without the flush and compares.
//
// Usage: flush_l2 [MB] [LAUNCHES]    defaults 16 and 300. Exit 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void l2_read(const float4 *in, size_t n, float *out)
{
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) // never true for the zeros read: keeps the loads
        out[0] = acc;
}

__global__ void l2_touch(float *out)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        out[1] += 1.f;
}

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "flush_l2: %s: %s\n", #x, cudaGetErrorString(e_));           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
    int launches = argc > 2 ? atoi(argv[2]) : 300;
    int ndev = 0, sms = 0, l2 = 0;
    float4 *buf;
    float *out;
    cudaStream_t s;

    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "flush_l2: no GPU\n");
        return 77;
    }
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    size_t n = mb * 1024 * 1024 / sizeof(float4);
    CK(cudaMalloc(&buf, n * sizeof(float4)));
    CK(cudaMemset(buf, 0, n * sizeof(float4)));
    CK(cudaMalloc(&out, 2 * sizeof(float)));
    CK(cudaMemset(out, 0, 2 * sizeof(float)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < launches; i++) {
        l2_read<<<sms * 4, 512, 0, s>>>(buf, n, out);
        l2_touch<<<1, 32, 0, s>>>(out);
    }
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    printf("flush_l2: %d launches of l2_read over %zu MiB; L2 %d bytes\n", launches, mb, l2);
    return 0;
}
