/* rebase.c - ktime ctl reset: the counts the reports subtract. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "rebase.h"

#include <stdlib.h>
#include <string.h>

#include "state.h"

/* Written by the drain thread (rebase_take), read by it (snapshots) and by the exit path once
 * it stopped: entries by kernel table slot, allocated at the first reset. */
static struct rebase_entry *_Atomic base;
static uint64_t drops[DROP_NREASONS];

int rebase_take(void)
{
    struct rebase_entry *b = atomic_load(&base);
    uint32_t used = atomic_load(&kt.ktab.count), npools;

    if (!b && !(b = calloc((size_t)kt.ktab.mask + 1, sizeof *b)))
        return -1;
    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(&kt.ktab, j);
        if (!e)
            continue;
        uint32_t id = ktab_id(&kt.ktab, e);
        struct rebase_entry *o = &b[id];
        /* In the order the report reads them (collect.c): what a launch adds to last first. */
        o->failed = atomic_load(&e->failed);
        o->dropped = atomic_load(&e->dropped);
        o->shutdown = atomic_load(&e->shutdown);
        o->captured = atomic_load(&e->captured);
        o->warmup = atomic_load(&e->warmup);
        o->calls = atomic_load(&e->calls);
    }
    /* Pairs still pending will be folded after the reset: their launches are its. */
    npools = atomic_load(&kt.drain.npools);
    for (uint32_t i = 0; i < npools; i++) {
        struct pool *p = kt.drain.pools[i];
        if (atomic_load(&p->dead))
            continue;
        for (uint32_t j = 0; j < p->npending; j++) {
            uint32_t id = p->slots[p->pending[j]].kernel;
            if (id <= kt.ktab.mask && b[id].calls)
                b[id].calls--;
        }
    }
    for (int i = 0; i < DROP_NREASONS; i++)
        drops[i] = atomic_load(&kt.drops[i]);
    atomic_store(&base, b);
    return 0;
}

void rebase_forget(void)
{
    free(atomic_exchange(&base, NULL));
    memset(drops, 0, sizeof drops);
}

void rebase_entry(uint32_t id, struct rebase_entry *out)
{
    struct rebase_entry *b = atomic_load(&base);

    if (b && id <= kt.ktab.mask)
        *out = b[id];
    else
        memset(out, 0, sizeof *out);
}

uint64_t rebase_drop(int i)
{
    return i >= 0 && i < DROP_NREASONS ? drops[i] : 0;
}
