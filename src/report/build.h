/* build.h - the parts of model_build (report.h), shared by its files: build.c (rows and
 * totals), build_sections.c (the header, memory operations, ranges) and build_cond.c (the
 * run's conditions). Each returns 0, or -1 when out of memory. */
#ifndef KTIME_BUILD_H
#define KTIME_BUILD_H

#include "report.h"

/* o from samples s (distribution sk, or NULL): total_ms and percent from total_us over
 * whole_us (0: percent 0), the statistics, and the quantiles (-1 without sk). */
void build_stats(struct rm_stats *o, const struct stats *s, const struct sketch *sk,
                 double total_us, double whole_us);

/* sk's histogram (no buckets for NULL), or NULL when out of memory. */
struct rm_hist *build_hist(struct model *m, const struct sketch *sk);

/* per[0..r->ndevices) merged (NULL: none). */
struct stats build_all_devices(const struct report *r, const struct stats *per);

/* w's counts from k's. */
void build_counts(struct rm_row *w, const struct report_kernel *k);

int build_header(struct model *m, const struct report *r);
int build_memops(struct model *m, const struct report *r);
int build_ranges(struct model *m, const struct report *r);
int build_conditions(struct model *m, const struct report *r);

/* w's launch calls and queue times from k's (none: w->launch stays NULL); its marks against
 * the kernel's mean (build_busy.c). */
int build_launch(struct model *m, struct rm_row *w, const struct report_kernel *k,
                 double kernel_mean_us);

/* The GPUs' busy time, communication and the launches' text setting (build_busy.c). */
int build_busy(struct model *m, const struct report *r);

#endif
