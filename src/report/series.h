/* series.h - KTIME_SERIES: what each kernel did between two snapshots (series_delta), as one
 * JSON line (series_write), for plotting a long run over time (ktime plot). No CUDA. */
#ifndef KTIME_SERIES_H
#define KTIME_SERIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* A kernel's (or graph's) part of the interval. Counts are differences of the running
 * totals: signed, so that the lines of a run add up to its report exactly. */
struct series_row {
    const char *name, *mangled; /* the current model's */
    int kind;                   /* enum report_kind */
    int64_t calls, timed;
    double sum_us;
    double p50_us, p99_us;      /* of the interval's samples (from the histograms' difference,
                                 * within 1 %, clamped to the run's min and max); < 0: none */
};

struct series_delta {
    struct series_row *rows;    /* the rows of cur whose calls or timed changed, in cur's order */
    size_t nrows;
    const char *from;           /* the interval's start: prev's snapshot time, or, without
                                 * prev, the time cur's counts start from; NULL: unknown */
    bool from_zero;             /* no prev: the counts since cur's start (or its last reset) */
};

/* What changed from prev (NULL: nothing before, the counts start afresh) to cur, two models
 * of one process's snapshots, rows matched by kind and mangled name. d's rows point into cur,
 * which must outlive d. Returns 0, or -1 when out of memory. */
int series_delta(struct series_delta *d, const struct model *prev, const struct model *cur);

/* Frees what series_delta allocated. */
void series_free(struct series_delta *d);

/* One line of JSON (docs/always-on.md), ended by "\n": the process (pid, host, rank), cur's
 * snapshot (seq, at, final, paused), the interval (from), and each row of d. Returns 0, or
 * -1 when writing failed. */
int series_write(FILE *f, const struct series_delta *d, const struct model *cur);

#endif
