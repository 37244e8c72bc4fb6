// GPU test workload for ktime: the launch paths app.cu does not take.
//
//   cluster     cudaLaunchKernelEx with a cluster dimension attribute (thread block clusters)
//   coop        cudaLaunchCooperativeKernel with a grid-wide sync
//   graph       a stream captured into a graph (two kernels, 5 nodes), replayed by cudaGraphLaunch
//   streams     four created streams with kernels overlapping in time
//   reset       launches, cudaDeviceReset in the middle, launches again in the new context
//   rtc         a kernel compiled at run time by NVRTC, loaded with cuModuleLoadData, unloaded,
//               loaded again (same name, new module) and launched again
//   multi       (2+ GPUs) the same kernel on device 0 and device 1, and a launch into device 1's
//               stream while device 0 is current
//
// usage: app_paths [-s cluster,coop,graph,streams,reset,rtc,multi] [-l LINGER_MS]
// stdout: `expect KEY N` for every kernel (KEY a substring of its mangled name; N the number of
// kernel executions CUPTI should record) and `graph KEY LAUNCHES NODES` for each graph, then a
// checksum of every device buffer; nothing timing-dependent. Diagnostics go to stderr.
// Exit 0, or 77 when there is no GPU, or 1 on a CUDA error.

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <time.h>
#include <vector>

namespace cg = cooperative_groups;

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "app_paths: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(e_), (int)e_);                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define CKD(call)                                                                       \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char *s_ = "?";                                                       \
            cuGetErrorName(r_, &s_);                                                    \
            fprintf(stderr, "app_paths: %s:%d: %s failed: %s\n", __FILE__, __LINE__,    \
                    #call, s_);                                                         \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define CKR(call)                                                                       \
    do {                                                                                \
        nvrtcResult r_ = (call);                                                        \
        if (r_ != NVRTC_SUCCESS) {                                                      \
            fprintf(stderr, "app_paths: %s:%d: %s failed: %s\n", __FILE__, __LINE__,    \
                    #call, nvrtcGetErrorString(r_));                                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __forceinline__ void step(unsigned *buf, unsigned i, unsigned salt)
{
    unsigned v = buf[i];
    v = v * 1664525u + 1013904223u + salt;
    buf[i] = v ^ (v >> 13);
}

static __device__ __forceinline__ void spin(unsigned long long ns)
{
    unsigned long long t0 = global_ns();
    while (global_ns() - t0 < ns) {
    }
}

__global__ void kp_cluster(unsigned *buf, unsigned long long ns)
{
    cg::cluster_group cl = cg::this_cluster();
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, cl.block_rank() + 1);
    cl.sync();
    spin(ns);
}

__global__ void kp_coop(unsigned *buf, unsigned long long ns)
{
    cg::grid_group g = cg::this_grid();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    step(buf, i, 11);
    g.sync();
    // Every thread reads a value another block wrote before the grid-wide barrier.
    unsigned j = (i + blockDim.x) % (gridDim.x * blockDim.x);
    unsigned other = buf[j];
    g.sync();
    buf[i] ^= other >> 3;
    spin(ns);
}

template <int K>
__global__ void kp_node(unsigned *buf, unsigned long long ns)
{
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, 100 + K);
    spin(ns);
}

__global__ void kp_conc(unsigned *buf, unsigned long long ns)
{
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, 21);
    spin(ns);
}

__global__ void kp_reset(unsigned *buf, unsigned long long ns)
{
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, 31);
    spin(ns);
}

__global__ void kp_multi(unsigned *buf, unsigned long long ns)
{
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, 41);
    spin(ns);
}

__global__ void kp_cross(unsigned *buf, unsigned long long ns)
{
    step(buf, blockIdx.x * blockDim.x + threadIdx.x, 51);
    spin(ns);
}

static unsigned long long g_hash = 1469598103934665603ull;

static void hash_buf(const unsigned *d, size_t n)
{
    std::vector<unsigned> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t j = 0; j < n; j++)
        for (int b = 0; b < 4; b++) {
            g_hash ^= (h[j] >> (8 * b)) & 0xffu;
            g_hash *= 1099511628211ull;
        }
}

