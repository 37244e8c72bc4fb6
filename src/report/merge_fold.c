/* merge_fold.c - one report folded into the running sums of a merge (merge_acc.h): its
 * header, devices, kernels with their GPUs, shapes and ranks, memory operations, ranges and
 * totals. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge_acc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Histogram buckets a report may name: the library's sketch has 1000. */
#define MAX_BUCKET (1 << 20)

void macc_add(struct macc_stats *s, uint64_t n2, double mean2, double m22, double sum, double min,
              double max)
{
    if (!n2)
        return;
    if (!s->n) {
        *s = (struct macc_stats){ n2, mean2, m22, sum, min, max };
        return;
    }
    uint64_t n = s->n + n2;
    double delta = mean2 - s->mean;
    s->mean = s->mean + delta * (double)n2 / (double)n;
    s->m2 = s->m2 + m22 + delta * delta * (double)s->n * (double)n2 / (double)n;
    s->sum += sum;
    s->min = min < s->min ? min : s->min;
    s->max = max > s->max ? max : s->max;
    s->n = n;
}

static void add_stats(struct macc_stats *s, const struct rm_stats *st)
{
    macc_add(s, st->timed, st->v[RS_MEAN], st->v[RS_M2], st->v[RS_SUM], st->v[RS_MIN],
             st->v[RS_MAX]);
}

/* Room in h for buckets lo .. hi. */
static int hist_span(struct macc_hist *h, int64_t lo, int64_t hi)
{
    int64_t nlo = h->n ? (lo < h->lo ? lo : h->lo) : lo;
    int64_t nhi = h->n ? (hi > h->lo + (int64_t)h->n - 1 ? hi : h->lo + (int64_t)h->n - 1) : hi;
    size_t n = (size_t)(nhi - nlo + 1), shift = h->n ? (size_t)(h->lo - nlo) : 0;
    uint64_t *count;
    double *edge;

    if (h->n && nlo == h->lo && n == h->n)
        return 0;
    if (!(count = malloc(n * sizeof *count)) || !(edge = malloc(n * sizeof *edge))) {
        free(count);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        count[i] = 0;
        edge[i] = NAN;
    }
    if (h->n) {
        memcpy(count + shift, h->count, h->n * sizeof *count);
        memcpy(edge + shift, h->edge, h->n * sizeof *edge);
    }
    free(h->count);
    free(h->edge);
    h->count = count;
    h->edge = edge;
    h->lo = nlo;
    h->n = n;
    return 0;
}

/* The histogram hist added bucket by bucket into h (a bucket's edge: the first report's). */
static int add_hist(struct macc_hist *h, const struct rm_hist *hist, const char *file, char *err,
                    size_t errsz)
{
    int64_t lo = INT64_MAX, hi = -1;

    if (!h->any) {
        h->any = true;
        h->gamma = hist->gamma;
        h->first_edge = hist->first_edge;
    } else if (hist->gamma != h->gamma || hist->first_edge != h->first_edge) {
        snprintf(err, errsz, "%s: histograms of different bucket edges (gamma %.17g, %.17g)", file,
                 h->gamma, hist->gamma);
        return -1;
    }
    for (size_t i = 0; i < hist->n; i++) {
        if (hist->b[i].i < 0 || hist->b[i].i > MAX_BUCKET) {
            snprintf(err, errsz, "%s: a histogram's bucket %lld is not one the library makes", file,
                     (long long)hist->b[i].i);
            return -1;
        }
        lo = hist->b[i].i < lo ? hist->b[i].i : lo;
        hi = hist->b[i].i > hi ? hist->b[i].i : hi;
    }
    if (hi < 0)
        return 0;
    if (hist_span(h, lo, hi) != 0) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < hist->n; i++) {
        size_t j = (size_t)(hist->b[i].i - h->lo);
        h->count[j] += hist->b[i].count;
        if (isnan(h->edge[j]))
            h->edge[j] = hist->b[i].edge;
    }
    return 0;
}

