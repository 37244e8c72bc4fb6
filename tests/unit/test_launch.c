/* test_launch.c - what the launch path (launch.h, launch.c) counts, through the fake driver:
 * warmup per kernel, captured launches (during warmup and after), KTIME_SAMPLE's untimed
 * launches, KTIME_CAPTURE's launches outside the range, failed launches, launches made while
 * the report is written, a full kernel table, a dry pool, contexts without a pool, and
 * memory operations (memop.c) bracketed like launches. Each case ends in the report's rows
 * (collect_kernels), every launch in exactly one bucket. */
#include "fixture.h"

#include <string.h>

#include "lifecycle.h"
#include "memop.h"

#define NS 250000u

static CUcontext ctx;
static CUstream s;
static void *k1, *k2;

static void start(void)
{
    ctx = fd_context(0);
    s = fd_stream(ctx);
    k1 = fd_kernel("k_one");
    k2 = fd_kernel("k_two");
}

/* n launches of k on s, each waited for and folded (fx_run). */
static int run(void *k, int n)
{
    return fx_run(k, s, n, NS);
}

/* The rows of what ran, with every completed pair folded in; row of name (asserted). */
static struct report_kernel *rows(struct report *r, const char *name)
{
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(r, false), 0);
    struct report_kernel *k = fx_row(r, name);
    assert_non_null(k);
    fx_assert_buckets(r, k);
    return k;
}

static void test_warmup_per_kernel(void **state)
{
    struct report r;

    start();
    assert_int_equal(run(k1, 5), 2);
    assert_int_equal(run(k2, 2), 0);
    struct report_kernel *a = rows(&r, "k_one"), *b = fx_row(&r, "k_two");
    assert_non_null(b);
    fx_assert_buckets(&r, b);
    assert_int_equal(a->calls, 5);
    assert_int_equal(a->warmup_skipped, 3);
    assert_int_equal(fx_timed(&r, a), 2);
    assert_int_equal(b->calls, 2);
    assert_int_equal(b->warmup_skipped, 2);
    assert_int_equal(fx_timed(&r, b), 0);
    assert_int_equal(fd_calls(FD_EventRecord), 4);
    collect_free(&r);
}

/* A launch into a capture never runs: it is no warmup, and the next launch that runs is. */
static void test_captured_during_warmup(void **state)
{
    struct report r;
    struct fd_stats st;

    start();
    launch_capture_began(CUDA_SUCCESS);
    fd_capture(s, true);
    assert_int_equal(run(k1, 2), 0);
    fd_capture(s, false);
    launch_capture_ended(CUDA_SUCCESS);
    assert_int_equal(atomic_load(&kt.captures), 0);
    assert_int_equal(run(k1, 3), 1);
    assert_int_equal(fx_entry(k1)->calls, 3); /* the captured ones are not among them */
    assert_int_equal(fx_entry(k1)->captured, 2);
    assert_int_equal(fx_entry(k1)->warmup, 2);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 5);
    assert_int_equal(a->captured, 2);
    assert_int_equal(a->warmup_skipped, 2);
    assert_int_equal(fx_timed(&r, a), 1);
    fd_stats(&st);
    assert_int_equal(st.records_in_capture, 0);
    collect_free(&r);
}

/* Past warmup, the timed path asks the stream; an error counts as capturing. */
static void test_captured_after_warmup(void **state)
{
    struct report r;

    start();
    assert_int_equal(run(k1, 1), 0);
    launch_capture_began(CUDA_SUCCESS);
    fd_capture(s, true);
    assert_int_equal(run(k1, 2), 0);
    fd_capture(s, false);
    fd_fail(FD_StreamIsCapturing, CUDA_ERROR_UNKNOWN, 1);
    assert_int_equal(run(k1, 1), 0);
    launch_capture_ended(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED); /* ended all the same */
    assert_int_equal(atomic_load(&kt.captures), 0);
    assert_int_equal(run(k1, 1), 1);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 5);
    assert_int_equal(a->captured, 3);
    assert_int_equal(a->warmup_skipped, 1);
    assert_int_equal(fx_timed(&r, a), 1);
    collect_free(&r);
}

