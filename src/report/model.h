/* model.h - the report as it is shown: rows in their order, totals, percentages, quantiles,
 * sub-rows and sections, built once (model_build from the gathered data, or model_read from
 * a saved JSON report). The text, CSV and JSON writers print it and compute nothing. No CUDA. */
#ifndef KTIME_MODEL_H
#define KTIME_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fields.h"

/* A kernel with fewer timed samples than this is flagged: its statistics say little. */
#define FEW_SAMPLES 10
/* A kernel's mean under this many times its timer's floor is marked "near floor". */
#define NEAR_FLOOR_FACTOR 3.0
/* The text table's Kernel column, and the room for a name shortened to it. */
#define NAME_WIDTH 72
#define SHORT_NAME_SIZE 80

enum report_kind { REPORT_KERNEL = 0, REPORT_GRAPH = 1, REPORT_MEMOP = 2 };

/* The sketch of a block of samples, as the JSON gives it: [bucket, lower edge, samples] for
 * each bucket that has any. */
struct rm_bucket {
    int64_t i;
    double edge;
    uint64_t count;
};
struct rm_hist {
    double gamma, first_edge;
    size_t n;
    struct rm_bucket *b;
};

/* The statistics of one block of timed samples (microseconds), as shown. A quantile < 0 is
 * none (null). */
struct rm_stats {
    uint64_t timed;
    double v[RM_NSTATS];       /* enum rm_stat */
    struct rm_hist *hist;      /* NULL: none */
};

/* A GPU's part of a row (shown when a row ran on several). */
struct rm_dev_part {
    int device;                /* ordinal */
    struct rm_stats st;
};

/* A launch shape's part of a row, or (other) the shapes past those shown. */
struct rm_shape {
    uint32_t grid[3], block[3], smem;
    uint64_t shapes;           /* other: tracked shapes folded in */
    bool untracked;            /* other: also shapes never told apart */
    struct rm_stats st;
};

/* KTIME_TIMER=both: the hardware's (CUPTI) statistics of a row. */
struct rm_hw {
    struct rm_stats st;        /* timed, mean, min, max, stddev, sum, m2 */
    bool has_bias;
    double bias;               /* the events' mean less the hardware's */
};

/* A merged report: one input's part of a row, and the spread over the inputs. */
struct rm_rank_part {
    long input, rank;          /* rank < 0: none */
    const char *host;          /* NULL: none */
    long pid;                  /* < 0: none */
    uint64_t calls, timed;
    double total_ms;
    bool has_mean;
    double mean_us;
};
struct rm_rank_end {
    long input, rank;          /* rank < 0: none */
    const char *label;         /* the rank, or "#input" */
    double total_ms;
};
struct rm_spread {
    uint64_t ranks;
    struct rm_rank_end slowest, fastest;
    bool has_ratio;
    double ratio;              /* slowest over fastest */
    bool has_mean;
    double mean_ms;            /* the mean of the ranks' totals */
    double imbalance;          /* slowest over the mean, less 1 (0: balanced) */
};

/* A row's launch calls (the CPU's time in the call) and queue times (from the call's return
 * to the kernel's start, on CUPTI's clock), in us; timed 0: none. */
struct rm_launch {
    struct rm_stats api, queue;  /* timed, the statistics, quantiles, histogram */
    bool launch_bound;           /* the mean launch call is at least the kernel's mean */
    bool queue_long;             /* the mean queue time is at least RM_QUEUE_LONG_US */
};
#define RM_QUEUE_LONG_US 1000.0

/* A row: a kernel or a graph (the kernels' table), a kind of memory operation, or a kernel's
 * samples inside a range. */
