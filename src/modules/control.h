/* control.h - control at run time: KTIME_START=paused, and `ktime ctl PID on|off|snapshot|
 * reset|status` through the core's channel (ctl.h: a FIFO per process, read by the drain
 * thread on its tick). Timing off is kt.hold's HOLD_PAUSED, which the launch path reads once;
 * the launches made meanwhile are counted here, as paused. docs/always-on.md. */
#ifndef KTIME_CONTROL_H
#define KTIME_CONTROL_H

#include <stdatomic.h>
#include <stdint.h>

#include "state.h"

/* Launches past warmup made while timing was off, by kernel-table id (control.c owns it);
 * NULL when timing can never be off (KTIME_CTL=0 and KTIME_START=on, or no memory). */
extern _Atomic uint64_t *control_paused;

/* The launch path, for a launch of k past its warmup that kt.hold's HOLD_PAUSED keeps from
 * being timed (only ever set while control_paused is there): counts it as paused. */
static inline void control_count_paused(const struct ktab_entry *k)
{
    atomic_fetch_add_explicit(&control_paused[ktab_id(&kt.ktab, k)], 1, memory_order_relaxed);
}

#endif
