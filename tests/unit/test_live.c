/* test_live.c - ktime always on, in process through the fake driver: launches made while
 * timing is off (kt.hold) counted as paused, never bracketed; a reset (tick_reset: rebase.c's
 * base and each module's) with launches still pending on the GPU across it, the drop reasons
 * and the warmup (not redone);
 * rows gathered on the drain thread while another thread launches (collect_gather, live),
 * every one of them with its launches in exactly one bucket, calls never going back, an entry
 * not yet named left for the next time. ThreadSanitizer runs this (tools/test.sh). */
#include "fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "control.h"
#include "live.h"
#include "rebase.h"
#include "tick.h"

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

static void test_paused(void **state)
{
    struct report r;
    void *k = fd_kernel("k_paused");
    struct report_kernel *row;

    start();
    assert_non_null(control_paused);                /* KTIME_CTL is on */
    assert_int_equal(run(k, 3), 1);                 /* 2 warmup, 1 timed */
    kt_hold(HOLD_PAUSED, true);
    uint64_t records = fd_calls(FD_EventRecord);
    assert_int_equal(run(k, 4), 0);                 /* counted, not bracketed */
    assert_int_equal(fd_calls(FD_EventRecord), records);
    kt_hold(HOLD_PAUSED, false);
    assert_int_equal(run(k, 2), 2);
    /* Off and outside a capture range at once: off. */
    assert_int_equal(fx_collect(&r, false), 0);
    assert_non_null(row = fx_row(&r, "k_paused"));
    assert_int_equal(row->calls, 9);
    assert_int_equal(row->warmup_skipped, 2);
    assert_int_equal(row->paused, 4);
    assert_int_equal(fx_timed(&r, row), 3);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

static void test_paused_over_range(void **state)
{
    struct report r;
    void *k = fd_kernel("k_both");

    start();
    assert_non_null(control_paused);                /* KTIME_CTL is on */
    kt_hold(HOLD_PAUSED, true);                     /* the range is closed (fixture) */
    assert_int_equal(run(k, 3), 0);
    kt_hold(HOLD_PAUSED, false);
    assert_int_equal(run(k, 2), 0);                 /* outside the range only */
    capture_mark(true, CUDA_SUCCESS);
    assert_int_equal(run(k, 1), 1);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k_both");
    assert_int_equal(row->paused, 3);
    assert_int_equal(row->outside_range, 2);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* A reset while two launches are still pending on the GPU: they, and what comes after, are
 * the counts from then on; the warmup is not redone; the drop reasons start at 0. */
static void test_reset(void **state)
{
    struct report r;
    void *k = fd_kernel("k_reset"), *k2 = fd_kernel("k_other");
    struct report_kernel *row;

    start();
    assert_int_equal(run(k, 5), 3);                 /* 2 warmup, 3 timed */
    assert_int_equal(run(k2, 3), 1);                /* 2 warmup, 1 timed */
    fd_fail(FD_EventRecord, CUDA_ERROR_UNKNOWN, 1);
    assert_int_equal(run(k, 1), 0);                 /* dropped: event_error */
    fd_hold(s);
    assert_true(fx_launch(k, s, NS));
    assert_true(fx_launch(k, s, NS));
    drain_pass(&kt.drain);                          /* both pending */
    assert_int_equal(tick_reset(), 0);
    assert_int_equal(live_resets(), 1);
    fd_release(s);
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    assert_int_equal(run(k, 1), 1);
    assert_int_equal(fx_collect(&r, false), 0);
    for (int i = 0; i < DROP_NREASONS; i++)
        r.drops[i] = rebase_sub(r.drops[i], rebase_drop(i));
    assert_non_null(row = fx_row(&r, "k_reset"));
    assert_int_equal(row->calls, 3);
    assert_int_equal(row->warmup_skipped, 0);
    assert_int_equal(row->dropped, 0);
    assert_int_equal(fx_timed(&r, row), 3);
    /* Held behind the busy GPU, the two pending ones took exactly their time; the last one
     * found the stream idle (no gate) and took its submission too. */
    assert_float_equal(row->per_dev[0].sum, (3 * NS + FD_SUBMIT_NS) / 1000.0, 1e-9);
    fx_assert_buckets(&r, row);
    assert_null(fx_row(&r, "k_other"));             /* not launched since */
    assert_int_equal(r.drops[DROP_EVENT_ERROR], 0);
    collect_free(&r);
    /* A second reset: the base moves on. */
    assert_int_equal(tick_reset(), 0);
    assert_int_equal(run(k2, 2), 2);
    assert_int_equal(fx_collect(&r, false), 0);
    assert_null(fx_row(&r, "k_reset"));
    assert_int_equal(fx_row(&r, "k_other")->calls, 2);
    assert_int_equal(live_resets(), 2);
    collect_free(&r);
}

/* ---- rows gathered on the drain thread while a thread launches ---- */

static _Atomic int ticks, bad;
static uint64_t last_calls;

static void gather_tick(void)
{
    struct report r;

    memset(&r, 0, sizeof r);
    r.warmup = kt.cfg.warmup;
    r.devices = kt.devices;
    r.ndevices = atomic_load(&kt.ndevices);
    pthread_mutex_lock(&kt.drain.pass_lock);
    int rc = collect_gather(&r, true, false, true);
    pthread_mutex_unlock(&kt.drain.pass_lock);
    if (rc != 0) {
        bad++;
        return;
    }
    for (size_t i = 0; i < r.nkernels; i++) {
        const struct report_kernel *k = &r.kernels[i];
        uint64_t timed = 0;
        for (int d = 0; d < r.ndevices; d++)
            timed += k->per_dev[d].n;
        if (k->warmup_skipped + k->captured + timed + k->dropped + k->failed + k->incomplete +
                k->outside_range + k->paused != k->calls ||
            k->calls < last_calls)
            bad++;
        last_calls = k->calls;
    }
    collect_free(&r);
    ticks++;
}

static void *launcher(void *arg)
{
    void *k = arg;
    CUstream ls;

    fd_set_current(ctx);
    ls = fd_stream(ctx);
    for (int i = 0; i < 3000 || (atomic_load(&ticks) < 5 && i < 1000000); i++) {
        fx_launch(k, ls, NS);
        fd_sync(ls);
    }
    return NULL;
}

static void test_gather_while_launching(void **state)
{
    struct report r;
    void *k = fd_kernel("k_busy");
    pthread_t t;

    start();
    atomic_store(&kt.drain.tick, gather_tick);
    fx_start_drain();
    assert_int_equal(pthread_create(&t, NULL, launcher, k), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(drain_stop(&kt.drain, 10000));
    assert_true(atomic_load(&ticks) >= 5);
    assert_int_equal(atomic_load(&bad), 0);
    drain_finish(&kt.drain, 0);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k_busy");
    assert_true(row->calls >= 3000);
    assert_int_equal(fx_timed(&r, row) + row->warmup_skipped + row->dropped, row->calls);
    collect_free(&r);
}

/* An entry a launch made but has not named yet: left out while the program runs, shown at
 * exit. */
static void test_unnamed(void **state)
{
    struct report r;
    bool inserted;
    struct ktab_entry *e = ktab_get(&kt.ktab, 0x1234, &inserted);

    assert_true(inserted);
    atomic_store(&e->calls, 1);
    memset(&r, 0, sizeof r);
    assert_int_equal(collect_kernels(&r, true, false, true), 0);
    assert_int_equal(r.nkernels, 0);
    collect_free(&r);
    assert_int_equal(collect_kernels(&r, true, false, false), 0);
    assert_int_equal(r.nkernels, 1);
    assert_string_equal(r.kernels[0].mangled, "<unnamed>");
    collect_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_paused, "KTIME_WARMUP=2"),
        FX_TEST(test_paused_over_range, "KTIME_WARMUP=0", "KTIME_CAPTURE=profiler-api"),
        FX_TEST(test_reset, "KTIME_WARMUP=2", "KTIME_GATE=off"),
        FX_TEST(test_gather_while_launching, "KTIME_WARMUP=2", "KTIME_POOL_CAP=64"),
        FX_TEST(test_unnamed),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
