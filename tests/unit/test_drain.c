/* test_drain.c - pools and the drain with simulated events: exact aggregates, per-stream
 * ordering, growth up to the cap, errors, the bounded exit wait, and a live drain thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drain.h"

struct fev {
    _Atomic int pending;
    int error;
    double t_ms;
};
static _Atomic int created_events;
static int create_limit = 1 << 30;

/* The growth clock of the tests: an event pair costs create_cost_ns of it to make (the
 * driver's wait behind launching threads), nothing else moves it. */
static uint64_t fake_now_ns, create_cost_ns;
static uint64_t fake_clock(void)
{
    return fake_now_ns;
}

static int f_create(void *ctx, void **a, void **b)
{
    if (atomic_load(&created_events) + 2 > create_limit)
        return -1;
    fake_now_ns += create_cost_ns;
    *a = calloc(1, sizeof(struct fev));
    *b = calloc(1, sizeof(struct fev));
    atomic_fetch_add(&created_events, 2);
    return 0;
}
static _Atomic int elapsed_on_pending; /* elapsed-time calls made before completion */
static void (*during_query)(void); /* run once at the next query: a launch in mid-pass */
static int f_query(void *stop)
{
    struct fev *e = stop;
    if (during_query) {
        void (*f)(void) = during_query;
        during_query = NULL;
        f();
    }
    if (e->error)
        return e->error == 2 ? -2 : -1; /* 2: its context was destroyed */
    return atomic_load(&e->pending) ? 1 : 0;
}
static int f_elapsed(void *start, void *stop, float *ms)
{
    struct fev *e = stop;
    if (e->error)
        return e->error == 2 ? -2 : -1;
    if (atomic_load(&e->pending)) {
        atomic_fetch_add(&elapsed_on_pending, 1);
        return 1;
    }
    *ms = (float)(e->t_ms - ((struct fev *)start)->t_ms);
    return 0;
}
static const struct event_ops fops = { f_create, f_query, f_elapsed };

static struct agg *find(struct drain *d, uint32_t kernel, int device)
{
    uint64_t key = (uint64_t)kernel << 16 | (uint16_t)device;
    struct agg *a;
    HASH_FIND(hh, d->aggs, &key, sizeof key, a);
    return a;
}

/* What a test made goes back at its end (LeakSanitizer checks the unit tests): a pool's
 * fake events and memory; the drain's aggregates and locks. */
static void put_pool(struct pool *p)
{
    for (uint32_t i = 0; i < atomic_load(&p->created); i++) {
        free(p->slots[i].start);
        free(p->slots[i].stop);
    }
    pool_free_memory(p);
}

static void put_drain(struct drain *d)
{
    struct agg *a, *tmp;
    HASH_ITER(hh, d->aggs, a, tmp) {
        HASH_DEL(d->aggs, a);
        free(a);
    }
    pthread_mutex_destroy(&d->pass_lock);
    pthread_mutex_destroy(&d->wake_mu);
    pthread_cond_destroy(&d->wake_cv);
}

/* Takes a slot and "records" a launch of `us` microseconds on stream s. */
static uint32_t launch(struct pool *p, uint32_t kernel, uintptr_t s, double us, int pending)
{
    uint32_t id;
    assert_true(pool_acquire(p, &id));
    struct pool_slot *sl = &p->slots[id];
    ((struct fev *)sl->start)->t_ms = 1.0;
    ((struct fev *)sl->stop)->t_ms = 1.0 + us / 1000.0;
    ((struct fev *)sl->stop)->error = 0;
    atomic_store(&((struct fev *)sl->stop)->pending, pending);
    sl->kernel = kernel;
    sl->stream = s;
    pool_submit(p, id);
    return id;
}

static void test_exact_aggregates(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 3, 64, 8), 0);
    assert_int_equal(drain_add_pool(&d, &p), 0);
    const double us[] = { 62.5, 125, 250, 500, 1000 };
    for (int i = 0; i < 5; i++)
        launch(&p, 7, 0, us[i], 0);
    assert_int_equal(drain_pass(&d), 5);
    struct agg *a = find(&d, 7, 3);
    assert_non_null(a);
    assert_int_equal(a->st.n, 5);
    assert_true(a->st.sum == 1937.5);
    assert_true(a->st.min == 62.5 && a->st.max == 1000);
    /* every pair is back in the pool */
    uint32_t id, n = 0;
    while (pool_acquire(&p, &id))
        n++;
    assert_int_equal(n, 8);
    put_pool(&p);
    put_drain(&d);
}