struct rm_row {
    const char *name;          /* as shown: the program's bytes (a memory operation's kind) */
    const char *mangled;
    int kind;                  /* enum report_kind */
    uint64_t n[RM_NCOUNTS];    /* enum rm_count */
    struct rm_stats st;        /* all devices; total_ms and percent are the row's (estimated
                                * from the mean with KTIME_SAMPLE) */
    bool total_estimated, few_samples, near_floor;
    long sampled_1_in;         /* KTIME_BUDGET: timed at 1 launch in this many at the end; 0:
                                * no budget */
    bool has_gbps;
    double gbps;               /* a memory operation's throughput, GB/s */
    struct rm_hw *hw;          /* NULL: none */
    struct rm_dev_part *dev;   /* the devices with samples, in the report's device order */
    size_t ndev;
    struct rm_shape *shapes;   /* by launch shape, most timed first */
    size_t nshapes;
    struct rm_shape *other;    /* NULL: no other shapes */
    struct rm_rank_part *ranks; /* merged reports: each input's part */
    size_t nranks;
    struct rm_spread *spread;  /* merged reports, or NULL */
    struct rm_launch *launch;  /* NULL: no launch measured */
    /* The name column (model_names): the short name and its reference in "Full names". */
    char short_name[SHORT_NAME_SIZE];
    int ref;
};

/* A named range (NVTX, ktime_range_push), or the launches outside every range (name NULL). */
struct rm_range {
    const char *name;
    uint64_t closed, open;
    double wall_ms, total_ms;
    uint64_t timed;
    struct rm_row *rows;       /* the kernels' samples in it, largest total first */
    size_t nrows;
};

/* An idle gap between two kernels (or copies: names NULL). */
struct rm_gap {
    double len_us, at_ms;      /* at_ms: from the start of its GPU's span */
    const char *before, *before_mangled, *after, *after_mangled;
};
struct rm_gaps {
    uint64_t count;
    double total_ms;
    uint64_t bin_count[RM_NGAP_BINS];
    double bin_ms[RM_NGAP_BINS];
    struct rm_gap top[RM_GAP_TOP];
    size_t ntop;
};
struct rm_busy_stream {
    uint64_t stream, intervals;
    double busy_ms, busy_percent; /* of its GPU's span */
    struct rm_gaps gaps;
};
/* A GPU's busy time as one timer saw it, and its communication. A merged report's entries say
 * which input they came from. */
struct rm_busy_dev {
    int device;
    const char *method;        /* "cupti" or "events" */
    long input, rank;          /* merged: the input and its rank (< 0: none) */
    const char *host;          /* merged: NULL: none */
    double v[RM_NBUSY];        /* enum rm_busy_field */
    uint64_t n[RM_NBUSY_COUNTS]; /* enum rm_busy_count */
    struct rm_gaps gaps;
    struct rm_busy_stream *streams;
    size_t nstreams;
};
struct rm_busy_range {
    const char *name;          /* NULL: launches outside every range */
    double wall_ms, busy_ms;
    bool has_percent;          /* wall_ms > 0 */
    double busy_percent;
    uint64_t intervals;
};
struct rm_busy {
    uint64_t unplaced;         /* events: samples that could not be placed */
    struct rm_busy_dev *devs;
    size_t ndevs;
    struct rm_busy_range *ranges;
    size_t nranges;
};
/* Communication on a GPU that ran any (KTIME_COMM), as one timer saw it. */
struct rm_comm_dev {
    int device;
    const char *method;
    long input, rank;          /* merged: the input and its rank (< 0: none) */
    const char *host;
    uint64_t kernels;
    double c[RM_NCOMM];        /* enum rm_comm_field */
};
/* KTIME_COMM's pattern, its GPUs, and in a merged report of two inputs or more the entry whose
 * communication took least time: the rank that waited least in collectives, the straggler's
 * sign (least < 0: none). */
struct rm_comm {
    const char *pattern;
    struct rm_comm_dev *devs;
    size_t ndevs;
    long least;
};

struct rm_ranges {
    const char *attribution;   /* "innermost" or "outermost" */
    const char *nvtx;          /* how NVTX reached ktime */
    uint64_t unmatched_pops, too_deep;
    struct rm_range *by_name;
    size_t nby_name;
};

struct rm_device {
    int ordinal;
    const char *name;          /* the program's bytes */
    const char *uuid;          /* NULL: none */
    const char *driver;
    long driver_version;
    double floor_events_us, floor_hw_us; /* <= 0: not measured */
    /* merged reports: the host and the ordinal there */
    bool merged;
    const char *host;          /* NULL: null */
    long host_ordinal;
};

/* KTIME_CAPTURE: the capture range. */
struct rm_capture {
    const char *mode;          /* "profiler-api" or "nvtx:NAME" */
    uint64_t starts, stops, ranges;
    bool open_at_exit;
};

