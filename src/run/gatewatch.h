/* gatewatch.h - the launch-gate watchdog: a thread that opens any gate still closed after
 * 5 to 10 ms, and sleeps while no gate is in use. */
#ifndef KTIME_GATEWATCH_H
#define KTIME_GATEWATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Nonzero while the watchdog sleeps until the next gate (a futex word). */
extern _Atomic uint32_t gatewatch_asleep;

/* Starts the watchdog once. Returns whether it runs: without it there are no gates.
 * Called under ktime's set-up lock. */
bool gatewatch_start(void);

/* Wakes the sleeping watchdog (one futex call). */
void gatewatch_wake(void);

/* Called by a launch right after it closed a gate. While the watchdog is awake (any gate
 * used in the last 10 ms) this is a fence and a load; only the first gate after an idle
 * spell makes a system call. The fence orders the gate's store before the load, against
 * the watchdog's store of the flag before its last look at the gates. */
static inline void gatewatch_kick(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&gatewatch_asleep, memory_order_relaxed))
        gatewatch_wake();
}

/* How often the watchdog looked at the gates and went to sleep, for KTIME_LOG=debug. */
void gatewatch_counts(uint64_t *passes, uint64_t *sleeps);

#endif
