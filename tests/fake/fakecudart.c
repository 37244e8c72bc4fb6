/* fakecudart.c - a fake libcudart.so.13 for the end-to-end tests: just enough runtime to
 * launch the way cudart 13 does. It finds the driver with dlopen + dlsym
 * ("cuGetProcAddress_v2") and calls cuLaunchKernel / cuLaunchKernelEx / cuGraphLaunch
 * through the pointers the driver hands out, so a tool that exports cudaLaunchKernel must
 * pass it through and still count the launch exactly once.
 *
 * Simplification: `func` is taken to be the CUfunction itself (the real runtime maps a host
 * stub to a CUkernel). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

static struct {
    launch_fn launch[2];
    launch_ex_fn launch_ex[2];
    graph_fn graph[2];
} drv;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa)
        return;
    for (int pt = 0; pt < 2; pt++) {
        cuuint64_t fl = pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
        gpa("cuLaunchKernel", (void **)&drv.launch[pt], pt ? 7000 : 4000, fl, NULL);
        gpa("cuLaunchKernelEx", (void **)&drv.launch_ex[pt], 11060, fl, NULL);
        gpa("cuGraphLaunch", (void **)&drv.graph[pt], pt ? 10000 : 10000, fl, NULL);
    }
}

static cudaError_t err(CUresult r)
{
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
}

/* The fake CUPTI, when loaded, sets this (its constructor finds it in the program's scope)
 * and is told of each runtime launch: its records are then the runtime call's, as the real
 * libcupti's are. */
EXPORT void (*fakecudart_rt_hook)(int enter);

static void rt_api(int enter)
{
    void (*h)(int) = __atomic_load_n(&fakecudart_rt_hook, __ATOMIC_ACQUIRE);
    if (h)
        h(enter);
}

static cudaError_t launch(int pt, const void *func, dim3 g, dim3 b, void **args, size_t smem,
                          cudaStream_t s)
{
    pthread_once(&once, load);
    if (!drv.launch[pt])
        return cudaErrorInitializationError;
    rt_api(1);
    cudaError_t e = err(drv.launch[pt]((CUfunction)func, g.x, g.y, g.z, b.x, b.y, b.z,
                                       (unsigned)smem, (CUstream)s, args, NULL));
    rt_api(0);
    return e;
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                                    cudaStream_t s)
{
    return launch(0, func, g, b, args, smem, s);
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                                         cudaStream_t s)
{
    return launch(1, func, g, b, args, smem, s);
}

/* CUDA 13's <<<...>>> launches through these (the kernel's handle in place of func). */
EXPORT cudaError_t __cudaLaunchKernel(const void *kernel, dim3 g, dim3 b, void **args, size_t smem,
                                      cudaStream_t s)
{
    return launch(0, kernel, g, b, args, smem, s);
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(const void *kernel, dim3 g, dim3 b, void **args,
                                           size_t smem, cudaStream_t s)
{
    return launch(1, kernel, g, b, args, smem, s);
}

static cudaError_t launch_ex(int pt, const cudaLaunchConfig_t *c, const void *func, void **args)
{
    CUlaunchConfig cfg = { 0 };
    pthread_once(&once, load);
    if (!drv.launch_ex[pt] || !c)
        return cudaErrorInitializationError;
    cfg.gridDimX = c->gridDim.x;
    cfg.gridDimY = c->gridDim.y;
    cfg.gridDimZ = c->gridDim.z;
    cfg.blockDimX = c->blockDim.x;
    cfg.blockDimY = c->blockDim.y;
    cfg.blockDimZ = c->blockDim.z;
    cfg.sharedMemBytes = (unsigned)c->dynamicSmemBytes;
    cfg.hStream = (CUstream)c->stream;
    rt_api(1);
    cudaError_t e = err(drv.launch_ex[pt](&cfg, (CUfunction)func, args, NULL));
    rt_api(0);
    return e;
}

EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *func, void **args)
{
    return launch_ex(0, c, func, args);
}

EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *func, void **args)
{
    return launch_ex(1, c, func, args);
}
