/* cuptitimer.h - the CUPTI timer (KTIME_TIMER=cupti or both): kernel durations from CUPTI
 * activity records. libcupti is loaded at run time; ktime uses only the activity API (it
 * never subscribes, which would blind torch.profiler and Nsight), hands CUPTI over to any
 * other client that arrives, and then times with events. */
#ifndef KTIME_CUPTITIMER_H
#define KTIME_CUPTITIMER_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "hw.h"
#include "region.h"
#include "state.h"

/* What the timer did, for the report. */
struct cuptitimer_info {
    const char *library;    /* the libcupti in use, or NULL */
    bool started;           /* CUPTI timed launches (it may have been handed over since) */
    const char *note;       /* why CUPTI is not (or no longer) timing, or NULL */
    uint64_t dropped;       /* records CUPTI dropped (cuptiActivityGetNumDroppedRecords) */
    uint64_t refused;       /* buffers CUPTI asked for while the pool was empty */
    uint64_t buffers;       /* buffers of records parsed */
};

/* Starts CUPTI activity tracing of kernels when KTIME_TIMER asks for it, once: called at the
 * first launch, before the real call. On any failure, or when another CUPTI client or an
 * injected tool (CUDA_INJECTION64_PATH) is there, says why once and leaves kt.timing at
 * events. Takes ktime's set-up lock. */
void cuptitimer_start(void);

/* Parses the record buffers CUPTI has completed into the records (cuptitimer_records). The
 * drain thread, on every pass (or the exit path once the drain thread stopped). */
void cuptitimer_drain(void);

/* At exit, with the drain thread stopped: asks CUPTI for its records until the kernel
 * records of `expected` launches through ktime's wrappers have come or been dropped (or
 * wait_ms passed), then for the rest, incomplete ones included, and parses them. Never in
 * a forked child. */
void cuptitimer_finish(long wait_ms, uint64_t expected);

/* Another CUPTI client is registering buffers, enabling activity or finalizing CUPTI (what):
 * ktime flushes its records, lets go of CUPTI, and times later launches with events.
 * Called by the interposed CUPTI entry points on the client's thread, before the real call. */
void cuptitimer_foreign(const char *what);

/* The stream s of context ctx carries ktime's own launches of kernel name (a static
 * string): their records are counted under that name, whatever name CUPTI gives them.
 * Returns -1 when CUPTI never started for ktime or cannot say the stream's id (the records
 * then go by CUPTI's names). The exit path, after the stream is made, before its launches. */
int cuptitimer_own_stream(CUcontext ctx, CUstream s, const char *name);

void cuptitimer_info(struct cuptitimer_info *out);

/* The launch about to be made in range (region.h's id, 0: none; in KTIME_RANGE's capture range)
 * carries ktime's external correlation id, so that its kernel records are attributed: pushes
 * it on the calling thread's CUPTI stack. Returns true when pushed (cuptitimer_pop() must
 * follow the real call); false when CUPTI gives no launch records. The launch path: one call
 * into libcupti. */
bool cuptitimer_push(uint32_t range);

/* Pops what cuptitimer_push() pushed, after the real call. */
void cuptitimer_pop(void);

/* The launch path, before the real call of a launch CUPTI's records time: carries the
 * thread's open range (or KTIME_RANGE's capture range) to its records. Inline: two tests
 * while no range is open and KTIME_RANGE is off. Returns true when it pushed. */
static inline bool cuptitimer_range_before(void)
{
    uint32_t range = region_current();

    return (range || kt.cfg.range != RANGE_ALL) && cuptitimer_push(range);
}

/* CUPTI's records, by kernel (the drain thread's, or the exit path's once it stopped). */
struct hw *cuptitimer_records(void);

#endif
