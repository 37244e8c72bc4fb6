/* jsonw.h - the parts of the JSON writer (model_write_json, model.h) shared by its files:
 * json.c (the kernels and totals) and json_sections.c (the header, devices, conditions,
 * memory operations, ranges, a merged report's inputs). Each prints the model as it is,
 * through the JSON emitter (jsonout.h), as members of the object open. */
#ifndef KTIME_JSONW_H
#define KTIME_JSONW_H

#include "jsonout.h"
#include "model.h"

/* "p50_us", "p90_us", "p99_us": each a number or null. */
void json_quantiles(struct jw *w, const struct rm_stats *s);

/* The statistics from..to (enum rm_stat) of s, in that order. */
void json_stats_range(struct jw *w, const struct rm_stats *s, int from, int to);

/* "histogram": {...} (nothing for NULL). */
void json_histogram(struct jw *w, const struct rm_hist *h);

/* From "schema_version" to "flush_l2". */
void json_header(struct jw *w, const struct model *m);

/* "devices": [...]. */
void json_devices(struct jw *w, const struct model *m);

/* "conditions": {...} (nothing for NULL). */
void json_conditions(struct jw *w, const struct rm_cond *c);

/* "memops": [...] or null. */
void json_memops(struct jw *w, const struct model *m);

/* "ranges": {...} or null. */
void json_ranges(struct jw *w, const struct model *m);

/* A row's "launch", "queue" (each {...} or null), "launch_bound", "queue_long". */
void json_launch(struct jw *w, const struct rm_row *k);

/* "gpu_busy": {...} or null. */
void json_busy(struct jw *w, const struct model *m);

/* "communication": {...} or null. */
void json_comm(struct jw *w, const struct model *m);

/* A merged report's row: "ranks": [...], "rank_spread": {...}. */
void json_ranks(struct jw *w, const struct rm_row *k);

/* A merged report's "balance": {...}. */
void json_balance(struct jw *w, const struct rm_balance *b);

/* A merged report's "merged_from": [...]. */
void json_merged(struct jw *w, const struct model *m);

#endif
