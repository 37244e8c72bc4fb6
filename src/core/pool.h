/* pool.h - per-context pools of event pairs. The core sees events and contexts only as
 * opaque pointers; the CUDA layer supplies the operations on them. */
#ifndef KTIME_POOL_H
#define KTIME_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpmc.h"
#include "shape.h"

/* What the core needs done to events, supplied by the CUDA layer (or by a test). */
struct event_ops {
    /* Creates a start/stop pair in ctx. Returns 0 on success. Called off the launch path. */
    int (*create)(void *ctx, void **start, void **stop);
    /* Returns 0 when stop has completed, 1 while it is pending, -2 when its context was
     * destroyed, -1 on any other error. */
    int (*query)(void *stop);
    /* Stores the stop - start interval in milliseconds. Returns 0 on success, 1 if either
     * event is still pending, -2 when their context was destroyed, -1 on any other error.
     * The drain calls it only on pairs a query found complete: compute-sanitizer reports a
     * NOT_READY from cuEventElapsedTime as an API error, not from cuEventQuery. */
    int (*elapsed)(void *start, void *stop, float *ms);
    /* Optional: called once on the drain thread before its first pass, so that its queries
     * are allowed (and harmless) while other threads capture streams. */
    void (*thread_start)(void);
};

struct pool_slot {
    void *start, *stop;   /* the event pair */
    uintptr_t stream;     /* the stream it was recorded on (completion order is per stream) */
    uint32_t kernel;      /* ktab id of the launch */
    struct kshape shape;  /* its grid, block and dynamic shared memory (0s: a graph) */
    uint64_t bytes;       /* a memory operation's bytes (0: a launch) */
    uint16_t range;       /* the range (rangestack.h) open on the launching thread, 0: none */
    uint32_t api_ns;      /* the launch call's wall time, ns (saturated); 0: not measured */
    uint8_t level;        /* drawn at a rate of 1 in 2^level: the sample stands for 2^level
                           * launches (KTIME_BUDGET; 0 otherwise) */
    uint32_t seq;         /* the last value its gate word was given (never reused soon) */
    uint32_t gen;         /* this launch's gate value, 0 when not gated */
    _Atomic uint32_t gate_closed; /* gen while the stream waits on the gate, else 0 */
    _Atomic uint32_t forced;      /* gen the watchdog had to open: the sample is void */
    uint32_t watch_seen;          /* the watchdog's memory of gate_closed */
};

struct pool {
    void *ctx;                  /* opaque context the events belong to */
    int device;                 /* device ordinal of ctx */
    uint32_t cap;               /* most slots this pool may create */
    _Atomic uint32_t created;   /* slots that hold events */
    _Atomic int want_grow;      /* set by a launch that found the pool empty */
    struct pool_slot *slots;    /* cap entries */
    struct mpmc free_q;         /* ids of free slots */
    struct mpmc submit_q;       /* ids of recorded slots, for the drain */
    /* Launch gates: one pinned host word per slot that the stream waits on before the
     * start event, opened once the launch is queued (see launch.c). NULL: no gating. */
    volatile uint32_t *gate_host;
    uint64_t gate_dev;          /* device address of gate_host[0] */
    _Atomic int retiring;       /* its context is going away: no new launches use it */
    double retire_deadline_ms;  /* CLOCK_MONOTONIC ms after which pending pairs are abandoned */
    _Atomic int dead;           /* retired: its events are gone with the context */
    _Atomic int gone;           /* its context was destroyed before it could retire: no call
                                 * on its events any more (set with retiring) */
    bool primary;               /* ctx is its device's primary context */
    /* KTIME_FLUSH_L2: a device buffer at least the size of the device's L2, overwritten on
     * the launch's stream before each timed launch's start event; 0 when off or not had. */
    uint64_t flush_ptr;
    uint64_t flush_bytes;
    /* KTIME_TRACE: the reference event the samples are placed against on the timeline,
     * recorded before the first timed launch's start event (anchor_state 0 not yet, 1 being
     * recorded, 2 recorded at CLOCK_MONOTONIC anchor_ns, 3 failed). The drain moves it
     * forward to a later start event (anchor_slot, kept out of use) before the float
     * milliseconds of cuEventElapsedTime lose precision. NULL: no trace. */
    void *anchor;
    _Atomic int anchor_state;
    uint64_t anchor_ns;
    uint32_t anchor_slot;       /* drain thread: slot whose start event is the reference now,
                                 * or UINT32_MAX (the anchor itself) */
    uint64_t ref_ns;            /* drain thread: the reference's time, 0 until first used */
    /* One bit per ktab id: kernels launched (bracketed) in this context before. A kernel's
     * first launch in a context may load its module there, which waits for the stream, so
     * it is never gated. NULL: only a kernel's very first launch is spared. */
    _Atomic uint64_t *seen;
    /* Owned by the drain thread: */
    uint32_t grow_from, grow_to; /* a growth in progress, a step per pass (see drain.c) */
    uint32_t *pending;          /* ids taken from submit_q, not yet complete */
    uint32_t npending;
    uint32_t *scratch;          /* cap entries: pending positions grouped by stream */
};

