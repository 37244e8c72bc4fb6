/* collect.h - gathers the report's rows from the kernel table and the drain's aggregates. */
#ifndef KTIME_COLLECT_H
#define KTIME_COLLECT_H

#include <stdbool.h>

#include "report.h"

/* Fills r->kernels and r->nkernels: one row per kernel name (a kernel loaded in several
 * modules or contexts has several handles, and is one row), its launch counts, its demangled
 * name, and, with with_aggs, its samples per device of r->devices. Adds the drops the
 * aggregates hold to r->drops. Returns 0, or -1 when out of memory. Once the drain thread has
 * stopped (with_aggs false if it did not stop). */
int collect_kernels(struct report *r, bool with_aggs);

/* Frees what collect_kernels() allocated. */
void collect_free(struct report *r);

#endif