/* A block of a report (a row's, a GPU's, a shape's) added into b. */
static int add_block(struct macc_block *b, const struct rm_stats *st, const char *file, char *err,
                     size_t errsz)
{
    if (st->timed) {
        if (!b->with_samples++) {
            b->all_hist = true;
            for (int j = 0; j < RM_NQ; j++)
                b->q[j] = st->v[RS_P50 + j];
        }
        b->all_hist = b->all_hist && st->hist;
        add_stats(&b->st, st);
    }
    return st->hist ? add_hist(&b->h, st->hist, file, err, errsz) : 0;
}

/* The same string, or `other` once two differ (first: the first report's). */
static const char *same_or(struct model *out, bool first, const char *cur, const char *s,
                           const char *other)
{
    if (first)
        return s ? model_strdup(out, s) : NULL;
    if (cur == other || (cur && s && strcmp(cur, s) == 0) || (!cur && !s))
        return cur;
    return other;
}

/* Adds s to the distinct strings list (copied into out). */
static int distinct(struct macc *a, const char ***list, size_t *n, const char *s)
{
    size_t cap = *n;

    if (!s || !*s)
        return 0;
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return 0;
    const char **e = macc_push(list, n, &cap, sizeof **list);
    return e && (*e = model_strdup(a->out, s)) ? 0 : -1;
}

static int fold_header(struct macc *a, const struct model *m, const char *file)
{
    struct model *o = a->out;
    bool first = !a->have_first;

    a->version = same_or(o, first, a->version, m->version, "mixed");
    a->build = same_or(o, first, a->build, m->build, "mixed");
    a->gate = same_or(o, first, a->gate, m->gate, "mixed");
    a->gate_requested = same_or(o, first, a->gate_requested, m->gate_requested, "mixed");
    a->timer_requested = same_or(o, first, a->timer_requested, m->timer.requested, "mixed");
    a->timer_used = same_or(o, first, a->timer_used, m->timer.used, "mixed");
    if (first) {
        a->host = model_strdup(o, m->host);
        a->host_same = true;
        a->job = model_strdup(o, m->job);
        a->job_same = true;
        a->world_size = m->world_size > 0 ? m->world_size : -1;
        a->world_size_same = true;
        a->group_same = m->group_shape;
        o->argc = m->argc;
        if (m->argc && !(o->argv = model_alloc(o, (size_t)m->argc * sizeof *o->argv)))
            return -1;
        for (int i = 0; i < m->argc; i++)
            o->argv[i] = model_strdup(o, m->argv[i]);
        o->timing_method = model_strdup(o, m->timing_method);
        o->warmup = m->warmup;
        o->start_time = model_strdup(o, m->start_time);
        o->end_time = model_strdup(o, m->end_time);
        a->have_first = true;
    } else {
        if (a->host_same && !((!a->host && !m->host) || (a->host && m->host &&
                                                          strcmp(a->host, m->host) == 0)))
            a->host_same = false, a->host = NULL;
        if (a->job_same && !((!a->job && !m->job) || (a->job && m->job &&
                                                      strcmp(a->job, m->job) == 0)))
            a->job_same = false, a->job = NULL;
        if ((m->world_size > 0 ? m->world_size : -1) != a->world_size)
            a->world_size_same = false;
        a->group_same = a->group_same && m->group_shape;
        if (m->start_time && (!o->start_time || strcmp(m->start_time, o->start_time) < 0))
            o->start_time = model_strdup(o, m->start_time);
        if (m->end_time && (!o->end_time || strcmp(m->end_time, o->end_time) > 0))
            o->end_time = model_strdup(o, m->end_time);
    }
    o->launch_gate = o->launch_gate || m->launch_gate;
    o->gate_unavailable += m->gate_unavailable;
    o->contexts += m->contexts > 0 ? m->contexts : 0;
    o->timer.records_dropped += m->timer.records_dropped;
    o->timer.buffers_refused += m->timer.buffers_refused;
    if (!o->timer.cupti_library && m->timer.cupti_library)
        o->timer.cupti_library = model_strdup(o, m->timer.cupti_library);
    if (distinct(a, &a->timer_notes, &a->ntimer_notes, m->timer.note) != 0 ||
        distinct(a, &a->notes, &a->nnotes, m->note) != 0)
        return -1;
    if (m->capture) {
        if (!o->capture) {
            if (!(o->capture = model_alloc(o, sizeof *o->capture)))
                return -1;
            o->capture->mode = model_strdup(o, m->capture->mode);
        } else if (strcmp(o->capture->mode, m->capture->mode) != 0) {
            o->capture->mode = "mixed";
        }
        o->capture->starts += m->capture->starts;
        o->capture->stops += m->capture->stops;
        o->capture->ranges += m->capture->ranges;
        o->capture->open_at_exit = o->capture->open_at_exit || m->capture->open_at_exit;
    }
    if (m->flush) {
        if (!o->flush && !(o->flush = model_alloc(o, sizeof *o->flush)))
            return -1;
        o->flush->bytes = m->flush->bytes > o->flush->bytes ? m->flush->bytes : o->flush->bytes;
        o->flush->flushes += m->flush->flushes;
        o->flush->refused += m->flush->refused;
        o->flush->contexts += m->flush->contexts;
        o->flush->without_buffer += m->flush->without_buffer;
    }
    for (int i = 0; i < RM_NTOTALS; i++)
        o->totals.n[i] += m->totals.n[i];
    for (int i = 0; i < RM_NDROPS; i++)
        o->totals.drops[i] += m->totals.drops[i];
    if (first) {
        o->totals.has_sample = m->totals.has_sample;
        o->totals.sample = m->totals.sample;
    } else if (o->totals.has_sample &&
               (!m->totals.has_sample || m->totals.sample != o->totals.sample)) {
        o->totals.has_sample = false;
    }
    (void)file;
    return o->oom ? -1 : 0;
}