static void test_capture_count(void **state)
{
    launch_capture_ended(CUDA_SUCCESS); /* ended nothing: never below 0 */
    assert_int_equal(atomic_load(&kt.captures), 0);
    launch_capture_began(CUDA_ERROR_ILLEGAL_STATE); /* began nothing */
    assert_int_equal(atomic_load(&kt.captures), 0);
    launch_capture_began(CUDA_SUCCESS);
    launch_capture_began(CUDA_SUCCESS);
    launch_capture_ended(CUDA_ERROR_ILLEGAL_STATE); /* not capturing: changes nothing */
    assert_int_equal(atomic_load(&kt.captures), 2);
    launch_capture_ended(CUDA_SUCCESS);
    launch_capture_ended(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    assert_int_equal(atomic_load(&kt.captures), 0);
}

/* KTIME_SAMPLE=4: the draw leaves about 3 launches in 4 untimed, counted as unsampled (and
 * as failed when the driver refuses one). The draw is the thread's: seeded here, replayed. */
static void test_sample_untimed_counted(void **state)
{
    struct report r;
    bool drawn[39];
    int expected = 0, fail_at = -1;

    start();
    launch_rng = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < 39; i++) {
        drawn[i] = launch_drawn();
        expected += drawn[i];
        if (!drawn[i] && fail_at < 0)
            fail_at = i;
    }
    assert_true(expected > 0 && expected < 39 && fail_at >= 0);
    launch_rng = 0x2545F4914F6CDD1DULL;
    assert_int_equal(run(k1, 1), 0); /* warmup: no draw */
    for (int i = 0; i < 39; i++) {
        assert_int_equal(fx_launch_r(k1, s, NS, i == fail_at ? CUDA_ERROR_LAUNCH_FAILED
                                                             : CUDA_SUCCESS),
                         true); /* drawn or not, launch_end counts it */
        assert_true(fd_sync(s));
        drain_pass(&kt.drain);
    }
    assert_int_equal(fd_calls(FD_EventRecord), 2 * (uint64_t)expected);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 40);
    assert_int_equal(a->warmup_skipped, 1);
    assert_int_equal(fx_timed(&r, a), expected);
    assert_int_equal(a->failed, 1);
    assert_int_equal(a->unsampled, 39 - expected - 1);
    assert_int_equal(a->incomplete, 0);
    collect_free(&r);
}

static void test_capture_outside_counted(void **state)
{
    struct report r;

    start();
    assert_int_equal(run(k1, 2), 0); /* warmup, then outside the range */
    capture_mark(true, CUDA_ERROR_NOT_INITIALIZED); /* a failed call opens nothing */
    assert_int_equal(run(k1, 1), 0);
    capture_mark(true, CUDA_SUCCESS);
    capture_mark(true, CUDA_SUCCESS); /* open already: no new range */
    assert_int_equal(run(k1, 2), 2);
    capture_mark(false, CUDA_SUCCESS);
    assert_int_equal(run(k1, 1), 0);
    struct report h;
    fx_header(&h);
    assert_string_equal(h.capture, "profiler-api");
    assert_int_equal(h.capture_starts, 2);
    assert_int_equal(h.capture_stops, 1);
    assert_int_equal(h.capture_ranges, 1);
    assert_int_equal(h.capture_still_open, 0);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 6);
    assert_int_equal(a->warmup_skipped, 1);
    assert_int_equal(a->outside_range, 3);
    assert_int_equal(fx_timed(&r, a), 2);
    collect_free(&r);
}

