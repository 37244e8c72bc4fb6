/* test_budget.c - KTIME_BUDGET's module (src/modules/budget.c) in process, through the fake
 * driver's exact durations: a window feeds the controller each kernel's launches, samples and
 * length and writes its choice to the kernel's table entry; the launch path's draw keeps 1 in
 * 2^level of the launches and each kept sample stands for 2^level of them in the total; the
 * report's part (the budget, each row's rate, the total marked estimated); the budget off
 * under KTIME_TIMER=both, and KTIME_SAMPLE ignored beside it. (Under CUPTI: test_cupti.) */
#include "fixture.h"

#include <string.h>

#include "budget.h"
#include "budgetctl.h"
#include "launch.h"

#define SHORT_NS 15625u   /* 15.625 us, exact in float ms */
#define LONG_NS 1000000u  /* 1 ms: timing it costs under 0.9 % of it */

static CUstream s;
static void *k_short, *k_long;

static void start(void)
{
    s = fd_stream(fd_context(0));
    k_short = fd_kernel("k_short");
    k_long = fd_kernel("k_long");
}

/* n launches of fn, each waited for, folded. */
static void run(void *fn, uint64_t ns, int n)
{
    for (int i = 0; i < n; i++) {
        fx_launch(fn, s, ns);
        assert_true(fd_sync(s));
        drain_pass(&kt.drain);
    }
}

/* The rows with the budget's header part, as the report at exit has them. */
static void rows(struct report *r)
{
    struct report h;

    fx_header(&h);
    assert_int_equal(fx_collect(r, false), 0);
    r->budget = h.budget;
}

/* A window's inputs are each kernel's counts since the last one: the levels written are the
 * controller's for the same inputs; the long kernel is timed at every launch, the short one
 * sampled. */
static void test_window_levels(void **state)
{
    struct report r;
    struct bctl ctl;

    (void)state;
    start();
    run(k_short, SHORT_NS, 1 + 300); /* warmup 1 */
    run(k_long, LONG_NS, 1 + 20);
    rows(&r);
    struct report_kernel *a = fx_row(&r, "k_short"), *b = fx_row(&r, "k_long");
    struct bctl_kernel want[2] = {
        { .seen = 301, .drawn = 300 - BUDGET_FIRST, .timed = 300,
          .gated_share = (double)(300 - a->ungated) / 300, .mean_ns = SHORT_NS },
        { .seen = 21, .drawn = 20 - BUDGET_FIRST, .timed = 20,
          .gated_share = (double)(20 - b->ungated) / 20, .mean_ns = LONG_NS },
    };
    collect_free(&r);
    bctl_init(&ctl, 0.01, 1);
    double spent = bctl_events(&ctl, budget_costs(), 10e6, want, 2);
    assert_true(budget_window(10.0) == spent);
    assert_int_equal(atomic_load(&fx_entry(k_short)->level), want[0].level);
    assert_int_equal(atomic_load(&fx_entry(k_long)->level), 0);
    assert_true(want[0].level > 0);
    assert_int_equal(want[1].level, 0);
    /* The next window counts from there: 40 more launches of the long kernel, 40 timed. */
    run(k_long, LONG_NS, 40);
    budget_window(10.0);
    assert_int_equal(atomic_load(&fx_entry(k_long)->level), 0);
    rows(&r);
    assert_non_null(r.budget);
    assert_int_equal(r.budget->percent, 1);
    assert_int_equal(r.budget->windows, 2);
    assert_true(r.budget->wall_ms == 20.0);
    assert_int_equal(fx_row(&r, "k_long")->sample_level, 0);
    assert_int_equal(fx_row(&r, "k_short")->sample_level, want[0].level);
    collect_free(&r);
}

/* A long kernel first launched behind short ones that are sampled, its samples not yet folded
 * when the windows come (queued behind a backlog on a GPU): timed at every launch until its
 * length is known, then for its length. No launch of it is left unsampled. */
static void test_long_kernel_unknown_yet(void **state)
{
    struct report r;

    (void)state;
    start();
    run(k_short, SHORT_NS, 1 + 300);
    budget_window(10.0);
    assert_true(atomic_load(&fx_entry(k_short)->level) > 0);
    for (int w = 0; w < 3; w++) {
        for (int i = 0; i < 20; i++) /* not folded: no sample of it has come back */
            fx_launch(k_long, s, LONG_NS);
        assert_true(fd_sync(s));
        budget_window(10.0);
        assert_int_equal(atomic_load(&fx_entry(k_long)->level), 0);
    }
    drain_pass(&kt.drain);
    run(k_long, LONG_NS, 20);
    budget_window(10.0);
    assert_int_equal(atomic_load(&fx_entry(k_long)->level), 0);
    rows(&r);
    struct report_kernel *b = fx_row(&r, "k_long");
    assert_int_equal(b->calls, 80);
    assert_int_equal(fx_timed(&r, b), 79);
    assert_int_equal(b->unsampled, 0);
    fx_assert_buckets(&r, b);
    collect_free(&r);
}

