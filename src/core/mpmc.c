/* mpmc.c - bounded lock-free MPMC queue (D. Vyukov's algorithm). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "mpmc.h"

#include <stdlib.h>

int mpmc_init(struct mpmc *q, uint32_t capacity)
{
    uint64_t size = 2;

    while (size < capacity)
        size <<= 1;
    q->cells = calloc(size, sizeof *q->cells);
    if (!q->cells)
        return -1;
    for (uint64_t i = 0; i < size; i++)
        atomic_init(&q->cells[i].seq, i);
    q->mask = size - 1;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    return 0;
}

void mpmc_destroy(struct mpmc *q)
{
    free(q->cells);
    q->cells = NULL;
}

bool mpmc_push(struct mpmc *q, uint32_t v)
{
    uint64_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);

    for (;;) {
        struct mpmc_cell *c = &q->cells[pos & q->mask];
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)seq - (int64_t)pos;

        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                c->value = v;
                atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
                return true;
            }
        } else if (dif < 0) {
            return false; /* full */
        } else {
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
        }
    }
}

bool mpmc_pop(struct mpmc *q, uint32_t *v)
{
    uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);

    for (;;) {
        struct mpmc_cell *c = &q->cells[pos & q->mask];
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)seq - (int64_t)(pos + 1);

        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *v = c->value;
                atomic_store_explicit(&c->seq, pos + q->mask + 1, memory_order_release);
                return true;
            }
        } else if (dif < 0) {
            return false; /* empty */
        } else {
            pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
        }
    }
}
