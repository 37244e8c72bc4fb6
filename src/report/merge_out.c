/* merge_out.c - a merge's running sums (merge_acc.h) turned into the merged report's model:
 * each block's statistics and quantiles, the rows in the report's order with their
 * percentages, GPUs, shapes, ranks and spread, memory operations, ranges, devices, totals and
 * the header's words. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge_acc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int macc_init(struct macc *a, struct model *out, size_t ninputs, const struct merge_opts *o,
              char *err, size_t errsz)
{
    int rc;

    memset(a, 0, sizeof *a);
    memset(out, 0, sizeof *out);
    if (o->comm && (rc = macc_use_pattern(a, o->comm, err, errsz)) != 0)
        return rc;
    a->out = out;
    a->opts = o;
    a->ninputs = ninputs;
    a->keep_rows = ninputs <= (o->rank_rows ? o->rank_rows : MERGE_RANK_ROWS);
    size_t n = ninputs ? ninputs : 1;
    if (!(out->merged = model_alloc(out, sizeof *out->merged)) ||
        !(out->merged->inputs = model_alloc(out, n * sizeof *out->merged->inputs)) ||
        !(a->compute_ms = calloc(n, sizeof *a->compute_ms)) ||
        !(a->nccl_ms = calloc(n, sizeof *a->nccl_ms)) ||
        !(a->rank_of = calloc(n, sizeof *a->rank_of)))
        return -1;
    out->contexts = 0;
    return 0;
}

static void free_rows(struct macc_row **rows)
{
    struct macc_row *r, *tmp;

    HASH_ITER(hh, *rows, r, tmp) {
        HASH_DEL(*rows, r);
        free(r->all.h.count);
        free(r->all.h.edge);
        for (size_t i = 0; i < r->ndevs; i++) {
            free(r->devs[i].b.h.count);
            free(r->devs[i].b.h.edge);
        }
        for (size_t i = 0; i < r->nshapes; i++) {
            free(r->shapes[i].b.h.count);
            free(r->shapes[i].b.h.edge);
        }
        free(r->other.h.count);
        free(r->other.h.edge);
        free(r->launch.h.count);
        free(r->launch.h.edge);
        free(r->queue.h.count);
        free(r->queue.h.edge);
        free(r->devs);
        free(r->shapes);
        free(r->ranks);
        free(r->key);
        free(r);
    }
}

void macc_free(struct macc *a)
{
    struct macc_device *d, *dt;
    struct macc_range *g, *gt;

    free_rows(&a->rows);
    HASH_ITER(hh, a->devmap, d, dt) {
        HASH_DEL(a->devmap, d);
        free(d->key);
        free(d);
    }
    HASH_ITER(hh, a->ranges, g, gt) {
        HASH_DEL(a->ranges, g);
        free_rows(&g->rows);
        free(g->key);
        free(g);
    }
    for (size_t i = 0; i < a->nmemops; i++) {
        free(a->memop_blocks[i].h.count);
        free(a->memop_blocks[i].h.edge);
    }
    for (size_t i = 0; i < a->nunread; i++)
        free(a->unread[i]);
    free(a->unread);
    free(a->memops);
    free(a->memop_blocks);
    free(a->devices);
    free(a->timer_notes);
    free(a->notes);
    free(a->compute_ms);
    free(a->nccl_ms);
    free(a->rank_of);
    macc_free_busy(a);
    memset(a, 0, sizeof *a);
}

/* ---- a block's statistics ---- */

/* The q-quantile of a merged histogram as the library reads its own (sketch.h): the
 * geometric middle of the bucket that holds the sample of rank floor(q (n - 1)), clamped to
 * lo and hi. */
static double hist_quantile(const struct macc_hist *h, double q, double lo, double hi)
{
    uint64_t n = 0, seen = 0;
    double v = NAN, last = NAN;

    for (size_t j = 0; j < h->n; j++)
        n += h->count[j];
    if (!n)
        return -1;
    double rank = floor(q * (double)(n - 1));
    for (size_t j = 0; j < h->n; j++) {
        if (isnan(h->edge[j]))
            continue;
        last = h->edge[j];
        seen += h->count[j];
        if ((double)seen > rank) {
            v = h->lo + (int64_t)j == 0 ? h->first_edge / 2 : h->edge[j] * sqrt(h->gamma);
            break;
        }
    }
    if (isnan(v))
        v = last * sqrt(h->gamma);
    if (hi >= lo)
        v = v < lo ? lo : v > hi ? hi : v;
    return v;
}