/* KTIME_BUDGET: the budget and what ktime estimates it cost. */
struct rm_budget {
    long percent;
    uint64_t windows;
    double wall_ms, spent_ms, estimated_percent;
    double timed_ns;           /* a timed launch's cost, on average, in the last window */
    long cupti_on_1_in;        /* CUPTI's records on 1/N of the time at the end; -1: the
                                * lever was the events' rates */
    uint64_t unrecorded;       /* launches made while CUPTI's records were off */
};

struct rm_flush {
    uint64_t bytes, flushes, refused;
    uint64_t contexts, without_buffer;
};

/* The words of the timer used and the launch gate, as the writers tell them apart. */
enum rm_timer_kind { RM_EVENTS, RM_CUPTI, RM_BOTH, RM_TIMER_OTHER };
enum rm_gate_kind { RM_GATE_OFF, RM_GATE_AUTO, RM_GATE_ON, RM_GATE_OTHER };

struct rm_timer {
    const char *requested, *used; /* events, cupti, both (merged: maybe "mixed") */
    enum rm_timer_kind kind;   /* used's (model_words) */
    const char *note;          /* NULL: none */
    const char *cupti_library; /* NULL: none */
    uint64_t records_dropped, buffers_refused;
};

/* The run's conditions (NVML), as shown: the text's lines and the JSON's figures. A figure
 * of RM_NULL was not read (null). */
#define RM_NULL INT64_MIN
struct rm_cond_proc {
    long pid;
    const char *name;          /* NULL: null */
    bool at_start, at_end;
    uint64_t samples;
};
struct rm_cond_dev {
    int ordinal;
    bool checked;
    const char *reason, *pci_bus_id; /* NULL: null */
    uint64_t samples;
    double duration_s;
    bool others_listed;        /* other_processes is a list (else null) */
    struct rm_cond_proc *others;
    size_t nothers;
    int64_t other_count, others_at_start, others_at_end;
    bool others_truncated, pid_mismatch;
    int locked;                /* -1 null, 0, 1 */
    const char *locked_evidence;
    int64_t app_sm, default_app_sm, sm_min, sm_max, mem_min, mem_max;
    bool throttle;             /* read (else null) */
    double power_s, thermal_s, reason_s[RM_NREASONS];
    uint32_t reasons_seen;     /* bit i: reason i */
    uint64_t readings;
    bool temp;                 /* read (else null) */
    int64_t temp_min, temp_max;
    int persistence;           /* -1 null, 0, 1 */
    const char *compute_mode;  /* NULL: null */
};
struct rm_cond {
    bool checked;
    const char *reason;        /* NULL: null */
    const char **text;         /* the text report's lines (no line ends) */
    size_t ntext;
    const char *library;
    int64_t interval_ms;
    bool mps_checked;
    int mps_active;            /* -1 null, 0, 1 */
    const char *mps_evidence;
    const char **warnings;
    size_t nwarnings;
    struct rm_cond_dev *devs;
    size_t ndevs;
};

/* A merged report's inputs. */
struct rm_input {
    const char *file, *host;   /* NULL: null */
    long rank, local_rank, world_size, pid; /* < 0: null */
    const char *start_time, *end_time;
    const char **command;
    size_t ncommand;
    bool has_command;
    const char *ktime_version, *ktime_build;
};

struct rm_merged {
    struct rm_input *inputs;
    size_t ninputs;
    const char *ranks_words;   /* "0, 1, #2": each input's rank, or #index (four or more
                                * ranks in a row: "0-15") */
    const char *hosts_words;   /* the distinct hosts, sorted (the first 16, then how many
                                * more) */
    size_t nhosts;
};

/* A report written while the process ran (KTIME_INTERVAL, ktime ctl snapshot), or the final
 * one of a process that wrote such snapshots. */
struct rm_snapshot {
    uint64_t seq;              /* the reports the process had written, this one included */
    const char *at;            /* when its counts were read (ISO 8601); NULL: null */
    bool final;                /* the report at exit */
    long interval_s;           /* KTIME_INTERVAL; 0: snapshots on request only */
    uint64_t resets;           /* ktime ctl reset: how often the counts started afresh */
    const char *since;         /* what the counts cover: from this moment (ISO 8601); NULL: null */
    bool paused;               /* timing was off (ktime ctl off) when the counts were read */
    double at_unix;            /* at, in seconds since the epoch (0: unknown; not in the JSON) */
};

