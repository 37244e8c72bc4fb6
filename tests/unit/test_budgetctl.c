/* test_budgetctl.c - KTIME_BUDGET's controller (src/core/budgetctl.c) with exact numbers: the
 * rate it must choose for a kernel of known length and a known cost of a timed launch, long
 * kernels timed at every launch, the allowance shared by length, kernels not known yet, a run
 * that overspent at its start catching up, the estimated cost staying under the budget, and the
 * CUPTI timer's duty and cycles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "budgetctl.h"

#define MS 1000000.0 /* ns */

/* A timed launch costs 4 us of GPU (no gate) against 1 us of the launching thread's CPU; the
 * untimed path and the drain cost nothing here, so that every figure below is exact. */
static const struct bctl_costs costs = { .gpu_ns = 4000, .gate_ns = 2000, .launch_ns = 1000 };

static void test_level(void **state)
{
    (void)state;
    assert_int_equal(bctl_level(1.0), 0);
    assert_int_equal(bctl_level(2.0), 0);
    assert_int_equal(bctl_level(0.5), 1);
    assert_int_equal(bctl_level(0.3), 2);
    assert_int_equal(bctl_level(1.0 / 64), 6);
    assert_int_equal(bctl_level(0.0225), 6);
    assert_int_equal(bctl_level(0), BCTL_MAX_LEVEL);
    assert_int_equal(bctl_level(-1), BCTL_MAX_LEVEL);
    assert_int_equal(bctl_level(1e-12), BCTL_MAX_LEVEL);
}

/* The larger of the GPU's part (with the gate's share) and the thread's, and the drain's. */
static void test_timed_cost(void **state)
{
    struct bctl_costs c = costs;

    (void)state;
    assert_true(bctl_timed_cost(&c, 0) == 4000);
    assert_true(bctl_timed_cost(&c, 0.5) == 5000);
    assert_true(bctl_timed_cost(&c, 1) == 6000);
    c.launch_ns = 7000;
    c.drain_ns = 500;
    assert_true(bctl_timed_cost(&c, 1) == 7500);
}

/* A 10 us kernel launched back to back (1000 in a 10 ms window), a timed launch costing 4 us,
 * KTIME_BUDGET=1: the window may spend 0.9 % of 10 ms = 90 us, which times 22.5 launches; the
 * rate below that is 1 in 64 (15.6 launches, 62.5 us), and 1 in 32 would be 125 us. */
static void test_known_kernel_rate(void **state)
{
    struct bctl c;
    struct bctl_kernel k = { .seen = 1000, .drawn = 1000, .mean_ns = 10000 };

    (void)state;
    bctl_init(&c, 0.01, 1);
    assert_true(bctl_events(&c, &costs, 10 * MS, &k, 1) == 0);
    assert_int_equal(k.level, 6);
    /* The next window times 1000 / 64 of them (15 or 16: the draw is random): 64 us of 10 ms. */
    k.timed = 16;
    assert_true(bctl_events(&c, &costs, 10 * MS, &k, 1) == 16 * 4000.0);
    assert_int_equal(k.level, 6);
    assert_true(c.timed_ns == 4000);
    assert_true(bctl_share(&c) == 64000.0 / (20 * MS));
    assert_true(bctl_share(&c) <= 0.01);
}

/* A 1 ms kernel costs 0.4 % of its own time to time: every launch is timed. */
static void test_long_kernel_every_launch(void **state)
{
    struct bctl c;
    struct bctl_kernel k = { .seen = 10, .drawn = 10, .timed = 10, .mean_ns = 1 * MS };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, &k, 1);
    assert_int_equal(k.level, 0);
    assert_true(bctl_share(&c) == 40000.0 / (10 * MS));
}

/* A 1 ms kernel (10 a window) and a 10 us one (500 a window) share the 90 us: the long one is
 * timed at every launch (40 us), the short one gets the other 50 us: 12.5 launches of 500,
 * 1 in 40, so 1 in 64 (31.25 us); one level up, 1 in 32, would be 102.5 us in all. */