/* A refused launch enqueues nothing: counted failed, its slot back, its gate opened. */
static void test_failed_launches(void **state)
{
    struct report r;
    uint32_t slot, free_slots = 0;

    start();
    assert_int_equal(run(k1, 1), 1);
    assert_true(fx_launch_r(k1, s, NS, CUDA_ERROR_LAUNCH_FAILED));
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 1);
    assert_int_equal(fd_queued(s), 0); /* the gate was opened: the start event ran */
    assert_int_equal(run(k1, 1), 1);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 3);
    assert_int_equal(a->failed, 1);
    assert_int_equal(fx_timed(&r, a), 2);
    assert_int_equal(a->dropped, 0);
    struct pool *p = kt.drain.pools[0];
    while (pool_acquire(p, &slot))
        free_slots++;
    assert_int_equal(free_slots, 8);
    collect_free(&r);
}

/* The driver refuses an event: the launch runs untimed, dropped as event_error. A start event
 * that says its context is gone retires the pool: the next launch makes a new one. */
static void test_event_errors(void **state)
{
    struct launch L;
    struct report r;

    start();
    assert_int_equal(run(k1, 1), 1);
    /* The stop event. */
    assert_true(launch_begin(&L, k1, KTAB_KERNEL, s, 0, false));
    fd_run(s, NS);
    fd_fail(FD_EventRecord, CUDA_ERROR_UNKNOWN, 1);
    launch_end(&L, CUDA_SUCCESS);
    assert_true(fd_sync(s));
    /* The start event, with its context gone. */
    fd_fail(FD_EventRecord, CUDA_ERROR_CONTEXT_IS_DESTROYED, 1);
    assert_int_equal(run(k1, 1), 0);
    struct pool *old = kt.drain.pools[0];
    assert_int_equal(atomic_load(&old->gone), 1);
    assert_int_equal(atomic_load(&old->retiring), 1);
    assert_int_equal(fd_queued(s), 0); /* its gate, if any, was opened */
    assert_int_equal(run(k1, 1), 1);
    assert_int_equal(atomic_load(&kt.drain.npools), 2);
    assert_int_equal(kt.drops[DROP_EVENT_ERROR], 2);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 4);
    assert_int_equal(a->dropped, 2);
    assert_int_equal(fx_timed(&r, a), 2);
    assert_int_equal(r.drops[DROP_EVENT_ERROR], 2);
    collect_free(&r);
}

/* Launches once the report is being written: counted (shutdown, or failed), never timed, and
 * never warmup. */
static void test_launches_during_exit(void **state)
{
    struct report r;

    start();
    assert_int_equal(run(k1, 2), 0);
    atomic_store(&kt.phase, PHASE_EXITING);
    uint64_t records = fd_calls(FD_EventRecord);
    assert_true(fx_launch(k1, s, NS));
    assert_true(fx_launch_r(k1, s, NS, CUDA_ERROR_DEINITIALIZED));
    assert_true(fx_launch(k2, s, NS)); /* first seen now: named, counted */
    assert_int_equal(fd_calls(FD_EventRecord), records);
    /* The failed one is counted in calls (every launch is), but it is no warmup. */
    assert_int_equal(fx_entry(k1)->warmup, 2);
    struct report_kernel *a = rows(&r, "k_one"), *b = fx_row(&r, "k_two");
    assert_int_equal(a->calls, 4);
    assert_int_equal(a->warmup_skipped, 2);
    assert_int_equal(a->failed, 1);
    assert_int_equal(a->dropped, 1);
    assert_non_null(b);
    fx_assert_buckets(&r, b);
    assert_int_equal(b->calls, 1);
    assert_int_equal(b->dropped, 1);
    assert_int_equal(b->warmup_skipped, 0);
    assert_int_equal(r.drops[DROP_SHUTDOWN], 2);
    collect_free(&r);
}

static void test_table_full(void **state)
{
    struct report r;
    void *k[17];
    char name[16];

    start();
    for (int i = 0; i < 17; i++) {
        snprintf(name, sizeof name, "k_%02d", i);
        k[i] = fd_kernel(name);
        assert_int_equal(run(k[i], 1), i < 16);
    }
    assert_null(fx_entry(k[16]));
    assert_int_equal(kt.drops[DROP_TABLE_FULL], 1);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_int_equal(r.nkernels, 16);
    assert_int_equal(r.drops[DROP_TABLE_FULL], 1);
    collect_free(&r);
}