/* A merged report's ranks side by side: each one's GPU time in compute kernels and in
 * NCCL's (the collectives, where a rank that is ahead waits for the others), and the rank,
 * if any, that holds the others back. */
struct rm_balance_rank {
    long input, rank;          /* rank < 0: none */
    const char *label;         /* the rank, or "#input" */
    double compute_ms, nccl_ms;
};
struct rm_balance {
    long world_size;           /* the ranks the job has; <= 0: unknown */
    uint64_t ranks;            /* reports merged */
    long *missing;             /* ranks of 0 .. world_size - 1 without a report merged */
    size_t nmissing;
    const char **unread;       /* "FILE: why", each report that was found and not merged */
    size_t nunread;
    double compute_median_ms, nccl_median_ms;
    bool has_slowest;
    struct rm_balance_rank slowest; /* the rank with the most compute time */
    double excess_ms, excess_pct; /* its compute time over the median rank's */
    double wait_ms;            /* the median rank's NCCL time over its own */
    const char *verdict;       /* "straggler", "imbalanced", "balanced" or "one rank" */
    struct rm_balance_rank *rows; /* each report's, in the merged order; none past the
                                   * merge's limit of rows per rank */
    size_t nrows;
};

struct rm_totals {
    uint64_t n[RM_NTOTALS];    /* enum rm_total */
    uint64_t drops[RM_NDROPS]; /* enum rm_drop */
    bool has_sample;
    long sample;
    double timed_total_ms;
};

struct model {
    /* the header */
    const char *version, *build;
    const char **argv;         /* the command line, the program's bytes */
    int argc;
    bool has_pid;
    long pid;
    const char *host;          /* NULL: null */
    const char *rank_text, *local_rank_text; /* as the launcher wrote them; NULL: none */
    long rank, local_rank;     /* the same as numbers (JSON); < 0: null */
    long world_size;           /* <= 0: null */
    const char *job;           /* the job's id (KTIME_JOB or the launcher's), NULL: null */
    const char *start_time, *end_time; /* ISO 8601, NULL: null */
    struct rm_snapshot *snapshot; /* NULL: not a snapshot (the process wrote none) */
    const char *timing_method; /* "cuda-events", "cupti-activity", ... */
    bool launch_gate;
    const char *gate, *gate_requested; /* auto, on, off (merged: maybe "mixed") */
    enum rm_gate_kind gate_kind; /* gate's (model_words) */
    uint64_t gate_unavailable;
    long contexts;
    long warmup;
    bool group_shape;
    struct rm_timer timer;
    struct rm_capture *capture; /* NULL: every launch timed */
    struct rm_flush *flush;    /* NULL: KTIME_FLUSH_L2 off */
    struct rm_budget *budget;  /* NULL: KTIME_BUDGET off */
    struct rm_device *devices;
    size_t ndevices;
    struct rm_cond *cond;      /* NULL: none (an old report) */
    /* the rows */
    struct rm_row *rows;       /* shown, in order */
    size_t nrows;
    size_t nrows_all;          /* the run's kernels (more than nrows after model_select) */
    const char *shown;         /* model_select's line, or NULL */
    bool memops_on;            /* KTIME_MEMOPS (else "memops": null) */
    struct rm_row *memops;     /* one per kind seen */
    size_t nmemops;
    struct rm_ranges *ranges; /* NULL: no range was pushed */
    struct rm_busy *busy;      /* NULL: KTIME_BUSY off (or nothing ran) */
    struct rm_comm *comm;      /* NULL: KTIME_COMM off */
    bool launch_columns;       /* KTIME_LAUNCH_COLUMNS: the text shows the launches' table */
    struct rm_totals totals;
    const char *note;          /* NULL: none */
    struct rm_merged *merged;  /* NULL: not a merged report */
    struct rm_balance *balance; /* a merged report of ranks, or NULL */
    int schema;                /* a saved report's schema_version (model_read); 0: built */
    bool has_refs;             /* model_names gave a row a reference */
    size_t name_width;         /* the Kernel column's width (0: NAME_WIDTH) */
    /* model_names: the shown rows by kind and mangled name, for model_row_of (malloc'd, freed
     * by model_free); NULL when out of memory (model_row_of then reads every row) */
    const struct rm_row **by_mangled;
    /* the memory all of it is in */
    struct arena_block *mem;
    bool oom;                  /* an allocation failed: the model is incomplete */
};

