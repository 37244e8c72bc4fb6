/* flush.c - the L2 flush (KTIME_FLUSH_L2, flush.h): a scratch buffer per context, the flush
 * before each timed launch, and what it did, for the report. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "flush.h"

#include "driver.h"
#include "log.h"
#include "module.h"
#include "state.h"
#include "sysinfo.h"

/* Timed launches that got their flush, those whose flush the driver refused (timed warm all
 * the same); contexts with a scratch buffer and without one; the largest buffer, in bytes. */
static _Atomic uint64_t flushes, refused;
static _Atomic uint32_t contexts, unavailable;
static _Atomic uint64_t largest;

void flush_l2_run(struct pool *p, CUstream es)
{
    if (drv.MemsetD32Async((CUdeviceptr)p->flush_ptr, 0, (size_t)(p->flush_bytes / 4), es) ==
        CUDA_SUCCESS)
        atomic_fetch_add_explicit(&flushes, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
}

static bool flush_start(void)
{
    atomic_store(&flushes, 0);
    atomic_store(&refused, 0);
    atomic_store(&contexts, 0);
    atomic_store(&unavailable, 0);
    atomic_store(&largest, 0);
    if (!kt.cfg.flush_l2)
        return false;
    /* Said once per tree of processes, like a misspelt name. */
    if (!ktime_parent_has_ktime())
        log_warn("KTIME_FLUSH_L2=1: each timed launch first overwrites a buffer twice the "
                 "size of L2 (outside its interval): kernels are timed with a cold cache, "
                 "and the program runs slower than it would alone");
    else
        log_info("KTIME_FLUSH_L2=1: timed launches start with a cold L2");
    return true;
}

/* The context's scratch buffer, with its context current. Twice the L2 (NVBench's rule: an
 * L2 that keeps lines by recency is then wholly replaced) and at least 1 MiB. Never freed: it goes with its
 * context. Without one, this context's launches are timed warm. */
static void flush_pool_made(struct pool *p, CUdevice dev)
{
    int l2 = 0;
    CUdeviceptr d = 0;
    uint64_t bytes;

    if (!drv.DeviceGetAttribute || !drv.MemAlloc || !drv.MemsetD32Async ||
        drv.DeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) != CUDA_SUCCESS)
        l2 = -1;
    bytes = l2 > 0 ? 2 * (uint64_t)l2 : 0;
    if (bytes < (1u << 20))
        bytes = 1u << 20;
    if (l2 < 0 || drv.MemAlloc(&d, (size_t)bytes) != CUDA_SUCCESS || !d) {
        if (atomic_fetch_add(&unavailable, 1) == 0)
            log_warn("KTIME_FLUSH_L2: no %s for device %d; its launches are timed with a "
                     "warm cache", l2 < 0 ? "L2 size (driver too old)" : "scratch buffer",
                     (int)dev);
        return;
    }
    p->flush_ptr = (uint64_t)d;
    p->flush_bytes = bytes;
    atomic_fetch_add(&contexts, 1);
    uint64_t was = atomic_load(&largest);
    while (bytes > was && !atomic_compare_exchange_weak(&largest, &was, bytes))
        ;
    log_debug("KTIME_FLUSH_L2: %llu bytes of scratch on device %d (L2 %d bytes)",
              (unsigned long long)bytes, (int)dev, l2);
}

static void flush_header(struct report *r)
{
    r->flush_l2 = kt.cfg.flush_l2;
    r->flush_bytes = atomic_load(&largest);
    r->flushes = atomic_load(&flushes);
    r->flush_failed = atomic_load(&refused);
    r->flush_contexts = atomic_load(&contexts);
    r->flush_unavailable = atomic_load(&unavailable);
}

const struct ktime_module flush_module = {
    .name = "flush",
    .start = flush_start,
    .pool_made = flush_pool_made,
    .header = flush_header,
};
