/* test_context.c - per-context set-up and ends (context.c) through the fake driver: a pool
 * and a device entry per context, launch gates and the L2 flush's scratch buffer (and what
 * happens without them), a context destroyed or a device reset (ktime_context_ending, with
 * and without a drain thread), a primary context released (ktime_primary_release): pending
 * pairs counted incomplete, never touched once their context is gone. */
#include "fixture.h"

#include <string.h>

#include "lifecycle.h"

#define NS 250000u

static void *k;

/* n launches of k on s; the program waits for each when `wait`. Returns those bracketed. */
static int run(CUstream s, int n, bool wait)
{
    int bracketed = 0;

    for (int i = 0; i < n; i++) {
        bracketed += fx_launch(k, s, NS);
        if (wait)
            assert_true(fd_sync(s));
    }
    return bracketed;
}

static struct pool *pool_of(CUcontext c)
{
    struct pool *found = NULL;

    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++)
        if (kt.drain.pools[i]->ctx == (void *)c)
            found = kt.drain.pools[i]; /* the newest */
    return found;
}

static void test_pool_and_device_per_context(void **state)
{
    k = fd_kernel("k_ctx");
    CUcontext c0 = fd_context(0), c1 = fd_context(1);
    CUstream s0 = fd_stream(c0), s1 = fd_stream(c1);
    assert_int_equal(run(s0, 2, true), 2);
    assert_int_equal(atomic_load(&kt.drain.npools), 1); /* the second launch found it */
    struct pool *p = pool_of(c0);
    assert_non_null(p);
    assert_int_equal(p->device, 0);
    assert_int_equal(atomic_load(&p->created), 8); /* KTIME_POOL_CAP */
    assert_false(p->primary);
    assert_non_null(p->gate_host);
    assert_non_null(p->seen);
    assert_int_equal(fx_watch_starts(), 1);
    fd_set_current(c1);
    assert_int_equal(run(s1, 1, true), 1);
    assert_int_equal(atomic_load(&kt.drain.npools), 2);
    assert_int_equal(pool_of(c1)->device, 1);
    assert_int_equal(atomic_load(&kt.ndevices), 2);
    assert_int_equal(kt.devices[0].ordinal, 0);
    assert_string_equal(kt.devices[0].name, "Fake GPU 0");
    assert_string_equal(kt.devices[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
    assert_int_equal(kt.devices[0].driver_version, 13000);
    assert_string_equal(kt.devices[1].name, "Fake GPU 1");
    assert_int_equal(fd_calls(FD_EventCreate), 2 * 16);
    /* Back to the first context: its pool, no other. */
    fd_set_current(c0);
    assert_int_equal(run(s0, 1, true), 1);
    assert_int_equal(atomic_load(&kt.drain.npools), 2);
}

/* A pool in a primary context knows it; asking leaves the context's references as they were. */
static void test_primary_pool(void **state)
{
    unsigned int flags;
    int active = 0;

    k = fd_kernel("k_ctx");
    CUcontext pc = fd_primary(0);
    fd_set_current(pc);
    CUstream s = fd_stream(pc);
    assert_int_equal(run(s, 1, true), 1);
    assert_true(pool_of(pc)->primary);
    assert_int_equal(fd_primary_release(0), CUDA_SUCCESS); /* the one reference */
    assert_int_equal(drv.DevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    assert_false(active);
}

/* Without pinned memory for the gates, a context's launches run ungated, and the report
 * says how many contexts could not be gated. */
static void test_no_gate_memory(void **state)
{
    k = fd_kernel("k_ctx");
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    fd_fail(FD_MemHostAlloc, CUDA_ERROR_OUT_OF_MEMORY, -1);
    assert_int_equal(run(s, 4, true), 4);
    assert_null(pool_of(c)->gate_host);
    assert_int_equal(atomic_load(&kt.ungated_contexts), 1);
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 0);
    assert_int_equal(fx_watch_starts(), 0);
    drain_pass(&kt.drain);
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 4);
    assert_int_equal(a->ungated, 4);
}

/* KTIME_FLUSH_L2: a scratch buffer twice the L2 per context, overwritten on the launch's
 * stream before the gate and the start event: outside the interval. */
static void test_flush_l2(void **state)
{
    struct fd_stats st;
    struct report h;

    k = fd_kernel("k_ctx");
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    assert_int_equal(run(s, 3, true), 3);
    struct pool *p = pool_of(c);
    assert_true(p->flush_ptr != 0);
    assert_int_equal(p->flush_bytes, 2 * (uint64_t)FD_L2_BYTES);
    fx_header(&h);
    assert_int_equal(h.flush_bytes, 2 * (uint64_t)FD_L2_BYTES);
    assert_int_equal(h.flush_contexts, 1);
    fd_fail(FD_MemsetD32Async, CUDA_ERROR_UNKNOWN, 1); /* timed warm, counted */
    assert_int_equal(run(s, 2, true), 2);
    fx_header(&h);
    assert_true(h.flush_l2);
    assert_int_equal(h.flushes, 4);
    assert_int_equal(h.flush_failed, 1);
    fd_stats(&st);
    assert_int_equal(st.memsets, 4);
    assert_int_equal(st.memset_bytes, 4 * 2 * (uint64_t)FD_L2_BYTES);
    drain_pass(&kt.drain);
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 5);
    /* The first launch is ungated, but the flush ahead of it keeps the GPU busy past its
     * submission: every interval is the kernel alone. */
    assert_true(a->st.sum == 5 * 250.0);
}

