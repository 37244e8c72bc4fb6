/* floor.c - the timing floor: an empty kernel's event interval on each device, the smallest
 * time the events timer can report, measured at the end of the run and printed in the
 * report's header so that kernels near it stand out. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "floor.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuptitimer.h"
#include "driver.h"
#include "log.h"
#include "module.h"
#include "state.h"

#define FLOOR_LAUNCHES 33

/* Any device since sm_50 JIT-compiles it. */
static const char floor_ptx[] =
    "//\n"
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry " FLOOR_KERNEL "()\n"
    "{\n"
    "\tret;\n"
    "}\n";

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool have_functions(void)
{
    return drv.ModuleLoadData && drv.ModuleGetFunction && drv.ModuleUnload && drv.StreamCreate &&
           drv.StreamDestroy && drv.EventDestroy && drv.LaunchKernel && drv.MemHostAlloc &&
           drv.MemHostGetDevicePointer && drv.MemFreeHost && drv.StreamWaitValue32 &&
           drv.DevicePrimaryCtxGetState && drv.DevicePrimaryCtxRetain &&
           drv.DevicePrimaryCtxRelease;
}

/* Opens the gate after 20 ms if the measuring thread has not: a tool that waits for every
 * kernel inside the launch call (compute-sanitizer does) would otherwise wait forever on the
 * first launch behind it. */
struct opener {
    volatile uint32_t *gate;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, forced;
};

