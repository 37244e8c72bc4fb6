/* ktab.c - lock-free open-addressing hash table of kernel handles. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "ktab.h"

#include <stdlib.h>
#include <string.h>

int ktab_init(struct ktab *t, uint32_t max)
{
    uint32_t size = 64;

    while (size < 2 * max)
        size <<= 1;
    /* calloc of a large block maps zero pages: memory is touched only as kernels appear. */
    t->slots = calloc(size, sizeof *t->slots);
    t->order = calloc(size, sizeof *t->order);
    if (!t->slots || !t->order) {
        free(t->slots);
        free((void *)t->order);
        return -1;
    }
    t->mask = size - 1;
    t->max = max;
    atomic_init(&t->count, 0);
    return 0;
}

static inline uint32_t hash_ptr(uintptr_t k)
{
    uint64_t x = (uint64_t)k;

    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

struct ktab_entry *ktab_get(struct ktab *t, uintptr_t key, bool *inserted)
{
    uint32_t i = hash_ptr(key) & t->mask;

    *inserted = false;
    for (uint32_t probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
        struct ktab_entry *e = &t->slots[i];
        uintptr_t cur = atomic_load_explicit(&e->key, memory_order_acquire);

        if (cur == key)
            return e;
        if (cur != 0)
            continue;
        /* Empty: claim it, unless the table already holds max entries. The slot is
         * claimed before it is counted, so a thread that sees the count full and looks
         * again also sees a key another thread claimed here meanwhile. */
        if (atomic_load_explicit(&t->count, memory_order_acquire) >= t->max) {
            cur = atomic_load_explicit(&e->key, memory_order_acquire);
            return cur == key ? e : NULL;
        }
        if (atomic_compare_exchange_strong_explicit(&e->key, &cur, key, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            uint32_t n = atomic_fetch_add_explicit(&t->count, 1, memory_order_acq_rel);
            if (n <= t->mask) /* always: count never passes the slots */
                atomic_store_explicit(&t->order[n], i + 1, memory_order_release);
            *inserted = true;
            return e;
        }
        if (cur == key) /* another thread inserted the same key here */
            return e;
    }
    return NULL;
}

struct ktab_entry *ktab_find(struct ktab *t, uintptr_t key)
{
    uint32_t i = hash_ptr(key) & t->mask;

    for (uint32_t probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
        uintptr_t cur = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (cur == key)
            return &t->slots[i];
        if (cur == 0)
            return NULL;
    }
    return NULL;
}

bool ktab_retire(struct ktab *t, uintptr_t key)
{
    struct ktab_entry *e = ktab_find(t, key);
    uintptr_t expected = key;

    /* The slot stays occupied (probe chains run through it) and counted. */
    return e && atomic_compare_exchange_strong_explicit(&e->key, &expected, KTAB_RETIRED,
                                                        memory_order_acq_rel,
                                                        memory_order_relaxed);
}

struct ktab_entry *ktab_nth(struct ktab *t, uint32_t n)
{
    uint32_t v = n <= t->mask ? atomic_load_explicit(&t->order[n], memory_order_acquire) : 0;

    return v ? &t->slots[v - 1] : NULL;
}

void ktab_set_name(struct ktab_entry *e, const char *name)
{
    char *copy = strdup(name ? name : "");

    atomic_store_explicit(&e->name, copy, memory_order_release);
}
