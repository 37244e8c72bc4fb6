/* merge_acc.h - the parts of the merge (merge.h) shared by its files: the running sums of the
 * reports merged so far (struct macc), folded one report at a time (merge_fold.c), turned
 * into the merged model (merge_out.c) with the ranks' balance (merge_balance.c); merge.c
 * reads the reports and puts them in order. What the result keeps lives in its model's
 * arena; what only the merge needs (histograms' counts, hash tables) is its own. */
#ifndef KTIME_MERGE_ACC_H
#define KTIME_MERGE_ACC_H

#include <stdbool.h>
#include <stddef.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "merge.h"
#include "model.h"

/* A report given to the merge: where it is, and its header from the first look. */
struct input {
    const char *path;
    const char *data;          /* "-": standard input's bytes (len of them); else NULL */
    size_t len;
    size_t given;              /* its place among the arguments */
    bool has_id;               /* dev and ino: the file's */
    unsigned long long dev, ino;
    long rank, pid;            /* -1: none */
    char *host, *start, *timing;
    uint64_t schema, warmup;
    bool empty, merged;
    char *why;                 /* why it is left out (lenient), or NULL */
};

/* Reads in (at most max bytes when max > 0) into *buf (room *cap, grown), *len its bytes and
 * *whole whether that is all of it. Returns 0, or -1 with errno. */
int merge_in_read(const struct input *in, size_t max, char **buf, size_t *cap, size_t *len,
                  bool *whole);

/* Whether the n bytes at s are blank (spaces, tabs, line ends). */
bool merge_in_blank(const char *s, size_t n);

/* in's header from the first len bytes of its report (whole: all of it). Returns 0, 1 when
 * the text stops before the header does (read more), -1 when it is not a report's (then read
 * it whole, for the reason). */
int merge_in_skim(struct input *in, const char *text, size_t len, bool whole);

/* Reads in whole into m (model_read_data; scratch *buf of room *cap); err: why not, without
 * the file's name. Returns 0 or -1. Any thread, each with its own buf. */
int merge_in_report(const struct input *in, char **buf, size_t *cap, struct model *m,
                    char *err, size_t errsz);

/* in's header from its report read whole (its first look could not tell). */
void merge_in_header(struct input *in, const struct model *m);

/* Standard input read to its end into *data (malloc'd, *len bytes). Returns 0, or -1 with
 * errno. */
int merge_in_stdin(char **data, size_t *len);

/* The first of in[0..n-1] that is an earlier one's report again: the same file (or "-"
 * twice), or the same process (host, pid and start time). Returns 1 with *a the earlier and
 * *b the later, 0 when none is, -1 out of memory. */
int merge_in_same(const struct input *in, size_t n, const struct input **a,
                  const struct input **b);

/* A block of samples merged (Chan et al.: n, mean, M2; the sum, min and max). */
struct macc_stats {
    uint64_t n;
    double mean, m2, sum, min, max;
};

/* A histogram's counts, buckets lo .. lo + n - 1, with each bucket's lower edge as the
 * reports gave it. */
struct macc_hist {
    bool any;                  /* a report gave one */
    double gamma, first_edge;
    int64_t lo;
    size_t n;
    uint64_t *count;
    double *edge;
};

/* A block as a report gives it: statistics, histogram, quantiles. */
struct macc_block {
    struct macc_stats st;
    struct macc_hist h;
    uint64_t with_samples;     /* reports that had samples in it */
    bool all_hist;             /* ... each with a histogram */
    double q[RM_NQ];           /* the quantiles of the first of them */
    size_t order;              /* when it was first seen (shapes) */
};

struct macc_dev {
    int device;                /* the merged device */
    struct macc_block b;
};

struct macc_shape {
    uint32_t grid[3], block[3], smem;
    struct macc_block b;
};

/* A kernel's (or graph's) row. */
struct macc_row {
    UT_hash_handle hh;
    char *key;                 /* kind, then the mangled name */
    size_t order;              /* first seen */
    struct rm_row row;         /* identity and counts (n[]); the rest at the end */
    size_t comm_pat;           /* the pattern comm was judged by (its index + 1; 0: none) */
    bool comm;                 /* a collective's kernel (merge_is_comm) */
    struct macc_block all;
    bool has_launch;           /* a report measured its launch calls */
    struct macc_block launch, queue;
    double total_us;           /* the reports' totals (estimated ones as they are) */
    bool estimated, near_floor_any;
    double floor_events, floor_hw; /* the largest floor of a device it ran on */
    struct macc_dev *devs;     /* per merged device (while rows are kept) */
    size_t ndevs, capdevs;
    bool has_hw;
    struct macc_stats hw;
    struct macc_shape *shapes;
    size_t nshapes, capshapes;
    bool has_other;
    struct macc_block other;
    uint64_t other_shapes;
    bool other_untracked;
    struct rm_rank_part *ranks; /* each report's part (while rows are kept) */
    size_t nranks, capranks;
    uint64_t nin;              /* reports that have it */
    struct rm_rank_end slow, fast;
    double sum_total_ms;
};

/* A range (by name) and its kernels' rows. */
struct macc_range {
    UT_hash_handle hh;
    char *key;                 /* "" for the launches outside every range, else "=" NAME */
    size_t order;
    struct rm_range rg;        /* name and counts; rows at the end */
    struct macc_row *rows;     /* a hash by kind and mangled name */
    size_t nrows;
};

/* A device of the merged report: one per host and GPU. */
struct macc_device {
    UT_hash_handle hh;
    char *key;                 /* host, then the uuid or "#ordinal" */
    int ordinal;               /* in the merged report */
};

/* A pattern of the collectives' kernels, compiled: --comm's, or a report's KTIME_COMM. */
struct macc_pattern {
    char *text;
    regex_t re;
};