/* The model's histogram of h (NULL when no report gave one). */
static struct rm_hist *out_hist(struct model *m, const struct macc_hist *h)
{
    struct rm_hist *o;
    size_t n = 0;

    if (!h->any || !(o = model_alloc(m, sizeof *o)))
        return NULL;
    o->gamma = h->gamma;
    o->first_edge = h->first_edge;
    for (size_t j = 0; j < h->n; j++)
        n += !isnan(h->edge[j]);
    if (n && !(o->b = model_alloc(m, n * sizeof *o->b)))
        return NULL;
    for (size_t j = 0; j < h->n; j++)
        if (!isnan(h->edge[j]))
            o->b[o->n++] = (struct rm_bucket){ h->lo + (int64_t)j, h->edge[j], h->count[j] };
    return o;
}

/* s's statistics (no quantiles): total and percent from total_us over grand_us. */
static void out_stats(struct rm_stats *o, const struct macc_stats *s, double total_us,
                      double grand_us)
{
    o->timed = s->n;
    o->v[RS_TOTAL] = total_us / 1000.0;
    o->v[RS_PERCENT] = grand_us > 0 ? 100.0 * total_us / grand_us : 0.0;
    o->v[RS_MEAN] = s->n ? s->mean : 0.0;
    o->v[RS_MIN] = s->n ? s->min : 0.0;
    o->v[RS_MAX] = s->n ? s->max : 0.0;
    o->v[RS_STDDEV] = s->n >= 2 ? sqrt(s->m2 / (double)(s->n - 1)) : 0.0;
    o->v[RS_SUM] = s->sum;
    o->v[RS_M2] = s->m2;
    for (int j = 0; j < RM_NQ; j++)
        o->v[RS_P50 + j] = -1;
}

/* A block's statistics, histogram and quantiles: from the merged histogram when every
 * report with samples gave one, those of the one report with samples, else none. */
static int out_block(struct model *m, struct rm_stats *o, const struct macc_block *b,
                     double total_us, double grand_us)
{
    out_stats(o, &b->st, total_us, grand_us);
    if (b->h.any && !(o->hist = out_hist(m, &b->h)))
        return -1;
    for (int j = 0; j < RM_NQ; j++) {
        if (b->h.any && b->with_samples && b->all_hist)
            o->v[RS_P50 + j] = b->st.n ? hist_quantile(&b->h, rm_q[j], o->v[RS_MIN],
                                                        o->v[RS_MAX]) : -1;
        else if (b->with_samples == 1)
            o->v[RS_P50 + j] = b->q[j];
    }
    return 0;
}

/* ---- the rows ---- */

