/* test_shape.c - per-launch-shape aggregates: exact per shape, bounded (the shapes past
 * SHAPE_TRACK fold into other), a merge equal to adding the samples to one set, and the
 * report's order (most timed first, the rest past SHAPE_SHOW folded and counted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

static struct kshape sh(uint32_t gx, uint32_t bx, uint32_t smem)
{
    return (struct kshape){ { gx, 1, 1 }, { bx, 1, 1 }, smem };
}

static const struct shape_row *find(const struct shape_set *s, struct kshape k)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (shape_eq(&s->rows[i]->sh, &k))
            return s->rows[i];
    return NULL;
}

static void test_exact_per_shape(void **state)
{
    struct shape_set *s = NULL;
    for (int i = 0; i < 30; i++)
        assert_int_equal(shape_add(&s, &(struct kshape){ { 8u << (i % 3), 1, 1 }, { 256, 1, 1 }, 0 },
                                   10.0 * (1 + i % 3)), 0);
    assert_int_equal(s->n, 3);
    for (uint32_t g = 0; g < 3; g++) {
        const struct shape_row *r = find(s, sh(8u << g, 256, 0));
        assert_non_null(r);
        assert_int_equal(r->st.n, 10);
        assert_true(r->st.mean == 10.0 * (1 + g));
        assert_int_equal(sketch_count(&r->sk), 10);
    }
    assert_int_equal(s->other.n, 0);
    assert_false(s->untracked);
    assert_int_equal(shape_set_count(s), 30);
    /* Shared memory and block are part of the shape. */
    assert_false(shape_eq(&(struct kshape){ { 8, 1, 1 }, { 256, 1, 1 }, 0 },
                          &(struct kshape){ { 8, 1, 1 }, { 256, 1, 1 }, 64 }));
    assert_false(shape_known(&(struct kshape){ { 0, 0, 0 }, { 0, 0, 0 }, 0 }));
    assert_true(shape_known(&(struct kshape){ { 1, 1, 1 }, { 1, 1, 1 }, 0 }));
    shape_set_free(s);
}

/* More distinct shapes than SHAPE_TRACK: the first ones are kept apart, every later sample
 * is in other, and no sample is lost. */
static void test_bounded(void **state)
{
    struct shape_set *s = NULL;
    int shapes = SHAPE_TRACK + 10;
    for (int i = 0; i < shapes * 4; i++)
        shape_add(&s, &(struct kshape){ { (uint32_t)(1 + i % shapes), 1, 1 }, { 32, 1, 1 }, 0 }, 5.0);
    assert_int_equal(s->n, SHAPE_TRACK);
    assert_int_equal(s->other.n, 10 * 4);
    assert_true(s->untracked);
    assert_int_equal(shape_set_count(s), (uint64_t)shapes * 4);
    shape_set_free(s);
}

/* merge(A, B) has every sample of both, shape by shape, as one set fed both would. */
static void test_merge(void **state)
{
    struct shape_set *a = NULL, *b = NULL, *both = NULL;
    for (int i = 0; i < 50; i++) {
        struct kshape k = sh(1 + i % 5, 64, (uint32_t)(i % 2) * 128);
        double us = 1.0 + i;
        shape_add(i % 3 ? &a : &b, &k, us);
        shape_add(&both, &k, us);
    }
    assert_int_equal(shape_merge(&a, b), 0);
    assert_int_equal(a->n, both->n);
    for (uint32_t i = 0; i < both->n; i++) {
        const struct shape_row *x = both->rows[i], *y = find(a, x->sh);
        assert_non_null(y);
        assert_int_equal(y->st.n, x->st.n);
        assert_true(y->st.min == x->st.min && y->st.max == x->st.max);
        assert_true(y->st.sum == x->st.sum);
        assert_memory_equal(&y->sk, &x->sk, sizeof x->sk);
    }
    /* Merging into nothing copies. */
    struct shape_set *c = NULL;
    assert_int_equal(shape_merge(&c, both), 0);
    assert_int_equal(shape_set_count(c), 50);
    assert_int_equal(shape_merge(&c, NULL), 0);
    assert_int_equal(shape_set_count(c), 50);
    shape_set_free(a);
    shape_set_free(b);
    shape_set_free(both);
    shape_set_free(c);
}

/* The report's view: most timed first; past SHAPE_SHOW, folded into other and counted. */
static void test_sorted(void **state)
{
    struct shape_set *s = NULL;
    int shapes = SHAPE_SHOW + 3;
    for (int g = 1; g <= shapes; g++)
        for (int i = 0; i < g; i++) /* shape g has g samples */
            shape_add(&s, &(struct kshape){ { (uint32_t)g, 1, 1 }, { 32, 1, 1 }, 0 }, (double)g);
    shape_set_sorted(s);
    assert_int_equal(s->n, SHAPE_SHOW);
    for (uint32_t i = 0; i < s->n; i++)
        assert_int_equal(s->rows[i]->sh.grid[0], (uint32_t)(shapes - (int)i));
    assert_int_equal(s->other_shapes, 3);
    assert_int_equal(s->other.n, 1 + 2 + 3);
    assert_false(s->untracked);
    assert_int_equal(shape_set_count(s), (uint64_t)shapes * (shapes + 1) / 2);
    shape_set_sorted(s); /* again: nothing changes */
    assert_int_equal(s->n, SHAPE_SHOW);
    assert_int_equal(s->other_shapes, 3);
    shape_set_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_per_shape),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
