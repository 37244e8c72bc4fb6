/* test_rangestack.c - the ranges' core (rangestack.c): interning (one id per name, from any thread),
 * innermost and outermost attribution, counts and wall time, pops with nothing open, stacks
 * deeper than RANGE_DEPTH, the watch of KTIME_CAPTURE=nvtx:NAME, and a table that fills up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rangestack.h"

static void test_intern(void **state)
{
    uint32_t a = range_intern("forward"), b = range_intern("backward");
    char copy[] = "forward";

    assert_true(a >= 1 && a <= RANGE_SLOTS);
    assert_true(b >= 1 && b <= RANGE_SLOTS);
    assert_int_not_equal(a, b);
    assert_int_equal(range_intern(copy), a); /* by content, not by address */
    assert_string_equal(range_name_of(a), "forward");
    assert_int_equal(range_intern(NULL), range_intern("(unnamed)"));
    assert_null(range_name_of(0));
}

static void test_attribution(void **state)
{
    uint32_t step = range_intern("step"), fwd = range_intern("fwd");
    uint64_t closed = range_entry_of(fwd)->pushes;
    struct timespec ms = { 0, 2000000 };

    assert_int_equal(range_current(), 0);
    range_push_id(step);
    assert_int_equal(range_current(), step);
    range_push_id(fwd);
    assert_int_equal(range_current(), fwd);
    range_set_outermost(true);
    assert_int_equal(range_current(), step);
    range_set_outermost(false);
    assert_int_equal(range_entry_of(fwd)->open, 1);
    nanosleep(&ms, NULL);
    assert_true(range_pop());
    assert_int_equal(range_current(), step);
    assert_int_equal(range_entry_of(fwd)->pushes, closed + 1);
    assert_int_equal(range_entry_of(fwd)->open, 0);
    assert_true(range_entry_of(fwd)->wall_ns >= 2000000);
    assert_true(range_pop());
    assert_int_equal(range_current(), 0);
    assert_true(range_any());
}

static void test_unmatched_and_deep(void **state)
{
    uint64_t before = range_stats.unmatched_pops, deep = range_stats.too_deep;
    uint32_t id = range_intern("deep");

    assert_false(range_pop());
    assert_int_equal(range_stats.unmatched_pops, before + 1);
    for (int i = 0; i < RANGE_DEPTH + 3; i++)
        range_push_id(id);
    assert_int_equal(range_stats.too_deep, deep + 3);
    assert_int_equal(range_current(), id); /* the innermost kept */
    for (int i = 0; i < RANGE_DEPTH + 3; i++)
        assert_true(range_pop());
    assert_int_equal(range_current(), 0);
    assert_int_equal(range_entry_of(id)->open, 0);
    assert_int_equal(range_entry_of(id)->pushes, RANGE_DEPTH); /* the deeper ones not timed */
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
    watched_id = range_intern("watched");
    atomic_store(&range_watch, watcher);
    range_push_id(range_intern("other"));
    range_push_id(watched_id);
    assert_int_equal(watched_open, 1);
    range_push_id(watched_id);
    assert_int_equal(watched_open, 2);
    range_pop();
    range_pop();
    assert_int_equal(watched_open, 0);
    range_pop();
    assert_int_equal(watched_pushes, 2);
    assert_int_equal(watched_pops, 2);
    atomic_store(&range_watch, NULL);
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
        ids[t][j] = range_intern(name);
        range_push_id(ids[t][j]);
        range_pop();
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
        assert_string_equal(range_name_of(ids[0][j]), name);
        assert_int_equal(range_entry_of(ids[0][j])->pushes, THREADS);
    }
}

/* Last: fills the table. */
static void test_full(void **state)
{
    char name[32];
    uint32_t id = 0;

    for (int i = 0; i < RANGE_MAX + 10; i++) {
        snprintf(name, sizeof name, "many-%d", i);
        id = range_intern(name);
    }
    assert_int_equal(id, RANGE_OTHER + 1);
    assert_string_equal(range_name_of(id), "(other ranges)");
    assert_int_equal(range_stats.names, RANGE_MAX);
    range_push_id(id);
    assert_int_equal(range_current(), RANGE_OTHER + 1);
    assert_true(range_pop());
    assert_int_equal(range_entry_of(id)->pushes, 1);
    /* Names seen before the table filled keep their ids. */
    assert_string_equal(range_name_of(range_intern("forward")), "forward");
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
