/* launch.h - what every launch wrapper does around the real call. The fast path
 * (disabled, warmup) is inline: a phase check, a table lookup and a counter. */
#ifndef KTIME_LAUNCH_H
#define KTIME_LAUNCH_H

#include <stdbool.h>
#include <time.h>
#include <cuda.h>

#include "budget.h"
#include "capture.h"
#include "control.h"
#include "cuptitimer.h"
#include "reentry.h"
#include "state.h"

struct gate_hint;

struct launch {
    struct ktab_entry *k;
    struct pool *pool;
    uint32_t slot;
    CUstream stream;       /* where the events go: the per-thread stream made explicit */
    struct gate_hint *hint; /* KTIME_GATE=auto: what this thread knows of the stream */
    void *probe;           /* stop event of the stream's previous timed launch, to query */
    bool verify;           /* not gated: check the start event is still pending once queued */
    bool exiting;          /* made while the report was being written: only counted */
    bool pushed;           /* CUPTI timer: ktime's external correlation id is pushed for it */
    uint64_t t0;           /* events: CLOCK_MONOTONIC ns just before the real call */
    uint8_t level;         /* KTIME_BUDGET: drawn at a rate of 1 in 2^level (0: every one) */
    struct kshape shape;   /* grid, block, dynamic shared memory (the wrapper sets it) */
    uint64_t bytes;        /* a memory operation's bytes; 0 for a launch (the wrapper sets it) */
};


