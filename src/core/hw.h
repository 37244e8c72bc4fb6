/* hw.h - per-kernel aggregates of hardware kernel durations (the CUPTI timer's activity
 * records), keyed by kernel name, with warmup counted by record. No CUDA or CUPTI types:
 * the CUPTI layer (cupti.c) parses the records and hands each one over here. */
#ifndef KTIME_HW_H
#define KTIME_HW_H

#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include "shape.h"
#include "sketch.h"
#include "trace.h"
#include "stats.h"

/* One kernel name on one device. */
struct hw_dev {
    int device;              /* CUDA device ordinal (CUPTI's deviceId) */
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
};

/* Prepares h. */
void hw_init(struct hw *h, long warmup);

/* Adds one kernel record of stream stream_id in context context_id. start_ns and end_ns are
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
