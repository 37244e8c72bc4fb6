/* report.h - the data a run gathered for its report (struct report, filled by collect.c and
 * finish.c), the model built from it (model.h), and the report written in a format. Knows
 * nothing of CUDA or of how the numbers were gathered: everything it prints (names, devices,
 * the command) is passed in as data. */
#ifndef KTIME_REPORT_H
#define KTIME_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "names.h"
#include "shape.h"
#include "sketch.h"
#include "stats.h"

#define REPORT_SCHEMA_VERSION 2

struct conditions; /* conditions.h: the run's conditions (NVML) */

struct report_device {
    int ordinal;
    char name[128];
    int driver_version;     /* as cuDriverGetVersion gives it, e.g. 13000 */
    char driver[32];        /* the kernel module's version, e.g. "580.159.04", or "" */
    double floor_events_us; /* an empty kernel's event interval (median), 0: not measured */
    double floor_hw_us;     /* its hardware duration from CUPTI (mean), 0: not measured */
    char uuid[48];          /* "GPU-" and the device's UUID, as nvidia-smi prints it, or "" */
};

/* A kernel's launch calls and queue times (the launches module). */
struct report_launch {
    struct stats api;             /* the launch call's wall time, us */
    const struct sketch *api_sk;  /* its distribution, or NULL */
    struct stats queue;           /* CUPTI: its start on the GPU less the call's end, us */
    const struct sketch *queue_sk;
};

struct report_kernel {
    const char *mangled;    /* symbol name (kernels) or label (graphs, memory operations) */
    int kind;               /* enum report_kind */
    uint64_t calls, captured, dropped, failed, incomplete;
    uint64_t warmup_skipped;
    uint64_t ungated;       /* timed samples whose launch was not gated (of the timed ones) */
    struct stats *per_dev;  /* one per report.devices entry, in microseconds */
    const char *name;       /* the name to show (demangled), or NULL to show `mangled` */
    uint64_t in_graph;      /* CUPTI: records of it run as a CUDA graph's node (not launches) */
    uint64_t hw_timed;      /* CUPTI timer: of the samples in per_dev, those from CUPTI */
    struct stats *hw;       /* KTIME_TIMER=both: CUPTI's samples per device, or NULL */
    uint64_t unsampled;     /* KTIME_SAMPLE, KTIME_BUDGET: launches after warmup left untimed by
                             * the draw */
    double wsum;            /* the samples' sum, each counted as the launches it stands for
                             * (KTIME_BUDGET: 2^level), microseconds */
    uint64_t wn;            /* the launches they stand for (the samples' count without it) */
    int sample_level;       /* KTIME_BUDGET: timed at 1 in 2^level at the end (0: every one) */
    struct sketch *sk;      /* the distribution of the samples in per_dev, all devices, or
                             * NULL (none) */
    struct sketch *dev_sk;  /* the same per device, like per_dev, or NULL (none) */
    uint64_t by_nodes;      /* CUPTI timer, graph rows: launches after warmup timed node by
                             * node, in the kernels' rows (in_graph), with no sample here */
    struct shape_set *shapes; /* the samples of per_dev by launch shape (all devices), sorted
                               * (shape_set_sorted), or NULL (none known) */
    uint64_t outside_range; /* KTIME_CAPTURE: launches after warmup outside the capture range */
    /* Memory operations (REPORT_MEMOP): name is the kind ("HtoD"...); the bytes of every call
     * that succeeded (warmup included), and of the timed ones (those in per_dev). */
    uint64_t bytes, timed_bytes;
    uint64_t paused;        /* launches after warmup made while timing was off (ktime ctl off,
                             * KTIME_START=paused): counted, not timed */
    const struct report_launch *launch; /* its launch calls and queue times, or NULL */
};

/* An idle gap, between the kernels (or copies) named by their mangled and shown names (NULL:
 * a copy or set). */
struct report_gap {
    double len_us, at_ms;         /* at_ms: from the start of the timeline's span */
    const char *before, *before_mangled, *after, *after_mangled;
};

/* The idle gaps of a timeline. */
struct report_gaps {
    uint64_t count;
    double total_ms;
    uint64_t bin_count[RM_NGAP_BINS];
    double bin_ms[RM_NGAP_BINS];
    struct report_gap top[RM_GAP_TOP]; /* the largest, largest first */
    size_t ntop;
};

struct report_busy_stream {
    uint64_t stream;              /* the timer's id of it (CUPTI's, or the handle's) */
    uint64_t intervals;
    double busy_ms;
    struct report_gaps gaps;
};

