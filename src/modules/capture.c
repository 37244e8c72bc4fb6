/* capture.c - the capture range (KTIME_RANGE, capture.h): its state, the cuProfilerStart/Stop
 * and NVTX marks that open and close it, its report fields. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "capture.h"

#include <stdlib.h>

#include "log.h"
#include "module.h"
#include "region.h"

_Atomic int capture_open;
_Atomic uint64_t *capture_outside;

/* The marks seen (cuProfilerStart/Stop calls, or pushes and pops of NAME), and the ranges
 * they opened. */
static _Atomic uint64_t starts, stops, opened;
static uint32_t nvtx_id; /* KTIME_RANGE=nvtx:NAME: NAME's range id (region.h) */

void capture_mark(bool start, CUresult r)
{
    /* A failed call changes nothing for a profiler either (no context, say). */
    if (kt.cfg.range == RANGE_ALL || r != CUDA_SUCCESS)
        return;
    atomic_fetch_add_explicit(start ? &starts : &stops, 1, memory_order_relaxed);
    if (atomic_exchange_explicit(&capture_open, start, memory_order_relaxed) != start && start)
        atomic_fetch_add_explicit(&opened, 1, memory_order_relaxed);
    log_debug("%s: capture range %s", start ? "cuProfilerStart" : "cuProfilerStop",
              start ? "open" : "closed");
}

/* KTIME_RANGE=nvtx:NAME: the capture range is open while any thread has a range NAME open. */
static void nvtx_watch(uint32_t id, uint64_t open_now, bool push)
{
    if (id != nvtx_id)
        return;
    atomic_fetch_add_explicit(push ? &starts : &stops, 1, memory_order_relaxed);
    if (push && open_now == 1)
        atomic_fetch_add_explicit(&opened, 1, memory_order_relaxed);
    atomic_store_explicit(&capture_open, open_now > 0, memory_order_relaxed);
}

static bool capture_start(void)
{
    atomic_store(&capture_open, 0);
    atomic_store(&starts, 0);
    atomic_store(&stops, 0);
    atomic_store(&opened, 0);
    free(capture_outside);
    capture_outside = NULL;
    atomic_store(&region_watch, NULL);
    if (kt.cfg.range == RANGE_ALL)
        return false;
    if (!(capture_outside = calloc((size_t)kt.ktab.mask + 1, sizeof *capture_outside))) {
        log_warn("out of memory at start-up; KTIME_RANGE is off (every launch is timed)");
        kt.cfg.range = RANGE_ALL;
        return false;
    }
    if (kt.cfg.range == RANGE_NVTX) {
        nvtx_id = region_intern(kt.cfg.range_name);
        atomic_store(&region_watch, nvtx_watch);
    }
    return true;
}

static void capture_header(struct report *r)
{
    static char range[300];

    r->range = config_value(&kt.cfg, SETTING_RANGE, range, sizeof range);
    r->range_starts = atomic_load(&starts);
    r->range_stops = atomic_load(&stops);
    r->ranges = atomic_load(&opened);
    r->range_open = atomic_load(&capture_open);
}

static void capture_entry(uint32_t id, struct report_kernel *part)
{
    part->outside_range += atomic_load(&capture_outside[id]);
}

const struct ktime_module capture_module = {
    .name = "capture",
    .start = capture_start,
    .header = capture_header,
    .entry = capture_entry,
};