/* A range's GPU busy time (gpu_busy.ranges), summed by name. */
struct macc_brange {
    struct rm_busy_range g;
    size_t order;
};

struct macc {
    struct model *out;
    const struct merge_opts *opts;
    size_t ninputs;            /* in the merged order */
    size_t folded;             /* merged so far */
    bool keep_rows;            /* ninputs <= opts->rank_rows */
    /* the header */
    bool have_first;
    const char *version, *build, *host, *gate, *gate_requested, *timer_requested, *timer_used;
    const char *job, *attribution, *nvtx;
    bool host_same, job_same;
    long world_size;           /* the same in every report, or -1 */
    bool world_size_same;
    bool group_same;
    /* the timer's notes and the reports' notes, distinct (malloc'd lists) */
    const char **timer_notes, **notes;
    size_t ntimer_notes, nnotes;
    /* kernels, devices, memory operations, ranges */
    struct macc_row *rows;     /* hash */
    size_t nrows;
    struct macc_device *devmap;
    struct rm_device *devices; /* malloc'd, grown; copied into the model at the end */
    size_t ndevices, capdevices;
    struct rm_row *memops;     /* one per kind (malloc'd); stats in memop_blocks */
    struct macc_block *memop_blocks;
    size_t nmemops, capmemops;
    struct macc_range *ranges; /* hash */
    size_t nranges;
    bool any_ranges;
    /* the ranks side by side: each report's compute and collectives' time, by the patterns
     * (opts->comm's first, when given), the report being folded judged by pats[pat] */
    struct macc_pattern *pats;
    size_t npats, pat;
    double *compute_ms, *nccl_ms;
    long *rank_of;
    /* gpu_busy and communication: each report's GPUs side by side, the ranges by name */
    bool any_busy, any_comm;
    struct rm_busy_dev *busy;  /* malloc'd, grown */
    size_t nbusy, capbusy;
    struct macc_brange *branges;
    size_t nbranges, capbranges;
    uint64_t unplaced;
    struct rm_comm_dev *comm;
    size_t ncomm, capcomm;
    const char *comm_pattern;  /* the reports' pattern, or "mixed" */
    /* the reports that were given and not merged: "FILE: why" (malloc'd) */
    char **unread;
    size_t nunread, capunread;
};

/* Starts a merge into out (zeroed) of ninputs reports. Returns 0, -1 out of memory, or -2
 * when o->comm does not compile (err, errsz bytes, says why). */
int macc_init(struct macc *a, struct model *out, size_t ninputs, const struct merge_opts *o,
              char *err, size_t errsz);

/* Makes text (compiled once) the pattern a->pat of the report being folded. Returns 0, -1
 * out of memory, or -2 when it does not compile (err, errsz bytes, says why). */
int macc_use_pattern(struct macc *a, const char *text, char *err, size_t errsz);

/* The pattern that tells the collectives' kernels of the report m from its other kernels:
 * the merge's --comm (opts->comm) when given, else the report's own KTIME_COMM
 * (communication.pattern), else RM_COMM_DEFAULT; into a->pat. Returns 0, or -1 out of
 * memory. */
int merge_comm_pattern(struct macc *a, const struct model *m);

/* Whether the row w is a collective's kernel: its mangled name matches a->pats[a->pat] in
 * any case, as the library's KTIME_COMM tells them (so that the balance and the
 * communication section agree). The one place that decides it, for the balance. */
bool merge_is_comm(const struct macc *a, const struct rm_row *w);

/* Folds the report m's gpu_busy and communication in (its input's GPUs, on the merged devices
 * of map, by the report's device index). Returns 0, or -1 out of memory. */
int macc_fold_busy(struct macc *a, const struct model *m, size_t input, const int *map);

/* The merged report's gpu_busy and communication. Returns 0, or -1 out of memory. */
int macc_out_busy(struct macc *a);

/* Frees what macc_fold_busy holds. */
void macc_free_busy(struct macc *a);

/* Appends one zeroed element to the array *p of *n (room *cap) of size sz; NULL when out of
 * memory. */
static inline void *macc_push(void *p, size_t *n, size_t *cap, size_t sz)
{
    void **arr = p;

    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 4;
        void *more = realloc(*arr, c * sz);
        if (!more)
            return NULL;
        *arr = more;
        *cap = c;
    }
    void *e = (char *)*arr + (*n)++ * sz;
    memset(e, 0, sz);
    return e;
}


/* Folds the report m (read from file) in as the report `input` of the merged order (each
 * once, in that order). Returns 0, or -1 with err set when it cannot be merged with those
 * before it (histograms of other bucket edges) or memory ran out (a->out->oom). */
int macc_fold(struct macc *a, const struct model *m, size_t input, const char *file,
              char *err, size_t errsz);

/* Notes that the report of file was not merged, and why (the merged report's `unread`).
 * Returns 0, or -1 out of memory. */
int macc_unread(struct macc *a, const char *file, const char *why);

/* The merged model, once every report is folded (the merged order's inputs already in
 * a->out->merged). Returns 0, or -1 out of memory. */
int macc_finish(struct macc *a);

/* The ranks' balance (a->out->balance) of the reports folded. Returns 0, or -1 out of
 * memory. */
int macc_balance(struct macc *a);

/* A rank's label in m: "3", or "#input" for a report without a rank. */
const char *macc_label(struct model *m, long rank, long input);

/* Frees what the merge holds outside the model. */
void macc_free(struct macc *a);

/* Chan et al.'s pairwise step: s with the block (n, mean, m2, sum, min, max) added. */
void macc_add(struct macc_stats *s, uint64_t n, double mean, double m2, double sum, double min,
              double max);

#endif