/* At level 2 the draw keeps the launches whose draw has its top 2 bits 0 (replayed from the
 * thread's seed); each kept sample counts 4 times, the first BUDGET_FIRST once; the model's
 * total is the weighted mean times the launches, marked estimated, and the row says 1 in 4. */
static void test_draw_and_weights(void **state)
{
    struct report r;
    struct model m;
    const int n = 200;
    int kept = 0;

    (void)state;
    start();
    run(k_short, SHORT_NS, 1 + BUDGET_FIRST);
    atomic_store(&fx_entry(k_short)->level, 2);
    launch_rng = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < n; i++)
        kept += launch_kept(2);
    assert_true(kept > 20 && kept < 90);
    launch_rng = 0x2545F4914F6CDD1DULL;
    uint64_t records = fd_calls(FD_EventRecord);
    run(k_short, SHORT_NS, n);
    assert_int_equal(fd_calls(FD_EventRecord) - records, 2 * (uint64_t)kept);
    rows(&r);
    struct report_kernel *a = fx_row(&r, "k_short");
    assert_int_equal(a->calls, 1 + BUDGET_FIRST + n);
    assert_int_equal(fx_timed(&r, a), BUDGET_FIRST + kept);
    assert_int_equal(a->unsampled, n - kept);
    assert_int_equal(a->incomplete, 0);
    assert_int_equal(a->wn, BUDGET_FIRST + 4 * (uint64_t)kept);
    assert_true(a->wsum == 15.625 * (double)a->wn);
    assert_int_equal(a->sample_level, 2);
    fx_assert_buckets(&r, a);
    assert_int_equal(model_build(&m, &r), 0);
    assert_true(m.rows[0].total_estimated);
    assert_int_equal(m.rows[0].sampled_1_in, 4);
    assert_true(m.rows[0].st.v[RS_TOTAL] == 15.625 * (BUDGET_FIRST + n) / 1000.0);
    assert_non_null(m.budget);
    assert_int_equal(m.budget->percent, 1);
    model_free(&m);
    collect_free(&r);
}

/* A sample that stands for 4 launches of a kernel that got longer weighs 4 times as much: the
 * total is the weighted mean's, not the samples' mean. */
static void test_weighted_mean(void **state)
{
    struct report r;
    struct model m;

    (void)state;
    start();
    run(k_short, SHORT_NS, 1 + BUDGET_FIRST); /* 8 samples of 15.625 us, weight 1 */
    atomic_store(&fx_entry(k_short)->level, 2);
    launch_rng = 0x2545F4914F6CDD1DULL;
    int kept = 0;
    for (int i = 0; i < 64; i++)
        kept += launch_kept(2);
    launch_rng = 0x2545F4914F6CDD1DULL;
    run(k_short, 2 * SHORT_NS, 64); /* kept ones 31.25 us, weight 4 */
    rows(&r);
    double mean = (8 * 15.625 + 4.0 * kept * 31.25) / (8 + 4.0 * kept);
    assert_int_equal(model_build(&m, &r), 0);
    assert_true(m.rows[0].st.v[RS_TOTAL] == mean * (8 + 64) / 1000.0);
    model_free(&m);
    collect_free(&r);
}

/* With KTIME_TIMER=both (events and records for every launch) the budget stays off (a
 * warning); it replaces a KTIME_SAMPLE set beside it. */
static void test_off_under_both(void **state)
{
    struct report r;

    (void)state;
    fx_header(&r);
    assert_null(r.budget);
    assert_true(budget_window(10.0) == 0);
}

static void test_replaces_sample(void **state)
{
    (void)state;
    assert_int_equal(kt.cfg.sample, 1);
    assert_int_equal(kt.cfg.budget, 5);
}

/* Without a budget no entry gets a level and the report has no budget part. */
static void test_no_budget(void **state)
{
    struct report r;

    (void)state;
    start();
    run(k_short, SHORT_NS, 30);
    assert_int_equal(atomic_load(&fx_entry(k_short)->level), 0);
    fx_header(&r);
    assert_null(r.budget);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_window_levels, "KTIME_BUDGET=1", "KTIME_WARMUP=1"),
        FX_TEST(test_long_kernel_unknown_yet, "KTIME_BUDGET=1", "KTIME_WARMUP=1",
                "KTIME_POOL_CAP=256"),
        FX_TEST(test_draw_and_weights, "KTIME_BUDGET=1", "KTIME_WARMUP=1"),
        FX_TEST(test_weighted_mean, "KTIME_BUDGET=1", "KTIME_WARMUP=1"),
        FX_TEST(test_off_under_both, "KTIME_BUDGET=1", "KTIME_TIMER=both",
                "KTIME_CUPTI_LIB=/nonexistent/libcupti.so"),
        FX_TEST(test_replaces_sample, "KTIME_BUDGET=5", "KTIME_SAMPLE=4"),
        FX_TEST(test_no_budget, "KTIME_WARMUP=1"),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