static void test_shared_by_length(void **state)
{
    struct bctl c;
    struct bctl_kernel k[2] = { { .seen = 500, .drawn = 500, .mean_ns = 10000 },
                                { .seen = 10, .drawn = 10, .mean_ns = 1 * MS } };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, k, 2);
    assert_int_equal(k[1].level, 0);
    assert_int_equal(k[0].level, 6);
    /* The power of two left room: 90 - 40 - 31.25 = 18.75 us, not enough to double. Make the
     * short kernel half as frequent: 1 in 40 becomes 1 in 20, so 1 in 32 (31.25 us); one
     * level up would be 40 + 62.5 us in all: over. */
    k[0].drawn = k[0].seen = 250;
    bctl_events(&c, &costs, 10 * MS, k, 2);
    assert_int_equal(k[0].level, 5);
    assert_int_equal(k[1].level, 0);
}

/* The power of two rounds down, and what is left goes back to the cheapest kernels first. */
static void test_leftover_given_back(void **state)
{
    struct bctl c;
    /* Two 10 us kernels of 100 launches: 90 us times 22.5 launches, 11.25 each (1 in 8.9):
     * 1 in 16 each is 50 us; 40 us left doubles one of them (1 in 8: 50 + 25 = 75 us). */
    struct bctl_kernel k[2] = { { .seen = 100, .drawn = 100, .mean_ns = 10000 },
                                { .seen = 100, .drawn = 100, .mean_ns = 10000 } };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, k, 2);
    assert_int_equal(k[0].level + k[1].level, 3 + 4);
}

/* A kernel whose length is not known yet (none of its samples has come back) is timed at every
 * launch, and its cost is set aside first: a long kernel launched behind a backlog of short
 * ones must not go unsampled until its first samples complete. */
static void test_unknown_kernel_every_launch(void **state)
{
    struct bctl c;
    struct bctl_kernel k[2] = { { .seen = 1000, .drawn = 1000, .mean_ns = 10000 },
                                { .seen = 10, .drawn = 10, .mean_ns = 0 } };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, k, 2);
    /* 10 x 4 us = 40 us set aside: 50 us left for 1000 x 10 us, 1 in 80: 1 in 128. */
    assert_int_equal(k[1].level, 0);
    assert_int_equal(k[0].level, 7);
    /* No launch in a window: its rate stays. */
    k[1].seen = k[1].drawn = 0;
    k[1].level = 3;
    bctl_events(&c, &costs, 10 * MS, k, 2);
    assert_int_equal(k[1].level, 3);
}

/* The run that failed on an H100: 10 us kernels back to back at 1 in 64, then a 1 ms kernel
 * whose first samples wait behind them for more than a window. Each window while its length is
 * unknown it is timed at every launch; once known, it pays for its own timing: still every
 * launch. */
static void test_long_kernel_after_short_ones(void **state)
{
    struct bctl c;
    struct bctl_kernel k[2] = { { .seen = 1000, .drawn = 1000, .mean_ns = 10000 },
                                { .level = 0 } };

    (void)state;
    bctl_init(&c, 0.01, 1);
    for (int w = 0; w < 100; w++) {
        k[0].timed = k[0].drawn >> k[0].level;
        bctl_events(&c, &costs, 10 * MS, k, 2);
    }
    assert_int_equal(k[0].level, 6);
    for (int w = 0; w < 3; w++) { /* its samples still queued: no mean */
        k[1].seen = k[1].drawn = 5;
        k[1].timed = 0;
        bctl_events(&c, &costs, 10 * MS, k, 2);
        assert_int_equal(k[1].level, 0);
    }
    k[1].timed = 15;
    k[1].mean_ns = 1 * MS;
    bctl_events(&c, &costs, 10 * MS, k, 2);
    assert_int_equal(k[1].level, 0);
}

/* Launches that found the pool empty: the rate is halved from the one in force whatever the
 * allowance, until the draw leaves out enough for the pool. */
static void test_dropped_halves(void **state)
{
    struct bctl c;
    struct bctl_kernel k = { .seen = 5, .drawn = 5, .mean_ns = 1 * MS, .dropped = 3 };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, &k, 1); /* long enough for every launch: but dropped */
    assert_int_equal(k.level, 1);
    bctl_events(&c, &costs, 10 * MS, &k, 1);
    assert_int_equal(k.level, 2);
    k.dropped = 0;
    bctl_events(&c, &costs, 10 * MS, &k, 1);
    assert_int_equal(k.level, 0);
}

/* Every launch of the first window timed (every kernel new): 40 % of it. The next windows get
 * the floor (a tenth of the aim) until the run is back under the aim, then the aim again. */
