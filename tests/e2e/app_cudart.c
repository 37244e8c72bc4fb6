/* app_cudart.c - reaches the driver the way cudart 13 does: dlopen + cuGetProcAddress_v2.
 *
 * usage: app_cudart [options] name=ns[,ns...]:count ...
 *   Loads the named kernels (simulated durations in ns, a comma list cycles) and launches
 *   each the given number of times, interleaved, then synchronises and prints
 *   "kernel <name> launched <n>" per kernel. Every driver entry point is obtained from
 *   cuGetProcAddress (itself obtained through cuGetProcAddress_v2, as cudart does).
 * options:
 *   --ptds            launch through the per-thread pointers (version 7000, PER_THREAD flag)
 *                     with the NULL stream, i.e. the thread's per-thread default stream
 *   --stream          launch on a created stream
 *   --handle-legacy   launch on CU_STREAM_LEGACY      --handle-per-thread  on CU_STREAM_PER_THREAD
 *   --ex              launch with cuLaunchKernelEx (version 11060)
 *   --coop            launch with cuLaunchCooperativeKernel (version 9000)
 *   --mixed           rotate launch paths: legacy, ptds, Ex, created stream, Ex+ptds, coop
 *   --library         load with cuLibraryLoadData, launch CUkernel handles
 *   --kernel-function with --library: launch the CUfunction from cuKernelGetFunction
 *   --device N        use device N (primary context)
 *   --no-sync         do not synchronise before exit (leaves work for ktime's exit drain)
 *   --sync-each       synchronise after every launch
 *   --sync-every N    synchronise after every N launches
 *   --no-unload       keep the module/library loaded at exit
 *   --reset           after the final sync, reset the primary context (cudaDeviceReset)
 *   --release         after the final sync, release the primary context
 *   --sleep-ms N      after printing the counts, sleep N ms before returning (a window in
 *                     which a test can send a signal)
 *   --idle-after N MS after the Nth launch, sleep MS ms (the program idles), then go on
 *   --profiler A:B    call cuProfilerStart before launch number A (counting from 0) and
 *                     cuProfilerStop before launch number B (B = the total: after the last;
 *                     B = -1: never); repeatable, up to 8 times
 *   --chdir DIR       change to directory DIR before returning
 */
#define _GNU_SOURCE
#include "apputil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);

static gpa2_t gpa;

static void *get(const char *name, int version, cuuint64_t flags, int with_status)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = gpa(name, &p, version, flags, with_status ? &st : NULL);
    if (r != CUDA_SUCCESS || !p || (with_status && st != CU_GET_PROC_ADDRESS_SUCCESS)) {
        fprintf(stderr, "%s: cuGetProcAddress(%s, %d, %llu) failed: %s status %d\n", app_prog, name, version,
                (unsigned long long)flags, app_errname(r), (int)st);
        exit(1);
    }
    return p;
}

