/* api.c - the public timer API of include/ktime.h: a CPU timer on CLOCK_MONOTONIC, and a GPU
 * timer made of a CUDA event pair on a stream of the program's, through ktime's own driver
 * pointers (driver.c) under the re-entry guard, so ktime never counts or times its calls. It
 * works whether libktime is preloaded or linked, with timing on or off (KTIME_DISABLE=1). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "driver.h"
#include "ktime.h"
#include "launch.h" /* inside_ktime: the re-entry guard */
#include "lifecycle.h"
#include "state.h"

KTIME_EXPORT const char *ktime_strerror(int code)
{
    switch (code) {
    case KTIME_OK:
        return "success";
    case KTIME_NOT_READY:
        return "the GPU has not reached the timer's stop event yet";
    case KTIME_ERR_INVALID:
        return "invalid argument (a NULL pointer, or a stream of another context)";
    case KTIME_ERR_STATE:
        return "called out of order (stop before start, or elapsed before stop)";
    case KTIME_ERR_NO_DRIVER:
        return "no usable CUDA driver is loaded in the process";
    case KTIME_ERR_NO_CONTEXT:
        return "no CUDA context is current in this thread";
    case KTIME_ERR_CUDA:
        return "the CUDA driver returned an error (ktime_gpu_timer_cuda_error)";
    case KTIME_ERR_NO_MEMORY:
        return "out of memory";
    case KTIME_ERR_CAPTURE:
        return "the stream is being captured into a CUDA graph";
    default:
        return "unknown ktime result code";
    }
}

/* ---- CPU timer ---------------------------------------------------------------------- */

enum { CPU_NEVER = 0, CPU_RUNNING = 1, CPU_STOPPED = 2 };

