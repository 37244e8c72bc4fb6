/* driver.c - real driver entry points used by ktime itself, resolved on first use, and the
 * core's event operations on them. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "driver.h"

#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "log.h"
#include "state.h"

struct driver_api drv;

bool driver_load(void *gpa)
{
    static const struct {
        const char *name;
        int version;
        int required;
        void **slot;
    } want[] = {
#define X(field, sym, ver, required) { #sym, ver, required, (void **)&drv.field },
        DRIVER_FUNCTIONS(X)
#undef X
    };
    bool ok = true;

    drv.GetProcAddress = (PFN_cuGetProcAddress_v12000)gpa;
    if (!drv.GetProcAddress)
        return false;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CUdriverProcAddressQueryResult status;
        void *p = NULL;
        /* Legacy-stream flavour: per-thread streams are named with CU_STREAM_PER_THREAD. */
        if (drv.GetProcAddress(want[i].name, &p, want[i].version,
                               CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS ||
            !p) {
            p = NULL;
            if (want[i].required) {
                log_warn("the CUDA driver has no %s; timing is off", want[i].name);
                ok = false;
            } else {
                log_debug("the CUDA driver has no %s", want[i].name);
            }
        }
        *want[i].slot = p;
    }
    return ok;
}

static int ev_create(void *ctx, void **start, void **stop)
{
    CUcontext cur = NULL, popped;
    CUevent a = NULL, b = NULL;
    bool pushed = false;
    int rc = -1;

    /* Events belong to the context current at creation: make ctx current if need be. */
    if (drv.CtxGetCurrent(&cur) != CUDA_SUCCESS || cur != (CUcontext)ctx) {
        if (drv.CtxPushCurrent((CUcontext)ctx) != CUDA_SUCCESS)
            return -1;
        pushed = true;
    }
    if (drv.EventCreate(&a, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
        drv.EventCreate(&b, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
        *start = a;
        *stop = b;
        rc = 0;
    }
    /* A lone event left over on failure is a few bytes; destroying it is not worth a
     * pointer we would otherwise never need. */
    if (pushed)
        drv.CtxPopCurrent(&popped);
    return rc;
}

static int ev_query(void *stop)
{
    CUresult r = drv.EventQuery((CUevent)stop);

    if (r == CUDA_SUCCESS)
        return 0;
    if (r == CUDA_ERROR_NOT_READY)
        return 1;
    if (r == CUDA_ERROR_CONTEXT_IS_DESTROYED)
        return -2;
    log_debug("cuEventQuery failed with %d", (int)r);
    return -1;
}

/* cuEventElapsedTime_v2 (CUDA 12.8) where the driver has it. The original ABI also looks for
 * errors of pending work in the whole context, which is many times dearer while another
 * thread launches (docs/performance.md); the v2 only reads the two timestamps. NOT_READY and
 * the other results are the same. */
static int ev_elapsed(void *start, void *stop, float *ms)
{
    CUresult r = drv.EventElapsedTime2 ? drv.EventElapsedTime2(ms, (CUevent)start, (CUevent)stop)
                                       : drv.EventElapsedTime(ms, (CUevent)start, (CUevent)stop);

    if (r == CUDA_SUCCESS)
        return 0;
    if (r == CUDA_ERROR_NOT_READY) /* documented: either event not completed yet */
        return 1;
    if (r == CUDA_ERROR_CONTEXT_IS_DESTROYED)
        return -2;
    log_debug("cuEventElapsedTime failed with %d", (int)r);
    return -1;
}

bool driver_swap_capture_mode(CUstreamCaptureMode *mode)
{
    return drv.ThreadExchangeStreamCaptureMode &&
           drv.ThreadExchangeStreamCaptureMode(mode) == CUDA_SUCCESS;
}

/* The drain thread never captures: THREAD_LOCAL lets it query while others capture. */
static void ev_thread_start(void)
{
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;

    if (!driver_swap_capture_mode(&mode))
        log_info("cannot set the drain thread's capture mode; its event queries may "
                 "invalidate a global-mode stream capture in another thread");
}

const struct event_ops driver_event_ops = {
    .create = ev_create,
    .query = ev_query,
    .elapsed = ev_elapsed,
    .thread_start = ev_thread_start,
};

const char *driver_kernel_name(void *handle)
{
    const char *name = NULL;

    /* cuFuncGetName first: on CUDA 13 it also names CUkernel handles (the runtime's), while
     * cuKernelGetName on a CUfunction fails, which compute-sanitizer reports as an API
     * error. */
    if (drv.FuncGetName && drv.FuncGetName(&name, (CUfunction)handle) == CUDA_SUCCESS && name)
        return name;
    name = NULL;
    if (drv.KernelGetName && drv.KernelGetName(&name, (CUkernel)handle) == CUDA_SUCCESS && name)
        return name;
    return NULL;
}

/* ---- readiness: ktime's own pointers, resolved on first use ---- */

static void *(*_Atomic symbol_source)(const char *name);

void ktime_set_symbol_source(void *(*lookup)(const char *name))
{
    atomic_store(&symbol_source, lookup);
}

bool ktime_driver_present(void)
{
    void *(*lookup)(const char *) = atomic_load(&symbol_source);

    return lookup && lookup("cuGetProcAddress_v2");
}

bool ktime_driver_ready(void)
{
    int st = atomic_load_explicit(&kt.driver_state, memory_order_acquire);

    if (st != 0)
        return st > 0;
    pthread_mutex_lock(&kt.setup_lock);
    st = atomic_load_explicit(&kt.driver_state, memory_order_relaxed);
    if (st == 0) {
        void *(*lookup)(const char *) = atomic_load(&symbol_source);
        void *gpa = lookup ? lookup("cuGetProcAddress_v2") : NULL;
        st = gpa && driver_load(gpa) ? 1 : -1;
        if (st < 0)
            log_warn("could not resolve the CUDA driver's entry points; timing is off");
        atomic_store_explicit(&kt.driver_state, st, memory_order_release);
    }
    pthread_mutex_unlock(&kt.setup_lock);
    return st > 0;
}
