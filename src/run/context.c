/* context.c - per-context set-up: each CUDA context that times a launch gets an event pool
 * (with its launch gates) and a device entry for the report; and what happens to its pools
 * when the context is destroyed, reset or released. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "gatewatch.h"
#include "lifecycle.h"
#include "log.h"
#include "modules.h"
#include "state.h"
#include "sysinfo.h"

/* Pairs made at a context's first timed launch. The drain grows the pool 4x at a time as
 * soon as it runs short, publishing each new pair at once; a smaller start leaves a burst of
 * launches from a few threads with an empty pool before the drain catches up. */
#define POOL_INITIAL_PAIRS 1024

/* Pinned, device-mapped words for the launch gates of one pool, in the current context.
 * Leaves *host NULL (no gating) when the driver cannot provide them. */
static void gate_alloc(volatile uint32_t **host, uint64_t *dev)
{
    size_t bytes = (size_t)kt.cfg.pool_cap * sizeof(uint32_t);
    CUdeviceptr d = 0;
    void *h = NULL;

    *host = NULL;
    if (kt.cfg.gate == GATE_OFF || !drv.MemHostAlloc || !drv.MemHostGetDevicePointer ||
        !drv.StreamWaitValue32)
        return;
    if (drv.MemHostAlloc(&h, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
        CUDA_SUCCESS || !h) {
        log_warn("no pinned memory for launch gates; this context's launches are not gated, "
                 "and a launch reaching an idle stream also times its submission");
        return;
    }
    memset(h, 0, bytes);
    if (drv.MemHostGetDevicePointer(&d, h, 0) != CUDA_SUCCESS) {
        log_warn("launch gates unavailable (no device address for pinned memory); this "
                 "context's launches are not gated");
        return; /* a few pinned KB, once */
    }
    *host = h;
    *dev = (uint64_t)d;
}

/* Remembers a context whose pool could not be set up, so that its launches are dropped
 * (no_context) without trying again. Under the set-up lock. */
static void remember_failed(CUcontext ctx)
{
    uint32_t n = atomic_load_explicit(&kt.nfailed, memory_order_relaxed);

    if (n < KTIME_MAX_FAILED_CTX) {
        kt.failed_ctx[n] = ctx;
        atomic_store_explicit(&kt.nfailed, n + 1, memory_order_release);
    }
}

bool ktime_context_failed(CUcontext ctx)
{
    uint32_t n = atomic_load_explicit(&kt.nfailed, memory_order_acquire);

    for (uint32_t i = 0; i < n; i++)
        if (kt.failed_ctx[i] == ctx)
            return true;
    return false;
}

/* Whether ctx is dev's primary context. Asked only while that context is active, where a
 * retain and a release change nothing. */
static bool is_primary(CUcontext ctx, CUdevice dev)
{
    unsigned int flags;
    int active = 0;
    CUcontext pc = NULL;

    if (!drv.DevicePrimaryCtxGetState || !drv.DevicePrimaryCtxRetain ||
        !drv.DevicePrimaryCtxRelease ||
        drv.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
        drv.DevicePrimaryCtxRetain(&pc, dev) != CUDA_SUCCESS)
        return false;
    drv.DevicePrimaryCtxRelease(dev);
    return pc == ctx;
}

struct pool *ktime_pool_create(CUcontext ctx)
{
    struct pool *p = NULL;
    CUcontext cur = NULL, popped;
    CUdevice dev = -1;
    bool pushed = false, ok = false;
    uint32_t n;

    pthread_mutex_lock(&kt.setup_lock);
    n = atomic_load(&kt.drain.npools);
    for (uint32_t i = 0; i < n; i++)
        if (kt.drain.pools[i]->ctx == (void *)ctx && !atomic_load(&kt.drain.pools[i]->retiring)) {
            p = kt.drain.pools[i];
            goto out;
        }
    if (ktime_context_failed(ctx) || n >= DRAIN_MAX_POOLS)
        goto fail;
    if (drv.CtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx) {
        if (drv.CtxPushCurrent(ctx) != CUDA_SUCCESS)
            goto fail;
        pushed = true;
    }
    if (drv.CtxGetDevice(&dev) == CUDA_SUCCESS && dev >= 0 && (p = calloc(1, sizeof *p))) {
        if (pool_init(p, &driver_event_ops, ctx, (int)dev, (uint32_t)kt.cfg.pool_cap,
                      POOL_INITIAL_PAIRS) == 0) {
            ok = true;
            p->primary = is_primary(ctx, dev);
            modules_pool_made(p, dev); /* the features' per-context parts (L2 flush, trace) */
            p->seen = calloc(((size_t)kt.ktab.mask + 64) / 64, sizeof *p->seen);
            /* Everything a launching thread reads is set before the pool is published. */
            gate_alloc(&p->gate_host, &p->gate_dev);
            if (p->gate_host && !gatewatch_start())
                p->gate_host = NULL; /* a few pinned KB, once */
            if (!p->gate_host && kt.cfg.gate != GATE_OFF)
                atomic_fetch_add(&kt.ungated_contexts, 1);
        }
    }
    if (pushed)
        drv.CtxPopCurrent(&popped);
    if (!ok || drain_add_pool(&kt.drain, p) != 0) {
        if (p)
            pool_free_memory(p); /* the events it made stay: a few, once per context */
        free(p);
        p = NULL;
        goto fail;
    }
    ktime_note_device(dev);
    if (!kt.drain.started) {
        int err = drain_start(&kt.drain);
        if (err)
            log_warn("could not start the drain thread (%s); timing is off", strerror(err));
    }
    log_debug("pool for device %d: %u event pairs, cap %ld", (int)dev,
              atomic_load(&p->created), kt.cfg.pool_cap);
    goto out;
fail:
    if (atomic_load(&kt.nfailed) == 0)
        log_warn("could not set up CUDA events for a context (device %d%s); its launches "
                 "are not timed, nor those of any other context that fails the same way",
                 (int)dev, n >= DRAIN_MAX_POOLS ? ", more than 256 contexts" : "");
    else
        log_debug("no CUDA events for another context (device %d)", (int)dev);
    remember_failed(ctx);
out:
    pthread_mutex_unlock(&kt.setup_lock);
    return p;
}

void ktime_context_ending(CUcontext ctx, int dev)
{
    struct pool *ending[DRAIN_MAX_POOLS];
    int n = 0;
    double deadline;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON)
        return;
    pthread_mutex_lock(&kt.setup_lock);
    deadline = drain_now_ms() + (double)kt.cfg.exit_wait_ms;
    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++) {
        struct pool *p = kt.drain.pools[i];
        if ((ctx ? p->ctx == (void *)ctx : p->device == dev) && !atomic_load(&p->retiring)) {
            p->retire_deadline_ms = deadline;
            atomic_store(&p->retiring, 1);
            if (!kt.drain.started)
                atomic_store(&p->dead, 1);
            modules_pool_ending(p);
            ending[n++] = p;
        }
    }
    pthread_mutex_unlock(&kt.setup_lock);
    /* Wait for the drain to finish with them: their events die with the context. */
    for (int i = 0; i < n; i++)
        while (!atomic_load(&ending[i]->dead) && drain_now_ms() < deadline + 1000.0) {
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        }
    if (n)
        log_debug("%d event pool(s) retired before a context was destroyed", n);
}