static unsigned *new_buf(size_t n, unsigned seed)
{
    std::vector<unsigned> h(n);
    for (size_t i = 0; i < n; i++)
        h[i] = (unsigned)(i * 2654435761u) ^ seed;
    unsigned *d;
    CK(cudaMalloc(&d, n * sizeof(unsigned)));
    CK(cudaMemcpy(d, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    return d;
}

static void finish_buf(unsigned *d, size_t n)
{
    CK(cudaDeviceSynchronize());
    hash_buf(d, n);
    CK(cudaFree(d));
}

static void run_cluster()
{
    const int n = 300, blocks = 8, threads = 64;
    unsigned *b = new_buf(blocks * threads, 1);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    for (int i = 0; i < n; i++)
        CK(cudaLaunchKernelEx(&cfg, kp_cluster, b, 20000ull));
    finish_buf(b, blocks * threads);
    printf("expect kp_cluster %d\n", n);
}

static void run_coop()
{
    int dev, coop = 0, sms = 0, per_sm = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop) {
        fprintf(stderr, "app_paths: coop: device has no cooperative launch; skipped\n");
        return;
    }
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kp_coop, 128, 0));
    if (per_sm < 1) {
        fprintf(stderr, "app_paths: coop: kernel does not fit; skipped\n");
        return;
    }
    const int n = 200, threads = 128, blocks = sms;
    unsigned *b = new_buf(blocks * threads, 2);
    unsigned long long ns = 20000ull;
    void *args[] = {&b, &ns};
    for (int i = 0; i < n; i++)
        CK(cudaLaunchCooperativeKernel((const void *)kp_coop, dim3(blocks), dim3(threads), args, 0,
                                       0));
    finish_buf(b, blocks * threads);
    printf("expect kp_coop %d\n", n);
}

static void run_graph()
{
    const int replays = 60, threads = 128;
    unsigned *b = new_buf(2 * threads, 3);
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 3; i++)
        kp_node<0><<<1, threads, 0, s>>>(b, 10000ull);
    for (int i = 0; i < 2; i++)
        kp_node<1><<<1, threads, 0, s>>>(b + threads, 30000ull);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int i = 0; i < replays; i++)
        CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    finish_buf(b, 2 * threads);
    printf("expect kp_nodeILi0E %d\nexpect kp_nodeILi1E %d\n", 3 * replays, 2 * replays);
    printf("graph kp_node %d 5\n", replays);
}

static void run_streams()
{
    const int nstreams = 4, n = 150, threads = 64;
    cudaStream_t s[nstreams];
    unsigned *b = new_buf(nstreams * threads, 4);
    for (int k = 0; k < nstreams; k++)
        CK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nstreams; k++)
            kp_conc<<<1, threads, 0, s[k]>>>(b + k * threads, 50000ull);
    CK(cudaGetLastError());
    for (int k = 0; k < nstreams; k++) {
        CK(cudaStreamSynchronize(s[k]));
        CK(cudaStreamDestroy(s[k]));
    }
    finish_buf(b, nstreams * threads);
    printf("expect kp_conc %d\n", n * nstreams);
}

static void run_reset()
{
    const int n = 120, threads = 64;
    for (int round = 0; round < 2; round++) {
        unsigned *b = new_buf(threads, 5 + round);
        for (int i = 0; i < n; i++)
            kp_reset<<<1, threads>>>(b, 10000ull);
        CK(cudaGetLastError());
        if (round == 0) {
            // Leave work in flight: the reset must wait for it, ktime must resolve or count it.
            std::vector<unsigned> h(threads);
            CK(cudaMemcpy(h.data(), b, threads * sizeof(unsigned), cudaMemcpyDeviceToHost));
            for (int j = 0; j < threads; j++)
                g_hash = (g_hash ^ h[j]) * 1099511628211ull;
            CK(cudaDeviceReset());
        } else {
            finish_buf(b, threads);
        }
    }
    printf("expect kp_reset %d\n", 2 * n);
}

static const char RTC_SRC[] =
    "extern \"C\" __global__ void kp_rtc(unsigned *buf, unsigned salt)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned v = buf[i] * 1664525u + 1013904223u + salt;\n"
    "    buf[i] = v ^ (v >> 13);\n"
    "}\n";

