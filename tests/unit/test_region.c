/* test_region.c - the ranges' core (region.c): interning (one id per name, from any thread),
 * innermost and outermost attribution, counts and wall time, pops with nothing open, stacks
 * deeper than REGION_DEPTH, the watch of KTIME_RANGE=nvtx:NAME, and a table that fills up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "region.h"

static void test_intern(void **state)
{
    uint32_t a = region_intern("forward"), b = region_intern("backward");
    char copy[] = "forward";

    assert_true(a >= 1 && a <= REGION_SLOTS);
    assert_true(b >= 1 && b <= REGION_SLOTS);
    assert_int_not_equal(a, b);
    assert_int_equal(region_intern(copy), a); /* by content, not by address */
    assert_string_equal(region_name(a), "forward");
    assert_int_equal(region_intern(NULL), region_intern("(unnamed)"));
    assert_null(region_name(0));
}

static void test_attribution(void **state)
{
    uint32_t step = region_intern("step"), fwd = region_intern("fwd");
    uint64_t closed = region_entry_of(fwd)->pushes;
    struct timespec ms = { 0, 2000000 };

    assert_int_equal(region_current(), 0);
    region_push_id(step);
    assert_int_equal(region_current(), step);
    region_push_id(fwd);
    assert_int_equal(region_current(), fwd);
    region_set_outermost(true);
    assert_int_equal(region_current(), step);
    region_set_outermost(false);
    assert_int_equal(region_entry_of(fwd)->open, 1);
    nanosleep(&ms, NULL);
    assert_true(region_pop());
    assert_int_equal(region_current(), step);
    assert_int_equal(region_entry_of(fwd)->pushes, closed + 1);
    assert_int_equal(region_entry_of(fwd)->open, 0);
    assert_true(region_entry_of(fwd)->wall_ns >= 2000000);
    assert_true(region_pop());
    assert_int_equal(region_current(), 0);
    assert_true(region_any());
}

static void test_unmatched_and_deep(void **state)
{
    uint64_t before = region_stats.unmatched_pops, deep = region_stats.too_deep;
    uint32_t id = region_intern("deep");

    assert_false(region_pop());
    assert_int_equal(region_stats.unmatched_pops, before + 1);
    for (int i = 0; i < REGION_DEPTH + 3; i++)
        region_push_id(id);
    assert_int_equal(region_stats.too_deep, deep + 3);
    assert_int_equal(region_current(), id); /* the innermost kept */
    for (int i = 0; i < REGION_DEPTH + 3; i++)
        assert_true(region_pop());
    assert_int_equal(region_current(), 0);
    assert_int_equal(region_entry_of(id)->open, 0);
    assert_int_equal(region_entry_of(id)->pushes, REGION_DEPTH); /* the deeper ones not timed */
}

static uint32_t watched_id;
static uint64_t watched_open, watched_pushes, watched_pops;

static void watcher(uint32_t id, uint64_t open_now, bool push)
{
    if (id != watched_id)
        return;
    watched_open = open_now;
    if (push)
        watched_pushes++;
    else
        watched_pops++;
}

static void test_watch(void **state)
{
    watched_id = region_intern("watched");
    atomic_store(&region_watch, watcher);
    region_push_id(region_intern("other"));
    region_push_id(watched_id);
    assert_int_equal(watched_open, 1);
    region_push_id(watched_id);
    assert_int_equal(watched_open, 2);
    region_pop();
    region_pop();
    assert_int_equal(watched_open, 0);
    region_pop();
    assert_int_equal(watched_pushes, 2);
    assert_int_equal(watched_pops, 2);
    atomic_store(&region_watch, NULL);
}

#define THREADS 4
#define NAMES 200

static uint32_t ids[THREADS][NAMES];

static void *interner(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[32];

    for (int i = 0; i < NAMES; i++) {
        int j = (i * 7 + t * 13) % NAMES; /* each thread in its own order */
        snprintf(name, sizeof name, "thread-name-%d", j);
        ids[t][j] = region_intern(name);
        region_push_id(ids[t][j]);
        region_pop();
    }
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t th[THREADS];

    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, interner, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int j = 0; j < NAMES; j++) {
        char name[32];
        snprintf(name, sizeof name, "thread-name-%d", j);
        for (int t = 1; t < THREADS; t++)
            assert_int_equal(ids[t][j], ids[0][j]);
        assert_string_equal(region_name(ids[0][j]), name);
        assert_int_equal(region_entry_of(ids[0][j])->pushes, THREADS);
    }
}

/* Last: fills the table. */
static void test_full(void **state)
{
    char name[32];
    uint32_t id = 0;

    for (int i = 0; i < REGION_MAX + 10; i++) {
        snprintf(name, sizeof name, "many-%d", i);
        id = region_intern(name);
    }
    assert_int_equal(id, REGION_OTHER + 1);
    assert_string_equal(region_name(id), "(other ranges)");
    assert_int_equal(region_stats.names, REGION_MAX);
    region_push_id(id);
    assert_int_equal(region_current(), REGION_OTHER + 1);
    assert_true(region_pop());
    assert_int_equal(region_entry_of(id)->pushes, 1);
    /* Names seen before the table filled keep their ids. */
    assert_string_equal(region_name(region_intern("forward")), "forward");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_attribution),
        cmocka_unit_test(test_unmatched_and_deep),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
