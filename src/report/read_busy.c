/* read_busy.c - the JSON report reader's launch calls and queue times (a kernel's row), the
 * GPUs' busy time and communication (read.h). Absent (an older report): none. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "read.h"

#include <limits.h>
#include <string.h>

#define OOM(r, where) rd_fail(r, where, "could not be read: out of memory")

static bool launch_block(struct rd *r, const struct jv *k, const char *where, const char *key,
                         struct rm_stats *s, bool *any)
{
    const struct jv *o = rd_get(r, k, where, key, JV_OBJECT, true, false);
    char at[160];

    if (!o || o->type != JV_OBJECT)
        return !r->failed;
    *any = true;
    rd_at(at, sizeof at, where, key);
    return rd_stats(r, o, at, s, 0);
}

bool rd_launch(struct rd *r, const struct jv *k, const char *where, struct rm_row *w)
{
    struct rm_launch l;
    bool any = false;

    memset(&l, 0, sizeof l);
    if (!launch_block(r, k, where, "launch", &l.api, &any) ||
        !launch_block(r, k, where, "queue", &l.queue, &any) ||
        !rd_bool(r, k, where, "launch_bound", false, &l.launch_bound) ||
        !rd_bool(r, k, where, "queue_long", false, &l.queue_long))
        return false;
    if (!any)
        return true;
    if (!(w->launch = model_alloc(r->m, sizeof *w->launch)))
        return OOM(r, where);
    *w->launch = l;
    return true;
}

/* A merged report's entry: its input, rank and host (absent: none). */
static bool rd_origin(struct rd *r, const struct jv *e, const char *where, long *input,
                      long *rank, const char **host)
{
    *input = *rank = -1;
    *host = NULL;
    if (!jv_get(e, "input"))
        return true;
    return rd_long(r, e, where, "input", input) && rd_long(r, e, where, "rank", rank) &&
           rd_str(r, e, where, "host", false, NULL, host);
}

static bool rd_gap_name(struct rd *r, const struct jv *e, const char *where, const char *key,
                        const char **name, const char **mangled)
{
    char k[32];

    snprintf(k, sizeof k, "%s_mangled", key);
    return rd_str(r, e, where, key, false, NULL, name) &&
           rd_str(r, e, where, k, false, NULL, mangled);
}

static bool rd_gaps(struct rd *r, const struct jv *o, const char *where, struct rm_gaps *g)
{
    const struct jv *gs = rd_get(r, o, where, "gaps", JV_OBJECT, false, false), *h, *top;
    char at[192], hb[224], ei[224];

    if (!gs)
        return !r->failed;
    rd_at(at, sizeof at, where, "gaps");
    if (!rd_count(r, gs, at, "count", false, 0, &g->count) ||
        !rd_num(r, gs, at, "total_ms", false, false, 0, &g->total_ms, NULL))
        return false;
    if ((h = rd_get(r, gs, at, "histogram", JV_OBJECT, false, false))) {
        rd_at(hb, sizeof hb, at, "histogram");
        for (int b = 0; b < RM_NGAP_BINS; b++) {
            const struct jv *bin = rd_get(r, h, hb, rm_gap_bin_key[b], JV_OBJECT, false, false);
            char bb[256];
            if (!bin) {
                if (r->failed)
                    return false;
                continue;
            }
            rd_at(bb, sizeof bb, hb, rm_gap_bin_key[b]);
            if (!rd_count(r, bin, bb, "count", false, 0, &g->bin_count[b]) ||
                !rd_num(r, bin, bb, "total_ms", false, false, 0, &g->bin_ms[b], NULL))
                return false;
        }
    } else if (r->failed) {
        return false;
    }
    if (!(top = rd_get(r, gs, at, "largest", JV_ARRAY, false, false)))
        return !r->failed;
    rd_at(hb, sizeof hb, at, "largest");
    for (size_t i = 0; i < top->n && i < RM_GAP_TOP; i++, g->ntop++) {
        const struct jv *e = &top->items[i];
        struct rm_gap *x = &g->top[i];
        rd_index(ei, sizeof ei, hb, i);
        if (!rd_object(r, e, ei) || !rd_num(r, e, ei, "gap_us", true, false, 0, &x->len_us, NULL) ||
            !rd_num(r, e, ei, "at_ms", false, false, 0, &x->at_ms, NULL) ||
            !rd_gap_name(r, e, ei, "before", &x->before, &x->before_mangled) ||
            !rd_gap_name(r, e, ei, "after", &x->after, &x->after_mangled))
            return false;
    }
    return true;
}

