/* test_mpmc.c - the lock-free queue: order, bounds, and no loss or duplication under
 * several producers and consumers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "mpmc.h"

static void test_fifo_and_bounds(void **state)
{
    struct mpmc q;
    uint32_t v;
    assert_int_equal(mpmc_init(&q, 5), 0); /* rounds up to 8 */
    assert_false(mpmc_pop(&q, &v));
    for (uint32_t i = 0; i < 8; i++)
        assert_true(mpmc_push(&q, i));
    assert_false(mpmc_push(&q, 99));
    for (uint32_t i = 0; i < 8; i++) {
        assert_true(mpmc_pop(&q, &v));
        assert_int_equal(v, i);
    }
    assert_false(mpmc_pop(&q, &v));
    /* wrap around many times */
    for (uint32_t i = 0; i < 1000; i++) {
        assert_true(mpmc_push(&q, i));
        assert_true(mpmc_pop(&q, &v));
        assert_int_equal(v, i);
    }
    mpmc_destroy(&q);
}

#define PRODUCERS 4
#define CONSUMERS 4
#define PER_PRODUCER 100000

static struct mpmc q;
static _Atomic int producers_done;
static unsigned char *seen;

static void *producer(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg * PER_PRODUCER;
    for (uint32_t i = 0; i < PER_PRODUCER; i++)
        while (!mpmc_push(&q, base + i))
            sched_yield(); /* full: eight spinning threads on two cores starve the others */
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static void *consumer(void *arg)
{
    uint32_t v;
    for (;;) {
        if (mpmc_pop(&q, &v)) {
            __atomic_fetch_add(&seen[v], 1, __ATOMIC_RELAXED);
            continue;
        }
        /* Empty: finished only if every producer is done and nothing slipped in. */
        if (atomic_load(&producers_done) == PRODUCERS) {
            if (mpmc_pop(&q, &v)) {
                __atomic_fetch_add(&seen[v], 1, __ATOMIC_RELAXED);
                continue;
            }
            return NULL;
        }
        sched_yield();
    }
}

static void test_concurrent_no_loss(void **state)
{
    pthread_t p[PRODUCERS], c[CONSUMERS];
    seen = calloc(PRODUCERS * PER_PRODUCER, 1);
    assert_int_equal(mpmc_init(&q, 1024), 0);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&p[i], NULL, producer, (void *)(uintptr_t)i);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(c[i], NULL);
    for (int i = 0; i < PRODUCERS * PER_PRODUCER; i++)
        if (seen[i] != 1)
            fail_msg("value %d seen %d times", i, seen[i]);
    free(seen);
    mpmc_destroy(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_and_bounds),
        cmocka_unit_test(test_concurrent_no_loss),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
