/* test_collect.c - the report's rows (collect.c: collect_kernels) from a kernel table and
 * aggregates made by launches through the fake driver: calls, warmup, captured, timed per
 * device, dropped by reason, failed, incomplete, every launch in exactly one bucket; one row
 * per name; graphs; rows when the drain thread did not stop; launches by range. */
#include "fixture.h"

#include <string.h>

#include "rangestack.h"

#define NS 250000u

static CUcontext ctx;
static CUstream s;

static void start(void)
{
    ctx = fd_context(0);
    s = fd_stream(ctx);
}

/* n launches of k on s, each waited for and folded (fx_run). */
static int run(void *k, int n)
{
    return fx_run(k, s, n, NS);
}

/* One kernel's launches in every bucket, and the exit's drain; another on two devices. */
static void test_every_bucket(void **state)
{
    struct report r;
    struct launch L;
    void *k = fd_kernel("_Z6bucketv"), *k2 = fd_kernel("k_two");

    start();
    assert_int_equal(run(k, 2), 0);                         /* warmup */
    launch_capture_began(CUDA_SUCCESS);
    fd_capture(s, true);
    assert_int_equal(run(k, 1), 0);                         /* captured */
    fd_capture(s, false);
    launch_capture_ended(CUDA_SUCCESS);
    assert_int_equal(run(k, 3), 3);                         /* timed */
    assert_true(fx_launch_r(k, s, NS, CUDA_ERROR_INVALID_VALUE)); /* failed */
    fd_fail(FD_EventRecord, CUDA_ERROR_UNKNOWN, 1);
    assert_int_equal(run(k, 1), 0);                         /* dropped: event_error */
    assert_true(launch_begin(&L, k, KTAB_KERNEL, s, 0, false));
    fx_watch();
    fx_watch();                                             /* dropped: gate_timeout */
    fd_run(s, NS);
    launch_end(&L, CUDA_SUCCESS);
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    fd_hold(s);
    for (int i = 0; i < 9; i++)                             /* 8 pending, 1 pool_exhausted */
        assert_int_equal(fx_launch(k, s, NS), i < 8);
    /* The other kernel, on two devices. */
    CUcontext c1 = fd_context(1);
    CUstream s1 = fd_stream(c1);
    fd_set_current(c1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(fx_launch(k2, s1, NS), i >= 2);
        assert_true(fd_sync(s1));
    }
    fd_set_current(ctx);
    /* The exit: the drain's last pass, then the report while another launch comes. */
    assert_int_equal(drain_finish(&kt.drain, 0), 8);
    atomic_store(&kt.phase, PHASE_EXITING);
    assert_true(fx_launch(k, s, NS));                       /* dropped: shutdown */
    assert_int_equal(fx_collect(&r, false), 0);
    assert_int_equal(r.nkernels, 2);
    struct report_kernel *a = fx_row(&r, "_Z6bucketv");
    assert_non_null(a);
    assert_string_equal(a->name, "bucket()");
    assert_int_equal(a->kind, REPORT_KERNEL);
    assert_int_equal(a->calls, 2 + 1 + 3 + 1 + 1 + 1 + 9 + 1);
    assert_int_equal(a->warmup_skipped, 2);
    assert_int_equal(a->captured, 1);
    assert_int_equal(fx_timed(&r, a), 3);
    assert_int_equal(a->per_dev[0].n, 3);
    assert_true(a->per_dev[0].sum == 3 * 250.0);
    assert_int_equal(a->failed, 1);
    assert_int_equal(a->dropped, 4);
    assert_int_equal(a->incomplete, 8);
    assert_int_equal(a->unsampled, 0);
    fx_assert_buckets(&r, a);
    assert_int_equal(r.drops[DROP_EVENT_ERROR], 1);
    assert_int_equal(r.drops[DROP_GATE_TIMEOUT], 1);
    assert_int_equal(r.drops[DROP_POOL_EXHAUSTED], 1);
    assert_int_equal(r.drops[DROP_SHUTDOWN], 1);
    assert_int_equal(r.drops[DROP_NO_CONTEXT] + r.drops[DROP_TABLE_FULL] +
                         r.drops[DROP_GATE_LATE], 0);
    assert_non_null(a->sk);
    struct report_kernel *b = fx_row(&r, "k_two");
    assert_non_null(b);
    fx_assert_buckets(&r, b);
    assert_int_equal(r.ndevices, 2);
    assert_int_equal(b->calls, 4);
    assert_int_equal(b->warmup_skipped, 2);
    assert_int_equal(b->per_dev[0].n, 0);
    assert_int_equal(b->per_dev[1].n, 2);
    assert_non_null(b->dev_sk);
    collect_free(&r);
    fd_release(s);
}

