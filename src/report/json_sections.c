/* json_sections.c - the JSON report's header, devices, conditions, memory operations, ranges
 * and a merged report's inputs (jsonw.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonw.h"

#include "report.h"

void json_quantiles(struct jw *w, const struct rm_stats *s)
{
    for (int i = RS_P50; i <= RS_P99; i++)
        if (s->v[i] >= 0)
            jw_num(w, rm_stat_key[i], s->v[i]);
        else
            jw_null(w, rm_stat_key[i]);
}

void json_stats_range(struct jw *w, const struct rm_stats *s, int from, int to)
{
    for (int i = from; i <= to; i++)
        jw_num(w, rm_stat_key[i], s->v[i]);
}

void json_histogram(struct jw *w, const struct rm_hist *h)
{
    if (!h)
        return;
    jw_open(w, "histogram", '{', JW_INLINE, 0, 0);
    jw_num(w, "gamma", h->gamma);
    jw_num(w, "first_edge_us", h->first_edge);
    jw_open(w, "buckets", '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < h->n; i++) {
        jw_open(w, NULL, '[', JW_INLINE, 0, 0);
        jw_i64(w, NULL, h->b[i].i);
        jw_num(w, NULL, h->b[i].edge);
        jw_u64(w, NULL, h->b[i].count);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

/* n, or null when n < 0. */
static void long_or_null(struct jw *w, const char *key, long n)
{
    if (n >= 0)
        jw_i64(w, key, n);
    else
        jw_null(w, key);
}

/* A figure that may not have been read (RM_NULL). */
static void figure(struct jw *w, const char *key, int64_t v)
{
    if (v != RM_NULL)
        jw_i64(w, key, v);
    else
        jw_null(w, key);
}

/* -1 null, else a boolean. */
static void tristate(struct jw *w, const char *key, int v)
{
    if (v < 0)
        jw_null(w, key);
    else
        jw_bool(w, key, v);
}