static void test_pending_and_stream_order(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 64, 16), 0);
    drain_add_pool(&d, &p);
    uint32_t first = launch(&p, 1, 0xA, 100, 1); /* pending on stream A */
    uint32_t second = launch(&p, 1, 0xA, 100, 1); /* behind it on A */
    launch(&p, 2, 0xB, 50, 0);                   /* another stream: done */
    assert_int_equal(drain_pass(&d), 1);
    assert_null(find(&d, 1, 0));
    assert_int_equal(find(&d, 2, 0)->st.n, 1);
    assert_int_equal(p.npending, 2);
    /* A: its newest pending, then a search of the one before; B: its newest, done. */
    assert_int_equal(d.queries, 3);
    assert_int_equal(d.queries_pending, 2);
    assert_int_equal(d.elapsed_calls, 1);
    atomic_store(&((struct fev *)p.slots[first].stop)->pending, 0);
    assert_int_equal(drain_pass(&d), 1); /* the first done, the second still pending */
    assert_int_equal(find(&d, 1, 0)->st.n, 1);
    atomic_store(&((struct fev *)p.slots[second].stop)->pending, 0);
    assert_int_equal(drain_pass(&d), 1);
    assert_int_equal(find(&d, 1, 0)->st.n, 2);
    assert_int_equal(p.npending, 0);
    assert_int_equal(d.elapsed_calls, 3); /* one per completed pair */
    assert_int_equal(d.passes, 3);
    assert_int_equal(atomic_load(&elapsed_on_pending), 0); /* never asked before completion */
    put_pool(&p);
    put_drain(&d);
}

/* Many pairs on one stream, completed up to some point: a pass finds the boundary with a
 * handful of queries, not one per pair, and folds exactly the completed ones. */
static void test_search_per_stream(void **state)
{
    struct drain d;
    struct pool p;
    uint32_t ids[1000];
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 4096, 2048), 0);
    drain_add_pool(&d, &p);
    for (int i = 0; i < 1000; i++)
        ids[i] = launch(&p, 4, 0xA, 10, i >= 637);
    for (int i = 0; i < 300; i++)
        launch(&p, 5, 0xB + (uintptr_t)(i % 3), 20, 0); /* three other streams, all done */
    assert_int_equal(drain_pass(&d), 637 + 300);
    assert_int_equal(find(&d, 4, 0)->st.n, 637);
    assert_int_equal(find(&d, 5, 0)->st.n, 300);
    /* On A, 363 of 1000 pending: 10 probes back from the newest (steps 1, 1, 2 ... 256) and
     * 8 to bisect the last step; one per other stream. */
    assert_true(d.queries <= 2 * 9 + 2 + 3);
    assert_int_equal(d.elapsed_calls, 937);
    assert_int_equal(p.npending, 363);
    assert_int_equal(p.pending[0], ids[637]); /* what waits keeps its order */
    assert_int_equal(atomic_load(&elapsed_on_pending), 0);
    for (int i = 637; i < 1000; i++)
        atomic_store(&((struct fev *)p.slots[ids[i]].stop)->pending, 0);
    assert_int_equal(drain_pass(&d), 363);
    assert_int_equal(find(&d, 4, 0)->st.n, 1000);
    put_pool(&p);
    put_drain(&d);
}

/* The common case, the GPU a launch or two behind: a handful of queries, whatever is pending
 * behind them. */
static void test_search_few_pending(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 4096, 2048), 0);
    drain_add_pool(&d, &p);
    for (int i = 0; i < 1000; i++)
        launch(&p, 4, 0xA, 10, i >= 999);
    assert_int_equal(drain_pass(&d), 999);
    assert_int_equal(d.queries, 2); /* the newest (pending), the one before (complete) */
    for (int i = 0; i < 1000; i++) /* another stream: A's newest is still pending */
        launch(&p, 4, 0xB, 10, i >= 990);
    d.queries = 0;
    assert_int_equal(drain_pass(&d), 990);
    /* On B, 10 pending: probes at -1, -2, -4, -8, -16, then 3 to bisect; 1 on A. */
    assert_true(d.queries <= 1 + 8);
    assert_int_equal(atomic_load(&elapsed_on_pending), 0);
    put_pool(&p);
    put_drain(&d);
}

