/* read.c - a saved JSON report (a run's, or one `ktime merge` made) back into the report
 * model (reader.h): the document, the header, devices, totals, a merged report's inputs. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "reader.h"
#include "read.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool rd_timer(struct rd *r, const struct jv *root)
{
    const struct jv *t = rd_get(r, root, "", "timer", JV_OBJECT, true, false);
    struct rm_timer *o = &r->m->timer;
    const char *used = strcmp(r->m->timing_method, "cupti-activity") == 0 ? "cupti"
                       : strcmp(r->m->timing_method, "cuda-events+cupti-activity") == 0 ? "both"
                                                                                        : "events";

    if (t && t->type == JV_OBJECT &&
        (!rd_str(r, t, "timer", "requested", false, NULL, &o->requested) ||
         !rd_str(r, t, "timer", "used", false, NULL, &o->used) ||
         !rd_str(r, t, "timer", "note", false, NULL, &o->note) ||
         !rd_str(r, t, "timer", "cupti_library", false, NULL, &o->cupti_library) ||
         !rd_count(r, t, "timer", "cupti_records_dropped", false, 0, &o->records_dropped) ||
         !rd_count(r, t, "timer", "cupti_buffers_refused", false, 0, &o->buffers_refused)))
        return false;
    if (!o->requested || !*o->requested)
        o->requested = "events";
    if (!o->used)
        o->used = used;
    if (o->note && !*o->note)
        o->note = NULL;
    return !r->failed;
}

/* KTIME_CAPTURE and KTIME_FLUSH_L2: an object each, or null. The capture range's key was
 * "range" in earlier reports (its earlier name). */
static bool rd_capture_flush(struct rd *r, const struct jv *root)
{
    const char *ck = rd_key(root, "capture", "range"); /* earlier name */
    const struct jv *c = rd_get(r, root, "", ck, JV_OBJECT, true, false);
    const struct jv *f = rd_get(r, root, "", "flush_l2", JV_OBJECT, true, false);
    struct model *m = r->m;

    if (c && c->type == JV_OBJECT) {
        if (!(m->capture = model_alloc(m, sizeof *m->capture)) ||
            !rd_str(r, c, ck, "mode", false, "None", &m->capture->mode) ||
            !rd_count(r, c, ck, "starts", false, 0, &m->capture->starts) ||
            !rd_count(r, c, ck, "stops", false, 0, &m->capture->stops) ||
            !rd_count(r, c, ck, "ranges", false, 0, &m->capture->ranges) ||
            !rd_bool(r, c, ck, "open_at_exit", false, &m->capture->open_at_exit))
            return rd_fail(r, ck, "could not be read");
        if (!m->capture->mode)
            m->capture->mode = "None";
    }
    if (f && f->type == JV_OBJECT &&
        (!(m->flush = model_alloc(m, sizeof *m->flush)) ||
         !rd_count(r, f, "flush_l2", "bytes", false, 0, &m->flush->bytes) ||
         !rd_count(r, f, "flush_l2", "flushes", false, 0, &m->flush->flushes) ||
         !rd_count(r, f, "flush_l2", "refused", false, 0, &m->flush->refused) ||
         !rd_count(r, f, "flush_l2", "contexts", false, 0, &m->flush->contexts) ||
         !rd_count(r, f, "flush_l2", "contexts_without_buffer", false, 0,
                   &m->flush->without_buffer)))
        return rd_fail(r, "flush_l2", "could not be read");
    return !r->failed;
}

