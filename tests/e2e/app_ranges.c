/* app_ranges.c - the program's own phases, for ktime's ranges (issue 13): linked with -lktime
 * (ktime_range_push/pop) and the fake driver, with NVTX v3 compiled in (header-only: its calls
 * reach a tool only when NVTX_INJECTION64_PATH names one).
 *
 * usage: app_ranges [--nvtx | --domain] [--runtime | --chevrons] [--extra-pop] [--threads] ITERATIONS
 *   Each iteration:  push "step"
 *                      push "forward":  k_fwd (100 us) twice;  pop
 *                      push "backward": k_bwd (200 us);        pop
 *                      k_opt (50 us)
 *                    pop
 *                    k_out (10 us), outside every range
 *   --nvtx     the ranges through nvtxRangePushA / nvtxRangePop (default: ktime_range_push)
 *   --domain   through nvtxDomainRangePushEx / nvtxDomainRangePop in a domain "app", with
 *              registered strings
 *   --runtime  the kernels through the runtime's cudaLaunchKernel (the fake libcudart)
 *   --chevrons through __cudaLaunchKernel, what CUDA 13's <<<...>>> calls
 *   --extra-pop  one pop more at the end (with no range open)
 *   --threads  prints on stderr how many threads named ktime-nvml the process has, in the
 *              first iteration inside "forward" after its first launch ("in range: N"), and
 *              once "step" has closed ("after the ranges: N")
 * Prints "kernel NAME launched N" for each kernel.
 */
#include <dirent.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "ktime.h"

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "app_ranges: %s failed: %d\n", #x, (int)r_); return 1; } } while (0)

enum { API, NVTX, DOMAIN };
static int how = API;
static nvtxDomainHandle_t domain;
static nvtxStringHandle_t names[3];
static const char *const labels[3] = { "step", "forward", "backward" };

static void push(int i)
{
    if (how == API) {
        ktime_range_push(labels[i]);
    } else if (how == NVTX) {
        nvtxRangePushA(labels[i]);
    } else {
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof a);
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = names[i];
        nvtxDomainRangePushEx(domain, &a);
    }
}

/* How many of this process's threads are named name (/proc/self/task/TID/comm). */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char path[300], comm[64];
    int n = 0;

    while (d && (e = readdir(d))) {
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0 &&
                (comm[strlen(name)] == '\n' || comm[strlen(name)] == '\0'))
                n++;
            fclose(f);
        }
    }
    if (d)
        closedir(d);
    return n;
}

static void pop(void)
{
    if (how == API)
        ktime_range_pop();
    else if (how == NVTX)
        nvtxRangePop();
    else
        nvtxDomainRangePop(domain);
}

static int runtime; /* 1: cudaLaunchKernel, 2: __cudaLaunchKernel (CUDA 13's <<<...>>>) */
cudaError_t __cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);

/* One launch of f, through the driver or (--runtime) the runtime. */
static int launch(CUfunction f, void **params)
{
    if (runtime == 2)
        return __cudaLaunchKernel((const void *)f, (dim3){ 8, 1, 1 }, (dim3){ 256, 1, 1 }, params,
                                  0, NULL) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
    if (runtime)
        return cudaLaunchKernel((const void *)f, (dim3){ 8, 1, 1 }, (dim3){ 256, 1, 1 }, params, 0,
                                NULL) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
    return cuLaunchKernel(f, 8, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

int main(int argc, char **argv)
{
    int a = 1, extra_pop = 0, threads = 0;
    long iters, i;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction k_fwd, k_bwd, k_opt, k_out;
    static const char image[] = "k_fwd=100000;k_bwd=200000;k_opt=50000;k_out=10000";

    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--nvtx")) how = NVTX;
        else if (!strcmp(argv[a], "--domain")) how = DOMAIN;
        else if (!strcmp(argv[a], "--runtime")) runtime = 1;
        else if (!strcmp(argv[a], "--chevrons")) runtime = 2;
        else if (!strcmp(argv[a], "--extra-pop")) extra_pop = 1;
        else if (!strcmp(argv[a], "--threads")) threads = 1;
        else {
            fprintf(stderr, "app_ranges: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (a + 1 != argc) {
        fprintf(stderr, "usage: app_ranges [--nvtx | --domain] [--runtime | --chevrons] [--extra-pop] [--threads] "
                        "ITERATIONS\n");
        return 2;
    }
    iters = atol(argv[a]);
    if (how == DOMAIN) {
        domain = nvtxDomainCreateA("app");
        for (i = 0; i < 3; i++)
            names[i] = nvtxDomainRegisterStringA(domain, labels[i]);
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, image));
    CK(cuModuleGetFunction(&k_fwd, mod, "k_fwd"));
    CK(cuModuleGetFunction(&k_bwd, mod, "k_bwd"));
    CK(cuModuleGetFunction(&k_opt, mod, "k_opt"));
    CK(cuModuleGetFunction(&k_out, mod, "k_out"));
    for (i = 0; i < iters; i++) {
        void *params[] = { &a };
        push(0);
        push(1);
        CK(launch(k_fwd, params));
        if (threads && i == 0)
            fprintf(stderr, "in range: %d\n", threads_named("ktime-nvml"));
        CK(launch(k_fwd, params));
        pop();
        push(2);
        CK(launch(k_bwd, params));
        pop();
        CK(launch(k_opt, params));
        pop();
        if (threads && i == 0)
            fprintf(stderr, "after the ranges: %d\n", threads_named("ktime-nvml"));
        CK(launch(k_out, params));
    }
    if (extra_pop)
        pop();
    CK(cuCtxSynchronize());
    printf("kernel k_fwd launched %ld\nkernel k_bwd launched %ld\nkernel k_opt launched %ld\n"
           "kernel k_out launched %ld\n", 2 * iters, iters, iters, iters);
    return 0;
}