/* A context destroyed behind ktime's back: the first call that says so ends the pool; its
 * pending pairs are counted incomplete and no event of it is asked about again. */
static void test_context_gone(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 64, 16), 0);
    drain_add_pool(&d, &p);
    launch(&p, 1, 0xA, 100, 0);                     /* completed before the end */
    uint32_t gone = launch(&p, 1, 0xB, 100, 1);
    launch(&p, 2, 0xC, 100, 1);
    launch(&p, 2, 0xC, 100, 1);
    ((struct fev *)p.slots[gone].stop)->error = 2;
    assert_int_equal(drain_pass(&d), 1);
    assert_int_equal(find(&d, 1, 0)->st.n, 1);
    assert_true(atomic_load(&p.dead) && atomic_load(&p.gone) && atomic_load(&p.retiring));
    assert_int_equal(find(&d, 1, 0)->incomplete, 1);
    assert_int_equal(find(&d, 2, 0)->incomplete, 2);
    uint64_t calls = d.queries + d.elapsed_calls;
    assert_int_equal(drain_pass(&d), 0);
    assert_int_equal(d.queries + d.elapsed_calls, calls); /* never touched again */
    /* drain_pool_gone on a live pool does the same, and twice is harmless */
    struct pool q;
    assert_int_equal(pool_init(&q, &fops, (void *)0x2, 0, 64, 16), 0);
    drain_add_pool(&d, &q);
    launch(&q, 3, 0xA, 100, 1);
    drain_pool_gone(&d, &q);
    drain_pool_gone(&d, &q);
    assert_int_equal(find(&d, 3, 0)->incomplete, 1);
    assert_int_equal(drain_pass(&d), 0);
    assert_int_equal(d.queries + d.elapsed_calls, calls);
    put_pool(&q);
    put_pool(&p);
    put_drain(&d);
}

/* A pair submitted to a retiring pool while a pass is under way, after the pass took its
 * queue, completes: past the deadline the pass gives up only the pairs it looked at, and the
 * next one folds the late pair instead of counting it incomplete unseen. */
static struct pool *late_pool;
static void late_launch(void)
{
    launch(late_pool, 2, 0xB, 50, 0);
}

static void test_retire_late_submit(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 64, 16), 0);
    drain_add_pool(&d, &p);
    launch(&p, 1, 0xA, 100, 1); /* never completes */
    p.retire_deadline_ms = 0;
    atomic_store(&p.retiring, 1);
    late_pool = &p;
    during_query = late_launch;
    drain_pass(&d);
    assert_null(during_query);
    assert_int_equal(find(&d, 1, 0)->incomplete, 1);
    assert_false(atomic_load(&p.dead));
    assert_int_equal(drain_pass(&d), 1);
    assert_int_equal(find(&d, 2, 0)->st.n, 1);
    assert_int_equal(find(&d, 2, 0)->incomplete, 0);
    assert_true(atomic_load(&p.dead));
    put_pool(&p);
    put_drain(&d);
}

/* More streams than a pass searches as a whole: the rest are queried pair by pair, with the
 * same result. */
static void test_many_streams(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 256, 128), 0);
    drain_add_pool(&d, &p);
    for (int r = 0; r < 3; r++)
        for (uintptr_t s = 1; s <= 40; s++)
            launch(&p, 6, s, 10, r == 2);
    assert_int_equal(drain_pass(&d), 80);
    assert_int_equal(find(&d, 6, 0)->st.n, 80);
    assert_int_equal(p.npending, 40);
    assert_int_equal(atomic_load(&elapsed_on_pending), 0);
    put_pool(&p);
    put_drain(&d);
}

/* Passes until the pool stops growing; returns how many passes grew it. Each pass makes
 * at most DRAIN_GROW_STEP (256) pairs. */
static int grow_passes(struct drain *d, struct pool *p)
{
    int n = 0;
    for (;;) {
        uint32_t before = atomic_load(&p->created);
        drain_pass(d);
        uint32_t after = atomic_load(&p->created);
        assert_true(after - before <= 256);
        if (after == before)
            return n;
        n++;
    }
}

