/* launch.c - the slow parts of a launch: first sight of a kernel, the bracketing with
 * pooled events, per-context pools. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuptitimer.h"
#include "driver.h"
#include "flush.h"
#include "gatewatch.h"
#include "lifecycle.h"
#include "log.h"
#include "memop.h"
#include "modules.h"
#include "rangestack.h"
#include "tracing.h"

__thread uint64_t launch_rng __attribute__((tls_model("initial-exec")));

uint64_t launch_rng_seed(void)
{
    static _Atomic uint64_t next = 0x9E3779B97F4A7C15ULL;
    uint64_t x = atomic_fetch_add(&next, 0x9E3779B97F4A7C15ULL) ^ (uintptr_t)&launch_rng;

    return x ? x : 1;
}

/* The pool of the context this thread used last (NULL: that context has none, for good):
 * most threads use one context. */
static __thread CUcontext tls_ctx __attribute__((tls_model("initial-exec")));
static __thread struct pool *tls_pool __attribute__((tls_model("initial-exec")));

/* KTIME_GATE=auto. A gate costs GPU time on every launch (docs/design.md, "Facts the code
 * rests on"), and it is only needed where the stream may be idle when the start event reaches
 * the GPU. Where the GPU is behind, the start event, the kernel and the stop event are all
 * queued before the GPU gets to the start event, and the interval is the same as with a gate.
 * So each thread keeps, per stream it launches on (a few, in a small direct-mapped table),
 * whether the GPU was found behind there:
 *  - gated (the initial state): a gated launch now and then (see below) queries, before
 *    opening its gate, the stop event of the stream's previous timed launch; still pending
 *    means the GPU is behind, and the stream's next launches go ungated;
 *  - ungated: a launch first queries the stop event of the stream's previous timed launch;
 *    completed means the GPU may have caught up (the program synchronized, say), and the
 *    stream is gated again, from this launch on. Once its stop event is queued, an ungated
 *    launch queries its own start event. Still pending proves the whole bracket was queued
 *    before the GPU reached it: the sample is exact. Already fired (or any error) means the
 *    stream went idle in between: the sample may include submission time, so it is dropped
 *    (gate_late) and the stream is gated again.
 * A query of a completed event costs CPU time while the program launches, so the probes back
 * off: every 16th gated launch at first, twice as rarely after each probe that finds the GPU
 * idle and after each gate_late, down to every 256th; 64 ungated launches in a row bring it
 * back to 16. Where the GPU and the CPU run at about the same speed (tiny kernels back to
 * back) the stream then stays gated most of the time instead of flapping. A hint is only a
 * hint: a stale one costs a dropped sample, never a wrong one. The queries run in RELAXED
 * capture mode so that they never invalidate another thread's capture. */
#define GATE_HINTS 8
#define GATE_PROBE_MIN 16
#define GATE_PROBE_MAX 256
#define GATE_STREAK 64

struct gate_hint {
    uintptr_t stream;      /* the launch stream's handle (the per-thread stream explicit) */
    struct pool *pool;     /* its context's pool: events of a pool are never destroyed while
                            * it serves launches */
    void *last_stop;       /* stop event of this thread's last timed launch there, or NULL */
    uint16_t probe;        /* gated launches since the last probe */
    uint16_t every;        /* probe every this many gated launches */
    uint16_t streak;       /* ungated launches in a row that checked out */
    bool ungated;          /* the GPU was found behind: launch without a gate */
};

static inline void probe_back_off(struct gate_hint *h)
{
    if (h->every < GATE_PROBE_MAX)
        h->every *= 2;
}

static __thread struct gate_hint tls_hints[GATE_HINTS] __attribute__((tls_model("initial-exec")));

static struct gate_hint *hint_for(CUstream s, struct pool *p)
{
    uintptr_t key = (uintptr_t)s;
    struct gate_hint *h = &tls_hints[(key >> 4 ^ key >> 12) & (GATE_HINTS - 1)];

    if (h->stream != key || h->pool != p)
        *h = (struct gate_hint){ .stream = key, .pool = p, .every = GATE_PROBE_MIN };
    return h;
}

/* cuEventQuery from a program thread: CUDA_SUCCESS, CUDA_ERROR_NOT_READY or an error. */
static CUresult query_relaxed(void *ev)
{
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CUresult r;

    if (!driver_swap_capture_mode(&mode))
        return CUDA_ERROR_NOT_SUPPORTED; /* querying in GLOBAL mode could break a capture */
    r = drv.EventQuery((CUevent)ev);
    driver_swap_capture_mode(&mode);
    return r;
}