static int cmp_rows(const void *x, const void *y)
{
    const struct macc_row *a = *(const struct macc_row *const *)x;
    const struct macc_row *b = *(const struct macc_row *const *)y;
    int c;

    if (a->total_us != b->total_us)
        return a->total_us < b->total_us ? 1 : -1;
    if (a->row.n[RC_CALLS] != b->row.n[RC_CALLS])
        return a->row.n[RC_CALLS] < b->row.n[RC_CALLS] ? 1 : -1;
    if ((c = strcmp(a->row.name, b->row.name)))
        return c;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_order(const void *x, const void *y)
{
    const struct macc_row *a = *(const struct macc_row *const *)x;
    const struct macc_row *b = *(const struct macc_row *const *)y;

    return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_shapes(const void *x, const void *y)
{
    const struct macc_shape *a = x, *b = y;

    if (a->b.st.n != b->b.st.n)
        return a->b.st.n < b->b.st.n ? 1 : -1;
    return a->b.order < b->b.order ? -1 : a->b.order > b->b.order;
}

static int cmp_devs(const void *x, const void *y)
{
    const struct macc_dev *a = x, *b = y;

    return a->device - b->device;
}

/* The rows of a hash, in the order they were first seen; NULL when out of memory. */
static struct macc_row **rows_in_order(struct macc_row *hash, size_t n)
{
    struct macc_row **v = malloc((n ? n : 1) * sizeof *v), *r, *tmp;
    size_t i = 0;

    if (!v)
        return NULL;
    HASH_ITER(hh, hash, r, tmp)
        v[i++] = r;
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_order);
    return v;
}

/* A row's launch calls and queue times, and the words on them as the library says them. */
static int out_launch(struct model *m, struct macc_row *r, struct rm_row *w)
{
    struct rm_launch *l = w->launch = model_alloc(m, sizeof *l);

    if (!l || out_block(m, &l->api, &r->launch, r->launch.st.sum, 0) != 0 ||
        out_block(m, &l->queue, &r->queue, r->queue.st.sum, 0) != 0)
        return -1;
    l->launch_bound = l->api.timed && w->st.timed && l->api.v[RS_MEAN] >= w->st.v[RS_MEAN];
    l->queue_long = l->queue.timed && l->queue.v[RS_MEAN] >= RM_QUEUE_LONG_US;
    return 0;
}

static int out_kernel(struct macc *a, struct macc_row *r, struct rm_row *w, double grand)
{
    struct model *m = a->out;
    bool cupti = a->timer_used && strcmp(a->timer_used, "cupti") == 0;
    double fl = cupti ? r->floor_hw : r->floor_events;

    *w = r->row;
    if (out_block(m, &w->st, &r->all, r->estimated ? r->total_us : r->all.st.sum, grand) != 0)
        return -1;
    w->total_estimated = r->estimated;
    w->few_samples = w->st.timed > 0 && w->st.timed < FEW_SAMPLES;
    w->near_floor = w->st.timed && w->kind == REPORT_KERNEL && fl > 0 &&
                    w->st.v[RS_MEAN] < NEAR_FLOOR_FACTOR * fl;
    if (r->ndevs > 1)
        qsort(r->devs, r->ndevs, sizeof *r->devs, cmp_devs);
    if (r->ndevs && !(w->dev = model_alloc(m, r->ndevs * sizeof *w->dev)))
        return -1;
    for (size_t i = 0; i < r->ndevs; i++) {
        struct rm_dev_part *d = &w->dev[w->ndev];
        if (!r->devs[i].b.st.n)
            continue;
        d->device = r->devs[i].device;
        r->devs[i].b.h.any = false; /* a GPU's part has no histogram of its own */
        if (out_block(m, &d->st, &r->devs[i].b, r->devs[i].b.st.sum, grand) != 0)
            return -1;
        w->ndev++;
    }
    if (r->has_hw) {
        if (!(w->hw = model_alloc(m, sizeof *w->hw)))
            return -1;
        out_stats(&w->hw->st, &r->hw, r->hw.sum, 0);
        w->hw->has_bias = r->hw.n && w->st.timed;
        w->hw->bias = w->hw->has_bias ? w->st.v[RS_MEAN] - r->hw.mean : 0;
    }
    if (r->has_launch && out_launch(m, r, w) != 0)
        return -1;
    if (r->nshapes > 1)
        qsort(r->shapes, r->nshapes, sizeof *r->shapes, cmp_shapes);
    if (r->nshapes && !(w->shapes = model_alloc(m, r->nshapes * sizeof *w->shapes)))
        return -1;
    for (size_t i = 0; i < r->nshapes; i++, w->nshapes++) {
        struct rm_shape *s = &w->shapes[i];
        memcpy(s->grid, r->shapes[i].grid, sizeof s->grid);
        memcpy(s->block, r->shapes[i].block, sizeof s->block);
        s->smem = r->shapes[i].smem;
        if (out_block(m, &s->st, &r->shapes[i].b, r->shapes[i].b.st.sum, grand) != 0)
            return -1;
    }
    if (r->has_other) {
        if (!(w->other = model_alloc(m, sizeof *w->other)))
            return -1;
        w->other->shapes = r->other_shapes;
        w->other->untracked = r->other_untracked;
        if (out_block(m, &w->other->st, &r->other, r->other.st.sum, grand) != 0)
            return -1;
    }
    if (r->nranks) {
        if (!(w->ranks = model_alloc(m, r->nranks * sizeof *w->ranks)))
            return -1;
        memcpy(w->ranks, r->ranks, r->nranks * sizeof *w->ranks);
        w->nranks = r->nranks;
    }
    struct rm_spread *sp = w->spread = model_alloc(m, sizeof *sp);
    if (!sp)
        return -1;
    sp->ranks = r->nin;
    sp->slowest = r->slow;
    sp->fastest = r->fast;
    sp->slowest.label = macc_label(m, r->slow.rank, r->slow.input);
    sp->fastest.label = macc_label(m, r->fast.rank, r->fast.input);
    sp->has_ratio = r->fast.total_ms > 0;
    sp->ratio = sp->has_ratio ? r->slow.total_ms / r->fast.total_ms : 0;
    sp->has_mean = r->nin > 0;
    sp->mean_ms = r->nin ? r->sum_total_ms / (double)r->nin : 0;
    sp->imbalance = sp->mean_ms > 0 ? r->slow.total_ms / sp->mean_ms - 1 : 0;
    return m->oom ? -1 : 0;
}

static int out_kernels(struct macc *a)
{
    struct model *m = a->out;
    struct macc_row **v = rows_in_order(a->rows, a->nrows);
    double grand = 0;
    int rc = -1;

    if (!v)
        return -1;
    /* The grand total in the order the rows were first seen, so that it is the same sum for
     * any order of the arguments. */
    for (size_t i = 0; i < a->nrows; i++)
        grand += v[i]->estimated ? v[i]->total_us : v[i]->all.st.sum;
    for (size_t i = 0; i < a->nrows; i++)
        v[i]->total_us = v[i]->estimated ? v[i]->total_us : v[i]->all.st.sum;
    if (a->nrows > 1)
        qsort(v, a->nrows, sizeof *v, cmp_rows);
    if (a->nrows && !(m->rows = model_alloc(m, a->nrows * sizeof *m->rows)))
        goto out;
    for (size_t i = 0; i < a->nrows; i++)
        if (out_kernel(a, v[i], &m->rows[i], grand) != 0)
            goto out;
    m->nrows = m->nrows_all = a->nrows;
    m->totals.timed_total_ms = grand / 1000.0;
    rc = 0;
out:
    free(v);
    return rc;
}

/* ---- the sections ---- */

static const char *const memop_kinds[] = { "HtoD", "DtoH", "DtoD", "HtoH", "peer", "memset" };

/* A memory operation's place: the library's kinds first, in its order, then by name. */
static int memop_rank(const char *kind)
{
    for (size_t i = 0; i < sizeof memop_kinds / sizeof *memop_kinds; i++)
        if (strcmp(kind, memop_kinds[i]) == 0)
            return (int)i;
    return (int)(sizeof memop_kinds / sizeof *memop_kinds);
}

static int out_memops(struct macc *a)
{
    struct model *m = a->out;
    size_t n = a->nmemops, *idx = malloc((n ? n : 1) * sizeof *idx);

    if (!idx || (n && !(m->memops = model_alloc(m, n * sizeof *m->memops)))) {
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) /* few: insertion sort */
        for (size_t j = i; j > 0; j--) {
            const char *x = a->memops[idx[j - 1]].name, *y = a->memops[idx[j]].name;
            int rx = memop_rank(x), ry = memop_rank(y);
            if (rx < ry || (rx == ry && strcmp(x, y) <= 0))
                break;
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        struct rm_row *w = &m->memops[i];
        const struct macc_block *b = &a->memop_blocks[idx[i]];
        *w = a->memops[idx[i]];
        struct macc_block nb = *b;
        nb.h.any = false;
        if (out_block(m, &w->st, &nb, b->st.sum, 0) != 0) {
            free(idx);
            return -1;
        }
        w->few_samples = w->st.timed > 0 && w->st.timed < FEW_SAMPLES;
        w->has_gbps = w->st.timed && b->st.sum > 0;
        w->gbps = w->has_gbps ? (double)w->n[RC_TIMED_BYTES] / b->st.sum / 1000.0 : 0;
    }
    m->nmemops = n;
    free(idx);
    return 0;
}

static int cmp_range_rows(const void *x, const void *y)
{
    const struct rm_row *a = x, *b = y;

    if (a->st.v[RS_SUM] != b->st.v[RS_SUM])
        return a->st.v[RS_SUM] < b->st.v[RS_SUM] ? 1 : -1;
    return strcmp(a->mangled, b->mangled);
}

static int cmp_ranges(const void *x, const void *y)
{
    const struct rm_range *a = x, *b = y;

    if (a->total_ms != b->total_ms)
        return a->total_ms < b->total_ms ? 1 : -1;
    if (!a->name != !b->name)
        return !a->name ? 1 : -1;
    return a->name ? strcmp(a->name, b->name) : 0;
}

static int out_range(struct macc *a, struct macc_range *g, struct rm_range *o)
{
    struct model *m = a->out;
    struct macc_row **v = rows_in_order(g->rows, g->nrows);
    double total = 0;

    if (!v)
        return -1;
    *o = g->rg;
    for (size_t i = 0; i < g->nrows; i++)
        total += v[i]->all.st.sum;
    if (g->nrows && !(o->rows = model_alloc(m, g->nrows * sizeof *o->rows))) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < g->nrows; i++) {
        struct rm_row *w = &o->rows[i];
        *w = v[i]->row;
        v[i]->all.h.any = false;
        if (out_block(m, &w->st, &v[i]->all, v[i]->all.st.sum, total) != 0) {
            free(v);
            return -1;
        }
    }
    o->nrows = g->nrows;
    if (o->nrows > 1)
        qsort(o->rows, o->nrows, sizeof *o->rows, cmp_range_rows);
    free(v);
    return 0;
}

