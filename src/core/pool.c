/* pool.c - creation and growth of per-context event pools. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "pool.h"

#include <stdlib.h>

#include "log.h"

int pool_init(struct pool *p, const struct event_ops *ops, void *ctx, int device,
              uint32_t cap, uint32_t initial)
{
    p->ctx = ctx;
    p->device = device;
    p->cap = cap;
    atomic_init(&p->created, 0);
    atomic_init(&p->want_grow, 0);
    atomic_init(&p->retiring, 0);
    atomic_init(&p->dead, 0);
    atomic_init(&p->gone, 0);
    p->primary = false;
    p->anchor = NULL;
    atomic_init(&p->anchor_state, 0);
    p->anchor_ns = 0;
    p->anchor_slot = UINT32_MAX;
    p->ref_ns = 0;
    p->seen = NULL;
    p->npending = 0;
    p->grow_from = p->grow_to = 0;
    p->slots = calloc(cap, sizeof *p->slots);
    p->pending = calloc(cap, sizeof *p->pending);
    p->scratch = calloc(cap, sizeof *p->scratch);
    if (!p->slots || !p->pending || !p->scratch || mpmc_init(&p->free_q, cap) != 0 ||
        mpmc_init(&p->submit_q, cap) != 0)
        return -1;
    if (pool_grow(p, ops, initial < cap ? initial : cap) == 0)
        return -1;
    return 0;
}

void pool_free_memory(struct pool *p)
{
    free(p->slots);
    free(p->pending);
    free(p->scratch);
    free((void *)p->seen);
    p->seen = NULL;
    mpmc_destroy(&p->free_q);
    mpmc_destroy(&p->submit_q);
    p->slots = NULL;
    p->pending = NULL;
    p->scratch = NULL;
}

uint32_t pool_grow(struct pool *p, const struct event_ops *ops, uint32_t n)
{
    uint32_t have = atomic_load_explicit(&p->created, memory_order_relaxed);
    uint32_t made = 0;

    /* Each pair is published as soon as it exists: a burst of launches can use the first
     * new pairs while the rest are still being made. */
    while (made < n && have + made < p->cap) {
        struct pool_slot *s = &p->slots[have + made];

        if (ops->create(p->ctx, &s->start, &s->stop) != 0) {
            log_warn("could not create CUDA events on device %d; %u pairs in its pool", p->device,
                     have + made);
            break;
        }
        made++;
        atomic_store_explicit(&p->created, have + made, memory_order_release);
        mpmc_push(&p->free_q, have + made - 1);
    }
    return made;
}

uint32_t pool_gate_watch(struct pool *p, uint32_t *closed)
{
    uint32_t n = atomic_load_explicit(&p->created, memory_order_acquire), opened = 0;

    if (!p->gate_host || atomic_load_explicit(&p->dead, memory_order_acquire))
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        struct pool_slot *s = &p->slots[i];
        uint32_t g = atomic_load_explicit(&s->gate_closed, memory_order_acquire);

        if (g)
            ++*closed;

        if (g && g == s->watch_seen &&
            atomic_load_explicit(&s->forced, memory_order_relaxed) != g) {
            uint32_t cur = __atomic_load_n(&p->gate_host[i], __ATOMIC_ACQUIRE);
            atomic_store_explicit(&s->forced, g, memory_order_release);
            /* Gate values of a slot only grow: never write g over a newer launch's value
             * (the launch may have finished, and its slot been reused, since g was read). */
            while ((int32_t)(g - cur) > 0 &&
                   !__atomic_compare_exchange_n(&p->gate_host[i], &cur, g, false,
                                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                ;
            opened++;
            g = 0;
        }
        s->watch_seen = g;
    }
    return opened;
}
