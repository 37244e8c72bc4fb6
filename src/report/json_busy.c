/* json_busy.c - the JSON report's launch calls and queue times (in a kernel's row), the GPUs'
 * busy time and communication (jsonw.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonw.h"

#include "report.h"

static void launch_block(struct jw *w, const char *key, const struct rm_stats *s)
{
    if (!s->timed) {
        jw_null(w, key);
        return;
    }
    jw_open(w, key, '{', JW_INLINE, 0, 0);
    jw_u64(w, "timed", s->timed);
    json_stats_range(w, s, RS_MEAN, RS_M2);
    json_quantiles(w, s);
    json_histogram(w, s->hist);
    jw_close(w);
}

void json_launch(struct jw *w, const struct rm_row *k)
{
    const struct rm_launch *l = k->launch;

    if (!l) {
        jw_null(w, "launch");
        jw_null(w, "queue");
        jw_bool(w, "launch_bound", false);
        jw_bool(w, "queue_long", false);
        return;
    }
    launch_block(w, "launch", &l->api);
    launch_block(w, "queue", &l->queue);
    jw_bool(w, "launch_bound", l->launch_bound);
    jw_bool(w, "queue_long", l->queue_long);
}

/* A merged report's entry: where it came from. */
static void origin(struct jw *w, long input, long rank, const char *host)
{
    if (input < 0)
        return;
    jw_i64(w, "input", input);
    if (rank >= 0)
        jw_i64(w, "rank", rank);
    else
        jw_null(w, "rank");
    jw_str_or_null(w, "host", host);
}

static void gap_name(struct jw *w, const char *key, const char *name, const char *mangled)
{
    char k[32];

    jw_str_or_null(w, key, name);
    snprintf(k, sizeof k, "%s_mangled", key);
    jw_str_or_null(w, k, mangled);
}

static void json_gaps(struct jw *w, const struct rm_gaps *g, int indent)
{
    jw_open(w, "gaps", '{', JW_INLINE, 0, 0);
    jw_u64(w, "count", g->count);
    jw_num(w, "total_ms", g->total_ms);
    jw_open(w, "histogram", '{', JW_INLINE, 0, 0);
    for (int b = 0; b < RM_NGAP_BINS; b++) {
        jw_open(w, rm_gap_bin_key[b], '{', JW_TIGHT, 0, 0);
        jw_u64(w, "count", g->bin_count[b]);
        jw_num(w, "total_ms", g->bin_ms[b]);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "largest", '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < g->ntop; i++) {
        const struct rm_gap *x = &g->top[i];
        jw_break(w, indent);
        jw_open(w, NULL, '{', JW_TIGHT, 0, 0);
        jw_num(w, "gap_us", x->len_us);
        jw_num(w, "at_ms", x->at_ms);
        gap_name(w, "before", x->before, x->before_mangled);
        gap_name(w, "after", x->after, x->after_mangled);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

static void busy_dev(struct jw *w, const struct rm_busy_dev *d)
{
    jw_open(w, NULL, '{', JW_INLINE, 0, 0);
    jw_i64(w, "device", d->device);
    jw_str(w, "method", d->method);
    origin(w, d->input, d->rank, d->host);
    for (int i = 0; i < RM_NBUSY; i++)
        jw_num(w, rm_busy_key[i], d->v[i]);
    for (int i = 0; i < RM_NBUSY_COUNTS; i++)
        jw_u64(w, rm_busy_count_key[i], d->n[i]);
    jw_break(w, 8);
    json_gaps(w, &d->gaps, 10);
    jw_break(w, 8);
    jw_open(w, "streams", '[', JW_BLOCK, 10, 8);
    for (size_t i = 0; i < d->nstreams; i++) {
        const struct rm_busy_stream *s = &d->streams[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_u64(w, "stream", s->stream);
        jw_u64(w, "intervals", s->intervals);
        jw_num(w, "busy_ms", s->busy_ms);
        jw_num(w, "busy_percent", s->busy_percent);
        json_gaps(w, &s->gaps, 12);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

void json_busy(struct jw *w, const struct model *m)
{
    const struct rm_busy *b = m->busy;

    if (!b) {
        jw_null(w, "gpu_busy");
        return;
    }
    jw_open(w, "gpu_busy", '{', JW_INLINE, 0, 0);
    jw_u64(w, "unplaced", b->unplaced);
    jw_open(w, "devices", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < b->ndevs; i++)
        busy_dev(w, &b->devs[i]);
    jw_close(w);
    jw_open(w, "ranges", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < b->nranges; i++) {
        const struct rm_busy_range *g = &b->ranges[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_str_or_null(w, "name", g->name);
        if (g->name)
            jw_bytes_member(w, "name", g->name);
        jw_num(w, "wall_ms", g->wall_ms);
        jw_num(w, "busy_ms", g->busy_ms);
        if (g->has_percent)
            jw_num(w, "busy_percent", g->busy_percent);
        else
            jw_null(w, "busy_percent");
        jw_u64(w, "intervals", g->intervals);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

void json_comm(struct jw *w, const struct model *m)
{
    const struct rm_comm *c = m->comm;

    if (!c) {
        jw_null(w, "communication");
        return;
    }
    jw_open(w, "communication", '{', JW_INLINE, 0, 0);
    jw_str(w, "pattern", c->pattern);
    jw_open(w, "devices", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < c->ndevs; i++) {
        const struct rm_comm_dev *d = &c->devs[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_i64(w, "device", d->device);
        jw_str(w, "method", d->method);
        origin(w, d->input, d->rank, d->host);
        jw_u64(w, "kernels", d->kernels);
        for (int j = 0; j < RM_NCOMM; j++)
            jw_num(w, rm_comm_key[j], d->c[j]);
        jw_close(w);
    }
    jw_close(w);
    if (c->least >= 0)
        jw_i64(w, "least_waiting", c->least);
    else
        jw_null(w, "least_waiting");
    jw_close(w);
}
