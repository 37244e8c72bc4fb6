/* test_ktab.c - the kernel table: one entry per handle, also when many threads insert
 * the same handles at once; a full table refuses instead of growing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ktab.h"

/* The library keeps its one table for the whole process; a test frees its own at the end
 * (LeakSanitizer checks the unit tests). */
static void put_table(struct ktab *t)
{
    for (uint32_t i = 0; i <= t->mask; i++)
        free(atomic_load(&t->slots[i].name));
    free(t->slots);
    free((void *)t->order);
}

static void test_insert_and_find(void **state)
{
    struct ktab t;
    bool ins;
    assert_int_equal(ktab_init(&t, 100), 0);
    struct ktab_entry *a = ktab_get(&t, 0x1000, &ins);
    assert_non_null(a);
    assert_true(ins);
    ktab_set_name(a, "_Z1av");
    struct ktab_entry *b = ktab_get(&t, 0x1000, &ins);
    assert_ptr_equal(a, b);
    assert_false(ins);
    assert_string_equal(atomic_load(&b->name), "_Z1av");
    struct ktab_entry *c = ktab_get(&t, 0x2000, &ins);
    assert_true(ins);
    assert_ptr_not_equal(a, c);
    assert_int_equal(atomic_load(&t.count), 2);
    assert_int_not_equal(ktab_id(&t, a), ktab_id(&t, c));
    put_table(&t);
}

static void test_full_table_refuses(void **state)
{
    struct ktab t;
    bool ins;
    assert_int_equal(ktab_init(&t, 16), 0);
    for (uintptr_t k = 1; k <= 16; k++)
        assert_non_null(ktab_get(&t, k * 64, &ins));
    assert_null(ktab_get(&t, 17 * 64, &ins));
    assert_non_null(ktab_get(&t, 5 * 64, &ins)); /* existing keys still found */
    assert_false(ins);
    assert_int_equal(atomic_load(&t.count), 16);
    put_table(&t);
}

#define THREADS 8
#define KEYS 5000
static struct ktab shared;
static _Atomic int inserted_total;

static void *hammer(void *arg)
{
    bool ins;
    for (int round = 0; round < 3; round++)
        for (uintptr_t k = 1; k <= KEYS; k++) {
            struct ktab_entry *e = ktab_get(&shared, k * 4096, &ins);
            if (!e)
                return (void *)1;
            if (ins)
                atomic_fetch_add(&inserted_total, 1);
            atomic_fetch_add(&e->calls, 1);
        }
    return NULL;
}

static void test_concurrent_inserts(void **state)
{
    pthread_t th[THREADS];
    bool ins;
    assert_int_equal(ktab_init(&shared, KEYS), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, hammer, NULL);
    for (int i = 0; i < THREADS; i++) {
        void *rv;
        pthread_join(th[i], &rv);
        assert_null(rv);
    }
    assert_int_equal(atomic_load(&inserted_total), KEYS);
    assert_int_equal(atomic_load(&shared.count), KEYS);
    for (uintptr_t k = 1; k <= KEYS; k++) {
        struct ktab_entry *e = ktab_get(&shared, k * 4096, &ins);
        assert_false(ins);
        assert_int_equal(atomic_load(&e->calls), THREADS * 3);
    }
    /* The insertion order lists every entry exactly once. */
    static unsigned char seen[KEYS + 1];
    for (uint32_t n = 0; n < KEYS; n++) {
        struct ktab_entry *e = ktab_nth(&shared, n);
        assert_non_null(e);
        uintptr_t k = atomic_load(&e->key) / 4096;
        assert_true(k >= 1 && k <= KEYS && !seen[k]);
        seen[k] = 1;
    }
    assert_null(ktab_nth(&shared, KEYS));
    put_table(&shared);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_and_find),
        cmocka_unit_test(test_full_table_refuses),
        cmocka_unit_test(test_concurrent_inserts),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
