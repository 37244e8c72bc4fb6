/* stats.c - Welford's online mean/variance and the pairwise merge of two aggregates. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "stats.h"

#include <math.h>

void stats_add(struct stats *s, double x)
{
    double delta = x - s->mean;

    s->n++;
    s->sum += x;
    s->mean += delta / (double)s->n;
    s->m2 += delta * (x - s->mean);
    if (s->n == 1 || x < s->min)
        s->min = x;
    if (s->n == 1 || x > s->max)
        s->max = x;
}

void stats_add_n(struct stats *s, double x, uint64_t w)
{
    double delta = x - s->mean;

    if (w == 0)
        return;
    /* Welford's step for w equal samples at once (Chan's merge of a block of w copies of x,
     * whose own m2 is 0). */
    s->n += w;
    s->sum += (double)w * x;
    s->mean += delta * (double)w / (double)s->n;
    s->m2 += delta * (double)w * (x - s->mean);
    if (s->n == w || x < s->min)
        s->min = x;
    if (s->n == w || x > s->max)
        s->max = x;
}

void stats_merge(struct stats *a, const struct stats *b)
{
    double delta, n;

    if (b->n == 0)
        return;
    if (a->n == 0) {
        *a = *b;
        return;
    }
    n = (double)(a->n + b->n);
    delta = b->mean - a->mean;
    a->m2 += b->m2 + delta * delta * (double)a->n * (double)b->n / n;
    a->mean += delta * (double)b->n / n;
    a->sum += b->sum;
    a->n += b->n;
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
}

double stats_variance(const struct stats *s)
{
    return s->n < 2 ? 0.0 : s->m2 / (double)(s->n - 1);
}

double stats_stddev(const struct stats *s)
{
    return sqrt(stats_variance(s));
}
