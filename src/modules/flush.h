/* flush.h - the L2 flush (KTIME_FLUSH_L2): before each timed launch, a scratch buffer of its
 * context, twice the size of L2, is overwritten on the launch's stream, outside the interval,
 * so that kernels are timed with a cold cache. */
#ifndef KTIME_FLUSH_H
#define KTIME_FLUSH_H

#include <cuda.h>

#include "pool.h"

/* Queues p's flush on stream es (the driver's refusal is counted: the launch is timed warm).
 * Call only where p has a buffer (flush_l2_before). */
void flush_l2_run(struct pool *p, CUstream es);

/* The launch path, before a launch's gate and start event on es: the flush, where p has a
 * buffer (KTIME_FLUSH_L2 on, and one could be had). Inline: one test when it is off. */
static inline void flush_l2_before(struct pool *p, CUstream es)
{
    if (p->flush_ptr)
        flush_l2_run(p, es);
}

#endif
