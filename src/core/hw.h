/* hw.h - per-kernel aggregates of hardware kernel durations (the CUPTI timer's activity
 * records), keyed by kernel name, with warmup counted by record; each record joined, by its
 * correlation id, with what CUPTI's launch records say of its launch (the launch call's start
 * and end, and the range ktime gave it as an external correlation id). No CUDA or CUPTI
 * types: the CUPTI layer (cuptitimer.c) parses the records and hands each one over here. */
#ifndef KTIME_HW_H
#define KTIME_HW_H

#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include "shape.h"
#include "sketch.h"
#include "trace.h"
#include "stats.h"

/* One kernel name on one device, launched in one range. */
struct hw_dev {
    int device;              /* CUDA device ordinal (CUPTI's deviceId) */
    uint32_t range;          /* the range (rangestack.h) its launches were made in, 0: none */
    struct stats st;         /* timed records, microseconds */
    struct sketch sk;        /* their distribution (quantiles) */
    struct shape_set *shapes; /* the same by launch shape, or NULL */
    struct hw_dev *next;
};

struct hw_kernel {
    char *name;              /* mangled name, owned */
    uint64_t records;        /* every record of it, warmup and bad ones included */
    uint64_t warmup;         /* records skipped as warmup: the first `warmup` of the name */
    uint64_t in_graph;       /* records of it run as a CUDA graph's node, of `records` */
    uint64_t bad;            /* records without a valid end (after warmup), not timed */
    uint64_t before;         /* records before the last hw_reset (the warmup is not redone) */
    uint64_t outside;        /* KTIME_CAPTURE: records (after warmup) of launches made outside
                              * the capture range, not timed */
    uint64_t unknown;        /* KTIME_CAPTURE: records (after warmup) whose launch CUPTI never
                              * described, so that the range cannot be told: not timed */
    struct hw_dev *devs;
    UT_hash_handle hh;
};

/* A stream of ktime's own launches (the timing floor's): its records are counted under the
 * name given here, whatever name CUPTI gives them: CUPTI may give the floor's kernel, loaded
 * at exit, the name of a kernel whose module the program had unloaded, and the floor's
 * records would then sit in that kernel's row. */
#define HW_OWN_MAX 64
struct hw_own {
    uint32_t context_id, stream_id; /* CUPTI's ids, as in its records */
    const char *name;               /* static */
};

/* ktime's external correlation ids: HW_EXT_TAG | range (rangestack.h's id, 0: none). ktime
 * pushes one around each launch made in a range, or in the capture range of KTIME_CAPTURE. */
#define HW_EXT_TAG 0x6b74000000000000ull
#define HW_EXT_MASK 0xffff000000000000ull

/* What CUPTI's launch records said of a launch, by correlation id (direct-mapped). */
#define HW_JOIN_SLOTS 32768u
struct hw_launch {
    uint32_t corr;           /* its correlation id; 0: an empty slot */
    bool api, ext;           /* api_*: its launch call's start and end are known; ext too */
    uint64_t api_start, api_end;
    uint64_t ext_id;
};

/* Kernel records waiting for their launch's records, in the order they came. */
#define HW_DEFER 4096u
struct hw_pending {
    struct hw_kernel *k;
    uint64_t nth;            /* it is the kernel's nth record (warmup: the first ones) */
    const char *own;         /* the name of ktime's own stream it ran on, or NULL */
    int device;
    uint32_t stream_id, corr;
    uint64_t start_ns, end_ns;
    bool in_graph;
    struct kshape shape;
};

/* One record, as the modules see it (hw->record): a kernel (or a copy), when and where it ran,
 * and what is known of its launch. */
struct hw_out {
    const char *name;        /* the kernel's mangled name (lives as long as the hw), NULL: a
                              * copy or set */
    int device;
    uint32_t stream_id;      /* CUPTI's, unique in its context */
    uint64_t start_ns, end_ns;
    uint32_t range;          /* the range its launch was made in (rangestack.h), 0: none */
    bool timed;              /* a sample of its row: past warmup, in the capture range */
    bool in_graph;           /* run as a graph's node */
    int64_t api_ns;          /* its launch call's duration, -1: unknown */
    int64_t queue_ns;        /* its start less the end of its launch call (0 when it began
                              * before the call returned), -1: unknown (graph nodes too) */
};