static void json_command(struct jw *w, const char *const *argv, size_t argc)
{
    bool ok = true;

    jw_open(w, "command", '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < argc; i++)
        jw_str(w, NULL, argv[i]);
    jw_close(w);
    for (size_t i = 0; i < argc; i++)
        ok = ok && utf8_ok(argv[i]);
    if (ok)
        return;
    jw_open(w, "command_bytes", '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < argc; i++)
        jw_hex(w, NULL, argv[i]);
    jw_close(w);
}

static void json_settings(struct jw *w, const struct model *m)
{
    jw_str(w, "timing_method", m->timing_method);
    jw_bool(w, "launch_gate", m->launch_gate);
    jw_str(w, "launch_gate_mode", m->gate);
    jw_str(w, "launch_gate_requested", m->gate_requested);
    jw_u64(w, "launch_gate_unavailable_contexts", m->gate_unavailable);
    long_or_null(w, "contexts", m->contexts);
    jw_i64(w, "warmup", m->warmup);
    jw_str(w, "group", m->group_shape ? "shape" : "name");
    jw_bool(w, "launch_columns", m->launch_columns);
    jw_open(w, "timer", '{', JW_INLINE, 0, 0);
    jw_str(w, "requested", m->timer.requested);
    jw_str(w, "used", m->timer.used);
    jw_str_or_null(w, "note", m->timer.note);
    jw_str_or_null(w, "cupti_library", m->timer.cupti_library);
    jw_u64(w, "cupti_records_dropped", m->timer.records_dropped);
    jw_u64(w, "cupti_buffers_refused", m->timer.buffers_refused);
    jw_close(w);
    if (m->capture) {
        jw_open(w, "capture", '{', JW_INLINE, 0, 0);
        jw_str(w, "mode", m->capture->mode);
        jw_u64(w, "starts", m->capture->starts);
        jw_u64(w, "stops", m->capture->stops);
        jw_u64(w, "ranges", m->capture->ranges);
        jw_bool(w, "open_at_exit", m->capture->open_at_exit);
        jw_close(w);
    } else {
        jw_null(w, "capture");
    }
    if (m->flush) {
        jw_open(w, "flush_l2", '{', JW_INLINE, 0, 0);
        jw_u64(w, "bytes", m->flush->bytes);
        jw_u64(w, "flushes", m->flush->flushes);
        jw_u64(w, "refused", m->flush->refused);
        jw_u64(w, "contexts", m->flush->contexts);
        jw_u64(w, "contexts_without_buffer", m->flush->without_buffer);
        jw_close(w);
    } else {
        jw_null(w, "flush_l2");
    }
    if (m->budget) {
        jw_open(w, "budget", '{', JW_INLINE, 0, 0);
        jw_i64(w, "percent", m->budget->percent);
        jw_num(w, "estimated_percent", m->budget->estimated_percent);
        jw_num(w, "estimated_ms", m->budget->spent_ms);
        jw_num(w, "wall_ms", m->budget->wall_ms);
        jw_u64(w, "windows", m->budget->windows);
        jw_num(w, "timed_launch_ns", m->budget->timed_ns);
        if (m->budget->cupti_on_1_in < 0)
            jw_null(w, "cupti_on_1_in");
        else
            jw_i64(w, "cupti_on_1_in", m->budget->cupti_on_1_in);
        jw_u64(w, "unrecorded", m->budget->unrecorded);
        jw_close(w);
    } else {
        jw_null(w, "budget");
    }
}

void json_header(struct jw *w, const struct model *m)
{
    jw_i64(w, "schema_version", REPORT_SCHEMA_VERSION);
    jw_str(w, "ktime_version", m->version);
    jw_str(w, "ktime_build", m->build);
    json_command(w, m->argv, (size_t)m->argc);
    jw_str_or_null(w, "host", m->host);
    if (m->host)
        jw_bytes_member(w, "host", m->host);
    long_or_null(w, "rank", m->rank);
    long_or_null(w, "local_rank", m->local_rank);
    long_or_null(w, "world_size", m->world_size > 0 ? m->world_size : -1);
    jw_str_or_null(w, "job", m->job);
    jw_str_or_null(w, "start_time", m->start_time);
    jw_str_or_null(w, "end_time", m->end_time);
    if (m->has_pid)
        jw_i64(w, "pid", m->pid);
    else
        jw_null(w, "pid");
    if (m->snapshot) {
        const struct rm_snapshot *s = m->snapshot;
        jw_open(w, "snapshot", '{', JW_INLINE, 0, 0);
        jw_u64(w, "seq", s->seq);
        jw_str_or_null(w, "at", s->at);
        jw_bool(w, "final", s->final);
        jw_i64(w, "interval_s", s->interval_s);
        jw_u64(w, "resets", s->resets);
        jw_str_or_null(w, "since", s->since);
        jw_bool(w, "paused", s->paused);
        jw_close(w);
    }
    json_settings(w, m);
}

static void floor_us(struct jw *w, const char *key, double v)
{
    if (v > 0)
        jw_num(w, key, v);
    else
        jw_null(w, key);
}

void json_devices(struct jw *w, const struct model *m)
{
    jw_open(w, "devices", '[', JW_BLOCK, 4, 2);
    for (size_t d = 0; d < m->ndevices; d++) {
        const struct rm_device *v = &m->devices[d];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_i64(w, "ordinal", v->ordinal);
        jw_str(w, "name", v->name);
        jw_bytes_member(w, "name", v->name);
        jw_str_or_null(w, "uuid", v->uuid);
        jw_i64(w, "driver_version", v->driver_version);
        jw_str(w, "driver", v->driver);
        floor_us(w, "floor_events_us", v->floor_events_us);
        floor_us(w, "floor_hw_us", v->floor_hw_us);
        if (v->merged) {
            jw_str_or_null(w, "host", v->host);
            jw_i64(w, "host_ordinal", v->host_ordinal);
        }
        jw_close(w);
    }
    jw_close(w);
}

/* ---- conditions ---- */

static void cond_others(struct jw *w, const struct rm_cond_dev *d)
{
    if (!d->others_listed) {
        jw_null(w, "other_processes");
    } else {
        jw_open(w, "other_processes", '[', JW_INLINE, 0, 0);
        for (size_t i = 0; i < d->nothers; i++) {
            jw_open(w, NULL, '{', JW_INLINE, 0, 0);
            jw_i64(w, "pid", d->others[i].pid);
            jw_str_or_null(w, "name", d->others[i].name);
            jw_bool(w, "at_start", d->others[i].at_start);
            jw_bool(w, "at_end", d->others[i].at_end);
            jw_u64(w, "samples", d->others[i].samples);
            jw_close(w);
        }
        jw_close(w);
    }
    figure(w, "other_process_count", d->other_count);
    figure(w, "other_processes_at_start", d->others_at_start);
    figure(w, "other_processes_at_end", d->others_at_end);
    jw_bool(w, "other_processes_truncated", d->others_truncated);
    jw_bool(w, "pids_of_another_namespace", d->pid_mismatch);
}

static void cond_clocks(struct jw *w, const struct rm_cond_dev *d)
{
    jw_open(w, "clocks", '{', JW_INLINE, 0, 0);
    tristate(w, "locked", d->locked);
    jw_str_or_null(w, "locked_evidence", d->locked_evidence);
    figure(w, "application_sm_mhz", d->app_sm);
    figure(w, "default_application_sm_mhz", d->default_app_sm);
    figure(w, "sm_min_mhz", d->sm_min);
    figure(w, "sm_max_mhz", d->sm_max);
    figure(w, "mem_min_mhz", d->mem_min);
    figure(w, "mem_max_mhz", d->mem_max);
    jw_close(w);
}

static void cond_throttle(struct jw *w, const struct rm_cond_dev *d)
{
    char key[48];

    if (!d->throttle) {
        jw_null(w, "throttle");
        return;
    }
    jw_open(w, "throttle", '{', JW_INLINE, 0, 0);
    jw_fixed(w, "power_s", d->power_s, 3);
    jw_fixed(w, "thermal_s", d->thermal_s, 3);
    for (int i = 0; i < RM_NREASONS; i++) {
        snprintf(key, sizeof key, "%s_s", rm_reason_key[i]);
        jw_fixed(w, key, d->reason_s[i], 3);
    }
    jw_open(w, "reasons_seen", '[', JW_INLINE, 0, 0);
    for (int i = 0; i < RM_NREASONS; i++)
        if (d->reasons_seen & (1u << i))
            jw_str(w, NULL, rm_reason_key[i]);
    jw_close(w);
    jw_u64(w, "readings", d->readings);
    jw_close(w);
}

static void cond_device(struct jw *w, const struct rm_cond_dev *d)
{
    jw_open(w, NULL, '{', JW_INLINE, 0, 0);
    jw_i64(w, "ordinal", d->ordinal);
    jw_bool(w, "checked", d->checked);
    jw_str_or_null(w, "reason", d->reason);
    jw_str_or_null(w, "pci_bus_id", d->pci_bus_id);
    if (d->checked) {
        jw_u64(w, "samples", d->samples);
        jw_fixed(w, "duration_s", d->duration_s, 3);
        jw_break(w, 8);
        cond_others(w, d);
        jw_break(w, 8);
        cond_clocks(w, d);
        jw_break(w, 8);
        cond_throttle(w, d);
        jw_break(w, 8);
        if (d->temp) {
            jw_open(w, "temperature", '{', JW_INLINE, 0, 0);
            jw_i64(w, "min_c", d->temp_min);
            jw_i64(w, "max_c", d->temp_max);
            jw_close(w);
        } else {
            jw_null(w, "temperature");
        }
        tristate(w, "persistence_mode", d->persistence);
        jw_str_or_null(w, "compute_mode", d->compute_mode);
    }
    jw_close(w);
}

static void string_list(struct jw *w, const char *key, const char *const *s, size_t n)
{
    jw_open(w, key, '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < n; i++)
        jw_str(w, NULL, s[i]);
    jw_close(w);
}

void json_conditions(struct jw *w, const struct rm_cond *c)
{
    if (!c)
        return;
    jw_open(w, "conditions", '{', JW_INLINE, 0, 0);
    jw_bool(w, "checked", c->checked);
    jw_str_or_null(w, "reason", c->reason);
    string_list(w, "text", c->text, c->ntext);
    if (c->checked) {
        jw_str_or_null(w, "library", c->library);
        jw_i64(w, "interval_ms", c->interval_ms);
        jw_break(w, 4);
        jw_open(w, "mps", '{', JW_INLINE, 0, 0);
        jw_bool(w, "checked", c->mps_checked);
        tristate(w, "active", c->mps_active);
        jw_str_or_null(w, "evidence", c->mps_evidence);
        jw_close(w);
        string_list(w, "warnings", c->warnings, c->nwarnings);
        jw_break(w, 4);
    }
    jw_open(w, "devices", '[', JW_BLOCK, 6, 4);
    for (size_t i = 0; c->checked && i < c->ndevs; i++)
        cond_device(w, &c->devs[i]);
    jw_close(w);
    jw_close(w);
}

/* ---- memory operations and ranges ---- */

void json_memops(struct jw *w, const struct model *m)
{
    static const int counts[] = { RC_CALLS, RC_WARMUP, RC_CAPTURED, RC_DROPPED, RC_FAILED,
                                  RC_INCOMPLETE, RC_OUTSIDE, RC_PAUSED, RC_UNSAMPLED };

    if (!m->memops_on) {
        jw_null(w, "memops");
        return;
    }
    jw_open(w, "memops", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < m->nmemops; i++) {
        const struct rm_row *k = &m->memops[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_str(w, "kind", k->name);
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
            jw_u64(w, rm_count_key[counts[j]], k->n[counts[j]]);
        jw_u64(w, "timed", k->st.timed);
        jw_u64(w, rm_count_key[RC_UNGATED], k->n[RC_UNGATED]);
        jw_u64(w, rm_count_key[RC_BYTES], k->n[RC_BYTES]);
        jw_u64(w, rm_count_key[RC_TIMED_BYTES], k->n[RC_TIMED_BYTES]);
        jw_num(w, rm_stat_key[RS_TOTAL], k->st.v[RS_TOTAL]);
        json_stats_range(w, &k->st, RS_MEAN, RS_M2);
        json_quantiles(w, &k->st);
        if (k->has_gbps)
            jw_num(w, "gb_per_s", k->gbps);
        else
            jw_null(w, "gb_per_s");
        jw_close(w);
    }
    jw_close(w);
}

static void json_range(struct jw *w, const struct rm_range *g)
{
    jw_open(w, NULL, '{', JW_INLINE, 0, 0);
    jw_str_or_null(w, "name", g->name);
    if (g->name)
        jw_bytes_member(w, "name", g->name);
    jw_u64(w, "closed", g->closed);
    jw_u64(w, "open_at_exit", g->open);
    jw_num(w, "wall_ms", g->wall_ms);
    jw_u64(w, "timed", g->timed);
    jw_num(w, "total_ms", g->total_ms);
    jw_open(w, "kernels", '[', JW_BLOCK, 6, 4);
    for (size_t j = 0; j < g->nrows; j++) {
        const struct rm_row *k = &g->rows[j];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_str(w, "name", k->name);
        jw_bytes_member(w, "name", k->name);
        jw_str(w, "mangled", k->mangled);
        jw_bytes_member(w, "mangled", k->mangled);
        jw_str(w, "kind", k->kind == REPORT_GRAPH ? "graph" : "kernel");
        jw_u64(w, "timed", k->st.timed);
        json_stats_range(w, &k->st, RS_TOTAL, RS_M2);
        json_quantiles(w, &k->st);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

void json_ranges(struct jw *w, const struct model *m)
{
    const struct rm_ranges *r = m->ranges;

    if (!r) {
        jw_null(w, "ranges");
        return;
    }
    jw_open(w, "ranges", '{', JW_INLINE, 0, 0);
    jw_str(w, "attribution", r->attribution);
    jw_str(w, "nvtx", r->nvtx);
    jw_u64(w, "unmatched_pops", r->unmatched_pops);
    jw_u64(w, "too_deep", r->too_deep);
    jw_open(w, "by_name", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < r->nby_name; i++)
        json_range(w, &r->by_name[i]);
    jw_close(w);
    jw_close(w);
}

/* ---- merged reports ---- */

static void rank_end(struct jw *w, const char *key, const struct rm_rank_end *e)
{
    jw_open(w, key, '{', JW_INLINE, 0, 0);
    jw_i64(w, "input", e->input);
    long_or_null(w, "rank", e->rank);
    jw_str(w, "label", e->label);
    jw_num(w, "total_ms", e->total_ms);
    jw_close(w);
}

void json_ranks(struct jw *w, const struct rm_row *k)
{
    if (k->ranks)
        jw_open(w, "ranks", '[', JW_BLOCK, 8, 6);
    for (size_t i = 0; k->ranks && i < k->nranks; i++) {
        const struct rm_rank_part *p = &k->ranks[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_i64(w, "input", p->input);
        long_or_null(w, "rank", p->rank);
        jw_str_or_null(w, "host", p->host);
        long_or_null(w, "pid", p->pid);
        jw_u64(w, "calls", p->calls);
        jw_u64(w, "timed", p->timed);
        jw_num(w, "total_ms", p->total_ms);
        if (p->has_mean)
            jw_num(w, "mean_us", p->mean_us);
        else
            jw_null(w, "mean_us");
        jw_close(w);
    }
    if (k->ranks)
        jw_close(w);
    if (!k->spread)
        return;
    jw_open(w, "rank_spread", '{', JW_INLINE, 0, 0);
    jw_u64(w, "ranks", k->spread->ranks);
    rank_end(w, "slowest", &k->spread->slowest);
    rank_end(w, "fastest", &k->spread->fastest);
    if (k->spread->has_ratio)
        jw_num(w, "ratio", k->spread->ratio);
    else
        jw_null(w, "ratio");
    if (k->spread->has_mean) {
        jw_num(w, "mean_ms", k->spread->mean_ms);
        jw_num(w, "imbalance", k->spread->imbalance);
    } else {
        jw_null(w, "mean_ms");
        jw_null(w, "imbalance");
    }
    jw_close(w);
}

static void balance_rank(struct jw *w, const struct rm_balance_rank *e)
{
    jw_i64(w, "input", e->input);
    long_or_null(w, "rank", e->rank);
    jw_str(w, "label", e->label);
    jw_num(w, "compute_ms", e->compute_ms);
    jw_num(w, "nccl_ms", e->nccl_ms);
}

void json_balance(struct jw *w, const struct rm_balance *b)
{
    jw_open(w, "balance", '{', JW_BLOCK, 4, 2);
    long_or_null(w, "world_size", b->world_size > 0 ? b->world_size : -1);
    jw_u64(w, "ranks", b->ranks);
    jw_open(w, "missing", '[', JW_INLINE, 0, 0);
    for (size_t i = 0; i < b->nmissing; i++)
        jw_i64(w, NULL, b->missing[i]);
    jw_close(w);
    string_list(w, "unread", b->unread, b->nunread);
    jw_num(w, "compute_median_ms", b->compute_median_ms);
    jw_num(w, "nccl_median_ms", b->nccl_median_ms);
    if (b->has_slowest) {
        jw_open(w, "slowest", '{', JW_INLINE, 0, 0);
        balance_rank(w, &b->slowest);
        jw_num(w, "excess_ms", b->excess_ms);
        jw_num(w, "excess_pct", b->excess_pct);
        jw_num(w, "wait_ms", b->wait_ms);
        jw_close(w);
    } else {
        jw_null(w, "slowest");
    }
    jw_str(w, "verdict", b->verdict);
    if (b->rows) {
        jw_open(w, "per_rank", '[', JW_BLOCK, 6, 4);
        for (size_t i = 0; i < b->nrows; i++) {
            jw_open(w, NULL, '{', JW_INLINE, 0, 0);
            balance_rank(w, &b->rows[i]);
            jw_close(w);
        }
        jw_close(w);
    } else {
        jw_null(w, "per_rank");
    }
    jw_close(w);
}

void json_merged(struct jw *w, const struct model *m)
{
    jw_open(w, "merged_from", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < m->merged->ninputs; i++) {
        const struct rm_input *e = &m->merged->inputs[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_str_or_null(w, "file", e->file);
        jw_str_or_null(w, "host", e->host);
        long_or_null(w, "rank", e->rank);
        long_or_null(w, "local_rank", e->local_rank);
        long_or_null(w, "world_size", e->world_size);
        long_or_null(w, "pid", e->pid);
        jw_str_or_null(w, "start_time", e->start_time);
        jw_str_or_null(w, "end_time", e->end_time);
        if (e->has_command)
            string_list(w, "command", e->command, e->ncommand);
        else
            jw_null(w, "command");
        jw_str_or_null(w, "ktime_version", e->ktime_version);
        jw_str_or_null(w, "ktime_build", e->ktime_build);
        jw_close(w);
    }
    jw_close(w);
}
