/* sketch.c - a log-linear histogram of samples; see sketch.h. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "sketch.h"

#include <math.h>
#include <pthread.h>

/* The lower edges of the buckets, made once: one log() per sample, no pow(). */
static double edges[SKETCH_BUCKETS];
static double inv_log_gamma;
static pthread_once_t edges_once = PTHREAD_ONCE_INIT;

static void make_edges(void)
{
    edges[0] = 0.0;
    for (int i = 1; i < SKETCH_BUCKETS; i++)
        edges[i] = SKETCH_MIN_US * pow(SKETCH_GAMMA, i - 1);
    inv_log_gamma = 1.0 / log(SKETCH_GAMMA);
}

int sketch_bucket(double x)
{
    pthread_once(&edges_once, make_edges);
    if (!(x >= SKETCH_MIN_US)) /* NaN too */
        return 0;
    double l = log(x / SKETCH_MIN_US) * inv_log_gamma;
    if (l >= SKETCH_BUCKETS - 2)
        return x >= edges[SKETCH_BUCKETS - 1] ? SKETCH_BUCKETS - 1 : SKETCH_BUCKETS - 2;
    int i = 1 + (int)l;
    /* log rounds: settle an x next to an edge on the side its value is on. */
    if (i > 1 && x < edges[i])
        i--;
    else if (i < SKETCH_BUCKETS - 1 && x >= edges[i + 1])
        i++;
    return i;
}

double sketch_lower(int i)
{
    pthread_once(&edges_once, make_edges);
    if (i <= 0)
        return 0.0;
    return edges[i < SKETCH_BUCKETS ? i : SKETCH_BUCKETS - 1];
}

void sketch_add(struct sketch *s, double x)
{
    uint32_t *c = &s->c[sketch_bucket(x)];
    if (*c != UINT32_MAX)
        (*c)++;
}

void sketch_add_n(struct sketch *s, double x, uint64_t w)
{
    uint32_t *c = &s->c[sketch_bucket(x)];
    uint64_t v = (uint64_t)*c + w;

    *c = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
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