struct hw {
    long warmup;             /* KTIME_WARMUP */
    struct hw_own own[HW_OWN_MAX];
    _Atomic int nown;        /* entries of own published (release) */
    struct hw_kernel *byname;
    const char *last_ptr;    /* the name pointer of the last record, and its kernel: records
                              * come in runs of one kernel, and CUPTI shares one name string
                              * among a kernel's records */
    struct hw_kernel *last;
    uint64_t records;        /* kernel records in all */
    uint64_t in_graph;       /* of them, run as a graph's node */
    uint64_t lost;           /* records that could not be kept (out of memory) */
    struct trace *trace;     /* KTIME_TRACE with the CUPTI timer: every timed record, or NULL */
    void (*sample)(const char *name, int device, double us); /* every timed record, if set
                              * (KTIME_DUMP_SAMPLES) */
    /* Joining records with their launches (hw_join_start): */
    struct hw_launch *join;  /* HW_JOIN_SLOTS, or NULL: records are not joined */
    bool need_ext;           /* KTIME_CAPTURE: only records of launches ktime marked are timed */
    struct hw_pending *defer; /* HW_DEFER, a ring: records whose launch is not known yet */
    uint32_t dhead, dn;
    uint64_t launch_records; /* CUPTI's launch records seen */
    uint64_t unjoined;       /* kernel records folded without their launch's records */
    void (*record)(const struct hw_out *o); /* every record of the program's, warmup and
                              * untimed ones too, once joined (the modules), if set */
};

/* Prepares h. */
void hw_init(struct hw *h, long warmup);

/* From now on kernel records are joined with CUPTI's launch records (hw_api, hw_ext): a
 * record waits (at most HW_DEFER of them, in order) until its launch's record has come.
 * need_ext: KTIME_CAPTURE, only records of launches with ktime's external id are timed.
 * Returns 0, or -1 when out of memory (records then go unjoined). Before the first record. */
int hw_join_start(struct hw *h, bool need_ext);

/* CUPTI's launch record of correlation id corr: the launch call ran from start_ns to end_ns. */
void hw_api(struct hw *h, uint32_t corr, uint64_t start_ns, uint64_t end_ns);

/* CUPTI's external correlation record: the launch of correlation id corr carried ktime's
 * external id ext (HW_EXT_TAG | range). */
void hw_ext(struct hw *h, uint32_t corr, uint64_t ext);

/* A kernel record, joined as hw_add, with its correlation id (0: none). */
void hw_add_corr(struct hw *h, const char *name, int device, uint32_t context_id,
                 uint32_t stream_id, uint32_t corr, uint64_t start_ns, uint64_t end_ns,
                 bool in_graph, const struct kshape *shape);

/* A copy or set that ran on the device from start_ns to end_ns: handed to h->record only. */
void hw_copy(struct hw *h, int device, uint32_t stream_id, uint64_t start_ns, uint64_t end_ns);

/* Folds the records waiting for their launch whose launch has come since (all: every one,
 * known or not; at the end). After each buffer of records. */
void hw_settle(struct hw *h, bool all);

/* Adds one kernel record of stream stream_id in context context_id (no correlation id). start_ns and end_ns are
 * the hardware timestamps; end_ns <= start_ns (CUPTI's "no valid timestamp") counts as bad,
 * not timed; shape (NULL: unknown) is the launch's grid, block and dynamic shared memory. The
 * first h->warmup records of each name, whatever their device, are warmup. A
 * record of a stream given to hw_own is counted under that stream's name. name need not
 * outlive the call. One thread at a time (the drain thread, or the exit path once it
 * stopped). */
void hw_add(struct hw *h, const char *name, int device, uint32_t context_id, uint32_t stream_id,
            uint64_t start_ns, uint64_t end_ns, bool in_graph, const struct kshape *shape);

/* Records of stream stream_id in context context_id are ktime's own, of kernel name (a
 * static string). Returns -1 when HW_OWN_MAX streams are already given. One thread at a time
 * (the exit path); hw_add may run meanwhile on the drain thread. */
int hw_own(struct hw *h, uint32_t context_id, uint32_t stream_id, const char *name);

/* The kernel of name, or NULL. */
struct hw_kernel *hw_find(struct hw *h, const char *name);

/* Forgets every record but how many each kernel had (so that its warmup is not done
 * again): the samples and counts start afresh (ktime ctl reset). Same thread as hw_add. */
void hw_reset(struct hw *h);

/* Frees everything h holds. */
void hw_free(struct hw *h);

#endif
