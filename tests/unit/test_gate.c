/* test_gate.c - launch gates (launch.c) through the fake driver: KTIME_GATE=on and off, the
 * first launch of a kernel (in the process, and in a further context) never gated, and the
 * state machine of KTIME_GATE=auto: gated -> probe -> ungated while the stream is behind,
 * the check of the start event, gate_late with its back-off, the streak that brings the
 * probes back to every 16th; the watchdog's forced gate dropped as gate_timeout. */
#include "fixture.h"

#include <string.h>

/* Kernel times: exact in float milliseconds. An idle, ungated launch also times its
 * submission: FD_SUBMIT_NS more. */
#define NS 250000u
#define US 250.0
#define US_IDLE 375.0

static CUcontext ctx;
static CUstream s;
static void *k;

static void start(void)
{
    ctx = fd_context(0);
    s = fd_stream(ctx);
    k = fd_kernel("k_gate");
}

/* What one launch did: gate waits queued, and event queries made by the launching thread
 * (launch.c queries in RELAXED capture mode; the drain's own queries are not counted). */
struct step {
    uint64_t waits, queries;
};

static struct step seen(void)
{
    struct fd_stats st;

    fd_stats(&st);
    return (struct step){ fd_calls(FD_StreamWaitValue32),
                          st.queries_by_mode[CU_STREAM_CAPTURE_MODE_RELAXED] };
}

/* One launch, then the drain's pass. `wait`: the program then waits for the GPU (the next
 * launch finds the stream idle); otherwise the next comes right after it, and as a kernel
 * takes longer than its submission, the GPU falls behind. */
static struct step launch_step(bool wait)
{
    struct step a = seen(), b;

    assert_true(fx_launch(k, s, NS));
    if (wait)
        assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    b = seen();
    return (struct step){ b.waits - a.waits, b.queries - a.queries };
}

static struct step step(void)
{
    return launch_step(true);
}

static struct step step_behind(void)
{
    return launch_step(false);
}

/* Launches until (and with) the one that makes a query; returns how many launches that took,
 * asserting every one of them was gated. At most `most` launches. */
static int launches_to_probe(int most)
{
    for (int n = 1; n <= most; n++) {
        struct step x = step();
        assert_int_equal(x.waits, 1);
        if (x.queries) {
            assert_int_equal(x.queries, 1);
            return n;
        }
    }
    return -1;
}

/* Every sample is in the kernel's aggregate, of these counts and sum. */
static void assert_samples(uint64_t n, uint64_t ungated, double sum)
{
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    struct agg *a = fx_agg(k, 0);
    assert_non_null(a);
    assert_int_equal(a->st.n, n);
    assert_int_equal(a->ungated, ungated);
    assert_true(a->st.sum == sum);
    assert_int_equal(a->incomplete + a->errors + a->forced, 0);
}

static void test_on_first_launch_ungated(void **state)
{
    start();
    struct step x = step(); /* its module may load: it waits for the stream */
    assert_int_equal(x.waits, 0);
    for (int i = 0; i < 9; i++) {
        x = step();
        assert_int_equal(x.waits, 1);
        assert_int_equal(x.queries, 0); /* KTIME_GATE=on never asks */
    }
    struct fd_stats st;
    fd_stats(&st);
    assert_int_equal(st.gates_held, 9);
    assert_int_equal(fx_watch_starts(), 1);
    assert_samples(10, 1, US_IDLE + 9 * US);
    struct agg *a = fx_agg(k, 0);
    assert_true(a->st.min == US && a->st.max == US_IDLE);
}

static void test_off_never_gated(void **state)
{
    start();
    /* An idle stream: the start event fires at once, and the interval has the submission. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(step().waits, 0);
    /* Launches back to back: from the second on, the GPU is still busy with the one before
     * when the bracket is queued, and the interval is the kernel's alone. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(step_behind().waits, 0);
    assert_int_equal(fd_calls(FD_MemHostAlloc), 0); /* no gate memory either */
    assert_int_equal(fx_watch_starts(), 0);
    assert_int_equal(atomic_load(&kt.ungated_contexts), 0);
    assert_samples(6, 6, 4 * US_IDLE + 2 * US);
}

/* Probes come every 16th gated launch, twice as rarely after each that finds the GPU idle,
 * down to every 256th. */
static void test_auto_probes_back_off(void **state)
{
    start();
    struct step x = step(); /* first: not gated, no hint */
    assert_int_equal(x.waits + x.queries, 0);
    /* The second launch has no previous stop event to probe: it starts the count. */
    x = step();
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 0);
    assert_int_equal(launches_to_probe(16), 16);
    assert_int_equal(launches_to_probe(32), 32);
    assert_int_equal(launches_to_probe(64), 64);
    assert_int_equal(launches_to_probe(128), 128);
    assert_int_equal(launches_to_probe(256), 256);
    assert_int_equal(launches_to_probe(256), 256);
    uint64_t n = 2 + 16 + 32 + 64 + 128 + 256 + 256;
    assert_samples(n, 1, US_IDLE + (double)(n - 1) * US);
}

