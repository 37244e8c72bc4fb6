/* merge.h - the JSON reports of several processes (a job's ranks) or runs merged into one
 * report model, exactly (docs/tools.md, "ktime merge"): the counts added, the statistics by
 * the pairwise formula, histograms bucket by bucket, each kernel's spread over the ranks, and
 * the ranks side by side (the straggler's verdict). The reports are read one at a time, in one
 * order whatever the order they are given in, so that the result is the same bytes for any
 * order and memory does not grow with the number of reports beyond a few hundred bytes each.
 * The same code makes `ktime merge` (tools/ktime-merge) and the job report libktime writes at
 * the exit of rank 0. No CUDA. */
#ifndef KTIME_MERGE_H
#define KTIME_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* Up to this many reports, each kernel keeps each report's part (`ranks`, `per_device`) and
 * the ranks' table keeps a row per rank; past it, only the spread and the verdict. */
#define MERGE_RANK_ROWS 64

/* A rank whose compute time is more than this much over the median rank's stands out. */
#define MERGE_STRAGGLER_PCT 5.0

struct merge_opts {
    /* A report that cannot be read or merged (not JSON, not a ktime report, another warmup,
     * a merged report) is left out and named in the result's balance (`unread`) and through
     * note(); else it ends the merge with an error (ktime merge). */
    bool lenient;
    /* MERGE_RANK_ROWS when 0. */
    size_t rank_rows;
    /* Threads that read reports while the caller merges them (0: the caller reads them). */
    int threads;
    /* Which kernels are the collectives' (where a rank that is ahead waits for the others):
     * a POSIX extended regular expression matched, in any case, against a kernel's mangled
     * name, as KTIME_COMM's. NULL: each report's own KTIME_COMM (its communication.pattern),
     * else RM_COMM_DEFAULT. One that does not compile is an error. */
    const char *comm;
    /* The ranks the job has (0: the reports' world_size, when they agree). */
    long world_size;
    /* CLOCK_MONOTONIC ms after which no further report is read: those not read yet are left
     * out and named (0: none). */
    double deadline_ms;
    /* What is said of a report on the way (an empty report skipped, one left out): file and
     * a phrase ("skipped, an empty report (no CUDA launches in pid 7)"). NULL: nothing. */
    void (*note)(void *ctx, const char *file, const char *msg);
    void *ctx;
};

/* Merges the reports at paths[0..n-1] into m (zeroed by this call). Returns 0, or -1 with err
 * (errsz bytes) saying why in one line: a report cannot be read or is not a ktime report
 * ("FILE: not valid JSON (line 3, column 7: ...)"; not when lenient), the reports cannot be
 * merged ("A has warmup 5, B has warmup 2: cannot merge reports of different warmup
 * settings", histograms of different bucket edges, a merged report given; not when lenient),
 * every report is empty, none could be read, or memory ran out; m is then empty. An empty
 * report (a process that launched nothing) is skipped with a note. Any thread; starts
 * opts->threads threads and joins them. */
int merge_files(const char *const *paths, size_t n, const struct merge_opts *opts,
                struct model *m, char *err, size_t errsz);

#endif