CUresult ktime_primary_release(CUdevice dev, CUresult (*release)(CUdevice))
{
    struct pool *mine[DRAIN_MAX_POOLS];
    unsigned int flags;
    int n = 0, active = 1;
    CUresult r;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON ||
        !drv.DevicePrimaryCtxGetState)
        return release(dev);
    pthread_mutex_lock(&kt.setup_lock);
    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++) {
        struct pool *p = kt.drain.pools[i];
        if (p->primary && p->device == (int)dev && !atomic_load(&p->retiring))
            mine[n++] = p;
    }
    pthread_mutex_unlock(&kt.setup_lock);
    if (n == 0)
        return release(dev);
    /* The drain thread stays out of these pools while their context may be going. */
    pthread_mutex_lock(&kt.drain.pass_lock);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    bool swapped = driver_swap_capture_mode(&mode);
    for (int i = 0; i < n; i++)
        drain_pass_pool(&kt.drain, mine[i]); /* fold in what has completed */
    if (swapped)
        driver_swap_capture_mode(&mode);
    r = release(dev);
    if (r == CUDA_SUCCESS &&
        drv.DevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS && !active) {
        for (int i = 0; i < n; i++)
            drain_pool_gone(&kt.drain, mine[i]);
    }
    pthread_mutex_unlock(&kt.drain.pass_lock);
    if (!active)
        log_debug("%d event pool(s) ended with the primary context of device %d", n, (int)dev);
    return r;
}
