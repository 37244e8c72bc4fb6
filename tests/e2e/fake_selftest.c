/* fake_selftest.c - checks the fake driver's own contract, without ktime.
 *
 * Linked with -lcuda against tests/fake. Prints one line per check, "ok - <what>" or
 * "not ok - <what>: <detail>", for tests/e2e/fake.sh to number. Expects the environment
 * FAKECUDA_DEVICES=3 and FAKECUDA_COMPLETE_DELAY_US=20000 (fake.sh sets them).
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* prototypes of the legacy and _ptsz exports */
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selfcheck.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check_proc(const char *base, int ver, cuuint64_t flags, const char *sym)
{
    void *p = NULL, *want = dlsym(RTLD_DEFAULT, sym);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = cuGetProcAddress_v2(base, &p, ver, flags, &st);
    char what[160];
    snprintf(what, sizeof what, "cuGetProcAddress(%s, %d, %s) is the export %s", base, ver,
             flags ? "PER_THREAD" : "0", sym);
    check(r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS && want && p == want, what,
          "rc %d status %d got %p want %p", (int)r, (int)st, p, want);
}

static float elapsed_ms(CUevent a, CUevent b, CUresult *rc)
{
    float ms = -1.0f;
    *rc = cuEventElapsedTime_v2(&ms, a, b);
    return ms;
}

static void deinit_expected(void)
{
    /* Registered before cuInit: runs after the fake's teardown handler, like a tool's
     * constructor-registered handler runs after cudart's. */
    CUresult r = cuCtxSynchronize();
    check(r == CUDA_ERROR_DEINITIALIZED, "atexit handler registered before cuInit sees CUDA_ERROR_DEINITIALIZED",
          "got %d", (int)r);
    fflush(stdout);
}

static CUevent g_late_a, g_late_b;

static void late_reader(void)
{
    CUresult rc;
    float ms = elapsed_ms(g_late_a, g_late_b, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.125f, "atexit handler registered after cuInit can still read events",
          "rc %d ms %g", (int)rc, ms);
    fflush(stdout);
}

static void *no_ctx_thread(void *arg)
{
    CUevent e;
    (void)arg;
    CHECK_RC(cuEventCreate(&e, 0), CUDA_ERROR_INVALID_CONTEXT, "a new thread has no current context");
    return NULL;
}

/* Another thread queries an event of a stream that is not capturing, in capture mode `mode`
 * (-1: the thread's default, GLOBAL), while the main thread captures. */
struct query_arg {
    CUcontext ctx;
    CUevent ev;
    int mode;
    CUresult rc;
};

static void *query_thread(void *arg)
{
    struct query_arg *q = arg;
    cuCtxSetCurrent(q->ctx);
    if (q->mode >= 0) {
        CUstreamCaptureMode m = (CUstreamCaptureMode)q->mode;
        cuThreadExchangeStreamCaptureMode(&m);
    }
    q->rc = cuEventQuery(q->ev);
    return NULL;
}

/* Runs query_thread in mode `mode` during a GLOBAL capture of s; returns EndCapture's result. */
static CUresult query_during_capture(CUcontext ctx, CUstream s, CUevent ev, int mode, CUresult *qrc)
{
    struct query_arg q = { ctx, ev, mode, CUDA_ERROR_UNKNOWN };
    pthread_t th;
    CUgraph g = NULL;
    CUresult r;
    cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    pthread_create(&th, NULL, query_thread, &q);
    pthread_join(th, NULL);
    *qrc = q.rc;
    r = cuStreamEndCapture(s, &g);
    if (g)
        cuGraphDestroy(g);
    return r;
}

