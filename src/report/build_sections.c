/* build_sections.c - the report model's header, memory operations and ranges, from the data
 * a run gathered, and what every part of model_build uses: a block's statistics, histograms,
 * counts (build.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The q-quantile of samples s whose distribution is sk (sketch.h: within 1 %), or -1 when
 * there are none (or no sketch). */
static double quantile(const struct sketch *sk, const struct stats *s, double q)
{
    if (!s->n || !sk)
        return -1;
    return sketch_quantile(sk, q, s->min, s->max);
}

void build_stats(struct rm_stats *o, const struct stats *s, const struct sketch *sk,
                 double total_us, double whole_us)
{
    o->timed = s->n;
    o->v[RS_TOTAL] = total_us / 1000.0;
    o->v[RS_PERCENT] = whole_us > 0 ? 100.0 * total_us / whole_us : 0.0;
    o->v[RS_MEAN] = s->mean;
    o->v[RS_MIN] = s->min;
    o->v[RS_MAX] = s->max;
    o->v[RS_STDDEV] = stats_stddev(s);
    o->v[RS_SUM] = s->sum;
    o->v[RS_M2] = s->m2;
    for (int j = 0; j < RM_NQ; j++)
        o->v[RS_P50 + j] = quantile(sk, s, rm_q[j]);
}

struct rm_hist *build_hist(struct model *m, const struct sketch *sk)
{
    struct rm_hist *h = model_alloc(m, sizeof *h);
    size_t n = 0;

    if (!h)
        return NULL;
    h->gamma = SKETCH_GAMMA;
    h->first_edge = SKETCH_MIN_US;
    for (int i = 0; sk && i < SKETCH_BUCKETS; i++)
        n += sk->c[i] != 0;
    if (n && !(h->b = model_alloc(m, n * sizeof *h->b)))
        return NULL;
    for (int i = 0; sk && i < SKETCH_BUCKETS; i++)
        if (sk->c[i]) {
            h->b[h->n].i = i;
            h->b[h->n].edge = sketch_lower(i);
            h->b[h->n].count = sk->c[i];
            h->n++;
        }
    return h;
}

struct stats build_all_devices(const struct report *r, const struct stats *per)
{
    struct stats s = { 0 };

    for (int d = 0; per && d < r->ndevices; d++)
        stats_merge(&s, &per[d]);
    return s;
}

void build_counts(struct rm_row *w, const struct report_kernel *k)
{
    w->n[RC_CALLS] = k->calls;
    w->n[RC_WARMUP] = k->warmup_skipped;
    w->n[RC_CAPTURED] = k->captured;
    w->n[RC_DROPPED] = k->dropped;
    w->n[RC_FAILED] = k->failed;
    w->n[RC_INCOMPLETE] = k->incomplete;
    w->n[RC_UNGATED] = k->ungated;
    w->n[RC_UNSAMPLED] = k->unsampled;
    w->n[RC_BY_NODES] = k->by_nodes;
    w->n[RC_IN_GRAPH] = k->in_graph;
    w->n[RC_CUPTI_TIMED] = k->hw_timed;
    w->n[RC_OUTSIDE] = k->outside_range;
    w->n[RC_BYTES] = k->bytes;
    w->n[RC_TIMED_BYTES] = k->timed_bytes;
    w->n[RC_PAUSED] = k->paused;
}