static bool rd_busy_dev(struct rd *r, const struct jv *e, const char *where, struct rm_busy_dev *d)
{
    const struct jv *ss;
    uint64_t dev;
    char at[160], ei[192];

    if (!rd_object(r, e, where) || !rd_count_to(r, e, where, "device", true, INT_MAX, &dev) ||
        !rd_str(r, e, where, "method", true, NULL, &d->method) ||
        !rd_origin(r, e, where, &d->input, &d->rank, &d->host))
        return false;
    d->device = (int)dev;
    for (int i = 0; i < RM_NBUSY; i++)
        if (!rd_num(r, e, where, rm_busy_key[i], false, false, 0, &d->v[i], NULL))
            return false;
    for (int i = 0; i < RM_NBUSY_COUNTS; i++)
        if (!rd_count(r, e, where, rm_busy_count_key[i], false, 0, &d->n[i]))
            return false;
    if (!rd_gaps(r, e, where, &d->gaps))
        return false;
    if (!(ss = rd_get(r, e, where, "streams", JV_ARRAY, false, false)) || !ss->n)
        return !r->failed;
    if (!(d->streams = model_alloc(r->m, ss->n * sizeof *d->streams)))
        return OOM(r, where);
    rd_at(at, sizeof at, where, "streams");
    for (size_t i = 0; i < ss->n; i++, d->nstreams++) {
        const struct jv *x = &ss->items[i];
        struct rm_busy_stream *s = &d->streams[i];
        rd_index(ei, sizeof ei, at, i);
        if (!rd_object(r, x, ei) || !rd_count(r, x, ei, "stream", false, 0, &s->stream) ||
            !rd_count(r, x, ei, "intervals", false, 0, &s->intervals) ||
            !rd_num(r, x, ei, "busy_ms", false, false, 0, &s->busy_ms, NULL) ||
            !rd_num(r, x, ei, "busy_percent", false, false, 0, &s->busy_percent, NULL) ||
            !rd_gaps(r, x, ei, &s->gaps))
            return false;
    }
    return true;
}

bool rd_busy(struct rd *r, const struct jv *root)
{
    const struct jv *b = rd_get(r, root, "", "gpu_busy", JV_OBJECT, true, false), *ds, *rs;
    struct rm_busy *o;
    char at[64];

    if (!b || b->type != JV_OBJECT)
        return !r->failed;
    if (!(o = r->m->busy = model_alloc(r->m, sizeof *o)))
        return OOM(r, "gpu_busy");
    if (!rd_count(r, b, "gpu_busy", "unplaced", false, 0, &o->unplaced) ||
        !(ds = rd_get(r, b, "gpu_busy", "devices", JV_ARRAY, false, true)))
        return false;
    if (ds->n && !(o->devs = model_alloc(r->m, ds->n * sizeof *o->devs)))
        return OOM(r, "gpu_busy");
    for (size_t i = 0; i < ds->n; i++, o->ndevs++)
        if (!rd_busy_dev(r, &ds->items[i], rd_index(at, sizeof at, "gpu_busy.devices", i),
                         &o->devs[i]))
            return false;
    if (!(rs = rd_get(r, b, "gpu_busy", "ranges", JV_ARRAY, false, false)) || !rs->n)
        return !r->failed;
    if (!(o->ranges = model_alloc(r->m, rs->n * sizeof *o->ranges)))
        return OOM(r, "gpu_busy");
    for (size_t i = 0; i < rs->n; i++, o->nranges++) {
        const struct jv *e = &rs->items[i];
        struct rm_busy_range *g = &o->ranges[i];
        rd_index(at, sizeof at, "gpu_busy.ranges", i);
        if (!rd_object(r, e, at) || !rd_raw(r, e, at, "name", false, NULL, &g->name) ||
            !rd_num(r, e, at, "wall_ms", false, false, 0, &g->wall_ms, NULL) ||
            !rd_num(r, e, at, "busy_ms", false, false, 0, &g->busy_ms, NULL) ||
            !rd_num(r, e, at, "busy_percent", false, true, 0, &g->busy_percent, &g->has_percent) ||
            !rd_count(r, e, at, "intervals", false, 0, &g->intervals))
            return false;
    }
    return true;
}

bool rd_comm(struct rd *r, const struct jv *root)
{
    const struct jv *c = rd_get(r, root, "", "communication", JV_OBJECT, true, false), *ds;
    struct rm_comm *o;
    char at[64];

    if (!c || c->type != JV_OBJECT)
        return !r->failed;
    if (!(o = r->m->comm = model_alloc(r->m, sizeof *o)))
        return OOM(r, "communication");
    if (!rd_str(r, c, "communication", "pattern", true, NULL, &o->pattern) ||
        !rd_long(r, c, "communication", "least_waiting", &o->least) ||
        !(ds = rd_get(r, c, "communication", "devices", JV_ARRAY, false, true)))
        return false;
    if (ds->n && !(o->devs = model_alloc(r->m, ds->n * sizeof *o->devs)))
        return OOM(r, "communication");
    for (size_t i = 0; i < ds->n; i++, o->ndevs++) {
        const struct jv *e = &ds->items[i];
        struct rm_comm_dev *d = &o->devs[i];
        uint64_t dev;
        rd_index(at, sizeof at, "communication.devices", i);
        if (!rd_object(r, e, at) || !rd_count_to(r, e, at, "device", true, INT_MAX, &dev) ||
            !rd_str(r, e, at, "method", true, NULL, &d->method) ||
            !rd_origin(r, e, at, &d->input, &d->rank, &d->host) ||
            !rd_count(r, e, at, "kernels", false, 0, &d->kernels))
            return false;
        d->device = (int)dev;
        for (int j = 0; j < RM_NCOMM; j++)
            if (!rd_num(r, e, at, rm_comm_key[j], false, false, 0, &d->c[j], NULL))
                return false;
    }
    if (o->least >= (long)o->ndevs)
        return rd_fail(r, "communication", "least_waiting is %ld, past its %zu devices", o->least,
                       o->ndevs);
    return true;
}
