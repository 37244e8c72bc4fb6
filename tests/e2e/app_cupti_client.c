/* app_cupti_client.c - a program that becomes a CUPTI client itself in the middle of its run
 * (as torch.profiler does), for the CUPTI timer's hand-over (tests/e2e/timer.sh).
 *
 * usage: app_cupti_client [--via HOW] [--stream] B A
 *   Loads ho_a (125000 ns) and ho_b (250000 ns), launches ho_a B times and synchronises;
 *   then turns to CUPTI (HOW, default `link`); then launches ho_a and ho_b A times each,
 *   interleaved, and synchronises. HOW:
 *     link       cuptiActivityRegisterCallbacks + cuptiActivityEnable(CONCURRENT_KERNEL)
 *                through the symbols it is linked with (-lcupti), with its own buffers
 *     dlsym      the same through dlopen("libcupti.so.13") and dlsym
 *     subscribe  only cuptiSubscribe (no activity): prints its result
 *     dlopen:LIB dlopens LIB (a library whose constructor becomes the client: libkcount.so)
 *   As a client (link, dlsym) it flushes (forced) at the end and prints
 *     client records <name> <n>   records it was given, per kernel (every kernel it saw)
 *     client unknown_buffers <n>  buffers completed to it that it never handed out
 *     client dropped <n>          cuptiActivityGetNumDroppedRecords
 *   Always prints "kernel <name> launched <n>" per kernel. Exits 1 if a call fails.
 */
#define _GNU_SOURCE
#include "apputil.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES (64u * 1024u)
#define MAX_BUFS 256

typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*enable_fn)(CUpti_ActivityKind);
typedef CUptiResult (*flush_fn)(uint32_t);
typedef CUptiResult (*next_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*dropped_fn)(CUcontext, uint32_t, size_t *);

static struct {
    register_fn Register;
    enable_fn Enable;
    flush_fn Flush;
    next_fn Next;
    dropped_fn Dropped;
} cu;

static uint8_t *mine[MAX_BUFS];
static int nmine, unknown;
static long rec_a, rec_b, rec_other;
static size_t dropped;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max)
{
    *buffer = NULL;
    *size = 0;
    *max = 0;
    if (nmine == MAX_BUFS || !(mine[nmine] = aligned_alloc(8, BUF_BYTES)))
        return;
    *buffer = mine[nmine++];
    *size = BUF_BYTES;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *rec = NULL;
    size_t d = 0;
    int own = 0;

    (void)size;
    for (int i = 0; i < nmine; i++)
        own |= mine[i] == buffer;
    if (!own) {
        unknown++;
        return; /* not ours: never read, never freed */
    }
    while (cu.Next(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const char *n = ((const CUpti_ActivityKernel10 *)rec)->name;
        if (n && strcmp(n, "ho_a") == 0)
            rec_a++;
        else if (n && strcmp(n, "ho_b") == 0)
            rec_b++;
        else
            rec_other++;
    }
    if (cu.Dropped(ctx, stream, &d) == CUPTI_SUCCESS)
        dropped += d;
}

static void cupti_check(CUptiResult r, const char *what)
{
    if (r != CUPTI_SUCCESS) {
        fprintf(stderr, "%s: %s failed: CUPTI error %d\n", app_prog, what, (int)r);
        exit(1);
    }
}

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *info)
{
    (void)data;
    (void)dom;
    (void)id;
    (void)info;
}

int main(int argc, char **argv)
{
    const char *via = "link";
    int i, use_stream = 0, client = 0;
    long before, after, na = 0, nb = 0;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fa, fb;
    CUstream s = NULL;
    CUdevice dev;

    app_prog = "app_cupti_client";
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--via") && i + 1 < argc)
            via = argv[++i];
        else if (!strcmp(argv[i], "--stream"))
            use_stream = 1;
        else {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, argv[i]);
            return 2;
        }
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: %s [--via link|dlsym|subscribe|dlopen:LIB] [--stream] B A\n", app_prog);
        return 2;
    }
    before = app_long(argv[i], "B");
    after = app_long(argv[i + 1], "A");

    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, "ho_a=125000;ho_b=250000"));
    CK(cuModuleGetFunction(&fa, mod, "ho_a"));
    CK(cuModuleGetFunction(&fb, mod, "ho_b"));
    if (use_stream)
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    for (long n = 0; n < before; n++, na++)
        CK(cuLaunchKernel(fa, 8, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    CK(cuCtxSynchronize());

    if (!strcmp(via, "link") || !strcmp(via, "dlsym")) {
        if (!strcmp(via, "link")) {
            cu.Register = cuptiActivityRegisterCallbacks;
            cu.Enable = cuptiActivityEnable;
            cu.Flush = cuptiActivityFlushAll;
            cu.Next = cuptiActivityGetNextRecord;
            cu.Dropped = cuptiActivityGetNumDroppedRecords;
        } else {
            void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
            if (!h) {
                fprintf(stderr, "%s: dlopen libcupti.so.13: %s\n", app_prog, dlerror());
                return 1;
            }
            cu.Register = (register_fn)dlsym(h, "cuptiActivityRegisterCallbacks");
            cu.Enable = (enable_fn)dlsym(h, "cuptiActivityEnable");
            cu.Flush = (flush_fn)dlsym(h, "cuptiActivityFlushAll");
            cu.Next = (next_fn)dlsym(h, "cuptiActivityGetNextRecord");
            cu.Dropped = (dropped_fn)dlsym(h, "cuptiActivityGetNumDroppedRecords");
            if (!cu.Register || !cu.Enable || !cu.Flush || !cu.Next || !cu.Dropped) {
                fprintf(stderr, "%s: a CUPTI function is missing\n", app_prog);
                return 1;
            }
        }
        cupti_check(cu.Register(requested, completed), "cuptiActivityRegisterCallbacks");
        cupti_check(cu.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
        client = 1;
    } else if (!strcmp(via, "subscribe")) {
        CUpti_SubscriberHandle sub;
        printf("subscribe %d\n", (int)cuptiSubscribe(&sub, on_callback, NULL));
    } else if (!strncmp(via, "dlopen:", 7)) {
        if (!dlopen(via + 7, RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "%s: dlopen %s: %s\n", app_prog, via + 7, dlerror());
            return 1;
        }
    } else {
        fprintf(stderr, "%s: unknown --via %s\n", app_prog, via);
        return 2;
    }

    for (long n = 0; n < after; n++, na++, nb++) {
        CK(cuLaunchKernel(fa, 8, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
        CK(cuLaunchKernel(fb, 8, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    }
    CK(cuCtxSynchronize());
    if (client) {
        cupti_check(cu.Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
        printf("client records ho_a %ld\nclient records ho_b %ld\nclient records other %ld\n", rec_a, rec_b,
               rec_other);
        printf("client unknown_buffers %d\nclient dropped %zu\n", unknown, dropped);
    }
    if (s)
        CK(cuStreamDestroy(s));
    CK(cuModuleUnload(mod));
    printf("kernel ho_a launched %ld\nkernel ho_b launched %ld\n", na, nb);
    return 0;
}
