/* comm.h - the communication module (KTIME_COMM): kernels of communication libraries (NCCL,
 * NVSHMEM, MSCCL, RCCL by name, or those a pattern matches) form a class of their own on the
 * busy module's timelines; per GPU, their time, the share of it that overlaps the compute
 * kernels, and the rest (exposed). */
#ifndef KTIME_COMM_H
#define KTIME_COMM_H

#include <stdbool.h>

#include "report.h"

/* Compiles KTIME_COMM's pattern. Returns false when communication is not told apart (off). */
bool comm_init(void);

/* The class (enum iv_class: IV_COMM or IV_COMPUTE) of a kernel of mangled name, from a cache
 * by name pointer (names stay where they are: the kernel table's, CUPTI's). The drain thread. */
int comm_classify(const char *mangled);

/* KTIME_COMM's pattern, or NULL when off. */
const char *comm_pattern(void);

/* Fills the communication figures of busy's GPUs (their comm_* members). At exit, after
 * busy_report(). */
void comm_report(struct report_busy *busy);

/* Frees the module's state. */
void comm_free(void);

#endif