static void test_growth_to_cap(void **state)
{
    struct drain d;
    struct pool p;
    uint32_t id;
    drain_init(&d, &fops);
    d.grow_clock = fake_clock; /* creation takes no time: 256 pairs a pass */
    create_cost_ns = 0;
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 5000, 8), 0);
    drain_add_pool(&d, &p);
    for (int i = 0; i < 8; i++)
        assert_true(pool_acquire(&p, &id));
    assert_false(pool_acquire(&p, &id)); /* empty: the launch would be dropped */
    assert_int_equal(atomic_load(&p.want_grow), 1);
    drain_pass(&d); /* grows off the launch path, a step per pass, by 1024 in all */
    assert_int_equal(atomic_load(&p.created), 8 + 256);
    assert_true(pool_acquire(&p, &id)); /* the first step's pairs are usable at once */
    assert_int_equal(grow_passes(&d, &p), 3);
    assert_int_equal(atomic_load(&p.created), 8 + 1024);
    for (int i = 0; i < 1023; i++)
        assert_true(pool_acquire(&p, &id));
    assert_false(pool_acquire(&p, &id));
    assert_int_equal(grow_passes(&d, &p), 13); /* then by 3x, to 4x the size */
    assert_int_equal(atomic_load(&p.created), 4 * 1032);
    for (int i = 0; i < 3 * 1032; i++)
        assert_true(pool_acquire(&p, &id));
    assert_false(pool_acquire(&p, &id));
    grow_passes(&d, &p);
    assert_int_equal(atomic_load(&p.created), 5000); /* never past the cap */
    while (pool_acquire(&p, &id))
        ;
    drain_pass(&d);
    assert_int_equal(atomic_load(&p.created), 5000);
    put_pool(&p);
    put_drain(&d);
}

/* A growth in progress does not stop the drain: pairs that complete while the pool grows
 * are folded in the same passes. */
static void test_growth_keeps_folding(void **state)
{
    struct drain d;
    struct pool p;
    uint32_t id;
    drain_init(&d, &fops);
    d.grow_clock = fake_clock; /* creation takes no time: 256 pairs a pass */
    create_cost_ns = 0;
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 16384, 1024), 0);
    drain_add_pool(&d, &p);
    for (int i = 0; i < 1024; i++) {
        assert_true(pool_acquire(&p, &id));
        p.slots[id].kernel = 9;
        p.slots[id].stream = 1;
        pool_submit(&p, id);
    }
    assert_false(pool_acquire(&p, &id)); /* asks for 3072 more: 12 passes */
    drain_pass(&d);
    assert_int_equal(find(&d, 9, 0)->st.n, 1024); /* folded in the first growing pass */
    assert_int_equal(atomic_load(&p.created), 1024 + 256);
    assert_int_equal(grow_passes(&d, &p), 11);
    assert_int_equal(atomic_load(&p.created), 4096);
    put_pool(&p);
    put_drain(&d);
}

/* Event creation that waits behind launching threads (40 us a pair here) does not hold the
 * drain: a pass stops growing after 1 ms of it, and the pairs that complete meanwhile are
 * folded pass by pass, until the growth is done. */
static void test_slow_growth_bounded(void **state)
{
    struct drain d;
    struct pool p;
    uint32_t id;
    drain_init(&d, &fops);
    d.grow_clock = fake_clock;
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 4096, 64), 0);
    drain_add_pool(&d, &p);
    create_cost_ns = 40000;
    for (int i = 0; i < 64; i++)
        launch(&p, 3, 1, 10, 0);
    assert_false(pool_acquire(&p, &id)); /* asks for 1024 more */
    int passes = 0;
    uint64_t folded = 0;
    for (;;) {
        uint32_t before = atomic_load(&p.created);
        uint64_t t0 = fake_now_ns;
        folded += drain_pass(&d);
        uint32_t made = atomic_load(&p.created) - before;
        if (made == 0)
            break;
        passes++;
        assert_true(made <= 25); /* 1 ms of 40 us pairs */
        assert_true(fake_now_ns - t0 <= 1000000);
        assert_int_equal(folded, 64 + 10 * (passes - 1)); /* every completed pair folded */
        for (int i = 0; i < 10; i++)                      /* launches go on meanwhile */
            launch(&p, 3, 1, 10, 0);
    }
    assert_int_equal(atomic_load(&p.created), 64 + 1024);
    assert_int_equal(passes, (1024 + 24) / 25);
    create_cost_ns = 0;
    put_pool(&p);
    put_drain(&d);
}

static void test_create_failure(void **state)
{
    struct pool p;
    int before = atomic_load(&created_events);
    create_limit = before; /* no event can be made */
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 64, 8), -1);
    create_limit = 1 << 30;
    put_pool(&p);
}