static int out_ranges(struct macc *a)
{
    struct rm_ranges *r = a->out->ranges;
    struct macc_range *g, *tmp;

    if (!r)
        return 0;
    r->attribution = a->attribution ? a->attribution : "innermost";
    r->nvtx = a->nvtx ? a->nvtx : "not injected";
    if (a->nranges && !(r->by_name = model_alloc(a->out, a->nranges * sizeof *r->by_name)))
        return -1;
    HASH_ITER(hh, a->ranges, g, tmp)
        if (out_range(a, g, &r->by_name[r->nby_name++]) != 0)
            return -1;
    if (r->nby_name > 1)
        qsort(r->by_name, r->nby_name, sizeof *r->by_name, cmp_ranges);
    return 0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The strings of list joined by "; " (NULL: none). */
static const char *joined(struct model *m, const char **list, size_t n)
{
    size_t len = 1;
    char *s;

    if (!n)
        return NULL;
    for (size_t i = 0; i < n; i++)
        len += strlen(list[i]) + 2;
    if (!(s = model_alloc(m, len)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, "; ");
        strcat(s, list[i]);
    }
    return s;
}

int macc_finish(struct macc *a)
{
    struct model *m = a->out;

    m->version = a->version ? a->version : "?";
    m->build = a->build ? a->build : "";
    m->host = a->host_same ? a->host : NULL;
    m->job = a->job_same ? a->job : NULL;
    m->world_size = a->world_size_same ? a->world_size : -1;
    m->rank = m->local_rank = -1;
    m->has_pid = false;
    m->gate = a->gate ? a->gate : "off";
    m->gate_requested = a->gate_requested ? a->gate_requested : m->gate;
    m->group_shape = a->group_same;
    m->timer.requested = a->timer_requested ? a->timer_requested : "events";
    m->timer.used = a->timer_used ? a->timer_used : "events";
    m->timer.note = joined(m, a->timer_notes, a->ntimer_notes);
    if (a->nnotes > 1)
        qsort(a->notes, a->nnotes, sizeof *a->notes, cmp_str);
    m->note = joined(m, a->notes, a->nnotes);
    m->schema = 0;
    if (a->ndevices && !(m->devices = model_alloc(m, a->ndevices * sizeof *m->devices)))
        return -1;
    if (a->ndevices)
        memcpy(m->devices, a->devices, a->ndevices * sizeof *m->devices);
    m->ndevices = a->ndevices;
    if (out_kernels(a) != 0 || out_memops(a) != 0 || out_ranges(a) != 0 ||
        macc_out_busy(a) != 0 || macc_balance(a) != 0 || model_merged_words(m) != 0)
        return -1;
    model_words(m);
    model_names(m);
    return m->oom ? -1 : 0;
}