/* A kernel long enough to pay for its own timing (4 us against 0.9 % of 500 us = 4.5 us) is
 * timed at every launch even when the window has nothing left for anyone: 100 000 launches of a
 * 10 us kernel spend the whole allowance on the untimed path. */
static void test_long_kernel_whatever_others_spend(void **state)
{
    struct bctl c;
    struct bctl_costs cu = costs;
    struct bctl_kernel k[2] = {
        { .seen = 100000, .drawn = 100000, .mean_ns = 10000 },
        { .seen = 20, .drawn = 20, .mean_ns = 500000 },
    };

    (void)state;
    cu.untimed_ns = 10; /* 1 ms of untimed launches in a 10 ms window: over 0.9 % */
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &cu, 10 * MS, k, 2);
    assert_int_equal(k[0].level, BCTL_MAX_LEVEL);
    assert_int_equal(k[1].level, 0);
    /* Just short of it (4 us against 0.9 % of 440 us = 3.96 us): shared out, and nothing
     * left. */
    k[1].mean_ns = 440000;
    bctl_events(&c, &cu, 10 * MS, k, 2);
    assert_int_equal(k[1].level, BCTL_MAX_LEVEL);
}

static void test_overspent_start_catches_up(void **state)
{
    struct bctl c;
    struct bctl_kernel k = { .seen = 1000, .drawn = 1000, .timed = 1000, .mean_ns = 10000 };
    int w;

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_events(&c, &costs, 10 * MS, &k, 1);
    assert_true(bctl_share(&c) == 0.4);
    /* 9 us: 2.25 launches of 1000: 1 in 444, so 1 in 512. */
    assert_int_equal(k.level, 9);
    for (w = 0; w < 1000 && k.level != 6; w++) {
        k.timed = 1000 >> k.level; /* what the rate times (rounded down) */
        bctl_events(&c, &costs, 10 * MS, &k, 1);
    }
    assert_int_equal(k.level, 6);
    assert_true(bctl_share(&c) <= 0.01 * BCTL_AIM);
    /* 4 ms over the aim, paid back at 86 us a window (90 less the 4 us it times): 45 windows. */
    assert_true(w >= 44 && w <= 47);
}

/* Steady state: the estimated cost over many windows stays under the budget whatever the mix. */
static void test_estimate_under_budget(void **state)
{
    struct bctl c;
    struct bctl_kernel k[3] = { { .seen = 700, .drawn = 695, .mean_ns = 3000 },
                                { .seen = 50, .drawn = 45, .mean_ns = 120000 },
                                { .seen = 3, .drawn = 3, .mean_ns = 2 * MS } };

    (void)state;
    bctl_init(&c, 0.02, 7);
    for (int w = 0; w < 200; w++) {
        for (int i = 0; i < 3; i++)
            k[i].timed = (k[i].drawn >> k[i].level) + (k[i].seen - k[i].drawn);
        bctl_events(&c, &costs, 10 * MS, k, 3);
        if (w > 30) /* the first window, every rate 1, cost 30 %: paid back by then */
            assert_true(bctl_share(&c) <= 0.02);
    }
    assert_int_equal(k[2].level, 0);
    assert_true(k[0].level > k[1].level);
}