/* The GPU falls behind before the first probe: launches 17 and 18 come back to back, and
 * the probe finds 17's stop event pending. Returns with ktime's hint ungated and the GPU
 * still behind. */
static void go_behind(void)
{
    for (int i = 0; i < 16; i++)
        step();
    struct step x = step_behind();
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 0);
    x = step_behind();
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 1);
}

static void test_auto_behind_goes_ungated_then_back(void **state)
{
    start();
    go_behind();
    /* Ungated: the previous stop event is asked (still pending: stay ungated), then, once
     * queued, the launch's own start event (still pending: the sample is exact). */
    for (int i = 0; i < 3; i++) {
        struct step x = step_behind();
        assert_int_equal(x.waits, 0);
        assert_int_equal(x.queries, 2);
    }
    /* The GPU catches up (the program synchronized): the next launch finds the last stop
     * event complete and is gated again, with a fresh probe count. */
    assert_true(fd_sync(s));
    struct step x = step();
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 1);
    assert_int_equal(launches_to_probe(16), 16);
    assert_int_equal(kt.drops[DROP_GATE_LATE], 0);
    /* Every sample is the kernel alone but the first's, the 3 ungated ones included. */
    uint64_t n = 18 + 3 + 1 + 16;
    assert_samples(n, 1 + 3, US_IDLE + (double)(n - 1) * US);
}

static void test_auto_gate_late(void **state)
{
    struct launch L;

    start();
    go_behind();
    /* The thread stops for a millisecond between the check of the last stop event and the
     * kernel's submission: the GPU gets through its backlog meanwhile, and the start event
     * fires before the kernel is queued. */
    struct step a = seen();
    assert_true(launch_begin(&L, k, KTAB_KERNEL, s, 0, false));
    fd_advance(1000000);
    fd_run(s, NS);
    launch_end(&L, CUDA_SUCCESS);
    struct step b = seen();
    assert_int_equal(b.waits - a.waits, 0);
    assert_int_equal(b.queries - a.queries, 2);
    assert_int_equal(kt.drops[DROP_GATE_LATE], 1);
    assert_int_equal(fx_entry(k)->dropped, 1);
    /* Gated again, no previous stop event to probe, and probes twice as rare: 32. */
    struct step x = step();
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 0);
    assert_int_equal(launches_to_probe(32), 32);
    uint64_t n = 18 + 1 + 32;
    assert_samples(n, 1, US_IDLE + (double)(n - 1) * US);
}

/* 64 ungated launches in a row that check out bring the probes back to every 16th; 63 do
 * not. */
static void streak(int ungated, int next_probe)
{
    start();
    step();
    step();
    assert_int_equal(launches_to_probe(16), 16); /* idle: every 32nd from here */
    assert_int_equal(launches_to_probe(30), -1);
    struct step x = step_behind(); /* the 31st: back to back with the 32nd */
    assert_int_equal(x.queries, 0);
    x = step_behind(); /* the 32nd: the probe finds the 31st pending */
    assert_int_equal(x.queries, 1);
    for (int i = 0; i < ungated; i++) {
        x = step_behind();
        assert_int_equal(x.waits, 0);
        assert_int_equal(x.queries, 2);
    }
    assert_true(fd_sync(s));
    x = step(); /* gated again */
    assert_int_equal(x.waits, 1);
    assert_int_equal(x.queries, 1);
    assert_int_equal(launches_to_probe(next_probe), next_probe);
    uint64_t n = 2 + 16 + 30 + 2 + (uint64_t)ungated + 1 + (uint64_t)next_probe;
    assert_samples(n, 1 + (uint64_t)ungated, US_IDLE + (double)(n - 1) * US);
}

static void test_auto_streak_resets_probes(void **state)
{
    streak(64, 16);
}

static void test_auto_short_streak_keeps_back_off(void **state)
{
    streak(63, 32);
}

/* A kernel's first launch in a further context loads its module there: with a warmup, it is
 * one more warmup launch (not timed at all); without, it is timed ungated. */
