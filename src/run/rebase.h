/* rebase.h - ktime ctl reset: the counts the reports subtract from the kernel table's and the
 * process's counters (which only grow, and which the launch path keeps), so that the counts
 * start afresh without a write on the launch path. */
#ifndef KTIME_REBASE_H
#define KTIME_REBASE_H

#include <stdint.h>

#include "report.h"

/* A kernel table entry's counters at the reset (its launches then still pending on the GPU
 * left out of calls: their samples come after the reset, and so do their calls). */
struct rebase_entry {
    uint64_t calls, captured, dropped, failed, shutdown, warmup;
};

/* Takes the base: every kernel table entry's counters and the drop reasons as they are now
 * (each module takes its own: modules_reset); launches still pending in the pools count after it.
 * Returns 0, or -1 when out of memory (nothing changed). The drain thread, with pass_lock
 * held, right after a pass. */
int rebase_take(void);

/* Entry id's base (zeros before any reset or for an entry made since). Any thread. */
void rebase_entry(uint32_t id, struct rebase_entry *out);

/* The base of drop reason i (enum report_drop). */
uint64_t rebase_drop(int i);

/* Forgets every base: the counts are the whole run's again. For the unit tests, which run
 * many processes' worth of state in one. */
void rebase_forget(void);

/* a - b, or 0 when b is larger (a counter read just before a base taken just after). */
static inline uint64_t rebase_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

#endif
