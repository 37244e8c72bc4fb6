/* mpmc.h - bounded lock-free multi-producer/multi-consumer queue of 32-bit values
 * (Vyukov's sequence-number design). Neither side ever waits or allocates. */
#ifndef KTIME_MPMC_H
#define KTIME_MPMC_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct mpmc_cell {
    _Atomic uint64_t seq;
    uint32_t value;
};

struct mpmc {
    struct mpmc_cell *cells;
    uint64_t mask;
    alignas(64) _Atomic uint64_t head; /* next position to enqueue */
    alignas(64) _Atomic uint64_t tail; /* next position to dequeue */
};

/* Allocates room for at least capacity values (rounded up to a power of two).
 * Returns 0, or -1 when out of memory. Not thread-safe; call before sharing q. */
int mpmc_init(struct mpmc *q, uint32_t capacity);

/* Frees the cells. Only when no thread uses q any more. */
void mpmc_destroy(struct mpmc *q);

/* Appends v. Returns false when the queue is full. Any thread, lock-free. */
bool mpmc_push(struct mpmc *q, uint32_t v);

/* Removes the oldest value into *v. Returns false when empty. Any thread, lock-free. */
bool mpmc_pop(struct mpmc *q, uint32_t *v);

#endif