/* KTIME_BUDGET: an object, or null (absent in earlier reports). */
static bool rd_budget(struct rd *r, const struct jv *root)
{
    const struct jv *b = rd_get(r, root, "", "budget", JV_OBJECT, true, false);
    struct rm_budget *o;
    uint64_t percent = 0;

    if (!b || b->type != JV_OBJECT)
        return !r->failed;
    if (!(o = r->m->budget = model_alloc(r->m, sizeof *o)) ||
        !rd_count_to(r, b, "budget", "percent", true, 100, &percent) ||
        !rd_num(r, b, "budget", "estimated_percent", false, false, 0, &o->estimated_percent,
                NULL) ||
        !rd_num(r, b, "budget", "estimated_ms", false, false, 0, &o->spent_ms, NULL) ||
        !rd_num(r, b, "budget", "wall_ms", false, false, 0, &o->wall_ms, NULL) ||
        !rd_count(r, b, "budget", "windows", false, 0, &o->windows) ||
        !rd_num(r, b, "budget", "timed_launch_ns", false, false, 0, &o->timed_ns, NULL) ||
        !rd_long(r, b, "budget", "cupti_on_1_in", &o->cupti_on_1_in) ||
        !rd_count(r, b, "budget", "unrecorded", false, 0, &o->unrecorded))
        return rd_fail(r, "budget", "could not be read");
    o->percent = (long)percent;
    return true;
}

/* A count or null as the text's digits (NULL for null). */
static const char *digits(struct model *m, long v)
{
    char buf[32];

    if (v < 0)
        return NULL;
    snprintf(buf, sizeof buf, "%ld", v);
    return model_strdup(m, buf);
}

static bool rd_settings(struct rd *r, const struct jv *root)
{
    struct model *m = r->m;
    const char *group;
    uint64_t warmup;
    bool has_gate = jv_get(root, "launch_gate") != NULL;

    if (!rd_str(r, root, "", "timing_method", true, NULL, &m->timing_method) ||
        !rd_str(r, root, "", "launch_gate_mode", false, "off", &m->gate) ||
        !rd_str(r, root, "", "launch_gate_requested", false, NULL, &m->gate_requested) ||
        !rd_bool(r, root, "", "launch_gate", false, &m->launch_gate) ||
        !rd_count(r, root, "", "launch_gate_unavailable_contexts", false, 0,
                  &m->gate_unavailable) ||
        !rd_long(r, root, "", "contexts", &m->contexts) ||
        !rd_count_to(r, root, "", "warmup", true, LONG_MAX, &warmup) ||
        !rd_str(r, root, "", "group", false, NULL, &group) ||
        !rd_bool(r, root, "", "launch_columns", false, &m->launch_columns))
        return false;
    if (!m->gate)
        m->gate = "off";
    if (!m->gate_requested || !*m->gate_requested)
        m->gate_requested = m->gate;
    if (!has_gate)
        m->launch_gate = strcmp(m->gate, "off") != 0;
    m->warmup = (long)warmup;
    m->group_shape = group && strcmp(group, "shape") == 0;
    return rd_timer(r, root) && rd_capture_flush(r, root) && rd_budget(r, root);
}

/* "snapshot": {...}, absent or null in a report that is none. */
static bool rd_snapshot(struct rd *r, const struct jv *root)
{
    const struct jv *o = rd_get(r, root, "", "snapshot", JV_OBJECT, true, false);
    struct rm_snapshot *s;

    if (!o || o->type != JV_OBJECT)
        return !r->failed;
    if (!(s = r->m->snapshot = model_alloc(r->m, sizeof *s)))
        return rd_fail(r, "snapshot", "could not be read: out of memory");
    return rd_count(r, o, "snapshot", "seq", true, 0, &s->seq) &&
           rd_str(r, o, "snapshot", "at", false, NULL, &s->at) &&
           rd_bool(r, o, "snapshot", "final", false, &s->final) &&
           rd_long(r, o, "snapshot", "interval_s", &s->interval_s) &&
           rd_count(r, o, "snapshot", "resets", false, 0, &s->resets) &&
           rd_str(r, o, "snapshot", "since", false, NULL, &s->since) &&
           rd_bool(r, o, "snapshot", "paused", false, &s->paused);
}