static void test_errors_recycled(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 8, 8), 0);
    drain_add_pool(&d, &p);
    uint32_t id = launch(&p, 4, 0, 10, 0);
    ((struct fev *)p.slots[id].stop)->error = 1;
    launch(&p, 4, 0, 10, 0);
    assert_int_equal(drain_pass(&d), 2);
    struct agg *a = find(&d, 4, 0);
    assert_int_equal(a->errors, 1);
    assert_int_equal(a->st.n, 1);
    put_pool(&p);
    put_drain(&d);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_finish_is_bounded(void **state)
{
    struct drain d;
    struct pool p;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 1, 16, 16), 0);
    drain_add_pool(&d, &p);
    launch(&p, 9, 0xA, 10, 0);
    launch(&p, 9, 0xA, 10, 1); /* never completes */
    launch(&p, 9, 0xA, 10, 1);
    double t0 = now_ms();
    assert_int_equal(drain_finish(&d, 50), 2);
    double took = now_ms() - t0;
    assert_true(took >= 45 && took < 1000);
    struct agg *a = find(&d, 9, 1);
    assert_int_equal(a->st.n, 1);
    assert_int_equal(a->incomplete, 2);
    put_pool(&p);
    put_drain(&d);
}

#define THREADS 4
#define PER_THREAD 20000
static struct pool live;

static void *launcher(void *arg)
{
    uint32_t id;
    for (int i = 0; i < PER_THREAD; i++) {
        /* A real launch would be dropped; here we wait for the drain to recycle, giving it
         * the CPU (four spinning threads on two cores under ThreadSanitizer, whose atomics
         * take locks, starved it for minutes). */
        while (!pool_acquire(&live, &id))
            sched_yield();
        ((struct fev *)live.slots[id].start)->t_ms = 0;
        ((struct fev *)live.slots[id].stop)->t_ms = 0.25;
        live.slots[id].kernel = (uint32_t)(uintptr_t)arg;
        live.slots[id].stream = (uintptr_t)arg;
        pool_submit(&live, id);
    }
    return NULL;
}

