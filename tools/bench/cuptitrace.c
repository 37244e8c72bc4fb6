/* libcuptitrace: the CUPTI activity tracer ktime's overhead benchmark compares against.
 *
 * Preloaded instead of libktime (LD_PRELOAD=libcuptitrace.so ./bench ...). The constructor
 * enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL with buffer callbacks that only count records:
 * the cost measured is CUPTI's own kernel tracing, with nothing of ours on top. No cuptiSubscribe.
 *
 * At exit it does a forced cuptiActivityFlushAll and writes one JSON line
 *   {"tool": "cuptitrace", "records": N, "kernel_records": N, "dropped": N, "buffers": N}
 * to $CUPTITRACE_OUTPUT (or to stderr when unset). The exit handler is registered again from each
 * buffer request (the first one comes after CUDA is initialised), because atexit handlers run
 * last-registered-first and CUDA tears itself down from a handler the runtime registers when it
 * initialises; the handler runs once, and never in a forked child.
 */
#define _GNU_SOURCE
#include <cupti.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CT_BUF_SIZE ((size_t)8 << 20)
#define CT_MAX_ATEXIT 64

static uint64_t ct_records, ct_kernels, ct_dropped, ct_buffers; /* atomics */
static int ct_active, ct_done, ct_regs;
static pid_t ct_pid;

static void ct_exit(void);

static void ct_warn(const char *what, CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "?";
    fprintf(stderr, "cuptitrace: warning: %s failed: %s (%d)\n", what, s, (int)r);
}

static void CUPTIAPI ct_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, CT_BUF_SIZE) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? CT_BUF_SIZE : 0;
    *max_records = 0;
    if (getpid() == ct_pid && !__atomic_load_n(&ct_done, __ATOMIC_ACQUIRE) &&
        __atomic_add_fetch(&ct_regs, 1, __ATOMIC_RELAXED) <= CT_MAX_ATEXIT)
        atexit(ct_exit);
}

static void CUPTIAPI ct_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                  size_t valid)
{
    (void)size;
    if (!buffer)
        return;
    CUpti_Activity *rec = NULL;
    uint64_t n = 0, k = 0;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        n++;
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
            k++;
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        __atomic_add_fetch(&ct_dropped, (uint64_t)dropped, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ct_records, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ct_kernels, k, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ct_buffers, 1, __ATOMIC_RELAXED);
    free(buffer);
}

static void ct_exit(void)
{
    if (__atomic_exchange_n(&ct_done, 1, __ATOMIC_ACQ_REL) || !ct_active || getpid() != ct_pid)
        return;
    if (__atomic_load_n(&ct_regs, __ATOMIC_RELAXED) == 0)
        return; /* no buffer was ever requested: this process never ran a kernel */
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS)
        ct_warn("cuptiActivityFlushAll", r);
    const char *path = getenv("CUPTITRACE_OUTPUT");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (path && *path && !f)
        fprintf(stderr, "cuptitrace: cannot write %s\n", path);
    fprintf(f ? f : stderr,
            "{\"tool\": \"cuptitrace\", \"records\": %llu, \"kernel_records\": %llu, "
            "\"dropped\": %llu, \"buffers\": %llu, \"flush_result\": %d}\n",
            (unsigned long long)__atomic_load_n(&ct_records, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&ct_kernels, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&ct_dropped, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&ct_buffers, __ATOMIC_RELAXED), (int)r);
    if (f)
        fclose(f);
}

__attribute__((constructor)) static void ct_init(void)
{
    ct_pid = getpid();
    CUptiResult r = cuptiActivityRegisterCallbacks(ct_requested, ct_completed);
    if (r != CUPTI_SUCCESS) {
        ct_warn("cuptiActivityRegisterCallbacks", r);
        return;
    }
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        ct_warn("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
        return;
    }
    ct_active = 1;
    atexit(ct_exit); /* fallback; the registrations from buffer requests run earlier */
}

__attribute__((destructor)) static void ct_fini(void)
{
    ct_exit();
}