static bool rd_header(struct rd *r, const struct jv *root)
{
    struct model *m = r->m;
    size_t argc;

    if (!rd_str(r, root, "", "ktime_version", false, "?", &m->version) ||
        !rd_str(r, root, "", "ktime_build", false, "", &m->build) ||
        !rd_strings(r, root, "", "command", "command_bytes", &m->argv, &argc) ||
        !rd_long(r, root, "", "pid", &m->pid) ||
        !rd_raw(r, root, "", "host", false, NULL, &m->host) ||
        !rd_long(r, root, "", "rank", &m->rank) ||
        !rd_long(r, root, "", "local_rank", &m->local_rank) ||
        !rd_long(r, root, "", "world_size", &m->world_size) ||
        !rd_str(r, root, "", "job", false, NULL, &m->job) ||
        !rd_str(r, root, "", "start_time", false, NULL, &m->start_time) ||
        !rd_str(r, root, "", "end_time", false, NULL, &m->end_time) ||
        !rd_str(r, root, "", "note", false, NULL, &m->note) || !rd_snapshot(r, root))
        return false;
    if (!m->version)
        m->version = "?";
    if (!m->build)
        m->build = "";
    m->argc = (int)argc;
    m->has_pid = m->pid >= 0;
    m->rank_text = digits(m, m->rank);
    m->local_rank_text = digits(m, m->local_rank);
    if (m->note && !*m->note)
        m->note = NULL;
    return rd_settings(r, root);
}

static bool rd_device(struct rd *r, const struct jv *d, const char *at, struct rm_device *o)
{
    uint64_t ordinal, host_ordinal;
    int64_t dv;
    const struct jv *v;

    if (!rd_object(r, d, at) || !rd_count_to(r, d, at, "ordinal", true, INT_MAX, &ordinal) ||
        !rd_raw(r, d, at, "name", false, "", &o->name) ||
        !rd_str(r, d, at, "uuid", false, NULL, &o->uuid) ||
        !rd_str(r, d, at, "driver", false, "", &o->driver) ||
        !rd_num(r, d, at, "floor_events_us", false, true, 0, &o->floor_events_us, NULL) ||
        !rd_num(r, d, at, "floor_hw_us", false, true, 0, &o->floor_hw_us, NULL))
        return false;
    v = rd_get(r, d, at, "driver_version", JV_NUMBER, true, false);
    if (v && v->type == JV_NUMBER && !(v->num > -1e9 && v->num < 1e9))
        return rd_bad(r, at, "driver_version", v, "a version");
    dv = v && v->type == JV_NUMBER ? (int64_t)v->num : 0;
    o->ordinal = (int)ordinal;
    o->driver_version = (long)dv;
    if (!o->name)
        o->name = "";
    if (!o->driver)
        o->driver = "";
    o->merged = jv_get(d, "host_ordinal") != NULL;
    if (o->merged && (!rd_count_to(r, d, at, "host_ordinal", true, LONG_MAX, &host_ordinal) ||
                      !rd_raw(r, d, at, "host", false, NULL, &o->host)))
        return false;
    o->host_ordinal = o->merged ? (long)host_ordinal : -1;
    return true;
}

static bool rd_devices(struct rd *r, const struct jv *root)
{
    const struct jv *ds = rd_get(r, root, "", "devices", JV_ARRAY, false, true);
    char at[64];

    if (!ds)
        return false;
    if (ds->n && !(r->m->devices = model_alloc(r->m, ds->n * sizeof *r->m->devices)))
        return rd_fail(r, "devices", "could not be read: out of memory");
    for (size_t i = 0; i < ds->n; i++, r->m->ndevices++)
        if (!rd_device(r, &ds->items[i], rd_index(at, sizeof at, "devices", i), &r->m->devices[i]))
            return false;
    return true;
}

static bool rd_totals(struct rd *r, const struct jv *root)
{
    const struct jv *t = rd_get(r, root, "", "totals", JV_OBJECT, false, true), *dr;
    struct rm_totals *o = &r->m->totals;
    long sample;

    if (!t)
        return false;
    for (int i = 0; i < RM_NTOTALS; i++)
        if (!rd_count(r, t, "totals", rm_total_key[i], false, 0, &o->n[i]))
            return false;
    dr = rd_get(r, t, "totals", "dropped_reasons", JV_OBJECT, true, false);
    for (int i = 0; dr && dr->type == JV_OBJECT && i < RM_NDROPS; i++)
        if (!rd_count(r, dr, "totals.dropped_reasons", rm_drop_key[i], false, 0, &o->drops[i]))
            return false;
    if (!rd_long(r, t, "totals", "sample", &sample) ||
        !rd_num(r, t, "totals", "timed_total_ms", true, false, 0, &o->timed_total_ms, NULL))
        return false;
    o->has_sample = sample >= 0;
    o->sample = sample;
    return true;
}

