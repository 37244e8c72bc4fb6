/* capture.h - the capture range (KTIME_RANGE): which launches are timed. With
 * KTIME_RANGE=profiler-api the range is open between a cuProfilerStart and the next
 * cuProfilerStop; with nvtx:NAME, while any thread has an NVTX range NAME open. Past their
 * warmup, launches outside it are only counted. */
#ifndef KTIME_CAPTURE_H
#define KTIME_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "state.h"

/* The module's state that the launch path reads (capture.c owns it): 1 while the capture
 * range is open; launches past warmup made outside it, by kernel-table id (NULL when
 * KTIME_RANGE is off). */
extern _Atomic int capture_open;
extern _Atomic uint64_t *capture_outside;

/* The launch path, for a launch of k past its warmup: whether KTIME_RANGE keeps it from being
 * timed (then it is counted as outside the range). Inline: a setting's test when it is off. */
static inline bool capture_excludes(const struct ktab_entry *k)
{
    if (kt.cfg.range == RANGE_ALL || atomic_load_explicit(&capture_open, memory_order_relaxed))
        return false;
    atomic_fetch_add_explicit(&capture_outside[ktab_id(&kt.ktab, k)], 1, memory_order_relaxed);
    return true;
}

/* cuProfilerStart (start) or cuProfilerStop returned r: with KTIME_RANGE=profiler-api, a
 * successful call opens or closes the capture range. Counts the calls. Any thread. */
void capture_mark(bool start, CUresult r);

#endif
