/* test_stats.c - Welford aggregates against two-pass reference values, and merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "stats.h"

static void ref(const double *x, int n, double *mean, double *var)
{
    double s = 0, m2 = 0;
    for (int i = 0; i < n; i++)
        s += x[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        m2 += (x[i] - *mean) * (x[i] - *mean);
    *var = n > 1 ? m2 / (n - 1) : 0;
}

static void test_known_values(void **state)
{
    const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
    struct stats s = { 0 };
    for (int i = 0; i < 8; i++)
        stats_add(&s, x[i]);
    assert_int_equal(s.n, 8);
    assert_true(s.sum == 40.0);
    assert_true(s.mean == 5.0);
    assert_true(s.min == 2.0 && s.max == 9.0);
    assert_true(fabs(stats_variance(&s) - 32.0 / 7.0) < 1e-12);
}

static void test_single_and_empty(void **state)
{
    struct stats s = { 0 };
    assert_true(stats_stddev(&s) == 0.0);
    stats_add(&s, 12.5);
    assert_true(s.min == 12.5 && s.max == 12.5 && s.mean == 12.5);
    assert_true(stats_stddev(&s) == 0.0);
}

/* Large offset, small spread: the naive sum-of-squares formula loses every digit here. */
static void test_stable_with_offset(void **state)
{
    double x[1000], mean, var;
    struct stats s = { 0 };
    for (int i = 0; i < 1000; i++) {
        x[i] = 1e9 + (i % 7) * 0.25;
        stats_add(&s, x[i]);
    }
    ref(x, 1000, &mean, &var);
    assert_true(fabs(s.mean - mean) < 1e-6);
    assert_true(fabs(stats_variance(&s) - var) / var < 1e-6);
}

static void test_merge_equals_sequential(void **state)
{
    struct stats all = { 0 }, a = { 0 }, b = { 0 }, empty = { 0 };
    for (int i = 0; i < 500; i++) {
        double v = 3.0 + (double)((i * 37) % 101) / 7.0;
        stats_add(&all, v);
        stats_add(i < 123 ? &a : &b, v);
    }
    stats_merge(&a, &b);
    stats_merge(&a, &empty);
    assert_int_equal(a.n, all.n);
    assert_true(fabs(a.sum - all.sum) < 1e-9);
    assert_true(fabs(a.mean - all.mean) < 1e-12);
    assert_true(fabs(a.m2 - all.m2) / all.m2 < 1e-12);
    assert_true(a.min == all.min && a.max == all.max);
    stats_merge(&empty, &all); /* into an empty aggregate: a copy */
    assert_true(empty.n == all.n && empty.m2 == all.m2);
}

/* w copies of a sample at once are w samples added one by one (to rounding). */
static void test_add_n_is_repeated_add(void **state)
{
    const double x[] = { 3.5, 10.25, 7.0, 3.5 };
    const uint64_t w[] = { 1, 4, 2, 8 };
    struct stats a = { 0 }, b = { 0 };

    (void)state;
    for (int i = 0; i < 4; i++) {
        stats_add_n(&a, x[i], w[i]);
        for (uint64_t j = 0; j < w[i]; j++)
            stats_add(&b, x[i]);
    }
    stats_add_n(&a, 99.0, 0); /* nothing */
    assert_int_equal(a.n, 15);
    assert_true(a.sum == b.sum);
    assert_true(fabs(a.mean - b.mean) < 1e-12);
    assert_true(fabs(a.m2 - b.m2) < 1e-9);
    assert_true(a.min == 3.5 && a.max == 10.25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_single_and_empty),
        cmocka_unit_test(test_stable_with_offset),
        cmocka_unit_test(test_merge_equals_sequential),
        cmocka_unit_test(test_add_n_is_repeated_add),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