static void test_live_thread(void **state)
{
    struct drain d;
    pthread_t th[THREADS];
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&live, &fops, (void *)0x1, 0, 512, 64), 0);
    drain_add_pool(&d, &live);
    assert_int_equal(drain_start(&d), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, launcher, (void *)(uintptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_true(drain_stop(&d, 5000));
    assert_int_equal(drain_finish(&d, 1000), 0);
    for (int i = 0; i < THREADS; i++) {
        struct agg *a = find(&d, (uint32_t)i, 0);
        assert_non_null(a);
        assert_int_equal(a->st.n, PER_THREAD);
        assert_true(a->st.min == 250 && a->st.max == 250);
    }
    put_pool(&live);
    put_drain(&d);
}

static void *start_drain(void *arg)
{
    return (void *)(intptr_t)drain_start(arg);
}

/* drain_stop() and a drain_start() racing with it (a first launch in another thread while the
 * report begins): either the thread is started first and joined by the stop, or it is never
 * started; after the stop no thread runs, and none starts later. */
static void test_stop_races_start(void **state)
{
    for (int round = 0; round < 200; round++) {
        struct drain d;
        pthread_t th;
        void *rc;
        drain_init(&d, &fops);
        pthread_create(&th, NULL, start_drain, &d);
        assert_true(drain_stop(&d, 5000));
        pthread_join(th, &rc);
        assert_int_equal((int)(intptr_t)rc, 0);
        assert_false(atomic_load(&d.started));
        assert_int_equal(drain_start(&d), 0);
        assert_false(atomic_load(&d.started));
        put_drain(&d);
    }
}

/* The gate watchdog opens only a gate it finds closed with the same value at two passes,
 * marks the slot forced, and the drain then voids that sample. */
static void test_gate_watchdog(void **state)
{
    struct drain d;
    struct pool p;
    uint32_t words[16] = { 0 }, id;
    drain_init(&d, &fops);
    assert_int_equal(pool_init(&p, &fops, (void *)0x1, 0, 16, 16), 0);
    drain_add_pool(&d, &p);
    p.gate_host = words;
    assert_true(pool_acquire(&p, &id));
    p.slots[id].gen = 7;
    atomic_store(&p.slots[id].gate_closed, 7);  /* a launch blocked behind its gate */
    uint32_t closed = 0;
    assert_int_equal(pool_gate_watch(&p, &closed), 0); /* first sight: maybe just a slow launch */
    assert_int_equal(closed, 1);
    assert_int_equal(words[id], 0);
    assert_int_equal(pool_gate_watch(&p, &closed), 1); /* still closed, same value: open it */
    assert_int_equal(words[id], 7);
    assert_int_equal(atomic_load(&p.slots[id].forced), 7);
    /* a gate that was opened and closed again for a new launch is not touched */
    uint32_t other;
    assert_true(pool_acquire(&p, &other));
    atomic_store(&p.slots[other].gate_closed, 3);
    pool_gate_watch(&p, &closed);
    atomic_store(&p.slots[other].gate_closed, 4);
    assert_int_equal(pool_gate_watch(&p, &closed), 0);
    assert_int_equal(words[other], 0);
    /* no gate closed: the watchdog finds none (and may sleep) */
    atomic_store(&p.slots[other].gate_closed, 0);
    atomic_store(&p.slots[id].gate_closed, 0);
    closed = 0;
    pool_gate_watch(&p, &closed);
    assert_int_equal(closed, 0);
    atomic_store(&p.slots[id].gate_closed, 7);
    /* the forced launch completes: its sample is void, counted as forced, not timed */
    atomic_store(&p.slots[id].gate_closed, 0);
    ((struct fev *)p.slots[id].start)->t_ms = 0;
    ((struct fev *)p.slots[id].stop)->t_ms = 5;
    atomic_store(&((struct fev *)p.slots[id].stop)->pending, 0);
    p.slots[id].kernel = 3;
    pool_submit(&p, id);
    assert_int_equal(drain_pass(&d), 1);
    struct agg *a = find(&d, 3, 0);
    assert_non_null(a);
    assert_int_equal(a->forced, 1);
    assert_int_equal(a->st.n, 0);
    put_pool(&p);
    put_drain(&d);
}

/* A kernel's first launch in a context is one launch, also when several threads launch it
 * there at once: the others must not count as first in a further context (an untimed
 * rewarm, or an ungated sample). */
#define FIRST_IDS 4096
static struct pool first_pool;
static _Atomic int first_count[FIRST_IDS];
static pthread_barrier_t first_bar;

static void *first_launcher(void *arg)
{
    pthread_barrier_wait(&first_bar);
    for (uint32_t id = 0; id < FIRST_IDS; id++)
        if (pool_first_launch(&first_pool, id))
            atomic_fetch_add(&first_count[id], 1);
    return NULL;
}

static void test_first_launch_once(void **state)
{
    pthread_t th[THREADS];
    first_pool.seen = calloc(FIRST_IDS / 64, sizeof *first_pool.seen);
    assert_non_null(first_pool.seen);
    for (int round = 0; round < 20; round++) {
        memset(first_pool.seen, 0, FIRST_IDS / 8);
        for (int id = 0; id < FIRST_IDS; id++)
            atomic_store(&first_count[id], 0);
        pthread_barrier_init(&first_bar, NULL, THREADS);
        for (int i = 0; i < THREADS; i++)
            pthread_create(&th[i], NULL, first_launcher, NULL);
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&first_bar);
        for (int id = 0; id < FIRST_IDS; id++)
            assert_int_equal(atomic_load(&first_count[id]), 1);
    }
    assert_false(pool_first_launch(&first_pool, 7));
    free((void *)first_pool.seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_aggregates),
        cmocka_unit_test(test_pending_and_stream_order),
        cmocka_unit_test(test_context_gone),
        cmocka_unit_test(test_search_per_stream),
        cmocka_unit_test(test_search_few_pending),
        cmocka_unit_test(test_many_streams),
        cmocka_unit_test(test_retire_late_submit),
        cmocka_unit_test(test_growth_to_cap),
        cmocka_unit_test(test_growth_keeps_folding),
        cmocka_unit_test(test_slow_growth_bounded),
        cmocka_unit_test(test_create_failure),
        cmocka_unit_test(test_errors_recycled),
        cmocka_unit_test(test_finish_is_bounded),
        cmocka_unit_test(test_live_thread),
        cmocka_unit_test(test_stop_races_start),
        cmocka_unit_test(test_gate_watchdog),
        cmocka_unit_test(test_first_launch_once),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