/* CUPTI: 1000 launches a window, 300 ns each while recorded: 3 % when on all the time. */
static void test_cupti_duty(void **state)
{
    struct bctl c;
    struct bctl_costs cu = { .cupti_ns = 300, .toggle_ns = 20000 };
    int w;

    (void)state;
    bctl_init(&c, 0.01, 1);
    assert_int_equal(c.duty_level, 0);
    /* The first window, the run's start, changes nothing. */
    assert_true(bctl_cupti(&c, &cu, 10 * MS, 1000, 1000, 0, 100 * MS) == 300000);
    assert_int_equal(c.duty_level, 0);
    /* Two windows on all along: 600 us, over the aim; the next may spend the floor, 9 us, less
     * its share of the switching (one 20 us cycle per 100 ms: 2 us a window): on 2.3 % of the
     * time, so 1/64. */
    assert_true(bctl_cupti(&c, &cu, 10 * MS, 1000, 1000, 0, 100 * MS) == 300000);
    assert_int_equal(c.duty_level, 6);
    for (w = 0; w < 100; w++)
        bctl_cupti(&c, &cu, 10 * MS, 1000, 1000 >> c.duty_level, w % 10 == 0, 100 * MS);
    /* Once paid back: the aim, 90 us, less the switching, leaves 88 us: on 29 % of the time,
     * so a quarter, and it stays there. */
    assert_int_equal(c.duty_level, 2);
    for (int i = 0; i < 100; i++) {
        bctl_cupti(&c, &cu, 10 * MS, 1000, 250, i % 10 == 0, 100 * MS);
        assert_int_equal(c.duty_level, 2);
    }
    assert_true(bctl_share(&c) <= 0.01);
    /* Kernels so long that recording all of them is within the budget: on all the time. */
    bctl_init(&c, 0.01, 1);
    bctl_cupti(&c, &cu, 10 * MS, 100, 100, 0, 100 * MS);
    bctl_cupti(&c, &cu, 10 * MS, 100, 100, 0, 100 * MS);
    assert_int_equal(c.duty_level, 0);
    /* No launch: nothing to go by, the duty stays. */
    c.duty_level = 3;
    bctl_cupti(&c, &cu, 10 * MS, 0, 0, 0, 100 * MS);
    assert_int_equal(c.duty_level, 3);
}

/* Back-to-back 10 us kernels on an H100 under CUPTI: one launch every 12.74 us, which ktime
 * with CUPTI made 0.83 % slower (docs/results/budget-1gpu.txt); the module's figures, 60 ns a
 * record beyond the untimed path's 50 ns, put it at 0.86 %: under a budget of 1 %, CUPTI stays
 * on all the time, even after a start whose first 2 ms queued 1000 launches. */
static void test_cupti_cheap_stays_on(void **state)
{
    struct bctl c;
    struct bctl_costs cu = { .cupti_ns = 60, .untimed_ns = 50, .toggle_ns = 50000 };

    (void)state;
    bctl_init(&c, 0.01, 1);
    bctl_cupti(&c, &cu, 2 * MS, 1000, 1000, 0, 100 * MS);
    assert_int_equal(c.duty_level, 0);
    for (int w = 0; w < 500; w++) {
        bctl_cupti(&c, &cu, 10 * MS, 785, 785, 0, 100 * MS);
        assert_int_equal(c.duty_level, 0);
    }
    /* 5 us kernels (one launch every 7 us): 1.6 %, over the budget: switched on and off. */
    bctl_init(&c, 0.01, 1);
    for (int w = 0; w < 3; w++)
        bctl_cupti(&c, &cu, 10 * MS, 1430, 1430 >> c.duty_level, 0, 100 * MS);
    assert_true(c.duty_level > 0);
}

/* Cycles of random length (no period a program could keep in step with), on exactly
 * 1/2^level of each. */
static void test_cycles(void **state)
{
    struct bctl c;
    double on, off, lo = 1e300, hi = 0;

    (void)state;
    bctl_init(&c, 0.01, 42);
    c.duty_level = 2;
    for (int i = 0; i < 1000; i++) {
        bctl_cycle(&c, 100 * MS, &on, &off);
        assert_true(on * 4 == on + off);
        assert_true(on + off >= 50 * MS && on + off <= 150 * MS);
        lo = fmin(lo, on + off);
        hi = fmax(hi, on + off);
    }
    assert_true(lo < 55 * MS && hi > 145 * MS);
    c.duty_level = 0;
    bctl_cycle(&c, 100 * MS, &on, &off);
    assert_true(off == 0 && on >= 50 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_level),
        cmocka_unit_test(test_timed_cost),
        cmocka_unit_test(test_known_kernel_rate),
        cmocka_unit_test(test_long_kernel_every_launch),
        cmocka_unit_test(test_shared_by_length),
        cmocka_unit_test(test_leftover_given_back),
        cmocka_unit_test(test_unknown_kernel_every_launch),
        cmocka_unit_test(test_long_kernel_after_short_ones),
        cmocka_unit_test(test_dropped_halves),
        cmocka_unit_test(test_long_kernel_whatever_others_spend),
        cmocka_unit_test(test_overspent_start_catches_up),
        cmocka_unit_test(test_estimate_under_budget),
        cmocka_unit_test(test_cupti_duty),
        cmocka_unit_test(test_cupti_cheap_stays_on),
        cmocka_unit_test(test_cycles),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
