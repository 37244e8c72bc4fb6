/* series.c - KTIME_SERIES: a JSON line per snapshot with each kernel's part of the interval. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "jsonout.h"
#include "sketch.h"

struct prev_row {
    const struct rm_row *w;
    UT_hash_handle hh;
};

/* The quantile q of the samples in cur's histogram less prev's, clamped to [min, max] (the
 * run's extremes, which bound the interval's samples too); -1 when none. */
static double delta_quantile(const struct sketch *cur, const struct sketch *prev, double q,
                             double min, double max)
{
    struct sketch d;
    uint64_t n = 0;

    for (int i = 0; i < SKETCH_BUCKETS; i++) {
        d.c[i] = cur->c[i] > prev->c[i] ? cur->c[i] - prev->c[i] : 0;
        n += d.c[i];
    }
    return n ? sketch_quantile(&d, q, min, max) : -1;
}

int series_delta(struct series_delta *d, const struct model *prev, const struct model *cur)
{
    struct prev_row *byname = NULL, *e, *tmp;
    struct sketch *skc = malloc(sizeof *skc), *skp = malloc(sizeof *skp);
    int rc = 0;

    memset(d, 0, sizeof *d);
    if (!skc || !skp || !(d->rows = calloc(cur->nrows ? cur->nrows : 1, sizeof *d->rows))) {
        free(skc);
        free(skp);
        return -1;
    }
    d->from_zero = !prev;
    d->from = prev && prev->snapshot ? prev->snapshot->at
              : prev                 ? prev->end_time
              : cur->snapshot        ? cur->snapshot->since
                                     : cur->start_time;
    for (size_t i = 0; prev && i < prev->nrows; i++) {
        if (!(e = calloc(1, sizeof *e))) {
            rc = -1;
            goto out;
        }
        e->w = &prev->rows[i];
        HASH_ADD_KEYPTR(hh, byname, e->w->mangled, strlen(e->w->mangled), e);
    }
    for (size_t i = 0; i < cur->nrows; i++) {
        const struct rm_row *w = &cur->rows[i], *p = NULL;
        HASH_FIND(hh, byname, w->mangled, strlen(w->mangled), e);
        if (e && e->w->kind == w->kind)
            p = e->w;
        struct series_row *o = &d->rows[d->nrows];
        o->calls = (int64_t)(w->n[RC_CALLS] - (p ? p->n[RC_CALLS] : 0));
        o->timed = (int64_t)(w->st.timed - (p ? p->st.timed : 0));
        if (!o->calls && !o->timed)
            continue;
        o->name = w->name;
        o->mangled = w->mangled;
        o->kind = w->kind;
        o->sum_us = w->st.v[RS_SUM] - (p ? p->st.v[RS_SUM] : 0);
        model_hist_sketch(w->st.hist, skc);
        model_hist_sketch(p ? p->st.hist : NULL, skp);
        o->p50_us = delta_quantile(skc, skp, 0.5, w->st.v[RS_MIN], w->st.v[RS_MAX]);
        o->p99_us = delta_quantile(skc, skp, 0.99, w->st.v[RS_MIN], w->st.v[RS_MAX]);
        d->nrows++;
    }
out:
    HASH_ITER(hh, byname, e, tmp) {
        HASH_DEL(byname, e);
        free(e);
    }
    free(skc);
    free(skp);
    if (rc)
        series_free(d);
    return rc;
}

void series_free(struct series_delta *d)
{
    free(d->rows);
    d->rows = NULL;
    d->nrows = 0;
}

static void num_or_null(struct jw *w, const char *key, double v)
{
    if (v >= 0)
        jw_num(w, key, v);
    else
        jw_null(w, key);
}

int series_write(FILE *f, const struct series_delta *d, const struct model *cur)
{
    const struct rm_snapshot *s = cur->snapshot;
    struct jw w;

    jw_init(&w, f);
    jw_open(&w, NULL, '{', JW_TIGHT, 0, 0);
    jw_i64(&w, "ktime_series", 1);
    if (cur->has_pid)
        jw_i64(&w, "pid", cur->pid);
    else
        jw_null(&w, "pid");
    jw_str_or_null(&w, "host", cur->host);
    if (cur->rank >= 0)
        jw_i64(&w, "rank", cur->rank);
    else
        jw_null(&w, "rank");
    jw_u64(&w, "seq", s ? s->seq : 0);
    jw_str_or_null(&w, "from", d->from);
    jw_str_or_null(&w, "at", s ? s->at : cur->end_time);
    jw_bool(&w, "from_zero", d->from_zero);
    jw_bool(&w, "final", s && s->final);
    jw_bool(&w, "paused", s && s->paused);
    jw_open(&w, "kernels", '[', JW_TIGHT, 0, 0);
    for (size_t i = 0; i < d->nrows; i++) {
        const struct series_row *r = &d->rows[i];
        jw_open(&w, NULL, '{', JW_TIGHT, 0, 0);
        jw_str(&w, "name", r->name);
        jw_str(&w, "mangled", r->mangled);
        jw_str(&w, "kind", r->kind == REPORT_GRAPH ? "graph" : "kernel");
        jw_i64(&w, "calls", r->calls);
        jw_i64(&w, "timed", r->timed);
        jw_num(&w, "sum_us", r->sum_us);
        num_or_null(&w, "p50_us", r->p50_us);
        num_or_null(&w, "p99_us", r->p99_us);
        jw_close(&w);
    }
    jw_close(&w);
    jw_close(&w);
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}