/* The report's entry in merged_from. */
static int fold_input(struct macc *a, const struct model *m, const char *file, size_t input)
{
    struct model *o = a->out;
    struct rm_input *e = &o->merged->inputs[input];

    e->file = model_strdup(o, file);
    e->host = model_strdup(o, m->host);
    e->rank = m->rank;
    e->local_rank = m->local_rank;
    e->world_size = m->world_size > 0 ? m->world_size : -1;
    e->pid = m->has_pid ? m->pid : -1;
    e->start_time = model_strdup(o, m->start_time);
    e->end_time = model_strdup(o, m->end_time);
    e->has_command = true;
    e->ncommand = (size_t)m->argc;
    if (m->argc && !(e->command = model_alloc(o, (size_t)m->argc * sizeof *e->command)))
        return -1;
    for (int i = 0; i < m->argc; i++)
        e->command[i] = model_strdup(o, m->argv[i]);
    e->ktime_version = model_strdup(o, m->version);
    e->ktime_build = model_strdup(o, m->build);
    o->merged->ninputs = input + 1;
    return o->oom ? -1 : 0;
}

/* The report's devices: each one's ordinal in the merged report into map (by the report's
 * ordinal, n of them). */
static int fold_devices(struct macc *a, const struct model *m, int *map)
{
    struct model *o = a->out;

    for (size_t d = 0; d < m->ndevices; d++) {
        const struct rm_device *v = &m->devices[d];
        char key[512], ord[24];
        struct macc_device *hit;
        snprintf(ord, sizeof ord, "#%d", v->ordinal);
        int len = snprintf(key, sizeof key, "%s%c%s", m->host ? m->host : "None", 0,
                           v->uuid && *v->uuid ? v->uuid : ord);
        if (len < 0 || (size_t)len >= sizeof key)
            len = (int)sizeof key - 1;
        HASH_FIND(hh, a->devmap, key, (size_t)len, hit);
        if (!hit) {
            struct rm_device *e = macc_push(&a->devices, &a->ndevices, &a->capdevices, sizeof *e);
            if (!e || !(hit = calloc(1, sizeof *hit)) || !(hit->key = malloc((size_t)len))) {
                free(hit);
                return -1;
            }
            memcpy(hit->key, key, (size_t)len);
            hit->ordinal = (int)a->ndevices - 1;
            HASH_ADD_KEYPTR(hh, a->devmap, hit->key, (size_t)len, hit);
            *e = *v;
            e->ordinal = hit->ordinal;
            e->name = model_strdup(o, v->name);
            e->uuid = model_strdup(o, v->uuid);
            e->driver = model_strdup(o, v->driver);
            e->merged = true;
            e->host = model_strdup(o, m->host);
            e->host_ordinal = v->ordinal;
        } else {
            struct rm_device *e = &a->devices[hit->ordinal];
            if (e->floor_events_us <= 0 && v->floor_events_us > 0)
                e->floor_events_us = v->floor_events_us;
            if (e->floor_hw_us <= 0 && v->floor_hw_us > 0)
                e->floor_hw_us = v->floor_hw_us;
        }
        map[d] = hit->ordinal;
    }
    return o->oom ? -1 : 0;
}

