/* test_sketch.c - the quantile sketch (src/base/sketch.c): every quantile within 1 % of the exact
 * one over sorted samples, for several distributions, and merge equal to the sketch of the
 * union. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sketch.h"

#define N 200000

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double uniform01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}
static double normal(void)
{
    return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Fills the sketch with v, then compares quantiles against the sorted samples. */
static void check_quantiles(double *v, size_t n)
{
    static const double qs[] = { 0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1 };
    struct sketch *s = calloc(1, sizeof *s);
    double min = INFINITY, max = -INFINITY;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        sketch_add(s, v[i]);
        min = fmin(min, v[i]);
        max = fmax(max, v[i]);
    }
    assert_int_equal(sketch_count(s), n);
    qsort(v, n, sizeof *v, cmp);
    for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
        double exact = v[(size_t)floor(qs[j] * (double)(n - 1))];
        double got = sketch_quantile(s, qs[j], min, max);
        if (fabs(got - exact) > 0.01 * exact)
            fail_msg("q %.3f: sketch %.6f, exact %.6f (%.3f %%)", qs[j], got, exact,
                     100 * (got - exact) / exact);
    }
    free(s);
}

static void test_uniform(void **state)
{
    double *v = malloc(N * sizeof *v);
    for (size_t i = 0; i < N; i++)
        v[i] = 1 + 999 * uniform01();
    check_quantiles(v, N);
    free(v);
}

static void test_lognormal(void **state)
{
    double *v = malloc(N * sizeof *v);
    for (size_t i = 0; i < N; i++)
        v[i] = exp(3 + 1.5 * normal()); /* about 0.2 us to 20 ms */
    check_quantiles(v, N);
    free(v);
}

static void test_bimodal(void **state)
{
    double *v = malloc(N * sizeof *v);
    for (size_t i = 0; i < N; i++)
        v[i] = (i % 3 ? 5.5 : 480.0) * (1 + 0.02 * normal());
    check_quantiles(v, N);
    free(v);
}

static void test_constant_and_few(void **state)
{
    double c[1000], one = 3.25;
    for (int i = 0; i < 1000; i++)
        c[i] = 42.0;
    check_quantiles(c, 1000);
    check_quantiles(&one, 1);
    struct sketch *s = calloc(1, sizeof *s);
    assert_true(sketch_quantile(s, 0.5, 0, 0) == 0.0); /* empty */
    free(s);
}

/* Bucket edges: a value on an edge is in the bucket that edge begins, one just under it in
 * the bucket before; out-of-range values go to the end buckets. */
static void test_edges(void **state)
{
    for (int i = 1; i < SKETCH_BUCKETS - 1; i += 7) {
        double e = sketch_lower(i);
        assert_int_equal(sketch_bucket(e), i);
        if (i > 1)
            assert_int_equal(sketch_bucket(nextafter(e, 0)), i - 1);
    }
    assert_int_equal(sketch_bucket(0.0), 0);
    assert_int_equal(sketch_bucket(-1.0), 0);
    assert_int_equal(sketch_bucket(NAN), 0);
    assert_int_equal(sketch_bucket(1e12), SKETCH_BUCKETS - 1);
    assert_true(sketch_lower(SKETCH_BUCKETS - 1) > 19e6); /* 19 s */
    assert_true(sizeof(struct sketch) <= 4096);
}

/* merge(A, B) is the sketch of A and B's samples together, bucket for bucket. */
static void test_merge_exact(void **state)
{
    struct sketch *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b), *u = calloc(1, sizeof *u);
    for (int i = 0; i < 50000; i++) {
        double x = exp(2 + normal()), y = 100 * uniform01();
        sketch_add(a, x);
        sketch_add(u, x);
        sketch_add(b, y);
        sketch_add(u, y);
    }
    sketch_merge(a, b);
    assert_memory_equal(a, u, sizeof *a);
    free(a);
    free(b);
    free(u);
}

/* w samples at once: the bucket's count grows by w, saturating. */
static void test_add_n(void **state)
{
    struct sketch s = { 0 };

    (void)state;
    sketch_add_n(&s, 12.0, 32);
    sketch_add_n(&s, 12.0, 1);
    assert_int_equal(sketch_count(&s), 33);
    assert_int_equal(s.c[sketch_bucket(12.0)], 33);
    sketch_add_n(&s, 12.0, (uint64_t)UINT32_MAX);
    assert_int_equal(s.c[sketch_bucket(12.0)], UINT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_constant_and_few),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_merge_exact),
        cmocka_unit_test(test_add_n),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