/* Sets up p for ctx with room for cap slots, and creates the first `initial` pairs.
 * Returns 0, or -1 when out of memory or when no event could be created. */
int pool_init(struct pool *p, const struct event_ops *ops, void *ctx, int device,
              uint32_t cap, uint32_t initial);

/* Frees the memory of a pool that was never published (its events, if any, stay).
 * Only by the thread that ran pool_init(). */
void pool_free_memory(struct pool *p);

/* Creates up to n more pairs (not past cap). Returns how many were made. One grower at
 * a time: the thread that runs pool_init, then only the drain thread. */
uint32_t pool_grow(struct pool *p, const struct event_ops *ops, uint32_t n);

/* Takes a free slot. Returns false when none is free (and asks the drain to grow).
 * Any thread; lock-free, never waits. */
static inline bool pool_acquire(struct pool *p, uint32_t *slot)
{
    if (mpmc_pop(&p->free_q, slot))
        return true;
    atomic_store_explicit(&p->want_grow, 1, memory_order_relaxed);
    return false;
}

/* Gives back a slot whose pair was not submitted. Any thread; lock-free. */
static inline void pool_release(struct pool *p, uint32_t slot)
{
    mpmc_push(&p->free_q, slot); /* cannot fail: each id is in one place only */
}

/* Hands a recorded slot to the drain. Any thread; lock-free. */
static inline void pool_submit(struct pool *p, uint32_t slot)
{
    mpmc_push(&p->submit_q, slot);
}

/* Marks kernel `id` (a ktab id) as launched in p's context. Returns true for exactly one
 * call per id, the first, however many threads launch it there at the same moment; false
 * for every later one. p->seen must be set. Any thread; lock-free; after the first, one
 * load. */
static inline bool pool_first_launch(struct pool *p, uint32_t id)
{
    _Atomic uint64_t *w = &p->seen[id >> 6];
    uint64_t bit = (uint64_t)1 << (id & 63);

    if (atomic_load_explicit(w, memory_order_relaxed) & bit)
        return false;
    /* Two threads may both find the bit clear: the one that sets it is the first. */
    return !(atomic_fetch_or_explicit(w, bit, memory_order_relaxed) & bit);
}

/* The gate watchdog's pass over p: opens every gate found closed, with the same value,
 * at the previous pass too, and marks its slot forced. A launch that blocks inside the
 * driver on work queued behind its own gate (lazy module loading, a local-memory resize,
 * another thread's device-wide sync) would otherwise never return. Returns how many gates
 * it opened, and adds to *closed how many it found closed. One watchdog thread; it never
 * calls CUDA. */
uint32_t pool_gate_watch(struct pool *p, uint32_t *closed);

#endif
