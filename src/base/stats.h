/* stats.h - exact running aggregates of samples (Welford), mergeable (Chan et al.). */
#ifndef KTIME_STATS_H
#define KTIME_STATS_H

#include <stdint.h>

struct stats {
    uint64_t n;   /* samples folded in */
    double sum;   /* sum of samples */
    double mean;  /* running mean */
    double m2;    /* sum of squared deviations from the mean */
    double min;
    double max;
};

/* Folds one sample into s. s must start zeroed. */
void stats_add(struct stats *s, double x);

/* Folds w copies of sample x into s (w >= 1): with w = 1, stats_add. A sample that stands for
 * w launches (one drawn at a rate of 1 in w) counts w times in n, sum, mean and m2. */
void stats_add_n(struct stats *s, double x, uint64_t w);

/* Folds all of b into a, exactly as if b's samples had been added to a. */
void stats_merge(struct stats *a, const struct stats *b);

/* Sample variance (n - 1 denominator); 0 when n < 2. */
double stats_variance(const struct stats *s);

/* Sample standard deviation; 0 when n < 2. */
double stats_stddev(const struct stats *s);

#endif
