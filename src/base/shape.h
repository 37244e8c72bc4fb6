/* shape.h - per-kernel aggregates by launch shape (grid, block, dynamic shared memory), in
 * bounded memory: the first SHAPE_TRACK distinct shapes of a kernel on a device get their
 * own statistics and sketch, later ones are folded into `other`. No CUDA types. */
#ifndef KTIME_SHAPE_H
#define KTIME_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "sketch.h"
#include "stats.h"

/* Shapes tracked per kernel and device, and shown per kernel (the most frequent). */
#define SHAPE_TRACK 16
#define SHAPE_SHOW 8

struct kshape {
    uint32_t grid[3], block[3];
    uint32_t smem;            /* dynamic shared memory, bytes */
};

struct shape_row {
    struct kshape sh;
    struct stats st;          /* timed samples, microseconds */
    struct sketch sk;
};

struct shape_set {
    uint32_t n;               /* rows in use */
    struct shape_row *rows[SHAPE_TRACK];
    struct stats other;       /* samples of shapes past the first SHAPE_TRACK (or for which
                               * no memory could be had) */
    struct sketch other_sk;
    uint64_t other_shapes;    /* tracked shapes folded into other (by shape_set_sorted, or a
                               * merge that found no room) */
    bool untracked;           /* other also holds samples of shapes never told apart (past
                               * SHAPE_TRACK distinct ones on a device) */
};

/* Whether a and b are the same shape. */
bool shape_eq(const struct kshape *a, const struct kshape *b);

/* Whether sh is a real launch shape (a graph launch has none: all zero). */
bool shape_known(const struct kshape *sh);

/* Adds a sample of us microseconds of shape sh to *set, allocating *set and its rows on
 * first use; a sample that finds no room (or no memory) goes to `other`. Returns -1 when
 * *set could not be allocated (the sample is not kept), else 0. One thread at a time. */
int shape_add(struct shape_set **set, const struct kshape *sh, double us);

/* Adds every sample of b to *a (rows matched by shape; rows past SHAPE_TRACK to other).
 * Returns -1 when memory ran out (what did not fit is in other, or lost when *a could not be
 * allocated), else 0. */
int shape_merge(struct shape_set **a, const struct shape_set *b);

/* Sorts s's rows by timed samples, largest first, and folds the rows past SHAPE_SHOW into
 * `other` (counted in other_shapes). For the report, once. */
void shape_set_sorted(struct shape_set *s);

/* Samples in s, other included. */
uint64_t shape_set_count(const struct shape_set *s);

/* Frees s and its rows. */
void shape_set_free(struct shape_set *s);

#endif