static void test_flush_l2_no_buffer(void **state)
{
    struct report h;

    k = fd_kernel("k_ctx");
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    fd_fail(FD_MemAlloc, CUDA_ERROR_OUT_OF_MEMORY, -1);
    assert_int_equal(run(s, 2, true), 2);
    assert_int_equal(pool_of(c)->flush_ptr, 0);
    fx_header(&h);
    assert_int_equal(h.flush_unavailable, 1);
    assert_int_equal(h.flush_contexts, 0);
    assert_int_equal(fd_calls(FD_MemsetD32Async), 0);
}

/* A context about to be destroyed, no drain thread: its pools stop taking launches and die
 * at once; what was still pending is left to the report's accounting (incomplete). A later
 * context at the same handle gets a pool of its own. */
static void test_context_ending_no_drain_thread(void **state)
{
    struct report r;

    k = fd_kernel("k_ctx");
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    assert_int_equal(run(s, 2, true), 2);
    drain_pass(&kt.drain);
    fd_hold(s);
    assert_int_equal(run(s, 3, false), 3);
    struct pool *p = pool_of(c);
    ktime_context_ending(c, -1);
    assert_int_equal(atomic_load(&p->retiring), 1);
    assert_int_equal(atomic_load(&p->dead), 1);
    assert_int_equal(drain_pass(&kt.drain), 0); /* never touched again */
    fd_release(s);
    assert_true(fd_sync(s));
    assert_int_equal(run(s, 1, true), 1);
    assert_int_equal(atomic_load(&kt.drain.npools), 2);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k_ctx");
    assert_int_equal(row->calls, 6);
    assert_int_equal(fx_timed(&r, row), 3);
    assert_int_equal(row->incomplete, 3);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* With the drain thread: the caller waits until the drain has folded what completed and,
 * past KTIME_EXIT_WAIT_MS (0 here), counted the rest incomplete, without touching them. */
static void test_context_ending_with_drain_thread(void **state)
{
    struct fd_stats st;

    k = fd_kernel("k_ctx");
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    fx_start_drain();
    assert_int_equal(run(s, 2, true), 2);
    fd_hold(s);
    assert_int_equal(run(s, 3, false), 3);
    struct pool *p = pool_of(c);
    ktime_context_ending(c, -1);
    assert_int_equal(atomic_load(&p->dead), 1);
    assert_true(drain_stop(&kt.drain, 10000));
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 2);
    assert_int_equal(a->incomplete, 3);
    fd_stats(&st);
    assert_true(st.queries_by_mode[CU_STREAM_CAPTURE_MODE_THREAD_LOCAL] > 0);
    assert_int_equal(st.queries_by_mode[CU_STREAM_CAPTURE_MODE_GLOBAL], 0);
    fd_release(s);
}

