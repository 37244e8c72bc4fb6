/* collect.h - gathers the report's rows from the kernel table, the drain's aggregates and
 * the CUPTI timer's records. */
#ifndef KTIME_COLLECT_H
#define KTIME_COLLECT_H

#include <stdbool.h>

#include "report.h"

/* Fills r->kernels and r->nkernels: one row per kernel name (a kernel loaded in several
 * modules or contexts has several handles, and is one row), its launch counts (since the
 * last reset: rebase.h), its demangled name, and, with with_aggs, its samples per device of
 * r->devices. Adds the drops the aggregates hold to r->drops. Returns 0, or -1 when out of
 * memory. Once the drain thread has stopped (with_aggs false if it did not stop), or, live,
 * on the drain thread with pass_lock held while the program runs: then an entry not yet
 * named is left for the next time, and the launches still in flight are counted incomplete.
 * hw_primary: CUPTI's records are the samples, and collect_hw() will account for the
 * launches no bucket holds. */
int collect_kernels(struct report *r, bool with_aggs, bool hw_primary, bool live);

/* Adds the CUPTI timer's records (kt.hw) to the rows: with hw_primary (KTIME_TIMER=cupti)
 * they are the rows' samples, and launches that got neither a record nor an event count as
 * incomplete; otherwise (both) they go beside the events' samples, in report_kernel.hw.
 * Kernels that only ran as graph nodes get rows of their own. Returns 0 or -1. */
int collect_hw(struct report *r, bool hw_primary);

/* The rows (collect_kernels), with with_aggs CUPTI's records too (collect_hw), and the drop
 * reasons, gathered again while a launch dropped in between (the reasons then add up to the
 * rows' drops). r's header is filled already. Returns 0, or -1 when out of memory (r holds
 * no rows). As collect_kernels. */
int collect_gather(struct report *r, bool with_aggs, bool hw_primary, bool live);

/* Frees what collect_kernels() allocated. */
void collect_free(struct report *r);

#endif
