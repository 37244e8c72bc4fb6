/* text.h - the parts of the text writer (model_write_text, model.h) shared by its files:
 * text.c (the header, the kernels' rows, the footer) and text_sections.c (the sections
 * between the rows and the footer). Each prints the model as it is. */
#ifndef KTIME_TEXT_H
#define KTIME_TEXT_H

#include <stdio.h>

#include "model.h"
#include "shape.h"

/* The Med and p99 columns of s; `none` where there is no value. */
void text_quantiles(FILE *f, const struct rm_stats *s, const char *none);

/* " (few samples, ..., 3 dropped)": what happened to a row's calls that were not timed
 * (nothing when none). */
void text_notes(FILE *f, const struct rm_row *w);

/* The run's conditions' lines (nothing for NULL). */
void text_conditions(FILE *f, const struct rm_cond *c);

/* A merged report's load balance: each shown kernel's slowest and fastest input. */
void text_spread(FILE *f, const struct model *m);

/* A merged report's ranks side by side and the verdict on them. */
void text_balance(FILE *f, const struct rm_balance *b);

/* KTIME_TIMER=both: per kernel, the events' mean against the hardware's. */
void text_bias(FILE *f, const struct model *m);

/* The memory operations' table (nothing when none, or KTIME_MEMOPS=0). */
void text_memops(FILE *f, const struct model *m);

/* The ranges' sections (nothing when no range was pushed). */
void text_ranges(FILE *f, const struct model *m);

/* KTIME_LAUNCH_COLUMNS: the shown rows' launch calls and queue times (text_busy.c). */
void text_launch_table(FILE *f, const struct model *m);

/* The GPUs' busy time; communication (nothing when off or empty). */
void text_busy(FILE *f, const struct model *m);
void text_comm(FILE *f, const struct model *m);

#endif
