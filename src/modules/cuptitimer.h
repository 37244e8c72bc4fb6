/* cuptitimer.h - the CUPTI timer (KTIME_TIMER=cupti or both): kernel durations from CUPTI
 * activity records. libcupti is loaded at run time; ktime uses only the activity API (it
 * never subscribes, which would blind torch.profiler and Nsight), hands CUPTI over to any
 * other client that arrives, and then times with events. */
#ifndef KTIME_CUPTITIMER_H
#define KTIME_CUPTITIMER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "hw.h"
#include "rangestack.h"
#include "state.h"

/* Nonzero while CUPTI's kernel records are switched off (cuptitimer_switch); and the launches
 * made meanwhile, by kernel-table id (allocated at start-up only with KTIME_BUDGET under
 * KTIME_TIMER=cupti, else NULL). */
extern _Atomic int cuptitimer_off;
extern _Atomic uint64_t *cuptitimer_unrecorded;

/* The launch path, for a launch about to run that CUPTI would record (past warmup or not):
 * counts it as unrecorded while the records are switched off. One relaxed load otherwise. */
static inline void cuptitimer_count_unrecorded(const struct ktab_entry *k)
{
    if (atomic_load_explicit(&cuptitimer_off, memory_order_relaxed) && cuptitimer_unrecorded)
        atomic_fetch_add_explicit(&cuptitimer_unrecorded[ktab_id(&kt.ktab, k)], 1,
                                  memory_order_relaxed);
}

/* Switches CUPTI's kernel records on or off for the launches that follow (KTIME_BUDGET's duty
 * cycle, from the drain thread). Off, launches are counted as unrecorded: switched off after
 * cuptiActivityDisable and on before cuptiActivityEnable, so that no launch counted as
 * unrecorded brings a record. Does nothing and returns false when CUPTI is not ktime's (never
 * started, handed over to another client, a forked child) or refuses; true when the records
 * are now as asked. Never from an exit handler. */
bool cuptitimer_switch(bool on);

/* The launches made while the records were off, since the start or the last ktime ctl reset
 * (cuptireport.c). */
uint64_t cuptitimer_unrecorded_total(void);

/* The on-off switches made so far (each off counts one). */
uint64_t cuptitimer_switches(void);

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

/* r's timer as it worked out so far (timer, timer_requested, timer_note, CUPTI's library and
 * figures). Returns whether CUPTI's records are the rows' samples (KTIME_TIMER=cupti, and
 * CUPTI started). Any thread. */
struct report;
bool cuptitimer_describe(struct report *r);

/* The launch about to be made in range (rangestack.h's id, 0: none; in KTIME_CAPTURE's capture
 * range) carries ktime's external correlation id, so that its kernel records are attributed: pushes
 * it on the calling thread's CUPTI stack. Returns true when pushed (cuptitimer_pop() must
 * follow the real call); false when CUPTI gives no launch records. The launch path: one call
 * into libcupti. */
bool cuptitimer_push(uint32_t range);

/* Pops what cuptitimer_push() pushed, after the real call. */
void cuptitimer_pop(void);

/* The launch path, before the real call of a launch CUPTI's records time: carries the
 * thread's open range (or KTIME_CAPTURE's capture range) to its records. Inline: two tests
 * while no range is open and KTIME_CAPTURE is off. Returns true when it pushed. */
extern __thread bool cuptitimer_in_runtime __attribute__((tls_model("initial-exec")));

static inline bool cuptitimer_range_before(void)
{
    uint32_t range = range_current();

    return (range || kt.cfg.capture != CAPTURE_ALL) && !cuptitimer_in_runtime &&
           cuptitimer_push(range);
}

/* The runtime's launch entry points (libktime's exports), before the real one: the same push,
 * made before the runtime is entered, since CUPTI gives a runtime launch's kernels the
 * runtime call's correlation id and an id pushed in the driver call inside it would name
 * that call only. The driver-level push inside is then left out. Returns true when pushed
 * (cuptitimer_runtime_after() must follow the real call). */
bool cuptitimer_runtime_before(void);

/* After the real runtime call: pops what cuptitimer_runtime_before() pushed. */
void cuptitimer_runtime_after(void);

/* CUPTI's records, by kernel (the drain thread's, or the exit path's once it stopped). */
struct hw *cuptitimer_records(void);

#endif
