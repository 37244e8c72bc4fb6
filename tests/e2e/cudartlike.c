/* cudartlike.c - driver entry points obtained the way cudart 13 obtains them. */
#define _GNU_SOURCE
#include "cudartlike.h"
#include "apputil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void *get(gpa2_t gpa, const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUresult r = gpa(name, &p, version, flags, NULL);  /* cudart passes symbolStatus == NULL */
    if (r != CUDA_SUCCESS || !p) {
        fprintf(stderr, "%s: cuGetProcAddress(%s, %d, %llu) failed: %s\n", app_prog, name, version,
                (unsigned long long)flags, app_errname(r));
        exit(1);
    }
    return p;
}

#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

void cl_load(struct cl *c)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa2_t gpa;
    if (!h) {
        fprintf(stderr, "%s: dlopen(libcuda.so.1): %s\n", app_prog, dlerror());
        exit(1);
    }
    gpa = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) {
        fprintf(stderr, "%s: dlsym(cuGetProcAddress_v2) failed\n", app_prog);
        exit(1);
    }
    gpa = (gpa2_t)get(gpa, "cuGetProcAddress", 12000, 0);
    *(void **)&c->Init = get(gpa, "cuInit", 2000, 0);
    *(void **)&c->DeviceGet = get(gpa, "cuDeviceGet", 2000, 0);
    *(void **)&c->PrimaryRetain = get(gpa, "cuDevicePrimaryCtxRetain", 7000, 0);
    *(void **)&c->PrimaryRelease = get(gpa, "cuDevicePrimaryCtxRelease", 11000, 0);
    *(void **)&c->CtxSetCurrent = get(gpa, "cuCtxSetCurrent", 4000, 0);
    *(void **)&c->CtxSynchronize = get(gpa, "cuCtxSynchronize", 2000, 0);
    *(void **)&c->ModuleLoadData = get(gpa, "cuModuleLoadData", 2000, 0);
    *(void **)&c->ModuleGetFunction = get(gpa, "cuModuleGetFunction", 2000, 0);
    *(void **)&c->ModuleUnload = get(gpa, "cuModuleUnload", 2000, 0);
    *(void **)&c->StreamCreate = get(gpa, "cuStreamCreate", 2000, 0);
    *(void **)&c->StreamDestroy = get(gpa, "cuStreamDestroy", 4000, 0);
    *(void **)&c->StreamSynchronize = get(gpa, "cuStreamSynchronize", 2000, 0);
    *(void **)&c->StreamSynchronizePt = get(gpa, "cuStreamSynchronize", 7000, PT);
    *(void **)&c->StreamBeginCapture = get(gpa, "cuStreamBeginCapture", 10010, 0);
    *(void **)&c->StreamBeginCapturePt = get(gpa, "cuStreamBeginCapture", 10010, PT);
    *(void **)&c->StreamEndCapture = get(gpa, "cuStreamEndCapture", 10000, 0);
    *(void **)&c->StreamEndCapturePt = get(gpa, "cuStreamEndCapture", 10000, PT);
    *(void **)&c->StreamIsCapturing = get(gpa, "cuStreamIsCapturing", 10000, 0);
    *(void **)&c->StreamIsCapturingPt = get(gpa, "cuStreamIsCapturing", 10000, PT);
    *(void **)&c->GraphInstantiateWithFlags = get(gpa, "cuGraphInstantiateWithFlags", 11040, 0);
    *(void **)&c->GraphAddEmptyNode = get(gpa, "cuGraphAddEmptyNode", 10000, 0);
    *(void **)&c->GraphLaunch = get(gpa, "cuGraphLaunch", 10000, 0);
    *(void **)&c->GraphLaunchPt = get(gpa, "cuGraphLaunch", 10000, PT);
    *(void **)&c->GraphDestroy = get(gpa, "cuGraphDestroy", 10000, 0);
    *(void **)&c->GraphExecDestroy = get(gpa, "cuGraphExecDestroy", 10000, 0);
    *(void **)&c->Launch = get(gpa, "cuLaunchKernel", 4000, 0);
    *(void **)&c->LaunchPt = get(gpa, "cuLaunchKernel", 7000, PT);
    *(void **)&c->LaunchEx = get(gpa, "cuLaunchKernelEx", 11060, 0);
    *(void **)&c->LaunchExPt = get(gpa, "cuLaunchKernelEx", 11060, PT);
}

void cl_init_primary(const struct cl *c, CUcontext *ctx)
{
    CUdevice dev;
    CK(c->Init(0));
    CK(c->DeviceGet(&dev, 0));
    CK(c->PrimaryRetain(ctx, dev));
    CK(c->CtxSetCurrent(*ctx));
}