int main(void)
{
    CUresult rc;
    void *p;
    CUdriverProcAddressQueryResult st;
    int n = 0, drv = 0;
    char name[64];
    CUdevice dev;
    CUcontext ctx, ctx2, cur;
    CUmodule mod, bad;
    CUlibrary lib;
    CUfunction fk1, fsq, fmix, fhang, fkf;
    CUkernel kk1;
    CUevent e0, e1, e2, e3, enotime, enever;
    CUstream s, s2, sh;
    CUgraph g;
    CUgraphExec x;
    CUstreamCaptureStatus cs;
    const char *nm = NULL, *saved;
    float ms;
    double t0;
    pthread_t th;
    int i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    atexit(deinit_expected);

    /* --- cuGetProcAddress ---------------------------------------------------------- */
    check_proc("cuLaunchKernel", 4000, 0, "cuLaunchKernel");
    check_proc("cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz");
    check_proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz");
    check_proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel");
    check_proc("cuLaunchKernelEx", 11060, 0, "cuLaunchKernelEx");
    check_proc("cuLaunchKernelEx", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernelEx_ptsz");
    check_proc("cuLaunchCooperativeKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
               "cuLaunchCooperativeKernel_ptsz");
    check_proc("cuGraphLaunch", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuGraphLaunch_ptsz");
    check_proc("cuEventRecord", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuEventRecord_ptsz");
    check_proc("cuInit", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuInit");
    check_proc("cuEventElapsedTime", 12000, 0, "cuEventElapsedTime");
    check_proc("cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2");
    check_proc("cuStreamDestroy", 3020, 0, "cuStreamDestroy");
    check_proc("cuStreamDestroy", 4000, 0, "cuStreamDestroy_v2");
    check_proc("cuEventDestroy", 4000, 0, "cuEventDestroy_v2");
    check_proc("cuCtxDestroy", 4000, 0, "cuCtxDestroy_v2");
    check_proc("cuCtxPushCurrent", 4000, 0, "cuCtxPushCurrent_v2");
    check_proc("cuCtxPopCurrent", 4000, 0, "cuCtxPopCurrent_v2");
    check_proc("cuCtxCreate", 2000, 0, "cuCtxCreate");
    check_proc("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
    check_proc("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
    check_proc("cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture");
    check_proc("cuStreamBeginCapture", 10010, 0, "cuStreamBeginCapture_v2");
    check_proc("cuStreamBeginCapture", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
               "cuStreamBeginCapture_v2_ptsz");
    check_proc("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    check_proc("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    check_proc("cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2");
    check_proc("cuKernelGetName", 12030, 0, "cuKernelGetName");

    p = (void *)1;
    rc = cuGetProcAddress_v2("cudnnCreate", &p, 13000, 0, &st);
    check(rc == CUDA_ERROR_NOT_FOUND && p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
          "unknown symbol: NOT_FOUND, NULL, SYMBOL_NOT_FOUND", "rc %d p %p st %d", (int)rc, p, (int)st);
    p = (void *)1;
    rc = cuGetProcAddress_v2("cuLaunchKernelEx", &p, 11000, 0, &st);
    check(rc == CUDA_ERROR_NOT_FOUND && p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
          "too old a version: NOT_FOUND, NULL, VERSION_NOT_SUFFICIENT", "rc %d p %p st %d", (int)rc, p, (int)st);
    p = NULL;
    rc = cuGetProcAddress_v2("cuLaunchKernel", &p, 13000, 0, NULL);
    check(rc == CUDA_SUCCESS && p == dlsym(RTLD_DEFAULT, "cuLaunchKernel"), "symbolStatus may be NULL",
          "rc %d", (int)rc);
    p = NULL;
    rc = cuGetProcAddress("cuLaunchKernel", &p, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    check(rc == CUDA_SUCCESS && p == dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz"), "legacy 4-argument cuGetProcAddress",
          "rc %d", (int)rc);
    CHECK_RC(cuGetProcAddress_v2("cuInit", &p, 13000, 8, NULL), CUDA_ERROR_INVALID_VALUE, "unknown flags rejected");

    /* --- initialisation, devices ----------------------------------------------------- */
    CHECK_RC(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGetCount before cuInit");
    CHECK_RC(cuDriverGetVersion(&drv), CUDA_SUCCESS, "cuDriverGetVersion before cuInit");
    check(drv == 13000, "driver version 13000", "got %d", drv);
    CHECK_RC(cuInit(1), CUDA_ERROR_INVALID_VALUE, "cuInit(1) rejected");
    CHECK_RC(cuInit(0), CUDA_SUCCESS, "cuInit(0)");
    CHECK_RC(cuDeviceGetCount(&n), CUDA_SUCCESS, "cuDeviceGetCount");
    check(n == 3, "FAKECUDA_DEVICES=3 gives 3 devices", "got %d", n);
    CHECK_RC(cuDeviceGet(&dev, 3), CUDA_ERROR_INVALID_DEVICE, "device 3 of 3 is invalid");
    CHECK_RC(cuDeviceGet(&dev, 2), CUDA_SUCCESS, "cuDeviceGet(2)");
    CHECK_RC(cuDeviceGetName(name, sizeof name, dev), CUDA_SUCCESS, "cuDeviceGetName");
    check(strcmp(name, "Fake GPU 2") == 0, "device 2 is named 'Fake GPU 2'", "got '%s'", name);
    CHECK_RC(cuEventCreate(&e0, 0), CUDA_ERROR_INVALID_CONTEXT, "cuEventCreate without a context");
    CHECK_RC(cuLaunchKernel((CUfunction)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE,
             "launch of a bogus handle");

    /* --- contexts ----------------------------------------------------------------------- */
    CHECK_RC(cuDeviceGet(&dev, 0), CUDA_SUCCESS, "cuDeviceGet(0)");
    CHECK_RC(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
    CHECK_RC(cuCtxSetCurrent(ctx), CUDA_SUCCESS, "cuCtxSetCurrent");
    CHECK_RC(cuCtxGetCurrent(&cur), CUDA_SUCCESS, "cuCtxGetCurrent");
    check(cur == ctx, "current context is the primary one", "got %p", (void *)cur);
    dev = -1;
    CHECK_RC(cuCtxGetDevice(&dev), CUDA_SUCCESS, "cuCtxGetDevice");
    check(dev == 0, "context device is 0", "got %d", dev);
    pthread_create(&th, NULL, no_ctx_thread, NULL);
    pthread_join(th, NULL);

    /* --- modules, libraries, names ------------------------------------------------------- */
    CHECK_RC(cuModuleLoadData(&bad, ""), CUDA_ERROR_INVALID_IMAGE, "empty image rejected");
    CHECK_RC(cuModuleLoadData(&bad, "k="), CUDA_ERROR_INVALID_IMAGE, "image without duration rejected");
    CHECK_RC(cuModuleLoadData(&bad, "k=12x"), CUDA_ERROR_INVALID_IMAGE, "image with bad duration rejected");
    CHECK_RC(cuModuleLoadData(&bad, "a=1;a=2"), CUDA_ERROR_INVALID_IMAGE, "image with duplicate names rejected");
    CHECK_RC(cuModuleLoadData(&mod, "k1=125000;_Z6squarePfi=250000;kmix=125000,375000;hang_k=1000"), CUDA_SUCCESS,
             "cuModuleLoadData");
    CHECK_RC(cuModuleGetFunction(&fk1, mod, "k1"), CUDA_SUCCESS, "cuModuleGetFunction(k1)");
    CHECK_RC(cuModuleGetFunction(&fsq, mod, "_Z6squarePfi"), CUDA_SUCCESS, "cuModuleGetFunction(mangled name)");
    CHECK_RC(cuModuleGetFunction(&fmix, mod, "kmix"), CUDA_SUCCESS, "cuModuleGetFunction(kmix)");
    CHECK_RC(cuModuleGetFunction(&fhang, mod, "hang_k"), CUDA_SUCCESS, "cuModuleGetFunction(hang_k)");
    CHECK_RC(cuModuleGetFunction(&fkf, mod, "nope"), CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction(unknown)");
    CHECK_RC(cuFuncGetName(&nm, fsq), CUDA_SUCCESS, "cuFuncGetName on a CUfunction");
    check(nm && strcmp(nm, "_Z6squarePfi") == 0, "cuFuncGetName gives the mangled name", "got '%s'", nm ? nm : "");
    CHECK_RC(cuKernelGetName(&nm, (CUkernel)fsq), CUDA_ERROR_INVALID_HANDLE, "cuKernelGetName on a CUfunction fails");
    CHECK_RC(cuLibraryLoadData(&lib, "lk=250000", NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS, "cuLibraryLoadData");
    CHECK_RC(cuLibraryGetKernel(&kk1, lib, "lk"), CUDA_SUCCESS, "cuLibraryGetKernel");
    CHECK_RC(cuKernelGetName(&nm, kk1), CUDA_SUCCESS, "cuKernelGetName on a CUkernel");
    check(nm && strcmp(nm, "lk") == 0, "cuKernelGetName gives the name", "got '%s'", nm ? nm : "");
    CHECK_RC(cuFuncGetName(&nm, (CUfunction)kk1), CUDA_ERROR_INVALID_HANDLE, "cuFuncGetName on a CUkernel fails (400)");
    CHECK_RC(cuKernelGetFunction(&fkf, kk1), CUDA_SUCCESS, "cuKernelGetFunction");
    CHECK_RC(cuFuncGetName(&nm, fkf), CUDA_SUCCESS, "cuFuncGetName on cuKernelGetFunction's result");

    /* --- simulated time -------------------------------------------------------------------- */
    CHECK_RC(cuEventCreate(&e0, 0), CUDA_SUCCESS, "cuEventCreate");
    cuEventCreate(&e1, 0);
    cuEventCreate(&e2, 0);
    cuEventCreate(&e3, 0);
    cuEventCreate(&enotime, CU_EVENT_DISABLE_TIMING);
    cuEventCreate(&enever, 0);
    CHECK_RC(cuEventQuery(enever), CUDA_SUCCESS, "a never-recorded event queries as complete");
    CHECK_RC(cuEventRecord(e0, NULL), CUDA_SUCCESS, "cuEventRecord(legacy)");
    CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS, "cuLaunchKernel(k1)");
    CHECK_RC(cuEventRecord(e1, NULL), CUDA_SUCCESS, "cuEventRecord after the launch");
    t0 = now_ms();
    CHECK_RC(cuEventQuery(e1), CUDA_ERROR_NOT_READY, "with FAKECUDA_COMPLETE_DELAY_US an event is not ready at once");
    CHECK_RC(cuEventElapsedTime_v2(&ms, e0, e1), CUDA_ERROR_NOT_READY, "elapsed time of an incomplete event");
    CHECK_RC(cuEventSynchronize(e1), CUDA_SUCCESS, "cuEventSynchronize waits");
    check(now_ms() - t0 >= 15.0, "cuEventSynchronize waited about the delay", "waited %.1f ms", now_ms() - t0);
    CHECK_RC(cuEventQuery(e1), CUDA_SUCCESS, "complete after synchronising");
    ms = elapsed_ms(e0, e1, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.125f, "event pair around a 125000 ns kernel measures exactly 0.125 ms",
          "rc %d ms %.9g", (int)rc, ms);
    ms = -1;
    rc = cuEventElapsedTime(&ms, e0, e1);
    check(rc == CUDA_SUCCESS && ms == 0.125f, "legacy cuEventElapsedTime agrees", "rc %d ms %.9g", (int)rc, ms);
    CHECK_RC(cuEventElapsedTime_v2(&ms, e0, enever), CUDA_ERROR_INVALID_HANDLE, "elapsed with a never-recorded event");
    cuEventRecord(enotime, NULL);
    CHECK_RC(cuEventElapsedTime_v2(&ms, e0, enotime), CUDA_ERROR_INVALID_HANDLE, "elapsed with a DISABLE_TIMING event");

    for (i = 0; i < 4; i++) {
        float want = (i % 2) ? 0.375f : 0.125f;
        cuEventRecord(e0, NULL);
        cuLaunchKernel(fmix, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        cuEventRecord(e1, NULL);
        cuEventSynchronize(e1);
        ms = elapsed_ms(e0, e1, &rc);
        check(rc == CUDA_SUCCESS && ms == want, "a duration list cycles per launch", "launch %d: %.9g ms", i, ms);
    }
    cuEventRecord(e0, NULL);
    CHECK_RC(cuLaunchKernel(fk1, 0, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
             "gridDimX == 0 is CUDA_ERROR_INVALID_VALUE");
    CHECK_RC(cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
             "NULL function is CUDA_ERROR_INVALID_VALUE");
    cuEventRecord(e1, NULL);
    cuEventSynchronize(e1);
    ms = elapsed_ms(e0, e1, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.0f, "failed launches enqueue nothing", "%.9g ms", ms);

    /* CUkernel launches and Ex launches on a created stream. */
    CHECK_RC(cuStreamCreate(&s, 0), CUDA_SUCCESS, "cuStreamCreate");
    {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = s;
        cuEventRecord(e0, s);
        CHECK_RC(cuLaunchKernelEx(&cfg, (CUfunction)kk1, NULL, NULL), CUDA_SUCCESS, "cuLaunchKernelEx with a CUkernel");
        CHECK_RC(cuLaunchCooperativeKernel(fsq, 1, 1, 1, 1, 1, 1, 0, s, NULL), CUDA_SUCCESS, "cuLaunchCooperativeKernel");
        cuEventRecord(e1, s);
        cuEventSynchronize(e1);
        ms = elapsed_ms(e0, e1, &rc);
        check(rc == CUDA_SUCCESS && ms == 0.5f, "created stream: 250000 + 250000 ns = 0.5 ms", "%.9g ms", ms);
        ms = elapsed_ms(e0, e2, &rc);
        cuEventRecord(e2, NULL);
        cuEventSynchronize(e2);
        ms = elapsed_ms(e0, e2, &rc);
        check(rc == CUDA_SUCCESS && (ms > 1e6f || ms < -1e6f), "events split over two streams give an absurd interval",
              "%.9g ms", ms);
    }

    /* Per-thread default stream versus legacy stream. */
    cuEventRecord_ptsz(e0, NULL);
    CHECK_RC(cuLaunchKernel_ptsz(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS, "cuLaunchKernel_ptsz(NULL)");
    cuEventRecord(e1, CU_STREAM_PER_THREAD);
    cuEventSynchronize(e1);
    ms = elapsed_ms(e0, e1, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.125f, "_ptsz NULL and CU_STREAM_PER_THREAD are the same stream", "%.9g ms", ms);
    cuEventRecord(e0, NULL);
    cuLaunchKernel_ptsz(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    cuEventRecord(e1, CU_STREAM_LEGACY);
    cuEventSynchronize(e1);
    ms = elapsed_ms(e0, e1, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.0f, "a per-thread launch does not move the legacy stream's clock", "%.9g ms", ms);
    {
        CUcontext sc = NULL;
        CHECK_RC(cuStreamGetCtx(s, &sc), CUDA_SUCCESS, "cuStreamGetCtx");
        check(sc == ctx, "a stream belongs to its creating context", "got %p", (void *)sc);
        CHECK_RC(cuStreamGetCtx_ptsz(NULL, &sc), CUDA_SUCCESS, "cuStreamGetCtx_ptsz(NULL)");
    }

    /* --- capture, graphs ------------------------------------------------------------------ */
    CHECK_RC(cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
             "the legacy stream cannot be captured");
    CHECK_RC(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS, "cuStreamBeginCapture_v2");
    CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), CUDA_SUCCESS, "launch during capture");
    CHECK_RC(cuLaunchKernel(fmix, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), CUDA_SUCCESS, "second launch during capture");
    CHECK_RC(cuEventRecord(e3, s), CUDA_SUCCESS, "cuEventRecord during capture succeeds");
    CHECK_RC(cuStreamIsCapturing(s, &cs), CUDA_SUCCESS, "cuStreamIsCapturing");
    check(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capture is active", "status %d", (int)cs);
    g = NULL;
    CHECK_RC(cuStreamEndCapture(s, &g), CUDA_SUCCESS, "cuStreamEndCapture");
    CHECK_RC(cuGraphInstantiateWithFlags(&x, g, 0), CUDA_SUCCESS, "cuGraphInstantiateWithFlags");
    cuEventRecord(e0, s);
    CHECK_RC(cuGraphLaunch(x, s), CUDA_SUCCESS, "cuGraphLaunch");
    cuEventRecord(e1, s);
    cuEventSynchronize(e1);
    ms = elapsed_ms(e0, e1, &rc);
    check(rc == CUDA_SUCCESS && ms == 0.25f, "a graph launch advances the clock by its kernels (125000 + 125000)",
          "%.9g ms", ms);
    CHECK_RC(cuEventElapsedTime_v2(&ms, e0, e3), CUDA_ERROR_INVALID_HANDLE,
             "elapsed with an event recorded only into a capture fails");
    {
        CUgraphNode nodes[4], en;
        CUgraphNodeType ty = CU_GRAPH_NODE_TYPE_EMPTY;
        size_t nn = 0;
        CUgraphExec x2;
        CHECK_RC(cuGraphGetNodes(g, NULL, &nn), CUDA_SUCCESS, "cuGraphGetNodes (count)");
        check(nn == 2, "the captured graph has 2 nodes", "got %zu", nn);
        CHECK_RC(cuGraphAddEmptyNode(&en, g, NULL, 0), CUDA_SUCCESS, "cuGraphAddEmptyNode");
        nn = 4;
        CHECK_RC(cuGraphGetNodes(g, nodes, &nn), CUDA_SUCCESS, "cuGraphGetNodes");
        check(nn == 3 && nodes[2] == en, "... now 3, the empty one last", "got %zu", nn);
        CHECK_RC(cuGraphNodeGetType(nodes[0], &ty), CUDA_SUCCESS, "cuGraphNodeGetType");
        check(ty == CU_GRAPH_NODE_TYPE_KERNEL, "a captured launch is a kernel node", "type %d", (int)ty);
        cuGraphNodeGetType(en, &ty);
        check(ty == CU_GRAPH_NODE_TYPE_EMPTY, "an empty node is empty", "type %d", (int)ty);
        {
            CUDA_GRAPH_INSTANTIATE_PARAMS ip;
            memset(&ip, 0, sizeof ip);
            CHECK_RC(cuGraphInstantiateWithParams(&x2, g, &ip), CUDA_SUCCESS, "cuGraphInstantiateWithParams");
            check(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS, "... reports success", "result %d", (int)ip.result_out);
        }
        cuEventRecord(e0, s);
        cuGraphLaunch(x2, s);
        cuEventRecord(e1, s);
        cuEventSynchronize(e1);
        ms = elapsed_ms(e0, e1, &rc);
        check(rc == CUDA_SUCCESS && ms == 0.5f, "an empty node takes no time (125000 + 375000)", "%.9g ms", ms);
    }
    {
        unsigned cnt = 0;
        CUfunction fl[8];
        CUkernel kl[2];
        CHECK_RC(cuModuleGetFunctionCount(&cnt, mod), CUDA_SUCCESS, "cuModuleGetFunctionCount");
        check(cnt == 4, "the module has 4 functions", "got %u", cnt);
        CHECK_RC(cuModuleEnumerateFunctions(fl, 4, mod), CUDA_SUCCESS, "cuModuleEnumerateFunctions");
        check(fl[0] == fk1 && fl[1] == fsq, "... the same handles cuModuleGetFunction gives", "%p %p", (void *)fl[0],
              (void *)fl[1]);
        CHECK_RC(cuLibraryGetKernelCount(&cnt, lib), CUDA_SUCCESS, "cuLibraryGetKernelCount");
        CHECK_RC(cuLibraryEnumerateKernels(kl, 1, lib), CUDA_SUCCESS, "cuLibraryEnumerateKernels");
        check(cnt == 1 && kl[0] == kk1, "... the same CUkernel cuLibraryGetKernel gives", "%u", cnt);
    }

    CHECK_RC(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS, "capture again");
    cuEventRecord(e3, s);
    CHECK_RC(cuEventQuery(e3), CUDA_ERROR_CAPTURED_EVENT, "cuEventQuery of an event in a live capture: 907");
    CHECK_RC(cuStreamIsCapturing(s, &cs), CUDA_SUCCESS, "cuStreamIsCapturing after the query");
    check(cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED, "the query invalidated the capture", "status %d", (int)cs);
    CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
             "launch into an invalidated capture");
    g = (CUgraph)1;
    CHECK_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "EndCapture after invalidation: 901");
    check(g == NULL, "no graph from an invalidated capture", "got %p", (void *)g);
    CHECK_RC(cuStreamIsCapturing(s, &cs), CUDA_SUCCESS, "cuStreamIsCapturing after EndCapture");
    check(cs == CU_STREAM_CAPTURE_STATUS_NONE, "not capturing after EndCapture", "status %d", (int)cs);
    CHECK_RC(cuEventQuery(e3), CUDA_SUCCESS, "a captured-record event queries fine after the capture ends");

    CHECK_RC(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS, "capture a third time");
    cuEventRecord(e3, s);
    CHECK_RC(cuEventSynchronize(e3), CUDA_ERROR_CAPTURED_EVENT, "cuEventSynchronize of an event in a live capture");
    CHECK_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "... also invalidates it");

    /* Capture modes: another thread's query of an unrelated, completed event. */
    {
        CUresult q;
        cuEventRecord(e2, s2);
        cuEventSynchronize(e2);
        CHECK_RC(query_during_capture(ctx, s, e2, -1, &q), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                 "a GLOBAL-mode query in another thread invalidates a GLOBAL capture");
        check(q == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "... the query itself fails: 900", "rc %d", (int)q);
        CHECK_RC(query_during_capture(ctx, s, e2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, &q), CUDA_SUCCESS,
                 "a THREAD_LOCAL-mode query in another thread leaves the capture alone");
        check(q == CUDA_SUCCESS, "... and answers", "rc %d", (int)q);
        CHECK_RC(query_during_capture(ctx, s, e2, CU_STREAM_CAPTURE_MODE_RELAXED, &q), CUDA_SUCCESS,
                 "a RELAXED-mode query in another thread leaves the capture alone");
    }

    CHECK_RC(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS, "capture a blocking stream");
    CHECK_RC(cuStreamIsCapturing(NULL, &cs), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
             "cuStreamIsCapturing(legacy) while a blocking stream captures: 906");
    CHECK_RC(cuStreamIsCapturing(s, &cs), CUDA_SUCCESS, "... which does not invalidate");
    check(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE, "still active", "status %d", (int)cs);
    CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
             "a legacy-stream launch meanwhile: 906");
    CHECK_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "... which invalidates the capture");
    CHECK_RC(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS, "capture once more");
    CHECK_RC(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuCtxSynchronize during capture: 900");
    CHECK_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "... which invalidates the capture");
    CHECK_RC(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS,
             "the per-thread default stream can be captured");
    CHECK_RC(cuLaunchKernel_ptsz(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS, "... and launched into");
    CHECK_RC(cuStreamEndCapture_ptsz(NULL, &g), CUDA_SUCCESS, "... and ended");

    /* --- contexts own their streams and events --------------------------------------------- */
    CHECK_RC(cuCtxCreate_v4(&ctx2, NULL, 0, 1), CUDA_SUCCESS, "cuCtxCreate_v4 on device 1");
    CHECK_RC(cuCtxGetDevice(&dev), CUDA_SUCCESS, "cuCtxGetDevice in the new context");
    check(dev == 1, "the created context is current and on device 1", "got %d", dev);
    {
        CUevent ev2;
        CHECK_RC(cuEventCreate(&ev2, 0), CUDA_SUCCESS, "cuEventCreate in the second context");
        CHECK_RC(cuEventRecord(ev2, s), CUDA_ERROR_INVALID_HANDLE, "recording it on a stream of another context: 400");
        CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE,
                 "a module function launched in another context: 400");
        CHECK_RC(cuLaunchKernel((CUfunction)kk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS,
                 "a CUkernel launches in any context");
        CHECK_RC(cuCtxPopCurrent_v2(&cur), CUDA_SUCCESS, "cuCtxPopCurrent_v2");
        check(cur == ctx2, "popped the created context", "got %p", (void *)cur);
        CHECK_RC(cuCtxDestroy_v2(ctx2), CUDA_SUCCESS, "cuCtxDestroy_v2");
        CHECK_RC(cuEventQuery(ev2), CUDA_ERROR_CONTEXT_IS_DESTROYED, "an event of a destroyed context: 709");
    }
    CHECK_RC(cuCtxGetCurrent(&cur), CUDA_SUCCESS, "cuCtxGetCurrent after the pop");
    check(cur == ctx, "the primary context is current again", "got %p", (void *)cur);

    /* --- unload: names die with their module --------------------------------------------- */
    cuFuncGetName(&saved, fk1);
    CHECK_RC(cuModuleUnload(mod), CUDA_SUCCESS, "cuModuleUnload");
    check(strcmp(saved, "k1") != 0, "a name pointer kept past unload no longer reads 'k1'", "still '%s'", saved);
    CHECK_RC(cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE,
             "launch of an unloaded function");
    CHECK_RC(cuLibraryUnload(lib), CUDA_SUCCESS, "cuLibraryUnload");

    /* --- exit ordering: events still readable from a handler registered after cuInit ------ */
    CHECK_RC(cuModuleLoadData(&mod, "late=125000;hang_late=1000"), CUDA_SUCCESS, "load for the exit checks");
    cuModuleGetFunction(&fk1, mod, "late");
    cuModuleGetFunction(&fhang, mod, "hang_late");
    cuEventCreate(&g_late_a, 0);
    cuEventCreate(&g_late_b, 0);
    cuEventRecord(g_late_a, NULL);
    cuLaunchKernel(fk1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    cuEventRecord(g_late_b, NULL);
    cuEventSynchronize(g_late_b);
    atexit(late_reader);

    /* --- hang: last, it poisons the stream --------------------------------------------- */
    CHECK_RC(cuStreamCreate(&sh, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "stream for the hang");
    cuEventRecord(e0, sh);
    CHECK_RC(cuLaunchKernel(fhang, 1, 1, 1, 32, 1, 1, 0, sh, NULL, NULL), CUDA_SUCCESS, "launch of a hang* kernel");
    cuEventRecord(e1, sh);
    cuEventSynchronize(e0);
    CHECK_RC(cuEventQuery(e0), CUDA_SUCCESS, "an event recorded before the hang completes");
    CHECK_RC(cuEventQuery(e1), CUDA_ERROR_NOT_READY, "an event recorded after the hang never completes");
    t0 = now_ms();
    CHECK_RC(cuEventSynchronize(e1), CUDA_ERROR_LAUNCH_TIMEOUT, "cuEventSynchronize on it: LAUNCH_TIMEOUT");
    CHECK_RC(cuStreamSynchronize(sh), CUDA_ERROR_LAUNCH_TIMEOUT, "cuStreamSynchronize: LAUNCH_TIMEOUT");
    CHECK_RC(cuStreamQuery(sh), CUDA_ERROR_NOT_READY, "cuStreamQuery: NOT_READY");
    CHECK_RC(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT, "cuCtxSynchronize: LAUNCH_TIMEOUT");
    check(now_ms() - t0 < 500.0, "none of them blocked", "took %.1f ms", now_ms() - t0);
    CHECK_RC(cuEventElapsedTime_v2(&ms, e0, e1), CUDA_ERROR_NOT_READY, "elapsed over the hang: NOT_READY");
    {
        CUstream s3;
        cuStreamCreate(&s3, 0);
        CHECK_RC(cuStreamWaitEvent(s3, e1, 0), CUDA_SUCCESS, "cuStreamWaitEvent on a hung event");
        CHECK_RC(cuStreamQuery(s3), CUDA_ERROR_NOT_READY, "... hangs the waiting stream too");
    }
    CHECK_RC(cuStreamDestroy_v2(sh), CUDA_SUCCESS, "cuStreamDestroy_v2");
    CHECK_RC(cuStreamDestroy_v2(sh), CUDA_ERROR_INVALID_HANDLE, "destroying twice");
    CHECK_RC(cuEventRecord(e0, sh), CUDA_ERROR_INVALID_HANDLE, "recording on a destroyed stream");
    (void)s2;
    fflush(stdout);
    return g_fail;
}
