// memops.cu - memory copies and sets between kernels, through the CUDA runtime, for ktime's
// GPU test of memory-operation timing (tests/gpu/memops.sh, issue 13).
//
//   memops MIB ITERATIONS
//   memops bench N           the cost per call (tests/gpu/memops_bench.sh): N cudaMemcpyAsync of
//                            4 bytes from pinned memory on a created stream, then N with the
//                            program's own event pair around each (the raw cost of timing a
//                            copy with events), then N synchronous 4-byte cudaMemcpy DtoH (as
//                            PyTorch's .item() makes); prints the CPU ns per call of each
//
// Each iteration, on one created stream unless said: touch<<<>>>; cudaMemcpyAsync HtoD from
// pinned memory; cudaMemcpyAsync DtoH to pinned memory; cudaMemcpyAsync DtoD; cudaMemsetAsync;
// touch<<<>>>; then on the legacy default stream: cudaMemcpy HtoD from pageable memory,
// cudaMemcpy DtoH to pageable memory, cudaMemset; and one cudaMemcpy2DAsync DtoD of MIB MiB as
// 1024 rows. Every copy and set moves MIB MiB. Prints what it did, one line per kind: the
// test compares these with ktime's report and with CUPTI's records.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "memops: %s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__global__ void touch(float *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1.0f;
}

static double now_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int bench(long n)
{
    float *d, *h;
    cudaStream_t s;
    cudaEvent_t a, b;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, 4));
    CK(cudaMallocHost(&h, 4));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 100; i++) /* warm every path */
        CK(cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        CK(cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, s));
    double t1 = now_ns();
    CK(cudaStreamSynchronize(s));
    double t2 = now_ns();
    for (long i = 0; i < n; i++) {
        CK(cudaEventRecord(a, s));
        CK(cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(b, s));
    }
    double t3 = now_ns();
    CK(cudaStreamSynchronize(s));
    double t4 = now_ns();
    for (long i = 0; i < n / 10; i++)
        CK(cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost));
    double t5 = now_ns();
    std::printf("async_ns %.1f\nasync_events_ns %.1f\nsync_dtoh_ns %.1f\n", (t1 - t0) / n,
                (t3 - t2) / n, (t5 - t4) / (n / 10));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "bench") == 0)
        return bench(std::atol(argv[2]));
    if (argc != 3) {
        std::fprintf(stderr, "usage: memops MIB ITERATIONS\n");
        return 2;
    }
    size_t bytes = (size_t)std::atol(argv[1]) << 20;
    long iters = std::atol(argv[2]);
    float *d1, *d2, *d3, *pinned, *pageable;
    cudaStream_t s;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    CK(cudaMalloc(&d3, bytes));
    CK(cudaMallocHost(&pinned, bytes));
    pageable = (float *)std::malloc(bytes);
    if (!pageable)
        return 1;
    std::memset(pageable, 0, bytes);
    size_t n = bytes / sizeof(float);
    unsigned blocks = (unsigned)((n + 255) / 256);
    for (long i = 0; i < iters; i++) {
        touch<<<blocks, 256, 0, s>>>(d1, n);
        CK(cudaMemcpyAsync(d2, pinned, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(pinned, d1, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(d3, d1, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemsetAsync(d3, 0, bytes, s));
        touch<<<blocks, 256, 0, s>>>(d1, n);
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(d2, pageable, bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(pageable, d2, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemset(d2, 1, bytes));
        CK(cudaMemcpy2DAsync(d3, bytes / 1024, d1, bytes / 1024, bytes / 1024, 1024,
                             cudaMemcpyDeviceToDevice, s));
    }
    CK(cudaDeviceSynchronize());
    std::printf("HtoD %ld %zu\nDtoH %ld %zu\nDtoD %ld %zu\nmemset %ld %zu\nkernel touch %ld\n",
                2 * iters, 2 * iters * bytes, 2 * iters, 2 * iters * bytes, 2 * iters,
                2 * iters * bytes, 2 * iters, 2 * iters * bytes, 2 * iters);
    return 0;
}
