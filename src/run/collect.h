/* collect.h - gathers the report's rows from the kernel table, the drain's aggregates and
 * the CUPTI timer's records. */
#ifndef KTIME_COLLECT_H
#define KTIME_COLLECT_H

#include <stdbool.h>

#include "report.h"

/* Fills r->kernels and r->nkernels: one row per kernel name (a kernel loaded in several
 * modules or contexts has several handles, and is one row), its launch counts, its demangled
 * name, and, with with_aggs, its samples per device of r->devices. Adds the drops the
 * aggregates hold to r->drops. Returns 0, or -1 when out of memory. Once the drain thread has
 * stopped (with_aggs false if it did not stop). hw_primary: CUPTI's records are the samples,
 * and collect_hw() will account for the launches no bucket holds. */
int collect_kernels(struct report *r, bool with_aggs, bool hw_primary);

/* Adds the CUPTI timer's records (kt.hw) to the rows: with hw_primary (KTIME_TIMER=cupti)
 * they are the rows' samples, and launches that got neither a record nor an event count as
 * incomplete; otherwise (both) they go beside the events' samples, in report_kernel.hw.
 * Kernels that only ran as graph nodes get rows of their own. Returns 0 or -1. */
int collect_hw(struct report *r, bool hw_primary);

/* Adds the modules' parts: each row's launch calls and queue times, the GPUs' busy time and
 * communication (with stopped: the drain thread has stopped, so their data are final), and
 * the settings the text needs. After collect_kernels() and collect_hw(). */
void collect_modules(struct report *r, bool stopped);

/* Frees what collect_kernels() allocated. */
void collect_free(struct report *r);

#endif
