/* test_busy.c - the busy and launches modules with the events timer (KTIME_BUSY=on): samples
 * placed on the timeline against their context's reference event, the GPU's busy time and
 * gaps of crafted schedules, per stream, per range and for communication kernels, and each
 * launch call's time; with KTIME_BUSY=auto (events) no reference event and no section. */
#include "fixture.h"

#include <string.h>

#include "busy.h"
#include "rangestack.h"

#define US 1000u

/* Gated launches (KTIME_GATE=on: an interval is the kernel alone) of 250 us kernels, each
 * followed by a wait for the stream and 250 us of host work: the GPU runs [0,250),
 * [625,875), [1250,1500) us (the next launch's submission, 125 us, is idle time too). */
static void test_serial(void **state)
{
    struct report r;
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    void *k = fd_kernel("k_serial");

    for (int i = 0; i < 4; i++) {
        fx_launch(k, s, 250 * US);
        assert_true(fd_sync(s));
        fd_advance(250 * US);
    }
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_non_null(r.busy);
    assert_int_equal(r.busy->ndevs, 1);
    const struct report_busy_dev *d = &r.busy->devs[0];
    assert_string_equal(d->method, "events");
    assert_int_equal(d->kernels, 3); /* the warmup launch has no sample */
    assert_true(d->span_ms == 1.5);
    assert_true(d->busy_ms == 0.75);
    assert_int_equal(d->gaps.count, 2);
    assert_true(d->gaps.total_ms == 0.75);
    assert_int_equal(d->gaps.bin_count[RG_TO_1MS], 2);
    assert_true(d->gaps.top[0].len_us == 375.0);
    assert_true(d->gaps.top[0].at_ms == 0.25);
    assert_string_equal(d->gaps.top[0].before_mangled, "k_serial");
    assert_string_equal(d->gaps.top[0].after_mangled, "k_serial");
    assert_int_equal(d->nstreams, 1);
    assert_true(d->streams[0].busy_ms == 0.75);
    assert_int_equal(r.busy->unplaced, 0);
    /* Each timed launch's call, on the host's clock. */
    struct report_kernel *row = fx_row(&r, "k_serial");
    assert_non_null(row->launch);
    assert_int_equal(row->launch->api.n, 3);
    assert_true(row->launch->api.min > 0);
    assert_int_equal(row->launch->queue.n, 0); /* events tell no queue time */
    collect_free(&r);
}

/* Two streams of overlapping kernels: busy is their union; the communication kernel's
 * overlap with compute. Stream a: [0,250) then [250,500); stream b: a communication kernel
 * launched 125 us later, [125,375); so busy 500 us of 750 us of kernels. */
static void test_two_streams(void **state)
{
    struct report r;
    CUcontext c = fd_context(0);
    CUstream a = fd_stream(c), b = fd_stream(c);
    void *k = fd_kernel("k_compute"), *n = fd_kernel("ncclKernel_AllReduce_RING");

    fd_hold(a);
    fd_hold(b);
    fx_launch(k, a, 250 * US);
    fx_launch(n, b, 250 * US);
    fx_launch(k, a, 250 * US);
    fd_release(a); /* the GPU reaches both streams now: a's two kernels back to back */
    fd_advance(125 * US);
    fd_release(b);
    assert_true(fd_sync(a));
    assert_true(fd_sync(b));
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_non_null(r.busy);
    const struct report_busy_dev *d = &r.busy->devs[0];
    assert_int_equal(d->kernels, 3);
    assert_true(d->kernel_ms == 0.75);
    assert_true(d->busy_ms == 0.5);
    assert_true(d->span_ms == 0.5);
    assert_int_equal(d->gaps.count, 0);
    assert_int_equal(d->nstreams, 2);
    assert_int_equal(d->comm_kernels, 1);
    assert_true(d->comm_busy_ms == 0.25);
    assert_true(d->overlap_ms == 0.25);
    collect_free(&r);
}

/* Per range: the GPU time of the kernels launched in it, beside its wall time. */
static void test_ranges(void **state)
{
    struct report r;
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    void *k = fd_kernel("k_ranged");
    uint32_t id = range_intern("busy phase");

    fx_launch(k, s, 250 * US); /* warmup */
    assert_true(fd_sync(s));
    range_push_id(id);
    for (int i = 0; i < 2; i++) {
        fx_launch(k, s, 250 * US);
        assert_true(fd_sync(s));
    }
    assert_true(range_pop());
    fx_launch(k, s, 125 * US);
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_non_null(r.busy);
    const struct report_busy_range *g = NULL, *out = NULL;
    for (size_t i = 0; i < r.busy->nranges; i++) {
        if (r.busy->ranges[i].name && strcmp(r.busy->ranges[i].name, "busy phase") == 0)
            g = &r.busy->ranges[i];
        if (!r.busy->ranges[i].name)
            out = &r.busy->ranges[i];
    }
    assert_non_null(g);
    assert_non_null(out);
    assert_int_equal(g->intervals, 2);
    assert_true(g->busy_ms == 0.5);
    assert_true(g->wall_ms > 0);
    assert_int_equal(out->intervals, 1);
    assert_true(out->busy_ms == 0.125);
    collect_free(&r);
}

/* KTIME_BUSY=auto with events: no reference event, no second elapsed-time call, no section. */
static void test_auto_events_off(void **state)
{
    struct report r;
    CUcontext c = fd_context(0);
    CUstream s = fd_stream(c);
    void *k = fd_kernel("k_plain");

    for (int i = 0; i < 3; i++) {
        fx_launch(k, s, 250 * US);
        assert_true(fd_sync(s));
    }
    drain_pass(&kt.drain);
    assert_false(busy_on());
    assert_int_equal(fd_calls(FD_EventElapsedTime) + fd_calls(FD_EventElapsedTime2), 2);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_null(r.busy);
    assert_non_null(fx_row(&r, "k_plain")->launch); /* launch calls all the same */
    collect_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_serial, "KTIME_BUSY=on", "KTIME_GATE=on", "KTIME_WARMUP=1"),
        FX_TEST(test_two_streams, "KTIME_BUSY=on", "KTIME_GATE=on", "KTIME_WARMUP=0"),
        FX_TEST(test_ranges, "KTIME_BUSY=on", "KTIME_GATE=on", "KTIME_WARMUP=1"),
        FX_TEST(test_auto_events_off, "KTIME_WARMUP=1"),
    };

    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
