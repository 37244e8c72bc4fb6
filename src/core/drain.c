/* drain.c - background drain of completed event pairs into aggregates. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "drain.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"

#define DRAIN_STREAMS 16 /* streams searched as a whole in one pass; the rest pair by pair */
#define DRAIN_GROW_STEP 256 /* event pairs a pass creates at most */
#define DRAIN_GROW_BUDGET_NS 1000000u /* and for at most this long (the last pair may overrun) */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void drain_init(struct drain *d, const struct event_ops *ops)
{
    d->ops = ops;
    atomic_init(&d->npools, 0);
    d->aggs = NULL;
    d->last_agg = NULL;
    d->records = NULL;
    d->tick = NULL;
    d->trace = NULL;
    d->sample = NULL;
    d->record = NULL;
    d->place = false;
    d->unplaced = 0;
    d->grow_clock = monotonic_ns;
    atomic_init(&d->started, false);
    atomic_init(&d->stop, 0);
    pthread_mutex_init(&d->pass_lock, NULL);
    pthread_mutex_init(&d->wake_mu, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&d->wake_cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    d->self_timing = false;
    d->passes = d->queries = d->queries_pending = d->elapsed_calls = 0;
    d->query_ns = d->elapsed_ns = d->pass_ns = d->cpu_ns = 0;
}

/* Nanoseconds on clock c when d keeps timings, else 0 (no clock read). */
static uint64_t clock_ns(const struct drain *d, clockid_t c)
{
    struct timespec ts;

    if (!d->self_timing || clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int drain_add_pool(struct drain *d, struct pool *p)
{
    uint32_t n = atomic_load_explicit(&d->npools, memory_order_relaxed);

    if (n >= DRAIN_MAX_POOLS)
        return -1;
    d->pools[n] = p;
    atomic_store_explicit(&d->npools, n + 1, memory_order_release);
    return 0;
}

static struct agg *agg_get(struct drain *d, uint32_t kernel, int device, uint16_t range)
{
    uint64_t key = (uint64_t)range << 48 | (uint64_t)kernel << 16 | (uint16_t)device;
    struct agg *a = d->last_agg;

    /* Consecutive samples are mostly of one kernel: the lookup was a third of the drain's
     * own instructions per sample (callgrind). Aggregates live until the report. */
    if (a && a->key == key)
        return a;
    HASH_FIND(hh, d->aggs, &key, sizeof key, a);
    if (a)
        return d->last_agg = a;
    a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->key = key;
    a->kernel = kernel;
    a->device = device;
    a->range = range;
    HASH_ADD(hh, d->aggs, key, sizeof a->key, a);
    return d->last_agg = a;
}

/* Counts every pair still pending in p as incomplete and forgets them. */
/* Counts a pool's pending pairs incomplete; with take_queued, the ones still queued too (their
 * context is gone: none of them may be looked at again). */
static uint64_t abandon_pending(struct drain *d, struct pool *p, bool take_queued)
{
    uint64_t left = 0;
    uint32_t id;

    while (take_queued && p->npending < p->cap && mpmc_pop(&p->submit_q, &id))
        p->pending[p->npending++] = id;
    for (uint32_t j = 0; j < p->npending; j++) {
        struct pool_slot *s = &p->slots[p->pending[j]];
        struct agg *a = agg_get(d, s->kernel, p->device, s->range);
        if (a)
            a->incomplete++;
        left++;
    }
    p->npending = 0;
    return left;
}

void drain_pool_gone(struct drain *d, struct pool *p)
{
    if (atomic_load_explicit(&p->dead, memory_order_acquire))
        return;
    atomic_store_explicit(&p->gone, 1, memory_order_release);
    atomic_store_explicit(&p->retiring, 1, memory_order_release);
    abandon_pending(d, p, true);
    atomic_store_explicit(&p->dead, 1, memory_order_release);
}

/* Where the sample of slot id began: against the pool's reference event, a second
 * elapsed-time call. cuEventElapsedTime's float milliseconds keep about 0.1 us up to a second
 * (a 24-bit mantissa): a sample that far past the reference becomes the next reference, and
 * its slot stays out of use (*kept). Returns true with *ts when placed. */
static bool place(struct drain *d, struct pool *p, uint32_t id, uint64_t *ts, bool *kept)
{
    struct pool_slot *s = &p->slots[id];
    float off;

    *kept = false;
    if (atomic_load_explicit(&p->anchor_state, memory_order_acquire) != 2)
        return false;
    void *ref = p->anchor_slot == UINT32_MAX ? p->anchor : p->slots[p->anchor_slot].start;
    if (!p->ref_ns)
        p->ref_ns = p->anchor_ns;
    if (d->ops->elapsed(ref, s->start, &off) != 0)
        return false; /* the reference has not completed (another stream's) */
    *ts = (uint64_t)((int64_t)p->ref_ns + llround((double)off * 1e6));
    if (off < 1000.0f)
        return true;
    if (p->anchor_slot != UINT32_MAX)
        pool_release(p, p->anchor_slot);
    p->anchor_slot = id;
    p->ref_ns = *ts;
    *kept = true;
    return true;
}

/* Folds the pair at pending position j, which a query found complete: one elapsed-time
 * call. Returns 0 when folded (the position is then marked free), 1 when it must wait,
 * -2 when its context is gone. */
static int fold(struct drain *d, struct pool *p, uint32_t j)
{
    struct pool_slot *s = &p->slots[p->pending[j]];
    struct agg *a;
    float ms;
    uint64_t t0 = clock_ns(d, CLOCK_MONOTONIC);
    int r = d->ops->elapsed(s->start, s->stop, &ms);

    d->elapsed_ns += clock_ns(d, CLOCK_MONOTONIC) - t0;
    d->elapsed_calls++;
    if (r == 1 || r == -2)
        return r;
    a = agg_get(d, s->kernel, p->device, s->range);
    bool voided = s->gen && atomic_load_explicit(&s->forced, memory_order_acquire) == s->gen;
    if (voided) {
        /* Its start event fired when the watchdog opened the gate, not at the launch. */
        if (a)
            a->forced++;
    } else if (r == 0) {
        if (a) {
            stats_add(&a->st, (double)ms * 1000.0);
            sketch_add(&a->sk, (double)ms * 1000.0);
            a->wsum += (double)ms * 1000.0 * (double)((uint64_t)1 << s->level);
            a->wn += (uint64_t)1 << s->level;
            if (shape_known(&s->shape))
                shape_add(&a->shapes, &s->shape, (double)ms * 1000.0);
            if (d->sample)
                d->sample(s->kernel, p->device, (double)ms * 1000.0);
            a->ungated += !s->gen;
            a->bytes += s->bytes;
        }
    } else if (a) {
        a->errors++;
    }
    bool kept = false, placed = false;
    uint64_t ts = 0;
    if (r == 0 && a && !voided && (d->trace || d->place) && p->anchor) {
        placed = place(d, p, p->pending[j], &ts, &kept);
        if (!placed) {
            d->unplaced++;
            if (d->trace)
                d->trace->unplaced++;
        } else if (d->trace) {
            trace_add(d->trace, ts, (uint64_t)llround((double)ms * 1e6), NULL, s->kernel,
                      p->device, s->stream, &s->shape);
        }
    }
    if (r == 0 && a && !voided && d->record) {
        struct drain_out o = { s->kernel, p->device, s->stream, s->range, placed, ts,
                               (uint64_t)llround((double)ms * 1e6), s->api_ns };
        d->record(&o);
    }
    if (!kept)
        pool_release(p, p->pending[j]);
    p->pending[j] = UINT32_MAX;
    return 0;
}

/* Whether the pair at pending position j has completed (an error counts as completed: its
 * elapsed-time call then says what happened). -2: its context is gone. */
static int done_at(struct drain *d, struct pool *p, uint32_t j)
{
    uint64_t t0 = clock_ns(d, CLOCK_MONOTONIC);
    int r = d->ops->query(p->slots[p->pending[j]].stop);

    d->query_ns += clock_ns(d, CLOCK_MONOTONIC) - t0;
    d->queries++;
    if (r == 1)
        d->queries_pending++;
    return r == -2 ? -2 : r != 1; /* 1: completed, 0: pending */
}

/* The group of stream st among streams[0..n): its index, or DRAIN_STREAMS (the others). */
static int group_of(const uintptr_t *streams, int n, uintptr_t st)
{
    for (int g = 0; g < n; g++)
        if (streams[g] == st)
            return g;
    return DRAIN_STREAMS;
}

/* Keeps the pending positions not folded (marked UINT32_MAX), in order. */
static void compact_pending(struct pool *p)
{
    uint32_t keep = 0;

    for (uint32_t j = 0; j < p->npending; j++)
        if (p->pending[j] != UINT32_MAX)
            p->pending[keep++] = p->pending[j];
    p->npending = keep;
}

/* Grows p outside the launch path when a launch found it empty or it runs low: to 4 times
 * its size (at least 1024 pairs more), since a burst of launches outruns small targets. A pass
 * makes at most DRAIN_GROW_STEP pairs and spends at most DRAIN_GROW_BUDGET_NS on them, each
 * published at once, and folds completed pairs in between: creating an event waits inside the
 * driver behind the threads that launch, so making many pairs in one pass would hold the
 * drain for milliseconds while every launch found the pool empty. */
static void grow_step(struct drain *d, struct pool *p)
{
    uint32_t created = atomic_load_explicit(&p->created, memory_order_relaxed), made = 0, n;
    uint64_t until;

    if (created >= p->cap)
        return;
    if (created >= p->grow_to) {
        if (!atomic_exchange_explicit(&p->want_grow, 0, memory_order_relaxed) &&
            p->npending <= created / 2)
            return;
        p->grow_from = created;
        p->grow_to = created < 1024 ? created + 1024 : 4 * created;
        if (p->grow_to > p->cap)
            p->grow_to = p->cap;
    }
    n = p->grow_to - created < DRAIN_GROW_STEP ? p->grow_to - created : DRAIN_GROW_STEP;
    until = d->grow_clock() + DRAIN_GROW_BUDGET_NS;
    while (made < n) {
        if (pool_grow(p, d->ops, 1) == 0) { /* event creation failed (pool_grow warned) */
            p->grow_to = created + made;
            break;
        }
        if (++made < n && d->grow_clock() >= until)
            break; /* the rest in the next passes */
    }
    if (created + made == p->grow_to)
        log_debug("event pool of device %d grown by %u to %u pairs", p->device,
                  p->grow_to - p->grow_from, p->grow_to);
}

/* Groups p's npending positions by stream, in order (a counting sort into p->scratch): group
 * g's positions are p->scratch[first[g] .. first[g] + count[g]); streams past DRAIN_STREAMS
 * share group DRAIN_STREAMS. */
static void group_pending(struct pool *p, uint32_t count[DRAIN_STREAMS + 1],
                          uint32_t first[DRAIN_STREAMS + 2])
{
    uintptr_t streams[DRAIN_STREAMS];
    uint32_t n = p->npending, at[DRAIN_STREAMS + 1];
    int nstreams = 0;

    for (uint32_t j = 0; j < n; j++) {
        uintptr_t st = p->slots[p->pending[j]].stream;
        int g = group_of(streams, nstreams, st);
        if (g == DRAIN_STREAMS && nstreams < DRAIN_STREAMS)
            streams[g = nstreams++] = st;
        count[g]++;
    }
    first[0] = 0;
    for (int g = 0; g <= DRAIN_STREAMS; g++)
        first[g + 1] = first[g] + count[g];
    for (int g = 0; g <= DRAIN_STREAMS; g++)
        at[g] = first[g];
    for (uint32_t j = 0; j < n; j++)
        p->scratch[at[group_of(streams, nstreams, p->slots[p->pending[j]].stream)]++] = j;
}

/* Folds the completed pairs of the positions pos[0..k) of a group past DRAIN_STREAMS, each
 * pair queried on its own; adds those folded to *done. Returns -2 when the pool's context is
 * gone, else 0. */
static int fold_each(struct drain *d, struct pool *p, const uint32_t *pos, uint32_t k,
                     uint32_t *done)
{
    for (uint32_t m = 0; m < k; m++) {
        int r = done_at(d, p, pos[m]);
        if (r == 0)
            continue; /* pending */
        if (r == -2 || (r = fold(d, p, pos[m])) == -2)
            return -2;
        *done += r == 0;
    }
    return 0;
}

/* Folds the completed pairs of one stream's positions pos[0..k), in recording order: the
 * completed ones are a prefix. Adds those folded to *done. Returns -2 when the pool's context
 * is gone, else 0. */
static int fold_stream(struct drain *d, struct pool *p, const uint32_t *pos, uint32_t k,
                       uint32_t *done)
{
    uint32_t lo = 0, hi = k;
    int r;

    /* Positions below lo are complete, from hi on pending. Usually all but the newest few
     * have completed: look back from the newest in steps of 1, 1, 2, 4... until a probe finds
     * a complete pair, then bisect what is left between. */
    for (uint32_t step = 1, probes = 0; lo < hi; probes++) {
        uint32_t at = hi - lo > step ? hi - step : lo;
        r = done_at(d, p, pos[at]);
        if (r == -2)
            return -2;
        if (r == 1) {
            lo = at + 1;
            break;
        }
        hi = at;
        if (probes > 0)
            step *= 2;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        r = done_at(d, p, pos[mid]);
        if (r == -2)
            return -2;
        if (r == 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t m = 0; m < lo; m++) {
        r = fold(d, p, pos[m]);
        if (r == -2)
            return -2;
        if (r == 1)
            break; /* not in recording order after all: the rest wait too */
        (*done)++;
    }
    return 0;
}

/* A retiring pool dies once drained, or at its deadline with the rest incomplete; the thread
 * destroying its context waits for that. Only pairs this pass has looked at are given up: one
 * submitted after the pass took its queue waits for the next pass, which folds it if it
 * completed (counting it incomplete unseen lost a finished sample when the drain was slow). */
static void retire_step(struct drain *d, struct pool *p)
{
    uint32_t id;

    if (p->npending == 0) {
        if (mpmc_pop(&p->submit_q, &id))
            p->pending[p->npending++] = id;
        else
            atomic_store_explicit(&p->dead, 1, memory_order_release);
        return;
    }
    if (drain_now_ms() >= p->retire_deadline_ms) {
        abandon_pending(d, p, false);
        if (!mpmc_pop(&p->submit_q, &id))
            atomic_store_explicit(&p->dead, 1, memory_order_release);
        else
            p->pending[p->npending++] = id;
    }
}

/* Events on one stream complete in the order they were recorded, which is the order their
 * pairs were submitted (one thread per stream, or the per-thread default stream). So for each
 * stream the completed pairs are a prefix of its pending ones, found by looking back from the
 * newest and bisecting: a pass costs O(log m) queries per stream, m the pairs still pending,
 * plus one elapsed-time call per completed pair. Streams past DRAIN_STREAMS are queried pair
 * by pair. */
uint32_t drain_pass_pool(struct drain *d, struct pool *p)
{
    uint32_t count[DRAIN_STREAMS + 1] = { 0 }, first[DRAIN_STREAMS + 2];
    uint32_t done = 0, id;

    if (atomic_load_explicit(&p->dead, memory_order_acquire))
        return 0;
    if (atomic_load_explicit(&p->gone, memory_order_acquire)) {
        drain_pool_gone(d, p);
        return 0;
    }
    while (p->npending < p->cap && mpmc_pop(&p->submit_q, &id))
        p->pending[p->npending++] = id;
    group_pending(p, count, first);
    for (int g = 0; g <= DRAIN_STREAMS; g++) {
        const uint32_t *pos = p->scratch + first[g];
        if (count[g] == 0)
            continue;
        if ((g == DRAIN_STREAMS ? fold_each(d, p, pos, count[g], &done)
                                : fold_stream(d, p, pos, count[g], &done)) == -2) {
            /* The context went without ktime seeing it go: touch none of its events again. */
            compact_pending(p);
            drain_pool_gone(d, p);
            return done;
        }
    }
    compact_pending(p);
    if (atomic_load_explicit(&p->retiring, memory_order_acquire))
        retire_step(d, p);
    else
        grow_step(d, p);
    return done;
}

uint32_t drain_pass(struct drain *d)
{
    uint32_t n = atomic_load_explicit(&d->npools, memory_order_acquire), done = 0;
    uint64_t t0 = clock_ns(d, CLOCK_MONOTONIC), c0 = clock_ns(d, CLOCK_THREAD_CPUTIME_ID);

    d->passes++;
    for (uint32_t i = 0; i < n; i++)
        done += drain_pass_pool(d, d->pools[i]);
    d->pass_ns += clock_ns(d, CLOCK_MONOTONIC) - t0;
    d->cpu_ns += clock_ns(d, CLOCK_THREAD_CPUTIME_ID) - c0;
    return done;
}

void drain_reset_aggs(struct drain *d)
{
    struct agg *a, *tmp;

    HASH_ITER(hh, d->aggs, a, tmp) {
        HASH_DEL(d->aggs, a);
        shape_set_free(a->shapes);
        free(a);
    }
    d->aggs = NULL;
    d->last_agg = NULL;
}

static uint32_t pending_total(struct drain *d)
{
    uint32_t n = atomic_load_explicit(&d->npools, memory_order_acquire), total = 0;

    for (uint32_t i = 0; i < n; i++)
        if (!atomic_load_explicit(&d->pools[i]->dead, memory_order_acquire))
            total += d->pools[i]->npending;
    return total;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

double drain_now_ms(void)
{
    return (double)monotonic_ns() / 1e6;
}

/* How long the drain sleeps between passes. Never spinning matters: a query costs the driver
 * time while the program launches (tools/bench/eventcost), and a pass makes a few per stream
 * however many pairs completed. Batching completions 500 us at a time keeps the queries to a
 * small fraction of the samples at high launch rates (the pool's first 1024 pairs have room
 * for them); idle, it backs off to 2 ms. Exit and context releases do not wait for it. */
#define DRAIN_BUSY_SLEEP_US 500
#define DRAIN_IDLE_MAX_US 2000

/* The time us microseconds from now on clock c, for the timed waits. */
static struct timespec time_after(clockid_t c, long us)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    ts.tv_sec += us / 1000000;
    ts.tv_nsec += (us % 1000000) * 1000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Sleeps us microseconds, or less if drain_stop() asks the thread to stop. */
static void drain_sleep(struct drain *d, long us)
{
    struct timespec ts = time_after(CLOCK_MONOTONIC, us);

    pthread_mutex_lock(&d->wake_mu);
    while (!atomic_load_explicit(&d->stop, memory_order_acquire) &&
           pthread_cond_timedwait(&d->wake_cv, &d->wake_mu, &ts) == 0)
        ;
    pthread_mutex_unlock(&d->wake_mu);
}

static void *drain_main(void *arg)
{
    struct drain *d = arg;
    long idle_us = DRAIN_BUSY_SLEEP_US;

    if (d->ops->thread_start)
        d->ops->thread_start();

    while (!atomic_load_explicit(&d->stop, memory_order_acquire)) {
        bool busy;
        if (d->records)
            d->records();
        pthread_mutex_lock(&d->pass_lock);
        busy = drain_pass(d) > 0 || pending_total(d) > 0;
        pthread_mutex_unlock(&d->pass_lock);
        void (*tick)(void) = atomic_load_explicit(&d->tick, memory_order_acquire);
        if (tick)
            tick();
        if (busy)
            idle_us = DRAIN_BUSY_SLEEP_US;
        else if (idle_us < DRAIN_IDLE_MAX_US)
            idle_us *= 2;
        drain_sleep(d, idle_us);
    }
    return NULL;
}

int drain_start(struct drain *d)
{
    pthread_attr_t attr;
    sigset_t all, old;
    int err;

    /* Under wake_mu, as drain_stop() sets stop: a thread is either started before it, and
     * joined there, or not at all. */
    pthread_mutex_lock(&d->wake_mu);
    if (atomic_load_explicit(&d->stop, memory_order_acquire) ||
        atomic_load_explicit(&d->started, memory_order_relaxed)) {
        pthread_mutex_unlock(&d->wake_mu);
        return 0;
    }
    /* The drain thread must never receive the host program's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    err = pthread_create(&d->thread, &attr, drain_main, d);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err == 0) {
        atomic_store_explicit(&d->started, true, memory_order_release); /* after d->thread */
#ifdef __GLIBC__
        pthread_setname_np(d->thread, "ktime-drain");
#endif
    }
    pthread_mutex_unlock(&d->wake_mu);
    return err;
}

bool drain_stop(struct drain *d, long wait_ms)
{
    struct timespec ts;
    bool started;

    pthread_mutex_lock(&d->wake_mu);
    atomic_store_explicit(&d->stop, 1, memory_order_release);
    pthread_cond_signal(&d->wake_cv);
    started = atomic_load_explicit(&d->started, memory_order_acquire);
    pthread_mutex_unlock(&d->wake_mu);
    if (!started)
        return true;
    ts = time_after(CLOCK_REALTIME, wait_ms * 1000); /* pthread_timedjoin_np's clock */
    if (pthread_timedjoin_np(d->thread, NULL, &ts) != 0)
        return false;
    atomic_store_explicit(&d->started, false, memory_order_release);
    return true;
}

uint64_t drain_finish(struct drain *d, long wait_ms)
{
    double deadline = drain_now_ms() + (double)wait_ms;
    uint64_t left = 0;
    uint32_t n;

    for (;;) {
        drain_pass(d);
        if (pending_total(d) == 0 || drain_now_ms() >= deadline)
            break;
        sleep_us(100);
    }
    n = atomic_load_explicit(&d->npools, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (!atomic_load_explicit(&d->pools[i]->dead, memory_order_acquire))
            left += abandon_pending(d, d->pools[i], true);
    return left;
}