static inline void drop(struct ktab_entry *k, int reason)
{
    atomic_fetch_add_explicit(&kt.drops[reason], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->dropped, 1, memory_order_relaxed);
}

void launch_first_seen(struct ktab_entry *k, void *handle, int kind)
{
    char label[64];
    const char *name = label;

    inside_ktime = 1;
    atomic_store_explicit(&k->kind, (uint16_t)kind, memory_order_relaxed);
    /* A kernel's name is kept whole, whatever its length: rows are keyed by it. */
    if (kind == KTAB_GRAPH)
        snprintf(label, sizeof label, "graph exec %p", handle);
    else if (kind == KTAB_MEMOP)
        snprintf(label, sizeof label, "[memory %s]",
                 memop_label(memop_kind_of_key((uintptr_t)handle)));
    else if (!ktime_driver_ready() || !(name = driver_kernel_name(handle))) {
        name = label;
        snprintf(label, sizeof label, "<kernel %p>", handle);
    }
    ktab_set_name(k, name);
    /* The modules first (CUPTI, before the first kernel runs); then the exit handlers. */
    modules_first_launch();
    ktime_register_exit();
    inside_ktime = 0;
}

/* Lets the stream past the launch's gate. Must follow every gated launch_begin_timed(),
 * whatever happens after: a gate left closed would stall the stream for good. */
static inline void gate_open(const struct launch *L)
{
    struct pool_slot *sl = &L->pool->slots[L->slot];

    if (sl->gen) {
        __atomic_store_n(&L->pool->gate_host[L->slot], sl->gen, __ATOMIC_RELEASE);
        atomic_store_explicit(&sl->gate_closed, 0, memory_order_release);
    }
}