/* ktime's own calls on this thread pass through untouched. */
static void test_own_calls_pass_through(void **state)
{
    start();
    inside_ktime = 1;
    assert_false(fx_launch(k1, s, NS));
    inside_ktime = 0;
    assert_null(fx_entry(k1));
    assert_int_equal(fd_calls(FD_EventRecord), 0);
}

static void test_pool_dry(void **state)
{
    struct report r;

    start();
    fd_hold(s); /* the GPU is busy elsewhere: no pair completes */
    for (int i = 0; i < 9; i++)
        assert_int_equal(fx_launch(k1, s, NS), i < 8);
    drain_pass(&kt.drain);
    struct pool *p = kt.drain.pools[0];
    assert_int_equal(p->npending, 8);
    assert_int_equal(atomic_load(&p->created), 8); /* at its cap: never grown */
    fd_release(s);
    assert_true(fd_sync(s));
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 9);
    assert_int_equal(a->dropped, 1);
    assert_int_equal(fx_timed(&r, a), 8);
    assert_int_equal(r.drops[DROP_POOL_EXHAUSTED], 1);
    collect_free(&r);
}

/* No context for the stream, or none whose pool could be made: dropped as no_context, and
 * a context that failed is not tried again. */
static void test_no_context(void **state)
{
    struct report r;

    start();
    fd_fail(FD_StreamGetCtx, CUDA_ERROR_INVALID_HANDLE, 1);
    assert_int_equal(run(k1, 1), 0);
    fd_fail(FD_EventCreate, CUDA_ERROR_OUT_OF_MEMORY, -1);
    assert_int_equal(run(k1, 2), 0);
    assert_int_equal(fd_calls(FD_EventCreate), 1);
    assert_true(ktime_context_failed(ctx));
    assert_int_equal(atomic_load(&kt.drain.npools), 0);
    struct report_kernel *a = rows(&r, "k_one");
    assert_int_equal(a->calls, 3);
    assert_int_equal(a->dropped, 3);
    assert_int_equal(r.drops[DROP_NO_CONTEXT], 3);
    collect_free(&r);
}

/* Memory operations go through launch_begin/launch_end under their kind's key: warmup, a
 * pool, gates; never a gate for a call that may wait for its stream (it would wait for its
 * own gate). Bytes of every call that succeeded, and of the timed ones. */
static void test_memops(void **state)
{
    struct report r;
    struct memop set = memop_set(1024, 4, 1, 1), h2d, d2h;
    char pageable[64];
    void *pinned = NULL;

    start();
    assert_int_equal(drv.MemHostAlloc(&pinned, 4096, 0), CUDA_SUCCESS);
    h2d = memop_1d(MEMOP_HTOD, 1000, 1, pageable);
    d2h = memop_1d(MEMOP_DTOH, 3000, 1, pinned);
    assert_true(set.kind == MEMOP_MEMSET && set.bytes == 4096 && !set.blocking);
    assert_true(h2d.kind == MEMOP_HTOD && h2d.blocking); /* pageable: staged by the driver */
    assert_true(d2h.kind == MEMOP_DTOH && !d2h.blocking);
    for (int i = 0; i < 3; i++) {
        uint64_t waits = fd_calls(FD_StreamWaitValue32);
        assert_int_equal(fx_memop(&set, s, NS), i > 0);
        assert_int_equal(fd_calls(FD_StreamWaitValue32) - waits, i > 0);
        waits = fd_calls(FD_StreamWaitValue32);
        assert_int_equal(fx_memop(&h2d, s, NS), i > 0);
        assert_int_equal(fd_calls(FD_StreamWaitValue32) - waits, 0);
        assert_int_equal(fx_memop(&d2h, s, NS), i > 0);
        assert_true(fd_sync(s));
    }
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 4);
    assert_int_equal(memop_bytes[MEMOP_MEMSET], 3 * 4096);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_int_equal(r.nkernels, 0);
    assert_int_equal(r.nmemops, 3);
    const char *order[] = { "HtoD", "DtoH", "memset" };
    const uint64_t bytes[] = { 1000, 3000, 4096 };
    for (int i = 0; i < 3; i++) {
        struct report_kernel *m = &r.memops_rows[i];
        assert_string_equal(m->name, order[i]);
        assert_int_equal(m->kind, REPORT_MEMOP);
        assert_int_equal(m->calls, 3);
        assert_int_equal(m->warmup_skipped, 1);
        assert_int_equal(fx_timed(&r, m), 2);
        assert_int_equal(m->bytes, 3 * bytes[i]);
        assert_int_equal(m->timed_bytes, 2 * bytes[i]);
        assert_int_equal(m->ungated, i == 0 ? 2 : 0);
        fx_assert_buckets(&r, m);
    }
    collect_free(&r);
}