static bool rd_merged(struct rd *r, const struct jv *root)
{
    const struct jv *mf = rd_get(r, root, "", "merged_from", JV_ARRAY, false, false);
    struct rm_merged *g;
    char at[64];

    if (!mf)
        return !r->failed;
    if (!(g = r->m->merged = model_alloc(r->m, sizeof *g)) ||
        (mf->n && !(g->inputs = model_alloc(r->m, mf->n * sizeof *g->inputs))))
        return rd_fail(r, "merged_from", "could not be read: out of memory");
    for (size_t i = 0; i < mf->n; i++, g->ninputs++) {
        const struct jv *e = &mf->items[i];
        struct rm_input *o = &g->inputs[i];
        rd_index(at, sizeof at, "merged_from", i);
        if (!rd_object(r, e, at) || !rd_str(r, e, at, "file", false, NULL, &o->file) ||
            !rd_str(r, e, at, "host", false, NULL, &o->host) ||
            !rd_long(r, e, at, "rank", &o->rank) ||
            !rd_long(r, e, at, "local_rank", &o->local_rank) ||
            !rd_long(r, e, at, "world_size", &o->world_size) ||
            !rd_long(r, e, at, "pid", &o->pid) ||
            !rd_str(r, e, at, "start_time", false, NULL, &o->start_time) ||
            !rd_str(r, e, at, "end_time", false, NULL, &o->end_time) ||
            !rd_strings(r, e, at, "command", NULL, &o->command, &o->ncommand) ||
            !rd_str(r, e, at, "ktime_version", false, NULL, &o->ktime_version) ||
            !rd_str(r, e, at, "ktime_build", false, NULL, &o->ktime_build))
            return false;
        const struct jv *cmd = jv_get(e, "command");
        o->has_command = cmd && cmd->type == JV_ARRAY;
    }
    return model_merged_words(r->m) == 0 || rd_fail(r, "merged_from", "could not be read: out of memory");
}

static bool rd_balance_rank(struct rd *r, const struct jv *e, const char *at,
                            struct rm_balance_rank *o)
{
    uint64_t input;

    if (!rd_object(r, e, at) || !rd_count_to(r, e, at, "input", false, LONG_MAX, &input) ||
        !rd_long(r, e, at, "rank", &o->rank) || !rd_str(r, e, at, "label", true, NULL, &o->label) ||
        !rd_num(r, e, at, "compute_ms", false, false, 0, &o->compute_ms, NULL) ||
        !rd_num(r, e, at, "nccl_ms", false, false, 0, &o->nccl_ms, NULL))
        return false;
    o->input = (long)input;
    return true;
}

