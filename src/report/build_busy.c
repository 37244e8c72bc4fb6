/* build_busy.c - the report model's launch calls and queue times per row, the GPUs' busy
 * time, and communication (build.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "build.h"

#include <stdlib.h>
#include <string.h>

static int launch_stats(struct model *m, struct rm_stats *o, const struct stats *s,
                        const struct sketch *sk)
{
    build_stats(o, s, s->n ? sk : NULL, s->sum, 0);
    return (o->hist = build_hist(m, s->n ? sk : NULL)) ? 0 : -1;
}

int build_launch(struct model *m, struct rm_row *w, const struct report_kernel *k,
                 double kernel_mean_us)
{
    const struct report_launch *l = k->launch;

    if (!l || (!l->api.n && !l->queue.n))
        return 0;
    if (!(w->launch = model_alloc(m, sizeof *w->launch)) ||
        launch_stats(m, &w->launch->api, &l->api, l->api_sk) != 0 ||
        launch_stats(m, &w->launch->queue, &l->queue, l->queue_sk) != 0)
        return -1;
    w->launch->launch_bound = l->api.n && w->st.timed && l->api.mean >= kernel_mean_us;
    w->launch->queue_long = l->queue.n && l->queue.mean >= RM_QUEUE_LONG_US;
    return 0;
}

static void gaps(struct model *m, struct rm_gaps *o, const struct report_gaps *g)
{
    o->count = g->count;
    o->total_ms = g->total_ms;
    memcpy(o->bin_count, g->bin_count, sizeof o->bin_count);
    memcpy(o->bin_ms, g->bin_ms, sizeof o->bin_ms);
    o->ntop = g->ntop;
    for (size_t i = 0; i < g->ntop; i++) {
        const struct report_gap *x = &g->top[i];
        o->top[i] = (struct rm_gap){ x->len_us, x->at_ms, model_strdup(m, x->before),
                                     model_strdup(m, x->before_mangled), model_strdup(m, x->after),
                                     model_strdup(m, x->after_mangled) };
    }
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static int busy_dev(struct model *m, struct rm_busy_dev *o, const struct report_busy_dev *d)
{
    o->device = d->device;
    o->method = model_strdup(m, d->method);
    o->input = o->rank = -1;
    o->v[RB_SPAN] = d->span_ms;
    o->v[RB_BUSY] = d->busy_ms;
    o->v[RB_PERCENT] = pct(d->busy_ms, d->span_ms);
    o->v[RB_IDLE] = d->span_ms > d->busy_ms ? d->span_ms - d->busy_ms : 0;
    o->v[RB_KERNEL_MS] = d->kernel_ms;
    o->v[RB_COPY_MS] = d->copy_ms;
    o->v[RB_CONCURRENCY] = d->busy_ms > 0 ? (d->kernel_ms + d->copy_ms) / d->busy_ms : 0;
    o->n[RBC_KERNELS] = d->kernels;
    o->n[RBC_COPIES] = d->copies;
    o->n[RBC_LATE] = d->late;
    o->n[RBC_OTHER_STREAMS] = d->other_streams;
    gaps(m, &o->gaps, &d->gaps);
    if (d->nstreams && !(o->streams = model_alloc(m, d->nstreams * sizeof *o->streams)))
        return -1;
    for (size_t i = 0; i < d->nstreams; i++, o->nstreams++) {
        const struct report_busy_stream *s = &d->streams[i];
        struct rm_busy_stream *t = &o->streams[i];
        t->stream = s->stream;
        t->intervals = s->intervals;
        t->busy_ms = s->busy_ms;
        t->busy_percent = pct(s->busy_ms, d->span_ms);
        gaps(m, &t->gaps, &s->gaps);
    }
    return m->oom ? -1 : 0;
}

static int build_comm(struct model *m, const struct report *r)
{
    const struct report_busy *b = r->busy;
    struct rm_comm *c;
    size_t n = 0;

    if (!r->comm_pattern)
        return 0;
    if (!(c = m->comm = model_alloc(m, sizeof *c)))
        return -1;
    c->pattern = model_strdup(m, r->comm_pattern);
    c->least = -1;
    for (size_t i = 0; b && i < b->ndevs; i++)
        n += b->devs[i].comm_kernels > 0;
    if (n && !(c->devs = model_alloc(m, n * sizeof *c->devs)))
        return -1;
    for (size_t i = 0; b && i < b->ndevs; i++) {
        const struct report_busy_dev *d = &b->devs[i];
        if (!d->comm_kernels)
            continue;
        struct rm_comm_dev *o = &c->devs[c->ndevs++];
        o->device = d->device;
        o->method = model_strdup(m, d->method);
        o->input = o->rank = -1;
        o->kernels = d->comm_kernels;
        o->c[RK_COMM_MS] = d->comm_ms;
        o->c[RK_COMM_BUSY] = d->comm_busy_ms;
        o->c[RK_COMPUTE_BUSY] = d->compute_busy_ms;
        o->c[RK_OVERLAP] = d->overlap_ms;
        o->c[RK_OVERLAP_PERCENT] = pct(d->overlap_ms, d->comm_busy_ms);
        o->c[RK_EXPOSED] = d->comm_busy_ms > d->overlap_ms ? d->comm_busy_ms - d->overlap_ms : 0;
    }
    return m->oom ? -1 : 0;
}

int build_busy(struct model *m, const struct report *r)
{
    const struct report_busy *b = r->busy;
    struct rm_busy *o;

    m->launch_columns = r->launch_columns;
    if (build_comm(m, r) != 0)
        return -1;
    if (!b)
        return 0;
    if (!(o = m->busy = model_alloc(m, sizeof *o)))
        return -1;
    o->unplaced = b->unplaced;
    if (b->ndevs && !(o->devs = model_alloc(m, b->ndevs * sizeof *o->devs)))
        return -1;
    for (size_t i = 0; i < b->ndevs; i++, o->ndevs++)
        if (busy_dev(m, &o->devs[i], &b->devs[i]) != 0)
            return -1;
    if (b->nranges && !(o->ranges = model_alloc(m, b->nranges * sizeof *o->ranges)))
        return -1;
    for (size_t i = 0; i < b->nranges; i++, o->nranges++) {
        const struct report_busy_range *g = &b->ranges[i];
        struct rm_busy_range *t = &o->ranges[i];
        t->name = model_strdup(m, g->name);
        t->wall_ms = g->wall_ms;
        t->busy_ms = g->busy_ms;
        t->has_percent = g->wall_ms > 0;
        t->busy_percent = pct(g->busy_ms, g->wall_ms);
        t->intervals = g->intervals;
    }
    return m->oom ? -1 : 0;
}