static bool special_stream(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

static struct pool *pool_for(CUcontext ctx)
{
    uint32_t n;

    if (tls_ctx == ctx &&
        (tls_pool ? !atomic_load_explicit(&tls_pool->retiring, memory_order_relaxed)
                  : ktime_context_failed(ctx)))
        return tls_pool;
    n = atomic_load_explicit(&kt.drain.npools, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (kt.drain.pools[i]->ctx == (void *)ctx &&
            !atomic_load_explicit(&kt.drain.pools[i]->retiring, memory_order_acquire)) {
            tls_ctx = ctx;
            tls_pool = kt.drain.pools[i];
            return tls_pool;
        }
    tls_pool = ktime_pool_create(ctx);
    tls_ctx = ctx;
    return tls_pool;
}

/* KTIME_FLUSH_L2 with KTIME_TIMER=cupti: no events, but the flush all the same, where a flush
 * is allowed (never into a capture: it would become a node of the program's graph). */
static void flush_l2_untimed(CUstream s, int ptds)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream es = (ptds && s == NULL) ? CU_STREAM_PER_THREAD : s;
    CUcontext ctx = NULL;
    struct pool *p;

    inside_ktime = 1;
    if (ktime_driver_ready() && drv.StreamIsCapturing(es, &cs) == CUDA_SUCCESS &&
        cs == CU_STREAM_CAPTURE_STATUS_NONE &&
        (special_stream(es) ? drv.CtxGetCurrent(&ctx) : drv.StreamGetCtx(es, &ctx)) ==
            CUDA_SUCCESS &&
        ctx && (p = pool_for(ctx)))
        flush_l2_before(p, es);
    inside_ktime = 0;
}

/* KTIME_GATE=auto: whether this launch on es is gated, from what this thread knows of the
 * stream (the comment above GATE_HINTS); sets L's hint, probe and verify. */
static inline bool gate_auto(struct launch *L, struct pool *p, CUstream es)
{
    struct gate_hint *h = hint_for(es, p);
    bool gate = true;

    L->hint = h;
    if (h->ungated) {
        /* The program may have waited for the GPU since (a synchronize at the end of an
         * iteration): if this thread's last bracket here has completed, the stream may
         * be idle, and this launch is gated. Otherwise its check would find the start
         * event fired and drop the sample, and the first kernel after each synchronize
         * would never be timed. */
        if (h->last_stop && query_relaxed(h->last_stop) == CUDA_ERROR_NOT_READY) {
            gate = false;
            L->verify = true;
        } else {
            h->ungated = false;
            h->probe = 0;
        }
    } else if (h->last_stop && ++h->probe >= h->every) {
        h->probe = 0;
        L->probe = h->last_stop;
    }
    return gate;
}

/* Closes the launch gate of p's slot on es: the stream waits before the start event until
 * launch_end opens it. A wait the driver refuses leaves the launch ungated. */
static inline void gate_close(struct pool *p, uint32_t slot, CUstream es)
{
    struct pool_slot *sl = &p->slots[slot];
    uint32_t gen = sl->seq + 1 ? sl->seq + 1 : 1;

    sl->seq = gen;
    atomic_store_explicit(&sl->forced, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->gate_closed, gen, memory_order_release);
    gatewatch_kick();
    if (drv.StreamWaitValue32(es, p->gate_dev + 4u * slot, gen, CU_STREAM_WAIT_VALUE_EQ) ==
        CUDA_SUCCESS) {
        sl->gen = gen;
    } else {
        atomic_store_explicit(&sl->gate_closed, 0, memory_order_relaxed);
    }
}

/* A launch CUPTI's records time: counted, its L2 flushed (KTIME_FLUSH_L2); made in a range
 * (or in the capture range of KTIME_CAPTURE), it carries it to its records as an external
 * correlation id. */
static bool by_cupti(struct launch *L, struct ktab_entry *k, CUstream s, int ptds)
{
    if (!launch_untimed(L, k, s, ptds))
        return false;
    cuptitimer_count_unrecorded(k);
    if (kt.cfg.flush_l2)
        flush_l2_untimed(s, ptds);
    L->pushed = cuptitimer_range_before();
    return true;
}

bool launch_begin_timed(struct launch *L, struct ktab_entry *k, CUstream s, int ptds,
                        bool first)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream es = (ptds && s == NULL) ? CU_STREAM_PER_THREAD : s;
    CUcontext ctx = NULL;
    struct pool *p;
    uint32_t slot;
    CUresult r;

    /* CUPTI times it: no events, only the counts CUPTI cannot give (captured, failed). Memory
     * operations get events under every timer. */
    if (atomic_load_explicit(&kt.timing, memory_order_relaxed) == TIMER_CUPTI &&
        atomic_load_explicit(&k->kind, memory_order_relaxed) != KTAB_MEMOP)
        return by_cupti(L, k, s, ptds);
    inside_ktime = 1;
    if (!ktime_driver_ready()) {
        drop(k, DROP_EVENT_ERROR);
        goto untimed;
    }
    /* Recording or querying an event in a capturing stream would add to or invalidate the
     * user's graph: such launches are only counted. An error counts as capturing. */
    if (drv.StreamIsCapturing(es, &cs) != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE) {
        /* calls counts the launches that ran (the warmup ordinal): this one did not. */
        atomic_fetch_sub_explicit(&k->calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&k->captured, 1, memory_order_relaxed);
        goto untimed;
    }
    r = special_stream(es) ? drv.CtxGetCurrent(&ctx) : drv.StreamGetCtx(es, &ctx);
    if (r != CUDA_SUCCESS || !ctx || !(p = pool_for(ctx))) {
        drop(k, DROP_NO_CONTEXT);
        goto untimed;
    }
    if (!pool_acquire(p, &slot)) {
        drop(k, DROP_POOL_EXHAUSTED);
        goto untimed;
    }
    /* The GPU must not run ahead of the CPU: on an idle stream the start event would fire
     * at once and the interval would include the CPU's time to submit the launch. A gate
     * holds the stream before the start event until the launch and its stop event are
     * queued (launch_end opens it), so the events bracket the kernel alone.
     * A kernel's very first launch is never gated: it may load its module, which waits for
     * the stream; nor is its first launch in a further context when KTIME_WARMUP=0 (see
     * below). Whatever else blocks behind a gate, the watchdog opens it. */
    p->slots[slot].gen = 0; /* this launch's gate value; 0: not gated */
    L->hint = NULL;
    L->probe = NULL;
    L->verify = false;
    if (p->seen && pool_first_launch(p, ktab_id(&kt.ktab, k))) {
        /* First here. In a further context (another device, or a context made anew after
         * a reset) the launch loads the module there, inside its interval: with a warmup
         * asked for, it is one more warmup launch; with none, it is timed ungated. */
        if (atomic_fetch_add_explicit(&k->contexts, 1, memory_order_relaxed) > 0) {
            if (kt.cfg.warmup > 0) {
                pool_release(p, slot);
                atomic_fetch_add_explicit(&k->warmup, 1, memory_order_relaxed);
                goto untimed;
            }
            first = true;
        }
    }
    flush_l2_before(p, es);
    bool gate = p->gate_host && kt.cfg.gate != GATE_OFF && !first;
    if (gate && kt.cfg.gate == GATE_AUTO)
        gate = gate_auto(L, p, es);
    if (gate)
        gate_close(p, slot, es);
    L->k = k;
    L->pool = p;
    L->exiting = false;
    L->pushed = false;
    L->slot = slot;
    L->stream = es;
    tracing_anchor_before(p, es);
    r = drv.EventRecord((CUevent)p->slots[slot].start, es);
    if (r != CUDA_SUCCESS) {
        gate_open(L);
        pool_release(p, slot);
        drop(k, DROP_EVENT_ERROR);
        /* The pool's context died without ktime seeing it go (its handle may now name a new
         * context): never touch its events again; the next launch makes a new pool. */
        if (r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT ||
            r == CUDA_ERROR_INVALID_HANDLE) {
            atomic_store_explicit(&p->gone, 1, memory_order_release);
            atomic_store_explicit(&p->retiring, 1, memory_order_release);
        }
        goto untimed;
    }
    inside_ktime = 0;
    /* KTIME_TIMER=both: CUPTI's records of it carry its range too. */
    if (atomic_load_explicit(&kt.timing, memory_order_relaxed) == TIMER_BOTH)
        L->pushed = cuptitimer_range_before();
    L->t0 = kt.cfg.launch_times ? launch_clock() : 0;
    return true;
untimed:
    inside_ktime = 0;
    return false;
}

