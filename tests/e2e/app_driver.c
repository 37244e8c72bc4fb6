/* app_driver.c - a plain C program linked with -lcuda that calls the exported driver symbols.
 *
 * usage: app_driver [options] name=ns[,ns...]:count ...
 *   Same launch plan and output as app_cudart, through direct calls to cuLaunchKernel & co.
 * options:
 *   --stream          launch on a created stream
 *   --handle-legacy   launch on CU_STREAM_LEGACY      --handle-per-thread  on CU_STREAM_PER_THREAD
 *   --ptsz            call the exported cuLaunchKernel_ptsz / cuLaunchKernelEx_ptsz symbols
 *                     with the NULL stream (what a -default-stream per-thread build links to)
 *   --ex              cuLaunchKernelEx              --coop  cuLaunchCooperativeKernel
 *   --library         cuLibraryLoadData + CUkernel handles
 *   --create-ctx      use cuCtxCreate (destroyed at exit) instead of the primary context
 *   --devices N       spread launches round robin over devices 0..N-1 (one context each)
 *   --foreign-ctx     with --devices and --stream: launch on each device's stream while
 *                     device 0's context stays current (the stream names its context)
 *   --no-sync         do not synchronise before exit
 *   --shapes N        the j-th launch of each kernel has grid (8 * (1 + j % N), 1, 1) and
 *                     64 * (j % N) bytes of dynamic shared memory (default: all (8, 1, 1), 0)
 */
#include "apputil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-thread-stream exports; cuda.h declares them only for per-thread builds. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);

#define MAX_DEV 8

int main(int argc, char **argv)
{
    static struct plan plan;
    int use_stream = 0, ptsz = 0, ex = 0, coop = 0, library = 0, create = 0, nosync = 0, ndevs = 1, foreign = 0;
    int h_legacy = 0, h_pt = 0, i, d, drv = 0, count = 0, n = 0, nshapes = 1;
    long seq[PLAN_MAX_KERNELS] = { 0 };
    CUcontext ctx[MAX_DEV];
    CUmodule mod[MAX_DEV];
    CUlibrary lib = NULL;
    CUstream stream[MAX_DEV];
    CUfunction fn[MAX_DEV][PLAN_MAX_KERNELS];
    long step = 0;

    app_prog = "app_driver";
    memset(&plan, 0, sizeof plan);
    memset(mod, 0, sizeof mod);
    memset(stream, 0, sizeof stream);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--stream")) use_stream = 1;
        else if (!strcmp(a, "--handle-legacy")) h_legacy = 1;
        else if (!strcmp(a, "--handle-per-thread")) h_pt = 1;
        else if (!strcmp(a, "--ptsz")) ptsz = 1;
        else if (!strcmp(a, "--ex")) ex = 1;
        else if (!strcmp(a, "--coop")) coop = 1;
        else if (!strcmp(a, "--library")) library = 1;
        else if (!strcmp(a, "--create-ctx")) create = 1;
        else if (!strcmp(a, "--no-sync")) nosync = 1;
        else if (!strcmp(a, "--devices") && i + 1 < argc) ndevs = (int)app_long(argv[++i], "device count");
        else if (!strcmp(a, "--foreign-ctx")) foreign = 1;
        else if (!strcmp(a, "--shapes") && i + 1 < argc) nshapes = (int)app_long(argv[++i], "shape count");
        else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, a);
            return 2;
        } else if (plan_add(&plan, a) != 0)
            return 2;
    }
    if (plan.n == 0 || ndevs < 1 || ndevs > MAX_DEV || nshapes < 1) {
        fprintf(stderr, "usage: %s [options] name=ns[,ns...]:count ...\n", app_prog);
        return 2;
    }

    CK(cuInit(0));
    CK(cuDriverGetVersion(&drv));
    CK(cuDeviceGetCount(&count));
    if (count < ndevs) {
        fprintf(stderr, "%s: %d devices wanted, %d present\n", app_prog, ndevs, count);
        return 1;
    }
    printf("driver %d\ndevices %d\n", drv, ndevs);
    if (library)
        CK(cuLibraryLoadData(&lib, plan.image, NULL, NULL, 0, NULL, NULL, 0));
    for (d = 0; d < ndevs; d++) {
        CUdevice dev;
        char name[64];
        CK(cuDeviceGet(&dev, d));
        CK(cuDeviceGetName(name, (int)sizeof name, dev));
        printf("device %d %s\n", d, name);
        if (create) {
            CK(cuCtxCreate(&ctx[d], NULL, 0, dev));
        } else {
            CK(cuDevicePrimaryCtxRetain(&ctx[d], dev));
            CK(cuCtxSetCurrent(ctx[d]));
        }
        if (create && d > 0)
            CK(cuCtxSetCurrent(ctx[d]));
        if (library) {
            for (i = 0; i < plan.n; i++) {
                CUkernel k;
                CK(cuLibraryGetKernel(&k, lib, plan.k[i].name));
                fn[d][i] = (CUfunction)k;
            }
        } else {
            CK(cuModuleLoadData(&mod[d], plan.image));
            for (i = 0; i < plan.n; i++)
                CK(cuModuleGetFunction(&fn[d][i], mod[d], plan.k[i].name));
        }
        if (use_stream)
            CK(cuStreamCreate(&stream[d], CU_STREAM_NON_BLOCKING));
    }

    while ((i = plan_next(&plan)) >= 0) {
        int x = 7;
        void *params[] = { &x };
        CUlaunchConfig cfg;
        CUstream s;
        CUresult r;
        d = (int)(step % ndevs);
        if (ndevs > 1)
            CK(cuCtxSetCurrent(ctx[foreign && use_stream ? 0 : d]));
        s = use_stream ? stream[d] : h_legacy ? CU_STREAM_LEGACY : h_pt ? CU_STREAM_PER_THREAD : NULL;
        unsigned gx = 8u * (unsigned)(1 + seq[i] % nshapes), smem = 64u * (unsigned)(seq[i] % nshapes);
        seq[i]++;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = gx;
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = 256;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.sharedMemBytes = smem;
        cfg.hStream = s;
        if (ex)
            r = ptsz ? cuLaunchKernelEx_ptsz(&cfg, fn[d][i], params, NULL) : cuLaunchKernelEx(&cfg, fn[d][i], params, NULL);
        else if (coop)
            r = cuLaunchCooperativeKernel(fn[d][i], gx, 1, 1, 256, 1, 1, smem, s, params);
        else if (ptsz)
            r = cuLaunchKernel_ptsz(fn[d][i], gx, 1, 1, 256, 1, 1, smem, s, params, NULL);
        else
            r = cuLaunchKernel(fn[d][i], gx, 1, 1, 256, 1, 1, smem, s, params, NULL);
        app_check(r, "launch");
        step++;
        n++;
    }
    for (d = 0; d < ndevs; d++) {
        CK(cuCtxSetCurrent(ctx[d]));
        if (!nosync)
            CK(cuCtxSynchronize());
        if (stream[d])
            CK(cuStreamDestroy(stream[d]));
        if (mod[d])
            CK(cuModuleUnload(mod[d]));
    }
    if (lib)
        CK(cuLibraryUnload(lib));
    if (create)
        for (d = 0; d < ndevs; d++)
            CK(cuCtxDestroy(ctx[d]));
    plan_print(&plan);
    printf("launches %d\n", n);
    return 0;
}