/* A wall-clock time as ISO 8601 in UTC to the millisecond; NULL when 0 (unknown). */
static const char *iso_time(struct model *m, double unix_s)
{
    char buf[40], out[48];
    struct tm tm;
    time_t t = (time_t)unix_s;

    if (unix_s <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
        return NULL;
    snprintf(out, sizeof out, "%s.%03dZ", buf, (int)((unix_s - (double)t) * 1000) % 1000);
    return model_strdup(m, out);
}

static bool is(const char *s, const char *dflt, const char *want)
{
    return strcmp(s ? s : dflt, want) == 0;
}

static int build_devices(struct model *m, const struct report *r)
{
    if (r->ndevices > 0 &&
        !(m->devices = model_alloc(m, (size_t)r->ndevices * sizeof *m->devices)))
        return -1;
    for (int d = 0; d < r->ndevices; d++) {
        const struct report_device *v = &r->devices[d];
        struct rm_device *o = &m->devices[m->ndevices++];
        o->ordinal = v->ordinal;
        o->name = model_strdup(m, v->name);
        o->uuid = v->uuid[0] ? model_strdup(m, v->uuid) : NULL;
        o->driver = model_strdup(m, v->driver);
        o->driver_version = v->driver_version;
        o->floor_events_us = v->floor_events_us;
        o->floor_hw_us = v->floor_hw_us;
    }
    return m->oom ? -1 : 0;
}

/* The settings in force and what became of them: gate, timer, capture range, L2 flush. */
static int build_settings(struct model *m, const struct report *r)
{
    m->timing_method = is(r->timer, "events", "cupti")  ? "cupti-activity"
                       : is(r->timer, "events", "both") ? "cuda-events+cupti-activity"
                                                        : "cuda-events";
    m->launch_gate = !is(r->gate, "off", "off");
    m->gate = model_strdup(m, r->gate ? r->gate : "off");
    m->gate_requested = model_strdup(m, r->gate_requested ? r->gate_requested : m->gate);
    m->gate_unavailable = r->gate_unavailable;
    m->contexts = r->contexts;
    m->warmup = r->warmup;
    m->group_shape = r->group_shape;
    m->timer.requested = model_strdup(m, r->timer_requested ? r->timer_requested : "events");
    m->timer.used = model_strdup(m, r->timer ? r->timer : "events");
    m->timer.note = model_strdup(m, r->timer_note);
    m->timer.cupti_library = model_strdup(m, r->cupti_library);
    m->timer.records_dropped = r->cupti_dropped;
    m->timer.buffers_refused = r->cupti_refused;
    if (r->capture) {
        if (!(m->capture = model_alloc(m, sizeof *m->capture)))
            return -1;
        m->capture->mode = model_strdup(m, r->capture);
        m->capture->starts = r->capture_starts;
        m->capture->stops = r->capture_stops;
        m->capture->ranges = r->capture_ranges;
        m->capture->open_at_exit = r->capture_still_open;
    }
    if (r->flush_l2) {
        if (!(m->flush = model_alloc(m, sizeof *m->flush)))
            return -1;
        m->flush->bytes = r->flush_bytes;
        m->flush->flushes = r->flushes;
        m->flush->refused = r->flush_failed;
        m->flush->contexts = r->flush_contexts;
        m->flush->without_buffer = r->flush_unavailable;
    }
    if (r->budget) {
        if (!(m->budget = model_alloc(m, sizeof *m->budget)))
            return -1;
        *m->budget = (struct rm_budget){
            .percent = r->budget->percent,
            .windows = r->budget->windows,
            .wall_ms = r->budget->wall_ms,
            .spent_ms = r->budget->spent_ms,
            .estimated_percent = r->budget->estimated_percent,
            .timed_ns = r->budget->timed_ns,
            .cupti_on_1_in = r->budget->cupti ? r->budget->cupti_on_1_in : -1,
            .unrecorded = r->budget->unrecorded,
        };
    }
    return m->oom ? -1 : 0;
}

int build_header(struct model *m, const struct report *r)
{
    m->version = model_strdup(m, r->version ? r->version : "");
    m->build = model_strdup(m, r->build ? r->build : "");
    if (r->argc > 0 && !(m->argv = model_alloc(m, (size_t)r->argc * sizeof *m->argv)))
        return -1;
    for (int i = 0; i < r->argc; i++)
        m->argv[i] = model_strdup(m, r->argv[i]);
    m->argc = r->argc;
    m->has_pid = true;
    m->pid = r->pid;
    m->host = model_strdup(m, r->host);
    /* The digits as the launcher wrote them for the text ("007"); the number for the JSON,
     * which has no leading zeros. */
    m->rank_text = model_strdup(m, r->rank);
    m->local_rank_text = model_strdup(m, r->local_rank);
    m->rank = r->rank ? strtol(r->rank, NULL, 10) : -1;
    m->local_rank = r->local_rank ? strtol(r->local_rank, NULL, 10) : -1;
    m->world_size = r->world_size;
    m->job = model_strdup(m, r->job);
    m->start_time = iso_time(m, r->start_unix);
    m->end_time = iso_time(m, r->end_unix);
    if (r->snapshot) {
        struct rm_snapshot *s = m->snapshot = model_alloc(m, sizeof *m->snapshot);
        if (!s)
            return -1;
        s->seq = r->snapshot->seq;
        s->at = iso_time(m, r->snapshot->at_unix);
        s->final = r->snapshot->final;
        s->interval_s = r->snapshot->interval_s;
        s->resets = r->snapshot->resets;
        s->since = iso_time(m, r->snapshot->since_unix);
        s->paused = r->snapshot->paused;
        s->at_unix = r->snapshot->at_unix;
    }
    m->note = model_strdup(m, r->note);
    if (build_settings(m, r) != 0 || build_devices(m, r) != 0)
        return -1;
    return m->oom ? -1 : 0;
}

int build_memops(struct model *m, const struct report *r)
{
    m->memops_on = r->memops;
    if (!r->memops || !r->nmemops)
        return 0;
    if (!(m->memops = model_alloc(m, r->nmemops * sizeof *m->memops)))
        return -1;
    for (size_t i = 0; i < r->nmemops; i++) {
        const struct report_kernel *k = &r->memops_rows[i];
        struct stats s = build_all_devices(r, k->per_dev);
        struct rm_row *w = &m->memops[m->nmemops++];
        w->name = model_strdup(m, k->name ? k->name : k->mangled);
        w->mangled = model_strdup(m, k->mangled ? k->mangled : "");
        w->kind = REPORT_MEMOP;
        build_counts(w, k);
        build_stats(&w->st, &s, k->sk, s.sum, 0);
        w->few_samples = s.n > 0 && s.n < FEW_SAMPLES;
        /* Throughput over the timed calls, in GB/s (10^9 bytes). */
        w->has_gbps = s.n && s.sum > 0;
        w->gbps = w->has_gbps ? (double)k->timed_bytes / s.sum / 1000.0 : 0;
    }
    return m->oom ? -1 : 0;
}

static int build_range(struct model *m, struct rm_range *o, const struct report_range *g)
{
    o->name = model_strdup(m, g->name);
    o->closed = g->closed;
    o->open = g->open;
    o->wall_ms = g->wall_ms;
    o->total_ms = g->total_us / 1000.0;
    o->timed = g->timed;
    if (g->nrows && !(o->rows = model_alloc(m, g->nrows * sizeof *o->rows)))
        return -1;
    for (size_t j = 0; j < g->nrows; j++) {
        const struct report_range_row *w = &g->rows[j];
        struct rm_row *k = &o->rows[o->nrows++];
        k->name = model_strdup(m, w->name ? w->name : w->mangled);
        k->mangled = model_strdup(m, w->mangled);
        k->kind = w->kind;
        build_stats(&k->st, &w->st, w->sk, w->st.sum, g->total_us);
    }
    return m->oom ? -1 : 0;
}

int build_ranges(struct model *m, const struct report *r)
{
    struct rm_ranges *g;

    if (!r->ranges_by_name)
        return 0;
    if (!(g = m->ranges = model_alloc(m, sizeof *g)))
        return -1;
    g->attribution = model_strdup(m, r->range_attribution ? r->range_attribution : "innermost");
    g->nvtx = model_strdup(m, r->nvtx ? r->nvtx : "not injected");
    g->unmatched_pops = r->ranges_unmatched_pops;
    g->too_deep = r->ranges_too_deep;
    if (r->nranges_by_name && !(g->by_name = model_alloc(m, r->nranges_by_name * sizeof *g->by_name)))
        return -1;
    for (size_t i = 0; i < r->nranges_by_name; i++)
        if (build_range(m, &g->by_name[g->nby_name++], &r->ranges_by_name[i]) != 0)
            return -1;
    return m->oom ? -1 : 0;
}
