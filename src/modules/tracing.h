/* tracing.h - the trace (KTIME_TRACE): every timed launch placed on a timeline, written at
 * exit as a Chrome trace. Each pool has a reference event, recorded once, just before the
 * start event of its first timed launch; the drain places the samples against it (trace.h
 * keeps them). */
#ifndef KTIME_TRACING_H
#define KTIME_TRACING_H

#include <stdatomic.h>

#include <cuda.h>

#include "pool.h"

/* Records p's reference event on es, once per pool (the first caller wins). */
void tracing_anchor(struct pool *p, CUstream es);

/* The launch path, before a timed launch's start event on es: the pool's reference event,
 * when KTIME_TRACE gave the pool one and it is not recorded yet. Inline: one test when it is
 * off. */
static inline void tracing_anchor_before(struct pool *p, CUstream es)
{
    if (p->anchor && atomic_load_explicit(&p->anchor_state, memory_order_acquire) == 0)
        tracing_anchor(p, es);
}

#endif
