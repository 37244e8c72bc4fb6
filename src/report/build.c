/* build.c - the report model from the data a run gathered (report.h): rows sorted by total
 * time, totals, percentages, quantiles, per-device and per-shape parts. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert((int)RM_NDROPS == (int)DROP_NREASONS,
               "fields.h's RM_DROPS follows enum report_drop");

/* ---- the kernels' rows ---- */

/* A kernel's row while the rows are sorted. */
struct pre {
    struct report_kernel *k;
    struct stats all;       /* per_dev merged */
    double total_us;        /* all.sum, or with KTIME_SAMPLE its estimate: mean x launches */
};

static const char *kernel_name(const struct report_kernel *k)
{
    return k->name ? k->name : (k->mangled ? k->mangled : "<unnamed>");
}

static int cmp_pre(const void *a, const void *b)
{
    const struct pre *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us < y->total_us ? 1 : -1;
    if (x->k->calls != y->k->calls)
        return x->k->calls < y->k->calls ? 1 : -1;
    return strcmp(kernel_name(x->k), kernel_name(y->k));
}

/* The timer's floor on device d: the hardware's under the CUPTI timer, the events' else. */
static double floor_of(const struct report *r, int d)
{
    bool cupti = r->timer && strcmp(r->timer, "cupti") == 0;

    return cupti ? r->devices[d].floor_hw_us : r->devices[d].floor_events_us;
}

/* Whether the kernel's mean is within NEAR_FLOOR_FACTOR of the floor of a device it ran on. */
static bool near_floor(const struct report *r, const struct report_kernel *k, double mean)
{
    for (int d = 0; k->kind == REPORT_KERNEL && d < r->ndevices; d++)
        if (k->per_dev[d].n && floor_of(r, d) > 0 && mean < NEAR_FLOOR_FACTOR * floor_of(r, d))
            return true;
    return false;
}

/* A row's launch shapes (sorted already), each with its share of the grand total. */
static int build_shapes(struct model *m, struct rm_row *w, const struct shape_set *set,
                        double grand)
{
    if (!set)
        return 0;
    if (set->n && !(w->shapes = model_alloc(m, set->n * sizeof *w->shapes)))
        return -1;
    for (uint32_t i = 0; i < set->n; i++) {
        const struct shape_row *s = set->rows[i];
        struct rm_shape *o = &w->shapes[w->nshapes++];
        memcpy(o->grid, s->sh.grid, sizeof o->grid);
        memcpy(o->block, s->sh.block, sizeof o->block);
        o->smem = s->sh.smem;
        build_stats(&o->st, &s->st, &s->sk, s->st.sum, grand);
        if (!(o->st.hist = build_hist(m, &s->sk)))
            return -1;
    }
    if (!set->other.n)
        return 0;
    if (!(w->other = model_alloc(m, sizeof *w->other)))
        return -1;
    w->other->shapes = set->other_shapes;
    w->other->untracked = set->untracked;
    build_stats(&w->other->st, &set->other, &set->other_sk, set->other.sum, grand);
    return (w->other->st.hist = build_hist(m, &set->other_sk)) ? 0 : -1;
}

/* The row's parts: per device (those with samples) and KTIME_TIMER=both's hardware. */
static int build_parts(struct model *m, const struct report *r, struct rm_row *w,
                       const struct pre *p, double grand)
{
    const struct report_kernel *k = p->k;
    int ndev = 0;

    for (int d = 0; d < r->ndevices; d++)
        ndev += k->per_dev[d].n > 0;
    if (ndev && !(w->dev = model_alloc(m, (size_t)ndev * sizeof *w->dev)))
        return -1;
    for (int d = 0; d < r->ndevices; d++) {
        const struct stats *s = &k->per_dev[d];
        if (s->n == 0)
            continue;
        struct rm_dev_part *o = &w->dev[w->ndev++];
        o->device = r->devices[d].ordinal;
        build_stats(&o->st, s, k->dev_sk ? &k->dev_sk[d] : NULL, s->sum, grand);
    }
    if (k->hw) {
        struct stats h = build_all_devices(r, k->hw);
        if (!(w->hw = model_alloc(m, sizeof *w->hw)))
            return -1;
        build_stats(&w->hw->st, &h, NULL, h.sum, 0);
        w->hw->has_bias = h.n && p->all.n;
        w->hw->bias = p->all.mean - h.mean;
    }
    return 0;
}