static void test_further_context_rewarms(void **state)
{
    struct report r;

    start();
    CUcontext ctx1 = fd_context(1);
    CUstream s1 = fd_stream(ctx1);
    uint64_t records = fd_calls(FD_EventRecord);
    assert_false(fx_launch(k, s, NS)); /* warmup */
    assert_false(fx_launch(k, s, NS));
    assert_true(fx_launch(k, s, NS)); /* not the kernel's first: gated */
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 1);
    fd_set_current(ctx1);
    records = fd_calls(FD_EventRecord);
    assert_false(fx_launch(k, s1, NS)); /* first on device 1: warmup again */
    assert_int_equal(fd_calls(FD_EventRecord), records);
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 1);
    assert_true(fx_launch(k, s1, NS));
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 2);
    assert_int_equal(fx_entry(k)->contexts, 2);
    assert_int_equal(fx_entry(k)->warmup, 3);
    assert_true(fd_sync(s) && fd_sync(s1));
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k_gate");
    assert_non_null(row);
    assert_int_equal(r.ndevices, 2);
    assert_int_equal(row->calls, 5);
    assert_int_equal(row->warmup_skipped, 3);
    assert_int_equal(row->per_dev[0].n, 1);
    assert_int_equal(row->per_dev[1].n, 1);
    assert_true(row->per_dev[0].sum == US && row->per_dev[1].sum == US);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

static void test_further_context_no_warmup_ungated(void **state)
{
    start();
    CUcontext ctx1 = fd_context(1);
    CUstream s1 = fd_stream(ctx1);
    assert_true(fx_launch(k, s, NS)); /* the kernel's first: ungated */
    assert_true(fd_sync(s));
    fd_set_current(ctx1);
    assert_true(fx_launch(k, s1, NS)); /* first on device 1: ungated too */
    assert_true(fd_sync(s1));
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 0);
    assert_true(fx_launch(k, s1, NS));
    assert_int_equal(fd_calls(FD_StreamWaitValue32), 1);
    assert_true(fd_sync(s1));
    drain_pass(&kt.drain);
    struct agg *a0 = fx_agg(k, 0), *a1 = fx_agg(k, 1);
    assert_true(a0 && a1);
    assert_true(a0->st.n == 1 && a0->st.sum == US_IDLE && a0->ungated == 1);
    assert_true(a1->st.n == 2 && a1->st.sum == US_IDLE + US && a1->ungated == 1);
}

/* A launch that blocks in the driver behind its own gate: the watchdog opens it at its second
 * look, and the sample (whose start event fired then) is dropped as gate_timeout. */
static void test_watchdog_forced_gate_dropped(void **state)
{
    struct launch L;
    struct report r;

    start();
    assert_true(fx_launch(k, s, NS));
    assert_true(launch_begin(&L, k, KTAB_KERNEL, s, 0, false));
    assert_int_equal(fx_watch(), 0); /* first sight of the closed gate */
    assert_int_equal(fd_queued(s), 2);
    assert_int_equal(fx_watch(), 1); /* still closed: opened, the sample void */
    assert_int_equal(fd_queued(s), 0);
    fd_run(s, NS);
    launch_end(&L, CUDA_SUCCESS);
    assert_int_equal(fx_watch(), 0);
    assert_true(fd_sync(s));
    drain_pass(&kt.drain);
    struct agg *a = fx_agg(k, 0);
    assert_int_equal(a->st.n, 1);
    assert_int_equal(a->forced, 1);
    assert_int_equal(fx_collect(&r, false), 0);
    struct report_kernel *row = fx_row(&r, "k_gate");
    assert_int_equal(row->dropped, 1);
    assert_int_equal(r.drops[DROP_GATE_TIMEOUT], 1);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_on_first_launch_ungated, "KTIME_GATE=on", "KTIME_WARMUP=0"),
        FX_TEST(test_off_never_gated, "KTIME_GATE=off", "KTIME_WARMUP=0"),
        FX_TEST(test_auto_probes_back_off, "KTIME_WARMUP=0", "KTIME_POOL_CAP=1024"),
        FX_TEST(test_auto_behind_goes_ungated_then_back, "KTIME_WARMUP=0",
                "KTIME_POOL_CAP=1024"),
        FX_TEST(test_auto_gate_late, "KTIME_WARMUP=0", "KTIME_POOL_CAP=1024"),
        FX_TEST(test_auto_streak_resets_probes, "KTIME_WARMUP=0", "KTIME_POOL_CAP=1024"),
        FX_TEST(test_auto_short_streak_keeps_back_off, "KTIME_WARMUP=0", "KTIME_POOL_CAP=1024"),
        FX_TEST(test_further_context_rewarms, "KTIME_GATE=on", "KTIME_WARMUP=2"),
        FX_TEST(test_further_context_no_warmup_ungated, "KTIME_GATE=on", "KTIME_WARMUP=0"),
        FX_TEST(test_watchdog_forced_gate_dropped, "KTIME_GATE=on", "KTIME_WARMUP=0"),
    };

    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