/* The row of kind and mangled name in the hash *rows, made when new. */
static struct macc_row *row_of(struct macc *a, struct macc_row **rows, size_t *nrows,
                               const struct rm_row *w)
{
    size_t len = strlen(w->mangled) + 1;
    char key[len + 1];
    struct macc_row *r;

    key[0] = (char)('0' + w->kind);
    memcpy(key + 1, w->mangled, len);
    HASH_FIND(hh, *rows, key, len, r);
    if (r)
        return r;
    if (!(r = calloc(1, sizeof *r)) || !(r->key = malloc(len))) {
        free(r);
        return NULL;
    }
    memcpy(r->key, key, len);
    r->order = (*nrows)++;
    r->row.kind = w->kind;
    r->row.name = model_strdup(a->out, w->name);
    r->row.mangled = model_strdup(a->out, w->mangled);
    HASH_ADD_KEYPTR(hh, *rows, r->key, len, r);
    return a->out->oom ? NULL : r;
}

/* The row's launch shapes (and the shapes past those it kept) added into r. */
static int fold_shapes(struct macc_row *r, const struct rm_row *w, const char *file, char *err,
                       size_t errsz)
{
    for (size_t i = 0; i < w->nshapes; i++) {
        const struct rm_shape *s = &w->shapes[i];
        struct macc_shape *e = NULL;
        for (size_t j = 0; j < r->nshapes && !e; j++)
            if (!memcmp(r->shapes[j].grid, s->grid, sizeof s->grid) &&
                !memcmp(r->shapes[j].block, s->block, sizeof s->block) &&
                r->shapes[j].smem == s->smem)
                e = &r->shapes[j];
        if (!e) {
            if (!(e = macc_push(&r->shapes, &r->nshapes, &r->capshapes, sizeof *e)))
                return -1;
            memcpy(e->grid, s->grid, sizeof e->grid);
            memcpy(e->block, s->block, sizeof e->block);
            e->smem = s->smem;
            e->b.order = r->nshapes - 1;
        }
        if (add_block(&e->b, &s->st, file, err, errsz) != 0)
            return -1;
    }
    if (w->other) {
        r->has_other = true;
        r->other_shapes += w->other->shapes;
        r->other_untracked = r->other_untracked || w->other->untracked;
        if (add_block(&r->other, &w->other->st, file, err, errsz) != 0)
            return -1;
    }
    return 0;
}

