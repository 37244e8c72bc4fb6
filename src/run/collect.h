/* collect.h - gathers the report's rows from the kernel table, the drain's aggregates and
 * the CUPTI timer's records. */
#ifndef KTIME_COLLECT_H
#define KTIME_COLLECT_H

#include <stdbool.h>

#include "report.h"

/* Fills r->kernels and r->nkernels: one row per kernel name (a kernel loaded in several
 * modules or contexts has several handles, and is one row), its launch counts (the modules'
 * too: modules_entry), its demangled name, and, with with_aggs, its samples per device of
 * r->devices; every launch in one bucket. Then the modules add their rows and sections
 * (modules_rows: ranges, memory operations, CUPTI's records). Adds the drops the aggregates
 * hold to r->drops. Returns 0, or -1 when out of memory. Once the drain thread has stopped
 * (with_aggs false if it did not stop). records_primary: a module's records (CUPTI's) are the
 * samples, and that module accounts for the launches no bucket holds. */
int collect_kernels(struct report *r, bool with_aggs, bool records_primary);

/* Frees what collect_kernels() allocated (the rows and the sections). */
void collect_free(struct report *r);

#endif
