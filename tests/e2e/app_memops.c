/* app_memops.c - a C program linked with -lcuda that copies and sets memory between kernel
 * launches, for ktime's memory-operation timing (issue 13).
 *
 * usage: app_memops [options] ITERATIONS BYTES
 *   Each iteration, on one stream: launch k_mem (its duration from the fake's plan, 100 us),
 *   then one of each operation below, in this order:
 *     HtoD async from pinned memory, DtoH async to pinned memory, DtoD async, memset (D8
 *     async), HtoD synchronous from pageable memory, DtoH synchronous to pageable memory,
 *     cuMemcpyAsync device to device, a 2D memset of BYTES (D2D32 async, BYTES/4 wide, 1
 *     high), a peer copy between two contexts (cuMemcpyPeerAsync)
 *   each of BYTES bytes; then launch k_mem again.
 * options:
 *   --proc     call everything through pointers from cuGetProcAddress_v2, as the CUDA runtime
 *              does (default: the exported symbols)
 *   --stream   on a created stream (default: the legacy default stream)
 *   --ptsz     the per-thread default stream (the _ptsz/_ptds entry points)
 *   --capture N  then, on a created stream under graph capture, N times an HtoD copy from
 *              pinned memory, a DtoD copy and a set (async): captured, never run
 * Prints "iterations N", "bytes N" and "kernel k_mem launched N".
 */
#include "apputil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*dtod_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*set8_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*htod_sync_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh_sync_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*set2d32_fn)(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);
typedef CUresult (*peer_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);

/* Per-thread-stream exports; cuda.h declares them only for per-thread builds. */
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2_ptds(void *, CUdeviceptr, size_t);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);

static void *proc(const char *name, int ptsz)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    CK(cuGetProcAddress_v2(name, &p, 13000,
                           ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                : CU_GET_PROC_ADDRESS_DEFAULT,
                           &q));
    if (!p) {
        fprintf(stderr, "%s: no %s\n", app_prog, name);
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    int via_proc = 0, use_stream = 0, ptsz = 0, a = 1;
    long iters, i, captures = 0;
    size_t bytes;
    CUdevice dev;
    CUcontext ctx, other;
    CUmodule mod;
    CUfunction k;
    CUstream s = NULL;
    CUdeviceptr d1, d2, d3;
    void *pinned, *pageable;
    static const char image[] = "k_mem=100000";

    app_prog = "app_memops";
    for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
        if (!strcmp(argv[a], "--proc")) via_proc = 1;
        else if (!strcmp(argv[a], "--stream")) use_stream = 1;
        else if (!strcmp(argv[a], "--ptsz")) ptsz = 1;
        else if (!strcmp(argv[a], "--capture") && a + 1 < argc) captures = app_long(argv[++a], "captures");
        else {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, argv[a]);
            return 2;
        }
    }
    if (argc - a != 2) {
        fprintf(stderr, "usage: %s [--proc] [--stream] [--ptsz] ITERATIONS BYTES\n", app_prog);
        return 2;
    }
    iters = app_long(argv[a], "iterations");
    bytes = (size_t)app_long(argv[a + 1], "bytes");

    htod_fn htod = ptsz ? cuMemcpyHtoDAsync_v2_ptsz : cuMemcpyHtoDAsync;
    dtoh_fn dtoh = ptsz ? cuMemcpyDtoHAsync_v2_ptsz : cuMemcpyDtoHAsync;
    dtod_fn dtod = ptsz ? cuMemcpyDtoDAsync_v2_ptsz : cuMemcpyDtoDAsync;
    set8_fn set8 = ptsz ? cuMemsetD8Async_ptsz : cuMemsetD8Async;
    htod_sync_fn htod_sync = ptsz ? cuMemcpyHtoD_v2_ptds : cuMemcpyHtoD;
    dtoh_sync_fn dtoh_sync = ptsz ? cuMemcpyDtoH_v2_ptds : cuMemcpyDtoH;
    dtod_fn any = ptsz ? cuMemcpyAsync_ptsz : cuMemcpyAsync;
    set2d32_fn set2d = ptsz ? cuMemsetD2D32Async_ptsz : cuMemsetD2D32Async;
    peer_fn peer = ptsz ? cuMemcpyPeerAsync_ptsz : cuMemcpyPeerAsync;

    CK(cuInit(0));
    if (via_proc) {
        htod = (htod_fn)proc("cuMemcpyHtoDAsync", ptsz);
        dtoh = (dtoh_fn)proc("cuMemcpyDtoHAsync", ptsz);
        dtod = (dtod_fn)proc("cuMemcpyDtoDAsync", ptsz);
        set8 = (set8_fn)proc("cuMemsetD8Async", ptsz);
        htod_sync = (htod_sync_fn)proc("cuMemcpyHtoD", ptsz);
        dtoh_sync = (dtoh_sync_fn)proc("cuMemcpyDtoH", ptsz);
        any = (dtod_fn)proc("cuMemcpyAsync", ptsz);
        set2d = (set2d32_fn)proc("cuMemsetD2D32Async", ptsz);
        peer = (peer_fn)proc("cuMemcpyPeerAsync", ptsz);
    }
    CK(cuDeviceGet(&dev, 0));
    CK(cuCtxCreate(&other, NULL, 0, dev)); /* the peer copy's other side */
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, image));
    CK(cuModuleGetFunction(&k, mod, "k_mem"));
    if (use_stream)
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    else if (ptsz)
        s = CU_STREAM_PER_THREAD;
    CK(cuMemAlloc(&d1, bytes));
    CK(cuMemAlloc(&d2, bytes));
    CK(cuMemAlloc(&d3, bytes));
    CK(cuMemHostAlloc(&pinned, bytes, 0));
    if (!(pageable = calloc(1, bytes))) {
        fprintf(stderr, "%s: out of memory\n", app_prog);
        return 1;
    }
    for (i = 0; i < iters; i++) {
        int x = 7;
        void *params[] = { &x };
        CK(cuLaunchKernel(k, 8, 1, 1, 256, 1, 1, 0, s, params, NULL));
        CK(htod(d1, pinned, bytes, s));
        CK(dtoh(pinned, d1, bytes, s));
        CK(dtod(d2, d1, bytes, s));
        CK(set8(d3, 1, bytes, s));
        CK(htod_sync(d1, pageable, bytes));
        CK(dtoh_sync(pageable, d1, bytes));
        CK(any(d3, d2, bytes, s));
        CK(set2d(d3, bytes, 0, bytes / 4, 1, s));
        CK(peer(d2, other, d1, ctx, bytes, s));
        CK(cuLaunchKernel(k, 8, 1, 1, 256, 1, 1, 0, s, params, NULL));
    }
    CK(cuCtxSynchronize());
    if (captures > 0) {
        CUstream cs;
        CUgraph g;
        CK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
        CK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
        for (i = 0; i < captures; i++) {
            CK(htod(d1, pinned, bytes, cs));
            CK(dtod(d2, d1, bytes, cs));
            CK(set8(d3, 2, bytes, cs));
        }
        CK(cuStreamEndCapture(cs, &g));
        CK(cuGraphDestroy(g));
        CK(cuStreamDestroy(cs));
    }
    free(pageable);
    CK(cuMemFreeHost(pinned));
    printf("iterations %ld\nbytes %zu\nkernel k_mem launched %ld\n", iters, bytes, 2 * iters);
    return 0;
}