/* CLOCK_MONOTONIC in ns (a vDSO read, no system call): the launch call's wall time. */
static inline uint64_t launch_clock(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* First sight of a handle: names it, installs the exit handlers. Slow path, once each. */
void launch_first_seen(struct ktab_entry *k, void *handle, int kind);

/* The bracketing part of launch_begin(): capture check, pool, start event. first: never gated
 * (a kernel's first launch, which may load its module; a call that may wait for its stream). */
bool launch_begin_timed(struct launch *L, struct ktab_entry *k, CUstream s, int ptds,
                        bool first);

/* After the real call of a launch launch_begin() took: the stop event, or the failure. */
void launch_end(struct launch *L, CUresult r);

/* A module or library is being unloaded: its kernel handles may be reused by kernels
 * loaded later, so they are detached from their rows (which keep their numbers). */
void launch_module_unloading(CUmodule mod, CUlibrary lib);

/* A graph was instantiated: names its row after its kernel nodes, before its first launch. */
void launch_graph_instantiated(CUgraphExec exec, CUgraph g);

/* A handle (graph exec) is destroyed: a later one at the same address is another row. */
void launch_handle_gone(void *handle);

/* The launch path's draw (KTIME_SAMPLE, KTIME_BUDGET): a per-thread xorshift64*, seeded per
 * thread, at random, never every k-th launch (periodic programs would alias). */
extern __thread uint64_t launch_rng __attribute__((tls_model("initial-exec")));
uint64_t launch_rng_seed(void);

static inline uint64_t launch_draw(void)
{
    uint64_t x = launch_rng ? launch_rng : launch_rng_seed();

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    launch_rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* KTIME_SAMPLE=k: true about once in k calls. */
static inline bool launch_drawn(void)
{
    /* The high 32 bits of the draw, scaled to [0, k): 0 about once in k. */
    return ((launch_draw() >> 32) * (uint64_t)kt.cfg.sample >> 32) == 0;
}

/* KTIME_BUDGET: true at a rate of 1 in 2^level (level 1 to 63): the draw's top level bits
 * are all 0. */
static inline bool launch_kept(unsigned int level)
{
    return launch_draw() >> (64 - level) == 0;
}

/* A launch once the report is being written: never timed. Fills L so that launch_end()
 * counts it, as shutdown when it ran, as failed when the driver refused it (it may be shutting
 * down). Returns false when the launch cannot be counted (kernel table full). */
bool launch_during_exit(struct launch *L, void *handle, int kind);

/* A launch that gets no events (warmup, or timed by CUPTI) while some stream captures:
 * whether it goes into a capture (then it counts as captured, and is no warmup). */
bool launch_into_capture(struct ktab_entry *k, CUstream s, int ptds);

/* A launch past warmup that gets no events (timed by CUPTI, or left out by KTIME_SAMPLE):
 * false when it goes into a capture (counted as captured there); else fills L so that
 * launch_end() counts it (failed when the driver refuses it) and returns true. */
static inline bool launch_untimed(struct launch *L, struct ktab_entry *k, CUstream s, int ptds)
{
    if (atomic_load_explicit(&kt.captures, memory_order_relaxed) > 0 &&
        launch_into_capture(k, s, ptds))
        return false;
    L->k = k;
    L->pool = NULL;
    L->exiting = false;
    L->pushed = false;
    return true;
}

/* A stream capture began (r: its result), or one ended. Keep kt.captures. */
void launch_capture_began(CUresult r);
void launch_capture_ended(CUresult r);

/* Decides whether a launch of `handle` on stream s gets events; when it returns true
 * launch_end() must follow the real call (the start event is recorded, or the launch is only
 * counted there: timed by CUPTI, left out by KTIME_SAMPLE, made during the report). Never
 * blocks. A memory operation (kind KTAB_MEMOP, handle its MEMOP_KEY) goes the same way;
 * may_block: the call may wait for its stream, so it is never gated (it would wait for its own
 * gate). Launches pass false, a constant. */
static inline bool launch_begin(struct launch *L, void *handle, int kind, CUstream s, int ptds,
                                bool may_block)
{
    struct ktab_entry *k;
    bool inserted;
    int phase = atomic_load_explicit(&kt.phase, memory_order_acquire);

    if (phase != PHASE_ON || inside_ktime || !handle)
        return phase == PHASE_EXITING && !inside_ktime && handle &&
               launch_during_exit(L, handle, kind);
    k = ktab_get(&kt.ktab, (uintptr_t)handle, &inserted);
    if (!k) {
        atomic_fetch_add_explicit(&kt.drops[DROP_TABLE_FULL], 1, memory_order_relaxed);
        return false;
    }
    if (inserted)
        launch_first_seen(k, handle, kind);
    uint64_t n = atomic_fetch_add_explicit(&k->calls, 1, memory_order_relaxed);
    if (n < (uint64_t)kt.cfg.warmup) {
        /* A warmup launch, counted as such here, unless it goes into a capture (it never
         * runs): only while a capture is open anywhere does it ask its stream. */
        if (!(atomic_load_explicit(&kt.captures, memory_order_relaxed) > 0 &&
              launch_into_capture(k, s, ptds))) {
            atomic_fetch_add_explicit(&k->warmup, 1, memory_order_relaxed);
            cuptitimer_count_unrecorded(k);
        }
        return false;
    }
    /* Past its warmup, a launch made while timing is off (ktime ctl off) or outside the
     * capture range (KTIME_CAPTURE) is only counted, as paused first: one relaxed load. */
    int hold = atomic_load_explicit(&kt.hold, memory_order_relaxed);
    if (hold) {
        if (hold & HOLD_PAUSED)
            control_count_paused(k);
        else
            capture_count_outside(k);
        return false;
    }
    /* KTIME_SAMPLE thins out the events only: CUPTI records every kernel anyway. A launch
     * the draw leaves untimed is still counted: captured when it goes into a capture, and
     * failed when the driver refuses it (launch_end, with no pool). */
    L->level = 0;
    if (atomic_load_explicit(&kt.timing, memory_order_relaxed) != TIMER_CUPTI) {
        if (kt.cfg.sample > 1 && !launch_drawn())
            return launch_untimed(L, k, s, ptds);
        /* KTIME_BUDGET: the kernel's rate, one relaxed load (0 without a budget); its first
         * launches past warmup are timed whatever it is. A sample kept stands for 2^level. */
        unsigned int level = atomic_load_explicit(&k->level, memory_order_relaxed);
        if (level && n >= (uint64_t)kt.cfg.warmup + BUDGET_FIRST) {
            if (!launch_kept(level))
                return launch_untimed(L, k, s, ptds);
            L->level = (uint8_t)level;
        }
    }
    return launch_begin_timed(L, k, s, ptds, n == 0 || may_block);
}

#endif