/* A symbol the driver must not resolve: NOT_FOUND, *pfn == NULL, and the right status. */
static void expect_missing(const char *name, int version, CUdriverProcAddressQueryResult want)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = gpa(name, &p, version, 0, &st);
    if (r != CUDA_ERROR_NOT_FOUND || p != NULL || st != want) {
        fprintf(stderr, "%s: cuGetProcAddress(%s, %d) gave %s, pfn %p, status %d; want NOT_FOUND, NULL, %d\n",
                app_prog, name, version, app_errname(r), p, (int)st, (int)want);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static struct plan plan;
    int ptds = 0, use_stream = 0, ex = 0, coop = 0, mixed = 0, library = 0, kfunc = 0, device = 0;
    long sleep_ms = 0;
    long sync_every = 0, idle_after = 0, idle_ms = 0;
    int nosync = 0, sync_each = 0, nounload = 0, reset = 0, release = 0, h_legacy = 0, h_pt = 0;
    int i, n = 0, drv = 0, ndev = 0;
    void *h;
    gpa2_t gpa_v2_dlsym;
    gpa1_t gpa_v1;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod = NULL;
    CUlibrary lib = NULL;
    CUstream stream = NULL;
    CUfunction fn[PLAN_MAX_KERNELS];
    long step = 0;
    long prof_a[8], prof_b[8];
    int nprof = 0;
    const char *chdir_to = NULL;
    CUresult (*pProfilerStart)(void);
    CUresult (*pProfilerStop)(void);

    CUresult (*pInit)(unsigned);
    CUresult (*pDriverGetVersion)(int *);
    CUresult (*pDeviceGet)(CUdevice *, int);
    CUresult (*pDeviceGetCount)(int *);
    CUresult (*pPrimaryRetain)(CUcontext *, CUdevice);
    CUresult (*pPrimaryRelease)(CUdevice);
    CUresult (*pPrimaryReset)(CUdevice);
    CUresult (*pCtxSetCurrent)(CUcontext);
    CUresult (*pCtxSynchronize)(void);
    CUresult (*pModuleLoadData)(CUmodule *, const void *);
    CUresult (*pModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*pModuleUnload)(CUmodule);
    CUresult (*pLibraryLoadData)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                 void **, unsigned);
    CUresult (*pLibraryGetKernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*pLibraryUnload)(CUlibrary);
    CUresult (*pKernelGetFunction)(CUfunction *, CUkernel);
    CUresult (*pStreamCreate)(CUstream *, unsigned);
    CUresult (*pStreamDestroy)(CUstream);
    CUresult (*pStreamSynchronize)(CUstream);
    CUresult (*pStreamSynchronizePt)(CUstream);
    typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 CUstream, void **, void **);
    typedef CUresult (*launch_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
    typedef CUresult (*coop_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **);
    launch_t pLaunch, pLaunchPt;
    launch_ex_t pLaunchEx, pLaunchExPt;
    coop_t pCoop, pCoopPt;

    app_prog = "app_cudart";
    memset(&plan, 0, sizeof plan);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--ptds")) ptds = 1;
        else if (!strcmp(a, "--stream")) use_stream = 1;
        else if (!strcmp(a, "--handle-legacy")) h_legacy = 1;
        else if (!strcmp(a, "--handle-per-thread")) h_pt = 1;
        else if (!strcmp(a, "--ex")) ex = 1;
        else if (!strcmp(a, "--coop")) coop = 1;
        else if (!strcmp(a, "--mixed")) mixed = 1;
        else if (!strcmp(a, "--library")) library = 1;
        else if (!strcmp(a, "--kernel-function")) library = kfunc = 1;
        else if (!strcmp(a, "--no-sync")) nosync = 1;
        else if (!strcmp(a, "--sync-each")) sync_each = 1;
        else if (!strcmp(a, "--sync-every") && i + 1 < argc) sync_every = app_long(argv[++i], "sync-every");
        else if (!strcmp(a, "--no-unload")) nounload = 1;
        else if (!strcmp(a, "--reset")) reset = 1;
        else if (!strcmp(a, "--release")) release = 1;
        else if (!strcmp(a, "--device") && i + 1 < argc) device = (int)app_long(argv[++i], "device");
        else if (!strcmp(a, "--sleep-ms") && i + 1 < argc) sleep_ms = app_long(argv[++i], "sleep-ms");
        else if (!strcmp(a, "--idle-after") && i + 2 < argc) {
            idle_after = app_long(argv[++i], "idle-after N");
            idle_ms = app_long(argv[++i], "idle-after MS");
        }
        else if (!strcmp(a, "--profiler") && i + 1 < argc && nprof < 8) {
            char *end;
            prof_a[nprof] = strtol(argv[++i], &end, 10);
            prof_b[nprof] = *end == ':' ? strtol(end + 1, &end, 10) : -2;
            if (*end || prof_b[nprof] == -2) {
                fprintf(stderr, "%s: --profiler wants A:B, not %s\n", app_prog, argv[i]);
                return 2;
            }
            nprof++;
        }
        else if (!strcmp(a, "--chdir") && i + 1 < argc) chdir_to = argv[++i];
        else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, a);
            return 2;
        } else if (plan_add(&plan, a) != 0)
            return 2;
    }
    if (plan.n == 0) {
        fprintf(stderr, "usage: %s [options] name=ns[,ns...]:count ...\n", app_prog);
        return 2;
    }

    /* What cudart does: one dlsym, of cuGetProcAddress_v2; then ask for cuGetProcAddress
     * itself (11030 gives the 4-argument one, 12000 the _v2) and use that from then on. */
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s: dlopen(libcuda.so.1): %s\n", app_prog, dlerror());
        return 1;
    }
    gpa_v2_dlsym = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa_v2_dlsym) {
        fprintf(stderr, "%s: dlsym(cuGetProcAddress_v2) failed\n", app_prog);
        return 1;
    }
    gpa = gpa_v2_dlsym;
    gpa_v1 = (gpa1_t)get("cuGetProcAddress", 11030, 0, 1);
    gpa = (gpa2_t)get("cuGetProcAddress", 12000, 0, 0);

    /* Through the legacy 4-argument pointer, like older runtimes. */
    {
        void *p = NULL;
        CK(gpa_v1("cuDriverGetVersion", &p, 2020, 0));
        pDriverGetVersion = (CUresult(*)(int *))p;
    }
    pInit = (CUresult(*)(unsigned))get("cuInit", 2000, 0, 1);
    pDeviceGet = (CUresult(*)(CUdevice *, int))get("cuDeviceGet", 2000, 0, 0);
    pDeviceGetCount = (CUresult(*)(int *))get("cuDeviceGetCount", 2000, 0, 0);
    pPrimaryRetain = (CUresult(*)(CUcontext *, CUdevice))get("cuDevicePrimaryCtxRetain", 7000, 0, 1);
    pPrimaryRelease = (CUresult(*)(CUdevice))get("cuDevicePrimaryCtxRelease", 11000, 0, 0);
    pPrimaryReset = (CUresult(*)(CUdevice))get("cuDevicePrimaryCtxReset", 11000, 0, 0);
    pCtxSetCurrent = (CUresult(*)(CUcontext))get("cuCtxSetCurrent", 4000, 0, 1);
    pCtxSynchronize = (CUresult(*)(void))get("cuCtxSynchronize", 2000, 0, 0);
    pModuleLoadData = (CUresult(*)(CUmodule *, const void *))get("cuModuleLoadData", 2000, 0, 1);
    pModuleGetFunction = (CUresult(*)(CUfunction *, CUmodule, const char *))get("cuModuleGetFunction", 2000, 0, 0);
    pModuleUnload = (CUresult(*)(CUmodule))get("cuModuleUnload", 2000, 0, 0);
    pLibraryLoadData = (CUresult(*)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                    void **, unsigned))get("cuLibraryLoadData", 12000, 0, 1);
    pLibraryGetKernel = (CUresult(*)(CUkernel *, CUlibrary, const char *))get("cuLibraryGetKernel", 12000, 0, 0);
    pLibraryUnload = (CUresult(*)(CUlibrary))get("cuLibraryUnload", 12000, 0, 0);
    pKernelGetFunction = (CUresult(*)(CUfunction *, CUkernel))get("cuKernelGetFunction", 12000, 0, 1);
    pStreamCreate = (CUresult(*)(CUstream *, unsigned))get("cuStreamCreate", 2000, 0, 0);
    pStreamDestroy = (CUresult(*)(CUstream))get("cuStreamDestroy", 4000, 0, 1);
    pStreamSynchronize = (CUresult(*)(CUstream))get("cuStreamSynchronize", 2000, 0, 0);
    pStreamSynchronizePt = (CUresult(*)(CUstream))get("cuStreamSynchronize", 7000,
                                                      CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 1);
    pLaunch = (launch_t)get("cuLaunchKernel", 4000, 0, 1);
    pLaunchPt = (launch_t)get("cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 0);
    pLaunchEx = (launch_ex_t)get("cuLaunchKernelEx", 11060, 0, 1);
    pLaunchExPt = (launch_ex_t)get("cuLaunchKernelEx", 11060, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 0);
    pCoop = (coop_t)get("cuLaunchCooperativeKernel", 9000, 0, 0);
    pCoopPt = (coop_t)get("cuLaunchCooperativeKernel", 9000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 1);
    pProfilerStart = (CUresult(*)(void))get("cuProfilerStart", 4000, 0, 1);
    pProfilerStop = (CUresult(*)(void))get("cuProfilerStop", 4000, 0, 0);

    /* Lookups a runtime makes that must fail cleanly. */
    expect_missing("cudnnCreate", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_missing("cuNotARealEntryPoint", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_missing("cuLaunchKernelEx", 11000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    if (pLaunch == pLaunchPt) {
        fprintf(stderr, "%s: cuLaunchKernel and its per-thread variant resolved to the same pointer\n", app_prog);
        return 1;
    }

    CK(pInit(0));
    CK(pDriverGetVersion(&drv));
    CK(pDeviceGetCount(&ndev));
    CK(pDeviceGet(&dev, device));
    CK(pPrimaryRetain(&ctx, dev));
    CK(pCtxSetCurrent(ctx));
    printf("driver %d\ndevices %d\n", drv, ndev);

    if (library) {
        CK(pLibraryLoadData(&lib, plan.image, NULL, NULL, 0, NULL, NULL, 0));
        for (i = 0; i < plan.n; i++) {
            CUkernel k;
            CK(pLibraryGetKernel(&k, lib, plan.k[i].name));
            if (kfunc)
                CK(pKernelGetFunction(&fn[i], k));
            else
                fn[i] = (CUfunction)k;  /* what cudart 13 passes to cuLaunchKernel */
        }
    } else {
        CK(pModuleLoadData(&mod, plan.image));
        for (i = 0; i < plan.n; i++)
            CK(pModuleGetFunction(&fn[i], mod, plan.k[i].name));
    }
    if (use_stream || mixed)
        CK(pStreamCreate(&stream, 0));

    for (;;) {
        int x = 42;
        for (int j = 0; j < nprof; j++) {
            if (prof_a[j] == n)
                CK(pProfilerStart());
            if (prof_b[j] == n)
                CK(pProfilerStop());
        }
        if ((i = plan_next(&plan)) < 0)
            break;
        void *params[] = { &x };
        int mode = mixed ? (int)(step % 6) : ex ? (ptds ? 4 : 2) : coop ? 5 : ptds ? 1 : use_stream ? 3 : 0;
        CUstream s = (use_stream || mode == 3) ? stream : h_legacy ? CU_STREAM_LEGACY : h_pt ? CU_STREAM_PER_THREAD : NULL;
        CUlaunchConfig cfg;
        CUresult r;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = 4;
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = 128;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = s;
        switch (mode) {
        case 0: r = pLaunch(fn[i], 4, 1, 1, 128, 1, 1, 0, s, params, NULL); break;
        case 1: r = pLaunchPt(fn[i], 4, 1, 1, 128, 1, 1, 0, s, params, NULL); break;
        case 2: r = pLaunchEx(&cfg, fn[i], params, NULL); break;
        case 3: r = pLaunch(fn[i], 4, 1, 1, 128, 1, 1, 0, s, params, NULL); break;
        case 4: r = pLaunchExPt(&cfg, fn[i], params, NULL); break;
        default: r = (ptds ? pCoopPt : pCoop)(fn[i], 4, 1, 1, 128, 1, 1, 0, s, params); break;
        }
        app_check(r, "launch");
        step++;
        n++;
        if (sync_each || (sync_every > 0 && n % sync_every == 0))
            CK(mode == 1 || mode == 4 || (mode == 5 && ptds) ? pStreamSynchronizePt(s) : pStreamSynchronize(s));
        if (idle_after > 0 && n == idle_after) {
            struct timespec ts = { idle_ms / 1000, (idle_ms % 1000) * 1000000L };
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
    }
    if (!nosync)
        CK(pCtxSynchronize());
    if (stream)
        CK(pStreamDestroy(stream));
    if (!nounload) {
        if (lib)
            CK(pLibraryUnload(lib));
        if (mod)
            CK(pModuleUnload(mod));
    }
    if (reset)
        CK(pPrimaryReset(dev));
    if (release)
        CK(pPrimaryRelease(dev));
    plan_print(&plan);
    printf("launches %d\n", n);
    if (chdir_to && chdir(chdir_to) != 0) {
        fprintf(stderr, "%s: chdir %s failed\n", app_prog, chdir_to);
        return 1;
    }
    if (sleep_ms > 0) {
        struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
        fflush(stdout);
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return 0;
}