static long long mono_ns(void)
{
    struct timespec ts;

    /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

KTIME_EXPORT int ktime_cpu_timer_start(ktime_cpu_timer *t)
{
    if (!t)
        return KTIME_ERR_INVALID;
    t->start_ns = mono_ns();
    t->stop_ns = 0;
    t->state = CPU_RUNNING;
    return KTIME_OK;
}

KTIME_EXPORT int ktime_cpu_timer_stop(ktime_cpu_timer *t)
{
    long long now = mono_ns(); /* first: the interval ends at the call */

    if (!t)
        return KTIME_ERR_INVALID;
    if (t->state != CPU_RUNNING)
        return KTIME_ERR_STATE;
    t->stop_ns = now;
    t->state = CPU_STOPPED;
    return KTIME_OK;
}

/* The timer's elapsed nanoseconds, or an error. */
static int cpu_elapsed_ns(const ktime_cpu_timer *t, long long *ns)
{
    if (!t)
        return KTIME_ERR_INVALID;
    if (t->state == CPU_RUNNING)
        *ns = mono_ns() - t->start_ns;
    else if (t->state == CPU_STOPPED)
        *ns = t->stop_ns - t->start_ns;
    else
        return KTIME_ERR_STATE;
    return KTIME_OK;
}

/* The timer's elapsed time in units of ns_per_unit nanoseconds into *out, or an error. */
static int cpu_elapsed_in(const ktime_cpu_timer *t, double *out, double ns_per_unit)
{
    long long ns;
    int rc;

    if (!out)
        return KTIME_ERR_INVALID;
    rc = cpu_elapsed_ns(t, &ns);
    if (rc == KTIME_OK)
        *out = (double)ns / ns_per_unit;
    return rc;
}

KTIME_EXPORT int ktime_cpu_timer_elapsed_ms(const ktime_cpu_timer *t, double *ms)
{
    return cpu_elapsed_in(t, ms, 1e6);
}

KTIME_EXPORT int ktime_cpu_timer_elapsed_us(const ktime_cpu_timer *t, double *us)
{
    return cpu_elapsed_in(t, us, 1e3);
}

/* ---- GPU timer ---------------------------------------------------------------------- */

enum { GPU_IDLE = 0, GPU_RUNNING, GPU_STOPPED, GPU_DONE };

struct ktime_gpu_timer {
    CUcontext ctx;     /* current at create; the events belong to it */
    CUstream stream;   /* as the program gave it (NULL: the legacy stream) */
    CUevent start, stop;
    int state;
    float ms;          /* GPU_DONE: the elapsed time, read once */
    CUresult cuda_error; /* the last driver call that failed */
};

/* ktime's driver pointers, resolved now if need be. Only when a libcuda is loaded: asked
 * before, ktime_driver_ready() would give up on the driver for the rest of the process. */
static bool api_driver(void)
{
    if (atomic_load_explicit(&kt.driver_state, memory_order_acquire) == 0 &&
        !ktime_driver_present())
        return false;
    return ktime_driver_ready();
}

/* Keeps r as t's last driver error; KTIME_ERR_CUDA. */
static int cuda_failed(ktime_gpu_timer *t, CUresult r)
{
    t->cuda_error = r;
    return KTIME_ERR_CUDA;
}

/* The special stream handles that name no stream object (and so no context). */
static bool special_stream(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

KTIME_EXPORT int ktime_gpu_timer_create(ktime_gpu_timer **out, void *stream)
{
    ktime_gpu_timer *t;
    CUcontext cur = NULL, sctx = NULL;
    CUresult r;

    if (!out)
        return KTIME_ERR_INVALID;
    if (!api_driver() || !drv.EventDestroy || !drv.EventSynchronize)
        return KTIME_ERR_NO_DRIVER;
    inside_ktime++;
    r = drv.CtxGetCurrent(&cur);
    if (r != CUDA_SUCCESS || !cur) {
        inside_ktime--;
        /* CUDA_ERROR_NOT_INITIALIZED (no cuInit yet) and the like: no context either way. */
        return r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_INITIALIZED ? KTIME_ERR_NO_CONTEXT
                                                                      : KTIME_ERR_CUDA;
    }
    if (!special_stream((CUstream)stream)) {
        r = drv.StreamGetCtx((CUstream)stream, &sctx);
        if (r != CUDA_SUCCESS || sctx != cur) {
            inside_ktime--;
            return KTIME_ERR_INVALID;
        }
    }
    t = calloc(1, sizeof *t);
    if (!t) {
        inside_ktime--;
        return KTIME_ERR_NO_MEMORY;
    }
    t->ctx = cur;
    t->stream = (CUstream)stream;
    r = drv.EventCreate(&t->start, CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) {
        r = drv.EventCreate(&t->stop, CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS)
            drv.EventDestroy(t->start);
    }
    inside_ktime--;
    if (r != CUDA_SUCCESS) {
        free(t);
        return r == CUDA_ERROR_OUT_OF_MEMORY ? KTIME_ERR_NO_MEMORY : KTIME_ERR_CUDA;
    }
    *out = t;
    return KTIME_OK;
}

/* Records ev on t's stream; then whether the stream captures (a record into a capture
 * succeeds, times nothing, and waiting on it would break the program's capture). */
static int record(ktime_gpu_timer *t, CUevent ev)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r;

    inside_ktime++;
    r = drv.EventRecord(ev, t->stream);
    /* After the record, not before: nothing between the start event and the program's work. */
    if (r == CUDA_SUCCESS && drv.StreamIsCapturing(t->stream, &st) != CUDA_SUCCESS)
        st = CU_STREAM_CAPTURE_STATUS_NONE;
    inside_ktime--;
    if (r != CUDA_SUCCESS)
        return cuda_failed(t, r);
    return st == CU_STREAM_CAPTURE_STATUS_NONE ? KTIME_OK : KTIME_ERR_CAPTURE;
}

KTIME_EXPORT int ktime_gpu_timer_start(ktime_gpu_timer *t)
{
    int rc;

    if (!t)
        return KTIME_ERR_INVALID;
    rc = record(t, t->start);
    t->state = rc == KTIME_OK ? GPU_RUNNING : GPU_IDLE;
    return rc;
}

KTIME_EXPORT int ktime_gpu_timer_stop(ktime_gpu_timer *t)
{
    int rc;

    if (!t)
        return KTIME_ERR_INVALID;
    if (t->state != GPU_RUNNING)
        return KTIME_ERR_STATE;
    rc = record(t, t->stop);
    t->state = rc == KTIME_OK ? GPU_STOPPED : GPU_IDLE;
    return rc;
}

KTIME_EXPORT int ktime_gpu_timer_elapsed_ms(ktime_gpu_timer *t, float *ms, int wait)
{
    float v = 0.0f;
    CUresult r = CUDA_SUCCESS;

    if (!t || !ms)
        return KTIME_ERR_INVALID;
    if (t->state == GPU_DONE) {
        *ms = t->ms;
        return KTIME_OK;
    }
    if (t->state != GPU_STOPPED)
        return KTIME_ERR_STATE;
    inside_ktime++;
    if (wait)
        r = drv.EventSynchronize(t->stop);
    /* The v2 ABI (CUDA 12.8) reads only the two timestamps; the first also looks for errors
     * of pending work in the whole context (driver.c's ev_elapsed). NOT_READY either way while
     * either event is pending. */
    if (r == CUDA_SUCCESS)
        r = drv.EventElapsedTime2 ? drv.EventElapsedTime2(&v, t->start, t->stop)
                                  : drv.EventElapsedTime(&v, t->start, t->stop);
    inside_ktime--;
    if (r == CUDA_ERROR_NOT_READY && !wait)
        return KTIME_NOT_READY;
    if (r != CUDA_SUCCESS)
        return cuda_failed(t, r);
    t->ms = v;
    t->state = GPU_DONE;
    *ms = v;
    return KTIME_OK;
}

KTIME_EXPORT int ktime_gpu_timer_cuda_error(const ktime_gpu_timer *t)
{
    return t ? (int)t->cuda_error : 0;
}

KTIME_EXPORT int ktime_gpu_timer_destroy(ktime_gpu_timer *t)
{
    CUresult a, b;

    if (!t)
        return KTIME_OK;
    inside_ktime++;
    a = drv.EventDestroy(t->start);
    b = drv.EventDestroy(t->stop);
    inside_ktime--;
    free(t);
    return a == CUDA_SUCCESS && b == CUDA_SUCCESS ? KTIME_OK : KTIME_ERR_CUDA;
}