/* A GPU's busy time, as one timer saw it. */
struct report_busy_dev {
    int device;
    const char *method;           /* "cupti" (exact) or "events" (approximate) */
    double span_ms, busy_ms;      /* from the first start to the last end; at least one running */
    uint64_t kernels, copies;     /* intervals */
    double kernel_ms, copy_ms;    /* their lengths, summed */
    uint64_t late, other_streams; /* intervals that came too late to be placed in order; on
                                   * streams past the ones told apart */
    struct report_gaps gaps;
    struct report_busy_stream *streams;
    size_t nstreams;
    /* Communication (KTIME_COMM): kernels and their time; the unions of the communication and
     * the compute kernels, and of their intersection. */
    uint64_t comm_kernels;
    double comm_ms, comm_busy_ms, compute_busy_ms, overlap_ms;
};

/* The GPU time of the kernels launched in a range (the union of their intervals, summed over
 * GPUs), beside the range's wall time. */
struct report_busy_range {
    const char *name;             /* NULL: launches outside every range */
    double wall_ms, busy_ms;
    uint64_t intervals;
};

struct report_busy {
    struct report_busy_dev *devs; /* by device, then method */
    size_t ndevs;
    struct report_busy_range *ranges; /* by busy time, largest first */
    size_t nranges;
    uint64_t unplaced;            /* events: samples that could not be placed on the timeline */
};

/* A kernel's timed samples made inside one range (all devices). */
struct report_range_row {
    const char *mangled;    /* the kernel's row's */
    const char *name;       /* its demangled name (owned by the kernel's row), or NULL */
    int kind;               /* enum report_kind */
    struct stats st;        /* microseconds */
    struct sketch *sk;      /* their distribution, or NULL */
};

/* The launches made inside one named range (rangestack.h), or outside every range (name NULL). */
struct report_range {
    const char *name;       /* the range's name; NULL: launches outside every range */
    uint64_t closed;        /* ranges of this name that closed */
    uint64_t open;          /* ... still open at the report */
    double wall_ms;         /* their wall-clock time, summed */
    double total_us;        /* the rows' timed samples, summed */
    uint64_t timed;
    struct report_range_row *rows; /* sorted by total, largest first */
    size_t nrows;
};

enum report_drop {
    DROP_POOL_EXHAUSTED,    /* no free event pair: pool at KTIME_POOL_CAP */
    DROP_EVENT_ERROR,       /* the driver failed to record or resolve an event */
    DROP_NO_CONTEXT,        /* no context/pool could be had for the launch's stream */
    DROP_TABLE_FULL,        /* more distinct kernels than KTIME_MAX_KERNELS */
    DROP_SHUTDOWN,          /* launched while the report was being written: counted, untimed */
    DROP_GATE_TIMEOUT,      /* the launch blocked in the driver behind its own gate */
    DROP_GATE_LATE,         /* KTIME_GATE=auto, not gated: the stream had gone idle */
    DROP_NREASONS
};

/* A report written while the process runs (KTIME_INTERVAL, ktime ctl snapshot), or the final
 * one of a process that wrote such snapshots. */
struct report_snapshot {
    uint64_t seq;                   /* the reports this process has written, this one included */
    double at_unix;                 /* when its counts were read */
    bool final;                     /* the report at exit */
    long interval_s;                /* KTIME_INTERVAL, 0: snapshots on request only */
    uint64_t resets;                /* ktime ctl reset: the counts started afresh this often */
    double since_unix;              /* what the counts cover: from ktime's start or the last reset */
    bool paused;                    /* timing was off (ktime ctl off) when they were read */
};

/* KTIME_BUDGET: the budget and what ktime estimates it cost. */
struct report_budget {
    long percent;           /* KTIME_BUDGET */
    uint64_t windows;       /* the controller's windows */
    double wall_ms;         /* the time they covered */
    double spent_ms;        /* ktime's estimated cost over them */
    double estimated_percent; /* spent / wall, in % */
    double timed_ns;        /* what a timed launch cost, on average, in the last window */
    bool cupti;             /* the lever was CUPTI's records switched on and off */
    long cupti_on_1_in;     /* then: on 1/N of the time at the end (1: all the time) */
    uint64_t unrecorded;    /* then: launches made while its records were off */
};