/* A kernel loaded twice (two modules, two handles) is one row; warmup is per handle. */
static void test_one_row_per_name(void **state)
{
    struct report r;
    void *a = fd_kernel("k_same"), *b = fd_kernel("k_same");

    start();
    assert_int_equal(run(a, 3), 1);
    assert_int_equal(run(b, 4), 2);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_int_equal(r.nkernels, 1);
    struct report_kernel *row = fx_row(&r, "k_same");
    assert_int_equal(row->calls, 7);
    assert_int_equal(row->warmup_skipped, 4);
    assert_int_equal(fx_timed(&r, row), 3);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* A graph is named after its kernel nodes when instantiated, and timed as one launch; an
 * exec destroyed and made again at the same address is another row. */
static void test_graph_rows(void **state)
{
    static char exec_a[1];
    struct report r;
    struct launch L;
    CUgraphExec exec = (CUgraphExec)exec_a;

    start();
    launch_graph_instantiated(exec, fd_graph(2, 1));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(launch_begin(&L, exec, KTAB_GRAPH, s, 0, false), i > 0);
        fd_run(s, 2 * NS);
        if (i > 0)
            launch_end(&L, CUDA_SUCCESS);
        assert_true(fd_sync(s));
    }
    launch_handle_gone(exec);
    launch_graph_instantiated(exec, fd_graph(1, 0));
    assert_true(launch_begin(&L, exec, KTAB_GRAPH, s, 0, false) == false); /* warmup */
    fd_run(s, NS);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_int_equal(r.nkernels, 2);
    const char *first = r.kernels[0].mangled, *second = r.kernels[1].mangled;
    assert_non_null(strstr(first, " (2 kernel nodes of 3)"));
    assert_non_null(strstr(second, " (1 kernel nodes of 1)"));
    assert_int_equal(strncmp(first, "graph ", 6), 0);
    assert_int_equal(r.kernels[0].kind, REPORT_GRAPH);
    assert_int_equal(r.kernels[0].calls, 3);
    assert_int_equal(r.kernels[0].warmup_skipped, 1);
    assert_int_equal(fx_timed(&r, &r.kernels[0]), 2);
    assert_true(r.kernels[0].per_dev[0].sum == 2 * 500.0);
    assert_int_equal(r.kernels[1].calls, 1);
    collect_free(&r);
}

/* The drain thread did not stop at exit: the rows have their counts but no samples, and
 * nothing is called incomplete. */
static void test_rows_without_aggregates(void **state)
{
    struct report r;
    void *k = fd_kernel("k_one");

    start();
    assert_int_equal(run(k, 4), 3);
    memset(&r, 0, sizeof r);
    r.warmup = kt.cfg.warmup;
    r.devices = kt.devices;
    r.ndevices = atomic_load(&kt.ndevices);
    assert_int_equal(collect_kernels(&r, false, false, false), 0);
    struct report_kernel *row = fx_row(&r, "k_one");
    assert_int_equal(row->calls, 4);
    assert_int_equal(row->warmup_skipped, 1);
    assert_int_equal(fx_timed(&r, row), 0);
    assert_int_equal(row->incomplete, 0);
    collect_free(&r);
}

/* Launches by the range open on their thread (ktime_range_push, NVTX). */
static void test_rows_by_range(void **state)
{
    struct report r;
    void *k = fd_kernel("k_one"), *k2 = fd_kernel("k_two");

    start();
    uint32_t step = range_intern("unit step");
    range_push_id(step);
    assert_int_equal(run(k, 2), 2);
    assert_int_equal(run(k2, 1), 1);
    assert_true(range_pop());
    assert_int_equal(run(k, 1), 1);
    assert_int_equal(fx_collect(&r, false), 0);
    const struct report_range *g = NULL, *outside = NULL;
    for (size_t i = 0; i < r.nranges_by_name; i++) {
        if (r.ranges_by_name[i].name && strcmp(r.ranges_by_name[i].name, "unit step") == 0)
            g = &r.ranges_by_name[i];
        if (!r.ranges_by_name[i].name)
            outside = &r.ranges_by_name[i];
    }
    assert_non_null(g);
    assert_int_equal(g->timed, 3);
    assert_int_equal(g->nrows, 2);
    assert_string_equal(g->rows[0].mangled, "k_one"); /* the larger total first */
    assert_int_equal(g->rows[0].st.n, 2);
    assert_int_equal(g->closed, 1);
    assert_non_null(outside);
    assert_int_equal(outside->timed, 1);
    collect_free(&r);
}

/* docs/design.md's example, "Adding a test". */
static void test_two_timed(void **state)
{
    struct report r;
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    void *k = fd_kernel("k");

    for (int i = 0; i < 3; i++) {
        fx_launch(k, s, 250000);   /* a 250 us kernel */
        assert_true(fd_sync(s));   /* the program waits for it */
    }
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k");
    assert_int_equal(row->warmup_skipped, 1);
    assert_int_equal(fx_timed(&r, row), 2);
    assert_true(row->per_dev[0].sum == 2 * 250.0); /* gated: the kernel alone */
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_every_bucket, "KTIME_WARMUP=2", "KTIME_GATE=on"),
        FX_TEST(test_one_row_per_name, "KTIME_WARMUP=2"),
        FX_TEST(test_graph_rows, "KTIME_WARMUP=1"),
        FX_TEST(test_rows_without_aggregates, "KTIME_WARMUP=1"),
        FX_TEST(test_rows_by_range, "KTIME_WARMUP=0"),
        FX_TEST(test_two_timed, "KTIME_WARMUP=1"),
    };

    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