/* A device reset ends the pools of every context of that device, no other. */
static void test_device_reset(void **state)
{
    k = fd_kernel("k_ctx");
    CUcontext a = fd_context(0), b = fd_context(0), c = fd_context(1);
    CUstream sa = fd_stream(a), sb = fd_stream(b), sc = fd_stream(c);
    assert_int_equal(run(sa, 1, true), 1);
    fd_set_current(b);
    assert_int_equal(run(sb, 1, true), 1);
    fd_set_current(c);
    assert_int_equal(run(sc, 1, true), 1);
    ktime_context_ending(NULL, 0);
    assert_int_equal(atomic_load(&pool_of(a)->dead), 1);
    assert_int_equal(atomic_load(&pool_of(b)->dead), 1);
    assert_int_equal(atomic_load(&pool_of(c)->retiring), 0);
}

/* The last release of a primary context destroys it: what completed is folded first, the
 * rest counted incomplete without a call on its events; the queries run in THREAD_LOCAL
 * capture mode. */
static void test_primary_release_last(void **state)
{
    struct fd_stats before, after;

    k = fd_kernel("k_ctx");
    CUcontext pc = fd_primary(0);
    fd_set_current(pc);
    CUstream s = fd_stream(pc);
    assert_int_equal(run(s, 2, true), 2);
    fd_hold(s);
    assert_int_equal(run(s, 3, false), 3);
    struct pool *p = pool_of(pc);
    fd_stats(&before);
    uint64_t queries = fd_calls(FD_EventQuery);
    assert_int_equal(ktime_primary_release(0, fd_primary_release), CUDA_SUCCESS);
    fd_stats(&after);
    assert_true(after.queries_by_mode[CU_STREAM_CAPTURE_MODE_THREAD_LOCAL] >
                before.queries_by_mode[CU_STREAM_CAPTURE_MODE_THREAD_LOCAL]);
    assert_int_equal(after.queries_by_mode[CU_STREAM_CAPTURE_MODE_GLOBAL],
                     before.queries_by_mode[CU_STREAM_CAPTURE_MODE_GLOBAL]);
    assert_int_equal(atomic_load(&p->dead), 1);
    assert_int_equal(atomic_load(&p->gone), 1);
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 2);
    assert_int_equal(a->incomplete, 3);
    queries = fd_calls(FD_EventQuery);
    drain_pass(&kt.drain);
    assert_int_equal(fd_calls(FD_EventQuery), queries);
}

/* A release that is not the last leaves the pools alone. */
static void test_primary_release_not_last(void **state)
{
    k = fd_kernel("k_ctx");
    CUcontext pc = fd_primary(0);
    fd_primary(0);
    fd_set_current(pc);
    CUstream s = fd_stream(pc);
    assert_int_equal(run(s, 2, true), 2);
    fd_hold(s);
    assert_int_equal(run(s, 3, false), 3);
    struct pool *p = pool_of(pc);
    assert_int_equal(ktime_primary_release(0, fd_primary_release), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p->dead), 0);
    assert_int_equal(atomic_load(&p->retiring), 0);
    fd_release(s);
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 5);
    assert_int_equal(a->incomplete, 0);
}

/* No pool of that device: the release goes straight through, its result unchanged. */
static void test_primary_release_pass_through(void **state)
{
    assert_int_equal(ktime_primary_release(3, fd_primary_release),
                     CUDA_ERROR_INVALID_CONTEXT); /* device 3 has no primary context */
    assert_int_equal(fd_calls(FD_DevicePrimaryCtxRelease), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_pool_and_device_per_context, "KTIME_WARMUP=0", "KTIME_GATE=on"),
        FX_TEST(test_primary_pool, "KTIME_WARMUP=0"),
        FX_TEST(test_no_gate_memory, "KTIME_WARMUP=0", "KTIME_GATE=on"),
        FX_TEST(test_flush_l2, "KTIME_WARMUP=0", "KTIME_GATE=on", "KTIME_FLUSH_L2=1"),
        FX_TEST(test_flush_l2_no_buffer, "KTIME_WARMUP=0", "KTIME_FLUSH_L2=1"),
        FX_TEST(test_context_ending_no_drain_thread, "KTIME_WARMUP=0"),
        FX_TEST(test_context_ending_with_drain_thread, "KTIME_WARMUP=0"),
        FX_TEST(test_device_reset, "KTIME_WARMUP=0"),
        FX_TEST(test_primary_release_last, "KTIME_WARMUP=0"),
        FX_TEST(test_primary_release_not_last, "KTIME_WARMUP=0"),
        FX_TEST(test_primary_release_pass_through, "KTIME_WARMUP=0"),
    };

    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