void launch_end(struct launch *L, CUresult r)
{
    uint64_t t1 = L->pool && L->t0 ? launch_clock() : 0;

    if (L->pushed)
        cuptitimer_pop();
    if (!L->pool) { /* timed by CUPTI, not drawn by KTIME_SAMPLE, or made during the report */
        if (L->exiting && r == CUDA_SUCCESS) {
            atomic_fetch_add_explicit(&L->k->shutdown, 1, memory_order_relaxed);
        } else if (r != CUDA_SUCCESS) {
            if (L->exiting)
                atomic_fetch_add_explicit(&L->k->calls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&L->k->failed, 1, memory_order_relaxed);
        }
        return;
    }
    struct pool_slot *s = &L->pool->slots[L->slot];

    if (r != CUDA_SUCCESS) {
        /* Nothing was enqueued: the start event is simply re-recorded next time. */
        gate_open(L);
        atomic_fetch_add_explicit(&L->k->failed, 1, memory_order_relaxed);
        pool_release(L->pool, L->slot);
        return;
    }
    inside_ktime = 1;
    CUresult stop = drv.EventRecord((CUevent)s->stop, L->stream);
    struct gate_hint *h = L->hint;
    /* Still pending behind our closed gate: the GPU is behind on this stream. */
    if (L->probe && stop == CUDA_SUCCESS) {
        if (query_relaxed(L->probe) == CUDA_ERROR_NOT_READY) {
            h->ungated = true;
            h->streak = 0;
        } else {
            probe_back_off(h);
        }
    }
    gate_open(L);
    if (stop != CUDA_SUCCESS) {
        pool_release(L->pool, L->slot);
        drop(L->k, DROP_EVENT_ERROR);
        if (h)
            h->last_stop = NULL;
    } else if (L->verify && query_relaxed(s->start) != CUDA_ERROR_NOT_READY) {
        /* The start event had fired before the bracket was queued: the stream was idle. The
         * pair may still be pending; recording it again later is allowed. */
        pool_release(L->pool, L->slot);
        drop(L->k, DROP_GATE_LATE);
        h->ungated = false;
        h->probe = 0;
        probe_back_off(h);
        h->last_stop = NULL;
    } else {
        if (h) {
            h->last_stop = s->stop;
            if (L->verify && ++h->streak >= GATE_STREAK)
                h->every = GATE_PROBE_MIN;
        }
        s->kernel = ktab_id(&kt.ktab, L->k);
        s->shape = L->shape;
        s->bytes = L->bytes;
        s->range = (uint16_t)range_current();
        s->level = L->level;
        s->api_ns = !L->t0 ? 0 : t1 - L->t0 < UINT32_MAX ? (uint32_t)(t1 - L->t0) : UINT32_MAX;
        /* Per-thread default streams share one handle value: tell threads apart. */
        s->stream = L->stream == CU_STREAM_PER_THREAD ? (uintptr_t)&inside_ktime
                                                      : (uintptr_t)L->stream;
        pool_submit(L->pool, L->slot);
    }
    inside_ktime = 0;
}

bool launch_during_exit(struct launch *L, void *handle, int kind)
{
    bool inserted;
    struct ktab_entry *k = ktab_get(&kt.ktab, (uintptr_t)handle, &inserted);

    if (!k) {
        atomic_fetch_add_explicit(&kt.drops[DROP_TABLE_FULL], 1, memory_order_relaxed);
        return false;
    }
    if (inserted)
        launch_first_seen(k, handle, kind);
    L->k = k;
    L->pool = NULL;
    L->exiting = true;
    L->pushed = false;
    return true;
}