struct report {
    const char *version;
    const char *build;             /* git revision of the build, "" when unknown */
    const char *const *argv;   /* command line, argc entries */
    int argc;
    long pid;
    const char *host;               /* this machine's name, or NULL */
    const char *rank, *local_rank;  /* the launcher's rank and local rank (digits), or NULL */
    long world_size;                /* processes in the job, 0 when no launcher says */
    const char *job;                /* the job's id (KTIME_JOB, the launcher's), or NULL */
    double start_unix, end_unix;    /* wall clock: ktime's start, the report; 0 unknown */
    long warmup;
    bool group_shape;               /* KTIME_GROUP=shape: text and CSV rows per launch shape */
    long sample;                    /* KTIME_SAMPLE: about one launch in this many is timed */
    const struct report_budget *budget; /* KTIME_BUDGET, or NULL (off) */
    const char *gate;               /* KTIME_GATE as it worked out: "auto", "on" or "off" */
    const char *gate_requested;     /* KTIME_GATE as set (NULL: same as gate) */
    unsigned int gate_unavailable;  /* contexts whose launches could not be gated */
    int contexts;                   /* contexts that timed launches */
    const struct report_device *devices;
    int ndevices;
    struct report_kernel *kernels;  /* the writer sorts them in place */
    size_t nkernels;
    size_t kernels_cap;             /* room in kernels (for collect) */
    uint64_t drops[DROP_NREASONS];  /* launches passed through untimed, by reason */
    const char *note;               /* one extra line for the footer, or NULL */
    const char *timer;              /* KTIME_TIMER as it worked out: events, cupti, both */
    const char *timer_requested;    /* KTIME_TIMER as set */
    const char *timer_note;         /* why CUPTI is not (or no longer) timing, or NULL */
    const char *cupti_library;      /* the libcupti used, or NULL */
    uint64_t cupti_dropped;         /* records CUPTI dropped */
    uint64_t cupti_refused;         /* buffers CUPTI asked for while ktime had none free */
    const struct conditions *conditions; /* the run's conditions, or NULL (not checked) */
    const char *capture;            /* KTIME_CAPTURE in force ("profiler-api"), NULL: all timed */
    uint64_t capture_starts, capture_stops; /* cuProfilerStart / cuProfilerStop calls that succeeded */
    uint64_t capture_ranges;        /* ranges they opened */
    int capture_still_open;         /* the range was still open at the end */
    bool flush_l2;                  /* KTIME_FLUSH_L2: an L2 flush before each timed launch */
    uint64_t flush_bytes;           /* the scratch buffer overwritten, in bytes (largest) */
    uint64_t flushes, flush_failed; /* flushes queued, and refused by the driver */
    unsigned int flush_contexts, flush_unavailable; /* contexts with and without a buffer */
    /* Ranges (NVTX, ktime_range_push): NULL when no range was ever pushed. */
    const char *range_attribution;  /* "innermost" or "outermost": which open range a launch
                                     * belongs to */
    const char *nvtx;               /* how NVTX reached ktime: "injected", "not injected (...)" */
    struct report_range *ranges_by_name; /* sorted by total_us, largest first */
    size_t nranges_by_name;
    uint64_t ranges_unmatched_pops, ranges_too_deep;
    bool memops;                    /* KTIME_MEMOPS: memory operations timed (in memops) */
    struct report_kernel *memops_rows; /* one per kind seen, in the order of enum memop_kind */
    size_t nmemops;
    const struct report_snapshot *snapshot; /* NULL: not a snapshot (none was ever written) */
    struct report_busy *busy;       /* KTIME_BUSY: the GPUs' busy time, or NULL (off) */
    const char *comm_pattern;       /* KTIME_COMM's pattern, or NULL (off) */
    bool launch_columns;            /* KTIME_LAUNCH_COLUMNS: the text shows launch columns */
};

/* The note of a report with no launches, which report_is_empty() recognises. */
#define REPORT_EMPTY_NOTE "no CUDA launches seen in this process"

/* Builds m (zeroed, or freed) from r: the rows sorted by total time, totals, percentages,
 * quantiles, per-device and per-shape parts, the sections and the name column. Sorts r's
 * launch shapes (shape_set_sorted). Returns 0, or -1 when out of memory (m is then freed).
 * Once the data are final (at exit). */
int model_build(struct model *m, struct report *r);

/* Adds to m the section of the run's conditions c (NULL: not checked) for the devices
 * `ordinals` (n of them; 0: every device c has): the text's lines, the warnings and the
 * JSON's figures. Returns 0, or -1 when out of memory. model_build does it for its report's
 * devices. */
int model_cond_section(struct model *m, const struct conditions *c, const int *ordinals, int n);

/* The index in r->devices of the device of that ordinal, or -1. */
int report_device_index(const struct report *r, int ordinal);

/* Adds the samples of s, from device index d, to rk's distributions, all devices' and d's own
 * (made on first use: without memory the row has no quantiles, nothing else is lost). */
void report_row_add_sketch(const struct report *r, struct report_kernel *rk, int d,
                           const struct sketch *s);

/* Out of memory merging launch shapes: says once that a kernel's shapes miss samples. */
void report_shapes_short(void);

/* Frees what rows[0..n) own (their per-device statistics, sketches, shapes and names), not
 * the array. */
void report_rows_free(struct report_kernel *rows, size_t n);

/* Builds the model of r (model_build) and writes it as the text table, JSON or CSV
 * (model_write_text, _json, _csv). Returns 0, or -1 when out of memory or writing to f
 * failed. At exit. */
int report_write_text(FILE *f, struct report *r);
int report_write_json(FILE *f, struct report *r);
int report_write_csv(FILE *f, struct report *r);

/* Whether buf (n bytes, the start of a file) is an empty report, which a later empty report
 * may replace: nothing at all, a text or JSON report whose note is REPORT_EMPTY_NOTE, or a CSV
 * report of its header row only. Any thread. */
bool report_is_empty(const char *buf, size_t n);

#endif