static void *open_late(void *arg)
{
    struct opener *o = arg;
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&o->mu);
    while (!o->done && pthread_cond_timedwait(&o->cv, &o->mu, &until) == 0)
        ;
    if (!o->done) {
        o->forced = true;
        __atomic_store_n(o->gate, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* Opens the gate whatever happened, and ends the opener thread. */
static void opener_end(struct opener *o, pthread_t t)
{
    pthread_mutex_lock(&o->mu);
    o->done = true;
    __atomic_store_n(o->gate, 1, __ATOMIC_RELEASE);
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    pthread_join(t, NULL);
}

/* Queues the gate's wait, then FLOOR_LAUNCHES launches of f on s, each between its pair of
 * ev; counts those that succeeded in *launched. Returns the first failure, or CUDA_SUCCESS. */
static CUresult queue_launches(CUstream s, CUdeviceptr gate_dev, CUfunction f, CUevent *ev,
                               int *launched)
{
    void *noargs[1] = { NULL }; /* no parameters; a tool may still read the array */
    CUresult r = drv.StreamWaitValue32(s, gate_dev, 1, CU_STREAM_WAIT_VALUE_EQ);

    for (int i = 0; r == CUDA_SUCCESS && i < FLOOR_LAUNCHES; i++) {
        r = drv.EventRecord(ev[2 * i], s);
        if (r == CUDA_SUCCESS)
            r = drv.LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, noargs, NULL);
        if (r == CUDA_SUCCESS) {
            (*launched)++;
            r = drv.EventRecord(ev[2 * i + 1], s);
        }
    }
    return r;
}

/* Waits at most wait_ms for event e; returns its last query's result. */
static CUresult wait_event(CUevent e, long wait_ms)
{
    double deadline = now_ms() + (double)wait_ms;
    CUresult r;

    while ((r = drv.EventQuery(e)) == CUDA_ERROR_NOT_READY && now_ms() < deadline) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    return r;
}

/* The median of the pairs' intervals, in us, or 0 when too few could be read. */
static double median_us(const CUevent *ev)
{
    float ms[FLOOR_LAUNCHES];
    int ok = 0;

    for (int i = 0; i < FLOOR_LAUNCHES; i++)
        if ((drv.EventElapsedTime2 ? drv.EventElapsedTime2(&ms[ok], ev[2 * i], ev[2 * i + 1])
                                   : drv.EventElapsedTime(&ms[ok], ev[2 * i], ev[2 * i + 1])) ==
            CUDA_SUCCESS)
            ok++;
    if (ok <= FLOOR_LAUNCHES / 2)
        return 0;
    qsort(ms, (size_t)ok, sizeof ms[0], cmp_float);
    return (double)ms[ok / 2] * 1000.0;
}

/* In the current context. Returns the median interval in us, or 0; *launched gets the
 * launches that reached the GPU (each brings a CUPTI record when the CUPTI timer is on). */
static double measure(CUcontext ctx, long wait_ms, int *launched)
{
    struct opener op = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    pthread_t opener_thread;
    bool opener_started = false;
    CUevent ev[2 * FLOOR_LAUNCHES] = { 0 };
    CUmodule mod = NULL;
    CUfunction f;
    CUstream s = NULL;
    volatile uint32_t *gate = NULL;
    CUdeviceptr gate_dev;
    double result = 0;
    int made = 0;
    CUresult r = CUDA_ERROR_UNKNOWN;

    if (drv.ModuleLoadData(&mod, floor_ptx) != CUDA_SUCCESS) {
        mod = NULL;
        goto out;
    }
    if (drv.ModuleGetFunction(&f, mod, FLOOR_KERNEL) != CUDA_SUCCESS ||
        drv.StreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        drv.MemHostAlloc((void **)&gate, 4, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS ||
        drv.MemHostGetDevicePointer(&gate_dev, (void *)gate, 0) != CUDA_SUCCESS)
        goto out;
    *gate = 0;
    /* Under the CUPTI timer the records of this stream are the floor's, whatever CUPTI calls
     * them (it has named them after a kernel of a module the program unloaded). */
    cuptitimer_own_stream(ctx, s, FLOOR_KERNEL);
    for (made = 0; made < 2 * FLOOR_LAUNCHES; made++)
        if (drv.EventCreate(&ev[made], CU_EVENT_DEFAULT) != CUDA_SUCCESS)
            goto out;
    /* Everything queued behind the gate, then let go: the GPU runs it back to back, as it
     * runs a gated launch's start event, kernel and stop event. */
    op.gate = gate;
    opener_started = pthread_create(&opener_thread, NULL, open_late, &op) == 0;
    if (!opener_started)
        goto out;
    r = queue_launches(s, gate_dev, f, ev, launched);
    opener_end(&op, opener_thread);
    opener_started = false;
    if (op.forced) {
        log_debug("the floor's launches blocked behind their gate (an instrumenting tool?); "
                  "not measured");
        r = CUDA_ERROR_NOT_READY; /* the intervals are not the gated ones: discard them */
        wait_event(ev[2 * FLOOR_LAUNCHES - 1], wait_ms);
        goto out;
    }
    if (r == CUDA_SUCCESS && (r = wait_event(ev[2 * FLOOR_LAUNCHES - 1], wait_ms)) == CUDA_SUCCESS)
        result = median_us(ev);
out:
    if (opener_started)
        opener_end(&op, opener_thread);
    /* A stream still held would never finish: never destroy what did not complete. */
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY || !s) {
        for (int i = 0; i < made; i++)
            drv.EventDestroy(ev[i]);
        if (s && r == CUDA_SUCCESS)
            drv.StreamDestroy(s);
        if (gate && r == CUDA_SUCCESS)
            drv.MemFreeHost((void *)gate);
    }
    if (mod && r == CUDA_SUCCESS)
        drv.ModuleUnload(mod);
    return result;
}

static bool instrumented(void)
{
    static const char *const tools[] = { "libsanitizer-public.so", "libsanitizer-collection.so",
                                         "libcuda-injection.so", "libToolsInjection64.so" };

    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        void *h = dlopen(tools[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            log_debug("%s is loaded: the timing floor is not measured", tools[i]);
            return true;
        }
    }
    return false;
}

int floor_measure(struct report_device *devs, int n, long wait_ms)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    int launched = 0;

    /* An injected or preloaded tool (compute-sanitizer, Nsight) instruments or serializes
     * launches: the floor would measure the tool, and compute-sanitizer can crash in a launch
     * made at exit. It sets no CUDA_INJECTION64_PATH: its libraries are looked for by name. */
    if (!have_functions() || (inj && *inj) || instrumented())
        return 0;
    for (int i = 0; i < n; i++) {
        CUdevice dev = (CUdevice)devs[i].ordinal;
        CUcontext pc = NULL, popped;
        unsigned int flags;
        int active = 0;

        /* Only where the program's primary context still lives: never make one at exit. */
        if (drv.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
            drv.DevicePrimaryCtxRetain(&pc, dev) != CUDA_SUCCESS)
            continue;
        if (drv.CtxPushCurrent(pc) == CUDA_SUCCESS) {
            /* Only what was launched: the exit waits for a CUPTI record of each. */
            devs[i].floor_events_us = measure(pc, wait_ms, &launched);
            drv.CtxPopCurrent(&popped);
        }
        drv.DevicePrimaryCtxRelease(dev);
        if (devs[i].floor_events_us == 0)
            log_debug("could not measure the timing floor of device %d", devs[i].ordinal);
    }
    return launched;
}

/* At exit, not on a signal (time is short then), with the drain stopped: the floor of each
 * device, in its report entry; its launches are ktime's own (the CUPTI timer waits for their
 * records too). */
static void floor_stop(struct module_end *e)
{
    int launched = 0;

    log_debug("exit: the floor");
    if (e->stopped && !e->deadline_ms && ktime_driver_ready())
        launched = floor_measure(kt.devices, atomic_load(&kt.ndevices),
                                 kt.cfg.exit_wait_ms < 500 ? kt.cfg.exit_wait_ms : 500);
    log_debug("exit: floor done (%d launches)", launched);
    e->own_launches += (uint64_t)launched;
}

const struct ktime_module floor_module = {
    .name = "floor",
    .stop = floor_stop,
};
