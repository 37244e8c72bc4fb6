/* hw.h - per-kernel aggregates of hardware kernel durations (the CUPTI timer's activity
 * records), keyed by kernel name, with warmup counted by record. No CUDA or CUPTI types:
 * the CUPTI layer (cupti.c) parses the records and hands each one over here. */
#ifndef KTIME_HW_H
#define KTIME_HW_H

#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include "stats.h"

/* One kernel name on one device. */
struct hw_dev {
    int device;              /* CUDA device ordinal (CUPTI's deviceId) */
    struct stats st;         /* timed records, microseconds */
    struct hw_dev *next;
};

struct hw_kernel {
    char *name;              /* mangled name, owned */
    uint64_t records;        /* every record of it, warmup and bad ones included */
    uint64_t warmup;         /* records skipped as warmup: the first `warmup` of the name */
    uint64_t in_graph;       /* records of it run as a CUDA graph's node, of `records` */
    uint64_t bad;            /* records without a valid end (after warmup), not timed */
    struct hw_dev *devs;
    UT_hash_handle hh;
};

struct hw {
    long warmup;             /* KTIME_WARMUP */
    struct hw_kernel *byname;
    const char *last_ptr;    /* the name pointer of the last record, and its kernel: records
                              * come in runs of one kernel, and CUPTI shares one name string
                              * among a kernel's records */
    struct hw_kernel *last;
    uint64_t records;        /* kernel records in all */
    uint64_t in_graph;       /* of them, run as a graph's node */
    uint64_t lost;           /* records that could not be kept (out of memory) */
};

/* Prepares h. */
void hw_init(struct hw *h, long warmup);

/* Adds one kernel record. start_ns and end_ns are the hardware timestamps; end_ns <= start_ns
 * (CUPTI's "no valid timestamp") counts as bad, not timed. The first h->warmup records of
 * each name, whatever their device, are warmup. name need not outlive the call. One thread
 * at a time (the drain thread, or the exit path once it stopped). */
void hw_add(struct hw *h, const char *name, int device, uint64_t start_ns, uint64_t end_ns,
            bool in_graph);

/* The kernel of name, or NULL. */
struct hw_kernel *hw_find(struct hw *h, const char *name);

/* Frees everything h holds. */
void hw_free(struct hw *h);

#endif