static int build_row(struct model *m, const struct report *r, struct rm_row *w,
                     const struct pre *p, double grand)
{
    const struct report_kernel *k = p->k;

    w->name = model_strdup(m, kernel_name(k));
    w->mangled = model_strdup(m, k->mangled ? k->mangled : "");
    w->kind = k->kind;
    build_counts(w, k);
    build_stats(&w->st, &p->all, k->sk, p->total_us, grand);
    if (!w->name || !w->mangled || !(w->st.hist = build_hist(m, k->sk)))
        return -1;
    w->total_estimated = k->unsampled != 0;
    w->sampled_1_in = r->budget ? 1L << k->sample_level : 0;
    w->few_samples = p->all.n > 0 && p->all.n < FEW_SAMPLES;
    w->near_floor = p->all.n && near_floor(r, k, p->all.mean);
    if (build_parts(m, r, w, p, grand) != 0 || build_launch(m, w, k, p->all.mean) != 0)
        return -1;
    return build_shapes(m, w, k->shapes, grand);
}

/* The totals over the rows; launches of kernels the full table could not hold belong to no
 * row. */
static void build_totals(struct model *m, const struct report *r, const struct pre *pre,
                         double grand)
{
    struct rm_totals *t = &m->totals;

    t->n[RT_LAUNCHES] = t->n[RT_DROPPED] = r->drops[DROP_TABLE_FULL];
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct report_kernel *k = pre[i].k;
        t->n[RT_LAUNCHES] += k->calls;
        t->n[RT_TIMED] += pre[i].all.n;
        t->n[RT_WARMUP] += k->warmup_skipped;
        t->n[RT_CAPTURED] += k->captured;
        t->n[RT_DROPPED] += k->dropped;
        t->n[RT_FAILED] += k->failed;
        t->n[RT_INCOMPLETE] += k->incomplete;
        t->n[RT_UNGATED] += k->ungated;
        t->n[RT_IN_GRAPH] += k->in_graph;
        t->n[RT_UNSAMPLED] += k->unsampled;
        t->n[RT_BY_NODES] += k->by_nodes;
        t->n[RT_CUPTI_TIMED] += k->hw_timed;
        t->n[RT_OUTSIDE] += k->outside_range;
        t->n[RT_PAUSED] += k->paused;
    }
    for (int i = 0; i < RM_NDROPS; i++)
        t->drops[i] = r->drops[i];
    t->has_sample = true;
    t->sample = r->sample > 1 ? r->sample : 1L;
    t->timed_total_ms = grand / 1000.0;
}

static int build_rows(struct model *m, struct report *r)
{
    struct pre *pre = calloc(r->nkernels ? r->nkernels : 1, sizeof *pre);
    double grand = 0;
    int rc = 0;

    if (!pre)
        return -1;
    for (size_t i = 0; i < r->nkernels; i++) {
        struct report_kernel *k = &r->kernels[i];
        if (k->shapes)
            shape_set_sorted(k->shapes);
        pre[i].k = k;
        pre[i].all = build_all_devices(r, k->per_dev);
        pre[i].total_us = pre[i].all.sum;
        /* The mean of the launches the samples stand for (KTIME_BUDGET: a sample drawn at 1
         * in 2^level counts 2^level times), times the launches. */
        if (k->unsampled && pre[i].all.n)
            pre[i].total_us = (r->budget && k->wn ? k->wsum / (double)k->wn : pre[i].all.mean) *
                              (double)(pre[i].all.n + k->unsampled);
        grand += pre[i].total_us;
    }
    qsort(pre, r->nkernels, sizeof *pre, cmp_pre);
    build_totals(m, r, pre, grand);
    if (r->nkernels && !(m->rows = model_alloc(m, r->nkernels * sizeof *m->rows)))
        rc = -1;
    for (size_t i = 0; rc == 0 && i < r->nkernels; i++)
        rc = build_row(m, r, &m->rows[i], &pre[i], grand);
    m->nrows = m->nrows_all = rc == 0 ? r->nkernels : 0;
    free(pre);
    return rc;
}

int model_build(struct model *m, struct report *r)
{
    memset(m, 0, sizeof *m);
    if (build_header(m, r) != 0 || build_rows(m, r) != 0 || build_memops(m, r) != 0 ||
        build_ranges(m, r) != 0 || build_busy(m, r) != 0 || build_conditions(m, r) != 0 ||
        m->oom) {
        model_free(m);
        return -1;
    }
    model_words(m);
    model_names(m);
    return 0;
}
