/* drain.h - the background thread that turns completed event pairs into per-kernel,
 * per-device aggregates and gives the pairs back to their pools. */
#ifndef KTIME_DRAIN_H
#define KTIME_DRAIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include "pool.h"
#include "shape.h"
#include "trace.h"
#include "sketch.h"
#include "stats.h"

#define DRAIN_MAX_POOLS 256

/* One kernel on one device. */
struct agg {
    uint64_t key;          /* range << 48 | kernel id << 16 | device */
    uint32_t kernel;       /* ktab id */
    int device;
    uint16_t range;        /* the range the launches were made in (rangestack.h), 0: none */
    struct stats st;       /* timed samples, in microseconds */
    struct sketch sk;      /* the same samples' distribution (quantiles) */
    double wsum;           /* the samples' sum, each counted as the launches it stands for
                            * (2^level under KTIME_BUDGET, else once), in microseconds */
    uint64_t wn;           /* the launches they stand for */
    uint64_t errors;       /* pairs the driver could not resolve (counted as dropped) */
    uint64_t forced;       /* samples voided by the gate watchdog (counted as dropped) */
    uint64_t ungated;      /* samples of launches that were not gated (in st) */
    uint64_t incomplete;   /* pairs still pending when the exit wait ran out */
    uint64_t bytes;        /* memory operations: the bytes of the timed samples (in st) */
    struct shape_set *shapes; /* the samples by launch shape, or NULL (none yet) */
    UT_hash_handle hh;
};

/* One sample as the modules see it (drain.record): a timed launch, where it ran, when (on the
 * timeline of its context's reference event, when placed) and its launch call's time. */
struct drain_out {
    uint32_t kernel;       /* ktab id */
    int device;
    uintptr_t stream;      /* unique per context (per thread for per-thread streams) */
    uint16_t range;        /* the range it was launched in, 0: none */
    bool placed;           /* start_ns is known */
    uint64_t start_ns;     /* CLOCK_MONOTONIC-based, when placed */
    uint64_t dur_ns;       /* the event interval */
    uint32_t api_ns;       /* the launch call's wall time, 0: not measured */
};

struct drain {
    const struct event_ops *ops;
    struct pool *pools[DRAIN_MAX_POOLS];
    _Atomic uint32_t npools;
    struct agg *aggs;            /* uthash, by key; drain thread only while it runs */
    struct agg *last_agg;        /* the aggregate found last (one of aggs), or NULL */
    void (*_Atomic records)(void); /* called by the drain thread on every pass, if set: parses
                                  * CUPTI's record buffers; set while it runs, hence atomic */
    void (*_Atomic tick)(void);  /* called by the drain thread after every pass, outside
                                  * pass_lock, if set (snapshots, the control channel) */
    struct trace *trace;         /* KTIME_TRACE: every sample placed on the timeline, or NULL;
                                  * set before the thread starts */
    void (*sample)(uint32_t kernel, int device, double us); /* every sample folded, if set
                                  * (KTIME_DUMP_SAMPLES); set before the thread starts */
    void (*record)(const struct drain_out *o); /* every sample folded, if set (the modules);
                                  * set before the thread starts */
    bool place;                  /* place every sample on the timeline (pools get a reference
                                  * event), not only the trace's; set before the first pool */
    uint64_t unplaced;           /* samples that could not be placed (drain thread) */
    uint64_t (*grow_clock)(void); /* CLOCK_MONOTONIC ns, what a growth step is timed by
                                   * (drain_init sets it; a test may replace it) */
    pthread_mutex_t pass_lock;   /* held by the drain thread through each pass; taken by a
                                  * thread releasing a primary context, never on a launch */
    pthread_mutex_t wake_mu;     /* with wake_cv: drain_stop() ends the thread's sleep */
    pthread_cond_t wake_cv;
    pthread_t thread;
    _Atomic bool started;        /* the thread runs: set by drain_start (under wake_mu),
                                  * cleared by drain_stop once joined; read by any thread */
    _Atomic int stop;
    /* What the drain cost, for KTIME_LOG=debug: written by whoever drains, read at exit.
     * The *_ns times are wall time inside the calls, kept only when `self_timing` is set (two
     * clock reads per driver call, on the drain thread only); cpu_ns is the drain thread's
     * own CPU time over its passes. */
    bool self_timing;
    uint64_t passes, queries, queries_pending, elapsed_calls;
    uint64_t query_ns, elapsed_ns, pass_ns, cpu_ns;
};

/* Prepares d. No thread yet. */
void drain_init(struct drain *d, const struct event_ops *ops);

/* Publishes a pool so that the drain polls it. Returns 0, or -1 when DRAIN_MAX_POOLS
 * are in use. Callers serialize among themselves (ktime holds its set-up mutex). */
int drain_add_pool(struct drain *d, struct pool *p);

/* One pass over p alone, with pass_lock held by the caller (any thread). */
uint32_t drain_pass_pool(struct drain *d, struct pool *p);

/* p's context was destroyed: counts its pending pairs incomplete without touching their
 * events, and marks it dead. With pass_lock held, or from the drain thread. */
void drain_pool_gone(struct drain *d, struct pool *p);

/* Starts the drain thread, unless it runs already or drain_stop() has been called (then
 * nothing: 0). Returns 0 or an errno value. Any thread. */
int drain_start(struct drain *d);

/* One pass over every pool: takes submitted pairs, folds completed ones, recycles them,
 * grows pools that ran short. Returns the number of pairs completed. Drain thread only
 * (or the owner of d once the thread has stopped). */
uint32_t drain_pass(struct drain *d);

/* Asks the thread to stop and waits for it at most wait_ms. Returns true when it has
 * stopped (or never started: none starts after this call). Any thread but the drain thread. */
bool drain_stop(struct drain *d, long wait_ms);

/* Polls until no pair is pending or wait_ms has passed, then counts what is left as
 * incomplete. Returns the number left incomplete. Only once the thread has stopped,
 * or from the drain thread itself. */
uint64_t drain_finish(struct drain *d, long wait_ms);

/* Forgets every aggregate: the samples and counts folded so far start afresh (ktime ctl
 * reset). Pairs still pending fold into new aggregates later. The drain thread, with
 * pass_lock held (or the owner of d once the thread has stopped). */
void drain_reset_aggs(struct drain *d);

/* CLOCK_MONOTONIC in milliseconds: the clock of pool retire deadlines. */
double drain_now_ms(void);

#endif