/* A merged report's ranks side by side (absent or null: none). */
static bool rd_balance(struct rd *r, const struct jv *root)
{
    const struct jv *b = rd_get(r, root, "", "balance", JV_OBJECT, true, false), *v;
    struct rm_balance *o;
    char at[64];
    uint64_t ranks;

    if (!b || b->type != JV_OBJECT)
        return !r->failed;
    if (!(o = r->m->balance = model_alloc(r->m, sizeof *o)))
        return rd_fail(r, "balance", "could not be read: out of memory");
    if (!rd_long(r, b, "balance", "world_size", &o->world_size) ||
        !rd_count(r, b, "balance", "ranks", false, 0, &ranks) ||
        !rd_strings(r, b, "balance", "unread", NULL, &o->unread, &o->nunread) ||
        !rd_num(r, b, "balance", "compute_median_ms", false, false, 0, &o->compute_median_ms,
                NULL) ||
        !rd_num(r, b, "balance", "nccl_median_ms", false, false, 0, &o->nccl_median_ms, NULL) ||
        !rd_str(r, b, "balance", "verdict", true, NULL, &o->verdict))
        return false;
    o->ranks = ranks;
    if ((v = rd_get(r, b, "balance", "missing", JV_ARRAY, false, false)) && v->n) {
        if (!(o->missing = model_alloc(r->m, v->n * sizeof *o->missing)))
            return rd_fail(r, "balance", "could not be read: out of memory");
        for (size_t i = 0; i < v->n; i++, o->nmissing++) {
            if (v->items[i].type != JV_NUMBER || !v->items[i].is_count ||
                v->items[i].count > LONG_MAX)
                return rd_bad(r, "balance", "missing", v, "a list of ranks");
            o->missing[i] = (long)v->items[i].count;
        }
    }
    if (r->failed)
        return false;
    if ((v = rd_get(r, b, "balance", "slowest", JV_OBJECT, true, false)) && v->type == JV_OBJECT) {
        o->has_slowest = true;
        if (!rd_balance_rank(r, v, "balance.slowest", &o->slowest) ||
            !rd_num(r, v, "balance.slowest", "excess_ms", false, false, 0, &o->excess_ms, NULL) ||
            !rd_num(r, v, "balance.slowest", "excess_pct", false, false, 0, &o->excess_pct, NULL) ||
            !rd_num(r, v, "balance.slowest", "wait_ms", false, false, 0, &o->wait_ms, NULL))
            return false;
    }
    if (r->failed)
        return false;
    if ((v = rd_get(r, b, "balance", "per_rank", JV_ARRAY, true, false)) && v->type == JV_ARRAY) {
        if (!(o->rows = model_alloc(r->m, (v->n ? v->n : 1) * sizeof *o->rows)))
            return rd_fail(r, "balance", "could not be read: out of memory");
        for (size_t i = 0; i < v->n; i++, o->nrows++)
            if (!rd_balance_rank(r, &v->items[i], rd_index(at, sizeof at, "balance.per_rank", i),
                                 &o->rows[i]))
                return false;
    }
    return !r->failed;
}

/* The document's kind and schema. */
static bool rd_schema(struct rd *r, const struct jv *root)
{
    uint64_t sv;

    if (!rd_object(r, root, ""))
        return false;
    if (jv_get(root, "ktime_diff"))
        return rd_fail(r, "", "is a ktime diff, not a report");
    if (!rd_count(r, root, "", "schema_version", true, 0, &sv))
        return false;
    if (sv < 1 || sv > REPORT_SCHEMA_MAX)
        return rd_fail(r, "", "has schema_version %llu, which this reader does not read (1 to %d)",
                       (unsigned long long)sv, REPORT_SCHEMA_MAX);
    r->m->schema = (int)sv;
    return true;
}

int model_read(struct model *m, const char *text, size_t len, char *err, size_t errsz)
{
    if (model_read_data(m, text, len, err, errsz) != 0)
        return -1;
    model_names(m);
    return 0;
}

int model_read_data(struct model *m, const char *text, size_t len, char *err, size_t errsz)
{
    struct jdoc doc;
    struct rd r = { m, err, errsz, false };
    const struct jv *root = &doc.root;

    memset(m, 0, sizeof *m);
    if (json_parse(&doc, text, len) != 0) {
        snprintf(err, errsz, "%s", doc.err);
        json_free(&doc);
        return -1;
    }
    /* The totals before the rows: a GPU's percent, when absent, is of the whole. */
    bool ok = rd_schema(&r, root) && rd_header(&r, root) && rd_devices(&r, root) &&
              rd_totals(&r, root) && rd_rows(&r, root) && rd_memops(&r, root) &&
              rd_ranges(&r, root) && rd_busy(&r, root) && rd_comm(&r, root) &&
              rd_conditions(&r, root) && rd_merged(&r, root) && rd_balance(&r, root);
    json_free(&doc);
    if (!ok || m->oom) {
        if (ok)
            snprintf(err, errsz, "out of memory");
        model_free(m);
        return -1;
    }
    model_words(m);
    return 0;
}
