/* capture.h - the capture range (KTIME_CAPTURE): which launches are timed. With
 * KTIME_CAPTURE=profiler-api the range is open between a cuProfilerStart and the next
 * cuProfilerStop; with nvtx:NAME, while any thread has an NVTX range NAME open. Past their
 * warmup, launches outside it are only counted. */
#ifndef KTIME_CAPTURE_H
#define KTIME_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "state.h"

/* The module's state that the launch path adds to (capture.c owns it): launches past warmup
 * made outside the capture range, by kernel-table id (NULL when KTIME_CAPTURE is off). Whether
 * the range is open is kt.hold's HOLD_CAPTURE (state.h), which the launch path reads. */
extern _Atomic uint64_t *capture_outside;

/* The launch path, for a launch of k past its warmup that kt.hold's HOLD_CAPTURE keeps from
 * being timed: counts it as outside the range. */
static inline void capture_count_outside(const struct ktab_entry *k)
{
    atomic_fetch_add_explicit(&capture_outside[ktab_id(&kt.ktab, k)], 1, memory_order_relaxed);
}

/* cuProfilerStart (start) or cuProfilerStop returned r: with KTIME_CAPTURE=profiler-api, a
 * successful call opens or closes the capture range. Counts the calls. Any thread. */
void capture_mark(bool start, CUresult r);

#endif