/* Where a copy's pointers live decides its kind and whether it may wait for its stream. */
static void test_memop_kinds(void **state)
{
    CUdeviceptr d1 = 0, d2 = 0;
    void *pinned = NULL;
    char pageable[8];

    start();
    assert_int_equal(drv.MemAlloc(&d1, 256), CUDA_SUCCESS);
    assert_int_equal(drv.MemAlloc(&d2, 256), CUDA_SUCCESS);
    assert_int_equal(drv.MemHostAlloc(&pinned, 256, 0), CUDA_SUCCESS);
    CUdeviceptr hp = (CUdeviceptr)(uintptr_t)pinned, hq = (CUdeviceptr)(uintptr_t)pageable;
    struct memop m = memop_any(d1, hp, 8, 1);
    assert_true(m.kind == MEMOP_HTOD && !m.blocking && m.bytes == 8);
    m = memop_any(hp, d1, 8, 1);
    assert_true(m.kind == MEMOP_DTOH && !m.blocking);
    m = memop_any(d2, d1, 8, 1);
    assert_true(m.kind == MEMOP_DTOD && !m.blocking);
    m = memop_any(hq, d1, 8, 1);
    assert_true(m.kind == MEMOP_DTOH && m.blocking); /* pageable */
    m = memop_any(d2, d1, 8, 0);
    assert_true(m.blocking); /* synchronous */
    assert_true(memop_wanted());
    inside_ktime = 1;
    assert_false(memop_wanted());
    inside_ktime = 0;
    kt.cfg.memops = false;
    assert_false(memop_wanted());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_warmup_per_kernel, "KTIME_WARMUP=3"),
        FX_TEST(test_captured_during_warmup, "KTIME_WARMUP=2"),
        FX_TEST(test_captured_after_warmup, "KTIME_WARMUP=1"),
        FX_TEST(test_capture_count),
        FX_TEST(test_sample_untimed_counted, "KTIME_WARMUP=1", "KTIME_SAMPLE=4"),
        FX_TEST(test_capture_outside_counted, "KTIME_WARMUP=1", "KTIME_CAPTURE=profiler-api"),
        FX_TEST(test_failed_launches, "KTIME_WARMUP=0", "KTIME_GATE=on"),
        FX_TEST(test_event_errors, "KTIME_WARMUP=0", "KTIME_GATE=on"),
        FX_TEST(test_launches_during_exit, "KTIME_WARMUP=5"),
        FX_TEST(test_table_full, "KTIME_WARMUP=0", "KTIME_MAX_KERNELS=16"),
        FX_TEST(test_own_calls_pass_through, "KTIME_WARMUP=0"),
        FX_TEST(test_pool_dry, "KTIME_WARMUP=0", "KTIME_GATE=off"),
        FX_TEST(test_no_context, "KTIME_WARMUP=0"),
        FX_TEST(test_memops, "KTIME_WARMUP=1", "KTIME_GATE=on", "KTIME_MEMOPS=1"),
        FX_TEST(test_memop_kinds, "KTIME_MEMOPS=1"),
    };

    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