bool launch_into_capture(struct ktab_entry *k, CUstream s, int ptds)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream es = (ptds && s == NULL) ? CU_STREAM_PER_THREAD : s;
    bool captured;

    if (!ktime_driver_ready())
        return false;
    inside_ktime = 1;
    /* As on the timed path, an error counts as capturing. */
    captured = drv.StreamIsCapturing(es, &cs) != CUDA_SUCCESS ||
               cs != CU_STREAM_CAPTURE_STATUS_NONE;
    inside_ktime = 0;
    if (captured) {
        atomic_fetch_sub_explicit(&k->calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&k->captured, 1, memory_order_relaxed);
    }
    return captured;
}

void launch_capture_began(CUresult r)
{
    if (r == CUDA_SUCCESS)
        atomic_fetch_add_explicit(&kt.captures, 1, memory_order_relaxed);
}

void launch_capture_ended(CUresult r)
{
    int n = atomic_load_explicit(&kt.captures, memory_order_relaxed);

    /* An end that ended nothing (not capturing) changes nothing; an invalidated capture
     * has ended all the same. Never below zero: a count too high only costs a query. */
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        return;
    while (n > 0 && !atomic_compare_exchange_weak_explicit(&kt.captures, &n, n - 1,
                                                           memory_order_relaxed,
                                                           memory_order_relaxed))
        ;
}

void launch_handle_gone(void *handle)
{
    if (atomic_load_explicit(&kt.phase, memory_order_acquire) == PHASE_ON && handle)
        ktab_retire(&kt.ktab, (uintptr_t)handle);
}

void launch_module_unloading(CUmodule mod, CUlibrary lib)
{
    unsigned int n = 0;
    void **handles;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON || inside_ktime ||
        !ktime_driver_ready())
        return;
    inside_ktime = 1;
    if (mod && drv.ModuleGetFunctionCount && drv.ModuleEnumerateFunctions &&
        drv.ModuleGetFunctionCount(&n, mod) == CUDA_SUCCESS && n > 0 &&
        (handles = calloc(n, sizeof *handles))) {
        if (drv.ModuleEnumerateFunctions((CUfunction *)handles, n, mod) == CUDA_SUCCESS)
            for (unsigned int i = 0; i < n; i++)
                ktab_retire(&kt.ktab, (uintptr_t)handles[i]);
        free(handles);
    } else if (lib && drv.LibraryGetKernelCount && drv.LibraryEnumerateKernels &&
               drv.LibraryGetKernelCount(&n, lib) == CUDA_SUCCESS && n > 0 &&
               (handles = calloc(n, sizeof *handles))) {
        if (drv.LibraryEnumerateKernels((CUkernel *)handles, n, lib) == CUDA_SUCCESS)
            for (unsigned int i = 0; i < n; i++)
                ktab_retire(&kt.ktab, (uintptr_t)handles[i]);
        free(handles);
    }
    inside_ktime = 0;
}

void launch_graph_instantiated(CUgraphExec exec, CUgraph g)
{
    static _Atomic unsigned int graphs;
    size_t n = 0, kernels = 0;
    struct ktab_entry *e;
    CUgraphNode *nodes;
    char name[96];
    bool inserted;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON || inside_ktime ||
        !exec || !ktime_driver_ready())
        return;
    inside_ktime = 1;
    if (drv.GraphGetNodes && drv.GraphNodeGetType &&
        drv.GraphGetNodes(g, NULL, &n) == CUDA_SUCCESS && n > 0 &&
        (nodes = calloc(n, sizeof *nodes))) {
        if (drv.GraphGetNodes(g, nodes, &n) == CUDA_SUCCESS)
            for (size_t i = 0; i < n; i++) {
                CUgraphNodeType type;
                if (drv.GraphNodeGetType(nodes[i], &type) == CUDA_SUCCESS &&
                    type == CU_GRAPH_NODE_TYPE_KERNEL)
                    kernels++;
            }
        free(nodes);
    }
    snprintf(name, sizeof name, "graph %u (%zu kernel nodes of %zu)",
             atomic_fetch_add(&graphs, 1) + 1, kernels, n);
    ktab_retire(&kt.ktab, (uintptr_t)exec); /* a destroyed exec's address, reused */
    e = ktab_get(&kt.ktab, (uintptr_t)exec, &inserted);
    if (e && inserted) {
        atomic_store_explicit(&e->kind, (uint16_t)KTAB_GRAPH, memory_order_relaxed);
        ktab_set_name(e, name);
    }
    inside_ktime = 0;
}
