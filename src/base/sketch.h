/* sketch.h - a mergeable quantile sketch of positive samples in fixed memory: a log-linear
 * histogram (bucket edges in geometric steps of SKETCH_GAMMA), so that any quantile of the
 * samples is read back within 1 % of the true one, however many samples were added. No CUDA
 * types; the drain thread adds to it, the report reads it. */
#ifndef KTIME_SKETCH_H
#define KTIME_SKETCH_H

#include <stdbool.h>
#include <stdint.h>

/* Bucket 0 holds samples under SKETCH_MIN_US; bucket i (1 <= i < SKETCH_BUCKETS - 1) holds
 * [SKETCH_MIN_US * GAMMA^(i-1), SKETCH_MIN_US * GAMMA^i); the last one everything from about
 * 19 s up. A quantile read back is the geometric middle of its bucket, clamped to the
 * samples' min and max: within sqrt(1.02) - 1 = 0.995 % of the exact sample quantile for
 * samples from 0.05 us to 19 s. */
#define SKETCH_GAMMA 1.02
#define SKETCH_MIN_US 0.05
#define SKETCH_BUCKETS 1000

struct sketch {
    uint32_t c[SKETCH_BUCKETS]; /* samples per bucket, saturating at UINT32_MAX */
};

/* The bucket of x (microseconds). */
int sketch_bucket(double x);

/* The lower edge of bucket i (0 for bucket 0). */
double sketch_lower(int i);

/* Adds one sample of x microseconds. s must start zeroed. */
void sketch_add(struct sketch *s, double x);

/* Adds w samples of x microseconds (a sample standing for w launches). */
void sketch_add_n(struct sketch *s, double x, uint64_t w);

/* Adds every sample of b to a: the result is the sketch of both sets of samples. */
void sketch_merge(struct sketch *a, const struct sketch *b);

/* Samples in s. */
uint64_t sketch_count(const struct sketch *s);

/* The q-quantile (0 <= q <= 1) of the samples, as the sample of rank floor(q * (n - 1)) in
 * ascending order (0-based) would be, within the error above; clamped to [min, max], the
 * exact extremes, when max >= min. 0 when s is empty. */
double sketch_quantile(const struct sketch *s, double q, double min, double max);

#endif