/* ---- memory: every part of a model lives in its arena, freed with it ---- */

/* n zeroed bytes in m's arena, or NULL (m->oom set). */
void *model_alloc(struct model *m, size_t n);

/* A copy of s (NULL: NULL) in m's arena; NULL and m->oom when out of memory. */
char *model_strdup(struct model *m, const char *s);

/* A copy of the n bytes at s, NUL-terminated, in m's arena. */
char *model_strndup(struct model *m, const char *s, size_t n);

/* Frees everything of m; m is then empty. */
void model_free(struct model *m);

/* ---- views ---- */

/* The name of the row model_prom_view folds the rows past its first n into. */
#define MODEL_OTHER_ROWS "(other kernels)"

/* Cuts m's rows (in their order, largest total first) to the first n, each with a name no
 * other row shown has (" [2]" added to a repeated one), and, when there were more, a last row
 * MODEL_OTHER_ROWS with the rest: counts added, samples merged (its quantiles from the merged
 * histograms), its GPUs' parts (without quantiles). The bounded label set of the Prometheus
 * file. Returns 0, or -1 when out of memory (m is then incomplete). */
int model_prom_view(struct model *m, size_t n);

/* The sketch h was made from (build_hist's buckets back into their counts; NULL: empty). */
struct sketch;
void model_hist_sketch(const struct rm_hist *h, struct sketch *sk);

/* Fills each shown row's short name (report_short_name; a graph's label cut to the column
 * between UTF-8 characters) and reference: a row whose full name is needed to tell it apart
 * (its middle elided, or another shown row shortening to the same) gets the next number, in
 * row order, listed under "Full names"; then each range's row's, as its kernel's row shows it.
 * Sorts the short names, and indexes the rows for model_row_of: O(n log n). Called again
 * whenever the rows shown change. */
void model_names(struct model *m);

/* The shown row of the same kind and mangled name as w (a range's row), the first such in
 * row order, or NULL: a range's kernel shows its short name and reference, else its own name
 * shortened (ref 0). A binary search of model_names's index: O(log n). */
const struct rm_row *model_row_of(const struct model *m, const struct rm_row *w);

/* Fills m->merged's words (ranks_words, hosts_words, nhosts) from its inputs. Returns 0, or -1
 * when out of memory. */
int model_merged_words(struct model *m);

/* Sets timer.kind and gate_kind from their words: once, when the model is built or read, so
 * that the writers compare no strings. */
void model_words(struct model *m);

/* ---- the writers: each prints m as it is, and returns 0, or -1 when writing to f failed ---- */

/* The human-readable table (docs/text-format.md). */
int model_write_text(FILE *f, const struct model *m);

/* JSON (docs/report-format.md). */
int model_write_json(FILE *f, const struct model *m);

/* CSV (RFC 4180, CRLF line ends): a header row, then one row per kernel (device "all") and,
 * for a kernel that ran on several GPUs, one per GPU with its samples' columns, and with
 * KTIME_GROUP=shape one per launch shape. */
int model_write_csv(FILE *f, const struct model *m);

/* The Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
 * collector (docs/always-on.md): per row, launches; per row and GPU, timed launches, GPU
 * seconds and a summary of durations (quantiles 0.5, 0.9, 0.99 where the model has them);
 * the drop reasons; the snapshot's seq and time. Labels host, rank (when the model has them),
 * gpu, kernel: values escaped, stray bytes written as U+FFFD. The rows as they are: bound them
 * with model_prom_view first. */
int model_write_prom(FILE *f, const struct model *m);

/* Writes a program's string s as one CSV field: escaped as report_escape_char says (names.h:
 * a record is one line), a byte that begins no well-formed UTF-8 sequence as U+FFFD, "'" put
 * before a value that begins with =, +, -, @ or ' (a spreadsheet formula otherwise: OWASP's
 * CSV injection), quoted where RFC 4180 needs it (a comma or a quote, or a space at either
 * end), quotes doubled. docs/report-format.md gives the rule and how to read the value back. */
void report_csv_field(FILE *f, const char *s);

#endif