static int fold_kernel(struct macc *a, const struct model *m, const struct rm_row *w,
                       size_t input, const int *devmap, const char *file, char *err, size_t errsz)
{
    struct macc_row *r = row_of(a, &a->rows, &a->nrows, w);

    if (!r)
        return -1;
    for (int i = 0; i < RM_NCOUNTS; i++)
        r->row.n[i] += w->n[i];
    if (add_block(&r->all, &w->st, file, err, errsz) != 0)
        return -1;
    r->total_us += w->st.v[RS_TOTAL] * 1000.0;
    r->estimated = r->estimated || w->total_estimated;
    for (size_t d = 0; d < w->ndev; d++) {
        const struct rm_dev_part *p = &w->dev[d];
        int md = -1;
        for (size_t j = 0; j < m->ndevices; j++)
            if (m->devices[j].ordinal == p->device)
                md = devmap[j];
        if (md < 0)
            md = p->device; /* a device the report does not list: as it is */
        else if (p->st.timed) {
            const struct rm_device *v = &a->devices[md];
            r->floor_events = v->floor_events_us > r->floor_events ? v->floor_events_us
                                                                    : r->floor_events;
            r->floor_hw = v->floor_hw_us > r->floor_hw ? v->floor_hw_us : r->floor_hw;
        }
        if (!a->keep_rows)
            continue;
        struct macc_dev *e = NULL;
        for (size_t j = 0; j < r->ndevs && !e; j++)
            if (r->devs[j].device == md)
                e = &r->devs[j];
        if (!e && !(e = macc_push(&r->devs, &r->ndevs, &r->capdevs, sizeof *e)))
            return -1;
        e->device = md;
        if (add_block(&e->b, &p->st, file, err, errsz) != 0)
            return -1;
    }
    if (w->hw) {
        r->has_hw = true;
        add_stats(&r->hw, &w->hw->st);
    }
    if (w->launch) {
        r->has_launch = true;
        if (add_block(&r->launch, &w->launch->api, file, err, errsz) != 0 ||
            add_block(&r->queue, &w->launch->queue, file, err, errsz) != 0)
            return -1;
    }
    if (fold_shapes(r, w, file, err, errsz) != 0)
        return -1;
    /* The report's part, and the spread. */
    struct rm_rank_end me = { (long)input, m->rank, NULL, w->st.v[RS_TOTAL] };
    if (a->keep_rows) {
        struct rm_rank_part *p = macc_push(&r->ranks, &r->nranks, &r->capranks, sizeof *p);
        if (!p)
            return -1;
        *p = (struct rm_rank_part){ (long)input, m->rank, a->out->merged->inputs[input].host,
                                    m->has_pid ? m->pid : -1, w->n[RC_CALLS], w->st.timed,
                                    w->st.v[RS_TOTAL], w->st.timed > 0, w->st.v[RS_MEAN] };
    }
    if (!r->nin++ || me.total_ms > r->slow.total_ms)
        r->slow = me;
    if (r->nin == 1 || me.total_ms < r->fast.total_ms)
        r->fast = me;
    r->sum_total_ms += me.total_ms;
    /* The ranks side by side: compute, or the collectives (a graph timed by its kernel nodes
     * is in their rows already), judged once per row and pattern. */
    if (r->comm_pat != a->pat + 1) {
        r->comm = merge_is_comm(a, w);
        r->comm_pat = a->pat + 1;
    }
    if (w->kind == REPORT_KERNEL || (w->kind == REPORT_GRAPH && !w->n[RC_BY_NODES])) {
        if (r->comm)
            a->nccl_ms[input] += w->st.v[RS_TOTAL];
        else
            a->compute_ms[input] += w->st.v[RS_TOTAL];
    }
    return 0;
}

static int fold_memops(struct macc *a, const struct model *m, const char *file, char *err,
                       size_t errsz)
{
    a->out->memops_on = a->out->memops_on || m->memops_on;
    for (size_t i = 0; i < m->nmemops; i++) {
        const struct rm_row *w = &m->memops[i];
        size_t j = 0;
        while (j < a->nmemops && strcmp(a->memops[j].name, w->name) != 0)
            j++;
        if (j == a->nmemops) {
            size_t cap = a->capmemops, n = a->nmemops;
            struct rm_row *e = macc_push(&a->memops, &a->nmemops, &a->capmemops, sizeof *e);
            if (!e || !macc_push(&a->memop_blocks, &n, &cap, sizeof *a->memop_blocks))
                return -1;
            e->kind = REPORT_MEMOP;
            e->name = model_strdup(a->out, w->name);
            e->mangled = "";
        }
        for (int c = 0; c < RM_NCOUNTS; c++)
            a->memops[j].n[c] += w->n[c];
        if (add_block(&a->memop_blocks[j], &w->st, file, err, errsz) != 0)
            return -1;
    }
    return 0;
}

