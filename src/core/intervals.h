/* intervals.h - when a GPU was busy, from the intervals its kernels and copies ran in: their
 * union, the idle gaps between them (count, total, a histogram by length, the largest with the
 * work on either side), per stream and per range the same, and how communication kernels
 * overlap the others. Intervals may come in any order: a bounded window puts them back in
 * order of start before they are swept. Fixed memory per GPU whatever the run's length; no
 * CUDA. One thread at a time (the drain thread, then the exit path). */
#ifndef KTIME_INTERVALS_H
#define KTIME_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

#define IV_TOP 5          /* largest gaps kept per timeline */
#define IV_NBINS 6        /* the gap histogram's bins (iv_bin_upper) */
#define IV_STREAMS 64     /* streams of a GPU told apart; intervals of more count in other */
#define IV_RANGES 8194    /* range ids (rangestack.h: 0 none, 1..8193) */

/* The upper edge of each bin but the last, in ns: under 10 us, 10-100 us, 100 us-1 ms,
 * 1-10 ms, 10-100 ms, 100 ms and more. */
extern const uint64_t iv_bin_upper[IV_NBINS - 1];

/* The bin of a gap of len ns. */
int iv_bin(uint64_t len);

/* A gap: the GPU (or a stream) idle from at_ns for len_ns, between the interval that ended
 * last before it (before) and the one that ended it (after): opaque ids of the caller's. */
struct iv_gap {
    uint64_t len_ns, at_ns;
    uint64_t before, after;
};

struct iv_gaps {
    uint64_t count, total_ns;
    uint64_t bin_count[IV_NBINS], bin_ns[IV_NBINS];
    struct iv_gap top[IV_TOP]; /* the largest, largest first (ties: the earlier first) */
    uint32_t ntop;
};

/* Adds a gap. */
void iv_gaps_add(struct iv_gaps *g, uint64_t len, uint64_t at, uint64_t before, uint64_t after);

/* The union of intervals fed in order of their start. One that starts before the block being
 * grown (it came after the window had moved past it) is clipped to that block and counted in
 * late: whatever of it fell into an earlier gap is not counted busy. */
struct iv_sweep {
    uint64_t n;              /* intervals */
    uint64_t sum_ns;         /* their lengths, summed (overlaps counted twice) */
    uint64_t first_ns, last_ns; /* the earliest start and the latest end (n > 0) */
    uint64_t busy_ns;        /* the union's blocks closed so far */
    uint64_t cur_s, cur_e, cur_who; /* the block being grown, and the interval ending it */
    bool open;
    uint64_t late;
    struct iv_gaps *gaps;    /* where its gaps go, or NULL */
};

/* Adds [start, end) (end < start counts as empty) of who. */
void iv_sweep_add(struct iv_sweep *s, uint64_t start, uint64_t end, uint64_t who);

/* The union's length so far, the open block included. */
uint64_t iv_sweep_busy(const struct iv_sweep *s);

/* What a GPU ran: the classes of work. */
enum iv_class { IV_COMPUTE, IV_COMM, IV_COPY };

/* One interval of a GPU. */
struct iv_item {
    uint64_t start, end;     /* ns, on the timer's clock */
    uint64_t who;            /* the kernel (an opaque id: gaps name their neighbours by it) */
    uint64_t stream;         /* the stream, unique on the GPU */
    uint32_t range;          /* the range it was launched in (rangestack.h), 0: none */
    uint8_t cls;             /* enum iv_class */
};

struct iv_stream {
    uint64_t id;
    struct iv_sweep sw;
    struct iv_gaps gaps;
};

struct iv_dev {
    int device;
    struct iv_item *win;     /* the reorder window: a min-heap by start */
    uint32_t nwin, cap;
    struct iv_sweep all;     /* kernels and copies: busy, with the gaps */
    struct iv_gaps gaps;
    struct iv_sweep kernels; /* kernels of both classes (for the overlap) */
    struct iv_sweep compute, comm, copy;
    struct iv_stream *streams; /* IV_STREAMS, made at the first interval */
    uint32_t nstreams;
    uint64_t other_streams;  /* intervals of streams past IV_STREAMS */
    struct iv_sweep *ranges; /* IV_RANGES, made at the first interval in a range */
    bool oom;                /* a part could not be had: streams or ranges missing */
};

/* Prepares d for device, with a reorder window of window intervals (0: none, each one swept as
 * it comes). Returns 0, or -1 when the window could not be had (d then sweeps in arrival
 * order, and is usable). */
int iv_dev_init(struct iv_dev *d, int device, uint32_t window);

/* Adds an interval: into the window, sweeping the earliest when it is full. */
void iv_dev_add(struct iv_dev *d, const struct iv_item *it);

/* Sweeps everything the window holds (at the end, before reading d). */
void iv_dev_flush(struct iv_dev *d);

/* The overlap of the communication kernels with the compute kernels, in ns: the length of
 * the intersection of their unions (comm + compute - both). */
uint64_t iv_dev_overlap(const struct iv_dev *d);

/* Frees what d holds. */
void iv_dev_free(struct iv_dev *d);

#endif
