/* read_rows.c - the JSON report reader's kernels: each row with its counts, statistics,
 * GPUs, launch shapes, the hardware's part, and a merged report's ranks (read.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "read.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static bool rd_kind(struct rd *r, const struct jv *k, const char *where, int *kind)
{
    const struct jv *v = rd_get(r, k, where, "kind", JV_STRING, false, false);

    *kind = REPORT_KERNEL;
    if (!v)
        return !r->failed;
    if (strcmp(v->s, "graph") == 0)
        *kind = REPORT_GRAPH;
    else if (strcmp(v->s, "kernel") != 0)
        return rd_bad(r, where, "kind", v, "\"kernel\" or \"graph\"");
    return true;
}

/* The GPUs' parts: those with samples. */
static bool rd_devparts(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    const struct jv *pd = rd_get(r, k, where, "per_device", JV_ARRAY, false, false);
    char at[160], ei[192];

    if (!pd || !pd->n)
        return !r->failed;
    if (!(w->dev = model_alloc(r->m, pd->n * sizeof *w->dev)))
        return rd_fail(r, where, "could not be read: out of memory");
    rd_at(at, sizeof at, where, "per_device");
    for (size_t i = 0; i < pd->n; i++) {
        struct rm_dev_part *d = &w->dev[w->ndev];
        uint64_t dev;
        rd_index(ei, sizeof ei, at, i);
        if (!rd_object(r, &pd->items[i], ei) ||
            !rd_count_to(r, &pd->items[i], ei, "device", true, INT_MAX, &dev) ||
            !rd_stats(r, &pd->items[i], ei, &d->st, r->m->totals.timed_total_ms))
            return false;
        d->device = (int)dev;
        d->st.hist = NULL;
        w->ndev += d->st.timed > 0;
    }
    return true;
}

static bool rd_shape(struct rd *r, const struct jv *s, const char *where, struct rm_shape *o)
{
    static const char *const dims[] = { "grid", "block" };
    uint64_t smem;

    if (!rd_object(r, s, where))
        return false;
    for (int d = 0; d < 2; d++) {
        const struct jv *v = rd_get(r, s, where, dims[d], JV_ARRAY, false, true);
        uint32_t *out = d ? o->block : o->grid;
        if (!v)
            return false;
        if (v->n != 3)
            return rd_bad(r, where, dims[d], v, "a list of 3 counts");
        for (int j = 0; j < 3; j++) {
            if (v->items[j].type != JV_NUMBER || !v->items[j].is_count ||
                v->items[j].count > UINT32_MAX)
                return rd_bad(r, where, dims[d], v, "a list of 3 counts");
            out[j] = (uint32_t)v->items[j].count;
        }
    }
    if (!rd_count_to(r, s, where, "shared_bytes", true, UINT32_MAX, &smem))
        return false;
    o->smem = (uint32_t)smem;
    return rd_stats(r, s, where, &o->st, 0);
}

static bool rd_shapes(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    const struct jv *sh = rd_get(r, k, where, "shapes", JV_ARRAY, true, false);
    const struct jv *o = rd_get(r, k, where, "other_shapes", JV_OBJECT, true, false);
    char at[160], ei[192];

    if (sh && sh->type == JV_ARRAY && sh->n) {
        if (!(w->shapes = model_alloc(r->m, sh->n * sizeof *w->shapes)))
            return rd_fail(r, where, "could not be read: out of memory");
        rd_at(at, sizeof at, where, "shapes");
        for (size_t i = 0; i < sh->n; i++, w->nshapes++)
            if (!rd_shape(r, &sh->items[i], rd_index(ei, sizeof ei, at, i), &w->shapes[i]))
                return false;
    }
    if (!o || o->type != JV_OBJECT)
        return !r->failed;
    rd_at(at, sizeof at, where, "other_shapes");
    if (!(w->other = model_alloc(r->m, sizeof *w->other)))
        return rd_fail(r, where, "could not be read: out of memory");
    return rd_count(r, o, at, "shapes", false, 0, &w->other->shapes) &&
           rd_bool(r, o, at, "untracked", false, &w->other->untracked) &&
           rd_stats(r, o, at, &w->other->st, 0);
}

static bool rd_hw(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    const struct jv *h = rd_get(r, k, where, "hw", JV_OBJECT, false, false);
    char at[160];

    if (!h)
        return !r->failed;
    rd_at(at, sizeof at, where, "hw");
    if (!(w->hw = model_alloc(r->m, sizeof *w->hw)))
        return rd_fail(r, where, "could not be read: out of memory");
    return rd_stats(r, h, at, &w->hw->st, 0) &&
           rd_num(r, h, at, "bias_us", false, true, 0, &w->hw->bias, &w->hw->has_bias);
}

static bool rd_rank_end(struct rd *r, const struct jv *sp, const char *where, const char *key,
                        struct rm_rank_end *e)
{
    const struct jv *o = rd_get(r, sp, where, key, JV_OBJECT, false, true);
    char at[160];
    uint64_t input;