static int fold_ranges(struct macc *a, const struct model *m, const char *file, char *err,
                        size_t errsz)
{
    const struct rm_ranges *g = m->ranges;
    struct model *o = a->out;

    if (!g)
        return 0;
    if (!a->any_ranges) {
        if (!(o->ranges = model_alloc(o, sizeof *o->ranges)))
            return -1;
        a->attribution = model_strdup(o, g->attribution);
        a->nvtx = model_strdup(o, g->nvtx);
    } else {
        a->attribution = same_or(o, false, a->attribution, g->attribution, "mixed");
        a->nvtx = same_or(o, false, a->nvtx, g->nvtx, "mixed");
    }
    a->any_ranges = true;
    o->ranges->unmatched_pops += g->unmatched_pops;
    o->ranges->too_deep += g->too_deep;
    for (size_t i = 0; i < g->nby_name; i++) {
        const struct rm_range *rg = &g->by_name[i];
        size_t len = rg->name ? strlen(rg->name) + 1 : 0;
        char key[len + 2];
        struct macc_range *e;
        key[0] = rg->name ? '=' : '\0';
        if (rg->name)
            memcpy(key + 1, rg->name, len);
        HASH_FIND(hh, a->ranges, key, len + 1, e);
        if (!e) {
            if (!(e = calloc(1, sizeof *e)) || !(e->key = malloc(len + 1))) {
                free(e);
                return -1;
            }
            memcpy(e->key, key, len + 1);
            e->order = a->nranges++;
            e->rg.name = model_strdup(o, rg->name);
            HASH_ADD_KEYPTR(hh, a->ranges, e->key, len + 1, e);
        }
        e->rg.closed += rg->closed;
        e->rg.open += rg->open;
        e->rg.timed += rg->timed;
        e->rg.wall_ms += rg->wall_ms;
        e->rg.total_ms += rg->total_ms;
        for (size_t j = 0; j < rg->nrows; j++) {
            struct macc_row *r = row_of(a, &e->rows, &e->nrows, &rg->rows[j]);
            if (!r || add_block(&r->all, &rg->rows[j].st, file, err, errsz) != 0)
                return -1;
        }
    }
    return o->oom ? -1 : 0;
}

int macc_fold(struct macc *a, const struct model *m, size_t input, const char *file, char *err,
              size_t errsz)
{
    int small[16], *devmap = m->ndevices <= 16 ? small : malloc(m->ndevices * sizeof *devmap);
    int rc = -1;

    err[0] = '\0';
    if (!devmap)
        goto out;
    if (fold_input(a, m, file, input) != 0 || fold_header(a, m, file) != 0 ||
        fold_devices(a, m, devmap) != 0)
        goto out;
    a->rank_of[input] = m->rank;
    if (merge_comm_pattern(a, m) != 0)
        goto out;
    for (size_t i = 0; i < m->nrows; i++)
        if (fold_kernel(a, m, &m->rows[i], input, devmap, file, err, errsz) != 0)
            goto out;
    if (fold_memops(a, m, file, err, errsz) != 0 || fold_ranges(a, m, file, err, errsz) != 0 ||
        macc_fold_busy(a, m, input, devmap) != 0)
        goto out;
    a->folded = input + 1;
    rc = 0;
out:
    if (devmap != small)
        free(devmap);
    if (rc != 0 && !err[0])
        snprintf(err, errsz, "out of memory");
    return rc;
}

int macc_unread(struct macc *a, const char *file, const char *why)
{
    char **e = macc_push(&a->unread, &a->nunread, &a->capunread, sizeof *a->unread);

    if (!e || asprintf(e, "%s: %s", file, why) < 0) {
        if (e)
            *e = NULL, a->nunread--;
        return -1;
    }
    return 0;
}
