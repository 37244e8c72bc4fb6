/* fold.c - the rows a bounded view shows (model_prom_view): the first n rows, each with a name
 * no other shown row has, and the rest folded into one row. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "build.h"

#include <stdio.h>
#include <string.h>

void model_hist_sketch(const struct rm_hist *h, struct sketch *sk)
{
    memset(sk, 0, sizeof *sk);
    for (size_t i = 0; h && i < h->n; i++) {
        int64_t b = h->b[i].i;
        if (b < 0 || b >= SKETCH_BUCKETS)
            continue;
        uint64_t c = (uint64_t)sk->c[b] + h->b[i].count;
        sk->c[b] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
}

/* The samples s stands for, as running aggregates. */
static struct stats stats_of(const struct rm_stats *s)
{
    struct stats a = { 0 };

    if (!s->timed)
        return a;
    a.n = s->timed;
    a.sum = s->v[RS_SUM];
    a.mean = s->v[RS_MEAN];
    a.m2 = s->v[RS_M2];
    a.min = s->v[RS_MIN];
    a.max = s->v[RS_MAX];
    return a;
}

/* The sum of rows w[0..n) (n >= 1) into o: counts added, samples merged (quantiles from the
 * merged histograms; a GPU's part has none), its GPUs' parts, in the order first seen. */
static int fold_rows(struct model *m, struct rm_row *o, const struct rm_row *w, size_t n,
                     const char *name)
{
    struct stats all = { 0 };
    struct sketch *sk = model_alloc(m, sizeof *sk), part;
    size_t ndev = 0;
    double total_ms = 0, percent = 0;

    o->name = model_strdup(m, name);
    o->mangled = o->name;
    o->kind = REPORT_KERNEL;
    for (size_t i = 0; i < n; i++)
        ndev += w[i].ndev;
    if (!sk || !o->name || (ndev && !(o->dev = model_alloc(m, ndev * sizeof *o->dev))))
        return -1;
    struct stats *devst = ndev ? model_alloc(m, ndev * sizeof *devst) : NULL;
    if (ndev && !devst)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct stats s = stats_of(&w[i].st);
        for (int c = 0; c < RM_NCOUNTS; c++)
            o->n[c] += w[i].n[c];
        stats_merge(&all, &s);
        model_hist_sketch(w[i].st.hist, &part);
        sketch_merge(sk, &part);
        total_ms += w[i].st.v[RS_TOTAL];
        percent += w[i].st.v[RS_PERCENT];
        o->total_estimated |= w[i].total_estimated;
        for (size_t d = 0; d < w[i].ndev; d++) {
            size_t j = 0;
            while (j < o->ndev && o->dev[j].device != w[i].dev[d].device)
                j++;
            if (j == o->ndev)
                o->dev[o->ndev++].device = w[i].dev[d].device;
            struct stats ds = stats_of(&w[i].dev[d].st);
            stats_merge(&devst[j], &ds);
            o->dev[j].st.v[RS_TOTAL] += w[i].dev[d].st.v[RS_TOTAL];
            o->dev[j].st.v[RS_PERCENT] += w[i].dev[d].st.v[RS_PERCENT];
        }
    }
    build_stats(&o->st, &all, sk, total_ms * 1000.0, 0);
    o->st.v[RS_PERCENT] = percent;
    if (!(o->st.hist = build_hist(m, sk)))
        return -1;
    for (size_t j = 0; j < o->ndev; j++) {
        double t = o->dev[j].st.v[RS_TOTAL], p = o->dev[j].st.v[RS_PERCENT];
        build_stats(&o->dev[j].st, &devst[j], NULL, t * 1000.0, 0);
        o->dev[j].st.v[RS_PERCENT] = p;
    }
    o->few_samples = all.n > 0 && all.n < FEW_SAMPLES;
    return 0;
}

/* Whether name is taken by one of the rows before i, or is the folded row's. */
static bool taken(const struct model *m, size_t i, const char *name)
{
    if (strcmp(name, MODEL_OTHER_ROWS) == 0)
        return true;
    for (size_t j = 0; j < i; j++)
        if (strcmp(m->rows[j].name, name) == 0)
            return true;
    return false;
}

int model_prom_view(struct model *m, size_t n)
{
    /* A name shown twice (two mangled names demangling alike) would be one series twice:
     * the later rows get " [2]", " [3]"... */
    for (size_t i = 0; i < m->nrows && i < n; i++) {
        const char *name = m->rows[i].name;
        size_t len = strlen(name) + 24;
        char *s = NULL;
        for (unsigned k = 2; taken(m, i, m->rows[i].name); k++) {
            if (!s && !(s = model_alloc(m, len)))
                return -1;
            snprintf(s, len, "%s [%u]", name, k);
            m->rows[i].name = s;
        }
    }
    if (m->nrows <= n)
        return 0;
    struct rm_row *rest = model_alloc(m, sizeof *rest);
    if (!rest || fold_rows(m, rest, &m->rows[n], m->nrows - n, MODEL_OTHER_ROWS) != 0)
        return -1;
    m->rows[n] = *rest;
    m->nrows = n + 1;
    return 0;
}
