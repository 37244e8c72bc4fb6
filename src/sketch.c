/* sketch.c - a log-linear histogram of samples; see sketch.h. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "sketch.h"

#include <math.h>

int sketch_bucket(double x)
{
    if (!(x >= SKETCH_MIN_US)) /* NaN too */
        return 0;
    double l = log(x / SKETCH_MIN_US) / log(SKETCH_GAMMA);
    if (l >= SKETCH_BUCKETS - 2)
        return SKETCH_BUCKETS - 1;
    int i = 1 + (int)l;
    /* log rounds: settle an x next to an edge on the side its value is on. */
    if (i > 1 && x < sketch_lower(i))
        i--;
    else if (i < SKETCH_BUCKETS - 1 && x >= sketch_lower(i + 1))
        i++;
    return i;
}

double sketch_lower(int i)
{
    return i <= 0 ? 0.0 : SKETCH_MIN_US * pow(SKETCH_GAMMA, i - 1);
}

void sketch_add(struct sketch *s, double x)
{
    uint32_t *c = &s->c[sketch_bucket(x)];
    if (*c != UINT32_MAX)
        (*c)++;
}

void sketch_merge(struct sketch *a, const struct sketch *b)
{
    for (int i = 0; i < SKETCH_BUCKETS; i++) {
        uint64_t v = (uint64_t)a->c[i] + b->c[i];
        a->c[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
}

uint64_t sketch_count(const struct sketch *s)
{
    uint64_t n = 0;
    for (int i = 0; i < SKETCH_BUCKETS; i++)
        n += s->c[i];
    return n;
}

double sketch_quantile(const struct sketch *s, double q, double min, double max)
{
    uint64_t n = sketch_count(s), seen = 0, rank;
    int i;

    if (n == 0)
        return 0.0;
    if (!(q > 0))
        q = 0;
    if (q > 1)
        q = 1;
    rank = (uint64_t)floor(q * (double)(n - 1));
    for (i = 0; i < SKETCH_BUCKETS - 1; i++) {
        seen += s->c[i];
        if (seen > rank)
            break;
    }
    double v = i == 0 ? SKETCH_MIN_US / 2
                      : sketch_lower(i) * sqrt(SKETCH_GAMMA); /* the bucket's geometric middle */
    if (max >= min) {
        if (v < min)
            v = min;
        if (v > max)
            v = max;
    }
    return v;
}