static void run_rtc()
{
    nvrtcProgram prog;
    CKR(nvrtcCreateProgram(&prog, RTC_SRC, "kp_rtc.cu", 0, NULL, NULL));
    const char *opts[] = {"--gpu-architecture=compute_90"};
    nvrtcResult cr = nvrtcCompileProgram(prog, 1, opts);
    if (cr != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        std::string log(n, '\0');
        nvrtcGetProgramLog(prog, &log[0]);
        fprintf(stderr, "app_paths: nvrtc: %s\n%s\n", nvrtcGetErrorString(cr), log.c_str());
        exit(1);
    }
    size_t ptx_n;
    CKR(nvrtcGetPTXSize(prog, &ptx_n));
    std::string ptx(ptx_n, '\0');
    CKR(nvrtcGetPTX(prog, &ptx[0]));
    CKR(nvrtcDestroyProgram(&prog));

    const int n = 100, threads = 64;
    CK(cudaFree(0));  // the runtime's primary context is current from here
    unsigned *b = new_buf(threads, 7);
    for (int round = 0; round < 2; round++) {
        CUmodule mod;
        CUfunction fn;
        CKD(cuModuleLoadData(&mod, ptx.c_str()));
        CKD(cuModuleGetFunction(&fn, mod, "kp_rtc"));
        unsigned salt = 61 + round;
        void *args[] = {&b, &salt};
        for (int i = 0; i < n; i++)
            CKD(cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, NULL, args, NULL));
        CKD(cuCtxSynchronize());
        CKD(cuModuleUnload(mod));
    }
    finish_buf(b, threads);
    printf("expect kp_rtc %d\n", 2 * n);
}

static void run_multi()
{
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        fprintf(stderr, "app_paths: multi: %d GPU; skipped\n", ndev);
        return;
    }
    const int n = 150, threads = 64;
    unsigned *b[2];
    cudaStream_t s1;
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        b[d] = new_buf(threads, 8 + d);
    }
    CK(cudaSetDevice(1));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    unsigned *bx = new_buf(threads, 10);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 2; d++) {
            CK(cudaSetDevice(d));
            kp_multi<<<1, threads>>>(b[d], 10000ull);
        }
    CK(cudaGetLastError());
    // A launch into device 1's stream while device 0 is current: the runtime launches it in
    // the stream's context, and ktime must time it there.
    CK(cudaSetDevice(0));
    int crossed = 0;
    for (int i = 0; i < n; i++) {
        kp_cross<<<1, threads, 0, s1>>>(bx, 10000ull);
        if (cudaGetLastError() != cudaSuccess)
            break;
        crossed++;
    }
    if (crossed < n)
        fprintf(stderr, "app_paths: multi: the runtime refused a launch into another device's "
                        "stream after %d\n", crossed);
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        finish_buf(b[d], threads);
    }
    CK(cudaSetDevice(1));
    CK(cudaStreamDestroy(s1));
    finish_buf(bx, threads);
    CK(cudaSetDevice(0));
    printf("expect kp_multi %d\n", 2 * n);
    printf("expect_device kp_multi 0 %d\nexpect_device kp_multi 1 %d\n", n, n);
    printf("expect kp_cross %d\nexpect_device kp_cross 1 %d\n", crossed, crossed);
}

int main(int argc, char **argv)
{
    std::string sel = "cluster,coop,graph,streams,reset,rtc,multi";
    long linger_ms = 250;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-s") && a + 1 < argc) {
            sel = argv[++a];
        } else if (!strcmp(argv[a], "-l") && a + 1 < argc) {
            linger_ms = atol(argv[++a]);
        } else {
            fprintf(stderr, "usage: app_paths [-s cluster,coop,graph,streams,reset,rtc,multi] "
                            "[-l LINGER_MS]\n");
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        fprintf(stderr, "app_paths: no GPU\n");
        return 77;
    }
    sel = "," + sel + ",";
    auto want = [&](const char *s) { return sel.find(std::string(",") + s + ",") != std::string::npos; };
    // reset first: it destroys the primary context, which the other parts then recreate.
    if (want("reset"))
        run_reset();
    if (want("cluster"))
        run_cluster();
    if (want("coop"))
        run_coop();
    if (want("graph"))
        run_graph();
    if (want("streams"))
        run_streams();
    if (want("rtc"))
        run_rtc();
    if (want("multi"))
        run_multi();
    printf("checksum %016llx\n", g_hash);
    fflush(stdout);
    if (linger_ms > 0) {
        struct timespec ts = {linger_ms / 1000, (linger_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}
