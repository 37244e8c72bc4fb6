/* capture.c - the capture range (KTIME_CAPTURE, capture.h): its state, the cuProfilerStart/Stop
 * and NVTX marks that open and close it, its report fields. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "capture.h"

#include <stdlib.h>

#include "log.h"
#include "module.h"
#include "rangestack.h"

_Atomic uint64_t *capture_outside;

/* The marks seen (cuProfilerStart/Stop calls, or pushes and pops of NAME), and the ranges
 * they opened. */
static _Atomic uint64_t starts, stops, opened;
static uint32_t nvtx_id; /* KTIME_CAPTURE=nvtx:NAME: NAME's range id (rangestack.h) */
/* capture_outside at the last reset (ktime ctl reset), by kernel-table id, or NULL: the drain
 * thread's, read by it and by the exit path once it stopped. */
static uint64_t *outside_base;

void capture_mark(bool start, CUresult r)
{
    /* A failed call changes nothing for a profiler either (no context, say). */
    if (kt.cfg.capture == CAPTURE_ALL || r != CUDA_SUCCESS)
        return;
    atomic_fetch_add_explicit(start ? &starts : &stops, 1, memory_order_relaxed);
    if ((kt_hold(HOLD_CAPTURE, !start) & HOLD_CAPTURE) && start)
        atomic_fetch_add_explicit(&opened, 1, memory_order_relaxed);
    log_debug("%s: capture range %s", start ? "cuProfilerStart" : "cuProfilerStop",
              start ? "open" : "closed");
}

/* KTIME_CAPTURE=nvtx:NAME: the capture range is open while any thread has a range NAME open. */
static void nvtx_watch(uint32_t id, uint64_t open_now, bool push)
{
    if (id != nvtx_id)
        return;
    atomic_fetch_add_explicit(push ? &starts : &stops, 1, memory_order_relaxed);
    if (push && open_now == 1)
        atomic_fetch_add_explicit(&opened, 1, memory_order_relaxed);
    kt_hold(HOLD_CAPTURE, open_now == 0);
}

static bool capture_start(void)
{
    kt_hold(HOLD_CAPTURE, false);
    atomic_store(&starts, 0);
    atomic_store(&stops, 0);
    atomic_store(&opened, 0);
    free(capture_outside);
    capture_outside = NULL;
    free(outside_base);
    outside_base = NULL;
    atomic_store(&range_watch, NULL);
    if (kt.cfg.capture == CAPTURE_ALL)
        return false;
    if (!(capture_outside = calloc((size_t)kt.ktab.mask + 1, sizeof *capture_outside))) {
        log_warn("out of memory at start-up; KTIME_CAPTURE is off (every launch is timed)");
        kt.cfg.capture = CAPTURE_ALL;
        return false;
    }
    kt_hold(HOLD_CAPTURE, true); /* closed until the program opens it */
    if (kt.cfg.capture == CAPTURE_NVTX) {
        nvtx_id = range_intern(kt.cfg.capture_name);
        atomic_store(&range_watch, nvtx_watch);
    }
    return true;
}

static void capture_header(struct report *r)
{
    static char range[300];

    r->capture = config_value(&kt.cfg, SETTING_CAPTURE, range, sizeof range);
    r->capture_starts = atomic_load(&starts);
    r->capture_stops = atomic_load(&stops);
    r->capture_ranges = atomic_load(&opened);
    r->capture_still_open = !(atomic_load(&kt.hold) & HOLD_CAPTURE);
}

static void capture_entry(uint32_t id, struct report_kernel *part)
{
    uint64_t n = atomic_load(&capture_outside[id]), b = outside_base ? outside_base[id] : 0;

    part->outside_range += n > b ? n - b : 0;
}

/* The outside counts start afresh (the starts, stops and ranges opened do not). Without
 * memory for the base, they keep counting from the start. */
static void capture_reset(void)
{
    if (!outside_base && !(outside_base = calloc((size_t)kt.ktab.mask + 1, sizeof *outside_base)))
        return;
    for (uint32_t id = 0; id <= kt.ktab.mask; id++)
        outside_base[id] = atomic_load(&capture_outside[id]);
}

const struct ktime_module capture_module = {
    .name = "capture",
    .start = capture_start,
    .header = capture_header,
    .entry = capture_entry,
    .reset = capture_reset,
};