    rd_at(at, sizeof at, where, key);
    if (!o || !rd_count_to(r, o, at, "input", false, LONG_MAX, &input) ||
        !rd_long(r, o, at, "rank", &e->rank) || !rd_str(r, o, at, "label", true, NULL, &e->label) ||
        !rd_num(r, o, at, "total_ms", true, false, 0, &e->total_ms, NULL))
        return false;
    e->input = (long)input;
    return true;
}

/* A merged report's row: each input's part and the spread. */
static bool rd_ranks(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    const struct jv *rs = rd_get(r, k, where, "ranks", JV_ARRAY, false, false);
    const struct jv *sp = rd_get(r, k, where, "rank_spread", JV_OBJECT, true, false);
    char at[160], ei[192];

    if (rs && rs->n && !(w->ranks = model_alloc(r->m, rs->n * sizeof *w->ranks)))
        return rd_fail(r, where, "could not be read: out of memory");
    rd_at(at, sizeof at, where, "ranks");
    for (size_t i = 0; rs && i < rs->n; i++, w->nranks++) {
        const struct jv *e = &rs->items[i];
        struct rm_rank_part *p = &w->ranks[i];
        uint64_t input;
        rd_index(ei, sizeof ei, at, i);
        input = i;
        if (!rd_object(r, e, ei) ||
            (jv_get(e, "input") && !rd_count_to(r, e, ei, "input", false, LONG_MAX, &input)) ||
            !rd_long(r, e, ei, "rank", &p->rank) ||
            !rd_str(r, e, ei, "host", false, NULL, &p->host) ||
            !rd_long(r, e, ei, "pid", &p->pid) ||
            !rd_count(r, e, ei, "calls", false, 0, &p->calls) ||
            !rd_count(r, e, ei, "timed", false, 0, &p->timed) ||
            !rd_num(r, e, ei, "total_ms", false, false, 0, &p->total_ms, NULL) ||
            !rd_num(r, e, ei, "mean_us", false, true, 0, &p->mean_us, &p->has_mean))
            return false;
        p->input = (long)input;
    }
    if (!sp || sp->type != JV_OBJECT)
        return !r->failed;
    rd_at(at, sizeof at, where, "rank_spread");
    if (!(w->spread = model_alloc(r->m, sizeof *w->spread)))
        return rd_fail(r, where, "could not be read: out of memory");
    return rd_count(r, sp, at, "ranks", false, 0, &w->spread->ranks) &&
           rd_rank_end(r, sp, at, "slowest", &w->spread->slowest) &&
           rd_rank_end(r, sp, at, "fastest", &w->spread->fastest) &&
           rd_num(r, sp, at, "ratio", false, true, 0, &w->spread->ratio, &w->spread->has_ratio) &&
           rd_num(r, sp, at, "mean_ms", false, true, 0, &w->spread->mean_ms,
                  &w->spread->has_mean) &&
           rd_num(r, sp, at, "imbalance", false, true, 0, &w->spread->imbalance, NULL) &&
           /* shown as a percentage: a hundred times it stays finite */
           (fabs(w->spread->imbalance) < 1e300 ||
            rd_bad(r, at, "imbalance", jv_get(sp, "imbalance"), "a ratio"));
}

static bool rd_row(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    bool near_floor;
    uint64_t sampled = 0;

    if (!rd_object(r, k, where) || !rd_raw(r, k, where, "name", true, NULL, &w->name) ||
        !rd_raw(r, k, where, "mangled", true, NULL, &w->mangled) || !rd_kind(r, k, where, &w->kind))
        return false;
    for (int i = 0; i < RM_NCOUNTS; i++)
        if (i != RC_BYTES && i != RC_TIMED_BYTES &&
            !rd_count(r, k, where, rm_count_key[i], i == RC_CALLS, 0, &w->n[i]))
            return false;
    if (!rd_num(r, k, where, rm_stat_key[RS_TOTAL], true, false, 0, &w->st.v[RS_TOTAL], NULL) ||
        !rd_stats(r, k, where, &w->st, 0) ||
        !rd_bool(r, k, where, "total_estimated", false, &w->total_estimated) ||
        !rd_count_to(r, k, where, "sampled_1_in", false, LONG_MAX, &sampled) ||
        !rd_bool(r, k, where, "near_floor", false, &near_floor))
        return false;
    w->sampled_1_in = (long)sampled;
    w->few_samples = w->st.timed > 0 && w->st.timed < FEW_SAMPLES;
    w->near_floor = w->st.timed && near_floor;
    return rd_devparts(r, k, where, w) && rd_hw(r, k, where, w) && rd_shapes(r, k, where, w) &&
           rd_ranks(r, k, where, w) && rd_launch(r, k, where, w);
}

bool rd_rows(struct rd *r, const struct jv *root)
{
    const struct jv *ks = rd_get(r, root, "", "kernels", JV_ARRAY, false, true);
    char at[64];

    if (!ks)
        return false;
    if (ks->n && !(r->m->rows = model_alloc(r->m, ks->n * sizeof *r->m->rows)))
        return rd_fail(r, "kernels", "could not be read: out of memory");
    for (size_t i = 0; i < ks->n; i++)
        if (!rd_row(r, &ks->items[i], rd_index(at, sizeof at, "kernels", i), &r->m->rows[i]))
            return false;
    r->m->nrows = r->m->nrows_all = ks->n;
    return true;
}
