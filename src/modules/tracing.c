/* tracing.c - the trace (KTIME_TRACE, tracing.h): the timeline's samples (trace.h), each
 * pool's reference event, and the trace file written after the report. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "tracing.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cuptitimer.h"
#include "driver.h"
#include "log.h"
#include "module.h"
#include "outpath.h"
#include "output.h"
#include "state.h"
#include "trace.h"

/* The timeline's slices: the drain thread's (the exit path's once it stopped). */
static struct trace timeline;

static const char *env_get(const char *name)
{
    return getenv(name);
}

void tracing_anchor(struct pool *p, CUstream es)
{
    int expected = 0;
    struct timespec now;

    if (!atomic_compare_exchange_strong(&p->anchor_state, &expected, 1))
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    p->anchor_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    atomic_store_explicit(&p->anchor_state,
                          drv.EventRecord((CUevent)p->anchor, es) == CUDA_SUCCESS ? 2 : 3,
                          memory_order_release);
}

static bool tracing_start(void)
{
    trace_free(&timeline);
    if (!kt.cfg.trace)
        return false;
    trace_init(&timeline, (uint64_t)kt.cfg.trace_max);
    kt.drain.trace = &timeline;
    /* With KTIME_TIMER=both the table is the events': CUPTI's records stay off the trace. */
    if (kt.cfg.timer == TIMER_CUPTI)
        cuptitimer_records()->trace = &timeline;
    return true;
}

/* The pool's reference event (without one, its context's launches stay off the timeline). */
static void tracing_pool_made(struct pool *p, CUdevice dev)
{
    void *unused = NULL;

    if (driver_event_ops.create(p->ctx, &p->anchor, &unused) != 0)
        p->anchor = NULL;
}

static const char *kernel_name(uint32_t id)
{
    return id <= kt.ktab.mask ? atomic_load(&kt.ktab.slots[id].name) : NULL;
}

/* The timeline of the timed launches, once the drain has stopped adding to it. */
static void tracing_after_report(const struct module_end *e)
{
    char path[PATH_MAX], host[256];
    struct output o;
    const char *why = NULL;

    if (!e->stopped)
        return;
    if (outpath_resolve("KTIME_TRACE", kt.cfg.trace, kt.start_dir, (long)getpid(),
                        outpath_hostname(host, sizeof host), path, sizeof path, env_get) != 0) {
        log_warn("KTIME_TRACE '%s' is too long once expanded; no trace written", kt.cfg.trace);
        return;
    }
    if (output_open(&o, path, kt.cfg.exit_wait_ms, &why) != 0) {
        log_warn("KTIME_TRACE '%s' %s; no trace written", path, why);
        return;
    }
    int rc = trace_write(o.f, &timeline, kernel_name, PACKAGE_VERSION);
    if (output_close(&o, rc != 0, &why) != 0) {
        log_warn("writing KTIME_TRACE '%s' failed (%s)", path, why);
        return;
    }
    if (timeline.dropped)
        log_warn("KTIME_TRACE: %llu timed launches past the first %llu are not in the trace "
                 "(KTIME_TRACE_MAX)", (unsigned long long)timeline.dropped,
                 (unsigned long long)timeline.max);
    log_info("trace written to %s (%llu kernel runs)", path, (unsigned long long)timeline.n);
}

const struct ktime_module tracing_module = {
    .name = "tracing",
    .start = tracing_start,
    .pool_made = tracing_pool_made,
    .after_report = tracing_after_report,
};
